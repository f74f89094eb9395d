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

use super::super::plan::Plan;
use super::exec::chords;

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

/// The output pixels whose windows read an excluded value, given `runs[l]`, the sorted runs
/// `[a, b)` of columns of input line `l` holding one ([`super::facts::Watch::runs`]), as ranges
/// `[p0, p1)` of pixels in C order, each within one line, sorted.
pub(crate) fn pieces(plan: &Plan, runs: &[Vec<(usize, usize)>]) -> Vec<(usize, usize)> {
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
    let (mut spans, mut out) = (Vec::new(), Vec::new());
    let mut ends: Option<(Reads, Vec<(usize, usize)>)> = None;
    for line in 0..plan.lines {
        plan.line_index(line, &mut idx);
        plan.sources(&idx, &line_strides, &mut srcs);
        spans.clear();
        // The runs and chords of the slot last added: the next slot of a box (or of a no-data
        // region's lines, whose runs are equal) adds the same spans again, and is skipped.
        let mut previous: Option<Reads> = None;
        for (s, src) in srcs.iter().enumerate() {
            let Some(runs) = src
                .map(|l| runs[l as usize].as_slice())
                .filter(|r| !r.is_empty())
            else {
                continue;
            };
            let reads = (runs, &chords[s][..]);
            if previous == Some(reads) {
                continue;
            }
            previous = Some(reads);
            windows_reading(plan, runs, &chords[s], &mut spans);
            // The pixels near the ends depend on the runs and chords alone: lines reading
            // equal runs (a column of NaN, a no-data region) through equal chords share them.
            if ends.as_ref().is_none_or(|(r, _)| *r != reads) {
                ends = Some((reads, near_ends(plan, runs, &chords[s])));
            }
            spans.extend_from_slice(&ends.as_ref().expect("just set").1);
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

/// A source line's excluded runs and the chords they are read through.
type Reads<'a> = (&'a [(usize, usize)], &'a [(usize, usize)]);

/// Pushes onto `spans` the columns `[j0, j1)` of the output line whose windows read one of the
/// excluded `runs` of a source line directly through its `chords` (offset, width).
fn windows_reading(
    plan: &Plan,
    runs: &[(usize, usize)],
    chords: &[(usize, usize)],
    spans: &mut Vec<(usize, usize)>,
) {
    let len = plan.len;
    for &(o, w) in chords {
        // Taps at columns `c0..c0 + w` from the pixel: pixel `j` reads column `q`
        // directly for `j` in `q - c0 - w + 1..=q - c0`, and so a run `qa..qb` for
        // `j` in `qa - c0 - w + 1..qb - c0`.
        let c0 = plan.cmin + o as i64;
        for &(qa, qb) in runs {
            let lo = (qa as i64 - c0 - w as i64 + 1).max(0);
            let hi = (qb as i64 - c0).min(len as i64);
            if lo < hi {
                spans.push((lo as usize, hi as usize));
            }
        }
    }
}

/// The pixels `[j, j + 1)` near the line's ends whose windows read one of the excluded `runs`
/// of a source line through its `chords`, in columns the mode maps into the line.
fn near_ends(
    plan: &Plan,
    runs: &[(usize, usize)],
    chords: &[(usize, usize)],
) -> Vec<(usize, usize)> {
    let len = plan.len;
    let mut spans = Vec::new();
    // The mapped columns lie within the footprint's width of an end (whatever the mode, or the
    // line's length).
    let within = |i: usize| {
        let k = runs.partition_point(|&(qa, _)| qa <= i);
        k > 0 && i < runs[k - 1].1
    };
    let reach = (plan.cmax - plan.cmin) as usize + 1;
    if !runs.iter().any(|&(qa, qb)| qa < reach || qb + reach > len) {
        return spans;
    }
    let (jl, jr) = plan.interior();
    for j in (0..jl).chain(jr..len) {
        let mut reads = chords
            .iter()
            .flat_map(|&(o, w)| (0..w).map(move |t| plan.cmin + (o + t) as i64))
            .filter(|&c| !(0..len as i64).contains(&(j as i64 + c)))
            .filter_map(|c| plan.mode.map(j as i64 + c, len as i64));
        if reads.any(|i| within(i as usize)) {
            spans.push((j, j + 1));
        }
    }
    spans
}
