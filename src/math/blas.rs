//! The order in which NumPy's BLAS adds a dot product, which ndjit reproduces.
//!
//! `np.dot`, `@` and `np.linalg.norm` of float64 vectors call BLAS's `ddot`, and NumPy's wheels
//! ship OpenBLAS, which picks its kernel for the CPU at run time. Each kernel adds in its own
//! order, with fused multiply-adds, so the last bits of a dot product depend on the kernel:
//! - [`DotOrder::SkylakeX`] (CPUs with AVX-512: Intel's since Skylake-X, AMD's since Zen 4):
//!   four 8-lane accumulators over blocks of 32, each lane `fma(x[i], y[i], acc)`; each folded
//!   to 4 lanes (lane `l` plus lane `l + 4`); one block of 16 into those 4-lane accumulators
//!   where `n & 16`; the four summed lane by lane (`((B0 + B1) + B2) + B3`), the 4 lanes as
//!   `(C0 + C2) + (C1 + C3)`; then the last `n % 16` products fused in order into that sum.
//! - [`DotOrder::Haswell`] (AVX2 CPUs without AVX-512, AMD's Zen 1–3): four 4-lane
//!   accumulators over blocks of 16, fused; each to 2 lanes (`[a0 + a2, a1 + a3]`), then
//!   `(A0 + A1) + (A2 + A3)` lane by lane and the 2 lanes added; then the last `n % 16`
//!   products added in order, each rounded (`s + x[i] * y[i]`, not fused).
//!
//! Both read from the disassembly of OpenBLAS 0.3.31's `ddot_k_SKYLAKEX`/`ddot_k_HASWELL` (the
//! scipy-openblas wheels NumPy 2 ships) and checked against `np.dot` bit for bit on 23,000
//! random pairs of lengths 1 to 300 (README, *Known deviations*). Above 10,000 values OpenBLAS
//! splits the sum among its threads, an order ndjit does not reproduce: such dot products raise.
//!
//! The Python package asks NumPy which order it uses (`ndjit/_blas.py`: the order whose results
//! equal `np.dot`'s on probe vectors) and sets it before anything is compiled; without Python
//! the core guesses from the CPU's features, as OpenBLAS does. Where neither order is NumPy's
//! ([`DotOrder::Unknown`]), dot products of floats are refused at compile time.

use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};

/// A BLAS kernel's order of additions for a float64 dot product (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DotOrder {
    SkylakeX,
    Haswell,
    /// Neither: NumPy's BLAS adds in an order ndjit does not know.
    Unknown,
}

/// The most values a dot product may have: OpenBLAS's single-threaded limit.
pub const MAX_DOT_LEN: i64 = 10_000;

impl DotOrder {
    pub const ALL: [DotOrder; 3] = [DotOrder::SkylakeX, DotOrder::Haswell, DotOrder::Unknown];

    /// The name Python uses.
    pub fn name(self) -> &'static str {
        match self {
            DotOrder::SkylakeX => "skylakex",
            DotOrder::Haswell => "haswell",
            DotOrder::Unknown => "unknown",
        }
    }

    pub fn from_name(name: &str) -> Option<DotOrder> {
        DotOrder::ALL.into_iter().find(|o| o.name() == name)
    }

    /// OpenBLAS's choice for this CPU (its `dynamic.c`): AVX-512 (F, CD, BW, DQ, VL) gives the
    /// SkylakeX kernel, AVX2 with FMA the Haswell one.
    pub fn of_cpu() -> DotOrder {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx512f")
                && has!("avx512cd")
                && has!("avx512bw")
                && has!("avx512dq")
                && has!("avx512vl")
            {
                return DotOrder::SkylakeX;
            }
            if has!("avx2") && has!("fma") {
                return DotOrder::Haswell;
            }
        }
        DotOrder::Unknown
    }

    fn code(self) -> u8 {
        self as u8 + 1
    }
}

/// 0 until set or first read: then the guess from the CPU.
static ORDER: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// [`with_dot_order`]'s order, which this thread's compiles take instead.
    static THIS_THREAD: Cell<Option<DotOrder>> = const { Cell::new(None) };
}

/// The order the lowering gives dot products from now on.
pub fn dot_order() -> DotOrder {
    if let Some(order) = THIS_THREAD.with(Cell::get) {
        return order;
    }
    match ORDER.load(Ordering::Relaxed) {
        0 => {
            let guess = DotOrder::of_cpu();
            // Another thread may have set it meanwhile: keep what is there.
            let _ = ORDER.compare_exchange(0, guess.code(), Ordering::Relaxed, Ordering::Relaxed);
            dot_order()
        }
        c => DotOrder::ALL[(c - 1) as usize],
    }
}

/// Sets the order for filters compiled from now on (the Python package's probe of NumPy).
pub fn set_dot_order(order: DotOrder) {
    ORDER.store(order.code(), Ordering::Relaxed);
}

/// Runs `f` with the filters compiled on this thread taking `order`, whatever the process's:
/// NumPy's result on another machine, or each order side by side (the tests).
pub fn with_dot_order<R>(order: DotOrder, f: impl FnOnce() -> R) -> R {
    /// Restores the thread's order when `f` returns or unwinds.
    struct Restore(Option<DotOrder>);
    impl Drop for Restore {
        fn drop(&mut self) {
            THIS_THREAD.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(THIS_THREAD.with(|c| c.replace(Some(order))));
    f()
}
