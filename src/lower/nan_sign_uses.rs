//! Which `copysign` calls no use can read: their NaN-sign guard (`nan_signs.rs`) is left out.
//!
//! `copysign(x, y)` of a NaN `y` made by arithmetic is `±|x|`, with a sign ndjit does not know,
//! so the lowering guards it: the filter raises `ValueError` there. Where the result reaches no
//! use at all (a name never read, an expression statement), or only uses that give the same for
//! `+|x|` and `-|x|` (`abs`, `math.fabs`, `np.abs`, `bool`, `not`, `np.isnan`, `np.isinf`,
//! `np.isfinite`), raising would refuse a filter whose result NumPy's sign cannot change. The
//! walk of `fate.rs` finds those calls. Everything else reads the sign: operators and `float()`
//! hand it on, comparisons and truth tests are counted as reading it (`c > 0` does), and so is
//! the filter's result.

use super::fate::{self, Callee, Fate, Rules, Scope, Verdict};
use super::names::{Func, Module};
use crate::error::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Keyword, UnaryOp};
use crate::syntax::Program;
use std::collections::HashSet;

/// The spans of the `math.copysign` and `np.copysign` calls of `program` whose result reaches
/// no use that reads its sign.
pub(super) fn sign_unread_copysigns(program: &Program, callee: Callee) -> HashSet<Span> {
    fate::followed(program, &NanSign, (&[], callee), Verdict::Agrees)
}

/// The rules for a number (or array) whose sign ndjit does not know.
struct NanSign;

impl Rules for NanSign {
    fn follows(&self, s: &Scope, e: &Expr) -> bool {
        let ExprKind::Call { func, .. } = &e.kind else {
            return false;
        };
        s.builtin(func).is_some_and(|b| {
            matches!(b.module, Module::Math | Module::Np) && b.func == Func::CopySign
        })
    }

    /// Operators hand the sign on (`2 * c`, `c - 1`); `not c` is the same for `+|x|` and `-|x|`.
    fn operand(&self, _: &Scope, op: BinOp, fate: Fate, _: &Expr, _: &Expr, _: bool) -> Fate {
        fate::sign_handed_on(op, fate)
    }

    fn unary(&self, op: UnaryOp, fate: Fate) -> Fate {
        fate::sign_handed_on_unary(op, fate)
    }

    fn argument(
        &self,
        b: crate::lower::names::Builtin,
        call: (usize, &[Keyword]),
        fate: Fate,
    ) -> Fate {
        use Func::*;
        let one = call.0 == 1 && call.1.is_empty();
        match (b.module, b.func) {
            // A magnitude, a truth value, or a test the sign does not change.
            (Module::Builtin, Abs | Bool) if one => Fate::Agrees,
            (Module::Math, Fabs | IsNan | IsInf | IsFinite) if one => Fate::Agrees,
            (Module::Np, Abs | IsNan | IsInf | IsFinite) if one => Fate::Agrees,
            (Module::Builtin, Float) if one => fate,
            _ => Fate::Differs,
        }
    }

    /// `c += 1` of an array changes it in place, and the update itself reads the sign.
    fn updated_in_place(&self) -> bool {
        true
    }

    /// `c > 0` reads the sign (a truth test would not, but both arrive here).
    fn compared(&self) -> Fate {
        Fate::Differs
    }

    fn result(&self) -> Fate {
        Fate::Differs
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::nan_signs::tests::guarded;
    use crate::{Bindings, Filter};

    /// The guard goes only where no use reads the sign of the copysign's result.
    #[test]
    fn a_guard_goes_where_no_use_reads_the_sign() {
        let body = |line: &str, ret: &str| {
            format!("def f(x):\n    s = x.sum()\n    {line}\n    return {ret}")
        };
        for (line, ret, kept) in [
            ("c = np.copysign(0.5, s)", "x[0]", false),
            ("np.copysign(0.5, s)", "x[0]", false),
            ("c = math.copysign(2.0, s)", "abs(c)", false),
            ("c = np.copysign(2.0, s) * 3.0", "np.abs(c) + x[1]", false),
            ("c = math.copysign(2.0, s)", "float(np.isnan(c))", false),
            ("c = math.copysign(2.0, s)", "1.0 if not c else 2.0", false),
            ("c = np.copysign(1.0, x * s)", "x[0]", false),
            // Read: the result, an operator's result, a comparison, an index, an int.
            ("c = math.copysign(2.0, s)", "c", true),
            ("c = math.copysign(2.0, s)", "-float(c)", true),
            ("c = math.copysign(2.0, s)", "1.0 if c > 0 else 2.0", true),
            ("c = np.copysign(1.0, x * s)", "c[0]", true),
            ("c = math.copysign(2.0, s)", "int(c)", true),
            ("c = np.copysign(1.0, x * s)\n    c += 1.0", "c.sum()", true),
        ] {
            let src = body(line, ret);
            assert_eq!(guarded(&src), kept, "{src}");
        }
    }

    /// An unread copysign of a NaN made by arithmetic no longer raises; a read one does.
    #[test]
    fn an_unread_copysign_of_a_made_nan_does_not_raise() {
        let unread = "def f(x):\n    c = np.copysign(0.5, x.sum())\n    return x[0]";
        let f = Filter::compile(unread, &Bindings::new()).unwrap();
        assert_eq!(f.call(&[3.0, f64::NAN]).unwrap(), 3.0);
        let read = "def f(x):\n    c = np.copysign(0.5, x.sum())\n    return c";
        let g = Filter::compile(read, &Bindings::new()).unwrap();
        let e = g.call(&[3.0, f64::NAN]).unwrap_err();
        assert_eq!(e.exception, crate::error::Exception::ValueError, "{e}");
    }
}
