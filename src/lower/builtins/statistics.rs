//! Python's `statistics.median`, `median_low` and `median_high`, as CPython computes them: the
//! data sorted by `sorted()`, `StatisticsError` for none, then the middle item, or for an even
//! count the two middle items' `(a + b) / 2` in the items' own arithmetic (a Python int's median
//! of an even count is a float, of an odd one an int; NumPy scalars' is NumPy's).
//!
//! `sorted()` is exact where it runs: stable, so equal zeros keep their order (a median of
//! `0.0` and `-0.0` is CPython's zero), and it raises `ValueError` for data holding a NaN, whose
//! place in CPython's order depends on its merge steps.

use super::Args;
use crate::error::{Exception, Result};
use crate::ir::{BinOp, CmpOp, Expr, Ty};
use crate::lower::expr::{bin, cmp};
use crate::lower::names::Func;
use crate::lower::value::Value;
use crate::lower::Translator;
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
