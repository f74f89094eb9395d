//! Bound values with more shape than a number or a 1-D array: `cfg.k` and `Cfg.k` (numbers,
//! strings or arrays read from a class or an instance, which the front end binds under their
//! dotted names, since ndjit binds values, not objects), and 2-D arrays.

use super::{Translator, Value};
use crate::syntax::ast::{self, ExprKind};

/// The suffix of the binding that holds a 2-D bound array's column count (the array itself is
/// bound flat, row-major, under its own name).
pub const COLUMNS_SUFFIX: &str = ".__ncols__";

/// The suffix of the binding (`True`) that marks a 2-D bound array NumPy lays out in Fortran
/// order (column by column in memory): bound row-major all the same, it sums otherwise.
pub const FORTRAN_SUFFIX: &str = ".__fortran__";

/// The bound 2-D arrays of more than one row and column, by memory order.
pub(super) fn bound_layouts(bindings: &crate::bind::Bindings) -> super::transposed::BoundLayouts {
    use crate::bind::Value;
    let mut layouts = super::transposed::BoundLayouts::default();
    for (key, cols) in bindings.iter() {
        let (Some(name), Value::Int(cols)) = (key.strip_suffix(COLUMNS_SUFFIX), cols) else {
            continue;
        };
        let Some(Value::Array(a, _)) = bindings.get(name) else {
            continue;
        };
        if *cols > 1 && a.len() as i64 > *cols {
            let fortran = matches!(
                bindings.get(&format!("{name}{FORTRAN_SUFFIX}")),
                Some(Value::Bool(true))
            );
            let set = if fortran {
                &mut layouts.fortran
            } else {
                &mut layouts.c_order
            };
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
