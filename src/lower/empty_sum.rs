//! `sum()` of an empty iterable is Python's int 0, where ndjit computes the float 0.0.
//!
//! A sum of NumPy floats is a NumPy float, except when the iterable is empty: then it is the
//! start value, the int 0 (`sum(v for v in x if v > t)`). ndjit computes +0.0 with Python's
//! provenance, so that dividing by it raises as dividing by the int 0 does, and wherever only
//! the value matters that is exact. But some uses tell the int from the float:
//! - `-s` is 0 for the int and -0.0 for the float; so are `s * -1`, `s % -3` and `s // -3`
//!   with another int;
//! - NumPy keeps ints integral: `np.fmax(s, s)` is an `int64` (then `% 0` gives 0 where a float
//!   gives nan, and `math.trunc` of it raises TypeError);
//! - methods, attributes, indexing, containers and helper functions each have their own rules.
//!
//! Rather than model a value whose type is known only at run time, the walk of `fate.rs`, with
//! the rules below, looks at where each `sum(...)` result goes, before lowering, and finds the
//! sums whose result (or a value computed from it that stays an int: `s + 1`, `abs(s)`,
//! `max(s, k)`, any name it is stored in, through all of that name's loads) reaches anything
//! but the uses where int and float agree: comparisons, true division, arithmetic with a float
//! (a literal, the buffer, NumPy functions of floats), `*`/`%`/`//`/`**` with a non-negative
//! int literal or `len()`, `float()`/`int()`/`bool()`/`round(s)`, `math.*`, NumPy's
//! float-valued functions (`np.sqrt`, `np.exp`, ...), tests, and the filter's result (which
//! scipy converts to a float). For those sums the lowering raises a `TypeError` when the
//! iterable is empty, naming the fix (`sum(..., 0.0)` starts from the float). Everything not
//! known to agree counts as telling them apart, so a construct this pass does not know can only
//! add an error, never hide one.

use super::fate::{self, Callee, Fate, Rules, Scope, Verdict};
use super::names::{Builtin, Func, Module};
use crate::error::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Keyword, UnaryOp};
use crate::syntax::Program;
use std::collections::HashSet;

/// The spans of the `sum(...)` calls of `program` whose empty case ndjit must refuse.
/// `callee` resolves a call's function expression to a builtin (aliases, imports), if it is one.
/// `floats`: the filter's parameters that hold floats or float64 arrays (the buffer, an
/// integrand's variables).
pub(super) fn refused_sums(program: &Program, floats: &[&str], callee: Callee) -> HashSet<Span> {
    fate::followed(program, &EmptySum, (floats, callee), Verdict::Differs)
}

/// The rules for the int 0 computed as the float 0.0.
struct EmptySum;

impl Rules for EmptySum {
    fn follows(&self, s: &Scope, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Call { func, .. } if s.builtin(func) == Some(SUM))
    }

    /// - true division, or a float on the other side: a float operation (Python converts the
    ///   int first), exact either way;
    /// - `+`, `-`; `*` by an int >= 1 (>= 0 for the sum itself); `%`, `//` by an int >= 0;
    ///   `**` with an int >= 0: exact in both, and the result stays an int with an int;
    /// - the sum itself as the divisor of a literal: it is 0, which raises ZeroDivisionError in
    ///   both;
    /// - otherwise a zero's sign may differ (`0 * -1` is 0, `0.0 * -1` is -0.0).
    fn operand(
        &self,
        s: &Scope,
        op: BinOp,
        fate: Fate,
        me: &Expr,
        other: &Expr,
        left: bool,
    ) -> Fate {
        let agrees = match op {
            _ if op == BinOp::Div || float_like(s, other) => return Fate::Agrees,
            BinOp::Add | BinOp::Sub => true,
            // The sum itself is 0: times an int >= 0 it is +0 in both.
            BinOp::Mul => int_at_least(s, other, if s.is_followed(me) { 0 } else { 1 }),
            BinOp::Mod | BinOp::FloorDiv if left => int_at_least(s, other, 0),
            // The sum itself as the divisor of a Python number: 0 raises ZeroDivisionError in
            // both (a NumPy int's `% 0` is 0, its `% 0.0` NaN: they differ).
            BinOp::Mod | BinOp::FloorDiv if s.is_followed(me) && literal(other).is_some() => {
                return Fate::Agrees
            }
            BinOp::Pow => int_at_least(s, other, 0),
            _ => false,
        };
        if agrees {
            fate
        } else {
            Fate::Differs
        }
    }

    fn unary(&self, op: UnaryOp, fate: Fate) -> Fate {
        match op {
            UnaryOp::Not => Fate::Agrees,
            UnaryOp::Pos => fate,
            _ => Fate::Differs,
        }
    }

    fn argument(&self, b: Builtin, (n, _): (usize, &[Keyword]), fate: Fate) -> Fate {
        argument_fate(b, n, fate)
    }

    /// Ints are immutable: `s += k` is `s = s + k`.
    fn updated_in_place(&self) -> bool {
        false
    }
}

/// Whether `e` is certainly a float (a Python float or NumPy float64 scalar or array): then
/// an operation with it is a float operation, the int converted first, exact either way.
fn float_like(s: &Scope, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Float(_) => true,
        ExprKind::Name(n) => s.is_float_param(n),
        ExprKind::Subscript(a, _) => {
            matches!(&a.kind, ExprKind::Name(n) if s.is_float_param(n))
        }
        ExprKind::Unary(UnaryOp::Neg | UnaryOp::Pos, a) => float_like(s, a),
        ExprKind::Binary(op, a, b) => {
            !matches!(op, BinOp::MatMul) && (float_like(s, a) || float_like(s, b))
        }
        ExprKind::Call { func, args, .. } => match s.builtin(func) {
            // A method of a float array or scalar: `x.mean()`, `x.max()`.
            None => matches!(&func.kind, ExprKind::Attribute(recv, m)
                if float_like(s, recv)
                    && super::names::method(m)
                        .is_some_and(|b| !int_or_bool_valued(b.func) && b.func != Func::Astype)),
            Some(b) if float_valued(b) => true,
            // A NumPy function of floats, other than those that count, index or test.
            Some(b) if b.module == Module::Np && !int_or_bool_valued(b.func) => {
                !args.is_empty() && args.iter().all(|a| float_like(s, a))
            }
            _ => false,
        },
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            !items.is_empty() && items.iter().all(|i| float_like(s, i))
        }
        _ => false,
    }
}

/// Whether `e` is certainly an int >= `min` (a literal, or `len(...)` for 0).
fn int_at_least(s: &Scope, e: &Expr, min: i64) -> bool {
    match (literal(e), &e.kind) {
        (Some(Literal::Int(k)), _) => k >= min,
        (None, ExprKind::Call { func, .. }) => {
            min <= 0
                && s.builtin(func)
                    == Some(Builtin {
                        module: Module::Builtin,
                        func: Func::Len,
                    })
        }
        _ => false,
    }
}

/// A number written in the source, its sign included.
enum Literal {
    Float,
    Int(i64),
}

fn literal(e: &Expr) -> Option<Literal> {
    match &e.kind {
        ExprKind::Float(_) => Some(Literal::Float),
        ExprKind::Int(k) => Some(Literal::Int(*k)),
        ExprKind::Unary(UnaryOp::Neg, a) => match literal(a)? {
            Literal::Int(k) => Some(Literal::Int(k.checked_neg()?)),
            f => Some(f),
        },
        ExprKind::Unary(UnaryOp::Pos, a) => literal(a),
        _ => None,
    }
}

/// The fate of a positional argument of `b` (called with `n` of them) whose result has `fate`.
fn argument_fate(b: Builtin, n: usize, fate: Fate) -> Fate {
    use Func::*;
    match (b.module, b.func) {
        // CPython's math converts ints to floats (trunc, floor and ceil give the same int).
        (Module::Math, _) => Fate::Agrees,
        (Module::Builtin, Float | Int | Bool) => Fate::Agrees,
        (Module::Builtin, Round) if n == 1 => Fate::Agrees,
        // They give back (a rounding of) one of their arguments, an int for an int.
        (Module::Builtin, Round | Abs | Min | Max) => fate,
        // NumPy's functions whose result is a float (or a bool) for an int.
        (Module::Np, IsNan | IsInf | IsFinite | Isclose | Allclose) => Fate::Agrees,
        _ if float_valued(b) => Fate::Agrees,
        _ => Fate::Differs,
    }
}

const SUM: Builtin = Builtin {
    module: Module::Builtin,
    func: Func::Sum,
};

/// Whether `b` returns a float whatever numbers it is given: `float()`, math's functions but
/// the rounding ones and the tests, and NumPy's same functions (but `fmod`, which keeps ints
/// integral), true division and `float64`.
fn float_valued(b: Builtin) -> bool {
    use Func::*;
    let math = b.func.is_in(Module::Math)
        && !matches!(b.func, Floor | Ceil | Trunc | IsNan | IsInf | IsFinite);
    match b.module {
        Module::Builtin => b.func == Float,
        Module::Math => math || b.func == Power,
        Module::Np => (math && b.func != Fmod) || matches!(b.func, Divide | Float64),
        _ => false,
    }
}

/// NumPy functions whose result is an int or a bool whatever their arguments.
fn int_or_bool_valued(f: Func) -> bool {
    use Func::*;
    matches!(
        f,
        Argmin
            | Argmax
            | Nanargmin
            | Nanargmax
            | Argsort
            | Argwhere
            | Nonzero
            | Flatnonzero
            | CountNonzero
            | Size
            | Bincount
            | Histogram
            | Int64
            | BoolScalar
            | IsNan
            | IsInf
            | IsFinite
            | Isclose
            | Allclose
            | Isin
            | Any
            | All
            | LogicalAnd
            | LogicalOr
            | LogicalNot
            | LogicalXor
            | Sign
            | Arange
            | Zeros
            | Ones
            | Full
            | ZerosLike
            | OnesLike
            | FullLike
            | Linspace
            | Where
    )
}
