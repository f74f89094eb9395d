//! Wider vectors where the CPU has them: the crate is compiled for baseline x86-64 (SSE2, 4 `f32`
//! lanes), so the hot loops are compiled a second time with AVX2 (8 `f32`, 32 `u8` lanes) and
//! chosen at run time. The loops themselves stay plain Rust that LLVM vectorises.
//!
//! AVX-512 only where it was measured to pay: [`run_wide`] compiles a kernel a third time, with
//! 64-byte vectors, for Intel CPUs that have AVX-512 (F, BW, DQ, VL). The 3×3 median's passes
//! and the scan for NaN gain there, their time being their vector instructions (an Intel Xeon,
//! 1024², one thread, two alternating runs a tier: the `f32` 3×3 median 0.61/0.65 → 0.53/0.57
//! ms in `benches/rank.py`'s medians of 21 calls, `u16` 0.25/0.28 → 0.22/0.23 in medians of
//! 101). The 3×3 median of floats has since a kernel of its own in that tier, written with
//! `std::arch` (`super::median3`), which asks [`wide`] too.
//!
//! Not for the extremes, which wait on memory: a tier compiled with `avx512f,avx512bw` was slower
//! on every row measured on the AMD EPYC test machine (`benches/rank.py --n 1024 --threads 1
//! --only min,range`: min u8 3×3 0.10 → 0.11 ms, u16 5×5 0.30 → 0.40, f32 5×5 0.42 → 0.56, f64
//! 9×9 1.21 → 1.72, range f32 9×9 1.10 → 1.57). Not profiled further; likely reasons: AMD's Zen 4
//! executes a 512-bit operation as two 256-bit halves, so it gains no throughput there, and a
//! line of 1024 values leaves a larger share of each loop to its scalar end. Nor on the Intel
//! Xeon, where [`run`]'s kernels were given the tier (the minimum, medians of 61 calls in two
//! alternating runs a tier; AVX2 → AVX-512, ms): `f32` 9×9 0.66/0.73 → 0.73/0.76, `f32` 7×7
//! 0.58/0.57 → 0.56/0.60, `u8` 5×5 0.130/0.136 → 0.140/0.148, `u16` 15×15 0.375/0.392 →
//! 0.385/0.414, `f64` 9×9 1.54/1.56 → 1.54/1.57.

/// Runs `f` compiled with AVX2 when the CPU has it (`is_x86_feature_detected!` caches its
/// answer). Whatever `f` inlines (the kernels are `#[inline(always)]`) is compiled for AVX2 too.
#[inline(always)]
pub(crate) fn fast<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        // SAFETY: the CPU has AVX2.
        return unsafe { avx2(f) };
    }
    f()
}

/// A computation compiled for AVX2 as a whole by [`run`]: [`fast`]'s closure is inlined into
/// its AVX2 frame only while it is small, and a large one (a block of lines with its kernels
/// inlined) otherwise stays baseline SSE2 code, half as wide (measured: `f32` 5×5 boxes). The
/// implementation marks `run` `#[inline(always)]`.
pub(crate) trait Kernel {
    type Output;
    fn run(self) -> Self::Output;
}

/// `k.run()`, compiled with AVX2 when the CPU has it.
#[inline(always)]
pub(crate) fn run<K: Kernel>(k: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<K: Kernel>(k: K) -> K::Output {
            k.run()
        }
        // SAFETY: the CPU has AVX2.
        return unsafe { avx2(k) };
    }
    k.run()
}

/// `k.run()`, compiled with AVX-512 (64-byte vectors) where [`wide`], else as [`run`]: for the
/// kernels measured to gain from it, the ones whose time is their vector instructions rather
/// than memory (see the module's documentation for those that lost).
#[inline(always)]
pub(crate) fn run_wide<K: Kernel>(k: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512dq")]
        unsafe fn avx512<K: Kernel>(k: K) -> K::Output {
            k.run()
        }
        // SAFETY: the CPU has these features (`wide`).
        return unsafe { avx512(k) };
    }
    run(k)
}

/// Whether [`run_wide`] takes AVX-512: on Intel CPUs that have it (F, BW, DQ, VL). Not on AMD's
/// by default: Zen 4 runs a 64-byte operation as two halves, and the tier measured slower there.
/// The environment variable `NDJIT_SIMD` (read once; for comparing tiers) set to `avx2` turns it
/// off, and set to `avx512` turns it on wherever the CPU has the features.
pub(crate) fn wide() -> bool {
    use std::sync::OnceLock;
    static WIDE: OnceLock<bool> = OnceLock::new();
    *WIDE.get_or_init(|| match std::env::var("NDJIT_SIMD").as_deref() {
        Ok("avx2") => false,
        Ok("avx512") => avx512(),
        _ => avx512() && intel(),
    })
}

#[cfg(target_arch = "x86_64")]
fn avx512() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx512f") && has!("avx512bw") && has!("avx512dq") && has!("avx512vl")
}

#[cfg(target_arch = "x86_64")]
fn intel() -> bool {
    let id = std::arch::x86_64::__cpuid(0);
    let vendor = [id.ebx, id.edx, id.ecx].map(u32::to_le_bytes).concat();
    vendor == *b"GenuineIntel"
}

#[cfg(not(target_arch = "x86_64"))]
fn avx512() -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn intel() -> bool {
    false
}
