//! New arrays: `np.zeros`, `np.ones`, `np.full` (and their `_like` forms) and `np.arange`. Each is
//! a lazy array, an element expression over its index, so a later index assignment copies it
//! like any other array value ([`super::super::window_writes`]).

use super::super::builtins::{dtype_ty, Args};
use super::super::expr::{bin, cmp, convert};
use super::super::names::Func;
use super::super::value::{ArrayVal, Value};
use super::super::Translator;
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, Ty, UnOp};

/// The longest array these functions make: past it NumPy would try to allocate gigabytes, and a
/// filter would loop for as long; it raises NumPy's `MemoryError` instead.
const MAX_LEN: i64 = 1 << 31;

/// `np.zeros(shape)`, `np.ones(shape)`, `np.full(shape, value)`, with an optional `dtype`.
pub(super) fn filled(t: &mut Translator, func: Func, a: &mut Args) -> Result<Value> {
    let full = func == Func::Full;
    a.arity(t, if full { 2 } else { 1 }, if full { 3 } else { 2 })?;
    let (shape, ss) = a.take();
    let (len, cols) = dimensions(t, shape, ss)?;
    let one = func == Func::Ones;
    let constant = (Expr::F64(if one { 1.0 } else { 0.0 }), Ty::F64);
    fill(t, a, full, constant, None, (len, cols))
}

/// `np.zeros_like(x)`, `np.ones_like(x)`, `np.full_like(x, value)`: `x`'s shape and dtype.
pub(super) fn filled_like(t: &mut Translator, func: Func, a: &mut Args) -> Result<Value> {
    let full = func == Func::FullLike;
    a.arity(t, if full { 2 } else { 1 }, if full { 3 } else { 2 })?;
    let (like, ls) = a.take();
    let cols = match &like {
        Value::Matrix(_, c) => Some(c.clone()),
        _ => None,
    };
    let arr = t.array_of(like, ls)?;
    let len = t.stable(arr.len, Ty::I64);
    let one = func == Func::OnesLike;
    let constant = (Expr::I64(if one { 1 } else { 0 }), Ty::I64);
    fill(t, a, full, constant, Some(arr.ty), (len, cols))
}

/// The rest of the six functions' arguments, and their array: the fill value (the next
/// argument for the `full` forms, else `constant`), converted to the element type, which is
/// `dtype` if given, else `natural` (`None`: the fill value's own).
fn fill(
    t: &mut Translator,
    a: &mut Args,
    full: bool,
    constant: (Expr, Ty),
    natural: Option<Ty>,
    (len, cols): (Expr, Option<Expr>),
) -> Result<Value> {
    let (value, vty) = match full {
        true => {
            let (v, vs) = a.take();
            t.scalar(v, vs, "the fill value")?
        }
        false => constant,
    };
    let ty = match a.pos.pop().or_else(|| a.kw("dtype")) {
        Some((d, ds)) => dtype_ty(t, &d, ds)?,
        None => natural.unwrap_or(vty),
    };
    let elem = cast_scalar(t, value, vty, ty);
    shaped(t, len, cols, ty, elem)
}

/// A value converted as NumPy stores it into an array of `ty` (a float into an int array with
/// the C cast NumPy uses, as `astype` does).
fn cast_scalar(t: &mut Translator, value: Expr, from: Ty, to: Ty) -> Expr {
    let v = t.stable(value, from);
    let one = ArrayVal {
        len: Expr::I64(1),
        ty: from,
        index: t.temp(Ty::I64),
        elem: v,
    };
    super::super::builtins::cast_array(one, to).elem
}

/// The array (or 2-D array of `cols` columns) of `len` copies of `elem`.
fn shaped(t: &mut Translator, len: Expr, cols: Option<Expr>, ty: Ty, elem: Expr) -> Result<Value> {
    let arr = ArrayVal {
        len,
        ty,
        index: t.temp(Ty::I64),
        elem,
    };
    Ok(match cols {
        Some(c) => Value::Matrix(arr, c),
        None => Value::Array(arr),
    })
}

/// The element count and, for two dimensions, the column count of a shape argument: an integer
/// or a tuple of one or two; negative sizes raise NumPy's `ValueError`.
fn dimensions(t: &mut Translator, shape: Value, span: Span) -> Result<(Expr, Option<Expr>)> {
    let dims = match shape {
        Value::Tuple(items) => items,
        other => vec![other],
    };
    if dims.is_empty() || dims.len() > 2 {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                format!("a shape of {} dimensions", dims.len()),
            )
            .hint("make a 1-D or 2-D array"));
    }
    let mut sizes = Vec::new();
    for d in dims {
        let n = t.int(d, span, "a dimension")?;
        let n = t.stable(n, Ty::I64);
        t.check_plain(
            cmp(CmpOp::Ge, n.clone(), Expr::I64(0)),
            Exception::ValueError,
            "negative dimensions are not allowed",
            span,
        );
        sizes.push(n);
    }
    let len = match &sizes[..] {
        [n] => n.clone(),
        [r, c] => {
            limit(
                t,
                bin(
                    BinOp::Mul,
                    Expr::Cast(Ty::F64, r.clone().boxed()),
                    Expr::Cast(Ty::F64, c.clone().boxed()),
                ),
                span,
            );
            t.stable(bin(BinOp::Mul, r.clone(), c.clone()), Ty::I64)
        }
        _ => unreachable!("one or two dimensions"),
    };
    limit(t, Expr::Cast(Ty::F64, len.clone().boxed()), span);
    Ok((len, sizes.get(1).cloned()))
}

/// NumPy's `MemoryError` for an array of more than [`MAX_LEN`] elements (`count` in double, so
/// that a product of two sizes cannot wrap before it is checked).
fn limit(t: &mut Translator, count: Expr, span: Span) {
    t.check_plain(
        cmp(CmpOp::Le, count, Expr::F64(MAX_LEN as f64)),
        Exception::MemoryError,
        "Unable to allocate an array of more than 2**31 elements in a filter",
        span,
    );
}

/// `np.arange(stop)`, `np.arange(start, stop[, step])`: NumPy's length,
/// `ceil((stop - start) / step)` in double (at least 0), and its values: `start`, `start + step`,
/// then `start + i * delta` with `delta = (start + step) - start`, in the arguments' type (int64
/// when all are integers, else float64).
pub(super) fn arange(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 3)?;
    let dtype = match a.kw("dtype") {
        Some((d, ds)) => Some((dtype_ty(t, &d, ds)?, ds)),
        None => None,
    };
    let mut args = Vec::new();
    while !a.pos.is_empty() {
        let (v, s) = a.take();
        args.push(t.scalar(v, s, "a bound of np.arange")?);
    }
    let all_ints = args.iter().all(|(_, ty)| *ty != Ty::F64);
    match dtype {
        // Integers as doubles are exact (the length check keeps them below 2**53).
        Some((Ty::F64, _)) | None => {}
        Some((Ty::I64, _)) if all_ints => {}
        Some((_, ds)) => {
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    ds,
                    "np.arange with this dtype (NumPy steps in the dtype, truncating)",
                )
                .hint("use dtype=float, or integer bounds with dtype=int"))
        }
    }
    let to_float = matches!(dtype, Some((Ty::F64, _))) && all_ints;
    let (start, stop, step) = match args.len() {
        1 => (
            (Expr::I64(0), Ty::I64),
            args[0].clone(),
            (Expr::I64(1), Ty::I64),
        ),
        2 => (args[0].clone(), args[1].clone(), (Expr::I64(1), Ty::I64)),
        _ => (args[0].clone(), args[1].clone(), args[2].clone()),
    };
    let ty = if [&start, &stop, &step].iter().any(|(_, t)| *t == Ty::F64) {
        Ty::F64
    } else {
        Ty::I64
    };
    let f = |t: &mut Translator, (e, et): (Expr, Ty)| t.stable(convert(e, et, Ty::F64), Ty::F64);
    let stop_i = stop.clone();
    let (lo, hi, st) = (f(t, start.clone()), f(t, stop), f(t, step.clone()));
    let st_f = st.clone();
    let zero_message = match ty {
        Ty::F64 => "float division by zero",
        _ => "division by zero",
    };
    t.check_plain(
        cmp(CmpOp::Ne, st.clone(), Expr::F64(0.0)),
        Exception::ZeroDivisionError,
        zero_message,
        span,
    );
    if ty == Ty::I64 {
        // NumPy divides the exact integer difference; in double that is exact up to 2**53.
        let span_ok = cmp(
            CmpOp::Le,
            crate::ir::Expr::Unary(UnOp::Abs, bin(BinOp::Sub, hi.clone(), lo.clone()).boxed()),
            Expr::F64(9007199254740992.0),
        );
        t.check_plain(
            span_ok,
            Exception::OverflowError,
            "np.arange over more than 2**53 integers in a filter",
            span,
        );
    }
    let diff = match ty {
        // The exact integer difference (in range: checked above), then in double.
        Ty::I64 => {
            let d = bin(
                BinOp::Sub,
                convert(stop_i.0.clone(), stop_i.1, Ty::I64),
                convert(start.0.clone(), start.1, Ty::I64),
            );
            Expr::Cast(Ty::F64, d.boxed())
        }
        _ => bin(BinOp::Sub, hi, lo.clone()),
    };
    let quotient = t.stable(bin(BinOp::Div, diff, st), Ty::F64);
    t.check_plain(
        cmp(CmpOp::Eq, quotient.clone(), quotient.clone()),
        Exception::ValueError,
        "arange: cannot compute length",
        span,
    );
    let ceil = t.stable(Expr::Unary(UnOp::Ceil, quotient.boxed()), Ty::F64);
    t.check_plain(
        cmp(CmpOp::Le, ceil.clone(), Expr::F64(9.2e18)),
        Exception::ValueError,
        "Maximum allowed size exceeded",
        span,
    );
    limit(t, ceil.clone(), span);
    let len = t.stable(
        bin(BinOp::Max, Expr::Cast(Ty::I64, ceil.boxed()), Expr::I64(0)),
        Ty::I64,
    );
    let index = t.temp(Ty::I64);
    let i = Expr::Var(index);
    let elem = match ty {
        Ty::I64 => {
            let (s0, _) = start;
            let (d, _) = step;
            let s0 = t.stable(s0, Ty::I64);
            let d = t.stable(d, Ty::I64);
            bin(BinOp::Add, s0, bin(BinOp::Mul, i, d))
        }
        _ => {
            let second = t.stable(bin(BinOp::Add, lo.clone(), st_f), Ty::F64);
            let delta = t.stable(bin(BinOp::Sub, second.clone(), lo.clone()), Ty::F64);
            let later = bin(
                BinOp::Add,
                lo.clone(),
                bin(BinOp::Mul, Expr::Cast(Ty::F64, i.clone().boxed()), delta),
            );
            Expr::Select(
                cmp(CmpOp::Eq, i.clone(), Expr::I64(0)).boxed(),
                lo.boxed(),
                Expr::Select(
                    cmp(CmpOp::Eq, i, Expr::I64(1)).boxed(),
                    second.boxed(),
                    later.boxed(),
                )
                .boxed(),
            )
        }
    };
    let arr = ArrayVal {
        len,
        ty,
        index,
        elem,
    };
    Ok(Value::Array(match to_float {
        true => super::as_type(&arr, Ty::F64),
        false => arr,
    }))
}
