//! Which kernel NumPy runs for `np.tanh`, `np.sinh`, `np.log10`, `np.arccosh` and `np.cbrt`.
//!
//! NumPy computes most `np.*` math with the C library, as ndjit does, but picks SIMD kernels of
//! its own at run time on some CPUs (measured with NumPy 2.4 on Linux, restricting its features
//! with `NPY_ENABLE_CPU_FEATURES`):
//! - with AVX-512 (`AVX512_SKX`), Intel's SVML for these five (and others, which agree with
//!   glibc's within 1 ulp);
//! - with AVX2 and FMA3, its own tanh; the other four are glibc's, bit for bit;
//! - below that, glibc's for all five.
//!
//! Where NumPy's kernel is its own, glibc's result can be 2–3 ulp from it, so ndjit computes
//! that function within 0.51 ulp instead ([`super::accurate`]), which is within 1 ulp of
//! NumPy's; where NumPy calls glibc, ndjit calls it too and gives NumPy's bits. The choice is
//! made once per process: from the CPU's features by default, or by the Python package, which
//! asks NumPy itself (`set_accurate`) before compiling anything.

use super::MathFn;
use std::sync::atomic::{AtomicU8, Ordering};

/// The functions with a choice, in bit order.
pub const CHOICES: [MathFn; 5] = [
    MathFn::NpTanh,
    MathFn::NpSinh,
    MathFn::NpLog10,
    MathFn::NpAcosh,
    MathFn::NpCbrt,
];

/// Bit i set: `CHOICES[i]` is accurate. `UNSET` until first read or set.
static ACCURATE: AtomicU8 = AtomicU8::new(UNSET);
const UNSET: u8 = 0x80;

fn bit(f: MathFn) -> u8 {
    // A match, not a search of CHOICES: this runs on every call.
    1 << match f {
        MathFn::NpTanh => 0,
        MathFn::NpSinh => 1,
        MathFn::NpLog10 => 2,
        MathFn::NpAcosh => 3,
        MathFn::NpCbrt => 4,
        _ => panic!("{} has no NumPy kernel choice", f.name()),
    }
}

/// What NumPy does on this CPU, from its features (NumPy's Linux x86-64 builds have SVML).
fn from_cpu() -> u8 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        // NumPy's AVX512_SKX group.
        let svml = cfg!(target_os = "linux")
            && has!("avx512f")
            && has!("avx512cd")
            && has!("avx512bw")
            && has!("avx512dq")
            && has!("avx512vl");
        let simd_tanh = svml || (has!("avx2") && has!("fma"));
        let mut m = 0;
        for f in CHOICES {
            let own = if f == MathFn::NpTanh { simd_tanh } else { svml };
            if own {
                m |= bit(f);
            }
        }
        m
    }
    #[cfg(target_arch = "aarch64")]
    {
        // NumPy's own tanh runs on NEON; the others are the C library's.
        bit(MathFn::NpTanh)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        0
    }
}

fn mask() -> u8 {
    let m = ACCURATE.load(Ordering::Relaxed);
    if m != UNSET {
        return m;
    }
    let cpu = from_cpu();
    // A concurrent set_accurate wins.
    match ACCURATE.compare_exchange(UNSET, cpu, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => cpu,
        Err(now) => now,
    }
}

/// Whether ndjit computes `f` (one of [`CHOICES`]) within 0.51 ulp rather than with the C
/// library, because NumPy runs a kernel of its own for it.
pub fn is_accurate(f: MathFn) -> bool {
    mask() & bit(f) != 0
}

/// Records whether NumPy runs a kernel of its own for `f` (one of [`CHOICES`]). Code compiled
/// before keeps its choice on the GPU (its device routines are fixed at compile time), so the
/// Python package calls this at import.
pub fn set_accurate(f: MathFn, accurate: bool) {
    let b = bit(f);
    let _ = ACCURATE.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |m| {
        let m = if m == UNSET { from_cpu() } else { m };
        Some(if accurate { m | b } else { m & !b })
    });
}

/// Evaluates `f` (one of [`CHOICES`]) as NumPy's kernel does, within the promise above.
pub fn eval(f: MathFn, x: f64) -> f64 {
    use super::accurate;
    if !is_accurate(f) {
        return c_library(f, x);
    }
    match f {
        MathFn::NpTanh => accurate::tanh(x),
        MathFn::NpSinh => accurate::sinh(x),
        MathFn::NpLog10 => accurate::log10(x),
        MathFn::NpAcosh => accurate::acosh(x),
        _ => accurate::cbrt(x, c_library(MathFn::NpCbrt, x)),
    }
}

/// The C library's routine for `f` (one of [`CHOICES`]): what NumPy calls where its kernel is
/// not its own (the Python package compares NumPy's results with these).
pub fn c_library(f: MathFn, x: f64) -> f64 {
    f.c_library().eval(&[x])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_i_is_choice_i() {
        for (i, &f) in CHOICES.iter().enumerate() {
            assert_eq!(bit(f), 1 << i, "{}", f.name());
            assert_eq!(f.c_library().numpy(), f);
        }
    }
}
