//! ndjit errors as Python exceptions. The exception classes live in `ndjit/_errors.py`; this
//! module passes them the structured fields (kind, line, column, caret text).

use pyo3::prelude::*;

fn build<'py>(py: Python<'py>, factory: &str, args: impl pyo3::call::PyCallArgs<'py>) -> PyErr {
    let made = py
        .import("ndjit._errors")
        .and_then(|m| m.getattr(factory))
        .and_then(|f| f.call1(args));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// A compile error: `FilterSyntaxError` (a `SyntaxError`) or `FilterTypeError` (a `TypeError`).
pub fn compile_error(py: Python<'_>, e: &ndjit::Error) -> PyErr {
    let kind = match e.kind {
        ndjit::ErrorKind::Type | ndjit::ErrorKind::Arity | ndjit::ErrorKind::Binding => "type",
        _ => "syntax",
    };
    let args = (
        kind,
        e.kind.as_str(),
        e.message.clone(),
        e.span.start.line,
        e.span.start.column,
        e.span.end.line,
        e.span.end.column,
        e.source_line().map(str::to_owned),
        e.hint.clone(),
        e.to_string(),
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
        e.exception,
        e.message.clone(),
        e.span.start.line,
        e.span.start.column,
        e.snippet.clone(),
    );
    build(py, "runtime_error", args)
}
