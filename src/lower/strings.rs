//! Strings are compile-time constants (literals and bound values): comparisons between them fold
//! to a bool, so `if method == "mean":` keeps only the branch that runs.

use super::{Translator, Value};
use crate::error::{ErrorKind, Result, Span};
use crate::ir::{Expr, Ty};
use crate::syntax::ast::CmpOp;

impl Translator<'_> {
    /// The folded value of `a op b` where a string takes part, or None when neither is one.
    pub(super) fn compare_strings(
        &self,
        op: CmpOp,
        a: &Value,
        b: &Value,
        span: Span,
    ) -> Result<Option<Value>> {
        if !matches!(a, Value::Str(_)) && !matches!(b, Value::Str(_)) {
            return Ok(None);
        }
        let found = match (op, a, b) {
            (CmpOp::Eq | CmpOp::Ne, Value::Str(x), Value::Str(y)) => (x == y) == (op == CmpOp::Eq),
            // A string never equals a number or None.
            (CmpOp::Eq | CmpOp::Ne, Value::Str(_), Value::Scalar(..) | Value::None)
            | (CmpOp::Eq | CmpOp::Ne, Value::Scalar(..) | Value::None, Value::Str(_)) => {
                op == CmpOp::Ne
            }
            // Python orders strings by code point, as UTF-8 bytes do.
            (CmpOp::Lt, Value::Str(x), Value::Str(y)) => x < y,
            (CmpOp::Le, Value::Str(x), Value::Str(y)) => x <= y,
            (CmpOp::Gt, Value::Str(x), Value::Str(y)) => x > y,
            (CmpOp::Ge, Value::Str(x), Value::Str(y)) => x >= y,
            (CmpOp::In | CmpOp::NotIn, Value::Str(x), Value::Str(y)) => {
                y.contains(x.as_str()) == (op == CmpOp::In)
            }
            (CmpOp::In | CmpOp::NotIn, Value::Str(x), Value::Tuple(items)) => {
                items.iter().any(|i| matches!(i, Value::Str(s) if s == x)) == (op == CmpOp::In)
            }
            _ => {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        span,
                        format!(
                            "comparing {} with {} is not supported",
                            a.describe(),
                            b.describe()
                        ),
                    )
                    .hint("compare strings with == or `in`, e.g. `if method == \"mean\":`"))
            }
        };
        Ok(Some(Value::Scalar(Expr::Bool(found), Ty::Bool)))
    }
}
