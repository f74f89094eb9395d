//! Running a rank statistic over the pixels: the driver's chunks and threads ([`team`]), lines
//! in the input's own element type.
//!
//! Per output line segment, each slot (a distinct offset of the footprint on the leading axes,
//! [`Plan`]) reads one input line, extended past the ends by the mode exactly as the general
//! engine extends it ([`Plan::fill_as`]). The taps of a slot fall into *chords*, runs of
//! consecutive columns. Min and max over a box (every slot one same chord) are separable
//! ([`boxed`]: the slots' input lines read in place); over other footprints they take the
//! extreme along each chord ([`sliding`]), cached per source line and chord so the lines share
//! them, then across the chords. The order statistics read all taps ([`order`]); consecutive
//! whole lines let van Herk's blocks and the 8-bit column histograms go on from line to line.

use super::super::array::{RawArray, RawArrayMut};
use super::super::error::DriverError;
use super::super::exec::{chunks, LineCache};
use super::super::plan::Plan;
use super::super::{team, Options};
use super::boxed::{self, BoxChord, BoxScratch};
use super::elem::Elem;
use super::facts::Watch;
use super::groups::{self, Group, GroupScratch};
use super::order::{self, Histogram, Order, Results};
use super::perreault;
use super::ranked;
use super::registers;
use super::simd;
use super::sliding::{self, Scratch};
use super::stat::{Positions, RankStat};
use super::store::Store;
use crate::interrupt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What a run computes, fixed before the workers start.
pub(crate) struct Work<'a, T> {
    pub plan: &'a Plan,
    pub input: &'a RawArray,
    pub output: &'a RawArrayMut,
    pub stat: RankStat,
    /// `cval` in the input's type (checked exact by the caller).
    pub cval: T,
    pub options: &'a Options,
    /// For float data without a scan beforehand: the facts, checked as the lines go.
    pub watch: Option<&'a Watch>,
    /// How the whole output lines of boxes and disks are stored ([`Store::for_output`]).
    pub store: Store,
}

// SAFETY: the arrays are raw memory the caller vouches for; the input is only read and each
// chunk writes its own output pixels (the arrays are disjoint: `Aliasing::Disjoint`).
unsafe impl<T> Sync for Work<'_, T> {}

/// Per slot, its chords `(offset from the leftmost tap, width)`.
pub(super) fn chords(plan: &Plan) -> Vec<Vec<(usize, usize)>> {
    let mut cols: Vec<Vec<i64>> = vec![Vec::new(); plan.slots.len()];
    for (&s, &c) in plan.tap_slot.iter().zip(&plan.tap_col) {
        cols[s as usize].push(c);
    }
    cols.into_iter()
        .map(|mut c| {
            c.sort_unstable();
            let mut runs: Vec<(usize, usize)> = Vec::new();
            for col in c {
                let o = (col - plan.cmin) as usize;
                match runs.last_mut() {
                    Some((start, w)) if *start + *w == o => *w += 1,
                    _ => runs.push((o, 1)),
                }
            }
            runs
        })
        .collect()
}

/// Runs the work on `threads` threads.
pub(crate) fn run<T: Elem>(work: &Work<T>, threads: usize) -> Result<(), DriverError> {
    let plan = work.plan;
    let chords = chords(plan);
    let n = plan.tap_slot.len();
    let positions = work.stat.positions(n);
    let order = positions
        .as_ref()
        .map(|p| Order::choose::<T>(n, p, &chords, boxed::stacked(plan)));
    let boxed = BoxChord::of::<T>(plan, &chords, work.input);
    let groups = match work.stat {
        RankStat::Min | RankStat::Max if boxed.is_none() && boxed::in_place::<T>(work.input) => {
            groups::groups(plan, &chords)
        }
        _ => None,
    };
    let parts = chunks(plan, threads, work.options.progress.is_some());
    let (cancelled, done) = (AtomicBool::new(false), AtomicUsize::new(0));
    let total = plan.lines * plan.len;
    team::for_each_init(
        threads,
        &parts,
        || Worker::<T>::new(plan, chords.iter().map(Vec::len).sum()),
        |w, &(p0, p1)| {
            if work
                .options
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::Relaxed))
            {
                cancelled.store(true, Ordering::Relaxed);
            }
            let stop = interrupt::with_cancel(&cancelled, interrupt::poll);
            if stop || work.watch.is_some_and(Watch::failed) {
                return;
            }
            // Positions `p0..p1` in segments of at most a line each, the line and column counted
            // as they go (not divided out of `p` for every segment).
            let shape = Shape {
                chords: &chords,
                boxed,
                groups: groups.as_deref(),
                positions: positions.as_ref(),
                order: order.as_ref(),
            };
            let (mut p, mut line, mut a) = (p0, p0 / plan.len, p0 % plan.len);
            while p < p1 {
                if a == 0 {
                    let done = w.block(work, &shape, line, (p1 - p) / plan.len);
                    if done > 0 {
                        (p, line) = (p + done * plan.len, line + done);
                        continue;
                    }
                }
                let b = plan.len.min(a + (p1 - p));
                // The whole lines of the chunk from this one on (0 when it is partial).
                let ahead = match a {
                    0 => (p1 - p) / plan.len,
                    _ => 0,
                };
                w.segment(work, &shape, (line, ahead), a, b);
                p += b - a;
                (line, a) = if b == plan.len {
                    (line + 1, 0)
                } else {
                    (line, b)
                };
            }
            if let Some(report) = &work.options.progress {
                report(
                    done.fetch_add(p1 - p0, Ordering::Relaxed) + (p1 - p0),
                    total,
                );
            }
        },
    );
    match cancelled.load(Ordering::Relaxed) {
        true => Err(DriverError::Cancelled),
        false => Ok(()),
    }
}

/// What [`Worker::block`] computes.
#[derive(Clone, Copy)]
enum BlockKind<'a> {
    /// Min or max over a stacked box ([`boxed::extremes_block`]).
    Box { chord: BoxChord, max: bool },
    /// Max minus min over a stacked box, where the difference is stored natively
    /// ([`Elem::RANGE_NATIVE`]): [`Worker::range_block`].
    RangeBox { chord: BoxChord },
    /// Min or max over stacked slots of one chord each ([`groups::extremes_block`]).
    Groups { groups: &'a [Group], max: bool },
    /// [`Order::Median3x3`], `plus_zero` as its [`Positions::One`].
    Median3x3 { plus_zero: bool },
    /// A 5×5 median ([`registers::is_5x5_median`]), two lines at a time.
    Median5x5 { plus_zero: bool },
}

/// The footprint's decomposition and the statistic's algorithm.
struct Shape<'a> {
    chords: &'a [Vec<(usize, usize)>],
    /// The chord every slot shares, when the footprint is a box read in place.
    boxed: Option<BoxChord>,
    /// For min and max over other footprints read in place, the slots grouped by their one
    /// chord each, where they have one ([`groups::groups`]).
    groups: Option<&'a [Group]>,
    positions: Option<&'a Positions>,
    order: Option<&'a Order>,
}

/// Key of a cached line: the source line (`None`: `cval`), then either the extended line of
/// columns `a..a + m` (`width == 0`) or the extremes of the chord at `offset` of that width.
type Key = (Option<isize>, usize, usize, usize, usize);

/// A worker's scratch, reused across its chunks.
struct Worker<T> {
    /// The multi-index of line `at` over the leading axes.
    idx: Vec<usize>,
    at: Option<usize>,
    srcs: Vec<Option<isize>>,
    /// Extended input lines, and chords' minima and maxima.
    ext: LineCache<Key, T>,
    extremes: [LineCache<Key, T>; 2],
    acc: [Vec<T>; 2],
    double: Vec<f64>,
    scratch: Scratch<T>,
    boxed: BoxScratch<T>,
    groups: GroupScratch<T>,
    wires: Vec<T>,
    /// A segment's sorted columns ([`Order::Columns`]).
    columns: Vec<T>,
    /// The column histograms of 8-bit boxes ([`Order::Perreault`]), kept from line to line.
    perreault: perreault::Columns,
    hist: Option<Histogram>,
    /// Ranked rows of the lines from the current one on, a band per piece of a line
    /// ([`Order::Ranked`]).
    bands: ranked::Bands<T>,
    /// The chords' extreme lines of the current segment.
    lines: Vec<*const T>,
    /// The last whole line computed, and whether the current segment is the whole line after
    /// it on the second-to-last axis ([`boxed::Segment::continues`]).
    whole: Option<usize>,
    continues: bool,
}

impl<T: Elem> Worker<T> {
    /// Scratch for a plan whose slots have `chords` chords in all: the caches hold two lines'
    /// worth (a segment's, and the previous one's for the next line to reuse).
    fn new(plan: &Plan, chords: usize) -> Worker<T> {
        let slots = plan.slots.len();
        Worker {
            idx: vec![0; plan.shape.len()],
            at: None,
            srcs: Vec::with_capacity(slots),
            ext: LineCache::new(2 * slots + 2),
            extremes: [
                LineCache::new(2 * chords + 2),
                LineCache::new(2 * chords + 2),
            ],
            acc: [Vec::new(), Vec::new()],
            double: Vec::new(),
            scratch: (Vec::new(), Vec::new()),
            boxed: BoxScratch::default(),
            groups: GroupScratch::default(),
            wires: Vec::new(),
            columns: Vec::new(),
            perreault: perreault::Columns::default(),
            hist: (T::KEY_BITS == 8).then(|| Histogram::new(T::KEY_BITS)),
            bands: ranked::Bands::default(),
            lines: Vec::new(),
            whole: None,
            continues: false,
        }
    }

    /// Computes and writes columns `a..b` of line `line`, the chunk holding `ahead` whole lines
    /// from it on.
    fn segment(
        &mut self,
        work: &Work<T>,
        shape: &Shape,
        (line, ahead): (usize, usize),
        a: usize,
        b: usize,
    ) {
        let plan = work.plan;
        let last = plan.shape.len() - 1;
        self.go_to(plan, line);
        plan.sources(&self.idx[..last], &work.input.strides, &mut self.srcs);
        let m = b - a;
        if let Some(watch) = work.watch {
            // SAFETY: columns `a..b` of the input line of this index are valid memory.
            unsafe { self.watch_input(work, watch, line, a, m) };
        }
        let whole = a == 0 && b == plan.len;
        self.continues = whole
            && last >= 1
            && self.idx[last - 1] != 0
            && line.checked_sub(1).is_some_and(|p| self.whole == Some(p));
        self.whole = whole.then_some(line);
        self.ext.stamp += 1;
        for c in &mut self.extremes {
            c.stamp += 1;
        }
        self.acc[0].resize(m, T::default());
        self.double.resize(m, 0.0);
        let native = match work.stat {
            RankStat::Min | RankStat::Max => {
                let max = work.stat == RankStat::Max;
                if let Some(out) = self.native_segment(work, a, m) {
                    // The extremes go straight into the output: nothing to copy afterwards.
                    self.extremes_into(work, shape, a, m, max, out);
                    return;
                }
                self.extremes(work, shape, a, m, max);
                true
            }
            RankStat::Range => {
                self.extremes(work, shape, a, m, true);
                self.acc.swap(0, 1);
                self.extremes(work, shape, a, m, false);
                let [min, max] = &mut self.acc;
                if T::RANGE_NATIVE && work.output.dtype == work.input.dtype {
                    // The difference in the output's own type, bit for bit the cast of the
                    // doubles' (`Elem::range`), without a pass through double.
                    simd::fast(|| {
                        for (lo, &hi) in min.iter_mut().zip(&*max) {
                            *lo = T::range(hi, *lo);
                        }
                    });
                    true
                } else {
                    for ((d, hi), lo) in self.double.iter_mut().zip(&*max).zip(&*min) {
                        *d = hi.to_f64() - lo.to_f64();
                    }
                    false
                }
            }
            _ => self.order(work, shape, (line, ahead), a, m),
        };
        self.write(work, a, m, native);
    }

    /// Whole lines from `line` on (at most `avail`) of a minimum, a maximum, or a 3×3 or 5×5 median over
    /// a stacked box, as one [`boxed::Block`]: the lines of one run of the stacked axis whose
    /// slots all read lines inside the input, with the output stored in place. Returns the
    /// number of lines done; 0 leaves `line` to [`Worker::segment`].
    fn block(&mut self, work: &Work<T>, shape: &Shape, line: usize, avail: usize) -> usize {
        let stacked_box = shape.boxed.filter(|c| c.stacked);
        let kind = match (work.stat, shape.order, shape.positions) {
            (RankStat::Min | RankStat::Max, ..) => {
                let max = work.stat == RankStat::Max;
                match (stacked_box, shape.groups) {
                    (Some(chord), _) => BlockKind::Box { chord, max },
                    (None, Some(groups)) => BlockKind::Groups { groups, max },
                    (None, None) => return 0,
                }
            }
            (RankStat::Range, ..) => match stacked_box {
                Some(chord) if T::RANGE_NATIVE => BlockKind::RangeBox { chord },
                _ => return 0,
            },
            (_, Some(Order::Median3x3), Some(&Positions::One { plus_zero, .. }))
                if stacked_box.is_some() =>
            {
                BlockKind::Median3x3 { plus_zero }
            }
            (
                _,
                Some(Order::Columns { rows, width, .. }),
                Some(pos @ &Positions::One { plus_zero, .. }),
            ) if stacked_box.is_some() && registers::is_5x5_median(*rows, *width, pos) => {
                BlockKind::Median5x5 { plus_zero }
            }
            _ => return 0,
        };
        let (plan, input, output) = (work.plan, work.input, work.output);
        let (k, last) = (plan.slots.len(), plan.shape.len() - 1);
        let align = std::mem::align_of::<T>() as isize;
        if last == 0 || output.strides[last - 1] % align != 0 {
            return 0;
        }
        self.go_to(plan, line);
        if self.native_segment(work, 0, plan.len).is_none() {
            return 0;
        }
        // The slots differ on the stacked axis alone: the first inside on every axis, and the
        // last inside on the stacked one, for every line of the block.
        let axis = last - 1;
        let (first, y) = (&plan.slots[0], self.idx[axis] as i64);
        let inside =
            |d: usize| (0..plan.shape[d] as i64).contains(&(self.idx[d] as i64 + first[d]));
        // The block ends with the plane (the lines of one index on the axes before) or where
        // the last slot leaves the stacked axis.
        let end = plan.shape[axis] as i64 - Ord::max(plan.slots[k - 1][axis], 0);
        let count = Ord::min(end - y, avail as i64);
        if count <= 0 || !(0..=axis).all(inside) {
            return 0;
        }
        let count = count as usize;
        let rows: isize = (0..last)
            .map(|d| (self.idx[d] as i64 + first[d]) as isize * input.strides[d])
            .sum();
        let block = boxed::Block {
            rows: input.ptr.wrapping_offset(rows) as *const T,
            step: input.strides[axis],
            out: self.out_ptr(work, 0) as *mut T,
            out_step: output.strides[axis],
            lines: count,
            continues: y != 0 && line.checked_sub(1).is_some_and(|p| self.whole == Some(p)),
        };
        let centre = input.ptr.wrapping_offset(self.line_offset(&input.strides));
        let before = |l: usize| {
            if let Some(watch) = work.watch {
                let p = centre.wrapping_offset(l as isize * input.strides[axis]);
                // SAFETY: the input line of output line `line + l`, valid memory.
                unsafe {
                    watch.check((line + l, 0), input.dtype, p, plan.len, input.strides[last])
                };
            }
        };
        // SAFETY (both): the block's lines are the input's and output's own (checked inside and
        // aligned above); the arrays are disjoint.
        match kind {
            BlockKind::Box { chord, max } => unsafe {
                boxed::extremes_block(
                    &block,
                    plan,
                    (chord, k),
                    (work.cval, max),
                    work.store,
                    &mut self.boxed,
                    before,
                )
            },
            BlockKind::RangeBox { chord } => unsafe {
                self.range_block(&block, (chord, k), work, before)
            },
            BlockKind::Groups { groups, max } => unsafe {
                let scratch = &mut self.groups;
                let (cval, store) = (work.cval, work.store);
                groups::extremes_block(&block, plan, groups, (cval, max), store, scratch, before)
            },
            BlockKind::Median3x3 { plus_zero } => unsafe {
                let cols = &mut self.wires;
                order::median3x3_block(&block, plan, (work.cval, plus_zero), cols, before)
            },
            BlockKind::Median5x5 { plus_zero } => unsafe {
                let cols = &mut self.wires;
                order::median5x5_block(&block, plan, (work.cval, plus_zero), cols, before)
            },
        }
        // The worker stands at the block's last line, a whole one.
        self.idx[axis] += count - 1;
        self.at = Some(line + count - 1);
        self.whole = self.at;
        count
    }

    /// The range (max minus min) of a stacked box for each line of `b`, in the lines' own type
    /// ([`Elem::range`]), the output's dtype being the input's. The lines go in runs
    /// ([`range_run`]): the maxima into the output lines, the minima into a scratch run, then the
    /// difference in place, both extremes read back from the cache. Each extreme keeps
    /// its own van Herk state, so the runs go on from one another as one block would.
    ///
    /// # Safety
    /// As [`boxed::extremes_block`] for `b`.
    unsafe fn range_block(
        &mut self,
        b: &boxed::Block<T>,
        box_k: (BoxChord, usize),
        work: &Work<T>,
        mut before: impl FnMut(usize),
    ) {
        let (plan, n) = (work.plan, work.plan.len);
        let size = std::mem::size_of::<T>() as isize;
        let mut lows = std::mem::take(&mut self.acc[1]);
        let run = range_run(n * size as usize);
        for start in (0..b.lines).step_by(run) {
            let lines = Ord::min(run, b.lines - start);
            let s = start as isize;
            let highs = boxed::Block {
                rows: b.rows.wrapping_byte_offset(s * b.step),
                out: b.out.wrapping_byte_offset(s * b.out_step),
                lines,
                continues: b.continues || start > 0,
                ..*b
            };
            lows.resize(lines * n, T::default());
            let lows_block = boxed::Block {
                out: lows.as_mut_ptr(),
                out_step: n as isize * size,
                ..highs
            };
            let cval = work.cval;
            // SAFETY: the caller's promise for the run's lines; `lows` holds `lines` lines of
            // `n`, aligned, apart from the input.
            unsafe {
                let scratch = &mut self.boxed;
                let cached = Store::Cached;
                boxed::extremes_block(&highs, plan, box_k, (cval, true), cached, scratch, |l| {
                    before(start + l)
                });
                boxed::extremes_block(
                    &lows_block,
                    plan,
                    box_k,
                    (cval, false),
                    cached,
                    scratch,
                    |_| {},
                );
            }
            for (l, lo) in lows.chunks_exact(n).enumerate() {
                // SAFETY: the caller's promise: line `l` of the run is ours alone.
                let hi = unsafe { highs.output_line(l, n) };
                simd::fast(|| {
                    for (h, &lo) in hi.iter_mut().zip(lo) {
                        *h = T::range(*h, lo);
                    }
                });
            }
        }
        self.acc[1] = lows;
    }

    /// `idx` = the multi-index of `line`.
    fn go_to(&mut self, plan: &Plan, line: usize) {
        let last = plan.shape.len() - 1;
        match self.at {
            Some(at) if at == line => {}
            Some(at) if at + 1 == line => plan.next_line_index(&mut self.idx[..last]),
            _ => plan.line_index(line, &mut self.idx[..last]),
        }
        self.at = Some(line);
    }

    /// `acc[0][..m]` = the minimum (or maximum) over the footprint of each pixel.
    fn extremes(&mut self, work: &Work<T>, shape: &Shape, a: usize, m: usize, max: bool) {
        let mut acc = std::mem::take(&mut self.acc[0]);
        acc.resize(m, T::default());
        self.extremes_into(work, shape, a, m, max, &mut acc);
        self.acc[0] = acc;
    }

    /// `out[..m]` = the minimum (or maximum) over the footprint of each pixel: the extremes of
    /// each chord (cached per source line, so the lines of a box share them), then across them.
    fn extremes_into(
        &mut self,
        work: &Work<T>,
        shape: &Shape,
        a: usize,
        m: usize,
        max: bool,
        out: &mut [T],
    ) {
        if let Some(chord) = shape.boxed {
            let seg = boxed::Segment {
                plan: work.plan,
                input: work.input,
                srcs: &self.srcs,
                cval: work.cval,
                a,
                m,
                continues: self.continues,
            };
            // SAFETY: the input is valid memory and `srcs` are this line's sources.
            unsafe { boxed::extremes(&seg, chord, max, out, &mut self.boxed) };
            return;
        }
        let mut lines = std::mem::take(&mut self.lines);
        lines.clear();
        for (s, chords) in shape.chords.iter().enumerate() {
            for &(o, w) in chords {
                let src = self.srcs[s];
                let (ext, scratch) = (&mut self.ext, &mut self.scratch);
                // The extended line is read only when the chord's extremes are not cached.
                lines.push(
                    self.extremes[max as usize].get((src, a, m, o, w), m, |out| {
                        let ext = ext_line(ext, work, src, a, m);
                        sliding::extremes(&ext[o..], w, max, out, scratch)
                    }),
                );
            }
        }
        // SAFETY: the cache keeps each line's `m` values in place until the next segment's
        // stamp; `out` is the accumulator or the output, neither of them a cached line.
        unsafe { sliding::merge_lines(out, &lines, max) };
        self.lines = lines;
    }

    /// The output's segment for columns `a..a + m` of the current line as a slice of `T`, when
    /// the results can be stored there as they are: the output has the input's dtype, every
    /// value round-trips through double, and the segment is contiguous and aligned.
    fn native_segment<'o>(&self, work: &Work<T>, a: usize, m: usize) -> Option<&'o mut [T]> {
        let out = work.output;
        let size = std::mem::size_of::<T>() as isize;
        if !stores_natively(work) || out.strides[out.shape.len() - 1] != size {
            return None;
        }
        let p = self.out_ptr(work, a);
        if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return None;
        }
        // SAFETY: the output segment is valid, and written by this worker alone (the
        // caller's contract: disjoint chunks of disjoint arrays).
        Some(unsafe { std::slice::from_raw_parts_mut(p as *mut T, m) })
    }

    /// Has `watch` check columns `a..a + m` of the input line of the current line's index
    /// (line `line`: the input has the output's shape).
    ///
    /// # Safety
    /// The input must be valid memory.
    unsafe fn watch_input(&self, work: &Work<T>, watch: &Watch, line: usize, a: usize, m: usize) {
        let input = work.input;
        let stride = input.strides[input.shape.len() - 1];
        let p = input.ptr.wrapping_offset(self.line_offset(&input.strides));
        let p = p.wrapping_offset(a as isize * stride);
        // SAFETY: the caller's promise.
        unsafe { watch.check((line, a), input.dtype, p, m, stride) }
    }

    /// The address of column `a` of the current line in the output.
    fn out_ptr(&self, work: &Work<T>, a: usize) -> *mut u8 {
        let out = work.output;
        let p = out.ptr.wrapping_offset(self.line_offset(&out.strides));
        p.wrapping_offset(a as isize * out.strides[out.shape.len() - 1])
    }

    /// The byte offset of the current line (column 0) in an array of these strides.
    fn line_offset(&self, strides: &[isize]) -> isize {
        let last = strides.len() - 1;
        (0..last).map(|d| self.idx[d] as isize * strides[d]).sum()
    }

    /// The order statistic of each pixel into `acc[0]` (native) or `double`; whether native.
    fn order(
        &mut self,
        work: &Work<T>,
        shape: &Shape,
        (line, ahead): (usize, usize),
        a: usize,
        m: usize,
    ) -> bool {
        let plan = work.plan;
        let pos = shape.positions.expect("order statistics have positions");
        if let Some(Order::Ranked) = shape.order {
            self.ranked(work, shape.chords, (line, ahead), a, m, pos);
            return matches!(pos, Positions::One { .. });
        }
        let ext: Vec<&[T]> = self
            .srcs
            .iter()
            .map(|&src| ext_line(&mut self.ext, work, src, a, m))
            .collect();
        let mut out = Results {
            native: &mut self.acc[0][..m],
            double: &mut self.double[..m],
        };
        let taps = || -> Vec<&[T]> {
            plan.tap_slot
                .iter()
                .zip(&plan.tap_col)
                .map(|(&s, &c)| &ext[s as usize][(c - plan.cmin) as usize..])
                .collect()
        };
        match shape.order.expect("order statistics have an algorithm") {
            Order::Median3x3 => {
                let plus_zero = matches!(
                    pos,
                    Positions::One {
                        plus_zero: true,
                        ..
                    }
                );
                let rows = [ext[0], ext[1], ext[2]];
                order::median3x3(rows, m, plus_zero, out.native, &mut self.wires)
            }
            Order::Network(net) => order::network(net, &taps(), m, pos, &mut out, &mut self.wires),
            Order::Columns {
                sort,
                merge,
                rows,
                offset,
                width,
            } => {
                // The columns of the segment's boxes, each sorted: row `r` of `cols` holds
                // the `r`-th smallest of every column, from the first box's leftmost one.
                let len = m + width - 1;
                let mut cols = std::mem::take(&mut self.columns);
                cols.resize(rows * len, T::default());
                for (dst, line) in cols.chunks_exact_mut(len).zip(&ext) {
                    dst.copy_from_slice(&line[*offset..offset + len]);
                }
                order::compare_rows(sort, &mut cols, len, len);
                match *pos {
                    // A 5×5 median in registers (every pixel: its rest one at a time).
                    Positions::One { plus_zero, .. }
                        if registers::is_5x5_median(*rows, *width, pos) =>
                    {
                        let sorted = std::array::from_fn(|r| &cols[r * len..(r + 1) * len]);
                        let out = &mut *out.native;
                        registers::Job::Sorted { cols: sorted, out }.run(plus_zero);
                    }
                    // Any other box by the network; wire `c * rows + r`: rank `r` of column `c`.
                    _ => {
                        let taps: Vec<&[T]> = (0..width * rows)
                            .map(|w| &cols[(w % rows) * len + w / rows..])
                            .collect();
                        order::network(merge, &taps, m, pos, &mut out, &mut self.wires);
                    }
                }
                self.columns = cols;
            }
            Order::Perreault { offset, width } => {
                let len = ext[0].len();
                self.perreault.update(&ext, len, self.continues);
                self.perreault.positions(*offset, *width, m, pos, &mut out);
            }
            Order::Histogram => {
                let hist = self.hist.as_mut().expect("8-bit types have a histogram");
                order::histogram(&ext, shape.chords, m, pos, &mut out, hist)
            }
            Order::Ranked => unreachable!("taken above"),
        }
        matches!(pos, Positions::One { .. })
    }

    /// [`Order::Ranked`] for columns `a..a + m` of `line` into `acc[0]` or `double`, in pieces
    /// of at most [`ranked::piece`] columns: each from the band holding it, else a new band from
    /// this line on (a whole line takes the whole lines after it in the chunk while their rows
    /// fit), one band per piece of the line.
    fn ranked(
        &mut self,
        work: &Work<T>,
        chords: &[Vec<(usize, usize)>],
        (line, ahead): (usize, usize),
        a: usize,
        m: usize,
        pos: &Positions,
    ) {
        let plan = work.plan;
        let span = (plan.cmax - plan.cmin) as usize;
        let piece = ranked::piece(plan.slots.len(), span);
        let last = plan.shape.len() - 1;
        let pieces = m.div_ceil(piece);
        // A band per piece serves the chunk's next whole lines too; else one band, this line's.
        let banded = m == plan.len && ahead > 1 && pieces <= ranked::MAX_BANDS;
        let count = if banded { ahead } else { 1 };
        for (p, j0) in (0..m).step_by(piece).enumerate() {
            let mp = piece.min(m - j0);
            // Called only to build a band: the index of line `line + l`, from this line's on.
            let (here, mut idx) = (&self.idx, Vec::new());
            let (strides, cval) = (&work.input.strides, work.cval);
            let sources = |l: usize, out: &mut Vec<Option<isize>>| {
                match l {
                    0 => idx.clone_from(here),
                    _ => plan.next_line_index(&mut idx[..last]),
                }
                plan.sources(&idx[..last], strides, out)
            };
            let fill = |src, row: &mut [T]| {
                // SAFETY: `src` is a line of the input (`Plan::sources`).
                unsafe { fill_ext(work.input, plan, src, a + j0, row, cval) }
            };
            let mut out = Results {
                native: &mut self.acc[0][j0..j0 + mp],
                double: &mut self.double[j0..j0 + mp],
            };
            let slot = if banded { p } else { 0 };
            let (lines, cols) = ((line, count), (a + j0, mp, mp + span));
            self.bands
                .positions(slot, lines, cols, sources, fill, chords, pos, &mut out);
        }
    }

    /// Writes the segment's results: natively where the general path's C cast of the double
    /// would give the value back, else as doubles through the driver's own cast.
    fn write(&mut self, work: &Work<T>, a: usize, m: usize, native: bool) {
        let out = work.output;
        let stride = out.strides[out.shape.len() - 1];
        let p = self.out_ptr(work, a);
        if native && stores_natively(work) {
            if let Some(dst) = self.native_segment(work, a, m) {
                dst.copy_from_slice(&self.acc[0][..m]);
                return;
            }
            let mut q = p;
            for &v in &self.acc[0][..m] {
                // SAFETY: the output segment is valid (the caller's contract).
                unsafe { T::write(q, v) };
                q = q.wrapping_offset(stride);
            }
            return;
        }
        if native {
            for (d, v) in self.double.iter_mut().zip(&self.acc[0][..m]) {
                *d = v.to_f64();
            }
        }
        // SAFETY: as above.
        unsafe { out.dtype.write_line(p, stride, &self.double[..m]) };
    }
}

/// The bytes of minima a range's run of lines ([`Worker::range_block`]) holds: with the run's
/// maxima, within a core's L1 cache, from which the difference reads both back.
const RANGE_RUN_BYTES: usize = 16 << 10;

/// The lines of a range's run for lines of `bytes`: an even number (pairs of lines share their
/// rows' fold), at least 2, at most 64.
fn range_run(bytes: usize) -> usize {
    (RANGE_RUN_BYTES / bytes.max(1)).clamp(2, 64) & !1
}

/// Whether a result that is one of the input's values may be stored as it is: the output has
/// the input's dtype, and every value of it round-trips through double (the general path's C
/// cast of its double is then the value).
fn stores_natively<T: Elem>(work: &Work<T>) -> bool {
    work.output.dtype == work.input.dtype && T::ROUND_TRIPS
}

/// The extended input line `src` for output columns `a..a + m`, from the leftmost tap's column,
/// in the input's type; it stays valid until the cache's stamp moves on (the next segment).
fn ext_line<'c, T: Elem>(
    cache: &mut LineCache<Key, T>,
    work: &Work<T>,
    src: Option<isize>,
    a: usize,
    m: usize,
) -> &'c [T] {
    let plan = work.plan;
    let len = m + (plan.cmax - plan.cmin) as usize;
    let (input, cval) = (work.input, work.cval);
    // SAFETY: `src` is a line of the input (`Plan::sources`).
    let line = cache.get((src, a, m, 0, 0), len, |buf| unsafe {
        fill_ext(input, plan, src, a, buf, cval)
    });
    // SAFETY: the cache keeps the line's `len` values in place until its stamp moves on.
    unsafe { std::slice::from_raw_parts(line, len) }
}

/// `buf` = the input line `src` (`None`: `cval`) extended by the mode, from the leftmost tap's
/// column of output column `a` on.
///
/// # Safety
/// `src` must be the byte offset of a line of `input` (as [`Plan::sources`] gives).
unsafe fn fill_ext<T: Elem>(
    input: &RawArray,
    plan: &Plan,
    src: Option<isize>,
    a: usize,
    buf: &mut [T],
    cval: T,
) {
    let col0 = a as i64 + plan.cmin;
    // SAFETY: the caller's promise.
    unsafe {
        plan.fill_as(
            input,
            src,
            col0,
            buf,
            cval,
            |p, stride, dst| {
                if stride == std::mem::size_of::<T>() as isize {
                    let bytes = std::mem::size_of_val(dst);
                    std::ptr::copy_nonoverlapping(p, dst.as_mut_ptr() as *mut u8, bytes);
                    return;
                }
                let mut q = p;
                for d in dst {
                    *d = T::read(q);
                    q = q.wrapping_offset(stride);
                }
            },
            |p| T::read(p),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A range's runs hold about 16 KiB of minima, in an even number of lines from 2 to 64.
    #[test]
    fn range_runs_are_even_and_fill_the_budget() {
        assert_eq!(range_run(1024), 16, "u8 lines of 1024");
        assert_eq!(range_run(8192), 2, "f64 lines of 1024");
        assert_eq!(range_run(3000), 4, "5 lines fit, an even 4 run");
        assert_eq!(range_run(1 << 20), 2, "lines past the budget still pair");
        assert_eq!(range_run(1), 64);
        assert_eq!(range_run(0), 64);
    }
}
