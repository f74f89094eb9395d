//! Dot products of strided views: NumPy adds them in another order than ndjit.
//!
//! `np.dot` of two float vectors goes to BLAS, whose order ndjit reproduces for contiguous
//! operands only (`numpy/blas_dot.rs`). An operand that is a view with a positive stride past
//! one element (`x[::2]`, a column `m[:, j]`, a row of `m.T`) goes to OpenBLAS's strided loop,
//! which adds in another order; one with a negative stride (`x[::-1]`, `np.flip(x)`) NumPy
//! copies first, so it is contiguous again. `a @ b` of vectors hands BLAS contiguous operands
//! only and adds any other view in a loop of its own. Measured: 1,364 of 2,000 random
//! `np.dot(x[::2], x[:13])` of 25 values were off NumPy's in the last bit, and 1,259 of
//! `x[::-1] @ x`; none of `np.dot(x[::-1], x)`.
//!
//! The walk of `fate.rs`, with the rules below, finds the views whose value may reach such a
//! product (through names, helpers, sub-views and view-keeping functions); the lowering refuses
//! those whose stride it then knows to differ, naming `.copy()`, after which NumPy's operand
//! is contiguous and the product ndjit's. Element-wise results of a view are new contiguous
//! arrays, except those of a transposed 2-D view, which NumPy lays out in Fortran order (so
//! their rows are strided too): transposes are followed through them.

use super::fate::{self, Callee, Fate, Rules, Scope, Verdict};
use super::names::{Builtin, Func, Module};
use super::transposed::{bound_name, BoundLayouts};
use super::Translator;
use crate::error::{ErrorKind, Result, Span};
use crate::ir::Ty;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Function, Keyword, UnaryOp};
use crate::syntax::visit;
use crate::syntax::Program;
use std::collections::HashSet;

/// The views of a program whose value may reach a product NumPy adds in a strided order.
#[derive(Default)]
pub(super) struct StridedDots {
    /// The bound arrays whose rows are strided, the loads of which are followed as views.
    bound: BoundLayouts,
    /// Slices with a step, picks of a 2-D array (`m[:, j]`) and `np.flip` calls that may reach
    /// `np.dot` or `@`: refused where their stride is positive and not one element.
    dotted_views: HashSet<Span>,
    /// The same that may reach `@`: refused where their stride is not one element.
    matmul_views: HashSet<Span>,
    /// The same that may be sliced backwards (`r[::-2]`, `np.flip(r)`): where their own
    /// stride is negative, the new view's is positive, so those that may reach `np.dot` as
    /// well are refused.
    resliced_views: HashSet<Span>,
    /// The same that may be reshaped: where they may be one column wide, the new view steps
    /// by rows, so those that may reach `np.dot` as well are refused.
    reshaped_views: HashSet<Span>,
    /// `.T` (and reads of bound arrays in Fortran order) whose value may reach `np.dot` or
    /// `@`: refused where it transposes a 2-D array.
    dotted_transposes: HashSet<Span>,
}

/// How a view's elements lie in memory, which decides how NumPy adds it in a product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stride {
    /// One element apart: BLAS's contiguous kernel.
    Contiguous,
    /// More than one element apart, forwards.
    Positive,
    /// Backwards.
    Negative,
    /// Rows forwards and contiguous, in a block that may be one column wide: its rows are
    /// contiguous, but a `reshape` of it to 1-D is a view stepping by rows.
    MaybeOneColumn,
}

impl Stride {
    /// The stride of a view that steps `step` elements of a contiguous row.
    pub(super) fn of_step(step: i64) -> Stride {
        match step {
            1 => Stride::Contiguous,
            s if s > 1 => Stride::Positive,
            _ => Stride::Negative,
        }
    }
}

impl Translator<'_> {
    /// Refuses the view of `ty` elements made at `span` if its stride makes NumPy add it
    /// otherwise than ndjit in a product it may reach (`transpose`: the view is a `.T`). Only
    /// floats: NumPy casts other views to floats (a contiguous copy) or adds them exactly.
    /// Refused by type, as the element type may still change in a later pass.
    pub(super) fn check_strided_view(
        &mut self,
        span: Span,
        (stride, ty): (Stride, Ty),
        transpose: bool,
    ) {
        if ty != Ty::F64 {
            return;
        }
        if self.strided_dots.refuses(span, stride, transpose) {
            self.refuse_unsupported(
                span,
                "a strided view (a slice with a step, a column, a transpose, np.flip) that may \
                 reach `np.dot` or `@`: NumPy's BLAS adds a strided operand in another order \
                 than a contiguous one, which ndjit does not model"
                    .to_string(),
                "copy the view first, e.g. `x[::2].copy()`: NumPy then adds it as a contiguous \
                 array, as ndjit does",
            );
        }
    }

    /// Refuses the read at `span` of the bound array `name` if its rows are strided and may
    /// reach a product NumPy adds otherwise.
    pub(super) fn check_strided_binding(&self, name: &str, span: Span) -> Result<()> {
        let d = &self.strided_dots;
        let b = &d.bound;
        // Its rows' stride, and a Fortran-order array's rows as a transpose's.
        let refused = (b.strided_rows.contains(name) && d.refuses(span, Stride::Positive, false))
            || (b.reversed_rows.contains(name) && d.refuses(span, Stride::Negative, false))
            || (b.fortran.contains(name) && d.refuses(span, Stride::Positive, true));
        if !refused {
            return Ok(());
        }
        Err(self
            .err(
                ErrorKind::Unsupported,
                span,
                format!(
                    "`{name}` is bound to an array whose rows are strided (not contiguous in \
                     memory) and may reach `np.dot` or `@`: NumPy's BLAS adds a strided operand \
                     in another order than a contiguous one, which ndjit does not model"
                ),
            )
            .hint(format!(
                "bind np.ascontiguousarray({name}) instead: NumPy then adds it as ndjit does"
            )))
    }
}

impl StridedDots {
    /// Whether the view of `stride` made at `span` (`transpose`: a `.T`) may reach a product
    /// NumPy adds otherwise: one of negative stride reaches `@`, or `np.dot` through a
    /// backwards slice of it (whose stride is then positive); a block that may be one column
    /// reaches a product through a reshape.
    fn refuses(&self, span: Span, stride: Stride, transpose: bool) -> bool {
        let dotted = match transpose {
            true => &self.dotted_transposes,
            false => &self.dotted_views,
        };
        match stride {
            Stride::Contiguous => false,
            Stride::Positive => dotted.contains(&span),
            Stride::Negative => {
                self.matmul_views.contains(&span)
                    || (dotted.contains(&span) && self.resliced_views.contains(&span))
            }
            Stride::MaybeOneColumn => dotted.contains(&span) && self.reshaped_views.contains(&span),
        }
    }
}

/// The views of `program` that may reach a BLAS product; none where it has no such product.
/// `bound`: the layouts of the bound arrays.
pub(super) fn strided_dots(program: &Program, callee: Callee, bound: BoundLayouts) -> StridedDots {
    if !has_product(program, callee) {
        return StridedDots::default();
    }
    let walk = |origins, sinks| {
        let rules = StridedView {
            origins,
            sinks,
            bound: &bound,
        };
        fate::followed(program, &rules, (&[], callee), Verdict::Differs)
    };
    StridedDots {
        dotted_views: walk(Origins::Views, Sinks::DotAndMatmul),
        matmul_views: walk(Origins::Views, Sinks::Matmul),
        resliced_views: walk(Origins::Views, Sinks::BackwardsSlice),
        reshaped_views: walk(Origins::Views, Sinks::Reshape),
        dotted_transposes: walk(Origins::Transposes, Sinks::DotAndMatmul),
        bound,
    }
}

/// Whether any function of `program` (lambdas included) has `@` or `np.dot`.
fn has_product(program: &Program, callee: Callee) -> bool {
    fn expr(e: &Expr, callee: Callee) -> bool {
        let here = match &e.kind {
            ExprKind::Binary(BinOp::MatMul, ..) => true,
            ExprKind::Call { func, .. } => callee(func).is_some_and(|b| b.func == Func::Dot),
            ExprKind::Lambda(f) => function(f, callee),
            _ => false,
        };
        let mut below = false;
        visit::for_each_child(e, |c| below |= expr(c, callee));
        here || below
    }
    fn function(f: &Function, callee: Callee) -> bool {
        let mut found = false;
        visit::for_each_stmt_expr(&f.body, &mut |e| found |= expr(e, callee));
        found
    }
    std::iter::once(&program.function)
        .chain(program.helpers.iter().map(|(_, f)| f))
        .any(|f| function(f, callee))
}

/// Which views a walk follows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origins {
    /// Slices with a step, picks of a 2-D array, `np.flip`: an element-wise result of one is a
    /// new contiguous array.
    Views,
    /// `.T`: an element-wise result of a transposed 2-D array is laid out as it is.
    Transposes,
}

/// Which uses a walk looks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sinks {
    /// `np.dot` and `@`, which add views of positive strides otherwise.
    DotAndMatmul,
    /// `@` only: `np.dot` copies a view of negative stride first.
    Matmul,
    /// A slice that may step backwards (`v[::-2]`, `m[::-1, 0]`) or `np.flip`: of a view of
    /// negative stride, it makes one of positive stride.
    BackwardsSlice,
    /// `np.reshape` or `.reshape`: of a one-column block, it makes a view stepping by rows.
    Reshape,
}

struct StridedView<'a> {
    origins: Origins,
    sinks: Sinks,
    bound: &'a BoundLayouts,
}

impl StridedView<'_> {
    /// The fate of a view in an element-wise operation whose result has `fate`.
    fn element_wise(&self, fate: Fate) -> Fate {
        match self.origins {
            Origins::Views => Fate::Agrees,
            Origins::Transposes => fate,
        }
    }

    /// The fate of a view that reaches `np.dot`.
    fn dotted(&self) -> Fate {
        match self.sinks {
            Sinks::DotAndMatmul => Fate::Differs,
            Sinks::Matmul | Sinks::BackwardsSlice | Sinks::Reshape => Fate::Agrees,
        }
    }

    /// The fate of a view that reaches `@`.
    fn multiplied(&self) -> Fate {
        match self.sinks {
            Sinks::DotAndMatmul | Sinks::Matmul => Fate::Differs,
            Sinks::BackwardsSlice | Sinks::Reshape => Fate::Agrees,
        }
    }
}

/// Whether the subscript `index` may hold a slice stepping backwards: a step other than a
/// positive literal.
fn may_step_backwards(index: &Expr) -> bool {
    let backwards = |i: &Expr| match &i.kind {
        ExprKind::Slice(_, _, Some(step)) => !matches!(step.kind, ExprKind::Int(k) if k > 0),
        _ => false,
    };
    match &index.kind {
        ExprKind::Tuple(items) => items.iter().any(backwards),
        _ => backwards(index),
    }
}

impl Rules for StridedView<'_> {
    fn follows(&self, s: &Scope, e: &Expr) -> bool {
        // A read of a bound array so marked (`k`, `cfg.k`); `k.T` of one is a transpose.
        if let Some(name) = bound_name(s, e, false) {
            let b = self.bound;
            let marked = match self.origins {
                Origins::Views => b.strided_rows.contains(&name) || b.reversed_rows.contains(&name),
                Origins::Transposes => b.fortran.contains(&name),
            };
            if marked {
                return true;
            }
        }
        match (self.origins, &e.kind) {
            (Origins::Views, ExprKind::Subscript(_, index)) => match &index.kind {
                ExprKind::Slice(_, _, step) => step.is_some(),
                ExprKind::Tuple(items) => items
                    .iter()
                    .any(|i| matches!(i.kind, ExprKind::Slice(..) | ExprKind::Ellipsis)),
                _ => false,
            },
            (Origins::Views, ExprKind::Call { func, .. }) => {
                s.builtin(func).is_some_and(|b| b.func == Func::Flip)
            }
            (Origins::Transposes, ExprKind::Attribute(_, attr)) => attr == "T",
            _ => false,
        }
    }

    fn operand(&self, _: &Scope, op: BinOp, fate: Fate, _: &Expr, _: &Expr, _: bool) -> Fate {
        match op {
            BinOp::MatMul => self.multiplied(),
            _ => self.element_wise(fate),
        }
    }

    fn unary(&self, _: UnaryOp, fate: Fate) -> Fate {
        self.element_wise(fate)
    }

    fn argument(&self, b: Builtin, (n, keywords): (usize, &[Keyword]), fate: Fate) -> Fate {
        use Func::*;
        let along_an_axis = n > 1 || keywords.iter().any(|k| k.name == "axis");
        match (b.module, b.func) {
            (Module::Np, Dot) => self.dotted(),
            (Module::Np, Flip) if self.sinks == Sinks::BackwardsSlice => Fate::Differs,
            (Module::Np, Reshape) if self.sinks == Sinks::Reshape => Fate::Differs,
            // Views of their argument.
            (Module::Np, Reshape | Flip | AsArray) => fate,
            // Numbers, or new 1-D arrays: a reduction's result, a C-order copy, a concatenation,
            // a cumulative sum of the flattened array; the norm ravels its argument first.
            (
                Module::Np,
                Sum | Nansum | Prod | Nanprod | Mean | Nanmean | Var | Nanvar | Std | Nanstd | Min
                | Max | Nanmin | Nanmax | Ptp | Median | Nanmedian | Percentile | Nanpercentile
                | Quantile | Nanquantile | Any | All | CountNonzero | Argmin | Argmax | Nanargmin
                | Nanargmax | Average | Ravel | Concatenate | Shape | Ndim | Size | Unique
                | Nonzero | Flatnonzero | Argwhere | Bincount | Histogram,
            )
            | (Module::Linalg | Module::Math | Module::Statistics | Module::Collections, _) => {
                Fate::Agrees
            }
            (Module::Np, Cumsum | Cumprod) if !along_an_axis => Fate::Agrees,
            // New arrays laid out as their operand (NumPy's order "K").
            (Module::Np, _) => self.element_wise(fate),
            // Numbers, or lists of the items.
            (Module::Builtin, Len | Float | Int | Bool | Sum | Min | Max | Any | All | Sorted) => {
                Fate::Agrees
            }
            // `list(m.T)` holds its rows, views themselves.
            _ => fate,
        }
    }

    /// `v += 1` changes the values, not the strides.
    fn updated_in_place(&self) -> bool {
        false
    }

    /// A slice or row of a view is a view (an item, a number, is taken as one too).
    fn subscript(&self, index: &Expr, fate: Fate) -> Fate {
        if self.sinks == Sinks::BackwardsSlice && may_step_backwards(index) {
            return Fate::Differs;
        }
        fate
    }

    fn receiver(&self, name: &str, fate: Fate) -> Fate {
        match name {
            "reshape" if self.sinks == Sinks::Reshape => Fate::Differs,
            // Copies in C order, and numbers.
            "copy" | "ravel" | "flatten" | "tolist" | "item" | "sum" | "mean" | "var" | "std"
            | "prod" | "min" | "max" | "ptp" | "any" | "all" | "argmin" | "argmax" => Fate::Agrees,
            // A copy in the receiver's layout.
            "astype" => self.element_wise(fate),
            // Views (`reshape`, `T`), or what the method's result holds of the receiver.
            _ => fate,
        }
    }

    fn attribute(&self, name: &str, fate: Fate) -> Fate {
        match name {
            "shape" | "size" | "ndim" | "dtype" => Fate::Agrees,
            _ => fate,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::math::blas::{with_dot_order, DotOrder};
    use crate::{Bindings, Filter};

    /// The refusal's message where `body` (returned from `f(x)`, `m` the window as 5x5) is
    /// refused, `None` where it compiles.
    fn refusal(lines: &str) -> Option<String> {
        let src = format!("def f(x):\n    m = x.reshape(5, 5)\n{lines}");
        with_dot_order(DotOrder::SkylakeX, || {
            Filter::compile(&src, &Bindings::new())
        })
        .err()
        .map(|e| e.to_string())
    }

    #[test]
    fn strided_views_that_reach_a_dot_product_are_refused() {
        for lines in [
            "    return np.dot(x[::2], x[:13])",
            "    return x[::2] @ x[:13]",
            "    return np.dot(m[:, 1], m[:, 2])",
            "    return np.dot(m.T[0], x[:5])",
            "    return np.dot((m.T * 2.0)[0], x[:5])",
            "    return x[::-1] @ x",
            "    return np.flip(x) @ x",
            "    return x[20:2:-2] @ x[:9]",
            // Through names, sub-views, view-keeping functions and helpers.
            "    v = x[::2]\n    w = v[1:]\n    return np.dot(w, x[:12])",
            "    v = np.reshape(x[::2], (13,))\n    return np.dot(v, v)",
            "    c = m[1:, 0]\n    return c @ c",
            "    return g(x[::2])\ndef g(a):\n    return np.dot(a, a)",
            // Backwards slices of backwards views step forwards.
            "    return np.dot(x[::-1][::-2], x[:13])",
            "    return np.dot(np.flip(x)[::-2], x[:13])",
            "    return np.dot(np.flip(x[::-2]), x[:13])",
            "    r = x[::-1]\n    s = r[::-2]\n    return np.dot(s, x[:13])",
            "    return np.dot(m[::-1, 0][::-1], x[:5])",
            "    return np.dot(m[::-1][::-1, 0], x[:5])",
            // A one-column block reshaped is a view stepping by rows; np.asarray a view.
            "    return np.dot(m[:, 2:3].reshape(5), x[:5])",
            "    return np.dot(np.asarray(x[::2]), x[:13])",
            "    return np.asarray(x[::-1]) @ x",
            // Blocks: rows stepping forwards past one column, or one backwards column.
            "    return np.dot(m[::-1, ::2][0], x[:3])",
            "    return np.dot(m[:, 2:1:-1].reshape(5), x[:5])",
            "    return np.dot(m[::2, 2:1:-1].reshape(3), x[:3])",
        ] {
            let e = refusal(lines).unwrap_or_else(|| panic!("compiled: {lines}"));
            assert!(e.contains("strided"), "{lines}: {e}");
            assert!(e.contains(".copy()"), "{lines}: {e}");
        }
    }

    #[test]
    fn contiguous_operands_and_copies_compile() {
        for lines in [
            "    return np.dot(x[::2].copy(), x[:13])",
            "    return np.dot(x[::2] * 2.0, x[:13])",
            "    return np.dot(x[::-1], x) + np.dot(x[::-1][1:], x[:24])",
            "    return np.dot(np.flip(x), x)",
            "    return np.dot(m[1], m[2]) + np.dot(m[1, :], x[:5])",
            "    return np.dot(m.T.copy()[0], x[:5]) + np.dot(np.ravel(m.T)[:5], x[:5])",
            "    return np.dot(x[1:], x[:24]) + x.T @ x",
            "    return np.dot(np.array(x[::2]), x[:13]) + np.dot(m[1:4, :][2], x[:5])",
            "    return np.dot(m[:, 1:4][2], x[:3]) + np.dot(m[::-1, 1:4][0], x[:3])",
            "    return np.linalg.norm(x[::2]) + np.linalg.norm(x[::-1])",
            "    return np.dot(x, x) + np.sum(x[::2]) + x[1::3].max()",
            // No product at all: a strided view may go anywhere.
            "    return sum(v for v in x[::2]) + m[:, 1].sum()",
        ] {
            assert_eq!(refusal(lines), None, "{lines}");
        }
    }
}
