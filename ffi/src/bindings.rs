//! Bound values: the numbers and arrays a filter reads besides its buffer.

use crate::args::{identifier, slice_arg, str_arg};
use crate::error::{guard, guard_value, ndjit_error, ndjit_status, Failure};

/// A set of bound values: names mapped to numbers or arrays of doubles, for
/// `ndjit_filter_compile` and `ndjit_filter_with_bindings`.
///
/// A filter's source reads these by name, as a Python callback reads closure variables, module
/// constants or `extra_arguments`. Values are copied in when set, and copied again by the
/// functions that take a bindings object, so the bindings may be changed or freed right after.
///
/// Created with `ndjit_bindings_new`, freed with `ndjit_bindings_free`. Not synchronised:
/// setting values must not run concurrently with any other use of the same object; reading it
/// (compiling with it) from several threads at once is fine.
pub struct ndjit_bindings {
    pub(crate) inner: ndjit_core::Bindings,
}

/// Creates an empty set of bound values. The caller owns the result and frees it with
/// `ndjit_bindings_free`. Returns NULL only on an internal error. Thread-safe.
#[no_mangle]
pub extern "C" fn ndjit_bindings_new() -> *mut ndjit_bindings {
    guard_value(std::ptr::null_mut(), || {
        Box::into_raw(Box::new(ndjit_bindings {
            inner: ndjit_core::Bindings::new(),
        }))
    })
}

/// Frees a bindings object. NULL is allowed and does nothing. Filters compiled with it are not
/// affected (they hold copies). Needs exclusive access: no other thread may be using `bindings`.
///
/// # Safety
/// `bindings` is NULL or a live object from `ndjit_bindings_new`, not used after this call.
#[no_mangle]
pub unsafe extern "C" fn ndjit_bindings_free(bindings: *mut ndjit_bindings) {
    if !bindings.is_null() {
        // SAFETY: per the contract, it came from `Box::into_raw` in `ndjit_bindings_new`.
        guard_value((), || drop(unsafe { Box::from_raw(bindings) }));
    }
}

/// Shared part of the setters.
///
/// # Safety
/// As for the setters.
unsafe fn set(
    bindings: *mut ndjit_bindings,
    name: *const std::ffi::c_char,
    error: *mut *mut ndjit_error,
    value: impl FnOnce() -> Result<ndjit_core::Value, Failure>,
) -> ndjit_status {
    guard(error, || {
        // SAFETY: forwarded contracts; a live object is not in use by another thread.
        let b = unsafe { bindings.as_mut() }.ok_or_else(|| Failure::null("bindings"))?;
        let name = unsafe { str_arg(name, "name") }?;
        identifier(name, "name")?;
        b.inner.set(name, value()?);
        Ok(())
    })
}

/// Binds `name` to the number `value` (a Python float). Replaces any earlier value of `name`.
/// `name` is copied. Needs exclusive access to `bindings` (like every setter): no other thread
/// may use the same object meanwhile.
///
/// Returns `NDJIT_ERR_NULL` if `bindings` or `name` is NULL, `NDJIT_ERR_UTF8` if `name` is not
/// UTF-8, `NDJIT_ERR_INVALID_ARGUMENT` if it is not a Python identifier.
///
/// # Safety
/// `bindings` is NULL or a live bindings object not in use by another thread; `name` is NULL or
/// a NUL-terminated string; `error` is NULL or points to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn ndjit_bindings_set_double(
    bindings: *mut ndjit_bindings,
    name: *const std::ffi::c_char,
    value: f64,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(bindings, name, error, || {
            Ok(ndjit_core::Value::Float(value))
        })
    }
}

/// Binds `name` to the integer `value` (a Python int). Bind integers that the source uses as
/// indices or counts (`x[k]`, `range(n)`) with this function: a double there is a type error,
/// as a float index is in Python. Anywhere else an integer behaves as the same double would.
///
/// Errors as for `ndjit_bindings_set_double`.
///
/// # Safety
/// As for `ndjit_bindings_set_double`.
#[no_mangle]
pub unsafe extern "C" fn ndjit_bindings_set_int(
    bindings: *mut ndjit_bindings,
    name: *const std::ffi::c_char,
    value: i64,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    // SAFETY: forwarded contract.
    unsafe { set(bindings, name, error, || Ok(ndjit_core::Value::Int(value))) }
}

/// Binds `name` to a 1-D array of `len` doubles (as a NumPy float64 array),
/// copied from `values`. `values` may be NULL when `len` is 0.
///
/// Errors as for `ndjit_bindings_set_double`, and `NDJIT_ERR_INVALID_ARGUMENT` if `len` is
/// negative or `values` is not aligned for `double`, `NDJIT_ERR_NULL` if `values` is NULL while
/// `len > 0`.
///
/// # Safety
/// As for `ndjit_bindings_set_double`; `values` is NULL or points to `len` readable doubles.
#[no_mangle]
pub unsafe extern "C" fn ndjit_bindings_set_array(
    bindings: *mut ndjit_bindings,
    name: *const std::ffi::c_char,
    values: *const f64,
    len: isize,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(bindings, name, error, || {
            Ok(ndjit_core::Value::Array(
                slice_arg(values, len, "values", "len")?.to_vec(),
                ndjit_core::ArrayKind::Float64,
            ))
        })
    }
}

/// The bindings behind an optional handle (NULL means none).
///
/// # Safety
/// `p` is NULL or a live bindings object.
pub(crate) unsafe fn optional<'a>(p: *const ndjit_bindings) -> Option<&'a ndjit_core::Bindings> {
    // SAFETY: per the contract.
    unsafe { p.as_ref() }.map(|b| &b.inner)
}
