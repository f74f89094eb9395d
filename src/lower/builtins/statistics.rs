//! Python's `statistics.median`, `median_low`, `median_high` and `mode`, as CPython computes
//! them. The medians: the
//! data sorted by `sorted()`, `StatisticsError` for none, then the middle item, or for an even
//! count the two middle items' `(a + b) / 2` in the items' own arithmetic (a Python int's median
//! of an even count is a float, of an odd one an int; NumPy scalars' is NumPy's).
//!
//! `sorted()` is exact where it runs: stable, so equal zeros keep their order (a median of
//! `0.0` and `-0.0` is CPython's zero), and it raises `ValueError` for data holding a NaN, whose
//! place in CPython's order depends on its merge steps.

use super::{counted_loop, Args};
use crate::error::{Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty, UnOp};
use crate::lower::expr::{bin, cmp, convert, un};
use crate::lower::names::Func;
use crate::lower::value::{ArrayVal, ElemKind, Value};
use crate::lower::{not, Translator};
use crate::syntax::ast;

/// `statistics.median(data)`, `median_low(data)` or `median_high(data)` (`func` says which).
pub(super) fn median(t: &mut Translator, func: Func, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let span = a.span;
    let data = a.take();
    let Value::List(sorted, kind) = crate::lower::lists::sort_sequence(t, data, false, span)?
    else {
        unreachable!("sort_sequence gives a list")
    };
    let n = t.stable(sorted.len.clone(), Ty::I64);
    let some = cmp(CmpOp::Ne, n.clone(), Expr::I64(0));
    t.check_plain(
        some,
        Exception::StatisticsError,
        "no median for empty data",
        span,
    );
    let half = t.stable(bin(BinOp::FloorDiv, n.clone(), Expr::I64(2)), Ty::I64);
    let ty = sorted.ty;
    let item = move |t: &mut Translator, i: Expr| t.list_item(&sorted, kind, i);
    match func {
        Func::MedianHigh => Ok(Value::Scalar(item(t, half), ty)),
        Func::MedianLow => {
            let low = bin(
                BinOp::FloorDiv,
                bin(BinOp::Sub, n, Expr::I64(1)),
                Expr::I64(2),
            );
            Ok(Value::Scalar(item(t, low), ty))
        }
        _ => {
            let odd = cmp(CmpOp::Eq, bin(BinOp::Mod, n, Expr::I64(2)), Expr::I64(1));
            let (e, ty) = t.int_or_float(
                odd,
                span,
                |t| Ok((item(t, half.clone()), ty)),
                |t| {
                    let below = bin(BinOp::Sub, half.clone(), Expr::I64(1));
                    let (a, b) = (item(t, below), item(t, half.clone()));
                    let sum = t.binary(
                        ast::BinOp::Add,
                        Value::Scalar(a, ty),
                        Value::Scalar(b, ty),
                        span,
                    )?;
                    let two = Value::Scalar(Expr::I64(2), Ty::I64);
                    let mean = t.binary(ast::BinOp::Div, sum, two, span)?;
                    t.scalar(mean, span, "a median")
                },
            )?;
            Ok(Value::Scalar(e, ty))
        }
    }
}

/// `statistics.mode(data)`: the most common item ([`most_common`]), `StatisticsError` for no
/// data.
pub(super) fn mode(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let span = a.span;
    let data = a.take();
    let counted = Counted {
        empty: (Exception::StatisticsError, "no mode for empty data"),
        by: "statistics.mode",
        counts_read: false,
    };
    Ok(most_common(t, data, span, counted)?.0)
}

/// Who counts, as [`most_common`]'s errors name it.
pub(super) struct Counted {
    /// The exception and message for no data.
    pub empty: (Exception, &'static str),
    /// The function counting, for the NaN error (`statistics.mode`, `Counter`).
    pub by: &'static str,
    /// Whether the count is given too (a Counter's pair), not only the item.
    pub counts_read: bool,
}

/// The item `data` holds most often, and its count, as CPython counts them with a `Counter`
/// (what `statistics.mode` does too): a dict, where equal items, `0.0` and `-0.0` too, are one
/// key, the first item seen; the key counted most wins, the first seen of those counted equally
/// (`most_common` sorts stably by count, from the keys in insertion order). That key is the
/// first item whose count is the largest: items of one key share its count, and the first of
/// them is the key. So each item is counted against all, and the first with a larger count
/// than every earlier one is kept; `counted.empty` is raised for no data.
///
/// A dict finds a key by identity before equality, and a NaN equals nothing: a NaN is counted
/// with the items that are that same object. An array's items are new objects each, so each NaN
/// counts once. A list's or a tuple's may repeat one object (`[v, v]`), which ndjit does not
/// track; but the NaN keys' counts lie between 1 each and all of them one key, so where both
/// extremes give the same winner (a NaN, or the best of the other values) that is the result,
/// and only where they differ does ndjit raise `ValueError`.
pub(super) fn most_common(
    t: &mut Translator,
    (v, s): (Value, Span),
    span: Span,
    counted: Counted,
) -> Result<(Value, Expr)> {
    let fresh_items = matches!(v, Value::Array(_));
    let (arr, kind) = crate::lower::lists::sequence(t, v, s)?;
    if kind == ElemKind::Mixed {
        return Err(t.mixed_list(s, "counting its items"));
    }
    let data = t.materialize(&arr, None);
    let n = t.stable(data.len.clone(), Ty::I64);
    let some = cmp(CmpOp::Ne, n.clone(), Expr::I64(0));
    let (exception, message) = counted.empty;
    t.check_plain(some, exception, message, span);
    let ty = data.ty;
    // Compared as ints where they are bools: the same equality.
    let comparable = |e: Expr| match ty {
        Ty::Bool => convert(e, Ty::Bool, Ty::I64),
        _ => e,
    };
    // The best of the values that are not NaN (a NaN equals nothing, so it counts 0 here), and
    // the NaNs: how many, and where the first is.
    let (best, most) = (t.temp(Ty::I64), t.temp(Ty::I64));
    let (nans, first_nan) = (t.temp(Ty::I64), t.temp(Ty::I64));
    for (var, start) in [(best, 0), (most, 0), (nans, 0), (first_nan, -1)] {
        t.emit(Stmt::Assign(var, Expr::I64(start)));
    }
    counted_loop(t, n, |t, i| {
        let item = t.stable(comparable(data.at(i.clone())), ty.max(Ty::I64));
        let equal = ArrayVal {
            elem: cmp(CmpOp::Eq, comparable(data.elem.clone()), item.clone()),
            ty: Ty::Bool,
            ..data.clone()
        };
        let count = t.reduce(ReduceOp::Count, &equal, span, None)?;
        let count = t.stable(count, Ty::I64);
        t.emit(Stmt::If(
            cmp(CmpOp::Gt, count.clone(), Expr::Var(most)),
            vec![Stmt::Assign(most, count), Stmt::Assign(best, i.clone())],
            vec![],
        ));
        if ty == Ty::F64 {
            let first = cmp(CmpOp::Lt, Expr::Var(first_nan), Expr::I64(0));
            t.emit(Stmt::If(
                un(UnOp::IsNan, item),
                vec![
                    Stmt::Assign(nans, bin(BinOp::Add, Expr::Var(nans), Expr::I64(1))),
                    Stmt::If(first, vec![Stmt::Assign(first_nan, i)], vec![]),
                ],
                vec![],
            ));
        }
        Ok(())
    })?;
    if ty != Ty::F64 {
        let item = t.list_item(&data, kind, Expr::Var(best));
        return Ok((Value::Scalar(item, ty), Expr::Var(most)));
    }
    // A NaN key wins with a count above the best's, or equal and seen first.
    let wins = |count: Expr| {
        bin(
            BinOp::Or,
            cmp(CmpOp::Gt, count.clone(), Expr::Var(most)),
            bin(
                BinOp::And,
                cmp(CmpOp::Eq, count, Expr::Var(most)),
                cmp(CmpOp::Lt, Expr::Var(first_nan), Expr::Var(best)),
            ),
        )
    };
    let any_nan = cmp(CmpOp::Gt, Expr::Var(nans), Expr::I64(0));
    // Each NaN its own key, counted once; at most, all of them one key.
    let least = t.stable(bin(BinOp::And, any_nan, wins(Expr::I64(1))), Ty::Bool);
    if !fresh_items {
        let settled = bin(BinOp::Or, least.clone(), not(wins(Expr::Var(nans))));
        t.check_plain(
            settled,
            Exception::ValueError,
            &format!(
                "{} counts a NaN with the items that are the same object, which ndjit does not \
                 track, and here that decides the most common item: pass an array (each item a \
                 new object)",
                counted.by
            ),
            span,
        );
    }
    let winner = t.stable(
        Expr::Select(
            least.clone().boxed(),
            Expr::Var(first_nan).boxed(),
            Expr::Var(best).boxed(),
        ),
        Ty::I64,
    );
    if !fresh_items && counted.counts_read {
        // The winning NaN's count lies between 1 and all the NaNs: it is known where it is the
        // only one.
        let known = bin(
            BinOp::Or,
            not(least.clone()),
            cmp(CmpOp::Eq, Expr::Var(nans), Expr::I64(1)),
        );
        t.check_plain(
            known,
            Exception::ValueError,
            &format!(
                "{} counts a NaN with the items that are the same object, which ndjit does not \
                 track, and here that decides the count: pass an array (each item a new object)",
                counted.by
            ),
            span,
        );
    }
    let count = Expr::Select(least.boxed(), Expr::I64(1).boxed(), Expr::Var(most).boxed());
    Ok((Value::Scalar(t.list_item(&data, kind, winner), ty), count))
}
