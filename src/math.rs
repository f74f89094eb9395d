//! The math routines every backend calls.
//!
//! Each [`MathFn`] is one `extern "C"` function below. The Cranelift JIT imports these symbols and
//! the interpreter calls the very same functions, so the two agree bit for bit. The bodies come from
//! the `libm` crate (a Rust port of musl/fdlibm), not the platform C library: results are then the
//! same on every OS, and the GPU backend can implement the same published algorithms.

use std::ffi::c_void;

macro_rules! math_fns {
    ($( $variant:ident, $py:literal, $arity:literal, $sym:ident, |$($a:ident),*| $body:expr; )*) => {
        /// A math function of f64 arguments returning f64.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum MathFn { $($variant),* }

        $(
            #[doc = concat!("`", $py, "`, exported for compiled code.")]
            pub extern "C" fn $sym($($a: f64),*) -> f64 { $body }
        )*

        impl MathFn {
            pub const ALL: &'static [MathFn] = &[$(MathFn::$variant),*];
            /// The name used in IR text and error messages.
            pub fn name(self) -> &'static str { match self { $(MathFn::$variant => $py),* } }
            pub fn arity(self) -> usize { match self { $(MathFn::$variant => $arity),* } }
            /// The exported symbol the JIT links against.
            pub fn symbol(self) -> &'static str { match self { $(MathFn::$variant => stringify!($sym)),* } }
            /// The address of the routine.
            pub fn address(self) -> *const c_void {
                match self { $(MathFn::$variant => $sym as *const c_void),* }
            }
            /// Evaluates through the exported routine (what the interpreter does).
            pub fn eval(self, args: &[f64]) -> f64 {
                match self {
                    $(MathFn::$variant => math_fns!(@call $sym, args, $($a),*)),*
                }
            }
        }
    };
    (@call $sym:ident, $args:ident, $a:ident) => { $sym($args[0]) };
    (@call $sym:ident, $args:ident, $a:ident, $b:ident) => { $sym($args[0], $args[1]) };
}

math_fns! {
    Exp, "exp", 1, ndjit_exp, |x| libm::exp(x);
    Exp2, "exp2", 1, ndjit_exp2, |x| libm::exp2(x);
    Expm1, "expm1", 1, ndjit_expm1, |x| libm::expm1(x);
    Log, "log", 1, ndjit_log, |x| libm::log(x);
    Log2, "log2", 1, ndjit_log2, |x| libm::log2(x);
    Log10, "log10", 1, ndjit_log10, |x| libm::log10(x);
    Log1p, "log1p", 1, ndjit_log1p, |x| libm::log1p(x);
    Sin, "sin", 1, ndjit_sin, |x| libm::sin(x);
    Cos, "cos", 1, ndjit_cos, |x| libm::cos(x);
    Tan, "tan", 1, ndjit_tan, |x| libm::tan(x);
    Asin, "arcsin", 1, ndjit_asin, |x| libm::asin(x);
    Acos, "arccos", 1, ndjit_acos, |x| libm::acos(x);
    Atan, "arctan", 1, ndjit_atan, |x| libm::atan(x);
    Sinh, "sinh", 1, ndjit_sinh, |x| libm::sinh(x);
    Cosh, "cosh", 1, ndjit_cosh, |x| libm::cosh(x);
    Tanh, "tanh", 1, ndjit_tanh, |x| libm::tanh(x);
    Asinh, "arcsinh", 1, ndjit_asinh, |x| libm::asinh(x);
    Acosh, "arccosh", 1, ndjit_acosh, |x| libm::acosh(x);
    Atanh, "arctanh", 1, ndjit_atanh, |x| libm::atanh(x);
    Cbrt, "cbrt", 1, ndjit_cbrt, |x| libm::cbrt(x);
    Atan2, "arctan2", 2, ndjit_atan2, |y, x| libm::atan2(y, x);
    Hypot, "hypot", 2, ndjit_hypot, |x, y| libm::hypot(x, y);
    Pow, "power", 2, ndjit_pow, |x, y| libm::pow(x, y);
    Fmod, "fmod", 2, ndjit_fmod, |x, y| libm::fmod(x, y);
    CopySign, "copysign", 2, ndjit_copysign, |x, y| libm::copysign(x, y);
    FloorDiv, "floor_divide", 2, ndjit_floordiv, |a, b| floordiv(a, b);
    Remainder, "remainder", 2, ndjit_remainder, |a, b| remainder(a, b);
}

/// NumPy's `npy_divmod`: the quotient and remainder of Python's `//` and `%` on floats.
/// A zero divisor gives `a / b` and `fmod(a, 0)` (NaN), as NumPy does, with no exception.
fn divmod(a: f64, b: f64) -> (f64, f64) {
    let mut m = libm::fmod(a, b);
    if b == 0.0 {
        return (a / b, m);
    }
    let mut div = (a - m) / b;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
            div -= 1.0;
        }
    } else {
        m = libm::copysign(0.0, b);
    }
    let floordiv = if div != 0.0 {
        let mut f = libm::floor(div);
        if div - f > 0.5 {
            f += 1.0;
        }
        f
    } else {
        libm::copysign(0.0, a / b)
    };
    (floordiv, m)
}

/// `a // b` on float64 (NumPy `floor_divide`).
pub fn floordiv(a: f64, b: f64) -> f64 {
    divmod(a, b).0
}

/// `a % b` on float64 (NumPy `remainder`): the sign follows the divisor.
pub fn remainder(a: f64, b: f64) -> f64 {
    divmod(a, b).1
}

/// Python's floor division on i64. The divisor is non-zero (the IR checks it); `MIN // -1` wraps.
pub extern "C" fn ndjit_ifloordiv(a: i64, b: i64) -> i64 {
    let q = a.wrapping_div(b);
    if (a.wrapping_rem(b) != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// Python's modulo on i64: the sign follows the divisor. The divisor is non-zero.
pub extern "C" fn ndjit_imod(a: i64, b: i64) -> i64 {
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    }
}

/// NumPy `minimum` as the IR defines it: NaN if either is NaN, -0.0 below +0.0. This is also the
/// WebAssembly `fmin` rule that Cranelift's `fmin` instruction implements.
pub fn fmin(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        if a.is_sign_negative() {
            a
        } else {
            b
        }
    } else if a < b {
        a
    } else {
        b
    }
}

/// NumPy `maximum` as the IR defines it: NaN if either is NaN, +0.0 above -0.0.
pub fn fmax(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        if a.is_sign_negative() {
            b
        } else {
            a
        }
    } else if a > b {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_floor_division_and_modulo_signs() {
        assert_eq!(floordiv(7.0, 2.0), 3.0);
        assert_eq!(floordiv(-7.0, 2.0), -4.0);
        assert_eq!(remainder(-7.0, 2.0), 1.0);
        assert_eq!(remainder(7.0, -2.0), -1.0);
        assert!(remainder(1.0, 0.0).is_nan());
        assert_eq!(floordiv(1.0, 0.0), f64::INFINITY);
        assert_eq!(remainder(-0.0, 3.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(ndjit_ifloordiv(-7, 2), -4);
        assert_eq!(ndjit_imod(-7, 2), 1);
        assert_eq!(ndjit_imod(7, -2), -1);
        assert_eq!(ndjit_ifloordiv(i64::MIN, -1), i64::MIN);
    }

    #[test]
    fn min_max_propagate_nan() {
        assert!(fmin(f64::NAN, 1.0).is_nan() && fmin(1.0, f64::NAN).is_nan());
        assert!(fmax(f64::NAN, 1.0).is_nan() && fmax(1.0, f64::NAN).is_nan());
        assert!(fmin(0.0, -0.0).is_sign_negative() && fmax(-0.0, 0.0).is_sign_positive());
        assert_eq!(fmin(2.0, 3.0), 2.0);
    }

    #[test]
    fn table_is_consistent() {
        // eval() and the exported address are the same routine: the interpreter and the JIT agree.
        for f in MathFn::ALL {
            assert!(f.symbol().starts_with("ndjit_"));
            for args in [[0.5, 0.25], [-3.0, 2.0], [1e300, -0.0]] {
                let via_address = unsafe {
                    match f.arity() {
                        1 => std::mem::transmute::<*const c_void, extern "C" fn(f64) -> f64>(
                            f.address(),
                        )(args[0]),
                        _ => std::mem::transmute::<*const c_void, extern "C" fn(f64, f64) -> f64>(
                            f.address(),
                        )(args[0], args[1]),
                    }
                };
                let direct = f.eval(&args[..f.arity()]);
                assert!(
                    direct.to_bits() == via_address.to_bits()
                        || (direct.is_nan() && via_address.is_nan()),
                    "{}",
                    f.name()
                );
            }
        }
        assert_eq!(MathFn::Pow.eval(&[2.0, 10.0]), 1024.0);
        assert_eq!(MathFn::Atan2.eval(&[1.0, 0.0]), std::f64::consts::FRAC_PI_2);
    }
}
