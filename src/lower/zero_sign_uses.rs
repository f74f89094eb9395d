//! Which zero an extreme or a quantile returns, where no use can tell.
//!
//! Where `np.min`, `np.max`, `np.nanmin`, `np.nanmax`, `np.ptp`, `np.percentile` or
//! `np.quantile` (functions or methods) of values holding both `0.0` and `-0.0` gives a zero,
//! NumPy's choice of zero depends on its SIMD code and the CPU, so the lowering guards them
//! (`numpy/zero_signs.rs`): the filter raises `ValueError` there. Many uses cannot tell the two
//! zeros apart: comparisons (`w[4] == w.max()`), tests, `abs`, `int()`, `bool()`, `round()` to an
//! int, `math.floor`/`ceil`/`trunc`, `np.isnan`. The walk of `fate.rs`, with the rules below,
//! finds the calls whose result reaches only such uses (through names, choices, helpers'
//! parameters and returns); their guard is left out. Anything else, the filter's result
//! included, may tell them apart, as do operators (`1 / m`), which hand the sign on.
//!
//! The same holds for the arrays of `np.sort` and `np.unique`, which are guarded wherever they
//! sort both zeros: where only their size is read (`len(np.unique(x))`, the count of distinct
//! values), their guard is left out too.

use super::fate::{self, Callee, Fate, Rules, Scope, Verdict};
use super::names::{Builtin, Func, Module};
use crate::error::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Keyword, UnaryOp};
use crate::syntax::Program;
use std::collections::HashSet;

/// The spans of the guarded calls of `program` whose result, if it is a zero, reaches no use
/// that tells `0.0` from `-0.0`, and of the sorts (`np.sort`, `np.unique`) whose array reaches
/// only uses that count it.
pub(super) fn sign_blind_calls(program: &Program, callee: Callee) -> HashSet<Span> {
    let mut blind = fate::followed(program, &ZeroSign, (&[], callee), Verdict::Agrees);
    blind.extend(fate::followed(
        program,
        &SortedZeros,
        (&[], callee),
        Verdict::Agrees,
    ));
    blind
}

/// The guarded functions, as [`Func`]s.
fn guarded(f: Func) -> bool {
    use Func::*;
    matches!(
        f,
        Min | Max | Nanmin | Nanmax | Ptp | Percentile | Quantile | Nanpercentile | Nanquantile
    )
}

/// The rules for a zero whose sign ndjit does not know.
struct ZeroSign;

impl Rules for ZeroSign {
    fn follows(&self, s: &Scope, e: &Expr) -> bool {
        let ExprKind::Call { func, .. } = &e.kind else {
            return false;
        };
        if let Some(b) = s.builtin(func) {
            return b.module == Module::Np && guarded(b.func);
        }
        // A method (`w.max()`): an array's, whatever the receiver.
        matches!(&func.kind, ExprKind::Attribute(_, name)
            if matches!(name.as_str(), "min" | "max" | "ptp"))
    }

    /// Operators hand the sign on (`1 / m`, `-m`, `m * 2`): the result's fate is the operand's.
    fn operand(&self, _: &Scope, op: BinOp, fate: Fate, _: &Expr, _: &Expr, _: bool) -> Fate {
        fate::sign_handed_on(op, fate)
    }

    fn unary(&self, op: UnaryOp, fate: Fate) -> Fate {
        fate::sign_handed_on_unary(op, fate)
    }

    fn argument(&self, b: Builtin, (n, keywords): (usize, &[Keyword]), fate: Fate) -> Fate {
        use Func::*;
        let one = n == 1 && keywords.is_empty();
        match (b.module, b.func) {
            // A magnitude, a truth value, an int, or a test of the value.
            (Module::Builtin, Abs | Bool | Int) => Fate::Agrees,
            (Module::Builtin, Round) if one => Fate::Agrees,
            (Module::Math, Floor | Ceil | Trunc | Fabs | IsNan | IsInf | IsFinite) => Fate::Agrees,
            (Module::Np, Abs | IsNan | IsInf | IsFinite) => Fate::Agrees,
            // `float(m)` is the same zero.
            (Module::Builtin, Float) => fate,
            _ => Fate::Differs,
        }
    }

    fn updated_in_place(&self) -> bool {
        false
    }

    /// The filter's result: scipy stores the zero itself.
    fn result(&self) -> Fate {
        Fate::Differs
    }
}

/// The rules for a sorted array whose zeros' signs ndjit does not know (`np.sort`, `np.unique`
/// of values holding both `0.0` and `-0.0`): its size tells nothing of them
/// (`len(np.unique(x))`, the count of distinct values, `np.sort(x).size`); anything that reads
/// its items may.
struct SortedZeros;

impl Rules for SortedZeros {
    fn follows(&self, s: &Scope, e: &Expr) -> bool {
        let ExprKind::Call { func, .. } = &e.kind else {
            return false;
        };
        s.builtin(func)
            .is_some_and(|b| b.module == Module::Np && matches!(b.func, Func::Sort | Func::Unique))
    }

    fn operand(&self, _: &Scope, _: BinOp, _: Fate, _: &Expr, _: &Expr, _: bool) -> Fate {
        Fate::Differs
    }

    fn unary(&self, _: UnaryOp, _: Fate) -> Fate {
        Fate::Differs
    }

    fn argument(&self, b: Builtin, (n, keywords): (usize, &[Keyword]), _: Fate) -> Fate {
        let one = n == 1 && keywords.is_empty();
        match (b.module, b.func) {
            (Module::Builtin, Func::Len) | (Module::Np, Func::Size) if one => Fate::Agrees,
            _ => Fate::Differs,
        }
    }

    /// `v += 1` changes the array itself.
    fn updated_in_place(&self) -> bool {
        true
    }

    fn attribute(&self, name: &str, _: Fate) -> Fate {
        match name {
            "size" | "shape" | "ndim" => Fate::Agrees,
            _ => Fate::Differs,
        }
    }

    /// A filter's result is a number, not an array.
    fn result(&self) -> Fate {
        Fate::Differs
    }
}
