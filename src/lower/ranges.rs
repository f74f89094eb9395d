//! `range(start, stop, step)` as a counted loop: its arguments, its number of iterations, and
//! the counter's test and next value.
//!
//! Python's counter is an unbounded int; the loop's is an i64. `counter + step` past the i64
//! range would wrap and go on counting where Python's range has ended (its next value is past
//! `stop`), so where the stop's value does not rule that out the next value is `stop` itself
//! once the sum would overflow, which ends the loop as Python's does.

use super::expr::{bin, cmp, convert};
use super::{not, Translator, Value};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{eval::Val, fold::const_expr, BinOp, CmpOp, Expr, Ty};
use crate::syntax::ast;

impl Translator<'_> {
    /// `range(stop)`, `range(start, stop)` or `range(start, stop, step)`: start, stop and step,
    /// a computed step checked non-zero.
    pub(super) fn range_args(&mut self, iter: &ast::Expr) -> Result<Option<(Expr, Expr, Expr)>> {
        let Some((args, keywords)) = self.builtin_call(iter, "range") else {
            return Ok(None);
        };
        if !keywords.is_empty() || args.is_empty() || args.len() > 3 {
            return Err(self.err(
                ErrorKind::Arity,
                iter.span,
                "range() takes 1 to 3 positional arguments",
            ));
        }
        let mut ints = Vec::new();
        for a in args {
            let v = self.expr(a)?;
            let (e, ty) = self.scalar(v, a.span, "a range() argument")?;
            if ty == Ty::F64 {
                return Err(self
                    .err(
                        ErrorKind::Type,
                        a.span,
                        "range() arguments must be integers, not float",
                    )
                    .hint(self.int_hint("wrap it in int(...)")));
            }
            // A NumPy bool has no `__index__` (TypeError); Python's bool is an int.
            let e = self.int(Value::Scalar(e, ty), a.span, "a range() argument")?;
            ints.push(convert(e, ty, Ty::I64));
        }
        let step = if args.len() == 3 {
            match crate::ir::fold::const_expr(&ints[2]) {
                Some(crate::ir::eval::Val::I(0)) => {
                    return Err(self.err(
                        ErrorKind::Type,
                        args[2].span,
                        "range() arg 3 must not be zero",
                    ))
                }
                Some(crate::ir::eval::Val::I(s)) => Expr::I64(s),
                _ => {
                    // Python checks the step when `range()` is called, before the loop.
                    let step = self.stable(ints[2].clone(), Ty::I64);
                    self.check_plain(
                        cmp(CmpOp::Ne, step.clone(), Expr::I64(0)),
                        Exception::ValueError,
                        "range() arg 3 must not be zero",
                        args[2].span,
                    );
                    step
                }
            }
        } else {
            Expr::I64(1)
        };
        Ok(Some(match ints.len() {
            1 => (Expr::I64(0), ints.pop().unwrap(), Expr::I64(1)),
            _ => {
                let b = ints.remove(1);
                (ints.remove(0), b, step)
            }
        }))
    }

    /// The number of iterations of `range(start, stop, step)` (`step` a non-zero constant), with
    /// a MemoryError where the difference overflows (no storage could hold that many).
    pub(super) fn range_trips(&mut self, start: &Expr, stop: &Expr, step: i64, span: Span) -> Expr {
        let (lo, hi) = if step > 0 {
            (start.clone(), stop.clone())
        } else {
            (stop.clone(), start.clone())
        };
        let diff = self.stable(bin(BinOp::Sub, hi.clone(), lo.clone()), Ty::I64);
        let some = self.stable(cmp(CmpOp::Gt, hi, lo), Ty::Bool);
        self.check(
            bin(
                BinOp::Or,
                not(some.clone()),
                cmp(CmpOp::Gt, diff.clone(), Expr::I64(0)),
            ),
            Exception::MemoryError,
            "a comprehension over a range of more than 2**63 items",
            span,
            Expr::I64(0),
            Expr::I64(0),
        );
        let per = step.unsigned_abs() as i64;
        let n = bin(
            BinOp::Add,
            bin(
                BinOp::FloorDiv,
                bin(BinOp::Sub, diff, Expr::I64(1)),
                Expr::I64(per.max(1)),
            ),
            Expr::I64(1),
        );
        self.stable(
            Expr::Select(some.boxed(), n.boxed(), Expr::I64(0).boxed()),
            Ty::I64,
        )
    }

    /// Whether the loop over `range(.., stop, step)` goes on with `counter`.
    pub(super) fn range_continues(&mut self, counter: &Expr, stop: &Expr, step: &Expr) -> Expr {
        let up = cmp(CmpOp::Lt, counter.clone(), stop.clone());
        let down = cmp(CmpOp::Gt, counter.clone(), stop.clone());
        match constant(step) {
            Some(s) if s > 0 => up,
            Some(_) => down,
            None => select(cmp(CmpOp::Gt, step.clone(), Expr::I64(0)), up, down),
        }
    }

    /// The counter's next value: `counter + step`, or `stop` where that sum would leave the
    /// i64 range (Python's next value is then past `stop`: the loop ends).
    pub(super) fn range_next(&mut self, counter: &Expr, stop: &Expr, step: &Expr) -> Expr {
        let sum = bin(BinOp::Add, counter.clone(), step.clone());
        // `counter + step` overflows exactly where `counter` is past `MAX - step` (step > 0) or
        // below `MIN - step` (step < 0); neither bound overflows for its own sign.
        let past_max = cmp(
            CmpOp::Gt,
            counter.clone(),
            bin(BinOp::Sub, Expr::I64(i64::MAX), step.clone()),
        );
        let past_min = cmp(
            CmpOp::Lt,
            counter.clone(),
            bin(BinOp::Sub, Expr::I64(i64::MIN), step.clone()),
        );
        let overflows = match constant(step) {
            // The counter stays below `stop`, which leaves room for one more step.
            Some(s) if s > 0 && bounds(stop).is_some_and(|(_, hi)| hi <= i64::MAX - s) => {
                return sum
            }
            Some(s) if s < 0 && bounds(stop).is_some_and(|(lo, _)| lo >= i64::MIN - s) => {
                return sum
            }
            Some(s) if s > 0 => past_max,
            Some(_) => past_min,
            None => select(
                cmp(CmpOp::Gt, step.clone(), Expr::I64(0)),
                past_max,
                past_min,
            ),
        };
        select(overflows, stop.clone(), sum)
    }
}

fn select(c: Expr, a: Expr, b: Expr) -> Expr {
    Expr::Select(c.boxed(), a.boxed(), b.boxed())
}

fn constant(e: &Expr) -> Option<i64> {
    match const_expr(e) {
        Some(Val::I(v)) => Some(v),
        _ => None,
    }
}

/// Bounds of an int expression known without running it: a constant, or an array's length
/// (a count of 8-byte elements in memory, below 2**60).
fn bounds(e: &Expr) -> Option<(i64, i64)> {
    match e {
        Expr::Len(_) => Some((0, 1 << 60)),
        _ => constant(e).map(|v| (v, v)),
    }
}
