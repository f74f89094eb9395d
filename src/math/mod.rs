//! The math routines every backend calls.
//!
//! Each [`MathFn`] is one `extern "C"` function below. The Cranelift JIT imports these symbols and
//! the interpreter calls the very same functions, so the two agree bit for bit.
//!
//! **Why the platform's C library.** CPython's `math.exp`, `math.sin`, `math.pow` ... call the C
//! library's functions directly (after their own domain checks, which the lowering mirrors). So
//! calling the very same functions is the only way to be bit-identical with `math.*`: on Linux
//! that is glibc's libm, whose exp/log/pow family is correctly rounded in practice while a port
//! of fdlibm/musl (the `libm` crate) differs in the last bit on a few percent of inputs
//! (`exp(1.0)`). The exceptions are the functions CPython computes itself (see [`py_hypot`]).
//! NumPy's `np.*` functions use their own SIMD kernels on some CPUs; for the five where the C
//! library's result can be more than 1 ulp from them, `np.*` lowers to its own [`MathFn`]
//! (`NpTanh`, ...), which computes within 0.51 ulp wherever NumPy's kernel is its own
//! ([`numpy_kernels`], [`accurate`]), so every `np.*` is within 1 ulp of NumPy's (README:
//! *Known deviations*).
//!
//! The GPU backend cannot call the C library: its device routines transcribe glibc's own routines
//! (its FMA builds on x86-64, instruction for instruction) and [`accurate`]'s, and are
//! bit-identical to these where the host's glibc runs those builds (`ndjit-gpu`'s `math` module).

pub mod accurate;
pub mod arm_tables;
pub mod blas;
pub mod numpy_kernels;

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
    (@call $sym:ident, $args:ident, $a:ident, $b:ident, $c:ident) => { $sym($args[0], $args[1], $args[2]) };
}

math_fns! {
    Exp, "exp", 1, ndjit_exp, |x| clib::exp(x);
    Exp2, "exp2", 1, ndjit_exp2, |x| clib::exp2(x);
    Expm1, "expm1", 1, ndjit_expm1, |x| clib::expm1(x);
    Log, "log", 1, ndjit_log, |x| clib::log(x);
    Log2, "log2", 1, ndjit_log2, |x| clib::log2(x);
    Log10, "log10", 1, ndjit_log10, |x| clib::log10(x);
    Log1p, "log1p", 1, ndjit_log1p, |x| clib::log1p(x);
    Sin, "sin", 1, ndjit_sin, |x| clib::sin(x);
    Cos, "cos", 1, ndjit_cos, |x| clib::cos(x);
    Tan, "tan", 1, ndjit_tan, |x| clib::tan(x);
    Asin, "arcsin", 1, ndjit_asin, |x| clib::asin(x);
    Acos, "arccos", 1, ndjit_acos, |x| clib::acos(x);
    Atan, "arctan", 1, ndjit_atan, |x| clib::atan(x);
    Sinh, "sinh", 1, ndjit_sinh, |x| clib::sinh(x);
    Cosh, "cosh", 1, ndjit_cosh, |x| clib::cosh(x);
    Tanh, "tanh", 1, ndjit_tanh, |x| clib::tanh(x);
    Asinh, "arcsinh", 1, ndjit_asinh, |x| clib::asinh(x);
    Acosh, "arccosh", 1, ndjit_acosh, |x| clib::acosh(x);
    Atanh, "arctanh", 1, ndjit_atanh, |x| clib::atanh(x);
    Cbrt, "cbrt", 1, ndjit_cbrt, |x| clib::cbrt(x);
    Atan2, "arctan2", 2, ndjit_atan2, |y, x| clib::atan2(y, x);
    Hypot, "hypot", 2, ndjit_hypot, |x, y| clib::hypot(x, y);
    PyHypot, "math.hypot", 2, ndjit_py_hypot, |x, y| py_hypot(x, y);
    Pow, "power", 2, ndjit_pow, |x, y| clib::pow(x, y);
    Fmod, "fmod", 2, ndjit_fmod, |x, y| clib::fmod(x, y);
    CopySign, "copysign", 2, ndjit_copysign, |x, y| x.copysign(y);
    // `a * b + c` rounded once, as the FMA instructions of NumPy's BLAS kernels compute it
    // (`blas.rs`): Rust's `mul_add` is the correctly rounded fused operation on every target.
    Fma, "fma", 3, ndjit_fma, |a, b, c| a.mul_add(b, c);
    FloorDiv, "floor_divide", 2, ndjit_floordiv, |a, b| floordiv(a, b);
    Remainder, "remainder", 2, ndjit_remainder, |a, b| remainder(a, b);
    NpTanh, "np.tanh", 1, ndjit_np_tanh, |x| numpy_kernels::eval(MathFn::NpTanh, x);
    NpSinh, "np.sinh", 1, ndjit_np_sinh, |x| numpy_kernels::eval(MathFn::NpSinh, x);
    NpLog10, "np.log10", 1, ndjit_np_log10, |x| numpy_kernels::eval(MathFn::NpLog10, x);
    NpAcosh, "np.arccosh", 1, ndjit_np_acosh, |x| numpy_kernels::eval(MathFn::NpAcosh, x);
    NpCbrt, "np.cbrt", 1, ndjit_np_cbrt, |x| numpy_kernels::eval(MathFn::NpCbrt, x);
}

impl MathFn {
    /// The function `np.<name>` computes where `math.<name>` computes `self`: the same but for
    /// the five whose NumPy kernel may not be the C library's ([`numpy_kernels`]).
    pub fn numpy(self) -> MathFn {
        match self {
            MathFn::Tanh => MathFn::NpTanh,
            MathFn::Sinh => MathFn::NpSinh,
            MathFn::Log10 => MathFn::NpLog10,
            MathFn::Acosh => MathFn::NpAcosh,
            MathFn::Cbrt => MathFn::NpCbrt,
            f => f,
        }
    }

    /// The C library's function behind `self`: the inverse of [`MathFn::numpy`] (what NumPy
    /// calls where its kernel is not its own).
    pub fn c_library(self) -> MathFn {
        match self {
            MathFn::NpTanh => MathFn::Tanh,
            MathFn::NpSinh => MathFn::Sinh,
            MathFn::NpLog10 => MathFn::Log10,
            MathFn::NpAcosh => MathFn::Acosh,
            MathFn::NpCbrt => MathFn::Cbrt,
            f => f,
        }
    }
}

/// The C library's functions: libm on Unix, the C runtime elsewhere. They are pure functions of
/// their arguments: no errno is read, and the floating-point environment is never changed.
mod clib {
    macro_rules! clib_fns {
        ($($name:ident($($a:ident),+);)*) => {
            mod linked {
                #[cfg_attr(all(unix, not(target_vendor = "apple")), link(name = "m"))]
                extern "C" {
                    $(pub fn $name($($a: f64),+) -> f64;)*
                }
            }

            /// The routines by address, looked up once.
            struct Table {
                $($name: unsafe extern "C" fn($($a: f64),+) -> f64,)*
            }

            impl Table {
                fn linked() -> Table {
                    Table { $($name: linked::$name,)* }
                }
                /// glibc's own libm by name. The Rust toolchain's compiler-builtins defines a few
                /// libm symbols itself (weakly: `cbrt` and `fmod` today, with other algorithms),
                /// and a definition inside the binary wins over the shared library at link time;
                /// CPython calls glibc's.
                #[cfg(all(target_os = "linux", target_env = "gnu"))]
                fn glibc() -> Option<Table> {
                    // SAFETY: dlopen/dlsym with NUL-terminated names; the handle is never closed,
                    // so the addresses stay valid; each symbol has the C signature declared.
                    unsafe {
                        let lib = libc::dlopen(c"libm.so.6".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
                        if lib.is_null() {
                            return None;
                        }
                        $(
                            let p = libc::dlsym(lib, concat!(stringify!($name), "\0").as_ptr().cast());
                            if p.is_null() {
                                return None;
                            }
                            let $name = std::mem::transmute::<*mut libc::c_void, unsafe extern "C" fn($($a: f64),+) -> f64>(p);
                        )*
                        Some(Table { $($name,)* })
                    }
                }
                #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
                fn glibc() -> Option<Table> {
                    None
                }
            }

            fn table() -> &'static Table {
                static TABLE: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
                TABLE.get_or_init(|| Table::glibc().unwrap_or_else(Table::linked))
            }

            $(
                #[inline]
                pub fn $name($($a: f64),+) -> f64 {
                    // SAFETY: a C math function: any argument is valid, nothing else is touched.
                    unsafe { (table().$name)($($a),+) }
                }
            )*
        };
    }

    clib_fns! {
        exp(x); exp2(x); expm1(x); log(x); log2(x); log10(x); log1p(x);
        sin(x); cos(x); tan(x); asin(x); acos(x); atan(x);
        sinh(x); cosh(x); tanh(x); asinh(x); acosh(x); atanh(x); cbrt(x);
        atan2(y, x); hypot(x, y); pow(x, y); fmod(x, y);
    }
}

/// The version of the glibc this process runs, `(major, minor)`; `None` off glibc. The GPU's math
/// routines follow the builds of the host's glibc where they differ between versions.
pub fn glibc_version() -> Option<(u32, u32)> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
        let v = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
        let mut parts = v.to_str().ok()?.split('.').map(|p| p.parse::<u32>().ok());
        Some((parts.next()??, parts.next()??))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}

/// `math.hypot(x, y)`. CPython computes it itself, not with the C library's `hypot`, so this
/// follows CPython's own steps (`vector_norm` in `Modules/mathmodule.c`, the same since 3.10),
/// operation for operation, since only the same steps give the same bits in the rare cases
/// where the result is not correctly rounded:
/// - the operands (absolute values, in argument order) are scaled by a power of two so that the
///   larger lies in [0.5, 1): exact;
/// - each square is split exactly into `hi + lo` with a fused multiply-add and `hi` is added to a
///   running sum that starts at 1.0 (so the additions lose nothing), the small parts gathered
///   separately;
/// - the square root of the sum gets one differential correction from the exact residual.
///
/// Operands whose larger is subnormal take CPython 3.11's other path (below).
pub fn py_hypot(x: f64, y: f64) -> f64 {
    let (x, y) = (x.abs(), y.abs());
    let max = x.max(y);
    if max.is_infinite() {
        return max;
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if max == 0.0 {
        return max;
    }
    let e = frexp_exponent(max);
    if e < -1023 {
        // 2^-e would overflow. CPython 3.11 then divides by `max` instead of scaling losslessly
        // (3.12 made the operands normal first, which can round the last bit differently: README,
        // *Known deviations*).
        let (mut csum, mut frac) = (1.0f64, 0.0f64);
        for v in [x / max, y / max] {
            let sq = v * v;
            let sum = csum + sq;
            frac += (csum - sum) + sq;
            csum = sum;
        }
        return max * (csum - 1.0 + frac).sqrt();
    }
    let scale = pow2(-e);
    let mut acc = SquareSum::default();
    for v in [x * scale, y * scale] {
        acc.add_product(v, v);
    }
    let mut h = acc.value().sqrt();
    acc.add_product(-h, h);
    h += acc.value() / (2.0 * h);
    h / scale
}

/// The exponent `frexp` gives a finite non-zero `v`: `v = f * 2^e` with `f` in [0.5, 1).
fn frexp_exponent(v: f64) -> i32 {
    let bits = v.to_bits() & !(1 << 63);
    match (bits >> 52) as i32 {
        0 => 64 - bits.leading_zeros() as i32 - 1074, // subnormal
        biased => biased - 1022,
    }
}

/// `2^k` for `k` in [-1074, 1023], exactly (subnormal below -1022).
fn pow2(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (k + 1074))
    }
}

/// [`py_hypot`]'s running sum: `1.0 + csum-part + frac1 + frac2`, where each added product's
/// leading part goes into `csum` without loss (`|csum| >= |hi|`) and the two error terms (the
/// product's and the addition's) are gathered apart, in CPython's order.
struct SquareSum {
    csum: f64,
    frac1: f64,
    frac2: f64,
}

impl Default for SquareSum {
    fn default() -> Self {
        SquareSum {
            csum: 1.0,
            frac1: 0.0,
            frac2: 0.0,
        }
    }
}

impl SquareSum {
    fn add_product(&mut self, a: f64, b: f64) {
        let hi = a * b;
        let lo = a.mul_add(b, -hi);
        let sum = self.csum + hi;
        self.frac2 += (self.csum - sum) + hi;
        self.csum = sum;
        self.frac1 += lo;
    }
    fn value(&self) -> f64 {
        self.csum - 1.0 + (self.frac1 + self.frac2)
    }
}

/// NumPy's `npy_divmod`: the quotient and remainder of Python's `//` and `%` on floats.
/// A zero divisor gives `a / b` and `fmod(a, 0)` (NaN), as NumPy does, with no exception.
fn divmod(a: f64, b: f64) -> (f64, f64) {
    let mut m = ndjit_fmod(a, b);
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
        m = 0.0f64.copysign(b);
    }
    let floordiv = if div != 0.0 {
        let mut f = div.floor();
        if div - f > 0.5 {
            f += 1.0;
        }
        f
    } else {
        0.0f64.copysign(a / b)
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

/// Python's floor division on i64; `MIN // -1` wraps. Total, as every IR expression is: `a // 0`
/// is 0 (NumPy's value). A Python int divided by zero fails at the `Check` before the division,
/// but if-conversion may evaluate a branch's division speculatively where the check, guarded by
/// the branch's condition, does not fail (`(i ** 0) if c else (i % i)`): that value is never
/// used, and must not abort the process.
pub extern "C" fn ndjit_ifloordiv(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    let q = a.wrapping_div(b);
    if (a.wrapping_rem(b) != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// Python's modulo on i64: the sign follows the divisor. `a % 0` is 0 (see [`ndjit_ifloordiv`]).
pub extern "C" fn ndjit_imod(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
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
        // Total, as IR expressions are (evaluated speculatively, never used).
        assert_eq!((ndjit_ifloordiv(5, 0), ndjit_imod(-5, 0)), (0, 0));
    }

    #[test]
    fn min_max_propagate_nan() {
        assert!(fmin(f64::NAN, 1.0).is_nan() && fmin(1.0, f64::NAN).is_nan());
        assert!(fmax(f64::NAN, 1.0).is_nan() && fmax(1.0, f64::NAN).is_nan());
        assert!(fmin(0.0, -0.0).is_sign_negative() && fmax(-0.0, 0.0).is_sign_positive());
        assert_eq!(fmin(2.0, 3.0), 2.0);
    }

    /// CPython's results on Linux (glibc), where the `libm` crate and compiler-builtins differ:
    /// `math.exp(1.0)`, `math.cbrt(-0.3673911568960815)`, `math.tanh(0.4726369922000808)`.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn math_is_glibc_as_cpython_calls_it() {
        // 2.718281828459045, as bits: the literal reads as an approximation of `consts::E`.
        assert_eq!(MathFn::Exp.eval(&[1.0]).to_bits(), 0x4005_bf0a_8b14_5769);
        assert_eq!(
            MathFn::Cbrt.eval(&[-0.3673911568960815]),
            -0.7162141542441697
        );
        assert_eq!(
            MathFn::Tanh.eval(&[0.4726369922000808]).to_bits(),
            0x3fdc2e535ba43c24
        );
    }

    /// `math.hypot` as CPython 3.11 computes it, a subnormal case included.
    #[test]
    fn py_hypot_follows_cpython() {
        assert_eq!(py_hypot(3.0, -4.0), 5.0);
        assert_eq!(py_hypot(f64::NAN, f64::NEG_INFINITY), f64::INFINITY);
        assert!(py_hypot(f64::NAN, 1.0).is_nan());
        assert_eq!(py_hypot(-0.0, 0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(py_hypot(1.5e308, 1.5e308), f64::INFINITY);
        assert_eq!(
            py_hypot(7.0125361031217e-311, -3.5511491319187e-309),
            3.55184145527172e-309
        );
    }

    #[test]
    fn table_is_consistent() {
        // eval() and the exported address are the same routine: the interpreter and the JIT agree.
        for f in MathFn::ALL {
            assert!(f.symbol().starts_with("ndjit_"));
            for args in [[0.5, 0.25, 3.0], [-3.0, 2.0, 6.0], [1e300, -0.0, -0.0]] {
                type F3 = extern "C" fn(f64, f64, f64) -> f64;
                let via_address = unsafe {
                    match f.arity() {
                        1 => std::mem::transmute::<*const c_void, extern "C" fn(f64) -> f64>(
                            f.address(),
                        )(args[0]),
                        2 => std::mem::transmute::<*const c_void, extern "C" fn(f64, f64) -> f64>(
                            f.address(),
                        )(args[0], args[1]),
                        _ => std::mem::transmute::<*const c_void, F3>(f.address())(
                            args[0], args[1], args[2],
                        ),
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
        // One rounding: (1 + 2^-52)(1 - 2^-52) - 1 is -2^-104 fused, 0 rounded twice.
        let e = f64::EPSILON;
        assert_eq!(MathFn::Fma.eval(&[1.0 + e, 1.0 - e, -1.0]), -e * e);
    }
}
