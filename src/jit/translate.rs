//! IR → Cranelift IR: the entry function, its prologue and the statements.
//!
//! One Cranelift function holds everything: a prologue that validates the C arguments and loads
//! the bound values once, then the specialised body (when the Func was lowered for a known
//! `filter_size` and the call has that size) or the general body. Expressions are in `expr.rs`,
//! reductions and fills in `reduce.rs`.
//!
//! Control flow follows the structured IR: every `translate_*` for a statement returns whether
//! control can fall off its end. After a statement that cannot (a `Return`, a failing `Check`,
//! `Break`, `Continue`, or an `If`/`Loop` that never falls through) the rest of the IR block is
//! unreachable and is not emitted, so no instruction is ever appended after a terminator.

use super::imports::Callee;
use crate::error::{Error, ErrorKind, Span};
use crate::ir::eval::Val;
use crate::ir::{self, Arr, ArrKind, ArrayOp, Expr, SortedStat, Stmt, Ty, Var};
use crate::runtime::{OFFSET_ARRAYS, OFFSET_FAILED, OFFSET_INTS, OFFSET_SCALARS};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::Ieee64;
use cranelift_codegen::ir::{
    types, AbiParam, AliasRegion, AliasRegionData, Block, BlockArg, FuncRef, Function, InstBuilder,
    MemFlagsData, Signature, StackSlot, Type, Value,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module};
use std::collections::BTreeMap;

pub(super) type Result<T> = std::result::Result<T, Error>;

/// A code-generator error: the IR broke an invariant the lowering guarantees, or Cranelift failed.
pub(super) fn codegen_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Codegen, Span::default(), msg)
}

/// The Cranelift type of an IR scalar type. Bools are `i8` holding 0 or 1, which is what `icmp`
/// and `fcmp` produce.
pub(super) fn clif_ty(ty: Ty) -> Type {
    match ty {
        Ty::Bool => types::I8,
        Ty::I64 => types::I64,
        Ty::F64 => types::F64,
    }
}

/// A translated expression: a value known at compile time, or an SSA value of an IR type.
///
/// Tracking constants lets fully unrolled reductions bind the index variable to a constant, so
/// that `x[i]` becomes a load at a fixed offset; folding goes through [`crate::ir::eval`], the
/// interpreter's own definition, so it cannot change a result.
#[derive(Clone, Copy, Debug)]
pub(super) enum Opnd {
    Const(Val),
    Dyn(Value, Ty),
}

impl Opnd {
    pub(super) fn ty(self) -> Ty {
        match self {
            Opnd::Const(v) => v.ty(),
            Opnd::Dyn(_, t) => t,
        }
    }
}

/// Where `Break` and `Continue` go inside one `Stmt::Loop`.
struct LoopTargets {
    exit: Block,
    exit_used: bool,
    /// The loop's latch while translating its body; `None` while translating the latch itself,
    /// where a `Continue` continues the *enclosing* loop, as in the interpreter.
    latch: Option<Block>,
    latch_used: bool,
}

/// A scratch array's run-time state: base pointer and length, as Cranelift variables because a
/// `Fill` inside a branch or loop redefines them.
#[derive(Clone, Copy)]
pub(super) struct ScratchVars {
    pub(super) ptr: Variable,
    pub(super) len: Variable,
}

/// Values of the bound parameters, loaded once in the prologue.
#[derive(Default)]
struct Bound {
    scalars: BTreeMap<u32, Value>,
    ints: BTreeMap<u32, Value>,
    /// `(ptr, len)` of each bound array.
    arrays: BTreeMap<u32, (Value, Value)>,
}

/// Memory flags for loads and stores the IR has proved in range and that are 8-byte aligned.
pub(super) const TRUSTED: MemFlagsData = MemFlagsData::trusted();
/// The same for memory that no store of this call can change (the buffer, the bound values).
pub(super) const READONLY: MemFlagsData = MemFlagsData::trusted().with_readonly();
/// [`READONLY`] plus `can_move`, which makes the load a pure value that Cranelift places next to
/// its first use instead of where it was emitted. That matters for unrolled code: otherwise all
/// the loads are issued first and their values spilled. A movable load may be hoisted out of a
/// loop (above a check inside it), so only loads that are valid wherever they are hoisted get it:
/// see `Translator::loop_depth`.
pub(super) const MOVABLE: MemFlagsData = READONLY.with_can_move();

/// Translates the IR of one filter into the body of the C entry function.
pub(super) struct Translator<'a> {
    /// Builds the Cranelift function and does SSA construction for IR variables.
    pub(super) b: FunctionBuilder<'a>,
    /// Declares the imported runtime symbols.
    module: &'a mut JITModule,
    /// Callees already imported into this function, so that each is declared once.
    imports: Vec<(Callee, FuncRef)>,
    /// The entry function's parameters, whatever the signature (see [`ir::Sig`]): the input
    /// (`buffer`, input line, quad's `xx`, or a transform's coordinates) and its length, the
    /// output (`return_value`, output line or input coordinates) and its length, and `user_data`.
    pub(super) buffer: Value,
    pub(super) size: Value,
    ret: Value,
    out_len: Value,
    ctx: Value,
    /// The signature being compiled: decides the parameters, the checks and how results return.
    sig: ir::Sig,
    bound: Bound,
    /// The shared cold block reporting a failed check, with parameters `(site: i32, a, b)`;
    /// created on first use.
    fail_block: Option<Block>,
    /// The shared `return 0`.
    ret0: Block,
    /// Stack slots backing constant-length scratch arrays, per array slot: `(slot, capacity in
    /// elements)`. Shared by both bodies, which never run in the same call.
    pub(super) stack_slots: BTreeMap<u32, (StackSlot, u32)>,
    /// Bytes of stack used by those slots so far.
    pub(super) stack_bytes: u32,
    /// The runtime scratch slot for materialising the elements of a run-time-length sum: one
    /// past the arrays of both bodies, so it is never an array's.
    pub(super) sum_slot: u32,

    // Per-body state, reset by `begin_body`.
    /// The IR function being translated.
    pub(super) func: &'a ir::Func,
    /// The Cranelift variable of each IR variable.
    pub(super) vars: Vec<Variable>,
    /// IR variables currently bound to a constant (the index of an unrolled reduction).
    pub(super) consts: Vec<Option<Val>>,
    /// The state of each scratch array (`None` for the buffer and bound arrays).
    pub(super) scratch: Vec<Option<ScratchVars>>,
    /// Enclosing loops, innermost last.
    loops: Vec<LoopTargets>,
    /// Number of enclosing loops, IR loops and emitted counted loops alike. Outside loops,
    /// Cranelift places a movable load at (or after) the point where it was emitted, which the
    /// IR's checks dominate; inside one it could hoist a loop-invariant load above them.
    pub(super) loop_depth: u32,
    /// The alias region given to the movable loads of the reduction or fill being translated.
    /// Cranelift merges identical pure loads; a region per statement keeps the elements of one
    /// unrolled reduction from being kept live (and spilled) until the next reads them again,
    /// since reloading from L1 is cheaper than a spill and its reload. The memory is read-only,
    /// so regions say nothing about aliasing that matters.
    pub(super) region: Option<AliasRegion>,
    /// Regions created so far.
    regions: u32,
    /// Set while building a row kernel (see `super::kernel`): how the buffer is read and where a
    /// result goes.
    pub(super) kernel: Option<super::kernel::KernelState>,
    /// Loop back edges left before the next interrupt poll (see [`crate::interrupt`]).
    countdown: Variable,
}

/// The C signature of the entry function on a 64-bit host (pointers and `intptr_t` are i64).
pub(super) fn entry_signature(module: &JITModule, sig: ir::Sig) -> Signature {
    use types::{F64, I32, I64};
    let (params, ret): (&[types::Type], types::Type) = match sig {
        ir::Sig::Filter => (&[I64, I64, I64, I64], I32),
        ir::Sig::Filter1d => (&[I64, I64, I64, I64, I64], I32),
        ir::Sig::Transform => (&[I64, I64, I32, I32, I64], I32),
        ir::Sig::Integrand => (&[I32, I64, I64], F64),
    };
    let mut s = module.make_signature();
    s.params.extend(params.iter().map(|&t| AbiParam::new(t)));
    s.returns.push(AbiParam::new(ret));
    s
}

/// Builds the entry function into `clif` (whose signature must be [`entry_signature`]).
pub(super) fn translate<'a>(
    module: &'a mut JITModule,
    clif: &'a mut Function,
    builder_ctx: &'a mut FunctionBuilderContext,
    general: &'a ir::Func,
    specialized: Option<&'a ir::Func>,
) -> Result<()> {
    let mut t = start(module, clif, builder_ctx, general, specialized)?;
    t.translate_prologue(general, specialized)?;
    match specialized {
        None => {
            t.check_args(None)?;
            t.translate_body(general)?
        }
        Some(spec) => t.translate_dispatch(general, spec)?,
    }
    t.finish()
}

/// Builds a row kernel (see `super::kernel`) for the specialised `func` into `clif`, whose
/// signature is `(rows, n, out, user_data) -> i64`, with lane groups when `lanes` is set.
pub(super) fn translate_kernel<'a>(
    module: &'a mut JITModule,
    clif: &'a mut Function,
    builder_ctx: &'a mut FunctionBuilderContext,
    func: &'a ir::Func,
    taps: &super::kernel::Taps,
    lanes: bool,
) -> Result<()> {
    let mut t = start(module, clif, builder_ctx, func, None)?;
    let (rows, n, out, ctx) = (t.buffer, t.size, t.ret, t.ctx);
    t.translate_kernel_loop(func, taps, [rows, n, out, ctx], lanes)?;
    t.finish()
}

/// A translator positioned in the entry block of `clif`, whose four parameters it holds as
/// `buffer`, `size`, `ret` and `ctx`.
fn start<'a>(
    module: &'a mut JITModule,
    clif: &'a mut Function,
    builder_ctx: &'a mut FunctionBuilderContext,
    general: &'a ir::Func,
    specialized: Option<&'a ir::Func>,
) -> Result<Translator<'a>> {
    let mut b = FunctionBuilder::new(clif, builder_ctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    // The entry block has no predecessors: it can be sealed at once.
    b.seal_block(entry);
    // Normalise the parameters of every signature to (input, length, output, length, context).
    let sig = general.sig;
    let params = b.block_params(entry).to_vec();
    let wrong = || codegen_error(format!("entry signature does not match {sig:?}"));
    let (buffer, size, ret, out_len, ctx) = match (sig, params.as_slice()) {
        (ir::Sig::Filter, &[buffer, size, ret, ctx]) => {
            (buffer, size, ret, b.ins().iconst(types::I64, 0), ctx)
        }
        (ir::Sig::Filter1d, &[iline, ilen, oline, olen, ctx]) => (iline, ilen, oline, olen, ctx),
        (ir::Sig::Transform, &[coords, incoords, orank, irank, ctx]) => {
            let (orank, irank) = (
                b.ins().sextend(types::I64, orank),
                b.ins().sextend(types::I64, irank),
            );
            (coords, orank, incoords, irank, ctx)
        }
        (ir::Sig::Integrand, &[n, xx, ctx]) => {
            let n = b.ins().sextend(types::I64, n);
            let none = b.ins().iconst(types::I64, 0);
            (xx, n, none, none, ctx)
        }
        _ => return Err(wrong()),
    };
    let ret0 = b.create_block();
    let countdown = b.declare_var(types::I32);
    Ok(Translator {
        b,
        module,
        imports: Vec::new(),
        buffer,
        size,
        ret,
        out_len,
        ctx,
        sig,
        bound: Bound::default(),
        fail_block: None,
        ret0,
        stack_slots: BTreeMap::new(),
        stack_bytes: 0,
        sum_slot: general
            .arrays
            .len()
            .max(specialized.map_or(0, |s| s.arrays.len()))
            .try_into()
            .map_err(|_| codegen_error("too many arrays"))?,
        func: general,
        vars: Vec::new(),
        consts: Vec::new(),
        scratch: Vec::new(),
        loops: Vec::new(),
        loop_depth: 0,
        region: None,
        regions: 0,
        kernel: None,
        countdown,
    })
}

impl<'a> Translator<'a> {
    // ---------------------------------------------------------------------------------------------
    // Prologue, dispatch and epilogue

    /// Returns 0 at once when `user_data` is null or holds an earlier failure; then loads every
    /// bound value the bodies use. The arguments are checked by each body's [`Self::check_args`].
    fn translate_prologue(
        &mut self,
        general: &ir::Func,
        specialized: Option<&ir::Func>,
    ) -> Result<()> {
        // No context: nowhere to record anything, so just report failure.
        let has_ctx = self.b.create_block();
        self.b.ins().brif(self.ctx, has_ctx, &[], self.ret0, &[]);
        self.b.seal_block(has_ctx);
        self.b.switch_to_block(has_ctx);

        // scipy keeps calling after a failure: return 0 at once while the flag is set. Whether a
        // failed context may run again is the caller's decision (`crate::context`'s trampolines
        // ask the resume hook): deciding here would put a call on the path of every call, and
        // with it the saving of callee-saved registers. A generic_filter callback may be called
        // directly, though, from threads the failure is not theirs: its cold path asks
        // `ndjit_rt_failed_call`, and returns what it returns (nothing lives across that call).
        let flag_addr = self.b.ins().iadd_imm_s(self.ctx, i64::from(OFFSET_FAILED));
        let failed = self.b.ins().atomic_load(types::I32, TRUSTED, flag_addr);
        let not_failed = self.b.create_block();
        let on_failed = match self.sig {
            ir::Sig::Filter => self.b.create_block(),
            _ => self.ret0,
        };
        self.b.ins().brif(failed, on_failed, &[], not_failed, &[]);
        if on_failed != self.ret0 {
            self.b.seal_block(on_failed);
            self.b.switch_to_block(on_failed);
            self.b.set_cold_block(on_failed);
            let args = [self.buffer, self.size, self.ret, self.ctx];
            let rc = self.call(Callee::FailedCall, &args)?;
            let rc = rc.ok_or_else(|| codegen_error("ndjit_rt_failed_call returns a value"))?;
            self.b.ins().return_(&[rc]);
        }
        self.b.seal_block(not_failed);
        self.b.switch_to_block(not_failed);

        let mut uses = BoundUses::default();
        uses.scan(general, &general.body);
        if let Some(s) = specialized {
            uses.scan(s, &s.body);
        }
        self.load_bound(&uses)
    }

    /// Fails with site 0 (`a = filter_size`) on invalid arguments: a negative length, no return
    /// slot (or no output for a non-empty one), or no input for a non-empty one. Once the
    /// dispatch has found the size to be a specialised body's (`known_size > 0`), only the two
    /// pointers remain to test: two predicted branches on the hot path instead of a dozen
    /// instructions.
    fn check_args(&mut self, known_size: Option<i64>) -> Result<()> {
        let (size, ret, buffer, out_len) = (self.size, self.ret, self.buffer, self.out_len);
        if let (Some(n), ir::Sig::Filter) = (known_size, self.sig) {
            if n > 0 {
                for p in [buffer, ret] {
                    self.branch_to_fail(p, 0, |t| Ok((size, t.zero(Ty::I64))), false)?;
                }
                return Ok(());
            }
        }
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, size, 0);
        let no_buf = self.b.ins().icmp_imm_s(IntCC::Equal, buffer, 0);
        let nonempty = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, size, 0);
        let no_data = self.b.ins().band(no_buf, nonempty);
        let mut bad = self.b.ins().bor(negative, no_data);
        let no_ret = self.b.ins().icmp_imm_s(IntCC::Equal, ret, 0);
        match self.sig {
            ir::Sig::Filter => bad = self.b.ins().bor(bad, no_ret),
            ir::Sig::Filter1d | ir::Sig::Transform => {
                let out_negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, out_len, 0);
                let out_nonempty = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::SignedGreaterThan, out_len, 0);
                let no_out = self.b.ins().band(no_ret, out_nonempty);
                bad = self.b.ins().bor(bad, out_negative);
                bad = self.b.ins().bor(bad, no_out);
            }
            ir::Sig::Integrand => {}
        }
        // Site 0 is reserved by the lowering for "invalid arguments"; a = filter_size.
        self.branch_to_fail(bad, 0, |t| Ok((size, t.zero(Ty::I64))), true)
    }

    /// Loads the bound scalars, integers and arrays once: they are immutable during a call. The
    /// loads are movable (nothing here is in a loop, and the context was checked non-null), so
    /// Cranelift may sink each to the body that uses it.
    fn load_bound(&mut self, uses: &BoundUses) -> Result<()> {
        let ctx = self.ctx;
        if !uses.scalars.is_empty() {
            let base = self.b.ins().load(types::I64, MOVABLE, ctx, OFFSET_SCALARS);
            for &k in &uses.scalars {
                let v = self
                    .b
                    .ins()
                    .load(types::F64, MOVABLE, base, table_offset(k, 8, 0)?);
                self.bound.scalars.insert(k, v);
            }
        }
        if !uses.ints.is_empty() {
            let base = self.b.ins().load(types::I64, MOVABLE, ctx, OFFSET_INTS);
            for &k in &uses.ints {
                let v = self
                    .b
                    .ins()
                    .load(types::I64, MOVABLE, base, table_offset(k, 8, 0)?);
                self.bound.ints.insert(k, v);
            }
        }
        if !uses.arrays.is_empty() {
            let base = self.b.ins().load(types::I64, MOVABLE, ctx, OFFSET_ARRAYS);
            for &k in &uses.arrays {
                // `ArrayRef { ptr, len }`: 16 bytes each.
                let ptr = self
                    .b
                    .ins()
                    .load(types::I64, MOVABLE, base, table_offset(k, 16, 0)?);
                let len = self
                    .b
                    .ins()
                    .load(types::I64, MOVABLE, base, table_offset(k, 16, 8)?);
                self.bound.arrays.insert(k, (ptr, len));
            }
        }
        Ok(())
    }

    /// Runs the specialised body when `filter_size` is the size it was lowered for.
    fn translate_dispatch(&mut self, general: &'a ir::Func, spec: &'a ir::Func) -> Result<()> {
        let n = spec
            .filter_size
            .and_then(|n| i64::try_from(n).ok())
            .ok_or_else(|| codegen_error("specialised function without a filter_size"))?;
        let (spec_block, general_block) = (self.b.create_block(), self.b.create_block());
        let is_n = self.b.ins().icmp_imm_s(IntCC::Equal, self.size, n);
        self.b.ins().brif(is_n, spec_block, &[], general_block, &[]);
        // Each body's first block has the dispatch as its only predecessor.
        self.b.seal_block(spec_block);
        self.b.seal_block(general_block);
        self.b.switch_to_block(spec_block);
        self.check_args(Some(n))?;
        self.translate_body(spec)?;
        self.b.switch_to_block(general_block);
        self.check_args(None)?;
        self.translate_body(general)
    }

    /// Translates one Func's body into the current block.
    pub(super) fn translate_body(&mut self, func: &'a ir::Func) -> Result<()> {
        self.begin_body(func);
        if self.translate_block(&func.body)? {
            // Falling off the end (the lowering never does) fails without a record, as the
            // interpreter does.
            self.b.ins().jump(self.ret0, &[]);
        }
        Ok(())
    }

    /// The output array's base address and length ([`ArrKind::Output`]).
    pub(super) fn output(&self) -> (Value, Value) {
        (self.ret, self.out_len)
    }

    /// The shared block that returns failure.
    pub(super) fn ret0(&self) -> Block {
        self.ret0
    }

    /// Loads the bound values `func` reads (a row kernel's prologue).
    pub(super) fn load_bound_for(&mut self, func: &ir::Func) -> Result<()> {
        let mut uses = BoundUses::default();
        uses.scan(func, &func.body);
        self.load_bound(&uses)
    }

    /// Declares the body's variables, all starting at zero as in the interpreter, and its
    /// scratch arrays, all starting empty.
    fn begin_body(&mut self, func: &'a ir::Func) {
        self.func = func;
        self.loops.clear();
        let interval = self
            .b
            .ins()
            .iconst(types::I32, i64::from(crate::interrupt::POLL_INTERVAL));
        self.b.def_var(self.countdown, interval);
        self.consts = vec![None; func.vars.len()];
        self.vars = Vec::with_capacity(func.vars.len());
        for decl in &func.vars {
            let var = self.b.declare_var(clif_ty(decl.ty));
            let zero = self.zero(decl.ty);
            self.b.def_var(var, zero);
            self.vars.push(var);
        }
        self.scratch = Vec::with_capacity(func.arrays.len());
        for decl in &func.arrays {
            let vars = match decl.kind {
                ArrKind::Scratch { .. } => {
                    let (ptr, len) = (
                        self.b.declare_var(types::I64),
                        self.b.declare_var(types::I64),
                    );
                    let zero = self.b.ins().iconst(types::I64, 0);
                    self.b.def_var(ptr, zero);
                    self.b.def_var(len, zero);
                    Some(ScratchVars { ptr, len })
                }
                _ => None,
            };
            self.scratch.push(vars);
        }
    }

    /// Emits the shared cold blocks and finishes the function.
    fn finish(mut self) -> Result<()> {
        if let Some(block) = self.fail_block {
            self.b.switch_to_block(block);
            // Every failing check has branched here by now.
            self.b.seal_block(block);
            self.b.set_cold_block(block);
            let args = match *self.b.block_params(block) {
                [site, a, b] => [self.ctx, site, a, b],
                _ => return Err(codegen_error("fail block must have three parameters")),
            };
            self.call(Callee::Fail, &args)?;
            self.b.ins().jump(self.ret0, &[]);
        }
        self.b.switch_to_block(self.ret0);
        // All early exits and failure paths are known now.
        self.b.seal_block(self.ret0);
        self.b.set_cold_block(self.ret0);
        // The callback returns 0 (an integrand NaN); a row kernel the index of the pixel that failed.
        let zero = match self.kernel_failed_pixel() {
            Some(j) => j,
            None if self.sig == ir::Sig::Integrand => self.b.ins().f64const(f64::NAN),
            None => self.b.ins().iconst(types::I32, 0),
        };
        self.b.ins().return_(&[zero]);
        self.b.finalize(self.module.target_config());
        Ok(())
    }

    // ---------------------------------------------------------------------------------------------
    // Statements

    /// Translates a block of statements; returns whether control can reach its end.
    pub(super) fn translate_block(&mut self, stmts: &[Stmt]) -> Result<bool> {
        for s in stmts {
            if !self.translate_stmt(s)? {
                // What follows a terminator is unreachable: it is not emitted.
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn translate_stmt(&mut self, s: &Stmt) -> Result<bool> {
        match s {
            Stmt::Assign(v, e) => self.translate_assign(*v, e),
            Stmt::Store(a, i, v) => self.translate_store(*a, i, v),
            Stmt::If(c, then, els) => self.translate_if(c, then, els),
            Stmt::Loop { body, latch } => self.translate_loop(body, latch),
            Stmt::Break => self.translate_break(),
            Stmt::Continue => self.translate_continue(),
            Stmt::Check { cond, err, a, b } => self.translate_check(cond, err.0, a, b),
            Stmt::Return(e) => self.translate_return(e),
            Stmt::Succeed => {
                let one = self.b.ins().iconst(types::I32, 1);
                self.b.ins().return_(&[one]);
                Ok(false)
            }
            Stmt::Reduce {
                dst,
                op,
                len,
                index,
                elem,
                on_empty,
            } => self.translate_reduce(*dst, *op, len, *index, elem, *on_empty),
            Stmt::Fill {
                dst,
                len,
                index,
                elem,
                keep,
            } => self.translate_fill(*dst, len, *index, elem, keep.as_ref()),
            Stmt::ArrayOp(ArrayOp::Sort { .. }, a) => self.translate_sort(*a),
            Stmt::Sorted { dst, stat, arr, q } => self.translate_sorted(*dst, *stat, *arr, q),
            Stmt::MedianNetwork {
                dst,
                elems,
                fallback,
            } => self.translate_median_network(*dst, elems, fallback),
        }
    }

    fn translate_assign(&mut self, v: Var, e: &Expr) -> Result<bool> {
        let value = self.expr(e)?;
        self.def_ir_var(v, value)?;
        Ok(true)
    }

    /// `arr[i] = v` on a scratch array: the 8-byte representation of `v`, as `Val::to_bits`.
    fn translate_store(&mut self, a: Arr, i: &Expr, v: &Expr) -> Result<bool> {
        let base = match self.arr_kind(a)? {
            ArrKind::Output => self.ret,
            _ => {
                let vars = self.scratch_vars(a)?;
                self.b.use_var(vars.ptr)
            }
        };
        let i = self.expr_as(i, Ty::I64)?;
        let v = self.expr(v)?;
        let (addr, offset) = self.elem_addr(base, i);
        self.store_bits(v, addr, offset);
        Ok(true)
    }

    fn translate_if(&mut self, cond: &Expr, then: &[Stmt], els: &[Stmt]) -> Result<bool> {
        let c = match self.expr_as(cond, Ty::Bool)? {
            // A constant condition: the other branch is dead.
            Opnd::Const(c) => return self.translate_block(if c.b() { then } else { els }),
            c => self.value(c),
        };
        let then_block = self.b.create_block();
        let merge = self.b.create_block();
        let else_block = if els.is_empty() {
            merge
        } else {
            self.b.create_block()
        };
        self.b.ins().brif(c, then_block, &[], else_block, &[]);
        // Both arms have the branch as their only predecessor.
        self.b.seal_block(then_block);
        if else_block != merge {
            self.b.seal_block(else_block);
        }
        self.b.switch_to_block(then_block);
        let mut merge_reached = else_block == merge;
        if self.translate_block(then)? {
            self.b.ins().jump(merge, &[]);
            merge_reached = true;
        }
        if else_block != merge {
            self.b.switch_to_block(else_block);
            if self.translate_block(els)? {
                self.b.ins().jump(merge, &[]);
                merge_reached = true;
            }
        }
        // Both arms are translated: all of the merge block's predecessors are known.
        self.b.seal_block(merge);
        if merge_reached {
            self.b.switch_to_block(merge);
        }
        Ok(merge_reached)
    }

    /// `loop { body; latch }`: `Continue` jumps to the latch, `Break` to the exit.
    fn translate_loop(&mut self, body: &[Stmt], latch: &[Stmt]) -> Result<bool> {
        let body_block = self.b.create_block();
        let latch_block = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(body_block, &[]);
        // The body block is not sealed yet: the latch's back edge is still to come.
        self.b.switch_to_block(body_block);
        self.loop_depth += 1;
        self.loops.push(LoopTargets {
            exit,
            exit_used: false,
            latch: Some(latch_block),
            latch_used: false,
        });
        let body_falls = self.translate_block(body)?;
        let targets = self.pop_loop()?;
        let mut exit_used = targets.exit_used;
        if body_falls {
            self.b.ins().jump(latch_block, &[]);
        }
        // The latch's predecessors (the body's end and every Continue) are all known.
        self.b.seal_block(latch_block);
        if body_falls || targets.latch_used {
            self.b.switch_to_block(latch_block);
            self.loops.push(LoopTargets {
                exit,
                exit_used: false,
                latch: None,
                latch_used: false,
            });
            let latch_falls = self.translate_block(latch)?;
            exit_used |= self.pop_loop()?.exit_used;
            if latch_falls {
                self.poll_on_back_edge()?;
                self.b.ins().jump(body_block, &[]);
            }
        }
        self.loop_depth -= 1;
        // The back edge is emitted: the body block and the exit are complete.
        self.b.seal_block(body_block);
        self.b.seal_block(exit);
        if exit_used {
            self.b.switch_to_block(exit);
        }
        Ok(exit_used)
    }

    /// Counts a loop's back edge and every `POLL_INTERVAL` of them calls `ndjit_rt_poll`, which
    /// records the interrupt in the context when the call should stop: the call then fails. An IR loop's trip
    /// count is not known here (`while`, `range(n)`), so this is what makes `while True: pass`
    /// interruptible; the common path is a decrement and a branch.
    fn poll_on_back_edge(&mut self) -> Result<()> {
        let left = self.b.use_var(self.countdown);
        let left = self.b.ins().iadd_imm_s(left, -1);
        self.b.def_var(self.countdown, left);
        let (poll, cont) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(left, cont, &[], poll, &[]);
        self.b.seal_block(poll);
        self.b.switch_to_block(poll);
        self.b.set_cold_block(poll);
        let interval = self
            .b
            .ins()
            .iconst(types::I32, i64::from(crate::interrupt::POLL_INTERVAL));
        self.b.def_var(self.countdown, interval);
        // Through the trampoline that clobbers no register (see `super::poll`); an interrupt is
        // then recorded in the context.
        self.call(Callee::PollTrampoline, &[self.ctx])?;
        let flag_addr = self.b.ins().iadd_imm_s(self.ctx, i64::from(OFFSET_FAILED));
        let stop = self.b.ins().atomic_load(types::I32, TRUSTED, flag_addr);
        self.b.ins().brif(stop, self.ret0, &[], cont, &[]);
        // Both predecessors, the counting branch and the poll, are emitted.
        self.b.seal_block(cont);
        self.b.switch_to_block(cont);
        Ok(())
    }

    fn pop_loop(&mut self) -> Result<LoopTargets> {
        self.loops
            .pop()
            .ok_or_else(|| codegen_error("loop stack underflow"))
    }

    fn translate_break(&mut self) -> Result<bool> {
        match self.loops.last_mut() {
            Some(l) => {
                l.exit_used = true;
                let exit = l.exit;
                self.b.ins().jump(exit, &[]);
            }
            // Outside any loop the interpreter ends the call unsuccessfully, without a record.
            None => {
                self.b.ins().jump(self.ret0, &[]);
            }
        }
        Ok(false)
    }

    fn translate_continue(&mut self) -> Result<bool> {
        // Inside a latch, `Continue` propagates to the enclosing loop (see `LoopTargets::latch`).
        let target = self.loops.iter_mut().rev().find_map(|l| {
            let latch = l.latch?;
            l.latch_used = true;
            Some(latch)
        });
        self.b.ins().jump(target.unwrap_or(self.ret0), &[]);
        Ok(false)
    }

    fn translate_check(&mut self, cond: &Expr, site: u32, a: &Expr, b: &Expr) -> Result<bool> {
        match self.expr_as(cond, Ty::Bool)? {
            Opnd::Const(c) if c.b() => Ok(true),
            Opnd::Const(_) => {
                let (a, b) = (self.value_as(a, Ty::I64)?, self.value_as(b, Ty::I64)?);
                self.jump_to_fail(site, a, b);
                Ok(false)
            }
            c => {
                let ok = self.value(c);
                self.branch_to_fail(
                    ok,
                    site,
                    |t| Ok((t.value_as(a, Ty::I64)?, t.value_as(b, Ty::I64)?)),
                    false,
                )?;
                Ok(true)
            }
        }
    }

    fn translate_return(&mut self, e: &Expr) -> Result<bool> {
        let v = self.value_as(e, Ty::F64)?;
        if self.kernel.is_some() {
            self.kernel_return(v)?;
            return Ok(false);
        }
        if self.sig == ir::Sig::Integrand {
            self.b.ins().return_(&[v]);
            return Ok(false);
        }
        self.b.ins().store(TRUSTED, v, self.ret, 0);
        let one = self.b.ins().iconst(types::I32, 1);
        self.b.ins().return_(&[one]);
        Ok(false)
    }

    fn translate_sort(&mut self, a: Arr) -> Result<bool> {
        let vars = self.scratch_vars(a)?;
        let (ptr, len) = (self.b.use_var(vars.ptr), self.b.use_var(vars.len));
        self.call(Callee::Sort, &[ptr, len])?;
        Ok(true)
    }

    fn translate_sorted(&mut self, dst: Var, stat: SortedStat, a: Arr, q: &Expr) -> Result<bool> {
        let vars = self.scratch_vars(a)?;
        let (ptr, len) = (self.b.use_var(vars.ptr), self.b.use_var(vars.len));
        let r = match stat {
            SortedStat::Median => self.call(Callee::Median, &[ptr, len])?,
            SortedStat::Quantile => {
                let q = self.value_as(q, Ty::F64)?;
                self.call(Callee::Quantile, &[ptr, len, q])?
            }
        };
        let r = r.ok_or_else(|| codegen_error("sorted statistic without a result"))?;
        self.def_ir_var(dst, Opnd::Dyn(r, Ty::F64))?;
        Ok(true)
    }

    /// A [`Stmt::MedianNetwork`]: the NaN test, the fallback, and the comparators as
    /// `select(b < a, ..)` pairs, which x86-64 lowers to `minsd`/`maxsd`; those the median does
    /// not depend on are removed by Cranelift's dead-code elimination.
    fn translate_median_network(
        &mut self,
        dst: Var,
        elems: &[Expr],
        fallback: &[Stmt],
    ) -> Result<bool> {
        let mut v = Vec::with_capacity(elems.len());
        for e in elems {
            v.push(self.value_as(e, Ty::F64)?);
        }
        let b = &mut self.b;
        let sum =
            ir::network::balanced_sum(0, v.len(), &mut |k| v[k], &mut |x, y| b.ins().fadd(x, y));
        let is_nan = self.b.ins().fcmp(FloatCC::Unordered, sum, sum);
        let (slow, fast, merge) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(is_nan, slow, &[], fast, &[]);
        self.b.seal_block(slow);
        self.b.seal_block(fast);
        self.b.switch_to_block(slow);
        if self.translate_block(fallback)? {
            self.b.ins().jump(merge, &[]);
        }
        self.b.switch_to_block(fast);
        for (i, j) in ir::network::batcher_pairs(v.len()) {
            let lt = self.b.ins().fcmp(FloatCC::LessThan, v[j], v[i]);
            let lo = self.b.ins().select(lt, v[j], v[i]);
            v[j] = self.b.ins().select(lt, v[i], v[j]);
            v[i] = lo;
        }
        let n = v.len();
        let zero = self.b.ins().f64const(0.0);
        let r = if n % 2 == 1 {
            self.b.ins().fadd(zero, v[n / 2])
        } else {
            let a = self.b.ins().fadd(zero, v[n / 2 - 1]);
            let total = self.b.ins().fadd(a, v[n / 2]);
            let two = self.b.ins().f64const(2.0);
            self.b.ins().fdiv(total, two)
        };
        self.def_ir_var(dst, Opnd::Dyn(r, Ty::F64))?;
        self.b.ins().jump(merge, &[]);
        self.b.seal_block(merge);
        // The network always reaches the merge.
        self.b.switch_to_block(merge);
        Ok(true)
    }

    // ---------------------------------------------------------------------------------------------
    // Failure paths

    /// The shared block that records a failure `(site, a, b)` and returns 0.
    fn fail_block(&mut self) -> Block {
        if let Some(b) = self.fail_block {
            return b;
        }
        let block = self.b.create_block();
        for ty in [types::I32, types::I64, types::I64] {
            self.b.append_block_param(block, ty);
        }
        self.fail_block = Some(block);
        block
    }

    /// Ends the current block with a jump that fails the call with `(site, a, b)`.
    pub(super) fn jump_to_fail(&mut self, site: u32, a: Value, b: Value) {
        let fail = self.fail_block();
        // The site is a u32 passed in an i32 register; the bits are what matter.
        let site = self.b.ins().iconst(types::I32, i64::from(site as i32));
        self.b.ins().jump(
            fail,
            &[
                BlockArg::Value(site),
                BlockArg::Value(a),
                BlockArg::Value(b),
            ],
        );
    }

    /// Continues in a fresh block when `cond` is true (false when `fail_if_true`), else fails the
    /// call with `site` and the details computed by `details`, in a cold block so that they are
    /// only evaluated on failure.
    pub(super) fn branch_to_fail(
        &mut self,
        cond: Value,
        site: u32,
        details: impl FnOnce(&mut Self) -> Result<(Value, Value)>,
        fail_if_true: bool,
    ) -> Result<()> {
        let (cold, cont) = (self.b.create_block(), self.b.create_block());
        if fail_if_true {
            self.b.ins().brif(cond, cold, &[], cont, &[]);
        } else {
            self.b.ins().brif(cond, cont, &[], cold, &[]);
        }
        // Both targets have this branch as their only predecessor.
        self.b.seal_block(cold);
        self.b.seal_block(cont);
        self.b.switch_to_block(cold);
        self.b.set_cold_block(cold);
        let (a, b) = details(self)?;
        self.jump_to_fail(site, a, b);
        self.b.switch_to_block(cont);
        Ok(())
    }

    // ---------------------------------------------------------------------------------------------
    // Helpers shared with expr.rs and reduce.rs

    /// Gives the movable loads from here on an alias region of their own (see `region`).
    pub(super) fn new_load_region(&mut self) {
        // Cranelift numbers distinct memory flags in a u16 (and panics past it): after this many
        // statements, later ones just share the default region.
        if self.regions >= 4096 {
            self.region = None;
            return;
        }
        self.regions += 1;
        let data = AliasRegionData {
            user_id: self.regions,
            description: "elements".into(),
        };
        self.region = Some(self.b.func.dfg.alias_regions.insert(data));
    }

    /// The FuncRef of an imported callee, declaring it on first use.
    fn callee(&mut self, c: Callee) -> Result<FuncRef> {
        if let Some(&(_, f)) = self.imports.iter().find(|(k, _)| *k == c) {
            return Ok(f);
        }
        let sig = c.signature(self.module.isa().default_call_conv(), types::I64);
        // The trampoline is the module's own (defined after this function); the rest are the
        // runtime's.
        let linkage = match c {
            Callee::PollTrampoline => Linkage::Local,
            _ => Linkage::Import,
        };
        let id = self
            .module
            .declare_function(c.symbol(), linkage, &sig)
            .map_err(|e| codegen_error(format!("cannot import {}: {e}", c.symbol())))?;
        let f = self.module.declare_func_in_func(id, self.b.func);
        // Called through its absolute address, like the runtime's functions: the JIT allocates
        // each function's code on its own, so two functions of one module can be more than the
        // ±2 GiB a PC-relative call reaches apart (cranelift-jit then panics in finalize; seen on
        // the device machine, where large buffers spread the heap).
        self.b.func.dfg.ext_funcs[f].colocated = false;
        self.imports.push((c, f));
        Ok(f)
    }

    /// Calls an imported callee; returns its result, if it has one.
    pub(super) fn call(&mut self, c: Callee, args: &[Value]) -> Result<Option<Value>> {
        let f = self.callee(c)?;
        let inst = self.b.ins().call(f, args);
        Ok(self.b.inst_results(inst).first().copied())
    }

    /// Materialises an operand as an SSA value.
    pub(super) fn value(&mut self, o: Opnd) -> Value {
        match o {
            Opnd::Dyn(v, _) => v,
            Opnd::Const(Val::F(x)) => self.b.ins().f64const(Ieee64::with_bits(x.to_bits())),
            Opnd::Const(Val::I(x)) => self.b.ins().iconst(types::I64, x),
            Opnd::Const(Val::B(x)) => self.b.ins().iconst(types::I8, i64::from(x)),
        }
    }

    pub(super) fn zero(&mut self, ty: Ty) -> Value {
        let z = match ty {
            Ty::F64 => Val::F(0.0),
            Ty::I64 => Val::I(0),
            Ty::Bool => Val::B(false),
        };
        self.value(Opnd::Const(z))
    }

    /// Assigns an IR variable, which must have the operand's type.
    pub(super) fn def_ir_var(&mut self, v: Var, value: Opnd) -> Result<()> {
        let ty = self.var_ty(v)?;
        if value.ty() != ty {
            return Err(codegen_error(format!(
                "ill-typed IR: {} value assigned to {} variable {}",
                value.ty().name(),
                ty.name(),
                self.func.vars[v.0 as usize].name
            )));
        }
        let value = self.value(value);
        self.b.def_var(self.vars[v.0 as usize], value);
        Ok(())
    }

    pub(super) fn var_ty(&self, v: Var) -> Result<Ty> {
        self.func
            .vars
            .get(v.0 as usize)
            .map(|d| d.ty)
            .ok_or_else(|| codegen_error(format!("variable {} is not declared", v.0)))
    }

    pub(super) fn arr_kind(&self, a: Arr) -> Result<&'a ArrKind> {
        let func: &'a ir::Func = self.func;
        func.arrays
            .get(a.0 as usize)
            .map(|d| &d.kind)
            .ok_or_else(|| codegen_error(format!("array {} is not declared", a.0)))
    }

    pub(super) fn scratch_vars(&self, a: Arr) -> Result<ScratchVars> {
        self.scratch
            .get(a.0 as usize)
            .copied()
            .flatten()
            .ok_or_else(|| codegen_error(format!("array {} is not a scratch array", a.0)))
    }

    pub(super) fn bound_scalar(&self, k: u32) -> Result<Value> {
        self.bound
            .scalars
            .get(&k)
            .copied()
            .ok_or_else(|| codegen_error("unloaded bound scalar"))
    }

    pub(super) fn bound_int(&self, k: u32) -> Result<Value> {
        self.bound
            .ints
            .get(&k)
            .copied()
            .ok_or_else(|| codegen_error("unloaded bound integer"))
    }

    pub(super) fn bound_array(&self, k: u32) -> Result<(Value, Value)> {
        self.bound
            .arrays
            .get(&k)
            .copied()
            .ok_or_else(|| codegen_error("unloaded bound array"))
    }

    /// The address of element `index` (an i64 operand) of 8-byte elements at `base`, as
    /// `(address, offset)`: a constant index becomes a fixed offset.
    pub(super) fn elem_addr(&mut self, base: Value, index: Opnd) -> (Value, i32) {
        if let Opnd::Const(Val::I(k)) = index {
            if let Some(offset) = k.checked_mul(8).and_then(|o| i32::try_from(o).ok()) {
                return (base, offset);
            }
        }
        let i = self.value(index);
        let scaled = self.b.ins().ishl_imm_s(i, 3);
        (self.b.ins().iadd(base, scaled), 0)
    }

    /// Stores the 8-byte scratch representation of `v` (`Val::to_bits`): f64 bits, the i64, or a
    /// bool as 0/1.
    pub(super) fn store_bits(&mut self, v: Opnd, addr: Value, offset: i32) {
        let ty = v.ty();
        let mut v = self.value(v);
        if ty == Ty::Bool {
            v = self.b.ins().uextend(types::I64, v);
        }
        self.b.ins().store(TRUSTED, v, addr, offset);
    }
}

/// The byte offset of entry `k` of a table of `stride`-byte entries, plus `field`.
fn table_offset(k: u32, stride: i64, field: i64) -> Result<i32> {
    i32::try_from(i64::from(k) * stride + field)
        .map_err(|_| codegen_error("bound value index too large"))
}

/// Which bound values the bodies read.
#[derive(Default)]
struct BoundUses {
    scalars: std::collections::BTreeSet<u32>,
    ints: std::collections::BTreeSet<u32>,
    arrays: std::collections::BTreeSet<u32>,
}

impl BoundUses {
    fn scan(&mut self, func: &ir::Func, stmts: &[Stmt]) {
        for s in stmts {
            ir::stmt_exprs(s, |e| self.scan_expr(func, e));
            ir::stmt_blocks(s, |b| self.scan(func, b));
        }
    }

    fn scan_expr(&mut self, func: &ir::Func, e: &Expr) {
        match e {
            Expr::Param(k) => {
                self.scalars.insert(*k);
            }
            Expr::IntParam(k) => {
                self.ints.insert(*k);
            }
            // Bound arrays are named through the Func's array declarations.
            Expr::Load(a, _) | Expr::Len(a) => {
                if let Some(ArrKind::Bound(k)) = func.arrays.get(a.0 as usize).map(|d| &d.kind) {
                    self.arrays.insert(*k);
                }
            }
            _ => {}
        }
        e.for_each_child(|c| self.scan_expr(func, c));
    }
}
