//! Indices of elements: `np.nonzero`, one-argument `np.where`, `np.argwhere`, `np.flatnonzero`,
//! and indexing with an integer array (`w[idx]`, `w[[0, 2, 4]]`).

use crate::error::{ErrorKind, Result, Span};
use crate::ir::{ArrKind, BinOp, CmpOp, Expr, Stmt, Ty};
use crate::lower::builtins::{counted_loop, Args};
use crate::lower::expr::{bin, cmp, convert};
use crate::lower::names::Func;
use crate::lower::value::{ArrayVal, Value};
use crate::lower::Translator;

/// `np.nonzero(x)` (a tuple of index arrays, one per dimension), `np.argwhere(x)` (one row of
/// indices per element), `np.flatnonzero(x)` (indices into the flattened array). An element
/// counts when it is true as a bool: NaN does, `-0.0` does not.
pub(super) fn nonzero(t: &mut Translator, func: Func, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    let cols = super::columns(&v).map(|c| t.stable(c, Ty::I64));
    let arr = t.array_of(v, s)?;
    let slot = t.new_array(ArrKind::Scratch { elem: Ty::I64 }, "%nonzero");
    t.emit(Stmt::Fill {
        dst: slot,
        len: arr.len.clone(),
        index: arr.index,
        elem: Expr::Var(arr.index),
        keep: Some(convert(arr.elem.clone(), arr.ty, Ty::Bool)),
    });
    let flat = t.view(slot);
    let Some(cols) = cols else {
        return Ok(match func {
            Func::Flatnonzero => Value::Array(flat),
            Func::Argwhere => Value::Matrix(flat, Expr::I64(1)),
            _ => Value::Tuple(vec![Value::Array(flat)]),
        });
    };
    // A 2-D array: flat index k is row k // cols, column k % cols.
    let c = bin(BinOp::Max, cols, Expr::I64(1));
    let row = |k: Expr| bin(BinOp::FloorDiv, k, c.clone());
    let col = |k: Expr| bin(BinOp::Mod, k, c.clone());
    let part = |f: &dyn Fn(Expr) -> Expr| {
        Value::Array(ArrayVal {
            elem: f(flat.elem.clone()),
            ..flat.clone()
        })
    };
    Ok(match func {
        Func::Flatnonzero => Value::Array(flat),
        Func::Argwhere => {
            // Row j of the (count, 2) result holds the j-th index pair.
            let index = t.temp(Ty::I64);
            let j = Expr::Var(index);
            let k = flat.at(bin(BinOp::FloorDiv, j.clone(), Expr::I64(2)));
            let even = cmp(CmpOp::Eq, bin(BinOp::Mod, j, Expr::I64(2)), Expr::I64(0));
            let elem = Expr::Select(even.boxed(), row(k.clone()).boxed(), col(k).boxed());
            let len = bin(BinOp::Mul, flat.len.clone(), Expr::I64(2));
            Value::Matrix(
                ArrayVal {
                    len,
                    ty: Ty::I64,
                    index,
                    elem,
                },
                Expr::I64(2),
            )
        }
        _ => Value::Tuple(vec![part(&row), part(&col)]),
    })
}

/// `arr[idx]` for an array of integers: element k is `arr[idx[k]]`, each index checked (and a
/// negative one counted from the end) as NumPy does, before any element is read.
pub(crate) fn take(t: &mut Translator, arr: ArrayVal, idx: Value, span: Span) -> Result<Value> {
    let empty_list = matches!(&idx, Value::Tuple(items) if items.is_empty());
    let idx = t.array_of(idx, span)?;
    if idx.ty == Ty::F64 && !empty_list {
        return Err(t
            .err(
                ErrorKind::Type,
                span,
                "arrays used as indices must be of integer (or boolean) type",
            )
            .hint("convert the indices first, e.g. idx.astype(int)"));
    }
    let idx = super::as_type(&idx, Ty::I64);
    let n = t.stable(arr.len.clone(), Ty::I64);
    let idx = super::in_slot(t, idx);
    counted_loop(t, idx.len.clone(), |t, k| {
        t.checked_index(idx.at(k), n.clone(), span);
        Ok(())
    })?;
    let i = idx.elem.clone();
    let at = Expr::Select(
        cmp(CmpOp::Lt, i.clone(), Expr::I64(0)).boxed(),
        bin(BinOp::Add, i.clone(), n).boxed(),
        i.boxed(),
    );
    Ok(Value::Array(ArrayVal {
        len: idx.len.clone(),
        ty: arr.ty,
        index: idx.index,
        elem: arr.at(at),
    }))
}
