//! Min and max over a *box*: a footprint whose slots all hold the same single chord (a
//! rectangle in 2-D, any box whose last axis is one run of columns in n-d). Such a footprint is
//! separable, so each output line costs one vertical pass and one sliding pass, with nothing
//! copied or cached between lines:
//! 1. the extreme across the slots' input lines, read in place, column by column, into a line of
//!    the input's type: a vector loop over the slots' lines ([`sliding::merge_lines`]), or, for a
//!    tall box whose slots are consecutive lines of one axis and whose output lines come in
//!    order, van Herk/Gil-Werman along that axis ([`VanHerk`]): about three passes a line
//!    whatever the box's height, where the loop over the slots reads each of them;
//! 2. that line extended past its ends by the mode along the last axis;
//! 3. the sliding extreme of the chord's width along it ([`sliding::extremes`]).
//!
//! Whole output lines whose slots all read lines inside the input go in blocks
//! ([`extremes_block`]): the same three steps, with what every line shares worked out once.
//!
//! # Why it is the chord engine's result
//! The extreme of a box is the extreme over the slots of the extreme along each slot's chord,
//! and min and max are associative, commutative and idempotent, so the two may be taken in
//! either order. Extending a line by the mode commutes with the vertical extreme: every extended
//! column is one column of each slot's line (the same column for all of them, as the mode maps
//! columns independently of lines) or `cval` for all of them (the constant mode, where the
//! extreme of `cval`s is `cval`). A slot whose line lies outside under the constant mode is the
//! `cval` line, which enters the vertical extreme as `cval` at every column. On NaN-free data
//! with no `-0.0` (the facts the executor checks first) the values themselves are what the
//! chord engine computes, bit for bit.

use super::super::array::RawArray;
use super::super::plan::Plan;
use super::elem::{with_extreme, Elem, Extreme};
use super::lanes::{self, Spaced};
use super::simd;
use super::sliding::{self, Scratch};
use super::store::{fence, Store};

/// The box's chord, shared by every slot: its offset from the leftmost tap and its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BoxChord {
    pub offset: usize,
    pub width: usize,
    /// Whether the slots are consecutive lines of the second-to-last axis, in order (slot `j`
    /// one line below slot `j - 1`, the other leading offsets all equal): then consecutive
    /// output lines of that axis see the slots' lines shift by one, as van Herk needs.
    pub stacked: bool,
}

impl BoxChord {
    /// The chord of a box footprint whose input lines can be read in place as slices of `T`
    /// (contiguous along the last axis, aligned); `None` for any other footprint or layout.
    pub fn of<T: Elem>(
        plan: &Plan,
        chords: &[Vec<(usize, usize)>],
        input: &RawArray,
    ) -> Option<BoxChord> {
        let (offset, width) = box_chord(chords)?;
        in_place::<T>(input).then_some(BoxChord {
            offset,
            width,
            stacked: stacked(plan),
        })
    }
}

/// Whether the input's lines can be read in place as slices of `T`: contiguous along the last
/// axis, and every line aligned.
pub(crate) fn in_place<T: Elem>(input: &RawArray) -> bool {
    let size = std::mem::size_of::<T>() as isize;
    let align = std::mem::align_of::<T>();
    let last = input.shape.len() - 1;
    input.strides[last] == size
        && (input.ptr as usize).is_multiple_of(align)
        && input.strides[..last]
            .iter()
            .all(|s| (s.unsigned_abs()).is_multiple_of(align))
}

/// The chord `(offset, width)` every slot holds alone, if the footprint is such a box.
pub(crate) fn box_chord(chords: &[Vec<(usize, usize)>]) -> Option<(usize, usize)> {
    let first = *chords.first()?.first()?;
    chords.iter().all(|c| c[..] == [first]).then_some(first)
}

/// Whether the plan's slots are consecutive lines of the second-to-last axis, in order: slot `j`
/// one line below slot `j - 1`, the other leading offsets all equal.
pub(crate) fn stacked(plan: &Plan) -> bool {
    let last = plan.shape.len() - 1;
    last >= 1
        && plan.slots.windows(2).all(|w| {
            let (a, b) = (&w[0], &w[1]);
            a[..last - 1] == b[..last - 1] && b[last - 1] == a[last - 1] + 1
        })
}

/// Above this many slots, a stacked box's vertical extremes come from [`VanHerk`] (three passes
/// a line) rather than one pass reading every slot's line. Eight, the most [`sliding`] folds in
/// one pass: `u8` 7×7 on 1024² took 157 µs with van Herk, 123 in one pass (one thread).
pub(crate) const VAN_HERK_SLOTS: usize = 8;

/// Whether the vertical extremes of a stacked box of `k` slots over lines of `n` values come from
/// [`VanHerk`] (about six loads and three stores a column a line, whatever `k`), in the blocks
/// ([`extremes_block`]) and the segments alike (van Herk's blocks go on from one to the other).
/// Otherwise pairs of lines share their rows' fold ([`sliding::fold_pair`], `(k + 1) / 2` loads
/// a column a line) up to [`VAN_HERK_SLOTS`] rows, and beyond while the rows stay within
/// [`PAIR_ROWS_BYTES`]. Measured, minimum, one thread, 1024², against van Herk from 9 rows:
/// `u8` 9×9 0.158 → 0.132 ms and `u16` 9×9 0.266 → 0.244 with pairs, but `u16` 15×15 0.30 →
/// 0.40, `f32` 9×9 0.54 → 0.64 and `f32` 15×15 0.63 → 1.55 (rows past the L1 cache).
///
/// Lines of [`LONG_LINE_BYTES`] or more, in a type with vector folds, keep pairs up to
/// [`LONG_PAIR_ROWS`] rows whatever their bytes: there van Herk's three passes a line cost more
/// than the pairs' rows from L2. Measured on 4096², minimum, one thread, van Herk → pairs (ms,
/// the byte limit lifted for the experiment; `output=` preallocated): `f32` 9×9 25.3 → 20.4,
/// 11×11 26.1 → 21.7, 13×13 22.3 → 22.3, 15×15 22.1 → 23.4; `f64` 9×9 55.8 → 41.5, 11×11
/// 54.9 → 40.9; `i32` 9×9 23.4 → 21.6, 13×13 22.3 → 23.9; `u32` 11×11 22.9 → 22.1. Shorter
/// lines keep van Herk: `u16` 4096² 9×9 10.6 → 11.4, `f32` 1024² 11×11 0.82 → 0.96, `f64`
/// 1024² 15×15 2.15 → 2.50; and so do types without vector folds (`i64` 4096² 9×9 78 → 87).
fn van_herk_pays<T: Elem>(k: usize, n: usize) -> bool {
    let line = n.saturating_mul(std::mem::size_of::<T>());
    let long = line >= LONG_LINE_BYTES && lanes::available::<T>() && k <= LONG_PAIR_ROWS;
    let tall = k >= sliding::PAIR_ROWS_MAX || (k.saturating_mul(line) > PAIR_ROWS_BYTES && !long);
    k > VAN_HERK_SLOTS && (!sliding::pairs_pay::<T>() || tall)
}

/// See [`van_herk_pays`].
const LONG_LINE_BYTES: usize = 16 << 10;
const LONG_PAIR_ROWS: usize = 11;

/// The most bytes of rows a pair of lines folds over beyond [`VAN_HERK_SLOTS`] rows: past about
/// half of a core's 32–48 KiB L1 cache, each line's rows come from L2 and van Herk's fewer
/// loads pay.
const PAIR_ROWS_BYTES: usize = 24 << 10;

/// A slot's line for the vertical pass: in the input, or the constant mode's `cval` line.
#[derive(Clone, Copy)]
enum Row<'a, T> {
    Line(&'a [T]),
    Const(T),
}

/// `dst` = the row.
fn set<T: Elem>(dst: &mut [T], x: Row<T>) {
    match x {
        Row::Line(x) => dst.copy_from_slice(x),
        Row::Const(c) => dst.fill(c),
    }
}

/// `dst[i]` = the extreme of `x[i]` and `y[i]`.
fn combine<T: Elem>(dst: &mut [T], x: Row<T>, y: Row<T>, max: bool) {
    match (x, y) {
        (Row::Line(x), Row::Line(y)) => sliding::pair_extremes(x, y, dst, max),
        (Row::Line(x), Row::Const(c)) | (Row::Const(c), Row::Line(x)) => {
            dst.copy_from_slice(x);
            with_constant(dst, c, max);
        }
        (Row::Const(a), Row::Const(b)) => dst.fill(if max { a.max(b) } else { a.min(b) }),
    }
}

/// `dst[i]` = the extreme of `dst[i]` and `y[i]`.
fn fold<T: Elem>(dst: &mut [T], y: Row<T>, max: bool) {
    match y {
        Row::Line(y) => simd::fast(|| match max {
            true => dst.iter_mut().zip(y).for_each(|(d, &v)| *d = d.max(v)),
            false => dst.iter_mut().zip(y).for_each(|(d, &v)| *d = d.min(v)),
        }),
        Row::Const(c) => with_constant(dst, c, max),
    }
}

/// The vertical extremes of a stacked box of `k` slots for consecutive output lines, by van
/// Herk/Gil-Werman: the output lines go in blocks of `k`; at a block's first line the slots'
/// lines are exactly the block's rows, whose suffix extremes `S[j]` (rows `j..k`) are computed
/// once, from the last up. The block's line `i` sees rows `i..k` of its block, `S[i]`, and rows
/// `0..i` of the next, whose running extreme `P` grows by one row a line (the newest slot). So
/// a line costs one pass for `S` (amortised), one for `P` and one for `S[i]` with `P`.
#[derive(Default)]
pub(crate) struct VanHerk<T> {
    /// The current line's place in its block (`k`: the next line starts a block).
    i: usize,
    suffix: Vec<T>,
    prefix: Vec<T>,
}

impl<T: Elem> VanHerk<T> {
    /// `dst[..n]`, `n` the line's length: the extremes over the slots `rows` (from column 0) at
    /// every column. `continues`: this output line is the one after the previous call's, on the
    /// stacked axis (otherwise a block starts here).
    fn next<'r>(
        &mut self,
        k: usize,
        rows: impl Fn(usize) -> Row<'r, T>,
        continues: bool,
        max: bool,
        dst: &mut [T],
    ) where
        T: 'r,
    {
        let n = dst.len();
        if !continues || self.i == k {
            self.i = 0;
        }
        if self.i == 0 {
            self.suffix.resize(k * n, T::default());
            let (rest, last) = self.suffix.split_at_mut((k - 1) * n);
            set(last, rows(k - 1));
            for j in (0..k - 1).rev() {
                let (s, after) = rest.split_at_mut((j + 1) * n);
                let below = if j + 1 == k - 1 { &*last } else { &after[..n] };
                combine(&mut s[j * n..], rows(j), Row::Line(below), max);
            }
            dst.copy_from_slice(&self.suffix[..n]);
        } else {
            self.prefix.resize(n, T::default());
            match self.i {
                1 => set(&mut self.prefix, rows(k - 1)),
                _ => fold(&mut self.prefix, rows(k - 1), max),
            }
            let s = &self.suffix[self.i * n..(self.i + 1) * n];
            combine(dst, Row::Line(s), Row::Line(&self.prefix), max);
        }
        self.i += 1;
    }
}

/// Where an extended column past either end of the line comes from under the mode.
#[derive(Clone, Copy)]
pub(crate) enum End {
    /// The line's own value at this index of the extended line.
    Line(usize),
    /// Input column `i`, outside the columns the vertical pass computed (a partial segment).
    Column(usize),
    Cval,
}

/// The extended columns of segments starting at column `col0` with `len` columns, each with its
/// source: the same for every line of a run (the mode maps columns alike on all lines), so
/// worked out once, not per line.
#[derive(Default)]
struct Ends {
    key: Option<(i64, usize)>,
    ends: Vec<(usize, End)>,
}

impl Ends {
    fn of(&mut self, plan: &Plan, col0: i64, len: usize, (lo, hi): (i64, i64)) -> &[(usize, End)] {
        if self.key != Some((col0, len)) {
            self.ends.clear();
            self.ends.extend(ends_of(plan, col0, len, (lo, hi)));
            self.key = Some((col0, len));
        }
        &self.ends
    }
}

/// The extended columns past either end of a line extended from column `col0` over `len`
/// columns, whose vertical pass covers input columns `lo..hi`, each with its source.
pub(crate) fn ends_of(
    plan: &Plan,
    col0: i64,
    len: usize,
    (lo, hi): (i64, i64),
) -> impl Iterator<Item = (usize, End)> + '_ {
    let (n, end) = (plan.len as i64, col0 + len as i64);
    (col0..Ord::min(end, 0))
        .chain(Ord::max(col0, n)..end)
        .map(move |c| {
            let from = match plan.mode.map(c, n) {
                Some(i) if (lo..hi).contains(&i) => End::Line((i - col0) as usize),
                Some(i) => End::Column(i as usize),
                None => End::Cval,
            };
            ((c - col0) as usize, from)
        })
}

/// `line[e]` for each extended column past the ends: a column of the line itself, the extreme
/// down input column `i` (`column(i)`: a column the vertical pass did not cover), or `cval`.
#[inline(always)]
pub(crate) fn fill_ends<T: Elem>(
    line: &mut [T],
    ends: &[(usize, End)],
    cval: T,
    column: impl Fn(usize) -> T,
) {
    for &(e, src) in ends {
        line[e] = match src {
            End::Line(j) => line[j],
            End::Column(i) => column(i),
            End::Cval => cval,
        };
    }
}

/// Reusable buffers of a worker.
#[derive(Default)]
pub(crate) struct BoxScratch<T> {
    /// The vertical extremes of the current line, extended by the mode.
    line: Vec<T>,
    /// Per slot, its input line from column 0 (`None`: the `cval` line); the input lines from
    /// the first column inside.
    slots: Vec<Option<*const T>>,
    from: Vec<*const T>,
    /// The running vertical extremes of stacked boxes, for the minimum and the maximum.
    van_herk: [VanHerk<T>; 2],
    sliding: Scratch<T>,
    ends: Ends,
}

/// What one output segment reads.
pub(crate) struct Segment<'a, T> {
    pub plan: &'a Plan,
    pub input: &'a RawArray,
    /// Per slot, the byte offset of its input line, or `None` for the `cval` line.
    pub srcs: &'a [Option<isize>],
    pub cval: T,
    /// The first output column, and the number of columns.
    pub a: usize,
    pub m: usize,
    /// Whether this segment is the whole output line after the previous segment's (also whole),
    /// on the second-to-last axis: van Herk's blocks then go on.
    pub continues: bool,
}

/// `out[..m]` = the minimum (or maximum) over the box of each pixel of the segment.
///
/// # Safety
/// `seg.input` must describe valid memory, and `seg.srcs` come from [`Plan::sources`] for it.
pub(crate) unsafe fn extremes<T: Elem>(
    seg: &Segment<T>,
    chord: BoxChord,
    max: bool,
    out: &mut [T],
    s: &mut BoxScratch<T>,
) {
    let op = |x: T, y: T| if max { x.max(y) } else { x.min(y) };
    let n = seg.plan.len as i64;
    let col0 = seg.a as i64 + seg.plan.cmin + chord.offset as i64;
    let len = seg.m + chord.width - 1;
    let end = col0 + len as i64;
    s.line.resize(len, T::default());
    s.slots.clear();
    // SAFETY: an offset from `Plan::sources` is the start of an input line.
    s.slots.extend(
        seg.srcs
            .iter()
            .map(|src| src.map(|off| seg.input.ptr.wrapping_offset(off) as *const T)),
    );
    let cval_line = s.slots.iter().any(Option::is_none);
    // The columns inside the line, in vector passes over whole lines.
    let (lo, hi) = (Ord::max(col0, 0), Ord::min(end, n));
    let k = s.slots.len();
    // The same choice as [`extremes_block`]'s, whose lines van Herk's blocks may go on from.
    if lo == 0 && hi == n && chord.stacked && van_herk_pays::<T>(k, n as usize) {
        let at = (-col0) as usize;
        let slots = &s.slots;
        let row = |j: usize| match slots[j] {
            // SAFETY: an input line holds `n` elements.
            Some(p) => Row::Line(unsafe { std::slice::from_raw_parts(p, n as usize) }),
            None => Row::Const(seg.cval),
        };
        let dst = &mut s.line[at..at + n as usize];
        s.van_herk[max as usize].next(k, row, seg.continues, max, dst);
    } else if lo < hi {
        let dst = &mut s.line[(lo - col0) as usize..(hi - col0) as usize];
        s.from.clear();
        s.from.extend(
            s.slots
                .iter()
                .flatten()
                .map(|r| r.wrapping_add(lo as usize)),
        );
        match s.from.is_empty() {
            true => dst.fill(seg.cval),
            // SAFETY: each line holds `n` elements and `lo..hi` lies inside it; `dst` is ours.
            false => unsafe { sliding::merge_lines(dst, &s.from, max) },
        }
        if cval_line {
            with_constant(dst, seg.cval, max);
        }
    }
    // The columns past either end, each a column of the line (or `cval`) under the mode: one
    // computed above, or the extreme down that column.
    for &(at, from) in s.ends.of(seg.plan, col0, len, (lo, hi)) {
        s.line[at] = match from {
            End::Line(j) => s.line[j],
            End::Column(i) => s
                .slots
                .iter()
                // SAFETY: `i` is a column of the line.
                .map(|r| r.map_or(seg.cval, |r| unsafe { r.add(i).read() }))
                .reduce(op)
                .unwrap_or(seg.cval),
            End::Cval => seg.cval,
        };
    }
    sliding::extremes(&s.line, chord.width, max, out, &mut s.sliding);
}

/// `line[i]` = its extreme with `c`.
fn with_constant<T: Elem>(line: &mut [T], c: T, max: bool) {
    simd::fast(|| match max {
        true => line.iter_mut().for_each(|v| *v = v.max(c)),
        false => line.iter_mut().for_each(|v| *v = v.min(c)),
    })
}

/// The extended line of a chord over a whole line of a block: it starts at column `col0` (of
/// the input line) and holds `len` columns, of which the vertical pass covers the input's
/// columns `lo..hi`; the rest are the mode's ([`ends_of`]).
#[derive(Clone, Copy)]
pub(crate) struct Extent {
    pub col0: i64,
    pub len: usize,
    pub lo: i64,
    pub hi: i64,
}

impl Extent {
    /// The extent of the chord `(offset from the leftmost tap, width)`.
    pub fn of(plan: &Plan, (offset, width): (usize, usize)) -> Extent {
        let (n, col0) = (plan.len as i64, plan.cmin + offset as i64);
        let len = plan.len + width - 1;
        let (lo, hi) = (Ord::max(col0, 0), Ord::min(col0 + len as i64, n));
        Extent { col0, len, lo, hi }
    }

    /// Where the vertical pass goes in the extended line, its first input column and its
    /// length.
    pub fn cols(&self) -> (usize, usize, usize) {
        let m = Ord::max(self.hi - self.lo, 0) as usize;
        ((self.lo - self.col0) as usize, self.lo as usize, m)
    }
}

/// Consecutive whole output lines of a stacked box whose slots all read lines inside the input
/// (the mode never applies along the stacked axis): slot `j` of output line `l` reads the input
/// line `l + j` steps after `rows`.
pub(crate) struct Block<T> {
    /// Slot 0's input line (column 0) for the first output line.
    pub rows: *const T,
    /// Bytes from one input line of the stacked axis to the next.
    pub step: isize,
    /// The first output line (column 0), and the bytes from one output line to the next.
    pub out: *mut T,
    pub out_step: isize,
    pub lines: usize,
    /// Whether the first line follows the line computed last on the stacked axis (van Herk's
    /// blocks then go on, as [`Segment::continues`]).
    pub continues: bool,
}

impl<T> Block<T> {
    /// The input line `i` steps along the stacked axis from the block's first slot-0 line (slot
    /// `j` of the block's line `l` is line `l + j`), `n` elements.
    ///
    /// # Safety
    /// The block's promise ([`extremes_block`]): `i` must be a line of its slots.
    pub(crate) unsafe fn input_line<'a>(&self, i: usize, n: usize) -> &'a [T] {
        // SAFETY: the caller's promise.
        unsafe {
            std::slice::from_raw_parts(self.rows.wrapping_byte_offset(i as isize * self.step), n)
        }
    }

    /// The block's output line `l`, `n` elements.
    ///
    /// # Safety
    /// The block's promise: `l < lines`, and no other reference to that line alive.
    pub(crate) unsafe fn output_line<'a>(&self, l: usize, n: usize) -> &'a mut [T] {
        let p = self.out.wrapping_byte_offset(l as isize * self.out_step);
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(p, n) }
    }
}

/// [`extremes`] for each line of a [`Block`], written in place into the output lines, which must
/// be contiguous and aligned for `T`. What is the same for every line (the columns past the ends,
/// the slots' distances) is worked out once, and the vector code is entered once for the block:
/// per line, [`extremes`] spends about as long on its bookkeeping as a 3×3 box of bytes does
/// computing a line of 1024 (measured, `u8` 3×3 on 1024²). `before(l)` runs before line `l`.
/// The output lines' whole vectors are stored as `store` says, fenced before this returns.
///
/// # Safety
/// `rows`, `step`, `out` and `out_step` must describe valid, disjoint input and output lines of
/// `plan.len` elements for every line of the block, the input lines for all `k` slots.
pub(crate) unsafe fn extremes_block<T: Elem>(
    b: &Block<T>,
    plan: &Plan,
    (chord, k): (BoxChord, usize),
    (cval, max): (T, bool),
    store: Store,
    s: &mut BoxScratch<T>,
    before: impl FnMut(usize),
) {
    debug_assert!(chord.stacked && k >= 1);
    let n = plan.len;
    let extent = Extent::of(plan, (chord.offset, chord.width));
    let Extent { col0, len, lo, hi } = extent;
    let BoxScratch {
        line,
        ends,
        sliding,
        from,
        van_herk,
        ..
    } = s;
    // Two extended lines, for the pairs of `Lines::run`.
    line.resize(2 * len, T::default());
    from.resize(k, std::ptr::null());
    let ends = ends.of(plan, col0, len, (lo, hi));
    // As in `extremes`: van Herk for tall boxes whose vertical pass covers the whole line.
    let van_herk = (lo == 0 && hi == n as i64 && van_herk_pays::<T>(k, n))
        .then_some(&mut van_herk[max as usize]);
    let lines = Lines {
        b,
        k,
        n,
        width: chord.width,
        cols: extent.cols(),
        ends,
        cval,
        store,
    };
    simd::run(BlockJob {
        lines,
        scratch: (line, sliding, from, van_herk),
        before,
        max,
    });
    if store == Store::Streamed {
        fence();
    }
}

/// [`Lines::run`]'s buffers: two extended lines (one after the other), the sliding pass's
/// levels, the slots' lines and, where it runs, van Herk's state.
type LinesScratch<'a, T> = (
    &'a mut [T],
    &'a mut Scratch<T>,
    &'a mut [*const T],
    Option<&'a mut VanHerk<T>>,
);

/// [`Lines::run`] for the minimum or the maximum, as one AVX2 kernel.
struct BlockJob<'a, T, B> {
    lines: Lines<'a, T>,
    scratch: LinesScratch<'a, T>,
    before: B,
    max: bool,
}

impl<T: Elem, B: FnMut(usize)> simd::Kernel for BlockJob<'_, T, B> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let BlockJob {
            lines,
            scratch,
            before,
            max,
        } = self;
        // SAFETY: `extremes_block`'s caller's promise.
        with_extreme!(max, E => unsafe { lines.run::<E>(scratch, before) })
    }
}

/// What [`extremes_block`] worked out once for its lines.
struct Lines<'a, T> {
    b: &'a Block<T>,
    k: usize,
    n: usize,
    width: usize,
    /// Where the vertical pass goes in the extended line, its first column and its length.
    cols: (usize, usize, usize),
    ends: &'a [(usize, End)],
    cval: T,
    /// How the output lines are stored.
    store: Store,
}

impl<T: Elem> Lines<'_, T> {
    /// # Safety
    /// As [`extremes_block`].
    #[inline(always)]
    unsafe fn run<E: Extreme>(
        &self,
        (line, sliding, from, van_herk): LinesScratch<'_, T>,
        mut before: impl FnMut(usize),
    ) {
        let (b, (at, c0, m)) = (self.b, self.cols);
        // The vertical pass is chosen once for the block, a loop for each (one loop testing
        // the choice per line was slower: `u8` 3×3 on 1024², 50-59 µs against 48).
        if let Some(vh) = van_herk {
            for l in 0..b.lines {
                before(l);
                let first = b.rows.wrapping_byte_offset(l as isize * b.step);
                // SAFETY: each slot's line holds `n` elements.
                let row = |j: usize| {
                    Row::Line(unsafe { std::slice::from_raw_parts(self.slot(first, j), self.n) })
                };
                vh.next(
                    self.k,
                    row,
                    b.continues || l > 0,
                    E::MAX,
                    &mut line[at..at + m],
                );
                // SAFETY: as `extremes_block`.
                unsafe { self.finish::<E>(l, first, line, sliding) };
            }
            return;
        }
        let from = match self.k <= VAN_HERK_SLOTS {
            true => &mut [std::ptr::null(); VAN_HERK_SLOTS][..self.k],
            false => from,
        };
        let (line, second) = line.split_at_mut(line.len() / 2);
        let mut l = 0;
        // Lines in pairs, which share all their rows but one each (`sliding::fold_pair`).
        if sliding::pairs_pay::<T>() && (2..sliding::PAIR_ROWS_MAX).contains(&self.k) && m > 0 {
            while l + 1 < b.lines {
                before(l);
                before(l + 1);
                let first = b.rows.wrapping_byte_offset(l as isize * b.step);
                let rows = Spaced::of(first.wrapping_add(c0), b.step);
                let pair = [&mut line[at..at + m], &mut second[at..at + m]];
                // SAFETY: rows `0..=k` are the slots of lines `l` and `l + 1`, inside the
                // input, each holding columns `c0..c0 + m`; the lines are scratch.
                unsafe { sliding::fold_pair::<T, E>(rows, self.k + 1, pair) };
                // SAFETY: as `extremes_block`.
                unsafe {
                    self.finish::<E>(l, first, line, sliding);
                    self.finish::<E>(l + 1, self.slot(first, 1), second, sliding);
                }
                l += 2;
            }
        }
        for l in l..b.lines {
            before(l);
            let first = b.rows.wrapping_byte_offset(l as isize * b.step);
            for (j, f) in from.iter_mut().enumerate() {
                *f = self.slot(first, j).wrapping_add(c0);
            }
            if m > 0 {
                // SAFETY: the slots' lines hold `n` elements, `c0..c0 + m` inside them.
                unsafe {
                    sliding::merge_lines_by::<T, E>(&mut line[at..at + m], from, Store::Cached)
                };
            }
            // SAFETY: as `extremes_block`.
            unsafe { self.finish::<E>(l, first, line, sliding) };
        }
    }

    /// Slot `j`'s input line, for the line whose slot 0 reads `first`.
    #[inline(always)]
    fn slot(&self, first: *const T, j: usize) -> *const T {
        first.wrapping_byte_offset(j as isize * self.b.step)
    }

    /// Line `l` after its vertical pass: the columns past the ends, then the sliding pass into
    /// the output line.
    ///
    /// # Safety
    /// As [`extremes_block`].
    #[inline(always)]
    unsafe fn finish<E: Extreme>(
        &self,
        l: usize,
        first: *const T,
        line: &mut [T],
        sliding: &mut Scratch<T>,
    ) {
        let b = self.b;
        // SAFETY: `i` is a column of the slots' lines.
        let column = |i: usize| unsafe {
            (1..self.k).fold(self.slot(first, 0).add(i).read(), |v, j| {
                E::in_place(v, self.slot(first, j).add(i).read())
            })
        };
        fill_ends(line, self.ends, self.cval, column);
        // SAFETY: the caller's promise: an output line of `n` elements, ours alone.
        let out = unsafe {
            std::slice::from_raw_parts_mut(
                b.out.wrapping_byte_offset(l as isize * b.out_step),
                self.n,
            )
        };
        sliding::extremes_by::<T, E>(line, self.width, out, sliding, self.store);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measured choice between van Herk and pairs of lines: pairs up to 8 rows always, up
    /// to 11 on lines of 16 KiB or more in a type with vector folds, and otherwise while the
    /// rows fit [`PAIR_ROWS_BYTES`].
    #[test]
    fn long_lines_keep_pairs_up_to_eleven_rows_where_the_type_has_vector_folds() {
        let vector = lanes::available::<f32>();
        assert!(!van_herk_pays::<f32>(8, 1 << 20));
        assert_eq!(van_herk_pays::<f32>(9, 4096), !vector);
        assert_eq!(van_herk_pays::<f64>(11, 2048), !vector);
        assert!(van_herk_pays::<f32>(12, 4096));
        assert!(
            van_herk_pays::<f32>(9, 1024),
            "rows of 36 KiB on a short line"
        );
        assert!(!van_herk_pays::<f32>(9, 512), "rows of 18 KiB");
        assert!(van_herk_pays::<u16>(9, 4096), "a line of 8 KiB");
        assert!(van_herk_pays::<i64>(9, 4096), "no vector folds");
        assert!(van_herk_pays::<f64>(17, 4096), "past the pairs' rows");
    }
}
