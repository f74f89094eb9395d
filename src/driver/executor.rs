//! The seam between the driver and what computes: every face (Python, C, the CLI, Rust callers)
//! goes through [`execute`], which owns scipy's validation and errors, the geometry, the axis and
//! overlap policies and the specialisation cache, and hands an [`Executor`] a [`Resolved`] run.
//!
//! An executor only computes: the CPU engines ([`Engine`]: row kernel, C callback, interpreter,
//! scipy's sequential loop) here, the GPU in `ndjit-gpu`. None of them re-validates the options
//! or has boundary, origin or dtype rules of its own; they read them from the plan.

use super::array::{self, RawArray, RawArrayMut};
use super::error::DriverError;
use super::exec::{self, Compute, Job};
use super::mode::Mode;
use super::options::{Engine, Function, Geometry, Options};
use super::plan::Plan;
use super::{cache, filter1d, rank, sequential, MAX_UNROLLED_TAPS};
use crate::jit::kernel::Taps;
use crate::{Filter, Sig};

/// How the output's memory relates to the input's: whether pixels may be computed in any order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aliasing {
    /// Disjoint arrays, no output element sharing bytes with another: any order gives scipy's
    /// result.
    Disjoint,
    /// The output overlaps the input. scipy's loop computes the pixels in C order, each reading
    /// the input as it then is, so later pixels see earlier results.
    OverlapsInput,
    /// Output elements share bytes (a zero stride, say): parallel writers would race, so they are
    /// written one at a time in C order, as scipy does.
    SelfOverlapping,
}

impl Aliasing {
    pub(crate) fn of(input: &RawArray, output: &RawArrayMut) -> Aliasing {
        if array::overlaps(input.extent(), output.extent()) {
            Aliasing::OverlapsInput
        } else if !output.elements_disjoint() {
            Aliasing::SelfOverlapping
        } else {
            Aliasing::Disjoint
        }
    }
}

/// The input's snapshot (its memory, to keep for the run, and its description) where scipy
/// reads it from a copy beside this output: scipy reads an unaligned input, and writes an
/// unaligned output, through an aligned copy (NumPy's ALIGNED and WRITEBACKIFCOPY requests), so
/// its filter then reads the input as it was, whatever the output overwrites. `None`: read the
/// input in place. `aliasing` is [`Aliasing::of`] the two (computed once per call).
///
/// # Safety
/// Both arrays must be valid for the elements their shapes and strides reach.
pub(crate) unsafe fn snapshot_if_copied(
    input: &RawArray,
    output: &RawArrayMut,
    aliasing: Aliasing,
) -> Result<Option<(Vec<u64>, RawArray)>, DriverError> {
    match aliasing {
        Aliasing::OverlapsInput if !(input.is_aligned() && output.is_aligned()) => {
            // SAFETY: the caller's contract.
            unsafe { input.snapshot() }.map(Some)
        }
        _ => Ok(None),
    }
}

/// A validated run, resolved for an executor.
pub struct Resolved<'a> {
    /// The footprint and origins over every axis, and the taps in buffer order.
    pub geometry: &'a Geometry,
    /// The mode as applied inside filters (the `grid-*` aliases resolved).
    pub mode: Mode,
    pub cval: f64,
    /// For executors that run native code, the filter specialised to `geometry.tap_count()`
    /// values where that compiles and the footprint is small enough for unrolled code to pay;
    /// else the filter as compiled.
    pub filter: &'a Filter,
    /// The arrays, a 0-d pair as shape `[1]` (then [`Resolved::rank`] is 0). The pointers are
    /// whatever memory the executor addresses: host memory for the CPU, device memory for a GPU.
    pub input: &'a RawArray,
    pub output: &'a RawArrayMut,
    /// The caller's rank: error positions have this many coordinates.
    pub rank: usize,
    pub aliasing: Aliasing,
    /// Threads, progress reports and cancellation, for the executors that use them.
    pub options: &'a Options,
}

impl Resolved<'_> {
    /// A pixel's position as the caller sees it: none for a 0-d input.
    pub fn position(&self, mut position: Vec<usize>) -> Vec<usize> {
        position.drain(..position.len().saturating_sub(self.rank));
        position
    }
}

/// Computes a resolved run. Every executor gives scipy's result bit for bit, and the error of
/// the first failing pixel in C order.
pub trait Executor {
    /// The executor's errors: the driver's, plus its own (a missing device, say).
    type Error: From<DriverError>;

    /// Whether the executor calls the filter's native code, which the driver then compiles for
    /// the footprint's size (cached). One that makes code of its own from the filter's IR (the
    /// GPU) says `false`, and gets the filter as it was compiled.
    fn runs_native_code(&self) -> bool {
        true
    }

    /// Whether the executor honours [`Options::region`] (computes only that box). One that
    /// does not is refused a run with a region.
    fn computes_regions(&self) -> bool {
        false
    }

    /// Whether the executor runs `generic_filter1d` ([`Function::GenericFilter1d`]: a callback
    /// of whole lines). One that does not is refused such a run.
    fn runs_filter1d(&self) -> bool {
        false
    }

    /// # Safety
    /// The arrays' pointers must address memory this executor can read (input) and write
    /// (output) at every element their shapes and strides reach, for the whole call.
    unsafe fn execute(&self, run: &Resolved<'_>) -> Result<(), Self::Error>;
}

/// `scipy.ndimage.generic_filter(input, filter, output=output, ...)` (or `generic_filter1d`, as
/// `opts.function` says) through `executor`.
///
/// Validates `opts` against the input as scipy does (its errors, in its order: see
/// [`DriverError`]), checks the output's shape, specialises the filter to the footprint's size
/// (cached) for an executor that runs native code, and runs `executor`. An empty input calls
/// nothing.
///
/// # Safety
/// As [`Executor::execute`]: the arrays must be valid, for `executor`, at every element their
/// shapes and strides reach, for the duration of the call.
pub unsafe fn execute<E: Executor + ?Sized>(
    executor: &E,
    input: &RawArray,
    output: &RawArrayMut,
    filter: &Filter,
    opts: &Options,
) -> Result<(), E::Error> {
    // Specialising and planning walk the IR recursively: a caller's small stack must not matter.
    // SAFETY: the caller's contract, passed on unchanged.
    crate::with_stack(|| unsafe { execute_checked(executor, input, output, filter, opts) })
}

/// [`execute`]'s body, on a stack with room for the IR walks.
///
/// # Safety
/// As [`execute`].
unsafe fn execute_checked<E: Executor + ?Sized>(
    executor: &E,
    input: &RawArray,
    output: &RawArrayMut,
    filter: &Filter,
    opts: &Options,
) -> Result<(), E::Error> {
    let geometry = validate(input, output, filter, opts)?;
    if opts.region.is_some() && !executor.computes_regions() {
        return Err(DriverError::BadArray(
            "this executor computes whole arrays, not a region".into(),
        )
        .into());
    }
    if opts.function == Function::GenericFilter1d && !executor.runs_filter1d() {
        return Err(DriverError::BadArray(
            "this executor runs generic_filter, not generic_filter1d".into(),
        )
        .into());
    }
    // An empty input calls nothing (its geometry is not resolved: scipy's generic_filter1d
    // takes any filter_size for one).
    let Some(geometry) = geometry else {
        return Ok(());
    };
    let rank = input.shape.len();
    // A 0-d array is one pixel on an axis of length 1.
    let (input, output) = match rank {
        0 => (
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
        ),
        _ => (input.clone(), output.clone()),
    };
    let aliasing = Aliasing::of(&input, &output);
    // SAFETY: the caller's contract (valid arrays).
    let snapshot = unsafe { snapshot_if_copied(&input, &output, aliasing) }?;
    let (input, aliasing) = match &snapshot {
        None => (&input, aliasing),
        Some((_, copy)) => match opts.function {
            // Pixels read the snapshot, whose values no order changes.
            Function::GenericFilter => (copy, Aliasing::of(copy, &output)),
            // Lines keep scipy's batches over its copy as well: they decide what a failing
            // line leaves written.
            Function::GenericFilter1d => (copy, aliasing),
        },
    };
    let n = geometry.tap_count();
    // The filter compiled for this footprint's size; the general one if that fails to compile
    // (it then fails the same way at run time, where scipy would), or if the footprint is too
    // large for unrolled code to pay. (A generic_filter1d callback gets whole lines: there is no
    // size to specialise to.)
    let specialise = executor.runs_native_code()
        && opts.function == Function::GenericFilter
        && n <= MAX_UNROLLED_TAPS;
    let filter = match specialise {
        true => cache::specialised(filter, n).unwrap_or_else(|| filter.clone()),
        false => filter.clone(),
    };
    let run = Resolved {
        geometry: &geometry,
        mode: opts.mode.in_filter(),
        cval: opts.cval,
        filter: &filter,
        aliasing,
        input,
        output: &output,
        rank,
        options: opts,
    };
    unsafe { executor.execute(&run) }
}

/// scipy's checks of the arguments of `opts.function`, in its order, and the geometry they
/// resolve to; `None` for an empty input, where nothing is computed.
fn validate(
    input: &RawArray,
    output: &RawArrayMut,
    filter: &Filter,
    opts: &Options,
) -> Result<Option<Geometry>, DriverError> {
    let output_shape = || match output.shape == input.shape {
        true => Ok(()),
        false => Err(DriverError::OutputShape {
            input: input.shape.clone(),
            output: output.shape.clone(),
        }),
    };
    match opts.function {
        Function::GenericFilter => {
            check_call(input, output, filter, Sig::Filter)?;
            let geometry = Geometry::resolve(&input.shape, opts)?;
            output_shape()?;
            opts.region_pieces(&input.shape)?; // checked as the arguments are
            Ok((!input.is_empty()).then_some(geometry))
        }
        Function::GenericFilter1d => {
            check_call(input, output, filter, Sig::Filter1d)?;
            output_shape()?;
            filter1d::resolve(&input.shape, opts)
        }
    }
}

/// The arrays' descriptions, and `filter`'s signature against the one the entry point calls.
pub(crate) fn check_call(
    input: &RawArray,
    output: &RawArrayMut,
    filter: &Filter,
    sig: Sig,
) -> Result<(), DriverError> {
    input.check("input")?;
    output.check("output")?;
    if filter.signature() != sig {
        return Err(DriverError::WrongSignature {
            expected: sig.capsule_name(),
            found: filter.signature().capsule_name(),
        });
    }
    Ok(())
}

/// The CPU engines. Whatever the engine, an output that overlaps the input or itself runs
/// scipy's sequential loop, the only order that reproduces scipy's result there.
impl Executor for Engine {
    type Error = DriverError;

    fn computes_regions(&self) -> bool {
        true
    }

    fn runs_filter1d(&self) -> bool {
        true
    }

    unsafe fn execute(&self, run: &Resolved<'_>) -> Result<(), DriverError> {
        if run.options.function == Function::GenericFilter1d {
            return filter1d::run(*self, run);
        }
        rank::forget_last_run();
        let result = match (self, run.aliasing) {
            (Engine::Sequential, _) | (_, Aliasing::OverlapsInput | Aliasing::SelfOverlapping) => {
                let interpret = *self == Engine::Interpreter;
                sequential::run(run, interpret)
            }
            (engine, Aliasing::Disjoint) => parallel(*engine, run),
        };
        result.map_err(|e| match e {
            DriverError::Filter { error, position } => DriverError::Filter {
                error,
                position: run.position(position),
            },
            e => e,
        })
    }
}

/// The parallel engines: the row kernel where one compiles for this footprint, else the C
/// callback (or the interpreter) on gathered neighbourhoods.
fn parallel(engine: Engine, run: &Resolved<'_>) -> Result<(), DriverError> {
    let (geom, filter) = (run.geometry, run.filter);
    let plan = Plan::new(geom, run.mode, run.cval)?;
    // The pixels left to this engine: all of them (or the region's), or those the rank
    // executor could not prove. (The rank executor computes every pixel, also outside a
    // region: it runs none of the filter's code, so nothing there can fail.)
    // (`execute` checked the box against the caller's shape; a 0-d input's one pixel is all.)
    let region = match run.rank {
        0 => None,
        _ => run.options.region_pieces(&geom.shape)?,
    };
    let mut pieces = region.clone();
    if engine == Engine::Auto {
        match rank::try_run(run, &plan) {
            Some(rank::Taken::Done(result)) => return result,
            Some(rank::Taken::Patch(p)) => {
                rank::set_patched(&p);
                let nan = Job {
                    plan: &plan,
                    input: run.input,
                    output: run.output,
                    compute: Compute::Value(f64::NAN),
                    progress: None,
                    cancel: run.options.cancel.as_deref(),
                };
                exec::run_pieces(&nan, &p.nan, exec::thread_count(run.options.threads))?;
                if p.recomputed.is_empty() {
                    // No general engine (nor its row kernel's compilation) for NaN alone.
                    return Ok(());
                }
                pieces = Some(match &region {
                    Some(region) => intersect(&p.recomputed, region),
                    None => p.recomputed,
                });
            }
            None => {}
        }
    }
    let kernel = match (engine, filter.specialized_ir()) {
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
    let compute = match (&kernel, engine) {
        (Some(kernel), _) => Compute::Kernel { kernel, filter },
        (None, Engine::Interpreter) => Compute::Interpreter(filter),
        (None, _) => Compute::Callback(filter),
    };
    let job = Job {
        plan: &plan,
        input: run.input,
        output: run.output,
        compute,
        progress: run.options.progress.as_ref(),
        cancel: run.options.cancel.as_deref(),
    };
    let threads = exec::thread_count(run.options.threads);
    match pieces {
        Some(pieces) => exec::run_pieces(&job, &pieces, threads),
        None => exec::run(&job, threads),
    }
}

/// The pixels in both sets of increasing, disjoint C-order ranges.
fn intersect(a: &[(usize, usize)], b: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let (mut i, mut j, mut out) = (0, 0, vec![]);
    while i < a.len() && j < b.len() {
        let (lo, hi) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if lo < hi {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}
