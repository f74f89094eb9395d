//! Functions that build a sequence: `np.cumsum`/`np.cumprod`, `np.roll`, `np.isin`,
//! `np.linspace` and `np.r_[...]`.

use super::{const_flag, tabulate};
use crate::error::{ErrorKind, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty};
use crate::lower::builtins::{concat2, Args};
use crate::lower::expr::{bin, cmp, convert};
use crate::lower::names::Func;
use crate::lower::value::{ArrayVal, Value};
use crate::lower::{not, Translator};
use crate::syntax::ast::{self, ExprKind};

/// `np.cumsum(x)` / `np.cumprod(x)` of the flattened array: `out[i] = out[i - 1] op x[i]`, in
/// order from `x[0]` (NumPy's `add.accumulate`; bools count as integers).
pub(super) fn accumulate(t: &mut Translator, f: Func, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 2)?;
    let (v, s) = a.take();
    let axis = match a.pos.pop().or_else(|| a.kw("axis")) {
        None | Some((Value::None, _)) => None,
        Some((axis, axs)) => {
            super::refuse_bool(t, &axis, axs, "axis");
            Some((super::const_int(t, axis, axs, "axis")?, axs))
        }
    };
    let cols = super::columns(&v);
    let x = t.array_of(v, s)?;
    let ty = x.ty.max(Ty::I64);
    let (op, start) = match (f, ty) {
        // -0.0 + v is v for every v (a first -0.0 stays -0.0), as is 1.0 * v.
        (Func::Cumsum, Ty::F64) => (BinOp::Add, Expr::F64(-0.0)),
        (Func::Cumsum, _) => (BinOp::Add, Expr::I64(0)),
        (_, Ty::F64) => (BinOp::Mul, Expr::F64(1.0)),
        _ => (BinOp::Mul, Expr::I64(1)),
    };
    // Along an axis of a 2-D array, each row (axis 1) or column (axis 0) runs on its own,
    // in order; otherwise the flattened elements run as one sequence.
    let (lane_len, down_columns) = match (axis, &cols) {
        (None, _) => (None, false),
        (Some((k, _)), None) if k == 0 || k == -1 => (None, false),
        (Some((k, _)), Some(c)) if (-2..2).contains(&k) => (Some(c.clone()), k == 0 || k == -2),
        (Some((k, axs)), _) => {
            let ndim = if cols.is_some() { 2 } else { 1 };
            return Err(t.err(
                ErrorKind::Arity,
                axs,
                format!("axis {k} is out of bounds for array of dimension {ndim}"),
            ));
        }
    };
    let Some(c) = lane_len else {
        let acc = t.temp(ty);
        t.emit(Stmt::Assign(acc, start));
        let out = tabulate(t, x.len.clone(), "%accumulate", |t, i| {
            let next = bin(op, Expr::Var(acc), convert(x.at(i), x.ty, ty));
            t.emit(Stmt::Assign(acc, next));
            Ok((Expr::Var(acc), ty))
        })?;
        return Ok(Value::Array(out));
    };
    let c = t.stable(bin(BinOp::Max, c, Expr::I64(1)), Ty::I64);
    let r = t.stable(bin(BinOp::FloorDiv, x.len.clone(), c.clone()), Ty::I64);
    // Step k visits (row, col) in the lane order: column by column for axis 0.
    let acc = t.temp(ty);
    let out = tabulate(t, x.len.clone(), "%accumulate", |t, k| {
        let (row, col) = if down_columns {
            (
                bin(BinOp::Mod, k.clone(), r.clone()),
                bin(BinOp::FloorDiv, k, r.clone()),
            )
        } else {
            (
                bin(BinOp::FloorDiv, k.clone(), c.clone()),
                bin(BinOp::Mod, k, c.clone()),
            )
        };
        let first = cmp(
            CmpOp::Eq,
            if down_columns {
                row.clone()
            } else {
                col.clone()
            },
            Expr::I64(0),
        );
        let from = Expr::Select(first.boxed(), start.clone().boxed(), Expr::Var(acc).boxed());
        let at = bin(BinOp::Add, bin(BinOp::Mul, row, c.clone()), col);
        t.emit(Stmt::Assign(
            acc,
            bin(op, from, convert(x.at(at), x.ty, ty)),
        ));
        Ok((Expr::Var(acc), ty))
    })?;
    // Back to row-major order: element (i, j) was step j * rows + i when going down columns.
    let index = t.temp(Ty::I64);
    let i = Expr::Var(index);
    let step = if down_columns {
        bin(
            BinOp::Add,
            bin(BinOp::Mul, bin(BinOp::Mod, i.clone(), c.clone()), r),
            bin(BinOp::FloorDiv, i, c.clone()),
        )
    } else {
        i
    };
    let ordered = ArrayVal {
        len: out.len.clone(),
        ty,
        index,
        elem: out.at(step),
    };
    Ok(super::shaped(ordered, Some(c)))
}

/// `np.roll(x, shift)` without an axis: the flattened elements moved `shift` places along,
/// wrapping around; a 2-D array keeps its shape.
pub(super) fn roll(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 2)?;
    let (v, s) = a.take();
    let Some((k, ks)) = a.pos.pop().or_else(|| a.kw("shift")) else {
        return Err(t.err(ErrorKind::Arity, a.span, "np.roll() needs the shift"));
    };
    if let Some((axis, axs)) = a.kw("axis") {
        if !matches!(axis, Value::None) {
            return Err(t
                .err(ErrorKind::Unsupported, axs, "np.roll along an axis")
                .hint("roll the flattened window, or index the rows and columns"));
        }
    }
    let cols = super::columns(&v);
    let x = t.array_of(v, s)?;
    let k = t.int_or_numpy_bool(k, ks, "the shift")?;
    let n = t.stable(bin(BinOp::Max, x.len.clone(), Expr::I64(1)), Ty::I64);
    // Element i comes from (i - shift) mod n; the shift is reduced first so nothing overflows.
    let k = t.stable(bin(BinOp::Mod, k, n.clone()), Ty::I64);
    let index = t.temp(Ty::I64);
    let from = bin(
        BinOp::Mod,
        bin(BinOp::Add, bin(BinOp::Sub, Expr::Var(index), k), n.clone()),
        n,
    );
    let rolled = ArrayVal {
        len: x.len.clone(),
        ty: x.ty,
        index,
        elem: x.at(from),
    };
    Ok(super::shaped(rolled, cols))
}

/// `np.isin(element, test_elements, invert=False)`: whether each element equals one of the test
/// elements (`==`, so NaN is never in, and `-0.0` is `0.0`).
pub(super) fn isin(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 2, 2)?;
    let (v, s) = a.take();
    let (w, ws) = a.take();
    let invert = const_flag(t, a, "invert", false)?;
    let _ = const_flag(t, a, "assume_unique", false)?;
    let tests = t.array_of(w, ws)?;
    let tests = super::in_slot(t, tests);
    let span = a.span;
    // Compared as NumPy compares mixed kinds: integers with integers, anything else as floats.
    let member = |t: &mut Translator, e: Expr, ty: Ty| -> Result<Expr> {
        let common = if ty == Ty::F64 || tests.ty == Ty::F64 {
            Ty::F64
        } else {
            Ty::I64
        };
        let e = t.stable(convert(e, ty, common), common);
        let hit = ArrayVal {
            elem: cmp(CmpOp::Eq, convert(tests.elem.clone(), tests.ty, common), e),
            ty: Ty::Bool,
            ..tests.clone()
        };
        let any = t.reduce(ReduceOp::Any, &hit, span, None)?;
        Ok(if invert { not(any) } else { any })
    };
    let cols = super::columns(&v);
    if let Value::Scalar(e, ty) = v {
        return Ok(Value::Scalar(member(t, e, ty)?, Ty::Bool));
    }
    let x = t.array_of(v, s)?;
    let out = tabulate(t, x.len.clone(), "%isin", |t, i| {
        Ok((member(t, x.at(i), x.ty)?, Ty::Bool))
    })?;
    Ok(super::shaped(out, cols))
}

/// `np.linspace(start, stop, num=50, endpoint=True)`.
pub(super) fn linspace(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 2, 3)?;
    let (lo, ls) = a.take();
    let (hi, hs) = a.take();
    let num = a.pos.pop().or_else(|| a.kw("num"));
    let endpoint = const_flag(t, a, "endpoint", true)?;
    if const_flag(t, a, "retstep", false)? {
        return Err(t
            .err(ErrorKind::Unsupported, a.span, "np.linspace's retstep")
            .hint("compute the step as (stop - start) / (num - 1)"));
    }
    let lo = t.float(lo, ls, "start")?;
    let hi = t.float(hi, hs, "stop")?;
    let num = match num {
        Some((n, ns)) => {
            let n = t.int(n, ns, "num")?;
            let n = t.stable(n, Ty::I64);
            t.check(
                cmp(CmpOp::Ge, n.clone(), Expr::I64(0)),
                crate::error::Exception::ValueError,
                "Number of samples, {a}, must be non-negative.",
                ns,
                n.clone(),
                Expr::I64(0),
            );
            n
        }
        None => Expr::I64(50),
    };
    Ok(Value::Array(linspace_values(t, lo, hi, num, endpoint)))
}

/// The values of `np.linspace(lo, hi, num, endpoint)`: `k * step + lo` with
/// `step = (hi - lo) / div` (`div` is `num - 1` with the endpoint, else `num`); when the step
/// underflows to 0, `k / div * (hi - lo) + lo`; with the endpoint, exactly `hi` last.
pub(super) fn linspace_values(
    t: &mut Translator,
    lo: Expr,
    hi: Expr,
    num: Expr,
    endpoint: bool,
) -> ArrayVal {
    let lo = t.stable(lo, Ty::F64);
    let hi = t.stable(hi, Ty::F64);
    let num = t.stable(num, Ty::I64);
    let div = if endpoint {
        t.stable(bin(BinOp::Sub, num.clone(), Expr::I64(1)), Ty::I64)
    } else {
        num.clone()
    };
    let divf = t.stable(Expr::Cast(Ty::F64, div.clone().boxed()), Ty::F64);
    let delta = t.stable(bin(BinOp::Sub, hi.clone(), lo.clone()), Ty::F64);
    let step = t.stable(bin(BinOp::Div, delta.clone(), divf.clone()), Ty::F64);
    let index = t.temp(Ty::I64);
    let k = Expr::Var(index);
    let kf = Expr::Cast(Ty::F64, k.clone().boxed());
    let scaled = Expr::Select(
        cmp(CmpOp::Eq, step.clone(), Expr::F64(0.0)).boxed(),
        bin(BinOp::Mul, bin(BinOp::Div, kf.clone(), divf), delta.clone()).boxed(),
        bin(BinOp::Mul, kf.clone(), step).boxed(),
    );
    // No step at all (one point with the endpoint): k * delta.
    let scaled = Expr::Select(
        cmp(CmpOp::Gt, div, Expr::I64(0)).boxed(),
        scaled.boxed(),
        bin(BinOp::Mul, kf, delta).boxed(),
    );
    let mut elem = bin(BinOp::Add, scaled, lo);
    if endpoint {
        let last = bin(
            BinOp::And,
            cmp(CmpOp::Gt, num.clone(), Expr::I64(1)),
            cmp(CmpOp::Eq, k, bin(BinOp::Sub, num.clone(), Expr::I64(1))),
        );
        elem = Expr::Select(last.boxed(), hi.boxed(), elem.boxed());
    }
    ArrayVal {
        len: num,
        ty: Ty::F64,
        index,
        elem,
    }
}

/// `np.r_[a, b, 3, 0:4]`: the parts joined into one 1-D array; a number is one element, a
/// slice of constant integers is `np.arange(start, stop, step)`.
pub(crate) fn r_(t: &mut Translator, index: &ast::Expr, span: Span) -> Result<Value> {
    let items = match &index.kind {
        ExprKind::Tuple(items) => items.iter().collect::<Vec<_>>(),
        _ => vec![index],
    };
    let mut acc: Option<ArrayVal> = None;
    for it in items {
        let part = match &it.kind {
            ExprKind::Slice(lo, hi, step) => {
                arange(t, lo.as_deref(), hi.as_deref(), step.as_deref(), it.span)?
            }
            _ => match t.expr(it)? {
                Value::Scalar(e, ty) => ArrayVal {
                    len: Expr::I64(1),
                    ty,
                    index: t.temp(Ty::I64),
                    elem: e,
                },
                v @ (Value::Array(_) | Value::Tuple(_)) => t.array_of(v, it.span)?,
                other => {
                    return Err(t
                        .err(
                            ErrorKind::Unsupported,
                            it.span,
                            format!("np.r_ of {}", other.describe()),
                        )
                        .hint("np.r_ joins 1-D arrays, numbers and integer ranges"))
                }
            },
        };
        acc = Some(match acc {
            None => part,
            Some(prev) => concat2(t, &prev, &part),
        });
    }
    let _ = span;
    Ok(Value::Array(
        acc.expect("a subscript has at least one item"),
    ))
}

/// `start:stop:step` inside `np.r_`: `np.arange` of constant integers.
fn arange(
    t: &mut Translator,
    lo: Option<&ast::Expr>,
    hi: Option<&ast::Expr>,
    step: Option<&ast::Expr>,
    span: Span,
) -> Result<ArrayVal> {
    let mut bound = |e: Option<&ast::Expr>, default: Option<i64>| -> Result<i64> {
        match e {
            None => default.ok_or_else(|| {
                t.err(
                    ErrorKind::Unsupported,
                    span,
                    "np.r_ needs the end of a range",
                )
            }),
            Some(e) => {
                let v = t.expr(e)?;
                super::const_int(t, v, e.span, "a bound of an np.r_ range")
            }
        }
    };
    let start = bound(lo, Some(0))?;
    let stop = bound(hi, None)?;
    let step = bound(step, Some(1))?;
    if step == 0 {
        return Err(t.err(ErrorKind::Type, span, "slice step cannot be zero"));
    }
    // np.arange's length: ceil((stop - start) / step), at least 0.
    let len = ((stop as i128 - start as i128 + step as i128 - step.signum() as i128)
        / step as i128)
        .max(0);
    let len = i64::try_from(len)
        .ok()
        .filter(|&l| l <= 1 << 20)
        .ok_or_else(|| t.err(ErrorKind::Unsupported, span, "np.r_ range too long"))?;
    let index = t.temp(Ty::I64);
    Ok(ArrayVal {
        len: Expr::I64(len),
        ty: Ty::I64,
        index,
        elem: bin(
            BinOp::Add,
            Expr::I64(start),
            bin(BinOp::Mul, Expr::Var(index), Expr::I64(step)),
        ),
    })
}
