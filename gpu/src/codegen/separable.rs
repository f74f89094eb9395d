//! Minimum and maximum filters over boxes as one pass per axis, each costing the box's extent
//! along that axis per pixel instead of its area: a `k×k` minimum reads `2k` values per pixel,
//! not `k²`. This is the GPU's rank executor for the extremes (the CPU's is
//! `ndjit::driver::rank`); it is chosen only where [`plan`] proves it gives the filter's result.
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
//! [`elem::store`].
//!
//! Two kinds of float values are excluded by the proof: a NaN (NumPy's `np.min` returns it,
//! Python's `min` and a `<` loop keep it only when it comes first) and `-0.0` (which of two equal
//! zeros an extreme returns depends on where each sits). The first pass marks every value that is
//! either as NaN, every pass carries a NaN on, and the last pass sets, for each pixel whose
//! window held one, the flag of the general kernel's thread that covers that pixel. The general
//! kernel then runs with [`super::KernelSpec::patch`]: its threads whose flag is clear leave at
//! once, the others compute their pixels with the filter's own code. Integer inputs have neither
//! value and need no patch.
//!
//! `cval` (constant mode) must be a value of the input's type whose double is `cval` bit for bit,
//! and not one of the excluded values; otherwise the general kernel runs alone.

use super::stencil::{grid_place, GridPlace};
use super::{elem, Dtype, KernelSpec, Mode};
use crate::pir::{Addr, BoolOp, Cls, Cmp, Func, Ins, Module, Param, Reg, Space, Src, T};
use ndjit::driver::RankStat;

/// The extreme a plan computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Extreme {
    Min,
    Max,
}

/// One pass: the extreme along `axis` (of the three the kernels see) of the values at offsets
/// `lo..=hi` from each pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pass {
    pub axis: usize,
    pub lo: i64,
    pub hi: i64,
}

/// How a box's extreme is computed in passes.
#[derive(Clone, Debug, PartialEq)]
pub struct SeparablePlan {
    pub extreme: Extreme,
    /// In the order they run; the first reads the input, the last writes the output.
    pub passes: Vec<Pass>,
    /// The type the passes compute in: the input's.
    pub elem: Dtype,
    /// Whether the input can hold values the proof excludes (floats), so that flagged pixels
    /// are recomputed by the general kernel.
    pub patch: bool,
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
    /// Flags for an image of `shape` (three axes): one per thread position of the general
    /// kernel, row groups by column groups.
    pub fn flags(&self, shape: [usize; 3]) -> usize {
        (shape[0] * shape[1]).div_ceil(self.rows as usize)
            * shape[2].div_ceil(self.outputs as usize)
    }
}

/// The passes for `spec` when the filter computes `stat` and the proof above holds for it;
/// `None` leaves the run to the general kernel.
pub fn plan(stat: Option<RankStat>, spec: &KernelSpec) -> Option<SeparablePlan> {
    let extreme = match stat? {
        RankStat::Min => Extreme::Min,
        RankStat::Max => Extreme::Max,
        _ => return None,
    };
    if !spec.mask.iter().all(|&b| b) || spec.validate().is_err() {
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
    Some(SeparablePlan {
        extreme,
        passes,
        elem: spec.input,
        patch: matches!(spec.input, Dtype::F32 | Dtype::F64),
    })
}

/// Whether the passes are chosen when the tuning leaves it open, by measurement (an H200,
/// 4096², `passes` section of the device checks: `gpu/device-run/passes-h200-2026-11-25.log`):
/// where the general kernel reads its taps from memory (past [`super::taps::WINDOW_REGS`]),
/// and from 7×7 on except for float32, whose general kernel takes minima of float32 registers
/// (passes/general at 7×7: uint8 0.70, float64 0.74, float32 1.67). Below, the general
/// kernel's register window shares the loads between neighbouring outputs and one kernel beats
/// two (3×3: the passes take 2.3–3.4 times as long).
pub fn chosen(spec: &KernelSpec) -> bool {
    let n = spec.filter_size();
    n > super::taps::WINDOW_REGS || (n >= 49 && spec.input != Dtype::F32)
}

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

/// The value every window starts from: the identity of the extreme in the work type.
fn identity(dt: Dtype, e: Extreme) -> Src {
    let min = e == Extreme::Min;
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
    /// The last pass: the output dtype, and the patch layout for floats.
    last: Option<(Dtype, Option<PatchLayout>)>,
    mode: Mode,
    cval: f64,
}

/// The module of a plan's passes, entries [`pass_entry`]`(i)`, each with parameters
/// `src, dst, flags: u64; d, h, w: s32; ss0..2, ds0..2: s64` (strides in elements). `layout`
/// places the flags where the plan patches.
pub fn generate(plan: &SeparablePlan, spec: &KernelSpec, layout: Option<PatchLayout>) -> Module {
    let mut m = Module::new(spec.target.version, spec.target.sm);
    let n = plan.passes.len();
    for (i, &pass) in plan.passes.iter().enumerate() {
        let ps = PassSpec {
            plan,
            pass,
            first: i == 0,
            last: (i + 1 == n).then_some((spec.output, layout.filter(|_| plan.patch))),
            mode: spec.mode,
            cval: spec.cval,
        };
        m.funcs.push(build_pass(&ps, &pass_entry(i)));
    }
    super::stencil::define_map(&mut m, spec.mode);
    m
}

fn pass_params() -> Vec<Param> {
    let p = |n: &str, t| Param { name: n.into(), t };
    let mut v: Vec<Param> = ["src", "dst", "flags"].map(|n| p(n, T::U64)).into();
    v.extend(["d", "h", "w"].map(|n| p(n, T::S32)));
    v.extend(["ss0", "ss1", "ss2", "ds0", "ds1", "ds2"].map(|n| p(n, T::S64)));
    v
}

/// One pass: a thread per element, rows spread over the grid's second axis.
fn build_pass(ps: &PassSpec<'_>, name: &str) -> Func {
    let mut k = Func::new_entry(name, pass_params());
    let p = |k: &mut Func, n: &str, t: T| k.ld(Space::Param, t, Addr::sym(n, 0));
    let (src, dst, flags) = (
        p(&mut k, "src", T::U64),
        p(&mut k, "dst", T::U64),
        p(&mut k, "flags", T::U64),
    );
    let ext = [
        p(&mut k, "d", T::S32),
        p(&mut k, "h", T::S32),
        p(&mut k, "w", T::S32),
    ];
    let ss = ["ss0", "ss1", "ss2"].map(|n| p(&mut k, n, T::S64));
    let ds = ["ds0", "ds1", "ds2"].map(|n| p(&mut k, n, T::S64));
    let exit = k.new_label();
    let GridPlace {
        x0: x,
        row,
        row_step: step,
        ..
    } = grid_place(&mut k, ext[2], 1, exit);
    let rows = k.bin(crate::pir::Bin::Mul, T::S32, ext[0], ext[1]);
    let top = k.new_label();
    k.place(top);
    let done = k.setp(Cmp::Ge, T::S32, row, rows);
    k.bra_if(done, false, exit);
    let z = k.bin(crate::pir::Bin::Div, T::U32, row, ext[1]);
    let zh = k.bin(crate::pir::Bin::Mul, T::S32, z, ext[1]);
    let y = k.bin(crate::pir::Bin::Sub, T::S32, row, zh);
    let coord = [z, y, x];
    let v = window_extreme(&mut k, ps, (src, &ss), coord, ext);
    store(&mut k, ps, (dst, &ds, flags), coord, (row, ext[2]), v);
    let next = k.bin(crate::pir::Bin::Add, T::U32, row, step);
    k.set(T::U32, row, next);
    k.bra(top);
    k.place(exit);
    k.push(Ins::Exit);
    k
}

/// The extreme of the pixel's values along the pass's axis, and whether one of them was a NaN
/// (in the first pass also a `-0.0`): the result is then NaN, the mark the later passes carry.
fn window_extreme(
    k: &mut Func,
    ps: &PassSpec<'_>,
    (src, ss): (Reg, &[Reg; 3]),
    coord: [Reg; 3],
    ext: [Reg; 3],
) -> Reg {
    use crate::pir::Bin;
    let dt = ps.plan.elem;
    let wt = work_type(dt);
    let float = wt.is_float();
    let esize = dt.itemsize() as i64;
    let Pass { axis, lo, hi } = ps.pass;
    // The address of the pixel's element with the pass's axis left out.
    let mut off = k.mov(T::S64, Src::I(0));
    for a in (0..3).filter(|&a| a != axis) {
        let c = k.cvt(None, T::S64, T::S32, coord[a]);
        off = k.fma(T::S64, c, ss[a], off);
    }
    let off = k.bin(Bin::Mul, T::S64, off, Src::I(esize));
    let base = k.bin(Bin::Add, T::S64, src, off);
    let step = k.bin(Bin::Mul, T::S64, ss[axis], Src::I(esize));
    let acc = k.mov(raw(wt), identity(dt, ps.plan.extreme));
    let bad = k.mov(T::Pred, Src::I(0));
    let op = match ps.plan.extreme {
        Extreme::Min => Bin::Min,
        Extreme::Max => Bin::Max,
    };
    // Folds one value in.
    let fold = |k: &mut Func, v: Reg| {
        let m = k.bin(op, wt, acc, v);
        k.set(wt, acc, m);
        if float {
            let nan = k.setp_comb(Cmp::Nan, wt, v, v, BoolOp::Or, bad, false);
            let nan = match ps.first {
                // `-0.0`: its bits are the sign bit alone.
                true => {
                    let (bt, sign) = match wt {
                        T::F64 => (T::B64, Src::I(i64::MIN)),
                        _ => (T::B32, Src::I(0x8000_0000)),
                    };
                    let bits = k.mov(bt, v);
                    k.setp_comb(Cmp::Eq, bt, bits, sign, BoolOp::Or, nan, false)
                }
                false => nan,
            };
            k.set(T::Pred, bad, nan);
        }
    };
    let c = coord[axis];
    let n = ext[axis];
    let (boundary, joined) = (k.new_label(), k.new_label());
    let below = k.setp(Cmp::Lt, T::S32, c, Src::I(-lo));
    let last = k.bin(Bin::Add, T::S32, c, Src::I(hi));
    let outside = k.setp_comb(Cmp::Ge, T::S32, last, n, BoolOp::Or, below, false);
    k.bra_if(outside, false, boundary);
    // ---- interior: the values at constant offsets ----
    let cw = k.cvt(None, T::S64, T::S32, c);
    let first = k.fma(T::S64, cw, step, base);
    let count = hi - lo + 1;
    if count <= UNROLL {
        for t in lo..=hi {
            let off = k.fma(T::S64, step, Src::I(t), first);
            let v = k.ld(Space::GlobalNc, elem::ptx_type(dt), Addr::reg(off, 0));
            fold(k, v);
        }
    } else {
        counted(k, T::S64, (lo, hi), |k, t| {
            let a = k.fma(T::S64, step, t, first);
            let v = k.ld(Space::GlobalNc, elem::ptx_type(dt), Addr::reg(a, 0));
            fold(k, v);
        });
    }
    k.bra(joined);
    // ---- boundary: every coordinate through scipy's mapping ----
    k.place(boundary);
    counted(k, T::S32, (lo, hi), |k, t| {
        let at = k.bin(Bin::Add, T::S32, c, t);
        let got = k.call(
            &super::stencil::map_fn(ps.mode),
            vec![at, n],
            &[Cls::B32, Cls::B32],
        );
        let cw = k.cvt(None, T::S64, T::S32, got[0]);
        let a = k.fma(T::S64, cw, step, base);
        let v = k.ld(Space::GlobalNc, elem::ptx_type(dt), Addr::reg(a, 0));
        let v = match ps.mode {
            Mode::Constant => {
                let outside = k.setp(Cmp::Eq, T::S32, got[1], Src::I(0));
                let cv = immediate(dt, ps.cval);
                k.selp(raw(wt), cv, v, outside)
            }
            _ => v,
        };
        fold(k, v);
    });
    k.place(joined);
    if float {
        let nan = match wt {
            T::F64 => Src::f64(f64::NAN),
            _ => Src::S(f32::NAN.to_bits()),
        };
        let marked = k.selp(wt, nan, acc, bad);
        k.set(wt, acc, marked);
    }
    acc
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
    (dst, ds, flags): (Reg, &[Reg; 3], Reg),
    coord: [Reg; 3],
    (row, w): (Reg, Reg),
    v: Reg,
) {
    use crate::pir::Bin;
    let dt = ps.plan.elem;
    let out_dt = ps.last.map_or(dt, |(o, _)| o);
    let mut off = k.mov(T::S64, Src::I(0));
    for a in 0..3 {
        let c = k.cvt(None, T::S64, T::S32, coord[a]);
        off = k.fma(T::S64, c, ds[a], off);
    }
    let off = k.bin(Bin::Mul, T::S64, off, Src::I(out_dt.itemsize() as i64));
    let addr = Addr::reg(k.bin(Bin::Add, T::S64, dst, off), 0);
    match ps.last {
        None => k.st(Space::Global, elem::ptx_type(dt), addr, v),
        Some((out, layout)) => {
            let d = elem::to_f64(k, dt, v);
            elem::store(k, out, addr, d);
            if let Some(l) = layout {
                let skip = k.new_label();
                let wt = work_type(dt);
                let num = k.setp(Cmp::Num, wt, v, v);
                k.bra_if(num, false, skip);
                let group = k.bin(Bin::Div, T::U32, row, Src::I(l.rows as i64));
                let cols = k.bin(Bin::Add, T::S32, w, Src::I(l.outputs as i64 - 1));
                let cols = k.bin(Bin::Div, T::U32, cols, Src::I(l.outputs as i64));
                let col = k.bin(Bin::Div, T::U32, coord[2], Src::I(l.outputs as i64));
                let i = k.fma(T::U32, group, cols, col);
                let i = k.cvt(None, T::U64, T::U32, i);
                let a = k.bin(Bin::Add, T::U64, flags, i);
                k.st(Space::Global, T::U8, Addr::reg(a, 0), Src::I(1));
                k.place(skip);
            }
        }
    }
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
    fn only_full_boxes_of_an_extreme_are_planned() {
        let spec = KernelSpec::boxed(2, 5);
        let p = plan(Some(RankStat::Min), &spec).expect("a box minimum");
        assert_eq!(p.extreme, Extreme::Min);
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
        assert!(plan(Some(RankStat::Median), &spec).is_none());
        assert!(plan(Some(RankStat::Range), &spec).is_none());
        assert!(plan(None, &spec).is_none());
        let mut cross = spec.clone();
        cross.mask[0] = false;
        assert!(plan(Some(RankStat::Max), &cross).is_none());
        let mut constant = spec.clone();
        constant.mode = Mode::Constant;
        constant.cval = f64::NAN;
        assert!(plan(Some(RankStat::Max), &constant).is_none());
        constant.cval = 3.0;
        assert!(plan(Some(RankStat::Max), &constant).is_some());
        // Origins shift the window; an axis of extent 1 needs no pass.
        let mut shifted = KernelSpec::boxed(2, 4);
        shifted.shape = vec![1, 4];
        shifted.mask = vec![true; 4];
        shifted.origin = vec![0, -1];
        let p = plan(Some(RankStat::Max), &shifted).unwrap();
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
        assert!(!plan(Some(RankStat::Max), &ints).unwrap().patch);
    }
}
