//! Call contexts: the `user_data` a caller passes to the compiled callback.
//!
//! Each context has its own failure slot (so one caller's error does not stop another's calls)
//! and keeps the filter's code and bound values alive. Give each thread its own context when
//! failures must be told apart; the callback itself is reentrant either way.

use crate::error::RuntimeError;
use crate::filter::Filter;
use crate::runtime::RawContext;
use std::ffi::c_void;
use std::sync::Arc;

/// A `user_data` context of its own for a [`Filter`]'s callback.
///
/// ```
/// let f = ndjit::Filter::compile("x[3]", &ndjit::Bindings::new())?;
/// let ctx = f.new_context();
/// let mut buf = [1.0, 2.0];
/// let mut out = 0.0;
/// let ok = unsafe { (f.callback())(buf.as_mut_ptr(), 2, &mut out, ctx.user_data()) };
/// assert_eq!(ok, 0);
/// assert!(ctx.failure().unwrap().message.contains("out of bounds"));
/// # Ok::<(), ndjit::Error>(())
/// ```
#[repr(C)]
pub struct CallContext {
    /// First, so that `user_data` points at it: compiled code reads its fields at fixed offsets.
    raw: RawContext,
    filter: Filter,
}

impl Filter {
    /// A new context with its own failure slot.
    pub fn new_context(&self) -> Arc<CallContext> {
        Arc::new(CallContext { raw: self.fresh_raw(), filter: self.clone() })
    }

    /// A new context with hooks: `on_failure` is called with the first failure recorded in it, on
    /// the failing thread; `resume` is asked when a call arrives while the context is failed, and
    /// `true` clears the failure and runs the call. The Python package raises the exception scipy
    /// reports from `on_failure`, and resumes once that exception has been consumed.
    pub fn new_context_with_hooks(
        &self,
        on_failure: Option<Box<dyn Fn(RuntimeError) + Send + Sync>>,
        resume: Option<Box<dyn Fn() -> bool + Send + Sync>>,
    ) -> Arc<CallContext> {
        let f = self.clone();
        let hook = on_failure.map(|h| Box::new(move |fail| h(f.describe(Some(fail)))) as crate::runtime::FailureHook);
        let raw = self.fresh_raw().with_hooks(hook, resume);
        Arc::new(CallContext { raw, filter: self.clone() })
    }
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
        self.raw.reset()
    }
    pub fn filter(&self) -> &Filter {
        &self.filter
    }
}

/// A C-ABI callback with the generic_filter signature that runs the **reference interpreter**
/// instead of the JIT: the debugging mode. Its `user_data` must be a [`CallContext`].
///
/// # Safety
/// `user_data` must point to a live [`CallContext`]; `buffer` to `filter_size` doubles and
/// `return_value` to one writable double (both are checked for NULL).
pub unsafe extern "C" fn interpreter_callback(buffer: *mut f64, filter_size: isize, return_value: *mut f64, user_data: *mut c_void) -> i32 {
    let Some(ctx) = (unsafe { (user_data as *const CallContext).as_ref() }) else { return 0 };
    if buffer.is_null() && filter_size > 0 || return_value.is_null() || filter_size < 0 {
        unsafe { crate::runtime::ndjit_rt_fail(&ctx.raw, 0, filter_size as i64, 0) };
        return 0;
    }
    let values: &[f64] = if filter_size == 0 { &[] } else { unsafe { std::slice::from_raw_parts(buffer, filter_size as usize) } };
    let func = ctx.filter.ir_for(values.len());
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::interp::run(func, &ctx.raw, values))) {
        Ok(Ok(v)) => {
            unsafe { *return_value = v };
            1
        }
        Ok(Err(())) => 0,
        Err(_) => {
            unsafe { crate::runtime::ndjit_rt_fail(&ctx.raw, 0, -1, 0) };
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
