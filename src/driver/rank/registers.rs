//! The 5×5 median's merge network on pixels held in AVX2 registers. A network known only at run
//! time runs comparator by comparator over rows of pixels in memory ([`super::order::network`]):
//! two loads and two stores a comparator. This one is known when ndjit is compiled, so its 74
//! comparators are straight-line code on 25 vector registers (and the stack slots LLVM spills
//! them to), as OpenCV's `medianBlur` does.
//!
//! The comparators are those [`super::columns::merge`] builds for 5 sorted columns of 5 and
//! sorted position 12 (a test checks it), so the exactness argument there holds. The vector
//! `min`/`max` give their second operand for equal values, so a `-0.0` and a `0.0` may come out
//! as one zero twice: only the median, which adds `0.0` to its value, or data without `-0.0`
//! (the parent module's proof) come here.

use super::elem::Elem;
use super::stat::Positions;

/// The network, as code: each `(i, j)` leaves the minimum on wire `i`, the maximum on `j`.
macro_rules! merge_5x5 {
    ($w:ident, $min:expr, $max:expr) => {
        merge_5x5!(@pairs $w, $min, $max,
            (0, 5) (4, 9) (4, 5) (2, 7) (2, 4) (7, 5) (1, 6) (3, 8) (3, 6) (1, 2) (3, 4) (6, 7)
            (8, 5) (10, 15) (14, 19) (14, 15) (12, 17) (12, 14) (17, 15) (11, 16) (13, 18)
            (13, 16) (11, 12) (13, 14) (16, 17) (18, 15) (20, 0) (5, 0) (24, 4) (24, 5) (4, 0)
            (22, 2) (7, 2) (22, 24) (7, 5) (2, 4) (21, 1) (9, 1) (6, 9) (23, 3) (8, 3) (23, 6)
            (8, 9) (3, 1) (21, 22) (23, 24) (6, 7) (8, 5) (9, 2) (3, 4) (1, 0) (10, 20) (15, 5)
            (15, 20) (14, 24) (4, 24) (4, 20) (12, 22) (2, 22) (17, 7) (17, 2) (2, 4) (11, 21)
            (19, 9) (19, 21) (16, 6) (1, 6) (1, 21) (13, 23) (3, 23) (18, 8) (18, 3) (3, 1)
            (3, 4))
    };
    (@pairs $w:ident, $min:expr, $max:expr, $(($i:literal, $j:literal))*) => {{
        $(
            let (a, b) = ($w[$i], $w[$j]);
            $w[$i] = $min(a, b);
            $w[$j] = $max(a, b);
        )*
    }};
}

/// The wire the median ends on.
const OUT: usize = 4;

/// Whether a box of `rows` slots of `width` columns, read at `pos`, is a 5×5 median (or
/// `np.sort(x)[12]`), which [`medians_5x5`] computes.
pub(crate) fn is_5x5_median(rows: usize, width: usize, pos: &Positions) -> bool {
    rows == 5 && width == 5 && matches!(pos, Positions::One { at: 12, .. })
}

/// The medians of the 5×5 boxes of the first pixels of a segment, from its sorted columns
/// (`cols[r][x]`: the `r`-th smallest of column `x`, from the first box's leftmost column), a
/// register of pixels at a time, each plus `0.0` where `plus_zero`. Returns how many pixels it
/// did: none where the CPU lacks AVX2 or the type has no vector min (64-bit integers); the
/// rest, fewer than a register's worth, is the caller's.
pub(crate) fn medians_5x5<T: Elem>(cols: [&[T]; 5], out: &mut [T], plus_zero: bool) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::any::TypeId;
        macro_rules! each {
            ($($t:ident),*) => {$(
                if TypeId::of::<T>() == TypeId::of::<$t>() {
                    // SAFETY: `T` is `$t` (the same type id): the slices are reinterpreted as
                    // what they are.
                    let cols = cols.map(|c| unsafe {
                        std::slice::from_raw_parts(c.as_ptr() as *const $t, c.len())
                    });
                    let out = unsafe {
                        std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut $t, out.len())
                    };
                    return avx2::$t(cols, out, plus_zero);
                }
            )*};
        }
        each!(u8, i8, u16, i16, u32, i32, f32, f64);
    }
    let _ = (cols, out, plus_zero);
    0
}

/// The types with AVX2 min and max.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use std::arch::x86_64::*;

    macro_rules! kernel {
        ($($t:ident, $blocks:ident, $v:ty, $lanes:expr, $load:expr, $store:expr, $min:ident, $max:ident, $finish:expr);*) => {$(
            /// [`super::medians_5x5`] for this type.
            pub(crate) fn $t(cols: [&[$t]; 5], out: &mut [$t], plus_zero: bool) -> usize {
                if !std::arch::is_x86_feature_detected!("avx2") {
                    return 0;
                }
                // SAFETY: the CPU has AVX2.
                unsafe { $blocks(cols, out, plus_zero) }
            }

            /// # Safety
            /// The CPU must have AVX2.
            #[target_feature(enable = "avx2")]
            unsafe fn $blocks(cols: [&[$t]; 5], out: &mut [$t], plus_zero: bool) -> usize {
                    let whole = out.len() / $lanes * $lanes;
                    for j0 in (0..whole).step_by($lanes) {
                        for col in &cols {
                            assert!(col.len() >= j0 + 4 + $lanes, "a sorted column too short");
                        }
                        // SAFETY: `j0 + c + lanes` values of the column (asserted above).
                        let at = |c: usize, r: usize| unsafe { $load(cols[r].as_ptr().add(j0 + c)) };
                        // Wire `c * 5 + r`: rank `r` of the box's column `c`. Written out:
                        // `array::from_fn` left a loop of 25 loads, each stored to the stack
                        // and read back, two thirds of the kernel's time.
                        let mut w: [$v; 25] = [
                            at(0, 0), at(0, 1), at(0, 2), at(0, 3), at(0, 4),
                            at(1, 0), at(1, 1), at(1, 2), at(1, 3), at(1, 4),
                            at(2, 0), at(2, 1), at(2, 2), at(2, 3), at(2, 4),
                            at(3, 0), at(3, 1), at(3, 2), at(3, 3), at(3, 4),
                            at(4, 0), at(4, 1), at(4, 2), at(4, 3), at(4, 4),
                        ];
                        merge_5x5!(w, |a, b| $min(a, b), |a, b| $max(a, b));
                        let v = $finish(w[super::OUT], plus_zero);
                        // SAFETY: `j0 + lanes <= whole <= out.len()`.
                        unsafe { $store(out.as_mut_ptr().add(j0), v) };
                    }
                    whole
            }
        )*};
    }

    /// Integers: the median is the value itself.
    fn same(v: __m256i, _: bool) -> __m256i {
        v
    }

    kernel!(
        u8, blocks_u8, __m256i, 32, |p: *const u8| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut u8, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epu8, _mm256_max_epu8, same;
        i8, blocks_i8, __m256i, 32, |p: *const i8| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut i8, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epi8, _mm256_max_epi8, same;
        u16, blocks_u16, __m256i, 16, |p: *const u16| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut u16, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epu16, _mm256_max_epu16, same;
        i16, blocks_i16, __m256i, 16, |p: *const i16| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut i16, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epi16, _mm256_max_epi16, same;
        u32, blocks_u32, __m256i, 8, |p: *const u32| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut u32, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epu32, _mm256_max_epu32, same;
        i32, blocks_i32, __m256i, 8, |p: *const i32| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut i32, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epi32, _mm256_max_epi32, same;
        f32, blocks_f32, __m256, 8, |p: *const f32| _mm256_loadu_ps(p),
            |p: *mut f32, v| _mm256_storeu_ps(p, v), _mm256_min_ps, _mm256_max_ps,
            |v, plus_zero| if plus_zero { _mm256_add_ps(_mm256_setzero_ps(), v) } else { v };
        f64, blocks_f64, __m256d, 4, |p: *const f64| _mm256_loadu_pd(p),
            |p: *mut f64, v| _mm256_storeu_pd(p, v), _mm256_min_pd, _mm256_max_pd,
            |v, plus_zero| if plus_zero { _mm256_add_pd(_mm256_setzero_pd(), v) } else { v }
    );
}

#[cfg(test)]
mod tests {
    use super::super::columns::merge;
    use super::*;

    /// The comparators written in `merge_5x5!`, collected by running the macro on labels.
    #[test]
    #[allow(unused_assignments)] // the labels written back are not read after the last ones
    fn the_code_is_the_generated_network() {
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut w: [u32; 25] = std::array::from_fn(|k| k as u32);
        // The "min" records its operands and gives back the first, the "max" the second: the
        // labels never move, so each record is the comparator's pair of wires.
        let record = std::cell::RefCell::new(&mut pairs);
        merge_5x5!(
            w,
            |a: u32, b: u32| {
                record.borrow_mut().push((a, b));
                a
            },
            |_a: u32, b: u32| b
        );
        let m = merge(5, 5, 12, 12);
        assert_eq!(pairs, m.pairs);
        assert_eq!(m.out, (OUT, OUT));
    }

    /// Random boxes of few distinct values (many ties), against sorting, for every type.
    #[test]
    fn medians_equal_sorting() {
        fn check<T: Elem + Ord + std::fmt::Debug>(of: impl Fn(i64) -> T) {
            let mut seed = 0x1234_5678_u64;
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % 11) as i64 - 5
            };
            let m = 77;
            let raw: Vec<Vec<T>> = (0..5)
                .map(|_| (0..m + 4).map(|_| of(next())).collect())
                .collect();
            let mut cols = raw.clone();
            for x in 0..m + 4 {
                let mut c: Vec<T> = (0..5).map(|r| raw[r][x]).collect();
                c.sort_unstable();
                for (r, v) in c.into_iter().enumerate() {
                    cols[r][x] = v;
                }
            }
            let mut out = vec![T::default(); m];
            let refs = [&cols[0][..], &cols[1], &cols[2], &cols[3], &cols[4]];
            let done = medians_5x5(refs, &mut out, true);
            assert!(done + 32 > m, "{done} of {m} done");
            for (j, &got) in out[..done].iter().enumerate() {
                let mut v: Vec<T> = (0..5).flat_map(|r| raw[r][j..j + 5].to_vec()).collect();
                v.sort_unstable();
                assert_eq!(got, v[12], "pixel {j}");
            }
        }
        check(|v| (v + 5) as u8);
        check(|v| v as i8 * 20);
        check(|v| (v + 5) as u16 * 6000);
        check(|v| v as i16 * 3000);
        check(|v| (v + 5) as u32 * 400_000_000);
        check(|v| v as i32 * 400_000_000);
    }
}
