//! Python ints held as floats.
//!
//! A value that is an int on one path and a float on another (`r = 0` then `r = v` in a loop,
//! Python's `max(v, 0)`, `b and 2.5`) has one IR type, `F64`. Python keeps the int an int: `-r`
//! of the int 0 is 0 where a float's is `-0.0`, a NumPy int's `r // 0` is 0 where a float's is
//! NaN, and `r * r` is exact past 2**53. So such a value carries a run-time flag, "holds an int"
//! (as provenance carries "is a Python number", `provenance.rs`); its double holds the int
//! exactly (an int a double cannot hold raises where it is stored, never rounds); and Python's
//! operators, comparisons and NumPy's functions of numbers branch on the flags of their operands:
//! the int lowering where every operand holds an int, the float lowering otherwise. Where a dtype
//! would depend on the path (a list or array built from such values, one combined with an int
//! array) the value is refused rather than taken for a float.

use super::numpy::{exact_in_double, EXACT_INT};
use super::provenance::Prov;
use super::Translator;
use crate::error::{Exception, Result, Span};
use crate::ir::{BinOp, Expr, Stmt, Ty, Var};

impl Translator<'_> {
    /// The run-time flag "holds an int" of a float-typed scalar, `None` where it is surely a
    /// float. Only variables carry flags (Python's `abs` gives its result one, `math.fabs` and
    /// `np.fabs` do not), and a select chooses one.
    pub(crate) fn int_flag(&self, e: &Expr) -> Option<Expr> {
        match e {
            Expr::Var(v) => self.var_int.get(v).cloned(),
            Expr::Select(c, a, b) => match (self.int_flag(a), self.int_flag(b)) {
                (None, None) => None,
                (fa, fb) => Some(Expr::Select(
                    c.clone(),
                    fa.unwrap_or(Expr::Bool(false)).boxed(),
                    fb.unwrap_or(Expr::Bool(false)).boxed(),
                )),
            },
            _ => None,
        }
    }

    /// "Is an int" of a scalar of type `ty`: an int or a bool type is one; a float may hold one.
    pub(crate) fn holds_int(&self, e: &Expr, ty: Ty) -> Option<Expr> {
        if ty == Ty::F64 {
            self.int_flag(e)
        } else {
            Some(Expr::Bool(true))
        }
    }

    /// Whether one of two values joined as floats (`a if c else b`, `a or b`, `max(a, b)`) may
    /// be an int, so that the joined value needs a flag.
    pub(crate) fn joins_an_int(&self, ty: Ty, (a, ta): (&Expr, Ty), (b, tb): (&Expr, Ty)) -> bool {
        ty == Ty::F64 && (self.holds_int(a, ta).is_some() || self.holds_int(b, tb).is_some())
    }

    /// The statement that refuses, at run time, an int a double cannot hold exactly, where it
    /// is stored beside floats (`exact_in_double`: up to 2**53 in magnitude).
    pub(crate) fn exact_int_check(&mut self, int: Expr, span: Span) -> Stmt {
        let err = self.site(
            Exception::OverflowError,
            "the int {a}, a float on another path, is held in a double, exact only up to 2**53 \
             in magnitude",
            span,
        );
        Stmt::Check {
            cond: exact_in_double(int.clone()),
            err,
            a: int,
            b: Expr::I64(0),
        }
    }

    /// `r = a` in `then`, `r = b` in `els`, joined as floats: `r` gets a flag assigned alongside
    /// (true where an int arm runs), and an int arm is checked to fit a double. `a` and `b`
    /// are the arms before their conversion to the joined type.
    pub(crate) fn branch_int(
        &mut self,
        r: Var,
        (a, ta, then): (&Expr, Ty, &mut Vec<Stmt>),
        (b, tb, els): (&Expr, Ty, &mut Vec<Stmt>),
        span: Span,
    ) {
        let flag = self.temp(Ty::Bool);
        for (e, ty, block) in [(a, ta, then), (b, tb, els)] {
            if ty == Ty::I64 {
                block.push(self.exact_int_check(e.clone(), span));
            }
            let holds = self.holds_int(e, ty).unwrap_or(Expr::Bool(false));
            block.push(Stmt::Assign(flag, holds));
        }
        self.var_int.insert(r, Expr::Var(flag));
    }

    /// Records what an assignment stores in a float variable (an int or a float, by a flag) and
    /// keeps its shadow flag; `value` is the scalar before its conversion.
    pub(crate) fn assign_int(
        &mut self,
        name: &str,
        var: Var,
        (value, ty): (&Expr, Ty),
        span: Span,
    ) {
        let Some(holds) = self.holds_int(value, ty) else {
            if let Some(Expr::Var(shadow)) = self.var_int.get(&var).cloned() {
                self.emit(Stmt::Assign(shadow, Expr::Bool(false)));
            }
            return;
        };
        // Learned for the next pass, which declares the shadow flag (see `lower`).
        self.int_names_seen.insert(name.to_string());
        if ty == Ty::I64 {
            let check = self.exact_int_check(value.clone(), span);
            self.emit(check);
        }
        // Seen for the first time: a shadow from here on speeds the next pass's discoveries
        // (a copy `s = r` of a flagged `r` flags `s`); this pass is repeated anyway.
        let shadow = match self.var_int.get(&var) {
            Some(Expr::Var(shadow)) => *shadow,
            _ => self.new_shadow(name, var),
        };
        self.emit(Stmt::Assign(shadow, holds));
    }

    fn new_shadow(&mut self, name: &str, var: Var) -> Var {
        let shadow = self.new_var(Ty::Bool, &format!("{name}.is_int"));
        self.var_int.insert(var, Expr::Var(shadow));
        shadow
    }

    /// Declares the shadow flag of a float variable that earlier passes saw hold an int.
    pub(crate) fn declare_int(&mut self, name: &str, var: Var, ty: Ty) {
        if ty == Ty::F64 && self.int_names.contains(name) {
            self.new_shadow(name, var);
        }
    }

    /// Whether an operator needs [`Self::int_or_float`]: every operand is an int or a float that
    /// may hold one, and at least one is such a float. (With a surely-float operand Python
    /// computes in floats, and the double holding an int exactly gives the same bits.)
    pub(crate) fn ints_by_flag(&self, operands: &[(&Expr, Ty)]) -> Option<Expr> {
        let flagged = operands
            .iter()
            .any(|(e, ty)| *ty == Ty::F64 && self.int_flag(e).is_some());
        if !flagged {
            return None;
        }
        let mut all = Expr::Bool(true);
        for (e, ty) in operands {
            let holds = self.holds_int(e, *ty)?;
            all = match all {
                Expr::Bool(true) => holds,
                all => Expr::Binary(BinOp::And, all.boxed(), holds.boxed()),
            };
        }
        Some(all)
    }

    /// The same value seen as an int (where its flag holds) and as a float, each with its
    /// provenance and no flag, for the two lowerings of [`Self::int_or_float`].
    pub(crate) fn int_and_float_views(&mut self, e: Expr, ty: Ty) -> ((Expr, Ty), (Expr, Ty)) {
        if ty != Ty::F64 || self.int_flag(&e).is_none() {
            return ((e.clone(), ty), (e, ty));
        }
        let f = self.float_only(e);
        // The int is exact in the double (`exact_in_double`): clamped to the range that says
        // so, changing nothing, its range bounds the checks of the int lowering
        // (`ir::ranges`: `-r` cannot overflow, `r + 1` cannot leave 64 bits).
        let int = Expr::Cast(Ty::I64, f.clone().boxed());
        let int = Expr::Binary(BinOp::Max, int.boxed(), Expr::I64(-EXACT_INT).boxed());
        let int = Expr::Binary(BinOp::Min, int.boxed(), Expr::I64(EXACT_INT).boxed());
        ((int, Ty::I64), (f, Ty::F64))
    }

    /// `lower` of scalar operands some of which may be ints held as floats: lowered for their
    /// int views and for their float views, the one that runs chosen by their flags
    /// ([`Self::int_or_float`]). `None` where no operand is flagged: the caller lowers them once.
    pub(crate) fn by_int_flags(
        &mut self,
        operands: &[(&Expr, Ty)],
        span: Span,
        lower: impl Fn(&mut Self, &[(Expr, Ty)]) -> Result<(Expr, Ty)>,
    ) -> Result<Option<(Expr, Ty)>> {
        let Some(ints) = self.ints_by_flag(operands) else {
            return Ok(None);
        };
        let (as_ints, as_floats): (Vec<_>, Vec<_>) = operands
            .iter()
            .map(|(e, ty)| self.int_and_float_views((*e).clone(), *ty))
            .unzip();
        let lower = &lower;
        self.int_or_float(ints, span, |t| lower(t, &as_ints), |t| lower(t, &as_floats))
            .map(Some)
    }

    /// An operator on values that may be ints held as floats: `as_int` lowers it for ints,
    /// taken where `ints` holds, `as_float` for floats. Where both give the same type other than
    /// a float (`np.int64(r)`, `np.logical_not(r)`), the result has it; otherwise it is a float
    /// variable, flagged where the lowering that ran gave an int (held exactly, or refused).
    pub(crate) fn int_or_float(
        &mut self,
        ints: Expr,
        span: Span,
        as_int: impl FnOnce(&mut Self) -> Result<(Expr, Ty)>,
        as_float: impl FnOnce(&mut Self) -> Result<(Expr, Ty)>,
    ) -> Result<(Expr, Ty)> {
        let ints = self.stable(ints, Ty::Bool);
        let ((ri, ti), mut then) = self.nested(as_int)?;
        let ((rf, tf), mut els) = self.nested(as_float)?;
        let ty = if ti == tf { ti } else { Ty::F64 };
        if ty != Ty::Bool && (ti == Ty::Bool || tf == Ty::Bool) {
            self.refuse_bool_join(span);
        }
        let r = self.temp(ty);
        self.branch_prov(r, (&ri, &mut then), (&rf, &mut els));
        if ty == Ty::F64 {
            self.branch_int(r, (&ri, ti, &mut then), (&rf, tf, &mut els), span);
        }
        then.push(Stmt::Assign(r, super::expr::convert(ri, ti, ty)));
        els.push(Stmt::Assign(r, super::expr::convert(rf, tf, ty)));
        self.emit(Stmt::If(ints, then, els));
        Ok((Expr::Var(r), ty))
    }

    /// `e` in a new variable that keeps its provenance and holds an int where `flag` does.
    pub(crate) fn flagged(&mut self, e: Expr, ty: Ty, flag: Expr) -> Expr {
        // Its provenance, like its flag, is copied now (see `keep_flag`).
        let p = match self.prov(&e) {
            Prov::Dyn(f) => Prov::Dyn(self.stable(f, Ty::Bool)),
            p => p,
        };
        let v = self.temp(ty);
        self.emit(Stmt::Assign(v, e));
        self.var_prov.insert(v, p);
        self.keep_flag(v, Some(flag));
        Expr::Var(v)
    }

    /// Gives the temporary `v` the flag of the value it was assigned, copied now: the flag may
    /// be a user variable's shadow, reassigned before `v` is read.
    pub(crate) fn keep_flag(&mut self, v: Var, flag: Option<Expr>) {
        if let Some(flag) = flag {
            let flag = self.stable(flag, Ty::Bool);
            self.var_int.insert(v, flag);
        }
    }

    /// The value as a float: a copy without the flag where it may hold an int.
    pub(crate) fn float_only(&mut self, e: Expr) -> Expr {
        if self.int_flag(&e).is_none() {
            return e;
        }
        let p = self.prov(&e);
        let f = self.temp(Ty::F64);
        self.emit(Stmt::Assign(f, e));
        self.var_prov.insert(f, p);
        Expr::Var(f)
    }

    /// Whether a tuple or list display holds ints (or bools) and floats: read at a run-time
    /// index, or ranked, its items would all be floats.
    pub(crate) fn ints_and_floats(&self, items: &[super::Value]) -> bool {
        let scalars = || {
            items.iter().filter_map(|v| match v {
                super::Value::Scalar(e, ty) => Some((e, *ty)),
                _ => None,
            })
        };
        let floats = scalars().any(|(_, ty)| ty == Ty::F64);
        let ints = scalars().any(|(e, ty)| ty != Ty::F64 || self.int_flag(e).is_some());
        // (A NumPy bool among numbers is refused as such, see `refuse_bool_join`.)
        let numpy_bools = scalars().any(|(e, ty)| self.is_numpy_bool(e, ty));
        floats && ints && !numpy_bools
    }

    /// Refuses a value that may be an int held as a float where its consumer cannot branch on
    /// it (`what` names the consumer); `false` passes.
    pub(crate) fn refuse_int_or_float(&mut self, flagged: bool, span: Span, what: &str) {
        if !flagged {
            return;
        }
        self.refuse_unsupported(
            span,
            format!(
                "a value that is an int on one path and a float on another, {what}: the result \
                 would depend on which"
            ),
            "make it one kind: float(v) (or write the int as 0.0), or int(v)",
        );
    }
}
