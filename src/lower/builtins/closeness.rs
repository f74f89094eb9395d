//! `np.isclose`, `np.allclose` and `np.nan_to_num`: NumPy's own formulas, element by element,
//! in doubles.

use super::Args;
use crate::error::{ErrorKind, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, Ty, UnOp};
use crate::lower::expr::{bin, cmp, convert, un};
use crate::lower::names::Func::All;
use crate::lower::value::Value;
use crate::lower::Translator;

/// `np.isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)`, or `np.allclose` of the same
/// arguments. NumPy computes `|a - b| <= atol + rtol * |b|` where `b` is finite, or `a == b`, and
/// with `equal_nan` two NaNs are close; `b` is made a float first, so every operand is a double.
/// isclose gives NumPy bools (one for numbers); allclose a Python bool (`bool(np.all(...))`).
pub(super) fn isclose(t: &mut Translator, all: bool, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 0, 5)?;
    let (Some((x, _)), Some((y, _))) = (a.take_or_kw("a"), a.take_or_kw("b")) else {
        return Err(t.err(
            ErrorKind::Arity,
            span,
            format!("{}() compares two arrays or numbers: give both", a.name),
        ));
    };
    let tolerance = |a: &mut Args, name: &str, default: f64| {
        a.take_or_kw(name)
            .map_or(Value::Scalar(Expr::F64(default), Ty::F64), |(v, _)| v)
    };
    let rtol = tolerance(a, "rtol", 1e-5);
    let atol = tolerance(a, "atol", 1e-8);
    let equal_nan = match a.take_or_kw("equal_nan") {
        Some((v, s)) => {
            let (e, ty) = t.scalar(v, s, "equal_nan")?;
            convert(e, ty, Ty::Bool)
        }
        None => Expr::Bool(false),
    };
    let equal_nan = t.stable(equal_nan, Ty::Bool);
    let close = t.elementwise(vec![x, y, rtol, atol], span, &mut |t, ops, _| {
        let mut f = ops.into_iter().map(|(e, ty)| convert(e, ty, Ty::F64));
        let mut next = |t: &mut Translator| t.stable(f.next().unwrap(), Ty::F64);
        let (x, y, rtol, atol) = (next(t), next(t), next(t), next(t));
        let within = cmp(
            CmpOp::Le,
            un(UnOp::Abs, bin(BinOp::Sub, x.clone(), y.clone())),
            bin(
                BinOp::Add,
                atol,
                bin(BinOp::Mul, rtol, un(UnOp::Abs, y.clone())),
            ),
        );
        let finite = bin(BinOp::And, within, un(UnOp::IsFinite, y.clone()));
        let close = bin(BinOp::Or, finite, cmp(CmpOp::Eq, x.clone(), y.clone()));
        let nans = bin(BinOp::And, un(UnOp::IsNan, x), un(UnOp::IsNan, y));
        let nans = bin(BinOp::And, equal_nan.clone(), nans);
        Ok((bin(BinOp::Or, close, nans), Ty::Bool))
    })?;
    let close = match all {
        true => super::reductions::reduction(t, All, close, span, a)?,
        false => close,
    };
    // (The call's result is then made a NumPy bool or, for allclose, a Python one.)
    Ok(close)
}

/// `np.nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None)`: NaN, `inf` and `-inf`
/// replaced (by default with 0.0 and the largest finite doubles) in floats; ints and bools are
/// returned as they are. A number gives a NumPy scalar (NumPy's `x[()]`).
pub(super) fn nan_to_num(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 5)?;
    let (x, _) = a.take();
    if let Some((copy, s)) = a.take_or_kw("copy") {
        if !matches!(copy, Value::Scalar(Expr::Bool(true), _)) {
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    s,
                    "np.nan_to_num(..., copy=False) changes its array in place",
                )
                .hint("use the copy it returns: y = np.nan_to_num(x)"));
        }
    }
    let replacement =
        |t: &mut Translator, a: &mut Args, name: &str, default: f64| match a.take_or_kw(name) {
            None => Ok(Expr::F64(default)),
            // (NumPy takes None for the infinities only: `nan=None` fails to cast.)
            Some((Value::None, _)) if name != "nan" => Ok(Expr::F64(default)),
            Some((v, s)) => number(t, v, s, name),
        };
    let nan = replacement(t, a, "nan", 0.0)?;
    let posinf = replacement(t, a, "posinf", f64::MAX)?;
    let neginf = replacement(t, a, "neginf", f64::MIN)?;
    t.elementwise(vec![x], span, &mut |t, ops, _| {
        let (e, ty) = ops.into_iter().next().unwrap();
        if ty != Ty::F64 {
            return Ok((e, ty));
        }
        let e = t.stable(e, Ty::F64);
        let inf = cmp(CmpOp::Gt, e.clone(), Expr::F64(0.0));
        let infinite = Expr::Select(inf.boxed(), posinf.clone().boxed(), neginf.clone().boxed());
        let finite = Expr::Select(
            un(UnOp::IsInf, e.clone()).boxed(),
            infinite.boxed(),
            e.clone().boxed(),
        );
        Ok((
            Expr::Select(
                un(UnOp::IsNan, e).boxed(),
                nan.clone().boxed(),
                finite.boxed(),
            ),
            Ty::F64,
        ))
    })
}

/// A replacement value of `nan_to_num`, as the double NumPy stores (`copyto` casts it).
fn number(t: &mut Translator, v: Value, s: Span, name: &str) -> Result<Expr> {
    if !matches!(v, Value::Scalar(..)) {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                s,
                format!("np.nan_to_num's `{name}=` takes a number here"),
            )
            .hint(format!("write {name}=0.0, or replace with np.where(...)")));
    }
    let (e, ty) = t.scalar(v, s, name)?;
    let e = convert(e, ty, Ty::F64);
    Ok(t.stable(e, Ty::F64))
}
