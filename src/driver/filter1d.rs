//! `scipy.ndimage.generic_filter1d`: a callback of the 1-D signature
//! `int f(double *input_line, intptr_t input_length, double *output_line, intptr_t output_length,
//! void *user_data)` over every line of an array along one axis.
//!
//! As scipy's `NI_GenericFilter1D`: each input line is converted to double and extended by
//! `filter_size // 2 + origin` values before it and `filter_size - filter_size // 2 - 1 - origin`
//! after it (`NI_ExtendLine`'s boundary modes, which agree with the n-d filters' mapping), the
//! callback fills the output line, and that line is cast to the output's type. Lines run in
//! parallel; a failure reports the first failing line in C order.
//!
//! An output that overlaps the input or itself runs scipy's own order instead: lines in batches
//! of as many as its 256000-byte line buffer holds, each batch's input lines all read (as they
//! then are) before its output lines are written ([`scipy_batch`]). A later batch then reads
//! what earlier ones wrote, exactly where scipy's does.

use super::alloc::{self, try_resize};
use super::array::{RawArray, RawArrayMut};
use super::error::DriverError;
use super::exec;
use super::executor::{Aliasing, Resolved};
use super::options::{Engine, Geometry, Options};
use super::plan::Plan;
use super::team;
use super::{Dtype, Footprint};
use crate::error::RuntimeError;
use crate::{interrupt, CallContext, Filter};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The 1-D callback's C type.
type Filter1dFn = unsafe extern "C" fn(*mut f64, isize, *mut f64, isize, *mut c_void) -> i32;

/// scipy's checks of `generic_filter1d`'s arguments after the output's shape, in its order:
/// `filter_size >= 1` (`RuntimeError('invalid filter size')`), the axis (NumPy's
/// `AxisError`), the origin (`ValueError('invalid origin')`); then the line's length extended by
/// the filter. Returns the line footprint's geometry, or `None` for an empty input (scipy takes
/// any `filter_size` for one, and nothing is computed).
pub(super) fn resolve(shape: &[usize], opts: &Options) -> Result<Option<Geometry>, DriverError> {
    let n = filter_size(opts)?;
    if n < 1 {
        return Err(DriverError::InvalidFilterSize);
    }
    let axis = line_axis(opts, shape.len())?;
    let origin = match opts.origin[..] {
        [] => 0,
        [origin] => origin,
        _ => {
            return Err(DriverError::SequenceLength {
                what: "origin",
                len: opts.origin.len(),
                expected: 1,
            })
        }
    };
    // In i128: sizes above i64::MAX must not wrap into the check.
    let centre = (n / 2) as i128 + origin as i128;
    if centre < 0 || centre >= n as i128 {
        return Err(DriverError::InvalidOrigin {
            axis,
            origin,
            size: n,
        });
    }
    if opts.region.is_some() {
        return Err(DriverError::BadArray(
            "generic_filter1d computes whole lines, not a region".into(),
        ));
    }
    if shape.contains(&0) {
        return Ok(None);
    }
    // At most `n - 1`, which the line's extension below must fit as well.
    if i64::try_from(centre).is_err() {
        return Err(DriverError::TooLarge(format!(
            "a filter of size {n} is too long for a line"
        )));
    }
    let Some(ext_len) = shape[axis].checked_add(n - 1) else {
        return Err(DriverError::TooLarge(format!(
            "a line of {} values extended by a filter of size {n} is too long",
            shape[axis]
        )));
    };
    // A line no allocation can hold fails as the line, before the footprint's taps (as many).
    if ext_len > isize::MAX as usize / std::mem::size_of::<f64>() {
        return Err(alloc::out_of_memory::<f64>(
            ext_len,
            "the extended input line",
        ));
    }
    Geometry::resolve(shape, opts).map(Some)
}

/// The `filter_size` of options made by [`Options::filter1d`].
fn filter_size(opts: &Options) -> Result<usize, DriverError> {
    match opts.footprint.shape() {
        &[n] if opts.footprint.is_from_size() => Ok(n),
        _ => Err(DriverError::BadArray(
            "generic_filter1d takes a filter_size, not a footprint (Options::filter1d)".into(),
        )),
    }
}

/// The one axis of options made by [`Options::filter1d`], from 0 (NumPy's `AxisError` outside
/// `-ndim..ndim`).
fn line_axis(opts: &Options, ndim: usize) -> Result<usize, DriverError> {
    let &[axis] = opts.axes.as_deref().unwrap_or_default() else {
        return Err(DriverError::BadArray(
            "generic_filter1d takes one axis (Options::filter1d)".into(),
        ));
    };
    let n = ndim as isize;
    match axis {
        a if (0..n).contains(&a) => Ok(a as usize),
        a if (-n..0).contains(&a) => Ok((a + n) as usize),
        axis => Err(DriverError::AxisError { axis, ndim }),
    }
}

/// Runs a resolved `generic_filter1d` on the CPU `engine`: lines in parallel where the arrays
/// are disjoint, else (and for [`Engine::Sequential`]) scipy's batches on this thread; the
/// native callback, or the reference interpreter for [`Engine::Interpreter`].
pub(super) fn run(engine: Engine, run: &Resolved<'_>) -> Result<(), DriverError> {
    let opts = run.options;
    let axis = line_axis(opts, run.input.shape.len())?;
    let n = run.geometry.fshape[axis];
    // The values the extension puts before the line (checked to fit by `resolve`).
    let before = (n / 2) as i64 + run.geometry.origins[axis] as i64;
    // The axis last: then lines are rows, in scipy's order.
    let last = |mut v: Vec<isize>| {
        let a = v.remove(axis);
        v.push(a);
        v
    };
    let mut shape = run.input.shape.clone();
    let len = shape.remove(axis);
    shape.push(len);
    let input = RawArray {
        shape: shape.clone(),
        strides: last(run.input.strides.clone()),
        ..run.input.clone()
    };
    let output = RawArrayMut {
        shape: shape.clone(),
        strides: last(run.output.strides.clone()),
        ..run.output.clone()
    };
    // The extension is the n-d filters' mapping along the line (NI_ExtendLine agrees with it).
    let fp = Footprint::from_size(&vec![1; shape.len()]);
    let plan = Plan::new(
        &Geometry::resolve(&shape, &Options::new(fp))?,
        run.mode,
        run.cval,
    )?;
    let filter = run.filter;
    let compute = match engine {
        Engine::Interpreter => LineCompute::Interpreter,
        // SAFETY: the entry of a `Sig::Filter1d` filter (`execute` checked) has this C type.
        _ => LineCompute::Native(unsafe {
            std::mem::transmute::<*const c_void, Filter1dFn>(filter.entry_address()?)
        }),
    };
    let job = Lines {
        input: &input,
        output: &output,
        plan: &plan,
        compute,
        filter,
        opts,
        len,
        ext_len: len + (n - 1),
        before,
        first_fail: AtomicUsize::new(usize::MAX),
        failure: Mutex::new(None),
        no_memory: Mutex::new(None),
        done: AtomicUsize::new(0),
        cancelled: AtomicBool::new(false),
    };
    if run.aliasing != Aliasing::Disjoint || engine == Engine::Sequential {
        interrupt::with_cancel(&job.cancelled, || job.run_batched());
        return job.outcome(axis);
    }
    let lines = plan.lines;
    let threads = exec::thread_count(opts.threads);
    let per = (lines / (threads * 16).max(1)).max(1);
    let chunks: Vec<(usize, usize)> = (0..lines)
        .step_by(per)
        .map(|l| (l, (l + per).min(lines)))
        .collect();
    team::for_each_init(
        threads,
        &chunks,
        || (job.caller(), Vec::new(), Vec::new()),
        |(caller, e, o), &c| interrupt::with_cancel(&job.cancelled, || job.run(c, caller, e, o)),
    );
    job.outcome(axis)
}

/// How lines are computed.
#[derive(Clone, Copy)]
enum LineCompute {
    /// The compiled callback, at this entry.
    Native(Filter1dFn),
    /// The reference interpreter ([`Filter::interpret_args`]).
    Interpreter,
}

/// A worker's means of computing a line: the native callback with the worker's own context
/// (its failure slot), or the interpreter.
enum Caller {
    Native(Filter1dFn, Arc<CallContext>),
    Interpreter,
}

/// One call's lines (the filtered axis last) and what the workers share while they run them.
struct Lines<'a> {
    input: &'a RawArray,
    output: &'a RawArrayMut,
    plan: &'a Plan,
    compute: LineCompute,
    filter: &'a Filter,
    opts: &'a Options,
    /// The line's length, and its length extended by the filter.
    len: usize,
    ext_len: usize,
    /// The values the extension puts before the line.
    before: i64,
    /// The first line whose callback failed, and its error: lines after it are skipped.
    first_fail: AtomicUsize,
    failure: Mutex<Option<(usize, RuntimeError)>>,
    no_memory: Mutex<Option<DriverError>>,
    /// Values written so far, for the progress callback.
    done: AtomicUsize,
    /// Set by `opts.cancel` or an interrupt seen by any worker (their `interrupt` cancel scope).
    cancelled: AtomicBool,
}

// SAFETY: as for the n-d driver: the input is read, each line of the output written by one task.
unsafe impl Sync for Lines<'_> {}

impl Lines<'_> {
    /// Filters lines `l0..l1` with a worker's context and line buffers, each line written as
    /// soon as it is computed (the output shares no byte with the input or with itself).
    fn run(
        &self,
        (l0, l1): (usize, usize),
        caller: &Caller,
        ext: &mut Vec<f64>,
        out: &mut Vec<f64>,
    ) {
        let mut idx = vec![0usize; self.input.shape.len() - 1];
        for l in l0..l1 {
            if l > self.first_fail.load(Ordering::Relaxed) || self.stopped() {
                return;
            }
            if !self.buffers(ext, out, 1) {
                return;
            }
            let (src, dst) = self.offsets(l, &mut idx);
            // SAFETY: the line lies in the input and in the output; the buffers have the
            // lengths passed.
            unsafe { self.plan.fill(self.input, Some(src), -self.before, ext) };
            if !self.call(l, caller, ext, out) {
                return;
            }
            // SAFETY: `dst` is line `l`'s offset in the output.
            unsafe { self.write(dst, out) };
        }
        self.progress(l1 - l0);
    }

    /// Filters every line in scipy's order, on this thread: batches of [`scipy_batch`] lines,
    /// each batch's input lines read before any of its output lines is written. A failing line
    /// leaves its batch unwritten, as scipy's does.
    fn run_batched(&self) {
        let caller = self.caller();
        let lines = self.plan.lines;
        let batch = scipy_batch(self.ext_len, lines);
        let (mut ext, mut out) = (Vec::new(), Vec::new());
        if !self.buffers(&mut ext, &mut out, batch) {
            return;
        }
        let mut idx = vec![0usize; self.input.shape.len() - 1];
        let mut dsts = Vec::with_capacity(batch);
        for b0 in (0..lines).step_by(batch) {
            let b1 = (b0 + batch).min(lines);
            dsts.clear();
            for (l, e) in (b0..b1).zip(ext.chunks_exact_mut(self.ext_len)) {
                if self.stopped() {
                    return;
                }
                let (src, dst) = self.offsets(l, &mut idx);
                // SAFETY: as in `run`.
                unsafe { self.plan.fill(self.input, Some(src), -self.before, e) };
                dsts.push(dst);
            }
            let lines = ext
                .chunks_exact_mut(self.ext_len)
                .zip(out.chunks_exact_mut(self.len));
            for (l, (e, o)) in (b0..b1).zip(lines) {
                if !self.call(l, &caller, e, o) {
                    return;
                }
            }
            for (&dst, o) in dsts.iter().zip(out.chunks_exact_mut(self.len)) {
                // SAFETY: the offsets of this batch's lines in the output.
                unsafe { self.write(dst, o) };
            }
            self.progress(b1 - b0);
        }
    }

    /// Whether the call was cancelled or interrupted (recording a cancel request).
    fn stopped(&self) -> bool {
        if self
            .opts
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            self.cancelled.store(true, Ordering::Relaxed);
        }
        interrupt::poll()
    }

    /// `ext` and `out` made `lines` extended input lines and output lines long; false (with the
    /// error recorded and the call cancelled) where memory runs out.
    fn buffers(&self, ext: &mut Vec<f64>, out: &mut Vec<f64>, lines: usize) -> bool {
        let size = |n: usize| n.saturating_mul(lines);
        if try_resize(ext, size(self.ext_len), 0.0, "the extended input line").is_ok()
            && try_resize(out, size(self.len), 0.0, "the output line").is_ok()
        {
            return true;
        }
        let mut slot = self.no_memory.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(alloc::out_of_memory::<f64>(
            size(self.ext_len),
            "the extended input line",
        ));
        self.cancelled.store(true, Ordering::Relaxed);
        false
    }

    /// The byte offsets of line `l` in the input and in the output.
    fn offsets(&self, l: usize, idx: &mut [usize]) -> (isize, isize) {
        self.plan.line_index(l, idx);
        let offset = |strides: &[isize]| -> isize {
            idx.iter().zip(strides).map(|(&i, &s)| i as isize * s).sum()
        };
        (offset(&self.input.strides), offset(&self.output.strides))
    }

    /// A worker's caller; a native one's context is made with the entry it calls.
    fn caller(&self) -> Caller {
        match self.compute {
            LineCompute::Native(f) => Caller::Native(f, self.filter.context_at(f as *const c_void)),
            LineCompute::Interpreter => Caller::Interpreter,
        }
    }

    /// The callback on line `l`'s extended input `ext`, into `out`; false where it failed (the
    /// failure recorded if it is the first in C order so far).
    fn call(&self, l: usize, caller: &Caller, ext: &mut [f64], out: &mut [f64]) -> bool {
        let error = match caller {
            Caller::Native(f, ctx) => {
                // SAFETY: the buffers have the lengths passed.
                let ok = unsafe {
                    f(
                        ext.as_mut_ptr(),
                        self.ext_len as isize,
                        out.as_mut_ptr(),
                        self.len as isize,
                        ctx.user_data(),
                    )
                };
                if ok == 1 {
                    return true;
                }
                let error = ctx.failure().unwrap_or_else(|| self.filter.describe(None));
                ctx.reset();
                error
            }
            Caller::Interpreter => {
                let args = crate::interp::Args {
                    values: ext,
                    coords: &[],
                    output: out,
                };
                match self.filter.interpret_args(args) {
                    Ok(_) => return true,
                    Err(error) => error,
                }
            }
        };
        let mut slot = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_none_or(|(q, _)| l < *q) {
            *slot = Some((l, error));
            self.first_fail.fetch_min(l, Ordering::Relaxed);
        }
        false
    }

    /// Writes an output line at byte offset `dst`, cast to the output's type.
    ///
    /// # Safety
    /// `dst` must be the offset of a line of the output.
    unsafe fn write(&self, dst: isize, out: &mut [f64]) {
        if self.output.dtype == Dtype::U64 {
            // scipy's line buffer (`NI_LineBufferToArray`) casts to uint64 with another
            // sequence than `generic_filter`'s: below -2**63 it stores 2**63, which is what
            // `Dtype::write` stores for a NaN (`dtype.rs`).
            const MIN_I64: f64 = -9223372036854775808.0;
            out.iter_mut()
                .filter(|v| **v < MIN_I64)
                .for_each(|v| *v = f64::NAN);
        }
        let stride = *self.output.strides.last().unwrap_or(&0);
        unsafe {
            self.output
                .dtype
                .write_line(self.output.ptr.wrapping_offset(dst), stride, out)
        };
    }

    /// Reports `lines` more lines done to the progress callback.
    fn progress(&self, lines: usize) {
        if let Some(p) = &self.opts.progress {
            let (total, len) = (self.plan.lines, self.len);
            let d = self.done.fetch_add(lines * len, Ordering::Relaxed) + lines * len;
            p(d, total * len);
        }
    }

    /// The call's result once every worker is done: out of memory, cancelled, or the first failing
    /// line's error at its position (the filtered axis, `axis`, at 0).
    fn outcome(self, axis: usize) -> Result<(), DriverError> {
        if let Some(e) = self
            .no_memory
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
        {
            return Err(e);
        }
        if self.cancelled.load(Ordering::Relaxed) {
            return Err(DriverError::Cancelled);
        }
        match self.failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some((line, error)) => {
                let mut idx = vec![0usize; self.input.shape.len() - 1];
                self.plan.line_index(line, &mut idx);
                idx.insert(axis, 0);
                Err(DriverError::Filter {
                    error,
                    position: idx,
                })
            }
            None => Ok(()),
        }
    }
}

/// The lines of scipy's line buffers (`NI_AllocateLineBuffer` with `BUFFER_SIZE` 256000 bytes):
/// as many extended input lines of doubles as that holds, at least one, at most `lines`.
fn scipy_batch(ext_len: usize, lines: usize) -> usize {
    const BUFFER_SIZE: usize = 256_000;
    let line_bytes = ext_len.saturating_mul(std::mem::size_of::<f64>());
    (BUFFER_SIZE / line_bytes.max(1)).max(1).min(lines.max(1))
}
