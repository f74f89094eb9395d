//! Expressions: pure and total (see [`crate::ir`]), so each one is straight-line code.
//!
//! Every operation mirrors [`crate::ir::eval`] on the operand types it actually has, and an
//! operation on constants is folded through `eval` itself. Ill-typed IR (which `eval` would meet
//! with `unreachable!`) is a codegen error, never a panic.

use super::imports::Callee;
use super::translate::{codegen_error, Opnd, Result, Translator, MOVABLE, READONLY, TRUSTED};
use crate::ir::eval::{self, Val};
use crate::ir::{Arr, ArrKind, BinOp, CmpOp, Expr, Ty, UnOp, Var, BUFFER};
use crate::math::MathFn;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Value};

impl Translator<'_> {
    /// Translates an expression.
    pub(super) fn expr(&mut self, e: &Expr) -> Result<Opnd> {
        match e {
            Expr::F64(x) => Ok(Opnd::Const(Val::F(*x))),
            Expr::I64(x) => Ok(Opnd::Const(Val::I(*x))),
            Expr::Bool(x) => Ok(Opnd::Const(Val::B(*x))),
            Expr::Var(v) => self.translate_var(*v),
            Expr::Param(k) => Ok(Opnd::Dyn(self.bound_scalar(*k)?, Ty::F64)),
            Expr::IntParam(k) => Ok(Opnd::Dyn(self.bound_int(*k)?, Ty::I64)),
            Expr::Len(a) => self.translate_len(*a),
            Expr::Load(a, i) => {
                let i = self.expr_as(i, Ty::I64)?;
                self.translate_load(*a, i)
            }
            Expr::Unary(op, x) => {
                let x = self.expr(x)?;
                self.translate_unary(*op, x)
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                self.translate_binary(*op, a, b)
            }
            Expr::Cmp(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                Ok(self.translate_cmp(*op, a, b))
            }
            Expr::Select(c, a, b) => self.translate_select(c, a, b),
            Expr::Call(f, args) => self.translate_call(*f, args),
            Expr::Cast(ty, x) => {
                let x = self.expr(x)?;
                Ok(self.coerce(x, *ty))
            }
        }
    }

    /// Translates an expression and converts it as `Val::f`/`i`/`b` do.
    pub(super) fn expr_as(&mut self, e: &Expr, ty: Ty) -> Result<Opnd> {
        let o = self.expr(e)?;
        Ok(self.coerce(o, ty))
    }

    /// [`Self::expr_as`], materialised.
    pub(super) fn value_as(&mut self, e: &Expr, ty: Ty) -> Result<Value> {
        let o = self.expr_as(e, ty)?;
        Ok(self.value(o))
    }

    /// Conversion with [`eval::cast`]'s semantics: f64→i64 truncates and saturates (NaN → 0),
    /// i64→f64 rounds to nearest, anything→bool is `!= 0` (NaN is true), bool→number is 0 or 1.
    pub(super) fn coerce(&mut self, o: Opnd, ty: Ty) -> Opnd {
        let (v, from) = match o {
            _ if o.ty() == ty => return o,
            Opnd::Const(c) => return Opnd::Const(eval::cast(ty, c)),
            Opnd::Dyn(v, from) => (v, from),
        };
        let ins = self.b.ins();
        let r = match (from, ty) {
            (Ty::F64, Ty::I64) => ins.fcvt_to_sint_sat(types::I64, v),
            (Ty::F64, _) => {
                let zero = ins.f64const(0.0);
                // `NotEqual` is unordered-or-not-equal: true for NaN, like `v != 0.0`.
                self.b.ins().fcmp(FloatCC::NotEqual, v, zero)
            }
            (Ty::I64, Ty::F64) => ins.fcvt_from_sint(types::F64, v),
            (Ty::I64, _) => ins.icmp_imm_s(IntCC::NotEqual, v, 0),
            (Ty::Bool, Ty::I64) => ins.uextend(types::I64, v),
            (Ty::Bool, _) => {
                let wide = ins.uextend(types::I64, v);
                self.b.ins().fcvt_from_sint(types::F64, wide)
            }
        };
        Opnd::Dyn(r, ty)
    }

    fn translate_var(&mut self, v: Var) -> Result<Opnd> {
        let ty = self.var_ty(v)?;
        let i = v.0 as usize;
        Ok(match self.consts[i] {
            // The index of an unrolled reduction.
            Some(c) => Opnd::Const(c),
            None => Opnd::Dyn(self.b.use_var(self.vars[i]), ty),
        })
    }

    pub(super) fn translate_len(&mut self, a: Arr) -> Result<Opnd> {
        // As the interpreter: a specialised Func knows the buffer's length.
        if let (true, Some(n)) = (a == BUFFER, self.func.filter_size) {
            let n = i64::try_from(n).map_err(|_| codegen_error("filter_size too large"))?;
            return Ok(Opnd::Const(Val::I(n)));
        }
        let len = match self.arr_kind(a)? {
            ArrKind::Buffer | ArrKind::Coords => self.size,
            ArrKind::Output => self.output().1,
            ArrKind::Bound(k) => self.bound_array(*k)?.1,
            ArrKind::Scratch { .. } => {
                let vars = self.scratch_vars(a)?;
                self.b.use_var(vars.len)
            }
        };
        Ok(Opnd::Dyn(len, Ty::I64))
    }

    /// `a[i]`, the index proved in range by the IR.
    pub(super) fn translate_load(&mut self, a: Arr, i: Opnd) -> Result<Opnd> {
        // A row kernel reads the taps from the input rows.
        if self.kernel.is_some() && matches!(self.arr_kind(a)?, ArrKind::Buffer) {
            return self.kernel_load(i);
        }
        // A constant-index load outside loops may move (see `MOVABLE`).
        let readonly = if matches!(i, Opnd::Const(_)) && self.loop_depth == 0 {
            MOVABLE.with_alias_region(self.region)
        } else {
            READONLY
        };
        let (base, flags, elem) = match self.arr_kind(a)? {
            ArrKind::Buffer => (self.buffer, readonly, Ty::F64),
            ArrKind::Coords => (self.buffer, readonly, Ty::I64),
            // Written by the body: an ordinary load.
            ArrKind::Output => (self.output().0, TRUSTED, Ty::F64),
            ArrKind::Bound(k) => (self.bound_array(*k)?.0, readonly, Ty::F64),
            ArrKind::Scratch { elem } => {
                let vars = self.scratch_vars(a)?;
                (self.b.use_var(vars.ptr), TRUSTED, *elem)
            }
        };
        let (addr, offset) = self.elem_addr(base, i);
        let v = match elem {
            Ty::F64 => self.b.ins().load(types::F64, flags, addr, offset),
            Ty::I64 => self.b.ins().load(types::I64, flags, addr, offset),
            Ty::Bool => {
                // `Val::from_bits`: any non-zero cell is true.
                let cell = self.b.ins().load(types::I64, flags, addr, offset);
                self.b.ins().icmp_imm_s(IntCC::NotEqual, cell, 0)
            }
        };
        Ok(Opnd::Dyn(v, elem))
    }

    pub(super) fn translate_unary(&mut self, op: UnOp, x: Opnd) -> Result<Opnd> {
        let accepted = match op {
            UnOp::Neg | UnOp::Abs => x.ty() != Ty::Bool,
            UnOp::BitNot => x.ty() != Ty::F64,
            _ => true,
        };
        if !accepted {
            return Err(ill_typed(format_args!("{op:?} on {}", x.ty().name())));
        }
        if let Opnd::Const(c) = x {
            return Ok(Opnd::Const(eval::unary(op, c)));
        }
        Ok(match op {
            UnOp::Neg | UnOp::Abs | UnOp::BitNot => self.int_or_float_unary(op, x),
            UnOp::Not => {
                let b = self.coerce(x, Ty::Bool);
                let b = self.value(b);
                // `not isnan(v)` is the ordered test itself (one `setnp`, no `xor`).
                let r = match self.float_compare(b) {
                    Some((FloatCC::Unordered, p, q)) => self.b.ins().fcmp(FloatCC::Ordered, p, q),
                    Some((FloatCC::Ordered, p, q)) => self.b.ins().fcmp(FloatCC::Unordered, p, q),
                    _ => self.b.ins().bxor_imm_s(b, 1),
                };
                Opnd::Dyn(r, Ty::Bool)
            }
            _ => self.float_unary(op, x),
        })
    }

    /// Neg, Abs and BitNot, which keep their operand's type.
    fn int_or_float_unary(&mut self, op: UnOp, x: Opnd) -> Opnd {
        let ty = x.ty();
        let v = self.value(x);
        let ins = self.b.ins();
        let r = match (op, ty) {
            (UnOp::Neg, Ty::F64) => ins.fneg(v),
            (UnOp::Neg, _) => ins.ineg(v),
            (UnOp::Abs, Ty::F64) => ins.fabs(v),
            (UnOp::Abs, _) => ins.iabs(v),
            (_, Ty::Bool) => ins.bxor_imm_s(v, 1),
            _ => ins.bnot(v),
        };
        Opnd::Dyn(r, ty)
    }

    /// The f64 operations of `eval::unary`, on the operand converted with `Val::f`.
    fn float_unary(&mut self, op: UnOp, x: Opnd) -> Opnd {
        let x = self.coerce(x, Ty::F64);
        let v = self.value(x);
        let ins = self.b.ins();
        let f = match op {
            UnOp::Sqrt => ins.sqrt(v),
            UnOp::Floor => ins.floor(v),
            UnOp::Ceil => ins.ceil(v),
            UnOp::Trunc => ins.trunc(v),
            // `nearest` rounds half to even, like `round_ties_even`.
            UnOp::RoundEven => ins.nearest(v),
            UnOp::IsNan => return Opnd::Dyn(ins.fcmp(FloatCC::Unordered, v, v), Ty::Bool),
            // The bits as a signed integer: negative exactly when the sign bit is set.
            UnOp::SignBit => {
                let flags = cranelift_codegen::ir::MemFlagsData::new();
                let bits = ins.bitcast(types::I64, flags, v);
                let set = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, bits, 0);
                return Opnd::Dyn(set, Ty::Bool);
            }
            // |x| == inf; |x| < inf is ordered, so false for NaN.
            UnOp::IsInf | UnOp::IsFinite => {
                let abs = ins.fabs(v);
                let inf = self.b.ins().f64const(f64::INFINITY);
                let cc = if op == UnOp::IsInf {
                    FloatCC::Equal
                } else {
                    FloatCC::LessThan
                };
                return Opnd::Dyn(self.b.ins().fcmp(cc, abs, inf), Ty::Bool);
            }
            // Neg, Abs, BitNot and Not are handled by the caller.
            _ => v,
        };
        Opnd::Dyn(f, Ty::F64)
    }

    pub(super) fn translate_binary(&mut self, op: BinOp, a: Opnd, b: Opnd) -> Result<Opnd> {
        let ty = a.ty();
        if b.ty() != ty || !binary_accepts(op, ty) {
            return Err(ill_typed(format_args!(
                "{op:?} on {} and {}",
                ty.name(),
                b.ty().name()
            )));
        }
        if let (Opnd::Const(x), Opnd::Const(y)) = (a, b) {
            if let Some(v) = fold_binary(op, x, y) {
                return Ok(Opnd::Const(v));
            }
        }
        Ok(match ty {
            Ty::F64 => self.float_binary(op, a, b),
            Ty::I64 => self.int_binary(op, a, b)?,
            Ty::Bool => self.bool_binary(op, a, b),
        })
    }

    fn float_binary(&mut self, op: BinOp, a: Opnd, b: Opnd) -> Opnd {
        let (x, y) = (self.value(a), self.value(b));
        let ins = self.b.ins();
        let r = match op {
            // Plain IEEE operations: Cranelift never fuses them.
            BinOp::Add => ins.fadd(x, y),
            BinOp::Sub => ins.fsub(x, y),
            BinOp::Mul => ins.fmul(x, y),
            BinOp::Div => ins.fdiv(x, y),
            // Cranelift's fmin/fmax have the wasm semantics, which are NumPy's (see math::fmin).
            BinOp::Min => ins.fmin(x, y),
            BinOp::Max => ins.fmax(x, y),
            // CPython's builtin min/max: `y < x ? y : x`, `y > x ? y : x`.
            // `y > x` is written `x < y`: x86-64 lowers both selects to `minsd`/`maxsd`.
            BinOp::PyMin | BinOp::PyMax => {
                let take_y = if op == BinOp::PyMin {
                    ins.fcmp(FloatCC::LessThan, y, x)
                } else {
                    ins.fcmp(FloatCC::LessThan, x, y)
                };
                self.b.ins().select(take_y, y, x)
            }
            // Rejected by `binary_accepts`.
            _ => x,
        };
        Opnd::Dyn(r, Ty::F64)
    }

    fn int_binary(&mut self, op: BinOp, a: Opnd, b: Opnd) -> Result<Opnd> {
        if matches!(op, BinOp::FloorDiv | BinOp::Mod) {
            return self.int_floor_div_mod(op, a, b);
        }
        let (x, y) = (self.value(a), self.value(b));
        let ins = self.b.ins();
        let r = match op {
            BinOp::Add => ins.iadd(x, y),
            BinOp::Sub => ins.isub(x, y),
            BinOp::Mul => ins.imul(x, y),
            BinOp::Min | BinOp::PyMin => ins.smin(x, y),
            BinOp::Max | BinOp::PyMax => ins.smax(x, y),
            BinOp::And => ins.band(x, y),
            BinOp::Or => ins.bor(x, y),
            BinOp::Xor => ins.bxor(x, y),
            // Cranelift masks the shift amount to 0..63, as `wrapping_shl`/`wrapping_shr` do.
            BinOp::Shl => ins.ishl(x, y),
            BinOp::Shr => ins.sshr(x, y),
            BinOp::MulHi => ins.smulhi(x, y),
            // Rejected by `binary_accepts` / handled above.
            _ => x,
        };
        Ok(Opnd::Dyn(r, Ty::I64))
    }

    /// Python's `//` and `%` on i64. Cranelift's `sdiv` traps on a zero divisor and on
    /// `MIN / -1`, so a variable divisor goes through the runtime shims; a constant positive
    /// divisor (typically `len(x) // 2`) is inlined: a shift for powers of two, else `sdiv` by a
    /// constant that cannot trap, corrected toward minus infinity.
    fn int_floor_div_mod(&mut self, op: BinOp, a: Opnd, b: Opnd) -> Result<Opnd> {
        let x = self.value(a);
        let r = match b {
            Opnd::Const(Val::I(c)) if c > 0 && (c as u64).is_power_of_two() => {
                let shift = i64::from(c.trailing_zeros());
                if op == BinOp::FloorDiv {
                    self.b.ins().sshr_imm_s(x, shift)
                } else {
                    self.b.ins().band_imm_s(x, c - 1)
                }
            }
            Opnd::Const(Val::I(c)) if c > 0 => {
                let divisor = self.b.ins().iconst(types::I64, c);
                let q = self.b.ins().sdiv(x, divisor);
                let qc = self.b.ins().imul_imm_s(q, c);
                let rem = self.b.ins().isub(x, qc);
                // -1 when the truncated remainder is negative, which for c > 0 is exactly when
                // floor and truncation differ.
                let neg = self.b.ins().sshr_imm_s(rem, 63);
                if op == BinOp::FloorDiv {
                    self.b.ins().iadd(q, neg)
                } else {
                    let fix = self.b.ins().band_imm_s(neg, c);
                    self.b.ins().iadd(rem, fix)
                }
            }
            // x // -1 == -x (wrapping: MIN // -1 == MIN); x % -1 == 0.
            Opnd::Const(Val::I(-1)) if op == BinOp::FloorDiv => self.b.ins().ineg(x),
            Opnd::Const(Val::I(-1)) => self.b.ins().iconst(types::I64, 0),
            _ => {
                let y = self.value(b);
                let callee = if op == BinOp::FloorDiv {
                    Callee::IFloorDiv
                } else {
                    Callee::IMod
                };
                self.call(callee, &[x, y])?
                    .ok_or_else(|| codegen_error("division shim without result"))?
            }
        };
        Ok(Opnd::Dyn(r, Ty::I64))
    }

    fn bool_binary(&mut self, op: BinOp, a: Opnd, b: Opnd) -> Opnd {
        let (x, y) = (self.value(a), self.value(b));
        let ins = self.b.ins();
        let r = match op {
            BinOp::And | BinOp::Min | BinOp::PyMin => ins.band(x, y),
            BinOp::Or | BinOp::Max | BinOp::PyMax => ins.bor(x, y),
            _ => ins.bxor(x, y),
        };
        Opnd::Dyn(r, Ty::Bool)
    }

    /// Comparisons as `eval::cmp`: IEEE on two f64 (ordered except `Ne`), otherwise on the
    /// operands converted with `Val::i`.
    pub(super) fn translate_cmp(&mut self, op: CmpOp, a: Opnd, b: Opnd) -> Opnd {
        if let (Opnd::Const(x), Opnd::Const(y)) = (a, b) {
            return Opnd::Const(Val::B(eval::cmp(op, x, y)));
        }
        let r = if a.ty() == Ty::F64 && b.ty() == Ty::F64 {
            let (x, y) = (self.value(a), self.value(b));
            self.b.ins().fcmp(float_cc(op), x, y)
        } else {
            let (a, b) = (self.coerce(a, Ty::I64), self.coerce(b, Ty::I64));
            let (x, y) = (self.value(a), self.value(b));
            self.b.ins().icmp(int_cc(op), x, y)
        };
        Opnd::Dyn(r, Ty::Bool)
    }

    /// `c ? a : b` with both sides evaluated (they are pure), as a `select`.
    fn translate_select(&mut self, c: &Expr, a: &Expr, b: &Expr) -> Result<Opnd> {
        let c = self.expr_as(c, Ty::Bool)?;
        let (a, b) = (self.expr(a)?, self.expr(b)?);
        if a.ty() != b.ty() {
            return Err(ill_typed(format_args!(
                "select of {} and {}",
                a.ty().name(),
                b.ty().name()
            )));
        }
        if let Opnd::Const(c) = c {
            return Ok(if c.b() { a } else { b });
        }
        let (c, x, y) = (self.value(c), self.value(a), self.value(b));
        // select(not c, x, y) is select(c, y, x): Cranelift can then fuse the compare behind `c`
        // into the conditional move.
        let (c, x, y) = match self.negated(c) {
            Some(inner) => (inner, y, x),
            None => (c, x, y),
        };
        // Cranelift lowers a float select to a branch, which mispredicts on data (a NaN test on
        // noisy pixels). Min and max shapes keep the float select, which becomes one
        // `minsd`/`maxsd`; the others become branch-free.
        if a.ty() == Ty::F64 && !self.is_min_or_max(c, x, y) {
            if let Some((cc, p, q)) = self.float_compare(c) {
                // Of a float compare: the compare as a lane mask (`cmppd`) and a blend. A
                // `ucomisd` and a `cmov` through integer registers would cost as many
                // instructions, three of them bound to one execution port, which an unrolled
                // NaN-aware sum saturates (measured: 10% of a 3x3 NaN-aware mean through scipy).
                let v = |t: &mut Self, e: Value| t.b.ins().splat(types::F64X2, e);
                let (pv, qv, xv, yv) = (v(self, p), v(self, q), v(self, x), v(self, y));
                let mask = self.b.ins().fcmp(cc, pv, qv);
                let flags = cranelift_codegen::ir::MemFlagsData::new();
                let mask = self.b.ins().bitcast(types::F64X2, flags, mask);
                let r = self.b.ins().bitselect(mask, xv, yv);
                return Ok(Opnd::Dyn(self.b.ins().extractlane(r, 0), Ty::F64));
            }
            // Of another condition: selected as integers, a `cmov`.
            let flags = cranelift_codegen::ir::MemFlagsData::new();
            let xi = self.b.ins().bitcast(types::I64, flags, x);
            let yi = self.b.ins().bitcast(types::I64, flags, y);
            let r = self.b.ins().select(c, xi, yi);
            return Ok(Opnd::Dyn(
                self.b.ins().bitcast(types::F64, flags, r),
                Ty::F64,
            ));
        }
        Ok(Opnd::Dyn(self.b.ins().select(c, x, y), a.ty()))
    }

    /// `(cc, p, q)` when `c` is `fcmp cc p, q` of two f64s, with `cc` one of the conditions the IR
    /// produces (each of which x86's packed compares express).
    fn float_compare(&self, c: Value) -> Option<(FloatCC, Value, Value)> {
        use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, _) = dfg.value_def(c) else {
            return None;
        };
        match dfg.insts[inst] {
            InstructionData::FloatCompare {
                opcode: Opcode::Fcmp,
                cond,
                args: [p, q],
            } if dfg.value_type(p) == types::F64
                && matches!(
                    cond,
                    FloatCC::Equal
                        | FloatCC::NotEqual
                        | FloatCC::LessThan
                        | FloatCC::LessThanOrEqual
                        | FloatCC::GreaterThan
                        | FloatCC::GreaterThanOrEqual
                        | FloatCC::Ordered
                        | FloatCC::Unordered
                ) =>
            {
                Some((cond, p, q))
            }
            _ => None,
        }
    }

    /// `c` when `v` is `c ^ 1` (how `not` is lowered).
    fn negated(&self, v: Value) -> Option<Value> {
        use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, _) = dfg.value_def(v) else {
            return None;
        };
        let one = |v: Value| match dfg.value_def(v) {
            ValueDef::Result(i, _) => matches!(
                dfg.insts[i],
                InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } if imm.bits() == 1
            ),
            _ => false,
        };
        match dfg.insts[inst] {
            InstructionData::Binary {
                opcode: Opcode::Bxor,
                args: [a, b],
            } if dfg.value_type(a) == types::I8 => {
                if one(b) {
                    Some(a)
                } else if one(a) {
                    Some(b)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Whether `select(c, x, y)` is `select(x < y, x, y)` or `select(y < x, x, y)` (a float
    /// minimum or maximum in x86's own `minsd`/`maxsd` semantics).
    fn is_min_or_max(&self, c: Value, x: Value, y: Value) -> bool {
        use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, _) = dfg.value_def(c) else {
            return false;
        };
        // The same value, or equal constants (each use of a constant is its own `f64const`).
        let same = |a: Value, b: Value| {
            let imm = |v: Value| match dfg.value_def(v) {
                ValueDef::Result(i, _) => match dfg.insts[i] {
                    InstructionData::UnaryIeee64 {
                        opcode: Opcode::F64const,
                        imm,
                    } => Some(imm.bits()),
                    _ => None,
                },
                _ => None,
            };
            a == b || imm(a).is_some() && imm(a) == imm(b)
        };
        match dfg.insts[inst] {
            InstructionData::FloatCompare {
                opcode: Opcode::Fcmp,
                args: [p, q],
                cond: FloatCC::LessThan,
            } => same(p, x) && same(q, y) || same(p, y) && same(q, x),
            _ => false,
        }
    }

    /// A math function: a call to the same `extern "C"` shim the interpreter calls.
    fn translate_call(&mut self, f: MathFn, args: &[Expr]) -> Result<Opnd> {
        let mut xs = Vec::with_capacity(args.len());
        for a in args {
            xs.push(self.expr_as(a, Ty::F64)?);
        }
        self.call_math(f, xs)
    }

    /// `f(xs)` of translated arguments (already f64): folded when all are constants.
    pub(super) fn call_math(&mut self, f: MathFn, xs: Vec<Opnd>) -> Result<Opnd> {
        if xs.len() != f.arity() {
            return Err(codegen_error(format!(
                "{} takes {} arguments, got {}",
                f.name(),
                f.arity(),
                xs.len()
            )));
        }
        if let Some(consts) = xs
            .iter()
            .map(|x| {
                if let Opnd::Const(c) = x {
                    Some(c.f())
                } else {
                    None
                }
            })
            .collect::<Option<Vec<f64>>>()
        {
            return Ok(Opnd::Const(Val::F(eval::call(f, &consts))));
        }
        let vals: Vec<Value> = xs.into_iter().map(|x| self.value(x)).collect();
        if let (MathFn::Fma, [a, b, c]) = (f, &vals[..]) {
            // Cranelift's own: one instruction where the CPU has FMA, else the C library's
            // `fma` (correctly rounded, as the shim's `mul_add`).
            return Ok(Opnd::Dyn(self.b.ins().fma(*a, *b, *c), Ty::F64));
        }
        let r = self
            .call(Callee::Math(f), &vals)?
            .ok_or_else(|| codegen_error("math shim without result"))?;
        Ok(Opnd::Dyn(r, Ty::F64))
    }
}

/// The condition of an IR comparison of two f64: IEEE, ordered except `Ne`.
pub(super) fn float_cc(op: CmpOp) -> FloatCC {
    match op {
        CmpOp::Lt => FloatCC::LessThan,
        CmpOp::Le => FloatCC::LessThanOrEqual,
        CmpOp::Gt => FloatCC::GreaterThan,
        CmpOp::Ge => FloatCC::GreaterThanOrEqual,
        CmpOp::Eq => FloatCC::Equal,
        CmpOp::Ne => FloatCC::NotEqual,
    }
}

/// The condition of an IR comparison of two i64: signed.
pub(super) fn int_cc(op: CmpOp) -> IntCC {
    match op {
        CmpOp::Lt => IntCC::SignedLessThan,
        CmpOp::Le => IntCC::SignedLessThanOrEqual,
        CmpOp::Gt => IntCC::SignedGreaterThan,
        CmpOp::Ge => IntCC::SignedGreaterThanOrEqual,
        CmpOp::Eq => IntCC::Equal,
        CmpOp::Ne => IntCC::NotEqual,
    }
}

/// The operand types `eval::binary` accepts for each operator.
fn binary_accepts(op: BinOp, ty: Ty) -> bool {
    use BinOp::*;
    match ty {
        Ty::F64 => matches!(op, Add | Sub | Mul | Div | Min | Max | PyMin | PyMax),
        Ty::I64 => op != Div,
        Ty::Bool => matches!(op, And | Or | Xor | Min | Max | PyMin | PyMax),
    }
}

/// Folds a binary operation on constants through `eval::binary`, except the integer divisions
/// whose shims cannot take the operands (a zero divisor, which valid IR never reaches, and
/// `MIN // -1`, computed here as the IR defines it: wrapping).
fn fold_binary(op: BinOp, x: Val, y: Val) -> Option<Val> {
    match (op, x, y) {
        (BinOp::FloorDiv | BinOp::Mod, _, Val::I(0)) => None,
        (BinOp::FloorDiv, Val::I(a), Val::I(-1)) => Some(Val::I(a.wrapping_neg())),
        (BinOp::Mod, _, Val::I(-1)) => Some(Val::I(0)),
        _ => Some(eval::binary(op, x, y)),
    }
}

fn ill_typed(what: std::fmt::Arguments<'_>) -> crate::error::Error {
    codegen_error(format!("ill-typed IR: {what}"))
}
