//! `.T` of a 2-D array is NumPy's view in Fortran order; ndjit computes the transposed elements
//! in C order.
//!
//! Indexing, element-wise arithmetic and the exact statistics cannot tell the two apart, but
//! NumPy's `np.sum`, `np.mean`, `np.var` and the other float reductions add an array's
//! elements in the order they lie in memory, and an element-wise result of a Fortran-ordered
//! array is laid out in Fortran order too: `np.sum(w.reshape(3, 3).T * k)` adds column by
//! column, pairwise, where the C order adds row by row (other rounding). The walk of `fate.rs`,
//! with the rules below, finds the `.T` whose value may reach such a reduction (through
//! operators, element-wise NumPy functions, names and helpers); the lowering refuses those that
//! transpose a 2-D array.
//!
//! A bound 2-D array in Fortran order (a transposed kernel passed in `extra_arguments`) is such
//! a view too: ndjit binds its elements row by row, NumPy adds them column by column. Its name
//! is followed as `.T` is, from each read of it.

use super::fate::{self, Callee, Fate, Rules, Scope, Verdict};
use super::names::{Builtin, Func, Module};
use crate::error::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Keyword, UnaryOp};
use crate::syntax::Program;
use std::collections::HashSet;

/// The bound 2-D arrays (by name, `cfg.k` for an attribute) whose strides give them a memory
/// order (those of one row or column, or broadcast, have none: they take their operands'), and
/// the bound float arrays whose rows (elements, if 1-D) are not contiguous.
#[derive(Default)]
pub(super) struct BoundLayouts {
    /// In Fortran order.
    pub fortran: HashSet<String>,
    /// In C order.
    pub c_order: HashSet<String>,
    /// Rows of a positive stride past one element.
    pub strided_rows: HashSet<String>,
    /// Rows of a negative or zero stride.
    pub reversed_rows: HashSet<String>,
}

/// The bound value `e` reads, if it reads one by a name the function does not bind: `k`, or
/// `cfg.k` (bound under that dotted name); `whole`: whether every load of it does.
pub(super) fn bound_name(s: &Scope, e: &Expr, whole: bool) -> Option<String> {
    let reads = |n: &str| match whole {
        true => s.reads_bound_only(n),
        false => s.may_read_bound(n),
    };
    match &e.kind {
        ExprKind::Name(n) if reads(n) => Some(n.clone()),
        ExprKind::Attribute(base, attr) => match &base.kind {
            ExprKind::Name(n) if reads(n) => Some(format!("{n}.{attr}")),
            _ => None,
        },
        _ => None,
    }
}

/// The spans of the `.T` attributes of `program`, and of the reads of its bound Fortran-order
/// arrays, whose value may reach a reduction that adds in memory order.
/// `floats`: the filter's parameter that holds the window (a 1-D float64 array).
pub(super) fn summed_transposes(
    program: &Program,
    (floats, callee): (&[&str], Callee),
    bound: &BoundLayouts,
) -> HashSet<Span> {
    fate::followed(
        program,
        &Transposed(bound),
        (floats, callee),
        Verdict::Differs,
    )
}

/// The rules for a Fortran-ordered view computed in C order.
struct Transposed<'a>(&'a BoundLayouts);

impl Transposed<'_> {
    /// Whether `e` is certainly a 2-D array in C order only, of the full shape of any operation
    /// it takes part in: a bound one, or the window reshaped to at least two rows and columns.
    /// (Reshaping a Fortran-ordered array to its own shape keeps its order, so only the buffer
    /// counts.)
    fn c_ordered(&self, s: &Scope, e: &Expr) -> bool {
        // `reshape(3, 3)` or `reshape((3, 3))`, each dimension a literal past 1.
        let dims_past_one = |args: &[Expr]| {
            let dims = match args {
                [Expr {
                    kind: ExprKind::Tuple(dims),
                    ..
                }] => dims.as_slice(),
                dims => dims,
            };
            dims.len() == 2
                && dims
                    .iter()
                    .all(|d| matches!(d.kind, ExprKind::Int(n) if n > 1))
        };
        if bound_name(s, e, true).is_some_and(|n| self.0.c_order.contains(&n)) {
            return true;
        }
        match &e.kind {
            ExprKind::Call {
                func,
                args,
                keywords,
            } => match &func.kind {
                ExprKind::Attribute(receiver, method) => {
                    method == "reshape"
                        && keywords.is_empty()
                        && matches!(&receiver.kind, ExprKind::Name(p) if s.is_float_param(p))
                        && dims_past_one(args)
                }
                _ => false,
            },
            _ => false,
        }
    }
}

impl Rules for Transposed<'_> {
    fn follows(&self, s: &Scope, e: &Expr) -> bool {
        if bound_name(s, e, false).is_some_and(|n| self.0.fortran.contains(&n)) {
            return true;
        }
        match &e.kind {
            // The transpose of a bound Fortran-order array is in C order.
            ExprKind::Attribute(base, attr) => {
                attr == "T"
                    && !bound_name(s, base, true).is_some_and(|n| self.0.fortran.contains(&n))
            }
            _ => false,
        }
    }

    /// An element-wise result keeps the layout, unless the other operand is in C order (NumPy
    /// lays a result out in C order where its operands disagree); `@` computes its own order
    /// (NumPy's BLAS order is a documented deviation either way).
    fn operand(&self, s: &Scope, op: BinOp, fate: Fate, _: &Expr, other: &Expr, _: bool) -> Fate {
        if op == BinOp::MatMul || self.c_ordered(s, other) {
            Fate::Agrees
        } else {
            fate
        }
    }

    fn unary(&self, _: UnaryOp, fate: Fate) -> Fate {
        fate
    }

    fn argument(&self, b: Builtin, (n, keywords): (usize, &[Keyword]), fate: Fate) -> Fate {
        use Func::*;
        let along_an_axis = n > 1 || keywords.iter().any(|k| k.name == "axis");
        match (b.module, b.func) {
            // Along an axis, a cumulative sum keeps its operand's layout (`np.cumsum(w.T, 0)` is
            // in Fortran order, and a sum of it adds column by column); without one it is 1-D.
            (Module::Np, Cumsum | Cumprod) if along_an_axis => fate,
            // They add (or multiply) in memory order.
            (
                Module::Np,
                Sum | Nansum | Prod | Nanprod | Mean | Nanmean | Var | Nanvar | Std | Nanstd
                | Average,
            ) => Fate::Differs,
            // The norm ravels its argument in memory order (`ravel(order="K")`), and adds that.
            (Module::Linalg, _) => Fate::Differs,
            // Exact in any order, or flattened in C order (the cumulative sums, the arg-extremes'
            // indices), or a product of rows (`np.dot`: see `strided_dots.rs`).
            (
                Module::Np,
                Min | Max | Nanmin | Nanmax | Ptp | Median | Nanmedian | Percentile | Nanpercentile
                | Quantile | Nanquantile | Any | All | CountNonzero | Argmin | Argmax | Nanargmin
                | Nanargmax | Cumsum | Cumprod | Dot,
            ) => Fate::Agrees,
            // Python's `sum` adds the rows in turn, element-wise; the conversions read numbers.
            (Module::Builtin, Sum | Len | Float | Int | Bool) => Fate::Agrees,
            // A copy flattened in C order (`order` is refused).
            (Module::Np, Ravel) => Fate::Agrees,
            // Element-wise functions and copies keep the layout.
            (Module::Np, _) => fate,
            _ => Fate::Differs,
        }
    }

    /// `t += 1` keeps the layout.
    fn updated_in_place(&self) -> bool {
        false
    }

    /// An item is a number; a row, column or block keeps the layout.
    fn subscript(&self, _: &Expr, fate: Fate) -> Fate {
        fate
    }

    fn receiver(&self, name: &str, fate: Fate) -> Fate {
        match name {
            // A copy in C order (`ndarray.copy`'s default), and the exact statistics.
            "copy" | "ravel" | "flatten" | "tolist" | "min" | "max" | "ptp" | "any" | "all"
            | "argmin" | "argmax" | "item" => Fate::Agrees,
            // Along an axis (`w.T.cumsum(0)`), the receiver's layout; without one 1-D: the
            // arguments are not seen here, so taken as the layout either way.
            "cumsum" | "cumprod" => fate,
            // `astype` keeps the layout (order "K").
            "astype" => fate,
            _ => Fate::Differs,
        }
    }

    /// The transpose of a Fortran-ordered array is in C order; its shape is numbers.
    fn attribute(&self, name: &str, fate: Fate) -> Fate {
        match name {
            "T" | "shape" | "size" | "ndim" => Fate::Agrees,
            "real" => fate,
            _ => Fate::Differs,
        }
    }
}
