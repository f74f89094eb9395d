//! Values known when a version of a filter is made, substituted for the expressions that read
//! them: the footprint size (`len(buffer)`) of a specialised filter, and, for a backend that bakes
//! them into its code (the GPU), the bound values. The result is then optimised again
//! ([`super::optimize`]), so that everything they decide folds away.

use super::{ArrDecl, ArrKind, Expr, Func, BUFFER};
use crate::bind::BoundValues;

/// What is known: each `Some` is substituted.
#[derive(Clone, Copy, Debug, Default)]
pub struct Known<'a> {
    /// The filter size: `Len(BUFFER)` becomes this constant and [`Func::filter_size`] records it.
    pub filter_size: Option<usize>,
    /// The bound values: parameters, bound-array lengths, and bound-array loads at constant
    /// indices become constants.
    pub bound: Option<&'a BoundValues>,
}

/// `func` with the known values substituted (not folded: see the module docs).
pub fn substitute(mut func: Func, known: Known<'_>) -> Func {
    if known.filter_size.is_some() {
        func.filter_size = known.filter_size;
    }
    let arrays = std::mem::take(&mut func.arrays);
    func.body = std::mem::take(&mut func.body)
        .into_iter()
        .map(|s| super::map_stmt_exprs(s, &mut |e| subst(e, &arrays, known)))
        .collect();
    func.arrays = arrays;
    func
}

fn subst(e: Expr, arrays: &[ArrDecl], known: Known<'_>) -> Expr {
    let bound_slot = |a: super::Arr| match arrays.get(a.0 as usize).map(|d| &d.kind) {
        Some(ArrKind::Bound(k)) => Some(*k as usize),
        _ => None,
    };
    if let (Expr::Len(BUFFER), Some(n)) = (&e, known.filter_size) {
        return Expr::I64(n as i64);
    }
    let Some(b) = known.bound else {
        return e.map_children(|c| subst(c, arrays, known));
    };
    match e {
        Expr::Param(k) => Expr::F64(b.floats.get(k as usize).copied().unwrap_or(0.0)),
        Expr::IntParam(k) => Expr::I64(b.ints.get(k as usize).copied().unwrap_or(0)),
        Expr::Len(a) if bound_slot(a).is_some() => {
            let len = bound_slot(a)
                .and_then(|k| b.arrays.get(k))
                .map_or(0, Vec::len);
            Expr::I64(len as i64)
        }
        Expr::Load(a, i) => {
            let i = subst(*i, arrays, known);
            let value = bound_slot(a)
                .zip(super::fold::const_expr(&i))
                .and_then(|(k, c)| b.arrays.get(k)?.get(usize::try_from(c.i()).ok()?));
            match value {
                Some(v) => Expr::F64(*v),
                None => Expr::Load(a, Box::new(i)),
            }
        }
        e => e.map_children(|c| subst(c, arrays, known)),
    }
}
