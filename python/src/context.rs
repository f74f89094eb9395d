//! `CallContext`: a `user_data` for the compiled callback, with its own failure slot, handed to
//! scipy as a pair of capsules (function, user data).
//!
//! On the first failure the context raises the Python exception scipy reports (scipy's loop holds
//! the GIL while it calls us). scipy keeps calling after a failure; the context then returns 0 at
//! once, until the exception has been consumed: the next call after that clears the failure and
//! runs normally, so a `Filter` stays usable after an error.

use crate::errors;
use ndjit::Filter;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::{c_void, CStr};
use std::ptr::NonNull;
use std::sync::{Arc, OnceLock};

/// The name of the user-data capsule (any name works for scipy; this one is for humans).
const USER_DATA: &CStr = c"ndjit.user_data";

#[pyclass(frozen, module = "ndjit._core", name = "CallContext")]
pub struct CallContext {
    ctx: Arc<ndjit::CallContext>,
    debug: bool,
    /// scipy's own capsule inside the `LowLevelCallable` built from [`CallContext::capsules`], once
    /// [`CallContext::redirect`] has named it.
    scipy_capsule: Arc<OnceLock<Py<PyAny>>>,
}

impl CallContext {
    pub fn new(filter: &Filter, debug: bool, locate: Option<Py<PyAny>>) -> PyResult<CallContext> {
        if debug && filter.signature() != ndjit::Sig::Filter {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "the interpreter callback (debug mode) exists for generic_filter only",
            ));
        }
        let scipy_capsule: Arc<OnceLock<Py<PyAny>>> = Arc::default();
        let (on_fail, on_entry) = (scipy_capsule.clone(), scipy_capsule.clone());
        // quad has no error channel: its failures are raised once it is back in Python.
        let deferred = (filter.signature() == ndjit::Sig::Integrand)
            .then(|| Arc::new(errors::Deferred::default()));
        let deferred_resume = deferred.clone();
        let hooks = ndjit::Hooks {
            on_failure: Some(Box::new(move |err: ndjit::RuntimeError| {
                Python::attach(|py| {
                    // Back through the trampoline, whose next call asks `resume`.
                    repoint(py, &on_fail, ndjit::adaptive_callback as *const c_void);
                    let exc = errors::runtime_error(py, &err);
                    if let Some(locate) = &locate {
                        // Only the position changes; if that fails, the exception still stands.
                        if let Err(e) = locate.call1(py, (exc.value(py),)) {
                            e.write_unraisable(py, None);
                        }
                    }
                    match &deferred {
                        Some(d) => d.schedule(py, exc),
                        None => exc.restore(py),
                    }
                });
            })),
            // Calls return at once until the exception raised for the failure has been consumed.
            resume: Some(Box::new(move || {
                Python::attach(|py| {
                    !PyErr::occurred(py) && !deferred_resume.as_ref().is_some_and(|d| d.pending(py))
                })
            })),
            direct_entry: Some(Box::new(move |entry| {
                Python::attach(|py| repoint(py, &on_entry, entry))
            })),
        };
        let ctx = Python::attach(|py| {
            (filter.new_context_with_hooks(hooks)).map_err(|e| errors::compile_error(py, &e))
        })?;
        Ok(CallContext {
            ctx,
            debug,
            scipy_capsule,
        })
    }
}

/// Points scipy's capsule (if named) at `entry`, a generic_filter callback for the same context.
/// scipy reads the pointer when each `generic_filter` call starts, so the call in progress is not
/// affected.
fn repoint(py: Python<'_>, capsule: &OnceLock<Py<PyAny>>, entry: *const c_void) {
    if let Some(c) = capsule.get() {
        // SAFETY: `c` is a capsule (checked by `redirect`) and `entry` is not null. A failure
        // only leaves the old pointer, which stays valid: clear its exception.
        if unsafe { pyo3::ffi::PyCapsule_SetPointer(c.bind(py).as_ptr(), entry as *mut c_void) }
            != 0
        {
            PyErr::fetch(py);
        }
    }
}

/// Frees the context reference a user-data capsule holds.
unsafe extern "C" fn drop_user_data(capsule: *mut pyo3::ffi::PyObject) {
    let p = unsafe { pyo3::ffi::PyCapsule_GetPointer(capsule, USER_DATA.as_ptr()) };
    if !p.is_null() {
        drop(unsafe { Arc::from_raw(p as *const ndjit::CallContext) });
    }
}

#[pymethods]
impl CallContext {
    /// `(function_capsule, user_data_capsule)` for `scipy.LowLevelCallable(function, user_data)`.
    /// The user-data capsule owns a reference to the context (and so to the compiled code).
    fn capsules<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let filter = self.ctx.filter();
        // Both ask the context's resume hook after a failure; generic_filter's also specialises
        // itself to the size of the first call (scipy calls with one size per image).
        let entry = match self.debug {
            true => ndjit::interpreter_callback as *const c_void,
            false => ndjit::resumable_callback(filter.signature()),
        };
        let f = NonNull::new(entry as *mut c_void).expect("function pointers are not null");
        let ud = NonNull::new(Arc::into_raw(self.ctx.clone()) as *mut c_void)
            .expect("Arc pointers are not null");
        // SAFETY: `f` is a valid function pointer of the named signature for as long as the
        // context lives, and the user-data capsule keeps the context alive (freed by its destructor).
        let function =
            unsafe { PyCapsule::new_with_pointer(py, f, filter.signature().capsule_c_name()) }?;
        let user_data = match unsafe {
            PyCapsule::new_with_pointer_and_destructor(py, ud, USER_DATA, Some(drop_user_data))
        } {
            Ok(c) => c,
            Err(e) => {
                drop(unsafe { Arc::from_raw(ud.as_ptr() as *const ndjit::CallContext) });
                return Err(e);
            }
        };
        Ok((function, user_data))
    }

    /// Lets this context repoint `capsule`, the function capsule scipy built into a
    /// `LowLevelCallable` from [`CallContext::capsules`] (its item 0), straight at the compiled
    /// code once the first call has specialised it, and back at the trampoline after a failure:
    /// that saves the trampoline on every later call. scipy reads the pointer at the start of each
    /// `generic_filter` call. For generic_filter contexts of compiled code only; named once.
    fn redirect(&self, capsule: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.debug || self.ctx.filter().signature() != ndjit::Sig::Filter {
            return Ok(());
        }
        // SAFETY: the name is read only from a capsule; it is a C string or null.
        let named = unsafe { pyo3::ffi::PyCapsule_CheckExact(capsule.as_ptr()) } != 0 && {
            let name = unsafe { pyo3::ffi::PyCapsule_GetName(capsule.as_ptr()) };
            !name.is_null()
                && unsafe { CStr::from_ptr(name) } == ndjit::Sig::Filter.capsule_c_name()
        };
        if !named {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "expected scipy's generic_filter capsule",
            ));
        }
        // A second call names nothing new: the first capsule stays the one repointed.
        let _ = self.scipy_capsule.set(capsule.clone().unbind());
        Ok(())
    }

    /// The first failure recorded in this context, as the exception it raised, or None.
    fn failure(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.ctx
            .failure()
            .map(|e| errors::runtime_error(py, &e).into_value(py).into_any())
    }

    /// Clears a recorded failure.
    fn reset(&self) {
        self.ctx.reset()
    }

    /// The raw `user_data` address (for tests and ctypes users).
    #[getter]
    fn address(&self) -> usize {
        self.ctx.user_data() as usize
    }
}
