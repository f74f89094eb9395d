//! Running a [`Plan`] over the pixels: chunks of lines, in parallel ([`team`]), in C order within a
//! chunk.
//!
//! Each chunk is a run of consecutive pixels in C order (whole lines, or pieces of one long line).
//! Its worker fills, per slot, the input values a line segment needs (converted to f64 and
//! extended past the ends by the mode), then computes the segment one of three ways:
//! - a row kernel reads them in place; for f64 input with contiguous rows it reads the input
//!   itself in the interior, and small extended strips only near the two ends;
//! - the C callback, or the interpreter, on a buffer gathered per pixel.
//!
//! A failing pixel ends its chunk. Chunks after the earliest failure known so far are skipped, and
//! every chunk before it runs to its end, so the error reported is the one of the first failing
//! pixel in C order, as in scipy's sequential loop.

use super::alloc::try_vec;
use super::array::{RawArray, RawArrayMut};
use super::error::DriverError;
use super::options::Progress;
use super::plan::Plan;
use super::team;
use crate::context::CallContext;
use crate::error::RuntimeError;
use crate::interrupt;
use crate::jit::kernel::RowKernel;
use crate::Filter;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How each output value is computed.
pub(crate) enum Compute<'a> {
    Kernel {
        kernel: &'a RowKernel,
        filter: &'a Filter,
    },
    Callback(&'a Filter),
    Interpreter(&'a Filter),
    /// Every pixel's result is this value, proven without running the filter (the NaN of a
    /// window holding one, where the filter's NaN propagates: see `rank::patch`).
    Value(f64),
}

pub(crate) struct Job<'a> {
    pub plan: &'a Plan,
    pub input: &'a RawArray,
    pub output: &'a RawArrayMut,
    pub compute: Compute<'a>,
    pub progress: Option<&'a Progress>,
    pub cancel: Option<&'a AtomicBool>,
}

// SAFETY: the job's arrays are raw memory the caller vouches for (`generic_filter_raw`'s contract);
// the input is only read, and each chunk writes a disjoint set of output pixels (the caller has
// checked that the output does not overlap the input). Filters and kernels are `Sync`.
unsafe impl Sync for Job<'_> {}

/// What the workers share.
struct Shared {
    /// The C-order index of the earliest failing pixel so far (`usize::MAX`: none).
    first_fail: AtomicUsize,
    failure: Mutex<Option<(usize, RuntimeError)>>,
    done: AtomicUsize,
    /// Set by [`Options::cancel`](super::Options::cancel) or an interrupt seen by any worker
    /// (each worker's [`interrupt::with_cancel`] flag): every worker stops.
    cancelled: AtomicBool,
    /// A worker's scratch memory that could not be allocated.
    no_memory: Mutex<Option<DriverError>>,
}

/// Runs the job on `threads` threads (1: on the calling thread).
pub(crate) fn run(job: &Job, threads: usize) -> Result<(), DriverError> {
    let plan = job.plan;
    if plan.lines * plan.len == 0 {
        return Ok(());
    }
    run_pieces(job, &chunks(plan, threads, job.progress.is_some()), threads)
}

/// Runs the job over these pixels only: ranges `[p0, p1)` in C order, in increasing order (the
/// rank executor leaves the windows it cannot prove to the general engine this way).
pub(crate) fn run_pieces(
    job: &Job,
    chunks: &[(usize, usize)],
    threads: usize,
) -> Result<(), DriverError> {
    let plan = job.plan;
    let total = chunks.iter().map(|(p0, p1)| p1 - p0).sum();
    if total == 0 {
        return Ok(());
    }
    let shared = Shared {
        first_fail: AtomicUsize::new(usize::MAX),
        failure: Mutex::new(None),
        done: AtomicUsize::new(0),
        cancelled: AtomicBool::new(false),
        no_memory: Mutex::new(None),
    };
    let direct = Direct::new(job);
    team::for_each_init(
        threads,
        chunks,
        || Worker::new(job),
        |w, &c| match w {
            Ok(w) => interrupt::with_cancel(&shared.cancelled, || {
                w.chunk(job, &direct, &shared, c, total)
            }),
            Err(e) => {
                shared.cancelled.store(true, Ordering::Relaxed);
                let mut slot = shared.no_memory.lock().unwrap_or_else(|p| p.into_inner());
                slot.get_or_insert_with(|| e.clone());
            }
        },
    );
    if let Some(e) = shared
        .no_memory
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
    {
        return Err(e);
    }
    if shared.cancelled.load(Ordering::Relaxed) {
        return Err(DriverError::Cancelled);
    }
    let failure = shared
        .failure
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    match failure {
        Some((pixel, error)) => {
            let mut position = vec![0; plan.shape.len()];
            let mut p = pixel;
            for d in (0..position.len()).rev() {
                position[d] = p % plan.shape[d];
                p /= plan.shape[d];
            }
            Err(DriverError::Filter { error, position })
        }
        None => Ok(()),
    }
}

/// The worker count `threads` asks for: all cores for `None` (or 0).
///
/// The core count is read once per process: `available_parallelism` reads the cgroup quota
/// files on Linux, about 30 µs, which was most of a small image's run.
pub(crate) fn thread_count(threads: Option<usize>) -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    match threads {
        None | Some(0) => {
            *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        }
        Some(n) => n,
    }
}

/// Splits the pixels into chunks `[p0, p1)` in C order: whole lines when lines are short, pieces
/// of a line when there are few long ones; about 16 per thread (at least 100 with a progress
/// report) and at least 4096 pixels each.
pub(crate) fn chunks(plan: &Plan, threads: usize, progress: bool) -> Vec<(usize, usize)> {
    let total = plan.lines * plan.len;
    // (Any count is taken: `workers=2**62` asks for more threads than there are chunks.)
    let wanted = if progress {
        threads.saturating_mul(16).max(100)
    } else if threads > 1 {
        threads.saturating_mul(16)
    } else {
        1
    };
    let size = (total / wanted).max(4096);
    let mut out = Vec::new();
    if size >= plan.len {
        let lines = size / plan.len;
        let mut l = 0;
        while l < plan.lines {
            let e = (l + lines).min(plan.lines);
            out.push((l * plan.len, e * plan.len));
            l = e;
        }
    } else {
        for l in 0..plan.lines {
            let mut a = 0;
            while a < plan.len {
                let b = (a + size).min(plan.len);
                out.push((l * plan.len + a, l * plan.len + b));
                a = b;
            }
        }
    }
    out
}

/// Whether the row kernel may read the input, and write the output, in place.
struct Direct {
    input: bool,
    output: bool,
    /// A line of `cval`, read in place of a line outside the input.
    cval_line: Vec<f64>,
    /// Where the input is read in place: the extended values of the columns before the interior
    /// ([`Plan::interior`]) and after it.
    edges: [Edge; 2],
}

/// The extended columns `first..first + sources.len()` of every line, near one of its ends, as
/// the input columns they read ([`Plan::column_sources`]; `None`: `cval`). The mode maps them the
/// same way on every line, so this is worked out once per run, not for each line and slot (with
/// short lines, [`Plan::fill`] doing it per line was a third of the time).
#[derive(Default)]
struct Edge {
    first: i64,
    sources: Vec<Option<usize>>,
}

impl Edge {
    fn new(plan: &Plan, lo: i64, hi: i64) -> Edge {
        Edge {
            first: lo,
            sources: plan.column_sources(lo, hi),
        }
    }
}

impl Direct {
    fn new(job: &Job) -> Direct {
        let f64_rows = |ptr: usize, dtype: super::Dtype, strides: &[isize]| {
            dtype == super::Dtype::F64
                && strides.last() == Some(&8)
                && ptr.is_multiple_of(8)
                && strides.iter().all(|s| s % 8 == 0)
        };
        let kernel = matches!(job.compute, Compute::Kernel { .. });
        let input = kernel && f64_rows(job.input.ptr as usize, job.input.dtype, &job.input.strides);
        let output = kernel
            && f64_rows(
                job.output.ptr as usize,
                job.output.dtype,
                &job.output.strides,
            );
        let plan = job.plan;
        let (cval_line, edges) = if input {
            let (jl, jr) = plan.interior();
            let (jl, jr, n) = (jl as i64, jr as i64, plan.len as i64);
            (
                vec![plan.cval; plan.len],
                [
                    Edge::new(plan, plan.cmin, jl + plan.cmax),
                    Edge::new(plan, jr + plan.cmin, n + plan.cmax),
                ],
            )
        } else {
            (Vec::new(), Default::default())
        };
        Direct {
            input,
            output,
            cval_line,
            edges,
        }
    }
}

/// A worker's scratch state, reused across the chunks it runs.
struct Worker {
    /// A context of the filter's own: failures on other threads do not stop this one's calls.
    ctx: Option<Arc<CallContext>>,
    idx: Vec<usize>,
    srcs: Vec<Option<isize>>,
    rows: Vec<*const f64>,
    cache: LineCache<(Option<isize>, i64, usize), f64>,
    strips: Vec<Vec<f64>>,
    out_row: Vec<f64>,
    buf: Vec<f64>,
    /// Per tap, its slot and column shift.
    taps: Vec<(u32, i64)>,
    /// Pixels computed since the last [`interrupt::poll`].
    unpolled: usize,
}

/// Pixels a worker computes between two calls of [`interrupt::poll`].
const POLL_PIXELS: usize = 1024;

// SAFETY: the raw row pointers are scratch, rewritten before each use.
unsafe impl Send for Worker {}

impl Worker {
    fn new(job: &Job) -> Result<Worker, DriverError> {
        let filter = match job.compute {
            Compute::Kernel { filter, .. } | Compute::Callback(filter) => Some(filter),
            Compute::Interpreter(_) | Compute::Value(_) => None,
        };
        let slots = job.plan.slots.len();
        Ok(Worker {
            ctx: filter.map(|f| f.new_context()).transpose()?,
            idx: vec![0; job.plan.shape.len()],
            srcs: Vec::with_capacity(slots),
            rows: vec![std::ptr::null(); slots],
            cache: LineCache::new(2 * slots + 2),
            strips: vec![Vec::new(); slots],
            out_row: Vec::new(),
            buf: try_vec(job.plan.tap_slot.len(), 0.0, "the filter's buffer")?,
            taps: {
                let mut taps = try_vec(job.plan.tap_slot.len(), (0, 0), "the taps")?;
                for (t, (&s, &c)) in taps
                    .iter_mut()
                    .zip(job.plan.tap_slot.iter().zip(&job.plan.tap_col))
                {
                    *t = (s, c);
                }
                taps
            },
            unpolled: POLL_PIXELS,
        })
    }

    /// Computes pixels `p0..p1`.
    fn chunk(
        &mut self,
        job: &Job,
        direct: &Direct,
        shared: &Shared,
        (p0, p1): (usize, usize),
        total: usize,
    ) {
        let len = job.plan.len;
        let mut p = p0;
        while p < p1 {
            if p > shared.first_fail.load(Ordering::Relaxed) {
                return;
            }
            if job.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                shared.cancelled.store(true, Ordering::Relaxed);
            }
            if shared.cancelled.load(Ordering::Relaxed) {
                return;
            }
            // The embedder's hook (which may read a clock) once per `POLL_PIXELS` pixels, not
            // per segment: a patch's pieces are often a few pixels each.
            if self.unpolled >= POLL_PIXELS {
                self.unpolled = 0;
                if interrupt::poll() {
                    return;
                }
            }
            let (line, a) = (p / len, p % len);
            let b = len.min(a + (p1 - p));
            self.unpolled += b - a;
            if let Err((pixel, error)) = self.segment(job, direct, line, a, b) {
                let pixel = line * len + pixel;
                let mut slot = shared.failure.lock().unwrap_or_else(|p| p.into_inner());
                if slot.as_ref().is_none_or(|(q, _)| pixel < *q) {
                    *slot = Some((pixel, error));
                    shared.first_fail.fetch_min(pixel, Ordering::Relaxed);
                }
                return;
            }
            p += b - a;
        }
        if let Some(report) = job.progress {
            let done = shared.done.fetch_add(p1 - p0, Ordering::Relaxed) + (p1 - p0);
            report(done, total);
        }
    }

    /// Computes columns `a..b` of line `line`; on failure, the failing column and the error.
    fn segment(
        &mut self,
        job: &Job,
        direct: &Direct,
        line: usize,
        a: usize,
        b: usize,
    ) -> Result<(), (usize, RuntimeError)> {
        let plan = job.plan;
        let last = plan.shape.len() - 1;
        plan.line_index(line, &mut self.idx[..last]);
        let out = &job.output;
        let ostride = out.strides[last];
        let mut out_line = out.ptr;
        for d in 0..last {
            out_line = out_line.wrapping_offset(self.idx[d] as isize * out.strides[d]);
        }
        let out_at = out_line.wrapping_offset(a as isize * ostride);
        if let Compute::Value(v) = job.compute {
            // No inputs to read: the value is stored in the output's type straight away.
            // SAFETY: the output row segment is valid (the caller's contract).
            unsafe { out.dtype.fill_line(out_at, ostride, b - a, v) };
            return Ok(());
        }
        plan.sources(&self.idx[..last], &job.input.strides, &mut self.srcs);
        if self.out_row.len() < b - a {
            self.out_row.resize(b - a, 0.0);
        }
        // Where the f64 results go: the output itself, or the row buffer cast afterwards.
        let dst: *mut f64 = if direct.output {
            out_at as *mut f64
        } else {
            self.out_row.as_mut_ptr()
        };
        let result = match job.compute {
            Compute::Kernel { kernel, .. } if direct.input => {
                self.kernel_direct(job, direct, kernel, a, b, dst)
            }
            Compute::Kernel { kernel, .. } => {
                self.extend(job, a, b);
                self.kernel_call(kernel, b - a, dst)
                    .map_err(|(j, e)| (a + j, e))
            }
            Compute::Callback(filter) => {
                self.extend(job, a, b);
                self.callback(filter, a, b, dst)
            }
            Compute::Interpreter(filter) => {
                self.extend(job, a, b);
                self.interpret(filter, a, b, dst)
            }
            Compute::Value(_) => unreachable!("stored above"),
        };
        if !direct.output {
            let n = match &result {
                Ok(()) => b - a,
                // scipy has written the pixels before the failing one.
                Err((j, _)) => j - a,
            };
            // SAFETY: the output row segment is valid (the caller's contract).
            unsafe { out.dtype.write_line(out_at, ostride, &self.out_row[..n]) };
        }
        result
    }

    /// Fills the extended input values of columns `a..b` for every slot (from the cache) and points
    /// `rows` at column `a` of each.
    fn extend(&mut self, job: &Job, a: usize, b: usize) {
        let plan = job.plan;
        let col0 = a as i64 + plan.cmin;
        let n = (b - a) + (plan.cmax - plan.cmin) as usize;
        if b - a < plan.len {
            // A piece of a line (a chunk's end, or a window the rank executor left): the next
            // line's pieces lie elsewhere, so caching would only cost a search and an eviction.
            for s in 0..plan.slots.len() {
                self.rows[s] = self.strip(job, s, a, b);
            }
            return;
        }
        self.cache.stamp += 1;
        for s in 0..plan.slots.len() {
            let key = (self.srcs[s], col0, n);
            let line = self.cache.get(key, n, |buf| unsafe {
                plan.fill(job.input, key.0, col0, buf)
            });
            // Column `a` is `-cmin` elements into the extended values.
            self.rows[s] = unsafe { line.add((-plan.cmin) as usize) };
        }
    }

    /// Slot `s`'s extended input values for columns `a..b`, in its strip (not cached): a pointer
    /// to column `a`'s.
    fn strip(&mut self, job: &Job, s: usize, a: usize, b: usize) -> *const f64 {
        let plan = job.plan;
        let strip = &mut self.strips[s];
        strip.resize((b - a) + (plan.cmax - plan.cmin) as usize, 0.0);
        // SAFETY: `srcs` are this line's sources (`execute`'s contract for the input).
        unsafe { plan.fill(job.input, self.srcs[s], a as i64 + plan.cmin, strip) };
        // Column `a` is `-cmin` elements into the extended values.
        unsafe { strip.as_ptr().add((-plan.cmin) as usize) }
    }

    /// [`Worker::strip`] for f64 input read in place, columns `c0..c1` near an end of the line,
    /// through that end's column sources.
    fn edge_strip(&mut self, job: &Job, edge: &Edge, s: usize, c0: usize, c1: usize) -> *const f64 {
        let plan = job.plan;
        let strip = &mut self.strips[s];
        strip.resize((c1 - c0) + (plan.cmax - plan.cmin) as usize, 0.0);
        let from = (c0 as i64 + plan.cmin - edge.first) as usize;
        let sources = &edge.sources[from..from + strip.len()];
        match self.srcs[s] {
            None => strip.fill(plan.cval),
            Some(off) => {
                let line = job.input.ptr.wrapping_offset(off) as *const f64;
                for (v, c) in strip.iter_mut().zip(sources) {
                    // SAFETY: `c` is a column of this slot's input line (`Plan::column_sources`),
                    // which `Direct` checked to be f64, contiguous and aligned.
                    *v = c.map_or(plan.cval, |c| unsafe { *line.add(c) });
                }
            }
        }
        // Column `c0` is `-cmin` elements into the extended values.
        unsafe { strip.as_ptr().add((-plan.cmin) as usize) }
    }

    /// The kernel on `n` pixels from the current `rows`, writing `dst[0..n]`.
    fn kernel_call(
        &mut self,
        kernel: &RowKernel,
        n: usize,
        dst: *mut f64,
    ) -> Result<(), (usize, RuntimeError)> {
        if n == 0 {
            return Ok(());
        }
        let ctx = self.ctx.as_ref().expect("kernel workers have a context");
        // SAFETY: `rows` point at column 0 of this call in buffers (or input lines) that hold
        // every column a tap reaches; `dst` has room for `n` values.
        let done =
            unsafe { (kernel.entry())(self.rows.as_ptr(), n as isize, dst, ctx.user_data()) };
        if done as usize == n {
            return Ok(());
        }
        let error = ctx.failure().unwrap_or_else(|| ctx.filter().describe(None));
        ctx.reset();
        Err((done as usize, error))
    }

    /// The kernel on f64 input read in place: interior columns straight from the input lines,
    /// the columns near the ends from extended strips.
    fn kernel_direct(
        &mut self,
        job: &Job,
        direct: &Direct,
        kernel: &RowKernel,
        a: usize,
        b: usize,
        dst: *mut f64,
    ) -> Result<(), (usize, RuntimeError)> {
        let plan = job.plan;
        let (jl, jr) = plan.interior();
        let pieces = [(a, b.min(jl)), (a.max(jl), b.min(jr)), (a.max(jr), b)];
        for (k, &(c0, c1)) in pieces.iter().enumerate() {
            if c0 >= c1 {
                continue;
            }
            let base = job.input.ptr;
            for s in 0..plan.slots.len() {
                self.rows[s] = match k {
                    1 => match self.srcs[s] {
                        Some(off) => base.wrapping_offset(off + 8 * c0 as isize) as *const f64,
                        None => unsafe { direct.cval_line.as_ptr().add(c0) },
                    },
                    _ => self.edge_strip(job, &direct.edges[k / 2], s, c0, c1),
                };
            }
            let out = unsafe { dst.add(c0 - a) };
            self.kernel_call(kernel, c1 - c0, out)
                .map_err(|(j, e)| (c0 + j, e))?;
        }
        Ok(())
    }

    /// The C callback on each pixel of `a..b`, its neighbourhood gathered from `rows`.
    fn callback(
        &mut self,
        filter: &Filter,
        a: usize,
        b: usize,
        dst: *mut f64,
    ) -> Result<(), (usize, RuntimeError)> {
        let ctx = self.ctx.clone().expect("callback workers have a context");
        let (cb, ud) = (ctx.callback(), ctx.user_data());
        let n = self.buf.len();
        for j in 0..b - a {
            self.gather(j);
            let mut v = 0.0;
            // SAFETY: the buffer holds `n` doubles; the context is the filter's.
            let ok = unsafe { cb(self.buf.as_mut_ptr(), n as isize, &mut v, ud) };
            if ok != 1 {
                let error = ctx.failure().unwrap_or_else(|| filter.describe(None));
                ctx.reset();
                return Err((a + j, error));
            }
            unsafe { *dst.add(j) = v };
        }
        Ok(())
    }

    /// The interpreter on each pixel of `a..b`.
    fn interpret(
        &mut self,
        filter: &Filter,
        a: usize,
        b: usize,
        dst: *mut f64,
    ) -> Result<(), (usize, RuntimeError)> {
        for j in 0..b - a {
            self.gather(j);
            let v = filter.interpret(&self.buf).map_err(|e| (a + j, e))?;
            unsafe { *dst.add(j) = v };
        }
        Ok(())
    }

    /// `buf[k]` = tap `k` of the `j`-th pixel of the segment.
    #[inline]
    fn gather(&mut self, j: usize) {
        for (k, &(s, c)) in self.taps.iter().enumerate() {
            // SAFETY: row `s` holds every column `j + c` of the segment.
            self.buf[k] = unsafe { *self.rows[s as usize].offset(j as isize + c as isize) };
        }
    }
}

/// Lines of values keyed by what they are computed from (here: extended input lines converted to
/// f64; in the rank executor, lines in the input's own type), kept while they may be reused by
/// the next lines.
pub(crate) struct LineCache<K, T> {
    entries: Vec<Entry<K, T>>,
    cap: usize,
    /// The current segment's stamp: entries with it are in use and never evicted.
    pub stamp: u64,
    /// Where the next search starts: just after the last entry found or filled. A segment asks
    /// for its lines in the order the previous one did, shifted by a line, so the search almost
    /// always succeeds at once (a footprint of k rows costs O(k) per segment, not O(k²)).
    next: usize,
}

struct Entry<K, T> {
    key: K,
    data: Vec<T>,
    used: u64,
}

impl<K: PartialEq + Copy, T: Copy + Default> LineCache<K, T> {
    /// A cache of `cap` lines, more than a segment uses at once.
    pub fn new(cap: usize) -> LineCache<K, T> {
        LineCache {
            entries: Vec::new(),
            cap,
            stamp: 0,
            next: 0,
        }
    }

    /// The `len` values for `key`, computed by `fill` on a miss. The pointer stays valid until
    /// a call with a later stamp.
    pub fn get(&mut self, key: K, len: usize, fill: impl FnOnce(&mut [T])) -> *const T {
        let n = self.entries.len();
        let start = self.next.min(n);
        let (after, before) = (start..n, 0..start);
        if let Some(i) = after.chain(before).find(|&i| self.entries[i].key == key) {
            let e = &mut self.entries[i];
            e.used = self.stamp;
            self.next = i + 1;
            return e.data.as_ptr();
        }
        let i = if self.entries.len() < self.cap {
            self.entries.push(Entry {
                key,
                data: Vec::new(),
                used: 0,
            });
            self.entries.len() - 1
        } else {
            // The least recently used entry not used by the current line (there is one: the
            // capacity exceeds the number of slots).
            let (i, _) = self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.used != self.stamp)
                .min_by_key(|(_, e)| e.used)
                .expect("cache capacity exceeds the slots");
            i
        };
        self.next = i + 1;
        let e = &mut self.entries[i];
        e.key = key;
        e.used = self.stamp;
        e.data.resize(len, T::default());
        fill(&mut e.data);
        e.data.as_ptr()
    }
}
