//! What compiled code needs at run time: the `user_data` context layout and the shared routines.
//!
//! The context is `#[repr(C)]` and compiled code reads only its first fields, at the offsets
//! exported below. Every routine here is `extern "C"`, never panics, and is called by *both* the
//! interpreter and the JIT, so that sorting, medians and quantiles agree by construction.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// An array handed to compiled code: pointer and length.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ArrayRef {
    pub ptr: *const f64,
    pub len: i64,
}

/// The first record of a failure: which [`crate::ir::ErrorSite`] and its two detail values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    pub site: u32,
    pub a: i64,
    pub b: i64,
}

/// What `user_data` points at. Compiled code reads `failed`, `scalars`, `ints` and `arrays`; the
/// rest is Rust's. The bound values are immutable while calls run, so one context may be shared by
/// many threads; the failure slot is written once, under a lock.
#[repr(C)]
pub struct RawContext {
    /// Non-zero once a call failed: every later call returns 0 at once (scipy keeps calling after
    /// a failure, GUIDE §1), until [`RawContext::reset`]; with a resume hook, the calls of other
    /// threads run apart instead ([`RawContext::admission`]).
    pub failed: AtomicU32,
    /// The thread whose call failed ([`this_thread`]), while `failed`.
    owner: AtomicU32,
    pub scalars: *const f64,
    pub ints: *const i64,
    pub arrays: *const ArrayRef,
    failure: Mutex<Option<Failure>>,
    /// Called once, with the first failure (e.g. to raise a Python exception in the caller).
    hook: Option<FailureHook>,
    /// Asked when a call arrives at a failed context: `true` clears the failure and runs the call
    /// (the Python package answers `true` once the exception it raised has been consumed).
    resume: Option<ResumeHook>,
}

/// A function told about the first failure recorded in a context.
pub type FailureHook = Box<dyn Fn(Failure) + Send + Sync>;
/// A function deciding whether a failed context may run again.
pub type ResumeHook = Box<dyn Fn() -> bool + Send + Sync>;

pub const OFFSET_FAILED: i32 = std::mem::offset_of!(RawContext, failed) as i32;
pub const OFFSET_SCALARS: i32 = std::mem::offset_of!(RawContext, scalars) as i32;
pub const OFFSET_INTS: i32 = std::mem::offset_of!(RawContext, ints) as i32;
pub const OFFSET_ARRAYS: i32 = std::mem::offset_of!(RawContext, arrays) as i32;

// SAFETY: the pointers refer to data owned next to the context (see `crate::filter::Context`) that
// is never written while calls may run; the mutable parts are an atomic and a mutex.
unsafe impl Send for RawContext {}
unsafe impl Sync for RawContext {}

impl RawContext {
    pub(crate) fn new(
        scalars: *const f64,
        ints: *const i64,
        arrays: *const ArrayRef,
    ) -> RawContext {
        RawContext {
            failed: AtomicU32::new(0),
            owner: AtomicU32::new(0),
            scalars,
            ints,
            arrays,
            failure: Mutex::new(None),
            hook: None,
            resume: None,
        }
    }
    pub(crate) fn with_hooks(
        mut self,
        hook: Option<FailureHook>,
        resume: Option<ResumeHook>,
    ) -> RawContext {
        self.hook = hook;
        self.resume = resume;
        self
    }
    /// For a call arriving at a failed context: whether the resume hook lets it run (the failure
    /// is then cleared).
    pub(crate) fn try_resume(&self) -> bool {
        let resume = |r: &ResumeHook| std::panic::catch_unwind(std::panic::AssertUnwindSafe(r));
        let resumed = self
            .resume
            .as_ref()
            .is_some_and(|r| resume(r).unwrap_or(false));
        if resumed {
            self.reset();
        }
        resumed
    }
    /// How a call arriving at this context runs. A context with a resume hook is shared by the
    /// threads calling one callback (scipy's, through the Python package), each raising its own
    /// failure's exception: a failure stops its own thread's calls until the hook says that
    /// exception is consumed (then the failure is cleared), while other threads' calls run apart,
    /// on a scratch context whose failure is theirs. Without a hook, a failure stops every later
    /// call until [`RawContext::reset`] (the driver's workers stop together).
    pub(crate) fn admission(&self) -> Admission {
        if self.failed.load(Ordering::Acquire) == 0 {
            return Admission::Run;
        }
        let Some(resume) = &self.resume else {
            return Admission::Refuse;
        };
        let resume = std::panic::catch_unwind(std::panic::AssertUnwindSafe(resume));
        if !resume.unwrap_or(false) {
            return Admission::Refuse;
        }
        if self.owner.load(Ordering::Acquire) == this_thread() {
            self.reset();
            return Admission::Run;
        }
        Admission::Apart
    }
    /// Whether threads share this context, each with its own failures: it has a resume hook.
    pub(crate) fn shared_between_threads(&self) -> bool {
        self.resume.is_some()
    }
    /// Tells the hook of a failure of this context's filter in a call run apart
    /// ([`Admission::Apart`]): the calling thread's own, raised there; the context keeps the
    /// failure it holds.
    pub(crate) fn notify(&self, f: Failure) {
        if let Some(hook) = &self.hook {
            // A panicking hook must not unwind into compiled code.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(f)));
        }
    }
    /// The first failure recorded since the last reset.
    pub fn failure(&self) -> Option<Failure> {
        if self.failed.load(Ordering::Acquire) == 0 {
            return None;
        }
        *self.failure.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// Clears the failed flag so that calls run again.
    pub fn reset(&self) {
        *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.failed.store(0, Ordering::Release);
    }
    /// The failure of one call run on a scratch context of this one (quad's integrand, whose
    /// failures are each calling thread's own): kept as this context's failure (the latest, where
    /// [`RawContext::record`] keeps the first), and told to the hook every time, so that each
    /// failing thread raises its own.
    pub(crate) fn report(&self, f: Failure) {
        self.store(f, false);
    }
    pub(crate) fn record(&self, f: Failure) {
        self.store(f, true);
    }
    /// Keeps `f` as the context's failure (unless `first_only` and one is kept already), marks
    /// the context failed, and tells the hook when `f` was kept.
    fn store(&self, f: Failure, first_only: bool) {
        let kept = {
            let mut slot = self.failure.lock().unwrap_or_else(|p| p.into_inner());
            let kept = slot.is_none() || !first_only;
            if kept {
                *slot = Some(f);
                self.owner.store(this_thread(), Ordering::Release);
            }
            kept
        };
        self.failed.store(1, Ordering::Release);
        if let (true, Some(hook)) = (kept, &self.hook) {
            // A panicking hook must not unwind into compiled code.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(f)));
        }
    }
}

/// How a call arriving at a context runs ([`RawContext::admission`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// On the context.
    Run,
    /// Not at all: return failure at once.
    Refuse,
    /// On a scratch context of the same filter: another thread's failure holds this one.
    Apart,
}

/// This thread's token (never 0), which a failure records as its owner.
pub(crate) fn this_thread() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    thread_local! {
        static TOKEN: u32 = NEXT.fetch_add(1, Ordering::Relaxed).max(1);
    }
    TOKEN.try_with(|t| *t).unwrap_or(u32::MAX)
}

/// The failure site of a call stopped by [`crate::interrupt::poll`]: no site of the IR (those
/// index `Func::errors`), described by [`crate::RuntimeError::interrupted`].
pub const SITE_INTERRUPTED: u32 = u32::MAX;

/// The failure site of a call whose Rust side panicked (caught before it could unwind into the
/// C caller), described as an internal error.
pub const SITE_PANICKED: u32 = u32::MAX - 1;

impl Failure {
    /// The failure of a call whose Rust side panicked ([`SITE_PANICKED`]).
    pub fn panicked() -> Failure {
        Failure {
            site: SITE_PANICKED,
            a: 0,
            b: 0,
        }
    }
    /// Whether the call was stopped by an interrupt rather than by a failing check.
    pub fn is_interrupt(&self) -> bool {
        self.site == SITE_INTERRUPTED
    }
}

/// Called by compiled code (and the interpreter) every [`crate::interrupt::POLL_INTERVAL`] back
/// edges of a loop: when the call should stop, records [`SITE_INTERRUPTED`] and returns 1 (the
/// caller then fails the call), else 0.
///
/// # Safety
/// `ctx` must be null or point to a live [`RawContext`].
pub unsafe extern "C" fn ndjit_rt_poll(ctx: *const RawContext) -> i32 {
    if !crate::interrupt::poll() {
        return 0;
    }
    unsafe { ndjit_rt_fail(ctx, SITE_INTERRUPTED, 0, 0) };
    1
}

/// Called by compiled code when a [`crate::ir::Stmt::Check`] fails.
///
/// # Safety
/// `ctx` must be null or point to a live [`RawContext`].
pub unsafe extern "C" fn ndjit_rt_fail(ctx: *const RawContext, site: u32, a: i64, b: i64) {
    if let Some(ctx) = unsafe { ctx.as_ref() } {
        ctx.record(Failure { site, a, b });
    }
}

thread_local! {
    /// Per-thread scratch arenas, one per scratch slot. Thread-local storage keeps compiled code
    /// reentrant: concurrent calls on one context never share scratch.
    static SCRATCH: RefCell<Vec<Vec<u64>>> = const { RefCell::new(Vec::new()) };
}

/// Returns room for `n` 8-byte elements for scratch slot `slot` on this thread, or null if the
/// request is absurd. The memory stays valid until the next request for the same slot.
pub extern "C" fn ndjit_rt_scratch(slot: u32, n: i64) -> *mut u64 {
    if !(0..=1 << 32).contains(&n) {
        return std::ptr::null_mut();
    }
    SCRATCH.with(|s| {
        let Ok(mut arenas) = s.try_borrow_mut() else {
            return std::ptr::null_mut();
        };
        let slot = slot as usize;
        if arenas.len() <= slot {
            arenas.resize_with(slot + 1, Vec::new);
        }
        let v = &mut arenas[slot];
        if v.len() < n as usize {
            v.resize(n as usize, 0);
        }
        v.as_mut_ptr()
    })
}

/// NumPy's sort order: ascending, NaN last.
fn numpy_order(a: &f64, b: &f64) -> std::cmp::Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(b).unwrap(),
        (a_nan, b_nan) => a_nan.cmp(&b_nan),
    }
}

/// Sizes [`ndjit_rt_sort`] sorts by insertion.
const SMALL_SORT: usize = 32;

/// Sorts `n` f64 values in place, NaN last, stably. Insertion sort for the small sizes filters
/// use, the standard library's stable sort above.
///
/// # Safety
/// `ptr` must point to `n` writable f64 values.
pub unsafe extern "C" fn ndjit_rt_sort(ptr: *mut f64, n: i64) {
    if ptr.is_null() || n <= 1 {
        return;
    }
    let s = unsafe { std::slice::from_raw_parts_mut(ptr, n as usize) };
    if s.len() <= SMALL_SORT {
        for i in 1..s.len() {
            let v = s[i];
            let mut j = i;
            while j > 0 && numpy_order(&s[j - 1], &v) == std::cmp::Ordering::Greater {
                s[j] = s[j - 1];
                j -= 1;
            }
            s[j] = v;
        }
    } else {
        // Stable, as the GPU's merge sort is: Python's sorted() keeps equal elements (-0.0 and
        // 0.0) in their original order, and every backend must agree on where they go.
        s.sort_by(numpy_order);
    }
}

/// The median of values holding a NaN (NumPy's `np.nan`); the median networks' fallback
/// ([`crate::ir::network`]) returns it without sorting.
pub const MEDIAN_OF_NAN: f64 = f64::NAN;

/// NumPy `median` of a sorted array: NaN when empty or when it holds a NaN (sorted last);
/// the middle element, or the mean of the two middle ones. NumPy takes the mean of the middle
/// part in both cases, which adds to `0.0` first: a middle `-0.0` gives `0.0`.
///
/// # Safety
/// `ptr` must point to `n` readable f64 values sorted by [`ndjit_rt_sort`].
pub unsafe extern "C" fn ndjit_rt_median(ptr: *const f64, n: i64) -> f64 {
    if ptr.is_null() || n <= 0 {
        return f64::NAN;
    }
    let s = unsafe { std::slice::from_raw_parts(ptr, n as usize) };
    let n = s.len();
    if s[n - 1].is_nan() {
        return MEDIAN_OF_NAN;
    }
    middle_mean(s)
}

/// NumPy's median of sorted, NaN-free values (at least one): the middle one, or `np.mean` of the
/// two middle ones, `(0.0 + a + b) / 2`; both add to `0.0` first.
pub fn middle_mean(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        0.0 + s[n / 2]
    } else {
        (0.0 + s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// NumPy's default (linear) quantile of a sorted array at `q` in [0, 1]: NaN when empty or when
/// it holds a NaN. Follows `numpy.lib._function_base_impl._lerp` exactly.
///
/// # Safety
/// As [`ndjit_rt_median`].
pub unsafe extern "C" fn ndjit_rt_quantile(ptr: *const f64, n: i64, q: f64) -> f64 {
    if ptr.is_null() || n <= 0 {
        return f64::NAN;
    }
    let s = unsafe { std::slice::from_raw_parts(ptr, n as usize) };
    if s[s.len() - 1].is_nan() {
        return f64::NAN;
    }
    match QuantilePlan::new(s.len(), q) {
        Some(plan) => plan.lerp(s[plan.prev], s[plan.next]),
        None => f64::NAN,
    }
}

/// Where NumPy's default (linear) quantile reads a sorted array of `n` values at `q`, and how it
/// mixes the two values it reads: the index arithmetic of `np.quantile`/`np.percentile`, shared by
/// the runtime routine and the backends that know `n` and `q` when they compile (the GPU).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantilePlan {
    pub prev: usize,
    pub next: usize,
    /// NumPy's `gamma` (`_get_gamma` after `_get_indexes`): `virtual_index - previous_index`,
    /// where the previous index is `-1` at or above the last element (NumPy's "last" index) and
    /// `0` below the first. The `-1` matters: it makes `gamma = virtual_index + 1`, which picks
    /// `_lerp`'s `b - diff * (1 - gamma)` branch and so the sign of a zero.
    pub gamma: f64,
}

impl QuantilePlan {
    /// The plan for `n > 0` values, or `None` when the quantile is NaN whatever the values (`q`
    /// NaN, or `q = ±inf` with one element: `0 * inf`, never an index).
    pub fn new(n: usize, q: f64) -> Option<QuantilePlan> {
        let virtual_index = (n as f64 - 1.0) * q;
        if n == 0 || virtual_index.is_nan() {
            return None;
        }
        let last = (n - 1) as f64;
        let (prev, next, gamma) = if virtual_index >= last {
            (n - 1, n - 1, virtual_index + 1.0)
        } else if virtual_index < 0.0 {
            (0, 0, virtual_index)
        } else {
            // NumPy subtracts the previous index as an int: `-0.0 - 0` keeps the sign that
            // `-0.0 - floor(-0.0)` would lose (q = -0.0 gives gamma -0.0, and `a + diff * -0.0`).
            let p = virtual_index.floor() as usize;
            (p, p + 1, virtual_index - p as f64)
        };
        Some(QuantilePlan { prev, next, gamma })
    }

    /// `numpy.lib._function_base_impl._lerp` of the two values read, `a = s[prev]`, `b = s[next]`.
    pub fn lerp(self, a: f64, b: f64) -> f64 {
        if self.gamma >= 0.5 {
            self.lerp_upper(a, b)
        } else {
            self.lerp_lower(a, b)
        }
    }

    /// [`QuantilePlan::lerp`]'s branch for `gamma >= 0.5` (for loops that choose it once).
    #[inline(always)]
    pub fn lerp_upper(self, a: f64, b: f64) -> f64 {
        b - (b - a) * (1.0 - self.gamma)
    }

    /// [`QuantilePlan::lerp`]'s branch for `gamma < 0.5`.
    #[inline(always)]
    pub fn lerp_lower(self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.gamma
    }
}

/// NumPy's pairwise summation of one block of at most 128 values (`pairwise_sum` in NumPy's
/// `loops_utils.h`): sequential from -0.0 below 8 values, else eight interleaved partial sums
/// combined as `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))`, then the tail in order.
pub fn pairwise_block(b: &[f64]) -> f64 {
    let n = b.len();
    if n < 8 {
        return b.iter().fold(-0.0, |acc, v| acc + v);
    }
    let mut r = [0.0; 8];
    r.copy_from_slice(&b[..8]);
    let mut i = 8;
    while i < n - n % 8 {
        for k in 0..8 {
            r[k] += b[i + k];
        }
        i += 8;
    }
    let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for v in &b[i..] {
        res += v;
    }
    res
}

/// Block length of [`pairwise_sum`] (NumPy's `PW_BLOCKSIZE`).
pub const SUM_BLOCK: usize = 128;

/// Where NumPy splits a pairwise sum of more than [`SUM_BLOCK`] values: half of them, rounded
/// down to a multiple of eight (`n2 = n / 2; n2 -= n2 % 8`).
pub fn pairwise_split(n: usize) -> usize {
    let half = n / 2;
    half - half % 8
}

/// The IR's `Sum`, bit for bit `np.sum` of a contiguous float64 array: `0.0 +` NumPy's
/// `pairwise_sum`, which sums a block of up to 128 values with [`pairwise_block`] and splits a
/// longer array at [`pairwise_split`] into two halves summed the same way and then added.
pub fn pairwise_sum(x: &[f64]) -> f64 {
    fn pairwise(x: &[f64]) -> f64 {
        match x.len() {
            n if n <= SUM_BLOCK => pairwise_block(x),
            n => {
                let (left, right) = x.split_at(pairwise_split(n));
                pairwise(left) + pairwise(right)
            }
        }
    }
    0.0 + pairwise(x)
}

/// Runtime symbols the JIT links against, with their addresses.
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    let mut v: Vec<(&'static str, *const u8)> = vec![
        ("ndjit_rt_fail", ndjit_rt_fail as *const u8),
        ("ndjit_rt_poll", ndjit_rt_poll as *const u8),
        ("ndjit_rt_scratch", ndjit_rt_scratch as *const u8),
        ("ndjit_rt_sort", ndjit_rt_sort as *const u8),
        ("ndjit_rt_median", ndjit_rt_median as *const u8),
        ("ndjit_rt_quantile", ndjit_rt_quantile as *const u8),
        (
            "ndjit_rt_failed_call",
            crate::context::ndjit_rt_failed_call as *const u8,
        ),
        ("ndjit_ifloordiv", crate::math::ndjit_ifloordiv as *const u8),
        ("ndjit_imod", crate::math::ndjit_imod as *const u8),
    ];
    for f in crate::math::MathFn::ALL {
        v.push((f.symbol(), f.address() as *const u8));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut v: Vec<f64>) -> Vec<f64> {
        unsafe { ndjit_rt_sort(v.as_mut_ptr(), v.len() as i64) };
        v
    }

    #[test]
    fn sort_puts_nan_last() {
        let v = sorted(vec![3.0, f64::NAN, -1.0, 2.0]);
        assert_eq!(&v[..3], &[-1.0, 2.0, 3.0]);
        assert!(v[3].is_nan());
        let big: Vec<f64> = (0..100).rev().map(|i| i as f64).collect();
        assert_eq!(sorted(big), (0..100).map(|i| i as f64).collect::<Vec<_>>());
    }

    /// At every length either side of the insertion sort's limit, with NaNs of several
    /// payloads and signs, zeros of both signs and repeated values: the bits of the standard
    /// library's stable sort by NumPy's order.
    #[test]
    fn sort_is_the_stable_sort_by_numpys_order_bit_for_bit() {
        let specials = [
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff8_0000_0000_0123),
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1.5,
        ];
        let mut seed = 0x1234_5678_9abc_def1u64;
        for n in 0..=SMALL_SORT + 3 {
            for _ in 0..50 {
                let v: Vec<f64> = (0..n)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        match seed % 3 {
                            0 => specials[(seed >> 8) as usize % specials.len()],
                            _ => ((seed >> 20) % 9) as f64 - 4.0,
                        }
                    })
                    .collect();
                let mut want = v.clone();
                want.sort_by(numpy_order);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&sorted(v.clone())), bits(&want), "{v:?}");
            }
        }
    }

    #[test]
    fn sort_keeps_equal_zeros_in_their_order_at_every_length() {
        // Python's sorted() is stable, and -0.0 == 0.0: their order in the input is kept, by the
        // insertion sort (up to 32) and by the library sort above it alike.
        for n in [9usize, 33, 200] {
            let v: Vec<f64> = (0..n)
                .map(|i| match i % 3 {
                    0 => 0.0,
                    1 => -0.0,
                    _ => (i % 7) as f64 - 3.0,
                })
                .collect();
            let zeros_in = |v: &[f64]| -> Vec<bool> {
                v.iter()
                    .filter(|z| **z == 0.0)
                    .map(|z| z.is_sign_negative())
                    .collect()
            };
            assert_eq!(zeros_in(&sorted(v.clone())), zeros_in(&v), "n = {n}");
        }
    }

    #[test]
    fn the_quantile_plan_reads_numpys_indices() {
        // At or above the last element NumPy's previous index is -1: gamma = vi + 1.
        let last = QuantilePlan {
            prev: 3,
            next: 3,
            gamma: 4.0,
        };
        assert_eq!(QuantilePlan::new(4, 1.0), Some(last));
        let inner = QuantilePlan {
            prev: 1,
            next: 2,
            gamma: 4.0f64 * 0.3 - 1.0,
        };
        assert_eq!(QuantilePlan::new(5, 0.3), Some(inner));
        // NaN whatever the values: never an index.
        assert_eq!(QuantilePlan::new(1, f64::INFINITY), None);
        assert_eq!(QuantilePlan::new(3, f64::NAN), None);
        assert_eq!(QuantilePlan::new(0, 0.5), None);
    }

    #[test]
    fn median_and_quantile_follow_numpy() {
        let one = sorted(vec![1.0]);
        assert!(
            unsafe { ndjit_rt_median(one.as_ptr(), 0) }.is_nan(),
            "empty gives NaN"
        );
        let v = sorted(vec![4.0, 1.0, 3.0, 2.0]);
        assert_eq!(unsafe { ndjit_rt_median(v.as_ptr(), 4) }, 2.5);
        assert_eq!(unsafe { ndjit_rt_median(v.as_ptr(), 3) }, 2.0);
        // np.percentile([1, 2, 3, 4], 90) == 3.7 (computed as 4 - 1 * (1 - 0.7)).
        assert_eq!(
            unsafe { ndjit_rt_quantile(v.as_ptr(), 4, 0.9) },
            4.0 - 1.0 * (1.0 - (3.0f64 * 0.9 - 2.0))
        );
        assert_eq!(unsafe { ndjit_rt_quantile(v.as_ptr(), 4, 1.0) }, 4.0);
        assert_eq!(unsafe { ndjit_rt_quantile(v.as_ptr(), 4, 0.0) }, 1.0);
        let with_nan = sorted(vec![1.0, f64::NAN]);
        assert!(unsafe { ndjit_rt_median(with_nan.as_ptr(), 2) }.is_nan());
        // A non-finite q never indexes out of range.
        for q in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            assert!(unsafe { ndjit_rt_quantile(v.as_ptr(), 1, q) }.is_nan());
        }
    }

    #[test]
    fn pairwise_matches_numpy_structure() {
        let x: Vec<f64> = (0..9).map(|i| 0.1 * i as f64).collect();
        let r: Vec<f64> = (0..8).map(|k| x[k]).collect();
        let expect =
            0.0 + ((((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))) + x[8]);
        assert_eq!(pairwise_sum(&x).to_bits(), expect.to_bits());
        assert_eq!(pairwise_sum(&[-0.0]).to_bits(), 0.0f64.to_bits());
        assert_eq!(pairwise_sum(&[]), 0.0);
    }

    #[test]
    fn failures_record_the_first_only() {
        let c = RawContext::new(std::ptr::null(), std::ptr::null(), std::ptr::null());
        assert_eq!(c.failure(), None);
        unsafe { ndjit_rt_fail(&c, 3, 1, 2) };
        unsafe { ndjit_rt_fail(&c, 4, 0, 0) };
        assert_eq!(
            c.failure(),
            Some(Failure {
                site: 3,
                a: 1,
                b: 2
            })
        );
        c.reset();
        assert_eq!(c.failure(), None);
        unsafe { ndjit_rt_fail(std::ptr::null(), 0, 0, 0) }; // null is ignored, not a crash
    }

    #[test]
    fn scratch_is_per_slot_and_refuses_absurd_sizes() {
        let a = ndjit_rt_scratch(0, 4);
        let b = ndjit_rt_scratch(1, 4);
        assert!(!a.is_null() && !b.is_null() && a != b);
        assert!(ndjit_rt_scratch(0, -1).is_null());
    }
}
