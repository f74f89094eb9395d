//! Lane groups: a row kernel that computes [`GROUP`] adjacent output pixels per iteration.
//!
//! Lanes are pixels. The specialised body is translated once per *chain* of [`LANES`] pixels,
//! with Cranelift's 128-bit vector types: an f64 is an `f64x2` (pixel `j` in lane 0, `j + 1` in
//! lane 1), an int an `i64x2`, a bool an `i64x2` lane mask (all ones or zero, what a vector
//! `fcmp`/`icmp` gives). Each lane does exactly its own pixel's operations in the scalar kernel's
//! order, so the result is the scalar kernel's bit for bit:
//! - the IEEE operations (`+ - * /`, `sqrt`, compares, negation and `abs` as sign-bit edits) are
//!   the same instructions on either type, `addpd` rounding each lane as `addsd` does;
//! - NumPy's `minimum`/`maximum` are Cranelift's `fmin`/`fmax` on both types (their wasm rule is
//!   NumPy's, see `math::fmin`); Python's `min`/`max` are the scalar path's compare and select,
//!   as a blend;
//! - `np.sum` adds the lane vectors in the pairwise order of [`Translator::pairwise_sum`], the
//!   scalar kernel's own routine;
//! - a mask is all ones or zero, so `n + int(c)` is `n - mask`, `float(c)` is `mask & 1.0`, and
//!   a select with an arm of zero bits (`+0.0`, `0`, `False`) is an `and` of the mask, the same
//!   bits as the blend in one instruction;
//! - everything else (calls into the runtime, integer division, casts through the integer unit,
//!   loads of bound arrays at a computed index) is done lane by lane by the scalar translator's
//!   own operation, on values extracted from the vectors and inserted back;
//! - values that are the same in every lane (constants, bound values, the index of an unrolled
//!   reduction) stay scalars, so constant folding and fixed tap offsets work as in the scalar
//!   kernel.
//!
//! Control flow is if-converted: an `if` evaluates both arms (expressions are pure and total, see
//! [`crate::ir`]) under a lane mask and merges the variables they assign with a blend. A `Check`
//! is tested in every active lane; if any lane fails, the group *bails*: the scalar kernel
//! recomputes that group pixel by pixel, so the first failing pixel, its exception and the
//! outputs before it are exactly the scalar kernel's. The pixels at the end of a row that do not
//! fill a group are the scalar kernel's too.
//!
//! **Why `f64x2`, and why interleaved chains.** Cranelift 0.135 has no 256-bit vector types on
//! x86-64; it lowers the wasm SIMD set on 128-bit registers, with AVX encodings where the CPU has
//! them (`vmaxpd`, `vblendvpd`, `vcmpordpd` on the test machine). Measured on 1024² f64, one
//! thread (`benches/rowkernel.py --clock cpu`; medians, a shared 2-core machine, so ±10%):
//!
//! | 1024², ms | scalar | `f64x2`, 1 / 2 / 4 chains in turn | 2 interleaved | 4 interleaved |
//! |---|---|---|---|---|
//! | range 5×5 | 10.5 | 7.2 / 7.3 / 7.5 | 4.75 | 4.6 |
//! | variance 5×5 | 21.4 | 10.4 / 10.6 / 10.7 | 10.7 | 10.8 |
//! | NaN-aware mean 3×3 | 13.0 | 12.5 / 11.6 / 11.5 | 6.9 | 7.4 |
//!
//! (The NaN-aware mean's drop to 6.9 comes from testing checks once, below.) `f64x2` halves the
//! instructions of every fold. Chains alone do not help: Cranelift's elaborator places a pure
//! value at its first use, so each chain's whole expression tree is computed at its store, one
//! chain after the other, and a fold such as Python's `max` is a serial chain of dependent
//! `maxpd`s bound by their latency. So the chains run in lockstep, statement by statement, and
//! a top-level reduction folds all chains together, storing each chain's running state every
//! `INTERLEAVE` steps (a store is a use in program order): the chains' steps then alternate and
//! their latencies overlap. Interleaved *scalar* chains would need the same device, with twice
//! the instructions. Four chains gain little over two and double the code (compile time), so
//! two. A tap of the second chain at column `c` is the first chain's load at `c + 2`: within a
//! reduction they share one alias region and Cranelift merges the two loads (loads shared
//! along the row). Different reductions get different regions, as in the scalar kernel: a load
//! shared with a later reduction stays live until it runs, and is spilled, which costs more
//! than reloading it from L1. (`variance` is two pairwise sums, eight independent partial sums
//! each already, so it does not change.)
//!
//! Checks are tested once per chain, before its store: a branch per check kept the masks and
//! loads live across it, and spilled (the NaN-aware mean went from 11.6 to 6.7 ms).
//!
//! **Pinned running values.** An unrolled loop that is not a reduction (`if not isnan(v): t +=
//! v; c += 1`) is a sequence of assignments, and nothing uses its running values before the
//! final store: the elaborator emitted each chain's whole count, then its whole sum, so the
//! nine NaN masks that both read stayed live across the count and spilled. Every `INTERLEAVE`
//! taps the group stores the values live there ([`Group::pin`]), and the code follows the
//! statements again, with no spill left. Ints whose bounds the group knows (counts) convert to
//! float in two vector instructions ([`Group::small_int_to_f64`]) instead of lane by lane. The
//! NaN-aware mean 3×3, one thread, 1024² (`examples/time_filter.rs`, this 2-core AVX2 machine,
//! medians of 21, alternating runs): 4.4–6.1 ms before, 3.6–4.9 with the pins, 3.0–4.1 with the
//! conversion too.
//!
//! **Constants in registers.** Cranelift rematerializes constants at each use, and x86-64 loads
//! a vector constant from the constant pool, so each iteration reloaded them; on AMD's Zen the
//! loads into vector registers go through two pipes that the taps already keep busy
//! (`llvm-mca -mcpu=znver3` of the Game-of-Life group names them its bottleneck: 23 loads a
//! group, four of them constants). A group's first [`HOISTED_CONSTANTS`] constants are made once
//! before the loop and stay in registers ([`Group::constant`]). One thread, 1024², this machine,
//! the smallest of 15 calls, median over 6–10 alternating runs of the two builds
//! (`examples/time_filter.rs`): Game of Life 1.92 → 1.79 ms, the weighted sum 1.37 → 1.23, the
//! NaN-aware mean 2.91 → 2.87; a body with fifteen constants (a polynomial of degree six plus
//! a weighted sum of the other eight taps) unchanged, 3.10 → 3.13, where all fifteen in
//! registers spilled and took it to 3.24.
//!
//! **aarch64.** Everything here is in Cranelift's portable vector subset (`f64x2`, `i64x2`,
//! `fcmp`, `bitselect`, `vall_true`, `extractlane`/`insertlane`, `splat`), which its aarch64
//! backend lowers to NEON, where `fmin`/`fmax` are single instructions with the same rule;
//! nothing here is x86-specific. Where a backend cannot lower one of these operations for the
//! host (an `i64x2` compare on an x86-64 without SSE4.1), compiling fails and the kernel is
//! compiled without lane groups (see `kernel::compile_row_kernel`): slower, never wrong.
//! Untested on aarch64 here (no such machine).

use super::translate::{codegen_error, Opnd, Result, Translator};
use crate::ir::eval::{self, Val};
use crate::ir::ranges::{self, Iv};
use crate::ir::{self, ArrKind, BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty, UnOp, Var};
use crate::math::MathFn;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::{CondCode, FloatCC, IntCC};
use cranelift_codegen::ir::immediates::Ieee64;
use cranelift_codegen::ir::{
    types, Block, InstBuilder, MemFlagsData, StackSlot, StackSlotData, StackSlotKind, Type, Value,
};
use std::collections::HashMap;
use std::ops::Range;

/// Pixels per vector (`f64x2`).
pub(super) const LANES: usize = 2;
/// Vectors (independent chains) per group.
pub(super) const CHAINS: usize = 2;
/// Pixels per group.
pub(super) const GROUP: usize = LANES * CHAINS;
/// Vector constants kept in registers across the group loop (see `Group::constant`).
const HOISTED_CONSTANTS: usize = 4;
/// Steps of a fold between the stores that interleave the chains' folds (see `Group::fold`).
const INTERLEAVE: usize = 4;
/// Largest body compiled in lanes, in cost units after unrolling (one per expression node,
/// more for the operations below): the lane groups add
/// `CHAINS` copies of the body to the kernel, and compile time grows with them (measured by
/// `benches/rowkernel_compile.rs`).
const MAX_COST: usize = 600;
/// The cost of an operation done lane by lane (extracts, `GROUP` scalar operations, inserts).
const PER_LANE_COST: usize = 4 * GROUP;
/// The cost of a call into the runtime, made once per lane: every live vector is saved around
/// each of the `GROUP` calls, which costs register allocation more than the lanes save.
const CALL_COST: usize = 4 * PER_LANE_COST;

/// Vector loads and stores: never trapping, but not aligned (an `f64x2` at an odd pixel), so
/// that Cranelift does not fold them into SSE operands that require alignment.
const VECTOR_MEM: MemFlagsData = MemFlagsData::new().with_notrap();
/// Tap loads: read-only and movable, as the scalar kernel's (see `translate::MOVABLE`).
const VECTOR_TAP: MemFlagsData = VECTOR_MEM.with_readonly().with_can_move();

/// Whether `func`'s body can be computed in lane groups: straight-line code after unrolling
/// (assignments, `if`s whose arms assign and check, checks, reductions of a constant length,
/// a final `return`), reading the buffer at constant taps, and not too big.
pub(super) fn supported(func: &ir::Func) -> bool {
    let mut cost = 0;
    block_supported(func, &func.body, true, &mut cost) && cost <= MAX_COST
}

fn block_supported(func: &ir::Func, stmts: &[Stmt], top: bool, cost: &mut usize) -> bool {
    stmts.iter().all(|s| match s {
        Stmt::Assign(_, e) => expr_supported(func, e, 1, cost),
        // A guard's arm is branched around where no lane enters it (`Group::guard`): its size
        // does not count against the body's.
        Stmt::If(c, a, b) if b.is_empty() && is_guard(func, a) => {
            expr_supported(func, c, 1, cost) && block_supported(func, a, false, &mut 0)
        }
        Stmt::If(c, a, b) => {
            expr_supported(func, c, 1, cost)
                && block_supported(func, a, false, cost)
                && block_supported(func, b, false, cost)
        }
        Stmt::Check { cond, .. } => expr_supported(func, cond, 1, cost),
        Stmt::Return(e) => top && expr_supported(func, e, 1, cost),
        Stmt::Reduce { op, len, elem, .. } => match *len {
            Expr::I64(k) if !matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax) => {
                (k > 0 || !op.needs_nonempty())
                    && expr_supported(func, elem, k.max(0) as usize, cost)
            }
            _ => false,
        },
        _ => false,
    })
}

/// Whether an `if`'s arm (without `else`) is a guard: reductions into variables that only its
/// own checks read, and those checks. What it computes is then dead after it, and
/// [`Group::guard`] may branch around it.
fn is_guard(func: &ir::Func, arm: &[Stmt]) -> bool {
    let mut written = Vec::new();
    for s in arm {
        match s {
            // (Its index is bound by each reduction that reads it, this one's included.)
            Stmt::Reduce { dst, .. } => written.push(*dst),
            Stmt::Check { .. } => {}
            _ => return false,
        }
    }
    fn read_outside(stmts: &[Stmt], arm: &[Stmt], written: &[Var]) -> bool {
        stmts.iter().any(|s| {
            let mut read = false;
            ir::stmt_exprs(s, |e| read |= written.iter().any(|&v| e.uses_var(v)));
            ir::stmt_blocks(s, |b| {
                read |= !std::ptr::eq(b, arm) && read_outside(b, arm, written)
            });
            read
        })
    }
    !read_outside(&func.body, arm, &written)
}

/// Adds `times` the cost of `e` to `cost`; false for loads of the buffer at a computed index
/// and of scratch arrays.
fn expr_supported(func: &ir::Func, e: &Expr, times: usize, cost: &mut usize) -> bool {
    let mut ok = true;
    let mut units = 0usize;
    e.visit(&mut |e| {
        units += match e {
            Expr::Call(..) => CALL_COST,
            Expr::Cast(..) => PER_LANE_COST,
            // Integer products, divisions and shifts go lane by lane.
            Expr::Binary(op, ..)
                if !matches!(op, BinOp::Add | BinOp::Sub) && e.ty(func) == Ty::I64 =>
            {
                PER_LANE_COST
            }
            _ => 1,
        };
        if let Expr::Load(a, i) = e {
            ok &= match func.arrays.get(a.0 as usize).map(|d| &d.kind) {
                Some(ArrKind::Buffer) => matches!(**i, Expr::I64(_) | Expr::Var(_)),
                Some(ArrKind::Bound(_)) => true,
                _ => false,
            };
        }
    });
    *cost = cost.saturating_add(units.saturating_mul(times));
    ok
}

/// An IR value in a chain: the same in every lane (a scalar operand, possibly constant), or one
/// vector of per-lane values of an IR type.
#[derive(Clone, Copy, Debug)]
enum Lane {
    Uni(Opnd),
    Vec(Value, Ty),
}

impl Lane {
    fn ty(self) -> Ty {
        match self {
            Lane::Uni(o) => o.ty(),
            Lane::Vec(_, t) => t,
        }
    }

    /// Whether both are certainly the same value (then an `if` need not blend them).
    fn same(self, other: Lane) -> bool {
        match (self, other) {
            (Lane::Uni(Opnd::Const(a)), Lane::Uni(Opnd::Const(b))) => {
                a.ty() == b.ty() && a.to_bits() == b.to_bits()
            }
            (Lane::Uni(Opnd::Dyn(a, _)), Lane::Uni(Opnd::Dyn(b, _))) => a == b,
            (Lane::Vec(a, _), Lane::Vec(b, _)) => a == b,
            _ => false,
        }
    }

    fn constant(self) -> Option<Val> {
        match self {
            Lane::Uni(Opnd::Const(c)) => Some(c),
            _ => None,
        }
    }
}

/// `(n, c)` when `a + b` is `n + int(c)` (either way round): a count, see [`Group::count`].
fn counted<'e>(a: &'e Expr, b: &'e Expr) -> Option<(&'e Expr, &'e Expr)> {
    match (a, b) {
        (n, Expr::Cast(Ty::I64, c)) | (Expr::Cast(Ty::I64, c), n) => Some((n, c)),
        _ => None,
    }
}

/// The vector type of an IR type's lanes.
fn vector_ty(ty: Ty) -> Type {
    match ty {
        Ty::F64 => types::F64X2,
        Ty::I64 | Ty::Bool => types::I64X2,
    }
}

/// Translates one group: `CHAINS` chains of the body at consecutive pixels, statement by
/// statement in lockstep (reductions interleaved, see [`Group::fold`]). A body that does not
/// reach its `return`, or a failing check in any lane, jumps to `bail`. Runs inside the kernel's
/// group loop, with the kernel's state set.
/// `preheader` runs once before the group loop, and ends in its jump to the loop (see
/// [`Group::constant`]).
pub(super) fn translate_group(
    t: &mut Translator<'_>,
    func: &ir::Func,
    bail: Block,
    preheader: Block,
) -> Result<()> {
    let mut chains = Vec::with_capacity(CHAINS);
    for chain in 0..CHAINS {
        chains.push(ChainState {
            vals: func
                .vars
                .iter()
                .map(|d| Lane::Uni(Opnd::Const(Val::from_bits(d.ty, 0))))
                .collect(),
            mask: None,
            offset: i32::try_from(chain * LANES * 8).map_err(|_| codegen_error("group"))?,
            checked: Lane::Uni(Opnd::Const(Val::B(true))),
        });
    }
    let mut g = Group {
        t,
        func,
        chains,
        bail,
        sink: None,
        pins: None,
        int_ranges: HashMap::new(),
        preheader,
        constants: HashMap::new(),
    };
    let pins = pin_points(func);
    let most = pins.iter().map(|(_, live)| live.len()).max().unwrap_or(0);
    if most > 0 {
        g.pins = Some(g.t.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (16 * CHAINS * most) as u32,
            4,
        )));
    }
    let mut pins = pins.into_iter().peekable();
    for (i, s) in func.body.iter().enumerate() {
        if let Some((_, live)) = pins.next_if(|(at, _)| *at == i) {
            g.pin(&live);
        }
        let returned = match s {
            Stmt::Reduce { .. } => {
                g.reduce(0..CHAINS, s)?;
                false
            }
            // Every chain takes the same path: the code is straight-line.
            _ => (0..CHAINS).try_fold(false, |_, ch| g.stmt(ch, s))?,
        };
        if returned {
            return Ok(());
        }
    }
    // The scalar kernel falls off the end the same way, and reports it.
    g.jump_to_bail();
    Ok(())
}

/// The translation of the body for a group's chains.
struct Group<'t, 'a> {
    t: &'t mut Translator<'a>,
    func: &'t ir::Func,
    chains: Vec<ChainState>,
    /// Where the group goes when a lane fails a check.
    bail: Block,
    /// Where [`Group::fold`] stores running states (16 bytes per chain, which nothing reads),
    /// made on first use.
    sink: Option<StackSlot>,
    /// Where [`Group::pin`] stores the chains' running values: room for the most any pin stores.
    pins: Option<StackSlot>,
    /// Bounds of int vectors, where known (a count is in `0..=n` after `n` taps): facts about
    /// SSA values, true wherever the value is used. They let [`Group::cast`] convert to float
    /// in two vector instructions instead of lane by lane.
    int_ranges: HashMap<Value, Iv>,
    /// The block before the group loop, where [`Group::constant`] puts vector constants.
    preheader: Block,
    /// The vector constants made so far, by type and lane bits.
    constants: HashMap<(Type, u64), Value>,
}

/// Ints of this magnitude or less convert to f64 exactly by [`Group::small_int_to_f64`].
const SMALL_INT: i64 = 1 << 51;

/// Where the straight-line body pins its running values (see [`Group::pin`]): before every
/// top-level statement that reads a tap after `INTERLEAVE` taps since the last pin, with the
/// variables live there (read later before being assigned at the top level).
fn pin_points(func: &ir::Func) -> Vec<(usize, Vec<Var>)> {
    let reads_tap = |s: &Stmt| {
        let mut found = false;
        ir::stmt_exprs(s, |e| {
            e.visit(&mut |x| found |= matches!(x, Expr::Load(a, _) if *a == ir::BUFFER))
        });
        found
    };
    let mut at = Vec::new();
    let mut taps = 0;
    for (i, s) in func.body.iter().enumerate() {
        if reads_tap(s) {
            if taps >= INTERLEAVE {
                at.push(i);
                taps = 0;
            }
            taps += 1;
        }
    }
    // Liveness, backwards: a top-level assignment kills its variable; anything else only reads.
    let mut live = vec![false; func.vars.len()];
    let mut out = Vec::with_capacity(at.len());
    fn read(s: &Stmt, live: &mut [bool]) {
        ir::stmt_exprs(s, |e| {
            e.visit(&mut |x| {
                if let Expr::Var(v) = x {
                    live[v.0 as usize] = true;
                }
            })
        });
        ir::stmt_blocks(s, |b| b.iter().for_each(|s| read(s, live)));
    }
    for (i, s) in func.body.iter().enumerate().rev() {
        if let Stmt::Assign(v, _) = s {
            live[v.0 as usize] = false;
        }
        read(s, &mut live);
        if at.last() == Some(&i) {
            at.pop();
            let vars = (0..live.len())
                .filter(|&v| live[v])
                .map(|v| Var(v as u32))
                .collect();
            out.push((i, vars));
        }
    }
    out.reverse();
    out
}

/// One chain of `LANES` pixels.
struct ChainState {
    /// Each IR variable's current value: code is straight-line, so no Cranelift variables.
    vals: Vec<Lane>,
    /// Inside the arms of an if-converted `if`: the lanes for which the arm runs.
    mask: Option<Lane>,
    /// The chain's first pixel, in bytes from the group's.
    offset: i32,
    /// The lanes in which every check so far held.
    checked: Lane,
}

impl Group<'_, '_> {
    // ---------------------------------------------------------------------------------------------
    // Statements

    /// Translates `stmts`; returns whether a `return` ended them.
    fn block(&mut self, ch: usize, stmts: &[Stmt]) -> Result<bool> {
        for s in stmts {
            if self.stmt(ch, s)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn stmt(&mut self, ch: usize, s: &Stmt) -> Result<bool> {
        match s {
            Stmt::Assign(v, e) => {
                let x = self.expr(ch, e)?;
                self.set(ch, *v, x)?;
            }
            Stmt::If(c, then, els) => return self.if_converted(ch, c, then, els),
            Stmt::Check { cond, .. } => self.check(ch, cond)?,
            Stmt::Reduce { .. } => self.reduce(ch..ch + 1, s)?,
            Stmt::Return(e) if self.chains[ch].mask.is_none() => {
                let v = self.expr(ch, e)?;
                let v = self.cast(v, Ty::F64)?;
                let v = self.vector(v);
                self.test_checks(ch);
                let out = self.t.kernel_out_addr()?;
                self.t
                    .b
                    .ins()
                    .store(VECTOR_MEM, v, out, self.chains[ch].offset);
                return Ok(true);
            }
            _ => return Err(codegen_error("statement not computable in lanes")),
        }
        Ok(false)
    }

    fn set(&mut self, ch: usize, v: Var, x: Lane) -> Result<()> {
        let ty = self.t.var_ty(v)?;
        if x.ty() != ty {
            return Err(codegen_error("ill-typed IR: assignment of another type"));
        }
        self.chains[ch].vals[v.0 as usize] = x;
        Ok(())
    }

    /// Both arms under their lane masks, then each variable they assign blended by `c`. A
    /// constant condition translates its arm alone.
    fn if_converted(&mut self, ch: usize, c: &Expr, then: &[Stmt], els: &[Stmt]) -> Result<bool> {
        let c = self.expr(ch, c)?;
        let c = self.cast(c, Ty::Bool)?;
        if let Some(c) = c.constant() {
            return self.block(ch, if c.b() { then } else { els });
        }
        if els.is_empty() && is_guard(self.func, then) {
            return self.guard(ch, c, then);
        }
        let outer = self.chains[ch].mask;
        let before = self.chains[ch].vals.clone();
        self.chains[ch].mask = Some(self.within(outer, c)?);
        // `supported` admits no `return` in an arm, and `stmt` refuses one under a mask.
        self.block(ch, then)?;
        let then_vals = std::mem::replace(&mut self.chains[ch].vals, before);
        let not_c = self.unary(UnOp::Not, c)?;
        self.chains[ch].mask = Some(self.within(outer, not_c)?);
        self.block(ch, els)?;
        self.chains[ch].mask = outer;
        for (i, &t) in then_vals.iter().enumerate() {
            let e = self.chains[ch].vals[i];
            if !t.same(e) {
                self.chains[ch].vals[i] = self.select(c, t, e)?;
            }
        }
        Ok(false)
    }

    /// A guard's arm ([`is_guard`]), which few windows enter (`ir::zero_signs`: a result that
    /// is a zero): branched around unless a lane of the chain enters it, so that the others pay
    /// one test; inside, run under its mask with its checks tested at once (a failing lane
    /// bails, as at the store). If-converted, every group computed the arm's reductions: a
    /// 5×5 `np.min(x) + np.mean(x)` on 1024² took 42 ms instead of 15.
    fn guard(&mut self, ch: usize, c: Lane, then: &[Stmt]) -> Result<bool> {
        let any = match c {
            Lane::Vec(v, _) => self.t.b.ins().vany_true(v),
            Lane::Uni(Opnd::Dyn(v, _)) => v,
            Lane::Uni(Opnd::Const(_)) => unreachable!("a constant condition takes its arm"),
        };
        let (enter, after) = (self.t.b.create_block(), self.t.b.create_block());
        self.t.b.ins().brif(any, enter, &[], after, &[]);
        self.t.b.seal_block(enter);
        self.t.b.switch_to_block(enter);
        let outer = self.chains[ch].mask;
        let (vals, checked) = (self.chains[ch].vals.clone(), self.chains[ch].checked);
        self.chains[ch].mask = Some(self.within(outer, c)?);
        self.chains[ch].checked = Lane::Uni(Opnd::Const(Val::B(true)));
        self.block(ch, then)?;
        self.test_checks(ch);
        self.t.b.ins().jump(after, &[]);
        self.t.b.seal_block(after);
        self.t.b.switch_to_block(after);
        // Nothing the arm computed is read after it (`is_guard`).
        let state = &mut self.chains[ch];
        (state.vals, state.checked, state.mask) = (vals, checked, outer);
        Ok(false)
    }

    /// The lanes of `mask` (all when `None`) for which `c` holds.
    fn within(&mut self, mask: Option<Lane>, c: Lane) -> Result<Lane> {
        match mask {
            None => Ok(c),
            Some(m) => self.binary(BinOp::And, m, c),
        }
    }

    /// Adds `cond`, in every active lane, to what the chain's `return` requires. Expressions
    /// are pure and total, so the test can wait: one branch per chain, just before its store,
    /// keeps every value of the body from being live (and spilled) across a branch.
    fn check(&mut self, ch: usize, cond: &Expr) -> Result<()> {
        let c = self.expr(ch, cond)?;
        let c = self.cast(c, Ty::Bool)?;
        let c = match self.chains[ch].mask {
            None => c,
            Some(m) => {
                let inactive = self.unary(UnOp::Not, m)?;
                self.binary(BinOp::Or, c, inactive)?
            }
        };
        self.chains[ch].checked = self.binary(BinOp::And, self.chains[ch].checked, c)?;
        Ok(())
    }

    /// Bails unless every check so far held in every lane.
    fn test_checks(&mut self, ch: usize) {
        let all = match self.chains[ch].checked {
            Lane::Uni(Opnd::Const(c)) if c.b() => return,
            Lane::Uni(Opnd::Const(_)) => return self.jump_to_bail(),
            Lane::Uni(Opnd::Dyn(v, _)) => v,
            Lane::Vec(v, _) => self.t.b.ins().vall_true(v),
        };
        let next = self.t.b.create_block();
        self.t.b.ins().brif(all, next, &[], self.bail, &[]);
        // The branch is the only predecessor of the rest.
        self.t.b.seal_block(next);
        self.t.b.switch_to_block(next);
    }

    /// Jumps to the bail block and continues in a new block that nothing reaches (Cranelift
    /// removes it).
    fn jump_to_bail(&mut self) {
        self.t.b.ins().jump(self.bail, &[]);
        let dead = self.t.b.create_block();
        self.t.b.seal_block(dead);
        self.t.b.switch_to_block(dead);
    }

    /// A reduction `s` of constant length in each of `chains`, unrolled with the index bound to
    /// each constant and folded lane-wise in the scalar kernel's order.
    fn reduce(&mut self, chains: Range<usize>, s: &Stmt) -> Result<()> {
        let &Stmt::Reduce {
            dst,
            op,
            ref len,
            index,
            ref elem,
            ..
        } = s
        else {
            return Err(codegen_error("not a reduction"));
        };
        let k = match self.expr(chains.start, len)?.constant() {
            Some(Val::I(k)) => k.max(0) as usize,
            _ => return Err(codegen_error("reduction of a run-time length in lanes")),
        };
        let (elem_ty, result_ty) = op.types();
        // As in the scalar kernel, a reduction's loads are its own (see `Translator::region`):
        // a tap shared with another reduction would be kept live, and spilled, until it is
        // used again; reloading it from L1 is cheaper.
        self.t.new_load_region();
        let mut elems = vec![Vec::with_capacity(k); chains.len()];
        for i in 0..k {
            for (n, ch) in chains.clone().enumerate() {
                self.chains[ch].vals[index.0 as usize] = Lane::Uni(Opnd::Const(Val::I(i as i64)));
                let e = self.expr(ch, elem)?;
                let e = self.cast(e, elem_ty)?;
                elems[n].push(self.vector(e));
            }
        }
        self.t.region = None;
        let results = match k {
            0 if op.needs_nonempty() => return Err(codegen_error("empty reduction in lanes")),
            0 => vec![Lane::Uni(Opnd::Const(eval::reduce_empty(op))); chains.len()],
            _ => self
                .fold(op, &elems)?
                .into_iter()
                .map(|v| Lane::Vec(v, result_ty))
                .collect(),
        };
        for (ch, result) in chains.zip(results) {
            // A count of `k` elements is in `0..=k`.
            let result = match op {
                ReduceOp::Count => self.with_range(result, Some((0, k as i64))),
                _ => result,
            };
            // After the loop the index holds its last value, as in the interpreter.
            if k > 0 {
                self.chains[ch].vals[index.0 as usize] =
                    Lane::Uni(Opnd::Const(Val::I(k as i64 - 1)));
            }
            self.set(ch, dst, result)?;
        }
        Ok(())
    }

    /// `op` over each chain's lane vectors (at least one each). The chains' folds are
    /// independent dependency chains: a store of every chain's running state each `INTERLEAVE`
    /// steps, in program order, makes Cranelift's elaborator (which computes a pure value at its
    /// first use) emit the chains' steps alternately, so that their latencies overlap.
    fn fold(&mut self, op: ReduceOp, elems: &[Vec<Value>]) -> Result<Vec<Value>> {
        let mut accs = Vec::with_capacity(elems.len());
        for e in elems {
            accs.push(match op {
                ReduceOp::Sum => {
                    // Eight independent partial sums already.
                    let zero = self.splat_f64(0.0);
                    self.t.pairwise_sum(e, zero)
                }
                // Python's `0 + x0`.
                ReduceOp::SumSeq => {
                    let zero = self.splat_f64(0.0);
                    self.t.b.ins().fadd(zero, e[0])
                }
                // A true lane's mask is -1: counting subtracts it.
                ReduceOp::Count => self.t.b.ins().ineg(e[0]),
                _ => e[0],
            });
        }
        if op == ReduceOp::Sum {
            return Ok(accs);
        }
        let k = elems.first().map_or(0, Vec::len);
        let unused = self.t.b.ins().iconst(types::I64, 0);
        for i in 1..k {
            for (acc, e) in accs.iter_mut().zip(elems) {
                let v = e[i];
                *acc = match op {
                    ReduceOp::PyMin => self.blend_less(v, *acc, v, *acc),
                    ReduceOp::PyMax => self.blend_less(*acc, v, v, *acc),
                    ReduceOp::Any => self.t.b.ins().bor(*acc, v),
                    ReduceOp::All => self.t.b.ins().band(*acc, v),
                    ReduceOp::Count => self.t.b.ins().isub(*acc, v),
                    // The rest are one instruction, the same on vectors as on scalars.
                    _ => self.t.fold_step(op, (*acc, unused), v, unused).0,
                };
            }
            if accs.len() > 1 && i % INTERLEAVE == 0 && i + 1 < k {
                // One slot per chain: a store followed by another to the same place is dead,
                // and Cranelift drops it.
                for (n, &acc) in accs.iter().enumerate() {
                    let sink = self.sink();
                    self.t
                        .b
                        .ins()
                        .stack_store(types::I64, acc, sink, 16 * n as i32);
                }
            }
        }
        Ok(accs)
    }

    /// Stores each chain's vector values of `live` (to a slot nothing reads). Cranelift's
    /// elaborator computes a pure value at its first use, and the first use of a running total is
    /// the final store: every chain's whole computation would be emitted there, one variable's
    /// tree after another, so values shared by two trees (a NaN mask both counted and added)
    /// stay live across a whole tree and spill. A store is a use in program order: pinning the
    /// running values every few taps makes the code follow the statements.
    fn pin(&mut self, live: &[Var]) {
        let values: Vec<Value> = (0..CHAINS)
            .flat_map(|ch| live.iter().map(move |v| (ch, v)))
            .filter_map(|(ch, v)| match self.chains[ch].vals[v.0 as usize] {
                Lane::Vec(x, _) => Some(x),
                Lane::Uni(_) => None,
            })
            .collect();
        let Some(slot) = self.pins else {
            return;
        };
        for (n, x) in values.into_iter().enumerate() {
            self.t
                .b
                .ins()
                .stack_store(types::I64, x, slot, 16 * n as i32);
        }
    }

    fn sink(&mut self) -> StackSlot {
        *self.sink.get_or_insert_with(|| {
            self.t.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                (16 * CHAINS) as u32,
                4,
            ))
        })
    }

    // ---------------------------------------------------------------------------------------------
    // Expressions

    fn expr(&mut self, ch: usize, e: &Expr) -> Result<Lane> {
        Ok(match e {
            Expr::F64(x) => Lane::Uni(Opnd::Const(Val::F(*x))),
            Expr::I64(x) => Lane::Uni(Opnd::Const(Val::I(*x))),
            Expr::Bool(x) => Lane::Uni(Opnd::Const(Val::B(*x))),
            Expr::Var(v) => *self.chains[ch]
                .vals
                .get(v.0 as usize)
                .ok_or_else(|| codegen_error("undeclared variable"))?,
            // Bound values are loaded once, in the prologue.
            Expr::Param(_) | Expr::IntParam(_) => Lane::Uni(self.t.expr(e)?),
            Expr::Len(a) => match self.t.arr_kind(*a)? {
                ArrKind::Buffer => {
                    let n = self
                        .func
                        .filter_size
                        .ok_or_else(|| codegen_error("a row kernel needs a specialised Func"))?;
                    Lane::Uni(Opnd::Const(Val::I(n as i64)))
                }
                _ => Lane::Uni(self.t.translate_len(*a)?),
            },
            Expr::Load(a, i) => {
                let i = self.expr(ch, i)?;
                let i = self.cast(i, Ty::I64)?;
                match (self.t.arr_kind(*a)?, i.constant()) {
                    (ArrKind::Buffer, Some(Val::I(k))) => {
                        let (addr, offset) = self.t.kernel_tap(k)?;
                        let offset = offset
                            .checked_add(self.chains[ch].offset)
                            .ok_or_else(|| codegen_error("tap offset out of range"))?;
                        let flags = VECTOR_TAP.with_alias_region(self.t.region);
                        let v = self.t.b.ins().load(types::F64X2, flags, addr, offset);
                        Lane::Vec(v, Ty::F64)
                    }
                    (ArrKind::Buffer, _) => {
                        return Err(codegen_error("a buffer load at a run-time index in lanes"))
                    }
                    _ => self.per_lane(&[i], |t, o| t.translate_load(*a, o[0]))?,
                }
            }
            Expr::Unary(op, x) => {
                let x = self.expr(ch, x)?;
                self.unary(*op, x)?
            }
            Expr::Binary(op, a, b) => match (op, counted(a, b)) {
                (BinOp::Add, Some((n, c))) => self.count(ch, n, c)?,
                _ => {
                    let (a, b) = (self.expr(ch, a)?, self.expr(ch, b)?);
                    self.binary(*op, a, b)?
                }
            },
            Expr::Cmp(op, a, b) => {
                let (a, b) = (self.expr(ch, a)?, self.expr(ch, b)?);
                self.cmp(*op, a, b)?
            }
            Expr::Select(c, a, b) => {
                let c = self.expr(ch, c)?;
                let c = self.cast(c, Ty::Bool)?;
                let (a, b) = (self.expr(ch, a)?, self.expr(ch, b)?);
                self.select(c, a, b)?
            }
            Expr::Call(f, args) => self.call(ch, *f, args)?,
            Expr::Cast(ty, x) => {
                let x = self.expr(ch, x)?;
                self.cast(x, *ty)?
            }
        })
    }

    /// `n + int(c)`: of a bool `c`, whose true mask is -1, `n - mask` (one instruction where the
    /// cast takes a shift); otherwise the cast and the add.
    fn count(&mut self, ch: usize, n: &Expr, c: &Expr) -> Result<Lane> {
        let (n, c) = (self.expr(ch, n)?, self.expr(ch, c)?);
        if let (Lane::Vec(_, Ty::I64), Lane::Vec(m, Ty::Bool)) = (n, c) {
            let range = self
                .int_range(n)
                .and_then(|r| ranges::binary(BinOp::Add, r, (0, 1)));
            let v = self.vector(n);
            let counted = Lane::Vec(self.t.b.ins().isub(v, m), Ty::I64);
            return Ok(self.with_range(counted, range));
        }
        let c = self.cast(c, Ty::I64)?;
        self.binary(BinOp::Add, n, c)
    }

    fn call(&mut self, ch: usize, f: MathFn, args: &[Expr]) -> Result<Lane> {
        let mut xs = Vec::with_capacity(args.len());
        for a in args {
            let x = self.expr(ch, a)?;
            xs.push(self.cast(x, Ty::F64)?);
        }
        // A fused multiply-add of vectors is one instruction where the CPU has FMA (which
        // `cranelift_native` then enables for the JIT): each lane rounded once, as the scalar.
        if f == MathFn::Fma && host_has_fma() && xs.iter().any(|x| matches!(x, Lane::Vec(..))) {
            let v: Vec<Value> = xs.into_iter().map(|x| self.vector(x)).collect();
            return Ok(Lane::Vec(self.t.b.ins().fma(v[0], v[1], v[2]), Ty::F64));
        }
        // The runtime's functions are scalar: one call per lane.
        self.per_lane(&xs, |t, o| t.call_math(f, o.to_vec()))
    }

    fn unary(&mut self, op: UnOp, x: Lane) -> Result<Lane> {
        let Lane::Vec(v, ty) = x else {
            return self.per_lane(&[x], |t, o| t.translate_unary(op, o[0]));
        };
        let ins = self.t.b.ins();
        let r = match (op, ty) {
            (UnOp::Neg, Ty::F64) => ins.fneg(v),
            (UnOp::Abs, Ty::F64) => ins.fabs(v),
            (UnOp::Sqrt, Ty::F64) => ins.sqrt(v),
            (UnOp::Not, Ty::Bool) => return Ok(Lane::Vec(self.not(v), Ty::Bool)),
            (UnOp::IsNan, Ty::F64) => {
                return Ok(Lane::Vec(ins.fcmp(FloatCC::Unordered, v, v), Ty::Bool))
            }
            // |x| == inf; |x| < inf is ordered, so false for NaN (as `float_unary`).
            (UnOp::IsInf | UnOp::IsFinite, Ty::F64) => {
                let abs = ins.fabs(v);
                let inf = self.splat_f64(f64::INFINITY);
                let cc = if op == UnOp::IsInf {
                    FloatCC::Equal
                } else {
                    FloatCC::LessThan
                };
                return Ok(Lane::Vec(self.t.b.ins().fcmp(cc, abs, inf), Ty::Bool));
            }
            _ => return self.per_lane(&[x], |t, o| t.translate_unary(op, o[0])),
        };
        Ok(Lane::Vec(r, Ty::F64))
    }

    fn binary(&mut self, op: BinOp, a: Lane, b: Lane) -> Result<Lane> {
        use BinOp::*;
        let ty = a.ty();
        let vectorised = match (ty, op) {
            _ if b.ty() != ty || (a.constant().is_some() && b.constant().is_some()) => false,
            (Ty::F64, Add | Sub | Mul | Div | Min | Max | PyMin | PyMax) => true,
            (Ty::I64, Add | Sub | And | Or | Xor) => true,
            (Ty::Bool, And | Or | Xor | Min | Max | PyMin | PyMax) => true,
            _ => false,
        };
        if !vectorised || matches!((a, b), (Lane::Uni(_), Lane::Uni(_))) {
            return self.per_lane(&[a, b], |t, o| t.translate_binary(op, o[0], o[1]));
        }
        let (x, y) = (self.vector(a), self.vector(b));
        let ins = self.t.b.ins();
        let r = match op {
            BinOp::Add if ty == Ty::F64 => ins.fadd(x, y),
            BinOp::Sub if ty == Ty::F64 => ins.fsub(x, y),
            BinOp::Mul => ins.fmul(x, y),
            BinOp::Div => ins.fdiv(x, y),
            BinOp::Add => ins.iadd(x, y),
            BinOp::Sub => ins.isub(x, y),
            // Bools: the masks' and/or (`False < True`, so min is and, max is or).
            BinOp::And | BinOp::Min | BinOp::PyMin if ty == Ty::Bool => ins.band(x, y),
            BinOp::Or | BinOp::Max | BinOp::PyMax if ty == Ty::Bool => ins.bor(x, y),
            BinOp::And => ins.band(x, y),
            BinOp::Or => ins.bor(x, y),
            BinOp::Xor => ins.bxor(x, y),
            // NumPy's minimum/maximum: Cranelift's rule on every type (see `math::fmin`).
            BinOp::Min => ins.fmin(x, y),
            BinOp::Max => ins.fmax(x, y),
            // CPython's `y < x ? y : x` and `x < y ? y : x`, as the scalar `float_binary`.
            BinOp::PyMin => self.blend_less(y, x, y, x),
            BinOp::PyMax => self.blend_less(x, y, y, x),
            _ => return Err(codegen_error("operator not vectorised")),
        };
        let range = match (ty, self.int_range(a), self.int_range(b)) {
            (Ty::I64, Some(p), Some(q)) => ranges::binary(op, p, q),
            _ => None,
        };
        Ok(self.with_range(Lane::Vec(r, ty), range))
    }

    fn cmp(&mut self, op: CmpOp, a: Lane, b: Lane) -> Result<Lane> {
        let vectorised = match (a.ty(), b.ty()) {
            (Ty::F64, Ty::F64) | (Ty::I64, Ty::I64) => true,
            // Masks are -1 for true: only equality compares them as 0/1 would.
            (Ty::Bool, Ty::Bool) => matches!(op, CmpOp::Eq | CmpOp::Ne),
            _ => false,
        };
        if !vectorised || matches!((a, b), (Lane::Uni(_), Lane::Uni(_))) {
            return self.per_lane(&[a, b], |t, o| Ok(t.translate_cmp(op, o[0], o[1])));
        }
        let (x, y) = (self.vector(a), self.vector(b));
        let r = if a.ty() == Ty::F64 {
            self.t.b.ins().fcmp(super::expr::float_cc(op), x, y)
        } else {
            self.t.b.ins().icmp(super::expr::int_cc(op), x, y)
        };
        Ok(Lane::Vec(r, Ty::Bool))
    }

    /// `c ? a : b` lane by lane.
    fn select(&mut self, c: Lane, a: Lane, b: Lane) -> Result<Lane> {
        if a.ty() != b.ty() {
            return Err(codegen_error("ill-typed IR: select of two types"));
        }
        if let Some(c) = c.constant() {
            return Ok(if c.b() { a } else { b });
        }
        let ty = a.ty();
        if let (Lane::Uni(Opnd::Dyn(c, _)), Lane::Uni(_), Lane::Uni(_)) = (c, a, b) {
            let (x, y) = (self.t.value(self.uni(a)?), self.t.value(self.uni(b)?));
            return Ok(Lane::Uni(Opnd::Dyn(self.t.b.ins().select(c, x, y), ty)));
        }
        let zero = |l: Lane| match l.constant() {
            Some(Val::F(z)) => z.to_bits() == 0,
            Some(Val::I(z)) => z == 0,
            Some(Val::B(z)) => !z,
            None => false,
        };
        let (a_zero, b_zero) = (zero(a), zero(b));
        let range = match (self.int_range(a), self.int_range(b)) {
            (Some((p, q)), Some((r, s))) => Some((p.min(r), q.max(s))),
            _ => None,
        };
        let (m, x, y) = (self.vector(c), self.vector(a), self.vector(b));
        // A mask is all ones or all zeros, and +0.0, 0 and false are all zero bits: one `and`
        // instead of a blend.
        let v = if b_zero || a_zero {
            let m = self.mask_as(m, ty);
            let ins = self.t.b.ins();
            if b_zero {
                ins.band(m, x)
            } else {
                ins.band_not(y, m)
            }
        } else {
            self.blend(m, x, y, ty)
        };
        Ok(self.with_range(Lane::Vec(v, ty), range))
    }

    /// The bounds of an int lane value, where known: a constant's, or a vector's recorded by
    /// [`Group::with_range`].
    fn int_range(&self, x: Lane) -> Option<Iv> {
        match x {
            Lane::Uni(Opnd::Const(Val::I(c))) => Some((c, c)),
            Lane::Vec(v, Ty::I64) => self.int_ranges.get(&v).copied(),
            _ => None,
        }
    }

    /// `x`, with the bounds of its values recorded when it is an int vector.
    fn with_range(&mut self, x: Lane, range: Option<Iv>) -> Lane {
        if let (Lane::Vec(v, Ty::I64), Some(r)) = (x, range) {
            self.int_ranges.insert(v, r);
        }
        x
    }

    /// An int vector whose lanes lie in `-SMALL_INT..=SMALL_INT`, as f64, exactly. Added to the
    /// bits of 1.5 * 2**52, whose 52-bit significand field holds 2**51, `v` makes that field
    /// `2**51 + v`, in `0..=2**52`: below 2**52 the bits are the double `1.5 * 2**52 + v`; at
    /// 2**52 (`v = 2**51`) the carry into the exponent makes them 2**53, which is that value
    /// too. Subtracting 1.5 * 2**52 then leaves `v` exactly (Sterbenz: the operands are within
    /// a factor of two), and 0 gives +0.0, as `float(0)`. At `2**51 + 1` it would not (the
    /// bits would be those of `2**53 + 2`); `tests/rowkernel.rs` runs both sides of both
    /// edges. Two instructions where the general conversion goes lane by lane through the
    /// integer unit: without AVX-512, x86-64 has no vector instruction for it.
    fn small_int_to_f64(&mut self, v: Value) -> Value {
        const BIAS: f64 = 6755399441055744.0; // 1.5 * 2**52
        let bias = self.splat_f64(BIAS);
        // The same constant read as ints for the add: one register kept across the loop.
        let bits = self
            .t
            .b
            .ins()
            .bitcast(types::I64X2, MemFlagsData::new(), bias);
        let biased = self.t.b.ins().iadd(v, bits);
        let biased = self.mask_as(biased, Ty::F64);
        self.t.b.ins().fsub(biased, bias)
    }

    /// A lane mask viewed as a vector of `ty` (bitwise operations need one type).
    fn mask_as(&mut self, mask: Value, ty: Ty) -> Value {
        if ty == Ty::F64 {
            self.t
                .b
                .ins()
                .bitcast(types::F64X2, MemFlagsData::new(), mask)
        } else {
            mask
        }
    }

    fn uni(&self, l: Lane) -> Result<Opnd> {
        match l {
            Lane::Uni(o) => Ok(o),
            Lane::Vec(..) => Err(codegen_error("expected a value the same in every lane")),
        }
    }

    /// Conversion with `Translator::coerce`'s semantics.
    fn cast(&mut self, x: Lane, ty: Ty) -> Result<Lane> {
        let (v, from) = match x {
            _ if x.ty() == ty => return Ok(x),
            Lane::Vec(v, from) => (v, from),
            Lane::Uni(_) => return self.per_lane(&[x], |t, o| Ok(t.coerce(o[0], ty))),
        };
        let r = match (from, ty) {
            // `1.0 if c else 0.0`: the select's `and` of the mask.
            (Ty::Bool, Ty::F64) => {
                let constant = |v: f64| Lane::Uni(Opnd::Const(Val::F(v)));
                return self.select(x, constant(1.0), constant(0.0));
            }
            (Ty::Bool, Ty::I64) => {
                let int = Lane::Vec(self.t.b.ins().ushr_imm_u(v, 63), Ty::I64);
                return Ok(self.with_range(int, Some((0, 1))));
            }
            (Ty::I64, Ty::F64)
                if self
                    .int_range(x)
                    .is_some_and(|(lo, hi)| -SMALL_INT <= lo && hi <= SMALL_INT) =>
            {
                self.small_int_to_f64(v)
            }
            // `!= 0`, unordered or not equal: true for NaN, as `coerce`.
            (Ty::F64, Ty::Bool) => {
                let zero = self.splat_f64(0.0);
                self.t.b.ins().fcmp(FloatCC::NotEqual, v, zero)
            }
            (Ty::I64, Ty::Bool) => {
                let zero = self.vector(Lane::Uni(Opnd::Const(Val::I(0))));
                self.t.b.ins().icmp(IntCC::NotEqual, v, zero)
            }
            _ => return self.per_lane(&[x], |t, o| Ok(t.coerce(o[0], ty))),
        };
        Ok(Lane::Vec(r, ty))
    }

    // ---------------------------------------------------------------------------------------------
    // Lanes and vectors

    /// `f` (a scalar translator operation) in each lane; once when every operand is the same in
    /// all lanes.
    fn per_lane(
        &mut self,
        args: &[Lane],
        mut f: impl FnMut(&mut Translator<'_>, &[Opnd]) -> Result<Opnd>,
    ) -> Result<Lane> {
        if let Some(uni) = args
            .iter()
            .map(|&a| self.uni(a).ok())
            .collect::<Option<Vec<_>>>()
        {
            return Ok(Lane::Uni(f(self.t, &uni)?));
        }
        let mut vals = [None; LANES];
        let mut ty = Ty::F64;
        for (lane, val) in vals.iter_mut().enumerate() {
            let ops: Vec<Opnd> = args.iter().map(|&a| self.extract(a, lane as u8)).collect();
            let r = f(self.t, &ops)?;
            ty = r.ty();
            let v = self.t.value(r);
            *val = Some(if ty == Ty::Bool {
                self.t.b.ins().bmask(types::I64, v)
            } else {
                v
            });
        }
        let [Some(v0), Some(v1)] = vals else {
            return Err(codegen_error("a lane without a value"));
        };
        let v = self.t.b.ins().splat(vector_ty(ty), v0);
        Ok(Lane::Vec(self.t.b.ins().insertlane(v, v1, 1), ty))
    }

    /// Lane `lane` of `x` as a scalar operand (a bool as the scalar translator's 0/1 `i8`).
    fn extract(&mut self, x: Lane, lane: u8) -> Opnd {
        match x {
            Lane::Uni(o) => o,
            Lane::Vec(v, ty) => {
                let s = self.t.b.ins().extractlane(v, lane);
                if ty == Ty::Bool {
                    let b = self.t.b.ins().icmp_imm_s(IntCC::NotEqual, s, 0);
                    Opnd::Dyn(b, Ty::Bool)
                } else {
                    Opnd::Dyn(s, ty)
                }
            }
        }
    }

    /// `x` as a vector: a scalar is splatted (a bool as a mask).
    fn vector(&mut self, x: Lane) -> Value {
        match x {
            Lane::Vec(v, _) => v,
            Lane::Uni(Opnd::Const(c)) => {
                let bits = match c {
                    Val::F(f) => f.to_bits(),
                    Val::I(i) => i as u64,
                    // A mask: all ones for true.
                    Val::B(b) => (-i64::from(b)) as u64,
                };
                self.constant(vector_ty(c.ty()), bits)
            }
            Lane::Uni(o) => {
                let v = self.t.value(o);
                let v = if o.ty() == Ty::Bool {
                    self.t.b.ins().bmask(types::I64, v)
                } else {
                    v
                };
                self.t.b.ins().splat(vector_ty(o.ty()), v)
            }
        }
    }

    /// The complement of a mask: of a float compare, the complemented compare (`not isnan(v)`
    /// is `ordered`), which stays a whole-lane mask a blend can use directly.
    fn not(&mut self, m: Value) -> Value {
        use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
        let dfg = &self.t.b.func.dfg;
        if let ValueDef::Result(inst, _) = dfg.value_def(m) {
            if let InstructionData::FloatCompare {
                opcode: Opcode::Fcmp,
                cond,
                args: [p, q],
            } = dfg.insts[inst]
            {
                return self.t.b.ins().fcmp(cond.complement(), p, q);
            }
        }
        self.t.b.ins().bnot(m)
    }

    fn splat_f64(&mut self, x: f64) -> Value {
        self.constant(types::F64X2, x.to_bits())
    }

    /// A vector of type `ty` (64-bit lanes) whose lanes hold `bits`, made once per call before
    /// the group loop and kept in a register across it.
    ///
    /// Not a `splat` of a constant, which Cranelift would rematerialize as a load from the
    /// constant pool at each use (see the module's "Constants in registers"): the value is
    /// read back from a stack slot through a load of another type than the stores', which no
    /// optimisation folds into a constant again. Zero stays a `splat` (an `xor` of the
    /// register, no load), and so do the constants after the first [`HOISTED_CONSTANTS`]:
    /// held in registers, many of them spill, and a reload from the stack is a load too, one
    /// that cannot be an operand of the arithmetic as the constant pool's can.
    fn constant(&mut self, ty: Type, bits: u64) -> Value {
        if let Some(&v) = self.constants.get(&(ty, bits)) {
            return v;
        }
        if bits == 0 || self.constants.len() >= HOISTED_CONSTANTS {
            let scalar = match ty.lane_type() {
                types::F64 => self.t.b.ins().f64const(Ieee64::with_bits(bits)),
                lane => self.t.b.ins().iconst(lane, bits as i64),
            };
            return self.t.b.ins().splat(ty, scalar);
        }
        let slot = self.t.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            16,
            4,
        ));
        let mut pos = FuncCursor::new(self.t.b.func);
        pos.goto_last_inst(self.preheader);
        let lane = pos.ins().iconst(types::I64, bits as i64);
        pos.ins().stack_store(types::I64, lane, slot, 0);
        pos.ins().stack_store(types::I64, lane, slot, 8);
        let v = pos.ins().stack_load(types::I64, ty, slot, 0);
        self.constants.insert((ty, bits), v);
        v
    }

    /// `mask ? x : y` per lane, for vectors of type `ty`.
    fn blend(&mut self, mask: Value, x: Value, y: Value, ty: Ty) -> Value {
        let mask = self.mask_as(mask, ty);
        self.t.b.ins().bitselect(mask, x, y)
    }

    /// `p < q ? x : y` per f64 lane: the select of Python's `min`/`max`.
    fn blend_less(&mut self, p: Value, q: Value, x: Value, y: Value) -> Value {
        let m = self.t.b.ins().fcmp(FloatCC::LessThan, p, q);
        self.blend(m, x, y, Ty::F64)
    }
}

/// Whether the CPU the JIT compiles for (this one) has FMA.
fn host_has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
