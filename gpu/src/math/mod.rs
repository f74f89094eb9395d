//! f64 math routines in PTX, transcribed from the C library the CPU calls.
//!
//! The CPU calls the C library's routines (glibc's on Linux), because that is what CPython's
//! `math` module and NumPy's scalar math call (see `ndjit::math`). The device cannot, so the
//! routines here transcribe glibc's own, instruction for instruction:
//! - `glibc.rs`: exp, exp2, log, log2, pow (ARM's optimized routines, with `arm_tables`);
//! - `glibc_own.rs`: log10, cbrt, hypot, expm1, log1p and the six hyperbolic functions;
//! - `glibc_trig.rs`, `glibc_tan.rs`, `glibc_asin.rs`, `glibc_atan.rs`: sin, cos, tan, asin, acos,
//!   atan, atan2 (the IBM Accurate Mathematical Library, with `glibc_tables`);
//! - `accurate.rs`: `np.tanh`, `np.sinh`, `np.log10`, `np.arccosh` and `np.cbrt` within 0.51 ulp,
//!   as `ndjit::math::accurate` computes them on the CPU where NumPy's kernels are its own.
//!
//! glibc picks builds compiled with FMA for most of these on x86-64 CPUs with FMA and AVX2; the
//! transcriptions follow those builds: every `+ − × ÷ √` is a correctly rounded `.rn` PTX
//! instruction, an `fma.rn` stands exactly where glibc 2.36's `libm.so.6` has a fused
//! multiply-add (read from its disassembly), and table lookups, integer bit manipulations and
//! branches are glibc's own. The rest (`misc.rs`) is CPython's own `math.hypot`, fmod (exact),
//! copysign and NumPy's floor division and remainder. `tests/math_emu.rs` checks through the PTX
//! emulator that every routine is bit-identical to the CPU's.
//!
//! Each routine is a `.func` named like the CPU's symbol (`ndjit_exp`), defined on demand with its
//! helpers and tables.

// Constants are written as glibc and CPython write them (all digits, split pairs such as
// `pio2_hi` beside `pio2_lo`), and `(x - x) / (x - x)` builds the NaN glibc returns.

mod accurate;
pub mod dsl;
#[allow(clippy::eq_op)]
mod glibc;
// The constants are written as glibc writes them.
#[allow(clippy::excessive_precision)]
mod glibc_asin;
mod glibc_atan;
#[allow(clippy::eq_op)]
mod glibc_own;
mod glibc_tables;
#[allow(clippy::eq_op)]
mod glibc_tan;
#[allow(clippy::eq_op)]
mod glibc_trig;
#[allow(clippy::approx_constant, clippy::excessive_precision, clippy::eq_op)]
mod misc;
mod scalbn;
#[allow(clippy::approx_constant, clippy::excessive_precision, clippy::eq_op)]
mod tables;

use crate::pir::{Addr, Bin, Cls, Cmp, Func, Module, Param, Reg, Space, Special, T};
use dsl::define;
use ndjit::math::MathFn;

/// The device-function name of a math function.
pub fn symbol(f: MathFn) -> &'static str {
    match f {
        MathFn::Exp => "ndjit_exp",
        MathFn::Exp2 => "ndjit_exp2",
        MathFn::Expm1 => "ndjit_expm1",
        MathFn::Log => "ndjit_log",
        MathFn::Log2 => "ndjit_log2",
        MathFn::Log10 => "ndjit_log10",
        MathFn::Log1p => "ndjit_log1p",
        MathFn::Sin => "ndjit_sin",
        MathFn::Cos => "ndjit_cos",
        MathFn::Tan => "ndjit_tan",
        MathFn::Asin => "ndjit_asin",
        MathFn::Acos => "ndjit_acos",
        MathFn::Atan => "ndjit_atan",
        MathFn::Sinh => "ndjit_sinh",
        MathFn::Cosh => "ndjit_cosh",
        MathFn::Tanh => "ndjit_tanh",
        MathFn::Asinh => "ndjit_asinh",
        MathFn::Acosh => "ndjit_acosh",
        MathFn::Atanh => "ndjit_atanh",
        MathFn::Cbrt => "ndjit_cbrt",
        MathFn::Atan2 => "ndjit_atan2",
        MathFn::Hypot => "ndjit_hypot",
        MathFn::PyHypot => "ndjit_py_hypot",
        MathFn::Pow => "ndjit_pow",
        MathFn::Fmod => "ndjit_fmod",
        MathFn::CopySign => "ndjit_copysign",
        MathFn::Fma => "ndjit_fma",
        MathFn::FloorDiv => "ndjit_floordiv",
        MathFn::Remainder => "ndjit_remainder",
        // Where NumPy calls the C library for these, so does ndjit: glibc's routine.
        f if !ndjit::math::numpy_kernels::is_accurate(f) => symbol(f.c_library()),
        MathFn::NpTanh => "ndjit_np_tanh",
        MathFn::NpSinh => "ndjit_np_sinh",
        MathFn::NpLog10 => "ndjit_np_log10",
        MathFn::NpAcosh => "ndjit_np_acosh",
        MathFn::NpCbrt => "ndjit_np_cbrt",
    }
}

/// Whether the device routine of `f` transcribes glibc's (every function the CPU takes from the
/// C library but fmod, which is exact): bit-identical to the CPU's wherever the CPU's glibc runs
/// the builds transcribed (x86-64 with FMA and AVX2).
pub fn transcribes_glibc(f: MathFn) -> bool {
    !matches!(
        f,
        MathFn::PyHypot
            | MathFn::Fmod
            | MathFn::CopySign
            | MathFn::Fma
            | MathFn::FloorDiv
            | MathFn::Remainder
    )
}

/// Whether this CPU's C library runs the glibc builds that the device transcribes: glibc's, whose
/// exp, log, log2, pow, expm1, log1p, sin, cos, tan, asin, acos, atan and atan2 are the builds
/// compiled with FMA that it picks on x86-64 CPUs with FMA and AVX2 (the other routines are
/// generic builds, some of them calling these).
pub fn cpu_runs_glibc_fma_builds() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
    {
        is_x86_feature_detected!("fma") && is_x86_feature_detected!("avx2")
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64")))]
    {
        false
    }
}

/// The device functions that contain `fma.rn`: glibc's FMA builds (`glibc.rs`, `glibc_own.rs`),
/// CPython's `math.hypot` (its exact products) and `fma` itself (NumPy's BLAS dot products).
/// Everything else is unfused.
pub const FUSED: &[&str] = &[
    "ndjit_exp",
    "ndjit_log",
    "ndjit_log2",
    "ndjit_pow",
    "ndjit_expm1",
    "ndjit_log1p",
    "ndjit_py_hypot",
    "ndjit_fma",
    "ndjit_sin",
    "ndjit_cos",
    "ndjit_glibc_do_sin",
    "ndjit_glibc_do_cos",
    "ndjit_atan",
    "ndjit_atan2",
    "ndjit_tan",
    "ndjit_asin",
    "ndjit_acos",
    "ndjit_np_tanh",
    "ndjit_np_sinh",
    "ndjit_np_log10",
    "ndjit_np_acosh",
    "ndjit_np_cbrt",
];

/// Defines `f` (and what it calls) in `m`; returns its name.
pub fn emit(m: &mut Module, f: MathFn) -> &'static str {
    let name = symbol(f);
    ensure(m, name);
    name
}

/// Defines the device function `name` in `m` unless present.
pub fn ensure(m: &mut Module, name: &str) {
    use Cls::{B32, F64};
    type Body = fn(&[Reg]);
    let (args, rets, body): (&[Cls], &[Cls], Body) = match name {
        "ndjit_exp" => (&[F64], &[F64], glibc::exp),
        "ndjit_exp2" => (&[F64], &[F64], glibc::exp2),
        "ndjit_expm1" => (&[F64], &[F64], glibc_own::expm1),
        "ndjit_scalbn" => (&[F64, B32], &[F64], scalbn::scalbn),
        "ndjit_log" => (&[F64], &[F64], glibc::log),
        "ndjit_log2" => (&[F64], &[F64], glibc::log2),
        "ndjit_log10" => (&[F64], &[F64], glibc_own::log10),
        "ndjit_log1p" => (&[F64], &[F64], glibc_own::log1p),
        "ndjit_sin" => (&[F64], &[F64], glibc_trig::sin),
        "ndjit_cos" => (&[F64], &[F64], glibc_trig::cos),
        "ndjit_glibc_do_sin" => (&[F64, F64], &[F64], glibc_trig::do_sin),
        "ndjit_glibc_do_cos" => (&[F64, F64], &[F64], glibc_trig::do_cos),
        "ndjit_glibc_branred" => (&[F64], &[B32, F64, F64], glibc_trig::branred),
        "ndjit_tan" => (&[F64], &[F64], glibc_tan::tan),
        "ndjit_asin" => (&[F64], &[F64], glibc_asin::asin),
        "ndjit_acos" => (&[F64], &[F64], glibc_asin::acos),
        "ndjit_atan" => (&[F64], &[F64], glibc_atan::atan),
        "ndjit_atan2" => (&[F64, F64], &[F64], glibc_atan::atan2),
        "ndjit_sinh" => (&[F64], &[F64], glibc_own::sinh),
        "ndjit_cosh" => (&[F64], &[F64], glibc_own::cosh),
        "ndjit_tanh" => (&[F64], &[F64], glibc_own::tanh),
        "ndjit_asinh" => (&[F64], &[F64], glibc_own::asinh),
        "ndjit_acosh" => (&[F64], &[F64], glibc_own::acosh),
        "ndjit_atanh" => (&[F64], &[F64], glibc_own::atanh),
        "ndjit_pow" => (&[F64, F64], &[F64], glibc::pow),
        "ndjit_cbrt" => (&[F64], &[F64], glibc_own::cbrt),
        "ndjit_hypot" => (&[F64, F64], &[F64], glibc_own::hypot),
        "ndjit_py_hypot" => (&[F64, F64], &[F64], misc::py_hypot),
        "ndjit_fmod" => (&[F64, F64], &[F64], misc::fmod),
        "ndjit_copysign" => (&[F64, F64], &[F64], misc::copysign),
        "ndjit_fma" => (&[F64, F64, F64], &[F64], misc::fma),
        "ndjit_floordiv" => (&[F64, F64], &[F64], misc::floordiv),
        "ndjit_remainder" => (&[F64, F64], &[F64], misc::remainder),
        "ndjit_np_tanh" => (&[F64], &[F64], accurate::tanh),
        "ndjit_np_sinh" => (&[F64], &[F64], accurate::sinh),
        "ndjit_np_log10" => (&[F64], &[F64], accurate::log10),
        "ndjit_np_acosh" => (&[F64], &[F64], accurate::acosh),
        "ndjit_np_cbrt" => (&[F64], &[F64], accurate::cbrt),
        other => panic!("no device math routine {other}"),
    };
    define(m, name, args, rets, body, &ensure);
}

/// A kernel `ndjit_math_test(x, y, out, n)` computing `out[i] = f(x[i])` (or `f(x[i], y[i])`)
/// for `i < n`, one element per thread: what the device run uses to measure accuracy.
pub fn test_module(f: MathFn, version: (u32, u32), target: u32) -> Module {
    let mut m = Module::new(version, target);
    let name = emit(&mut m, f);
    let params = ["x", "y", "out"]
        .iter()
        .map(|n| Param {
            name: n.to_string(),
            t: T::U64,
        })
        .chain([Param {
            name: "n".into(),
            t: T::U64,
        }])
        .collect();
    let mut k = Func::new_entry("ndjit_math_test", params);
    let tid = k.sreg(Special::TidX);
    let ntid = k.sreg(Special::NtidX);
    let cta = k.sreg(Special::CtaidX);
    let i32 = k.fma(T::U32, cta, ntid, tid);
    let i = k.cvt(None, T::U64, T::U32, i32);
    let n = k.ld(Space::Param, T::U64, Addr::sym("n", 0));
    let done = k.new_label();
    let p = k.setp(Cmp::Ge, T::U64, i, n);
    k.bra_if(p, false, done);
    let off = k.bin(Bin::Shl, T::B64, i, crate::pir::Src::I(3));
    let load = |k: &mut Func, what: &str| {
        let base = k.ld(Space::Param, T::U64, Addr::sym(what, 0));
        let a = k.bin(Bin::Add, T::U64, base, off);
        k.ld(Space::GlobalNc, T::F64, Addr::reg(a, 0))
    };
    let mut args = vec![load(&mut k, "x")];
    if f.arity() >= 2 {
        args.push(load(&mut k, "y"));
    }
    if f.arity() == 3 {
        // [`sample_args`]'s third argument: `-(x * y)`, rounded.
        let p = k.bin(Bin::Mul, T::F64, args[0], args[1]);
        args.push(k.un(crate::pir::Un::Neg, T::F64, p));
    }
    let r = k.call(name, args, &[Cls::F64])[0];
    let ob = k.ld(Space::Param, T::U64, Addr::sym("out", 0));
    let oa = k.bin(Bin::Add, T::U64, ob, off);
    k.st(Space::Global, T::F64, Addr::reg(oa, 0), r);
    k.place(done);
    k.push(crate::pir::Ins::Exit);
    m.funcs.push(k);
    m
}

/// The arguments of `f` for a sample `(a, b)` of [`sample_inputs`]: `a`, `(a, b)`, or for
/// `fma` `(a, b, -(a * b))`, whose result is the rounding error of the product, which only a
/// fused operation sees.
pub fn sample_args(f: MathFn, (a, b): (f64, f64)) -> Vec<f64> {
    match f.arity() {
        1 => vec![a],
        2 => vec![a, b],
        _ => vec![a, b, -(a * b)],
    }
}

/// Test inputs for a math function: special values, then random values drawn half from the
/// function's interesting range and half from all bit patterns (every exponent), deterministic
/// in `seed`. Pairs for two-argument functions (the second is ignored otherwise).
pub fn sample_inputs(f: MathFn, n: usize, seed: u64) -> Vec<(f64, f64)> {
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        3.0,
        10.0,
        1e-300,
        -1e-300,
        5e-324,
        -5e-324,
        2.2250738585072014e-308,
        1e300,
        -1e300,
        f64::MAX,
        f64::MIN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        std::f64::consts::PI,
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::FRAC_PI_4,
        -std::f64::consts::PI,
        709.78,
        -745.2,
        710.0,
        1e22,
        1e15,
        0.7,
        1.0000000000000002,
        0.9999999999999999,
        56.0,
        -56.0,
        20.0,
        1e-8,
        0.25,
        1.5,
        -1.5,
        // Where glibc 2.36's atan and glibc 2.39/2.41's differ (`glibc_atan::fuses_atan_tail`).
        18.321571106097153,
        -16.424133828469643,
        19.184226822030766,
    ];
    let mut out = Vec::with_capacity(n + specials.len() * specials.len());
    for &a in &specials {
        if f.arity() == 2 {
            for &b in &specials {
                out.push((a, b));
            }
        } else {
            out.push((a, 0.0));
        }
    }
    let mut g = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let (lo, hi): (f64, f64) = match f {
        MathFn::Exp | MathFn::Expm1 | MathFn::Sinh | MathFn::Cosh | MathFn::NpSinh => {
            (-760.0, 760.0)
        }
        MathFn::Exp2 => (-1100.0, 1100.0),
        MathFn::Tanh | MathFn::Atanh | MathFn::Asin | MathFn::Acos => (-1.2, 1.2),
        MathFn::NpTanh => (-3.0, 3.0),
        MathFn::Sin | MathFn::Cos | MathFn::Tan => (-40.0, 40.0),
        MathFn::Log | MathFn::Log2 | MathFn::Log10 | MathFn::Acosh => (0.0, 20.0),
        MathFn::NpLog10 | MathFn::NpAcosh => (0.0, 20.0),
        MathFn::Log1p => (-1.0, 4.0),
        MathFn::Pow => (-4.0, 8.0),
        _ => (-100.0, 100.0),
    };
    let rnd = |g: &mut Rng| -> f64 {
        match g.next() % 4 {
            0 | 1 => lo + (hi - lo) * g.unit(),
            2 => f64::from_bits(g.next()),
            // Small and huge magnitudes of both signs.
            _ => {
                let e = (g.unit() * 80.0 - 40.0).round();
                (g.unit() - 0.5) * 10f64.powf(e)
            }
        }
    };
    while out.len() < n {
        let a = rnd(&mut g);
        let b = match f {
            // Integer and half-integer exponents, and ordinary ones.
            MathFn::Pow => match g.next() % 3 {
                0 => ((g.unit() - 0.5) * 60.0).round(),
                1 => ((g.unit() - 0.5) * 60.0).round() + 0.5,
                _ => rnd(&mut g),
            },
            _ => rnd(&mut g),
        };
        out.push((a, b));
    }
    out
}

/// Distance in units in the last place between two doubles (0 when both are NaN; `u64::MAX`
/// when only one is).
pub fn ulp_diff(a: f64, b: f64) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let key = |x: f64| {
        let b = x.to_bits() as i64;
        if b < 0 {
            i64::MIN - b
        } else {
            b
        }
    };
    (key(a) as i128 - key(b) as i128)
        .unsigned_abs()
        .min(u64::MAX as u128) as u64
}

/// xorshift64: deterministic inputs without an RNG dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
