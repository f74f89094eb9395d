//! Values known when a version of a filter is made, substituted for the expressions that read
//! them: the footprint size (`len(buffer)`) of a specialised filter, and, for a backend that bakes
//! them into its code (the GPU), the bound values and what kind of doubles the buffer holds. The
//! result is then optimised again ([`super::optimize`]), so that everything they decide folds
//! away.

use super::{ArrDecl, ArrKind, Expr, Func, Stmt, UnOp, BUFFER};
use crate::bind::BoundValues;

/// What the buffer's values are known to be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferValues {
    /// Any double.
    #[default]
    Any,
    /// Finite doubles other than `-0.0`: an image of integers or bools converted, with a
    /// `cval` of that kind. NumPy's zero-sign guards and NaN tests of the taps then fold away:
    /// an 8-bit image's minimum is 0 in one window of six over 49 random pixels, and each such
    /// window ran the guard's scan of the taps.
    Ordinary,
}

impl BufferValues {
    /// The constant that `op` of a buffer value is, where these values decide it.
    fn decides(self, op: UnOp) -> Option<bool> {
        match (self, op) {
            (BufferValues::Any, _) => None,
            (BufferValues::Ordinary, UnOp::IsNan | UnOp::IsInf | UnOp::SignBit) => Some(false),
            (BufferValues::Ordinary, UnOp::IsFinite) => Some(true),
            (BufferValues::Ordinary, _) => None,
        }
    }
}

/// What is known: each `Some` is substituted.
#[derive(Clone, Copy, Debug, Default)]
pub struct Known<'a> {
    /// The filter size: `Len(BUFFER)` becomes this constant and [`Func::filter_size`] records it.
    pub filter_size: Option<usize>,
    /// The bound values: parameters, bound-array lengths, and bound-array loads at constant
    /// indices become constants.
    pub bound: Option<&'a BoundValues>,
    /// What the buffer holds: tests of a buffer load that it decides become constants.
    pub buffer: BufferValues,
}

/// `func` with the known values substituted (not folded: see the module docs).
pub fn substitute(mut func: Func, mut known: Known<'_>) -> Func {
    if known.filter_size.is_some() {
        func.filter_size = known.filter_size;
    }
    // Lowering copies the buffer before writing (`x[0] = ...` writes a scratch copy); should a
    // body ever store into it, its loads are no longer the image's values.
    if super::any_stmt(&func.body, &|s| matches!(s, Stmt::Store(BUFFER, ..))) {
        known.buffer = BufferValues::Any;
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
    if let Expr::Unary(op, x) = &e {
        if let (Expr::Load(BUFFER, _), Some(b)) = (&**x, known.buffer.decides(*op)) {
            return Expr::Bool(b);
        }
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

#[cfg(test)]
mod tests {
    use super::BufferValues;
    use crate::{Bindings, Filter};

    fn baked(src: &str, buffer: BufferValues) -> String {
        let f = Filter::compile(src, &Bindings::new()).unwrap();
        f.baked_ir(9, buffer).to_string()
    }

    /// What ordinary values decide folds away with everything it fed: NumPy's zero-sign guard of
    /// `np.min` (its check, its two scans of the taps and its branch) and `np.isnan` of the taps.
    /// Over any values both stay.
    #[test]
    fn ordinary_buffers_fold_the_tests_their_values_decide() {
        let any = baked("np.min(x)", BufferValues::Any);
        assert!(any.contains("check") && any.contains("SignBit"), "{any}");
        let ordinary = baked("np.min(x)", BufferValues::Ordinary);
        for gone in ["check", "any for", "if ", "SignBit"] {
            assert!(!ordinary.contains(gone), "{gone}: {ordinary}");
        }
        assert!(baked("np.sum(np.isnan(x))", BufferValues::Any).contains("IsNan"));
        let ordinary = baked("np.sum(np.isnan(x))", BufferValues::Ordinary);
        assert!(!ordinary.contains("IsNan"), "{ordinary}");
    }
}
