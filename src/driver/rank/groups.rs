//! Min and max over a footprint whose slots each read one chord (a disk, a cross, a diamond),
//! for whole lines in blocks. Two ways, the first wherever its rows fit ([`TABLE_BYTES`]):
//! - a chord table ([`Table`]): each input line's extremes over every chord width, computed once
//!   and read by every output line whose slots read that line, then folded across the slots;
//! - groups ([`Job`]): the slots grouped by their chord, each group computed as a box for each
//!   output line.
//!
//! # Why it is the chord engine's result
//! The footprint is the union over the slots of each slot's chord, and min and max are
//! associative, commutative and idempotent, so the extreme over the footprint is the extreme
//! over the slots of each slot's chord extreme (the table's), or over the groups of each
//! group's extreme (a box's, [`super::boxed`]: its slots' lines folded column by column,
//! extended by the mode, then slid along the chord). The columns past either end are the
//! mode's, as the general engine extends each slot's line; a column a group's vertical pass did
//! not cover is folded down from the input. NaN and `-0.0` are the watch's (the windows reading
//! one are recomputed afterwards), as for every rank algorithm.
//!
//! Neither keeps a line cache as the chord engine ([`super::exec`]) does for segments: its
//! bookkeeping took as long as its vector work (`u8` on 1024²); the table is a ring over a
//! block's consecutive lines, its positions fixed for the block.

use super::super::plan::Plan;
use super::boxed::{ends_of, fill_ends, stacked, Block, End, Extent};
use super::elem::{with_extreme, Elem, Extreme};
use super::simd;
use super::sliding::{self, Scratch};
use super::store::{fence, Store};

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
    /// The chord table's rows ([`Table`]).
    rows: Vec<T>,
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
/// runs before line `l`. Through a [`Table`], the output lines' whole vectors are stored as
/// `store` says, fenced before this returns.
///
/// # Safety
/// `b` must describe valid, disjoint input and output lines of `plan.len` elements for every
/// line of the block, the input lines for every slot.
pub(crate) unsafe fn extremes_block<T: Elem>(
    b: &Block<T>,
    plan: &Plan,
    groups: &[Group],
    (cval, max): (T, bool),
    store: Store,
    s: &mut GroupScratch<T>,
    before: impl FnMut(usize),
) {
    if let Some(table) = Table::of::<T>(plan, groups, b.lines) {
        let job = TableJob {
            b,
            table,
            cval,
            store,
            s,
            before,
        };
        simd::run(Extremes { job, max });
        if store == Store::Streamed {
            fence();
        }
        return;
    }
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

impl<T: Elem, B: FnMut(usize)> Lines for Job<'_, T, B> {
    #[inline(always)]
    unsafe fn run<E: Extreme>(mut self) {
        let b = self.b;
        let GroupScratch {
            line,
            slid,
            from,
            sliding,
            ..
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
                    unsafe {
                        sliding::merge_lines_by::<T, E>(&mut line[at..at + m], from, Store::Cached)
                    };
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
                    0 => sliding::extremes_by::<T, E>(line, p.width, out, sliding, Store::Cached),
                    _ => {
                        sliding::extremes_by::<T, E>(line, p.width, slid, sliding, Store::Cached);
                        out.iter_mut()
                            .zip(&*slid)
                            .for_each(|(o, &v)| *o = E::in_place(*o, v));
                    }
                }
            }
        }
    }
}

/// A block's lines for the minimum or the maximum.
trait Lines {
    /// # Safety
    /// As [`extremes_block`].
    unsafe fn run<E: Extreme>(self);
}

/// [`Lines::run`] for the minimum or the maximum, as one AVX2 kernel.
struct Extremes<J> {
    job: J,
    max: bool,
}

impl<J: Lines> simd::Kernel for Extremes<J> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        // SAFETY: `extremes_block`'s caller's promise.
        with_extreme!(self.max, E => unsafe { self.job.run::<E>() })
    }
}

/// The most bytes of a worker's chord table ([`Table`]); past it, [`Job`]'s lines. The table
/// won at every size measured, its rows in L2 or in L3 (minimum, one thread, against `Job`):
/// disk of radius 3 `f64` on 4096² 49.7 → 37.1 ms (a table of 0.53 MiB); radius 9 `f32` on
/// 4096² 61 → 38 ms (1.7 MiB); radius 15 on 4096² `f32` 102 → 62 ms (4.0 MiB) and `f64` 201 →
/// 120 (8.1 MiB). The limit keeps a worker's memory bounded for larger footprints and lines.
const TABLE_BYTES: usize = 16 << 20;

/// Urbach and Wilkinson's chord table for a block of stacked slots of one chord each: the
/// extremes of every chord width over each input line, computed once per input line and read by
/// each of the `k` output lines whose slots read that line (a disk of radius 3: widths 5 and 7
/// a line, then seven reads a pixel, where [`Job`] slides each group again for every output
/// line). The widths are computed in increasing order, each from the one before: the extreme of
/// `w` values from `t` is the extreme of the `w - v + 1` extremes of `v` values from `t` on
/// (min and max are idempotent, so their overlap does not matter). A width's rows are kept in a
/// ring, from the first line its slots read for an output line to the last line computed (a
/// disk of radius 3: 7 extended lines, 6 rows of width 5 and 4 of width 7).
struct Table {
    n: usize,
    /// The distinct widths, increasing; the first is the extended line itself (width 1).
    widths: Vec<usize>,
    /// Per width, its first row and its ring's length: the lines from the first that a slot
    /// reading it reads to the last slot's (the line computed last).
    rings: Vec<(usize, usize)>,
    /// Per slot, the index of its width and where its chord starts in the extended line.
    slots: Vec<(usize, usize)>,
    /// The extended line, which covers every chord of every pixel, and its columns past the
    /// ends.
    extent: Extent,
    ends: Vec<(usize, End)>,
}

impl Table {
    /// The table of `groups`, unless its rows exceed [`TABLE_BYTES`] or the block is too short
    /// for its lines to share them.
    fn of<T>(plan: &Plan, groups: &[Group], lines: usize) -> Option<Table> {
        let k = plan.slots.len();
        let least = groups.iter().map(|((o, _), _)| *o).min()?;
        let reach = groups.iter().map(|((o, w), _)| o + w).max()?;
        let extent = Extent::of(plan, (least, reach - least));
        let mut widths: Vec<usize> = groups.iter().map(|((_, w), _)| *w).collect();
        widths.push(1);
        widths.sort_unstable();
        widths.dedup();
        let mut slots = vec![(0, 0); k];
        let mut first = vec![k - 1; widths.len()];
        for ((o, w), js) in groups {
            let at = widths.iter().position(|v| v == w)?;
            for &j in js {
                slots[j] = (at, o - least);
                first[at] = Ord::min(first[at], j);
            }
        }
        let mut rows = 0;
        let rings = first
            .iter()
            .map(|&j| {
                let ring = (rows, k - j);
                rows += ring.1;
                ring
            })
            .collect();
        let bytes = rows
            .saturating_mul(extent.len)
            .saturating_mul(std::mem::size_of::<T>());
        if bytes > TABLE_BYTES || lines < 2 {
            return None;
        }
        let ends = ends_of(plan, extent.col0, extent.len, (extent.lo, extent.hi)).collect();
        Some(Table {
            n: plan.len,
            widths,
            rings,
            slots,
            extent,
            ends,
        })
    }
}

/// [`extremes_block`]'s lines by a [`Table`].
struct TableJob<'a, T, B> {
    b: &'a Block<T>,
    table: Table,
    cval: T,
    /// How the output lines are stored (the lines of [`Job`], past the table's bytes, are
    /// folded group by group into the output, so are always cached).
    store: Store,
    s: &'a mut GroupScratch<T>,
    before: B,
}

impl<T: Elem, B: FnMut(usize)> Lines for TableJob<'_, T, B> {
    #[inline(always)]
    unsafe fn run<E: Extreme>(mut self) {
        let (b, t, cval) = (self.b, &self.table, self.cval);
        let (n, k, len) = (t.n, t.slots.len(), t.extent.len);
        let GroupScratch {
            rows,
            from,
            sliding,
            ..
        } = self.s;
        // Where width `w`'s row of input line `i` starts.
        let at = |w: usize, i: usize| {
            let (first, ring) = t.rings[w];
            (first + i % ring) * len
        };
        rows.resize(
            t.rings.iter().map(|r| r.1).sum::<usize>() * len,
            T::default(),
        );
        // The input's columns in the extended line: its columns `c0..c0 + m`, from `at0` on.
        let (at0, c0, m) = t.extent.cols();
        // The rows of input line `i` of the block (slot `j` of output line `l` reads line
        // `l + j`).
        let compute = |i: usize, rows: &mut [T], sliding: &mut Scratch<T>| {
            // SAFETY: the block's promise: input line `i` holds `n` values.
            let input = unsafe { b.input_line(i, n) };
            let ext = &mut rows[at(0, i)..at(0, i) + len];
            ext[at0..at0 + m].copy_from_slice(&input[c0..c0 + m]);
            fill_ends(ext, &t.ends, cval, |c| input[c]);
            for w in 1..t.widths.len() {
                // Width `w`'s rows lie after width `w - 1`'s.
                let (done, next) = rows.split_at_mut(at(w, i));
                let (v, u) = (t.widths[w - 1], t.widths[w]);
                let prev = &done[at(w - 1, i)..at(w - 1, i) + len + 1 - v];
                let next = &mut next[..len + 1 - u];
                sliding::extremes_by::<T, E>(prev, u - v + 1, next, sliding, Store::Cached);
            }
        };
        for i in 0..k - 1 {
            compute(i, rows, sliding);
        }
        for l in 0..b.lines {
            (self.before)(l);
            compute(l + k - 1, rows, sliding);
            from.clear();
            let row =
                |(j, &(w, shift)): (usize, &(usize, usize))| rows[at(w, l + j) + shift..].as_ptr();
            from.extend(t.slots.iter().enumerate().map(row));
            // SAFETY: the caller's promise: an output line of `n` elements, ours alone; each
            // row holds `n` values from its slot's shift on.
            unsafe { sliding::merge_lines_by::<T, E>(b.output_line(l, n), from, self.store) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{Footprint, Geometry, Mode, Options};
    use super::super::exec::chords;
    use super::*;

    /// The plan and groups of a disk of `radius` over lines of `n` values.
    fn disk(radius: i64, n: usize) -> (Plan, Vec<Group>) {
        let side = 2 * radius as usize + 1;
        let mask = (0..side * side)
            .map(|i| {
                let (y, x) = ((i / side) as i64 - radius, (i % side) as i64 - radius);
                y * y + x * x <= radius * radius
            })
            .collect();
        let fp = Footprint::new(vec![side, side], mask).unwrap();
        let g = Geometry::resolve(&[64, n], &Options::new(fp)).unwrap();
        let plan = Plan::new(&g, Mode::Reflect, 0.0).unwrap();
        let groups = groups(&plan, &chords(&plan)).expect("a disk is one chord a row");
        (plan, groups)
    }

    #[test]
    fn a_disks_table_keeps_each_widths_rows_from_its_first_slot_on() {
        let (plan, groups) = disk(3, 100);
        let t = Table::of::<f32>(&plan, &groups, 10).unwrap();
        // Rows of 7, 5, 5, 7... wide: widths 1 (the extended line), 5 and 7; the first read by
        // slot 0, 5 from slot 1, 7 by slot 3 alone.
        assert_eq!(t.widths, [1, 5, 7]);
        assert_eq!(t.rings, [(0, 7), (7, 6), (13, 4)]);
        assert_eq!(t.slots[0], (0, 3));
        assert_eq!(t.slots[3], (2, 0));
        assert_eq!(t.slots[6], (0, 3));
        // The extended line covers the widest chord of every pixel.
        assert_eq!((t.extent.col0, t.extent.len), (-3, 106));
    }

    #[test]
    fn the_table_gives_way_to_groups_past_its_size_or_for_one_line() {
        let (plan, groups) = disk(3, 100);
        assert!(Table::of::<f32>(&plan, &groups, 1).is_none());
        // 17 rows of the extended line's length: 4 bytes a value fit, 16 MiB past them.
        let (wide, groups) = disk(3, (TABLE_BYTES / 17 / 4) - 6);
        assert!(Table::of::<f32>(&wide, &groups, 2).is_some());
        assert!(Table::of::<f64>(&wide, &groups, 2).is_none());
    }
}
