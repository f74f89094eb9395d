//! Min and max over a footprint whose slots each read one chord (a disk, a cross, a diamond),
//! for whole lines in blocks: the slots grouped by their chord, each group computed as a box.
//!
//! # Why it is the chord engine's result
//! The footprint is the union over the groups of `slots × chord`, and min and max are
//! associative, commutative and idempotent, so the extreme over the footprint is the extreme
//! over the groups of each group's extreme; a group's is a box's ([`super::boxed`]): its slots'
//! lines folded column by column, extended by the mode, then slid along the chord. The columns
//! past either end are the mode's, as the general engine extends each slot's line; a column a
//! group's vertical pass did not cover is folded down from the input. NaN and `-0.0` are the
//! watch's (the windows reading one are recomputed afterwards), as for every rank algorithm.
//!
//! Per line this reads each slot's line once and slides once per group (a disk of radius 3:
//! three groups), with no line cache: the chord engine ([`super::exec`]) caches each source
//! line's chord extremes, and its bookkeeping took as long as its vector work (`u8` on 1024²).

use super::super::plan::Plan;
use super::boxed::{ends_of, fill_ends, stacked, Block, End, Extent};
use super::elem::{with_extreme, Elem, Extreme};
use super::simd;
use super::sliding::{self, Scratch};

/// The slots of one chord: `(offset from the leftmost tap, width)` and the slots that read it.
pub(crate) type Group = ((usize, usize), Vec<usize>);

/// The footprint's slots grouped by their chord, when the slots are stacked ([`stacked`]) and
/// each reads one chord, and there is more than one group (one group is a box: [`super::boxed`]).
pub(crate) fn groups(plan: &Plan, chords: &[Vec<(usize, usize)>]) -> Option<Vec<Group>> {
    if !stacked(plan) {
        return None;
    }
    let mut groups: Vec<Group> = Vec::new();
    for (slot, c) in chords.iter().enumerate() {
        let [chord] = c[..] else { return None };
        match groups.iter_mut().find(|(g, _)| *g == chord) {
            Some((_, slots)) => slots.push(slot),
            None => groups.push((chord, vec![slot])),
        }
    }
    (groups.len() > 1).then_some(groups)
}

/// Reusable buffers of a worker.
#[derive(Default)]
pub(crate) struct GroupScratch<T> {
    /// A group's extended line, then a group's slid line.
    line: Vec<T>,
    slid: Vec<T>,
    from: Vec<*const T>,
    sliding: Scratch<T>,
}

/// What one group's lines have in common.
struct Part<'a> {
    slots: &'a [usize],
    width: usize,
    /// The extended line's length; where the vertical pass goes in it, its first input column
    /// and its length.
    len: usize,
    cols: (usize, usize, usize),
    ends: Vec<(usize, End)>,
}

/// The minimum or maximum over the footprint of `groups` for each line of a [`Block`], written
/// in place into the output lines, which must be contiguous and aligned for `T`. `before(l)`
/// runs before line `l`.
///
/// # Safety
/// `b` must describe valid, disjoint input and output lines of `plan.len` elements for every
/// line of the block, the input lines for every slot.
pub(crate) unsafe fn extremes_block<T: Elem>(
    b: &Block<T>,
    plan: &Plan,
    groups: &[Group],
    (cval, max): (T, bool),
    s: &mut GroupScratch<T>,
    before: impl FnMut(usize),
) {
    let n = plan.len;
    let parts: Vec<Part> = groups
        .iter()
        .map(|(chord, slots)| {
            let e = Extent::of(plan, *chord);
            Part {
                slots,
                width: chord.1,
                len: e.len,
                cols: e.cols(),
                ends: ends_of(plan, e.col0, e.len, (e.lo, e.hi)).collect(),
            }
        })
        .collect();
    s.line
        .resize(parts.iter().map(|p| p.len).max().unwrap_or(0), T::default());
    s.slid.resize(n, T::default());
    let job = Job {
        b,
        n,
        parts,
        cval,
        s,
        before,
    };
    simd::run(Extremes { job, max })
}

/// [`extremes_block`]'s lines, as one AVX2 kernel.
struct Job<'a, T, B> {
    b: &'a Block<T>,
    n: usize,
    parts: Vec<Part<'a>>,
    cval: T,
    s: &'a mut GroupScratch<T>,
    before: B,
}

impl<T: Elem, B: FnMut(usize)> Job<'_, T, B> {
    /// # Safety
    /// As [`extremes_block`].
    #[inline(always)]
    unsafe fn run<E: Extreme>(mut self) {
        let b = self.b;
        let GroupScratch {
            line,
            slid,
            from,
            sliding,
        } = self.s;
        for l in 0..b.lines {
            (self.before)(l);
            let first = b.rows.wrapping_byte_offset(l as isize * b.step);
            let slot = |j: usize| first.wrapping_byte_offset(j as isize * b.step);
            // SAFETY: the caller's promise: an output line of `n` elements, ours alone.
            let out = unsafe {
                std::slice::from_raw_parts_mut(
                    b.out.wrapping_byte_offset(l as isize * b.out_step),
                    self.n,
                )
            };
            for (g, p) in self.parts.iter().enumerate() {
                let (at, c0, m) = p.cols;
                let line = &mut line[..p.len];
                from.clear();
                from.extend(p.slots.iter().map(|&j| slot(j).wrapping_add(c0)));
                if m > 0 {
                    // SAFETY: the slots' lines hold `n` elements, `c0..c0 + m` inside them.
                    unsafe { sliding::merge_lines_by::<T, E>(&mut line[at..at + m], from) };
                }
                // SAFETY: `i` is a column of the slots' lines.
                let column = |i: usize| unsafe {
                    p.slots[1..]
                        .iter()
                        .fold(slot(p.slots[0]).add(i).read(), |v, &j| {
                            E::in_place(v, slot(j).add(i).read())
                        })
                };
                fill_ends(line, &p.ends, self.cval, column);
                // The first group straight into the output, the others folded into it.
                match g {
                    0 => sliding::extremes_by::<T, E>(line, p.width, out, sliding),
                    _ => {
                        sliding::extremes_by::<T, E>(line, p.width, slid, sliding);
                        out.iter_mut()
                            .zip(&*slid)
                            .for_each(|(o, &v)| *o = E::in_place(*o, v));
                    }
                }
            }
        }
    }
}

/// [`Job::run`] for the minimum or the maximum.
struct Extremes<'a, T, B> {
    job: Job<'a, T, B>,
    max: bool,
}

impl<T: Elem, B: FnMut(usize)> simd::Kernel for Extremes<'_, T, B> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        // SAFETY: `extremes_block`'s caller's promise.
        with_extreme!(self.max, E => unsafe { self.job.run::<E>() })
    }
}
