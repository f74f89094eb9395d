//! Status codes and error objects, and the boundary every entry point goes through.

use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The result of every fallible ndjit function.
///
/// `NDJIT_OK` is 0, so `if (status) { ... }` tests for failure. The numeric values are part of
/// the ABI and never change; new codes may be added at the end.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ndjit_status {
    /// Success.
    NDJIT_OK = 0,
    /// A pointer argument that must not be NULL was NULL.
    NDJIT_ERR_NULL = 1,
    /// A string argument is not valid UTF-8.
    NDJIT_ERR_UTF8 = 2,
    /// A numeric argument is out of range: a negative size or count, too many dimensions, a
    /// misaligned pointer, a name that is not a Python identifier, sizes whose product
    /// overflows, a footprint whose working memory cannot be allocated.
    NDJIT_ERR_INVALID_ARGUMENT = 3,
    /// An enumeration argument (`ndjit_dtype`, `ndjit_mode`) has a value the library does not know.
    NDJIT_ERR_UNKNOWN_ENUM = 4,
    /// Shapes and strides that do not fit: an array whose shape and strides reach outside the
    /// memory it describes, an output whose elements overlap, input and output of different
    /// shapes, a footprint or origin that does not fit the image.
    NDJIT_ERR_SHAPE = 5,
    /// The filter source does not compile (syntax error, unsupported construct, unknown name,
    /// wrong arguments ...). The error has the line and column of the problem.
    NDJIT_ERR_COMPILE = 6,
    /// Bound values that do not fit the compiled filter, e.g. an array given for a name that
    /// was compiled as a number.
    NDJIT_ERR_BINDING = 7,
    /// The filter failed while running (an index out of range, the minimum of an empty
    /// array ...). The error has the line and column of the failing expression.
    NDJIT_ERR_RUNTIME = 8,
    /// A bug in ndjit (a Rust panic caught at the boundary). Please report it.
    NDJIT_ERR_INTERNAL = 9,
}

impl ndjit_status {
    /// The constant's name, e.g. `"NDJIT_ERR_NULL"`.
    pub fn name(self) -> &'static CStr {
        use ndjit_status::*;
        match self {
            NDJIT_OK => c"NDJIT_OK",
            NDJIT_ERR_NULL => c"NDJIT_ERR_NULL",
            NDJIT_ERR_UTF8 => c"NDJIT_ERR_UTF8",
            NDJIT_ERR_INVALID_ARGUMENT => c"NDJIT_ERR_INVALID_ARGUMENT",
            NDJIT_ERR_UNKNOWN_ENUM => c"NDJIT_ERR_UNKNOWN_ENUM",
            NDJIT_ERR_SHAPE => c"NDJIT_ERR_SHAPE",
            NDJIT_ERR_COMPILE => c"NDJIT_ERR_COMPILE",
            NDJIT_ERR_BINDING => c"NDJIT_ERR_BINDING",
            NDJIT_ERR_RUNTIME => c"NDJIT_ERR_RUNTIME",
            NDJIT_ERR_INTERNAL => c"NDJIT_ERR_INTERNAL",
        }
    }

    /// What the code means, in a few words (the `kind` of errors that have no finer one).
    fn describe(self) -> &'static str {
        use ndjit_status::*;
        match self {
            NDJIT_OK => "success",
            NDJIT_ERR_NULL => "null pointer",
            NDJIT_ERR_UTF8 => "invalid UTF-8",
            NDJIT_ERR_INVALID_ARGUMENT => "invalid argument",
            NDJIT_ERR_UNKNOWN_ENUM => "unknown enum value",
            NDJIT_ERR_SHAPE => "shape mismatch",
            NDJIT_ERR_COMPILE => "compile error",
            NDJIT_ERR_BINDING => "binding error",
            NDJIT_ERR_RUNTIME => "runtime error",
            NDJIT_ERR_INTERNAL => "internal error",
        }
    }

    /// The status of a compile-time error of the core.
    fn of_kind(kind: ndjit_core::ErrorKind) -> ndjit_status {
        use ndjit_core::ErrorKind::*;
        match kind {
            Syntax | Unsupported | UnknownName | Arity | Type | Limit => {
                ndjit_status::NDJIT_ERR_COMPILE
            }
            Binding => ndjit_status::NDJIT_ERR_BINDING,
            Codegen => ndjit_status::NDJIT_ERR_INTERNAL,
        }
    }

    fn from_int(v: c_int) -> Option<ndjit_status> {
        use ndjit_status::*;
        Some(match v {
            0 => NDJIT_OK,
            1 => NDJIT_ERR_NULL,
            2 => NDJIT_ERR_UTF8,
            3 => NDJIT_ERR_INVALID_ARGUMENT,
            4 => NDJIT_ERR_UNKNOWN_ENUM,
            5 => NDJIT_ERR_SHAPE,
            6 => NDJIT_ERR_COMPILE,
            7 => NDJIT_ERR_BINDING,
            8 => NDJIT_ERR_RUNTIME,
            9 => NDJIT_ERR_INTERNAL,
            _ => return None,
        })
    }
}

/// An error object: what went wrong, where, and a rendering of it for people.
///
/// Created by the library (through the `ndjit_error **error` argument of fallible functions) and
/// owned by the caller, who frees it with `ndjit_error_free`. It is immutable, so it may be read
/// from several threads at once. The strings its accessors return belong to it and stay valid
/// until it is freed.
pub struct ndjit_error {
    status: ndjit_status,
    kind: CString,
    message: CString,
    text: CString,
    line: u32,
    column: u32,
}

/// The Rust side of an error before it becomes an [`ndjit_error`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Failure {
    pub status: ndjit_status,
    /// A finer kind than the status, e.g. `"syntax error"` or `"IndexError"`.
    pub kind: String,
    pub message: String,
    /// The full report; when `None`, `"<kind>: <message>"`.
    pub text: Option<String>,
    pub line: u32,
    pub column: u32,
}

pub(crate) type Result<T, E = Failure> = std::result::Result<T, E>;

impl Failure {
    pub fn new(status: ndjit_status, message: impl Into<String>) -> Failure {
        Failure {
            status,
            kind: status.describe().to_string(),
            message: message.into(),
            text: None,
            line: 0,
            column: 0,
        }
    }
    pub fn null(what: &str) -> Failure {
        Failure::new(ndjit_status::NDJIT_ERR_NULL, format!("`{what}` is NULL"))
    }
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(ndjit_status::NDJIT_ERR_INVALID_ARGUMENT, message)
    }
    pub fn shape(message: impl Into<String>) -> Failure {
        Failure::new(ndjit_status::NDJIT_ERR_SHAPE, message)
    }
    pub fn unknown_enum(what: &str, value: i32, known: &str) -> Failure {
        Failure::new(
            ndjit_status::NDJIT_ERR_UNKNOWN_ENUM,
            format!("`{what}` is {value}, which is not one of {known}"),
        )
    }

    /// A compile-time error of the core, with its location and caret rendering.
    pub fn compile(e: &ndjit_core::Error) -> Failure {
        let status = ndjit_status::of_kind(e.kind);
        let message = match &e.hint {
            Some(h) => format!("{} (help: {h})", e.message),
            None => e.message.clone(),
        };
        Failure {
            status,
            kind: e.kind.as_str().to_string(),
            message,
            text: Some(e.to_string()),
            line: e.line(),
            column: e.column(),
        }
    }

    /// A run-time failure of a filter, with the location of the failing expression.
    pub fn runtime(e: &ndjit_core::RuntimeError) -> Failure {
        Failure {
            status: ndjit_status::NDJIT_ERR_RUNTIME,
            kind: e.exception.name().to_string(),
            message: e.message.clone(),
            text: Some(format!("{}: {e}", e.exception)),
            line: e.span.start.line,
            column: e.span.start.column,
        }
    }

    fn into_raw(self) -> *mut ndjit_error {
        let text = self
            .text
            .unwrap_or_else(|| format!("{}: {}", self.kind, self.message));
        Box::into_raw(Box::new(ndjit_error {
            status: self.status,
            kind: c_string(self.kind),
            message: c_string(self.message),
            text: c_string(text),
            line: self.line,
            column: self.column,
        }))
    }
}

/// A C string from Rust text; a NUL inside (possible only if the caller's source had one) is
/// shown as `\0` rather than cutting the text short.
fn c_string(s: String) -> CString {
    CString::new(s).unwrap_or_else(|e| {
        let s = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\\0");
        CString::new(s).unwrap_or_default()
    })
}

/// Hands a result to C: stores the error object (or NULL) through `error` when it is not NULL and
/// returns the status.
fn report(result: Result<()>, error: *mut *mut ndjit_error) -> ndjit_status {
    let (status, obj) = match result {
        Ok(()) => (ndjit_status::NDJIT_OK, std::ptr::null_mut()),
        Err(f) => (
            f.status,
            if error.is_null() {
                std::ptr::null_mut()
            } else {
                f.into_raw()
            },
        ),
    };
    if !error.is_null() {
        // SAFETY: the caller promises that a non-NULL `error` points to writable storage for
        // one pointer (the header says so for every function taking it).
        unsafe { error.write(obj) };
    }
    status
}

/// The edge of every fallible entry point: runs `body`, turns a panic into
/// `NDJIT_ERR_INTERNAL`, and reports through `error`.
pub(crate) fn guard(
    error: *mut *mut ndjit_error,
    body: impl FnOnce() -> Result<()>,
) -> ndjit_status {
    let result =
        catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| Err(panic_failure(payload)));
    // `report` itself allocates; should that panic (it cannot, short of a bug), the error is lost
    // but the status still reaches the caller.
    catch_unwind(AssertUnwindSafe(|| report(result, error)))
        .unwrap_or(ndjit_status::NDJIT_ERR_INTERNAL)
}

/// The edge of entry points that return a value rather than a status: a panic gives `fallback`.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

fn panic_failure(payload: Box<dyn std::any::Any + Send>) -> Failure {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string());
    // Dropping the payload could itself panic (a payload with a panicking Drop); forget it.
    std::mem::forget(payload);
    Failure::new(
        ndjit_status::NDJIT_ERR_INTERNAL,
        format!("ndjit panicked: {what} (this is a bug in ndjit; please report it)"),
    )
}

/// Reads an error object, or `None` for NULL.
///
/// # Safety
/// `error` is NULL or an error the library returned and the caller has not freed.
unsafe fn get<'a>(error: *const ndjit_error) -> Option<&'a ndjit_error> {
    // SAFETY: per the contract above.
    unsafe { error.as_ref() }
}

const EMPTY: &CStr = c"";

/// The status code of an error (the same value the failing call returned).
///
/// Returns `NDJIT_ERR_NULL` if `error` is NULL. Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error object.
#[no_mangle]
pub unsafe extern "C" fn ndjit_error_status(error: *const ndjit_error) -> ndjit_status {
    // SAFETY: forwarded contract.
    unsafe { get(error) }.map_or(ndjit_status::NDJIT_ERR_NULL, |e| e.status)
}

/// The error message, one line without location: e.g. `` name `k` is not defined ``.
///
/// The string belongs to the error and is valid until `ndjit_error_free(error)`. Returns an
/// empty string (never NULL) if `error` is NULL. Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error object.
#[no_mangle]
pub unsafe extern "C" fn ndjit_error_message(error: *const ndjit_error) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { get(error) }.map_or(EMPTY.as_ptr(), |e| e.message.as_ptr())
}

/// A short name for what went wrong, finer than the status: for compile errors `"syntax error"`,
/// `"unsupported"`, `"unknown name"`, `"wrong arguments"`, `"type error"` or `"limit
/// exceeded"`; for run-time errors the Python exception the code would raise (`"IndexError"`,
/// `"ValueError"` ...); otherwise a description of the status (`"null pointer"` ...).
///
/// The string belongs to the error and is valid until `ndjit_error_free(error)`. Returns an
/// empty string (never NULL) if `error` is NULL. Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error object.
#[no_mangle]
pub unsafe extern "C" fn ndjit_error_kind(error: *const ndjit_error) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { get(error) }.map_or(EMPTY.as_ptr(), |e| e.kind.as_ptr())
}

/// The full report, for showing to people: kind, location and message on the first line, then
/// (for compile and run-time errors) the source line with `^^^` under the offending span, and a
/// hint when there is one. Lines are separated by `\n`; there is no trailing newline.
///
/// ```text
/// unknown name at 1:9: name `k` is not defined
/// 1 | x[0] * k
///   |        ^
/// ```
///
/// The string belongs to the error and is valid until `ndjit_error_free(error)`. Returns an
/// empty string (never NULL) if `error` is NULL. Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error object.
#[no_mangle]
pub unsafe extern "C" fn ndjit_error_text(error: *const ndjit_error) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { get(error) }.map_or(EMPTY.as_ptr(), |e| e.text.as_ptr())
}

/// The 1-based source line of a compile or run-time error; 0 for errors that have no source
/// location (bad arguments ...) and when `error` is NULL. Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error object.
#[no_mangle]
pub unsafe extern "C" fn ndjit_error_line(error: *const ndjit_error) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { get(error) }.map_or(0, |e| e.line)
}

/// The 1-based column (counted in characters) of a compile or run-time error; 0 for errors
/// that have no source location and when `error` is NULL. Thread-safe.
///
/// # Safety
/// `error` is NULL or a live error object.
#[no_mangle]
pub unsafe extern "C" fn ndjit_error_column(error: *const ndjit_error) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { get(error) }.map_or(0, |e| e.column)
}

/// Frees an error object. NULL is allowed and does nothing.
///
/// After this call `error` and every string obtained from it are invalid. Must not run
/// concurrently with other uses of the same error.
///
/// # Safety
/// `error` is NULL or an error the library returned that has not been freed yet.
#[no_mangle]
pub unsafe extern "C" fn ndjit_error_free(error: *mut ndjit_error) {
    if !error.is_null() {
        // SAFETY: per the contract, `error` came from `Box::into_raw` in `Failure::into_raw` and
        // is freed once.
        guard_value((), || drop(unsafe { Box::from_raw(error) }));
    }
}

/// The name of a status code as a static string, e.g. `"NDJIT_ERR_NULL"`, or
/// `"NDJIT_UNKNOWN_STATUS"` for a value that is not one. The string is static: never free it.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn ndjit_status_name(status: c_int) -> *const c_char {
    let name = ndjit_status::from_int(status).map_or(c"NDJIT_UNKNOWN_STATUS", ndjit_status::name);
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_agree() {
        for v in 0..10 {
            let s = ndjit_status::from_int(v).unwrap();
            let c = unsafe { std::ffi::CStr::from_ptr(ndjit_status_name(v)) };
            assert_eq!(c, s.name());
            assert_eq!(s as c_int, v);
        }
        assert!(ndjit_status::from_int(10).is_none());
    }

    #[test]
    fn panics_become_internal_errors() {
        let mut err = std::ptr::null_mut();
        let st = guard(&mut err, || panic!("boom"));
        assert_eq!(st, ndjit_status::NDJIT_ERR_INTERNAL);
        let msg = unsafe { std::ffi::CStr::from_ptr(ndjit_error_message(err)) };
        assert!(msg.to_str().unwrap().contains("boom"));
        unsafe { ndjit_error_free(err) };
    }

    /// Every compile-error kind has its status, and its display name as the error's kind.
    #[test]
    fn every_compile_kind_has_its_status() {
        use ndjit_core::ErrorKind;
        let mut e =
            ndjit_core::Filter::compile("x[0] + k", &ndjit_core::Bindings::new()).unwrap_err();
        for &kind in ErrorKind::ALL {
            e.kind = kind;
            let f = Failure::compile(&e);
            let want = match kind {
                ErrorKind::Binding => ndjit_status::NDJIT_ERR_BINDING,
                ErrorKind::Codegen => ndjit_status::NDJIT_ERR_INTERNAL,
                _ => ndjit_status::NDJIT_ERR_COMPILE,
            };
            assert_eq!((f.status, f.kind.as_str()), (want, kind.as_str()));
        }
    }

    /// Every run-time exception is `NDJIT_ERR_RUNTIME`, with the exception's name as the kind.
    #[test]
    fn every_exception_is_a_runtime_error_of_its_name() {
        let f = ndjit_core::Filter::compile("x[9]", &ndjit_core::Bindings::new()).unwrap();
        let e = f.call(&[1.0]).unwrap_err();
        for &exception in ndjit_core::Exception::ALL {
            let f = Failure::runtime(&ndjit_core::RuntimeError {
                exception,
                ..e.clone()
            });
            assert_eq!(f.status, ndjit_status::NDJIT_ERR_RUNTIME);
            assert_eq!(f.kind, exception.name());
            assert!(f
                .text
                .unwrap()
                .starts_with(&format!("{}: ", exception.name())));
        }
    }

    #[test]
    fn nul_inside_messages_is_escaped() {
        assert_eq!(c_string("a\0b".into()).to_str().unwrap(), "a\\0b");
    }
}
