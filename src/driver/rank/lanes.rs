//! The folds of min/max over whole lines as AVX2 code written with `std::arch`, for the types
//! with a vector min and max (all but the 64-bit integers).
//!
//! LLVM vectorises the plain loops of [`super::sliding`], but not as well: a 5×5 minimum of
//! 1024² `u8` (a vertical fold of five rows, then one of five shifted slices) took 0.105–0.132
//! ms a run as plain loops and 0.073–0.079 ms as these (a standalone loop of each, this AMD
//! EPYC), and a pair of lines folded together, which LLVM left scalar for 1- and 2-byte types,
//! 0.060–0.069 ms. Through ndjit (`boxed::extremes_block`, whose lines also pay for their ends
//! and bookkeeping), one thread, 1024²: `u8` 5×5 minimum 0.148–0.155 → 0.128–0.130 ms, `u16`
//! 0.233–0.254 → 0.208–0.211; `f32` and `f64`, which LLVM's loops served well, the same within
//! the machine's noise. Each kernel does the whole vectors of a line and returns how many values
//! that is; the few past the last one are the caller's.
//!
//! The vector min and max give their second operand for equal values (and NaN, which the rank
//! executor never computes on). They are called with the operands swapped, so that each is
//! [`Elem::select_min`]/[`Elem::select_max`] exactly, zeros included.

use super::elem::{Elem, Extreme};
use super::store::Store;
#[cfg(target_arch = "x86_64")]
use std::any::TypeId;

/// `$m!` over the types with an AVX2 min and max, named once here.
#[cfg(target_arch = "x86_64")]
macro_rules! vector_types {
    ($m:ident) => {
        $m!(u8, i8, u16, i16, u32, i32, f32, f64)
    };
}

/// Where the `N` inputs of a fold begin: input `j`'s values start at `at(j)`. The kernels take
/// their inputs' addresses this way, not as an array of slices, because they are entered once a
/// line: an array built in memory and copied for each call stalled the load that read it back
/// (`perf annotate`: a fifth of a `u8` 5×5 minimum's time, its lines' bookkeeping).
pub(crate) trait Sources: Copy {
    fn at(self, j: usize) -> *const u8;
}

/// Inputs `step` bytes apart from `first`: the shifted copies of one line (`step` one value) or
/// consecutive lines of an image.
#[derive(Clone, Copy)]
pub(crate) struct Spaced {
    pub first: *const u8,
    pub step: isize,
}

impl Spaced {
    /// Inputs starting at `first`, `step` bytes apart.
    pub fn of<T>(first: *const T, step: isize) -> Spaced {
        Spaced {
            first: first as *const u8,
            step,
        }
    }
}

impl Sources for Spaced {
    #[inline(always)]
    fn at(self, j: usize) -> *const u8 {
        self.first.wrapping_offset(j as isize * self.step)
    }
}

/// Inputs listed one by one.
impl<T> Sources for &[*const T] {
    #[inline(always)]
    fn at(self, j: usize) -> *const u8 {
        self[j] as *const u8
    }
}

/// `out[i]` = the fold over `j < N` of input `j`'s value `i`, for the whole vectors of `out`,
/// stored as `store` says; returns how many values were done (none without AVX2 or for a type
/// without vector min and max).
///
/// # Safety
/// Each of the `N` inputs must hold `out.len()` values of `T`, none of them inside `out`.
#[inline(always)]
pub(crate) unsafe fn fold<T: Elem, E: Extreme, const N: usize>(
    srcs: impl Sources,
    out: &mut [T],
    store: Store,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! each {
            ($($t:ident),*) => {$(
                if TypeId::of::<T>() == TypeId::of::<$t>() {
                    if !std::arch::is_x86_feature_detected!("avx2") {
                        return 0;
                    }
                    // SAFETY: `T` is `$t` (the same type id); the CPU has AVX2; the inputs
                    // hold the line (the caller's promise).
                    return unsafe {
                        let out = retype_mut::<T, $t>(out);
                        match E::MAX {
                            true => avx2::$t::fold::<N, true>(srcs, out, store),
                            false => avx2::$t::fold::<N, false>(srcs, out, store),
                        }
                    };
                }
            )*};
        }
        vector_types!(each);
    }
    let _ = (srcs, out, store);
    0
}

/// The two lines of [`super::sliding::fold_pair`] (`first` the fold of rows `..N - 1`, `second`
/// of rows `1..`, the rows both read folded once), for the whole vectors of the lines; returns
/// how many values were done, as [`fold`].
///
/// # Safety
/// Each of the `N` rows, and `second`, must hold `first.len()` values of `T`, none of the rows
/// inside either line.
#[inline(always)]
pub(crate) unsafe fn fold_pair<T: Elem, E: Extreme, const N: usize>(
    rows: impl Sources,
    first: &mut [T],
    second: &mut [T],
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! each {
            ($($t:ident),*) => {$(
                if TypeId::of::<T>() == TypeId::of::<$t>() {
                    if !std::arch::is_x86_feature_detected!("avx2") {
                        return 0;
                    }
                    // SAFETY: `T` is `$t` (the same type id); the CPU has AVX2; the rows hold
                    // the line (the caller's promise).
                    return unsafe {
                        let (first, second) = (retype_mut::<T, $t>(first), retype_mut::<T, $t>(second));
                        match E::MAX {
                            true => avx2::$t::fold_pair::<N, true>(rows, first, second),
                            false => avx2::$t::fold_pair::<N, false>(rows, first, second),
                        }
                    };
                }
            )*};
        }
        vector_types!(each);
    }
    let _ = (rows, first, second);
    0
}

/// Whether `T` has the vector kernels (on an x86-64 CPU with AVX2).
pub(crate) fn available<T: Elem>() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! any_of {
            ($($t:ident),*) => { [$(TypeId::of::<$t>()),*].contains(&TypeId::of::<T>()) };
        }
        vector_types!(any_of) && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// # Safety
/// `T` and `U` must be the same type.
#[cfg(target_arch = "x86_64")]
unsafe fn retype_mut<T, U>(s: &mut [T]) -> &mut [U] {
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut U, s.len()) }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    macro_rules! kernels {
        ($($t:ident, $lanes:expr, $load:expr, $store:expr, $stream:expr, $min:ident, $max:ident);*) => {$(
            pub(super) mod $t {
                use std::arch::x86_64::*;

                /// `MAX`: the maximum, else the minimum, of `a` and `b` as `select_max`/`select_min`
                /// give it (the second operand of the instruction is returned on ties).
                #[inline(always)]
                unsafe fn pick<V: Copy, const MAX: bool>(a: V, b: V, min: impl Fn(V, V) -> V, max: impl Fn(V, V) -> V) -> V {
                    match MAX {
                        true => max(b, a),
                        false => min(b, a),
                    }
                }

                /// # Safety
                /// The CPU must have AVX2; every input holds `out.len()` values.
                #[target_feature(enable = "avx2")]
                pub(crate) unsafe fn fold<const N: usize, const MAX: bool>(
                    srcs: impl super::super::Sources,
                    out: &mut [$t],
                    store: super::super::Store,
                ) -> usize {
                    let whole = out.len() / $lanes * $lanes;
                    let op = |a, b| unsafe { pick::<_, MAX>(a, b, |x, y| $min(x, y), |x, y| $max(x, y)) };
                    let at = out.as_mut_ptr();
                    // The fold of the vector at `i`.
                    // SAFETY: `i + lanes <= whole <= out.len()` values of every slice.
                    let value = |i: usize| unsafe {
                        let src = |j: usize| $load((srcs.at(j) as *const $t).add(i));
                        let mut v = src(0);
                        for j in 1..N {
                            v = op(v, src(j));
                        }
                        v
                    };
                    // SAFETY (both): as `value`.
                    let cached = |i: usize| unsafe { $store(at.add(i), value(i)) };
                    let streamed = |i: usize| unsafe { $stream(at.add(i), value(i)) };
                    if whole == 0 {
                        return 0;
                    }
                    if store == super::super::Store::Streamed {
                        // Streams need 32-byte addresses: the values before the first are stored
                        // cached by the first vector, those after the last by the last vector
                        // (an extreme stored twice is the same value).
                        let skew = (at as usize % 32) / std::mem::size_of::<$t>();
                        let head = ($lanes - skew) % $lanes;
                        let streams = (whole - head) / $lanes * $lanes;
                        if head > 0 {
                            cached(0);
                        }
                        for i in (head..head + streams).step_by($lanes) {
                            streamed(i);
                        }
                        if head + streams < whole {
                            cached(whole - $lanes);
                        }
                        return whole;
                    }
                    // Two vectors an iteration: independent chains for the out-of-order core.
                    let pairs = whole / (2 * $lanes) * (2 * $lanes);
                    for i in (0..pairs).step_by(2 * $lanes) {
                        cached(i);
                        cached(i + $lanes);
                    }
                    if pairs < whole {
                        cached(pairs);
                    }
                    whole
                }

                /// # Safety
                /// The CPU must have AVX2; every row, and `second`, holds `first.len()` values.
                #[target_feature(enable = "avx2")]
                pub(crate) unsafe fn fold_pair<const N: usize, const MAX: bool>(
                    rows: impl super::super::Sources,
                    first: &mut [$t],
                    second: &mut [$t],
                ) -> usize {
                    let whole = first.len() / $lanes * $lanes;
                    let op = |a, b| unsafe { pick::<_, MAX>(a, b, |x, y| $min(x, y), |x, y| $max(x, y)) };
                    for i in (0..whole).step_by($lanes) {
                        // SAFETY: `i + lanes <= whole` values of every row and line.
                        unsafe {
                            let row = |r: usize| $load((rows.at(r) as *const $t).add(i));
                            let mut shared = row(1);
                            for r in 2..N - 1 {
                                shared = op(shared, row(r));
                            }
                            $store(first.as_mut_ptr().add(i), op(row(0), shared));
                            $store(second.as_mut_ptr().add(i), op(shared, row(N - 1)));
                        }
                    }
                    whole
                }
            }
        )*};
    }

    /// The integer types: 256-bit loads, stores and streams of any element width.
    macro_rules! integers {
        ($($t:ident, $lanes:expr, $min:ident, $max:ident);*) => {
            kernels!($(
                $t, $lanes, |p: *const $t| _mm256_loadu_si256(p as *const __m256i),
                    |p: *mut $t, v| _mm256_storeu_si256(p as *mut __m256i, v),
                    |p: *mut $t, v| _mm256_stream_si256(p as *mut __m256i, v), $min, $max
            );*);
        };
    }

    integers!(u8, 32, _mm256_min_epu8, _mm256_max_epu8; i8, 32, _mm256_min_epi8, _mm256_max_epi8;
              u16, 16, _mm256_min_epu16, _mm256_max_epu16; i16, 16, _mm256_min_epi16, _mm256_max_epi16;
              u32, 8, _mm256_min_epu32, _mm256_max_epu32; i32, 8, _mm256_min_epi32, _mm256_max_epi32);
    kernels!(
        f32, 8, |p: *const f32| _mm256_loadu_ps(p), |p: *mut f32, v| _mm256_storeu_ps(p, v),
            |p: *mut f32, v| _mm256_stream_ps(p, v),
            _mm256_min_ps, _mm256_max_ps;
        f64, 4, |p: *const f64| _mm256_loadu_pd(p), |p: *mut f64, v| _mm256_storeu_pd(p, v),
            |p: *mut f64, v| _mm256_stream_pd(p, v),
            _mm256_min_pd, _mm256_max_pd
    );
}

#[cfg(test)]
mod tests {
    use super::super::elem::{Max, Min};
    use super::*;

    /// Every type, both extremes, several arities and lengths (whole vectors and not), against
    /// the scalar fold; floats with both zeros, whose order decides which one comes out.
    #[test]
    fn folds_equal_the_scalar_selects() {
        fn check<T: Elem + std::fmt::Debug>(of: impl Fn(usize) -> T) {
            fn run<T: Elem + std::fmt::Debug, E: Extreme>(of: &impl Fn(usize) -> T) {
                for m in [0, 1, 31, 32, 33, 64, 100, 257] {
                    let rows: Vec<Vec<T>> = (0..6)
                        .map(|r| (0..m).map(|i| of(i * 37 + r * 101)).collect())
                        .collect();
                    let want = |rs: &[Vec<T>], i: usize| {
                        rs[1..].iter().fold(rs[0][i], |v, r| E::pick(v, r[i]))
                    };
                    let mut out = vec![T::default(); m];
                    let srcs: Vec<*const T> = rows[..5].iter().map(|r| r.as_ptr()).collect();
                    // SAFETY: every row holds `m` values.
                    let done = unsafe { fold::<T, E, 5>(&srcs[..], &mut out, Store::Cached) };
                    assert!(done <= m && (!available::<T>() || m - done < 32));
                    for (i, o) in out[..done].iter().enumerate() {
                        assert_eq!(o.to_f64().to_bits(), want(&rows[..5], i).to_f64().to_bits());
                    }
                    let (mut a, mut b) = (vec![T::default(); m], vec![T::default(); m]);
                    let pair: Vec<*const T> = rows.iter().map(|r| r.as_ptr()).collect();
                    // SAFETY: every row holds `m` values.
                    let done = unsafe { fold_pair::<T, E, 6>(&pair[..], &mut a, &mut b) };
                    // As `sliding::fold_pair` associates: the shared rows first.
                    for i in 0..done {
                        let shared = want(&rows[1..5], i);
                        assert_eq!(
                            a[i].to_f64().to_bits(),
                            E::pick(rows[0][i], shared).to_f64().to_bits()
                        );
                        assert_eq!(
                            b[i].to_f64().to_bits(),
                            E::pick(shared, rows[5][i]).to_f64().to_bits()
                        );
                    }
                }
            }
            run::<T, Min>(&of);
            run::<T, Max>(&of);
        }
        check(|k| (k % 251) as u8);
        check(|k| (k % 251) as i8);
        check(|k| (k * 263 % 65521) as u16);
        check(|k| (k * 263 % 65521) as i16);
        check(|k| (k * 2_654_435_761 % 4_294_967_291) as u32);
        check(|k| (k * 2_654_435_761 % 4_294_967_291) as u32 as i32);
        let zeros = |k: usize| match k % 7 {
            0 => -0.0,
            1 => 0.0,
            r => r as f64 - 3.5,
        };
        check(|k| zeros(k) as f32);
        check(zeros);
    }

    /// A streamed fold stores what a cached one does, at every alignment of the output and
    /// length: the values before the first 32-byte address and after the last whole stream
    /// included, nothing past the whole vectors touched.
    #[test]
    fn streamed_folds_store_the_cached_values_at_any_alignment() {
        fn check<T: Elem + std::fmt::Debug>(of: impl Fn(usize) -> T, sentinel: T) {
            let size = std::mem::size_of::<T>();
            let rows: Vec<Vec<T>> = (0..3)
                .map(|r| (0..200).map(|i| of(i * 31 + r * 7)).collect())
                .collect();
            let srcs: Vec<*const T> = rows.iter().map(|r| r.as_ptr()).collect();
            // Room for every skew within 32 bytes, then the longest output.
            let mut buf = vec![sentinel; 32 / size + 200];
            for skew in 0..32 / size {
                for m in [0, 1, 31, 32, 33, 40, 64, 65, 100, 199] {
                    let mut want = vec![sentinel; m];
                    // SAFETY: every row holds 200 >= m values.
                    let done = unsafe { fold::<T, Min, 3>(&srcs[..], &mut want, Store::Cached) };
                    buf.fill(sentinel);
                    let out = &mut buf[skew..skew + m];
                    // SAFETY: as above.
                    let got = unsafe { fold::<T, Min, 3>(&srcs[..], out, Store::Streamed) };
                    super::super::store::fence();
                    assert_eq!(got, done, "skew {skew}, {m} values");
                    assert_eq!(&buf[skew..skew + done], &want[..done], "skew {skew}, {m}");
                    let untouched = |x: &T| x.to_f64().to_bits() == sentinel.to_f64().to_bits();
                    assert!(buf[..skew].iter().all(untouched), "before, skew {skew}");
                    assert!(
                        buf[skew + done..].iter().all(untouched),
                        "after, skew {skew}"
                    );
                }
            }
        }
        check(|k| (k % 251) as u8, 255);
        check(|k| (k * 263 % 65521) as u16, u16::MAX);
        check(|k| (k % 97) as f32 - 40.0, f32::INFINITY);
        check(|k| (k % 97) as f64 - 40.0, f64::INFINITY);
    }

    /// Spaced inputs are the slices `step` bytes apart: shifted copies of a line, and lines of an
    /// image, for the single fold and the pair.
    #[test]
    fn spaced_inputs_are_the_slices_they_address() {
        let data: Vec<u16> = (0..600).map(|i| (i * 7919 % 1009) as u16).collect();
        for (step, m) in [(1, 70), (100, 64)] {
            let slice = |j: usize| &data[j * step..j * step + m];
            let spaced = Spaced::of(data.as_ptr(), (step * 2) as isize);
            let (mut got, mut first, mut second) = (vec![0; m], vec![0; m], vec![0; m]);
            // SAFETY: inputs `j < 5` start at `j * step` and hold `m` values of `data`.
            let (done, pair) = unsafe {
                (
                    fold::<u16, Max, 4>(spaced, &mut got, Store::Cached),
                    fold_pair::<u16, Min, 5>(spaced, &mut first, &mut second),
                )
            };
            assert_eq!(pair, done);
            for i in 0..done {
                let col = |js: std::ops::Range<usize>| js.map(|j| slice(j)[i]);
                assert_eq!(got[i], col(0..4).max().unwrap(), "step {step}, {i}");
                assert_eq!(first[i], col(0..4).min().unwrap(), "step {step}, {i}");
                assert_eq!(second[i], col(1..5).min().unwrap(), "step {step}, {i}");
            }
            assert!(!available::<u16>() || done == m / 16 * 16);
        }
    }
}
