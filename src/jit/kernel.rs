//! Row kernels: the filter fused with the n-d driver's inner loop.
//!
//! Through the C callback, every pixel costs a gather of its neighbourhood into a buffer and an
//! indirect call. A row kernel is compiled from the *same* specialised IR as the callback, with two
//! differences in how the IR's buffer and return are lowered:
//! - `Load(BUFFER, k)` with a constant `k` reads the input directly: tap `k` of output pixel `j`
//!   is the f64 at `rows[slot[k]] + 8 * (j + col[k])`, one load with a fixed displacement from
//!   the slot's row pointer. (A load at a run-time index goes through a table of the taps'
//!   addresses, filled once per call.)
//! - `Return(v)` stores `v` at `out[j]` and continues with the next pixel.
//!
//! ```c
//! intptr_t kernel(const double *const *rows, intptr_t n, double *out, void *user_data);
//! ```
//! runs pixels `j = 0..n` and returns `n`, or on a failing check records the failure in the
//! context (as the callback does) and returns the index of the failing pixel. Everything else —
//! expressions, reductions, checks, scratch arrays, calls into the runtime — is the callback's
//! translation, so the kernel's results are the callback's, bit for bit.
//!
//! Where the specialised body is straight-line (see [`super::lanes`]), the kernel first runs
//! *lane groups*: `GROUP_PIXELS` adjacent pixels per iteration in vector lanes, each lane doing
//! its pixel's operations in the same order. The pixel loop above then computes what the groups
//! leave: a group in which some lane failed a check (so that the first failing pixel and its
//! error are found exactly as without groups), and the end of the row.

use super::translate::{self, codegen_error, Opnd, Result, Translator, MOVABLE, READONLY, TRUSTED};
use super::{module_error, Jit};
use crate::error::Error;
use crate::ir::eval::Val;
use crate::ir::{self, Ty};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Block, InstBuilder, StackSlot, StackSlotData, StackSlotKind, UserFuncName,
    Value,
};
use cranelift_codegen::CodegenError;
use cranelift_frontend::Variable;
use cranelift_jit::JITModule;
use cranelift_module::{Module, ModuleError};
use std::ffi::c_void;
use std::mem::ManuallyDrop;

/// `intptr_t kernel(const double *const *rows, intptr_t n, double *out, void *user_data)`.
pub type RowKernelFn =
    unsafe extern "C" fn(*const *const f64, isize, *mut f64, *mut c_void) -> isize;

/// Where each buffer element of the filter comes from: tap `k` reads row `slot[k]` at column
/// offset `col[k]` from the pixel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Taps {
    pub slot: Vec<u32>,
    pub col: Vec<i64>,
    /// The number of row pointers the kernel reads.
    pub slots: usize,
}

/// Pixels per lane group of a kernel with [`RowKernel::lanes`].
pub const GROUP_PIXELS: usize = super::lanes::GROUP;

/// A compiled row kernel; owns its code memory.
pub struct RowKernel {
    /// Owns the code; freed in `Drop` (a `JITModule` leaks its memory when dropped).
    module: ManuallyDrop<JITModule>,
    entry: RowKernelFn,
    disasm: Option<String>,
    /// Whether it computes lane groups (else one pixel at a time).
    lanes: bool,
}

// SAFETY: as for `JitCode`: the finalized code is immutable and keeps no state; the module is only
// touched again by `Drop`, which has exclusive access.
unsafe impl Send for RowKernel {}
unsafe impl Sync for RowKernel {}

impl RowKernel {
    /// The kernel. Calling it is `unsafe`: `rows` must hold `slots` pointers such that every tap
    /// address of every pixel `0..n` is a readable f64, `out` must have room for `n` doubles, and
    /// `user_data` must be a live context of the filter the IR came from.
    pub fn entry(&self) -> RowKernelFn {
        self.entry
    }

    /// Whether the kernel computes groups of [`GROUP_PIXELS`] pixels in vector lanes (see
    /// [`super::lanes`]); the pixels of a row that do not fill a group are computed one by one.
    pub fn lanes(&self) -> bool {
        self.lanes
    }

    /// Cranelift's disassembly, when compiled with `disasm`.
    pub fn disasm(&self) -> Option<&str> {
        self.disasm.as_deref()
    }
}

impl Drop for RowKernel {
    fn drop(&mut self) {
        // SAFETY: the entry pointer is not called after the kernel is dropped (owners hold the
        // kernel for as long as they call it).
        unsafe { ManuallyDrop::take(&mut self.module).free_memory() };
    }
}

impl std::fmt::Debug for RowKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowKernel")
            .field("entry", &(self.entry as *const u8))
            .finish_non_exhaustive()
    }
}

/// Compiles a row kernel for a Func specialised to `taps.slot.len()` elements, with lane groups
/// where the body allows them (see [`super::lanes`]).
pub fn compile_row_kernel(
    func: &ir::Func,
    taps: &Taps,
    disasm: bool,
) -> std::result::Result<RowKernel, Error> {
    if super::lanes::supported(func) {
        // A body the lanes cannot translate after all, or vector code the host's Cranelift
        // cannot lower, leaves the scalar kernel, which is always correct.
        if let Ok(k) = compile_kernel(func, taps, disasm, true) {
            return Ok(k);
        }
    }
    compile_scalar_row_kernel(func, taps, disasm)
}

/// Compiles the row kernel without lane groups, one pixel per iteration: the reference that the
/// lane groups are tested and measured against.
pub fn compile_scalar_row_kernel(
    func: &ir::Func,
    taps: &Taps,
    disasm: bool,
) -> std::result::Result<RowKernel, Error> {
    compile_kernel(func, taps, disasm, false)
}

/// Compiles a row kernel, with lane groups when `lanes` is set.
fn compile_kernel(
    func: &ir::Func,
    taps: &Taps,
    disasm: bool,
    lanes: bool,
) -> std::result::Result<RowKernel, Error> {
    if func.filter_size != Some(taps.slot.len()) || taps.col.len() != taps.slot.len() {
        return Err(codegen_error(
            "a row kernel needs a Func specialised to its number of taps",
        ));
    }
    if taps.slot.iter().any(|&s| s as usize >= taps.slots) {
        return Err(codegen_error("a tap names a row that does not exist"));
    }
    if taps.col.iter().any(|&c| {
        c.checked_mul(8)
            .and_then(|b| i32::try_from(b).ok())
            .is_none()
    }) {
        return Err(codegen_error("a tap's column offset is too large"));
    }
    let mut jit = Jit::new()?;
    let defined = (|| {
        let mut sig = jit.module.make_signature();
        sig.params.extend([types::I64; 4].map(AbiParam::new));
        sig.returns.push(AbiParam::new(types::I64));
        let id = jit
            .module
            .declare_anonymous_function(&sig)
            .map_err(module_error)?;
        jit.module.clear_context(&mut jit.ctx);
        jit.ctx.func.signature = sig;
        jit.ctx.func.name = UserFuncName::user(0, id.as_u32());
        translate::translate_kernel(
            &mut jit.module,
            &mut jit.ctx.func,
            &mut jit.builder_ctx,
            func,
            taps,
            lanes,
        )?;
        jit.ctx.set_disasm(disasm);
        if let Err(e) = jit.module.define_function(id, &mut jit.ctx) {
            return Err(match e {
                ModuleError::Compilation(CodegenError::Verifier(errors)) => codegen_error(format!(
                    "Cranelift verifier rejected the row kernel:\n{}",
                    cranelift_codegen::print_errors::pretty_verifier_error(
                        &jit.ctx.func,
                        None,
                        errors
                    )
                )),
                e => module_error(e),
            });
        }
        let text = if disasm {
            jit.ctx.compiled_code().and_then(|c| c.vcode.clone())
        } else {
            None
        };
        jit.module.clear_context(&mut jit.ctx);
        super::poll::define_trampoline(&mut jit.module, &mut jit.ctx, &mut jit.builder_ctx)?;
        Ok((id, text))
    })();
    let (id, text) = match defined {
        Ok(d) => d,
        Err(e) => {
            jit.discard();
            return Err(e);
        }
    };
    let mut module = jit.finish_module();
    if let Err(e) = module.finalize_definitions() {
        // SAFETY: no pointer into the module's memory has been handed out.
        unsafe { module.free_memory() };
        return Err(module_error(e));
    }
    let ptr = module.get_finalized_function(id);
    // SAFETY: `ptr` is the finalized code of a function declared `(i64, i64, i64, i64) -> i64` in
    // the host's default calling convention, which is `RowKernelFn`'s ABI on the 64-bit hosts
    // `host_isa` accepts.
    let entry = unsafe { std::mem::transmute::<*const u8, RowKernelFn>(ptr) };
    Ok(RowKernel {
        module: ManuallyDrop::new(module),
        entry,
        disasm: text,
        lanes,
    })
}

/// How a body reads the buffer: the taps it loads at constant indices, and whether it loads one
/// at a run-time index (or hands the buffer to a statement whole), which needs every tap.
#[derive(Debug, Default, PartialEq)]
struct BufferReads {
    constant: Vec<usize>,
    dynamic: bool,
}

impl BufferReads {
    fn of(func: &ir::Func) -> BufferReads {
        let mut reads = BufferReads::default();
        reads.block(&func.body);
        reads.constant.sort_unstable();
        reads.constant.dedup();
        reads
    }

    fn block(&mut self, stmts: &[ir::Stmt]) {
        use ir::Stmt;
        for s in stmts {
            match s {
                Stmt::Store(a, ..) | Stmt::ArrayOp(_, a) | Stmt::Sorted { arr: a, .. }
                    if *a == ir::BUFFER =>
                {
                    self.dynamic = true
                }
                Stmt::Fill { dst, .. } if *dst == ir::BUFFER => self.dynamic = true,
                _ => {}
            }
            ir::stmt_exprs(s, |e| {
                e.visit(&mut |x| match x {
                    ir::Expr::Load(a, i) if *a == ir::BUFFER => match **i {
                        ir::Expr::I64(k) if k >= 0 => self.constant.push(k as usize),
                        _ => self.dynamic = true,
                    },
                    _ => {}
                })
            });
            ir::stmt_blocks(s, |b| self.block(b));
        }
    }
}

/// The kernel-specific state of a [`Translator`] building a row kernel.
pub(super) struct KernelState {
    /// Per slot, the row pointer loaded from `rows` in the prologue (where the body reads it).
    bases: Vec<Option<Value>>,
    /// Per tap, its slot and its byte displacement `8 * col`.
    taps: Vec<(usize, i32)>,
    /// The byte offset `8 * j` of the current pixel.
    pub(super) j8: Variable,
    /// `out`.
    out: Value,
    /// Where a `Return` continues: the next pixel.
    latch: Block,
    /// The taps' addresses for pixel 0, for loads at a run-time index.
    table: Option<StackSlot>,
    /// Where `kernel_barrier` stores.
    sink: Option<StackSlot>,
}

impl<'a> Translator<'a> {
    /// The prologue, the pixel loops around the body of `func`, and the epilogue; `rows`, `n`,
    /// `out`, `ctx` are the entry's parameters (held as `buffer`, `size`, `ret`, `ctx`).
    ///
    /// With `lanes`, a group loop computes `GROUP_PIXELS` pixels per iteration while a whole group
    /// fits; the scalar pixel loop then computes the pixels up to `limit`: the group that bailed
    /// (after which the group loop resumes), or the rest of the row.
    pub(super) fn translate_kernel_loop(
        &mut self,
        func: &'a ir::Func,
        taps: &Taps,
        [rows, n, out, ctx]: [Value; 4],
        lanes: bool,
    ) -> Result<()> {
        let j8 = self.b.declare_var(types::I64);
        let limit = self.b.declare_var(types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(j8, zero);
        // The fail path returns `j8 >> 3`, so the state exists before the first branch to it.
        let latch = self.b.create_block();
        self.kernel = Some(KernelState {
            bases: Vec::new(),
            taps: Vec::new(),
            j8,
            out,
            latch,
            table: None,
            sink: None,
        });

        // No context: nowhere to record a failure.
        let has_ctx = self.b.create_block();
        let ret0 = self.ret0();
        self.b.ins().brif(ctx, has_ctx, &[], ret0, &[]);
        self.b.seal_block(has_ctx);
        self.b.switch_to_block(has_ctx);
        self.load_bound_for(func)?;
        self.kernel_tables(taps, &BufferReads::of(func), rows)?;

        let n8 = self.b.ins().ishl_imm_s(n, 3);
        let (scalar, body, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let group_loop = if lanes {
            Some(self.translate_group_loop(func, n8, limit, scalar)?)
        } else {
            self.b.def_var(limit, n8);
            self.b.ins().jump(scalar, &[]);
            None
        };
        // Every jump to the scalar loop's entry exists now.
        self.b.seal_block(scalar);
        self.b.switch_to_block(scalar);
        let after = group_loop.map_or(done, |(_, after)| after);
        let (j, end) = (self.b.use_var(j8), self.b.use_var(limit));
        let enter = self.b.ins().icmp(IntCC::SignedLessThan, j, end);
        self.b.ins().brif(enter, body, &[], after, &[]);

        // for j8 in (j8..limit).step_by(8) { body }
        self.b.switch_to_block(body);
        // Inside the pixel loop, movable loads of bound values could be hoisted above the
        // checks that guard them: the loop depth keeps them in place.
        self.loop_depth += 1;
        self.translate_body(func)?;
        self.loop_depth -= 1;
        // Every `Return` has jumped to the latch by now.
        self.b.seal_block(latch);
        self.b.switch_to_block(latch);
        let j = self.b.use_var(j8);
        let next = self.b.ins().iadd_imm_s(j, 8);
        self.b.def_var(j8, next);
        let end = self.b.use_var(limit);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, next, end);
        self.b.ins().brif(more, body, &[], after, &[]);
        // The back edge exists: the body has all its predecessors.
        self.b.seal_block(body);

        if let Some((head, after)) = group_loop {
            // After the scalar pixels: more groups, unless the row is done.
            self.b.seal_block(after);
            self.b.switch_to_block(after);
            let j = self.b.use_var(j8);
            let more = self.b.ins().icmp(IntCC::SignedLessThan, j, n8);
            self.b.ins().brif(more, head, &[], done, &[]);
            self.b.seal_block(head);
        }
        self.b.seal_block(done);
        self.b.switch_to_block(done);
        self.b.ins().return_(&[n]);
        Ok(())
    }

    /// The row pointers the body reads, loaded once per call, and (where it reads the buffer at
    /// a run-time index) the taps' address table. A footprint over many axes has thousands of
    /// rows; a body that reads a few taps loads those rows only, not code per row and tap.
    fn kernel_tables(&mut self, taps: &Taps, reads: &BufferReads, rows: Value) -> Result<()> {
        let tap_list: Vec<(usize, i32)> = taps
            .slot
            .iter()
            .zip(&taps.col)
            .map(|(&s, &c)| (s as usize, (c * 8) as i32))
            .collect();
        let mut needed = vec![reads.dynamic; taps.slots];
        for &k in &reads.constant {
            if let Some(&(s, _)) = tap_list.get(k) {
                needed[s] = true;
            }
        }
        let mut bases = Vec::with_capacity(taps.slots);
        for (s, &needed) in needed.iter().enumerate() {
            let offset = i32::try_from(s * 8).map_err(|_| codegen_error("too many rows"))?;
            bases.push(needed.then(|| self.b.ins().load(types::I64, READONLY, rows, offset)));
        }
        let table = if tap_list.is_empty() || !reads.dynamic {
            None
        } else {
            let bytes =
                u32::try_from(tap_list.len() * 8).map_err(|_| codegen_error("too many taps"))?;
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                bytes,
                3,
            ));
            for (k, &(s, off)) in tap_list.iter().enumerate() {
                let base = bases[s].ok_or_else(|| codegen_error("a row not loaded"))?;
                let addr = self.b.ins().iadd_imm_s(base, i64::from(off));
                self.b
                    .ins()
                    .stack_store(types::I64, addr, slot, (k * 8) as i32);
            }
            Some(slot)
        };
        if let Some(k) = self.kernel.as_mut() {
            k.bases = bases;
            k.taps = tap_list;
            k.table = table;
        }
        Ok(())
    }

    /// The group loop, entered from the current block: `head` tests whether a whole group fits
    /// before `n8`; a group that bails, and the pixels left when none fits, go to `scalar` with
    /// `limit` set. Returns `head` (unsealed: the scalar loop's exit jumps back to it) and the
    /// block the scalar loop leaves to.
    fn translate_group_loop(
        &mut self,
        func: &'a ir::Func,
        n8: Value,
        limit: Variable,
        scalar: Block,
    ) -> Result<(Block, Block)> {
        let j8 = self
            .kernel
            .as_ref()
            .ok_or_else(|| codegen_error("not a row kernel"))?
            .j8;
        let step = (8 * GROUP_PIXELS) as i64;
        let (preheader, head, group, rest, bail, after) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        // The groups' vector constants are computed here, once per call (see
        // `lanes::Group::constant`).
        self.b.ins().jump(preheader, &[]);
        self.b.seal_block(preheader);
        self.b.switch_to_block(preheader);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let j = self.b.use_var(j8);
        let end = self.b.ins().iadd_imm_s(j, step);
        let fits = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, end, n8);
        self.b.ins().brif(fits, group, &[], rest, &[]);
        self.b.seal_block(group);
        self.b.seal_block(rest);

        self.b.switch_to_block(group);
        self.loop_depth += 1;
        super::lanes::translate_group(self, func, bail, preheader)?;
        self.loop_depth -= 1;
        let j = self.b.use_var(j8);
        let next = self.b.ins().iadd_imm_s(j, step);
        self.b.def_var(j8, next);
        self.b.ins().jump(head, &[]);

        // A lane failed a check: the scalar loop recomputes the group, and reports the failure.
        self.b.seal_block(bail);
        self.b.switch_to_block(bail);
        self.b.set_cold_block(bail);
        let j = self.b.use_var(j8);
        let end = self.b.ins().iadd_imm_s(j, step);
        self.b.def_var(limit, end);
        self.b.ins().jump(scalar, &[]);

        self.b.switch_to_block(rest);
        self.b.def_var(limit, n8);
        self.b.ins().jump(scalar, &[]);
        Ok((head, after))
    }

    /// A lane group's tap `k`: the address of the group's first pixel in the tap's row, and the
    /// tap's displacement from it.
    pub(super) fn kernel_tap(&mut self, k: i64) -> Result<(Value, i32)> {
        let state = self
            .kernel
            .as_ref()
            .ok_or_else(|| codegen_error("not a row kernel"))?;
        let &(s, off) = usize::try_from(k)
            .ok()
            .and_then(|k| state.taps.get(k))
            .ok_or_else(|| codegen_error("tap index out of range"))?;
        let base = state.bases[s].ok_or_else(|| codegen_error("a row not loaded"))?;
        let j8 = self.b.use_var(state.j8);
        Ok((self.b.ins().iadd(base, j8), off))
    }

    /// A lane group's output address: `out + 8 * j`.
    pub(super) fn kernel_out_addr(&mut self) -> Result<Value> {
        let state = self
            .kernel
            .as_ref()
            .ok_or_else(|| codegen_error("not a row kernel"))?;
        let (out, j8) = (state.out, state.j8);
        let j8 = self.b.use_var(j8);
        Ok(self.b.ins().iadd(out, j8))
    }

    /// `Load(BUFFER, i)` in a row kernel: tap `i` of the current pixel.
    pub(super) fn kernel_load(&mut self, i: Opnd) -> Result<Opnd> {
        let k = self
            .kernel
            .as_ref()
            .ok_or_else(|| codegen_error("not a row kernel"))?;
        let j8 = self.b.use_var(k.j8);
        let v = match i {
            Opnd::Const(Val::I(i)) => {
                let &(s, off) = usize::try_from(i)
                    .ok()
                    .and_then(|i| k.taps.get(i))
                    .ok_or_else(|| codegen_error("tap index out of range"))?;
                let base = k.bases[s].ok_or_else(|| codegen_error("a row not loaded"))?;
                let addr = self.b.ins().iadd(base, j8);
                // Valid for every pixel of the call wherever it is placed, so it may move.
                self.b.ins().load(types::F64, MOVABLE, addr, off)
            }
            Opnd::Dyn(i, Ty::I64) => {
                let table = k.table.ok_or_else(|| codegen_error("tap table missing"))?;
                let scaled = self.b.ins().ishl_imm_s(i, 3);
                let base = self.b.ins().stack_addr(types::I64, table, 0);
                let slot = self.b.ins().iadd(base, scaled);
                let tap = self.b.ins().load(types::I64, TRUSTED, slot, 0);
                let addr = self.b.ins().iadd(tap, j8);
                self.b.ins().load(types::F64, READONLY, addr, 0)
            }
            _ => {
                return Err(codegen_error(
                    "ill-typed IR: a buffer index that is not an int",
                ))
            }
        };
        Ok(Opnd::Dyn(v, Ty::F64))
    }

    /// `Return(v)` in a row kernel: `out[j] = v`, then the next pixel.
    pub(super) fn kernel_return(&mut self, v: Value) -> Result<()> {
        let k = self
            .kernel
            .as_ref()
            .ok_or_else(|| codegen_error("not a row kernel"))?;
        let (out, latch) = (k.out, k.latch);
        let j8 = self.b.use_var(k.j8);
        let addr = self.b.ins().iadd(out, j8);
        self.b.ins().store(TRUSTED, v, addr, 0);
        self.b.ins().jump(latch, &[]);
        Ok(())
    }

    /// Makes Cranelift compute a fold's running state here, in program order. Its elaborator
    /// places a pure value at its first use, operands first; for a fold whose step reads the new
    /// element before the accumulator (`minsd`'s operand order), that would load every element
    /// of the fold before the first step and spill them. A store of the state (to a scratch slot
    /// nothing reads) is a use in program order. One store per 8 elements costs little.
    pub(super) fn kernel_barrier(&mut self, acc: Value, arg: Value) -> (Value, Value) {
        let slot = match self.kernel.as_ref().and_then(|k| k.sink) {
            Some(s) => s,
            None => {
                let s = self.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    8,
                    3,
                ));
                if let Some(k) = self.kernel.as_mut() {
                    k.sink = Some(s);
                }
                s
            }
        };
        let ty = self.b.func.dfg.value_type(acc);
        self.b.ins().stack_store(ty, acc, slot, 0);
        (acc, arg)
    }

    /// What a failed row kernel returns: the current pixel's index.
    pub(super) fn kernel_failed_pixel(&mut self) -> Option<Value> {
        let j8 = self.kernel.as_ref()?.j8;
        let j8 = self.b.use_var(j8);
        Some(self.b.ins().ushr_imm_u(j8, 3))
    }
}

#[cfg(test)]
mod tests {
    use super::BufferReads;
    use crate::{Bindings, Filter};

    fn reads(src: &str, n: usize) -> BufferReads {
        let f = Filter::compile(src, &Bindings::new()).and_then(|f| f.specialize(n));
        BufferReads::of(f.unwrap().specialized_ir().unwrap())
    }

    #[test]
    fn constant_taps_are_listed_and_run_time_indices_need_every_tap() {
        let few = reads("x[0] + x[3] * x[0]", 1000);
        assert_eq!((few.constant, few.dynamic), (vec![0, 3], false));
        assert!(reads("x[int(x[0]) % len(x)]", 1000).dynamic);
        assert!(reads("np.median(x)", 1000).dynamic);
        assert!(reads("np.sum(x)", 4).dynamic);
    }
}
