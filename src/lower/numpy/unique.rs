//! `np.unique(x, return_index=False, return_inverse=False, return_counts=False, equal_nan=True)`.
//!
//! NumPy sorts a copy (NaN last) and keeps the first element of each run of equal values; with
//! `equal_nan` (the default since NumPy 1.21) all NaNs form one run. Here the sorted copy is the
//! runtime's sort, the run starts are a `Fill` with a `keep` mask, and the counts are the
//! distances between starts.
//!
//! The one choice NumPy leaves to its sort is which of `-0.0` and `0.0` stands for a run of
//! zeros. NumPy's hash-based `np.unique(x)` and its stable sort for `return_index=True` both keep
//! the first zero of `x`; so does this lowering, whatever the options. (NumPy's SIMD quicksort,
//! used with `return_counts=True` alone, may pick another zero: the value is equal, only its
//! sign can differ.)

use super::{as_f64, const_flag, if_nonempty, same_value, sorts_before, tabulate, zero_signs};
use crate::error::{ErrorKind, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty, UnOp};
use crate::lower::builtins::{sorted_copy, Args};
use crate::lower::expr::{bin, cmp, convert, un};
use crate::lower::value::{ArrayVal, Value};
use crate::lower::{not, Translator};

pub(super) fn unique(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    let want_index = const_flag(t, a, "return_index", false)?;
    let want_inverse = const_flag(t, a, "return_inverse", false)?;
    let want_counts = const_flag(t, a, "return_counts", false)?;
    let equal_nan = const_flag(t, a, "equal_nan", true)?;
    if !equal_nan && (want_index || want_inverse) {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                "np.unique with equal_nan=False and return_index or return_inverse",
            )
            .hint("leave equal_nan at its default (True)"));
    }
    let arr = t.array_of(v, s)?;
    let x = super::in_slot(t, arr);
    if x.ty == Ty::I64 {
        super::exact_ints(t, &x, "np.unique", span);
    }
    let n = t.stable(x.len.clone(), Ty::I64);
    let (s, starts) = sorted_runs(t, &x, &n, equal_nan);
    let m = starts.len.clone();

    // Which of two equal zeros leads a run depends on NumPy's sort. With `return_index` it is
    // a stable one, which keeps the input's first zero; otherwise it is refused, as np.sort's.
    let mut value = s.at(starts.elem.clone());
    if x.ty == Ty::F64 && want_index {
        let zero = first_zero(t, &x, &n, span)?;
        value = Expr::Select(
            cmp(CmpOp::Eq, value.clone(), Expr::F64(0.0)).boxed(),
            zero.boxed(),
            value.boxed(),
        );
    } else if x.ty == Ty::F64 {
        zero_signs::guard(t, &x, zero_signs::Shows::Sorted, "np.unique", span)?;
    }
    let vals = ArrayVal {
        len: m.clone(),
        ty: x.ty,
        index: starts.index,
        elem: convert(value, Ty::F64, x.ty),
    };
    let mut out = vec![Value::Array(vals.clone())];
    if want_index {
        out.push(Value::Array(first_indices(t, &x, &vals, span)?));
    }
    if want_inverse {
        out.push(Value::Array(inverse(t, &x, &vals, &n, span)?));
    }
    if want_counts {
        // A run ends where the next one starts, the last one at the end of the array.
        let k = Expr::Var(starts.index);
        let next = bin(BinOp::Add, k.clone(), Expr::I64(1));
        let end = Expr::Select(
            cmp(CmpOp::Lt, next.clone(), m.clone()).boxed(),
            starts
                .at(bin(
                    BinOp::Min,
                    next,
                    bin(BinOp::Sub, m.clone(), Expr::I64(1)),
                ))
                .boxed(),
            n.boxed(),
        );
        out.push(Value::Array(ArrayVal {
            len: m,
            ty: Ty::I64,
            index: starts.index,
            elem: bin(BinOp::Sub, end, starts.elem.clone()),
        }));
    }
    Ok(if out.len() == 1 {
        out.pop().unwrap()
    } else {
        Value::Tuple(out)
    })
}

/// `x` sorted (NumPy's order, NaN last), and where each run of equal values starts in it: the
/// first element, and each one unlike the one before it (`equal_nan`: all NaNs one run; else
/// each NaN a run of its own, as `!=` tells).
fn sorted_runs(
    t: &mut Translator,
    x: &ArrayVal,
    n: &Expr,
    equal_nan: bool,
) -> (ArrayVal, ArrayVal) {
    let sorted = sorted_copy(t, x, None);
    let s = t.view(sorted);
    let i = Expr::Var(s.index);
    let prev = s.at(bin(
        BinOp::Max,
        bin(BinOp::Sub, i.clone(), Expr::I64(1)),
        Expr::I64(0),
    ));
    let differs = if equal_nan {
        not(same_value(s.elem.clone(), prev))
    } else {
        cmp(CmpOp::Ne, s.elem.clone(), prev)
    };
    let first = cmp(CmpOp::Eq, i.clone(), Expr::I64(0));
    let starts = t.new_array(crate::ir::ArrKind::Scratch { elem: Ty::I64 }, "%unique");
    t.emit(Stmt::Fill {
        dst: starts,
        len: n.clone(),
        index: s.index,
        elem: i,
        keep: Some(bin(BinOp::Or, first, differs)),
    });
    let starts = t.view(starts);
    (s, starts)
}

/// How many distinct items `x` (numbers) holds under Python's `==`, as a set of them counts
/// them: equal values one (`0.0` and `-0.0` too, whatever NumPy's sort leaves first), and each
/// NaN one of its own (a NaN equals nothing). A set finds an item by identity before equality,
/// so a NaN object held twice counts once: the caller knows whether its items can be one object.
/// Returns the count, and how many of the items are NaN.
pub(in crate::lower) fn distinct_count(
    t: &mut Translator,
    x: ArrayVal,
    span: Span,
) -> Result<(Expr, Expr)> {
    let x = super::in_slot(t, x);
    if x.ty == Ty::I64 {
        super::exact_ints(t, &x, "set", span);
    }
    let n = t.stable(x.len.clone(), Ty::I64);
    let nans = match x.ty {
        Ty::F64 => {
            let is_nan = ArrayVal {
                elem: un(UnOp::IsNan, x.elem.clone()),
                ty: Ty::Bool,
                ..x.clone()
            };
            t.reduce(ReduceOp::Count, &is_nan, span, None)?
        }
        _ => Expr::I64(0),
    };
    let (_, starts) = sorted_runs(t, &x, &n, false);
    Ok((starts.len, nans))
}

/// The first zero of `x` (`-0.0` or `0.0`), or `0.0` if it has none.
fn first_zero(t: &mut Translator, x: &ArrayVal, n: &Expr, span: Span) -> Result<Expr> {
    if_nonempty(t, n, Ty::F64, Expr::F64(0.0), |t| {
        let is_zero = ArrayVal {
            elem: convert(
                cmp(CmpOp::Eq, x.elem.clone(), Expr::F64(0.0)),
                Ty::Bool,
                Ty::F64,
            ),
            ty: Ty::F64,
            ..x.clone()
        };
        let at = t.reduce(ReduceOp::ArgMax, &is_zero, span, None)?;
        Ok(x.at(at))
    })
}

/// `return_index`: where each unique value first occurs in `x`.
fn first_indices(
    t: &mut Translator,
    x: &ArrayVal,
    vals: &ArrayVal,
    span: Span,
) -> Result<ArrayVal> {
    let xf = as_f64(x);
    tabulate(t, vals.len.clone(), "%unique_index", |t, k| {
        let v = t.stable(convert(vals.at(k), vals.ty, Ty::F64), Ty::F64);
        // The smallest index holding the value (a minimum compiles to less code than an argmax).
        let j = Expr::Cast(Ty::F64, Expr::Var(xf.index).boxed());
        let at = ArrayVal {
            elem: Expr::Select(
                same_value(xf.elem.clone(), v).boxed(),
                j.boxed(),
                Expr::F64(f64::INFINITY).boxed(),
            ),
            ..xf.clone()
        };
        let first = t.reduce(ReduceOp::Min, &at, span, None)?;
        Ok((Expr::Cast(Ty::I64, first.boxed()), Ty::I64))
    })
}

/// `return_inverse`: for each element of `x`, the index of its value among the unique ones
/// (how many unique values sort before it).
fn inverse(
    t: &mut Translator,
    x: &ArrayVal,
    vals: &ArrayVal,
    n: &Expr,
    span: Span,
) -> Result<ArrayVal> {
    let xf = as_f64(x);
    let vf = as_f64(vals);
    tabulate(t, n.clone(), "%unique_inverse", |t, i| {
        let v = t.stable(xf.at(i), Ty::F64);
        let before = ArrayVal {
            elem: sorts_before(vf.elem.clone(), v),
            ty: Ty::Bool,
            ..vf.clone()
        };
        Ok((t.reduce(ReduceOp::Count, &before, span, None)?, Ty::I64))
    })
}
