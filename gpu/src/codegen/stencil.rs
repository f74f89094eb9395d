//! The kernel around the body: thread mapping, the interior window, scipy's boundary modes,
//! input conversion, output casts and failure records.

use super::body::{self, Body, Exits, Restart, Shared};
use super::taps::{self, TapMemory, Taps, WINDOW_REGS};
use super::{
    elem, sort, BoundValues, Dtype, Kernel, KernelSpec, Mode, REPLAY_ENTRY, REPLAY_OK, SITE_BITS,
};
use crate::error::{GpuError, Result};
use crate::pir::{
    Addr, AtomOp, Bin, Cls, Cmp, Func, Ins, Module, Param, Reg, Rnd, Space, Special, Src, T,
};
use ndjit::ir::{self, Func as IrFunc, Stmt};
use std::collections::{BTreeMap, BTreeSet, HashSet};

// `ndjit_stencil` itself: its row loop, interior and boundary paths (`ndjit_replay` is
// `build_replay`'s).
mod main_kernel;

/// The footprint over three axes (leading axes of size 1 for 1-d and 2-d images).
struct Geo {
    /// Per tap, in scipy's buffer order: the offset of its input coordinate per axis.
    taps: Vec<[i64; 3]>,
    /// How far the window reaches below / above the output coordinate, per axis.
    lo: [i64; 3],
    hi: [i64; 3],
}

impl Geo {
    fn new(spec: &KernelSpec) -> Geo {
        let r = spec.rank();
        let mut f = [1usize; 3];
        let mut o = [0isize; 3];
        for a in 0..r {
            f[3 - r + a] = spec.shape[a];
            o[3 - r + a] = spec.origin[a];
        }
        let shift: Vec<i64> = (0..3).map(|a| (f[a] / 2) as i64 + o[a] as i64).collect();
        let mut taps = Vec::new();
        let mut k = 0;
        for kz in 0..f[0] {
            for ky in 0..f[1] {
                for kx in 0..f[2] {
                    // The mask is over the original rank; the padded axes have one entry.
                    if spec.mask[k] {
                        taps.push([
                            kz as i64 - shift[0],
                            ky as i64 - shift[1],
                            kx as i64 - shift[2],
                        ]);
                    }
                    k += 1;
                }
            }
        }
        let mut lo = [0i64; 3];
        let mut hi = [0i64; 3];
        for a in 0..3 {
            lo[a] = taps.iter().map(|t| -t[a]).max().unwrap_or(0).max(0);
            hi[a] = taps.iter().map(|t| t[a]).max().unwrap_or(0).max(0);
        }
        Geo { taps, lo, hi }
    }
}

/// What the outputs-and-rows policy looks at in a filter body (scanned once).
struct Traits {
    loops: bool,
    sorts: bool,
    keeps: bool,
    minmax: bool,
    calls: bool,
    size: usize,
}

impl Traits {
    fn of(func: &IrFunc) -> Traits {
        fn scan(stmts: &[Stmt], t: &mut Traits) {
            for s in stmts {
                match s {
                    Stmt::Loop { .. } => t.loops = true,
                    Stmt::ArrayOp(..) => t.sorts = true,
                    Stmt::Fill { keep: Some(_), .. } => t.keeps = true,
                    Stmt::Reduce {
                        op: ir::ReduceOp::Min | ir::ReduceOp::Max,
                        ..
                    } => t.minmax = true,
                    _ => {}
                }
                ir::stmt_blocks(s, |b| scan(b, t));
            }
        }
        let mut t = Traits {
            loops: false,
            sorts: false,
            keeps: false,
            minmax: false,
            calls: ir::block_has_call(&func.body),
            size: ir::block_size(&func.body),
        };
        scan(&func.body, &mut t);
        t
    }
}

/// Outputs per thread when the spec leaves it to us. Measured on an H200 (8192², see the
/// benchmark): each thread should cover 16 bytes of a row (two f64, four f32), which the
/// vector loads then read in one instruction; more outputs per thread lose coalescing.
fn auto_outputs(t: &Traits, spec: &KernelSpec) -> u32 {
    let per16 = match spec.input.itemsize() {
        8 => 2,
        _ => 4,
    };
    if t.loops || t.keeps || t.size > 3000 || t.calls {
        1
    } else if t.sorts || t.size > 600 {
        2
    } else if t.minmax && five_wide(spec) {
        // Min/max over wide windows: adjacent outputs share column partial results (ptxas
        // computes the identical instruction sequences once), so more outputs per thread pay;
        // measured best at 4 for both float64 and float32 (5x5 on an H200).
        4
    } else {
        per16
    }
}

/// A footprint at least five wide.
fn five_wide(spec: &KernelSpec) -> bool {
    *spec.shape.last().unwrap_or(&1) >= 5
}

/// The pair-median plan when the filter's IR holds ndjit's median network over all the taps of
/// a full box footprint (2-d, or 3-d one plane deep).
fn pair_median_plan(func: &IrFunc, geo: &Geo, spec: &KernelSpec) -> Option<sort::PairMedian> {
    if !spec.mask.iter().all(|&b| b)
        || geo.taps.iter().any(|t| t[0] != 0)
        || !has_tap_median(&func.body, geo.taps.len())
    {
        return None;
    }
    let rows = spec.shape[spec.rank().saturating_sub(2)..spec.rank() - 1]
        .iter()
        .product::<usize>()
        .max(1);
    let cols = spec.shape[spec.rank() - 1];
    if rows * cols != geo.taps.len() {
        return None;
    }
    sort::PairMedian::new(rows, cols)
}

/// The median shortcuts of a thread's outputs, where the filter is a box median
/// ([`pair_median_plan`]): two adjacent outputs sort the values their windows share once (only
/// the positions that can matter), see `sort::PairMedian`. Four outputs are two such pairs: over
/// an image of 16-bit values ([`median_lanes`]) both pairs' networks run at once, one pair in
/// each 16-bit lane ([`lane_medians`]); otherwise one after the other, sharing the window.
fn median_hints(
    k: &mut Func,
    sh: &Shared,
    geo: &Geo,
    spec: &KernelSpec,
    (v, nr): (i64, i64),
    (window, window32): (&Window, &Window),
) -> Vec<Option<body::MedianHint>> {
    let Some(plan) = pair_median_plan(sh.func, geo, spec).filter(|_| nr == 1 && (v == 2 || v == 4))
    else {
        return vec![None; v as usize];
    };
    let cols = BoxCols::of(geo);
    if let Some(t) = median_lanes(spec).filter(|_| v == 4) {
        let medians = lane_medians(k, t, &plan, &cols, window32);
        return medians.map(|m| Some(body::MedianHint::Done(m))).to_vec();
    }
    // Medians sort the float32 values where the image has them (see `Body::median_network`).
    let float32 = !window32.is_empty();
    let pairs = (&plan, &cols, v);
    // Keys pay from 25 values: ptxas's SASS at two outputs a thread, from the first load to the
    // first store without the cold exact branch, 5×5 377 → 282 instructions an output and 7×7
    // 877 → 560; 3×3 the same count in more registers. A count, not yet a time on a GPU.
    if !float32 && sh.network == body::NetworkStyle::HighKey && geo.taps.len() >= 25 {
        let halves: BTreeMap<(i64, i64), (Reg, Reg)> = window
            .iter()
            .filter(|(&(plane, _, _), _)| plane == 0)
            .map(|(&(_, dy, c), &r)| ((dy, c), body::high_key(k, r)))
            .collect();
        let step = |k: &mut Func, v: &mut [Reg], i: usize, j: usize| {
            body::exchange_by(k, (Bin::Min, Bin::Max, T::S32), v, i, j)
        };
        return pair_hints(
            k,
            pairs,
            |c| halves[&c].0,
            step,
            |cands, own, cells| {
                body::MedianHint::Keyed(body::Keyed {
                    cands,
                    own,
                    plan: plan.clone(),
                    window: cells.iter().map(|c| halves[c]).collect(),
                })
            },
        );
    }
    let values = if float32 { window32 } else { window };
    let step = sh.median_exchange(float32);
    pair_hints(
        k,
        pairs,
        |(dy, c)| values[&(0, dy, c)],
        step,
        |cands, own, _| body::MedianHint::Pair {
            cands,
            own,
            plan: plan.clone(),
            float32,
        },
    )
}

/// The hints of a thread's pairs of outputs (`v` outputs, two by two): each pair's shared cells,
/// made values by `at`, sorted once by `step` down to their candidates; each output's own
/// column made values too, and with the cells of its window handed to `hint`.
fn pair_hints(
    k: &mut Func,
    (plan, cols, v): (&sort::PairMedian, &BoxCols, i64),
    at: impl Fn((i64, i64)) -> Reg,
    step: impl Fn(&mut Func, &mut [Reg], usize, usize),
    hint: impl Fn(Vec<Reg>, Vec<Reg>, Vec<(i64, i64)>) -> body::MedianHint,
) -> Vec<Option<body::MedianHint>> {
    let values = |cells: &[(i64, i64)]| -> Vec<Reg> { cells.iter().map(|&c| at(c)).collect() };
    let mut hints = Vec::new();
    for p in (0..v).step_by(2) {
        let shared = cols.shared(p);
        let cands = plan.candidates(values(&shared), |v, i, j| step(k, v, i, j));
        for own in cols.own(p) {
            let cells = shared.iter().chain(&own).copied().collect();
            hints.push(Some(hint(cands.clone(), values(&own), cells)));
        }
    }
    hints
}

/// The medians (doubles) of a thread's four outputs over an image of 16-bit values: the pair of
/// outputs 0 and 1 in the low 16 bits of each register of lane type `t`, the pair 2 and 3 in the
/// high ones, so that every `min`/`max` of the pairs' networks serves both.
fn lane_medians(
    k: &mut Func,
    t: T,
    plan: &sort::PairMedian,
    cols: &BoxCols,
    window32: &Window,
) -> [Reg; 4] {
    let mut ints: BTreeMap<(i64, i64), Reg> = BTreeMap::new();
    // The values at `cells` (of the first pair) packed with those two columns right of them.
    let mut packed = |k: &mut Func, cells: Vec<(i64, i64)>| -> Vec<Reg> {
        cells
            .iter()
            .map(|&(dy, c)| {
                let [lo, hi] = [c, c + 2].map(|c| {
                    *ints.entry((dy, c)).or_insert_with(|| {
                        // The float32 holds the integer exactly.
                        k.cvt(Some(Rnd::Rzi), T::S32, T::F32, window32[&(0, dy, c)])
                    })
                });
                elem::pack16(k, t, lo, hi)
            })
            .collect()
    };
    let shared = packed(k, cols.shared(0));
    let own = cols.own(0).map(|cells| packed(k, cells));
    let step = (Bin::Min, Bin::Max, t);
    let cands = plan.candidates(shared, |v, i, j| body::exchange_by(k, step, v, i, j));
    let [a, b] = own.map(|own| {
        let m = plan.median(&cands, own, |v, i, j| body::exchange_by(k, step, v, i, j));
        elem::unpack16(k, t, m)
    });
    [a.0, b.0, a.1, b.1]
}

/// The columns of a box median's windows, relative to the thread's first output.
struct BoxCols {
    c0: i64,
    c1: i64,
    rows: Vec<i64>,
}

impl BoxCols {
    fn of(geo: &Geo) -> BoxCols {
        let mut rows: Vec<i64> = geo.taps.iter().map(|t| t[1]).collect();
        rows.sort();
        rows.dedup();
        BoxCols {
            c0: geo.taps.iter().map(|t| t[2]).min().unwrap(),
            c1: geo.taps.iter().map(|t| t[2]).max().unwrap(),
            rows,
        }
    }

    /// The values shared by the pair whose first output is `p` columns right of the thread's
    /// first, in the order `sort::PairMedian` sorts them.
    fn shared(&self, p: i64) -> Vec<(i64, i64)> {
        let cols = self.c0 + 1 + p..=self.c1 + p;
        self.rows
            .iter()
            .flat_map(|&dy| cols.clone().map(move |c| (dy, c)))
            .collect()
    }

    /// The own columns of that pair's two outputs, the left one first.
    fn own(&self, p: i64) -> [Vec<(i64, i64)>; 2] {
        [self.c0 + p, self.c1 + 1 + p].map(|c| self.rows.iter().map(|&dy| (dy, c)).collect())
    }
}

/// Whether a box median's kernel runs two pairs of outputs a thread ([`median_hints`]): in
/// 16-bit lanes ([`median_lanes`]), or for float32 boxes up to 9 wide side by side, sharing the
/// window's loads (measured on an H200, 8192²: float32 7×7 1.78 → 1.68–1.74 ms; 11×11 and
/// float64 slower).
fn four_medians(func: &IrFunc, geo: &Geo, spec: &KernelSpec) -> bool {
    let float32 = spec.input == Dtype::F32 && spec.shape[spec.rank() - 1] <= 9;
    (float32 || median_lanes(spec).is_some()) && pair_median_plan(func, geo, spec).is_some()
}

/// The lanes a box median's two pairs of outputs run in: the image's values fit 16 bits and the
/// target has `min.u16x2`.
fn median_lanes(spec: &KernelSpec) -> Option<T> {
    elem::lanes16(spec.input).filter(|_| spec.target.has_minmax_16x2())
}

/// The most taps a register window holds for this kernel: [`WINDOW_REGS`] doubles, or twice as
/// many taps for a median of an image that float32 holds exactly, whose network reads only the
/// float32 values (`Body::median_network`).
fn window_capacity(func: &IrFunc, spec: &KernelSpec, n: usize) -> usize {
    if elem::exact_in_f32(spec.input) && has_tap_median(&func.body, n) {
        2 * WINDOW_REGS
    } else {
        WINDOW_REGS
    }
}

/// Whether the body holds a median network over the `n` taps in order (odd `n`).
fn has_tap_median(stmts: &[Stmt], n: usize) -> bool {
    stmts.iter().any(|s| {
        let here = matches!(s, Stmt::MedianNetwork { elems, .. }
            if elems.len() == n && n % 2 == 1 && ir::network::is_footprint(elems));
        let mut nested = false;
        ir::stmt_blocks(s, |b| nested |= has_tap_median(b, n));
        here || nested
    })
}

/// Rows per thread when the spec leaves it to us: more than one only for min/max bodies over
/// footprints several rows tall and wide, where the rows' windows overlap (measured on an H200,
/// see the benchmark's `NDJIT_BENCH_R`).
fn auto_rows(t: &Traits, spec: &KernelSpec, outputs: u32) -> u32 {
    let rank = spec.rank();
    let tall = rank >= 2 && spec.shape[rank - 2] >= 3;
    let simple = !(t.loops || t.sorts || t.keeps || t.calls) && t.size <= 600;
    if t.minmax && simple && tall && five_wide(spec) && outputs == 4 {
        AUTO_ROWS
    } else {
        1
    }
}

/// The measured best for wide min/max windows (see `auto_rows`): 4 outputs × 3 rows per thread
/// in blocks of 32×4 threads with registers capped at 128 (`.minnctapersm 2` of 256 threads),
/// 0.47 ms for a 5×5 float64 minimum on 8192² on an H200, against 0.64 ms for 4×1.
const AUTO_ROWS: u32 = 3;
const AUTO_ROWS_BLOCK: (u32, u32) = (32, 4);

/// The shape chosen for the several-row tile when its register window does not fit under the
/// cap: 2 outputs × [`AUTO_ROWS`] rows, uncapped, in the default blocks. Measured on an H100
/// (8192², `gpu/device-run/tiles-h100-2026-12-05.log`), against the capped 4×3 that spilled:
/// NumPy's guarded `np.min` over a 7×7 disk of doubles 1.476 → 1.102 ms, the range over a 9×9
/// disk 7.616 → 2.465, `np.min` over a 5×5 box of doubles 0.788 → 0.707.
const SPILL_OUTPUTS: u32 = 2;

/// Whether the register window of `outputs` × `rows` outputs fits the capped tile: the
/// window's values (one register each where float32 holds the image's values, else a double's
/// two) at most [`TILE_WORDS`], or [`GUARDED_TILE_WORDS`] where the body checks (NumPy's
/// zero-sign guard keeps every tap alive past the outputs). The limits are ptxas's (sm_90,
/// spill stores at 128 registers): unchecked, a 5×5 box's 56 doubles (112 words) fit; checked,
/// a 7×7 disk's 70 float32 values fit (28 bytes of spills for the range) and the same box's
/// doubles do not (128 bytes), nor a 9×9 disk's 100 float32 values (172–400 bytes).
fn tile_fits(geo: &Geo, spec: &KernelSpec, checks: bool, (outputs, rows): (u32, u32)) -> bool {
    let cells: BTreeSet<[i64; 3]> = geo
        .taps
        .iter()
        .flat_map(|t| {
            (0..rows as i64)
                .flat_map(move |r| (0..outputs as i64).map(move |v| [t[0], t[1] + r, t[2] + v]))
        })
        .collect();
    let words = if elem::exact_in_f32(spec.input) { 1 } else { 2 };
    let most = if checks {
        GUARDED_TILE_WORDS
    } else {
        TILE_WORDS
    };
    cells.len() * words <= most
}

const TILE_WORDS: usize = 112;
const GUARDED_TILE_WORDS: usize = 72;

pub fn generate(func: &IrFunc, bound: &BoundValues, spec: &KernelSpec) -> Result<Kernel> {
    let geo = Geo::new(spec);
    let traits = Traits::of(func);
    // Past what a register window holds, taps are read from memory (see `taps`): one output
    // per thread, nothing shared between outputs.
    let large = geo.taps.len() > window_capacity(func, spec, geo.taps.len());
    let outputs = match spec.outputs_per_thread {
        _ if large => 1,
        0 if four_medians(func, &geo, spec) => 4,
        0 => auto_outputs(&traits, spec),
        v => v.clamp(1, 16),
    };
    // A 1-d image has one row: nothing to share vertically.
    let rows = match (spec.rank(), spec.rows_per_thread) {
        _ if large => 1,
        (1, _) => 1,
        (_, 0) => auto_rows(&traits, spec, outputs),
        (_, r) => r.clamp(1, 8),
    };
    // The automatic several-row choice comes with its measured block shape and register cap
    // where its register window fits under the cap, else a narrower tile without the cap.
    let mut tuned = spec.rows_per_thread == 0 && rows > 1;
    let mut outputs = outputs;
    if tuned && !tile_fits(&geo, spec, func.can_fail(), (outputs, rows)) {
        tuned = false;
        if spec.outputs_per_thread == 0 {
            outputs = SPILL_OUTPUTS;
        }
    }
    let mut local: HashSet<u32> = HashSet::new();
    let mut buffer_local = false;
    for _ in 0..func.arrays.len() + 3 {
        let mut sh = Shared::new(func, bound, spec.native_minmax);
        sh.network = spec.network;
        sh.input = spec.input;
        sh.nan_minmax = spec.target.has_nan_minmax();
        sh.local = local.clone();
        sh.buffer_local = buffer_local;
        let built = main_kernel::build(&mut sh, &geo, spec, (outputs, rows, large), tuned)
            .and_then(|main| {
                let can_fail = sh.fails;
                build_replay(&mut sh, &geo, spec).map(|r| (main, r, can_fail))
            });
        match built {
            Ok((main, replay, can_fail)) => {
                // Two modules: the replay kernel is only compiled when a pixel fails.
                let mut modules = [
                    (main, Module::new(spec.target.version, spec.target.sm)),
                    (replay, Module::new(spec.target.version, spec.target.sm)),
                ]
                .map(|(f, mut m)| {
                    m.funcs.push(f);
                    for g in &sh.globals {
                        m.add_global(g.clone());
                    }
                    for f in sh.math.iter() {
                        crate::math::emit(&mut m, *f);
                    }
                    if geo.taps.iter().any(|t| t.iter().any(|&d| d != 0)) {
                        define_map(&mut m, spec.mode);
                    }
                    m
                });
                let replay = std::mem::replace(
                    &mut modules[1],
                    Module::new(spec.target.version, spec.target.sm),
                );
                let main = std::mem::replace(
                    &mut modules[0],
                    Module::new(spec.target.version, spec.target.sm),
                );
                return Ok(Kernel {
                    module: main,
                    replay,
                    outputs_per_thread: outputs,
                    rows_per_thread: rows,
                    block: if tuned { AUTO_ROWS_BLOCK } else { (32, 8) },
                    filter_size: geo.taps.len(),
                    can_fail,
                });
            }
            Err(Restart::Local(a)) => {
                if !local.insert(a) {
                    break;
                }
            }
            Err(Restart::Buffer) => {
                if buffer_local {
                    break;
                }
                buffer_local = true;
            }
            Err(Restart::Unsupported(what)) => return Err(GpuError::Unsupported(what.into())),
        }
    }
    Err(GpuError::Unsupported(
        "could not place the filter's scratch arrays".into(),
    ))
}

fn params(replay: bool) -> Vec<Param> {
    let mut p = vec![];
    for n in ["in", "out", "err"] {
        p.push(Param {
            name: n.into(),
            t: T::U64,
        });
    }
    for n in ["d", "h", "w"] {
        p.push(Param {
            name: n.into(),
            t: T::S32,
        });
    }
    for n in ["is0", "is1", "is2", "os0", "os1", "os2"] {
        p.push(Param {
            name: n.into(),
            t: T::S64,
        });
    }
    if replay {
        p.push(Param {
            name: "pixel".into(),
            t: T::U64,
        });
    }
    p
}

/// Registers holding the kernel parameters.
struct Args {
    inp: Reg,
    out: Reg,
    err: Reg,
    d: Reg,
    h: Reg,
    w: Reg,
    is: [Reg; 3],
    os: [Reg; 3],
}

fn load_args(k: &mut Func) -> Args {
    let p = |k: &mut Func, n: &str, t: T| k.ld(Space::Param, t, Addr::sym(n, 0));
    Args {
        inp: p(k, "in", T::U64),
        out: p(k, "out", T::U64),
        err: p(k, "err", T::U64),
        d: p(k, "d", T::S32),
        h: p(k, "h", T::S32),
        w: p(k, "w", T::S32),
        is: [
            p(k, "is0", T::S64),
            p(k, "is1", T::S64),
            p(k, "is2", T::S64),
        ],
        os: [
            p(k, "os0", T::S64),
            p(k, "os1", T::S64),
            p(k, "os2", T::S64),
        ],
    }
}

fn wide(k: &mut Func, r: Reg) -> Reg {
    k.cvt(None, T::S64, T::S32, r)
}

/// Exit registers and labels for one body instance.
fn exits(k: &mut Func, details: bool) -> Exits {
    Exits {
        ok: k.new_label(),
        ret: k.reg(Cls::F64),
        fail: k.new_label(),
        site: k.reg(Cls::B64),
        a: k.reg(Cls::B64),
        b: k.reg(Cls::B64),
        details,
    }
}

/// Records a failure of `pixel` (s64): atomic minimum of `pixel << SITE_BITS | site`.
fn record_failure(k: &mut Func, err: Reg, pixel: Reg, site: Reg) {
    let key = k.bin(Bin::Shl, T::B64, pixel, Src::I(SITE_BITS as i64));
    let key = k.bin(Bin::Or, T::B64, key, site);
    let d = k.reg(Cls::B64);
    k.push(Ins::Atom {
        op: AtomOp::Min,
        t: T::U64,
        d,
        addr: Addr::reg(err, 0),
        a: Src::R(key),
    });
}

/// scipy's mapping of coordinate `c` on an axis of length `n` (both s32); returns the in-range
/// coordinate to read, and for constant mode whether `c` was inside.
fn map_coord(k: &mut Func, mode: Mode, c: Reg, n: Reg) -> (Reg, Option<Reg>) {
    let neg = k.setp(Cmp::Lt, T::S32, c, Src::I(0));
    let over = k.setp(Cmp::Ge, T::S32, c, n);
    let nm1 = k.bin(Bin::Sub, T::S32, n, Src::I(1));
    match mode {
        Mode::Nearest | Mode::Constant => {
            let a = k.bin(Bin::Max, T::S32, c, Src::I(0));
            let r = k.bin(Bin::Min, T::S32, a, nm1);
            if mode == Mode::Constant {
                let inside = k.bin(Bin::Or, T::Pred, neg, over);
                let inside = k.un(crate::pir::Un::Not, T::Pred, inside);
                (r, Some(inside))
            } else {
                (r, None)
            }
        }
        Mode::Wrap => {
            let rem = k.bin(Bin::Rem, T::S32, c, n);
            let p = k.setp(Cmp::Lt, T::S32, rem, Src::I(0));
            let plus = k.bin(Bin::Add, T::S32, rem, n);
            (k.selp(T::S32, plus, rem, p), None)
        }
        Mode::Reflect => {
            // The driver's mapping (`Mode::map`): with period 2n, r = c mod 2n (Euclidean);
            // r >= n ? 2n - 1 - r : r. (scipy's own loop differs only at c = -4n, -6n ...,
            // where it reads outside the line; the driver follows the period there too.)
            let sz2 = k.bin(Bin::Add, T::S32, n, n);
            let rem = k.bin(Bin::Rem, T::S32, c, sz2);
            let p = k.setp(Cmp::Lt, T::S32, rem, Src::I(0));
            let plus = k.bin(Bin::Add, T::S32, rem, sz2);
            let r = k.selp(T::S32, plus, rem, p);
            let ge = k.setp(Cmp::Ge, T::S32, r, n);
            let v = k.bin(Bin::Sub, T::S32, sz2, r);
            let v = k.bin(Bin::Sub, T::S32, v, Src::I(1));
            (k.selp(T::S32, v, r, ge), None)
        }
        Mode::Mirror => {
            let small = k.setp(Cmp::Le, T::S32, n, Src::I(1));
            let sz2 = k.bin(Bin::Add, T::S32, nm1, nm1);
            // A length-1 axis has sz2 = 0: divide by 1 instead (the result is discarded).
            let sz2d = k.bin(Bin::Max, T::S32, sz2, Src::I(1));
            // Below: c = sz2 * (-c / sz2) + c; c <= 1 - n ? c + sz2 : -c
            let mc = k.un(crate::pir::Un::Neg, T::S32, c);
            let q = k.bin(Bin::Div, T::S32, mc, sz2d);
            let t = k.fma(T::S32, sz2, q, c);
            let one_m_n = k.bin(Bin::Sub, T::S32, Src::I(1), n);
            let le = k.setp(Cmp::Le, T::S32, t, one_m_n);
            let a = k.bin(Bin::Add, T::S32, t, sz2);
            let b = k.un(crate::pir::Un::Neg, T::S32, t);
            let below = k.selp(T::S32, a, b, le);
            // Above: c -= sz2 * (c / sz2); if c >= n { c = sz2 - c }
            let q2 = k.bin(Bin::Div, T::S32, c, sz2d);
            let prod = k.bin(Bin::Mul, T::S32, sz2, q2);
            let u = k.bin(Bin::Sub, T::S32, c, prod);
            let ge = k.setp(Cmp::Ge, T::S32, u, n);
            let v = k.bin(Bin::Sub, T::S32, sz2, u);
            let above = k.selp(T::S32, v, u, ge);
            let r = k.selp(T::S32, above, c, over);
            let r = k.selp(T::S32, below, r, neg);
            (k.selp(T::S32, Src::I(0), r, small), None)
        }
        alias => unreachable!("{alias:?}: KernelSpec::validate admits only modes as applied"),
    }
}

/// The name of the coordinate-mapping device function of a mode.
pub(super) fn map_fn(mode: Mode) -> String {
    format!("ndjit_map_{}", mode.name())
}

/// Defines `ndjit_map_<mode>(c, n) -> (coordinate, inside)` (a function, so that the boundary
/// path calls one copy of the division-heavy mapping instead of inlining it per offset).
pub(super) fn define_map(m: &mut Module, mode: Mode) {
    if m.has_func(&map_fn(mode)) {
        return;
    }
    let mut f = Func::new_func(&map_fn(mode), &[Cls::B32, Cls::B32], &[Cls::B32, Cls::B32]);
    let (c, n) = (f.args[0], f.args[1]);
    let (r, inside) = map_coord(&mut f, mode, c, n);
    let ins = match inside {
        Some(p) => f.selp(T::S32, Src::I(1), Src::I(0), p),
        None => f.mov(T::S32, Src::I(1)),
    };
    f.push(Ins::Ret(vec![r, ins]));
    m.funcs.push(f);
}

/// The neighbourhood of the output at `(z, y, x)` (s32 registers) through the boundary rules:
/// one f64 register per tap.
fn gather(k: &mut Func, a: &Args, geo: &Geo, spec: &KernelSpec, coord: [Reg; 3]) -> Vec<Reg> {
    let dims = [a.d, a.h, a.w];
    let mut mapped: [BTreeMap<i64, (Reg, Option<Reg>)>; 3] = Default::default();
    for t in &geo.taps {
        for ax in 0..3 {
            if !mapped[ax].contains_key(&t[ax]) {
                // The output's own coordinate is always inside.
                let m = if t[ax] == 0 {
                    (coord[ax], None)
                } else {
                    let c = k.bin(Bin::Add, T::S32, coord[ax], Src::I(t[ax]));
                    let r = k.call(&map_fn(spec.mode), vec![c, dims[ax]], &[Cls::B32, Cls::B32]);
                    let inside = if spec.mode == Mode::Constant {
                        Some(k.setp(Cmp::Ne, T::S32, r[1], Src::I(0)))
                    } else {
                        None
                    };
                    (r[0], inside)
                };
                mapped[ax].insert(t[ax], m);
            }
        }
    }
    let esize = spec.input.itemsize() as i64;
    // Byte offsets per axis and mapped coordinate.
    let mut offs: [BTreeMap<i64, Reg>; 3] = Default::default();
    for ax in 0..3 {
        for (&d, &(m, _)) in &mapped[ax] {
            let mw = wide(k, m);
            let o = k.bin(Bin::Mul, T::S64, mw, a.is[ax]);
            let o = k.bin(Bin::Mul, T::S64, o, Src::I(esize));
            offs[ax].insert(d, o);
        }
    }
    let mut rows: BTreeMap<(i64, i64), Reg> = BTreeMap::new();
    let mut out = Vec::with_capacity(geo.taps.len());
    for t in &geo.taps {
        let row = *rows.entry((t[0], t[1])).or_insert_with(|| {
            let s = k.bin(Bin::Add, T::S64, offs[0][&t[0]], offs[1][&t[1]]);
            k.bin(Bin::Add, T::S64, a.inp, s)
        });
        let addr = k.bin(Bin::Add, T::S64, row, offs[2][&t[2]]);
        let v = elem::load(k, spec.input, Addr::reg(addr, 0));
        let v = if spec.mode == Mode::Constant {
            let mut valid: Option<Reg> = None;
            for ax in 0..3 {
                if let Some(p) = mapped[ax][&t[ax]].1 {
                    valid = Some(match valid {
                        None => p,
                        Some(q) => k.bin(Bin::And, T::Pred, q, p),
                    });
                }
            }
            match valid {
                Some(p) => k.selp(T::F64, v, Src::f64(spec.cval), p),
                None => v,
            }
        } else {
            v
        };
        out.push(v);
    }
    out
}

/// The taps of an interior output whose pixel lies at `pin` in the input, read from the image.
fn image_taps(sh: &mut Shared, spec: &KernelSpec, geo: &Geo, a: &Args, pin: Reg) -> TapMemory {
    let table = taps::table(&mut sh.globals, &geo.taps);
    TapMemory::image(
        pin,
        element_strides(spec, a),
        spec.input,
        Some(table),
        &geo.taps,
    )
}

/// The input's element strides as [`TapMemory::image`] takes them.
fn element_strides(spec: &KernelSpec, a: &Args) -> [Src; 3] {
    let last = match spec.contiguous {
        true => Src::I(1),
        false => Src::R(a.is[2]),
    };
    [Src::R(a.is[0]), Src::R(a.is[1]), last]
}

/// [`gather`] as a loop over the window (code and registers independent of its size): the
/// neighbourhood of the output at `(z, y, x)` through the boundary rules, into a local array.
fn gather_local(
    k: &mut Func,
    sh: &mut Shared,
    a: &Args,
    geo: &Geo,
    spec: &KernelSpec,
    coord: [Reg; 3],
) -> TapMemory {
    let n = geo.taps.len();
    let name = "bb_taps".to_string();
    k.local(&name, 8 * n as u64);
    let table = taps::table(&mut sh.globals, &geo.taps);
    let (tbase, lbase) = (k.addr_of(&table), k.addr_of(&name));
    let esize = spec.input.itemsize() as i64;
    let dims = [a.d, a.h, a.w];
    let i = k.mov(T::S64, Src::I(0));
    let (top, end) = (k.new_label(), k.new_label());
    k.place(top);
    let done = k.setp(Cmp::Ge, T::S64, i, Src::I(n as i64));
    k.bra_if(done, false, end);
    let row = k.fma(T::S64, i, Src::I(12), tbase);
    let mut addr = a.inp;
    let mut valid: Option<Reg> = None;
    for ax in 0..3 {
        let mapped = if geo.taps.iter().all(|t| t[ax] == 0) {
            coord[ax]
        } else {
            let d = k.ld(Space::GlobalNc, T::S32, Addr::reg(row, 4 * ax as i64));
            let c = k.bin(Bin::Add, T::S32, coord[ax], d);
            let r = k.call(&map_fn(spec.mode), vec![c, dims[ax]], &[Cls::B32, Cls::B32]);
            if spec.mode == Mode::Constant {
                let inside = k.setp(Cmp::Ne, T::S32, r[1], Src::I(0));
                valid = Some(match valid {
                    None => inside,
                    Some(q) => k.bin(Bin::And, T::Pred, q, inside),
                });
            }
            r[0]
        };
        let m = wide(k, mapped);
        let stride = k.bin(Bin::Mul, T::S64, a.is[ax], Src::I(esize));
        addr = k.fma(T::S64, m, stride, addr);
    }
    let v = elem::load(k, spec.input, Addr::reg(addr, 0));
    let v = match valid {
        Some(p) => k.selp(T::F64, v, Src::f64(spec.cval), p),
        None => v,
    };
    let at = k.fma(T::S64, i, Src::I(8), lbase);
    k.st(Space::Local, T::F64, Addr::reg(at, 0), v);
    let next = k.bin(Bin::Add, T::S64, i, Src::I(1));
    k.set(T::S64, i, next);
    k.bra(top);
    k.place(end);
    TapMemory::local(name, n)
}

/// The end of a kernel's grid-stride loop over rows: the next row, back to `top`; then the
/// `exit` label every thread leaves by.
pub(super) fn close_row_loop(k: &mut Func, (row, step): (Reg, Reg), top: u32, exit: u32) {
    let next = k.bin(Bin::Add, T::U32, row, step);
    k.set(T::U32, row, next);
    k.bra(top);
    k.place(exit);
    k.push(Ins::Exit);
}

/// Where a thread of a kernel over rows starts (see [`grid_place`]).
pub(super) struct GridPlace {
    /// The thread's column group along the last axis.
    pub xg: Reg,
    /// Its first column: `xg` times the outputs per thread.
    pub x0: Reg,
    /// Its first row (rows counted over the leading axes), and the step of the grid-stride loop
    /// over rows (the grid's second axis is capped at 65,535 blocks).
    pub row: Reg,
    pub row_step: Reg,
}

/// The thread's place for `per_x` consecutive outputs along a last axis of `w` columns; a
/// thread past the last column branches to `exit`.
pub(super) fn grid_place(k: &mut Func, w: Reg, per_x: i64, exit: u32) -> GridPlace {
    let tx = k.sreg(Special::TidX);
    let ntx = k.sreg(Special::NtidX);
    let bx = k.sreg(Special::CtaidX);
    let xg = k.fma(T::U32, bx, ntx, tx);
    let x0 = k.bin(Bin::Mul, T::S32, xg, Src::I(per_x));
    let past = k.setp(Cmp::Ge, T::S32, x0, w);
    k.bra_if(past, false, exit);
    let ty = k.sreg(Special::TidY);
    let nty = k.sreg(Special::NtidY);
    let by = k.sreg(Special::CtaidY);
    let ncy = k.sreg(Special::NctaidY);
    let row = k.fma(T::U32, by, nty, ty);
    let row_step = k.bin(Bin::Mul, T::U32, ncy, nty);
    GridPlace {
        xg,
        x0,
        row,
        row_step,
    }
}

/// A window of registers, by `(dz, dy, dx)` relative to the thread's first output.
type Window = BTreeMap<(i64, i64, i64), Reg>;

/// Loads the thread's window: every element the `v` outputs of `nr` rows read, once, into f64
/// registers (for images whose values float32 holds exactly, `elem::exact_in_f32`, also into
/// float32 registers: min/max and medians of them compare float32s, see `Body::taps32`), by
/// 16-byte vector loads where `vec_in` says the rows allow them.
fn load_window(
    k: &mut Func,
    spec: &KernelSpec,
    geo: &Geo,
    a: &Args,
    (pin, sx): (Reg, Option<Reg>),
    (v, nr): (i64, i64),
    vec_in: Option<(i64, Reg)>,
) -> (Window, Window) {
    let esize = spec.input.itemsize() as i64;
    // The window: each needed element loaded once, into registers shared by both load paths.
    let mut cols: BTreeMap<(i64, i64), BTreeSet<i64>> = BTreeMap::new();
    for t in &geo.taps {
        for r in 0..nr {
            for vv in 0..v {
                cols.entry((t[0], t[1] + r)).or_default().insert(t[2] + vv);
            }
        }
    }
    let mut window: BTreeMap<(i64, i64, i64), Reg> = BTreeMap::new();
    // Images whose values float32 holds exactly also keep them as float32s.
    let mut window32: BTreeMap<(i64, i64, i64), Reg> = BTreeMap::new();
    for (&(dz, dy), cs) in &cols {
        for &c in cs {
            window.insert((dz, dy, c), k.reg(Cls::F64));
            if elem::exact_in_f32(spec.input) {
                window32.insert((dz, dy, c), k.reg(Cls::F32));
            }
        }
    }
    let mut rows: Vec<((i64, i64), Reg)> = Vec::new();
    for &(dz, dy) in cols.keys() {
        let ro = k.bin(Bin::Mul, T::S64, a.is[0], Src::I(dz * esize));
        let ro = k.fma(T::S64, a.is[1], Src::I(dy * esize), ro);
        rows.push(((dz, dy), k.bin(Bin::Add, T::S64, pin, ro)));
    }
    let join = k.new_label();
    if let Some((vw, vec_ok)) = vec_in {
        // 16-byte vector loads of whole aligned chunks.
        let scalar = k.new_label();
        k.bra_if(vec_ok, true, scalar);
        for &((dz, dy), rp) in &rows {
            let chunks: BTreeSet<i64> = cols[&(dz, dy)].iter().map(|c| c.div_euclid(vw)).collect();
            for q in chunks {
                let t = elem::ptx_type(spec.input);
                let parts: Vec<Reg> = (0..vw).map(|_| k.reg(t.cls())).collect();
                k.push(Ins::LdV {
                    sp: Space::GlobalNc,
                    t,
                    d: parts.clone(),
                    addr: Addr::reg(rp, q * 16),
                });
                for (j, r) in parts.iter().enumerate() {
                    let at = (dz, dy, q * vw + j as i64);
                    if let Some(w32) = window32.get(&at) {
                        let v = elem::to_f32(k, spec.input, *r);
                        k.set(T::F32, *w32, v);
                    } else if let Some(w) = window.get(&at) {
                        let val = elem::to_f64(k, spec.input, *r);
                        k.set(T::F64, *w, val);
                    }
                }
            }
        }
        k.bra(join);
        k.place(scalar);
    }
    for &((dz, dy), rp) in &rows {
        for &c in &cols[&(dz, dy)] {
            let addr = match sx {
                None => Addr::reg(rp, c * esize),
                Some(sx) => {
                    let off = k.bin(Bin::Mul, T::S64, sx, Src::I(c));
                    Addr::reg(k.bin(Bin::Add, T::S64, rp, off), 0)
                }
            };
            if let Some(w32) = window32.get(&(dz, dy, c)) {
                let v = k.ld(Space::GlobalNc, elem::ptx_type(spec.input), addr);
                let v32 = elem::to_f32(k, spec.input, v);
                k.set(T::F32, *w32, v32);
            } else {
                let val = elem::load(k, spec.input, addr);
                k.set(T::F64, window[&(dz, dy, c)], val);
            }
        }
    }
    k.place(join);
    for (key, w32) in &window32 {
        k.push(Ins::Cvt {
            rnd: None,
            dt: T::F64,
            st: T::F32,
            d: window[key],
            a: Src::R(*w32),
        });
    }
    (window, window32)
}

/// One pixel through the general path; writes `err[1..4] = (code, a, b)` and the neighbourhood
/// at `err[4..]`.
fn build_replay(
    sh: &mut Shared,
    geo: &Geo,
    spec: &KernelSpec,
) -> std::result::Result<Func, Restart> {
    let mut k = Func::new_entry(REPLAY_ENTRY, params(true));
    let a = load_args(&mut k);
    let pixel = k.ld(Space::Param, T::U64, Addr::sym("pixel", 0));
    let ww = wide(&mut k, a.w);
    let hw = wide(&mut k, a.h);
    let xq = k.bin(Bin::Rem, T::U64, pixel, ww);
    let rest = k.bin(Bin::Div, T::U64, pixel, ww);
    let yq = k.bin(Bin::Rem, T::U64, rest, hw);
    let zq = k.bin(Bin::Div, T::U64, rest, hw);
    let [x, y, z] = [xq, yq, zq].map(|r| k.cvt(None, T::U32, T::U64, r));
    let taps = gather(&mut k, &a, geo, spec, [z, y, x]);
    for (i, t) in taps.iter().enumerate() {
        k.st(
            Space::Global,
            T::F64,
            Addr::reg(a.err, 8 * (4 + i as i64)),
            *t,
        );
    }
    let ex = exits(&mut k, true);
    let (ok, fail, site, ea, eb) = (ex.ok, ex.fail, ex.site, ex.a, ex.b);
    Body::translate(sh, &mut k, Taps::Regs(taps), ex, "br")?;
    let end = k.new_label();
    k.place(ok);
    k.st(
        Space::Global,
        T::U64,
        Addr::reg(a.err, 8),
        Src::I(REPLAY_OK as i64),
    );
    k.bra(end);
    k.place(fail);
    k.st(Space::Global, T::U64, Addr::reg(a.err, 8), site);
    k.st(Space::Global, T::S64, Addr::reg(a.err, 16), ea);
    k.st(Space::Global, T::S64, Addr::reg(a.err, 24), eb);
    k.place(end);
    k.push(Ins::Exit);
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::has_tap_median;

    /// The pair-median shortcut is found from the IR's `MedianNetwork` over the taps in order,
    /// and only there.
    #[test]
    fn tap_medians_are_read_from_the_ir() {
        let ir = |src: &str| {
            let f = ndjit::Filter::compile(src, &ndjit::Bindings::new()).unwrap();
            f.baked_ir(25, ndjit::ir::BufferValues::Any).body
        };
        assert!(has_tap_median(&ir("np.median(x)"), 25));
        assert!(!has_tap_median(&ir("np.median(x)"), 9));
        assert!(!has_tap_median(&ir("np.median(x * 2.0)"), 25));
        assert!(!has_tap_median(&ir("np.mean(x)"), 25));
    }
}
