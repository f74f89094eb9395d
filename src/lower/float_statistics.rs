//! Lists of ints and floats that only NumPy's float statistics read.
//!
//! `[0 if np.isnan(v) else v for v in x]` holds a Python int or a NumPy float by path
//! (`int_or_float.rs`). NumPy makes it a float64 array where any item is a float and an int64
//! array where none is, so most uses of such a list depend on the path, and the lowering refuses
//! them. A few do not: `np.mean`, `np.var`, `np.std`, `np.median` and their `nan` forms (but
//! `nanvar`/`nanstd` with `ddof`, NaN for floats and inf for ints past the count) take an
//! int64 array in float64, each int converted exactly (it is held exactly: `exact_in_double`),
//! and give the float64 array's bits, up to 8192 items: past them NumPy sums an int array's
//! converted items a buffer of 8192 at a time, where it sums a float array pairwise whole, and
//! the lowering raises (`MAX_ITEMS`). `len` and truth tests count either. The walk of `fate.rs`,
//! with the rules below, finds the list comprehensions whose value reaches only those (directly
//! or through names); the lowering stores their items as doubles.

use super::fate::{self, Callee, Fate, Rules, Scope, Verdict};
use super::names::{Builtin, Func, Module};
use crate::error::Span;
use crate::syntax::ast::{BinOp, CompKind, Expr, ExprKind, Keyword, UnaryOp};
use crate::syntax::Program;
use std::collections::HashSet;

/// The most items such a list may hold (NumPy's buffer size, `np.getbufsize()`).
pub(super) const MAX_ITEMS: i64 = 8192;

/// The spans of the list comprehensions of `program` whose value reaches only NumPy's float
/// statistics, `len` and truth tests.
pub(super) fn statistics_lists(program: &Program, callee: Callee) -> HashSet<Span> {
    fate::followed(program, &FloatStatistics, (&[], callee), Verdict::Agrees)
}

/// The rules for a list of ints and floats stored as doubles.
struct FloatStatistics;

impl Rules for FloatStatistics {
    fn follows(&self, _: &Scope, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Comp(c) if c.kind == CompKind::List)
    }

    /// `+` concatenates, `*` repeats: the items go on.
    fn operand(&self, _: &Scope, _: BinOp, _: Fate, _: &Expr, _: &Expr, _: bool) -> Fate {
        Fate::Differs
    }

    fn unary(&self, op: UnaryOp, _: Fate) -> Fate {
        match op {
            UnaryOp::Not => Fate::Agrees,
            _ => Fate::Differs,
        }
    }

    fn argument(&self, b: Builtin, (_, keywords): (usize, &[Keyword]), _: Fate) -> Fate {
        use Func::*;
        // `ddof` changes no dtype; `dtype=`, `axis=`, `out=` and the rest might. Past the count,
        // `ddof` gives NaN for `nanvar` of floats and inf for `nanvar` of ints (`np.var`'s).
        let ddof_only = keywords.iter().all(|k| k.name == "ddof");
        match (b.module, b.func) {
            (Module::Np, Mean | Var | Std | Median | Nanmean | Nanmedian) if ddof_only => {
                Fate::Agrees
            }
            (Module::Np, Nanvar | Nanstd) if keywords.is_empty() => Fate::Agrees,
            (Module::Builtin, Len) => Fate::Agrees,
            _ => Fate::Differs,
        }
    }

    /// `l += [v]` extends the list itself.
    fn updated_in_place(&self) -> bool {
        true
    }
}
