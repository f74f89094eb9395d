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
use super::lanes::{self, Sources, Spaced};
use super::simd;
use super::store::Store;

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
        with_extreme!(max, E => extremes_by::<T, E>(e, w, out, tmp, Store::Cached))
    }
}

/// Two level buffers, reused between calls.
pub(crate) type Scratch<T> = (Vec<T>, Vec<T>);

/// [`extremes`] for a known extreme, `out`'s whole vectors stored as `store` says (the levels
/// between passes always cached: they are read again at once).
#[inline(always)]
pub(crate) fn extremes_by<T: Elem, E: Extreme>(
    e: &[T],
    w: usize,
    out: &mut [T],
    tmp: &mut Scratch<T>,
    store: Store,
) {
    let m = out.len();
    assert!(
        w >= 1 && e.len() >= m + w - 1,
        "a line shorter than its windows"
    );
    let one = std::mem::size_of::<T>() as isize;
    // Narrow windows in one pass of overlapping loads: fewer passes than doubling's.
    if w <= FOLD_MAX {
        // SAFETY: the `w` shifted copies each hold `m` values of `e` (checked above).
        return unsafe { fold::<T, E>(Spaced::of(e.as_ptr(), one), w, out, store) };
    }
    if let Some((a, b)) = two_passes(w) {
        // The extreme of `a` consecutive values, then of `b` of those that cover the window:
        // `a` apart, the last one ending it (min and max are idempotent, so the overlap of the
        // last two does not matter). Two passes where doubling takes `log2(w) + 1`: measured,
        // minimum, one thread, 1024², `u8` 9×9 0.174 → 0.161 ms, `f64` 25×25 2.23 → 1.68.
        let len = m + w - a;
        let level = &mut tmp.0;
        if level.len() < len {
            level.resize(len, T::default());
        }
        // SAFETY: the `a` shifted copies each hold `len` values of `e`: `len + a - 1 = m + w -
        // 1` (checked above); `level` is scratch.
        unsafe {
            fold::<T, E>(
                Spaced::of(e.as_ptr(), one),
                a,
                &mut level[..len],
                Store::Cached,
            )
        };
        let mut at = [std::ptr::null(); FOLD_MAX];
        for (j, p) in at[..b].iter_mut().enumerate() {
            *p = level[Ord::min(j * a, w - a)..].as_ptr();
        }
        // SAFETY: input `j` starts at most `w - a` into `level`, so holds `m` values; `out` is
        // another buffer.
        return unsafe { fold::<T, E>(&at[..b], b, out, store) };
    }
    let (a, b) = tmp;
    let mut len = m + w - 1;
    // Each on its own: the two passes above grow only the first.
    for level in [&mut *a, &mut *b] {
        if level.len() < len {
            level.resize(len, T::default());
        }
    }
    let mut span = 1;
    // `level[i]` is the extreme of `span` values from `i`: `e` itself, then `a`; each pass
    // doubles `span` into `b` (separate slices, so the loop vectorises).
    let mut first = true;
    while 2 * span <= w {
        len -= span;
        let level: &[T] = if first { e } else { a };
        // SAFETY: `level` holds `len + span` values; `b` is another buffer.
        unsafe {
            fold_n::<T, E, 2>(
                Spaced::of(level.as_ptr(), span as isize * one),
                &mut b[..len],
                Store::Cached,
            )
        };
        std::mem::swap(a, b);
        first = false;
        span *= 2;
    }
    let level: &[T] = if first { e } else { a };
    let spaced = Spaced::of(level.as_ptr(), (w - span) as isize * one);
    // SAFETY: `level` holds `m + w - span` values, each input `m` of them; `out` is another buffer.
    unsafe { fold_n::<T, E, 2>(spaced, out, store) };
}

/// The most inputs [`fold`] takes in one pass.
pub(crate) const FOLD_MAX: usize = 8;

/// For a window of `w` values, the `(a, b)` of [`extremes_by`]'s two passes that read the fewest
/// values (`a + b`): windows of `a` consecutive values, then `b = ceil(w / a)` of those; `None`
/// past `FOLD_MAX²`. Looked up, as it is asked once a line (the search's divisions, done per
/// line, took a fifth of a `u8` 9×9 minimum's time).
fn two_passes(w: usize) -> Option<(usize, usize)> {
    const TABLE: [(usize, usize); FOLD_MAX * FOLD_MAX + 1] = {
        let mut t = [(0, 0); FOLD_MAX * FOLD_MAX + 1];
        let mut w = 1;
        while w < t.len() {
            let mut a = 1;
            while a <= FOLD_MAX {
                let b = w.div_ceil(a);
                if b <= FOLD_MAX && (t[w].0 == 0 || a + b < t[w].0 + t[w].1) {
                    t[w] = (a, b);
                }
                a += 1;
            }
            w += 1;
        }
        t
    };
    TABLE.get(w).copied()
}

/// `out[i]` = the extreme over `j < n` of input `j`'s value `i`, in one pass for up to
/// [`FOLD_MAX`] inputs, stored as `store` says (the whole vectors; the rest cached).
///
/// # Safety
/// Each input must hold `out.len()` values of `T`, none of them inside `out`.
#[inline(always)]
unsafe fn fold<T: Elem, E: Extreme>(srcs: impl Sources, n: usize, out: &mut [T], store: Store) {
    macro_rules! arity {
        ($($n:literal)*) => {
            match n {
                // SAFETY: the caller's promise.
                $($n => unsafe { fold_n::<T, E, $n>(srcs, out, store) },)*
                n => unreachable!("{n} inputs in one pass"),
            }
        };
    }
    arity!(1 2 3 4 5 6 7 8)
}

/// The `N` inputs from value `done` to `end`, as slices.
///
/// # Safety
/// Each input must hold `end` values of `T`, and live as long as `'a`.
#[inline(always)]
unsafe fn rests<'a, T, const N: usize>(
    srcs: impl Sources,
    done: usize,
    end: usize,
) -> [&'a [T]; N] {
    // SAFETY: the caller's promise.
    std::array::from_fn(|j| unsafe {
        std::slice::from_raw_parts((srcs.at(j) as *const T).add(done), end - done)
    })
}

/// [`fold`] with the number of inputs known: the whole vectors by [`lanes::fold`], the rest
/// (and the types without vector min and max) by a loop whose inner fold unrolls.
///
/// # Safety
/// As [`fold`].
#[inline(always)]
unsafe fn fold_n<T: Elem, E: Extreme, const N: usize>(
    srcs: impl Sources,
    out: &mut [T],
    store: Store,
) {
    // SAFETY: the caller's promise.
    let (done, m) = (
        unsafe { lanes::fold::<T, E, N>(srcs, out, store) },
        out.len(),
    );
    // Nothing left is the common case: then no slices are made (per line, that cost more than
    // a 1024-byte line's fold).
    if done == m {
        return;
    }
    // SAFETY: the caller's promise.
    let srcs: [&[T]; N] = unsafe { rests(srcs, done, m) };
    for (i, o) in out[done..].iter_mut().enumerate() {
        *o = srcs[1..].iter().fold(srcs[0][i], |v, s| E::pick(v, s[i]));
    }
}

/// The vertical extremes of two consecutive lines of a box of `k = n - 1` rows
/// (`2 <= k < PAIR_ROWS_MAX`) from `n` rows: `first[i]` = the extreme of rows `..k` at `i`,
/// `second[i]` of rows `1..`. The `k - 1` rows both lines read are folded once, so the pair
/// costs `k + 1` loads and `k` operations a column where two [`fold`]s cost `2k` and `2k - 2`.
/// Worth it where [`pairs_pay`]: LLVM leaves the plain loop scalar for 1- and 2-byte types
/// (measured, `u16` 5×5 on 1024²: 3.3 ms against 0.26 for two folds), which
/// [`lanes::fold_pair`] computes in vectors.
///
/// # Safety
/// Each row, and `second`, must hold `first.len()` values of `T`, no row inside either line.
#[inline(always)]
pub(crate) unsafe fn fold_pair<T: Elem, E: Extreme>(
    rows: impl Sources,
    n: usize,
    [first, second]: [&mut [T]; 2],
) {
    macro_rules! arity {
        ($($n:literal)*) => {
            match n {
                // SAFETY: the caller's promise.
                $($n => unsafe { fold_pair_n::<T, E, $n>(rows, first, second) },)*
                n => unreachable!("a pair of lines over {} rows", n - 1),
            }
        };
    }
    arity!(3 4 5 6 7 8 9 10 11 12 13 14 15 16 17)
}

/// The most rows [`fold_pair`] takes: pairs of lines of boxes up to 16 rows tall.
pub(crate) const PAIR_ROWS_MAX: usize = 17;

/// Whether [`fold_pair`] is faster than two [`fold`]s for `T`: where its loop is vector code.
pub(crate) fn pairs_pay<T: Elem>() -> bool {
    lanes::available::<T>() || std::mem::size_of::<T>() >= 4
}

/// [`fold_pair`] with the number of rows known: the whole vectors by [`lanes::fold_pair`], the
/// rest by a loop whose inner fold unrolls.
///
/// # Safety
/// As [`fold_pair`].
#[inline(always)]
unsafe fn fold_pair_n<T: Elem, E: Extreme, const N: usize>(
    rows: impl Sources,
    first: &mut [T],
    second: &mut [T],
) {
    let m = first.len();
    assert!(second.len() >= m, "the second line shorter than the first");
    // SAFETY: the caller's promise.
    let done = unsafe { lanes::fold_pair::<T, E, N>(rows, first, second) };
    if done == m {
        return;
    }
    // SAFETY: the caller's promise.
    let rows: [&[T]; N] = unsafe { rests(rows, done, m) };
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
    assert!(
        x.len() >= out.len() && y.len() >= out.len(),
        "a line shorter than the output"
    );
    let srcs = [x.as_ptr(), y.as_ptr()];
    // SAFETY: both inputs hold `out.len()` values; `out` is borrowed mutably, so neither is it.
    simd::fast(
        || with_extreme!(max, E => unsafe { fold_n::<T, E, 2>(&srcs[..], out, Store::Cached) }),
    )
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
        with_extreme!(max, E => unsafe { merge_lines_by::<T, E>(out, lines, Store::Cached) })
    }
}

/// [`merge_lines`] for a known extreme; `out`'s whole vectors stored as `store` says where one
/// pass reads every line (up to [`FOLD_MAX`]), cached otherwise (the later passes read `out`).
///
/// # Safety
/// As [`merge_lines`].
#[inline(always)]
pub(crate) unsafe fn merge_lines_by<T: Elem, E: Extreme>(
    out: &mut [T],
    lines: &[*const T],
    store: Store,
) {
    let m = out.len();
    // SAFETY: the caller's promise.
    let line = |p: *const T| unsafe { std::slice::from_raw_parts(p, m) };
    let (first, rest) = lines.split_at(lines.len().min(FOLD_MAX));
    if first.is_empty() {
        return;
    }
    let store = match rest.is_empty() {
        true => store,
        false => Store::Cached,
    };
    // SAFETY: the caller's promise.
    unsafe { fold::<T, E>(first, first.len(), out, store) };
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
                for k in 2..PAIR_ROWS_MAX {
                    for m in [1, 31, 64, 100, 257] {
                        let rows: Vec<Vec<T>> = (0..=k)
                            .map(|r| {
                                (0..m)
                                    .map(|i| T::from(((i * 37 + r * 101) % 251) as u8))
                                    .collect()
                            })
                            .collect();
                        let ptrs: Vec<*const T> = rows.iter().map(|r| r.as_ptr()).collect();
                        let (mut a, mut b) = (vec![T::default(); m], vec![T::default(); m]);
                        // SAFETY: every row holds `m` values.
                        unsafe { fold_pair::<T, E>(&ptrs[..], k + 1, [&mut a, &mut b]) };
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

    /// The two passes cover every window and read the fewest values of any `a` up to
    /// [`FOLD_MAX`].
    #[test]
    fn two_passes_cover_the_window_with_the_fewest_loads() {
        for w in 1..=FOLD_MAX * FOLD_MAX {
            let (a, b) = two_passes(w).expect("a window up to FOLD_MAX²");
            assert!(
                (1..=FOLD_MAX).contains(&a) && (1..=FOLD_MAX).contains(&b),
                "w {w}"
            );
            assert!(a * b >= w && a * (b - 1) < w, "w {w}: {a} × {b}");
            let best = (1..=FOLD_MAX)
                .filter(|a| w.div_ceil(*a) <= FOLD_MAX)
                .map(|a| a + w.div_ceil(a))
                .min();
            assert_eq!(Some(a + b), best, "w {w}");
        }
        assert_eq!(two_passes(FOLD_MAX * FOLD_MAX + 1), None);
    }

    #[test]
    fn every_window_and_length_against_brute_force() {
        let e: Vec<i16> = (0..160)
            .map(|i: i32| ((i * 7919) % 113 - 50) as i16)
            .collect();
        let mut tmp = (Vec::new(), Vec::new());
        // One pass, two passes (up to 64) and doubling.
        for w in 1..80 {
            for m in [1, 2, 5, 33, 160 - w + 1] {
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
