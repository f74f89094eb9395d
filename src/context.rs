//! Call contexts: the `user_data` a caller passes to the compiled callback.
//!
//! Each context has its own failure slot (so one caller's error does not stop another's calls)
//! and keeps the filter's code and bound values alive. Give each thread its own context when
//! failures must be told apart; the callback itself is reentrant either way.

use crate::error::RuntimeError;
use crate::filter::Filter;
use crate::runtime::{Admission, RawContext};
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// A `user_data` context of its own for a [`Filter`]'s callback.
///
/// ```
/// let f = ndjit::Filter::compile("x[3]", &ndjit::Bindings::new())?;
/// let ctx = f.new_context()?;
/// let mut buf = [1.0, 2.0];
/// let mut out = 0.0;
/// let ok = unsafe { (f.callback()?)(buf.as_mut_ptr(), 2, &mut out, ctx.user_data()) };
/// assert_eq!(ok, 0);
/// assert!(ctx.failure().unwrap().message.contains("out of bounds"));
/// # Ok::<(), ndjit::Error>(())
/// ```
#[repr(C)]
pub struct CallContext {
    /// First, so that `user_data` points at it: compiled code reads its fields at fixed offsets.
    raw: RawContext,
    filter: Filter,
    adaptive: Adaptive,
    /// [`Hooks::direct_entry`].
    direct_entry: Option<Box<dyn Fn(*const c_void) + Send + Sync>>,
    /// An integrand's other typings, compiled as [`resumable_integrand`] needs them.
    typings: crate::integrand::Typings,
    /// This context among all (never reused) and the count of its resets: what a thread's
    /// record of an integrand failure (`FAILED_HERE`) refers to.
    id: u64,
    epoch: std::sync::atomic::AtomicU64,
}

/// The next [`CallContext::id`].
static CONTEXTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn next_id() -> u64 {
    CONTEXTS.fetch_add(1, Ordering::Relaxed)
}

/// The state behind [`adaptive_callback`]: the entry to call, and the specialised filter that
/// owns it once compiled.
struct Adaptive {
    /// The current entry function: the general one, then (generic_filter's, a `FilterFn`) the
    /// specialised one. A context is made with it, so its trampolines never generate code.
    entry: AtomicPtr<c_void>,
    /// 0: not specialised yet; 1: specialising or done (never specialised twice).
    state: AtomicU8,
    /// Keeps the specialised code alive as long as the context.
    specialized: Mutex<Option<Filter>>,
}

impl Adaptive {
    fn at(entry: *const c_void) -> Adaptive {
        Adaptive {
            entry: AtomicPtr::new(entry as *mut c_void),
            state: AtomicU8::new(0),
            specialized: Mutex::new(None),
        }
    }
}

impl Filter {
    /// A new context with its own failure slot. Generates the native code if the filter was
    /// built to defer it ([`crate::FilterBuilder::native_code`]), hence the `Result`.
    pub fn new_context(&self) -> crate::error::Result<Arc<CallContext>> {
        Ok(self.context_at(self.entry_address()?))
    }

    /// [`Filter::new_context`] for a caller that holds the entry already
    /// ([`Filter::entry_address`]): the driver's workers, one context each.
    pub(crate) fn context_at(&self, entry: *const c_void) -> Arc<CallContext> {
        Arc::new(CallContext {
            raw: self.fresh_raw(),
            filter: self.clone(),
            adaptive: Adaptive::at(entry),
            direct_entry: None,
            typings: Default::default(),
            id: next_id(),
            epoch: Default::default(),
        })
    }

    /// A new context with the caller's [`Hooks`].
    pub fn new_context_with_hooks(&self, hooks: Hooks) -> crate::error::Result<Arc<CallContext>> {
        let adaptive = Adaptive::at(self.entry_address()?);
        let f = self.clone();
        let on_failure = hooks.on_failure.map(|h| {
            Box::new(move |fail| h(f.describe(Some(fail)))) as crate::runtime::FailureHook
        });
        let raw = self.fresh_raw().with_hooks(on_failure, hooks.resume);
        Ok(Arc::new(CallContext {
            raw,
            filter: self.clone(),
            adaptive,
            direct_entry: hooks.direct_entry,
            typings: Default::default(),
            id: next_id(),
            epoch: Default::default(),
        }))
    }
}

/// What a caller can plug into a context ([`Filter::new_context_with_hooks`]). The Python package
/// uses all three: it raises the exception scipy reports from `on_failure`, resumes once that
/// exception has been consumed, and points scipy's function capsule straight at the compiled code
/// while the context is healthy.
#[derive(Default)]
pub struct Hooks {
    /// Called with the first failure recorded in the context, on the failing thread.
    pub on_failure: Option<Box<dyn Fn(RuntimeError) + Send + Sync>>,
    /// Asked when a call through [`resumable_callback`] (or [`interpreter_callback`]) arrives
    /// while the context is failed: `true` clears the failure and runs the call. Compiled code
    /// called directly just returns 0 while the context is failed.
    pub resume: Option<Box<dyn Fn() -> bool + Send + Sync>>,
    /// Told, when [`adaptive_callback`] has specialised (or resumed after a failure), the address
    /// of the compiled entry that later calls with this context may call instead of the
    /// trampoline, saving it on every call. The entry is owned by the context. It never asks
    /// `resume`, so whoever repoints a function pointer here must point it back at
    /// [`adaptive_callback`] from `on_failure`.
    pub direct_entry: Option<Box<dyn Fn(*const c_void) + Send + Sync>>,
}

impl CallContext {
    /// The pointer to pass as the callback's `user_data`; valid while this context lives.
    pub fn user_data(&self) -> *mut c_void {
        self as *const CallContext as *mut c_void
    }
    /// The first failure recorded since the last reset.
    pub fn failure(&self) -> Option<RuntimeError> {
        self.raw.failure().map(|f| self.filter.describe(Some(f)))
    }
    /// Clears the failure so that calls run again.
    pub fn reset(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        self.raw.reset()
    }
    pub fn filter(&self) -> &Filter {
        &self.filter
    }
    /// The general entry of the filter, as a generic_filter callback: the entry the context
    /// was made with, before [`adaptive_callback`] replaces it by a specialised one (which only
    /// generic_filter's is).
    pub(crate) fn callback(&self) -> crate::FilterFn {
        let entry = self.general_entry();
        // SAFETY: the entry of a `Sig::Filter` filter has this type (other signatures' callers
        // transmute `general_entry` to theirs).
        unsafe { std::mem::transmute::<*const c_void, crate::FilterFn>(entry) }
    }

    /// The entry the context was made with (the other signatures' trampolines call it; only
    /// generic_filter's is ever replaced, by its specialised one).
    fn general_entry(&self) -> *const c_void {
        self.adaptive.entry.load(Ordering::Acquire)
    }

    /// Compiles the version specialised to `n` (once per context) and makes it the entry of
    /// [`adaptive_callback`]. Failing to specialise just keeps the general entry.
    fn specialize_for(&self, n: isize) {
        let a = &self.adaptive;
        if a.state
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return; // another call is specialising or has: keep using the current entry
        }
        let Ok(n) = usize::try_from(n) else { return };
        if self.filter.signature() != crate::Sig::Filter
            || n > 4096
            || self.filter.filter_size() == Some(n)
        {
            return;
        }
        if let Ok((spec, entry)) = self.filter.specialize(n).and_then(|s| {
            let entry = s.entry_address()?;
            Ok((s, entry as *mut c_void))
        }) {
            // Own the code before publishing its address.
            *a.specialized.lock().unwrap_or_else(|p| p.into_inner()) = Some(spec);
            a.entry.store(entry, Ordering::Release);
        }
    }

    /// Runs `call` with the `user_data` its admission gives ([`RawContext::admission`]): this
    /// context, a scratch one whose failure is reported as this thread's own, or none (0).
    /// Compiled code and the interpreter only refuse a failed context; asking the hook is the
    /// trampolines' job, so that no call sits on the compiled code's path.
    fn run_admitted(&self, call: &dyn Fn(*mut c_void) -> i32) -> i32 {
        self.run_as(self.raw.admission(), call)
    }

    /// [`CallContext::run_admitted`] with the admission already asked.
    fn run_as(&self, admission: Admission, call: &dyn Fn(*mut c_void) -> i32) -> i32 {
        match admission {
            Admission::Run => call(self.user_data()),
            Admission::Refuse => 0,
            Admission::Apart => {
                let raw = self.filter.fresh_raw();
                let ok = call(&raw as *const RawContext as *mut c_void);
                if let Some(fail) = raw.failure() {
                    self.raw.notify(fail);
                }
                ok
            }
        }
    }

    /// [`adaptive_callback`]'s rare calls: the first (specialise) and those on a failed context
    /// (ask the resume hook). Out of line, so that every other call is a few loads and a jump:
    /// inlined, the specialisation's locals made each call save and restore six registers and a
    /// 150-byte frame.
    #[cold]
    #[inline(never)]
    unsafe fn slow_call(&self, buffer: *mut f64, n: isize, return_value: *mut f64) -> i32 {
        if self.adaptive.state.load(Ordering::Relaxed) == 0 {
            self.specialize_for(n);
        }
        let admission = self.raw.admission();
        if admission == Admission::Run {
            if let Some(hook) = &self.direct_entry {
                hook(self.adaptive.entry.load(Ordering::Acquire));
            }
        }
        self.run_as(admission, &|ud| unsafe {
            self.call_entry(buffer, n, return_value, ud)
        })
    }

    /// Calls the current entry (general or specialised) with this context as `user_data`.
    ///
    /// # Safety
    /// As the filter's own callback.
    #[inline(always)]
    unsafe fn call_entry(
        &self,
        buffer: *mut f64,
        n: isize,
        return_value: *mut f64,
        user_data: *mut c_void,
    ) -> i32 {
        let entry = self.adaptive.entry.load(Ordering::Acquire);
        // SAFETY: `entry` is the general callback or a specialised one owned by `self`; both take
        // the context's layout, which is the same (same source and bound values), as does a
        // scratch context of the same filter.
        let f = unsafe { std::mem::transmute::<*mut c_void, crate::FilterFn>(entry) };
        unsafe { f(buffer, n, return_value, user_data) }
    }
}

/// A generic_filter callback that **specialises itself**: its first call compiles the filter for
/// that call's `filter_size` (straight-line code for the footprint, about a millisecond, once) and
/// every later call runs that version. scipy calls a callback with one size for a whole image, so
/// `generic_filter(img, f, size=3)` gets the specialised speed without the caller naming the size.
/// The specialised code still dispatches on the size, so any size stays correct, and results are
/// bit-identical either way. Its `user_data` must be a [`CallContext`].
///
/// # Safety
/// As the filter's own callback; `user_data` must be null or point to a live [`CallContext`].
pub unsafe extern "C" fn adaptive_callback(
    buffer: *mut f64,
    filter_size: isize,
    return_value: *mut f64,
    user_data: *mut c_void,
) -> i32 {
    let Some(ctx) = (unsafe { (user_data as *const CallContext).as_ref() }) else {
        return 0;
    };
    if ctx.adaptive.state.load(Ordering::Relaxed) == 0
        || ctx.raw.failed.load(Ordering::Relaxed) != 0
    {
        return unsafe { ctx.slow_call(buffer, filter_size, return_value) };
    }
    unsafe { ctx.call_entry(buffer, filter_size, return_value, user_data) }
}

/// Called by a generic_filter's compiled code (its prologue's cold path) when it finds its
/// context failed: scipy may call the compiled code directly ([`Hooks::direct_entry`]), from
/// several threads, and only the failing thread's calls may stop. Runs the call as its admission
/// says ([`RawContext::admission`]); 0 on a context without hooks, as before.
///
/// # Safety
/// `ctx` must be null or point to a live [`RawContext`]; the other arguments are the call's.
pub unsafe extern "C" fn ndjit_rt_failed_call(
    buffer: *mut f64,
    filter_size: isize,
    return_value: *mut f64,
    ctx: *const RawContext,
) -> i32 {
    let Some(raw) = (unsafe { ctx.as_ref() }) else {
        return 0;
    };
    if !raw.shared_between_threads() {
        return 0;
    }
    // SAFETY: only `Filter::new_context_with_hooks` makes contexts with a resume hook, and it
    // makes each the first field of a `CallContext` (`repr(C)`).
    let call_ctx = unsafe { &*(ctx as *const CallContext) };
    let run = std::panic::AssertUnwindSafe(|| {
        call_ctx.run_admitted(&|ud| unsafe {
            call_ctx.call_entry(buffer, filter_size, return_value, ud)
        })
    });
    std::panic::catch_unwind(run).unwrap_or(0)
}

/// The callback to hand a caller such as scipy for contexts of a filter of signature `sig`: it
/// runs the context's filter, and asks the context's resume hook when a call arrives after a
/// failure (see [`Filter::new_context_with_hooks`]). For `generic_filter` it is
/// [`adaptive_callback`]. Its `user_data` must be a [`CallContext`].
pub fn resumable_callback(sig: crate::Sig) -> *const c_void {
    match sig {
        crate::Sig::Filter => adaptive_callback as *const c_void,
        crate::Sig::Filter1d => resumable_filter1d as *const c_void,
        crate::Sig::Transform => resumable_transform as *const c_void,
        crate::Sig::Integrand => resumable_integrand as *const c_void,
    }
}

/// Runs `call` on the context behind `user_data` as its admission says (0 for a null one).
///
/// # Safety
/// `user_data` must be null or point to a live [`CallContext`].
unsafe fn admitted(user_data: *mut c_void, call: &dyn Fn(&CallContext, *mut c_void) -> i32) -> i32 {
    match unsafe { (user_data as *const CallContext).as_ref() } {
        Some(ctx) => ctx.run_admitted(&|ud| call(ctx, ud)),
        None => 0,
    }
}

/// `int (double *, intptr_t, double *, intptr_t, void *)` (generic_filter1d) behind
/// [`resumable_callback`].
unsafe extern "C" fn resumable_filter1d(
    iline: *mut f64,
    ilen: isize,
    oline: *mut f64,
    olen: isize,
    user_data: *mut c_void,
) -> i32 {
    type F = unsafe extern "C" fn(*mut f64, isize, *mut f64, isize, *mut c_void) -> i32;
    unsafe {
        admitted(user_data, &|ctx, ud| {
            // SAFETY: the filter's entry has this C type for `Sig::Filter1d` (`ir::Sig`).
            let f = std::mem::transmute::<*const c_void, F>(ctx.general_entry());
            f(iline, ilen, oline, olen, ud)
        })
    }
}

/// `int (intptr_t *, double *, int, int, void *)` (geometric_transform) behind
/// [`resumable_callback`].
unsafe extern "C" fn resumable_transform(
    out_coords: *mut isize,
    in_coords: *mut f64,
    out_rank: i32,
    in_rank: i32,
    user_data: *mut c_void,
) -> i32 {
    type F = unsafe extern "C" fn(*mut isize, *mut f64, i32, i32, *mut c_void) -> i32;
    unsafe {
        admitted(user_data, &|ctx, ud| {
            // SAFETY: the filter's entry has this C type for `Sig::Transform` (`ir::Sig`).
            let f = std::mem::transmute::<*const c_void, F>(ctx.general_entry());
            f(out_coords, in_coords, out_rank, in_rank, ud)
        })
    }
}

thread_local! {
    /// The integrand contexts (id, epoch) whose call failed in this thread: their calls here
    /// return NaN until the failure's exception has been raised (quad has no error channel and
    /// goes on calling) or the context is reset, while other threads' calls run on.
    static FAILED_HERE: std::cell::RefCell<Vec<(u64, u64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// At most this many failed contexts remembered per thread (one dropped while failed stays
/// until then).
const FAILED_HERE_MAX: usize = 64;

/// `double (int, double *, void *)` (quad's integrand) behind [`resumable_callback`]; NaN when the
/// call fails or may not run, as compiled code returns on failure.
///
/// quad has no error channel, so a failure is each thread's own: every call runs on a scratch
/// context, and one thread's failure neither stops another's calls nor hides its own (each is
/// reported to the hook). quad passes the integrand's `args` as doubles, which may stand for
/// Python ints: where one may, every typing runs and must agree ([`crate::integrand`]).
unsafe extern "C" fn resumable_integrand(n: i32, xx: *mut f64, user_data: *mut c_void) -> f64 {
    let Some(ctx) = (unsafe { (user_data as *const CallContext).as_ref() }) else {
        return f64::NAN;
    };
    let here = (ctx.id, ctx.epoch.load(Ordering::Acquire));
    let failed_here = FAILED_HERE.try_with(|f| f.borrow().contains(&here));
    if failed_here.unwrap_or(false) {
        // Its exception raised: this thread's calls run again (others' records stay).
        if !ctx.raw.try_resume() {
            return f64::NAN;
        }
        let _ = FAILED_HERE.try_with(|f| f.borrow_mut().retain(|r| r.0 != ctx.id));
    }
    let raw = ctx.filter.fresh_raw();
    // Called from quad's C code: a panic must not unwind there.
    let run = std::panic::AssertUnwindSafe(|| unsafe { integrand_call(ctx, &raw, n, xx) });
    let (v, failure) = match std::panic::catch_unwind(run) {
        Ok(v) => (v, raw.failure()),
        Err(_) => (f64::NAN, Some(crate::runtime::Failure::panicked())),
    };
    let Some(fail) = failure else {
        return v;
    };
    let _ = FAILED_HERE.try_with(|f| {
        let mut f = f.borrow_mut();
        f.retain(|r| r.0 != ctx.id);
        if f.len() == FAILED_HERE_MAX {
            f.remove(0);
        }
        f.push(here);
    });
    ctx.raw.report(fail);
    f64::NAN
}

/// One integrand call on the scratch context `raw`: every typing of quad's values in doubt, or
/// the compiled code itself; a failure is left in `raw`.
///
/// # Safety
/// As [`resumable_integrand`]; `raw` is a scratch context of `ctx`'s filter.
unsafe fn integrand_call(ctx: &CallContext, raw: &RawContext, n: i32, xx: *mut f64) -> f64 {
    type F = unsafe extern "C" fn(i32, *mut f64, *mut c_void) -> f64;
    let verdict = match usize::try_from(n) {
        Ok(len @ 1..) if !xx.is_null() => {
            // SAFETY: quad passes `n` values at `xx`.
            let values = unsafe { std::slice::from_raw_parts(xx, len) };
            crate::integrand::resolve(&ctx.filter, &ctx.typings, values)
        }
        _ => crate::integrand::Verdict::Run,
    };
    match verdict {
        crate::integrand::Verdict::Value(v) => v,
        crate::integrand::Verdict::Fail(fail) => {
            raw.record(fail);
            f64::NAN
        }
        crate::integrand::Verdict::Run => {
            // SAFETY: the filter's entry has this C type for `Sig::Integrand` (`ir::Sig`), and
            // compiled code reads only the `RawContext` at the start of a `CallContext`.
            let f = unsafe { std::mem::transmute::<*const c_void, F>(ctx.general_entry()) };
            unsafe { f(n, xx, raw as *const RawContext as *mut c_void) }
        }
    }
}

/// A C-ABI callback with the generic_filter signature that runs the **reference interpreter**
/// instead of the JIT: the debugging mode. Its `user_data` must be a [`CallContext`].
///
/// # Safety
/// `user_data` must point to a live [`CallContext`]; `buffer` to `filter_size` doubles and
/// `return_value` to one writable double (both are checked for NULL).
pub unsafe extern "C" fn interpreter_callback(
    buffer: *mut f64,
    filter_size: isize,
    return_value: *mut f64,
    user_data: *mut c_void,
) -> i32 {
    unsafe {
        admitted(user_data, &|ctx, ud| {
            // SAFETY: `ud` is this context's or a scratch one of its filter: a `RawContext`.
            let raw = &*(ud as *const RawContext);
            interpret_call(ctx, raw, buffer, filter_size, return_value)
        })
    }
}

/// One call of [`interpreter_callback`] on `raw`.
///
/// # Safety
/// As [`interpreter_callback`].
unsafe fn interpret_call(
    ctx: &CallContext,
    raw: &RawContext,
    buffer: *mut f64,
    filter_size: isize,
    return_value: *mut f64,
) -> i32 {
    if buffer.is_null() && filter_size > 0 || return_value.is_null() || filter_size < 0 {
        unsafe { crate::runtime::ndjit_rt_fail(raw, 0, filter_size as i64, 0) };
        return 0;
    }
    let values: &[f64] = if filter_size == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(buffer, filter_size as usize) }
    };
    let func = ctx.filter.ir_for(values.len());
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::interp::run(func, raw, values)
    })) {
        Ok(Ok(v)) => {
            unsafe { *return_value = v };
            1
        }
        Ok(Err(crate::interp::Failed)) => 0,
        Err(_) => {
            unsafe { crate::runtime::ndjit_rt_fail(raw, 0, -1, 0) };
            0
        }
    }
}

/// Compile-time checks that contexts can cross threads.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<CallContext>();
    send_sync::<Filter>();
};
