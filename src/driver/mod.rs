//! The native n-d driver: `scipy.ndimage.generic_filter` semantics, multithreaded, with the
//! filter fused into its inner loop.
//!
//! scipy's `generic_filter` holds the GIL for its whole loop, converts every neighbour through a
//! per-element type switch and calls the callback through a pointer. Here the filter and the
//! footprint are known before the loop starts, so:
//! - the filter is specialised to the footprint's size ([`crate::Filter::specialize`]), which
//!   unrolls its reductions and turns medians into sorting networks;
//! - a *row kernel* is compiled from that same IR ([`crate::jit::kernel`]): per output line it
//!   reads each neighbour directly from the input rows at a fixed offset, with no gather and no
//!   call per pixel;
//! - lines are spread over the calling thread and helpers ([`team`]); the input is converted to f64 a line at a time, and
//!   only near the edges are values taken from the boundary mode.
//!
//! The result equals `scipy.ndimage.generic_filter(input, <ndjit's callable>, ...)` bit for bit:
//! the same footprint, size, origin and axes rules and errors ([`Options`]), the same boundary
//! modes ([`Mode`]), the same conversion of every input dtype to double and the same C cast back
//! ([`Dtype`]), the same buffer order (row-major over the footprint, `true` entries only), and the
//! error of the first failing pixel in C order.
//!
//! Every run goes through [`execute`]: it validates the arguments, resolves the geometry and
//! specialises the filter, then hands the resolved run to an [`Executor`] (the CPU engines of
//! [`Engine`] here; the GPU in `ndjit-gpu`).
//!
//! Entry points: [`generic_filter_raw`] on dtype-erased arrays (for the Python package and the C
//! ABI), [`generic_filter`] / [`generic_filter_into`] on `ndarray` views. `generic_filter1d`
//! (callbacks of its signature, given whole lines) is a run of the same [`execute`] with options
//! made by [`Options::filter1d`].

mod alloc;
mod array;
mod cache;
mod dtype;
mod error;
mod exec;
mod executor;
mod filter1d;
mod footprint;
mod mode;
mod options;
mod plan;
mod rank;
mod sequential;
mod team;
mod typed;

pub use array::{c_strides, checked_c_strides, RawArray, RawArrayMut};
pub use cache::Lru;
pub use dtype::Dtype;
pub use error::DriverError;
pub use executor::{execute, Aliasing, Executor, Resolved};
pub use footprint::Footprint;
pub use mode::Mode;
pub use options::{Engine, Function, Geometry, Options, Progress};
pub use rank::{
    last_nan_pixels, last_patched, last_run, rank_form, rank_stat, Mix, NanRule, Positions,
    RankForm, RankStat,
};
pub use typed::{generic_filter, generic_filter_into, Element};

use crate::Filter;

/// The most taps for which the filter is specialised to the footprint's size and fused into a row
/// kernel. Both are unrolled over the taps, so compiling them takes time and memory in proportion:
/// measured on a 1×n footprint, 0.13 s and 75 MB of peak RSS at 16384 taps, 0.7 s and 130 MB at
/// 65536, 3.8 s and 330 MB at 262144; 10^7 taps took 10 GB in Cranelift's register allocator and
/// aborted. Below this the kernel is the faster engine even for a filter reading every tap (8281
/// taps of `np.mean(x)` on 256²: 1.0 s against 1.4 s through the callback); above it the general
/// callback on a gathered buffer, which needs no compilation, is used (`benches/unroll_threshold.py`:
/// 65537 taps on 8×8 take 0.02 s).
pub(crate) const MAX_UNROLLED_TAPS: usize = 1 << 16;

/// `scipy.ndimage.generic_filter(input, filter, output=output, ...)` on dtype-erased arrays, on
/// the CPU engine `opts.engine` ([`execute`] with that executor); `generic_filter1d` for options
/// made by [`Options::filter1d`].
///
/// Validates `opts` against the input as scipy does (its errors, in its order: see
/// [`DriverError`]), checks that `output` has the input's shape, then fills `output`. An empty
/// input calls nothing. When `output` overlaps `input` (or itself), scipy's sequential in-place
/// behaviour is reproduced ([`Engine::Sequential`]); otherwise the work runs on `opts.threads`
/// threads.
///
/// # Safety
/// `input` must describe memory valid for reading, and `output` memory valid for writing, at every
/// element its shape and strides reach, of its dtype, for the duration of the call.
pub unsafe fn generic_filter_raw(
    input: &RawArray,
    output: &RawArrayMut,
    filter: &Filter,
    opts: &Options,
) -> Result<(), DriverError> {
    unsafe { execute(&opts.engine, input, output, filter, opts) }
}
