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

use super::fate::{self, Callee, Fate, Rules, Scope, Verdict};
use super::names::{Builtin, Func, Module};
use crate::error::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Keyword, UnaryOp};
use crate::syntax::Program;
use std::collections::HashSet;

/// The spans of the `.T` attributes of `program` whose value may reach a reduction that adds
/// in memory order.
pub(super) fn summed_transposes(program: &Program, callee: Callee) -> HashSet<Span> {
    fate::followed(program, &Transposed, (&[], callee), Verdict::Differs)
}

/// The rules for a Fortran-ordered view computed in C order.
struct Transposed;

impl Rules for Transposed {
    fn follows(&self, _: &Scope, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Attribute(_, attr) if attr == "T")
    }

    /// An element-wise result keeps the layout; `@` computes its own order (NumPy's BLAS order
    /// is a documented deviation either way).
    fn operand(&self, _: &Scope, op: BinOp, fate: Fate, _: &Expr, _: &Expr, _: bool) -> Fate {
        if op == BinOp::MatMul {
            Fate::Agrees
        } else {
            fate
        }
    }

    fn unary(&self, _: UnaryOp, fate: Fate) -> Fate {
        fate
    }

    fn argument(&self, b: Builtin, _: (usize, &[Keyword]), fate: Fate) -> Fate {
        use Func::*;
        match (b.module, b.func) {
            // They add (or multiply) in memory order.
            (
                Module::Np,
                Sum | Nansum | Prod | Nanprod | Mean | Nanmean | Var | Nanvar | Std | Nanstd
                | Average,
            ) => Fate::Differs,
            // Exact in any order, or flattened in C order (the cumulative sums, the arg-extremes'
            // indices), or NumPy's BLAS order (`np.dot`, `np.linalg.norm`).
            (
                Module::Np,
                Min | Max | Nanmin | Nanmax | Ptp | Median | Nanmedian | Percentile | Nanpercentile
                | Quantile | Nanquantile | Any | All | CountNonzero | Argmin | Argmax | Cumsum
                | Cumprod | Dot,
            )
            | (Module::Linalg, _) => Fate::Agrees,
            // Python's `sum` adds the rows in turn, element-wise; the conversions read numbers.
            (Module::Builtin, Sum | Len | Float | Int | Bool) => Fate::Agrees,
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
    fn subscript(&self, fate: Fate) -> Fate {
        fate
    }

    fn receiver(&self, name: &str, fate: Fate) -> Fate {
        match name {
            // A copy in C order (`ndarray.copy`'s default), and the exact statistics.
            "copy" | "ravel" | "flatten" | "tolist" | "min" | "max" | "ptp" | "any" | "all"
            | "argmin" | "argmax" | "item" | "cumsum" | "cumprod" => Fate::Agrees,
            // `astype` keeps the layout (order "K").
            "astype" => fate,
            _ => Fate::Differs,
        }
    }
}
