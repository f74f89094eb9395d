//! Sorted positions of every window of a line segment (medians, quantiles, `np.sort(x)[k]`),
//! six ways, chosen by the footprint and the element type ([`Order::choose`]):
//! - the median of a 3×3 box from column sorts shared by neighbouring pixels ([`median3x3`]);
//! - for 8-bit boxes above 9×9, column histograms kept from line to line
//!   ([`super::perreault`]);
//! - a selection network run on many pixels at once: each comparator is a `min` and a `max` of
//!   two rows of pixels, which LLVM vectorises; only the comparators the wanted positions depend
//!   on are kept; for a box, where it needs fewer comparators, the box's columns are sorted once
//!   for all the pixels that read them and merged per pixel ([`super::columns`]);
//! - Huang's sliding histogram for 8-bit types with larger footprints: moving one pixel along
//!   the line removes the values leaving each chord of the footprint and adds those entering
//!   it, and a two-level histogram finds a position in `O(sqrt(bins))`;
//! - for the other types with larger footprints, the same slide on ranks: the values of a band
//!   of rows ranked once, each window a set of ranks ([`super::ranked`]).
//!
//! Each gives the values at the sorted positions exactly: the multiset of a window's values is
//! what it is, however it is ordered, and equal values have equal bits except `±0.0`, which the
//! caller has excluded where their sign could show (the parent module's proof).

use super::super::cache::Lru;
use super::super::plan::Plan;
use super::aligned;
use super::boxed::{box_chord, ends_of, fill_ends, Block, End, Extent};
use super::columns::{self, Merge};
use super::elem::Elem;
use super::registers;
use super::simd;
use super::stat::{Mix, Positions};
use crate::ir::network;
use std::sync::{Mutex, OnceLock};

/// Where a segment's results go: `native[j]` for a result that is one of the values, `double[j]`
/// for one mixed in double (an even median, a quantile).
pub(crate) struct Results<'a, T> {
    pub native: &'a mut [T],
    pub double: &'a mut [f64],
}

impl<T: Elem> Results<'_, T> {
    /// Stores the result of pixel `j` from the values at its sorted positions (`b` is read only
    /// for two positions).
    #[inline(always)]
    pub(crate) fn put(&mut self, j: usize, pos: &Positions, a: T, b: T) {
        match *pos {
            Positions::One { plus_zero, .. } => {
                self.native[j] = if plus_zero { a.plus_zero() } else { a }
            }
            Positions::Two(_, _, mix) => self.double[j] = mix.apply(a.to_f64(), b.to_f64()),
        }
    }

    /// Stores the results of pixels `j0..j0 + a.len()` from the rows of values at their sorted
    /// positions: the same as [`Results::put`] per pixel, with the choice of formula (and of
    /// `_lerp`'s branch, fixed by the plan) made once per row, so that the loop vectorises.
    #[inline(always)]
    fn put_rows(&mut self, j0: usize, pos: &Positions, a: &[T], b: &[T]) {
        let len = a.len();
        match *pos {
            Positions::One { plus_zero, .. } => {
                let dst = &mut self.native[j0..j0 + len];
                match plus_zero {
                    true => dst.iter_mut().zip(a).for_each(|(d, v)| *d = v.plus_zero()),
                    false => dst.copy_from_slice(a),
                }
            }
            Positions::Two(_, _, mix) => {
                let dst = &mut self.double[j0..j0 + len];
                let rows = dst.iter_mut().zip(a).zip(&b[..len]);
                match mix {
                    Mix::Mean => {
                        rows.for_each(|((d, x), y)| *d = Mix::Mean.apply(x.to_f64(), y.to_f64()))
                    }
                    Mix::Lerp(plan) if plan.gamma >= 0.5 => {
                        rows.for_each(|((d, x), y)| *d = plan.lerp_upper(x.to_f64(), y.to_f64()))
                    }
                    Mix::Lerp(plan) => {
                        rows.for_each(|((d, x), y)| *d = plan.lerp_lower(x.to_f64(), y.to_f64()))
                    }
                }
            }
        }
    }
}

/// The sorted positions a statistic reads, as indices.
pub(crate) fn wanted(pos: &Positions) -> (usize, usize) {
    match *pos {
        Positions::One { at, .. } => (at, at),
        Positions::Two(a, b, _) => (a, b),
    }
}

/// The algorithm for one footprint and element type.
pub(crate) enum Order {
    /// The median of a 3×3 box: column sorts shared by neighbouring pixels ([`median3x3`]).
    Median3x3,
    /// A selection network on each pixel's values, whose wanted positions end on wires `out`.
    Network(Merge),
    /// A box of `rows` slots each holding the chord `(offset, width)`: its columns sorted once
    /// for all the pixels reading them (the comparators `sort`), then merged per pixel
    /// ([`super::columns`]).
    Columns {
        sort: Vec<(u32, u32)>,
        merge: Merge,
        rows: usize,
        offset: usize,
        width: usize,
    },
    Histogram,
    /// Ranks of a band of rows' values, slid along each line ([`super::ranked`]).
    Ranked,
    /// An 8-bit box of more than [`PERREAULT_MIN`] values (at most [`PERREAULT_MAX`]) whose
    /// slots stack: column histograms kept from line to line ([`super::perreault`]).
    Perreault {
        offset: usize,
        width: usize,
    },
}

/// Above this many values an 8-bit stacked box takes [`Order::Perreault`], whose cost per
/// pixel does not grow with the box: measured on 1024² `u8` medians, one thread, about 30 ms
/// from 9×9 to 25×25, where sorted columns take 15 ms at 9×9 and 33 ms at 11×11, and Huang's
/// histogram 68 ms at 15×15 and 97 ms at 25×25. (Since its fine bins are searched in a vector,
/// 16–21 ms from 11×11 to 25×25 on an AMD EPYC; 9×9 not measured again.)
const PERREAULT_MIN: usize = 81;

/// The most values [`Order::Perreault`] takes: its counts are 16-bit, and a box of 65,536
/// values (256×256, the most the driver unrolls) could hold them all in one bin. Larger boxes
/// take Huang's histogram, whose counts are 32-bit.
pub(super) const PERREAULT_MAX: usize = u16::MAX as usize;

/// The most values a footprint may have for a selection network (sorted columns for a box);
/// beyond it Huang's histogram takes 8-bit types, ranks ([`Order::Ranked`]) the others, whose
/// cost hardly grows with the footprint (50–70 ms from 49 to 121 values). Measured on 1024²
/// medians, one thread, ms, a network against the other:
/// - `u8`: 9×9 55 against 108;
/// - `u16`: 9×9 40 against 55, 11×11 69 against 58; disks of 81 values 55 against 60, of 113
///   87 against 62;
/// - `f32`, `f64` (vectors of half the lanes or fewer): 7×7 41 and 47 against 55 and 64, 9×9
///   57 and 184 against 59 and 67; disks of 49 values 57 and 112 against 60 and 68 (a network
///   per pixel costs more than a box's sorted columns), of 81 73 and 249 against 63 and 70;
/// - 64-bit integers, compared one pair at a time (AVX2 has no vector min and max for them):
///   `i64` 5×5 37 against 60, 7×7 132 against 57; disks of 13 values 28 against 68, of 29 84
///   against 68.
fn network_max<T: Elem>(boxed: bool) -> usize {
    match (T::KEY_BITS, boxed) {
        (8, _) => 128,
        (16, _) => 100,
        _ if !T::VECTOR_MIN_MAX => 25,
        (_, true) => 64,
        (_, false) => 40,
    }
}

impl Order {
    /// The algorithm for `n` values in the chords of each slot (`chords[s]`).
    /// `stacked`: the slots are consecutive lines of one axis ([`super::boxed::stacked`]).
    pub fn choose<T: Elem>(
        n: usize,
        pos: &Positions,
        chords: &[Vec<(usize, usize)>],
        stacked: bool,
    ) -> Order {
        let boxed = box_chord(chords);
        let box3 = chords.len() == 3 && boxed == Some((0, 3));
        if box3 && matches!(pos, Positions::One { at: 4, .. }) {
            Order::Median3x3
        } else if let Some((offset, width)) = boxed.filter(|_| {
            T::KEY_BITS == 8 && stacked && (PERREAULT_MIN + 1..=PERREAULT_MAX).contains(&n)
        }) {
            Order::Perreault { offset, width }
        } else if n <= network_max::<T>(boxed.is_some()) {
            let (a, b) = wanted(pos);
            let rows = chords.len();
            match networks(n, a, b, boxed.map(|(_, width)| (rows, width))) {
                Networks::Plain(net) => Order::Network(net),
                Networks::Columns { sort, merge } => {
                    let (offset, width) = boxed.expect("sorted columns are built for boxes only");
                    Order::Columns {
                        sort,
                        merge,
                        rows,
                        offset,
                        width,
                    }
                }
            }
        } else if T::KEY_BITS == 8 {
            Order::Histogram
        } else {
            Order::Ranked
        }
    }
}

/// A selection network: on the values as they are, or on a box's sorted columns.
#[derive(Clone)]
enum Networks {
    Plain(Merge),
    Columns { sort: Vec<(u32, u32)>, merge: Merge },
}

/// The network for `n` values and the sorted positions `a <= b`; for a box of `rows` slots of
/// `width` columns, sorted columns and their merge where that needs fewer comparators.
/// Remembered: building them (up to 180 merge orders for 5 columns) costs more than filtering
/// a small image.
fn networks(n: usize, a: usize, b: usize, shape: Option<(usize, usize)>) -> Networks {
    type Built = Mutex<Lru<(usize, usize, usize, Option<(usize, usize)>), Networks>>;
    static CACHE: OnceLock<Built> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(Lru::new(32)));
    let key = (n, a, b, shape);
    if let Some(found) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return found;
    }
    let plain = Merge {
        pairs: pruned(n, &[a, b]),
        out: (a, b),
    };
    let built = match shape {
        Some((rows, width)) => {
            let sort: Vec<(u32, u32)> = network::batcher_pairs(rows)
                .into_iter()
                .map(|(i, j)| (i as u32, j as u32))
                .collect();
            let merge = columns::merge(width, rows, a, b);
            match sort.len() + merge.pairs.len() < plain.pairs.len() {
                true => Networks::Columns { sort, merge },
                false => Networks::Plain(plain),
            }
        }
        None => Networks::Plain(plain),
    };
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, built.clone());
    built
}

/// Batcher's comparators that the values at `keep` depend on, in order.
pub(crate) fn pruned(n: usize, keep: &[usize]) -> Vec<(u32, u32)> {
    network::pruned(&network::batcher_pairs(n), keep)
        .iter()
        .map(|c| (c.i as u32, c.j as u32))
        .collect()
}

/// Pixels per network block: each of the `n` rows of the block stays in L1 together.
const BLOCK_BYTES: usize = 512;

/// The network over `m` pixels: `taps[t][j]` is tap `t` of pixel `j` (wire `t`); the results
/// are read from wires `net.out`.
pub(crate) fn network<T: Elem>(
    net: &Merge,
    taps: &[&[T]],
    m: usize,
    pos: &Positions,
    out: &mut Results<T>,
    wires: &mut Vec<T>,
) {
    let n = taps.len();
    let block = (BLOCK_BYTES / std::mem::size_of::<T>()).max(8);
    wires.resize(n * block, T::default());
    let (wa, wb) = net.out;
    let mut j0 = 0;
    while j0 < m {
        let len = block.min(m - j0);
        for (t, tap) in taps.iter().enumerate() {
            wires[t * block..t * block + len].copy_from_slice(&tap[j0..j0 + len]);
        }
        compare_rows(&net.pairs, wires, block, len);
        simd::fast(|| {
            let (a, b) = (&wires[wa * block..wa * block + len], &wires[wb * block..]);
            out.put_rows(j0, pos, a, b)
        });
        j0 += len;
    }
}

/// Runs the comparators `(i, j)` on rows of `len` values, row `i` starting at `i * stride`:
/// afterwards `rows[i][x] <= rows[j][x]` at each `x`, one vector loop a comparator. (`i > j`
/// happens: a merged network's wires are relabelled as it is built.)
pub(crate) fn compare_rows<T: Elem>(
    pairs: &[(u32, u32)],
    rows: &mut [T],
    stride: usize,
    len: usize,
) {
    T::compare_rows(pairs, rows, stride, len)
}

/// [`compare_rows`] in portable code that LLVM vectorises: `min` and `max` are the type's own
/// (IEEE for floats, three instructions each: a select written back in place would become a
/// masked store).
#[inline(always)]
pub(crate) fn compare_rows_portable<T: Elem>(
    pairs: &[(u32, u32)],
    rows: &mut [T],
    stride: usize,
    len: usize,
) {
    simd::fast(|| {
        for &(i, j) in pairs {
            let (a, b) = two_rows(rows, i as usize * stride, j as usize * stride, len);
            for (x, y) in a.iter_mut().zip(b.iter_mut()) {
                let (u, v) = (*x, *y);
                *x = T::min(u, v);
                *y = T::max(u, v);
            }
        }
    });
}

/// The rows of `len` values at `i` and `j` (distinct, not overlapping), in that order.
#[inline(always)]
pub(crate) fn two_rows<T>(rows: &mut [T], i: usize, j: usize, len: usize) -> (&mut [T], &mut [T]) {
    let (lo, hi) = rows.split_at_mut(i.max(j));
    let (first, second) = (&mut lo[i.min(j)..i.min(j) + len], &mut hi[..len]);
    match i < j {
        true => (first, second),
        false => (second, first),
    }
}

/// The median of each pixel's 3×3 box, from its three rows `rows[r][j..j + 3]`: with each
/// column sorted into `lo <= mid <= hi`, the median of the nine is the median of
/// `max(lo)`, `median(mid)` and `min(hi)` over the three columns (Paeth's identity, exact on
/// any totally ordered values). Each column is sorted once and read by three pixels, and every
/// step is a `min`/`max` of rows of pixels, which LLVM vectorises (as selects, written out of
/// place: one instruction each on floats. A select may return the same zero twice for a `-0.0`
/// and a `0.0`, which is why only the median, which adds `0.0` to its value, takes this path
/// with both zeros present).
pub(crate) fn median3x3<T: Elem>(
    rows: [&[T]; 3],
    m: usize,
    plus_zero: bool,
    out: &mut [T],
    cols: &mut Vec<T>,
) {
    let w = m + 2;
    let [lo, mid, hi] = aligned::rows(cols, 3, w, 0).split();
    simd::run_wide(Median3x3 {
        rows: rows.map(|r| &r[..w]),
        ends: None,
        sorted: [lo, mid, hi],
        plus_zero,
        out: &mut out[..m],
    });
}

/// The medians of one line from its three rows, as one kernel: the rows' columns sorted into
/// `sorted` (where `ends` places the line in the extended rows, whose columns past the line's
/// ends it fills; else from column 0), then the medians of those columns into `out`.
struct Median3x3<'a, T> {
    rows: [&'a [T]; 3],
    ends: Option<&'a BoxEnds<T>>,
    sorted: [&'a mut [T]; 3],
    plus_zero: bool,
    out: &'a mut [T],
}

impl<T: Elem> simd::Kernel for Median3x3<'_, T> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Median3x3 {
            rows,
            ends,
            sorted: [lo, mid, hi],
            plus_zero,
            out,
        } = self;
        let n = out.len();
        // Where the rows' columns lie among the sorted ones.
        let inside = match ends {
            Some(ends) => ends.inside(n),
            None => 0..rows[0].len(),
        };
        // The first output that reads no column past the line's start: `inside.start` (at most
        // 2), or none of a shorter line.
        let (f, len) = (inside.start.min(n), inside.len());
        // Outputs `f..f + len - 2` read the rows' own columns only: all in one pass where the
        // CPU has it (`median3`; `done` is then all of them).
        let own = len.saturating_sub(2);
        let done = T::medians3x3_wide(rows, plus_zero, &mut out[f..f + own]);
        // The others from sorted columns: those from `done` on (the last two, or all), and the
        // three at each end, which the modes copy past the ends (`mirror` with the box reaching
        // two columns past an end copies the third), then the columns past the ends.
        let tail = done.min(len);
        let (first, last) = (tail.min(3), tail.min(len.saturating_sub(3)));
        for cols in [0..first, last.max(first)..len] {
            let at = cols.start + inside.start..cols.end + inside.start;
            let sorted = [&mut lo[at.clone()], &mut mid[at.clone()], &mut hi[at]];
            sort_columns(rows.map(|r| &r[cols.clone()]), sorted);
        }
        if let Some(ends) = ends {
            for sorted in [&mut *lo, &mut *mid, &mut *hi] {
                ends.fill(sorted);
            }
        }
        // The outputs the one pass left: all (in one loop, whose stores then stay as aligned
        // as the output: from its second value, every 64-byte store of `u8` split two cache
        // lines: 0.20–0.21 → 0.24 ms at 1024²), or those reading past the line's ends.
        if done == 0 {
            medians_of_columns([&*lo, &*mid, &*hi], plus_zero, out);
            return;
        }
        let (head, rest) = out.split_at_mut(f);
        medians_of_columns([&*lo, &*mid, &*hi], plus_zero, head);
        let from = f + done;
        let cols = [&lo[from..], &mid[from..], &hi[from..]];
        medians_of_columns(cols, plus_zero, &mut rest[done..]);
    }
}

/// Each column `(a, b, c)` of the three rows sorted into `lo <= mid <= hi`. Zipped slices of
/// exact lengths: no bounds checks, so the loop vectorises.
#[inline(always)]
fn sort_columns<T: Elem>(rows: [&[T]; 3], [lo, mid, hi]: [&mut [T]; 3]) {
    let cols = lo.iter_mut().zip(mid.iter_mut()).zip(hi.iter_mut());
    let rows = rows[0].iter().zip(rows[1]).zip(rows[2]);
    for (((l, md), h), ((&a, &b), &c)) in cols.zip(rows) {
        let (x, y) = (T::select_min(a, b), T::select_max(a, b));
        let z = T::select_max(x, c);
        *l = T::select_min(x, c);
        *md = T::select_min(y, z);
        *h = T::select_max(y, z);
    }
}

/// [`median3x3`] for each line of a [`Block`] of a 3×3 box (slot `j` of the block's line `l`
/// is the input line `l + j` steps after `rows`), written in place into the output lines, which
/// must be contiguous and aligned for `T`. Each line's columns are sorted where its three rows
/// lie; a column past either end is the same three rows' column the mode maps it to, so its
/// sorted values are that column's, copied (or `cval` three times), from a map made once for
/// the block. Every output column then takes the one vector loop: before, the few columns at
/// the ends took two more passes over extended rows, a sixth of a `u8` 1024² run. `before(l)`
/// runs before line `l`.
///
/// # Safety
/// `b` must describe valid, disjoint input and output lines of `plan.len` elements for every
/// line of the block, the input lines for all three slots.
pub(crate) unsafe fn median3x3_block<T: Elem>(
    b: &Block<T>,
    plan: &Plan,
    (cval, plus_zero): (T, bool),
    cols: &mut Vec<T>,
    mut before: impl FnMut(usize),
) {
    debug_assert_eq!(plan.cmax - plan.cmin, 2);
    let n = plan.len;
    let ends = BoxEnds::of(plan, 3, cval);
    let [lo, mid, hi] = aligned::rows(cols, 3, ends.len, ends.first).split();
    for l in 0..b.lines {
        before(l);
        // SAFETY: the caller's promise: the three slots' input lines, and the output line.
        let rows = unsafe {
            [
                b.input_line(l, n),
                b.input_line(l + 1, n),
                b.input_line(l + 2, n),
            ]
        };
        let out = unsafe { b.output_line(l, n) };
        simd::run_wide(Median3x3 {
            rows,
            ends: Some(&ends),
            sorted: [&mut *lo, &mut *mid, &mut *hi],
            plus_zero,
            out,
        });
    }
}

/// A `width`-wide box's extended rows in a block of medians: a line's own columns start at
/// `first`, and the mode's columns past its ends are all copies of them or `cval` (the extent
/// covers the whole line, so no `End::Column`), worked out once for the block.
struct BoxEnds<T> {
    first: usize,
    len: usize,
    ends: Vec<(usize, End)>,
    cval: T,
}

impl<T: Elem> BoxEnds<T> {
    fn of(plan: &Plan, width: usize, cval: T) -> BoxEnds<T> {
        let extent = Extent::of(plan, (0, width));
        let (first, _, _) = extent.cols();
        let ends = ends_of(plan, extent.col0, extent.len, (extent.lo, extent.hi)).collect();
        BoxEnds {
            first,
            len: extent.len,
            ends,
            cval,
        }
    }

    /// Where a line of `n` columns lies in the extended rows.
    fn inside(&self, n: usize) -> std::ops::Range<usize> {
        self.first..self.first + n
    }

    /// The columns past the ends of an extended row whose line is in place.
    #[inline(always)]
    fn fill(&self, row: &mut [T]) {
        let whole_line = |i: usize| unreachable!("input column {i} outside a box's extent");
        fill_ends(row, &self.ends, self.cval, whole_line);
    }
}

/// The medians of a [`Block`] of a 5×5 box, two lines at a time (slot `j` of the block's line
/// `l` is the input line `l + j` steps after `rows`), written in place into the output lines,
/// which must be contiguous and aligned for `T`. Two neighbouring lines' boxes share four rows:
/// their columns are sorted once and merged once for both, down to the six values that can be
/// either median ([`registers::Job::Pair`]), so a pixel costs 2.5 + 30 + 19 comparators where
/// one line at a time costs 9 + 74. The ends are [`median3x3_block`]'s: a column past either end
/// is the one the mode maps it to, copied (or `cval`), in the sorted rows and the two rows of
/// one line each alike. `before(l)` runs before line `l`.
///
/// # Safety
/// As [`median3x3_block`], for the five slots of a 5×5 box.
pub(crate) unsafe fn median5x5_block<T: Elem>(
    b: &Block<T>,
    plan: &Plan,
    (cval, plus_zero): (T, bool),
    cols: &mut Vec<T>,
    mut before: impl FnMut(usize),
) {
    debug_assert_eq!(plan.cmax - plan.cmin, 4);
    let n = plan.len;
    let ends = BoxEnds::of(plan, 5, cval);
    let [s0, s1, s2, s3, top, bottom] = aligned::rows(cols, 6, ends.len, ends.first).split();
    // SAFETY (both): the caller's promise: the input lines of the block's slots, and its
    // output lines (each taken once).
    let row = |i: usize| unsafe { b.input_line(i, n) };
    let out = |l: usize| unsafe { b.output_line(l, n) };
    for l in (0..b.lines).step_by(2) {
        let two = l + 1 < b.lines;
        before(l);
        if two {
            before(l + 1);
        }
        let inside = ends.inside(n);
        simd::fast(|| {
            let shared = [row(l + 1), row(l + 2), row(l + 3), row(l + 4)];
            let [a, b, c, d] = [&mut *s0, &mut *s1, &mut *s2, &mut *s3];
            sort_columns4(shared, [a, b, c, d].map(|s| &mut s[inside.clone()]));
            top[inside.clone()].copy_from_slice(row(l));
            if two {
                bottom[inside].copy_from_slice(row(l + 5));
            }
            for line in [&mut *s0, s1, s2, s3, top, bottom] {
                ends.fill(line);
            }
        });
        registers::Job::Pair {
            shared: [&*s0, &*s1, &*s2, &*s3],
            top,
            bottom,
            first: out(l),
            second: two.then(|| out(l + 1)),
        }
        .run(plus_zero);
    }
}

/// Each column `(a, b, c, d)` of the four rows sorted, by the five comparators of a 4-sorter,
/// as [`sort_columns`] (out of place, so that the loop vectorises).
#[inline(always)]
fn sort_columns4<T: Elem>(rows: [&[T]; 4], [r0, r1, r2, r3]: [&mut [T]; 4]) {
    let sorted = r0
        .iter_mut()
        .zip(r1.iter_mut())
        .zip(r2.iter_mut())
        .zip(r3.iter_mut());
    let rows = rows[0].iter().zip(rows[1]).zip(rows[2]).zip(rows[3]);
    for ((((s0, s1), s2), s3), (((&a, &b), &c), &d)) in sorted.zip(rows) {
        let (a, b) = (T::select_min(a, b), T::select_max(a, b));
        let (c, d) = (T::select_min(c, d), T::select_max(c, d));
        let (a, c) = (T::select_min(a, c), T::select_max(a, c));
        let (b, d) = (T::select_min(b, d), T::select_max(b, d));
        *s0 = a;
        *s1 = T::select_min(b, c);
        *s2 = T::select_max(b, c);
        *s3 = d;
    }
}

/// `out[j]` = the median of the 3×3 box whose sorted columns are `j..j + 3` of `lo`, `mid`
/// and `hi`, plus `0.0` where `plus_zero` (NumPy's median adds it: `-0.0` becomes `0.0`). The
/// choice is made once, outside the loop (LLVM kept it inside, as a blend a value).
#[inline(always)]
fn medians_of_columns<T: Elem>(cols: [&[T]; 3], plus_zero: bool, out: &mut [T]) {
    match plus_zero {
        true => medians_finished(cols, out, T::plus_zero),
        false => medians_finished(cols, out, |v| v),
    }
}

#[inline(always)]
fn medians_finished<T: Elem>([lo, mid, hi]: [&[T]; 3], out: &mut [T], finish: impl Fn(T) -> T) {
    let m = out.len();
    let los = lo[..m].iter().zip(&lo[1..m + 1]).zip(&lo[2..m + 2]);
    let mids = mid[..m].iter().zip(&mid[1..m + 1]).zip(&mid[2..m + 2]);
    let his = hi[..m].iter().zip(&hi[1..m + 1]).zip(&hi[2..m + 2]);
    for (o, ((l, md), h)) in out.iter_mut().zip(los.zip(mids).zip(his)) {
        let a = T::select_max(T::select_max(*l.0 .0, *l.0 .1), *l.1);
        let b = med3(*md.0 .0, *md.0 .1, *md.1);
        let c = T::select_min(T::select_min(*h.0 .0, *h.0 .1), *h.1);
        *o = finish(med3(a, b, c));
    }
}

#[inline(always)]
fn med3<T: Elem>(a: T, b: T, c: T) -> T {
    T::select_max(T::select_min(a, b), T::select_min(T::select_max(a, b), c))
}

/// A two-level histogram of keys ([`Elem::key`]): fine bins and their sums over blocks of
/// `1 << shift` bins.
pub(crate) struct Histogram {
    fine: Vec<u32>,
    coarse: Vec<u32>,
    shift: u32,
}

impl Histogram {
    pub fn new(bits: u32) -> Histogram {
        let shift = bits / 2;
        Histogram {
            fine: vec![0; 1 << bits],
            coarse: vec![0; 1 << (bits - shift)],
            shift,
        }
    }

    #[inline(always)]
    fn add(&mut self, k: usize) {
        self.fine[k] += 1;
        self.coarse[k >> self.shift] += 1;
    }

    #[inline(always)]
    fn remove(&mut self, k: usize) {
        self.fine[k] -= 1;
        self.coarse[k >> self.shift] -= 1;
    }

    /// The key at sorted position `r` (0-based) of the values counted.
    #[inline]
    fn at(&self, r: usize) -> usize {
        let r = r as u32;
        let (mut c, mut below) = (0, 0);
        while below + self.coarse[c] <= r {
            below += self.coarse[c];
            c += 1;
        }
        let mut k = c << self.shift;
        while below + self.fine[k] <= r {
            below += self.fine[k];
            k += 1;
        }
        k
    }
}

/// Huang's sliding histogram along `m` pixels. `ext[s]` is slot `s`'s line from the segment's
/// first pixel's leftmost tap; `chords[s]` its runs of taps `(offset, width)`: pixel `j` reads
/// `ext[s][j + offset..j + offset + width]`.
pub(crate) fn histogram<T: Elem>(
    ext: &[&[T]],
    chords: &[Vec<(usize, usize)>],
    m: usize,
    pos: &Positions,
    out: &mut Results<T>,
    hist: &mut Histogram,
) {
    let (pa, pb) = wanted(pos);
    // The histogram is empty between calls: the last window is taken out at the end.
    let window = |hist: &mut Histogram, j: usize, add: bool| {
        for (line, chords) in ext.iter().zip(chords) {
            for &(o, w) in chords {
                for v in &line[j + o..j + o + w] {
                    match add {
                        true => hist.add(v.key()),
                        false => hist.remove(v.key()),
                    }
                }
            }
        }
    };
    window(hist, 0, true);
    for j in 0..m {
        let a = T::from_key(hist.at(pa));
        let b = match pb > pa {
            true => T::from_key(hist.at(pb)),
            false => a,
        };
        out.put(j, pos, a, b);
        if j + 1 == m {
            window(hist, j, false);
        } else {
            for (line, chords) in ext.iter().zip(chords) {
                for &(o, w) in chords {
                    hist.remove(line[j + o].key());
                    hist.add(line[j + o + w].key());
                }
            }
        }
    }
}

/// The values at positions `pa <= pb` of `v`, for the tests.
#[cfg(test)]
fn sorted_at<T: Elem>(v: &[T], pa: usize, pb: usize) -> (T, T) {
    let mut s = v.to_vec();
    s.sort_by(|x, y| x.partial_cmp(y).unwrap());
    (s[pa], s[pb])
}

#[cfg(test)]
mod tests {
    use super::super::stat::Mix;
    use super::*;

    /// Every algorithm against a full sort, on one row of 1×n windows.
    #[test]
    fn the_three_algorithms_agree_with_sorting() {
        let line: Vec<u8> = (0..300u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
            .collect();
        for n in [1, 2, 3, 8, 9, 25, 49] {
            let m = line.len() - n + 1;
            let taps: Vec<&[u8]> = (0..n).map(|t| &line[t..]).collect();
            for pos in [
                Positions::One {
                    at: n / 2,
                    plus_zero: true,
                },
                Positions::Two(n.saturating_sub(2) / 2, n / 2, Mix::Mean),
            ] {
                let (pa, pb) = wanted(&pos);
                let mut native = vec![0u8; m];
                let mut double = vec![0.0; m];
                let want: Vec<(u8, u8)> =
                    (0..m).map(|j| sorted_at(&line[j..j + n], pa, pb)).collect();
                let check = |native: &[u8], double: &[f64], how: &str| {
                    for j in 0..m {
                        let (a, b) = want[j];
                        match pos {
                            Positions::One { .. } => assert_eq!(native[j], a, "{how} n={n} j={j}"),
                            Positions::Two(..) => assert_eq!(
                                double[j],
                                (0.0 + a as f64 + b as f64) / 2.0,
                                "{how} n={n} j={j}"
                            ),
                        }
                    }
                };
                let net = Merge {
                    pairs: pruned(n, &[pa, pb]),
                    out: (pa, pb),
                };
                let mut r = Results {
                    native: &mut native,
                    double: &mut double,
                };
                network(&net, &taps, m, &pos, &mut r, &mut Vec::new());
                check(&native, &double, "network");
                let mut r = Results {
                    native: &mut native,
                    double: &mut double,
                };
                let mut bands = super::super::ranked::Bands::default();
                let fill = |_, row: &mut [u8]| row.copy_from_slice(&line);
                let (lines, cols) = ((0, 1), (0, m, line.len()));
                let sources = |_, s: &mut Vec<_>| *s = vec![None];
                let chords = [vec![(0, n)]];
                bands.positions(0, lines, cols, sources, fill, &chords, &pos, &mut r);
                check(&native, &double, "ranked");
                let mut r = Results {
                    native: &mut native,
                    double: &mut double,
                };
                let ext: [&[u8]; 1] = [&line];
                histogram(
                    &ext,
                    &[vec![(0, n)]],
                    m,
                    &pos,
                    &mut r,
                    &mut Histogram::new(8),
                );
                check(&native, &double, "histogram");
            }
        }
    }
}
