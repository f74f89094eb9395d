//! Wider vectors where the CPU has them: the crate is compiled for baseline x86-64 (SSE2, 4 `f32`
//! lanes), so the hot loops are compiled a second time with AVX2 (8 `f32`, 32 `u8` lanes) and
//! chosen at run time. The loops themselves stay plain Rust that LLVM vectorises.
//!
//! Not AVX-512: a third tier compiled with `avx512f,avx512bw` (LLVM then uses 64-byte vectors)
//! was slower on every row measured on the AMD EPYC test machine (`benches/rank.py --n 1024
//! --threads 1 --only min,range`: min u8 3×3 0.10 → 0.11 ms, u16 5×5 0.30 → 0.40, f32 5×5 0.42 →
//! 0.56, f64 9×9 1.21 → 1.72, range f32 9×9 1.10 → 1.57). Not profiled further; likely reasons:
//! AMD's Zen 4 executes a 512-bit operation as two 256-bit halves, so it gains no throughput
//! there, and a line of 1024 values leaves a larger share of each loop to its scalar end.

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
