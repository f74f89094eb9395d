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
use super::executor::{check_call, snapshot_if_copied, Aliasing};
use super::mode::Mode;
use super::options::{Geometry, Options, Progress};
use super::plan::Plan;
use super::team;
use super::{Dtype, Footprint};
use crate::error::RuntimeError;
use crate::{interrupt, Filter, Sig};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The 1-D callback's C type.
type Filter1dFn = unsafe extern "C" fn(*mut f64, isize, *mut f64, isize, *mut c_void) -> i32;

/// The arguments of `generic_filter1d` besides the arrays and the function.
#[derive(Clone)]
pub struct Filter1dOptions {
    pub filter_size: usize,
    /// The axis along which lines run; negative counts from the end, as in NumPy.
    pub axis: isize,
    pub mode: Mode,
    pub cval: f64,
    pub origin: isize,
    /// Worker threads; `None` uses all cores.
    pub threads: Option<usize>,
    pub progress: Option<Progress>,
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Filter1dOptions {
    /// scipy's defaults: `axis=-1`, `mode='reflect'`, `cval=0.0`, `origin=0`, all cores.
    pub fn new(filter_size: usize) -> Filter1dOptions {
        Filter1dOptions {
            filter_size,
            axis: -1,
            mode: Mode::Reflect,
            cval: 0.0,
            origin: 0,
            threads: None,
            progress: None,
            cancel: None,
        }
    }
}

/// `scipy.ndimage.generic_filter1d(input, filter, filter_size, axis, output, mode, cval, origin)`
/// for a filter compiled with [`Sig::Filter1d`]. scipy's checks, in its order: the output's
/// shape, `filter_size >= 1` (`RuntimeError('invalid filter size')`), the axis (NumPy's
/// `AxisError`), the origin (`ValueError('invalid origin')`).
///
/// # Safety
/// As [`super::generic_filter_raw`].
pub unsafe fn generic_filter1d_raw(
    input: &RawArray,
    output: &RawArrayMut,
    filter: &Filter,
    opts: &Filter1dOptions,
) -> Result<(), DriverError> {
    let (axis, centre) = check_args(input, output, filter, opts)?;
    if input.is_empty() {
        return Ok(());
    }
    // Overlapping arrays run scipy's batches, also where the input is read from a snapshot as
    // scipy's copy: they decide what a failing line leaves written.
    let aliasing = Aliasing::of(input, output);
    // SAFETY: the caller's contract (valid arrays).
    let snapshot = unsafe { snapshot_if_copied(input, output) }?;
    let input = snapshot.as_ref().map_or(input, |(_, copy)| copy);
    let n = opts.filter_size;
    // The axis last: then lines are rows, in scipy's order.
    let last = |mut v: Vec<isize>| {
        let a = v.remove(axis);
        v.push(a);
        v
    };
    let mut shape = input.shape.clone();
    let len = shape.remove(axis);
    shape.push(len);
    let input = RawArray {
        shape: shape.clone(),
        strides: last(input.strides.clone()),
        ..input.clone()
    };
    let output = RawArrayMut {
        shape: shape.clone(),
        strides: last(output.strides.clone()),
        ..output.clone()
    };
    // The extension is the n-d filters' mapping along the line (NI_ExtendLine agrees with it).
    let fp = Footprint::from_size(&vec![1; shape.len()]);
    let plan = Plan::new(
        &Geometry::resolve(&shape, &Options::new(fp))
            .map_err(|_| DriverError::InvalidFilterSize)?,
        opts.mode,
        opts.cval,
    )?;
    // At most `n - 1`, which the line's extension below must fit as well.
    let before = i64::try_from(centre).map_err(|_| {
        DriverError::TooLarge(format!("a filter of size {n} is too long for a line"))
    })?;
    let ext_len = len.checked_add(n - 1).ok_or_else(|| {
        DriverError::TooLarge(format!(
            "a line of {len} values extended by a filter of size {n} is too long"
        ))
    })?;
    let entry = filter.entry_address()?;
    let job = Lines {
        input: &input,
        output: &output,
        plan: &plan,
        // SAFETY: the entry of a `Sig::Filter1d` filter has this C type.
        f: unsafe { std::mem::transmute::<*const c_void, Filter1dFn>(entry) },
        filter,
        opts,
        len,
        ext_len,
        before,
        first_fail: AtomicUsize::new(usize::MAX),
        failure: Mutex::new(None),
        no_memory: Mutex::new(None),
        done: AtomicUsize::new(0),
        cancelled: AtomicBool::new(false),
    };
    if aliasing != Aliasing::Disjoint {
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
        // Each worker's context is made with the entry generated above (which is `f`).
        || {
            (
                filter.context_at(job.f as *const c_void),
                Vec::new(),
                Vec::new(),
            )
        },
        |(ctx, e, o), &c| interrupt::with_cancel(&job.cancelled, || job.run(c, ctx, e, o)),
    );
    job.outcome(axis)
}

/// scipy's checks of the arguments, in its order; returns the axis (from 0) and the position of
/// the filter's centre in it.
fn check_args(
    input: &RawArray,
    output: &RawArrayMut,
    filter: &Filter,
    opts: &Filter1dOptions,
) -> Result<(usize, i128), DriverError> {
    check_call(input, output, filter, Sig::Filter1d)?;
    if output.shape != input.shape {
        return Err(DriverError::OutputShape {
            input: input.shape.clone(),
            output: output.shape.clone(),
        });
    }
    let n = opts.filter_size;
    if n < 1 {
        return Err(DriverError::InvalidFilterSize);
    }
    let ndim = input.shape.len() as isize;
    let axis = if opts.axis < 0 {
        opts.axis + ndim
    } else {
        opts.axis
    };
    if !(0..ndim).contains(&axis) {
        return Err(DriverError::AxisError {
            axis: opts.axis,
            ndim: ndim as usize,
        });
    }
    let axis = axis as usize;
    // In i128: sizes above i64::MAX must not wrap into the check.
    let centre = (n / 2) as i128 + opts.origin as i128;
    if centre < 0 || centre >= n as i128 {
        return Err(DriverError::InvalidOrigin {
            axis,
            origin: opts.origin,
            size: n,
        });
    }
    Ok((axis, centre))
}

/// One call's lines (the filtered axis last) and what the workers share while they run them.
struct Lines<'a> {
    input: &'a RawArray,
    output: &'a RawArrayMut,
    plan: &'a Plan,
    f: Filter1dFn,
    filter: &'a Filter,
    opts: &'a Filter1dOptions,
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
        ctx: &crate::CallContext,
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
            if !self.call(l, ctx, ext, out) {
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
        let ctx = self.filter.context_at(self.f as *const c_void);
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
                if !self.call(l, &ctx, e, o) {
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

    /// The callback on line `l`'s extended input `ext`, into `out`; false where it failed (the
    /// failure recorded if it is the first in C order so far).
    fn call(&self, l: usize, ctx: &crate::CallContext, ext: &mut [f64], out: &mut [f64]) -> bool {
        // SAFETY: the buffers have the lengths passed.
        let ok = unsafe {
            (self.f)(
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
