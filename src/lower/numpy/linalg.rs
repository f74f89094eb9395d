//! `np.linalg.norm` of a vector (or the Frobenius norm of a 2-D array) and the `@` operator.
//!
//! NumPy's default norm is `sqrt(x.dot(x))`, with no scaling (so it overflows where `x.dot(x)`
//! does); ord=1 is `sum(abs(x))`, ord=inf `max(abs(x))` (0 when empty), ord=-inf `min(abs(x))`, ord=0 the number
//! of non-zeros. Dot products of two float vectors follow NumPy's BLAS (`blas_dot.rs`); those of
//! matrices are pairwise sums ([`ReduceOp::Sum`]), where NumPy's BLAS has an order of its own
//! (README, *Known deviations*).

use super::blas_dot::{blas_dot, OnePair};
use super::{as_f64, as_type, if_nonempty, tabulate};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, Ty, UnOp};
use crate::lower::builtins::Args;
use crate::lower::expr::{bin, cmp, convert, un};
use crate::lower::value::{matrix_rows, ArrayVal, Value};
use crate::lower::Translator;

/// The vector norms NumPy computes without an SVD.
#[derive(Clone, Copy, PartialEq)]
enum Ord {
    Two,
    One,
    Inf,
    NegInf,
    Zero,
}

pub(super) fn norm(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 2)?;
    let (v, s) = a.take();
    let ord = a.pos.pop().or_else(|| a.kw("ord"));
    if let Some((axis, axs)) = a.kw("axis") {
        if !matches!(axis, Value::None) {
            return Err(t
                .err(ErrorKind::Unsupported, axs, "np.linalg.norm along an axis")
                .hint("reduce the lanes yourself, e.g. np.sqrt((m * m).sum(axis=1))"));
        }
    }
    let matrix = matches!(v, Value::Matrix(..));
    let ord = norm_ord(t, ord, matrix)?;
    let x = as_f64(&t.array_of(v, s)?);
    let abs = ArrayVal {
        elem: un(UnOp::Abs, x.elem.clone()),
        ..x.clone()
    };
    let empty =
        |op: &str| format!("zero-size array to reduction operation {op} which has no identity");
    let r = match ord {
        // NumPy's `sqrt(x.dot(x))` of the raveled array.
        Ord::Two => un(
            UnOp::Sqrt,
            blas_dot(t, (&x, &x), OnePair::Multiplied, span)?,
        ),
        Ord::One => t.reduce(ReduceOp::Sum, &abs, span, None)?,
        // NumPy takes the maximum with initial=0, so an empty array has norm 0.
        Ord::Inf => if_nonempty(t, &abs.len, Ty::F64, Expr::F64(0.0), |t| {
            t.reduce(ReduceOp::Max, &abs, span, Some(&empty("maximum")))
        })?,
        Ord::NegInf => t.reduce(ReduceOp::Min, &abs, span, Some(&empty("minimum")))?,
        Ord::Zero => {
            let nz = ArrayVal {
                elem: cmp(CmpOp::Ne, x.elem.clone(), Expr::F64(0.0)),
                ty: Ty::Bool,
                ..x.clone()
            };
            convert(
                t.reduce(ReduceOp::Count, &nz, span, None)?,
                Ty::I64,
                Ty::F64,
            )
        }
    };
    Ok(Value::Scalar(r, Ty::F64))
}

/// The `ord=` of a norm: `None`, `'fro'` for a 2-D array, or a number NumPy computes without
/// an SVD.
fn norm_ord(t: &Translator, ord: Option<(Value, Span)>, matrix: bool) -> Result<Ord> {
    let (o, os) = match ord {
        None | Some((Value::None, _)) => return Ok(Ord::Two),
        Some((Value::Str(f), _)) if matrix && (f == "fro" || f == "f") => return Ok(Ord::Two),
        Some(o) => o,
    };
    let k = match &o {
        Value::Scalar(e, _) if !matrix => crate::ir::fold::const_expr(e).map(|c| c.f()),
        _ => None,
    };
    let Some(k) = k else {
        return Err(unsupported_ord(t, os, matrix));
    };
    Ok(if k == 2.0 {
        Ord::Two
    } else if k == 1.0 {
        Ord::One
    } else if k == f64::INFINITY {
        Ord::Inf
    } else if k == f64::NEG_INFINITY {
        Ord::NegInf
    } else if k == 0.0 {
        Ord::Zero
    } else {
        return Err(unsupported_ord(t, os, matrix));
    })
}

fn unsupported_ord(t: &Translator, os: Span, matrix: bool) -> crate::error::Error {
    if matrix {
        return t
            .err(
                ErrorKind::Unsupported,
                os,
                "only the Frobenius norm of a 2-D array is supported",
            )
            .hint("flatten it for a vector norm: np.linalg.norm(m.ravel(), ord)");
    }
    t.err(
        ErrorKind::Unsupported,
        os,
        "np.linalg.norm supports ord None, 0, 1, 2, np.inf and -np.inf",
    )
    .hint("compute other norms directly, e.g. np.sum(np.abs(x) ** p) ** (1 / p)")
}

/// `np.dot(x, y)`: a number scales the other operand, 2-D operands multiply as matrices, and
/// two 1-D arrays give the sum of their products, their lengths checked (never broadcast).
pub(crate) fn dot(
    t: &mut Translator,
    (x, xs): (Value, Span),
    (y, ys): (Value, Span),
    span: Span,
) -> Result<Value> {
    if matches!(x, Value::Scalar(..)) || matches!(y, Value::Scalar(..)) {
        let (x, y) = (t.as_numpy(x), t.as_numpy(y));
        return t.binary(crate::syntax::ast::BinOp::Mul, x, y, span);
    }
    if matches!(x, Value::Matrix(..)) || matches!(y, Value::Matrix(..)) {
        return matmul(t, x, y, span);
    }
    let (xa, ya) = (t.array_of(x, xs)?, t.array_of(y, ys)?);
    both_bools_unsupported(t, &xa, &ya, "np.dot", span);
    let (l, m) = (
        t.stable(xa.len.clone(), Ty::I64),
        t.stable(ya.len.clone(), Ty::I64),
    );
    t.check(
        cmp(CmpOp::Eq, l.clone(), m.clone()),
        Exception::ValueError,
        "shapes ({a},) and ({b},) not aligned: {a} (dim 0) != {b} (dim 0)",
        span,
        l,
        m,
    );
    if xa.ty == Ty::F64 || ya.ty == Ty::F64 {
        let (xa, ya) = (as_f64(&xa), as_f64(&ya));
        let r = blas_dot(t, (&xa, &ya), OnePair::Multiplied, span)?;
        return Ok(Value::Scalar(r, Ty::F64));
    }
    let p = t.binary(
        crate::syntax::ast::BinOp::Mul,
        Value::Array(xa),
        Value::Array(ya),
        span,
    )?;
    let p = t.array_of(p, span)?;
    Ok(sum_of(t, &p, span))
}

/// `np.sum` of an array: pairwise for floats, wrapping for integers.
fn sum_of(t: &mut Translator, p: &ArrayVal, span: Span) -> Value {
    let (op, ty) = if p.ty == Ty::F64 {
        (ReduceOp::Sum, Ty::F64)
    } else {
        (ReduceOp::SumInt, Ty::I64)
    };
    let p = as_type(p, ty);
    let r = t
        .reduce(op, &p, span, None)
        .expect("sums need no empty check");
    Value::Scalar(r, ty)
}

/// NumPy's product of two bool arrays is a bool (whether any pair is true), not how many are:
/// refused rather than counted.
fn both_bools_unsupported(t: &mut Translator, a: &ArrayVal, b: &ArrayVal, what: &str, span: Span) {
    if a.ty == Ty::Bool && b.ty == Ty::Bool {
        let refusal = t
            .err(
                ErrorKind::Unsupported,
                span,
                format!("{what}() of two bool arrays"),
            )
            .hint("np.any(a & b) for NumPy's bool, or a.astype(int) to count the pairs");
        t.refuse_by_type(refusal, ());
    }
}

/// `a @ b` for 1-D and 2-D operands: NumPy's `matmul`, a vector acting as a row on the left and
/// a column on the right, with its core dimensions checked. Of floats, only two vectors.
pub(crate) fn matmul(t: &mut Translator, a: Value, b: Value, span: Span) -> Result<Value> {
    let shape = |t: &mut Translator, v: &Value| -> Result<Option<Expr>> {
        match v {
            Value::Matrix(_, c) => Ok(Some(c.clone())),
            Value::Array(_) | Value::Tuple(_) => Ok(None),
            other => Err(t
                .err(
                    ErrorKind::Type,
                    span,
                    format!(
                        "matmul: Input operand does not have enough dimensions ({} is not an array)",
                        other.describe()
                    ),
                )
                .hint("use * to multiply by a number")),
        }
    };
    if let (Value::Tuple(_), Value::Tuple(_)) = (&a, &b) {
        // Python's lists and tuples have no `@`: NumPy only takes over when one side is an array.
        return Err(t
            .err(
                ErrorKind::Type,
                span,
                "unsupported operand type(s) for @: two lists or tuples",
            )
            .hint("make one side an array: np.array([...]) @ [...]"));
    }
    let (a_cols, b_cols) = (shape(t, &a)?, shape(t, &b)?);
    let (la, lb) = (t.array_of(a, span)?, t.array_of(b, span)?);
    both_bools_unsupported(t, &la, &lb, "matmul", span);
    let ty = la.ty.max(lb.ty).max(Ty::I64);
    if ty == Ty::F64 && (a_cols.is_some() || b_cols.is_some()) {
        let refusal = float_matrix_product(t, span);
        t.refuse_by_type(refusal, ());
    }
    let (la, lb) = (as_type(&la, ty), as_type(&lb, ty));
    let len_a = t.stable(la.len.clone(), Ty::I64);
    let len_b = t.stable(lb.len.clone(), Ty::I64);
    // Rows and the shared dimension of the left operand, columns of the right one.
    let (rows, inner) = match &a_cols {
        Some(c) => (
            t.stable(matrix_rows(len_a.clone(), c.clone()), Ty::I64),
            c.clone(),
        ),
        None => (Expr::I64(1), len_a.clone()),
    };
    let (inner_b, cols) = match &b_cols {
        Some(c) => (
            t.stable(matrix_rows(len_b.clone(), c.clone()), Ty::I64),
            c.clone(),
        ),
        None => (len_b.clone(), Expr::I64(1)),
    };
    t.check(
        cmp(CmpOp::Eq, inner.clone(), inner_b.clone()),
        Exception::ValueError,
        "matmul: Input operand 1 has a mismatch in its core dimension 0 (size {b} is different \
         from {a})",
        span,
        inner.clone(),
        inner_b,
    );
    // Element (r, c) of the product: sum over k of a[r, k] * b[k, c] (integers: any order).
    let product = |t: &mut Translator, r: Expr, c: Expr| -> Value {
        let index = t.temp(Ty::I64);
        let k = Expr::Var(index);
        let ea = la.at(bin(
            BinOp::Add,
            bin(BinOp::Mul, r, inner.clone()),
            k.clone(),
        ));
        let eb = lb.at(bin(BinOp::Add, bin(BinOp::Mul, k, cols.clone()), c));
        let terms = ArrayVal {
            len: inner.clone(),
            ty,
            index,
            elem: bin(BinOp::Mul, ea, eb),
        };
        sum_of(t, &terms, span)
    };
    if a_cols.is_none() && b_cols.is_none() {
        if ty == Ty::F64 {
            // Two vectors: BLAS's dot product.
            let r = blas_dot(t, (&la, &lb), OnePair::Summed, span)?;
            return Ok(Value::Scalar(r, Ty::F64));
        }
        return Ok(product(t, Expr::I64(0), Expr::I64(0)));
    }
    let c_count = t.stable(cols.clone(), Ty::I64);
    let out = tabulate(
        t,
        bin(BinOp::Mul, rows, c_count.clone()),
        "%matmul",
        |t, q| {
            let r = bin(BinOp::FloorDiv, q.clone(), safe(&c_count));
            let c = bin(BinOp::Mod, q, safe(&c_count));
            match product(t, r, c) {
                Value::Scalar(e, ty) => Ok((e, ty)),
                _ => unreachable!("sum_of gives a number"),
            }
        },
    )?;
    Ok(match (a_cols, b_cols) {
        (Some(_), Some(_)) => Value::Matrix(out, c_count),
        _ => Value::Array(out),
    })
}

/// The refusal of a product of float matrices: NumPy hands it to BLAS's gemm or gemv (or its
/// own loop, by size and strides), each adding in an order of its own, with fused
/// multiply-adds; ndjit models BLAS's dot product of two vectors only. Measured against
/// pairwise sums, a third of the elements of random 3x3 products were off in the last bit.
fn float_matrix_product(t: &Translator, span: Span) -> crate::error::Error {
    t.err(
        ErrorKind::Unsupported,
        span,
        "a product of float matrices (`@` or `np.dot` of a 2-D array): NumPy's BLAS adds it in \
         an order of its own (gemm, gemv), which ndjit does not model",
    )
    .hint(
        "write the sums NumPy adds pairwise, as ndjit does: np.sum(m * v, axis=1) for m @ v, \
           or a dot product of two vectors per element: np.dot(m[i], v)",
    )
}

/// A divisor that is at least 1 (the dimensions of an empty 2-D array may be 0).
fn safe(e: &Expr) -> Expr {
    bin(BinOp::Max, e.clone(), Expr::I64(1))
}
