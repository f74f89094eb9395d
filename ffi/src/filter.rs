//! Compiled filters, their callback, and call contexts.

use crate::args::{count, handle, out_arg, slice_arg, str_arg};
use crate::bindings::{ndjit_bindings, optional};
use crate::error::{guard, guard_value, ndjit_error, ndjit_status, Failure};
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// The compiled callback, with the signature `scipy.ndimage.generic_filter` calls through a
/// `LowLevelCallable`:
///
/// - `buffer`: the `filter_size` values of the neighbourhood (the callee may scribble on it; ndjit's
///   code never does);
/// - `filter_size`: how many values `buffer` holds;
/// - `return_value`: where the result is stored;
/// - `user_data`: a context from `ndjit_filter_user_data` or `ndjit_context_user_data` of the same
///   filter. Never NULL, never another filter's.
///
/// Returns 1 on success. Returns 0 when the filter fails (an index out of range ...): the
/// failure is recorded in the context, read it with `ndjit_filter_failure` /
/// `ndjit_context_failure`. Once a context has recorded a failure, every later call with it
/// returns 0 at once, without running, until it is reset (scipy keeps calling after a failure).
///
/// The function is reentrant: any number of threads may call it at once, with the same or with
/// different contexts. It is valid while the filter it came from, or any filter or context
/// sharing its code (`ndjit_filter_with_bindings`, `ndjit_context_new`), is alive.
pub type ndjit_callback = Option<
    unsafe extern "C" fn(
        buffer: *mut f64,
        filter_size: isize,
        return_value: *mut f64,
        user_data: *mut c_void,
    ) -> c_int,
>;

/// A compiled filter: native code plus the bound values it reads.
///
/// Created by `ndjit_filter_compile` or `ndjit_filter_with_bindings`; freed with
/// `ndjit_filter_free`. A filter is immutable once made (its bound values included): every
/// function taking a `const ndjit_filter *` may be called from many threads at once. Only
/// `ndjit_filter_free` needs exclusive access.
pub struct ndjit_filter {
    pub(crate) inner: ndjit_core::Filter,
}

/// A call context: a `user_data` of its own for a filter's callback, with its own failure slot.
///
/// Give each thread its own context when failures must be told apart; the callback itself is
/// reentrant either way. A context keeps the filter's code and bound values alive: it stays
/// valid, and so does the callback, after the filter handle it was made from is freed.
///
/// Created by `ndjit_context_new`, freed with `ndjit_context_free`. Thread-safe, like the filter.
pub struct ndjit_context {
    inner: Arc<ndjit_core::CallContext>,
}

fn boxed<T>(v: T) -> *mut T {
    Box::into_raw(Box::new(v))
}

/// Compiles filter source into native code.
///
/// - `source`: NUL-terminated UTF-8 Python: an expression over `x` (`"max(x) - min(x)"`), a
///   `lambda` (`"lambda w: w.sum() / k"`) or a `def` whose first parameter is the
///   neighbourhood. Other names it reads must be NumPy/`math` functions, builtins, parameters
///   with defaults, or bound in `bindings`.
/// - `bindings`: bound values (copied), or NULL for none.
/// - `filter_size`: when positive, also compile straight-line code specialised to that many
///   values per call (faster; other sizes still work through the general code). 0 means no
///   specialisation.
/// - `out`: receives the new filter, which the caller owns and frees with `ndjit_filter_free`;
///   NULL is stored there on failure.
/// - `error`: NULL, or receives NULL on success and a new error object on failure.
///
/// Returns `NDJIT_ERR_COMPILE` when the source does not compile (the error has the line and
/// column), `NDJIT_ERR_NULL` if `source` or `out` is NULL, `NDJIT_ERR_UTF8`,
/// `NDJIT_ERR_INVALID_ARGUMENT` if `filter_size` is negative.
///
/// Thread-safe: several threads may compile at once.
///
/// # Safety
/// `source` is NULL or NUL-terminated; `bindings` is NULL or a live bindings object not being
/// modified concurrently; `out` is NULL or writable; `error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_filter_compile(
    source: *const c_char,
    bindings: *const ndjit_bindings,
    filter_size: isize,
    out: *mut *mut ndjit_filter,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    guard(error, || {
        // SAFETY (all four): forwarded contracts.
        let out = unsafe { out_arg(out, "out") }?;
        let source = unsafe { str_arg(source, "source") }?;
        let n = count(filter_size, "filter_size")?;
        let empty = ndjit_core::Bindings::new();
        let b = unsafe { optional(bindings) }.unwrap_or(&empty);
        let mut builder = ndjit_core::Filter::builder(source).bindings(b);
        if n > 0 {
            builder = builder.filter_size(n);
        }
        let filter = builder.compile().map_err(|e| Failure::compile(&e))?;
        *out = boxed(ndjit_filter { inner: filter });
        Ok(())
    })
}

/// Frees a filter. NULL is allowed and does nothing.
///
/// The code stays alive while contexts or other filters sharing it exist; otherwise, after this
/// call, the callback and `user_data` obtained from this filter must not be used.
///
/// # Safety
/// `filter` is NULL or a live filter, not in use by another thread and not used after this.
#[no_mangle]
pub unsafe extern "C" fn ndjit_filter_free(filter: *mut ndjit_filter) {
    if !filter.is_null() {
        // SAFETY: per the contract, it came from `boxed` and is freed once.
        guard_value((), || drop(unsafe { Box::from_raw(filter) }));
    }
}

/// The compiled callback (see `ndjit_callback`), or NULL if `filter` is NULL. Pass it
/// `ndjit_filter_user_data(filter)` or the `user_data` of a context made from this filter.
///
/// Thread-safe. The pointer is valid while the filter, or a context or filter sharing its code,
/// is alive.
///
/// # Safety
/// `filter` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ndjit_filter_callback(filter: *const ndjit_filter) -> ndjit_callback {
    // SAFETY: forwarded contract.
    let f = unsafe { filter.as_ref() }?;
    // Never `None` for a filter of `ndjit_compile`, which generates the code.
    f.inner.callback().ok()
}

/// The filter's own `user_data` for its callback, or NULL if `filter` is NULL.
///
/// It carries the bound values and one failure slot, shared by every call made with it (the
/// calls themselves may run concurrently). Use `ndjit_context_new` for contexts with failure
/// slots of their own. Valid while `filter` is alive; do not free it. Thread-safe.
///
/// # Safety
/// `filter` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ndjit_filter_user_data(filter: *const ndjit_filter) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { filter.as_ref() }.map_or(std::ptr::null_mut(), |f| f.inner.user_data())
}

/// Runs the filter on one neighbourhood: `*result = f(buffer[0 .. filter_size])`.
///
/// `buffer` is only read; it may be NULL when `filter_size` is 0. This does not use the
/// filter's `user_data` context: its failure slot is neither read nor set, and a failure is
/// reported here, as `NDJIT_ERR_RUNTIME` with the message, line and column of the failing
/// expression (`*result` is then left unchanged).
///
/// Other errors: `NDJIT_ERR_NULL` (`filter`, `result`, or `buffer` with `filter_size > 0`),
/// `NDJIT_ERR_INVALID_ARGUMENT` (negative `filter_size`, misaligned `buffer`).
///
/// Thread-safe: any number of threads may evaluate the same filter at once.
///
/// # Safety
/// `filter` is NULL or a live filter; `buffer` is NULL or points to `filter_size` readable
/// doubles; `result` is NULL or writable; `error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_filter_call(
    filter: *const ndjit_filter,
    buffer: *const f64,
    filter_size: isize,
    result: *mut f64,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    guard(error, || {
        // SAFETY (all): forwarded contracts.
        let f = unsafe { handle(filter, "filter") }?;
        let values = unsafe { slice_arg(buffer, filter_size, "buffer", "filter_size") }?;
        let result = unsafe { result.as_mut() }.ok_or_else(|| Failure::null("result"))?;
        *result = f.inner.call(values).map_err(|e| Failure::runtime(&e))?;
        Ok(())
    })
}

/// A filter with the same code and other bound values, without recompiling.
///
/// Names in `bindings` replace the current values; names not given keep them; names the filter
/// does not read are ignored. A value of another kind than the one compiled (an array for a
/// number, a double for a name compiled as an integer) is `NDJIT_ERR_BINDING`: recompile to
/// change kinds. `bindings` NULL means none (a copy with the same values).
///
/// On success `*out` receives a new filter (free it with `ndjit_filter_free`); `filter` is
/// unchanged and stays valid. Thread-safe.
///
/// # Safety
/// `filter` is NULL or a live filter; `bindings` NULL or a live bindings object not being
/// modified; `out` and `error` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_filter_with_bindings(
    filter: *const ndjit_filter,
    bindings: *const ndjit_bindings,
    out: *mut *mut ndjit_filter,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    guard(error, || {
        // SAFETY (all): forwarded contracts.
        let out = unsafe { out_arg(out, "out") }?;
        let f = unsafe { handle(filter, "filter") }?;
        let empty = ndjit_core::Bindings::new();
        let b = unsafe { optional(bindings) }.unwrap_or(&empty);
        let g = f.inner.with_bindings(b).map_err(|e| Failure::compile(&e))?;
        *out = boxed(ndjit_filter { inner: g });
        Ok(())
    })
}

/// Reports the first failure recorded in the filter's own `user_data` context by callback
/// calls since it was made or last reset.
///
/// Returns `NDJIT_OK` (and stores NULL in `*error`) when no call has failed, and
/// `NDJIT_ERR_RUNTIME` with the message, line and column of the failing expression when one
/// has. `NDJIT_ERR_NULL` if `filter` is NULL. Thread-safe.
///
/// # Safety
/// `filter` is NULL or a live filter; `error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_filter_failure(
    filter: *const ndjit_filter,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    guard(error, || {
        // SAFETY: forwarded contract.
        let f = unsafe { handle(filter, "filter") }?;
        f.inner
            .failure()
            .map_or(Ok(()), |e| Err(Failure::runtime(&e)))
    })
}

/// Clears the failure recorded in the filter's own `user_data` context, so that callback calls
/// with it run again. Returns `NDJIT_ERR_NULL` if `filter` is NULL, else `NDJIT_OK`.
///
/// Thread-safe, but calls running concurrently with the reset may record a failure again.
///
/// # Safety
/// `filter` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ndjit_filter_reset(filter: *const ndjit_filter) -> ndjit_status {
    guard(std::ptr::null_mut(), || {
        // SAFETY: forwarded contract.
        unsafe { handle(filter, "filter") }?.inner.reset();
        Ok(())
    })
}

/// Creates a new call context for `filter`: a `user_data` with the filter's bound values and a
/// failure slot of its own.
///
/// On success `*out` receives the context; the caller owns it and frees it with
/// `ndjit_context_free`. The context keeps the filter's code alive, so it may outlive the
/// `filter` handle. Errors: `NDJIT_ERR_NULL` if `filter` or `out` is NULL. Thread-safe.
///
/// # Safety
/// `filter` is NULL or a live filter; `out` and `error` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_context_new(
    filter: *const ndjit_filter,
    out: *mut *mut ndjit_context,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    guard(error, || {
        // SAFETY: forwarded contracts.
        let out = unsafe { out_arg(out, "out") }?;
        let f = unsafe { handle(filter, "filter") }?;
        *out = boxed(ndjit_context {
            inner: f.inner.new_context().map_err(|e| Failure::compile(&e))?,
        });
        Ok(())
    })
}

/// Frees a context. NULL is allowed and does nothing. Its `user_data` must not be used after
/// this, and no call using it may still be running on any thread (exclusive access).
///
/// # Safety
/// `context` is NULL or a live context, not used after this call.
#[no_mangle]
pub unsafe extern "C" fn ndjit_context_free(context: *mut ndjit_context) {
    if !context.is_null() {
        // SAFETY: per the contract, it came from `boxed` and is freed once.
        guard_value((), || drop(unsafe { Box::from_raw(context) }));
    }
}

/// The context's `user_data` pointer for the callback, or NULL if `context` is NULL. Valid
/// while the context is alive; do not free it. Thread-safe.
///
/// # Safety
/// `context` is NULL or a live context.
#[no_mangle]
pub unsafe extern "C" fn ndjit_context_user_data(context: *const ndjit_context) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { context.as_ref() }.map_or(std::ptr::null_mut(), |c| c.inner.user_data())
}

/// The callback of the context's filter (the same as `ndjit_filter_callback` of it), or NULL if
/// `context` is NULL. Valid while the context is alive. Thread-safe.
///
/// # Safety
/// `context` is NULL or a live context.
#[no_mangle]
pub unsafe extern "C" fn ndjit_context_callback(context: *const ndjit_context) -> ndjit_callback {
    // SAFETY: forwarded contract.
    let c = unsafe { context.as_ref() }?;
    // A context is made from a filter whose code exists.
    c.inner.filter().callback().ok()
}

/// Reports the first failure recorded in this context since it was made or last reset:
/// `NDJIT_OK` when none, `NDJIT_ERR_RUNTIME` with message, line and column when a call failed,
/// `NDJIT_ERR_NULL` if `context` is NULL. Thread-safe.
///
/// # Safety
/// `context` is NULL or a live context; `error` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_context_failure(
    context: *const ndjit_context,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    guard(error, || {
        // SAFETY: forwarded contract.
        let c = unsafe { handle(context, "context") }?;
        c.inner
            .failure()
            .map_or(Ok(()), |e| Err(Failure::runtime(&e)))
    })
}

/// Clears the context's failure so that calls with it run again. `NDJIT_ERR_NULL` if `context`
/// is NULL, else `NDJIT_OK`. Thread-safe (calls running meanwhile may record a failure again).
///
/// # Safety
/// `context` is NULL or a live context.
#[no_mangle]
pub unsafe extern "C" fn ndjit_context_reset(context: *const ndjit_context) -> ndjit_status {
    guard(std::ptr::null_mut(), || {
        // SAFETY: forwarded contract.
        unsafe { handle(context, "context") }?.inner.reset();
        Ok(())
    })
}
