//! `np.where` of numbers is NumPy's 0-d array, where ndjit computes a NumPy scalar.
//!
//! `np.where(c, a, b)` with three scalars returns `array(1.5)`, not `np.float64(1.5)`. Most
//! uses cannot tell them apart: an operator or a NumPy function of a 0-d array gives a NumPy
//! scalar, and comparisons, tests, `float()`, `int()`, `math.*` and scipy's conversion of the
//! filter's result read it as its number. Some can: `round()` and `math.trunc()` of one raise
//! `TypeError`, `r += 1` changes it in place (every name that holds it sees the change, and
//! an int array refuses a float), its methods keep it an array (`a.astype(int)`), and Python's
//! `max`, `min`, choices, containers and helper functions hand the array itself on. The walk of
//! `fate.rs`, with the rules below, finds the `np.where` calls whose result may reach such a
//! use (through names, choices, helpers' parameters and returns); the lowering refuses those
//! whose operands are all scalars.

use super::fate::{self, Callee, Fate, Rules, Scope, Verdict};
use super::names::{Builtin, Func, Module};
use crate::error::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Keyword, UnaryOp};
use crate::syntax::Program;
use std::collections::HashSet;

/// The spans of the `np.where(c, a, b)` calls of `program` whose result, if it is a 0-d array,
/// may reach a use that tells it from a NumPy scalar.
pub(super) fn differing_wheres(program: &Program, callee: Callee) -> HashSet<Span> {
    fate::followed(program, &ZeroD, (&[], callee), Verdict::Differs)
}

/// The rules for a 0-d array computed as a NumPy scalar.
struct ZeroD;

impl Rules for ZeroD {
    fn follows(&self, s: &Scope, e: &Expr) -> bool {
        let where_ = Builtin {
            module: Module::Np,
            func: Func::Where,
        };
        matches!(&e.kind, ExprKind::Call { func, args, .. }
            if args.len() == 3 && s.builtin(func) == Some(where_))
    }

    /// An operator of a 0-d array computes a new NumPy scalar (but `@`, which wants arrays).
    fn operand(&self, _: &Scope, op: BinOp, _: Fate, _: &Expr, _: &Expr, _: bool) -> Fate {
        if op == BinOp::MatMul {
            Fate::Differs
        } else {
            Fate::Agrees
        }
    }

    /// `-a`, `+a`, `~a` are NumPy scalars, `not a` a Python bool.
    fn unary(&self, _: UnaryOp, _: Fate) -> Fate {
        Fate::Agrees
    }

    fn argument(&self, b: Builtin, _: (usize, &[Keyword]), fate: Fate) -> Fate {
        use Func::*;
        match (b.module, b.func) {
            // `ndarray` has no `__round__` or `__trunc__`.
            (Module::Builtin, Round) | (Module::Math, Trunc) => Fate::Differs,
            // They give back one of their arguments, the array itself.
            (Module::Builtin, Min | Max) => fate,
            // Python's number conversions; `abs` is NumPy's `absolute`; `len` and `sum` raise
            // `TypeError` for both.
            (Module::Builtin, Float | Int | Bool | Abs | Len | Sum) => Fate::Agrees,
            // CPython's math converts it to a float (`floor` and `ceil` give the same int).
            (Module::Math, _) => Fate::Agrees,
            // NumPy's functions convert it as they convert a scalar; `np.array` keeps it 0-d.
            (Module::Np, Array) => Fate::Differs,
            (Module::Np, _) => Fate::Agrees,
            _ => Fate::Differs,
        }
    }

    /// `a += 1` changes the array itself.
    fn updated_in_place(&self) -> bool {
        true
    }
}
