//! NumPy's reductions of an array to one value: sums, products and means, variances, extremes,
//! medians, logical reductions and positions, with the `dtype=` of those that take one.

use super::arrays::{cast_array, dtype_ty};
use super::{counted_loop, Args};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{ArrayOp, BinOp, CmpOp, Expr, ReduceOp, SortedStat, Stmt, Ty, UnOp};
use crate::lower::expr::{bin, cmp, convert, un};
use crate::lower::names::Func::{self, *};
use crate::lower::numpy::as_type;
use crate::lower::numpy::zero_signs::{self, Shows};
use crate::lower::value::{ArrayVal, Value};
use crate::lower::{not, Translator};
use crate::syntax::ast;

/// NumPy reductions by name, on an array (or a number, as a one-element array), with the
/// `dtype=` of those that take one.
pub(in crate::lower) fn reduction(
    t: &mut Translator,
    base: Func,
    v: Value,
    s: Span,
    a: &mut Args,
) -> Result<Value> {
    // A sum's or a product's type is its array's (`-np.sum([])` is -0.0).
    let arr = match (v, matches!(base, Sum | Prod | Nansum | Nanprod)) {
        (v @ Value::List(..), true) => t.numpy_array_of(v, s)?,
        (v, _) => reduced_array(t, v, s)?,
    };
    // `dtype` follows `axis` (which `numpy::axes` has taken) among the positional arguments.
    let dtype = match takes_dtype(base) {
        true if !a.pos.is_empty() => Some(a.pos.remove(0)),
        true => a.kw("dtype"),
        false => None,
    };
    let arr = match dtype {
        Some(dtype) => with_dtype(t, base, arr, dtype)?,
        None => arr,
    };
    reduce_values(t, base, arr, a)
}

/// The values a reduction reads: an array, or a number as a one-element array.
fn reduced_array(t: &mut Translator, v: Value, s: Span) -> Result<ArrayVal> {
    Ok(match v {
        Value::Scalar(e, ty) => ArrayVal {
            len: Expr::I64(1),
            ty,
            index: t.temp(Ty::I64),
            elem: e,
        },
        v => t.array_of(v, s)?,
    })
}

/// The reductions that take NumPy's `dtype=`. The others (`np.max`, `np.median`, `np.any`,
/// `np.average` ...) leave it to [`Args::done`], which refuses it as NumPy does.
pub(in crate::lower) fn takes_dtype(f: Func) -> bool {
    matches!(
        f,
        Sum | Nansum | Prod | Nanprod | Mean | Nanmean | Var | Nanvar | Std | Nanstd
    )
}

/// `arr` as `np.<f>(arr, dtype=d)` reduces it: NumPy casts each value to `d` (as `astype`
/// does: NaN and values past 64 bits become `-(2**63)`) and reduces in `d`. The `nan` forms
/// replace a NaN first (by 0 for a sum, 1 for a product), as NumPy's `_replace_nan` does.
/// float64 serves every reduction; int64 the sums and products, which NumPy keeps integral
/// (its mean, variance and deviation of an int64 dtype truncate through casts ndjit does not
/// model, so they are refused, as are bool and the narrow types).
fn with_dtype(
    t: &mut Translator,
    f: Func,
    arr: ArrayVal,
    (d, ds): (Value, Span),
) -> Result<ArrayVal> {
    if matches!(d, Value::None) {
        return Ok(arr);
    }
    let ty = dtype_ty(t, &d, ds)?;
    let arr = match (ty, f) {
        (Ty::F64, _) | (Ty::I64, Sum | Prod) => arr,
        (Ty::I64, Nansum | Nanprod) if arr.ty == Ty::F64 => {
            let fill = if f == Nansum { 0.0 } else { 1.0 };
            let replaced = Expr::Select(
                un(UnOp::IsNan, arr.elem.clone()).boxed(),
                Expr::F64(fill).boxed(),
                arr.elem.clone().boxed(),
            );
            ArrayVal {
                elem: replaced,
                ..arr
            }
        }
        (Ty::I64, Nansum | Nanprod) => arr,
        _ => {
            let hint = match ty {
                Ty::Bool => "np.any(x) or np.all(x) for a logical reduction",
                _ => "leave dtype= out (the reduction computes in float64)",
            };
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    ds,
                    format!("np.{f}() with this dtype"),
                )
                .hint(hint));
        }
    };
    Ok(cast_array(arr, ty))
}

/// [`reduction`] of values already gathered, without a `dtype=`.
fn reduce_values(t: &mut Translator, base: Func, arr: ArrayVal, a: &mut Args) -> Result<Value> {
    let span = a.span;
    if let Some((_, ks)) = a.kw("keepdims").or(a.kw("out")).or(a.kw("where")) {
        return Err(t.err(
            ErrorKind::Unsupported,
            ks,
            "keepdims=, out= and where= are not supported in filters",
        ));
    }
    let n = t.stable(arr.len.clone(), Ty::I64);
    // Extremes, ranks and sorted positions run over doubles: exact for ints up to 2**53.
    if arr.ty == Ty::I64 && ranks_values(base) {
        crate::lower::numpy::exact_ints(t, &arr, &format!("np.{base}"), span);
    }
    match base {
        Sum | Nansum | Prod | Nanprod | Mean | Nanmean => sum_or_mean(t, base, arr, &n, span),
        Var | Std | Nanvar | Nanstd => {
            let ddof = ddof(t, a)?;
            variance(t, base, arr, &n, ddof, span)
        }
        Min | Max => extreme(t, base, arr, span),
        Nanmin | Nanmax => nan_extreme(t, base, arr, span),
        Ptp => ptp(t, arr, span),
        Median | Nanmedian => Ok(median(t, base, arr)),
        Percentile | Nanpercentile | Quantile | Nanquantile => {
            super::quantiles::quantile(t, base, arr, &n, a)
        }
        Any | All | CountNonzero => logical(t, base, arr, span),
        Argmin | Argmax => arg_extreme(t, base == Argmax, &as_type(&arr, Ty::F64), span),
        Nanargmin | Nanargmax => nan_arg_extreme(t, base == Nanargmax, arr, span),
        _ => Err(t.err(
            ErrorKind::UnknownName,
            span,
            format!("np.{base} is not supported in filters"),
        )),
    }
}

/// `np.argmin`/`np.argmax` of doubles: the first position of the extreme (of the first NaN,
/// where one is: NumPy's NaN wins).
fn arg_extreme(t: &mut Translator, max: bool, x: &ArrayVal, span: Span) -> Result<Value> {
    let (op, name) = match max {
        true => (ReduceOp::ArgMax, "argmax"),
        false => (ReduceOp::ArgMin, "argmin"),
    };
    let msg = format!("attempt to get {name} of an empty sequence");
    Ok(Value::Scalar(t.reduce(op, x, span, Some(&msg))?, Ty::I64))
}

/// `np.nanargmin`/`np.nanargmax`, as NumPy writes them: a NaN replaced by `+inf` (`-inf` for the
/// maximum), then the plain arg-extreme, after `ValueError` where every value is NaN (an empty
/// array too). Ints and bools hold no NaN: their plain arg-extreme.
fn nan_arg_extreme(t: &mut Translator, max: bool, arr: ArrayVal, span: Span) -> Result<Value> {
    if arr.ty != Ty::F64 {
        return arg_extreme(t, max, &as_type(&arr, Ty::F64), span);
    }
    let valid = count_valid(t, &arr, span)?;
    t.check_plain(
        cmp(CmpOp::Ne, valid, Expr::I64(0)),
        Exception::ValueError,
        "All-NaN slice encountered",
        span,
    );
    let fill = if max {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    arg_extreme(t, max, &nan_to(&arr, fill), span)
}

/// A reduction's double result.
fn double(e: Expr) -> Result<Value> {
    Ok(Value::Scalar(e, Ty::F64))
}

/// NumPy's error for an empty array reduced by `op`, which has no identity.
fn no_identity(op: &str) -> String {
    format!("zero-size array to reduction operation {op} which has no identity")
}

/// Whether an element is NaN (never, for ints and bools).
pub(super) fn is_nan(arr: &ArrayVal) -> Expr {
    un(UnOp::IsNan, convert(arr.elem.clone(), arr.ty, Ty::F64))
}

/// The elements as doubles, a NaN replaced by `v` (NumPy's `_replace_nan` for the `nan` forms).
fn nan_to(arr: &ArrayVal, v: f64) -> ArrayVal {
    ArrayVal {
        elem: Expr::Select(
            is_nan(arr).boxed(),
            Expr::F64(v).boxed(),
            convert(arr.elem.clone(), arr.ty, Ty::F64).boxed(),
        ),
        ty: Ty::F64,
        ..arr.clone()
    }
}

/// The `ddof` of a variance, positional or keyword (0 by default), as a double.
fn ddof(t: &mut Translator, a: &mut Args) -> Result<Expr> {
    match a.pos.pop().or_else(|| a.kw("ddof")) {
        Some((d, ds)) => {
            let (e, ty) = t.scalar(d, ds, "ddof")?;
            Ok(convert(e, ty, Ty::F64))
        }
        None => Ok(Expr::F64(0.0)),
    }
}

/// `np.sum`, `np.prod`, `np.mean` and their `nan` forms, over `n` values.
fn sum_or_mean(
    t: &mut Translator,
    base: Func,
    arr: ArrayVal,
    n: &Expr,
    span: Span,
) -> Result<Value> {
    match base {
        Sum | Nansum => {
            if arr.ty != Ty::F64 {
                let ints = as_type(&arr, Ty::I64);
                return Ok(Value::Scalar(
                    t.reduce(ReduceOp::SumInt, &ints, span, None)?,
                    Ty::I64,
                ));
            }
            let src = if base == Nansum {
                nan_to(&arr, 0.0)
            } else {
                arr
            };
            double(t.reduce(ReduceOp::Sum, &src, span, None)?)
        }
        // NumPy multiplies integers (and bools) as int64, wrapping: never through doubles,
        // which round past 2**53.
        Prod | Nanprod if arr.ty != Ty::F64 => Ok(Value::Scalar(int_product(t, &arr)?, Ty::I64)),
        Prod | Nanprod => {
            let src = if base == Nanprod {
                nan_to(&arr, 1.0)
            } else {
                arr
            };
            double(t.reduce(ReduceOp::Prod, &src, span, None)?)
        }
        Mean => {
            let s = t.reduce(ReduceOp::Sum, &as_type(&arr, Ty::F64), span, None)?;
            double(bin(BinOp::Div, s, convert(n.clone(), Ty::I64, Ty::F64)))
        }
        _ => {
            let s = t.reduce(ReduceOp::Sum, &nan_to(&arr, 0.0), span, None)?;
            let c = count_valid(t, &arr, span)?;
            double(bin(BinOp::Div, s, convert(c, Ty::I64, Ty::F64)))
        }
    }
}

/// `np.var`, `np.std` and their `nan` forms, in NumPy's two passes: the mean, then the sum of
/// squared deviations, divided by the count less `ddof`.
fn variance(
    t: &mut Translator,
    base: Func,
    arr: ArrayVal,
    n: &Expr,
    ddof: Expr,
    span: Span,
) -> Result<Value> {
    let x = as_type(&arr, Ty::F64);
    // Ints and bools hold no NaN: NumPy's `nan` forms call `np.var`/`np.std` for them, whose
    // count less `ddof` stops at zero (a variance past it is inf, where the float form's is NaN).
    let base = match base {
        Nanvar if arr.ty != Ty::F64 => Var,
        Nanstd if arr.ty != Ty::F64 => Std,
        b => b,
    };
    let var = if matches!(base, Var | Std) {
        let nf = convert(n.clone(), Ty::I64, Ty::F64);
        let s = t.reduce(ReduceOp::Sum, &x, span, None)?;
        let mean = t.stable(bin(BinOp::Div, s, nf.clone()), Ty::F64);
        let dev = bin(BinOp::Sub, x.elem.clone(), mean);
        let sq = ArrayVal {
            elem: bin(BinOp::Mul, dev.clone(), dev),
            ..x.clone()
        };
        let ss = t.reduce(ReduceOp::Sum, &sq, span, None)?;
        let denom = bin(BinOp::Max, bin(BinOp::Sub, nf, ddof), Expr::F64(0.0));
        bin(BinOp::Div, ss, denom)
    } else {
        let cnt = count_valid(t, &arr, span)?;
        let cnt = convert(cnt, Ty::I64, Ty::F64);
        let s = t.reduce(ReduceOp::Sum, &nan_to(&arr, 0.0), span, None)?;
        let avg = t.stable(bin(BinOp::Div, s, cnt.clone()), Ty::F64);
        let dev = bin(BinOp::Sub, x.elem.clone(), avg);
        let sq = bin(BinOp::Mul, dev.clone(), dev);
        let sq = ArrayVal {
            elem: Expr::Select(is_nan(&arr).boxed(), Expr::F64(0.0).boxed(), sq.boxed()),
            ..x.clone()
        };
        let ss = t.reduce(ReduceOp::Sum, &sq, span, None)?;
        let dof = t.stable(bin(BinOp::Sub, cnt, ddof), Ty::F64);
        Expr::Select(
            cmp(CmpOp::Le, dof.clone(), Expr::F64(0.0)).boxed(),
            Expr::F64(f64::NAN).boxed(),
            bin(BinOp::Div, ss, dof).boxed(),
        )
    };
    double(if matches!(base, Std | Nanstd) {
        un(UnOp::Sqrt, var)
    } else {
        var
    })
}

/// `np.min` and `np.max`: NaN if any value is; ints keep their kind.
fn extreme(t: &mut Translator, base: Func, arr: ArrayVal, span: Span) -> Result<Value> {
    let (op, name) = if base == Min {
        (ReduceOp::Min, "minimum")
    } else {
        (ReduceOp::Max, "maximum")
    };
    let e = t.reduce(op, &as_type(&arr, Ty::F64), span, Some(&no_identity(name)))?;
    Ok(if arr.ty == Ty::F64 {
        zero_signs::guard(t, &arr, Shows::Result(&e), &format!("np.{base}"), span)?;
        Value::Scalar(e, Ty::F64)
    } else {
        // The extreme of ints is an int64, of bools a bool (`np.max(b) + np.max(b)` is an or).
        Value::Scalar(Expr::Cast(arr.ty, e.boxed()), arr.ty)
    })
}

/// `np.nanmin` and `np.nanmax`, NumPy's `fmin.reduce`: NaN only when every element is NaN.
fn nan_extreme(t: &mut Translator, base: Func, arr: ArrayVal, span: Span) -> Result<Value> {
    if arr.ty != Ty::F64 {
        // Ints and bools hold no NaN: NumPy takes their plain extreme, in their own kind.
        return extreme(t, if base == Nanmin { Min } else { Max }, arr, span);
    }
    let (op, fill, name) = if base == Nanmin {
        (ReduceOp::Min, f64::INFINITY, "fmin")
    } else {
        (ReduceOp::Max, f64::NEG_INFINITY, "fmax")
    };
    let r = t.reduce(op, &nan_to(&arr, fill), span, Some(&no_identity(name)))?;
    let Expr::Var(r) = r else {
        unreachable!("a reduction's result is a variable")
    };
    let (_, check) = t.nested(|t| {
        let c = count_valid(t, &arr, span)?;
        t.emit(Stmt::If(
            cmp(CmpOp::Eq, c, Expr::I64(0)),
            vec![Stmt::Assign(r, Expr::F64(f64::NAN))],
            vec![],
        ));
        Ok(())
    })?;
    t.emit(Stmt::If(
        cmp(CmpOp::Eq, Expr::Var(r), Expr::F64(fill)),
        check,
        vec![],
    ));
    if arr.ty == Ty::F64 {
        // Over the values themselves: a NaN, which fmin/fmax skip, is no zero either.
        let name = format!("np.{base}");
        zero_signs::guard(t, &arr, Shows::Result(&Expr::Var(r)), &name, span)?;
    }
    double(Expr::Var(r))
}

/// `np.ptp`: the maximum less the minimum, subtracted in the values' own kind.
fn ptp(t: &mut Translator, arr: ArrayVal, span: Span) -> Result<Value> {
    let x = as_type(&arr, Ty::F64);
    let hi = t.reduce(ReduceOp::Max, &x, span, Some(&no_identity("maximum")))?;
    let lo = t.reduce(ReduceOp::Min, &x, span, Some(&no_identity("minimum")))?;
    if arr.ty != Ty::F64 {
        // NumPy subtracts integers as int64 (and bools refuse to: see `binary`).
        let (hi, lo) = (convert(hi, Ty::F64, Ty::I64), convert(lo, Ty::F64, Ty::I64));
        let (hi, lo) = (Value::Scalar(hi, Ty::I64), Value::Scalar(lo, Ty::I64));
        let kind = if arr.ty == Ty::Bool {
            Ty::Bool
        } else {
            Ty::I64
        };
        let as_kind = |v: Value| match v {
            Value::Scalar(e, _) => Value::Scalar(convert(e, Ty::I64, kind), kind),
            v => v,
        };
        return t.binary(ast::BinOp::Sub, as_kind(hi), as_kind(lo), span);
    }
    let range = bin(BinOp::Sub, hi, lo);
    // Only a zero range shows the extremes' signs: both are then zeros.
    zero_signs::guard(t, &x, Shows::Result(&range), "np.ptp", span)?;
    double(range)
}

/// `np.median` and `np.nanmedian`: the IR's median of a sorted copy.
fn median(t: &mut Translator, base: Func, arr: ArrayVal) -> Value {
    let keep = if base == Nanmedian {
        Some(not(is_nan(&arr)))
    } else {
        None
    };
    let sorted = sorted_copy(t, &arr, keep);
    let dst = t.temp(Ty::F64);
    t.emit(Stmt::Sorted {
        dst,
        stat: SortedStat::Median,
        arr: sorted,
        q: Expr::F64(0.0),
    });
    Value::Scalar(Expr::Var(dst), Ty::F64)
}

/// `np.any`, `np.all` and `np.count_nonzero`, of the values' truth.
fn logical(t: &mut Translator, base: Func, arr: ArrayVal, span: Span) -> Result<Value> {
    let b = as_type(&arr, Ty::Bool);
    Ok(match base {
        Any => Value::Scalar(t.reduce(ReduceOp::Any, &b, span, None)?, Ty::Bool),
        All => Value::Scalar(t.reduce(ReduceOp::All, &b, span, None)?, Ty::Bool),
        _ => Value::Scalar(t.reduce(ReduceOp::Count, &b, span, None)?, Ty::I64),
    })
}

/// `np.average(x)` and `np.average(x, weights=w)`.
pub(super) fn average(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (x, xs) = a.take();
    // np.average takes no dtype=: `reduce_values` leaves it for `Args::done` to refuse.
    match a.kw("weights") {
        None => {
            let x = reduced_array(t, x, xs)?;
            reduce_values(t, Mean, x, a)
        }
        Some((w, ws)) => weighted_average(t, (x, xs), (w, ws), a),
    }
}

/// `np.average(x, weights=w)`: NumPy multiplies and sums in float64 (whatever `x` and `w`
/// hold), and raises where the weights sum to zero.
fn weighted_average(
    t: &mut Translator,
    (x, xs): (Value, Span),
    (w, ws): (Value, Span),
    a: &mut Args,
) -> Result<Value> {
    let span = a.span;
    same_shape(t, (&x, &w), span);
    let x = crate::lower::numpy::as_type(&reduced_array(t, x, xs)?, Ty::F64);
    let w = crate::lower::numpy::as_type(&reduced_array(t, w, ws)?, Ty::F64);
    let xw = t.binary(
        ast::BinOp::Mul,
        Value::Array(x),
        Value::Array(w.clone()),
        span,
    )?;
    let xw = reduced_array(t, xw, span)?;
    let num = reduce_values(t, Sum, xw, a)?;
    let den = reduce_values(t, Sum, w, a)?;
    let (den, _) = t.scalar(den, ws, "the weights' sum")?;
    let den = t.stable(den, Ty::F64);
    t.check_plain(
        cmp(CmpOp::Ne, den.clone(), Expr::F64(0.0)),
        Exception::ZeroDivisionError,
        "Weights sum to zero, can't be normalized",
        ws,
    );
    t.binary(ast::BinOp::Div, num, Value::Scalar(den, Ty::F64), span)
}

/// NumPy's check that `np.average`'s values and weights have one shape (no broadcasting
/// without an axis): a `TypeError` at run time where they differ.
fn same_shape(t: &mut Translator, (x, w): (&Value, &Value), span: Span) {
    fn dims(v: &Value) -> Option<Vec<Expr>> {
        Some(match v {
            Value::Scalar(..) => vec![],
            Value::Array(a) | Value::List(a, _) => vec![a.len.clone()],
            Value::Tuple(items) => vec![Expr::I64(items.len() as i64)],
            // The element count and the column count, which give the row count.
            Value::Matrix(a, cols) => vec![a.len.clone(), cols.clone()],
            _ => return None, // not an array: `array_of` says so
        })
    }
    let (Some(dx), Some(dw)) = (dims(x), dims(w)) else {
        return;
    };
    let message = "Axis must be specified when shapes of a and weights differ.";
    if dx.len() != dw.len() {
        let never = cmp(CmpOp::Ne, Expr::I64(0), Expr::I64(0));
        return t.check_plain(never, Exception::TypeError, message, span);
    }
    for (a, b) in dx.into_iter().zip(dw) {
        t.check_plain(cmp(CmpOp::Eq, a, b), Exception::TypeError, message, span);
    }
}

/// The reductions that order the values (extremes, their positions, sorted positions), which
/// ndjit computes over doubles.
pub(in crate::lower) fn ranks_values(f: Func) -> bool {
    matches!(
        f,
        Min | Max
            | Nanmin
            | Nanmax
            | Ptp
            | Median
            | Nanmedian
            | Percentile
            | Nanpercentile
            | Quantile
            | Nanquantile
            | Argmin
            | Argmax
            | Nanargmin
            | Nanargmax
    )
}

/// The product of integers or bools as NumPy's `multiply.reduce` computes it: in int64,
/// wrapping, from 1.
fn int_product(t: &mut Translator, arr: &ArrayVal) -> Result<Expr> {
    let ints = crate::lower::numpy::as_type(arr, Ty::I64);
    let len = t.stable(ints.len.clone(), Ty::I64);
    let acc = t.temp(Ty::I64);
    t.emit(Stmt::Assign(acc, Expr::I64(1)));
    counted_loop(t, len, |t, i| {
        t.emit(Stmt::Assign(
            acc,
            bin(BinOp::Mul, Expr::Var(acc), ints.at(i)),
        ));
        Ok(())
    })?;
    Ok(Expr::Var(acc))
}

/// The number of non-NaN elements.
pub(in crate::lower) fn count_valid(
    t: &mut Translator,
    arr: &ArrayVal,
    span: Span,
) -> Result<Expr> {
    let valid = ArrayVal {
        elem: not(un(UnOp::IsNan, convert(arr.elem.clone(), arr.ty, Ty::F64))),
        ty: Ty::Bool,
        ..arr.clone()
    };
    t.reduce(ReduceOp::Count, &valid, span, None)
}

/// A sorted f64 copy (of the elements where `keep` holds).
pub(in crate::lower) fn sorted_copy(
    t: &mut Translator,
    arr: &ArrayVal,
    keep: Option<Expr>,
) -> crate::ir::Arr {
    let x = ArrayVal {
        elem: convert(arr.elem.clone(), arr.ty, Ty::F64),
        ty: Ty::F64,
        ..arr.clone()
    };
    let m = t.materialize(&x, keep);
    let slot = m.slot().unwrap();
    t.emit(Stmt::ArrayOp(ArrayOp::SORT, slot));
    slot
}
