//! Writes into arrays: `a[i] = v`, `a[mask] = v`, `a[lo:hi:step] = v`, with NumPy's conversion
//! of the value to the array's element type.

use super::builtins::counted_loop;
use super::{expr, reads_array_elsewhere, ArrayVal, Translator, Value};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{self, Arr, Expr, Stmt, Ty};
use crate::syntax::ast;

impl Translator<'_> {
    /// The value `v` converted for a store into an array of `ety`, as NumPy's `__setitem__`
    /// converts it: a float stored into an int array truncates, and NaN, infinity and values out
    /// of range raise what `int()` raises.
    pub(super) fn store_value(&mut self, v: Expr, vty: Ty, ety: Ty, span: Span) -> Expr {
        if vty == Ty::F64 && ety == Ty::I64 {
            let v = self.stable(v, vty);
            super::builtins::int_checks(self, &v, span);
            return expr::convert(v, vty, ety);
        }
        expr::convert(v, vty, ety)
    }

    /// `a[mask] = value`: NumPy sets the elements where the boolean mask holds, after checking
    /// that the mask is as long as the array.
    pub(super) fn assign_masked(
        &mut self,
        slot: Arr,
        ety: Ty,
        mask: ArrayVal,
        value: Value,
        span: Span,
    ) -> Result<()> {
        let Value::Scalar(v, vty) = value else {
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    format!(
                        "assigning {} through a boolean mask is not supported",
                        value.describe()
                    ),
                )
                .hint("assign one number (`a[a > t] = 0`), or loop over the elements"));
        };
        let len = self.slot_len(slot);
        self.check(
            expr::cmp(ir::CmpOp::Eq, mask.len.clone(), len.clone()),
            Exception::IndexError,
            "boolean index did not match indexed array along axis 0; size of axis is {b} but size of corresponding boolean axis is {a}",
            span,
            mask.len.clone(),
            len.clone(),
        );
        let v = self.store_value(v, vty, ety, span);
        let v = self.stable(v, ety);
        // The mask is read while the array is written: compute it first unless each element
        // reads only its own position.
        let mask = if reads_array_elsewhere(&mask.elem, slot, mask.index) {
            self.materialize(&mask, None)
        } else {
            mask
        };
        // A loop of stores: a fill cannot read the array it writes.
        counted_loop(self, len, |t, i| {
            t.emit(Stmt::If(
                mask.at(i.clone()),
                vec![Stmt::Store(slot, i, v)],
                vec![],
            ));
            Ok(())
        })
    }

    /// `a[lo:hi:step] = value` on a 1-D array: one number into every selected element, or an
    /// array of as many elements (or of one), read in full before any is written, as NumPy
    /// copies a right-hand side that overlaps the array; its elements convert as `astype` does.
    pub(super) fn assign_slice(
        &mut self,
        slot: Arr,
        ety: Ty,
        (lo, hi, step): (Option<&ast::Expr>, Option<&ast::Expr>, Option<&ast::Expr>),
        value: Value,
        span: Span,
    ) -> Result<()> {
        let len = self.slot_len(slot);
        let (start, n, step) = self.slice_bounds(len, lo, hi, step)?;
        // The values stored, as an array of as many elements or of one (a number).
        let rhs = match value {
            Value::Scalar(v, vty) => {
                let v = self.store_value(v, vty, ety, span);
                ArrayVal {
                    len: Expr::I64(1),
                    ty: ety,
                    index: self.temp(Ty::I64),
                    elem: self.stable(v, ety),
                }
            }
            Value::Array(rhs) => {
                self.check(
                    expr::bin(
                        ir::BinOp::Or,
                        expr::cmp(ir::CmpOp::Eq, rhs.len.clone(), n.clone()),
                        expr::cmp(ir::CmpOp::Eq, rhs.len.clone(), Expr::I64(1)),
                    ),
                    Exception::ValueError,
                    "could not broadcast input array from shape ({a},) into shape ({b},)",
                    span,
                    rhs.len.clone(),
                    n.clone(),
                );
                let rhs = super::builtins::cast_array(rhs, ety);
                // Read in full first when it reads the array at all (NumPy's copy of an
                // overlapping right-hand side); otherwise element k is read as it is stored.
                match super::expr_reads_array(&rhs.elem, slot) {
                    true => self.materialize(&rhs, None),
                    false => rhs,
                }
            }
            other => {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        span,
                        format!("assigning {} to a slice is not supported", other.describe()),
                    )
                    .hint("assign a number or a 1-D array"))
            }
        };
        counted_loop(self, n, |t, k| {
            let one = expr::cmp(ir::CmpOp::Eq, rhs.len.clone(), Expr::I64(1));
            let from = Expr::Select(one.boxed(), Expr::I64(0).boxed(), k.clone().boxed());
            let position = expr::bin(
                ir::BinOp::Add,
                start,
                expr::bin(ir::BinOp::Mul, k, Expr::I64(step)),
            );
            t.emit(Stmt::Store(slot, position, rhs.at(from)));
            Ok(())
        })
    }

    /// `w[i, j] = value` on a 2-D array (stored flat, `cols` per row). Rows, columns and slices
    /// of a 2-D array are refused: written through the flat storage they would be other elements.
    pub(super) fn assign_matrix_element(
        &mut self,
        slot: Arr,
        ety: Ty,
        cols: Expr,
        index: &ast::Expr,
        value: Value,
        span: Span,
    ) -> Result<()> {
        let refuse = |t: &mut Self| {
            Err(t
                .err(
                    ErrorKind::Unsupported,
                    index.span,
                    "assigning to a row, a column or a slice of a 2-D array is not supported",
                )
                .hint("assign its elements one by one, `w[i, j] = v`, in a loop"))
        };
        let ast::ExprKind::Tuple(items) = &index.kind else {
            return refuse(self);
        };
        let [i, j] = &items[..] else {
            return refuse(self);
        };
        if [i, j]
            .iter()
            .any(|e| matches!(e.kind, ast::ExprKind::Slice(..)))
        {
            return refuse(self);
        }
        let len = self.slot_len(slot);
        let cols = self.stable(cols, Ty::I64);
        // `len / cols` rows (no rows when there are no columns).
        let safe_cols = Expr::Select(
            expr::cmp(ir::CmpOp::Eq, cols.clone(), Expr::I64(0)).boxed(),
            Expr::I64(1).boxed(),
            cols.clone().boxed(),
        );
        let rows = self.stable(expr::bin(ir::BinOp::FloorDiv, len, safe_cols), Ty::I64);
        let mut at = Vec::new();
        for (e, n) in [(i, rows), (j, cols.clone())] {
            let v = self.expr(e)?;
            let k = self.int(v, e.span, "an index")?;
            at.push(self.checked_index(k, n, e.span));
        }
        let flat = expr::bin(
            ir::BinOp::Add,
            expr::bin(ir::BinOp::Mul, at[0].clone(), cols),
            at[1].clone(),
        );
        let (v, vty) = self.scalar(value, span, "an array element")?;
        let v = self.store_value(v, vty, ety, span);
        self.emit(Stmt::Store(slot, flat, v));
        Ok(())
    }
}
