//! NumPy's array functions that are more than an element-wise map or one reduction: sets
//! (`np.unique`, `np.isin`), indices (`np.nonzero`, fancy indexing), histograms, reductions along
//! an axis of a 2-D array, `np.linalg.norm` and `@`, and sequences (`np.cumsum`, `np.roll`,
//! `np.r_`). Each is expressed with the IR's existing statements (`Fill`, `Reduce`, `Sort`,
//! `Loop`), so every backend runs them without code of its own.

mod argsort;
mod axes;
pub(super) mod blas_dot;
pub(super) mod creation;
mod histogram;
pub(super) mod indexing;
pub(super) mod linalg;
pub(super) mod sequences;
mod unique;
pub(in crate::lower) use unique::distinct_count;
pub(super) mod zero_signs;

use super::builtins::Args;
use super::expr::{bin, cmp, un};
use super::names::{Builtin, Func, Module};
use super::value::{ArrayVal, Value};
use super::{not, Translator};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{ArrKind, BinOp, CmpOp, Expr, Stmt, Ty, UnOp};

/// Lowers `name(args)` if it is one of this module's functions; `None` leaves the call to the
/// general builtins.
pub(super) fn lower(t: &mut Translator, name: Builtin, a: &mut Args) -> Option<Result<Value>> {
    use Func::*;
    match (name.module, name.func) {
        (Module::Np, Unique) => Some(unique::unique(t, a)),
        (Module::Np, Argsort) => Some(argsort::argsort(t, a)),
        (Module::Np, Nonzero | Argwhere | Flatnonzero) => Some(indexing::nonzero(t, name.func, a)),
        (Module::Np, Where) if a.pos.len() == 1 && a.kw.is_empty() => {
            Some(indexing::nonzero(t, Nonzero, a))
        }
        (Module::Np, Histogram) => Some(histogram::histogram(t, a)),
        (Module::Np, Cumsum | Cumprod) => Some(sequences::accumulate(t, name.func, a)),
        (Module::Np, Isin) => Some(sequences::isin(t, a)),
        (Module::Np, Roll) => Some(sequences::roll(t, a)),
        (Module::Np, Linspace) => Some(sequences::linspace(t, a)),
        (Module::Np, Zeros | Ones | Full) => Some(creation::filled(t, name.func, a)),
        (Module::Np, ZerosLike | OnesLike | FullLike) => {
            Some(creation::filled_like(t, name.func, a))
        }
        (Module::Np, Arange) => Some(creation::arange(t, a)),
        (Module::Np, RConcat) => Some(Err(t
            .err(ErrorKind::Type, a.span, "np.r_ is indexed, not called")
            .hint("write np.r_[a, b]"))),
        (Module::Linalg, Norm) => Some(linalg::norm(t, a)),
        (Module::Np, f) if axes::takes_axis(f) && axes::axis_given(f, a) => {
            axes::reduce_along(t, f, a).transpose()
        }
        _ => None,
    }
}

/// The largest magnitude up to which every integer is a double.
pub(crate) const EXACT_INT: i64 = 1 << 53;

/// Raises where an int64 array holds a value past 2**53 in magnitude: `what` computes over
/// doubles, exact below that bound, while NumPy computes in int64.
pub(crate) fn exact_ints(t: &mut Translator, x: &ArrayVal, what: &str, span: Span) {
    let fits = ArrayVal {
        elem: exact_in_double(x.elem.clone()),
        ty: Ty::Bool,
        ..x.clone()
    };
    let ok = t
        .reduce(crate::ir::ReduceOp::All, &fits, span, None)
        .expect("All needs no empty check");
    t.check_plain(
        ok,
        crate::error::Exception::ValueError,
        &format!("ndjit's {what} handles integers up to 2**53 in magnitude"),
        span,
    );
}

/// Whether an int64 is at most 2**53 in magnitude, where a double holds it and every smaller one
/// exactly.
pub(crate) fn exact_in_double(x: Expr) -> Expr {
    bin(
        BinOp::And,
        cmp(CmpOp::Le, x.clone(), Expr::I64(EXACT_INT)),
        cmp(CmpOp::Ge, x, Expr::I64(-EXACT_INT)),
    )
}

/// An array's elements converted to `ty`.
pub(crate) fn as_type(arr: &ArrayVal, ty: Ty) -> ArrayVal {
    ArrayVal {
        elem: super::expr::convert(arr.elem.clone(), arr.ty, ty),
        ty,
        ..arr.clone()
    }
}

/// An array's elements as float64 (NumPy's comparisons and sorts of mixed kinds happen there).
fn as_f64(arr: &ArrayVal) -> ArrayVal {
    as_type(arr, Ty::F64)
}

/// The number of columns of a 2-D value (`None` for anything else).
pub(super) fn columns(v: &Value) -> Option<Expr> {
    match v {
        Value::Matrix(_, c) => Some(c.clone()),
        _ => None,
    }
}

/// An element-by-element result with the shape of its input: 2-D with `cols` columns, or 1-D.
pub(super) fn shaped(out: ArrayVal, cols: Option<Expr>) -> Value {
    match cols {
        Some(c) => Value::Matrix(out, c),
        None => Value::Array(out),
    }
}

/// The array as a plain view of a slot, materialised if it is computed: for values read many
/// times (or at computed indices), which should not be recomputed each time.
fn in_slot(t: &mut Translator, arr: ArrayVal) -> ArrayVal {
    if arr.slot().is_some() {
        arr
    } else {
        t.materialize(&arr, None)
    }
}

/// A temporary holding `init`, then, when `len > 0`, what `body` computes (a reduction that
/// needs a non-empty array, say).
pub(super) fn if_nonempty(
    t: &mut Translator,
    len: &Expr,
    ty: Ty,
    init: Expr,
    body: impl FnOnce(&mut Translator) -> Result<Expr>,
) -> Result<Expr> {
    let dst = t.temp(ty);
    t.emit(Stmt::Assign(dst, init));
    let ((), stmts) = t.nested(|t| {
        let v = body(t)?;
        t.emit(Stmt::Assign(dst, v));
        Ok(())
    })?;
    t.emit(Stmt::If(
        cmp(CmpOp::Gt, len.clone(), Expr::I64(0)),
        stmts,
        vec![],
    ));
    Ok(Expr::Var(dst))
}

/// `a == b` for floats with NaN equal to NaN (how `np.unique` groups values).
fn same_value(a: Expr, b: Expr) -> Expr {
    let both_nan = bin(
        BinOp::And,
        un(UnOp::IsNan, a.clone()),
        un(UnOp::IsNan, b.clone()),
    );
    bin(BinOp::Or, cmp(CmpOp::Eq, a, b), both_nan)
}

/// `a < b` in NumPy's sort order (NaN after every number), as `np.sort` and `np.searchsorted`
/// compare.
fn sorts_before(a: Expr, b: Expr) -> Expr {
    let number_before_nan = bin(
        BinOp::And,
        not(un(UnOp::IsNan, a.clone())),
        un(UnOp::IsNan, b.clone()),
    );
    bin(BinOp::Or, cmp(CmpOp::Lt, a, b), number_before_nan)
}

/// A constant `bool` keyword (`return_counts=True`), `default` when absent.
fn const_flag(t: &mut Translator, a: &mut Args, name: &str, default: bool) -> Result<bool> {
    let Some((v, s)) = a.kw(name) else {
        return Ok(default);
    };
    let e = match v {
        Value::Scalar(e, _) => crate::ir::fold::const_expr(&e),
        _ => None,
    };
    match e {
        Some(c) => Ok(c.f() != 0.0),
        None => Err(t.err(
            ErrorKind::Unsupported,
            s,
            format!("`{name}` must be a constant True or False in a filter"),
        )),
    }
}

/// NumPy's C converters of an integer (a shape's dimensions, the axis of a reduction written
/// in C) refuse a bool, Python's or NumPy's: `TypeError: an integer is required`, raised where
/// the call runs. (Its functions written in Python, `np.median`, `np.percentile`,
/// `np.average`, take `True` as 1.)
fn refuse_bool(t: &mut Translator, v: &Value, s: Span, what: &str) {
    if matches!(v, Value::Scalar(_, Ty::Bool)) {
        let message = format!("an integer is required ({what}: NumPy takes no bool there)");
        t.check_plain(Expr::Bool(false), Exception::TypeError, &message, s);
    }
}

/// A shape's dimension as NumPy's shape converter takes it: an int, never a bool.
pub(in crate::lower) fn dimension(t: &mut Translator, d: Value, s: Span) -> Result<Expr> {
    refuse_bool(t, &d, s, "a dimension");
    t.int(d, s, "a dimension")
}

/// A constant integer argument (a dimension, an axis), with `what` naming it in the error.
fn const_int(t: &mut Translator, v: Value, s: Span, what: &str) -> Result<i64> {
    let e = t.int(v, s, what)?;
    match crate::ir::fold::const_expr(&e) {
        Some(c) => Ok(c.i()),
        None => Err(t.err(
            ErrorKind::Unsupported,
            s,
            format!("{what} must be a constant in a filter"),
        )),
    }
}

/// Computes element `i` of a new array with statements (a reduction per element, say): runs
/// `body` for `i in 0..len`, storing what it returns into a scratch array of its type.
pub(super) fn tabulate(
    t: &mut Translator,
    len: Expr,
    name: &str,
    body: impl FnOnce(&mut Translator, Expr) -> Result<(Expr, Ty)>,
) -> Result<ArrayVal> {
    let len = t.stable(len, Ty::I64);
    let i = t.temp(Ty::I64);
    let mut slot = None;
    let ((), stmts) = t.nested(|t| {
        t.emit(Stmt::If(
            not(cmp(CmpOp::Lt, Expr::Var(i), len.clone())),
            vec![Stmt::Break],
            vec![],
        ));
        let (e, ty) = body(t, Expr::Var(i))?;
        let dst = t.new_array(ArrKind::Scratch { elem: ty }, name);
        t.emit(Stmt::Store(dst, Expr::Var(i), e));
        slot = Some((dst, ty));
        Ok(())
    })?;
    let (dst, ty) = slot.expect("the body ran");
    // Sized (and zeroed) before the loop: every element is then stored in range.
    super::builtins::fill_zeros(t, dst, len, ty);
    t.emit(Stmt::Assign(i, Expr::I64(0)));
    t.emit(Stmt::Loop {
        body: stmts,
        latch: vec![Stmt::Assign(i, bin(BinOp::Add, Expr::Var(i), Expr::I64(1)))],
    });
    Ok(t.view(dst))
}
