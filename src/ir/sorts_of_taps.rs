//! Which sorts sort the taps themselves: [`Pass::SortsOfTaps`](super::Pass::SortsOfTaps).
//!
//! A quantile, `np.sort(x)[k]` and a median past the networks lower to a [`Stmt::Fill`] of a
//! scratch array with `x[i]` for `i in 0..len`, then [`ArrayOp::Sort`] of that array. Where
//! nothing can have changed the array in between, the sort orders the first `len` taps, and a
//! backend may sort them in the image's own type instead of as doubles (the GPU does, for
//! float32 images). This pass proves that fact on the IR and marks the sort
//! (`ArrayOp::Sort { of_taps: true }`), so no backend recognises statement shapes of its own.
//! The interpreter checks the mark in debug builds.

use super::{Arr, ArrayOp, Expr, Func, Stmt, BUFFER};

/// Marks every sort of `func` that [`sorts_of_taps`] proves sorts the taps.
pub fn mark(func: &mut Func) {
    mark_block(&mut func.body);
}

fn mark_block(stmts: &mut [Stmt]) {
    let of_taps = sorts_of_taps(stmts);
    for (s, of_taps) in stmts.iter_mut().zip(of_taps) {
        if let Stmt::ArrayOp(ArrayOp::Sort { of_taps: mark }, _) = s {
            *mark |= of_taps;
        }
        super::stmt_blocks_mut(s, mark_block);
    }
}

/// Per statement of a block: whether it sorts an array that holds the first taps in order. It
/// holds where the array was filled with the taps and only straight-line statements that write
/// no array came between (assignments, checks and reductions, whose expressions are pure):
/// nothing can have changed it. A second sort of the same array is a plain one (the array is
/// sorted by then, no longer the taps in order).
pub fn sorts_of_taps(stmts: &[Stmt]) -> Vec<bool> {
    let mut filled: Option<Arr> = None;
    stmts
        .iter()
        .map(|s| {
            let sorts = matches!(s, Stmt::ArrayOp(ArrayOp::Sort { .. }, a) if Some(*a) == filled);
            filled = match s {
                Stmt::Fill { dst, .. } if fills_with_taps(s) => Some(*dst),
                Stmt::Assign(..) | Stmt::Check { .. } | Stmt::Reduce { .. } => filled,
                _ => None,
            };
            sorts
        })
        .collect()
}

/// Whether `s` fills an array with the first taps in order: `a = [x[i] for i in range(n)]`.
fn fills_with_taps(s: &Stmt) -> bool {
    matches!(s, Stmt::Fill { index, elem: Expr::Load(BUFFER, i), keep: None, .. }
        if **i == Expr::Var(*index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Var;
    use crate::{Bindings, Filter};

    fn fill(dst: u32, elem: Expr) -> Stmt {
        Stmt::Fill {
            dst: Arr(dst),
            len: Expr::I64(9),
            index: Var(0),
            elem,
            keep: None,
        }
    }

    fn tap(i: Expr) -> Expr {
        Expr::Load(BUFFER, Box::new(i))
    }

    #[test]
    fn only_sorts_of_arrays_still_holding_the_taps_count() {
        let taps = || fill(1, tap(Expr::Var(Var(0))));
        let sort = |a| Stmt::ArrayOp(ArrayOp::SORT, Arr(a));
        let assign = Stmt::Assign(Var(1), Expr::F64(1.0));
        let store = Stmt::Store(Arr(1), Expr::I64(0), Expr::F64(-1000.0));
        let branch = Stmt::If(Expr::Bool(true), vec![], vec![]);
        let shifted = fill(1, tap(Expr::Var(Var(1))));
        let kept = Stmt::Fill {
            dst: Arr(1),
            len: Expr::I64(9),
            index: Var(0),
            elem: tap(Expr::Var(Var(0))),
            keep: Some(Expr::Bool(true)),
        };
        let cases: Vec<(Vec<Stmt>, Vec<bool>)> = vec![
            (vec![taps(), sort(1)], vec![false, true]),
            (
                vec![taps(), assign.clone(), sort(1)],
                vec![false, false, true],
            ),
            // Sorted once: a second sort of the sorted array is a plain one.
            (vec![taps(), sort(1), sort(1)], vec![false, true, false]),
            (vec![taps(), store, sort(1)], vec![false, false, false]),
            (vec![taps(), branch, sort(1)], vec![false, false, false]),
            (vec![taps(), sort(2)], vec![false, false]),
            (vec![shifted, sort(1)], vec![false, false]),
            (vec![kept, sort(1)], vec![false, false]),
            (
                vec![taps(), taps(), assign, sort(1)],
                vec![false, false, false, true],
            ),
        ];
        for (stmts, want) in cases {
            assert_eq!(sorts_of_taps(&stmts), want, "{stmts:?}");
        }
    }

    fn marked(func: &Func) -> Vec<bool> {
        let mut marks = Vec::new();
        fn walk(stmts: &[Stmt], marks: &mut Vec<bool>) {
            for s in stmts {
                if let Stmt::ArrayOp(ArrayOp::Sort { of_taps }, _) = s {
                    marks.push(*of_taps);
                }
                crate::ir::stmt_blocks(s, |b| walk(b, marks));
            }
        }
        walk(&func.body, &mut marks);
        marks
    }

    /// The pipeline marks the sorts of quantiles and `np.sort(x)[k]` over the taps, nested ones
    /// too, and not a sort of anything else; results are unchanged (the interpreter checks
    /// every mark in debug builds).
    #[test]
    fn the_pipeline_marks_sorts_of_the_taps_only() {
        let cases: &[(&str, &[bool])] = &[
            ("np.percentile(x, 30)", &[true]),
            ("np.sort(x)[2]", &[true]),
            ("def f(x):\n    if x[0] > 0.5:\n        return np.quantile(x, 0.25)\n    return 0.0", &[true]),
            ("np.percentile(x * 2.0, 30)", &[false]),
            ("np.percentile(x[1:], 30)", &[false]),
        ];
        for (src, want) in cases {
            let f = Filter::builder(src).filter_size(9).compile().unwrap();
            let ir = f.specialized_ir().unwrap();
            assert_eq!(marked(ir), *want, "{src}");
            assert_eq!(ir.to_string().contains("(of the taps)"), want[0], "{ir}");
            let general = Filter::compile(src, &Bindings::new()).unwrap();
            for seed in 0..8u64 {
                let v: Vec<f64> = (0..9)
                    .map(|k| ((k * 7 + seed * 3) % 11) as f64 - 4.0)
                    .collect();
                let want = general.interpret(&v).unwrap();
                assert_eq!(f.call(&v).unwrap().to_bits(), want.to_bits(), "{src}");
                assert_eq!(f.interpret(&v).unwrap().to_bits(), want.to_bits(), "{src}");
            }
        }
    }
}
