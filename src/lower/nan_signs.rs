//! The sign of a NaN, which `copysign` reads. NumPy and CPython copy a NaN's sign bit, and a
//! NaN's sign is how it was made (`np.sqrt(-1.0)` is negative on x86) or which of its values'
//! NaNs a function passed on (`np.percentile`, `np.min`); ndjit's arithmetic and runtime
//! routines do not carry those signs (README, *Known deviations*). A NaN that comes from the
//! input or a bound value and is only moved (assigned, selected, stored, negated) keeps its bits
//! in every backend, so its sign is NumPy's; a sort moves NaNs too, but orders NaNs of different
//! bits as its own algorithm does, not as NumPy's.
//!
//! `math.copysign` and `np.copysign` therefore emit a guard: a check that raises `ValueError`
//! where the sign operand is a NaN and the magnitude is not ([`refuse_nan_sign`]). Once the whole function is lowered,
//! [`drop_exact_guards`] removes the guards whose operand is *faithful*: every value it can be
//! is an input's or bound value's NaN moved, or no NaN at all (a flow-insensitive fixed point
//! over the function's variables and arrays). The others stay: the filter raises there rather
//! than guess a sign. A call whose result no use reads the sign of gets no guard at all
//! (`nan_sign_uses.rs`).

use super::{not, Translator};
use crate::error::{Exception, Span};
use crate::ir::{ArrKind, ErrorId, Expr, Func, Stmt, Ty, UnOp};

/// A guard emitted for `copysign`: its check's error, and the sign operand (one element of it,
/// for arrays) whose NaNs it refuses.
pub(super) type Guard = (ErrorId, Expr);

/// Where `copysign(x, y)` shows the sign of a NaN: `y` is a NaN and `x` is not (of a NaN `x`
/// the result is a NaN, whose bits are not NumPy's anyway; a later copysign of it is guarded
/// itself).
pub(in crate::lower) fn shows_nan_sign(x: &Expr, y: &Expr) -> Expr {
    use crate::lower::expr::{bin, un};
    bin(
        crate::ir::BinOp::And,
        un(UnOp::IsNan, y.clone()),
        not(un(UnOp::IsNan, x.clone())),
    )
}

/// Emits the guard: raises `ValueError` where `nan`, for the sign operand `operand`.
pub(in crate::lower) fn refuse_nan_sign(
    t: &mut Translator,
    nan: Expr,
    operand: Expr,
    name: &str,
    span: Span,
) {
    if t.unread_copysigns.contains(&span) {
        return; // no use reads the result's sign (`nan_sign_uses.rs`)
    }
    let message = format!(
        "{name} of a NaN made by arithmetic or by a function: the sign NumPy gives such a NaN \
         depends on how it was made, which ndjit does not reproduce (test the value with \
         np.isnan first, or use np.sign)"
    );
    let err = t.site(Exception::ValueError, &message, span);
    t.emit(Stmt::Check {
        cond: not(nan),
        err,
        a: Expr::I64(0),
        b: Expr::I64(0),
    });
    t.nan_sign_guards.push((err, operand));
}

/// Removes from `func` the guards whose operand is faithful (module docs).
pub(super) fn drop_exact_guards(func: &mut Func, guards: &[Guard]) {
    if guards.is_empty() {
        return;
    }
    let faithful = Faithful::of(func);
    let exact: Vec<ErrorId> = guards
        .iter()
        .filter(|(_, operand)| faithful.expr(func, operand))
        .map(|(err, _)| *err)
        .collect();
    if !exact.is_empty() {
        drop_checks(&mut func.body, &exact);
    }
}

fn drop_checks(stmts: &mut Vec<Stmt>, errs: &[ErrorId]) {
    stmts.retain(|s| !matches!(s, Stmt::Check { err, .. } if errs.contains(err)));
    for s in stmts.iter_mut() {
        match s {
            Stmt::If(_, a, b) | Stmt::Loop { body: a, latch: b } => {
                drop_checks(a, errs);
                drop_checks(b, errs);
            }
            Stmt::MedianNetwork { fallback, .. } => drop_checks(fallback, errs),
            _ => {}
        }
    }
}

/// Which variables and arrays hold only faithful values.
struct Faithful {
    vars: Vec<bool>,
    arrays: Vec<bool>,
}

impl Faithful {
    fn of(func: &Func) -> Faithful {
        let mut f = Faithful {
            vars: vec![true; func.vars.len()],
            arrays: vec![true; func.arrays.len()],
        };
        // Each round only clears marks, so this ends within vars + arrays rounds.
        while f.round(func, &func.body) {}
        f
    }

    /// One pass over `stmts`: clears the marks of what an unfaithful value is written to;
    /// whether any changed.
    fn round(&mut self, func: &Func, stmts: &[Stmt]) -> bool {
        let mut changed = false;
        for s in stmts {
            let (var, arr) = match s {
                Stmt::Assign(v, e) => (Some(*v).filter(|_| !self.expr(func, e)), None),
                // A reduction's or a runtime routine's NaN is its own.
                Stmt::Reduce { dst, .. }
                | Stmt::Sorted { dst, .. }
                | Stmt::MedianNetwork { dst, .. } => (Some(*dst), None),
                Stmt::Fill { dst, elem, .. } => {
                    (None, Some(*dst).filter(|_| !self.expr(func, elem)))
                }
                Stmt::Store(a, _, v) => (None, Some(*a).filter(|_| !self.expr(func, v))),
                // A sort orders NaNs of different bits as its algorithm does, NumPy's as its.
                Stmt::ArrayOp(_, a) => (None, Some(*a)),
                _ => (None, None),
            };
            if let Some(v) = var.filter(|v| func.var_ty(*v) == Ty::F64) {
                changed |= std::mem::replace(&mut self.vars[v.0 as usize], false);
            }
            if let Some(a) = arr {
                changed |= std::mem::replace(&mut self.arrays[a.0 as usize], false);
            }
            crate::ir::stmt_blocks(s, |b| changed |= self.round(func, b));
        }
        changed
    }

    /// Whether every NaN `e` can be is an input's or bound value's, moved.
    fn expr(&self, func: &Func, e: &Expr) -> bool {
        if e.ty(func) != Ty::F64 {
            return true; // no NaN at all
        }
        match e {
            Expr::F64(_) | Expr::Param(_) => true,
            Expr::Var(v) => self.vars[v.0 as usize],
            Expr::Load(a, _) => {
                matches!(
                    func.arrays[a.0 as usize].kind,
                    ArrKind::Buffer | ArrKind::Bound(_)
                ) || self.arrays[a.0 as usize]
            }
            Expr::Select(_, a, b) => self.expr(func, a) && self.expr(func, b),
            // Negation flips the sign bit in NumPy and in every backend; abs clears it.
            Expr::Unary(UnOp::Neg, x) => self.expr(func, x),
            Expr::Unary(UnOp::Abs, _) => true,
            // A cast to f64 of an int or bool is never a NaN.
            Expr::Cast(_, x) => x.ty(func) != Ty::F64,
            _ => false,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use crate::{Bindings, Filter};

    /// Whether the lowered filter still holds a NaN-sign guard.
    pub(in crate::lower) fn guarded(src: &str) -> bool {
        let f = Filter::compile(src, &Bindings::new()).unwrap();
        let ir = f.ir();
        crate::ir::any_stmt(&ir.body, &|s| {
            matches!(s, crate::ir::Stmt::Check { err, .. }
                if ir.errors[err.0 as usize].message.contains("a NaN made by arithmetic"))
        })
    }

    /// The guard stays where the sign operand may be a NaN that arithmetic or a function made,
    /// and goes where every NaN it can be is the input's or a bound value's, moved.
    #[test]
    fn guards_stay_only_where_a_nans_sign_may_not_be_numpys() {
        for (src, kept) in [
            ("np.copysign(1.0, x[4])", false),
            ("np.copysign(1.0, -x[4])", false),
            ("math.copysign(2.0, x[0] if x[1] > 0 else x[2])", false),
            ("np.copysign(1.0, x.clip(0.0)[4])", false),
            ("np.copysign(1.0, np.sort(x)[2])", true),
            ("math.copysign(1.0, len(x))", false),
            ("np.copysign(1.0, np.sqrt(x[0]))", true),
            ("math.copysign(2.0, x[0] - x[1])", true),
            ("np.copysign(0.5, np.percentile(x, 90))", true),
            ("np.copysign(0.5, np.min(x))", true),
            ("np.sum(np.copysign(1.0, x * 2.0))", true),
            ("def f(x):\n    m = x[0]\n    for v in x:\n        m = m + v\n    return np.copysign(1.0, m)", true),
        ] {
            assert_eq!(guarded(src), kept, "{src}");
        }
    }

    /// Where it stays, a NaN operand raises `ValueError`; a number is copysign's own result.
    #[test]
    fn a_kept_guard_raises_on_a_nan_only() {
        let f = Filter::compile("np.copysign(1.0, np.sqrt(x[0]))", &Bindings::new()).unwrap();
        assert_eq!(f.call(&[4.0, 1.0]).unwrap(), 1.0);
        assert_eq!(f.call(&[-0.0, 1.0]).unwrap(), -1.0);
        let e = f.call(&[-1.0, 1.0]).unwrap_err();
        assert_eq!(e.exception, crate::error::Exception::ValueError, "{e}");
        assert!(e.to_string().contains("NaN made by arithmetic"), "{e}");
        // Of a NaN magnitude the result is a NaN either way: nothing is refused.
        let g = Filter::compile("np.copysign(x[0], np.sqrt(x[1]))", &Bindings::new()).unwrap();
        assert!(g.call(&[f64::NAN, -1.0]).unwrap().is_nan());
        assert!(g.call(&[2.0, -1.0]).is_err());
        let kept = Filter::compile("np.copysign(1.0, x[0])", &Bindings::new()).unwrap();
        assert_eq!(kept.call(&[-f64::NAN, 1.0]).unwrap(), -1.0);
        assert_eq!(kept.call(&[f64::NAN, 1.0]).unwrap(), 1.0);
    }
}
