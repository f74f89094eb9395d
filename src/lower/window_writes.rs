//! Writes into arrays: `a[i] = v`, `a[mask] = v`, `a[lo:hi:step] = v`, with NumPy's conversion
//! of the value to the array's element type.

use super::builtins::counted_loop;
use super::selection::Pick;
use super::{expr, reads_array_elsewhere, ArrayVal, Translator, Value};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{self, Arr, Expr, Stmt, Ty};
use crate::syntax::ast;

/// NumPy's message for a value that does not fit a slice or a selection.
const BROADCAST: &str = "could not broadcast input array from shape ({a},) into shape ({b},)";

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
        // NumPy writes nothing through an empty mask, whatever the array's length.
        let empty = expr::cmp(ir::CmpOp::Eq, mask.len.clone(), Expr::I64(0));
        let ok = expr::bin(
            ir::BinOp::Or,
            expr::cmp(ir::CmpOp::Eq, mask.len.clone(), len.clone()),
            empty.clone(),
        );
        self.check(
            ok,
            Exception::IndexError,
            "boolean index did not match indexed array along axis 0; size of axis is {b} but size of corresponding boolean axis is {a}",
            span,
            mask.len.clone(),
            len.clone(),
        );
        let len = Expr::Select(empty.boxed(), Expr::I64(0).boxed(), len.boxed());
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
        let n = self.stable(n, Ty::I64);
        let rhs = self.stored_values(slot, ety, value, n.clone(), span, BROADCAST)?;
        counted_loop(self, n, |t, k| {
            let position = expr::bin(
                ir::BinOp::Add,
                start,
                expr::bin(ir::BinOp::Mul, k.clone(), Expr::I64(step)),
            );
            t.emit(Stmt::Store(slot, position, rhs.at(k)));
            Ok(())
        })
    }

    /// `a[[i, j, ...]] = value` or `a[idx] = value` with an array of ints on a 1-D array: the
    /// value's shape, then every index, is checked (negative ones count from the end) before any
    /// element is written; the value is a number, or an array of as many elements (or of one),
    /// read in full first. With
    /// a repeated index the last value stays, as in NumPy.
    pub(super) fn assign_fancy(
        &mut self,
        slot: Arr,
        ety: Ty,
        idx: ArrayVal,
        value: Value,
        span: Span,
    ) -> Result<()> {
        let len = self.slot_len(slot);
        let idx = self.materialize(&super::builtins::cast_array(idx, Ty::I64), None);
        let n = self.stable(idx.len.clone(), Ty::I64);
        // NumPy converts the value and checks its shape before it checks the indices.
        const MISMATCH: &str = "shape mismatch: value array of shape ({a},) could not be broadcast to indexing result of shape ({b},)";
        let rhs = self.stored_values(slot, ety, value, n.clone(), span, MISMATCH)?;
        counted_loop(self, n.clone(), |t, k| {
            t.checked_index(idx.at(k), len.clone(), span);
            Ok(())
        })?;
        counted_loop(self, n, |t, k| {
            let i = t.stable(idx.at(k.clone()), Ty::I64);
            let at = Expr::Select(
                expr::cmp(ir::CmpOp::Lt, i.clone(), Expr::I64(0)).boxed(),
                expr::bin(ir::BinOp::Add, i.clone(), len).boxed(),
                i.boxed(),
            );
            t.emit(Stmt::Store(slot, at, rhs.at(k)));
            Ok(())
        })
    }

    /// The values an assignment of `n` elements stores: a number repeated, or a 1-D array of `n`
    /// elements (or of one, repeated), converted as NumPy converts them and read in full before
    /// the store when it reads the array written. `rhs.at(k)` is the k-th value.
    fn stored_values(
        &mut self,
        slot: Arr,
        ety: Ty,
        value: Value,
        n: Expr,
        span: Span,
        mismatch: &str,
    ) -> Result<ArrayVal> {
        let rhs = match value {
            Value::Scalar(v, vty) => {
                let v = self.store_value(v, vty, ety, span);
                let v = self.stable(v, ety);
                return Ok(ArrayVal {
                    len: n,
                    ty: ety,
                    index: self.temp(Ty::I64),
                    elem: v,
                });
            }
            Value::Array(rhs) => rhs,
            Value::List(rhs, _) => self.checked_items(rhs, ety, span)?,
            items @ Value::Tuple(_) => {
                let rhs = self.array_of(items, span)?;
                self.checked_items(rhs, ety, span)?
            }
            other => {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        span,
                        format!("assigning {} here is not supported", other.describe()),
                    )
                    .hint("assign a number or a 1-D array"))
            }
        };
        let one = expr::cmp(ir::CmpOp::Eq, rhs.len.clone(), Expr::I64(1));
        self.check(
            expr::bin(
                ir::BinOp::Or,
                expr::cmp(ir::CmpOp::Eq, rhs.len.clone(), n.clone()),
                one.clone(),
            ),
            Exception::ValueError,
            mismatch,
            span,
            rhs.len.clone(),
            n.clone(),
        );
        let rhs = super::builtins::cast_array(rhs, ety);
        let rhs = match super::expr_reads_array(&rhs.elem, slot) {
            true => self.materialize(&rhs, None),
            false => rhs,
        };
        let index = self.temp(Ty::I64);
        let from = Expr::Select(one.boxed(), Expr::I64(0).boxed(), Expr::Var(index).boxed());
        Ok(ArrayVal {
            len: n,
            ty: ety,
            index,
            elem: rhs.at(from),
        })
    }

    /// `y[1:] *= 1.5` updates the selection in place, through the ufunc's `out=`, whose same-kind
    /// casting refuses a result wider than the array it was (`before`; int64 to bool, float64 to
    /// int64): NumPy's UFuncTypeError, wherever it runs.
    pub(super) fn same_kind_casting(&mut self, before: Option<Ty>, result: &Value, span: Span) {
        let (Some(from), Some(to)) = (before, result.element_type()) else {
            return;
        };
        if to > from {
            let message = format!(
                "Cannot cast ufunc output from dtype('{}') to dtype('{}') with casting rule \
                 'same_kind'",
                to.numpy_name(),
                from.numpy_name()
            );
            self.check_plain(Expr::Bool(false), Exception::TypeError, &message, span);
        }
    }

    /// A list or tuple about to be stored: NumPy converts its items one by one, as it converts a
    /// number it stores (a NaN or a float out of range raises for an int array, where an array
    /// of floats would be cast), before it looks at the shapes. The checks run over every item
    /// first; the items are then stored as an array's are.
    pub(crate) fn checked_items(
        &mut self,
        items: ArrayVal,
        ety: Ty,
        span: Span,
    ) -> Result<ArrayVal> {
        if !(items.ty == Ty::F64 && ety == Ty::I64) {
            return Ok(items);
        }
        let items = self.materialize(&items, None);
        counted_loop(self, items.len.clone(), |t, k| {
            let _ = t.store_value(items.at(k), items.ty, ety, span);
            Ok(())
        })?;
        Ok(items)
    }

    /// `w[i, j] = v`, `w[i] = row`, `w[i, :] = v`, `w[:, j] = v`, `w[r0:r1, c0:c1] = v` on a 2-D
    /// array (stored flat, `cols` per row). The selection keeps the axes given by slices; the
    /// value is a number, or a 1-D array that broadcasts along the selection's last axis (as
    /// NumPy's would), or a 2-D array of the selection's shape.
    pub(super) fn assign_matrix_element(
        &mut self,
        slot: Arr,
        ety: Ty,
        cols: Expr,
        index: &ast::Expr,
        value: Value,
        span: Span,
    ) -> Result<()> {
        let len = self.slot_len(slot);
        let cols = self.stable(cols, Ty::I64);
        let (r, c) = self.select_2d(len, cols.clone(), index)?;
        let (nr, nc) = (r.count(), c.count());
        let values = self.selection_values(slot, ety, value, (&r, &c), span)?;
        counted_loop(self, nr, |t, kr| {
            let kr = t.stable(kr, Ty::I64);
            counted_loop(t, nc, |t, kc| {
                let flat = expr::bin(
                    ir::BinOp::Add,
                    expr::bin(ir::BinOp::Mul, r.at(kr.clone()), cols),
                    c.at(kc.clone()),
                );
                t.emit(Stmt::Store(slot, flat, values(kr, kc)));
                Ok(())
            })
        })
    }

    /// The value stored at selection position (kr, kc), as a function of the two counters.
    #[allow(clippy::type_complexity)]
    fn selection_values(
        &mut self,
        slot: Arr,
        ety: Ty,
        value: Value,
        (r, c): (&Pick, &Pick),
        span: Span,
    ) -> Result<Box<dyn Fn(Expr, Expr) -> Expr>> {
        if let Value::Matrix(m, mcols) = value {
            let (Pick::Range { n: nr, .. }, Pick::Range { n: nc, .. }) = (r, c) else {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        span,
                        "assigning a 2-D array to a row or a column",
                    )
                    .hint("assign a 1-D array, e.g. m[i] = v.ravel()"));
            };
            let mcols = self.stable(mcols, Ty::I64);
            let m = super::builtins::cast_array(m, ety);
            let m = self.materialize(&m, None);
            let same = expr::bin(
                ir::BinOp::And,
                expr::cmp(ir::CmpOp::Eq, mcols.clone(), nc.clone()),
                expr::cmp(
                    ir::CmpOp::Eq,
                    m.len.clone(),
                    expr::bin(ir::BinOp::Mul, nr.clone(), nc.clone()),
                ),
            );
            self.check(
                same,
                Exception::ValueError,
                "could not broadcast a 2-D array of {a} elements into a selection of {b} elements",
                span,
                m.len.clone(),
                expr::bin(ir::BinOp::Mul, nr.clone(), nc.clone()),
            );
            let _ = slot;
            return Ok(Box::new(move |kr, kc| {
                m.at(expr::bin(
                    ir::BinOp::Add,
                    expr::bin(ir::BinOp::Mul, kr, mcols.clone()),
                    kc,
                ))
            }));
        }
        // A 1-D value (or a number) runs along the selection's last kept axis.
        let along_cols = matches!(c, Pick::Range { .. }) || matches!(r, Pick::One(_));
        let n = if along_cols { c.count() } else { r.count() };
        let rhs = self.stored_values(slot, ety, value, n, span, BROADCAST)?;
        Ok(Box::new(move |kr, kc| {
            rhs.at(if along_cols { kc } else { kr })
        }))
    }
}
