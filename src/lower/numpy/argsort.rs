//! `np.argsort(a, kind=...)` and `a.argsort()`: the indices that sort a 1-D array, NaN last.
//!
//! Where values are equal (`-0.0 == 0.0`, and NaNs among themselves) NumPy's order depends on
//! the sort: `kind="stable"` (or `"mergesort"`) keeps them in index order, which ndjit gives; the
//! default (introsort, or a SIMD sort chosen by the CPU) leaves them in an order ndjit cannot
//! know, so with ties it raises instead. Without ties every sort gives the same indices.
//!
//! Each index's position is its rank, counted over the other elements (O(n²) comparisons, for
//! the window sizes filters have), so every backend runs it with the IR's reductions and stores.

use super::super::builtins::{counted_loop, zeros, Args};
use super::super::expr::{bin, cmp, un};
use super::super::value::{ArrayVal, Value};
use super::super::{not, Translator};
use crate::error::{ErrorKind, Exception, Result};
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty, UnOp};

/// `np.argsort(a)`, `np.argsort(a, kind=...)`, `a.argsort(kind=...)`.
pub(super) fn argsort(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 2)?;
    let (v, s) = a.take();
    if matches!(v, Value::Matrix(..)) {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                s,
                "np.argsort of a 2-D array (it sorts each row)",
            )
            .hint("argsort the flat array, m.ravel()"));
    }
    let kind = a.pos.pop().or_else(|| a.kw("kind"));
    let stable = match kind {
        None | Some((Value::None, _)) => false,
        Some((Value::Str(k), ks)) => match k.as_str() {
            "stable" | "mergesort" => true,
            "quicksort" | "heapsort" => false,
            _ => {
                return Err(t.err(
                    ErrorKind::Type,
                    ks,
                    format!("sort kind must be one of 'quick', 'heap', or 'stable' (got '{k}')"),
                ))
            }
        },
        Some((_, ks)) => {
            return Err(t.err(ErrorKind::Type, ks, "np.argsort's kind is a string"));
        }
    };
    let arr = t.array_of(v, s)?;
    let values = t.materialize(&super::as_f64(&arr), None);
    let n = t.stable(values.len.clone(), Ty::I64);
    let at = |k: Expr| values.at(k);
    // NumPy's order: numbers ascending, NaN after them; equal values (or two NaNs) tie.
    let nan = |e: Expr| un(UnOp::IsNan, e);
    let less = |x: Expr, y: Expr| {
        bin(
            BinOp::Or,
            cmp(CmpOp::Lt, x.clone(), y.clone()),
            bin(BinOp::And, not(nan(x)), nan(y)),
        )
    };
    let tie = |x: Expr, y: Expr| {
        bin(
            BinOp::Or,
            cmp(CmpOp::Eq, x.clone(), y.clone()),
            bin(BinOp::And, nan(x), nan(y)),
        )
    };
    if !stable {
        let ties = tie_count(t, &values, n.clone(), &tie, span)?;
        t.check_plain(
            cmp(CmpOp::Eq, ties, Expr::I64(0)),
            Exception::ValueError,
            "np.argsort of equal values: their order depends on NumPy's sort algorithm and the \
             CPU, which ndjit cannot know (pass kind='stable' for index order)",
            span,
        );
    }
    let out = zeros(t, n.clone(), Ty::I64, "%argsort");
    counted_loop(t, n.clone(), |t, i| {
        let i = t.stable(i, Ty::I64);
        let j = t.temp(Ty::I64);
        let (vi, vj) = (at(i.clone()), at(Expr::Var(j)));
        let earlier_tie = bin(
            BinOp::And,
            tie(vj.clone(), vi.clone()),
            cmp(CmpOp::Lt, Expr::Var(j), i.clone()),
        );
        let before = ArrayVal {
            len: n.clone(),
            ty: Ty::Bool,
            index: j,
            elem: bin(BinOp::Or, less(vj, vi), earlier_tie),
        };
        let rank = t.reduce(ReduceOp::Count, &before, span, None)?;
        // A rank is in 0..n by construction; the clamp states it for the store.
        let last = bin(BinOp::Sub, n.clone(), Expr::I64(1));
        let rank = bin(BinOp::Min, bin(BinOp::Max, rank, Expr::I64(0)), last);
        t.emit(Stmt::Store(out, rank, i));
        Ok(())
    })?;
    Ok(Value::Array(t.view(out)))
}

/// The number of (i, j) pairs, i != j, whose values tie.
fn tie_count(
    t: &mut Translator,
    values: &ArrayVal,
    n: Expr,
    tie: &dyn Fn(Expr, Expr) -> Expr,
    span: crate::error::Span,
) -> Result<Expr> {
    let total = t.temp(Ty::I64);
    t.emit(Stmt::Assign(total, Expr::I64(0)));
    counted_loop(t, n.clone(), |t, i| {
        let i = t.stable(i, Ty::I64);
        let j = t.temp(Ty::I64);
        let pairs = ArrayVal {
            len: n.clone(),
            ty: Ty::Bool,
            index: j,
            elem: bin(
                BinOp::And,
                tie(values.at(Expr::Var(j)), values.at(i.clone())),
                cmp(CmpOp::Ne, Expr::Var(j), i),
            ),
        };
        let c = t.reduce(ReduceOp::Count, &pairs, span, None)?;
        t.emit(Stmt::Assign(total, bin(BinOp::Add, Expr::Var(total), c)));
        Ok(())
    })?;
    Ok(Expr::Var(total))
}
