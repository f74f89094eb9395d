//! The functions compiled code calls: the runtime routines of [`crate::runtime`], the integer
//! division shims and the math shims of [`crate::math`], with their C signatures.
//!
//! The interpreter calls the very same `extern "C"` functions, so whatever they compute, the JIT
//! computes too. Every symbol named here is registered on the `JITBuilder` from
//! [`crate::runtime::symbols`] (an unresolved import would panic at finalize).

use crate::math::MathFn;
use cranelift_codegen::ir::{types, AbiParam, Signature, Type};
use cranelift_codegen::isa::CallConv;

/// One imported function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Callee {
    /// `ndjit_rt_fail(ctx, site: u32, a: i64, b: i64)`: records a failure in the context.
    Fail,
    /// `ndjit_rt_poll(ctx) -> i32`: 1 when the call should stop (the interrupt is then recorded).
    Poll,
    /// `ndjit_rt_failed_call(buffer, filter_size, return_value, ctx) -> i32`: a generic_filter
    /// call that found its context failed, run as its thread's admission says.
    FailedCall,
    /// `super::poll`'s trampoline to `Poll`, which clobbers no register; defined in the module.
    PollTrampoline,
    /// `ndjit_rt_scratch(slot: u32, n: i64) -> *mut u64`: per-thread scratch memory, null on failure.
    Scratch,
    /// `ndjit_rt_sort(ptr, n)`: sorts f64 in place, NaN last.
    Sort,
    /// `ndjit_rt_median(ptr, n) -> f64` of a sorted array.
    Median,
    /// `ndjit_rt_quantile(ptr, n, q) -> f64` of a sorted array.
    Quantile,
    /// Python's `//` on i64 (Cranelift's `sdiv` would trap on a zero divisor and on `MIN / -1`).
    IFloorDiv,
    /// Python's `%` on i64.
    IMod,
    /// A math function of f64 arguments.
    Math(MathFn),
    /// [`pairwise_sum`] below: `runtime::pairwise_sum` for sums whose length is only known at
    /// run time.
    PairwiseSum,
}

impl Callee {
    pub(super) fn symbol(self) -> &'static str {
        match self {
            Callee::Fail => "ndjit_rt_fail",
            Callee::Poll => "ndjit_rt_poll",
            Callee::FailedCall => "ndjit_rt_failed_call",
            Callee::PollTrampoline => super::poll::TRAMPOLINE,
            Callee::Scratch => "ndjit_rt_scratch",
            Callee::Sort => "ndjit_rt_sort",
            Callee::Median => "ndjit_rt_median",
            Callee::Quantile => "ndjit_rt_quantile",
            Callee::IFloorDiv => "ndjit_ifloordiv",
            Callee::IMod => "ndjit_imod",
            Callee::Math(f) => f.symbol(),
            Callee::PairwiseSum => PAIRWISE_SUM,
        }
    }

    /// The C signature, with `ptr` the pointer type (compiled code only targets 64-bit hosts, so
    /// `i64` and `intptr_t` coincide with it).
    pub(super) fn signature(self, call_conv: CallConv, ptr: Type) -> Signature {
        use types::{F64, I32, I64};
        if self == Callee::PollTrampoline {
            return super::poll::trampoline_signature();
        }
        let (params, returns): (&[Type], &[Type]) = match self {
            Callee::Fail => (&[ptr, I32, I64, I64], &[]),
            Callee::Poll => (&[ptr], &[I32]),
            Callee::FailedCall => (&[ptr, I64, ptr, ptr], &[I32]),
            Callee::PollTrampoline => (&[ptr], &[]),
            Callee::Scratch => (&[I32, I64], &[ptr]),
            Callee::Sort => (&[ptr, I64], &[]),
            Callee::Median => (&[ptr, I64], &[F64]),
            Callee::Quantile => (&[ptr, I64, F64], &[F64]),
            Callee::IFloorDiv | Callee::IMod => (&[I64, I64], &[I64]),
            Callee::PairwiseSum => (&[ptr, I64], &[F64]),
            Callee::Math(f) => (&[F64, F64, F64][..f.arity()], &[F64]),
        };
        let mut sig = Signature::new(call_conv);
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sig.returns
            .extend(returns.iter().map(|&t| AbiParam::new(t)));
        sig
    }
}

const PAIRWISE_SUM: &str = "ndjit_jit_pairwise_sum";

/// [`crate::runtime::pairwise_sum`] of the `n` values at `ptr`: the IR's `Sum`, exactly. An
/// unrolled sum is emitted inline; a sum of run-time length calls this (one copy of the routine
/// both engines share, instead of three nested loops that cost more to compile than they gain).
///
/// # Safety
/// `ptr` must point to `n` readable f64 values, or `n` must be at most 0.
unsafe extern "C" fn pairwise_sum(ptr: *const f64, n: i64) -> f64 {
    if ptr.is_null() || n <= 0 {
        return crate::runtime::pairwise_sum(&[]);
    }
    // SAFETY: per the contract above.
    crate::runtime::pairwise_sum(unsafe { std::slice::from_raw_parts(ptr, n as usize) })
}

/// Routines of the JIT itself, registered next to [`crate::runtime::symbols`].
pub(super) fn jit_symbols() -> [(&'static str, *const u8); 1] {
    [(PAIRWISE_SUM, pairwise_sum as *const u8)]
}

/// Rounding routines Cranelift calls by their libm names when the host lacks the instructions
/// (x86-64 without SSE4.1 lowers `floor`/`ceil`/`trunc`/`nearest` to libcalls). Registering our own
/// keeps the results independent of the platform's C library and makes finalize never depend on
/// `dlsym` finding them.
pub(super) fn libcall_shims() -> [(&'static str, *const u8); 4] {
    extern "C" fn floor(x: f64) -> f64 {
        x.floor()
    }
    extern "C" fn ceil(x: f64) -> f64 {
        x.ceil()
    }
    extern "C" fn trunc(x: f64) -> f64 {
        x.trunc()
    }
    extern "C" fn nearbyint(x: f64) -> f64 {
        x.round_ties_even()
    }
    [
        ("floor", floor as *const u8),
        ("ceil", ceil as *const u8),
        ("trunc", trunc as *const u8),
        ("nearbyint", nearbyint as *const u8),
    ]
}
