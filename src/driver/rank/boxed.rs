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
use super::elem::Elem;
use super::simd;
use super::sliding::{self, Scratch};

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
        let size = std::mem::size_of::<T>() as isize;
        let align = std::mem::align_of::<T>();
        let last = input.shape.len() - 1;
        let in_place = input.strides[last] == size
            && (input.ptr as usize).is_multiple_of(align)
            && input.strides[..last]
                .iter()
                .all(|s| (s.unsigned_abs()).is_multiple_of(align));
        let (offset, width) = box_chord(chords)?;
        in_place.then_some(BoxChord {
            offset,
            width,
            stacked: stacked(plan),
        })
    }
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
/// a line) rather than one pass reading every slot's line.
pub(crate) const VAN_HERK_SLOTS: usize = 6;

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
    if lo == 0 && hi == n && chord.stacked && k > VAN_HERK_SLOTS {
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
    for c in (col0..Ord::min(end, 0)).chain(Ord::max(col0, n)..end) {
        let v = match seg.plan.mode.map(c, n) {
            Some(i) if (lo..hi).contains(&i) => s.line[(i - col0) as usize],
            Some(i) => s
                .slots
                .iter()
                // SAFETY: `i` is a column of the line.
                .map(|r| r.map_or(seg.cval, |r| unsafe { r.add(i as usize).read() }))
                .reduce(op)
                .unwrap_or(seg.cval),
            None => seg.cval,
        };
        s.line[(c - col0) as usize] = v;
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
