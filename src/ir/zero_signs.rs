//! The predicate that tells a zero's sign, shared by the lowering, which guards NumPy's choices
//! between equal zeros with it ([`crate::lower`]'s `numpy::zero_signs`), and by the rank
//! recognizer, which reads those guards back ([`crate::driver::rank_stat`]).
//!
//! NumPy's `min`, `max`, `nanmin`, `nanmax`, `ptp`, `sort`, `percentile` and `quantile` of floats
//! choose between `-0.0` and `0.0` (equal values with different bits) by their SIMD code: which
//! lane each zero sits in, and how the lanes are combined at the end. On this project's AVX-512
//! machine (NumPy 2.4.6) `np.min` of 24 `0.0` and one `-0.0` returns `-0.0` only when the `-0.0`
//! is the 19th value of 25, and `np.sort` of them returns eleven `-0.0`. ndjit cannot know what a
//! CPU and NumPy build will do, so where the result could show the choice it raises.

use super::{BinOp, CmpOp, Expr, UnOp};

/// Whether `e` is a zero of the sign asked for: `e == 0.0 && signbit(e)` (negative) or
/// `e == 0.0 && not signbit(e)`. A bit test, not `copysign` or `1.0 / e`: the GPU's kernels
/// treat a math call as costly and compute one output a thread for it (a guarded 5×5 float32
/// minimum on 8192², H200: 0.87 ms with `copysign`, 0.58 with the division, 0.55 with the bit
/// test, 0.27 unguarded).
pub fn zero_of_sign(e: Expr, negative: bool) -> Expr {
    let sign = Expr::Unary(UnOp::SignBit, e.clone().boxed());
    let sign = match negative {
        true => sign,
        false => Expr::Unary(UnOp::Not, sign.boxed()),
    };
    Expr::Binary(
        BinOp::And,
        Expr::Cmp(CmpOp::Eq, e.boxed(), Expr::F64(0.0).boxed()).boxed(),
        sign.boxed(),
    )
}

/// The operand and the sign (`true`: negative) of a [`zero_of_sign`] predicate, in the form
/// built or with the `Eq`'s operands swapped, as folding may leave it.
pub fn as_zero_of_sign(p: &Expr) -> Option<(&Expr, bool)> {
    let Expr::Binary(BinOp::And, zero, sign) = p else {
        return None;
    };
    let (e, negative) = match &**sign {
        Expr::Unary(UnOp::SignBit, e) => (&**e, true),
        Expr::Unary(UnOp::Not, s) => match &**s {
            Expr::Unary(UnOp::SignBit, e) => (&**e, false),
            _ => return None,
        },
        _ => return None,
    };
    let is_zero = match &**zero {
        Expr::Cmp(CmpOp::Eq, a, b) => {
            (**a == *e && **b == Expr::F64(0.0)) || (**b == *e && **a == Expr::F64(0.0))
        }
        _ => false,
    };
    is_zero.then_some((e, negative))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::eval::{unary, Val};
    use crate::ir::Var;

    /// What is built reads back (its `Eq` either way round), and nothing else does.
    #[test]
    fn the_predicate_reads_back() {
        let x = Expr::Var(Var(3));
        for negative in [true, false] {
            let p = zero_of_sign(x.clone(), negative);
            assert_eq!(as_zero_of_sign(&p), Some((&x, negative)));
            let Expr::Binary(op, zero, sign) = p.clone() else {
                unreachable!()
            };
            assert_eq!(
                as_zero_of_sign(&Expr::Binary(BinOp::Or, zero.clone(), sign.clone())),
                None
            );
            assert_eq!(
                as_zero_of_sign(&Expr::Binary(op, sign.clone(), zero.clone())),
                None
            );
            let Expr::Cmp(eq, a, b) = *zero else {
                unreachable!()
            };
            let swapped = Expr::Binary(BinOp::And, Expr::Cmp(eq, b, a).boxed(), sign);
            assert_eq!(as_zero_of_sign(&swapped), Some((&x, negative)));
        }
        assert_eq!(as_zero_of_sign(&Expr::Bool(true)), None);
    }

    /// The sign bit, as every backend's definition ([`unary`]) gives it. (Each backend's code for
    /// it is checked against NumPy: `python/tests/test_zero_signs.py`, the GPU's in
    /// `test_cuda.py`.)
    #[test]
    fn the_sign_bit_tells_the_zeros_apart() {
        for (v, set) in [
            (0.0, false),
            (-0.0, true),
            (1.5, false),
            (-1.5, true),
            (f64::INFINITY, false),
            (f64::NEG_INFINITY, true),
            (f64::NAN, false),
            (-f64::NAN, true),
        ] {
            assert_eq!(unary(UnOp::SignBit, Val::F(v)), Val::B(set), "{v}");
        }
    }
}
