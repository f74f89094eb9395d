//! `round(x, ndigits)` on a Python float: CPython's correctly rounded decimal rounding.
//!
//! CPython rounds the *exact* binary value of `x` to `ndigits` decimals, half to even, and returns
//! the double nearest that decimal (`round(2.675, 2)` is 2.67: 2.675 is really 2.67499999...).
//! NumPy's `np.round` (and `round()` of an `np.float64`) computes `rint(x * 10**n) / 10**n`
//! instead, whose first product rounds (2.68). The exact rounding here needs no runtime routine:
//! for `0 <= n <= 22`, `10**n` is a double, `x * 10**n` is computed exactly as a sum `hi + lo`
//! (Dekker's product, from plain IEEE operations), its nearest integer `R` follows from `hi`, `lo`
//! and the tie cases, and `R / 10**n` is the correctly rounded quotient of two exact values, which
//! is exactly CPython's result. Negative `n` divides first and recovers the exact remainder the
//! same way. Where `|x * 10**n| >= 2**53`, the decimal is within half an ulp of `x`, so the
//! result is `x` itself.

use super::expr::{bin, cmp, un};
use super::{not, Translator};
use crate::ir::{BinOp, CmpOp, Expr, Ty, UnOp};

/// The largest `|ndigits|` with an exact power of ten.
pub(crate) const MAX_DIGITS: i64 = 22;

const TWO_53: f64 = 9007199254740992.0;

/// Veltkamp's split of a double into two halves of 26 bits whose products are exact.
const SPLIT: f64 = 134217729.0; // 2**27 + 1

impl Translator<'_> {
    /// CPython's `round(x, n)` for a Python float `x` and a constant `|n| <= MAX_DIGITS`.
    pub(crate) fn python_round(&mut self, x: Expr, n: i64) -> Expr {
        debug_assert!(n.abs() <= MAX_DIGITS);
        let x = self.stable(x, Ty::F64);
        let p = 10f64.powi(n.abs() as i32);
        // `y + e` is exactly `x * 10**n` (n >= 0) or `x / 10**n` (n < 0) with `e`'s sign.
        let (y, e) = if n >= 0 {
            let (hi, lo) = self.two_product(&x, p);
            (hi, lo)
        } else {
            let q = self.stable(bin(BinOp::Div, x.clone(), Expr::F64(p)), Ty::F64);
            let (ph, pl) = self.two_product(&q, p);
            // x - q*p exactly (Sterbenz, then a representable difference), divided by p in sign
            // and in comparisons with p / 2 below.
            let rem = bin(BinOp::Sub, bin(BinOp::Sub, x.clone(), ph), pl);
            (q, self.stable(rem, Ty::F64))
        };
        // `e` relative to a half unit: for n >= 0 it is in units of 1, for n < 0 in units of p.
        let half = if n >= 0 { 0.5 } else { p / 2.0 };
        let r = self.stable(un(UnOp::RoundEven, y.clone()), Ty::F64);
        let d = self.stable(bin(BinOp::Sub, y.clone(), r.clone()), Ty::F64);
        let f = |v: f64| Expr::F64(v);
        let and = |a: Expr, b: Expr| bin(BinOp::And, a, b);
        let or = |a: Expr, b: Expr| bin(BinOp::Or, a, b);
        let eq = |a: &Expr, b: Expr| cmp(CmpOp::Eq, a.clone(), b);
        let half_r = bin(BinOp::Mul, r.clone(), f(0.5));
        let odd = cmp(CmpOp::Ne, un(UnOp::Floor, half_r.clone()), half_r);
        // `y` is a tie that `e` breaks, or `y` is whole and `e` is exactly the tie.
        let up = or(
            and(eq(&d, f(0.5)), cmp(CmpOp::Gt, e.clone(), f(0.0))),
            and(and(eq(&d, f(0.0)), eq(&e, f(half))), odd.clone()),
        );
        let down = or(
            and(eq(&d, f(-0.5)), cmp(CmpOp::Lt, e.clone(), f(0.0))),
            and(and(eq(&d, f(0.0)), eq(&e, f(-half))), odd),
        );
        let whole = Expr::Select(
            up.boxed(),
            bin(BinOp::Add, r.clone(), f(1.0)).boxed(),
            Expr::Select(
                down.boxed(),
                bin(BinOp::Sub, r.clone(), f(1.0)).boxed(),
                r.boxed(),
            )
            .boxed(),
        );
        let scaled = if n >= 0 {
            bin(BinOp::Div, whole, f(p))
        } else {
            bin(BinOp::Mul, whole, f(p))
        };
        let keep = or(
            not(un(UnOp::IsFinite, x.clone())),
            cmp(CmpOp::Ge, un(UnOp::Abs, y), f(TWO_53)),
        );
        Expr::Select(keep.boxed(), x.boxed(), scaled.boxed())
    }

    /// Dekker's exact product `a * p = hi + lo` for a constant `p` (overflow aside, where the
    /// caller keeps `x`).
    fn two_product(&mut self, a: &Expr, p: f64) -> (Expr, Expr) {
        let (ph, pl) = split(p);
        let c = self.stable(bin(BinOp::Mul, Expr::F64(SPLIT), a.clone()), Ty::F64);
        let ah = self.stable(
            bin(BinOp::Sub, c.clone(), bin(BinOp::Sub, c, a.clone())),
            Ty::F64,
        );
        let al = self.stable(bin(BinOp::Sub, a.clone(), ah.clone()), Ty::F64);
        let hi = self.stable(bin(BinOp::Mul, a.clone(), Expr::F64(p)), Ty::F64);
        let m = |x: &Expr, y: f64| bin(BinOp::Mul, x.clone(), Expr::F64(y));
        // ((ah*ph - hi) + ah*pl + al*ph) + al*pl, in this order: each step is exact.
        let mut lo = bin(BinOp::Sub, m(&ah, ph), hi.clone());
        for t in [m(&ah, pl), m(&al, ph), m(&al, pl)] {
            lo = bin(BinOp::Add, lo, t);
        }
        (hi, self.stable(lo, Ty::F64))
    }
}

/// Veltkamp's split of a constant.
fn split(p: f64) -> (f64, f64) {
    let c = SPLIT * p;
    let hi = c - (c - p);
    (hi, p - hi)
}
