//! ndjit errors as Python exceptions. The exception classes live in `ndjit/_errors.py`; this
//! module passes them the structured fields (kind, line, column, caret text). The kinds
//! themselves are the core's enums, exported once ([`export_kinds`]) so that Python builds one
//! class per kind from them: no message text decides which exception is raised.

use ndjit::{ErrorKind, Exception};
use pyo3::exceptions::{
    PyArithmeticError, PyAssertionError, PyIndexError, PyKeyboardInterrupt, PyMemoryError,
    PyNotImplementedError, PyOverflowError, PyRuntimeError, PyTypeError, PyUnboundLocalError,
    PyValueError, PyZeroDivisionError,
};
use pyo3::prelude::*;
use std::ffi::c_long;
use std::sync::{Mutex, MutexGuard};

/// The exception `ndjit._errors.<factory>(*args)` makes (a class of that module, or a function
/// that chooses one).
pub fn build<'py>(py: Python<'py>, factory: &str, args: impl pyo3::call::PyCallArgs<'py>) -> PyErr {
    let made = py
        .import("ndjit._errors")
        .and_then(|m| m.getattr(factory))
        .and_then(|f| f.call1(args));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// Adds `ERROR_KINDS` (`(display, is_type_error)` for every compile-error kind) and
/// `EXCEPTIONS` (the name of every run-time exception) to the module, for `_errors.py`.
pub fn export_kinds(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let kinds: Vec<(&str, bool)> = ErrorKind::ALL
        .iter()
        .map(|k| (k.as_str(), k.is_type_error()))
        .collect();
    m.add("ERROR_KINDS", kinds)?;
    let names: Vec<&str> = Exception::ALL.iter().map(|e| e.name()).collect();
    m.add("EXCEPTIONS", names)
}

/// A compile error: `FilterSyntaxError` (a `SyntaxError`) or `FilterTypeError` (a `TypeError`),
/// as the kind says (see `ErrorKind::is_type_error`).
pub fn compile_error(py: Python<'_>, e: &ndjit::Error) -> PyErr {
    let args = (
        e.kind.as_str(),
        e.message.clone(),
        e.span.start.line,
        e.span.start.column,
        e.span.end.line,
        e.span.end.column,
        e.source_line().map(str::to_owned),
        e.hint.clone(),
        e.to_string(),
        e.name.as_deref(),
    );
    build(py, "compile_error", args)
}

/// A run-time failure inside a compiled filter: a `FilterRuntimeError` that is also the
/// exception the user's Python would raise (`IndexError`, `ValueError` ...); for an interrupt,
/// the exception the signal handler raised (`KeyboardInterrupt`).
pub fn runtime_error(py: Python<'_>, e: &ndjit::RuntimeError) -> PyErr {
    if e.is_interrupt() {
        // The exception the signal handler raised (set by `PyErr_CheckSignals` on scipy's path).
        return PyErr::take(py)
            .unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err(e.message.clone()));
    }
    let args = (
        e.exception.name(),
        e.message.clone(),
        e.span.start.line,
        e.span.start.column,
        e.snippet.clone(),
        e.span.end.line,
        e.span.end.column,
    );
    build(py, "runtime_error", args)
}

/// Python's own exception of a kind, e.g. `ValueError(message)`: for failures outside a filter's
/// code (bad arguments to the driver), which scipy raises as plain built-in exceptions.
pub fn builtin_exception(py: Python<'_>, exception: Exception, message: String) -> PyErr {
    match exception {
        Exception::IndexError => PyIndexError::new_err(message),
        Exception::ValueError => PyValueError::new_err(message),
        Exception::ZeroDivisionError => PyZeroDivisionError::new_err(message),
        Exception::OverflowError => PyOverflowError::new_err(message),
        Exception::TypeError => PyTypeError::new_err(message),
        Exception::RuntimeError => PyRuntimeError::new_err(message),
        Exception::MemoryError => PyMemoryError::new_err(message),
        Exception::KeyboardInterrupt => PyKeyboardInterrupt::new_err(message),
        Exception::AssertionError => PyAssertionError::new_err(message),
        Exception::NotImplementedError => PyNotImplementedError::new_err(message),
        Exception::ArithmeticError => PyArithmeticError::new_err(message),
        Exception::UnboundLocalError => PyUnboundLocalError::new_err(message),
        // NumPy's class, which `_errors.py` finds wherever this NumPy keeps it.
        Exception::AxisError => build(py, "_AxisError", (message,)),
        Exception::StatisticsError => build(py, "_StatisticsError", (message,)),
    }
}

/// A failure raised in the calling thread once it runs Python again, for callbacks whose caller
/// has no error channel: quad's integrand returns a bare double, and an exception left set when
/// quad's C function returns becomes a `SystemError` (the real one only in `__cause__`). Python
/// raises it where that function returns; see `deferred` in `_errors.py`.
#[derive(Default)]
pub struct Deferred(Mutex<Vec<(c_long, Py<PyAny>)>>);

impl Deferred {
    /// Each thread's scheduled exception: threads sharing one integrand fail on their own.
    fn slot(&self) -> MutexGuard<'_, Vec<(c_long, Py<PyAny>)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn this_thread() -> c_long {
        // SAFETY: a plain query of the calling thread's identity.
        unsafe { pyo3::ffi::PyThread_get_thread_ident() as c_long }
    }

    /// Schedules `exc` in this thread; should that fail, leaves it set, as for other callers.
    pub fn schedule(&self, py: Python<'_>, exc: PyErr) {
        let value = exc.into_value(py);
        let carrier = py
            .import("ndjit._errors")
            .and_then(|m| m.getattr("deferred"))
            .and_then(|f| f.call1((value.clone_ref(py),)));
        match carrier {
            Ok(carrier) => {
                let thread = Self::this_thread();
                // SAFETY: the GIL is held and `carrier` is an exception class, of which
                // PyThreadState_SetAsyncExc takes its own reference. It is called last: any
                // Python code run after it, in this thread, raises it.
                unsafe {
                    pyo3::ffi::PyThreadState_SetAsyncExc(thread, carrier.as_ptr());
                }
                let mut slot = self.slot();
                slot.retain(|(t, _)| *t != thread);
                slot.push((thread, carrier.unbind()));
            }
            Err(_) => PyErr::from_value(value.into_bound(py).into_any()).restore(py),
        }
    }

    /// Whether the scheduled exception is still to be raised. Reads a class attribute only:
    /// running Python code here would raise it inside the callback.
    pub fn pending(&self, py: Python<'_>) -> bool {
        let thread = Self::this_thread();
        let mut slot = self.slot();
        let pending = |c: &Py<PyAny>| {
            c.bind(py)
                .getattr("pending")
                .and_then(|p| p.is_truthy())
                .unwrap_or(false)
        };
        // Raised ones are dropped: the list holds at most one per thread with a failure pending.
        slot.retain(|(_, c)| pending(c));
        slot.iter().any(|(t, _)| *t == thread)
    }
}
