//! New arrays: `np.zeros`, `np.ones`, `np.full` (and their `_like` forms) and `np.arange`. Each is
//! a lazy array, an element expression over its index, so a later index assignment copies it
//! like any other array value ([`super::super::window_writes`]).

use super::super::builtins::{cast_elem, dtype_ty, Args};
use super::super::expr::{bin, cmp, convert};
use super::super::names::Func;
use super::super::value::{ArrayVal, Value};
use super::super::{not, Translator};
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
    // The value as NumPy stores it into an array of `ty` (a float into an int array with the
    // C cast of `astype`).
    let value = t.stable(value, vty);
    let filled = ArrayVal {
        len,
        ty,
        index: t.temp(Ty::I64),
        elem: cast_elem(value, vty, ty),
    };
    Ok(super::shaped(filled, cols))
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
        let n = super::dimension(t, d, span)?;
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
            t.check_matrix_shape(r, c, span);
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
pub(crate) fn limit(t: &mut Translator, count: Expr, span: Span) {
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
    // Whether every argument is a Python number: NumPy divides a NumPy scalar by a zero step
    // without raising (the length is then NaN or infinite), Python raises ZeroDivisionError.
    let mut python = Expr::Bool(true);
    while !a.pos.is_empty() {
        let (v, s) = a.take();
        let (e, ty) = t.scalar(v, s, "a bound of np.arange")?;
        python = bin(BinOp::And, python, t.prov(&e).flag());
        args.push((t.stable(e, ty), ty));
    }
    let ints = args.iter().all(|(_, ty)| *ty != Ty::F64);
    match dtype {
        // Integers as doubles are exact (the length check keeps them below 2**53).
        Some((Ty::F64, _)) | None => {}
        Some((Ty::I64, _)) if ints => {}
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
    let (zero, one) = ((Expr::I64(0), Ty::I64), (Expr::I64(1), Ty::I64));
    let (start, stop, step) = match &args[..] {
        [stop] => (zero, stop.clone(), one),
        [start, stop] => (start.clone(), stop.clone(), one),
        [start, stop, step, ..] => (start.clone(), stop.clone(), step.clone()),
        [] => unreachable!("arity checked"),
    };
    let len = arange_len(t, (ints, python), &start, &stop, &step, span);
    let index = t.temp(Ty::I64);
    let i = Expr::Var(index);
    let elem = if ints {
        let (start, step) = (
            convert(start.0, start.1, Ty::I64),
            convert(step.0, step.1, Ty::I64),
        );
        bin(BinOp::Add, start, bin(BinOp::Mul, i, step))
    } else {
        let lo = convert(start.0, start.1, Ty::F64);
        let second = t.stable(
            bin(BinOp::Add, lo.clone(), convert(step.0, step.1, Ty::F64)),
            Ty::F64,
        );
        let delta = t.stable(bin(BinOp::Sub, second.clone(), lo.clone()), Ty::F64);
        let later = bin(
            BinOp::Add,
            lo.clone(),
            bin(BinOp::Mul, Expr::Cast(Ty::F64, i.clone().boxed()), delta),
        );
        let at = |k: i64| cmp(CmpOp::Eq, i.clone(), Expr::I64(k)).boxed();
        Expr::Select(
            at(0),
            lo.boxed(),
            Expr::Select(at(1), second.boxed(), later.boxed()).boxed(),
        )
    };
    let arr = ArrayVal {
        len,
        ty: if ints { Ty::I64 } else { Ty::F64 },
        index,
        elem,
    };
    // `dtype=float` with integer bounds: the integers as doubles.
    let to_float = ints && matches!(dtype, Some((Ty::F64, _)));
    Ok(Value::Array(match to_float {
        true => super::as_type(&arr, Ty::F64),
        false => arr,
    }))
}

/// NumPy's length of `np.arange(start, stop, step)` (each a stable value and its type; `ints`
/// when all are integers, `python` true when all are Python numbers), with its errors: a zero
/// step, a NaN or infinite length, and more elements than a filter holds.
fn arange_len(
    t: &mut Translator,
    (ints, python): (bool, Expr),
    start: &(Expr, Ty),
    stop: &(Expr, Ty),
    step: &(Expr, Ty),
    span: Span,
) -> Expr {
    let float = |(e, ty): &(Expr, Ty)| convert(e.clone(), *ty, Ty::F64);
    let (lo, hi, st) = (float(start), float(stop), float(step));
    let zero_message = match ints {
        true => "division by zero",
        false => "float division by zero",
    };
    t.check_plain(
        bin(
            BinOp::Or,
            cmp(CmpOp::Ne, st.clone(), Expr::F64(0.0)),
            not(python),
        ),
        Exception::ZeroDivisionError,
        zero_message,
        span,
    );
    let diff = if ints {
        // NumPy divides the exact integer difference; in double that is exact up to 2**53.
        let span_ok = cmp(
            CmpOp::Le,
            Expr::Unary(UnOp::Abs, bin(BinOp::Sub, hi, lo).boxed()),
            Expr::F64(9007199254740992.0),
        );
        t.check_plain(
            span_ok,
            Exception::OverflowError,
            "np.arange over more than 2**53 integers in a filter",
            span,
        );
        let int = |(e, ty): &(Expr, Ty)| convert(e.clone(), *ty, Ty::I64);
        Expr::Cast(Ty::F64, bin(BinOp::Sub, int(stop), int(start)).boxed())
    } else {
        bin(BinOp::Sub, hi, lo)
    };
    let diff = t.stable(diff, Ty::F64);
    let quotient = t.stable(bin(BinOp::Div, diff.clone(), st), Ty::F64);
    t.check_plain(
        cmp(CmpOp::Eq, quotient.clone(), quotient.clone()),
        Exception::ValueError,
        "arange: cannot compute length",
        span,
    );
    // NumPy's `_calc_length`: a quotient that underflowed to zero (or met an infinite step)
    // from a non-zero difference is one element, or none where its sign is negative.
    let underflow = bin(
        BinOp::And,
        cmp(CmpOp::Eq, quotient.clone(), Expr::F64(0.0)),
        cmp(CmpOp::Ne, diff, Expr::F64(0.0)),
    );
    let underflow = t.stable(underflow, Ty::Bool);
    let one_or_none = Expr::Select(
        Expr::Unary(UnOp::SignBit, quotient.clone().boxed()).boxed(),
        Expr::F64(0.0).boxed(),
        Expr::F64(1.0).boxed(),
    );
    let ceil = Expr::Unary(UnOp::Ceil, quotient.boxed());
    let ceil = t.stable(
        Expr::Select(underflow.boxed(), one_or_none.boxed(), ceil.boxed()),
        Ty::F64,
    );
    // Below NumPy's index range (-inf included) it cannot compute the length; above about
    // 9.2e18 elements it cannot make the array.
    let size_ok = bin(
        BinOp::And,
        cmp(
            CmpOp::Ge,
            ceil.clone(),
            Expr::F64(-9_223_372_036_854_775_808.0),
        ),
        cmp(CmpOp::Le, ceil.clone(), Expr::F64(9.2e18)),
    );
    t.check_plain(
        size_ok,
        Exception::ValueError,
        "Maximum allowed size exceeded",
        span,
    );
    limit(t, ceil.clone(), span);
    t.stable(
        bin(BinOp::Max, Expr::Cast(Ty::I64, ceil.boxed()), Expr::I64(0)),
        Ty::I64,
    )
}

/// `np.array([row, row, ...])` with rows of numbers (tuple or list displays, arrays, lists) of one
/// length: a 2-D array. Rows of different lengths raise NumPy's ValueError; a row that is a number
/// beside sequences is refused.
pub(crate) fn rows_to_matrix(t: &mut Translator, rows: Vec<Value>, span: Span) -> Result<Value> {
    let mut arrays = Vec::new();
    for r in rows {
        match r {
            Value::Tuple(_) | Value::Array(_) | Value::List(..) => {
                let a = t.array_of(r, span)?;
                arrays.push(t.materialize(&a, None));
            }
            other => {
                return Err(t
                    .err(
                        ErrorKind::Type,
                        span,
                        format!(
                            "a row of a 2-D array must be a sequence of numbers, not {}",
                            other.describe()
                        ),
                    )
                    .hint("write every row as a list: [[1, 2], [3, 4]]"))
            }
        }
    }
    let cols = t.stable(arrays[0].len.clone(), Ty::I64);
    for a in &arrays[1..] {
        t.check(
            cmp(CmpOp::Eq, a.len.clone(), cols.clone()),
            Exception::ValueError,
            "setting an array element with a sequence. The requested array has an inhomogeneous \
             shape after 1 dimensions: rows of {b} and {a} elements",
            span,
            a.len.clone(),
            cols.clone(),
        );
    }
    let ty = arrays.iter().map(|a| a.ty).max().unwrap_or(Ty::F64);
    let index = t.temp(Ty::I64);
    let per_row = bin(BinOp::Max, cols.clone(), Expr::I64(1));
    let row = bin(BinOp::FloorDiv, Expr::Var(index), per_row.clone());
    let col = bin(BinOp::Mod, Expr::Var(index), per_row);
    // Element i is row i / cols, column i % cols (every row is cols long, checked above).
    let mut elem = convert(
        arrays.last().unwrap().at(col.clone()),
        arrays.last().unwrap().ty,
        ty,
    );
    for (k, a) in arrays.iter().enumerate().rev().skip(1) {
        elem = Expr::Select(
            cmp(CmpOp::Eq, row.clone(), Expr::I64(k as i64)).boxed(),
            convert(a.at(col.clone()), a.ty, ty).boxed(),
            elem.boxed(),
        );
    }
    let len = bin(BinOp::Mul, Expr::I64(arrays.len() as i64), cols.clone());
    let elems = ArrayVal {
        len,
        ty,
        index,
        elem,
    };
    Ok(t.matrix(elems, Expr::I64(arrays.len() as i64), cols, span))
}
