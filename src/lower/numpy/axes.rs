//! Reductions along an axis: `w.reshape(3, 3).sum(axis=0)`, `np.median(m, axis=1)` ...
//!
//! Each lane (a column for `axis=0`, a row for `axis=1`) is reduced by the same lowering as a
//! 1-D array, in a loop that stores one result per lane. One thing differs: NumPy sums along
//! `axis=0` of a row-major array with two or more columns by adding whole rows, in order, to a
//! zeroed result, not pairwise per column; so the sums there become [`ReduceOp::SumSeq`]
//! (sequential from `+0.0`). Along `axis=1`, and down a single column, it sums pairwise.
//!
//! The order follows the memory layout, which a 2-D value here does not carry: a transposed
//! array (`m.T`, column-major in NumPy) is summed by the row-major rule, so its sums along an
//! axis of 8 or more elements may differ from NumPy's in the last bits, as `np.dot`'s do (below 8
//! the two orders give the same result).

use super::{const_int, tabulate};
use crate::error::{ErrorKind, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty};
use crate::lower::builtins::{count_valid, ranks_values, reduction, takes_dtype, Args};
use crate::lower::expr::{bin, cmp};
use crate::lower::names::Func;
use crate::lower::value::{matrix_rows, ArrayVal, Value};
use crate::lower::Translator;

/// Whether `np.<f>` takes `axis=` (and goes through [`reduce_along`]): the reductions that take
/// a `dtype=`, those that order the values, and the logical ones.
pub(super) fn takes_axis(f: Func) -> bool {
    use Func::*;
    takes_dtype(f) || ranks_values(f) || matches!(f, Any | All | CountNonzero)
}

/// Whether the call names an axis, as `axis=` or positionally (`np.sum(m, 0)`, `m.sum(0)`,
/// `np.percentile(m, 50, 1)`); a positional one is moved to the keywords.
pub(super) fn axis_given(f: Func, a: &mut Args) -> bool {
    let at = if matches!(
        f,
        Func::Percentile | Func::Nanpercentile | Func::Quantile | Func::Nanquantile
    ) {
        2
    } else {
        1
    };
    let named = a.kw.iter().any(|(k, _, _)| k == "axis");
    if !named && a.pos.len() > at {
        let (v, s) = a.pos.remove(at);
        a.kw.push(("axis".to_string(), v, s));
        return true;
    }
    named
}

/// Whether NumPy's `f` takes `axis=True` as 1: the functions it writes in Python (its C
/// reductions raise TypeError for a bool).
fn axis_takes_bool(f: Func) -> bool {
    use Func::*;
    matches!(
        f,
        Median | Nanmedian | Percentile | Nanpercentile | Quantile | Nanquantile | Average
    )
}

/// `f(x, ..., axis=k)`; `None` when the axis is `None` (a reduction of everything).
pub(super) fn reduce_along(t: &mut Translator, f: Func, a: &mut Args) -> Result<Option<Value>> {
    let (axis, axis_span) = a.kw("axis").expect("the caller saw axis=");
    if matches!(axis, Value::None) || a.pos.is_empty() {
        return Ok(None);
    }
    if !axis_takes_bool(f) {
        super::refuse_bool(t, &axis, axis_span, "axis");
    }
    let axis = const_int(t, axis, axis_span, "axis")?;
    let (v, s) = a.take();
    let ndim = if matches!(v, Value::Matrix(..)) { 2 } else { 1 };
    if !(-ndim..ndim).contains(&axis) {
        let valid = if ndim == 1 {
            " (the buffer is 1-D: axis must be None or 0)"
        } else {
            ""
        };
        return Err(t.err(
            ErrorKind::Arity,
            axis_span,
            format!("axis {axis} is out of bounds for array of dimension {ndim}{valid}"),
        ));
    }
    let Value::Matrix(arr, cols) = v else {
        return reduction(t, f, v, s, a).map(Some);
    };
    let cols = t.stable(cols, Ty::I64);
    let rows = t.stable(matrix_rows(arr.len.clone(), cols.clone()), Ty::I64);
    let down_columns = axis == 0 || axis == -2;
    let (lanes, lane_len) = if down_columns {
        (cols.clone(), rows)
    } else {
        (rows, cols.clone())
    };
    let (result, mut stmts) = t.nested(|t| {
        tabulate(t, lanes, "%axis", |t, j| {
            let index = t.temp(Ty::I64);
            let i = Expr::Var(index);
            let at = if down_columns {
                bin(BinOp::Add, bin(BinOp::Mul, i, cols.clone()), j)
            } else {
                bin(BinOp::Add, bin(BinOp::Mul, j, cols.clone()), i)
            };
            let lane = ArrayVal {
                len: lane_len,
                ty: arr.ty,
                index,
                elem: arr.at(at),
            };
            let odd = match f {
                Func::Nanmedian => Some(nan_median_odd(t, &lane, s)?),
                _ => None,
            };
            match (reduction(t, f, Value::Array(lane), s, a)?, odd) {
                // NumPy's nanmedian along an axis (`np.ma.median`) averages the middle value
                // of an odd count with itself: `(m + m) / 2`, infinite past half the largest
                // double.
                (Value::Scalar(e, ty), Some(odd)) => {
                    let m = t.stable(e, ty);
                    let twice = bin(BinOp::Add, m.clone(), m.clone());
                    let halved = bin(BinOp::Div, twice, Expr::F64(2.0));
                    Ok((Expr::Select(odd.boxed(), halved.boxed(), m.boxed()), ty))
                }
                (Value::Scalar(e, ty), None) => Ok((e, ty)),
                (other, _) => Err(t.err(
                    ErrorKind::Unsupported,
                    s,
                    format!("np.{f} along an axis gives {}", other.describe()),
                )),
            }
        })
    })?;
    if down_columns {
        // A single column is the whole array, which NumPy sums pairwise like any 1-D array.
        match crate::ir::fold::const_expr(&cols).map(|c| c.i()) {
            Some(1) => {}
            Some(_) => sequential_sums(&mut stmts),
            None => {
                let mut in_order = stmts.clone();
                sequential_sums(&mut in_order);
                let one = crate::lower::expr::cmp(crate::ir::CmpOp::Eq, cols, Expr::I64(1));
                stmts = vec![Stmt::If(one, stmts, in_order)];
            }
        }
    }
    for st in stmts {
        t.emit(st);
    }
    Ok(Some(Value::Array(result)))
}

/// Turns every pairwise [`ReduceOp::Sum`] in the block into an in-order one.
fn sequential_sums(stmts: &mut [Stmt]) {
    for st in stmts {
        if let Stmt::Reduce { op, .. } = st {
            if *op == ReduceOp::Sum {
                *op = ReduceOp::SumSeq;
            }
        }
        crate::ir::stmt_blocks_mut(st, sequential_sums);
    }
}

/// Whether a lane holds an odd number of values other than NaN.
fn nan_median_odd(t: &mut Translator, lane: &ArrayVal, span: Span) -> Result<Expr> {
    let count = count_valid(t, lane, span)?;
    Ok(cmp(
        CmpOp::Eq,
        bin(BinOp::Mod, count, Expr::I64(2)),
        Expr::I64(1),
    ))
}
