//! Writes into arrays: `a[i] = v`, `a[mask] = v`, `a[lo:hi:step] = v`, with NumPy's conversion
//! of the value to the array's element type.

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
        let i = mask.index;
        self.emit(Stmt::Assign(i, Expr::I64(0)));
        let more = expr::cmp(ir::CmpOp::Lt, Expr::Var(i), len);
        let store = Stmt::Store(slot, Expr::Var(i), v);
        self.emit(Stmt::Loop {
            body: vec![
                Stmt::If(super::not(more), vec![Stmt::Break], vec![]),
                Stmt::If(mask.elem, vec![store], vec![]),
            ],
            latch: vec![Stmt::Assign(
                i,
                expr::bin(ir::BinOp::Add, Expr::Var(i), Expr::I64(1)),
            )],
        });
        Ok(())
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
        let k = self.temp(Ty::I64);
        let elem = match value {
            Value::Scalar(v, vty) => {
                let v = self.store_value(v, vty, ety, span);
                self.stable(v, ety)
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
                let rhs = if super::expr_reads_array(&rhs.elem, slot) {
                    self.materialize(&rhs, None)
                } else {
                    rhs
                };
                let one = expr::cmp(ir::CmpOp::Eq, rhs.len.clone(), Expr::I64(1));
                let at = Expr::Select(one.boxed(), Expr::I64(0).boxed(), Expr::Var(k).boxed());
                rhs.at(at)
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
        let position = expr::bin(
            ir::BinOp::Add,
            start,
            expr::bin(ir::BinOp::Mul, Expr::Var(k), Expr::I64(step)),
        );
        self.emit(Stmt::Assign(k, Expr::I64(0)));
        let more = expr::cmp(ir::CmpOp::Lt, Expr::Var(k), n);
        self.emit(Stmt::Loop {
            body: vec![
                Stmt::If(super::not(more), vec![Stmt::Break], vec![]),
                Stmt::Store(slot, position, elem),
            ],
            latch: vec![Stmt::Assign(
                k,
                expr::bin(ir::BinOp::Add, Expr::Var(k), Expr::I64(1)),
            )],
        });
        Ok(())
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
