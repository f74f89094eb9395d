//! NumPy's `percentile`, `quantile` and their `nan` forms, by the default 'linear' method, of one
//! q or of several.

use super::reductions::{is_nan, sorted_copy};
use super::Args;
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, SortedStat, Stmt, Ty};
use crate::lower::expr::{bin, cmp, convert};
use crate::lower::names::Func::{self, *};
use crate::lower::numpy::zero_signs::{self, Shows};
use crate::lower::value::{ArrayVal, Value};
use crate::lower::{not, Translator};

/// The q of a call: one number gives a number, several (`[75, 25]`, an array) an array of as
/// many.
enum Points {
    One(Expr),
    Many(ArrayVal),
}

/// `np.percentile(x, q)` and its kin, of the `n` values `arr`.
pub(super) fn quantile(
    t: &mut Translator,
    base: Func,
    arr: ArrayVal,
    n: &Expr,
    a: &mut Args,
) -> Result<Value> {
    let span = a.span;
    let Some((q, qs)) = a.pos.pop().or_else(|| a.kw("q")) else {
        return Err(t.err(ErrorKind::Arity, span, format!("{base}() needs q")));
    };
    if let Some((m, ms)) = a.kw("method").or(a.kw("interpolation")) {
        if !matches!(&m, Value::Str(s) if s == "linear") {
            return Err(t.err(
                ErrorKind::Unsupported,
                ms,
                "only the default 'linear' method is supported",
            ));
        }
    }
    if arr.ty == Ty::Bool {
        // NumPy interpolates by subtracting, which it refuses for bools.
        let refusal = t
            .err(ErrorKind::Type, span, format!("np.{base}() of bools"))
            .hint("convert first: b.astype(int)");
        return Ok(t.refuse_by_type(refusal, Value::Scalar(Expr::F64(0.0), Ty::F64)));
    }
    let is_pct = matches!(base, Percentile | Nanpercentile);
    let points = points(t, q, qs, is_pct)?;
    let nan_variant = matches!(base, Nanpercentile | Nanquantile);
    if !nan_variant {
        t.check_plain(
            cmp(CmpOp::Gt, n.clone(), Expr::I64(0)),
            Exception::IndexError,
            "index -1 is out of bounds for axis 0 with size 0",
            span,
        );
    }
    let keep = if nan_variant {
        Some(not(is_nan(&arr)))
    } else {
        None
    };
    let sorted = sorted_copy(t, &arr, keep);
    let floats = arr.ty == Ty::F64;
    let quantile = |t: &mut Translator, q: Expr| -> Result<Expr> {
        let q = if is_pct {
            bin(BinOp::Div, q, Expr::F64(100.0))
        } else {
            q
        };
        let dst = t.temp(Ty::F64);
        t.emit(Stmt::Sorted {
            dst,
            stat: SortedStat::Quantile,
            arr: sorted,
            q,
        });
        if floats {
            let (values, name) = (t.view(sorted), format!("np.{base}"));
            zero_signs::guard(t, &values, Shows::Result(&Expr::Var(dst)), &name, span)?;
        }
        Ok(Expr::Var(dst))
    };
    match points {
        Points::One(q) => Ok(Value::Scalar(quantile(t, q)?, Ty::F64)),
        Points::Many(qa) => {
            let out = crate::lower::numpy::tabulate(t, qa.len.clone(), "%quantiles", |t, k| {
                Ok((quantile(t, qa.at(k))?, Ty::F64))
            })?;
            Ok(Value::Array(out))
        }
    }
}

/// The q values, each checked to lie in [0, 100] for a percentile or [0, 1] for a quantile
/// before any is computed, as NumPy checks them.
fn points(t: &mut Translator, q: Value, qs: Span, is_pct: bool) -> Result<Points> {
    let (hi, msg) = if is_pct {
        (100.0, "Percentiles must be in the range [0, 100]")
    } else {
        (1.0, "Quantiles must be in the range [0, 1]")
    };
    let in_range = |q: Expr| {
        bin(
            BinOp::And,
            cmp(CmpOp::Ge, q.clone(), Expr::F64(0.0)),
            cmp(CmpOp::Le, q, Expr::F64(hi)),
        )
    };
    Ok(match q {
        Value::Scalar(e, ty) => {
            let q = t.stable(convert(e, ty, Ty::F64), Ty::F64);
            t.check_plain(in_range(q.clone()), Exception::ValueError, msg, qs);
            Points::One(q)
        }
        v @ (Value::Tuple(_) | Value::Array(_) | Value::List(..)) => {
            let qa = t.array_of(v, qs)?;
            let qa = t.materialize(&crate::lower::numpy::as_type(&qa, Ty::F64), None);
            let probe = ArrayVal {
                elem: not(in_range(qa.elem.clone())),
                ty: Ty::Bool,
                ..qa.clone()
            };
            let bad = t.reduce(ReduceOp::Any, &probe, qs, None)?;
            t.check_plain(not(bad), Exception::ValueError, msg, qs);
            Points::Many(qa)
        }
        _ => {
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    qs,
                    "q must be a number or a list of numbers",
                )
                .hint("e.g. np.percentile(x, 90) or np.percentile(x, [25, 75])"))
        }
    })
}
