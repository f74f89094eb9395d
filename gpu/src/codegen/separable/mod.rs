//! Minimum, maximum and range (`max - min`) filters over boxes as one pass per axis, each
//! costing the box's extent along that axis per pixel instead of its area: a `k×k` minimum
//! reads `2k` values per pixel, not `k²`. This is the GPU's rank executor for the extremes (the
//! CPU's is `ndjit::driver::rank`); it is chosen only where [`plan`] proves it gives the
//! filter's result.
//!
//! # Why the result is the filter's, bit for bit
//!
//! The driver recognises the filter's IR as a minimum or maximum of the neighbourhood
//! ([`ndjit::driver::rank_stat`]; its proof is on `ndjit::driver::rank`). Over a box, the
//! extreme of the window is the extreme, along the last axis, of the extremes along the others,
//! and the boundary modes map each axis on its own, so each pass maps its own axis with scipy's
//! rules. The passes keep the input's own type (`(double)` is monotone on every dtype, so the
//! extreme of the values converts to the extreme of their doubles), and the last one converts
//! the result to double and casts it to the output dtype with the general kernel's own
//! [`elem::store`]. A range carries both extremes, each in a chain of its own, and the last pass
//! subtracts their doubles, as the IR's `Sub` does.
//!
//! Two kinds of float values are excluded by the proof: a NaN (NumPy's `np.min` returns it,
//! Python's `min` and a `<` loop keep it only when it comes first) and `-0.0` (which of two equal
//! zeros an extreme returns depends on where each sits). The first pass marks every value that is
//! either, every pass carries the mark on (a NaN of its own bits in the scratch arrays), and the
//! last pass sets, for each pixel whose window held one, the flag of the general kernel's thread
//! that covers that pixel. The general kernel then runs with [`super::KernelSpec::patch`]: its
//! threads whose flag is clear leave at once, the others compute their pixels with the filter's
//! own code. Integer inputs have neither value and need no patch.
//!
//! Where the filter's NaN propagates ([`NanRule::Propagates`]: `np.min`, `np.max`, `np.ptp`), a
//! window holding a NaN is NaN, whatever else it holds, so only `-0.0` is excluded: the passes
//! carry a NaN on as a second kind of mark that wins over the first, and write it to the output.
//! Images with scattered NaNs then run no patch at all (see [`MARK_F32`]). Between passes that
//! NaN is stored with bits above the mark's ([`kept`]), so that a later pass folds the stored
//! floats by their values and their bits, one instruction each ([`Bits`]).
//!
//! `cval` (constant mode) must be a value of the input's type whose double is `cval` bit for bit,
//! and not one of the excluded values; otherwise the general kernel runs alone.
//!
//! Statistics of the sorted window (NumPy's median and quantiles, `np.sort(x)[k]`) are no
//! extremes and have no passes: over a footprint within the last two axes (a box, a disk, any
//! mask) they are one kernel, [`select`], which selects each window's sorted positions by
//! bisection over ordered keys, with the same patch for the windows whose `-0.0` or NaN the
//! statistic's result would show.

pub mod select;
pub mod strip;
pub mod tile;

pub use strip::Strip;
pub use tile::Tile;

use super::stencil::{close_row_loop, grid_place, GridPlace};
use super::{elem, Dtype, KernelSpec, Mode};
use crate::pir::{Addr, BoolOp, Cls, Cmp, Func, Ins, Module, Param, Reg, Space, Src, T};
use ndjit::driver::{NanRule, RankForm, RankStat};

/// The statistic of the box a plan computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stat {
    Min,
    Max,
    /// `max - min`, the difference of the two extremes converted to double (the IR's `Sub`):
    /// both are carried through the passes, each in a chain of its own.
    Range,
    /// A statistic of the sorted window (NumPy's median and quantiles, `np.sort(x)[k]`),
    /// selected in one kernel over the window ([`select`]), not in passes. (The extremes of a
    /// footprint that is not a box are that kernel's too: its windows' least and largest keys.)
    Sorted(RankStat),
}

impl Stat {
    /// Whether windows holding a float the proof excludes run the filter's own code (the
    /// patch), given the filter's NaN rule. The extremes exclude `-0.0` (which of two equal
    /// zeros they return depends on where each sits) and NaN where the rule is the form's own.
    /// A sorted statistic excludes `-0.0` where the sign of a zero it picks shows in its result
    /// (not NumPy's median, which adds `0.0`), and NaN where its rule is its own (`np.sort`
    /// orders NaN last, keeping its bits); NumPy's median and quantiles are NaN wherever a
    /// value is, which the kernel computes.
    fn patches(self, nan: NanRule) -> bool {
        match self {
            Stat::Sorted(s) => s.sign_of_zero_matters() || nan == NanRule::OwnCode,
            _ => true,
        }
    }

    /// The extremes the passes carry, one chain each, in this order (none for a sorted
    /// statistic).
    fn chains(self) -> &'static [crate::pir::Bin] {
        use crate::pir::Bin;
        match self {
            Stat::Min => &[Bin::Min],
            Stat::Max => &[Bin::Max],
            Stat::Range => &[Bin::Min, Bin::Max],
            Stat::Sorted(_) => &[],
        }
    }

    /// How many arrays a stage reads and writes: one per chain, and a sorted statistic's one
    /// kernel reads the input and writes the output.
    pub fn chain_count(self) -> usize {
        self.chains().len().max(1)
    }
}

/// One pass: the extreme along `axis` (of the three the kernels see) of the values at offsets
/// `lo..=hi` from each pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pass {
    pub axis: usize,
    pub lo: i64,
    pub hi: i64,
}

/// How a box's statistic is computed: extremes in passes, sorted statistics in one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct SeparablePlan {
    pub stat: Stat,
    /// In the order they run; the first reads the input, the last writes the output.
    pub passes: Vec<Pass>,
    /// The type the passes compute in: the input's.
    pub elem: Dtype,
    /// Whether the input can hold values the proof excludes (floats), so that flagged pixels
    /// are recomputed by the general kernel.
    pub patch: bool,
    /// The filter's NaN rule: where it propagates, a window holding a NaN is NaN, which the
    /// passes compute, and only `-0.0` sends a window to the patch.
    pub nan: NanRule,
    /// Outputs per thread along each pass's axis (at most the window's extent along it; 0
    /// leaves it to measurement: [`AUTO_OUTPUTS`], or [`AUTO_TILE`]'s in a tile).
    pub outputs: u32,
    /// How the last two passes run where they are the image's columns and rows.
    pub joint: Joint,
    /// Bytes of shared memory a block may have on the target.
    pub shared: u64,
    /// A sorted statistic's footprint where it is not the whole box: its cells, row-major over
    /// the box's extents (those of the columns and the rows, the only axes it spans).
    pub mask: Option<Vec<bool>>,
}

/// How a plan runs a box's column and row passes, where they are the image's last two axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Joint {
    /// The measured choice: a strip ([`auto_strip`]) where one of at least [`STRIP_MIN_LANES`]
    /// lanes fits and serves the window, else a tile of [`AUTO_TILE`] up to [`TILE_MAX_TAPS`]
    /// rows, else a kernel per pass.
    Auto,
    /// A kernel per pass.
    Kernels,
    /// One kernel, a block per tile of this many rows per thread ([`Stage::Tile`]).
    Tile(u32),
    /// One kernel, its blocks walking down strips of columns ([`Stage::Strip`]).
    Strip(Strip),
}

/// One kernel of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// A pass on its own, reading and writing whole arrays.
    One(Pass),
    /// The passes along the columns (axis 1) and the rows (axis 2) in one kernel ([`tile`]):
    /// a block's row extremes kept in shared memory, so that the intermediate array never goes
    /// through DRAM.
    Tile { column: Pass, row: Pass, tile: Tile },
    /// The same two passes in one kernel whose blocks walk down strips of columns ([`strip`]),
    /// van Herk/Gil-Werman down the columns over a ring of row extremes in shared memory.
    Strip {
        column: Pass,
        row: Pass,
        strip: Strip,
    },
    /// A statistic of the sorted window of the box whose extents along the columns and the
    /// rows are `column` and `row` (one tap where the box has none along an axis), or of the
    /// plan's footprint within it ([`SeparablePlan::mask`]), selected in one kernel ([`select`]).
    Select { column: Pass, row: Pass },
}

impl SeparablePlan {
    /// The kernels the plan runs, in order.
    pub fn stages(&self) -> Vec<Stage> {
        if matches!(self.stat, Stat::Sorted(_)) || self.mask.is_some() {
            return vec![select::stage(&self.passes)];
        }
        let n = self.passes.len();
        let size = work_type(self.elem).bits() as u64 / 8;
        let chains = self.stat.chain_count();
        let joined = match self.passes[..] {
            [.., column, row] if (column.axis, row.axis) == (1, 2) => {
                let taps = column.taps();
                let outputs = match self.outputs {
                    0 => AUTO_TILE.outputs,
                    v => v,
                };
                let tile = |rows: u32| {
                    let want = (outputs.min(row.taps() as u32), rows);
                    Tile::fitting(want, taps, size, chains).map(|tile| Stage::Tile {
                        column,
                        row,
                        tile,
                    })
                };
                let strip = |s: Strip, shared: u64| {
                    Strip::fitting(s, taps, (size, chains), shared)
                        .filter(|strip| strip.serves((row.taps(), taps)))
                };
                let stage = |strip| Stage::Strip { column, row, strip };
                let measured = || {
                    let shared = self.shared.min(AUTO_STRIP_SHARED);
                    strip(auto_strip(taps, size), shared).filter(|s| s.lanes >= STRIP_MIN_LANES)
                };
                match self.joint {
                    Joint::Auto => measured().map(stage).or_else(|| {
                        (taps <= TILE_MAX_TAPS)
                            .then(|| tile(AUTO_TILE.rows))
                            .flatten()
                    }),
                    Joint::Kernels => None,
                    Joint::Tile(rows) => tile(rows),
                    Joint::Strip(s) => strip(s, self.shared).map(stage),
                }
            }
            _ => None,
        };
        let ones = n - 2 * joined.is_some() as usize;
        let mut stages: Vec<Stage> = self.passes[..ones].iter().map(|&p| Stage::One(p)).collect();
        stages.extend(joined);
        stages
    }
}

/// Outputs per thread along a pass's axis when the tuning leaves it open: measured with 1, 4, 8
/// and 16 (`gpu/device-run/passes-h200-2026-11-25.log`), 4 was the fastest at every size from
/// 5×5 on, 1.2–1.7 times as fast as 1 at 31×31.
pub const AUTO_OUTPUTS: u32 = 4;

/// The tile when the tuning leaves it open, and the longest column window it is chosen for,
/// by measurement (H200, 4096², the device checks' `passes` section, tiles of 1, 2 and 4 outputs
/// by 2, 4 and 8 rows per thread against a kernel per pass with 4 outputs;
/// `gpu/device-run/passes-h200-2026-11-30-tiles.log`): 2 by 4 was the fastest or within a few
/// percent of it from 5×5 on; the tile was ahead of two kernels up to 9×9 (float32 `np.min`
/// 9×9 0.149 ms against 0.158, uint8 0.092 against 0.113), level at 11×11 and behind from 15×15,
/// where its row extremes, computed again for the `k - 1` rows each tile reaches beyond its own,
/// cost more than the second kernel's pass over memory (31×31 float32 0.41 ms against 0.31).
/// Again with stored floats folded by their bits ([`Bits`]; `passes-h200-2026-11-30-tiles-bits.log`):
/// ahead up to 11×11 (float32 `np.min` 0.155 against 0.188), level at 15×15 for `np.min` float32
/// only. The strip has since overtaken it at every size ([`AUTO_STRIP`]): the tile serves
/// windows no strip does.
pub const AUTO_TILE: Tile = Tile {
    outputs: 2,
    rows: 4,
};
pub const TILE_MAX_TAPS: i64 = 11;

/// The strip when the tuning leaves it open ([`auto_strip`] sets its lanes and rows by the
/// window), chosen wherever at least [`STRIP_MIN_LANES`] lanes fit [`AUTO_STRIP_SHARED`], by
/// measurement (H200, 8192², milliseconds around each call,
/// `gpu/device-run/strip-probe-h200-2026-11-30.log`):
/// - against the tile: float32 `np.min` 9×9 0.363 against 0.365, float64 0.572 against 0.666,
///   float32 ranges 0.471 against 0.578. The tile was faster at 3×3 and 5×5 (0.29 against
///   0.33) than strips of 8 lanes by 124 rows, not than those of 4 lanes by runs fitted to the
///   window (H100, `gpu/device-run/strip-small-h100-2026-12-07.log`: float32 ranges 5×5 0.419
///   against 0.322 by 60 rows, float64 ranges 7×7 0.879 against 0.685, float32 `np.min` 3×3
///   0.308 against 0.286);
/// - against two kernels, with 8 lanes (4 for 8-byte values): float32 `np.min` 15×15 0.310
///   against 0.472, 21×21 0.346 against 0.546, 31×31 0.409 against 0.655; float64 15×15 0.613
///   against 0.796, 21×21 0.748 against 0.915, 31×31 1.121 against 1.094 (a tie); float32
///   ranges 15×15 0.453 against 0.747, 31×31 (4 lanes) 0.900 against 1.117; float64 ranges
///   15×15 1.363 against 1.688;
/// - behind them with fewer lanes or more shared memory: float64 ranges at 21×21 (86 KiB a
///   block) 2.46 against 1.71, float32 ranges at 31×31 with 8 lanes (127 KiB) 0.957 against
///   0.900 with 4, 2 lanes everywhere.
///
/// Groups of 8 row extremes a thread, where there were as many as its lanes, by measurement
/// (H100, 8192², `time_joints` on strips of 124 rows, groups of 4, 8, 16 and 32;
/// `gpu/device-run/strip-groups-h100-2026-12-07.log`): float32 ranges, whose two rings leave 4
/// lanes, 15×15 0.468 → 0.390 ms, 21×21 0.602 → 0.505, 31×31 0.898 → 0.676 (16 and 32 within
/// 3% of 8); float32 minima (8 lanes) no faster with 16 or 32; float64 minima with 4 lanes
/// mixed (8: 15×15 0.621 → 0.654, 31×31 1.178 → 1.097; 16 at 21×21 0.872 → 1.017), so 8-byte
/// values keep groups of 4. The automatic choice against the one before, three times each in
/// turn (`strip-groups-confirm-h100-2026-12-07.log`, medians): float32 ranges 21×21 0.616 →
/// 0.491 ms, 31×31 0.880 → 0.664, 9×9 and 15×15 within 3%, the unchanged kernels within 2%.
pub const AUTO_STRIP: Strip = Strip {
    lanes: 8,
    rows: 124,
    group: 8,
};
/// The most shared memory a block of the automatic strip takes: 64 KiB, three blocks an SM.
pub const AUTO_STRIP_SHARED: u64 = 64 * 1024;
pub const STRIP_MIN_LANES: u32 = 4;

/// The strip the plan asks for when the tuning leaves the joint open, for columns of `taps`
/// rows and values of `size` bytes (then fitted to [`AUTO_STRIP_SHARED`]):
/// - four lanes for 8-byte values: eight took 0.687 ms against 0.572 on float64 9×9 at 8192²,
///   their blocks' registers halving the blocks an SM holds; and groups of four
///   ([`AUTO_STRIP`]);
/// - four lanes, too, for columns of fewer than 5 taps, whose segments of `k` rows put a
///   barrier every few rows: at 3×3, 8192², float32 ranges 0.465 ms with eight against 0.324,
///   `np.min` 0.309 against 0.277 (`gpu/device-run/strip-rows-h100-2026-12-07.log`);
/// - runs of `8 · (k - 1)` rows, from [`strip::RUN_MIN_ROWS`] to [`AUTO_STRIP`]'s: at 8192²
///   runs of 28 rows were the fastest at 3×3 (float32 `np.min` 0.277 ms against 0.299 with
///   124), of 60 at 5×5 to 9×9 (float64 `np.min` 5×5 0.467 against 0.495), of 124 or 60 from
///   15×15 (float64 ranges 1.226 against 1.272).
fn auto_strip(taps: i64, size: u64) -> Strip {
    let (lanes, group) = match size > 4 || taps < 5 {
        true => (4, 4),
        false => (AUTO_STRIP.lanes, AUTO_STRIP.group),
    };
    let most = AUTO_STRIP.rows as i64;
    let rows = (8 * (taps - 1)).clamp(strip::RUN_MIN_ROWS as i64, most) as u32;
    Strip { lanes, rows, group }
}

impl Pass {
    /// The window's extent along the axis.
    pub fn taps(&self) -> i64 {
        self.hi - self.lo + 1
    }

    /// How many consecutive outputs along the axis one thread computes.
    pub fn outputs(&self, plan: &SeparablePlan) -> u32 {
        let v = match plan.outputs {
            0 => AUTO_OUTPUTS,
            v => v,
        };
        v.clamp(1, self.taps() as u32)
    }
}

/// The entry point of pass `i`.
pub fn pass_entry(i: usize) -> String {
    format!("ndjit_pass{i}")
}

/// Rows and outputs per thread of the general kernel that patches flagged pixels: the last
/// pass sets the flag of the thread covering a pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatchLayout {
    pub rows: u32,
    pub outputs: u32,
}

impl PatchLayout {
    /// The thread positions of the general kernel `k`.
    pub fn of(k: &super::Kernel) -> PatchLayout {
        PatchLayout {
            rows: k.rows_per_thread,
            outputs: k.outputs_per_thread,
        }
    }

    /// Bytes before the flags: a word set when any position is flagged, so that the patch
    /// kernel's threads leave at once on an image without NaN or `-0.0`.
    pub const HEADER: usize = 8;

    /// The address of the flag of the thread position whose first row is `row` (counted over
    /// the leading axes) and whose column group is `xg`, on rows of `w` columns. In 64 bits: an
    /// image may have more positions than 2^32.
    pub fn flag_address(&self, k: &mut Func, flags: Reg, (row, w): (Reg, Reg), xg: Reg) -> Reg {
        use crate::pir::Bin;
        let group = k.bin(Bin::Div, T::U32, row, Src::I(self.rows as i64));
        let cols = k.bin(Bin::Add, T::U32, w, Src::I(self.outputs as i64 - 1));
        let cols = k.bin(Bin::Div, T::U32, cols, Src::I(self.outputs as i64));
        let wide = |k: &mut Func, r: Reg| k.cvt(None, T::U64, T::U32, r);
        let (group, cols, xg) = (wide(k, group), wide(k, cols), wide(k, xg));
        let i = k.fma(T::U64, group, cols, xg);
        k.bin(Bin::Add, T::U64, flags, i)
    }

    /// Bytes of flags for an image of `shape` (three axes): the header, then one per thread
    /// position of the general kernel, row groups by column groups.
    pub fn flags(&self, shape: [usize; 3]) -> usize {
        Self::HEADER
            + (shape[0] * shape[1]).div_ceil(self.rows as usize)
                * shape[2].div_ceil(self.outputs as usize)
    }
}

/// The passes for `spec` when the filter computes `stat` and the proof above holds for it;
/// `None` leaves the run to the general kernel.
pub fn plan(
    form: Option<RankForm>,
    spec: &KernelSpec,
    (outputs, joint): (u32, Joint),
) -> Option<SeparablePlan> {
    let form = form?;
    let stat = match form.stat {
        RankStat::Min => Stat::Min,
        RankStat::Max => Stat::Max,
        RankStat::Range => Stat::Range,
        RankStat::Median | RankStat::Quantile(_) | RankStat::KthSorted(_) => {
            Stat::Sorted(form.stat)
        }
    };
    // The passes fold every cell of the box: over another footprint the statistic, extreme
    // or sorted, is the select kernel's, which counts the footprint's own cells.
    let whole = spec.mask.iter().all(|&b| b);
    if spec.validate().is_err() {
        return None;
    }
    if spec.mode == Mode::Constant && !holds_exactly(spec.input, spec.cval) {
        return None;
    }
    let r = spec.rank();
    let passes: Vec<Pass> = (0..r)
        .filter(|&a| spec.shape[a] > 1)
        .map(|a| {
            // scipy's window: `size // 2 + origin` before the pixel.
            let lo = -((spec.shape[a] / 2) as i64 + spec.origin[a] as i64);
            Pass {
                axis: 3 - r + a,
                lo,
                hi: lo + spec.shape[a] as i64 - 1,
            }
        })
        .collect();
    if passes.is_empty() {
        return None;
    }
    let shared = spec.target.shared as u64;
    let mask = (!whole).then(|| spec.mask.clone());
    let selected = matches!(stat, Stat::Sorted(_)) || mask.is_some();
    if selected && !select::serves(stat, spec.input, (&passes, mask.as_deref()), shared) {
        return None;
    }
    Some(SeparablePlan {
        stat,
        passes,
        elem: spec.input,
        patch: matches!(spec.input, Dtype::F32 | Dtype::F64) && stat.patches(form.nan),
        nan: form.nan,
        outputs,
        joint,
        shared,
        mask,
    })
}

/// Whether the plan is chosen when the tuning leaves it open, by measurement. Sorted statistics
/// past what the general kernel sorts in registers ([`select::MEDIAN_MIN_TAPS`],
/// [`select::SORTED_MIN_TAPS`]). The extremes' passes by measurement too (an H200,
/// 4096², the device checks' `passes` section, general kernel time over the passes' with
/// [`AUTO_OUTPUTS`]; `gpu/device-run/passes-h200-2026-11-29-guards.log`). `can_fail`: whether the
/// general kernel holds a check, which for these filters is NumPy's zero-sign guard
/// (`np.min`, `np.max`, `np.ptp`: [`ndjit::ir::zero_signs`]); its branch keeps every tap alive
/// past each output and spills the register window from 5×5 (128 registers). On integer images
/// the guard folds away ([`KernelSpec::buffer_values`]), and they follow the unguarded rows.
/// - Past [`super::taps::WINDOW_REGS`] the general kernel reads its taps from memory (9×9:
///   2.1–12.7).
/// - From 7×7 the passes win for every type (Python's `min`, float32: 1.71; `np.min` 4.1–6.5).
/// - Guarded, from 5×5 (float32 2.11, float64 2.43, uint8 2.19), and from 3×3 for one-byte
///   types (uint8 1.27; float32 0.74 and float64 0.70 keep the general kernel).
/// - Unguarded one-byte types from 5×5 (uint8 1.30, `passes-h200-2026-11-25.log`); Python's
///   `min` on float32 at 5×5 is a tie (1.00), and at 3×3 one kernel beats two (0.53).
pub fn chosen(spec: &KernelSpec, stat: RankStat, can_fail: bool) -> bool {
    let n = spec.filter_size();
    // Sorted statistics: past the general kernel's networks and sorts in registers.
    match stat {
        RankStat::Median => return n > select::MEDIAN_MIN_TAPS,
        RankStat::Quantile(_) | RankStat::KthSorted(_) => return n > select::SORTED_MIN_TAPS,
        _ => {}
    }
    // The extremes of a footprint that is not a box: the select kernel's least and largest
    // keys where the general kernel reads its taps from memory, and for one extreme of 8-byte
    // values (64-bit keys, two instructions a comparison) from past [`WIDE_EXTREME_MIN_TAPS`].
    if !spec.mask.iter().all(|&b| b) {
        let wide_one = spec.input.itemsize() == 8 && matches!(stat, RankStat::Min | RankStat::Max);
        return match wide_one {
            true => n > WIDE_EXTREME_MIN_TAPS,
            false => n > super::taps::WINDOW_REGS,
        };
    }
    let one_byte = spec.input.itemsize() == 1;
    n > super::taps::WINDOW_REGS
        || n >= 49
        || (n >= 25 && (can_fail || one_byte))
        || (n >= 9 && can_fail && one_byte)
}

/// The footprint size past which `np.min` or `np.max` of 8-byte values over a footprint that is
/// not a box runs the select kernel ([`chosen`]). Measured on an H100, 8192², disks, from Python
/// beside the general kernel of the run before (`gpu/device-run/window-disk-minmax-h100-2026-12-05-stop70.log`
/// and `-stop70-select.log`, ms): float64 `np.min` over 81 values (11×11) 2.33 against the
/// select kernel's 3.70, over 149 (15×15) 4.09 against 6.34, over 317 (21×21) 25.8 against 12.9
/// and over 709 (31×31) 57.5 against 29.1; the ranges of doubles, float32 and uint8 were faster
/// selected from 81 values on (float64 range 11×11 4.06 against 3.76, float32 `np.min` 2.54
/// against 1.49, uint8 2.51 against 0.72).
pub const WIDE_EXTREME_MIN_TAPS: usize = 200;

/// Whether `cval` is a value of `dt` whose double is `cval` bit for bit and which the proof
/// admits (no NaN, no `-0.0`).
pub fn holds_exactly(dt: Dtype, cval: f64) -> bool {
    if cval.is_nan() || cval.to_bits() == (-0.0f64).to_bits() {
        return false;
    }
    let back = match dt {
        Dtype::F64 => cval,
        Dtype::F32 => cval as f32 as f64,
        Dtype::Bool => (cval == 0.0 || cval == 1.0) as u8 as f64 * cval,
        Dtype::U8 => cval as u8 as f64,
        Dtype::I8 => cval as i8 as f64,
        Dtype::U16 => cval as u16 as f64,
        Dtype::I16 => cval as i16 as f64,
        Dtype::U32 => cval as u32 as f64,
        Dtype::I32 => cval as i32 as f64,
        Dtype::U64 => cval as u64 as f64,
        Dtype::I64 => cval as i64 as f64,
    };
    // Rust's `as` truncates and saturates, so a fraction or a value beyond the type comes back
    // different. For the 64-bit integers a double just past the top (2^63, 2^64) saturates to
    // the largest integer, whose double it is: the passes take that integer, and since `(double)`
    // is monotone the extreme they find converts to the one the general kernel finds.
    back.to_bits() == cval.to_bits()
}

/// The register type values of `dt` are compared in (8- and 16-bit loads are widened by their
/// signedness into 32-bit registers).
fn work_type(dt: Dtype) -> T {
    match dt {
        Dtype::Bool | Dtype::U8 | Dtype::U16 | Dtype::U32 => T::U32,
        Dtype::I8 | Dtype::I16 | Dtype::I32 => T::S32,
        Dtype::U64 => T::U64,
        Dtype::I64 => T::S64,
        Dtype::F32 => T::F32,
        Dtype::F64 => T::F64,
    }
}

/// The type integer immediates are moved and selected as: raw bits, so that the most negative
/// 64-bit value prints as a literal PTX accepts.
fn raw(wt: T) -> T {
    match wt {
        T::U32 | T::S32 => T::B32,
        T::U64 | T::S64 => T::B64,
        float => float,
    }
}

/// `v` as an immediate of the work type of `dt` (`v` holds exactly, see [`holds_exactly`]).
fn immediate(dt: Dtype, v: f64) -> Src {
    match dt {
        Dtype::F64 => Src::f64(v),
        Dtype::F32 => Src::S((v as f32).to_bits()),
        Dtype::U64 => Src::I(v as u64 as i64),
        _ => Src::I(v as i64),
    }
}

/// The value every window starts from: the identity of the extreme `op` in the work type.
fn identity(dt: Dtype, op: crate::pir::Bin) -> Src {
    let min = op == crate::pir::Bin::Min;
    match dt {
        Dtype::F64 => Src::f64(if min {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        }),
        Dtype::F32 => Src::S(
            if min {
                f32::INFINITY
            } else {
                f32::NEG_INFINITY
            }
            .to_bits(),
        ),
        Dtype::U64 => Src::I(if min { -1 } else { 0 }),
        Dtype::I64 => Src::I(if min { i64::MAX } else { i64::MIN }),
        Dtype::Bool | Dtype::U8 | Dtype::U16 | Dtype::U32 => {
            Src::I(if min { u32::MAX as i64 } else { 0 })
        }
        _ => Src::I(if min {
            i32::MAX as i64
        } else {
            i32::MIN as i64
        }),
    }
}

/// Unrolled up to this many values per pixel in the interior; a loop beyond.
const UNROLL: i64 = 64;

/// What one pass kernel reads and writes.
struct PassSpec<'a> {
    plan: &'a SeparablePlan,
    pass: Pass,
    first: bool,
    /// Outputs per thread along the axis.
    outputs: u32,
    /// The pass reads / writes with unit stride along its axis (the last axis of a C-contiguous
    /// array or of the packed scratch): neighbours are immediate offsets.
    unit: (bool, bool),
    /// The last pass: the output dtype, and the patch layout for floats.
    last: Option<(Dtype, Option<PatchLayout>)>,
    mode: Mode,
    cval: f64,
}

/// The module of a plan's passes, entries [`pass_entry`]`(i)`, each with parameters
/// `src, dst, flags: u64; d, h, w: s32; ss0..2, ds0..2: s64` (strides in elements). `layout`
/// places the flags where the plan patches.
pub fn generate(
    plan: &SeparablePlan,
    stages: &[Stage],
    spec: &KernelSpec,
    layout: Option<PatchLayout>,
) -> Module {
    let mut m = Module::new(spec.target.version, spec.target.sm);
    let n = stages.len();
    for (i, &stage) in stages.iter().enumerate() {
        // What a pass of kernel `i` reads (the input first, then the packed scratch) and
        // writes (the packed scratch, then the output).
        let pass_spec = |pass: Pass, outputs: u32, (first, last): (bool, bool)| PassSpec {
            plan,
            pass,
            first,
            outputs,
            unit: (
                pass.axis == 2 && (i > 0 || spec.contiguous),
                pass.axis == 2 && (!last || spec.contiguous),
            ),
            last: last.then_some((spec.output, layout.filter(|_| plan.patch))),
            mode: spec.mode,
            cval: spec.cval,
        };
        let last = i + 1 == n;
        m.funcs.push(match stage {
            Stage::One(pass) => {
                let ps = pass_spec(pass, pass.outputs(plan), (i == 0, last));
                build_pass(&ps, &pass_entry(i))
            }
            Stage::Tile { column, row, tile } => tile::build(
                (
                    &pass_spec(row, tile.outputs, (i == 0, false)),
                    &pass_spec(row, tile.outputs, (false, last)),
                ),
                (column, tile),
                &pass_entry(i),
            ),
            Stage::Strip { column, row, strip } => strip::build(
                (
                    &pass_spec(row, strip.group(row.taps()), (i == 0, false)),
                    &pass_spec(row, 1, (false, last)),
                ),
                (column, strip),
                &pass_entry(i),
            ),
            Stage::Select { column, row } => select::build(
                &pass_spec(row, 1, (true, true)),
                (column, row),
                &pass_entry(i),
            ),
        });
    }
    super::stencil::define_map(&mut m, spec.mode);
    m
}

fn pass_params() -> Vec<Param> {
    let p = |n: &str, t| Param { name: n.into(), t };
    let mut v: Vec<Param> = ["src", "dst", "flags"].map(|n| p(n, T::U64)).into();
    v.extend(["d", "h", "w"].map(|n| p(n, T::S32)));
    v.extend(["ss0", "ss1", "ss2", "ds0", "ds1", "ds2"].map(|n| p(n, T::S64)));
    // The second chain's arrays (a range's maxima; 0 for one extreme).
    v.extend(["src2", "dst2"].map(|n| p(n, T::U64)));
    v
}

/// A pass kernel's parameters ([`pass_params`]), loaded.
struct PassArgs {
    /// Per chain, the array read and the array written.
    src: [Reg; 2],
    dst: [Reg; 2],
    flags: Reg,
    /// The image's extents, its three axes.
    ext: [Reg; 3],
    /// Strides in elements of the array read and of the array written.
    ss: [Reg; 3],
    ds: [Reg; 3],
}

impl PassArgs {
    fn load(k: &mut Func) -> PassArgs {
        let p = |k: &mut Func, n: &str, t: T| k.ld(Space::Param, t, Addr::sym(n, 0));
        PassArgs {
            src: ["src", "src2"].map(|n| p(k, n, T::U64)),
            dst: ["dst", "dst2"].map(|n| p(k, n, T::U64)),
            flags: p(k, "flags", T::U64),
            ext: ["d", "h", "w"].map(|n| p(k, n, T::S32)),
            ss: ["ss0", "ss1", "ss2"].map(|n| p(k, n, T::S64)),
            ds: ["ds0", "ds1", "ds2"].map(|n| p(k, n, T::S64)),
        }
    }
}

/// A block's runs of consecutive rows down the image, counted over the leading axis (the tile's
/// and the strip's): the grid's second axis gives a block its first, and it loops by the
/// grid's height. The loop is uniform across the block, so that every thread reaches the same
/// barriers.
struct Runs {
    t: Reg,
    step: Reg,
    top: u32,
    exit: u32,
}

impl Runs {
    /// Opens the loop over runs of `rows` rows (at least 1); returns it with the run's plane
    /// and first row.
    fn open(k: &mut Func, ext: [Reg; 3], rows: Src) -> (Runs, Reg, Reg) {
        use crate::pir::{Bin, Special};
        let by = k.sreg(Special::CtaidY);
        let step = k.sreg(Special::NctaidY);
        // Unsigned: an extent of 2^31 - 1 and a run of up to 2^31 rows fit.
        let up = k.bin(Bin::Add, T::U32, ext[1], rows);
        let up = k.bin(Bin::Sub, T::U32, up, Src::I(1));
        let per_plane = k.bin(Bin::Div, T::U32, up, rows);
        let runs = k.bin(Bin::Mul, T::S32, ext[0], per_plane);
        let t = k.mov(T::U32, by);
        let (top, exit) = (k.new_label(), k.new_label());
        k.place(top);
        let done = k.setp(Cmp::Ge, T::U32, t, runs);
        k.bra_if(done, false, exit);
        let z = k.bin(Bin::Div, T::U32, t, per_plane);
        let zp = k.bin(Bin::Mul, T::S32, z, per_plane);
        let run = k.bin(Bin::Sub, T::S32, t, zp);
        let y0 = k.bin(Bin::Mul, T::S32, run, rows);
        (Runs { t, step, top, exit }, z, y0)
    }

    /// On to the block's next run; the kernel ends after the last.
    fn close(self, k: &mut Func) {
        let next = k.bin(crate::pir::Bin::Add, T::U32, self.t, self.step);
        k.set(T::U32, self.t, next);
        k.bra(self.top);
        k.place(self.exit);
        k.push(Ins::Exit);
    }
}

/// `ceil(n / v)` of an extent, unsigned: an axis may be 2^31 - 1 long.
fn groups_of(k: &mut Func, n: Reg, v: i64) -> Reg {
    use crate::pir::Bin;
    if v == 1 {
        return n;
    }
    let up = k.bin(Bin::Add, T::U32, n, Src::I(v - 1));
    k.bin(Bin::Div, T::U32, up, Src::I(v))
}

/// One pass: a thread per `outputs` consecutive elements along the pass's axis, rows spread
/// over the grid's second axis.
fn build_pass(ps: &PassSpec<'_>, name: &str) -> Func {
    use crate::pir::Bin;
    let mut k = Func::new_entry(name, pass_params());
    let a = PassArgs::load(&mut k);
    let axis = ps.pass.axis;
    let v = ps.outputs as i64;
    // The extents in thread positions: the pass's axis counted in groups of `v`.
    let mut groups = a.ext;
    groups[axis] = groups_of(&mut k, a.ext[axis], v);
    let exit = k.new_label();
    let GridPlace {
        x0: x,
        row,
        row_step: step,
        ..
    } = grid_place(&mut k, groups[2], 1, exit);
    let rows = k.bin(Bin::Mul, T::S32, groups[0], groups[1]);
    let top = k.new_label();
    k.place(top);
    let done = k.setp(Cmp::Ge, T::S32, row, rows);
    k.bra_if(done, false, exit);
    let z = k.bin(Bin::Div, T::U32, row, groups[1]);
    let zh = k.bin(Bin::Mul, T::S32, z, groups[1]);
    let y = k.bin(Bin::Sub, T::S32, row, zh);
    let mut coord = [z, y, x];
    if v > 1 {
        coord[axis] = k.bin(Bin::Mul, T::S32, coord[axis], Src::I(v));
    }
    let chains: Vec<Vec<Reg>> = ps
        .plan
        .stat
        .chains()
        .iter()
        .zip(a.src)
        .map(|(&op, from)| window_extremes(&mut k, ps, op, (from, &a.ss), (coord, a.ext), None))
        .collect();
    write_outputs(&mut k, ps, &a, coord, &chains);
    close_row_loop(&mut k, (row, step), top, exit);
    k
}

/// Writes the `outputs` results of each chain from `coord` along the pass's axis: to each
/// chain's scratch array, or (the last pass) one output, flagging the pixels to patch.
fn write_outputs(
    k: &mut Func,
    ps: &PassSpec<'_>,
    a: &PassArgs,
    coord: [Reg; 3],
    chains: &[Vec<Reg>],
) {
    use crate::pir::Bin;
    let axis = ps.pass.axis;
    let v = ps.outputs as i64;
    // The first output's address in each array written (the chains' scratch, or the output);
    // the others follow along the axis.
    let out_dt = ps.last.map_or(ps.plan.elem, |(o, _)| o);
    let osize = out_dt.itemsize() as i64;
    let off = byte_offset(k, coord, &a.ds, osize);
    let written = match ps.last {
        Some(_) => 1,
        None => chains.len(),
    };
    let mut at_addr: Vec<Reg> = a.dst[..written]
        .iter()
        .map(|&d| k.bin(Bin::Add, T::S64, d, off))
        .collect();
    let dstep = k.bin(Bin::Mul, T::S64, a.ds[axis], Src::I(osize));
    let stored = k.new_label();
    let vectors = ps.last.filter(|&(out, _)| {
        ps.unit.1 && (v * osize) % 16 == 0 && matches!(out, Dtype::F32 | Dtype::F64)
    });
    if let Some((out, layout)) = vectors {
        let fields = VectorFields {
            out,
            coord,
            ext: a.ext,
            flags: layout.map(|l| (l, a.flags)),
        };
        vector_store(k, ps, at_addr[0], fields, chains, stored);
    }
    for j in 0..v as usize {
        let mut at = coord;
        let skip = k.new_label();
        let addrs: Vec<Addr> = at_addr
            .iter_mut()
            .map(|r| match (j, ps.unit.1) {
                (0, _) => Addr::reg(*r, 0),
                (_, true) => Addr::reg(*r, j as i64 * osize),
                (_, false) => {
                    *r = k.bin(Bin::Add, T::S64, *r, dstep);
                    Addr::reg(*r, 0)
                }
            })
            .collect();
        if j > 0 {
            at[axis] = k.bin(Bin::Add, T::S32, coord[axis], Src::I(j as i64));
            let past = k.setp(Cmp::Ge, T::S32, at[axis], a.ext[axis]);
            k.bra_if(past, false, skip);
        }
        let vals: Vec<Reg> = chains.iter().map(|c| c[j]).collect();
        store(k, ps, (&addrs, a.flags), at, (a.ext[1], a.ext[2]), &vals);
        k.place(skip);
    }
    k.place(stored);
}

/// Declares one array of `bytes` shared by a block's threads per chain, named `{prefix}{c}`.
fn shared_per_chain(k: &mut Func, prefix: &str, chains: usize, bytes: u64) -> Vec<String> {
    let names: Vec<String> = (0..chains).map(|c| format!("{prefix}{c}")).collect();
    for n in &names {
        k.shared(n, bytes);
    }
    names
}

/// The byte offset of the element at `coord` in an array of `strides` (in elements of `size`
/// bytes), in 64 bits.
fn byte_offset(k: &mut Func, coord: [Reg; 3], strides: &[Reg; 3], size: i64) -> Reg {
    let mut off = k.mov(T::S64, Src::I(0));
    for (&c, &d) in coord.iter().zip(strides) {
        let c = k.cvt(None, T::S64, T::S32, c);
        off = k.fma(T::S64, c, d, off);
    }
    k.bin(crate::pir::Bin::Mul, T::S64, off, Src::I(size))
}

/// A value with, for floats, whether a value it was made from is one the proof excludes
/// (`bad`), and, where the filter's NaN propagates, whether one was a NaN (`nan`).
#[derive(Clone, Copy)]
struct Marked {
    v: Reg,
    bad: Option<Reg>,
    nan: Option<Reg>,
}

/// The bits a pass writes for a window that held a value the proof excludes, and for one that
/// held a NaN where the filter's NaN propagates: two quiet NaNs, so that the later passes carry
/// both on and can tell them apart. A NaN the filter returns wins over the mark: a window holding
/// one is NaN whatever else it holds (a `-0.0` too, and NumPy's zero-sign guard then has no zero
/// to choose). Where the NaN is the filter's own business ([`NanRule::OwnCode`]) every NaN is
/// excluded and read back as the mark.
const MARK_F32: u32 = 0x7FC0_0001;
const NAN_F32: u32 = 0x7FC0_0000;
const MARK_F64: u64 = 0x7FF8_0000_0000_0001;
const NAN_F64: u64 = 0x7FF8_0000_0000_0000;

/// For a float work type: the bit type of its registers, the mark as an integer of that type
/// (to compare bits with), and the mark and the NaN as float immediates (to select).
fn mark_bits(wt: T) -> (T, Src, [Src; 2]) {
    match wt {
        T::F64 => (
            T::B64,
            Src::I(MARK_F64 as i64),
            [Src::D(MARK_F64), Src::D(NAN_F64)],
        ),
        _ => (
            T::B32,
            Src::I(MARK_F32 as i64),
            [Src::S(MARK_F32), Src::S(NAN_F32)],
        ),
    }
}

/// How a pass folds values: the extreme in the input's work type, the marks or'ed.
struct Folder<'a> {
    ps: &'a PassSpec<'a>,
    wt: T,
    op: crate::pir::Bin,
}

impl Folder<'_> {
    fn new<'a>(ps: &'a PassSpec<'a>, op: crate::pir::Bin) -> Folder<'a> {
        Folder {
            ps,
            wt: work_type(ps.plan.elem),
            op,
        }
    }

    /// Whether the passes carry NaN as a result of its own (see [`Marked`]).
    fn nan_is_a_result(&self) -> bool {
        self.ps.plan.nan == NanRule::Propagates
    }

    /// A loaded value, marked. The first pass reads the input: a `-0.0` (whose bits are the
    /// sign bit alone) is excluded, and a NaN is excluded or, where it propagates, noted. The
    /// later passes read the marks back ([`MARK_F32`]).
    fn mark(&self, k: &mut Func, v: Reg) -> Marked {
        let wt = self.wt;
        if !wt.is_float() {
            return Marked {
                v,
                bad: None,
                nan: None,
            };
        }
        let nan = k.setp(Cmp::Nan, wt, v, v);
        let (bt, mark, _) = mark_bits(wt);
        let bits = |k: &mut Func| k.mov(bt, v);
        let sign = match wt {
            T::F64 => Src::I(i64::MIN),
            _ => Src::I(0x8000_0000),
        };
        let (bad, nan) = match (self.ps.first, self.nan_is_a_result()) {
            (true, true) => {
                let b = bits(k);
                (k.setp(Cmp::Eq, bt, b, sign), Some(nan))
            }
            (true, false) => {
                let b = bits(k);
                (
                    k.setp_comb(Cmp::Eq, bt, b, sign, BoolOp::Or, nan, false),
                    None,
                )
            }
            // A NaN that is not the mark is one the filter returns.
            (false, true) => {
                let b = bits(k);
                let real = k.setp_comb(Cmp::Ne, bt, b, mark, BoolOp::And, nan, false);
                (k.setp(Cmp::Eq, bt, b, mark), Some(real))
            }
            (false, false) => (nan, None),
        };
        Marked {
            v,
            bad: Some(bad),
            nan,
        }
    }

    fn combine(&self, k: &mut Func, a: Marked, b: Marked) -> Marked {
        let or = |k: &mut Func, x: Option<Reg>, y: Option<Reg>| match (x, y) {
            (Some(x), Some(y)) => Some(k.bin(crate::pir::Bin::Or, T::Pred, x, y)),
            (x, y) => x.or(y),
        };
        Marked {
            v: k.bin(self.op, self.wt, a.v, b.v),
            bad: or(k, a.bad, b.bad),
            nan: or(k, a.nan, b.nan),
        }
    }

    /// A fold kept in registers across a loop's iterations, starting from `start`, or from
    /// the identity of the extreme with nothing marked.
    fn running(&self, k: &mut Func, start: Option<Marked>) -> Marked {
        let float = self.wt.is_float();
        let clear = |p: Option<Reg>| p.map(Src::R).or(float.then_some(Src::I(0)));
        let v = start.map_or(identity(self.ps.plan.elem, self.op), |m| Src::R(m.v));
        let bad = clear(start.and_then(|m| m.bad));
        let nan = match self.nan_is_a_result() {
            true => clear(start.and_then(|m| m.nan)),
            false => None,
        };
        Marked {
            v: k.mov(raw(self.wt), v),
            bad: bad.map(|b| k.mov(T::Pred, b)),
            nan: nan.map(|b| k.mov(T::Pred, b)),
        }
    }

    /// Folds `x` into the registers of `run`.
    fn fold_into(&self, k: &mut Func, run: Marked, x: Marked) {
        let m = self.combine(k, run, x);
        k.set(raw(self.wt), run.v, m.v);
        for (d, b) in [(run.bad, m.bad), (run.nan, m.nan)] {
            if let (Some(d), Some(b)) = (d, b) {
                k.set(T::Pred, d, b);
            }
        }
    }

    /// `dst = m`: NaN where `m` held one the filter returns (then the window's result is NaN
    /// whatever else it holds), else the mark where it is marked, else its value.
    fn settle(&self, k: &mut Func, dst: Reg, m: Marked) {
        let wt = self.wt;
        let mut v = Src::R(m.v);
        if wt.is_float() {
            let (_, _, [mark, nan]) = mark_bits(wt);
            if let Some(bad) = m.bad {
                v = Src::R(k.selp(wt, mark, v, bad));
            }
            if let Some(n) = m.nan {
                v = Src::R(k.selp(wt, nan, v, n));
            }
        }
        k.set(raw(wt), dst, v);
    }
}

/// The extremes of the windows of the `outputs` elements from `coord` along the pass's axis,
/// NaN (the mark the later passes carry) where a window held a value the proof excludes.
///
/// In the interior the thread loads the `k + outputs - 1` values its windows cover once. With
/// `v` outputs (`v <= k`), window `j` covers values `j..j+k`: all windows share `v-1..k`, so
/// window `j` is the extreme of a suffix of the values before that shared middle, the middle,
/// and a prefix of those after it: about `k + 3v` operations for the `v` windows, not `k·v`.
///
/// Where the windows reach past the axis's ends, each coordinate goes through scipy's mapping,
/// or, given a block's table of mapped columns (`edge`: a strip's), through the table, the
/// values then folded as in the interior.
fn window_extremes(
    k: &mut Func,
    ps: &PassSpec<'_>,
    op: crate::pir::Bin,
    (src, ss): (Reg, &[Reg; 3]),
    (coord, ext): ([Reg; 3], [Reg; 3]),
    edge: Option<&strip::Columns>,
) -> Vec<Reg> {
    use crate::pir::Bin;
    let dt = ps.plan.elem;
    let fo = Folder::new(ps, op);
    let wt = fo.wt;
    let esize = dt.itemsize() as i64;
    let Pass { axis, lo, hi } = ps.pass;
    let v = ps.outputs as i64;
    let taps = hi - lo + 1;
    // The address of the element with the pass's axis left out.
    let mut off = k.mov(T::S64, Src::I(0));
    for a in (0..3).filter(|&a| a != axis) {
        let c = k.cvt(None, T::S64, T::S32, coord[a]);
        off = k.fma(T::S64, c, ss[a], off);
    }
    let off = k.bin(Bin::Mul, T::S64, off, Src::I(esize));
    let base = k.bin(Bin::Add, T::S64, src, off);
    let step = k.bin(Bin::Mul, T::S64, ss[axis], Src::I(esize));
    let results: Vec<Reg> = (0..v).map(|_| k.reg(wt.cls())).collect();
    let c = coord[axis];
    let n = ext[axis];
    let (boundary, joined) = (k.new_label(), k.new_label());
    let unrolled = taps + v - 1 <= UNROLL;
    // 16-byte vector loads along a unit-stride axis, where each thread's first output starts a
    // 16-byte chunk (`v` a multiple of the chunk's elements) and the row is aligned (checked
    // below): whole chunks, so the interior is widened to them.
    let vw = 16 / esize;
    let vector = unrolled && ps.unit.0 && matches!(esize, 4 | 8) && v % vw == 0;
    let (reach_lo, reach_hi) = match vector {
        true => (
            lo.div_euclid(vw) * vw,
            (hi + v - 1).div_euclid(vw) * vw + vw - 1,
        ),
        false => (lo, hi + v - 1),
    };
    let below = k.setp(Cmp::Lt, T::S32, c, Src::I(-reach_lo));
    let last = k.bin(Bin::Add, T::S32, c, Src::I(reach_hi));
    let outside = k.setp_comb(Cmp::Ge, T::S32, last, n, BoolOp::Or, below, false);
    k.bra_if(outside, false, boundary);
    // ---- interior: the values at constant offsets ----
    let cw = k.cvt(None, T::S64, T::S32, c);
    let first = k.fma(T::S64, cw, step, base);
    let load = |k: &mut Func, t: Src| {
        let a = k.fma(T::S64, step, t, first);
        let x = k.ld(Space::GlobalNc, elem::ptx_type(dt), Addr::reg(a, 0));
        fo.mark(k, x)
    };
    if unrolled {
        let ld = elem::ptx_type(dt);
        if vector {
            let scalar = k.new_label();
            let m = k.bin(Bin::And, T::B64, first, Src::I(15));
            let misaligned = k.setp(Cmp::Ne, T::B64, m, Src::I(0));
            k.bra_if(misaligned, false, scalar);
            let mut vals = Vec::new();
            for q in reach_lo.div_euclid(vw)..=reach_hi.div_euclid(vw) {
                let parts: Vec<Reg> = (0..vw).map(|_| k.reg(ld.cls())).collect();
                k.push(Ins::LdV {
                    sp: Space::GlobalNc,
                    t: ld,
                    d: parts.clone(),
                    addr: Addr::reg(first, q * 16),
                });
                for (i, &x) in parts.iter().enumerate() {
                    if (lo..hi + v).contains(&(q * vw + i as i64)) {
                        vals.push(x);
                    }
                }
            }
            fold_loaded(k, &fo, &vals, (v, taps), &results);
            k.bra(joined);
            k.place(scalar);
        }
        // Unit strides: immediate offsets; others: one address add per value.
        let mut at = k.fma(T::S64, step, Src::I(lo), first);
        let vals: Vec<Reg> = (lo..hi + v)
            .map(|t| {
                let a = match ps.unit.0 {
                    true => Addr::reg(first, t * esize),
                    false if t == lo => Addr::reg(at, 0),
                    false => {
                        at = k.bin(Bin::Add, T::S64, at, step);
                        Addr::reg(at, 0)
                    }
                };
                k.ld(Space::GlobalNc, ld, a)
            })
            .collect();
        fold_loaded(k, &fo, &vals, (v, taps), &results);
    } else {
        for (j, &r) in results.iter().enumerate() {
            let init = load(k, Src::I(lo + j as i64));
            let run = fo.running(k, Some(init));
            counted(k, T::S64, (lo + j as i64 + 1, hi + j as i64), |k, t| {
                let x = load(k, Src::R(t));
                fo.fold_into(k, run, x);
            });
            fo.settle(k, r, run);
        }
    }
    k.bra(joined);
    // ---- boundary: every coordinate through the block's table, or scipy's mapping ----
    k.place(boundary);
    if let Some(table) = edge.filter(|_| unrolled) {
        let vals = table.values(k, ps, (base, step), c);
        fold_loaded(k, &fo, &vals, (v, taps), &results);
        k.place(joined);
        return results;
    }
    for (j, &r) in results.iter().enumerate() {
        let run = fo.running(k, None);
        let cj = k.bin(Bin::Add, T::S32, c, Src::I(j as i64));
        counted(k, T::S32, (lo, hi), |k, t| {
            let at = k.bin(Bin::Add, T::S32, cj, t);
            let got = k.call(
                &super::stencil::map_fn(ps.mode),
                vec![at, n],
                &[Cls::B32, Cls::B32],
            );
            let cw = k.cvt(None, T::S64, T::S32, got[0]);
            let a = k.fma(T::S64, cw, step, base);
            let x = k.ld(Space::GlobalNc, elem::ptx_type(dt), Addr::reg(a, 0));
            let x = match ps.mode {
                Mode::Constant => {
                    let outside = k.setp(Cmp::Eq, T::S32, got[1], Src::I(0));
                    let cv = immediate(dt, ps.cval);
                    k.selp(raw(wt), cv, x, outside)
                }
                _ => x,
            };
            let x = fo.mark(k, x);
            fo.fold_into(k, run, x);
        });
        fo.settle(k, r, run);
    }
    k.place(joined);
    results
}

/// How windows' values fold: a join that is associative, commutative and idempotent (an
/// extreme, with its marks or'ed), and how a window's fold is stored.
trait Join {
    type V: Copy;
    fn join(&self, k: &mut Func, a: Self::V, b: Self::V) -> Self::V;
    /// `dst` = the fold `v`, as a pass stores it ([`Folder::settle`]).
    fn settle(&self, k: &mut Func, dst: Reg, v: Self::V);
}

impl Join for Folder<'_> {
    type V = Marked;
    fn join(&self, k: &mut Func, a: Marked, b: Marked) -> Marked {
        self.combine(k, a, b)
    }
    fn settle(&self, k: &mut Func, dst: Reg, v: Marked) {
        Folder::settle(self, k, dst, v)
    }
}

/// The extremes of the `v` windows of `taps` values each over `vals` (`v + taps - 1` values,
/// window `j` from value `j`) into `results`: the windows share values `v-1..taps`, folded
/// once; window `j` adds a suffix of the values before them and a prefix of those after.
fn fold_windows<J: Join>(
    k: &mut Func,
    fo: &J,
    vals: &[J::V],
    (v, taps): (i64, i64),
    results: &[Reg],
) {
    let (vu, tu) = (v as usize, taps as usize);
    debug_assert_eq!(vals.len(), vu + tu - 1);
    let mut middle = vals[vu - 1];
    for &x in &vals[vu..tu] {
        middle = fo.join(k, middle, x);
    }
    let mut suffix: Vec<Option<J::V>> = vec![None; vu];
    for j in (0..vu.saturating_sub(1)).rev() {
        suffix[j] = Some(match suffix[j + 1] {
            None => vals[j],
            Some(s) => fo.join(k, vals[j], s),
        });
    }
    let mut prefix: Vec<Option<J::V>> = vec![None; vu];
    for j in 1..vu {
        let x = vals[tu + j - 1];
        prefix[j] = Some(match prefix[j - 1] {
            None => x,
            Some(p) => fo.join(k, p, x),
        });
    }
    for j in 0..vu {
        let mut m = middle;
        for part in [suffix[j], prefix[j]].into_iter().flatten() {
            m = fo.join(k, part, m);
        }
        fo.settle(k, results[j], m);
    }
}

/// The most bytes of values a first pass tests before folding them ([`fold_loaded`]): the
/// test keeps them all live, and past this ptxas gave the float64 pass kernel at 31×31 114
/// registers where it had 40. Measured on the H200 (`passes` section, 4096², against the run
/// before: `gpu/device-run/passes-h200-2026-11-30-plain-folds.log` and `-strip-dynamic.log`):
/// the automatic choice 6% faster in the median over `np.min`/`min` of float32 and float64 at
/// k = 3…31 (float32 `np.min` 9×9 0.138 → 0.119 ms, 31×31 0.171 → 0.162; float64 5×5 0.177 →
/// 0.156, 15×15 0.252 → 0.225), but float64 21×21 0.264 → 0.274 and 31×31 0.371 → 0.393
/// (24 and 34 values of 8 bytes), two kernels at 31×31 0.384 → 0.432.
const TESTED_BYTES: usize = 160;

/// [`fold_windows`] over values as loaded: a later pass's floats with their bits ([`Bits`]: two
/// instructions a value), others with their marks ([`Folder::mark`]). The first pass's floats,
/// up to [`TESTED_BYTES`] of them, are tested for the values the proof excludes first, two
/// instructions a value into one predicate; where none holds one (almost every thread, on
/// most images) their windows fold by value alone ([`Plain`]), one instruction a fold where
/// the marks took three.
fn fold_loaded(k: &mut Func, fo: &Folder<'_>, xs: &[Reg], (v, taps): (i64, i64), results: &[Reg]) {
    let marked = |k: &mut Func| {
        let vals: Vec<Marked> = xs.iter().map(|&x| fo.mark(k, x)).collect();
        fold_windows(k, fo, &vals, (v, taps), results);
    };
    let tested = xs.len() * fo.ps.plan.elem.itemsize() <= TESTED_BYTES;
    if !fo.wt.is_float() || (fo.ps.first && !tested) {
        marked(k);
    } else if !fo.ps.first {
        let (bt, _, _) = mark_bits(fo.wt);
        let vals: Vec<(Reg, Reg)> = xs.iter().map(|&x| (x, k.mov(bt, x))).collect();
        fold_windows(k, &Bits { fo }, &vals, (v, taps), results);
    } else {
        let (special, done) = (k.new_label(), k.new_label());
        let any = excluded_any(k, fo.wt, xs);
        k.bra_if(any, false, special);
        fold_windows(k, &Plain { fo }, xs, (v, taps), results);
        k.bra(done);
        k.place(special);
        marked(k);
        k.place(done);
    }
}

/// Whether any of the floats `xs` (of work type `wt`) is a NaN or `-0.0`: one predicate, or'ed
/// into by each comparison.
fn excluded_any(k: &mut Func, wt: T, xs: &[Reg]) -> Reg {
    let (bt, _, _) = mark_bits(wt);
    let sign = match wt {
        T::F64 => Src::I(i64::MIN),
        _ => Src::I(0x8000_0000),
    };
    let mut any = k.mov(T::Pred, Src::I(0));
    for &x in xs {
        any = k.setp_comb(Cmp::Nan, wt, x, x, BoolOp::Or, any, false);
        let b = k.mov(bt, x);
        any = k.setp_comb(Cmp::Eq, bt, b, sign, BoolOp::Or, any, false);
    }
    any
}

/// The fold of floats that hold neither value the proof excludes: their extreme alone.
struct Plain<'a> {
    fo: &'a Folder<'a>,
}

impl Join for Plain<'_> {
    type V = Reg;
    fn join(&self, k: &mut Func, a: Reg, b: Reg) -> Reg {
        k.bin(self.fo.op, self.fo.wt, a, b)
    }
    fn settle(&self, k: &mut Func, dst: Reg, v: Reg) {
        k.set(raw(self.fo.wt), dst, v);
    }
}

/// `body(t)` for `t` in `lo..=hi` (`lo <= hi`), as a loop with a counter of type `t`.
fn counted(k: &mut Func, t: T, (lo, hi): (i64, i64), mut body: impl FnMut(&mut Func, Reg)) {
    let i = k.mov(t, Src::I(lo));
    let top = k.new_label();
    k.place(top);
    body(k, i);
    let next = k.bin(crate::pir::Bin::Add, t, i, Src::I(1));
    k.set(t, i, next);
    let more = k.setp(Cmp::Le, t, i, Src::I(hi));
    k.bra_if(more, false, top);
}

/// Stores the pass's result: in the input's type for the next pass, or converted and cast to
/// the output dtype by the last, which also flags the pixels to patch.
fn store(
    k: &mut Func,
    ps: &PassSpec<'_>,
    (addrs, flags): (&[Addr], Reg),
    coord: [Reg; 3],
    (h, w): (Reg, Reg),
    vals: &[Reg],
) {
    let dt = ps.plan.elem;
    match ps.last {
        None => {
            for ((a, &v), &op) in addrs.iter().zip(vals).zip(ps.plan.stat.chains()) {
                let v = kept(k, &Folder::new(ps, op), v);
                k.st(Space::Global, elem::ptx_type(dt), a.clone(), v);
            }
        }
        Some((out, layout)) => {
            let d = result(k, ps, vals);
            elem::store(k, out, addrs[0].clone(), d);
            if let Some(l) = layout {
                flag(k, ps, (l, flags), coord, (h, w), vals);
            }
        }
    }
}

/// Where the last pass's outputs of one thread lie, for [`vector_store`].
struct VectorFields {
    /// The output dtype, float32 or float64.
    out: Dtype,
    coord: [Reg; 3],
    ext: [Reg; 3],
    flags: Option<(PatchLayout, Reg)>,
}

/// The last pass's `v` outputs as 16-byte stores where they are a float output's consecutive
/// elements, all inside the row and the first 16-byte aligned; then a jump to `stored`. Elsewhere
/// it falls through to the element stores. One 16-byte store where four scalar ones, strided
/// across the warp, each wrote a quarter of the sectors they touched.
fn vector_store(
    k: &mut Func,
    ps: &PassSpec<'_>,
    at: Reg,
    f: VectorFields,
    chains: &[Vec<Reg>],
    stored: u32,
) {
    use crate::pir::Bin;
    let axis = ps.pass.axis;
    let v = ps.outputs as i64;
    let scalar = k.new_label();
    let end = k.bin(Bin::Add, T::S32, f.coord[axis], Src::I(v));
    let partial = k.setp(Cmp::Gt, T::S32, end, f.ext[axis]);
    let low = k.bin(Bin::And, T::B64, at, Src::I(15));
    let elementwise = k.setp_comb(Cmp::Ne, T::B64, low, Src::I(0), BoolOp::Or, partial, false);
    k.bra_if(elementwise, false, scalar);
    let mut values = Vec::with_capacity(v as usize);
    for j in 0..v as usize {
        let vals: Vec<Reg> = chains.iter().map(|c| c[j]).collect();
        values.push(result(k, ps, &vals));
        if let Some(flags) = f.flags {
            let mut at = f.coord;
            at[axis] = k.bin(Bin::Add, T::S32, f.coord[axis], Src::I(j as i64));
            flag(k, ps, flags, at, (f.ext[1], f.ext[2]), &vals);
        }
    }
    elem::store_vectors(k, f.out, at, &values);
    k.bra(stored);
    k.place(scalar);
}

/// The last pass's result as the IR computes it, in double: one extreme, or a range's maximum
/// minus its minimum.
fn result(k: &mut Func, ps: &PassSpec<'_>, vals: &[Reg]) -> Reg {
    let dt = ps.plan.elem;
    match vals {
        [v] => elem::to_f64(k, dt, *v),
        [lo, hi] => {
            let (lo, hi) = (elem::to_f64(k, dt, *lo), elem::to_f64(k, dt, *hi));
            k.bin(crate::pir::Bin::Sub, T::F64, hi, lo)
        }
        _ => unreachable!("one or two chains"),
    }
}

/// Sets the patch flag of the general kernel's thread covering the pixel at `coord` where the
/// chains' values carry the mark (the window held a value the proof excludes).
fn flag(
    k: &mut Func,
    ps: &PassSpec<'_>,
    (l, flags): (PatchLayout, Reg),
    coord: [Reg; 3],
    (h, w): (Reg, Reg),
    vals: &[Reg],
) {
    let skip = k.new_label();
    let (bt, mark, _) = mark_bits(work_type(ps.plan.elem));
    let bits = |k: &mut Func, v: Reg| k.mov(bt, v);
    let b0 = bits(k, vals[0]);
    let mut clean = k.setp(Cmp::Ne, bt, b0, mark);
    for &v in &vals[1..] {
        let b = bits(k, v);
        clean = k.setp_comb(Cmp::Ne, bt, b, mark, BoolOp::And, clean, false);
    }
    k.bra_if(clean, false, skip);
    set_flag(k, (l, flags), coord, (h, w));
    k.place(skip);
}

/// Sets the patch flag of the general kernel's thread covering the pixel at `coord`, and the
/// header word saying that one is set.
fn set_flag(k: &mut Func, (l, flags): (PatchLayout, Reg), coord: [Reg; 3], (h, w): (Reg, Reg)) {
    use crate::pir::Bin;
    // Rows counted over the leading axes, as the general kernel counts them.
    let row = k.fma(T::U32, coord[0], h, coord[1]);
    let col = k.bin(Bin::Div, T::U32, coord[2], Src::I(l.outputs as i64));
    let a = l.flag_address(k, flags, (row, w), col);
    k.st(
        Space::Global,
        T::U8,
        Addr::reg(a, PatchLayout::HEADER as i64),
        Src::I(1),
    );
    k.st(Space::Global, T::U32, Addr::reg(flags, 0), Src::I(1));
}

/// Where the filter's NaN propagates, a window made NaN is stored for the next pass (in its
/// scratch array, or a tile's shared memory) as this quiet NaN, whose bits are above the mark's
/// ([`Bits`]); the output gets the canonical one, [`NAN_F32`].
const NAN_ABOVE_MARK_F32: u32 = MARK_F32 + 1;
const NAN_ABOVE_MARK_F64: u64 = MARK_F64 + 1;

/// [`NAN_ABOVE_MARK_F32`] or `_F64` as a float immediate of the type `rt`.
fn above_mark(rt: T) -> Src {
    match rt {
        T::F64 => Src::D(NAN_ABOVE_MARK_F64),
        _ => Src::S(NAN_ABOVE_MARK_F32),
    }
}

/// The bits of a float immediate, as an integer to compare a value's bits with.
fn nan_bits(rt: T, v: Src) -> Src {
    match (rt, v) {
        (T::F64, Src::D(b)) => Src::I(b as i64),
        (_, Src::S(b)) => Src::I(b as i64),
        (_, other) => unreachable!("a float immediate: {other:?}"),
    }
}

/// The fold of float values a pass stored for the next ([`kept`]), each value with its bits and
/// each folded by one instruction, where a [`Folder`] reads each value's marks back (four
/// instructions) and ors them. A stored float is a value the proof admits (no NaN, no `-0.0`),
/// the mark, or [`NAN_ABOVE_MARK_F32`]: as signed integers both NaNs' bits are above every other float's
/// (a positive float's are at most infinity's, a negative one's are negative), and that NaN's
/// above the mark's, so the largest bits of a window say whether it held a NaN, else the mark;
/// the extreme of the values (PTX's `min` and `max` return the other operand of a NaN) is the
/// window's where it held neither.
struct Bits<'a> {
    fo: &'a Folder<'a>,
}

impl Bits<'_> {
    /// The signed integer type of the values' bits.
    fn signed(&self) -> T {
        match self.fo.wt {
            T::F64 => T::S64,
            _ => T::S32,
        }
    }
}

impl Join for Bits<'_> {
    type V = (Reg, Reg);

    fn join(&self, k: &mut Func, a: (Reg, Reg), b: (Reg, Reg)) -> (Reg, Reg) {
        (
            k.bin(self.fo.op, self.fo.wt, a.0, b.0),
            k.bin(crate::pir::Bin::Max, self.signed(), a.1, b.1),
        )
    }

    fn settle(&self, k: &mut Func, dst: Reg, (v, bits): (Reg, Reg)) {
        let wt = self.fo.wt;
        let (_, mark, [mark_f, nan_f]) = mark_bits(wt);
        let marked = k.setp(Cmp::Ge, self.signed(), bits, mark);
        let mut r = k.selp(wt, mark_f, v, marked);
        if self.fo.nan_is_a_result() {
            let nan = k.setp(Cmp::Ge, self.signed(), bits, nan_bits(wt, above_mark(wt)));
            r = k.selp(wt, nan_f, r, nan);
        }
        k.set(raw(wt), dst, r);
    }
}

/// `x` (a pass's settled result) as stored for the next pass: a float made NaN where the
/// filter's NaN propagates moved above the mark, for [`Bits`].
fn kept(k: &mut Func, fo: &Folder<'_>, x: Reg) -> Reg {
    let rt = raw(fo.wt);
    if !(fo.nan_is_a_result() && rt.is_float()) {
        return x;
    }
    let (bt, _, [_, nan]) = mark_bits(rt);
    let b = k.mov(bt, x);
    let is_nan = k.setp(Cmp::Eq, bt, b, nan_bits(rt, nan));
    k.selp(rt, above_mark(rt), x, is_nan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cval_must_be_a_value_of_the_type_and_admitted() {
        assert!(holds_exactly(Dtype::U8, 255.0));
        assert!(!holds_exactly(Dtype::U8, 256.0));
        assert!(!holds_exactly(Dtype::U8, 0.5));
        assert!(!holds_exactly(Dtype::I8, -129.0));
        assert!(holds_exactly(Dtype::I8, -128.0));
        assert!(!holds_exactly(Dtype::U16, -1.0));
        assert!(!holds_exactly(Dtype::I32, -0.0));
        assert!(!holds_exactly(Dtype::F64, -0.0));
        assert!(!holds_exactly(Dtype::F64, f64::NAN));
        assert!(holds_exactly(Dtype::F64, 0.1));
        assert!(!holds_exactly(Dtype::F32, 0.1));
        assert!(holds_exactly(Dtype::F32, 0.5));
        assert!(holds_exactly(Dtype::Bool, 1.0));
        assert!(holds_exactly(Dtype::Bool, 0.0));
        assert!(!holds_exactly(Dtype::Bool, 2.0));
        // The 64-bit integers: the double of i64::MAX is 2^63 and that of u64::MAX is 2^64, so
        // those doubles are held (an extreme taken with them converts to the same double).
        assert!(holds_exactly(Dtype::U64, 9.223_372_036_854_776e18));
        assert!(holds_exactly(Dtype::I64, 9.223_372_036_854_776e18));
        assert!(holds_exactly(Dtype::I64, -9.223_372_036_854_776e18));
        assert!(holds_exactly(Dtype::U64, 1.8446744073709552e19));
        assert!(!holds_exactly(Dtype::U64, 3.6893488147419103e19));
        assert!(!holds_exactly(Dtype::I64, -1.8446744073709552e19));
    }

    #[test]
    fn flag_addresses_do_not_wrap_at_32_bits() {
        // 70,000 row groups of 2^31 - 1 columns: past 2^32 positions.
        use crate::pir::emu::Emu;
        let mut m = Module::new((7, 8), 90);
        let param = |n: &str, t| Param { name: n.into(), t };
        let mut k = Func::new_entry(
            "probe",
            vec![
                param("out", T::U64),
                param("row", T::U32),
                param("w", T::U32),
                param("xg", T::U32),
            ],
        );
        let p = |k: &mut Func, n: &str, t: T| k.ld(Space::Param, t, Addr::sym(n, 0));
        let (out, row, w, xg) = (
            p(&mut k, "out", T::U64),
            p(&mut k, "row", T::U32),
            p(&mut k, "w", T::U32),
            p(&mut k, "xg", T::U32),
        );
        let layout = PatchLayout {
            rows: 3,
            outputs: 4,
        };
        let zero = k.mov(T::U64, Src::I(0));
        let a = layout.flag_address(&mut k, zero, (row, w), xg);
        k.st(Space::Global, T::U64, Addr::reg(out, 0), a);
        k.push(crate::pir::Ins::Exit);
        m.funcs.push(k);
        let mut emu = Emu::new(&m);
        let at = emu.alloc(8);
        let (rows, w, xg) = (3 * 70_000u64, (1u64 << 31) - 1, 5u64);
        emu.launch("probe", (1, 1), (1, 1), &[at, rows, w, xg])
            .unwrap();
        let got = u64::from_le_bytes(emu.read(at, 8).try_into().unwrap());
        assert_eq!(got, 70_000 * w.div_ceil(4) + xg);
        assert!(got > u32::MAX as u64);
    }

    fn form(stat: RankStat) -> Option<RankForm> {
        Some(RankForm {
            stat,
            nan: NanRule::Propagates,
        })
    }

    #[test]
    fn only_full_boxes_of_an_extreme_or_a_sorted_statistic_are_planned() {
        let spec = KernelSpec::boxed(2, 5);
        let p = plan(form(RankStat::Min), &spec, (1, Joint::Kernels)).expect("a box minimum");
        assert_eq!(p.stat, Stat::Min);
        assert_eq!(
            p.passes,
            vec![
                Pass {
                    axis: 1,
                    lo: -2,
                    hi: 2
                },
                Pass {
                    axis: 2,
                    lo: -2,
                    hi: 2
                }
            ]
        );
        assert!(p.patch);
        // A sorted statistic is one kernel over the box. The median patches nothing; where the
        // sign of a zero shows, or the NaN rule is the form's own, the floats' windows are patched.
        let median = plan(form(RankStat::Median), &spec, (1, Joint::Kernels)).expect("a median");
        assert!(!median.patch);
        assert_eq!(
            median.stages(),
            vec![Stage::Select {
                column: median.passes[0],
                row: median.passes[1]
            }]
        );
        let own = Some(RankForm {
            stat: RankStat::Median,
            nan: NanRule::OwnCode,
        });
        assert!(plan(own, &spec, (1, Joint::Kernels)).unwrap().patch);
        for stat in [RankStat::Quantile(0.3), RankStat::KthSorted(2)] {
            assert!(plan(form(stat), &spec, (1, Joint::Kernels)).unwrap().patch);
        }
        // Positions past the window, or a quantile that is NaN whatever the values, are not.
        for stat in [RankStat::KthSorted(25), RankStat::Quantile(f64::NAN)] {
            assert!(plan(form(stat), &spec, (1, Joint::Kernels)).is_none());
        }
        let range = plan(form(RankStat::Range), &spec, (1, Joint::Kernels)).expect("a box range");
        assert_eq!(range.stat.chain_count(), 2);
        assert!(plan(None, &spec, (1, Joint::Kernels)).is_none());
        // Over another footprint, an extreme is the select kernel's, with the footprint.
        let mut cross = spec.clone();
        cross.mask[0] = false;
        let max = plan(form(RankStat::Max), &cross, (1, Joint::Kernels)).expect("a max");
        assert_eq!(max.mask.as_deref(), Some(&cross.mask[..]));
        assert!(matches!(max.stages()[..], [Stage::Select { .. }]));
        let mut constant = spec.clone();
        constant.mode = Mode::Constant;
        constant.cval = f64::NAN;
        assert!(plan(form(RankStat::Max), &constant, (1, Joint::Kernels)).is_none());
        constant.cval = 3.0;
        assert!(plan(form(RankStat::Max), &constant, (1, Joint::Kernels)).is_some());
        // Origins shift the window; an axis of extent 1 needs no pass.
        let mut shifted = KernelSpec::boxed(2, 4);
        shifted.shape = vec![1, 4];
        shifted.mask = vec![true; 4];
        shifted.origin = vec![0, -1];
        let p = plan(form(RankStat::Max), &shifted, (1, Joint::Kernels)).unwrap();
        assert_eq!(
            p.passes,
            vec![Pass {
                axis: 2,
                lo: -1,
                hi: 2
            }]
        );
        let mut ints = KernelSpec::boxed(1, 3);
        ints.input = Dtype::U16;
        assert!(
            !plan(form(RankStat::Max), &ints, (1, Joint::Kernels))
                .unwrap()
                .patch
        );
    }

    #[test]
    fn the_column_and_row_passes_join_in_a_strip_or_a_tile_where_chosen_and_it_fits() {
        let stage = |k: usize, dt: Dtype, stat: RankStat, joint: Joint| {
            let mut spec = KernelSpec::boxed(2, k);
            spec.input = dt;
            let p = plan(form(stat), &spec, (0, joint)).unwrap();
            match p.stages()[..] {
                [s @ (Stage::Tile { .. } | Stage::Strip { .. })] => Some(s),
                [Stage::One(_), Stage::One(_)] => None,
                ref s => panic!("{s:?}"),
            }
        };
        let tiled = |k, dt, stat, joint| match stage(k, dt, stat, joint) {
            Some(Stage::Tile { tile, .. }) => Some(tile),
            _ => None,
        };
        let striped = |k, dt, stat| match stage(k, dt, stat, Joint::Auto) {
            Some(Stage::Strip { strip, .. }) => Some(strip),
            _ => None,
        };
        // Measured: a strip wherever 4 lanes or more fit, of 4 lanes below 5 rows and for
        // 8-byte values, in runs of 8 · (k - 1) rows from 16 to 124; two kernels beyond.
        let strip = |lanes, rows, group| Some(Strip { lanes, rows, group });
        assert_eq!(striped(3, Dtype::F32, RankStat::Min), strip(4, 16, 4));
        assert_eq!(striped(5, Dtype::F32, RankStat::Min), strip(8, 32, 8));
        assert_eq!(striped(9, Dtype::F32, RankStat::Min), strip(8, 64, 8));
        assert_eq!(striped(3, Dtype::F64, RankStat::Range), strip(4, 16, 4));
        assert_eq!(striped(17, Dtype::U8, RankStat::Max), Some(AUTO_STRIP));
        // 31×31 float32: 8 lanes in 63 KiB; float64 4 lanes in 63 KiB, and ranges of float32 4
        // lanes (8 take 127 KiB); float64 ranges at 21×21 would take 86 KiB with 4 lanes.
        assert_eq!(striped(31, Dtype::F32, RankStat::Min), Some(AUTO_STRIP));
        // Groups of 8 row extremes for 4-byte values whatever their lanes, of 4 for 8-byte
        // values.
        let four = |group| {
            Some(Strip {
                lanes: 4,
                group,
                ..AUTO_STRIP
            })
        };
        assert_eq!(striped(31, Dtype::F64, RankStat::Min), four(4));
        assert_eq!(striped(31, Dtype::F32, RankStat::Range), four(8));
        assert_eq!(stage(21, Dtype::F64, RankStat::Range, Joint::Auto), None);
        assert_eq!(striped(11, Dtype::F64, RankStat::Range), strip(4, 80, 4));
        assert_eq!(striped(9, Dtype::F64, RankStat::Min), strip(4, 64, 4));
        assert_eq!(stage(5, Dtype::F32, RankStat::Min, Joint::Kernels), None);
        // Rows of 62 taps, whose edge groups of 4 no strip unrolls (65 values): the tile, where
        // the column window is short enough.
        let mut wide = KernelSpec::boxed(2, 3);
        wide.shape = vec![3, 62];
        wide.mask = vec![true; 186];
        wide.origin = vec![0, 0];
        let p = plan(form(RankStat::Min), &wide, (0, Joint::Auto)).unwrap();
        assert!(
            matches!(p.stages()[..], [Stage::Tile { tile, .. }] if tile.rows == 3),
            "{:?}",
            p.stages()
        );
        // Asked for: at most the column window's rows, halved until the block's shared memory
        // holds its row extremes (31×31 float64 ranges, 2 chains of 64 values a row: 8·8 + 30
        // rows take 94 KiB, 8·4 + 30 take 62 KiB, 8·2 + 30 take 46 KiB, within 48 KiB).
        assert_eq!(
            tiled(3, Dtype::U8, RankStat::Max, Joint::Tile(8)),
            Some(Tile {
                outputs: 2,
                rows: 3
            })
        );
        assert_eq!(
            tiled(31, Dtype::F64, RankStat::Range, Joint::Tile(8)),
            Some(Tile {
                outputs: 2,
                rows: 2
            })
        );
        assert_eq!(
            Tile::fitting((4, 8), 31, 4, 1),
            Some(Tile {
                outputs: 4,
                rows: 8
            })
        );
        assert_eq!(
            Tile::fitting((4, 8), 31, 8, 2),
            Some(Tile {
                outputs: 2,
                rows: 2
            })
        );
        // Longer than a column fold unrolls, or than any tile holds: none.
        assert_eq!(Tile::fitting((4, 8), UNROLL + 1, 4, 1), None);
        assert_eq!(Tile::fitting((1, 1), 2000, 8, 2), None);
        // Three axes: the first pass on its own, the last two in a tile.
        let mut cube = KernelSpec::boxed(3, 3);
        cube.input = Dtype::I16;
        let p = plan(form(RankStat::Min), &cube, (0, Joint::Tile(4))).unwrap();
        assert!(matches!(
            p.stages()[..],
            [Stage::One(Pass { axis: 0, .. }), Stage::Tile { .. }]
        ));
    }

    #[test]
    fn a_strips_threads_take_groups_of_row_extremes_up_to_its_group_and_spans_of_its_lanes() {
        let s = |lanes, group| Strip {
            lanes,
            rows: 64,
            group,
        };
        // A power of two, at most the row window's taps and the strip's group.
        assert_eq!(
            [31, 16, 15, 9, 3, 1].map(|t| s(4, 16).group(t)),
            [16, 16, 8, 8, 2, 1]
        );
        assert_eq!(s(4, 12).group(31), 8);
        // At most the strip's columns, which its threads then take a value each of.
        assert_eq!((s(1, 64).group(57), s(1, 64).span(57)), (32, 32));
        // At least the lanes a row.
        assert_eq!([31, 9, 3].map(|t| s(4, 16).span(t)), [16, 8, 4]);
        assert_eq!(s(8, 2).span(31), 8);
    }

    #[test]
    fn a_strips_runs_shorten_to_fill_the_device_down_to_a_floor_and_never_lengthen() {
        let s = |lanes, rows| Strip {
            lanes,
            rows,
            group: lanes,
        };
        // 8192² with 4 lanes: 64 strips across, 8 · 132 blocks want 17 runs down each; the
        // strip's 124 rows leave 67.
        assert_eq!(s(4, 124).run([1, 8192, 8192], 132), 124);
        // 2048²: 16 strips across want 66 runs down each, of 31 rows.
        assert_eq!(s(4, 124).run([1, 2048, 2048], 132), 31);
        // 8 lanes: 8 strips across want 132 runs, of 15 rows: the floor of 16.
        assert_eq!(s(8, 124).run([1, 2048, 2048], 132), strip::RUN_MIN_ROWS);
        // Planes count as strips across: 9 planes of 1024² with 4 lanes want 15 runs a plane.
        assert_eq!(s(4, 124).run([9, 1024, 1024], 132), 68);
        // Never more than the strip's own rows, nor shorter than they where they are fewer
        // than the floor; the strip's rows where the device is not known.
        assert_eq!(s(4, 5).run([1, 1024, 1024], 132), 5);
        assert_eq!(s(4, 124).run([1, 64, 64], 0), 124);
        assert_eq!(s(4, 0).run([1, 64, 64], 0), 1);
        assert_eq!(s(4, u32::MAX).run([1, 64, 64], 0), i32::MAX as u32);
        // Empty and extreme extents stay in range.
        assert_eq!(s(4, 124).run([0, 0, 0], 132), strip::RUN_MIN_ROWS);
        let huge = (i32::MAX as usize, u32::MAX);
        assert_eq!(s(1, 124).run([1, huge.0, huge.0], huge.1), 124);
    }

    #[test]
    fn strips_keep_the_most_lanes_whose_rings_fit_a_blocks_shared_memory() {
        let strip = |lanes| Strip {
            lanes,
            rows: 64,
            group: 8,
        };
        // A ring keeps two segments of k rows of 32 · lanes values, and the block its columns'
        // table: float32 31×31 with 4 lanes is 62 rows of 128 values, 31 KiB (8 lanes, 62 KiB,
        // do not fit the 48 KiB a block declares statically).
        let fit =
            |taps, size, chains, shared| Strip::fitting(strip(8), taps, (size, chains), shared);
        const STATIC: u64 = crate::pir::STATIC_SHARED;
        assert_eq!(fit(31, 4, 1, STATIC), Some(strip(4)));
        // Two chains of them fit with 2 lanes, float64 ranges with one.
        assert_eq!(fit(31, 4, 2, STATIC), Some(strip(2)));
        assert_eq!(fit(31, 8, 2, STATIC), Some(strip(1)));
        assert_eq!(fit(5, 4, 1, STATIC), Some(strip(8)));
        // Lanes are a power of two, whose groups of row windows divide them.
        let lanes = |l| Strip::fitting(strip(l), 5, (4, 1), STATIC).map(|s| s.lanes);
        assert_eq!((lanes(3), lanes(6), lanes(0)), (Some(2), Some(4), Some(1)));
        // With the 227 KiB an H200's block may opt into: float32 ranges with 8 lanes (127
        // KiB), float64 ranges with 4.
        let h200 = crate::codegen::Target::SM90.shared as u64;
        assert_eq!(fit(31, 4, 2, h200), Some(strip(8)));
        assert_eq!(fit(31, 8, 2, h200), Some(strip(4)));
        assert_eq!(fit(2000, 8, 2, h200), None);
        // A strip unrolls a segment of its column window and its edge groups' row windows.
        assert!(strip(8).serves((57, 64)));
        assert!(!strip(8).serves((58, 64)) && !strip(8).serves((57, 65)));
        assert!(!Strip {
            group: 16,
            ..strip(8)
        }
        .serves((57, 64)));
        // A strip asked for gets the lanes that fit the target's shared memory (the spec's:
        // an H200's).
        let mut spec = KernelSpec::boxed(2, 31);
        spec.input = Dtype::F64;
        let p = plan(form(RankStat::Range), &spec, (0, Joint::Strip(strip(8)))).unwrap();
        assert_eq!(
            p.stages()[..],
            [Stage::Strip {
                column: Pass {
                    axis: 1,
                    lo: -15,
                    hi: 15
                },
                row: Pass {
                    axis: 2,
                    lo: -15,
                    hi: 15
                },
                strip: strip(4)
            }]
        );
    }
}
