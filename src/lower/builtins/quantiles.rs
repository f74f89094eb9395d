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
    let (points, int_q) = points(t, q, qs, is_pct)?;
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
        let dst = t.temp(Ty::F64);
        match int_q {
            true => take(t, dst, sorted, q),
            false => t.emit(Stmt::Sorted {
                dst,
                stat: SortedStat::Quantile,
                arr: sorted,
                q,
            }),
        }
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

/// NumPy's take of the sorted values at `(n - 1) * q` for an integer `q` (0 or 1, checked): the
/// value itself, where interpolating would give NaN between infinities or lose a zero's sign
/// (`_quantile`'s `supports_integers` path); NaN when empty or holding a NaN, as interpolating.
fn take(t: &mut Translator, dst: crate::ir::Var, sorted: crate::ir::Arr, q: Expr) {
    let values = t.view(sorted);
    let last = bin(BinOp::Sub, values.len.clone(), Expr::I64(1));
    let index = bin(BinOp::Mul, last.clone(), Expr::Cast(Ty::I64, q.boxed()));
    let has_nan = Expr::Unary(crate::ir::UnOp::IsNan, values.at(last).boxed());
    let value = Expr::Select(
        has_nan.boxed(),
        Expr::F64(f64::NAN).boxed(),
        values.at(index).boxed(),
    );
    let some = cmp(CmpOp::Gt, values.len.clone(), Expr::I64(0));
    let (then, empty) = (
        Stmt::Assign(dst, value),
        Stmt::Assign(dst, Expr::F64(f64::NAN)),
    );
    t.emit(Stmt::If(some, vec![then], vec![empty]));
}

/// The q values as NumPy's quantiles see them (a percentile's divided by 100), each checked to
/// lie in [0, 1] before any is computed, as NumPy checks them (a percentile after dividing:
/// `-5e-324` is `-0.0` then, in range); and whether they are integers, which a quantile takes
/// rather than interpolates.
fn points(t: &mut Translator, q: Value, qs: Span, is_pct: bool) -> Result<(Points, bool)> {
    let msg = match is_pct {
        true => "Percentiles must be in the range [0, 100]",
        false => "Quantiles must be in the range [0, 1]",
    };
    let scaled = |q: Expr| match is_pct {
        true => bin(BinOp::Div, q, Expr::F64(100.0)),
        false => q,
    };
    let in_range = |q: Expr| {
        bin(
            BinOp::And,
            cmp(CmpOp::Ge, q.clone(), Expr::F64(0.0)),
            cmp(CmpOp::Le, q, Expr::F64(1.0)),
        )
    };
    let ints = |ty: Ty| !is_pct && matches!(ty, Ty::I64 | Ty::Bool);
    Ok(match q {
        Value::Scalar(e, ty) => {
            let q = t.stable(scaled(convert(e, ty, Ty::F64)), Ty::F64);
            t.check_plain(in_range(q.clone()), Exception::ValueError, msg, qs);
            (Points::One(q), ints(ty))
        }
        v @ (Value::Tuple(_) | Value::Array(_) | Value::List(..)) => {
            let qa = t.array_of(v, qs)?;
            let int_q = ints(qa.ty);
            let as_floats = crate::lower::numpy::as_type(&qa, Ty::F64);
            let qa = ArrayVal {
                elem: scaled(as_floats.elem.clone()),
                ..as_floats
            };
            let qa = t.materialize(&qa, None);
            let probe = ArrayVal {
                elem: not(in_range(qa.elem.clone())),
                ty: Ty::Bool,
                ..qa.clone()
            };
            let bad = t.reduce(ReduceOp::Any, &probe, qs, None)?;
            t.check_plain(not(bad), Exception::ValueError, msg, qs);
            (Points::Many(qa), int_q)
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
