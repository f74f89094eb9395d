//! The extreme of every window of `w` consecutive values of a line, for all windows at once.
//!
//! Doubling (a sparse table built a level at a time): after the level of span `s`, `t[i]` is the
//! extreme of `e[i..i + s]`; the window of `w` is then the extreme of the two overlapping spans
//! `t[i]` and `t[i + w - s]` with `s` the largest power of two `<= w` (min and max are
//! idempotent, so the overlap does not matter). That is `log2(w) + 1` passes, each a plain
//! loop of `min`s over two slices that LLVM vectorises (32 `u8` lanes a instruction with AVX2),
//! which for the windows of rank filters (up to a few dozen) costs less than van Herk/Gil-Werman's
//! three dependent scalar comparisons per value.

use super::elem::{with_extreme, Elem, Extreme};
use super::{lanes, simd};

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
        with_extreme!(max, E => extremes_by::<T, E>(e, w, out, tmp))
    }
}

/// Two level buffers, reused between calls.
pub(crate) type Scratch<T> = (Vec<T>, Vec<T>);

#[inline(always)]
pub(crate) fn extremes_by<T: Elem, E: Extreme>(
    e: &[T],
    w: usize,
    out: &mut [T],
    tmp: &mut Scratch<T>,
) {
    let m = out.len();
    debug_assert!(w >= 1 && e.len() >= m + w - 1);
    // Narrow windows in one pass of overlapping loads: fewer passes than doubling's.
    if w <= FOLD_MAX {
        let mut shifted: [&[T]; FOLD_MAX] = [&[]; FOLD_MAX];
        for (d, s) in shifted[..w].iter_mut().enumerate() {
            *s = &e[d..d + m];
        }
        return fold::<T, E>(&shifted[..w], out);
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
        fold_n::<T, E, 2>([&level[..len], &level[span..span + len]], &mut b[..len]);
        std::mem::swap(a, b);
        first = false;
        span *= 2;
    }
    let level: &[T] = if first { e } else { a };
    fold_n::<T, E, 2>([&level[..m], &level[w - span..w - span + m]], out);
}

/// The most slices [`fold`] takes in one pass.
pub(crate) const FOLD_MAX: usize = 8;

/// `out[i]` = the extreme of `srcs[j][i]` over `j`, in one pass for up to [`FOLD_MAX`] slices,
/// each at least `out.len()` long.
#[inline(always)]
fn fold<T: Elem, E: Extreme>(srcs: &[&[T]], out: &mut [T]) {
    macro_rules! arity {
        ($($n:literal)*) => {
            match srcs.len() {
                $($n => fold_n::<T, E, $n>(srcs.try_into().expect("the arity"), out),)*
                n => unreachable!("{n} slices in one pass"),
            }
        };
    }
    arity!(1 2 3 4 5 6 7 8)
}

/// [`fold`] with the number of slices known: the whole vectors by [`lanes::fold`], the rest
/// (and the types without vector min and max) by a loop whose inner fold unrolls.
#[inline(always)]
fn fold_n<T: Elem, E: Extreme, const N: usize>(srcs: [&[T]; N], out: &mut [T]) {
    let (done, m) = (lanes::fold::<T, E, N>(&srcs, out), out.len());
    // Nothing left is the common case: then no slices are made (per line, that cost more than
    // a 1024-byte line's fold).
    if done == m {
        return;
    }
    let srcs = srcs.map(|s| &s[done..m]);
    for (i, o) in out[done..].iter_mut().enumerate() {
        *o = srcs[1..].iter().fold(srcs[0][i], |v, s| E::pick(v, s[i]));
    }
}

/// The vertical extremes of two consecutive lines of a box of `k = rows.len() - 1` rows
/// (`2 <= k <= FOLD_MAX`): `first[i]` = the extreme of `rows[..k][i]`, `second[i]` of
/// `rows[1..][i]`. The `k - 1` rows both lines read are folded once, so the pair costs `k + 1`
/// loads and `k` operations a column where two [`fold`]s cost `2k` and `2k - 2`. Each slice
/// holds at least `first.len()` values. Worth it where [`pairs_pay`]: LLVM leaves the plain loop
/// scalar for 1- and 2-byte types (measured, `u16` 5×5 on 1024²: 3.3 ms against 0.26 for two
/// folds), which [`lanes::fold_pair`] computes in vectors.
#[inline(always)]
pub(crate) fn fold_pair<T: Elem, E: Extreme>(rows: &[&[T]], [first, second]: [&mut [T]; 2]) {
    macro_rules! arity {
        ($($n:literal)*) => {
            match rows.len() {
                $($n => fold_pair_n::<T, E, $n>(rows.try_into().expect("the arity"), first, second),)*
                n => unreachable!("a pair of lines over {} rows", n - 1),
            }
        };
    }
    arity!(3 4 5 6 7 8 9)
}

/// Whether [`fold_pair`] is faster than two [`fold`]s for `T`: where its loop is vector code.
pub(crate) fn pairs_pay<T: Elem>() -> bool {
    lanes::available::<T>() || std::mem::size_of::<T>() >= 4
}

/// [`fold_pair`] with the number of rows known: the whole vectors by [`lanes::fold_pair`], the
/// rest by a loop whose inner fold unrolls.
#[inline(always)]
fn fold_pair_n<T: Elem, E: Extreme, const N: usize>(
    rows: [&[T]; N],
    first: &mut [T],
    second: &mut [T],
) {
    let (done, m) = (
        lanes::fold_pair::<T, E, N>(&rows, first, second),
        first.len(),
    );
    if done == m {
        return;
    }
    let rows = rows.map(|s| &s[done..m]);
    let second = &mut second[done..m];
    for (i, (x, y)) in first[done..].iter_mut().zip(second.iter_mut()).enumerate() {
        let v = rows[2..N - 1]
            .iter()
            .fold(rows[1][i], |v, r| E::pick(v, r[i]));
        (*x, *y) = (E::pick(rows[0][i], v), E::pick(v, rows[N - 1][i]));
    }
}

/// `out[i]` = the minimum (or maximum) of `x[i]` and `y[i]`.
pub(crate) fn pair_extremes<T: Elem>(x: &[T], y: &[T], out: &mut [T], max: bool) {
    simd::fast(|| with_extreme!(max, E => fold_n::<T, E, 2>([x, y], out)))
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
        // SAFETY: `merge_lines`' caller's promise.
        with_extreme!(max, E => unsafe { merge_lines_by::<T, E>(out, lines) })
    }
}

#[inline(always)]
pub(crate) unsafe fn merge_lines_by<T: Elem, E: Extreme>(out: &mut [T], lines: &[*const T]) {
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
    fold::<T, E>(&slices[..first.len()], out);
    // `out` is read and written back from here: `in_place` is an operation LLVM cannot turn
    // into a masked store (a select can be, and masked stores are slow).
    let op = E::in_place::<T>;
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

    use super::super::elem::{Max, Min};

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

    /// Every row count a pair takes and several lengths (whole vectors and a rest), for 1-, 2-,
    /// 4- and 8-byte types: each line is the minimum, and the maximum, of its own rows.
    #[test]
    fn a_pair_of_lines_is_two_folds() {
        fn check<T: Elem + std::fmt::Debug + From<u8>>() {
            fn both<T: Elem + std::fmt::Debug + From<u8>, E: Extreme>(reduce: fn(T, T) -> T) {
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
                        let (mut a, mut b) = (vec![T::default(); m], vec![T::default(); m]);
                        fold_pair::<T, E>(&slices, [&mut a, &mut b]);
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
            both::<T, Min>(T::min);
            both::<T, Max>(T::max);
        }
        check::<u8>();
        check::<u16>();
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
