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
//! Entry points: [`generic_filter_raw`] on dtype-erased arrays (for the Python package and the C
//! ABI), [`generic_filter`] / [`generic_filter_into`] on `ndarray` views, and
//! [`generic_filter1d_raw`] for callbacks of `generic_filter1d`'s signature.

mod alloc;
mod array;
mod cache;
mod dtype;
mod error;
mod exec;
mod filter1d;
mod footprint;
mod mode;
mod options;
mod plan;
mod sequential;
mod team;
mod typed;

pub use array::{c_strides, RawArray, RawArrayMut};
pub use dtype::Dtype;
pub use error::DriverError;
pub use filter1d::{generic_filter1d_raw, Filter1dOptions};
pub use footprint::Footprint;
pub use mode::Mode;
pub use options::{Engine, Options, Progress};
pub use typed::{generic_filter, generic_filter_into, Element};

use crate::jit::kernel::Taps;
use crate::Filter;
use exec::{Compute, Job};
use options::Geometry;
use plan::Plan;

/// The most taps for which the filter is specialised to the footprint's size and fused into a row
/// kernel. Both are unrolled over the taps, so compiling them takes time and memory in proportion:
/// measured on a 1×n footprint, 0.13 s and 75 MB of peak RSS at 16384 taps, 0.7 s and 130 MB at
/// 65536, 3.8 s and 330 MB at 262144; 10^7 taps took 10 GB in Cranelift's register allocator and
/// aborted. Below this the kernel is the faster engine even for a filter reading every tap (8281
/// taps of `np.mean(x)` on 256²: 1.0 s against 1.4 s through the callback); above it the general
/// callback on a gathered buffer, which needs no compilation, is used (`benches/unroll_threshold.py`:
/// 65537 taps on 8×8 take 0.02 s).
const MAX_UNROLLED_TAPS: usize = 1 << 16;

/// `scipy.ndimage.generic_filter(input, filter, output=output, ...)` on dtype-erased arrays.
///
/// Validates `opts` against the input as scipy does (its errors, in its order: see
/// [`DriverError`]), checks that `output` has the input's shape, then fills `output`. An empty
/// input calls nothing. When `output` overlaps `input`, scipy's sequential in-place behaviour is
/// reproduced ([`Engine::Sequential`]); otherwise the work runs on `opts.threads` threads.
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
    input.check("input")?;
    output.check("output")?;
    if filter.signature() != crate::Sig::Filter {
        return Err(DriverError::WrongSignature {
            expected: crate::Sig::Filter.capsule_name(),
            found: filter.signature().capsule_name(),
        });
    }
    let geom = Geometry::resolve(&input.shape, opts)?;
    if output.shape != input.shape {
        return Err(DriverError::OutputShape {
            input: input.shape.clone(),
            output: output.shape.clone(),
        });
    }
    if input.is_empty() {
        return Ok(());
    }
    // A 0-d array is one pixel on an axis of length 1.
    let zero_d = input.shape.is_empty();
    let (input, output) = if zero_d {
        (
            RawArray {
                shape: vec![1],
                strides: vec![0],
                ..input.clone()
            },
            RawArrayMut {
                shape: vec![1],
                strides: vec![0],
                ..output.clone()
            },
        )
    } else {
        (input.clone(), output.clone())
    };
    let n = geom.tap_count();
    // The filter compiled for this footprint's size; the general one if that fails to compile
    // (it then fails the same way at run time, where scipy would), or if the footprint is too
    // large for unrolled code to pay.
    let spec = match n <= MAX_UNROLLED_TAPS {
        true => cache::specialised(filter, n).unwrap_or_else(|| filter.clone()),
        false => filter.clone(),
    };
    let result = run(&geom, &input, &output, &spec, opts);
    match result {
        Err(DriverError::Filter { error, .. }) if zero_d => Err(DriverError::Filter {
            error,
            position: Vec::new(),
        }),
        r => r,
    }
}

fn run(
    geom: &Geometry,
    input: &RawArray,
    output: &RawArrayMut,
    filter: &Filter,
    opts: &Options,
) -> Result<(), DriverError> {
    let cancel = opts.cancel.as_deref();
    let overlap = array::overlaps(input.extent(), output.extent());
    if overlap || opts.engine == Engine::Sequential {
        return sequential::run(geom, input, output, filter, opts);
    }
    let plan = Plan::new(geom, opts.mode, opts.cval)?;
    let kernel = match (opts.engine, filter.specialized_ir()) {
        (Engine::Auto, Some(_)) if geom.tap_count() <= MAX_UNROLLED_TAPS => {
            let taps = Taps {
                slot: plan.tap_slot.clone(),
                col: plan.tap_col.clone(),
                slots: plan.slots.len(),
            };
            cache::kernel(filter, &taps)
        }
        _ => None,
    };
    let compute = match (&kernel, opts.engine) {
        (Some(kernel), _) => Compute::Kernel { kernel, filter },
        (None, Engine::Interpreter) => Compute::Interpreter(filter),
        (None, _) => Compute::Callback(filter),
    };
    let job = Job {
        plan: &plan,
        input,
        output,
        compute,
        progress: opts.progress.as_ref(),
        cancel,
    };
    exec::run(&job, exec::thread_count(opts.threads))
}
