//! The extreme of every window of `w` consecutive values of a line, for all windows at once.
//!
//! Doubling (a sparse table built a level at a time): after the level of span `s`, `t[i]` is the
//! extreme of `e[i..i + s]`; the window of `w` is then the extreme of the two overlapping spans
//! `t[i]` and `t[i + w - s]` with `s` the largest power of two `<= w` (min and max are
//! idempotent, so the overlap does not matter). That is `log2(w) + 1` passes, each a plain
//! loop of `min`s over two slices that LLVM vectorises (32 `u8` lanes a instruction with AVX2),
//! which for the windows of rank filters (up to a few dozen) costs less than van Herk/Gil-Werman's
//! three dependent scalar comparisons per value.

use super::elem::Elem;
use super::simd;

/// `out[i]` = the minimum (or maximum) of `e[i..i + w]` for `i in 0..out.len()`; `e` holds at
/// least `out.len() + w - 1` values, `w >= 1`. `tmp` is scratch.
pub(crate) fn extremes<T: Elem>(e: &[T], w: usize, max: bool, out: &mut [T], tmp: &mut Scratch<T>) {
    simd::run(Extremes {
        e,
        w,
        max,
        out,
        tmp,
    })
}

/// [`extremes`] as one AVX2 kernel (its folds inlined are too large for [`simd::fast`]).
struct Extremes<'a, T> {
    e: &'a [T],
    w: usize,
    max: bool,
    out: &'a mut [T],
    tmp: &'a mut Scratch<T>,
}

impl<T: Elem> simd::Kernel for Extremes<'_, T> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Extremes {
            e,
            w,
            max,
            out,
            tmp,
        } = self;
        match max {
            true => extremes_by(e, w, out, tmp, T::select_max),
            false => extremes_by(e, w, out, tmp, T::select_min),
        }
    }
}

/// Two level buffers, reused between calls.
pub(crate) type Scratch<T> = (Vec<T>, Vec<T>);

#[inline(always)]
pub(crate) fn extremes_by<T: Elem, F: Fn(T, T) -> T + Copy>(
    e: &[T],
    w: usize,
    out: &mut [T],
    tmp: &mut Scratch<T>,
    op: F,
) {
    let m = out.len();
    debug_assert!(w >= 1 && e.len() >= m + w - 1);
    // Narrow windows in one pass of overlapping loads: fewer passes than doubling's.
    if w <= FOLD_MAX {
        let mut shifted: [&[T]; FOLD_MAX] = [&[]; FOLD_MAX];
        for (d, s) in shifted[..w].iter_mut().enumerate() {
            *s = &e[d..d + m];
        }
        return fold(&shifted[..w], out, op);
    }
    let (a, b) = tmp;
    let mut len = m + w - 1;
    if a.len() < len {
        a.resize(len, T::default());
        b.resize(len, T::default());
    }
    let mut span = 1;
    // `level[i]` is the extreme of `span` values from `i`: `e` itself, then `a`; each pass
    // doubles `span` into `b` (separate slices, so the loop vectorises).
    let mut first = true;
    while 2 * span <= w {
        len -= span;
        let level: &[T] = if first { e } else { a };
        fold_n([&level[..len], &level[span..span + len]], &mut b[..len], op);
        std::mem::swap(a, b);
        first = false;
        span *= 2;
    }
    let level: &[T] = if first { e } else { a };
    fold_n([&level[..m], &level[w - span..w - span + m]], out, op);
}

/// The most slices [`fold`] takes in one pass.
pub(crate) const FOLD_MAX: usize = 8;

/// `out[i]` = `op` folded over `srcs[j][i]`, in one pass for up to [`FOLD_MAX`] slices, each
/// at least `out.len()` long.
#[inline(always)]
fn fold<T: Elem>(srcs: &[&[T]], out: &mut [T], op: impl Fn(T, T) -> T + Copy) {
    macro_rules! arity {
        ($($n:literal)*) => {
            match srcs.len() {
                $($n => fold_n::<T, $n>(srcs.try_into().expect("the arity"), out, op),)*
                n => unreachable!("{n} slices in one pass"),
            }
        };
    }
    arity!(1 2 3 4 5 6 7 8)
}

/// [`fold`] with the number of slices known, so that the inner loop unrolls and the outer one
/// vectorises.
#[inline(always)]
fn fold_n<T: Elem, const N: usize>(srcs: [&[T]; N], out: &mut [T], op: impl Fn(T, T) -> T + Copy) {
    if std::mem::size_of::<T>() <= 2 && N > 2 {
        return fold_chunks(srcs, out, op);
    }
    let m = out.len();
    let srcs = srcs.map(|s| &s[..m]);
    for (i, o) in out.iter_mut().enumerate() {
        let mut v = srcs[0][i];
        for s in &srcs[1..] {
            v = op(v, s[i]);
        }
        *o = v;
    }
}

/// Bytes of a [`fold_chunks`] chunk: two AVX2 vectors.
const CHUNK_BYTES: usize = 64;

/// [`fold_n`] a chunk at a time: each chunk's values are all read before any is stored, so the
/// compiler needs no run-time check that `out` does not overlap the slices to vectorise it. The
/// plain loop keeps such checks, and for five or more slices of 1- or 2-byte elements LLVM
/// judges them too costly and runs it as scalar code: a fold of five `u8` slices of 1024 took
/// 110 ns so, 50 ns in chunks (AVX2; `u16` 100 and 70 ns). From three slices the chunks are
/// also the faster for `u16` (a 3×3 minimum on 1024², one thread: 0.19 against 0.15-0.16 ms;
/// `u8` the same either way), and two slices keep the plain loop. For 4- and 8-byte elements the plain
/// loop vectorises and is the faster (`f32`, three slices: 90 against 190 ns).
#[inline(always)]
fn fold_chunks<T: Elem, const N: usize>(
    srcs: [&[T]; N],
    out: &mut [T],
    op: impl Fn(T, T) -> T + Copy,
) {
    let m = out.len();
    let srcs = srcs.map(|s| &s[..m]);
    let lanes = CHUNK_BYTES / std::mem::size_of::<T>();
    let whole = m - m % lanes;
    let mut acc = [T::default(); CHUNK_BYTES];
    let acc = &mut acc[..lanes];
    for i in (0..whole).step_by(lanes) {
        acc.copy_from_slice(&srcs[0][i..i + lanes]);
        for s in &srcs[1..] {
            for (a, &x) in acc.iter_mut().zip(&s[i..i + lanes]) {
                *a = op(*a, x);
            }
        }
        out[i..i + lanes].copy_from_slice(acc);
    }
    for (i, o) in out.iter_mut().enumerate().skip(whole) {
        *o = srcs[1..].iter().fold(srcs[0][i], |v, s| op(v, s[i]));
    }
}

/// The vertical extremes of two consecutive lines of a box of `k = rows.len() - 1` rows
/// (`2 <= k <= FOLD_MAX`): `first[i]` = `op` folded over `rows[..k][i]`, `second[i]` over
/// `rows[1..][i]`. The `k - 1` rows both lines read are folded once, so the pair costs `k + 1`
/// loads and `k` operations a column where two [`fold`]s cost `2k` and `2k - 2`. Each slice
/// holds at least `first.len()` values. For 4- and 8-byte types only: LLVM leaves the loop
/// scalar for narrower ones (measured, `u16` 5×5 on 1024²: 3.3 ms against 0.26 for two folds).
#[inline(always)]
pub(crate) fn fold_pair<T: Elem>(
    rows: &[&[T]],
    [first, second]: [&mut [T]; 2],
    op: impl Fn(T, T) -> T + Copy,
) {
    macro_rules! arity {
        ($($n:literal)*) => {
            match rows.len() {
                $($n => fold_pair_n::<T, $n>(rows.try_into().expect("the arity"), first, second, op),)*
                n => unreachable!("a pair of lines over {} rows", n - 1),
            }
        };
    }
    arity!(3 4 5 6 7 8 9)
}

/// [`fold_pair`] with the number of rows known, so that the inner loop unrolls and the outer
/// one vectorises.
#[inline(always)]
fn fold_pair_n<T: Elem, const N: usize>(
    rows: [&[T]; N],
    first: &mut [T],
    second: &mut [T],
    op: impl Fn(T, T) -> T + Copy,
) {
    let m = first.len();
    let rows = rows.map(|s| &s[..m]);
    let second = &mut second[..m];
    for (i, (x, y)) in first.iter_mut().zip(second.iter_mut()).enumerate() {
        let v = rows[2..N - 1].iter().fold(rows[1][i], |v, r| op(v, r[i]));
        (*x, *y) = (op(rows[0][i], v), op(v, rows[N - 1][i]));
    }
}

/// `out[i]` = the minimum (or maximum) of `x[i]` and `y[i]`.
pub(crate) fn pair_extremes<T: Elem>(x: &[T], y: &[T], out: &mut [T], max: bool) {
    simd::fast(|| match max {
        true => fold_n([x, y], out, T::select_max),
        false => fold_n([x, y], out, T::select_min),
    })
}

/// `out[i]` = the minimum (or maximum) of `lines[l][i]` over the lines: the chords' extremes
/// into the pixels'. Up to eight lines are read in the first pass over `out` (then three more
/// and `out` itself a pass), so a footprint of k rows costs one pass up to 8 rows, not k.
///
/// # Safety
/// Each pointer must be valid for reading `out.len()` values, none of them inside `out`.
pub(crate) unsafe fn merge_lines<T: Elem>(out: &mut [T], lines: &[*const T], max: bool) {
    simd::run(Merge { out, lines, max })
}

/// [`merge_lines`] as one AVX2 kernel; its pointers are valid (`merge_lines`' contract).
struct Merge<'a, T> {
    out: &'a mut [T],
    lines: &'a [*const T],
    max: bool,
}

impl<T: Elem> simd::Kernel for Merge<'_, T> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Merge { out, lines, max } = self;
        match max {
            // SAFETY: `merge_lines`' caller's promise.
            true => unsafe { merge_lines_by(out, lines, T::select_max, T::max) },
            false => unsafe { merge_lines_by(out, lines, T::select_min, T::min) },
        }
    }
}

#[inline(always)]
pub(crate) unsafe fn merge_lines_by<T: Elem, F: Fn(T, T) -> T + Copy, G: Fn(T, T) -> T + Copy>(
    out: &mut [T],
    lines: &[*const T],
    op: F,
    in_place: G,
) {
    let m = out.len();
    // SAFETY: the caller's promise.
    let line = |p: *const T| unsafe { std::slice::from_raw_parts(p, m) };
    let (first, rest) = lines.split_at(lines.len().min(FOLD_MAX));
    if first.is_empty() {
        return;
    }
    let mut slices: [&[T]; FOLD_MAX] = [&[]; FOLD_MAX];
    for (s, &p) in slices.iter_mut().zip(first) {
        *s = line(p);
    }
    fold(&slices[..first.len()], out, op);
    // `out` is read and written back from here: `in_place` is an operation LLVM cannot turn
    // into a masked store (`op`, a select, can be, and masked stores are slow).
    let op = in_place;
    for group in rest.chunks(3) {
        match *group {
            [a] => out
                .iter_mut()
                .zip(line(a))
                .for_each(|(o, &x)| *o = op(*o, x)),
            [a, b] => {
                for (o, (&x, &y)) in out.iter_mut().zip(line(a).iter().zip(line(b))) {
                    *o = op(*o, op(x, y));
                }
            }
            [a, b, c, ..] => {
                let abc = line(a).iter().zip(line(b)).zip(line(c));
                for (o, ((&x, &y), &z)) in out.iter_mut().zip(abc) {
                    *o = op(*o, op(op(x, y), z));
                }
            }
            [] => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_any_number_of_lines_equals_a_fold() {
        let m = 37;
        let lines: Vec<Vec<f32>> = (0..14)
            .map(|l| {
                (0..m)
                    .map(|i| ((i * 31 + l * 17) % 23) as f32 - 11.0)
                    .collect()
            })
            .collect();
        let ptrs: Vec<*const f32> = lines.iter().map(|l| l.as_ptr()).collect();
        for n in 1..=ptrs.len() {
            for max in [false, true] {
                let mut out = vec![0.0; m];
                // SAFETY: every line holds `m` values and none is `out`.
                unsafe { merge_lines(&mut out, &ptrs[..n], max) };
                for (i, &got) in out.iter().enumerate() {
                    let col = lines[..n].iter().map(|l| l[i]);
                    let want = match max {
                        true => col.fold(f32::NEG_INFINITY, f32::max),
                        false => col.fold(f32::INFINITY, f32::min),
                    };
                    assert_eq!(got, want, "{n} lines, max={max}, pixel {i}");
                }
            }
        }
    }

    /// Every row count a pair takes and several lengths, for the types the blocks pair (4 and
    /// 8 bytes) and a narrow one: each line is the minimum, and the maximum, of its own rows.
    #[test]
    fn a_pair_of_lines_is_two_folds() {
        fn check<T: Elem + std::fmt::Debug + From<u8>>() {
            type Op<T> = fn(T, T) -> T;
            let ops: [(Op<T>, Op<T>); 2] = [(T::select_min, T::min), (T::select_max, T::max)];
            for k in 2..=FOLD_MAX {
                for m in [1, 31, 64, 100, 257] {
                    let rows: Vec<Vec<T>> = (0..=k)
                        .map(|r| {
                            (0..m)
                                .map(|i| T::from(((i * 37 + r * 101) % 251) as u8))
                                .collect()
                        })
                        .collect();
                    let slices: Vec<&[T]> = rows.iter().map(|r| &r[..]).collect();
                    for (op, reduce) in ops {
                        let (mut a, mut b) = (vec![T::default(); m], vec![T::default(); m]);
                        fold_pair(&slices, [&mut a, &mut b], op);
                        for i in 0..m {
                            let fold = |rs: &[Vec<T>]| rs.iter().map(|r| r[i]).reduce(reduce);
                            assert_eq!(
                                (Some(a[i]), Some(b[i])),
                                (fold(&rows[..k]), fold(&rows[1..])),
                                "k {k}, m {m}, column {i}"
                            );
                        }
                    }
                }
            }
        }
        check::<u8>();
        check::<f32>();
        check::<f64>();
    }

    #[test]
    fn every_window_and_length_against_brute_force() {
        let e: Vec<i16> = (0..97)
            .map(|i: i32| ((i * 7919) % 113 - 50) as i16)
            .collect();
        let mut tmp = (Vec::new(), Vec::new());
        for w in 1..40 {
            for m in [1, 2, 5, 33, 97 - w + 1] {
                for max in [false, true] {
                    let mut out = vec![0; m];
                    extremes(&e, w, max, &mut out, &mut tmp);
                    for i in 0..m {
                        let win = &e[i..i + w];
                        let want = if max {
                            win.iter().max()
                        } else {
                            win.iter().min()
                        };
                        assert_eq!(out[i], *want.unwrap(), "w={w} m={m} i={i} max={max}");
                    }
                }
            }
        }
    }
}
