//! Arrays made, converted and rearranged: `np.array` and its kin, `astype` and the dtypes ndjit
//! takes, `reshape`, `.item()`, `np.delete`, `np.concatenate`, `np.sort`, `np.flip`, `np.diff`,
//! `np.bincount`, and the sizes `len()` and `np.size`.

use super::scalars::{fits_i64, int_checks};
use super::{counted_loop, zeros, Args};
use crate::error::{Error, ErrorKind, Exception, Result, Span};
use crate::ir::{ArrayOp, BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty};
use crate::lower::expr::{bin, cmp, convert};
use crate::lower::names::Func::{self, *};
use crate::lower::names::{Builtin, Module};
use crate::lower::not;
use crate::lower::numpy::zero_signs::{self, Shows};
use crate::lower::strided_dots::Stride;
use crate::lower::value::{ArrayVal, Value};
use crate::lower::Translator;

/// `np.array`, `np.asarray` and `.copy()`, which keep a 2-D array 2-D, and `np.ravel`,
/// `.ravel()` and `.flatten()`, which make it 1-D; with a `dtype=`.
/// The array `np.asarray` makes of a list or tuple: rows of one length make a 2-D array.
pub(super) fn asarray(t: &mut Translator, v: Value, s: Span) -> Result<Value> {
    match v {
        Value::Tuple(rows) if rows.iter().any(|r| !matches!(r, Value::Scalar(..))) => {
            crate::lower::numpy::creation::rows_to_matrix(t, rows, s)
        }
        Value::Tuple(_) | Value::List(..) => Ok(Value::Array(t.numpy_array_of(v, s)?)),
        v => Ok(v),
    }
}

pub(super) fn array(t: &mut Translator, base: Func, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let dtype = a.kw("dtype");
    let (v, s) = a.take();
    // `np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]])`: rows of one length make a 2-D array.
    let v = match v {
        Value::Tuple(rows) if rows.iter().any(|r| !matches!(r, Value::Scalar(..))) => {
            crate::lower::numpy::creation::rows_to_matrix(t, rows, s)?
        }
        // Numbers listed go to an int dtype as Python's `int()` takes them, raising for
        // NaN, infinity and values past 64 bits (an array's `astype` gives -(2**63)).
        Value::Tuple(items) if matches!(&dtype, Some((d, _)) if dtype_ty(t, d, s).ok() == Some(Ty::I64)) =>
        {
            let mut checked = Vec::with_capacity(items.len());
            for item in items {
                checked.push(match item {
                    Value::Scalar(e, Ty::F64) => {
                        let e = t.stable(e, Ty::F64);
                        int_checks(t, &e, s);
                        Value::Scalar(e, Ty::F64)
                    }
                    other => other,
                });
            }
            Value::Tuple(checked)
        }
        // A list's items likewise (`np.array([v * k for v in x], dtype=int)`).
        Value::List(items, kind) if matches!(&dtype, Some((d, _)) if dtype_ty(t, d, s).ok() == Some(Ty::I64)) => {
            Value::List(t.checked_items(items, Ty::I64, s)?, kind)
        }
        v => v,
    };
    // `np.array`, `np.asarray` and `.copy()` keep a 2-D array 2-D; `np.ravel`,
    // `.ravel()` and `.flatten()` make it 1-D.
    let cols = match base {
        Array | AsArray => crate::lower::numpy::columns(&v),
        _ => None,
    };
    let arr = match dtype {
        None => t.numpy_array_of(v, s)?,
        // A dtype decides the array's type, empty or not.
        Some((d, ds)) => {
            let arr = t.array_of(v, s)?;
            cast_array(arr, dtype_ty(t, &d, ds)?)
        }
    };
    Ok(crate::lower::numpy::shaped(arr, cols))
}

/// `np.copy(a)`: `np.array(a)`, which takes no `dtype`.
pub(super) fn copy(t: &mut Translator, a: &mut Args) -> Result<Value> {
    if let Some((_, _, s)) = a.kw.iter().find(|(n, _, _)| n == "dtype") {
        return Err(t
            .err(
                ErrorKind::Arity,
                *s,
                "copy() got an unexpected keyword argument 'dtype'",
            )
            .hint("np.array(a, dtype=...) copies and converts"));
    }
    array(t, Array, a)
}

/// `np.shape(a)` and `np.ndim(a)`: a number has shape `()`, a list or tuple that of its array.
pub(super) fn shape_or_ndim(t: &mut Translator, func: Func, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    let v = asarray(t, v, s)?;
    match (v, func) {
        (Value::Scalar(..), Shape) => Ok(Value::Tuple(vec![])),
        (Value::Scalar(..), _) => Ok(Value::Scalar(Expr::I64(0), Ty::I64)),
        (v @ (Value::Array(_) | Value::Matrix(..)), _) => {
            let attr = if func == Shape { "shape" } else { "ndim" };
            super::attribute(t, v, attr, s)
        }
        (v, _) => Err(t.err(
            ErrorKind::Type,
            s,
            format!(
                "np.{func}() takes an array or a number, not {}",
                v.describe()
            ),
        )),
    }
}

/// `x.astype(dtype)` of an array or a number.
pub(super) fn astype_method(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 2, 2)?;
    let (v, s) = a.take();
    let (d, ds) = a.take();
    match v {
        Value::Scalar(e, ty) => {
            let arr = ArrayVal {
                len: Expr::I64(1),
                ty,
                index: t.temp(Ty::I64),
                elem: e,
            };
            match astype(t, arr, d, ds)? {
                Value::Array(r) => Ok(Value::Scalar(r.elem, r.ty)),
                other => Ok(other),
            }
        }
        v => {
            let cols = crate::lower::numpy::columns(&v);
            let arr = t.array_of(v, s)?;
            let ty = dtype_ty(t, &d, ds)?;
            Ok(crate::lower::numpy::shaped(cast_array(arr, ty), cols))
        }
    }
}

/// `x.reshape(...)` and `np.reshape(x, ...)`, the shape as numbers or one tuple.
pub(super) fn reshape_call(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    if a.pos.len() < 2 {
        return Err(t.err(ErrorKind::Arity, span, "reshape() needs the new shape"));
    }
    let (v, s) = a.take();
    let arr = t.array_of(v, s)?;
    let dims: Vec<(Value, Span)> = match a.pos.len() {
        1 => match a.take() {
            (Value::Tuple(items), ds) => items.into_iter().map(|i| (i, ds)).collect(),
            // A bound tuple or list: its values live in the bound data, read as the filter runs.
            (Value::List(..), ds) => {
                return Err(t
                    .err(
                        ErrorKind::Unsupported,
                        ds,
                        "reshape takes its shape as constants, and a bound tuple's or list's \
                         values are read as the filter runs",
                    )
                    .hint("write the shape in the filter, e.g. w.reshape(3, 3)"))
            }
            one => vec![one],
        },
        _ => std::mem::take(&mut a.pos),
    };
    reshape(t, arr, dims, span)
}

/// `reshape(r, c)` to a 2-D array, or `reshape(n)` to 1-D, as NumPy reshapes: the dimensions
/// constants or computed (`n = int(np.sqrt(len(w))); w.reshape(n, n)`), a negative one the
/// unknown dimension that the length decides (at most one), and `ValueError` where the length
/// does not fit. Computed dimensions are checked as the filter runs; constant ones fold away.
fn reshape(
    t: &mut Translator,
    arr: ArrayVal,
    dims: Vec<(Value, Span)>,
    span: Span,
) -> Result<Value> {
    if dims.is_empty() {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                "a reshape to a 0-d array (shape ())",
            )
            .hint("read the one value instead, e.g. w[0]"));
    }
    if dims.len() > 2 {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                "filters reshape to 1-D or 2-D arrays",
            )
            .hint("e.g. w.reshape(3, 3)"));
    }
    let mut raw = Vec::new();
    for (d, s) in dims {
        raw.push(fold(crate::lower::numpy::dimension(t, d, s)?));
    }
    // `reshape(n, n)`: NumPy's message shows the one value twice.
    let square = matches!(raw.as_slice(), [r, c] if r == c);
    let ds: Vec<Expr> = raw.into_iter().map(|e| t.stable(e, Ty::I64)).collect();
    let len = t.stable(arr.len.clone(), Ty::I64);
    let zero = || Expr::I64(0);
    let negative = |d: &Expr| fold(cmp(CmpOp::Lt, d.clone(), zero()));
    // NumPy's ValueError unless `cond` holds, `shown` the value the message shows beside the
    // length.
    let fits = |t: &mut Translator, cond: Expr, message: &str, shown: Expr| {
        if fold(cond.clone()) != Expr::Bool(true) {
            t.check(
                cond,
                Exception::ValueError,
                message,
                span,
                len.clone(),
                shown,
            );
        }
    };
    let constant = |d: &Expr| crate::ir::fold::const_expr(d).map(|v| v.i());
    if let [n] = ds.as_slice() {
        let exact = bin(
            BinOp::Or,
            negative(n),
            cmp(CmpOp::Eq, len.clone(), n.clone()),
        );
        let message = match constant(n) {
            Some(n) => format!("cannot reshape array of size {{a}} into shape ({n},)"),
            None => "cannot reshape array of size {a} into shape ({b},)".to_string(),
        };
        fits(t, exact, &message, n.clone());
        return Ok(Value::Array(arr));
    }
    let [r, c] = [ds[0].clone(), ds[1].clone()];
    let (r_unknown, c_unknown) = (negative(&r), negative(&c));
    let one_unknown = not(bin(BinOp::And, r_unknown.clone(), c_unknown.clone()));
    fits(
        t,
        one_unknown,
        "can only specify one unknown dimension",
        zero(),
    );
    // An unknown dimension is the length over the other, which must divide it.
    let divides = |d: &Expr| {
        bin(
            BinOp::And,
            cmp(CmpOp::Ne, d.clone(), zero()),
            cmp(CmpOp::Eq, bin(BinOp::Mod, len.clone(), d.clone()), zero()),
        )
    };
    let inferred =
        |unknown: &Expr, other: &Expr| bin(BinOp::Or, not(unknown.clone()), divides(other));
    fits(
        t,
        inferred(&r_unknown, &c),
        "cannot reshape array of size {a} into rows of {b}",
        c.clone(),
    );
    fits(
        t,
        inferred(&c_unknown, &r),
        "cannot reshape array of size {a} into {b} rows",
        r.clone(),
    );
    // Both known: their product is the length (tested without the product, which may wrap).
    let product = Expr::Select(
        cmp(CmpOp::Eq, r.clone(), zero()).boxed(),
        cmp(CmpOp::Eq, len.clone(), zero()).boxed(),
        bin(
            BinOp::And,
            divides(&r),
            cmp(
                CmpOp::Eq,
                bin(BinOp::FloorDiv, len.clone(), r.clone()),
                c.clone(),
            ),
        )
        .boxed(),
    );
    let known = bin(
        BinOp::Or,
        bin(BinOp::Or, r_unknown.clone(), c_unknown.clone()),
        product,
    );
    let (message, shown) = match (constant(&r), constant(&c)) {
        (Some(a), Some(b)) => (
            format!("cannot reshape array of size {{a}} into shape ({a},{b})"),
            zero(),
        ),
        _ if square => (
            "cannot reshape array of size {a} into shape ({b},{b})".to_string(),
            r.clone(),
        ),
        _ => (
            "cannot reshape array of size {a} into a shape of {b} elements".to_string(),
            bin(BinOp::Mul, r.clone(), c.clone()),
        ),
    };
    fits(t, known, &message, shown);
    let over = |d: &Expr| bin(BinOp::FloorDiv, len.clone(), d.clone());
    let rows = fold(Expr::Select(
        r_unknown.boxed(),
        over(&c).boxed(),
        r.clone().boxed(),
    ));
    let cols = fold(Expr::Select(
        c_unknown.boxed(),
        over(&r).boxed(),
        c.clone().boxed(),
    ));
    let (rows, cols) = (t.stable(rows, Ty::I64), t.stable(cols, Ty::I64));
    // NumPy's size check: an empty array's other dimension times the item size must fit an
    // intp (`np.zeros(0).reshape(0, 2**60)` raises; a bool array's items are one byte).
    if arr.ty != Ty::Bool {
        let most = || Expr::I64(i64::MAX / 8);
        let small = bin(
            BinOp::And,
            cmp(CmpOp::Le, rows.clone(), most()),
            cmp(CmpOp::Le, cols.clone(), most()),
        );
        if fold(small.clone()) != Expr::Bool(true) {
            t.check_plain(
                small,
                Exception::ValueError,
                "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum \
                 possible size.",
                span,
            );
        }
    }
    Ok(t.matrix(arr, rows, cols, span))
}

/// `e` with its constant parts folded: a constant dimension's checks vanish at compile time.
fn fold(e: Expr) -> Expr {
    crate::ir::fold::fold_expr(e)
}

/// `x.item()`: the one element of an array, or a number as it is.
pub(super) fn item(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    match v {
        // A Python number: see the provenance rule in `call` (`1.0 / x[0].item()` raises).
        Value::Scalar(..) => Ok(v),
        v => {
            let arr = t.array_of(v, s)?;
            t.check(
                cmp(CmpOp::Eq, arr.len.clone(), Expr::I64(1)),
                Exception::ValueError,
                "can only convert an array of size 1 to a Python scalar (size {a})",
                span,
                arr.len.clone(),
                Expr::I64(0),
            );
            Ok(Value::Scalar(arr.at(Expr::I64(0)), arr.ty))
        }
    }
}

/// `np.delete(x, i)` of one index.
pub(super) fn delete(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 2, 2)?;
    let (v, s) = a.take();
    let (i, is) = a.take();
    let arr = t.array_of(v, s)?;
    if matches!(i, Value::Scalar(_, Ty::Bool)) {
        // A bool is a mask to NumPy 2 here, one of the wrong length.
        t.check(
            Expr::Bool(false),
            Exception::ValueError,
            "boolean array argument obj to delete must be one dimensional and match the axis \
             length of {a}",
            is,
            arr.len.clone(),
            Expr::I64(0),
        );
    }
    let i = t.int(i, is, "the index to delete")?;
    let i = t.checked_index(i, arr.len.clone(), is);
    let index = t.temp(Ty::I64);
    let k = Expr::Var(index);
    let src = Expr::Select(
        cmp(CmpOp::Ge, k.clone(), i).boxed(),
        bin(BinOp::Add, k.clone(), Expr::I64(1)).boxed(),
        k.boxed(),
    );
    Ok(Value::Array(ArrayVal {
        len: bin(BinOp::Sub, arr.len.clone(), Expr::I64(1)),
        ty: arr.ty,
        index,
        elem: arr.at(src),
    }))
}

/// `np.concatenate((a, b, ...))` of 1-D arrays.
pub(super) fn concatenate(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    let Value::Tuple(parts) = v else {
        return Err(t
            .err(
                ErrorKind::Type,
                s,
                "np.concatenate() takes a tuple of arrays",
            )
            .hint("np.concatenate((a, b))"));
    };
    let mut arrays = Vec::new();
    for p in parts {
        let p = match p {
            Value::Scalar(..) => {
                return Err(t
                    .err(
                        ErrorKind::Type,
                        s,
                        "np.concatenate() needs arrays, not numbers",
                    )
                    .hint("wrap numbers in a tuple: (v,)"))
            }
            p => {
                rows_unsupported(t, &p, s, "np.concatenate")?;
                t.array_of(p, s)?
            }
        };
        arrays.push(p);
    }
    let Some(mut acc) = arrays.first().cloned() else {
        return Err(t.err(
            ErrorKind::Arity,
            s,
            "need at least one array to concatenate",
        ));
    };
    for next in &arrays[1..] {
        acc = concat2(t, &acc, next);
    }
    Ok(Value::Array(acc))
}

/// Two arrays joined: materialised, each part copied under a guard so no load is out of range.
pub(in crate::lower) fn concat2(t: &mut Translator, a: &ArrayVal, b: &ArrayVal) -> ArrayVal {
    let ty = a.ty.max(b.ty);
    let la = t.stable(a.len.clone(), Ty::I64);
    let lb = t.stable(b.len.clone(), Ty::I64);
    let slot = t.new_array(crate::ir::ArrKind::Scratch { elem: ty }, "%concat");
    let index = t.temp(Ty::I64);
    let k = Expr::Var(index);
    let fill = |elem: Expr, len: Expr| Stmt::Fill {
        dst: slot,
        len,
        index,
        elem,
        keep: None,
    };
    let only_a = fill(convert(a.at(k.clone()), a.ty, ty), la.clone());
    let only_b = fill(convert(b.at(k.clone()), b.ty, ty), lb.clone());
    // With both parts non-empty, clamped indices keep both loads in range.
    let ka = bin(
        BinOp::Min,
        k.clone(),
        bin(BinOp::Sub, la.clone(), Expr::I64(1)),
    );
    let kb = bin(
        BinOp::Max,
        bin(BinOp::Sub, k.clone(), la.clone()),
        Expr::I64(0),
    );
    let both = Expr::Select(
        cmp(CmpOp::Lt, k.clone(), la.clone()).boxed(),
        convert(a.at(ka), a.ty, ty).boxed(),
        convert(b.at(kb), b.ty, ty).boxed(),
    );
    let joined = fill(both, bin(BinOp::Add, la.clone(), lb.clone()));
    let a_empty = cmp(CmpOp::Eq, la, Expr::I64(0));
    let b_empty = cmp(CmpOp::Eq, lb, Expr::I64(0));
    t.emit(Stmt::If(
        a_empty,
        vec![only_b],
        vec![Stmt::If(b_empty, vec![only_a], vec![joined])],
    ));
    t.view(slot)
}

/// `np.sort(x)` of a 1-D array.
pub(super) fn sort(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    sorted(t, v, s, "np.sort", span)
}

/// A sorted copy of the 1-D array `v` (at `s`), NumPy's order (NaN last): `np.sort(v)`, and
/// what `v.sort()` writes back into `v`. `what` names the call in errors.
pub(in crate::lower) fn sorted(
    t: &mut Translator,
    v: Value,
    s: Span,
    what: &str,
    span: Span,
) -> Result<Value> {
    rows_unsupported(t, &v, s, what)?;
    let arr = t.array_of(v, s)?;
    let kind = arr.ty;
    // The sort runs over doubles: exact for ints up to 2**53, which come back as ints.
    if kind == Ty::I64 {
        crate::lower::numpy::exact_ints(t, &arr, what, span);
    }
    let arr = ArrayVal {
        elem: convert(arr.elem.clone(), arr.ty, Ty::F64),
        ty: Ty::F64,
        ..arr
    };
    let m = t.materialize(&arr, None);
    if kind == Ty::F64 {
        zero_signs::guard(t, &m, Shows::Sorted, what, span)?;
    }
    let slot = m.slot().unwrap();
    t.emit(Stmt::ArrayOp(ArrayOp::SORT, slot));
    Ok(Value::Array(crate::lower::numpy::as_type(&m, kind)))
}

/// `np.flip(x)`: every axis reversed.
pub(super) fn flip(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    // Flipping every axis of a 2-D array reverses its flat order and keeps its shape.
    let cols = crate::lower::numpy::columns(&v);
    let arr = t.array_of(v, s)?;
    t.check_strided_view(a.span, (Stride::Negative, arr.ty), false);
    let len = t.stable(arr.len.clone(), Ty::I64);
    let index = t.temp(Ty::I64);
    let src = bin(
        BinOp::Sub,
        bin(BinOp::Sub, len.clone(), Expr::I64(1)),
        Expr::Var(index),
    );
    let flipped = ArrayVal {
        len,
        ty: arr.ty,
        index,
        elem: arr.at(src),
    };
    Ok(crate::lower::numpy::shaped(flipped, cols))
}

/// `np.diff(x)`: the differences of neighbours.
pub(super) fn diff(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    rows_unsupported(t, &v, s, "np.diff")?;
    let arr = t.array_of(v, s)?;
    let len = t.stable(arr.len.clone(), Ty::I64);
    let index = t.temp(Ty::I64);
    let k = Expr::Var(index);
    let (next, here) = (arr.at(bin(BinOp::Add, k.clone(), Expr::I64(1))), arr.at(k));
    // NumPy's diff of bools is their `!=` (it cannot subtract them).
    let (elem, tt) = match arr.ty {
        Ty::Bool => (bin(BinOp::Xor, next, here), Ty::Bool),
        ty => {
            let tt = ty.max(Ty::I64);
            (
                bin(BinOp::Sub, convert(next, ty, tt), convert(here, ty, tt)),
                tt,
            )
        }
    };
    Ok(Value::Array(ArrayVal {
        len: bin(BinOp::Max, bin(BinOp::Sub, len, Expr::I64(1)), Expr::I64(0)),
        ty: tt,
        index,
        elem,
    }))
}

/// `np.size(x)` and `len(x)`.
pub(super) fn size_or_len(t: &mut Translator, base: Func, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    match v {
        Value::Tuple(items) => Ok(Value::Scalar(Expr::I64(items.len() as i64), Ty::I64)),
        Value::Scalar(..) if base == Size => Ok(Value::Scalar(Expr::I64(1), Ty::I64)),
        // The length of a 2-D array is its number of rows.
        Value::Matrix(arr, cols) if base == Len => Ok(Value::Scalar(
            bin(
                BinOp::FloorDiv,
                arr.len,
                bin(BinOp::Max, cols, Expr::I64(1)),
            ),
            Ty::I64,
        )),
        v => {
            let arr = t
                .array_of(v, s)
                .map_err(|e| e.hint("len() needs an array"))?;
            Ok(Value::Scalar(arr.len, Ty::I64))
        }
    }
}

/// `np.bincount(x, weights=None, minlength=0)`: counts of each non-negative integer value.
pub(super) fn bincount(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 2)?;
    let (v, s) = a.take();
    let weights = a.pos.pop().or_else(|| a.kw("weights"));
    let minlength = match a.kw("minlength") {
        Some((m, ms)) => {
            let e = t.int(m, ms, "minlength")?;
            t.stable(e, Ty::I64)
        }
        None => Expr::I64(0),
    };
    let arr = t.array_of(v, s)?;
    if arr.ty == Ty::F64 {
        return Err(t
            .err(
                ErrorKind::Type,
                s,
                "np.bincount() needs integers: cannot cast array data from float64 to int64",
            )
            .hint("convert first, e.g. np.bincount(x.astype(int))"));
    }
    let vals = t.materialize(&crate::lower::numpy::as_type(&arr, Ty::I64), None);
    let vslot = vals.slot().unwrap();
    let n = t.stable(vals.len.clone(), Ty::I64);
    let nonneg = ArrayVal {
        elem: cmp(CmpOp::Ge, vals.elem.clone(), Expr::I64(0)),
        ty: Ty::Bool,
        ..vals.clone()
    };
    let ok = t.reduce(ReduceOp::All, &nonneg, span, None)?;
    t.check_plain(
        ok,
        Exception::ValueError,
        "'list' argument must have no negative elements",
        span,
    );
    let w = match weights {
        Some((w, ws)) => {
            let w = t.array_of(w, ws)?;
            t.check_plain(
                cmp(CmpOp::Eq, w.len.clone(), n.clone()),
                Exception::ValueError,
                "The weights and list don't have the same length.",
                ws,
            );
            Some(ArrayVal {
                elem: convert(w.elem.clone(), w.ty, Ty::F64),
                ty: Ty::F64,
                ..w
            })
        }
        None => None,
    };
    // Length: max(max(x) + 1, minlength), with max() of an empty array taken as -1.
    let top = crate::lower::numpy::if_nonempty(t, &n, Ty::I64, Expr::I64(-1), |t| {
        let m = t.reduce(
            ReduceOp::Max,
            &crate::lower::numpy::as_type(&vals, Ty::F64),
            span,
            None,
        )?;
        Ok(Expr::Cast(Ty::I64, m.boxed()))
    })?;
    let len = t.stable(
        bin(BinOp::Max, bin(BinOp::Add, top, Expr::I64(1)), minlength),
        Ty::I64,
    );
    let ty = if w.is_some() { Ty::F64 } else { Ty::I64 };
    let counts = zeros(t, len, ty, "%bincount");
    counted_loop(t, n, |t, i| {
        // The index is in 0..=max(x) < len: in range by construction.
        let k = t.stable(Expr::Load(vslot, i.clone().boxed()), Ty::I64);
        let add = match &w {
            Some(w) => w.at(i),
            None => Expr::I64(1),
        };
        t.emit(Stmt::Store(
            counts,
            k.clone(),
            bin(BinOp::Add, Expr::Load(counts, k.boxed()), add),
        ));
        Ok(())
    })?;
    Ok(Value::Array(t.view(counts)))
}

/// Refuses a 2-D array for a function that works along its last axis, row by row, which ndjit
/// does not compute (flattening it instead would silently give another result).
pub(super) fn rows_unsupported(
    t: &mut Translator,
    v: &Value,
    span: Span,
    what: &str,
) -> Result<()> {
    if let Value::Matrix(..) = v {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                format!("{what} of a 2-D array works along an axis, which is not supported"),
            )
            .hint("flatten it first (w.ravel()), or work on one row w[i] at a time"));
    }
    Ok(())
}

fn astype(t: &mut Translator, arr: ArrayVal, d: Value, ds: Span) -> Result<Value> {
    let ty = dtype_ty(t, &d, ds)?;
    Ok(Value::Array(cast_array(arr, ty)))
}

/// The element type a `dtype` argument names: 64-bit types only.
pub(in crate::lower) fn dtype_ty(t: &mut Translator, d: &Value, ds: Span) -> Result<Ty> {
    Ok(match d {
        // int, float and bool, or np.int64, np.float64 and np.bool_ (and their 64-bit aliases).
        Value::Function(Builtin { module, func }) => match (module, func) {
            (Module::Builtin, Int) | (Module::Np, Int64) => Ty::I64,
            (Module::Builtin, Float) | (Module::Np, Float64) => Ty::F64,
            (Module::Builtin, Bool) | (Module::Np, BoolScalar) => Ty::Bool,
            _ => return Err(narrow_dtype(t, ds)),
        },
        Value::Str(s) if matches!(s.as_str(), "int" | "int64" | "i8" | "intp" | "int_") => Ty::I64,
        Value::Str(s) if matches!(s.as_str(), "float" | "float64" | "f8" | "d") => Ty::F64,
        Value::Str(s) if s == "bool" || s == "?" => Ty::Bool,
        _ => return Err(narrow_dtype(t, ds)),
    })
}

/// Narrower types wrap or round (uint8 300 is 44): refused rather than computed wide.
fn narrow_dtype(t: &Translator, ds: Span) -> Error {
    t.err(ErrorKind::Type, ds, "astype() supports int, float and bool")
        .hint("64-bit types only: int, np.int64, 'int64', float, np.float64, bool")
}

/// An array's elements converted to `ty` as NumPy's `astype` converts them.
pub(in crate::lower) fn cast_array(arr: ArrayVal, ty: Ty) -> ArrayVal {
    let elem = cast_elem(arr.elem.clone(), arr.ty, ty);
    ArrayVal { elem, ty, ..arr }
}

/// One element of type `from` converted to `to` as NumPy's `astype` converts it.
pub(in crate::lower) fn cast_elem(x: Expr, from: Ty, to: Ty) -> Expr {
    if from == Ty::F64 && to == Ty::I64 {
        // NumPy's float-to-int cast on x86-64 (`cvttsd2si`): NaN and values out of range give
        // -(2**63), where the IR's cast saturates.
        Expr::Select(
            fits_i64(x.clone()).boxed(),
            Expr::Cast(Ty::I64, x.boxed()).boxed(),
            Expr::I64(i64::MIN).boxed(),
        )
    } else {
        convert(x, from, to)
    }
}
