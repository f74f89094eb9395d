//! Integer arithmetic: Python's unbounded ints and NumPy's fixed-width ones.
//!
//! A Python int never wraps. ndjit's ints are 64-bit, so on Python ints (see `provenance.rs`)
//! every operation that can leave the 64-bit range gets a [`crate::ir::Stmt::Check`] before it:
//! within 64 bits the result is Python's exactly, past them the call fails with `OverflowError`
//! at the operator's location, never with a wrapped number. The checks are plain pure
//! expressions (sign tests on the wrapped result, and [`BinOp::MulHi`] for products), so every
//! backend runs them as it runs any other expression.
//!
//! NumPy ints (`np.int64` from `astype(int)`, NumPy reductions) keep NumPy's rules: wrapping
//! arithmetic, and shifts by counts outside `0..64` giving 0 (or the sign for `>>`).

use super::expr::{bin, cmp, un};
use super::provenance::Prov;
use super::{not, Translator};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, Ty, UnOp};

/// The message of a Python int result that needs more than 64 bits.
pub(crate) const TOO_BIG: &str =
    "integer result exceeds 64 bits (Python's ints are unbounded, ndjit's are 64-bit)";

impl Translator<'_> {
    /// `x op y` on two ints, where `python` says whether both are Python ints: NumPy's wrapping
    /// (and shift) semantics for NumPy ints, Python's exact ones, checked, otherwise.
    pub(crate) fn int_binary(
        &mut self,
        op: BinOp,
        x: Expr,
        y: Expr,
        python: Prov,
        span: Span,
    ) -> Expr {
        if python == Prov::Np {
            let r = match op {
                BinOp::Shl | BinOp::Shr => shift(op, x, y),
                _ => bin(op, x, y),
            };
            // A NumPy int, also where `shift` gives its literal 0 (a Python 0 otherwise).
            return self.with_prov(r, Ty::I64, Prov::Np);
        }
        let (x, y) = (self.stable(x, Ty::I64), self.stable(y, Ty::I64));
        let flag = python.flag();
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            let negative = cmp(CmpOp::Lt, y.clone(), Expr::I64(0));
            self.python_check(
                &flag,
                negative,
                Exception::ValueError,
                "negative shift count",
                span,
            );
        }
        let r = self.stable(
            match op {
                BinOp::Shl | BinOp::Shr => shift(op, x.clone(), y.clone()),
                _ => bin(op, x.clone(), y.clone()),
            },
            Ty::I64,
        );
        let overflow = match (op, &y) {
            // A constant step (`n += 1`): one compare against the bound it could cross.
            (BinOp::Add | BinOp::Sub, Expr::I64(c)) => {
                let c = if op == BinOp::Add {
                    Some(*c)
                } else {
                    c.checked_neg()
                };
                match c {
                    Some(c) if c >= 0 => cmp(CmpOp::Gt, x.clone(), Expr::I64(i64::MAX - c)),
                    Some(c) => cmp(CmpOp::Lt, x.clone(), Expr::I64(i64::MIN - c)),
                    // `x - MIN` overflows exactly when x >= 0.
                    None => cmp(CmpOp::Ge, x.clone(), Expr::I64(0)),
                }
            }
            _ => self.overflow_test(op, &x, &y, &r),
        };
        if overflow != Expr::Bool(false) {
            self.python_check(&flag, overflow, Exception::OverflowError, TOO_BIG, span);
        }
        self.with_prov(r, Ty::I64, python)
    }

    /// Whether `r`, the wrapped `x op y`, differs from the exact result.
    fn overflow_test(&self, op: BinOp, x: &Expr, y: &Expr, r: &Expr) -> Expr {
        let (x, y, r) = (x.clone(), y.clone(), r.clone());
        let negative = |e: Expr| cmp(CmpOp::Lt, e, Expr::I64(0));
        let xor = |a: &Expr, b: &Expr| bin(BinOp::Xor, a.clone(), b.clone());
        match op {
            // The wrapped sum has the sign of neither operand exactly when it overflowed.
            BinOp::Add => negative(bin(BinOp::And, xor(&x, &r), xor(&y, &r))),
            BinOp::Sub => negative(bin(BinOp::And, xor(&x, &y), xor(&x, &r))),
            BinOp::Mul => cmp(
                CmpOp::Ne,
                bin(BinOp::MulHi, x.clone(), y.clone()),
                bin(BinOp::Shr, r.clone(), Expr::I64(63)),
            ),
            BinOp::FloorDiv => is_min_by_minus_one(&x, &y),
            // Bits shifted out (or a count past the width with a non-zero value) are lost.
            BinOp::Shl => Expr::Select(
                cmp(CmpOp::Lt, y.clone(), Expr::I64(64)).boxed(),
                cmp(CmpOp::Ne, bin(BinOp::Shr, r.clone(), y.clone()), x.clone()).boxed(),
                cmp(CmpOp::Ne, x.clone(), Expr::I64(0)).boxed(),
            ),
            // `%` and `>>` stay in range; Python's `MIN % -1` is 0, which the IR gives.
            _ => Expr::Bool(false),
        }
    }

    /// `-x` or `abs(x)` on an int: only `-(2**63)` leaves the range.
    pub(crate) fn int_unary(&mut self, op: UnOp, x: Expr, span: Span) -> Expr {
        let python = self.prov(&x);
        if python == Prov::Np {
            return un(op, x);
        }
        let x = self.stable(x, Ty::I64);
        let min = cmp(CmpOp::Eq, x.clone(), Expr::I64(i64::MIN));
        self.python_check(&python.flag(), min, Exception::OverflowError, TOO_BIG, span);
        un(op, x)
    }

    /// `x ** k` for a constant `k >= 0` on Python ints: square and multiply, each step checked.
    /// Element-wise (an int array's power) the steps stay one expression per element, whose
    /// tree doubles with each squaring, so the exponent is bounded there.
    pub(crate) fn int_power(&mut self, x: Expr, k: u64, python: Prov, span: Span) -> Result<Expr> {
        if self.in_elementwise > 0 && k >= ELEMENTWISE_POWER_LIMIT {
            return Err(self
                .err(
                    ErrorKind::Limit,
                    span,
                    format!(
                        "an integer array to the power {k}: each element's power is expanded \
                         into its squarings, for exponents below {ELEMENTWISE_POWER_LIMIT}"
                    ),
                )
                .hint("raise floats instead (x.astype(float) ** k), or each element in a loop"));
        }
        let mut base = self.stable(x, Ty::I64);
        let mut acc: Option<Expr> = None;
        let mut k = k;
        while k > 0 {
            if k & 1 == 1 {
                acc = Some(match acc {
                    None => base.clone(),
                    Some(a) => self.int_binary(BinOp::Mul, a, base.clone(), python.clone(), span),
                });
            }
            k >>= 1;
            if k > 0 {
                let sq = self.int_binary(BinOp::Mul, base.clone(), base, python.clone(), span);
                base = self.stable(sq, Ty::I64);
            }
        }
        // `k == 0`: the literal 1 has the operands' kind (`np.argmax(x) ** 0` is a NumPy 1).
        let r = acc.unwrap_or(Expr::I64(1));
        Ok(self.with_prov(r, Ty::I64, python))
    }

    /// Fails with `exception` and `message` when `bad` holds and `python` (the flag "both
    /// operands are Python ints") is true.
    fn python_check(
        &mut self,
        python: &Expr,
        bad: Expr,
        exception: Exception,
        message: &str,
        span: Span,
    ) {
        let ok = match python {
            Expr::Bool(true) => not(bad),
            flag => bin(BinOp::Or, not(flag.clone()), not(bad)),
        };
        self.check_plain(ok, exception, message, span);
    }
}

/// The exponents from which an element-wise integer power is refused (its expression has
/// about 2^10 nodes per element there).
const ELEMENTWISE_POWER_LIMIT: u64 = 1 << 10;

/// NumPy's shifts: a count outside `0..64` shifts every bit out (`<<` gives 0, `>>` the sign).
/// The IR's own shifts mask the count, so the range is handled here.
pub(crate) fn shift(op: BinOp, x: Expr, n: Expr) -> Expr {
    let in_range = bin(
        BinOp::And,
        cmp(CmpOp::Ge, n.clone(), Expr::I64(0)),
        cmp(CmpOp::Lt, n.clone(), Expr::I64(64)),
    );
    let out = match op {
        BinOp::Shl => Expr::I64(0),
        _ => bin(BinOp::Shr, x.clone(), Expr::I64(63)),
    };
    Expr::Select(in_range.boxed(), bin(op, x, n).boxed(), out.boxed())
}

/// `x == -(2**63) and y == -1`: the one integer quotient outside the range.
fn is_min_by_minus_one(x: &Expr, y: &Expr) -> Expr {
    bin(
        BinOp::And,
        cmp(CmpOp::Eq, x.clone(), Expr::I64(i64::MIN)),
        cmp(CmpOp::Eq, y.clone(), Expr::I64(-1)),
    )
}
