//! Wider vectors where the CPU has them: the crate is compiled for baseline x86-64 (SSE2, 4 `f32`
//! lanes), so the hot loops are compiled a second time with AVX2 (8 `f32`, 32 `u8` lanes) and
//! chosen at run time. The loops themselves stay plain Rust that LLVM vectorises.

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
