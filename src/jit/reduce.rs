//! Reductions and fills: loops over `i in 0..len`, in exactly the interpreter's order.
//!
//! Cranelift has no unroller, and over the 9 or 25 values of a filter a loop costs about three
//! times straight-line code. So when `len` is a constant (always, in a Func specialised for the
//! filter size) and small, the loop is fully unrolled with the index bound to a constant, which
//! turns `x[i]` into loads at fixed offsets. Otherwise a rotated counted loop is emitted, except
//! for `Sum`, which then calls the runtime's own pairwise summation.

use super::imports::Callee;
use super::translate::{codegen_error, Opnd, Result, Translator};
use crate::ir::eval::Val;
use crate::ir::{Arr, ArrKind, ErrorId, Expr, ReduceOp, Ty, Var};
use crate::runtime::{pairwise_split, SUM_BLOCK};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, StackSlotData, StackSlotKind, Value};

/// Longest constant loop that is unrolled.
const UNROLL_MAX_LEN: i64 = 256;
/// Bound on `len × expression nodes` of an unrolled loop, so unrolling cannot blow up code size
/// and compile time for large element expressions.
const UNROLL_MAX_NODES: usize = 8192;
/// Longest constant-length scratch array kept in a stack slot instead of runtime memory.
const STACK_MAX_ELEMS: i64 = 1024;
/// Bytes of stack all such slots of one function may take together.
const STACK_BUDGET: u32 = 64 * 1024;

/// A loop index: a constant in unrolled code, an SSA value in a loop.
#[derive(Clone, Copy)]
enum Index {
    Const(i64),
    Dyn(Value),
}

impl Translator<'_> {
    /// `dst = op(elem(i) for i in 0..max(len, 0))`.
    pub(super) fn translate_reduce(
        &mut self,
        dst: Var,
        op: ReduceOp,
        len: &Expr,
        index: Var,
        elem: &Expr,
        on_empty: Option<ErrorId>,
    ) -> Result<bool> {
        let (elem_ty, result_ty) = op.types();
        self.expect_var(dst, result_ty)?;
        self.expect_var(index, Ty::I64)?;
        let n = self.count(len)?;
        if op.needs_nonempty() {
            let site = on_empty
                .ok_or_else(|| codegen_error(format!("{op:?} without an on_empty error")))?
                .0;
            match n {
                Opnd::Const(c) if c.i() == 0 => {
                    let zero = self.zero(Ty::I64);
                    self.jump_to_fail(site, zero, zero);
                    return Ok(false);
                }
                Opnd::Const(_) => {}
                _ => {
                    let n = self.value(n);
                    let nonempty = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, n, 0);
                    self.branch_to_fail(
                        nonempty,
                        site,
                        |t| Ok((t.zero(Ty::I64), t.zero(Ty::I64))),
                        false,
                    )?;
                }
            }
        }
        self.new_load_region();
        let result = match self.unrolled_len(n, elem.size()) {
            Some(k) => self.reduce_unrolled(op, k, index, elem, elem_ty)?,
            None => {
                let n = self.value(n);
                self.reduce_loop(op, n, index, elem, elem_ty)?
            }
        };
        self.region = None;
        self.def_ir_var(dst, Opnd::Dyn(result, result_ty))?;
        Ok(true)
    }

    /// Materialises `elem(i)` for `i in 0..max(len, 0)` into scratch array `dst`, keeping the
    /// elements for which `keep(i)` holds; `dst`'s length becomes the number kept.
    pub(super) fn translate_fill(
        &mut self,
        dst: Arr,
        len: &Expr,
        index: Var,
        elem: &Expr,
        keep: Option<&Expr>,
    ) -> Result<bool> {
        if matches!(self.arr_kind(dst)?, ArrKind::Output) {
            return self.fill_output(len, index, elem, keep);
        }
        let vars = self.scratch_vars(dst)?;
        self.expect_var(index, Ty::I64)?;
        let n = self.count(len)?;
        let ptr = self.scratch_memory(dst, n)?;
        // While the fill runs `dst` reads as empty, as in the interpreter (which takes the vector
        // out): the elements may not read what they overwrite.
        let zero = self.zero(Ty::I64);
        self.b.def_var(vars.len, zero);
        let nodes = elem.size() + keep.map_or(0, Expr::size);
        self.new_load_region();
        let kept = match self.unrolled_len(n, nodes) {
            Some(k) => self.fill_unrolled(ptr, k, index, elem, keep)?,
            None => {
                let n = self.value(n);
                self.fill_loop(ptr, n, index, elem, keep)?
            }
        };
        self.region = None;
        self.b.def_var(vars.ptr, ptr);
        self.b.def_var(vars.len, kept);
        Ok(true)
    }

    /// A fill of the output array: elements `0..len` (a check proved `len` is its length), each
    /// written right after it is computed, as the interpreter does (so `oline /= k` works in place).
    fn fill_output(
        &mut self,
        len: &Expr,
        index: Var,
        elem: &Expr,
        keep: Option<&Expr>,
    ) -> Result<bool> {
        if keep.is_some() {
            return Err(codegen_error("a fill of the output array cannot filter"));
        }
        self.expect_var(index, Ty::I64)?;
        let n = self.count(len)?;
        let ptr = self.output().0;
        let nodes = elem.size();
        match self.unrolled_len(n, nodes) {
            Some(k) => {
                self.fill_unrolled(ptr, k, index, elem, None)?;
            }
            None => {
                let n = self.value(n);
                self.fill_loop(ptr, n, index, elem, None)?;
            }
        }
        Ok(true)
    }

    // ---------------------------------------------------------------------------------------------
    // Shared pieces

    fn expect_var(&self, v: Var, ty: Ty) -> Result<()> {
        let actual = self.var_ty(v)?;
        if actual != ty {
            return Err(codegen_error(format!(
                "ill-typed IR: variable {} is {}, expected {}",
                v.0,
                actual.name(),
                ty.name()
            )));
        }
        Ok(())
    }

    /// The trip count `max(len, 0)` as an i64 operand.
    fn count(&mut self, len: &Expr) -> Result<Opnd> {
        let n = self.expr_as(len, Ty::I64)?;
        Ok(match n {
            Opnd::Const(c) => Opnd::Const(Val::I(c.i().max(0))),
            // Array lengths are never negative: no clamp needed.
            _ if matches!(len, Expr::Len(_)) => n,
            _ => {
                let (v, zero) = (self.value(n), self.zero(Ty::I64));
                Opnd::Dyn(self.b.ins().smax(v, zero), Ty::I64)
            }
        })
    }

    /// The constant trip count, when the loop is short enough to unroll.
    fn unrolled_len(&self, n: Opnd, nodes: usize) -> Option<i64> {
        match n {
            Opnd::Const(Val::I(k))
                if k <= UNROLL_MAX_LEN
                    && (k as usize).saturating_mul(nodes) <= UNROLL_MAX_NODES =>
            {
                Some(k)
            }
            _ => None,
        }
    }

    /// Runs `f` with the IR variable `index` bound to `i`: as a compile-time constant in unrolled
    /// code, else by defining the variable.
    fn with_index<R>(
        &mut self,
        index: Var,
        i: Index,
        f: impl FnOnce(&mut Self) -> Result<R>,
    ) -> Result<R> {
        let slot = index.0 as usize;
        match i {
            Index::Const(k) => self.consts[slot] = Some(Val::I(k)),
            Index::Dyn(v) => {
                self.consts[slot] = None;
                self.b.def_var(self.vars[slot], v);
            }
        }
        let r = f(self);
        self.consts[slot] = None;
        r
    }

    /// `elem(i)` converted to `ty`, materialised.
    fn elem_at(&mut self, index: Var, i: Index, elem: &Expr, ty: Ty) -> Result<Value> {
        self.with_index(index, i, |t| t.value_as(elem, ty))
    }

    /// After an unrolled loop the index variable holds its last value, as after the
    /// interpreter's loop.
    fn leave_index(&mut self, index: Var, k: i64) {
        if k > 0 {
            let last = self.b.ins().iconst(types::I64, k - 1);
            self.b.def_var(self.vars[index.0 as usize], last);
        }
    }

    /// Emits `for i in (start..end).step_by(step) { body(i) }` as a rotated loop: one guard,
    /// then a body block that ends with the increment and the back edge. Loop-carried state
    /// lives in Cranelift variables; `i` is a block parameter.
    fn counted_loop(
        &mut self,
        start: Value,
        end: Value,
        step: i64,
        body: impl FnOnce(&mut Self, Value) -> Result<()>,
    ) -> Result<()> {
        let body_block = self.b.create_block();
        let i = self.b.append_block_param(body_block, types::I64);
        let exit = self.b.create_block();
        let enter = self.b.ins().icmp(IntCC::SignedLessThan, start, end);
        self.b
            .ins()
            .brif(enter, body_block, &[BlockArg::Value(start)], exit, &[]);
        // The body block is not sealed until its back edge exists.
        self.b.switch_to_block(body_block);
        self.loop_depth += 1;
        body(self, i)?;
        self.loop_depth -= 1;
        let next = self.b.ins().iadd_imm_s(i, step);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, next, end);
        self.b
            .ins()
            .brif(more, body_block, &[BlockArg::Value(next)], exit, &[]);
        // Both predecessors of the body (guard, back edge) and of the exit are known now.
        self.b.seal_block(body_block);
        self.b.seal_block(exit);
        self.b.switch_to_block(exit);
        Ok(())
    }

    // ---------------------------------------------------------------------------------------------
    // Reductions

    fn reduce_unrolled(
        &mut self,
        op: ReduceOp,
        k: i64,
        index: Var,
        elem: &Expr,
        elem_ty: Ty,
    ) -> Result<Value> {
        if op == ReduceOp::Sum {
            let r = self.sum_unrolled(k, index, elem)?;
            self.leave_index(index, k);
            return Ok(r);
        }
        let mut acc = None;
        for i in 0..k {
            let v = self.elem_at(index, Index::Const(i), elem, elem_ty)?;
            acc = Some(match acc {
                // The identity of each fold is dropped: 0 + x, 1.0 * x, false | x, true & x are
                // x, so the first element starts the fold (NaN payloads aside).
                None => self.fold_first(op, v),
                Some(acc) => {
                    let i = self.b.ins().iconst(types::I64, i);
                    self.fold_step(op, acc, v, i)
                }
            });
            // Row kernels: keep the loads of a long fold from all being issued first.
            if let (Some((r, arg)), true) = (acc, self.kernel.is_some() && i % 8 == 7 && i + 1 < k)
            {
                acc = Some(self.kernel_barrier(r, arg));
            }
        }
        self.leave_index(index, k);
        Ok(match acc {
            Some((r, arg)) => {
                if matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax) {
                    arg
                } else {
                    r
                }
            }
            None => self.fold_empty(op),
        })
    }

    fn reduce_loop(
        &mut self,
        op: ReduceOp,
        n: Value,
        index: Var,
        elem: &Expr,
        elem_ty: Ty,
    ) -> Result<Value> {
        if op == ReduceOp::Sum {
            return self.sum_dynamic(n, index, elem);
        }
        let (acc_var, arg_var) = (
            self.b.declare_var(super::translate::clif_ty(fold_ty(op))),
            self.b.declare_var(types::I64),
        );
        // Min/Max/ArgMin/ArgMax start from element 0 (the length was checked non-zero); the
        // others from their identity.
        let start = if op.needs_nonempty() {
            let zero = self.zero(Ty::I64);
            let first = self.elem_at(index, Index::Dyn(zero), elem, elem_ty)?;
            let (acc, arg) = self.fold_first(op, first);
            self.b.def_var(acc_var, acc);
            self.b.def_var(arg_var, arg);
            1
        } else {
            let identity = self.fold_empty(op);
            let zero = self.zero(Ty::I64);
            self.b.def_var(acc_var, identity);
            self.b.def_var(arg_var, zero);
            0
        };
        let start = self.b.ins().iconst(types::I64, start);
        self.counted_loop(start, n, 1, |t, i| {
            let v = t.elem_at(index, Index::Dyn(i), elem, elem_ty)?;
            let acc = (t.b.use_var(acc_var), t.b.use_var(arg_var));
            let (acc, arg) = t.fold_step(op, acc, v, i);
            t.b.def_var(acc_var, acc);
            t.b.def_var(arg_var, arg);
            Ok(())
        })?;
        Ok(if matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax) {
            self.b.use_var(arg_var)
        } else {
            self.b.use_var(acc_var)
        })
    }

    /// The result of a reduction over no elements.
    fn fold_empty(&mut self, op: ReduceOp) -> Value {
        let v = crate::ir::eval::reduce_empty(op);
        self.value(Opnd::Const(v))
    }

    /// The fold state after element 0: `(accumulator, argument index)`.
    pub(super) fn fold_first(&mut self, op: ReduceOp, v: Value) -> (Value, Value) {
        let zero = self.zero(Ty::I64);
        let acc = match op {
            ReduceOp::Count => self.b.ins().uextend(types::I64, v),
            // Python's `0 + x0`: keeps every value but turns `-0.0` into `0.0`.
            ReduceOp::SumSeq => {
                let zero = self.b.ins().f64const(0.0);
                self.b.ins().fadd(zero, v)
            }
            _ => v,
        };
        (acc, zero)
    }

    /// One fold step with element `v` at index `i`.
    pub(super) fn fold_step(
        &mut self,
        op: ReduceOp,
        acc: (Value, Value),
        v: Value,
        i: Value,
    ) -> (Value, Value) {
        let (a, arg) = acc;
        let ins = self.b.ins();
        let a = match op {
            ReduceOp::SumInt => ins.iadd(a, v),
            ReduceOp::Sum | ReduceOp::SumSeq => ins.fadd(a, v),
            ReduceOp::Prod => ins.fmul(a, v),
            ReduceOp::Min => ins.fmin(a, v),
            ReduceOp::Max => ins.fmax(a, v),
            // CPython's builtin over an iterable: `if v < acc: acc = v` (`>` for max).
            // `v > acc` is written `acc < v`: x86-64 lowers both selects to `minsd`/`maxsd`.
            ReduceOp::PyMin | ReduceOp::PyMax => {
                let take = if op == ReduceOp::PyMin {
                    ins.fcmp(FloatCC::LessThan, v, a)
                } else {
                    ins.fcmp(FloatCC::LessThan, a, v)
                };
                self.b.ins().select(take, v, a)
            }
            ReduceOp::Any => ins.bor(a, v),
            ReduceOp::All => ins.band(a, v),
            ReduceOp::Count => {
                let one = ins.uextend(types::I64, v);
                self.b.ins().iadd(a, one)
            }
            ReduceOp::ArgMin | ReduceOp::ArgMax => return self.arg_step(op, a, arg, v, i),
        };
        (a, arg)
    }

    /// NumPy's argmin/argmax: the first NaN wins, else the first extreme value. Branch-free: take
    /// `v` when it is NaN or strictly better, unless the best so far is already a NaN.
    fn arg_step(
        &mut self,
        op: ReduceOp,
        best: Value,
        arg: Value,
        v: Value,
        i: Value,
    ) -> (Value, Value) {
        let cc = if op == ReduceOp::ArgMin {
            FloatCC::UnorderedOrLessThan
        } else {
            FloatCC::UnorderedOrGreaterThan
        };
        let better = self.b.ins().fcmp(cc, v, best);
        let best_is_number = self.b.ins().fcmp(FloatCC::Ordered, best, best);
        let take = self.b.ins().band(better, best_is_number);
        let best = self.b.ins().select(take, v, best);
        let arg = self.b.ins().select(take, i, arg);
        (best, arg)
    }

    /// `runtime::pairwise_sum` over a constant number of elements, unrolled.
    fn sum_unrolled(&mut self, k: i64, index: Var, elem: &Expr) -> Result<Value> {
        let mut elems = Vec::with_capacity(k as usize);
        for i in 0..k {
            elems.push(self.elem_at(index, Index::Const(i), elem, Ty::F64)?);
        }
        let zero = self.value(Opnd::Const(Val::F(0.0)));
        Ok(self.pairwise_sum(&elems, zero))
    }

    /// `runtime::pairwise_sum` of `elems`, starting from `zero` (`+0.0`, as a scalar or in every
    /// lane of a vector: the adds are the same instructions on either type), in NumPy's
    /// pairwise order.
    pub(super) fn pairwise_sum(&mut self, elems: &[Value], zero: Value) -> Value {
        if elems.is_empty() {
            return zero;
        }
        let sum = self.pairwise(elems);
        self.b.ins().fadd(zero, sum)
    }

    /// NumPy's `pairwise_sum` of one or more elements: one block up to 128 elements, else the
    /// two halves of `runtime::pairwise_split`, added.
    fn pairwise(&mut self, elems: &[Value]) -> Value {
        if elems.len() <= SUM_BLOCK {
            return self.pairwise_block(elems);
        }
        let (left, right) = elems.split_at(pairwise_split(elems.len()));
        let (left, right) = (self.pairwise(left), self.pairwise(right));
        self.b.ins().fadd(left, right)
    }

    /// `runtime::pairwise_block` of 1 to 128 elements. Where the runtime starts a sum at -0.0,
    /// this starts at the first element: `-0.0 + x == x`.
    fn pairwise_block(&mut self, elems: &[Value]) -> Value {
        let len = elems.len();
        let (mut res, mut tail) = (None, 0);
        if len >= 8 {
            let mut r = elems[..8].to_vec();
            let end8 = len - len % 8;
            for (p, &v) in elems.iter().enumerate().take(end8).skip(8) {
                r[p % 8] = self.b.ins().fadd(r[p % 8], v);
            }
            res = Some(self.pairwise_tree(&r));
            tail = end8;
        }
        for &v in &elems[tail..] {
            res = Some(match res {
                None => v,
                Some(acc) => self.b.ins().fadd(acc, v),
            });
        }
        res.unwrap_or(elems[0])
    }

    /// `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))`.
    fn pairwise_tree(&mut self, r: &[Value]) -> Value {
        let ins = &mut |t: &mut Self, a, b| t.b.ins().fadd(a, b);
        let (a, b) = (ins(self, r[0], r[1]), ins(self, r[2], r[3]));
        let (c, d) = (ins(self, r[4], r[5]), ins(self, r[6], r[7]));
        let (ab, cd) = (ins(self, a, b), ins(self, c, d));
        ins(self, ab, cd)
    }

    /// `runtime::pairwise_sum` of a run-time number of elements, through the runtime routine
    /// itself: directly on the array when the element is a plain `a[i]` of f64, else on the
    /// elements materialised in a runtime scratch slot (failing with site 1 if it is refused).
    fn sum_dynamic(&mut self, n: Value, index: Var, elem: &Expr) -> Result<Value> {
        let ptr = match self.plain_f64_array(elem, index)? {
            Some(base) => {
                // The interpreter leaves the index at its last value.
                let var = self.vars[index.0 as usize];
                let (old, last) = (self.b.use_var(var), self.b.ins().iadd_imm_s(n, -1));
                let nonempty = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, n, 0);
                let after = self.b.ins().select(nonempty, last, old);
                self.b.def_var(var, after);
                base
            }
            None => {
                let slot = self.sum_slot;
                let ptr = self.runtime_scratch(slot, n)?;
                let zero = self.zero(Ty::I64);
                self.counted_loop(zero, n, 1, |t, i| {
                    let v = t.elem_at(index, Index::Dyn(i), elem, Ty::F64)?;
                    let (addr, offset) = t.elem_addr(ptr, Opnd::Dyn(i, Ty::I64));
                    t.store_bits(Opnd::Dyn(v, Ty::F64), addr, offset);
                    Ok(())
                })?;
                ptr
            }
        };
        self.call(Callee::PairwiseSum, &[ptr, n])?
            .ok_or_else(|| codegen_error("sum routine without result"))
    }

    /// The base address of `a` when `elem` is `a[index]` for an f64 array `a`.
    fn plain_f64_array(&mut self, elem: &Expr, index: Var) -> Result<Option<Value>> {
        let Expr::Load(a, i) = elem else {
            return Ok(None);
        };
        if **i != Expr::Var(index) {
            return Ok(None);
        }
        Ok(match self.arr_kind(*a)? {
            // A row kernel has no contiguous buffer.
            ArrKind::Buffer if self.kernel.is_some() => None,
            ArrKind::Buffer => Some(self.buffer),
            ArrKind::Bound(k) => Some(self.bound_array(*k)?.0),
            ArrKind::Scratch { elem: Ty::F64 } => {
                let vars = self.scratch_vars(*a)?;
                Some(self.b.use_var(vars.ptr))
            }
            ArrKind::Output => Some(self.output().0),
            ArrKind::Scratch { .. } | ArrKind::Coords => None,
        })
    }

    // ---------------------------------------------------------------------------------------------
    // Fills

    /// Memory for `n` elements of scratch array `dst`: a stack slot when `n` is a small
    /// constant, else the per-thread runtime arena (failing with site 1 when it refuses).
    fn scratch_memory(&mut self, dst: Arr, n: Opnd) -> Result<Value> {
        if let Opnd::Const(Val::I(k)) = n {
            if k == 0 {
                // Nothing is ever read from an empty array; the runtime routines accept null.
                return Ok(self.zero(Ty::I64));
            }
            if k <= STACK_MAX_ELEMS {
                if let Some(slot) = self.stack_slot(dst, k as u32) {
                    return Ok(self.b.ins().stack_addr(types::I64, slot, 0));
                }
            }
        }
        let n = self.value(n);
        self.runtime_scratch(dst.0, n)
    }

    /// `n` elements of the thread's runtime scratch slot `slot`.
    fn runtime_scratch(&mut self, slot: u32, n: Value) -> Result<Value> {
        // The slot is a u32 passed in an i32 register; the bits are what matter.
        let slot = self.b.ins().iconst(types::I32, i64::from(slot as i32));
        let ptr = self
            .call(Callee::Scratch, &[slot, n])?
            .ok_or_else(|| codegen_error("scratch routine without result"))?;
        // Site 1 is reserved by the lowering for "out of scratch memory"; a = the size asked for.
        self.branch_to_fail(ptr, 1, |t| Ok((n, t.zero(Ty::I64))), false)?;
        Ok(ptr)
    }

    /// A stack slot of at least `k` elements for array `dst`, reusing the array's slot when it
    /// is big enough; `None` when the function's stack budget is spent.
    fn stack_slot(&mut self, dst: Arr, k: u32) -> Option<cranelift_codegen::ir::StackSlot> {
        if let Some(&(slot, cap)) = self.stack_slots.get(&dst.0) {
            if cap >= k {
                return Some(slot);
            }
        }
        let bytes = k * 8;
        if self.stack_bytes + bytes > STACK_BUDGET {
            return None;
        }
        self.stack_bytes += bytes;
        // Align 8 (2^3): the elements are f64/i64.
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            bytes,
            3,
        ));
        self.stack_slots.insert(dst.0, (slot, k));
        Some(slot)
    }

    /// An unrolled fill; returns the number of elements kept. With `keep`, every element is
    /// stored at the current count and the count advances by `keep` (branch-free: a rejected
    /// element is overwritten by the next one, and the count never passes `i`, so stores stay
    /// inside the `k` elements).
    fn fill_unrolled(
        &mut self,
        ptr: Value,
        k: i64,
        index: Var,
        elem: &Expr,
        keep: Option<&Expr>,
    ) -> Result<Value> {
        let mut count = Opnd::Const(Val::I(0));
        for i in 0..k {
            let (v, kept) = self.with_index(index, Index::Const(i), |t| {
                let kept = keep.map(|e| t.expr_as(e, Ty::Bool)).transpose()?;
                Ok((t.expr(elem)?, kept))
            })?;
            let at = if keep.is_some() {
                count
            } else {
                Opnd::Const(Val::I(i))
            };
            count = match kept {
                None => Opnd::Const(Val::I(i + 1)),
                Some(Opnd::Const(c)) if !c.b() => continue,
                Some(Opnd::Const(_)) => self.advance(count, None),
                Some(Opnd::Dyn(kept, _)) => self.advance(count, Some(kept)),
            };
            let (addr, offset) = self.elem_addr(ptr, at);
            self.store_bits(v, addr, offset);
        }
        self.leave_index(index, k);
        Ok(self.value(count))
    }

    /// `count + 1`, or `count + kept` for a dynamic bool.
    fn advance(&mut self, count: Opnd, kept: Option<Value>) -> Opnd {
        match (count, kept) {
            (Opnd::Const(c), None) => Opnd::Const(Val::I(c.i() + 1)),
            (_, None) => {
                let c = self.value(count);
                Opnd::Dyn(self.b.ins().iadd_imm_s(c, 1), Ty::I64)
            }
            (_, Some(kept)) => {
                let c = self.value(count);
                let one = self.b.ins().uextend(types::I64, kept);
                Opnd::Dyn(self.b.ins().iadd(c, one), Ty::I64)
            }
        }
    }

    /// A fill loop; returns the number of elements kept.
    fn fill_loop(
        &mut self,
        ptr: Value,
        n: Value,
        index: Var,
        elem: &Expr,
        keep: Option<&Expr>,
    ) -> Result<Value> {
        let Some(keep) = keep else {
            let zero = self.zero(Ty::I64);
            self.counted_loop(zero, n, 1, |t, i| {
                let v = t.with_index(index, Index::Dyn(i), |t| t.expr(elem))?;
                let (addr, offset) = t.elem_addr(ptr, Opnd::Dyn(i, Ty::I64));
                t.store_bits(v, addr, offset);
                Ok(())
            })?;
            return Ok(n);
        };
        let count = self.b.declare_var(types::I64);
        let zero = self.zero(Ty::I64);
        self.b.def_var(count, zero);
        self.counted_loop(zero, n, 1, |t, i| {
            let (v, kept) = t.with_index(index, Index::Dyn(i), |t| {
                let kept = t.value_as(keep, Ty::Bool)?;
                Ok((t.expr(elem)?, kept))
            })?;
            let c = t.b.use_var(count);
            let (addr, offset) = t.elem_addr(ptr, Opnd::Dyn(c, Ty::I64));
            t.store_bits(v, addr, offset);
            let one = t.b.ins().uextend(types::I64, kept);
            let c = t.b.ins().iadd(c, one);
            t.b.def_var(count, c);
            Ok(())
        })?;
        Ok(self.b.use_var(count))
    }
}

/// The type of a reduction's running accumulator.
fn fold_ty(op: ReduceOp) -> Ty {
    match op {
        ReduceOp::Count => Ty::I64,
        ReduceOp::ArgMin | ReduceOp::ArgMax => Ty::F64,
        _ => op.types().1,
    }
}
