//! Selections of a 2-D array (stored flat, row-major): each axis takes one index, which drops
//! the axis, or a slice. Reads (`m[1:, ::2]`) and writes (`m[:, 0] = v`) share them.

use super::{expr, Translator};
use crate::error::{ErrorKind, Result};
use crate::ir::{self, Expr, Ty};
use crate::syntax::ast;

impl Translator<'_> {
    /// One axis of a 2-D selection: an index (checked) or a slice (clamped as Python's).
    pub(super) fn pick(&mut self, e: &ast::Expr, len: Expr, axis: usize) -> Result<Pick> {
        if let ast::ExprKind::Slice(lo, hi, step) = &e.kind {
            let (start, n, step) =
                self.slice_bounds(len, lo.as_deref(), hi.as_deref(), step.as_deref())?;
            let start = self.stable(start, Ty::I64);
            // A count known here stays a constant (`strided_dots.rs` asks whether a block may
            // be one column wide).
            let n = match crate::ir::fold::const_expr(&n) {
                Some(crate::ir::eval::Val::I(k)) => Expr::I64(k),
                _ => self.stable(n, Ty::I64),
            };
            return Ok(Pick::Range { start, n, step });
        }
        let v = self.expr(e)?;
        let (k, ty) = self.scalar(v, e.span, "an index")?;
        if ty != Ty::I64 {
            return Err(super::bad_scalar_index(self, ty, e.span));
        }
        // NumPy names the axis: `m[0, 5]` on three columns is out of bounds for axis 1.
        let message = format!("index {{a}} is out of bounds for axis {axis} with size {{b}}");
        Ok(Pick::One(self.checked_index_with(k, len, e.span, &message)))
    }

    /// `m[index]` on a 2-D array of `len` elements in rows of `cols`: the rows and the columns
    /// selected (`m[i]` is `m[i, :]`), each index checked against its axis.
    pub(super) fn select_2d(
        &mut self,
        len: Expr,
        cols: Expr,
        index: &ast::Expr,
    ) -> Result<(Pick, Pick)> {
        let (first, second) = match &index.kind {
            ast::ExprKind::Tuple(items) if items.len() == 2 => (&items[0], Some(&items[1])),
            ast::ExprKind::Tuple(items) => {
                return Err(self.err(
                    ErrorKind::Type,
                    index.span,
                    format!(
                        "too many indices: the array is 2-D, but {} were given",
                        items.len()
                    ),
                ))
            }
            _ => (index, None),
        };
        // `len / cols` rows (no rows when there are no columns).
        let safe_cols = expr::bin(ir::BinOp::Max, cols.clone(), Expr::I64(1));
        let rows = self.stable(expr::bin(ir::BinOp::FloorDiv, len, safe_cols), Ty::I64);
        let r = self.pick(first, rows, 0)?;
        let c = match second {
            Some(j) => self.pick(j, cols, 1)?,
            None => Pick::all(cols),
        };
        Ok((r, c))
    }
}

/// One axis of a 2-D selection.
pub(super) enum Pick {
    /// A single (checked, non-negative) index: the axis is dropped.
    One(Expr),
    /// `n` positions from `start` by `step`.
    Range { start: Expr, n: Expr, step: i64 },
}

impl Pick {
    /// The whole axis of `len` positions, `:`.
    pub(super) fn all(len: Expr) -> Pick {
        Pick::Range {
            start: Expr::I64(0),
            n: len,
            step: 1,
        }
    }

    pub(super) fn count(&self) -> Expr {
        match self {
            Pick::One(_) => Expr::I64(1),
            Pick::Range { n, .. } => n.clone(),
        }
    }

    /// The position of the k-th selected element.
    pub(super) fn at(&self, k: Expr) -> Expr {
        match self {
            Pick::One(i) => i.clone(),
            Pick::Range { start, step, .. } => expr::bin(
                ir::BinOp::Add,
                start.clone(),
                expr::bin(ir::BinOp::Mul, k, Expr::I64(*step)),
            ),
        }
    }
}
