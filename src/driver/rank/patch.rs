//! The windows the proof leaves out. Where a float input holds a NaN (or a `-0.0`, for a
//! statistic that could show a zero's sign), the rank algorithms still run over the whole output,
//! and only the output pixels whose windows read such a value are then recomputed by the general
//! engine, which runs the filter's own code there ([`pieces`] finds them). Where the filter's
//! NaN propagates ([`super::NanRule::Propagates`]), the windows reading a NaN are NaN, whatever
//! else they hold: those pixels are written NaN instead, without running the filter.
//!
//! Why every other pixel is exact: no algorithm of the executor lets a value reach a window that
//! does not read it. Van Herk/Gil-Werman's prefix and suffix extremes lie inside the window they
//! serve; a chord's extremes, a sorted column and an extended line are shared only by the windows
//! that contain them; a network reads its own window. A NaN only makes comparisons of the windows
//! holding it meaningless, and those windows are the ones recomputed. Ranks
//! ([`super::ranked`]) order all of a band's values by one total order, NaN included, so each
//! window's values keep their own order whatever other windows hold.
//!
//! The histogram algorithms run on 8-bit integers only, which hold neither value.

use super::super::array::RawArray;
use super::super::plan::Plan;
use super::exec::chords;
use super::facts::{self, Fate, Found, Watch};
use std::collections::HashMap;

/// Excluded values a run may hold, in units of the taps that read each: past
/// `total / (PATCH_SHARE * taps)` of them, recomputing their windows one segment at a time would approach the cost of
/// the general engine over the whole output, which then runs instead.
pub(crate) const PATCH_SHARE: usize = 8;

/// The most excluded values a run over `total` pixels with `taps` taps patches.
pub(crate) fn limit(total: usize, taps: usize) -> usize {
    total / (PATCH_SHARE * taps.max(1))
}

/// The most runs of consecutive NaNs whose windows a run over `total` pixels writes NaN, for a
/// footprint reading `lines` input lines per output line: [`pieces`] visits each run once per
/// output line that reads it, and past this many those visits would approach the pixels
/// themselves in number. A NaN region (an image's no-data) is a run per line it crosses.
pub(crate) fn nan_limit(total: usize, lines: usize) -> usize {
    total / (PATCH_SHARE * lines.max(1))
}

/// The output pixels whose windows read a value of fate `fate` that `watch` found, as ranges
/// `[p0, p1)` of pixels in C order, each within one line, sorted.
///
/// # Safety
/// The input must be valid memory at every element its shape and strides reach.
pub(crate) unsafe fn pieces(
    plan: &Plan,
    input: &RawArray,
    watch: &Watch,
    fate: Fate,
) -> Vec<(usize, usize)> {
    let last = plan.shape.len() - 1;
    let len = plan.len;
    // `Plan::sources` gives line numbers when the leading axes' strides count lines.
    let mut line_strides = vec![0isize; plan.shape.len()];
    let mut lines = 1isize;
    for d in (0..last).rev() {
        line_strides[d] = lines;
        lines *= plan.shape[d] as isize;
    }
    let chords = chords(plan);
    let (mut idx, mut srcs) = (vec![0; last], Vec::new());
    // The runs of excluded columns of each tainted input line, found once.
    let mut columns: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
    let (mut spans, mut out) = (Vec::new(), Vec::new());
    for line in 0..plan.lines {
        plan.line_index(line, &mut idx);
        plan.sources(&idx, &line_strides, &mut srcs);
        spans.clear();
        for (s, src) in srcs.iter().enumerate() {
            let Some(src) = src.map(|l| l as usize).filter(|&l| watch.tainted(fate, l)) else {
                continue;
            };
            let runs = columns.entry(src).or_insert_with(|| {
                // SAFETY: the caller's promise.
                unsafe { excluded(plan, input, src, fate.kinds(watch.rules)) }
            });
            for &(o, w) in &chords[s] {
                // Taps at columns `c0..c0 + w` from the pixel: pixel `j` reads column `q`
                // directly for `j` in `q - c0 - w + 1..=q - c0`, and so a run `qa..qb` for
                // `j` in `qa - c0 - w + 1..qb - c0`.
                let c0 = plan.cmin + o as i64;
                for &(qa, qb) in runs.iter() {
                    let lo = (qa as i64 - c0 - w as i64 + 1).max(0);
                    let hi = (qb as i64 - c0).min(len as i64);
                    if lo < hi {
                        spans.push((lo as usize, hi as usize));
                    }
                }
            }
            // Pixels near the ends also read columns the mode maps into the line: columns
            // within the footprint's width of an end (whatever the mode, or the line's length).
            let within = |i: usize| {
                let k = runs.partition_point(|&(qa, _)| qa <= i);
                k > 0 && i < runs[k - 1].1
            };
            let reach = (plan.cmax - plan.cmin) as usize + 1;
            let near_ends = runs.iter().any(|&(qa, qb)| qa < reach || qb + reach > len);
            let (jl, jr) = plan.interior();
            let ends = (0..jl).chain(jr..len).filter(|_| near_ends);
            for j in ends {
                let mut reads = chords[s]
                    .iter()
                    .flat_map(|&(o, w)| (0..w).map(move |t| plan.cmin + (o + t) as i64))
                    .filter(|&c| !(0..len as i64).contains(&(j as i64 + c)))
                    .filter_map(|c| plan.mode.map(j as i64 + c, len as i64));
                if reads.any(|i| within(i as usize)) {
                    spans.push((j, j + 1));
                }
            }
        }
        spans.sort_unstable();
        let base = line * len;
        let mut merged: Option<(usize, usize)> = None;
        for &(a, b) in &spans {
            merged = match merged {
                Some((ma, mb)) if a <= mb => Some((ma, mb.max(b))),
                Some((ma, mb)) => {
                    out.push((base + ma, base + mb));
                    Some((a, b))
                }
                None => Some((a, b)),
            };
        }
        out.extend(merged.map(|(a, b)| (base + a, base + b)));
    }
    out
}

/// The runs `[a, b)` of consecutive columns of input line `line` holding a value of the kinds
/// `which` holds, in order.
///
/// # Safety
/// As [`pieces`].
unsafe fn excluded(
    plan: &Plan,
    input: &RawArray,
    line: usize,
    which: Found,
) -> Vec<(usize, usize)> {
    let last = plan.shape.len() - 1;
    let mut idx = vec![0; last];
    plan.line_index(line, &mut idx);
    let offset: isize = (0..last).map(|d| idx[d] as isize * input.strides[d]).sum();
    let p = input.ptr.wrapping_offset(offset);
    let mut runs = Vec::new();
    let stride = input.strides[last];
    // SAFETY: the line's `len` elements are valid (the caller's promise).
    unsafe {
        facts::excluded_runs(input.dtype, p, plan.len, stride, which, |a, b| {
            runs.push((a, b))
        })
    };
    runs
}
