//! Bound values with more shape than a number or a 1-D array: `cfg.k` and `Cfg.k` (numbers,
//! strings or arrays read from a class or an instance, which the front end binds under their
//! dotted names, since ndjit binds values, not objects), and 2-D arrays.

use super::{Translator, Value};
use crate::syntax::ast::{self, ExprKind};

/// The suffix of the binding that holds a 2-D bound array's column count (the array itself is
/// bound flat, row-major, under its own name).
pub const COLUMNS_SUFFIX: &str = ".__ncols__";

/// The suffix of the binding (`"F"` or `"C"`) that says in which order NumPy's iterator visits a
/// 2-D bound array, where its strides decide it (the Python front end's `memory_order`): bound
/// row-major all the same, one in Fortran order sums otherwise.
pub const ORDER_SUFFIX: &str = ".__order__";

/// The suffix of the binding (`"S"` or `"R"`) that says that the rows of a bound float array
/// (its elements, if 1-D) are not contiguous: more than one element apart forwards, or
/// backwards (or broadcast), which NumPy's dot products add otherwise (`strided_dots.rs`).
pub const STRIDE_SUFFIX: &str = ".__stride__";

/// The bound 2-D arrays (also `cfg.k`) by the memory order their strides give them, and the
/// bound arrays by the strides of their rows.
pub(super) fn bound_layouts(bindings: &crate::bind::Bindings) -> super::transposed::BoundLayouts {
    use crate::bind::Value;
    let mut layouts = super::transposed::BoundLayouts::default();
    for (key, layout) in bindings.iter() {
        let Value::Str(layout) = layout else {
            continue;
        };
        let set = match (
            key.strip_suffix(ORDER_SUFFIX),
            key.strip_suffix(STRIDE_SUFFIX),
        ) {
            (Some(name), _) if layout == "F" => Some((&mut layouts.fortran, name)),
            (Some(name), _) if layout == "C" => Some((&mut layouts.c_order, name)),
            (_, Some(name)) if layout == "S" => Some((&mut layouts.strided_rows, name)),
            (_, Some(name)) if layout == "R" => Some((&mut layouts.reversed_rows, name)),
            _ => None,
        };
        if let Some((set, name)) = set {
            set.insert(name.to_string());
        }
    }
    layouts
}

impl Translator<'_> {
    /// `typing.cast(T, v)`: only a hint for type checkers, so `v` itself (`T` is not evaluated,
    /// as it may name types ndjit does not know).
    pub(super) fn typing_cast(
        &mut self,
        args: &[ast::Expr],
        keywords: &[ast::Keyword],
        span: crate::error::Span,
    ) -> crate::error::Result<Value> {
        match (args, keywords) {
            ([_, v], []) => self.expr(v),
            _ => Err(self.err(
                crate::error::ErrorKind::Arity,
                span,
                "cast() takes a type and a value",
            )),
        }
    }

    /// A bound array with a column count bound beside it is 2-D: `kernel[i, j]`.
    pub(super) fn bound_matrix(&mut self, name: &str, v: Value) -> Value {
        let key = format!("{name}{COLUMNS_SUFFIX}");
        match (v, self.bindings.get(&key).cloned()) {
            (Value::Array(a), Some(cols @ crate::bind::Value::Int(_))) => {
                match self.bound(&key, &cols) {
                    Value::Scalar(c, _) => Value::Matrix(a, c),
                    _ => unreachable!("an int binds to an int slot"),
                }
            }
            (v, _) => v,
        }
    }

    /// The bound value of `name.attr` when `name` is no variable of the filter's and the
    /// attribute was bound.
    pub(super) fn bound_attribute(&mut self, base: &ast::Expr, attr: &str) -> Option<Value> {
        let ExprKind::Name(name) = &base.kind else {
            return None;
        };
        if self.locals.contains(name) || self.names.contains_key(name) {
            return None;
        }
        let key = format!("{name}.{attr}");
        let value = self.bindings.get(&key)?.clone();
        Some(self.bound(&key, &value))
    }
}
