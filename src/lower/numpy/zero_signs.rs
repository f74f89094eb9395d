//! Guards for NumPy's choices between equal zeros ([`crate::ir::zero_signs`] says why ndjit cannot
//! reproduce them). Where the result of `np.min`, `np.max`, `np.nanmin`, `np.nanmax`, `np.ptp`,
//! `np.percentile` or `np.quantile` is a zero and the values hold both `0.0` and `-0.0`, and
//! wherever `np.sort` sorts both, the filter raises `ValueError`, as `np.argsort` does for ties;
//! so does `np.fmin`/`np.fmax` of arrays wherever two zeros of opposite signs meet.
//! Otherwise the result is NumPy's, bit for bit: with zeros of one sign there is nothing to choose.

use super::super::expr::{bin, cmp};
use super::super::value::ArrayVal;
use super::super::{not, Translator};
use crate::error::{Exception, Result, Span};
use crate::ir::zero_signs::zero_of_sign;
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty};

/// What a guarded function gives that could show NumPy's choice of zero.
#[derive(Clone, Copy)]
pub(in crate::lower) enum Shows<'a> {
    /// Its result, when that is a zero.
    Result(&'a Expr),
    /// The sorted values themselves.
    Sorted,
}

/// Emits the guard of `name`'s `values` (f64): a check that they do not hold zeros of both
/// signs, run where `shows` could show NumPy's choice. For a result, the guard is a branch
/// taken when the result is a zero, so that other windows pay one comparison: run on every
/// window instead, its two reductions made a 5×5 `np.min(x) + np.mean(x)` on 1024² float64 take
/// 34 ms on the CPU's general engine instead of 14 (and the GPU's 5×5 minimum 1.2 ms on 8192²
/// float32 instead of 0.55 with the branch, 0.27 without a guard).
pub(in crate::lower) fn guard(
    t: &mut Translator,
    values: &ArrayVal,
    shows: Shows,
    name: &str,
    span: Span,
) -> Result<()> {
    debug_assert_eq!(values.ty, Ty::F64);
    if t.sign_blind_calls.contains(&span) {
        return Ok(()); // no use tells the zeros apart (`zero_sign_uses.rs`)
    }
    let (_, body) = t.nested(|t| {
        let seen = |t: &mut Translator, negative| {
            let probe = ArrayVal {
                elem: zero_of_sign(values.elem.clone(), negative),
                ty: Ty::Bool,
                ..values.clone()
            };
            t.reduce(ReduceOp::Any, &probe, span, None)
        };
        let both = bin(BinOp::And, seen(t, true)?, seen(t, false)?);
        let message = match shows {
            Shows::Result(_) => format!(
                "{name} of values holding both 0.0 and -0.0, whose result is a zero: which zero \
                 NumPy returns depends on its SIMD code and the CPU, which ndjit cannot know (add \
                 0.0 to the values, as in {name}(x + 0.0), to make every zero 0.0)"
            ),
            Shows::Sorted => format!(
                "{name} of values holding both 0.0 and -0.0: the signs NumPy gives the sorted \
                 zeros depend on its SIMD code and the CPU, which ndjit cannot know (sorted(x) \
                 keeps the zeros in their order; sorting `x + 0.0` makes every zero 0.0)"
            ),
        };
        t.check_plain(not(both), Exception::ValueError, &message, span);
        Ok(())
    })?;
    match shows {
        Shows::Result(r) => t.emit(Stmt::If(
            cmp(CmpOp::Eq, r.clone(), Expr::F64(0.0)),
            body,
            vec![],
        )),
        Shows::Sorted => body.into_iter().for_each(|s| t.emit(s)),
    }
    Ok(())
}

/// The guard of `name` (`np.fmin`/`np.fmax`) of arrays: its element `i` (of `result`'s length
/// and index) is the fmin/fmax of `x` and `y`, and where those are zeros of opposite signs,
/// NumPy keeps the first in its scalar tail and the second in its vector lanes.
pub(in crate::lower) fn guard_pairs(
    t: &mut Translator,
    result: &ArrayVal,
    (x, y): (Expr, Expr),
    name: &str,
    span: Span,
) -> Result<()> {
    let opposite = bin(
        BinOp::Or,
        bin(
            BinOp::And,
            zero_of_sign(x.clone(), true),
            zero_of_sign(y.clone(), false),
        ),
        bin(BinOp::And, zero_of_sign(x, false), zero_of_sign(y, true)),
    );
    let probe = ArrayVal {
        elem: opposite,
        ty: Ty::Bool,
        ..result.clone()
    };
    let met = t.reduce(ReduceOp::Any, &probe, span, None)?;
    let message = format!(
        "{name} of arrays holding both 0.0 and -0.0 at one element: which of the two NumPy keeps \
         depends on its SIMD code and the CPU, which ndjit cannot know (add 0.0 to both, as in \
         {name}(x + 0.0, y + 0.0), to make every zero 0.0)"
    );
    t.check_plain(not(met), Exception::ValueError, &message, span);
    Ok(())
}
