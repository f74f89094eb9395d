//! One filter body, IR → PTX, computing one output from the neighbourhood in registers.
//!
//! The translation mirrors `ndjit`'s interpreter and Cranelift JIT statement by statement, so the
//! GPU computes the same bits: every f64 operation is its IEEE instruction with `.rn`; NumPy's
//! min/max propagate NaN explicitly (PTX `min`/`max` ignore it); reductions run in the
//! interpreter's order (`Sum` in NumPy's pairwise order); casts saturate as Rust's
//! `as` does; integer `//` and `%` follow Python.
//!
//! Scratch arrays live in registers when every fill has the same constant length and every
//! access has a constant index (the common case once loops over the window are unrolled), else
//! in per-thread local memory sized by [`super::bounds`]. The choice is made optimistically: when
//! the translation meets something that needs memory (a dynamic index, a length that differs
//! between paths), it stops with [`Restart`] and the caller translates again with that array in
//! local memory.

use super::bounds;
use super::sort;
use super::taps::{self, TapMemory, Taps};
use super::{elem, BoundValues, Dtype, NO_RECORD};
use crate::pir::{Addr, Bin, BoolOp, Cls, Cmp, Func, Global, Ins, Reg, Rnd, Space, Src, Un, T};
use ndjit::driver::Mix;
use ndjit::ir::eval::{self, Val};
use ndjit::ir::{
    self, network, Arr, ArrKind, ArrayOp, BinOp, CmpOp, Expr, ReduceOp, SortedStat, Stmt, Ty, UnOp,
    Var, BUFFER,
};
use ndjit::math::MathFn;
use ndjit::runtime::QuantilePlan;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// Longest constant loop that is unrolled, and the bound on `trip count × expression nodes`.
const UNROLL_MAX_LEN: i64 = 256;
const UNROLL_MAX_NODES: usize = 8192;
/// Longest scratch array kept in registers, and longest one sorted by a network.
const REG_ARRAY_MAX: i64 = 64;
pub(crate) const NETWORK_MAX: i64 = 32;
/// Capacity of a local array whose length could not be bounded (a run-time check guards it).
const DEFAULT_CAPACITY: i64 = 1024;
/// Largest local array (elements): beyond it, a run-time check fails instead.
const LOCAL_MAX: i64 = 16384;
/// The lowering's error site for "out of memory for {a} elements of scratch space".
pub(crate) const SITE_SCRATCH: u64 = 1;

/// How the comparators of ndjit's median networks are emitted (see `Body::network_step`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NetworkStyle {
    /// `setp.lt.f64` and two `selp.f64`.
    Select,
    /// Integer keys compared with `setp.lt.s64` (inside the NaN-free branch).
    IntKey,
    /// For the pair-median shortcut over doubles ([`MedianHint::Keyed`]): the networks run on
    /// 32-bit keys of the values' high words (`min.s32`/`max.s32`, one instruction a side,
    /// where a double's compare-exchange is a compare and four 32-bit selects); the low words
    /// settle the ties. Other networks as [`NetworkStyle::Select`].
    ///
    /// (`min.f64`/`max.f64` would do as well for a median, which adds `0.0` first, but ptxas
    /// makes each of them a `DSETP` and two selects on sm_90: measured on an H100, 8192², the
    /// 5×5 median 3.36 ms against 1.52 with keys.)
    HighKey,
}

/// Why a translation must start over with different storage decisions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restart {
    /// Keep this scratch array in local memory.
    Local(u32),
    /// Copy the neighbourhood into local memory (it is indexed dynamically).
    Buffer,
    /// The IR uses something this backend does not compile.
    Unsupported(&'static str),
}

pub type Res<T> = std::result::Result<T, Restart>;

/// What a kernel's body instances share: the IR, the storage decisions, and what the module
/// needs (math routines, tables).
pub struct Shared<'a> {
    pub func: &'a ir::Func,
    pub bound: &'a BoundValues,
    pub caps: Vec<Option<i64>>,
    pub local: HashSet<u32>,
    pub buffer_local: bool,
    pub native_minmax: bool,
    pub network: NetworkStyle,
    /// Per array: the constant positions read anywhere, `None` = any position.
    needed: Vec<Option<BTreeSet<i64>>>,
    /// Per array: read by a median (then the middle positions are needed).
    median: Vec<bool>,
    pub math: BTreeSet<MathFn>,
    pub globals: Vec<Global>,
    /// Whether a body built so far has a failure branch (a check, a fall-through, a scratch
    /// limit): a kernel without one cannot fail, and its launch needs no error record.
    pub fails: bool,
    /// The input image's dtype: what the taps read from it can hold (the edges' `cval` aside).
    pub input: Dtype,
    /// The target has `min.NaN.f32`/`max.NaN.f32` (sm_80 on).
    pub nan_minmax: bool,
}

impl<'a> Shared<'a> {
    pub fn new(func: &'a ir::Func, bound: &'a BoundValues, native_minmax: bool) -> Shared<'a> {
        let n = func.arrays.len();
        let mut s = Shared {
            func,
            bound,
            caps: bounds::capacities(func),
            local: HashSet::new(),
            buffer_local: false,
            native_minmax,
            network: NetworkStyle::Select,
            needed: vec![Some(BTreeSet::new()); n],
            median: vec![false; n],
            math: BTreeSet::new(),
            globals: Vec::new(),
            fails: false,
            input: Dtype::F64,
            nan_minmax: false,
        };
        s.scan(&func.body);
        s
    }

    /// Whether the float32 median networks of this image carry a NaN to their result
    /// ([`exchange32_nan`]): its values can be NaN and the target has the instructions.
    pub fn networks_propagate_nan(&self) -> bool {
        self.nan_minmax && elem::is_float(self.input)
    }

    /// The compare-exchange of the median networks on the image's float32 values
    /// ([`exchange32_nan`] where they propagate NaN, else [`exchange32`]), or on doubles
    /// ([`exchange`]).
    pub fn median_exchange(&self, float32: bool) -> Exchange {
        match (float32, self.networks_propagate_nan()) {
            (false, _) => exchange,
            (true, true) => exchange32_nan,
            (true, false) => exchange32,
        }
    }

    fn scan(&mut self, stmts: &[Stmt]) {
        for st in stmts {
            match st {
                Stmt::Sorted {
                    stat: SortedStat::Median,
                    arr,
                    ..
                } => self.median[arr.0 as usize] = true,
                Stmt::Sorted {
                    stat: SortedStat::Quantile,
                    arr,
                    q,
                    ..
                } => {
                    if ir::fold::const_expr(q).is_none() {
                        self.needed[arr.0 as usize] = None;
                    } else {
                        // Resolved at the sort, where the length is known.
                        self.median[arr.0 as usize] = true;
                        self.needed[arr.0 as usize] = None;
                    }
                }
                _ => {}
            }
            ir::stmt_exprs(st, |e| self.scan_expr(e));
            ir::stmt_blocks(st, |b| self.scan(b));
        }
    }

    fn scan_expr(&mut self, e: &Expr) {
        if let Expr::Load(a, i) = e {
            let slot = &mut self.needed[a.0 as usize];
            match (**i).clone() {
                Expr::I64(c) => {
                    if let Some(s) = slot {
                        s.insert(c);
                    }
                }
                _ => *slot = None,
            }
        }
        e.for_each_child(|c| self.scan_expr(c));
    }

    fn bound_table(&mut self, k: u32) -> String {
        let name = format!("ndjit_bound_{k}");
        if !self.globals.iter().any(|g| g.name == name) {
            let data = self
                .bound
                .arrays
                .get(k as usize)
                .cloned()
                .unwrap_or_default();
            self.globals.push(Global {
                name: name.clone(),
                space: Space::Global,
                t: T::F64,
                data: data.iter().map(|v| v.to_bits()).collect(),
                init: true,
            });
        }
        name
    }
}

/// The median shortcut the stencil prepared for an interior output (see [`sort::PairMedian`]).
#[derive(Clone, Debug)]
pub enum MedianHint {
    /// The sorted candidates of the values this output shares with its neighbour, and its own
    /// column.
    Pair {
        cands: Vec<Reg>,
        own: Vec<Reg>,
        plan: sort::PairMedian,
        /// The registers are float32 (the image's values as [`Body::taps32`] holds them, see
        /// [`exchange32`]), not f64.
        float32: bool,
    },
    /// The median itself, a double: the stencil computed two pairs of outputs at once, one in
    /// each 16-bit lane (`stencil::median_hints`).
    Done(Reg),
    /// [`MedianHint::Pair`] over doubles by [`high_key`]s ([`NetworkStyle::HighKey`]).
    Keyed(Keyed),
}

/// A keyed pair-median hint: `cands` and `own` are keys, `window` the `(key, low word)` of each
/// of this output's values.
#[derive(Clone, Debug)]
pub struct Keyed {
    pub cands: Vec<Reg>,
    pub own: Vec<Reg>,
    pub plan: sort::PairMedian,
    pub window: Vec<(Reg, Reg)>,
}

/// Where control goes when the body ends.
pub struct Exits {
    /// Jumped to with the result in `ret`.
    pub ok: u32,
    pub ret: Reg,
    /// Jumped to with the failure code in `site` (and, with `details`, the values in `a`, `b`).
    pub fail: u32,
    pub site: Reg,
    pub a: Reg,
    pub b: Reg,
    pub details: bool,
}

/// An operand: a compile-time constant or a register of an IR type.
#[derive(Clone, Copy, Debug)]
enum V {
    C(Val),
    R(Reg, Ty),
}

impl V {
    fn ty(self) -> Ty {
        match self {
            V::C(v) => v.ty(),
            V::R(_, t) => t,
        }
    }
}

fn cls(t: Ty) -> Cls {
    match t {
        Ty::F64 => Cls::F64,
        Ty::I64 => Cls::B64,
        Ty::Bool => Cls::Pred,
    }
}

fn pt(t: Ty) -> T {
    match t {
        Ty::F64 => T::F64,
        Ty::I64 => T::S64,
        Ty::Bool => T::Pred,
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Storage {
    Buffer,
    Bound(u32),
    /// In registers; `len` is the constant length once filled on every path.
    Regs {
        elem: Ty,
        regs: Vec<Reg>,
        len: Option<i64>,
    },
    Local {
        elem: Ty,
        name: String,
        cap: i64,
        len: Reg,
    },
}

struct LoopT {
    exit: u32,
    latch: Option<u32>,
}

/// The translation of one body instance.
pub struct Body<'s, 'a, 'k> {
    pub sh: &'s mut Shared<'a>,
    k: &'k mut Func,
    taps: Taps,
    /// The same taps read from the image, for the branches that only check ([`Body::if_`]).
    cold_taps: Option<TapMemory>,
    /// Whether the code being translated is such a branch.
    in_cold: bool,
    /// The neighbourhood copied to local memory, when indexed dynamically.
    buf_local: Option<String>,
    vars: Vec<Reg>,
    consts: Vec<Option<Val>>,
    arrays: Vec<Storage>,
    loops: Vec<LoopT>,
    ex: Exits,
    /// A unique prefix for the local arrays of this instance.
    tag: String,
    /// Each tap's position in the thread's window (interior instances).
    window: Option<Vec<[i64; 3]>>,
    /// The pair-median shortcut, when the stencil prepared one for this output.
    median: Option<MedianHint>,
    /// The taps as float32 registers, for an image whose values float32 holds exactly
    /// (`elem::exact_in_f32`: float32, bool, 8- and 16-bit integers). Their order is the
    /// doubles', so min/max and median networks compare them as float32s.
    taps32: Option<Vec<Reg>>,
}

impl<'s, 'a, 'k> Body<'s, 'a, 'k> {
    /// Translates the body for the neighbourhood `taps`.
    pub fn translate(
        sh: &'s mut Shared<'a>,
        k: &'k mut Func,
        taps: Taps,
        ex: Exits,
        tag: &str,
    ) -> Res<()> {
        Self::translate_at(sh, k, (taps, None), None, None, None, ex, tag)
    }

    /// As [`Body::translate`], with each tap's position in the thread's window when the taps are
    /// window registers shared with other outputs (min/max reductions are then grouped by window
    /// column, so that ptxas can share the work between adjacent outputs).
    #[allow(clippy::too_many_arguments)]
    pub fn translate_at(
        sh: &'s mut Shared<'a>,
        k: &'k mut Func,
        (taps, cold_taps): (Taps, Option<TapMemory>),
        window: Option<&[[i64; 3]]>,
        taps32: Option<Vec<Reg>>,
        median: Option<MedianHint>,
        ex: Exits,
        tag: &str,
    ) -> Res<()> {
        let func = sh.func;
        let mut b = Body {
            window: window.map(|w| w.to_vec()),
            taps32,
            median,
            sh,
            k,
            taps,
            cold_taps,
            in_cold: false,
            buf_local: None,
            vars: vec![],
            consts: vec![None; func.vars.len()],
            arrays: vec![],
            loops: vec![],
            ex,
            tag: tag.to_string(),
        };
        for d in &func.vars {
            let r = b.k.reg(cls(d.ty));
            let zero = match d.ty {
                Ty::F64 => Src::f64(0.0),
                _ => Src::I(0),
            };
            b.k.set(pt(d.ty), r, zero);
            b.vars.push(r);
        }
        for (i, d) in func.arrays.iter().enumerate() {
            let s = match d.kind {
                ArrKind::Buffer => Storage::Buffer,
                ArrKind::Bound(k) => Storage::Bound(k),
                ArrKind::Coords | ArrKind::Output => {
                    return Err(Restart::Unsupported(
                        "output arrays (only generic_filter callbacks run on the GPU)",
                    ))
                }
                ArrKind::Scratch { elem } => {
                    if b.sh.local.contains(&(i as u32)) {
                        let cap = b.sh.caps[i].unwrap_or(DEFAULT_CAPACITY).clamp(1, LOCAL_MAX);
                        let name = format!("{}_s{i}", b.tag);
                        b.k.local(&name, 8 * cap as u64);
                        let len = b.k.mov(T::S64, Src::I(0));
                        Storage::Local {
                            elem,
                            name,
                            cap,
                            len,
                        }
                    } else {
                        Storage::Regs {
                            elem,
                            regs: vec![],
                            len: None,
                        }
                    }
                }
            };
            b.arrays.push(s);
        }
        // Taps in memory are indexed at run time as they are.
        if let (true, Taps::Regs(regs)) = (b.sh.buffer_local, &b.taps) {
            let name = format!("{}_buf", b.tag);
            b.k.local(&name, 8 * regs.len().max(1) as u64);
            for (i, &t) in regs.iter().enumerate() {
                b.k.st(Space::Local, T::F64, Addr::sym(&name, 8 * i as i64), t);
            }
            b.buf_local = Some(name);
        }
        if b.block(&func.body)? {
            // Falling off the end fails without a record, as in the interpreter.
            b.fail_code(NO_RECORD);
        }
        Ok(())
    }

    // ---- statements ---------------------------------------------------------------------------

    /// Translates a block; returns whether control can reach its end.
    fn block(&mut self, stmts: &[Stmt]) -> Res<bool> {
        for s in stmts {
            if !self.stmt(s)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A [`Stmt::MedianNetwork`]: `if isnan(sum) { fallback } else { network; median }`, tested
    /// here as "some value is NaN": where only `inf - inf` made the sum NaN the fallback sorts
    /// and takes the runtime's median, which the network gives for every NaN-free input
    /// (`ndjit::ir::network`), and a NaN makes the fallback assign its constant. For the
    /// whole footprint, with the stencil's pair-median hint, the network is the shortcut. Over the
    /// taps of an image that float32 holds exactly ([`Body::float32_taps`]) the NaN test and the
    /// network run on the float32 values: their order is that of the doubles they convert to
    /// exactly, and float32 min/max take half the registers and a fraction of the instructions
    /// of f64 compares and selects. Where those networks propagate NaN
    /// ([`Shared::networks_propagate_nan`]) the test is of the median alone, after them.
    fn median_network(&mut self, dst: Var, elems: &[Expr], fallback: &[Stmt]) -> Res<bool> {
        let single = self.float32_taps(elems);
        // An integer image's taps are never NaN: no test, no fallback.
        let never_nan = single.is_some() && !elem::is_float(self.sh.input);
        // The test is "some value is NaN" (not the IR's NaN sum, which `inf - inf` also makes):
        // there the fallback's NaN result is all it can assign, and its sort, which would keep
        // every value alive past the network, need not be emitted.
        let nan_result = network::nan_result(fallback, elems, dst);
        // The NaN result where the network's own is NaN: every value the median depends on
        // reaches it through comparators that make both outputs NaN ([`exchange32_nan`]).
        let tested_after = nan_result
            .filter(|_| single.is_some() && !never_nan && self.sh.networks_propagate_nan());
        let (v, nan) = if let Some(t32) = &single {
            let v = t32[..elems.len()].to_vec();
            let tested_before = !never_nan && tested_after.is_none();
            let nan = tested_before.then(|| any_nan(self.k, T::F32, &v));
            (v, nan)
        } else {
            let mut v = Vec::with_capacity(elems.len());
            for e in elems {
                let x = self.expr_as(e, Ty::F64)?;
                v.push(self.reg(x));
            }
            let nan = any_nan(self.k, T::F64, &v);
            (v, Some(nan))
        };
        let pair = self.pair_median_applies(elems);
        let network = |b: &mut Self| {
            let m = match b.median.clone().filter(|_| pair) {
                Some(MedianHint::Keyed(keyed)) => {
                    // Keys are made for windows of doubles only (`stencil::median_hints`), whose
                    // networks carry no NaN: nothing is tested after them.
                    debug_assert!(tested_after.is_none());
                    return b.keyed_median(dst, v, keyed);
                }
                Some(MedianHint::Done(m)) => b.k.bin(Bin::Add, T::F64, Src::f64(0.0), m),
                Some(MedianHint::Pair {
                    cands,
                    own,
                    plan,
                    float32,
                }) => {
                    let m = b.pair_median(&cands, own, &plan, float32);
                    b.k.bin(Bin::Add, T::F64, Src::f64(0.0), m)
                }
                None if single.is_some() => b.network_median32(v),
                None => b.network_median(v),
            };
            let m = match tested_after {
                Some(c) => {
                    let isnan = b.k.setp(Cmp::Nan, T::F64, m, m);
                    b.k.selp(T::F64, Src::f64(c), m, isnan)
                }
                None => m,
            };
            b.assign(dst, V::R(m, Ty::F64));
            Ok(true)
        };
        match (nan, nan_result) {
            (Some(nan), Some(c)) => self.branch(
                nan,
                |b| {
                    b.assign(dst, V::C(Val::F(c)));
                    Ok(true)
                },
                network,
            ),
            (Some(nan), None) => self.branch(nan, |b| b.block(fallback), network),
            (None, _) => network(self),
        }
    }

    /// The float32 registers of `elems` when they are the first taps of the neighbourhood of an
    /// image that float32 holds exactly: the window's registers, or loads from the image's
    /// interior.
    fn float32_taps(&mut self, elems: &[Expr]) -> Option<Vec<Reg>> {
        if !network::is_footprint(elems) {
            return None;
        }
        self.first_taps_f32(elems.len())
    }

    /// The first `n` taps as float32 registers, where the image's values are all float32s
    /// (`Body::taps32`, or the interior's loads from the image).
    fn first_taps_f32(&mut self, n: usize) -> Option<Vec<Reg>> {
        if n > self.taps.len() {
            return None;
        }
        match (&self.taps32, &self.taps) {
            (Some(t32), _) => Some(t32[..n].to_vec()),
            (None, Taps::Memory(m)) => (0..n)
                .map(|i| m.load_f32(self.k, Src::I(i as i64)))
                .collect(),
            _ => None,
        }
    }

    /// Whether the pair-median shortcut computes this median: one over the whole footprint (odd),
    /// with the hint the stencil prepared for this output.
    fn pair_median_applies(&self, elems: &[Expr]) -> bool {
        let planned = match &self.median {
            None => return false,
            Some(MedianHint::Pair {
                cands, own, plan, ..
            })
            | Some(MedianHint::Keyed(Keyed {
                cands, own, plan, ..
            })) => plan.rank < cands.len() + own.len(),
            Some(MedianHint::Done(_)) => true,
        };
        elems.len() == self.taps.len()
            && elems.len() % 2 == 1
            && planned
            && network::is_footprint(elems)
    }

    /// The pair-median shortcut: sort this output's own column, merge it with the shared sorted
    /// candidates; the median's register (or the median the stencil computed already).
    fn pair_median(
        &mut self,
        cands: &[Reg],
        own: Vec<Reg>,
        plan: &sort::PairMedian,
        float32: bool,
    ) -> Reg {
        let step = self.sh.median_exchange(float32);
        let k = &mut *self.k;
        let m = plan.median(cands, own, |v, i, j| step(k, v, i, j));
        if float32 {
            self.k.cvt(None, T::F64, T::F32, m)
        } else {
            m
        }
    }

    /// The pair-median shortcut by [`high_key`]s ([`MedianHint::Keyed`]), assigned to `dst`; `v`
    /// are this output's values (NaN-free), for the exact network where the keys cannot decide.
    ///
    /// Why it is exact: a key is a non-decreasing function of the value (of the order in which
    /// `-0.0` precedes `0.0`, a refinement of the values' order that the median's `0.0 + m`
    /// cannot see), so the key of rank `r` among the keys is the key of the value of rank `r`.
    /// The values with that key hold that value; where their low words are all equal they are
    /// all that value, which is then their common high word (the key maps back) and low word.
    /// Where the low words differ (values that agree in sign, exponent and 20 bits of
    /// mantissa), the exact network over `v` decides.
    fn keyed_median(&mut self, dst: Var, v: Vec<Reg>, keyed: Keyed) -> Res<bool> {
        let Keyed {
            cands,
            own,
            plan,
            window,
        } = keyed;
        let k = &mut *self.k;
        let key = plan.median(&cands, own, |v, i, j| {
            exchange_by(k, (Bin::Min, Bin::Max, T::S32), v, i, j)
        });
        // The least and greatest low word of the values whose key is the median's (at least
        // one has it), by predicated `min.u32`/`max.u32`: three instructions a value where
        // selects of the identities took four after ptxas (the kernel's SASS, two outputs a
        // thread: 5×5 2592 → 2544 instructions, 7×7 6424 → 6336; not yet timed). The integer
        // pipe is what these kernels wait for (ncu on an H100, 5×5 doubles: 77% of its peak,
        // the FP64 pipe 4%, 1.51 ms).
        let least = k.mov(T::B32, Src::I(0xffff_ffff));
        let most = k.mov(T::B32, Src::I(0));
        for &(kv, lo) in &window {
            let p = k.setp(Cmp::Eq, T::S32, kv, key);
            k.bin_if(p, Bin::Min, T::U32, least, lo);
            k.bin_if(p, Bin::Max, T::U32, most, lo);
        }
        let differ = k.setp(Cmp::Ne, T::U32, least, most);
        let hi = key_flip(k, key);
        let bits = k.pack(Cls::F64, least, hi);
        self.branch(
            differ,
            |b| {
                let m = b.network_median(v);
                b.assign(dst, V::R(m, Ty::F64));
                Ok(true)
            },
            |b| {
                let m = b.k.bin(Bin::Add, T::F64, Src::f64(0.0), bits);
                b.assign(dst, V::R(m, Ty::F64));
                Ok(true)
            },
        )
    }

    /// The median of NaN-free values by ndjit's network (`ir::network::batcher_pairs`), pruned to
    /// the comparators the middle positions depend on, then the runtime median's arithmetic.
    /// With [`NetworkStyle::Select`] each comparator is one compare and two selects (the IR's own
    /// semantics). With [`NetworkStyle::IntKey`] the values are order-preserving integer keys
    /// (`bits ^ ((bits >> 63) >>> 1)`) compared as integers: without NaN that orders them as the
    /// selects do, except that two zeros of opposite signs may swap, which the median does not see
    /// (it adds `0.0` first, which makes either zero `+0.0`).
    fn network_median(&mut self, mut v: Vec<Reg>) -> Reg {
        let n = v.len();
        let middle = network::median_positions(n);
        let pairs = sort::pruned_pairs(&network::batcher_pairs(n), &middle);
        if self.sh.network == NetworkStyle::IntKey {
            let mut keys: Vec<Reg> = v.iter().map(|&r| self.int_key(r)).collect();
            for (i, j) in pairs {
                let p = self.k.setp(Cmp::Lt, T::S64, keys[j], keys[i]);
                let lo = self.k.selp(T::B64, keys[j], keys[i], p);
                keys[j] = self.k.selp(T::B64, keys[i], keys[j], p);
                keys[i] = lo;
            }
            for &m in &middle {
                let bits = self.int_key(keys[m]);
                v[m] = self.k.reg(Cls::F64);
                self.k.push(Ins::Mov {
                    t: T::B64,
                    d: v[m],
                    a: Src::R(bits),
                });
            }
        } else {
            for (i, j) in pairs {
                exchange(self.k, &mut v, i, j);
            }
        }
        self.median_of(&v, &middle)
    }

    /// [`Body::network_median`] on float32 values: the network in float32
    /// ([`Shared::median_exchange`]), the middle values made doubles, then the runtime median's
    /// arithmetic.
    fn network_median32(&mut self, mut v: Vec<Reg>) -> Reg {
        let middle = network::median_positions(v.len());
        let step = self.sh.median_exchange(true);
        for (i, j) in sort::pruned_pairs(&network::batcher_pairs(v.len()), &middle) {
            step(self.k, &mut v, i, j);
        }
        for &m in &middle {
            v[m] = self.k.cvt(None, T::F64, T::F32, v[m]);
        }
        self.median_of(&v, &middle)
    }

    /// The runtime median of the sorted doubles at `middle` (one position or two):
    /// `0.0 + v[m]`, or the mean of two middles.
    fn median_of(&mut self, v: &[Reg], middle: &[usize]) -> Reg {
        match *middle {
            [lo, hi] => sort::mix(self.k, Mix::Mean, (v[lo], v[hi])),
            _ => self.k.bin(Bin::Add, T::F64, Src::f64(0.0), v[middle[0]]),
        }
    }

    /// `bits ^ ((bits >> 63) >>> 1)`: signed order of the keys = order of the (non-NaN) values;
    /// the same formula maps a key back.
    fn int_key(&mut self, r: Reg) -> Reg {
        let bits = self.k.reg(Cls::B64);
        self.k.push(Ins::Mov {
            t: T::B64,
            d: bits,
            a: Src::R(r),
        });
        let m = self.k.bin(Bin::Shr, T::S64, bits, Src::I(63));
        let m = self.k.bin(Bin::Shr, T::U64, m, Src::I(1));
        self.k.bin(Bin::Xor, T::B64, bits, m)
    }

    fn stmt(&mut self, s: &Stmt) -> Res<bool> {
        match s {
            Stmt::Assign(v, e) => {
                let x = self.expr(e)?;
                self.assign(*v, x);
                Ok(true)
            }
            Stmt::Succeed => Err(Restart::Unsupported(
                "`Succeed` (only generic_filter callbacks run on the GPU)",
            )),
            Stmt::Store(a, i, v) => {
                let i = self.expr_as(i, Ty::I64)?;
                let v = self.expr(v)?;
                self.store(*a, i, v)?;
                Ok(true)
            }
            Stmt::If(c, t, e) => self.if_(c, t, e),
            Stmt::Loop { body, latch } => self.loop_(body, latch),
            Stmt::Break => {
                match self.loops.last() {
                    Some(l) => {
                        let exit = l.exit;
                        self.k.bra(exit);
                    }
                    None => self.fail_code(NO_RECORD),
                }
                Ok(false)
            }
            Stmt::Continue => {
                match self.loops.iter().rev().find_map(|l| l.latch) {
                    Some(l) => self.k.bra(l),
                    None => self.fail_code(NO_RECORD),
                }
                Ok(false)
            }
            Stmt::Check { cond, err, a, b } => {
                let c = self.expr_as(cond, Ty::Bool)?;
                match c {
                    V::C(v) if v.b() => Ok(true),
                    V::C(_) => {
                        self.fail(err.0 as u64, a, b)?;
                        Ok(false)
                    }
                    V::R(p, _) => {
                        let ok = self.k.new_label();
                        self.k.bra_if(p, false, ok);
                        self.fail(err.0 as u64, a, b)?;
                        self.k.place(ok);
                        Ok(true)
                    }
                }
            }
            Stmt::Return(e) => {
                let v = self.expr_as(e, Ty::F64)?;
                let src = self.src(v);
                self.k.set(T::F64, self.ex.ret, src);
                self.k.bra(self.ex.ok);
                Ok(false)
            }
            Stmt::Reduce {
                dst,
                op,
                len,
                index,
                elem,
                on_empty,
            } => self.reduce(*dst, *op, len, *index, elem, *on_empty),
            Stmt::Fill {
                dst,
                len,
                index,
                elem,
                keep,
            } => self.fill(*dst, len, *index, elem, keep.as_ref()),
            Stmt::ArrayOp(ArrayOp::Sort { of_taps }, a) => {
                self.sort(*a, *of_taps)?;
                Ok(true)
            }
            Stmt::Sorted { dst, stat, arr, q } => {
                let r = self.sorted(*stat, *arr, q)?;
                self.assign(*dst, r);
                Ok(true)
            }
            Stmt::MedianNetwork {
                dst,
                elems,
                fallback,
            } => self.median_network(*dst, elems, fallback),
        }
    }

    fn assign(&mut self, v: Var, x: V) {
        let ty = self.sh.func.var_ty(v);
        let x = self.coerce(x, ty);
        let src = self.src(x);
        let r = self.vars[v.0 as usize];
        self.k.set(pt(ty), r, src);
    }

    /// Records failure `site` with details `a`, `b` and leaves the body.
    fn fail(&mut self, site: u64, a: &Expr, b: &Expr) -> Res<()> {
        if self.ex.details {
            let a = self.expr_as(a, Ty::I64)?;
            let b = self.expr_as(b, Ty::I64)?;
            let (sa, sb) = (self.src(a), self.src(b));
            self.k.set(T::S64, self.ex.a, sa);
            self.k.set(T::S64, self.ex.b, sb);
        }
        self.fail_code(site);
        Ok(())
    }

    fn fail_vals(&mut self, site: u64, a: V, b: V) {
        if self.ex.details {
            let (sa, sb) = (self.src(a), self.src(b));
            self.k.set(T::S64, self.ex.a, sa);
            self.k.set(T::S64, self.ex.b, sb);
        }
        self.fail_code(site);
    }

    fn fail_code(&mut self, site: u64) {
        self.sh.fails = true;
        self.k.set(T::B64, self.ex.site, Src::I(site as i64));
        self.k.bra(self.ex.fail);
    }

    fn regs_states(&self) -> Vec<Option<Option<i64>>> {
        self.arrays
            .iter()
            .map(|s| match s {
                Storage::Regs { len, .. } => Some(*len),
                _ => None,
            })
            .collect()
    }

    fn set_regs_states(&mut self, st: &[Option<Option<i64>>]) {
        for (s, v) in self.arrays.iter_mut().zip(st) {
            if let (Storage::Regs { len, .. }, Some(v)) = (s, v) {
                *len = *v;
            }
        }
    }

    fn if_(&mut self, c: &Expr, then: &[Stmt], els: &[Stmt]) -> Res<bool> {
        let p = match self.expr_as(c, Ty::Bool)? {
            V::C(v) => return self.block(if v.b() { then } else { els }),
            V::R(p, _) => p,
        };
        // A branch that only checks (NumPy's zero-sign guards: `ir::zero_signs`) is cold: it
        // reads the taps from the image, so that the register window dies with the hot code.
        let cold = els.is_empty() && then.iter().any(|s| matches!(s, Stmt::Check { .. }));
        let outer = self.in_cold;
        self.in_cold |= cold;
        let falls = self.branch(p, |b| b.block(then), |b| b.block(els));
        self.in_cold = outer;
        falls
    }

    /// `if p {then} else {els}`, each side emitted by its closure, which returns whether control
    /// reaches its end.
    fn branch(
        &mut self,
        p: Reg,
        then: impl FnOnce(&mut Self) -> Res<bool>,
        els: impl FnOnce(&mut Self) -> Res<bool>,
    ) -> Res<bool> {
        let before = self.regs_states();
        let (l_else, l_end) = (self.k.new_label(), self.k.new_label());
        self.k.bra_if(p, true, l_else);
        let t_falls = then(self)?;
        let after_then = self.regs_states();
        if t_falls {
            self.k.bra(l_end);
        }
        self.k.place(l_else);
        self.set_regs_states(&before);
        let e_falls = els(self)?;
        let after_else = self.regs_states();
        self.k.place(l_end);
        // Register arrays must have the same length on every path that reaches the merge.
        let merged: Vec<Option<Option<i64>>> = match (t_falls, e_falls) {
            (true, false) => after_then,
            (false, true) => after_else,
            _ => {
                for (i, (x, y)) in after_then.iter().zip(&after_else).enumerate() {
                    if x != y {
                        return Err(Restart::Local(i as u32));
                    }
                }
                after_then
            }
        };
        self.set_regs_states(&merged);
        Ok(t_falls || e_falls)
    }

    fn loop_(&mut self, body: &[Stmt], latch: &[Stmt]) -> Res<bool> {
        let before = self.regs_states();
        let (l_body, l_latch, l_exit) =
            (self.k.new_label(), self.k.new_label(), self.k.new_label());
        self.k.place(l_body);
        self.loops.push(LoopT {
            exit: l_exit,
            latch: Some(l_latch),
        });
        let body_falls = self.block(body)?;
        self.loops.pop();
        if body_falls {
            self.k.bra(l_latch);
        }
        self.k.place(l_latch);
        // Inside the latch, `continue` belongs to the enclosing loop.
        self.loops.push(LoopT {
            exit: l_exit,
            latch: None,
        });
        let latch_falls = self.block(latch)?;
        self.loops.pop();
        if latch_falls {
            self.k.bra(l_body);
        }
        self.k.place(l_exit);
        let after = self.regs_states();
        for (i, (x, y)) in before.iter().zip(&after).enumerate() {
            if x != y {
                return Err(Restart::Local(i as u32));
            }
        }
        // Whether the exit is reachable is not tracked: assume it is.
        Ok(true)
    }

    // ---- operands -----------------------------------------------------------------------------

    fn src(&mut self, v: V) -> Src {
        match v {
            V::R(r, _) => Src::R(r),
            V::C(Val::F(x)) => Src::f64(x),
            V::C(Val::I(x)) => Src::I(x),
            V::C(Val::B(b)) => Src::R(self.k.mov(T::Pred, Src::I(b as i64))),
        }
    }

    fn reg(&mut self, v: V) -> Reg {
        match v {
            V::R(r, _) => r,
            V::C(c) => {
                let t = pt(c.ty());
                let s = self.src(v);
                match s {
                    Src::R(r) => r,
                    s => self.k.mov(t, s),
                }
            }
        }
    }

    /// Conversion with `eval::cast`'s semantics.
    fn coerce(&mut self, v: V, ty: Ty) -> V {
        if v.ty() == ty {
            return v;
        }
        let (r, from) = match v {
            V::C(c) => return V::C(eval::cast(ty, c)),
            V::R(r, t) => (r, t),
        };
        let out = match (from, ty) {
            // PTX saturates like Rust's `as`, but gives i64::MIN for NaN where Rust gives 0.
            (Ty::F64, Ty::I64) => {
                let t = self.k.cvt(Some(Rnd::Rzi), T::S64, T::F64, r);
                let nan = self.k.setp(Cmp::Nan, T::F64, r, r);
                self.k.selp(T::S64, Src::I(0), t, nan)
            }
            (Ty::F64, Ty::Bool) => self.k.setp(Cmp::Neu, T::F64, r, Src::f64(0.0)),
            (Ty::I64, Ty::F64) => self.k.cvt(Some(Rnd::Rn), T::F64, T::S64, r),
            (Ty::I64, Ty::Bool) => self.k.setp(Cmp::Ne, T::S64, r, Src::I(0)),
            (Ty::Bool, Ty::I64) => self.k.selp(T::S64, Src::I(1), Src::I(0), r),
            (Ty::Bool, Ty::F64) => self.k.selp(T::F64, Src::f64(1.0), Src::f64(0.0), r),
            _ => r,
        };
        V::R(out, ty)
    }

    fn expr_as(&mut self, e: &Expr, ty: Ty) -> Res<V> {
        let v = self.expr(e)?;
        Ok(self.coerce(v, ty))
    }

    /// The 8-byte cell of a value (`Val::to_bits`).
    fn bits(&mut self, v: V) -> Src {
        match v {
            V::C(Val::F(x)) => Src::D(x.to_bits()),
            V::C(c) => Src::I(c.to_bits() as i64),
            V::R(r, Ty::Bool) => Src::R(self.k.selp(T::B64, Src::I(1), Src::I(0), r)),
            V::R(r, _) => Src::R(r),
        }
    }

    /// A value of type `ty` from a cell (`Val::from_bits`), given as a b64 or f64 register.
    fn cell_value(&mut self, cell: Reg, ty: Ty) -> V {
        let want = cls(ty);
        if cell.cls == want {
            return V::R(cell, ty);
        }
        match ty {
            Ty::Bool => V::R(self.k.setp(Cmp::Ne, T::B64, cell, Src::I(0)), ty),
            _ => {
                let d = self.k.reg(want);
                self.k.push(Ins::Mov {
                    t: T::B64,
                    d,
                    a: Src::R(cell),
                });
                V::R(d, ty)
            }
        }
    }

    /// A value converted to an array element type the way a store then a load would.
    fn as_elem(&mut self, v: V, elem: Ty) -> V {
        if v.ty() == elem {
            return v;
        }
        if let V::C(c) = v {
            return V::C(Val::from_bits(elem, c.to_bits()));
        }
        let b = self.bits(v);
        let r = match b {
            Src::R(r) => r,
            s => self.k.mov(T::B64, s),
        };
        self.cell_value(r, elem)
    }

    // ---- expressions --------------------------------------------------------------------------

    fn expr(&mut self, e: &Expr) -> Res<V> {
        Ok(match e {
            Expr::F64(x) => V::C(Val::F(*x)),
            Expr::I64(x) => V::C(Val::I(*x)),
            Expr::Bool(x) => V::C(Val::B(*x)),
            Expr::Var(v) => match self.consts[v.0 as usize] {
                Some(c) => V::C(c),
                None => V::R(self.vars[v.0 as usize], self.sh.func.var_ty(*v)),
            },
            Expr::Param(k) => V::C(Val::F(
                self.sh
                    .bound
                    .floats
                    .get(*k as usize)
                    .copied()
                    .unwrap_or(0.0),
            )),
            Expr::IntParam(k) => V::C(Val::I(
                self.sh.bound.ints.get(*k as usize).copied().unwrap_or(0),
            )),
            Expr::Len(a) => self.len(*a)?,
            Expr::Load(a, i) => {
                let i = self.expr_as(i, Ty::I64)?;
                self.load(*a, i)?
            }
            Expr::Unary(op, x) => {
                let x = self.expr(x)?;
                self.unary(*op, x)
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                self.binary(*op, a, b)
            }
            Expr::Cmp(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                self.cmp(*op, a, b)
            }
            Expr::Select(c, a, b) => {
                let c = self.expr_as(c, Ty::Bool)?;
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                self.select(c, a, b)
            }
            Expr::Call(f, args) => {
                let mut xs = Vec::with_capacity(args.len());
                for a in args {
                    xs.push(self.expr_as(a, Ty::F64)?);
                }
                if let Some(c) = xs
                    .iter()
                    .map(|x| if let V::C(c) = x { Some(c.f()) } else { None })
                    .collect::<Option<Vec<f64>>>()
                {
                    return Ok(V::C(Val::F(eval::call(*f, &c))));
                }
                let regs: Vec<Reg> = xs.into_iter().map(|x| self.reg(x)).collect();
                self.sh.math.insert(*f);
                let r = self.k.call(crate::math::symbol(*f), regs, &[Cls::F64])[0];
                V::R(r, Ty::F64)
            }
            Expr::Cast(ty, x) => {
                let x = self.expr(x)?;
                self.coerce(x, *ty)
            }
        })
    }

    fn len(&mut self, a: Arr) -> Res<V> {
        if a == BUFFER {
            return Ok(V::C(Val::I(self.taps.len() as i64)));
        }
        Ok(match &self.arrays[a.0 as usize] {
            Storage::Buffer => V::C(Val::I(self.taps.len() as i64)),
            Storage::Bound(k) => V::C(Val::I(
                self.sh
                    .bound
                    .arrays
                    .get(*k as usize)
                    .map_or(0, |v| v.len() as i64),
            )),
            Storage::Regs { len: Some(n), .. } => V::C(Val::I(*n)),
            Storage::Regs { len: None, .. } => return Err(Restart::Local(a.0)),
            Storage::Local { len, .. } => V::R(*len, Ty::I64),
        })
    }

    fn elem_addr(&mut self, base: Reg, i: V) -> Addr {
        match i {
            V::C(c) => Addr::reg(base, 8 * c.i()),
            V::R(r, _) => {
                let off = self.k.bin(Bin::Shl, T::B64, r, Src::I(3));
                let a = self.k.bin(Bin::Add, T::S64, base, off);
                Addr::reg(a, 0)
            }
        }
    }

    fn load(&mut self, a: Arr, i: V) -> Res<V> {
        match self.arrays[a.0 as usize].clone() {
            Storage::Buffer => match (&self.taps, i) {
                // A constant index past the taps sits behind the IR's index check, which fails
                // for every pixel first (`x[9]` of 9 taps): the code is unreachable, and any value
                // will do where the kernel must still be generated.
                (taps, V::C(c)) if usize::try_from(c.i()).map_or(true, |c| c >= taps.len()) => {
                    Ok(V::C(Val::F(0.0)))
                }
                (Taps::Regs(_), V::C(c)) if self.in_cold && self.cold_taps.is_some() => {
                    let m = self.cold_taps.clone().expect("cold taps");
                    Ok(V::R(m.load(self.k, Src::I(c.i())), Ty::F64))
                }
                (Taps::Regs(regs), V::C(c)) => Ok(V::R(regs[c.i() as usize], Ty::F64)),
                (Taps::Memory(m), i) => {
                    let m = m.clone();
                    let i = self.src(i);
                    Ok(V::R(m.load(self.k, i), Ty::F64))
                }
                (Taps::Regs(_), V::R(..)) => {
                    let Some(name) = self.buf_local.clone() else {
                        return Err(Restart::Buffer);
                    };
                    let base = self.k.addr_of(&name);
                    let addr = self.elem_addr(base, i);
                    Ok(V::R(self.k.ld(Space::Local, T::F64, addr), Ty::F64))
                }
            },
            Storage::Bound(k) => {
                if let V::C(c) = i {
                    if let Some(v) = self
                        .sh
                        .bound
                        .arrays
                        .get(k as usize)
                        .and_then(|v| v.get(c.i() as usize))
                    {
                        return Ok(V::C(Val::F(*v)));
                    }
                }
                let name = self.sh.bound_table(k);
                let base = self.k.addr_of(&name);
                let addr = self.elem_addr(base, i);
                Ok(V::R(self.k.ld(Space::GlobalNc, T::F64, addr), Ty::F64))
            }
            Storage::Regs { elem, regs, .. } => match i {
                V::C(c) if (c.i() as usize) < regs.len() => Ok(V::R(regs[c.i() as usize], elem)),
                _ => Err(Restart::Local(a.0)),
            },
            Storage::Local { elem, name, .. } => {
                let base = self.k.addr_of(&name);
                let addr = self.elem_addr(base, i);
                let t = if elem == Ty::F64 { T::F64 } else { T::B64 };
                let cell = self.k.ld(Space::Local, t, addr);
                Ok(self.cell_value(cell, elem))
            }
        }
    }

    fn store(&mut self, a: Arr, i: V, v: V) -> Res<()> {
        match self.arrays[a.0 as usize].clone() {
            Storage::Regs { elem, regs, .. } => match i {
                V::C(c) if (c.i() as usize) < regs.len() => {
                    let v = self.as_elem(v, elem);
                    let s = self.src(v);
                    self.k.set(pt(elem), regs[c.i() as usize], s);
                    Ok(())
                }
                _ => Err(Restart::Local(a.0)),
            },
            Storage::Local { name, .. } => {
                let base = self.k.addr_of(&name);
                let addr = self.elem_addr(base, i);
                let b = self.bits(v);
                let t = if v.ty() == Ty::F64 { T::F64 } else { T::B64 };
                self.k.st(Space::Local, t, addr, b);
                Ok(())
            }
            _ => Err(Restart::Local(a.0)),
        }
    }

    fn unary(&mut self, op: UnOp, x: V) -> V {
        if let V::C(c) = x {
            let ok = match op {
                UnOp::Neg | UnOp::Abs => c.ty() != Ty::Bool,
                UnOp::BitNot => c.ty() != Ty::F64,
                _ => true,
            };
            if ok {
                return V::C(eval::unary(op, c));
            }
        }
        let ty = x.ty();
        match op {
            UnOp::Neg | UnOp::Abs | UnOp::BitNot => {
                let r = self.reg(x);
                let out = match (op, ty) {
                    // Sign-bit operations, exact for NaN too (as Rust's `-x` and `abs`).
                    (UnOp::Neg, Ty::F64) => self.fbits(Bin::Xor, r, i64::MIN),
                    (UnOp::Abs, Ty::F64) => self.fbits(Bin::And, r, i64::MAX),
                    (UnOp::Neg, _) => self.k.un(Un::Neg, T::S64, r),
                    (UnOp::Abs, _) => {
                        let n = self.k.un(Un::Neg, T::S64, r);
                        let p = self.k.setp(Cmp::Lt, T::S64, r, Src::I(0));
                        self.k.selp(T::S64, n, r, p)
                    }
                    (_, Ty::Bool) => self.k.un(Un::Not, T::Pred, r),
                    _ => self.k.un(Un::Not, T::B64, r),
                };
                V::R(out, ty)
            }
            UnOp::Not => {
                let b = self.coerce(x, Ty::Bool);
                let r = self.reg(b);
                V::R(self.k.un(Un::Not, T::Pred, r), Ty::Bool)
            }
            _ => {
                let f = self.coerce(x, Ty::F64);
                let r = self.reg(f);
                let out = match op {
                    UnOp::Sqrt => self.k.un(Un::Sqrt, T::F64, r),
                    UnOp::Floor => self.k.cvt(Some(Rnd::Rmi), T::F64, T::F64, r),
                    UnOp::Ceil => self.k.cvt(Some(Rnd::Rpi), T::F64, T::F64, r),
                    UnOp::Trunc => self.k.cvt(Some(Rnd::Rzi), T::F64, T::F64, r),
                    UnOp::RoundEven => self.k.cvt(Some(Rnd::Rni), T::F64, T::F64, r),
                    UnOp::IsNan => return V::R(self.k.setp(Cmp::Nan, T::F64, r, r), Ty::Bool),
                    // The sign bit alone, or'd into 1.0's bits: -1.0 or 1.0.
                    UnOp::SignBit => {
                        let sign = self.fbits(Bin::And, r, i64::MIN);
                        let one = self.fbits(Bin::Or, sign, 1.0f64.to_bits() as i64);
                        return V::R(self.k.setp(Cmp::Lt, T::F64, one, Src::f64(0.0)), Ty::Bool);
                    }
                    UnOp::IsInf | UnOp::IsFinite => {
                        let a = self.fbits(Bin::And, r, i64::MAX);
                        let c = if op == UnOp::IsInf { Cmp::Eq } else { Cmp::Lt };
                        return V::R(self.k.setp(c, T::F64, a, Src::f64(f64::INFINITY)), Ty::Bool);
                    }
                    _ => r,
                };
                V::R(out, Ty::F64)
            }
        }
    }

    /// A bitwise operation on an f64's bits, into an f64 register.
    fn fbits(&mut self, op: Bin, r: Reg, imm: i64) -> Reg {
        let d = self.k.reg(Cls::F64);
        self.k.push(Ins::Bin {
            op,
            t: T::B64,
            d,
            a: Src::R(r),
            b: Src::I(imm),
        });
        d
    }

    fn binary(&mut self, op: BinOp, a: V, b: V) -> V {
        let ty = a.ty();
        if let (V::C(x), V::C(y)) = (a, b) {
            let foldable =
                !(matches!(op, BinOp::FloorDiv | BinOp::Mod) && y.i() == 0) && x.ty() == y.ty();
            if foldable {
                if let (BinOp::FloorDiv, Val::I(p), Val::I(-1)) = (op, x, y) {
                    return V::C(Val::I(p.wrapping_neg()));
                }
                if let (BinOp::Mod, Val::I(_), Val::I(-1)) = (op, x, y) {
                    return V::C(Val::I(0));
                }
                return V::C(eval::binary(op, x, y));
            }
        }
        match ty {
            Ty::F64 => {
                let (x, y) = (self.src(a), self.src(b));
                let r = match op {
                    BinOp::Add => self.k.bin(Bin::Add, T::F64, x, y),
                    BinOp::Sub => self.k.bin(Bin::Sub, T::F64, x, y),
                    BinOp::Mul => self.k.bin(Bin::Mul, T::F64, x, y),
                    BinOp::Div => self.k.bin(Bin::Div, T::F64, x, y),
                    BinOp::Min | BinOp::Max => {
                        let (x, y) = (self.reg(a), self.reg(b));
                        self.numpy_minmax(op == BinOp::Min, x, y)
                    }
                    BinOp::PyMin | BinOp::PyMax => {
                        let c = if op == BinOp::PyMin { Cmp::Lt } else { Cmp::Gt };
                        let p = self.k.setp(c, T::F64, y, x);
                        self.k.selp(T::F64, y, x, p)
                    }
                    _ => self.k.mov(T::F64, x),
                };
                V::R(r, Ty::F64)
            }
            Ty::I64 => {
                if matches!(op, BinOp::FloorDiv | BinOp::Mod) {
                    return self.floor_div_mod(op, a, b);
                }
                let (x, y) = (self.src(a), self.src(b));
                let r = match op {
                    BinOp::Add => self.k.bin(Bin::Add, T::S64, x, y),
                    BinOp::Sub => self.k.bin(Bin::Sub, T::S64, x, y),
                    BinOp::Mul => self.k.bin(Bin::Mul, T::S64, x, y),
                    BinOp::MulHi => self.k.bin(Bin::MulHi, T::S64, x, y),
                    BinOp::Min | BinOp::PyMin => self.k.bin(Bin::Min, T::S64, x, y),
                    BinOp::Max | BinOp::PyMax => self.k.bin(Bin::Max, T::S64, x, y),
                    BinOp::And => self.k.bin(Bin::And, T::B64, x, y),
                    BinOp::Or => self.k.bin(Bin::Or, T::B64, x, y),
                    BinOp::Xor => self.k.bin(Bin::Xor, T::B64, x, y),
                    BinOp::Shl | BinOp::Shr => {
                        // Counts are masked to 0..63, as `wrapping_shl`/`wrapping_shr`.
                        let n = match y {
                            Src::I(c) => Src::I(c & 63),
                            Src::R(r) => {
                                let lo = self.k.cvt(None, T::U32, T::U64, r);
                                Src::R(self.k.bin(Bin::And, T::B32, lo, Src::I(63)))
                            }
                            s => s,
                        };
                        if op == BinOp::Shl {
                            self.k.bin(Bin::Shl, T::B64, x, n)
                        } else {
                            self.k.bin(Bin::Shr, T::S64, x, n)
                        }
                    }
                    _ => self.k.mov(T::S64, x),
                };
                V::R(r, Ty::I64)
            }
            Ty::Bool => {
                let (x, y) = (self.reg(a), self.reg(b));
                let o = match op {
                    BinOp::And | BinOp::Min | BinOp::PyMin => Bin::And,
                    BinOp::Or | BinOp::Max | BinOp::PyMax => Bin::Or,
                    _ => Bin::Xor,
                };
                V::R(self.k.bin(o, T::Pred, x, y), Ty::Bool)
            }
        }
    }

    /// NumPy minimum/maximum: NaN if either is NaN; -0.0 below +0.0.
    fn numpy_minmax(&mut self, min: bool, x: Reg, y: Reg) -> Reg {
        let nan = self.k.setp(Cmp::Nan, T::F64, x, y);
        let r = if self.sh.native_minmax {
            self.k
                .bin(if min { Bin::Min } else { Bin::Max }, T::F64, x, y)
        } else {
            let p = self
                .k
                .setp(if min { Cmp::Lt } else { Cmp::Gt }, T::F64, x, y);
            let r = self.k.selp(T::F64, x, y, p);
            let eq = self.k.setp(Cmp::Eq, T::F64, x, y);
            // Equal values differ only in the sign of zero: OR the bits for min, AND for max.
            let d = self.k.reg(Cls::F64);
            self.k.push(Ins::Bin {
                op: if min { Bin::Or } else { Bin::And },
                t: T::B64,
                d,
                a: Src::R(x),
                b: Src::R(y),
            });
            self.k.selp(T::F64, d, r, eq)
        };
        self.k.selp(T::F64, Src::f64(f64::NAN), r, nan)
    }

    /// Python's `//` and `%` on i64 (`MIN // -1` wraps; a zero divisor gives 0, as the IR
    /// defines it: see `ndjit::math::ndjit_ifloordiv`).
    fn floor_div_mod(&mut self, op: BinOp, a: V, b: V) -> V {
        let x = self.reg(a);
        if let V::C(Val::I(c)) = b {
            if c > 0 && (c as u64).is_power_of_two() {
                let r = if op == BinOp::FloorDiv {
                    self.k
                        .bin(Bin::Shr, T::S64, x, Src::I(c.trailing_zeros() as i64))
                } else {
                    self.k.bin(Bin::And, T::B64, x, Src::I(c - 1))
                };
                return V::R(r, Ty::I64);
            }
        }
        let y = self.reg(b);
        let m1 = self.k.setp(Cmp::Eq, T::S64, y, Src::I(-1));
        let zero = self.k.setp(Cmp::Eq, T::S64, y, Src::I(0));
        let special = self.k.bin(Bin::Or, T::Pred, m1, zero);
        let safe = self.k.selp(T::S64, Src::I(1), y, special);
        let q0 = self.k.bin(Bin::Div, T::S64, x, safe);
        let r0 = self.k.bin(Bin::Rem, T::S64, x, safe);
        let negx = self.k.un(Un::Neg, T::S64, x);
        let q0 = self.k.selp(T::S64, negx, q0, m1);
        // Adjust toward minus infinity when the remainder's sign differs from the divisor's.
        let rn = self.k.setp(Cmp::Lt, T::S64, r0, Src::I(0));
        let yn = self.k.setp(Cmp::Lt, T::S64, y, Src::I(0));
        let differ = self.k.bin(Bin::Xor, T::Pred, rn, yn);
        let adj = self
            .k
            .setp_comb(Cmp::Ne, T::S64, r0, Src::I(0), BoolOp::And, differ, false);
        let r = if op == BinOp::FloorDiv {
            let one = self.k.selp(T::S64, Src::I(1), Src::I(0), adj);
            self.k.bin(Bin::Sub, T::S64, q0, one)
        } else {
            let add = self.k.selp(T::S64, y, Src::I(0), adj);
            self.k.bin(Bin::Add, T::S64, r0, add)
        };
        let r = self.k.selp(T::S64, Src::I(0), r, zero);
        V::R(r, Ty::I64)
    }

    fn cmp(&mut self, op: CmpOp, a: V, b: V) -> V {
        if let (V::C(x), V::C(y)) = (a, b) {
            return V::C(Val::B(eval::cmp(op, x, y)));
        }
        if a.ty() == Ty::F64 && b.ty() == Ty::F64 {
            let (x, y) = (self.src(a), self.src(b));
            let c = match op {
                CmpOp::Lt => Cmp::Lt,
                CmpOp::Le => Cmp::Le,
                CmpOp::Gt => Cmp::Gt,
                CmpOp::Ge => Cmp::Ge,
                CmpOp::Eq => Cmp::Eq,
                CmpOp::Ne => Cmp::Neu,
            };
            let (x, y) = match (x, y) {
                (Src::R(_), _) => (x, y),
                (_, Src::R(_)) => (x, y),
                _ => (Src::R(self.k.mov(T::F64, x)), y),
            };
            return V::R(self.k.setp(c, T::F64, x, y), Ty::Bool);
        }
        let (a, b) = (self.coerce(a, Ty::I64), self.coerce(b, Ty::I64));
        let (x, y) = (self.src(a), self.src(b));
        let x = match (x, y) {
            (Src::I(_), Src::I(_)) => Src::R(self.k.mov(T::S64, x)),
            _ => x,
        };
        let c = match op {
            CmpOp::Lt => Cmp::Lt,
            CmpOp::Le => Cmp::Le,
            CmpOp::Gt => Cmp::Gt,
            CmpOp::Ge => Cmp::Ge,
            CmpOp::Eq => Cmp::Eq,
            CmpOp::Ne => Cmp::Ne,
        };
        V::R(self.k.setp(c, T::S64, x, y), Ty::Bool)
    }

    fn select(&mut self, c: V, a: V, b: V) -> V {
        let ty = a.ty();
        let b = self.coerce(b, ty);
        let p = match c {
            V::C(c) => return if c.b() { a } else { b },
            V::R(p, _) => p,
        };
        if ty == Ty::Bool {
            let (x, y) = (self.coerce(a, Ty::I64), self.coerce(b, Ty::I64));
            let (x, y) = (self.src(x), self.src(y));
            let s = self.k.selp(T::S64, x, y, p);
            return V::R(self.k.setp(Cmp::Ne, T::S64, s, Src::I(0)), Ty::Bool);
        }
        let (x, y) = (self.src(a), self.src(b));
        V::R(self.k.selp(pt(ty), x, y, p), ty)
    }

    // ---- reductions ---------------------------------------------------------------------------

    /// `max(len, 0)`.
    fn count(&mut self, len: &Expr) -> Res<V> {
        let n = self.expr_as(len, Ty::I64)?;
        Ok(match n {
            V::C(c) => V::C(Val::I(c.i().max(0))),
            V::R(r, _) if matches!(len, Expr::Len(_)) => V::R(r, Ty::I64),
            V::R(r, _) => V::R(self.k.bin(Bin::Max, T::S64, r, Src::I(0)), Ty::I64),
        })
    }

    fn unrolled(n: V, nodes: usize) -> Option<i64> {
        match n {
            V::C(Val::I(k))
                if k <= UNROLL_MAX_LEN
                    && (k as usize).saturating_mul(nodes.max(1)) <= UNROLL_MAX_NODES =>
            {
                Some(k)
            }
            _ => None,
        }
    }

    /// `elem` with the index bound to `i` (a constant or a register).
    fn elem_at(&mut self, index: Var, i: V, elem: &Expr, ty: Ty) -> Res<V> {
        let slot = index.0 as usize;
        match i {
            V::C(c) => self.consts[slot] = Some(c),
            V::R(r, _) => {
                self.consts[slot] = None;
                self.k.set(T::S64, self.vars[slot], r);
            }
        }
        let v = self.expr_as(elem, ty);
        self.consts[slot] = None;
        v
    }

    /// After an unrolled loop the index variable holds its last value, as after the
    /// interpreter's loop.
    fn leave_index(&mut self, index: Var, k: i64) {
        if k > 0 {
            self.k
                .set(T::S64, self.vars[index.0 as usize], Src::I(k - 1));
        }
    }

    /// `for i in start..n { body(i) }` with `i` in a register; `rolled`: ptxas is told not to
    /// unroll it.
    fn counted(
        &mut self,
        (start, rolled): (Src, bool),
        n: Reg,
        body: &mut dyn FnMut(&mut Self, Reg) -> Res<()>,
    ) -> Res<()> {
        let i = self.k.mov(T::S64, start);
        let (top, end) = (self.k.new_label(), self.k.new_label());
        self.k.place(top);
        if rolled {
            self.k.no_unroll();
        }
        let done = self.k.setp(Cmp::Ge, T::S64, i, n);
        self.k.bra_if(done, false, end);
        body(self, i)?;
        let next = self.k.bin(Bin::Add, T::S64, i, Src::I(1));
        self.k.set(T::S64, i, next);
        self.k.bra(top);
        self.k.place(end);
        Ok(())
    }

    fn reduce(
        &mut self,
        dst: Var,
        op: ReduceOp,
        len: &Expr,
        index: Var,
        elem: &Expr,
        on_empty: Option<ir::ErrorId>,
    ) -> Res<bool> {
        let (ein, _) = op.types();
        let n = self.count(len)?;
        if op.needs_nonempty() {
            let site = on_empty.map_or(NO_RECORD, |e| e.0 as u64);
            match n {
                V::C(c) if c.i() == 0 => {
                    self.fail_vals(site, V::C(Val::I(0)), V::C(Val::I(0)));
                    return Ok(false);
                }
                V::C(_) => {}
                V::R(r, _) => {
                    let ok = self.k.new_label();
                    let p = self.k.setp(Cmp::Gt, T::S64, r, Src::I(0));
                    self.k.bra_if(p, false, ok);
                    self.fail_vals(site, V::C(Val::I(0)), V::C(Val::I(0)));
                    self.k.place(ok);
                }
            }
        }
        // `any`/`all` of more values than a register window's taps run as a loop: unrolled
        // after a minimum over the same taps (`np.min`'s zero-sign guard holds two), ptxas
        // scheduled them into 255 registers with spills from 11×11 (`gpu/tests/ptxas.rs`).
        // The loop is marked to stay rolled: at 9×9 ptxas unrolled the two loops of an edge
        // output, over its local copy of the taps, and then kept that copy in registers (195
        // for the whole kernel, 76 rolled).
        let looped = matches!(op, ReduceOp::Any | ReduceOp::All)
            && matches!(n, V::C(Val::I(k)) if k as usize > taps::WINDOW_REGS);
        let r = match Self::unrolled(n, elem.size()).filter(|_| !looped) {
            Some(k) => self.reduce_unrolled(op, k, index, elem, ein)?,
            None => {
                let n = self.reg(n);
                self.reduce_loop(op, (n, looped), index, elem, ein)?
            }
        };
        self.assign(dst, r);
        Ok(true)
    }

    fn reduce_unrolled(
        &mut self,
        op: ReduceOp,
        k: i64,
        index: Var,
        elem: &Expr,
        ein: Ty,
    ) -> Res<V> {
        if op == ReduceOp::Sum {
            let r = self.sum_unrolled(k, index, elem)?;
            self.leave_index(index, k);
            return Ok(r);
        }
        if matches!(op, ReduceOp::Min | ReduceOp::Max) && k as usize > taps::WINDOW_REGS {
            let r = self.minmax_chunked(op == ReduceOp::Min, k, index, elem, ein)?;
            self.leave_index(index, k);
            return Ok(r);
        }
        let mut items = Vec::with_capacity(k as usize);
        for i in 0..k {
            items.push(self.elem_at(index, V::C(Val::I(i)), elem, ein)?);
        }
        self.leave_index(index, k);
        if items.is_empty() {
            return Ok(V::C(ndjit::ir::eval::reduce_empty(op)));
        }
        if matches!(op, ReduceOp::Min | ReduceOp::Max) {
            if let Some(groups) = self.window_groups(k, index, elem) {
                return Ok(self.minmax_grouped(op == ReduceOp::Min, &items, &groups));
            }
            return Ok(self.minmax_all(op == ReduceOp::Min, &items));
        }
        let mut acc = self.first(op, items[0]);
        let mut arg = V::C(Val::I(0));
        for (i, v) in items.iter().enumerate().skip(1) {
            let (a, g) = self.fold_step(op, acc, arg, *v, V::C(Val::I(i as i64)));
            acc = a;
            arg = g;
        }
        Ok(if matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax) {
            arg
        } else {
            acc
        })
    }

    /// NumPy min/max of more elements than registers hold at once: each chunk's elements are
    /// evaluated (loaded) and folded before the next chunk's, so that few are live at a time.
    /// The chunks' results fold with NumPy's two-argument min/max, which gives the same value as
    /// folding every element in any order (`lowering_variants_agree` checks the two lowerings).
    fn minmax_chunked(&mut self, min: bool, k: i64, index: Var, elem: &Expr, ein: Ty) -> Res<V> {
        const CHUNK: i64 = 16;
        let mut acc: Option<V> = None;
        for start in (0..k).step_by(CHUNK as usize) {
            let mut items = Vec::with_capacity(CHUNK as usize);
            for i in start..(start + CHUNK).min(k) {
                items.push(self.elem_at(index, V::C(Val::I(i)), elem, ein)?);
            }
            let part = self.minmax_all(min, &items);
            let op = if min { BinOp::Min } else { BinOp::Max };
            acc = Some(acc.map_or(part, |a| self.binary(op, a, part)));
        }
        Ok(acc.expect("k > 0"))
    }

    /// The fold state after the first element.
    fn first(&mut self, op: ReduceOp, v: V) -> V {
        match op {
            ReduceOp::Count => self.coerce(v, Ty::I64),
            // Python's `0 + x0`: keeps every value but turns `-0.0` into `0.0`.
            ReduceOp::SumSeq => self.binary(BinOp::Add, V::C(Val::F(0.0)), v),
            _ => v,
        }
    }

    /// `elem` evaluated with its own type (for fills, which store its bits).
    fn elem_raw(&mut self, index: Var, i: V, elem: &Expr) -> Res<V> {
        let ty = elem.ty(self.sh.func);
        self.elem_at(index, i, elem, ty)
    }

    /// For a reduction whose elements are the taps `x[i]`, `i = 0..k` (all of them, in order):
    /// the element indices grouped by window column, columns and rows in window order.
    fn window_groups(&self, k: i64, index: Var, elem: &Expr) -> Option<Vec<Vec<usize>>> {
        let w = self.window.as_ref()?;
        if k as usize != w.len() || !self.sh.native_minmax {
            return None;
        }
        match elem {
            Expr::Load(a, i) if *a == BUFFER && **i == Expr::Var(index) => {}
            _ => return None,
        }
        // Per column (dz, x): its taps as (dy, 0, tap index).
        type Taps = Vec<(i64, i64, usize)>;
        let mut by_col: BTreeMap<(i64, i64), Taps> = BTreeMap::new();
        for (i, p) in w.iter().enumerate() {
            // Column = (dz, x); rows (dy) inside.
            by_col.entry((p[0], p[2])).or_default().push((p[1], 0, i));
        }
        Some(
            by_col
                .into_values()
                .map(|mut g| {
                    g.sort();
                    g.into_iter().map(|(_, _, i)| i).collect()
                })
                .collect(),
        )
    }

    /// NumPy min/max of the taps, folded column by column in window order: identical instruction
    /// sequences for the columns adjacent outputs share, which ptxas then computes once.
    fn minmax_grouped(&mut self, min: bool, items: &[V], groups: &[Vec<usize>]) -> V {
        if let Some(t32) = self.taps32.clone() {
            return self.minmax_grouped32(min, &t32, groups);
        }
        let op = if min { Bin::Min } else { Bin::Max };
        let regs: Vec<Reg> = items.iter().map(|v| self.reg(*v)).collect();
        let mut partial = Vec::with_capacity(groups.len());
        let mut nans = Vec::with_capacity(groups.len());
        for g in groups {
            let mut acc = regs[g[0]];
            for &i in &g[1..] {
                acc = self.k.bin(op, T::F64, acc, regs[i]);
            }
            partial.push(acc);
            let group: Vec<Reg> = g.iter().map(|&i| regs[i]).collect();
            nans.push(any_nan(self.k, T::F64, &group));
        }
        let mut acc = partial[0];
        let mut nan = nans[0];
        for (p, n) in partial[1..].iter().zip(&nans[1..]) {
            acc = self.k.bin(op, T::F64, acc, *p);
            nan = self.k.bin(Bin::Or, T::Pred, nan, *n);
        }
        V::R(self.k.selp(T::F64, Src::f64(f64::NAN), acc, nan), Ty::F64)
    }

    /// [`Body::minmax_grouped`] on the taps' float32 values ([`Body::taps32`]): the same result
    /// (the values are the same and min/max only compare), with float32 instructions.
    fn minmax_grouped32(&mut self, min: bool, regs: &[Reg], groups: &[Vec<usize>]) -> V {
        let op = if min { Bin::Min } else { Bin::Max };
        let mut acc = None;
        let mut nan = None;
        for g in groups {
            let mut a = regs[g[0]];
            for &i in &g[1..] {
                a = self.k.bin(op, T::F32, a, regs[i]);
            }
            let group: Vec<Reg> = g.iter().map(|&i| regs[i]).collect();
            let p = any_nan(self.k, T::F32, &group);
            acc = Some(match acc {
                None => a,
                Some(x) => self.k.bin(op, T::F32, x, a),
            });
            nan = Some(match nan {
                None => p,
                Some(q) => self.k.bin(Bin::Or, T::Pred, q, p),
            });
        }
        let r = self.k.cvt(None, T::F64, T::F32, acc.expect("a group"));
        V::R(
            self.k
                .selp(T::F64, Src::f64(f64::NAN), r, nan.expect("a group")),
            Ty::F64,
        )
    }

    /// NumPy min/max of several values: the order does not matter (NaN payloads aside).
    fn minmax_all(&mut self, min: bool, items: &[V]) -> V {
        if items.iter().all(|v| matches!(v, V::C(_))) {
            let mut acc = items[0];
            for v in &items[1..] {
                acc = self.binary(if min { BinOp::Min } else { BinOp::Max }, acc, *v);
            }
            return acc;
        }
        if !self.sh.native_minmax {
            let mut acc = items[0];
            for v in &items[1..] {
                acc = self.binary(if min { BinOp::Min } else { BinOp::Max }, acc, *v);
            }
            return acc;
        }
        let regs: Vec<Reg> = items.iter().map(|v| self.reg(*v)).collect();
        let nan = any_nan(self.k, T::F64, &regs);
        // A balanced tree of min/max: shorter dependency chains than a linear fold.
        let mut level = regs;
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            for pair in level.chunks(2) {
                next.push(if pair.len() == 2 {
                    self.k.bin(
                        if min { Bin::Min } else { Bin::Max },
                        T::F64,
                        pair[0],
                        pair[1],
                    )
                } else {
                    pair[0]
                });
            }
            level = next;
        }
        V::R(
            self.k.selp(T::F64, Src::f64(f64::NAN), level[0], nan),
            Ty::F64,
        )
    }

    /// One step of a sequential fold: `(accumulator, argument index)`.
    fn fold_step(&mut self, op: ReduceOp, acc: V, arg: V, v: V, i: V) -> (V, V) {
        match op {
            ReduceOp::SumInt => (self.binary(BinOp::Add, acc, v), arg),
            ReduceOp::Sum | ReduceOp::SumSeq => (self.binary(BinOp::Add, acc, v), arg),
            ReduceOp::Prod => (self.binary(BinOp::Mul, acc, v), arg),
            ReduceOp::Min => (self.binary(BinOp::Min, acc, v), arg),
            ReduceOp::Max => (self.binary(BinOp::Max, acc, v), arg),
            ReduceOp::PyMin | ReduceOp::PyMax => {
                // `if v < acc: acc = v` (`>` for max).
                let c = if op == ReduceOp::PyMin {
                    CmpOp::Lt
                } else {
                    CmpOp::Gt
                };
                let take = self.cmp(c, v, acc);
                (self.select(take, v, acc), arg)
            }
            ReduceOp::Any => (self.binary(BinOp::Or, acc, v), arg),
            ReduceOp::All => (self.binary(BinOp::And, acc, v), arg),
            ReduceOp::Count => {
                let one = self.coerce(v, Ty::I64);
                (self.binary(BinOp::Add, acc, one), arg)
            }
            ReduceOp::ArgMin | ReduceOp::ArgMax => {
                // Take v when it is NaN or strictly better, unless the best so far is a NaN.
                let (vb, bb) = (self.reg(v), self.reg(acc));
                let c = if op == ReduceOp::ArgMin {
                    Cmp::Ltu
                } else {
                    Cmp::Gtu
                };
                let better = self.k.setp(c, T::F64, vb, bb);
                let take = self
                    .k
                    .setp_comb(Cmp::Num, T::F64, bb, bb, BoolOp::And, better, false);
                let best = self.k.selp(T::F64, vb, bb, take);
                let (si, sa) = (self.src(i), self.src(arg));
                let arg = self.k.selp(T::S64, si, sa, take);
                (V::R(best, Ty::F64), V::R(arg, Ty::I64))
            }
        }
    }

    /// A reduction as a loop of `n` steps; `rolled`: ptxas is told to keep it rolled.
    fn reduce_loop(
        &mut self,
        op: ReduceOp,
        (n, rolled): (Reg, bool),
        index: Var,
        elem: &Expr,
        ein: Ty,
    ) -> Res<V> {
        if op == ReduceOp::Sum {
            return self.sum_loop(n, index, elem);
        }
        let acc_ty = match op {
            ReduceOp::Count => Ty::I64,
            ReduceOp::ArgMin | ReduceOp::ArgMax => Ty::F64,
            _ => op.types().1,
        };
        let acc = self.k.reg(cls(acc_ty));
        let arg = self.k.mov(T::S64, Src::I(0));
        let start = if op.needs_nonempty() {
            let zero = V::C(Val::I(0));
            let e0 = self.elem_at(index, zero, elem, ein)?;
            // `elem_at` with a constant index leaves the variable as is; the loop sets it.
            let f0 = self.first(op, e0);
            let s = self.src(f0);
            self.k.set(pt(acc_ty), acc, s);
            1
        } else {
            let s = self.src(V::C(ndjit::ir::eval::reduce_empty(op)));
            self.k.set(pt(acc_ty), acc, s);
            0
        };
        if start == 1 {
            // As the interpreter: the index variable is 0 after element 0.
            self.k.set(T::S64, self.vars[index.0 as usize], Src::I(0));
        }
        self.counted((Src::I(start), rolled), n, &mut |b: &mut Self, i| {
            let v = b.elem_at(index, V::R(i, Ty::I64), elem, ein)?;
            let (a, g) = b.fold_step(
                op,
                V::R(acc, acc_ty),
                V::R(arg, Ty::I64),
                v,
                V::R(i, Ty::I64),
            );
            let (sa, sg) = (b.src(a), b.src(g));
            b.k.set(pt(acc_ty), acc, sa);
            b.k.set(T::S64, arg, sg);
            Ok(())
        })?;
        Ok(if matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax) {
            V::R(arg, Ty::I64)
        } else {
            V::R(acc, acc_ty)
        })
    }

    /// `runtime::pairwise_sum` over a constant number of elements.
    fn sum_unrolled(&mut self, k: i64, index: Var, elem: &Expr) -> Res<V> {
        // An empty sum is 0.0; a sum of constants folds to a constant.
        if k == 0 {
            return Ok(V::C(Val::F(0.0)));
        }
        let sum = self.pairwise_unrolled(0, k, index, elem)?;
        Ok(self.binary(BinOp::Add, V::C(Val::F(0.0)), sum))
    }

    /// NumPy's `pairwise_sum` of elements `start..start + len` (len ≥ 1): one block up to 128
    /// elements, else the two halves of `runtime::pairwise_split`, added.
    fn pairwise_unrolled(&mut self, start: i64, len: i64, index: Var, elem: &Expr) -> Res<V> {
        if len <= ndjit::runtime::SUM_BLOCK as i64 {
            return self.pairwise_block(start, len, index, elem);
        }
        let half = ndjit::runtime::pairwise_split(len as usize) as i64;
        let left = self.pairwise_unrolled(start, half, index, elem)?;
        let right = self.pairwise_unrolled(start + half, len - half, index, elem)?;
        Ok(self.binary(BinOp::Add, left, right))
    }

    /// `runtime::pairwise_block` of elements `start..start + len` (1 ≤ len ≤ 128).
    fn pairwise_block(&mut self, start: i64, len: i64, index: Var, elem: &Expr) -> Res<V> {
        let at = |b: &mut Self, p: i64| b.elem_at(index, V::C(Val::I(start + p)), elem, Ty::F64);
        let mut res: Option<V> = None;
        let mut tail = 0;
        if len >= 8 {
            let mut r = Vec::with_capacity(8);
            for p in 0..8 {
                r.push(at(self, p)?);
            }
            let end8 = len - len % 8;
            for p in 8..end8 {
                let v = at(self, p)?;
                let j = (p % 8) as usize;
                r[j] = self.binary(BinOp::Add, r[j], v);
            }
            let a = self.binary(BinOp::Add, r[0], r[1]);
            let b = self.binary(BinOp::Add, r[2], r[3]);
            let c = self.binary(BinOp::Add, r[4], r[5]);
            let d = self.binary(BinOp::Add, r[6], r[7]);
            let ab = self.binary(BinOp::Add, a, b);
            let cd = self.binary(BinOp::Add, c, d);
            res = Some(self.binary(BinOp::Add, ab, cd));
            tail = end8;
        }
        for p in tail..len {
            let v = at(self, p)?;
            // Where the runtime starts at -0.0, this starts at the first element (-0.0 + x == x).
            res = Some(match res {
                None => v,
                Some(acc) => self.binary(BinOp::Add, acc, v),
            });
        }
        Ok(res.unwrap_or(V::C(Val::F(-0.0))))
    }

    /// `runtime::pairwise_sum` of a run-time number `n` of elements. NumPy's recursion (a block of
    /// up to 128 elements, else two halves split at `runtime::pairwise_split`, summed the same
    /// way and added) runs as a loop over an explicit stack of pending right halves in local
    /// memory: each entry holds the right half's start and length (0 once its left half is
    /// summed) and the left half's sum. Halves at least halve, so for any `n` below 128 * 2^24
    /// (far beyond any array a thread holds) the stack never holds more than 24 entries.
    fn sum_loop(&mut self, n: Reg, index: Var, elem: &Expr) -> Res<V> {
        const ENTRY: i64 = 24;
        // One stack serves every sum of the kernel: a sum's elements are expressions, never sums.
        self.k.local("sum_stack", 24 * ENTRY as u64);
        let base = self.k.addr_of("sum_stack");
        let block = ndjit::runtime::SUM_BLOCK as i64;
        let total = self.k.mov(T::F64, Src::f64(0.0));
        let [descend, leaf, ascend, combine, finish, end] = [(); 6].map(|_| self.k.new_label());
        let empty = self.k.setp(Cmp::Le, T::S64, n, Src::I(0));
        self.k.bra_if(empty, false, end);
        let pos = self.k.mov(T::S64, Src::I(0));
        let len = self.k.mov(T::S64, n);
        let top = self.k.mov(T::S64, base); // one past the stack's last entry
        let v = self.k.reg(Cls::F64);
        // Descend to the leftmost block of [pos, pos + len), pushing the right halves.
        self.k.place(descend);
        let small = self.k.setp(Cmp::Le, T::S64, len, Src::I(block));
        self.k.bra_if(small, false, leaf);
        let half = self.k.bin(Bin::Shr, T::S64, len, Src::I(1));
        let half = self.k.bin(Bin::And, T::B64, half, Src::I(!7));
        let right = self.k.bin(Bin::Add, T::S64, pos, half);
        let rest = self.k.bin(Bin::Sub, T::S64, len, half);
        self.k.st(Space::Local, T::S64, Addr::reg(top, 0), right);
        self.k.st(Space::Local, T::S64, Addr::reg(top, 8), rest);
        let pushed = self.k.bin(Bin::Add, T::S64, top, Src::I(ENTRY));
        self.k.set(T::S64, top, pushed);
        self.k.set(T::S64, len, half);
        self.k.bra(descend);
        self.k.place(leaf);
        let sum = self.block_sum(pos, len, index, elem)?;
        self.k.set(T::F64, v, sum);
        // Ascend: a finished left half waits for its right half; a finished right half is added
        // to its left half's sum.
        self.k.place(ascend);
        let bottom = self.k.setp(Cmp::Eq, T::S64, top, base);
        self.k.bra_if(bottom, false, finish);
        let entry = self.k.bin(Bin::Sub, T::S64, top, Src::I(ENTRY));
        let rest = self.k.ld(Space::Local, T::S64, Addr::reg(entry, 8));
        let left_done = self.k.setp(Cmp::Eq, T::S64, rest, Src::I(0));
        self.k.bra_if(left_done, false, combine);
        self.k.st(Space::Local, T::F64, Addr::reg(entry, 16), v);
        self.k
            .st(Space::Local, T::S64, Addr::reg(entry, 8), Src::I(0));
        let right = self.k.ld(Space::Local, T::S64, Addr::reg(entry, 0));
        self.k.set(T::S64, pos, right);
        self.k.set(T::S64, len, rest);
        self.k.bra(descend);
        self.k.place(combine);
        let left = self.k.ld(Space::Local, T::F64, Addr::reg(entry, 16));
        let both = self.k.bin(Bin::Add, T::F64, left, v);
        self.k.set(T::F64, v, both);
        self.k.set(T::S64, top, entry);
        self.k.bra(ascend);
        self.k.place(finish);
        let t = self.k.bin(Bin::Add, T::F64, total, v);
        self.k.set(T::F64, total, t);
        self.k.place(end);
        // The index variable ends at its last value, as after the interpreter's loop.
        let last = self.k.bin(Bin::Sub, T::S64, n, Src::I(1));
        let nonempty = self.k.setp(Cmp::Gt, T::S64, n, Src::I(0));
        let var = self.vars[index.0 as usize];
        let after = self.k.selp(T::S64, last, var, nonempty);
        self.k.set(T::S64, var, after);
        Ok(V::R(total, Ty::F64))
    }

    /// `runtime::pairwise_block` of elements `blk..blk + len` (1 ≤ len ≤ 128, run-time values):
    /// eight interleaved partial sums when there are at least eight, the rest in order.
    fn block_sum(&mut self, blk: Reg, len: Reg, index: Var, elem: &Expr) -> Res<Reg> {
        let res = self.k.reg(Cls::F64);
        let (short, joined) = (self.k.new_label(), self.k.new_label());
        let lt8 = self.k.setp(Cmp::Lt, T::S64, len, Src::I(8));
        self.k.bra_if(lt8, false, short);
        {
            // Eight partial sums.
            let mut r = Vec::with_capacity(8);
            for p in 0..8 {
                let i = self.k.bin(Bin::Add, T::S64, blk, Src::I(p));
                let v = self.elem_at(index, V::R(i, Ty::I64), elem, Ty::F64)?;
                let reg = self.k.reg(Cls::F64);
                let s = self.src(v);
                self.k.set(T::F64, reg, s);
                r.push(reg);
            }
            let end8 = self.k.bin(Bin::And, T::B64, len, Src::I(!7));
            let p = self.k.mov(T::S64, Src::I(8));
            let (l8, l8end) = (self.k.new_label(), self.k.new_label());
            self.k.place(l8);
            let stop = self.k.setp(Cmp::Ge, T::S64, p, end8);
            self.k.bra_if(stop, false, l8end);
            for (j, rj) in r.iter().enumerate() {
                let off = self.k.bin(Bin::Add, T::S64, p, Src::I(j as i64));
                let i = self.k.bin(Bin::Add, T::S64, blk, off);
                let v = self.elem_at(index, V::R(i, Ty::I64), elem, Ty::F64)?;
                let s = self.src(v);
                let sum = self.k.bin(Bin::Add, T::F64, *rj, s);
                self.k.set(T::F64, *rj, sum);
            }
            let np = self.k.bin(Bin::Add, T::S64, p, Src::I(8));
            self.k.set(T::S64, p, np);
            self.k.bra(l8);
            self.k.place(l8end);
            let a = self.k.bin(Bin::Add, T::F64, r[0], r[1]);
            let b = self.k.bin(Bin::Add, T::F64, r[2], r[3]);
            let c = self.k.bin(Bin::Add, T::F64, r[4], r[5]);
            let d = self.k.bin(Bin::Add, T::F64, r[6], r[7]);
            let ab = self.k.bin(Bin::Add, T::F64, a, b);
            let cd = self.k.bin(Bin::Add, T::F64, c, d);
            let t = self.k.bin(Bin::Add, T::F64, ab, cd);
            self.k.set(T::F64, res, t);
            // The tail, in order.
            let q = self.k.mov(T::S64, end8);
            let (lt, ltend) = (self.k.new_label(), self.k.new_label());
            self.k.place(lt);
            let stop = self.k.setp(Cmp::Ge, T::S64, q, len);
            self.k.bra_if(stop, false, ltend);
            let i = self.k.bin(Bin::Add, T::S64, blk, q);
            let v = self.elem_at(index, V::R(i, Ty::I64), elem, Ty::F64)?;
            let s = self.src(v);
            let sum = self.k.bin(Bin::Add, T::F64, res, s);
            self.k.set(T::F64, res, sum);
            let nq = self.k.bin(Bin::Add, T::S64, q, Src::I(1));
            self.k.set(T::S64, q, nq);
            self.k.bra(lt);
            self.k.place(ltend);
            self.k.bra(joined);
        }
        self.k.place(short);
        {
            let v0 = self.elem_at(index, V::R(blk, Ty::I64), elem, Ty::F64)?;
            let s = self.src(v0);
            self.k.set(T::F64, res, s);
            let q = self.k.mov(T::S64, Src::I(1));
            let (lt, ltend) = (self.k.new_label(), self.k.new_label());
            self.k.place(lt);
            let stop = self.k.setp(Cmp::Ge, T::S64, q, len);
            self.k.bra_if(stop, false, ltend);
            let i = self.k.bin(Bin::Add, T::S64, blk, q);
            let v = self.elem_at(index, V::R(i, Ty::I64), elem, Ty::F64)?;
            let s = self.src(v);
            let sum = self.k.bin(Bin::Add, T::F64, res, s);
            self.k.set(T::F64, res, sum);
            let nq = self.k.bin(Bin::Add, T::S64, q, Src::I(1));
            self.k.set(T::S64, q, nq);
            self.k.bra(lt);
            self.k.place(ltend);
        }
        self.k.place(joined);
        Ok(res)
    }

    // ---- fills and scratch arrays ----------------------------------------------------------------

    fn fill(
        &mut self,
        dst: Arr,
        len: &Expr,
        index: Var,
        elem: &Expr,
        keep: Option<&Expr>,
    ) -> Res<bool> {
        let n = self.count(len)?;
        let reads_dst = reads_array(elem, dst) || keep.is_some_and(|k| reads_array(k, dst));
        let nodes = elem.size() + keep.map_or(0, Expr::size);
        match self.arrays[dst.0 as usize].clone() {
            Storage::Regs {
                elem: ety, regs, ..
            } => {
                let c = match (n, keep, reads_dst) {
                    (V::C(c), None, false)
                        if c.i() <= REG_ARRAY_MAX && Self::unrolled(n, nodes).is_some() =>
                    {
                        c.i()
                    }
                    _ => return Err(Restart::Local(dst.0)),
                };
                let regs = if regs.is_empty() {
                    (0..c).map(|_| self.k.reg(cls(ety))).collect::<Vec<_>>()
                } else if regs.len() as i64 == c {
                    regs
                } else {
                    return Err(Restart::Local(dst.0));
                };
                // Evaluate every element before writing any (an element may read an earlier
                // array that shares nothing with this one, but keep the order simple).
                let mut vals = Vec::with_capacity(c as usize);
                for i in 0..c {
                    let v = self.elem_raw(index, V::C(Val::I(i)), elem)?;
                    let v = self.as_elem(v, ety);
                    vals.push(v);
                }
                for (r, v) in regs.iter().zip(vals) {
                    let s = self.src(v);
                    self.k.set(pt(ety), *r, s);
                }
                self.leave_index(index, c);
                self.arrays[dst.0 as usize] = Storage::Regs {
                    elem: ety,
                    regs,
                    len: Some(c),
                };
                Ok(true)
            }
            Storage::Local {
                elem: ety,
                name,
                cap,
                len: len_reg,
            } => {
                // The array reads as empty while it is filled, as in the interpreter.
                self.k.set(T::S64, len_reg, Src::I(0));
                match n {
                    V::C(c) if c.i() > cap => {
                        self.fail_vals(SITE_SCRATCH, n, V::C(Val::I(0)));
                        return Ok(false);
                    }
                    V::C(_) => {}
                    V::R(r, _) => {
                        let ok = self.k.new_label();
                        let p = self.k.setp(Cmp::Le, T::S64, r, Src::I(cap));
                        self.k.bra_if(p, false, ok);
                        self.fail_vals(SITE_SCRATCH, n, V::C(Val::I(0)));
                        self.k.place(ok);
                    }
                }
                let base = self.k.addr_of(&name);
                let kept = match Self::unrolled(n, nodes) {
                    Some(c) => {
                        let count = self.k.mov(T::S64, Src::I(0));
                        for i in 0..c {
                            let iv = V::C(Val::I(i));
                            let kp = match keep {
                                Some(kx) => Some(self.elem_at(index, iv, kx, Ty::Bool)?),
                                None => None,
                            };
                            if let Some(V::C(kc)) = kp {
                                if !kc.b() {
                                    continue;
                                }
                            }
                            let v = self.elem_raw(index, iv, elem)?;
                            let at = if keep.is_some() {
                                V::R(count, Ty::I64)
                            } else {
                                iv
                            };
                            self.store_cell(base, at, v, ety);
                            match kp {
                                Some(V::R(p, _)) => {
                                    let one = self.k.selp(T::S64, Src::I(1), Src::I(0), p);
                                    let nc = self.k.bin(Bin::Add, T::S64, count, one);
                                    self.k.set(T::S64, count, nc);
                                }
                                _ => {
                                    let nc = self.k.bin(Bin::Add, T::S64, count, Src::I(1));
                                    self.k.set(T::S64, count, nc);
                                }
                            }
                        }
                        self.leave_index(index, c);
                        count
                    }
                    None => {
                        let nr = self.reg(n);
                        let count = self.k.mov(T::S64, Src::I(0));
                        self.counted((Src::I(0), false), nr, &mut |b: &mut Self, i| {
                            let iv = V::R(i, Ty::I64);
                            let kp = match keep {
                                Some(kx) => Some(b.elem_at(index, iv, kx, Ty::Bool)?),
                                None => None,
                            };
                            let v = b.elem_raw(index, iv, elem)?;
                            b.store_cell(base, V::R(count, Ty::I64), v, ety);
                            let inc = match kp {
                                Some(V::R(p, _)) => {
                                    Src::R(b.k.selp(T::S64, Src::I(1), Src::I(0), p))
                                }
                                Some(V::C(c)) => Src::I(c.b() as i64),
                                None => Src::I(1),
                            };
                            let nc = b.k.bin(Bin::Add, T::S64, count, inc);
                            b.k.set(T::S64, count, nc);
                            Ok(())
                        })?;
                        count
                    }
                };
                self.k.set(T::S64, len_reg, kept);
                Ok(true)
            }
            _ => Err(Restart::Local(dst.0)),
        }
    }

    fn store_cell(&mut self, base: Reg, at: V, v: V, elem: Ty) {
        let v = self.as_elem(v, elem);
        let addr = self.elem_addr(base, at);
        let b = self.bits(v);
        let t = if elem == Ty::F64 { T::F64 } else { T::B64 };
        self.k.st(Space::Local, t, addr, b);
    }

    /// Sorts array `a`; `of_taps`: it holds the first taps in order (the IR's mark,
    /// [`ir::sorts_of_taps`]), whose float32 values the network may sort where the image has
    /// them.
    fn sort(&mut self, a: Arr, of_taps: bool) -> Res<()> {
        match self.arrays[a.0 as usize].clone() {
            Storage::Regs {
                regs,
                len: Some(c),
                elem: Ty::F64,
            } if c <= NETWORK_MAX => {
                let single = if of_taps {
                    self.first_taps_f32(c as usize)
                } else {
                    None
                };
                self.sort_regs(a, &regs[..c as usize], single);
                Ok(())
            }
            Storage::Regs { .. } => Err(Restart::Local(a.0)),
            // Short arrays (at most NETWORK_MAX) sort fastest by insertion; both sorts are stable
            // and give the same array.
            Storage::Local { name, cap, len, .. } if cap <= NETWORK_MAX => {
                self.insertion_sort(&name, len);
                Ok(())
            }
            Storage::Local { name, cap, len, .. } => self.merge_sort(&name, cap, len),
            _ => Err(Restart::Local(a.0)),
        }
    }

    /// `gtu(x, y) && !isnan(y)`: x comes after y in NumPy's order (NaN last).
    fn numpy_after(&mut self, x: Reg, y: Reg) -> Reg {
        let num = self.k.setp(Cmp::Num, T::F64, y, y);
        self.k
            .setp_comb(Cmp::Gtu, T::F64, x, y, BoolOp::And, num, false)
    }

    /// Sorts the registers `regs` of array `a` in NumPy's order, the positions read afterwards
    /// at least. Without NaN and zeros (or with an integer image's taps, whose zeros are all
    /// `+0.0`) any correct sort gives the same bits: a network pruned to those positions, on `single` (the same values as
    /// float32 registers, which compare alike, see [`exchange32`]) where given. Otherwise an
    /// odd-even transposition sort, stable.
    fn sort_regs(&mut self, a: Arr, regs: &[Reg], single: Option<Vec<Reg>>) {
        let n = regs.len();
        if n < 2 {
            return;
        }
        let mut needed: BTreeSet<usize> = match &self.sh.needed[a.0 as usize] {
            Some(s) => s
                .iter()
                .filter(|&&p| p >= 0 && (p as usize) < n)
                .map(|&p| p as usize)
                .collect(),
            None => (0..n).collect(),
        };
        if self.sh.median[a.0 as usize] {
            needed.insert(n / 2);
            if n.is_multiple_of(2) {
                needed.insert(n / 2 - 1);
            }
        }
        let needed: Vec<usize> = needed.into_iter().collect();
        let single = match single {
            Some(v) if !elem::is_float(self.sh.input) => {
                // An integer image's taps hold no NaN and no `-0.0` (a zero is `+0.0`, equal
                // values have equal bits): the network is exact on every window, where the
                // zeros of 8-bit data would send nearly every warp down the stable path.
                self.sort_network_f32(regs, v, &needed);
                return;
            }
            single => single,
        };
        let (slow, done) = (self.k.new_label(), self.k.new_label());
        // A NaN or a zero anywhere (|x| <= 0 or unordered) takes the exact stable path.
        let mut bad: Option<Reg> = None;
        for &r in regs {
            let abs = self.fbits(Bin::And, r, i64::MAX);
            bad = Some(match bad {
                None => self.k.setp(Cmp::Leu, T::F64, abs, Src::f64(0.0)),
                Some(p) => {
                    self.k
                        .setp_comb(Cmp::Leu, T::F64, abs, Src::f64(0.0), BoolOp::Or, p, false)
                }
            });
        }
        self.k.bra_if(bad.expect("n >= 2"), false, slow);
        if let Some(v) = single {
            self.sort_network_f32(regs, v, &needed);
        } else {
            self.sort_network_f64(regs, &needed);
        }
        self.k.bra(done);
        self.k.place(slow);
        // Odd-even transposition sort: n rounds of adjacent compare-exchanges.
        for round in 0..n {
            let mut i = round % 2;
            while i + 1 < n {
                let (x, y) = (regs[i], regs[i + 1]);
                let swap = self.numpy_after(x, y);
                let lo = self.k.selp(T::F64, y, x, swap);
                let hi = self.k.selp(T::F64, x, y, swap);
                self.k.set(T::F64, x, lo);
                self.k.set(T::F64, y, hi);
                i += 2;
            }
        }
        self.k.place(done);
    }

    /// The pruned network of [`Body::sort_regs`] on the float32 values `v` of `regs`, the
    /// positions `needed` written back to `regs` as doubles.
    fn sort_network_f32(&mut self, regs: &[Reg], mut v: Vec<Reg>, needed: &[usize]) {
        for c in sort::pruned(&sort::batcher(regs.len()), needed) {
            exchange32(self.k, &mut v, c.i, c.j);
        }
        for &m in needed {
            let d = self.k.cvt(None, T::F64, T::F32, v[m]);
            self.k.set(T::F64, regs[m], d);
        }
    }

    /// The pruned network of [`Body::sort_regs`] on the doubles themselves, in place.
    fn sort_network_f64(&mut self, regs: &[Reg], needed: &[usize]) {
        // Compare and select: `min.f64`/`max.f64` measured 1.4–7× slower in median networks on
        // an H200 (`gpu/device-run/window-median-h200-2026-11-30-f64-minmax-rejected.log`).
        for c in sort::pruned(&sort::batcher(regs.len()), needed) {
            let p = self.k.setp(Cmp::Lt, T::F64, regs[c.j], regs[c.i]);
            let (x, y) = (regs[c.i], regs[c.j]);
            let lo = c.want_min.then(|| self.k.selp(T::F64, y, x, p));
            let hi = c.want_max.then(|| self.k.selp(T::F64, x, y, p));
            if let Some(lo) = lo {
                self.k.set(T::F64, x, lo);
            }
            if let Some(hi) = hi {
                self.k.set(T::F64, y, hi);
            }
        }
    }

    /// A sort in NumPy's order (NaN last) of a local array: a stable bottom-up merge sort through
    /// a second array of its capacity, O(n log n) where the insertion sort it replaces was O(n²)
    /// (a median of 31×31 moves ~10⁴ values instead of ~2·10⁵). Values that compare equal but
    /// differ in bits (±0, NaN payloads) may end in another order than the runtime's unstable
    /// sort leaves them, as with the insertion sort; the sorted statistics do not depend on it
    /// (`0.0 +` makes every zero +0.0, a NaN gives NaN).
    fn merge_sort(&mut self, name: &str, cap: i64, n: Reg) -> Res<()> {
        let tmp = format!("{name}_merge");
        self.k.local(&tmp, 8 * cap.max(1) as u64);
        let base = self.k.addr_of(name);
        let other = self.k.addr_of(&tmp);
        let (src, dst) = (self.k.mov(T::U64, base), self.k.mov(T::U64, other));
        let width = self.k.mov(T::S64, Src::I(1));
        let (passes, passes_end) = self.while_below(width, n);
        let two = self.k.bin(Bin::Add, T::S64, width, width);
        let lo = self.k.mov(T::S64, Src::I(0));
        let (runs, runs_end) = self.while_below(lo, n);
        let mid = self.k.bin(Bin::Add, T::S64, lo, width);
        let mid = self.k.bin(Bin::Min, T::S64, mid, n);
        let hi = self.k.bin(Bin::Add, T::S64, lo, two);
        let hi = self.k.bin(Bin::Min, T::S64, hi, n);
        self.merge_runs((src, dst), (lo, mid, hi));
        self.k.set(T::S64, lo, hi);
        self.k.bra(runs);
        self.k.place(runs_end);
        let t = self.k.mov(T::U64, src);
        self.k.set(T::U64, src, dst);
        self.k.set(T::U64, dst, t);
        self.k.set(T::S64, width, two);
        self.k.bra(passes);
        self.k.place(passes_end);
        // After an odd number of passes the sorted values are in the second array.
        let sorted = self.k.new_label();
        let home = self.k.setp(Cmp::Eq, T::U64, src, base);
        self.k.bra_if(home, false, sorted);
        self.counted((Src::I(0), false), n, &mut |b, c| {
            b.move_cell((src, c), (base, c));
            Ok(())
        })?;
        self.k.place(sorted);
        Ok(())
    }

    /// The head of a loop `while i < n` (s64): its top (to branch back to) and its exit labels.
    fn while_below(&mut self, i: Reg, n: Reg) -> (u32, u32) {
        let (top, end) = (self.k.new_label(), self.k.new_label());
        self.k.place(top);
        let done = self.k.setp(Cmp::Ge, T::S64, i, n);
        self.k.bra_if(done, false, end);
        (top, end)
    }

    /// `dst[to] = src[from]` between local f64 arrays at `src` and `dst`.
    fn move_cell(&mut self, (src, from): (Reg, Reg), (dst, to): (Reg, Reg)) {
        let at = self.elem_addr(src, V::R(from, Ty::I64));
        let v = self.k.ld(Space::Local, T::F64, at);
        let to = self.elem_addr(dst, V::R(to, Ty::I64));
        self.k.st(Space::Local, T::F64, to, v);
    }

    /// Merges the sorted runs `src[lo..mid]` and `src[mid..hi]` into `dst[lo..hi]`, taking from
    /// the right run only when the left's head comes strictly after the right's (stable).
    fn merge_runs(&mut self, (src, dst): (Reg, Reg), (lo, mid, hi): (Reg, Reg, Reg)) {
        let (i, j, o) = (
            self.k.mov(T::S64, lo),
            self.k.mov(T::S64, mid),
            self.k.mov(T::S64, lo),
        );
        let (left, right, next) = (self.k.new_label(), self.k.new_label(), self.k.new_label());
        let (top, end) = self.while_below(o, hi);
        let left_empty = self.k.setp(Cmp::Ge, T::S64, i, mid);
        self.k.bra_if(left_empty, false, right);
        let right_empty = self.k.setp(Cmp::Ge, T::S64, j, hi);
        self.k.bra_if(right_empty, false, left);
        let ai = self.elem_addr(src, V::R(i, Ty::I64));
        let x = self.k.ld(Space::Local, T::F64, ai);
        let aj = self.elem_addr(src, V::R(j, Ty::I64));
        let y = self.k.ld(Space::Local, T::F64, aj);
        let after = self.numpy_after(x, y);
        self.k.bra_if(after, false, right);
        for (label, from) in [(left, i), (right, j)] {
            self.k.place(label);
            self.move_cell((src, from), (dst, o));
            let nf = self.k.bin(Bin::Add, T::S64, from, Src::I(1));
            self.k.set(T::S64, from, nf);
            self.k.bra(next);
        }
        self.k.place(next);
        let no = self.k.bin(Bin::Add, T::S64, o, Src::I(1));
        self.k.set(T::S64, o, no);
        self.k.bra(top);
        self.k.place(end);
    }

    /// An insertion sort (stable, NaN last) of a local array.
    fn insertion_sort(&mut self, name: &str, len: Reg) {
        let base = self.k.addr_of(name);
        let i = self.k.mov(T::S64, Src::I(1));
        let (outer, outer_end) = (self.k.new_label(), self.k.new_label());
        self.k.place(outer);
        let stop = self.k.setp(Cmp::Ge, T::S64, i, len);
        self.k.bra_if(stop, false, outer_end);
        let ai = self.elem_addr(base, V::R(i, Ty::I64));
        let v = self.k.ld(Space::Local, T::F64, ai);
        let j = self.k.mov(T::S64, i);
        let (inner, inner_end) = (self.k.new_label(), self.k.new_label());
        self.k.place(inner);
        let at0 = self.k.setp(Cmp::Le, T::S64, j, Src::I(0));
        self.k.bra_if(at0, false, inner_end);
        let jm1 = self.k.bin(Bin::Sub, T::S64, j, Src::I(1));
        let aprev = self.elem_addr(base, V::R(jm1, Ty::I64));
        let prev = self.k.ld(Space::Local, T::F64, aprev);
        let after = self.numpy_after(prev, v);
        self.k.bra_if(after, true, inner_end);
        let aj = self.elem_addr(base, V::R(j, Ty::I64));
        self.k.st(Space::Local, T::F64, aj, prev);
        self.k.set(T::S64, j, jm1);
        self.k.bra(inner);
        self.k.place(inner_end);
        let aj = self.elem_addr(base, V::R(j, Ty::I64));
        self.k.st(Space::Local, T::F64, aj, v);
        let ni = self.k.bin(Bin::Add, T::S64, i, Src::I(1));
        self.k.set(T::S64, i, ni);
        self.k.bra(outer);
        self.k.place(outer_end);
    }

    /// Element `i` of a sorted f64 array.
    fn sorted_at(&mut self, a: Arr, i: V) -> Res<Reg> {
        let v = self.load(a, i)?;
        Ok(self.reg(v))
    }

    fn sorted(&mut self, stat: SortedStat, a: Arr, q: &Expr) -> Res<V> {
        let q = self.expr_as(q, Ty::F64)?;
        let nan = V::C(Val::F(f64::NAN));
        match self.arrays[a.0 as usize].clone() {
            Storage::Regs { len: Some(n), .. } => {
                if n <= 0 {
                    return Ok(nan);
                }
                let last = self.sorted_at(a, V::C(Val::I(n - 1)))?;
                let mut isnan = self.k.setp(Cmp::Nan, T::F64, last, last);
                let r = match stat {
                    SortedStat::Median => {
                        if n % 2 == 1 {
                            let m = self.sorted_at(a, V::C(Val::I(n / 2)))?;
                            self.k.bin(Bin::Add, T::F64, Src::f64(0.0), m)
                        } else {
                            let x = self.sorted_at(a, V::C(Val::I(n / 2 - 1)))?;
                            let y = self.sorted_at(a, V::C(Val::I(n / 2)))?;
                            sort::mix(self.k, Mix::Mean, (x, y))
                        }
                    }
                    SortedStat::Quantile => {
                        let qc = match q {
                            V::C(c) => c.f(),
                            V::R(..) => return Err(Restart::Local(a.0)),
                        };
                        let Some(plan) = QuantilePlan::new(n as usize, qc) else {
                            return Ok(nan);
                        };
                        let x = self.sorted_at(a, V::C(Val::I(plan.prev as i64)))?;
                        let y = self.sorted_at(a, V::C(Val::I(plan.next as i64)))?;
                        sort::mix(self.k, Mix::Lerp(plan), (x, y))
                    }
                };
                if let V::R(qr, _) = q {
                    isnan = self
                        .k
                        .setp_comb(Cmp::Nan, T::F64, qr, qr, BoolOp::Or, isnan, false);
                }
                Ok(V::R(
                    self.k.selp(T::F64, Src::f64(f64::NAN), r, isnan),
                    Ty::F64,
                ))
            }
            Storage::Local { len, .. } => self.sorted_dynamic(stat, a, len, q),
            _ => Err(Restart::Local(a.0)),
        }
    }

    /// Median and quantile of a local array of run-time length, as `runtime.rs` computes them.
    fn sorted_dynamic(&mut self, stat: SortedStat, a: Arr, n: Reg, q: V) -> Res<V> {
        let out = self.k.mov(T::F64, Src::f64(f64::NAN));
        let end = self.k.new_label();
        let empty = self.k.setp(Cmp::Le, T::S64, n, Src::I(0));
        self.k.bra_if(empty, false, end);
        let nm1 = self.k.bin(Bin::Sub, T::S64, n, Src::I(1));
        let last = self.sorted_at(a, V::R(nm1, Ty::I64))?;
        let mut isnan = self.k.setp(Cmp::Nan, T::F64, last, last);
        if stat == SortedStat::Quantile {
            let qr = self.reg(q);
            isnan = self
                .k
                .setp_comb(Cmp::Nan, T::F64, qr, qr, BoolOp::Or, isnan, false);
        }
        self.k.bra_if(isnan, false, end);
        match stat {
            SortedStat::Median => {
                let half = self.k.bin(Bin::Shr, T::S64, n, Src::I(1));
                let mid = self.sorted_at(a, V::R(half, Ty::I64))?;
                let hm1 = self.k.bin(Bin::Sub, T::S64, half, Src::I(1));
                let odd = self.k.bin(Bin::And, T::B64, n, Src::I(1));
                let is_odd = self.k.setp(Cmp::Ne, T::B64, odd, Src::I(0));
                // Even: (0.0 + s[n/2-1] + s[n/2]) / 2; the load at n/2-1 is in range (n >= 2).
                let safe = self.k.bin(Bin::Max, T::S64, hm1, Src::I(0));
                let lo = self.sorted_at(a, V::R(safe, Ty::I64))?;
                let s = self.k.bin(Bin::Add, T::F64, Src::f64(0.0), lo);
                let s = self.k.bin(Bin::Add, T::F64, s, mid);
                let even = self.k.bin(Bin::Div, T::F64, s, Src::f64(2.0));
                // Odd: 0.0 + s[n/2] (NumPy's mean of the middle part).
                let odd = self.k.bin(Bin::Add, T::F64, Src::f64(0.0), mid);
                let r = self.k.selp(T::F64, odd, even, is_odd);
                self.k.set(T::F64, out, r);
            }
            SortedStat::Quantile => {
                let qr = self.reg(q);
                let nf = self.k.cvt(Some(Rnd::Rn), T::F64, T::S64, n);
                let nm1f = self.k.bin(Bin::Sub, T::F64, nf, Src::f64(1.0));
                let vi = self.k.bin(Bin::Mul, T::F64, nm1f, qr);
                let lastf = self.k.cvt(Some(Rnd::Rn), T::F64, T::S64, nm1);
                let fl = self.k.cvt(Some(Rnd::Rmi), T::F64, T::F64, vi);
                let p = self.k.cvt(Some(Rnd::Rzi), T::U64, T::F64, fl);
                let p1 = self.k.bin(Bin::Add, T::S64, p, Src::I(1));
                let top = self.k.setp(Cmp::Ge, T::F64, vi, lastf);
                let below = self.k.setp(Cmp::Lt, T::F64, vi, Src::f64(0.0));
                let prev = self.k.selp(T::S64, Src::I(0), p, below);
                let next = self.k.selp(T::S64, Src::I(0), p1, below);
                let prev = self.k.selp(T::S64, nm1, prev, top);
                let next = self.k.selp(T::S64, nm1, next, top);
                // gamma = vi - previous index, as `ndjit::runtime::QuantilePlan`: the previous
                // index is -1 at or above the last element, 0 below the first, else floor(vi),
                // an int (`+ 0.0` makes floor(-0.0) the int 0: gamma keeps vi's sign).
                let fl = self.k.bin(Bin::Add, T::F64, fl, Src::f64(0.0));
                let c = self.k.selp(T::F64, Src::f64(0.0), fl, below);
                let c = self.k.selp(T::F64, Src::f64(-1.0), c, top);
                let gamma = self.k.bin(Bin::Sub, T::F64, vi, c);
                let x = self.sorted_at(a, V::R(prev, Ty::I64))?;
                let y = self.sorted_at(a, V::R(next, Ty::I64))?;
                let diff = self.k.bin(Bin::Sub, T::F64, y, x);
                let omg = self.k.bin(Bin::Sub, T::F64, Src::f64(1.0), gamma);
                let t1 = self.k.bin(Bin::Mul, T::F64, diff, omg);
                let up = self.k.bin(Bin::Sub, T::F64, y, t1);
                let t2 = self.k.bin(Bin::Mul, T::F64, diff, gamma);
                let down = self.k.bin(Bin::Add, T::F64, x, t2);
                let ge = self.k.setp(Cmp::Ge, T::F64, gamma, Src::f64(0.5));
                let r = self.k.selp(T::F64, up, down, ge);
                self.k.set(T::F64, out, r);
            }
        }
        self.k.place(end);
        Ok(V::R(out, Ty::F64))
    }
}

/// Whether any of `regs` (of float type `t`, at least one) is NaN: pairwise `setp.nan` chained
/// with `.or`, the first paired with the last.
fn any_nan(k: &mut Func, t: T, regs: &[Reg]) -> Reg {
    let mut nan = k.setp(Cmp::Nan, t, regs[0], regs[regs.len() - 1]);
    let inner = regs.get(1..regs.len() - 1).unwrap_or_default();
    for pair in inner.chunks(2) {
        let b = *pair.last().expect("a chunk");
        nan = k.setp_comb(Cmp::Nan, t, pair[0], b, BoolOp::Or, nan, false);
    }
    nan
}

/// A compare-exchange of positions `i < j` of a network, into new registers ([`exchange`],
/// [`exchange32`]).
pub type Exchange = fn(&mut Func, &mut [Reg], usize, usize);

/// [`exchange`] on float32 registers holding no NaN: `min.f32`, `max.f32`. Of two zeros of
/// opposite signs either may come out in either place, which a median does not see (it adds
/// `0.0`, which makes either zero `+0.0`).
pub fn exchange32(k: &mut Func, v: &mut [Reg], i: usize, j: usize) {
    exchange_by(k, (Bin::Min, Bin::Max, T::F32), v, i, j);
}

/// A compare-exchange of positions `i < j` through the instructions `min` and `max` of type
/// `t`, into new registers.
pub fn exchange_by(k: &mut Func, (min, max, t): (Bin, Bin, T), v: &mut [Reg], i: usize, j: usize) {
    let lo = k.bin(min, t, v[i], v[j]);
    let hi = k.bin(max, t, v[i], v[j]);
    v[i] = lo;
    v[j] = hi;
}

/// A double's 32-bit key and its low word: the high word with its 31 low bits flipped where the
/// sign is set ([`key_flip`]), so that the keys' signed order is the values' order truncated to
/// sign, exponent and 20 bits of mantissa (`-0.0` before `0.0`; without NaN).
pub fn high_key(k: &mut Func, r: Reg) -> (Reg, Reg) {
    let (lo, hi) = k.unpack(r);
    (key_flip(k, hi), lo)
}

/// `h ^ ((h >> 31) & 0x7fffffff)` on 32 bits: a high word to its key and back (the sign bit,
/// which decides the flip, is kept). ptxas makes the `and` and the `xor` one `LOP3`; a second
/// shift in place of the `and` (`>>> 1`) cost an instruction more a value.
fn key_flip(k: &mut Func, h: Reg) -> Reg {
    let m = k.bin(Bin::Shr, T::S32, h, Src::I(31));
    let m = k.bin(Bin::And, T::B32, m, Src::I(0x7fff_ffff));
    k.bin(Bin::Xor, T::B32, h, m)
}

/// [`exchange32`] through `min.NaN.f32`/`max.NaN.f32` (sm_80 on): where either value is NaN,
/// both results are. So a NaN among a network's inputs reaches every output that depends on
/// it, and an output selecting a rank (a median) depends on every input: were there no path of
/// comparators from an input to it, changing that input could not change it. Without NaN, the
/// results are [`exchange32`]'s.
pub fn exchange32_nan(k: &mut Func, v: &mut [Reg], i: usize, j: usize) {
    exchange_by(k, (Bin::MinNan, Bin::MaxNan, T::F32), v, i, j);
}

/// A compare-exchange of positions `i < j` with the IR networks' semantics (equal or NaN: no
/// exchange), into new registers.
pub fn exchange(k: &mut Func, v: &mut [Reg], i: usize, j: usize) {
    let p = k.setp(Cmp::Lt, T::F64, v[j], v[i]);
    let lo = k.selp(T::F64, v[j], v[i], p);
    let hi = k.selp(T::F64, v[i], v[j], p);
    v[i] = lo;
    v[j] = hi;
}

fn reads_array(e: &Expr, a: Arr) -> bool {
    if let Expr::Load(b, _) | Expr::Len(b) = e {
        if *b == a {
            return true;
        }
    }
    let mut found = false;
    e.for_each_child(|c| found |= reads_array(c, a));
    found
}
