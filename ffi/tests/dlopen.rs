//! Drives `libndjit.so` as a foreign caller would: the library is loaded with libloading, every
//! function is looked up by its C name, and only C types cross (raw pointers, integers, doubles,
//! and a `#[repr(C)]` copy of the header's `ndjit_array`). Results are compared with the Rust API
//! of the core crate, linked into this test separately.
//!
//! The library is the `libndjit.so` that `cargo test -p ndjit-ffi-tests` builds before running
//! this test, in `target/<profile>/deps/` (see `common::lib_dir`).

mod common;

use libloading::Library;
use ndjit_core::driver::{self, Dtype, Footprint, Mode, Options, RawArray, RawArrayMut};
use ndjit_core::{Bindings, Filter};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

type Handle = *mut c_void;
type ErrorPtr = *mut c_void;
type Callback = Option<unsafe extern "C" fn(*mut f64, isize, *mut f64, *mut c_void) -> c_int>;

/// The header's `ndjit_array`, declared again from the C definition.
#[repr(C)]
#[derive(Clone, Copy)]
struct CArray {
    data: *mut c_void,
    nbytes: isize,
    offset: isize,
    dtype: i32,
    ndim: isize,
    shape: *const isize,
    strides: *const isize,
}

// The header's constants, spelled out as a C program would use them.
const NDJIT_OK: c_int = 0;
const NDJIT_ERR_NULL: c_int = 1;
const NDJIT_ERR_UTF8: c_int = 2;
const NDJIT_ERR_INVALID_ARGUMENT: c_int = 3;
const NDJIT_ERR_UNKNOWN_ENUM: c_int = 4;
const NDJIT_ERR_SHAPE: c_int = 5;
const NDJIT_ERR_COMPILE: c_int = 6;
const NDJIT_ERR_BINDING: c_int = 7;
const NDJIT_ERR_RUNTIME: c_int = 8;

/// Every entry point, by name.
struct Api {
    _lib: Library,
    version: unsafe extern "C" fn() -> *const c_char,
    version_number: unsafe extern "C" fn() -> u32,
    status_name: unsafe extern "C" fn(c_int) -> *const c_char,
    error_status: unsafe extern "C" fn(ErrorPtr) -> c_int,
    error_message: unsafe extern "C" fn(ErrorPtr) -> *const c_char,
    error_kind: unsafe extern "C" fn(ErrorPtr) -> *const c_char,
    error_text: unsafe extern "C" fn(ErrorPtr) -> *const c_char,
    error_line: unsafe extern "C" fn(ErrorPtr) -> u32,
    error_column: unsafe extern "C" fn(ErrorPtr) -> u32,
    error_free: unsafe extern "C" fn(ErrorPtr),
    bindings_new: unsafe extern "C" fn() -> Handle,
    bindings_free: unsafe extern "C" fn(Handle),
    bindings_set_double: unsafe extern "C" fn(Handle, *const c_char, f64, *mut ErrorPtr) -> c_int,
    bindings_set_int: unsafe extern "C" fn(Handle, *const c_char, i64, *mut ErrorPtr) -> c_int,
    bindings_set_array:
        unsafe extern "C" fn(Handle, *const c_char, *const f64, isize, *mut ErrorPtr) -> c_int,
    filter_compile:
        unsafe extern "C" fn(*const c_char, Handle, isize, *mut Handle, *mut ErrorPtr) -> c_int,
    filter_free: unsafe extern "C" fn(Handle),
    filter_callback: unsafe extern "C" fn(Handle) -> Callback,
    filter_user_data: unsafe extern "C" fn(Handle) -> *mut c_void,
    filter_call: unsafe extern "C" fn(Handle, *const f64, isize, *mut f64, *mut ErrorPtr) -> c_int,
    filter_with_bindings: unsafe extern "C" fn(Handle, Handle, *mut Handle, *mut ErrorPtr) -> c_int,
    filter_failure: unsafe extern "C" fn(Handle, *mut ErrorPtr) -> c_int,
    filter_reset: unsafe extern "C" fn(Handle) -> c_int,
    context_new: unsafe extern "C" fn(Handle, *mut Handle, *mut ErrorPtr) -> c_int,
    context_free: unsafe extern "C" fn(Handle),
    context_user_data: unsafe extern "C" fn(Handle) -> *mut c_void,
    context_callback: unsafe extern "C" fn(Handle) -> Callback,
    context_failure: unsafe extern "C" fn(Handle, *mut ErrorPtr) -> c_int,
    context_reset: unsafe extern "C" fn(Handle) -> c_int,
    options_new: unsafe extern "C" fn() -> Handle,
    options_free: unsafe extern "C" fn(Handle),
    options_set_size: unsafe extern "C" fn(Handle, *const isize, isize, *mut ErrorPtr) -> c_int,
    options_set_footprint:
        unsafe extern "C" fn(Handle, *const isize, isize, *const u8, *mut ErrorPtr) -> c_int,
    options_set_mode: unsafe extern "C" fn(Handle, i32, *mut ErrorPtr) -> c_int,
    options_set_cval: unsafe extern "C" fn(Handle, f64, *mut ErrorPtr) -> c_int,
    options_set_origin: unsafe extern "C" fn(Handle, *const isize, isize, *mut ErrorPtr) -> c_int,
    options_set_axes: unsafe extern "C" fn(Handle, *const isize, isize, *mut ErrorPtr) -> c_int,
    options_set_threads: unsafe extern "C" fn(Handle, isize, *mut ErrorPtr) -> c_int,
    generic_filter:
        unsafe extern "C" fn(Handle, *const CArray, *const CArray, Handle, *mut ErrorPtr) -> c_int,
}

fn api() -> &'static Api {
    static API: OnceLock<Api> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: loading libndjit runs no initialisers beyond Rust's std setup.
        let lib = unsafe { Library::new(common::cdylib()) }.expect("dlopen libndjit.so");
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the type is the C declaration of the symbol in ndjit.h.
                *unsafe { lib.get($name) }.unwrap_or_else(|e| panic!("{}: {e}", $name))
            };
        }
        Api {
            version: sym!("ndjit_version"),
            version_number: sym!("ndjit_version_number"),
            status_name: sym!("ndjit_status_name"),
            error_status: sym!("ndjit_error_status"),
            error_message: sym!("ndjit_error_message"),
            error_kind: sym!("ndjit_error_kind"),
            error_text: sym!("ndjit_error_text"),
            error_line: sym!("ndjit_error_line"),
            error_column: sym!("ndjit_error_column"),
            error_free: sym!("ndjit_error_free"),
            bindings_new: sym!("ndjit_bindings_new"),
            bindings_free: sym!("ndjit_bindings_free"),
            bindings_set_double: sym!("ndjit_bindings_set_double"),
            bindings_set_int: sym!("ndjit_bindings_set_int"),
            bindings_set_array: sym!("ndjit_bindings_set_array"),
            filter_compile: sym!("ndjit_filter_compile"),
            filter_free: sym!("ndjit_filter_free"),
            filter_callback: sym!("ndjit_filter_callback"),
            filter_user_data: sym!("ndjit_filter_user_data"),
            filter_call: sym!("ndjit_filter_call"),
            filter_with_bindings: sym!("ndjit_filter_with_bindings"),
            filter_failure: sym!("ndjit_filter_failure"),
            filter_reset: sym!("ndjit_filter_reset"),
            context_new: sym!("ndjit_context_new"),
            context_free: sym!("ndjit_context_free"),
            context_user_data: sym!("ndjit_context_user_data"),
            context_callback: sym!("ndjit_context_callback"),
            context_failure: sym!("ndjit_context_failure"),
            context_reset: sym!("ndjit_context_reset"),
            options_new: sym!("ndjit_options_new"),
            options_free: sym!("ndjit_options_free"),
            options_set_size: sym!("ndjit_options_set_size"),
            options_set_footprint: sym!("ndjit_options_set_footprint"),
            options_set_mode: sym!("ndjit_options_set_mode"),
            options_set_cval: sym!("ndjit_options_set_cval"),
            options_set_origin: sym!("ndjit_options_set_origin"),
            options_set_axes: sym!("ndjit_options_set_axes"),
            options_set_threads: sym!("ndjit_options_set_threads"),
            generic_filter: sym!("ndjit_generic_filter"),
            _lib: lib,
        }
    })
}

fn text(p: *const c_char) -> String {
    assert!(!p.is_null(), "the library returned a NULL string");
    // SAFETY: the library returns NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .expect("UTF-8")
        .to_string()
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// An error object's contents, read through the accessors; the object is freed.
#[derive(Debug, Clone, PartialEq)]
struct CError {
    status: c_int,
    kind: String,
    message: String,
    text: String,
    line: u32,
    column: u32,
}

/// Reads and frees the error stored by a call that returned `status`, checking the conventions:
/// an error object exactly when the status is not NDJIT_OK, carrying that status.
fn outcome(status: c_int, err: ErrorPtr) -> Result<(), CError> {
    let a = api();
    if status == NDJIT_OK {
        assert!(err.is_null(), "NDJIT_OK with an error object");
        return Ok(());
    }
    assert!(!err.is_null(), "status {status} without an error object");
    // SAFETY: `err` is a live error object from the library.
    let e = unsafe {
        CError {
            status: (a.error_status)(err),
            kind: text((a.error_kind)(err)),
            message: text((a.error_message)(err)),
            text: text((a.error_text)(err)),
            line: (a.error_line)(err),
            column: (a.error_column)(err),
        }
    };
    unsafe { (a.error_free)(err) };
    assert_eq!(e.status, status, "the error object repeats the status");
    assert!(!e.message.is_empty());
    Err(e)
}

/// Calls `f(&mut err)` and returns its outcome.
fn call(f: impl FnOnce(*mut ErrorPtr) -> c_int) -> Result<(), CError> {
    let mut err: ErrorPtr = 0x1 as ErrorPtr; // garbage: the library must overwrite it
    let st = f(&mut err);
    outcome(st, err)
}

struct Bound(Handle);
impl Bound {
    fn new(values: &[(&str, Val)]) -> Bound {
        let a = api();
        let b = unsafe { (a.bindings_new)() };
        assert!(!b.is_null());
        for (name, v) in values {
            let n = c(name);
            let r = match v {
                Val::F(x) => call(|e| unsafe { (a.bindings_set_double)(b, n.as_ptr(), *x, e) }),
                Val::I(x) => call(|e| unsafe { (a.bindings_set_int)(b, n.as_ptr(), *x, e) }),
                Val::A(x) => call(|e| unsafe {
                    (a.bindings_set_array)(b, n.as_ptr(), x.as_ptr(), x.len() as isize, e)
                }),
            };
            r.unwrap();
        }
        Bound(b)
    }
}
impl Drop for Bound {
    fn drop(&mut self) {
        unsafe { (api().bindings_free)(self.0) }
    }
}

enum Val {
    F(f64),
    I(i64),
    A(Vec<f64>),
}

fn core_bindings(values: &[(&str, Val)]) -> Bindings {
    let mut b = Bindings::new();
    for (name, v) in values {
        match v {
            Val::F(x) => b.set_float(*name, *x),
            Val::I(x) => b.set_int(*name, *x),
            Val::A(x) => b.set_array(*name, x.clone()),
        };
    }
    b
}

/// A filter handle, freed on drop.
struct CFilter(Handle);
impl CFilter {
    fn compile(src: &str, bindings: Option<&Bound>, filter_size: isize) -> Result<CFilter, CError> {
        let a = api();
        let s = c(src);
        let mut f: Handle = 0x1 as Handle;
        let r = call(|e| unsafe {
            (a.filter_compile)(
                s.as_ptr(),
                bindings.map_or(null_mut(), |b| b.0),
                filter_size,
                &mut f,
                e,
            )
        });
        match r {
            Ok(()) => {
                assert!(!f.is_null());
                Ok(CFilter(f))
            }
            Err(e) => {
                assert!(f.is_null(), "*out must be NULL after a failure");
                Err(e)
            }
        }
    }
    fn call(&self, buf: &[f64]) -> Result<f64, CError> {
        let mut out = f64::from_bits(0x7ff8_dead_beef_0000);
        call(|e| unsafe {
            (api().filter_call)(self.0, buf.as_ptr(), buf.len() as isize, &mut out, e)
        })
        .map(|()| out)
    }
}
impl Drop for CFilter {
    fn drop(&mut self) {
        unsafe { (api().filter_free)(self.0) }
    }
}

fn same(what: &str, got: f64, want: f64) {
    assert!(
        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
        "{what}: got {got:?}, want {want:?}"
    );
}

// ---------------------------------------------------------------------------------------------

#[test]
fn every_function_in_the_header_is_exported() {
    let header = std::fs::read_to_string(common::ffi_dir().join("include/ndjit.h")).unwrap();
    let lib = unsafe { Library::new(common::cdylib()) }.unwrap();
    let mut n = 0;
    for line in header.lines() {
        // Declarations look like `ndjit_status ndjit_filter_compile(const char *source,`.
        let Some(open) = line.find('(') else { continue };
        let head = &line[..open];
        if line.starts_with(' ')
            || line.starts_with('*')
            || line.starts_with('/')
            || line.starts_with("typedef")
        {
            continue;
        }
        let name = head.rsplit([' ', '*']).next().unwrap();
        if name.starts_with("ndjit_") {
            let sym: Result<libloading::Symbol<'_, unsafe extern "C" fn()>, _> =
                unsafe { lib.get(name) };
            assert!(
                sym.is_ok(),
                "{name} is declared in ndjit.h but not exported by libndjit.so"
            );
            n += 1;
        }
    }
    assert!(n >= 40, "found only {n} declarations");
}

#[test]
fn version_and_status_names() {
    let a = api();
    assert_eq!(text(unsafe { (a.version)() }), env!("CARGO_PKG_VERSION"));
    let parts: Vec<u32> = env!("CARGO_PKG_VERSION")
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(
        unsafe { (a.version_number)() },
        parts[0] * 10000 + parts[1] * 100 + parts[2]
    );
    let names: Vec<String> = (0..10)
        .map(|s| text(unsafe { (a.status_name)(s) }))
        .collect();
    assert_eq!(names[0], "NDJIT_OK");
    assert_eq!(names[NDJIT_ERR_SHAPE as usize], "NDJIT_ERR_SHAPE");
    assert_eq!(names[9], "NDJIT_ERR_INTERNAL");
    assert_eq!(text(unsafe { (a.status_name)(10) }), "NDJIT_UNKNOWN_STATUS");
    assert_eq!(
        text(unsafe { (a.status_name)(c_int::MIN) }),
        "NDJIT_UNKNOWN_STATUS"
    );
}

#[test]
fn compile_call_callback_and_rebind() {
    let a = api();
    let values = [
        ("w", Val::A(vec![1.0, -2.0, 0.5])),
        ("t", Val::F(0.25)),
        ("k", Val::I(2)),
    ];
    let src = "def f(v):\n    return np.sum(v * w) + t * v[k] if v[0] < 10 else np.nan";
    let bound = Bound::new(&values);
    let f = CFilter::compile(src, Some(&bound), 3).unwrap();
    drop(bound); // the filter holds copies
    let core = Filter::compile(src, &core_bindings(&values)).unwrap();
    let bufs = [
        [1.0, 2.0, 3.0],
        [0.5, -1.5, 1e300],
        [11.0, 0.0, 0.0],
        [f64::NAN, 1.0, 2.0],
    ];
    let cb = unsafe { (a.filter_callback)(f.0) }.expect("a callback");
    let ud = unsafe { (a.filter_user_data)(f.0) };
    assert!(!ud.is_null());
    for buf in &bufs {
        let want = core.call(buf).unwrap();
        same("ndjit_filter_call", f.call(buf).unwrap(), want);
        let mut scratch = *buf;
        let mut out = 0.0;
        assert_eq!(unsafe { cb(scratch.as_mut_ptr(), 3, &mut out, ud) }, 1);
        same("callback", out, want);
    }
    // Other sizes go through the general code: here `v * w` no longer broadcasts.
    let e = f.call(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap_err();
    let want = core.call(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap_err();
    assert_eq!(
        (e.kind.as_str(), e.message.as_str(), e.line, e.column),
        (want.exception.name(), want.message.as_str(), 2, 19)
    );

    // Rebinding: new values, same code; the original is unchanged.
    let new_values = [
        ("t", Val::F(-4.0)),
        ("w", Val::A(vec![0.0, 0.0, 1.0])),
        ("unused", Val::F(1.0)),
    ];
    let nb = Bound::new(&new_values);
    let mut g: Handle = null_mut();
    call(|e| unsafe { (a.filter_with_bindings)(f.0, nb.0, &mut g, e) }).unwrap();
    let g = CFilter(g);
    let core_g = core.with_bindings(&core_bindings(&new_values)).unwrap();
    for buf in &bufs {
        same("rebound", g.call(buf).unwrap(), core_g.call(buf).unwrap());
        same("original", f.call(buf).unwrap(), core.call(buf).unwrap());
    }
    assert_eq!(
        unsafe { (a.filter_callback)(g.0) }.map(|p| p as usize),
        Some(cb as usize),
        "rebinding shares the machine code"
    );
    // Kinds are fixed at compile time.
    let wrong = Bound::new(&[("k", Val::F(1.0))]);
    let mut h: Handle = 0x1 as Handle;
    let e = call(|e| unsafe { (a.filter_with_bindings)(f.0, wrong.0, &mut h, e) }).unwrap_err();
    assert!(h.is_null());
    assert_eq!(
        (e.status, e.kind.as_str()),
        (NDJIT_ERR_BINDING, "binding error")
    );
    assert!(e.message.contains("`k` was compiled as an int"), "{e:?}");
}

#[test]
fn compile_errors_carry_position_and_caret_text() {
    let bound = Bound::new(&[("w", Val::A(vec![1.0]))]);
    let cases = [
        "max(x",
        "x[0] +* 2",
        "x[0] * undefined_name",
        "def f(v):\n    s = 0.0\n    for a in v:\n        s += a\n    return s +",
        "lambda v: np.sum(v, 1, 2, 3, 4)",
        "x[w[0]]",
        "def f(v):\n    try:\n        return v[0]\n    except:\n        return 0.0",
        "np.median(x) \u{e9}\u{e9} 2",
        "",
    ];
    for src in cases {
        let e = CFilter::compile(src, Some(&bound), 0)
            .err()
            .unwrap_or_else(|| panic!("{src:?} compiled"));
        let want = Filter::compile(src, &core_bindings(&[("w", Val::A(vec![1.0]))])).unwrap_err();
        assert_eq!(e.status, NDJIT_ERR_COMPILE, "{src:?}: {e:?}");
        assert_eq!((e.line, e.column), (want.line(), want.column()), "{src:?}");
        assert_eq!(e.kind, want.kind.as_str());
        assert!(e.message.starts_with(&want.message), "{src:?}: {e:?}");
        assert_eq!(e.text, want.to_string());
        if want.snippet().is_some() {
            assert!(e.text.contains('^'), "{src:?}: no caret in {}", e.text);
        }
    }
}

#[test]
fn runtime_errors_and_failure_slots() {
    let a = api();
    let src = "def f(v):\n    m = np.min(v[v > 0])\n    return v[4] / m";
    let f = CFilter::compile(src, None, 0).unwrap();
    let core = Filter::compile(src, &Bindings::new()).unwrap();
    for buf in [
        &[1.0, 2.0][..],
        &[-1.0, -2.0, -3.0, -4.0, -5.0][..],
        &[][..],
    ] {
        let e = f.call(buf).unwrap_err();
        let want = core.call(buf).unwrap_err();
        assert_eq!(e.status, NDJIT_ERR_RUNTIME);
        assert_eq!(
            (e.line, e.column),
            (want.span.start.line, want.span.start.column),
            "{buf:?}"
        );
        assert_eq!(e.kind, want.exception.name());
        assert_eq!(e.message, want.message);
        assert!(
            e.text
                .starts_with(&format!("{}: {}", want.exception, want.message)),
            "{}",
            e.text
        );
    }
    // The callback records failures in its context; ndjit_filter_call does not touch them.
    let cb = unsafe { (a.filter_callback)(f.0) }.unwrap();
    let ud = unsafe { (a.filter_user_data)(f.0) };
    let mut out = 0.0;
    let mut short = [1.0, 2.0];
    let mut fine = [1.0, 2.0, 3.0, 4.0, 5.0];
    assert_eq!(unsafe { cb(short.as_mut_ptr(), 2, &mut out, ud) }, 0);
    assert_eq!(
        unsafe { cb(fine.as_mut_ptr(), 5, &mut out, ud) },
        0,
        "a failed context stops calls"
    );
    assert!(f.call(&fine).is_ok());
    let e = call(|e| unsafe { (a.filter_failure)(f.0, e) }).unwrap_err();
    assert_eq!(
        (e.status, e.kind.as_str()),
        (NDJIT_ERR_RUNTIME, "IndexError")
    );
    assert_eq!(unsafe { (a.filter_reset)(f.0) }, NDJIT_OK);
    call(|e| unsafe { (a.filter_failure)(f.0, e) }).unwrap();
    assert_eq!(unsafe { cb(fine.as_mut_ptr(), 5, &mut out, ud) }, 1);
    same("after reset", out, 5.0);
}

#[test]
fn contexts_on_many_threads() {
    let a = api();
    let src = "np.median(x) - np.mean(x) if len(x) > 3 else x[10]";
    let f = CFilter::compile(src, None, 9).unwrap();
    let core = Filter::compile(src, &Bindings::new()).unwrap();
    let contexts: Vec<Handle> = (0..6)
        .map(|_| {
            let mut ctx: Handle = null_mut();
            call(|e| unsafe { (a.context_new)(f.0, &mut ctx, e) }).unwrap();
            ctx
        })
        .collect();
    let cb = unsafe { (a.context_callback)(contexts[0]) }.unwrap();
    drop(f); // contexts keep the code alive
    let data: Vec<f64> = (0..2000)
        .map(|i| ((i * 7_919) % 1_009) as f64 * 0.37 - 100.0)
        .collect();
    let ptrs: Vec<usize> = contexts
        .iter()
        .map(|&c| unsafe { (a.context_user_data)(c) } as usize)
        .collect();
    let results: Vec<(Vec<f64>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = ptrs
            .iter()
            .enumerate()
            .map(|(t, &ud)| {
                let data = &data;
                s.spawn(move || {
                    let mut out = Vec::new();
                    let mut failed = 0;
                    for i in 0..data.len() - 9 {
                        let mut buf = [0.0; 9];
                        buf.copy_from_slice(&data[i..i + 9]);
                        let mut v = 0.0;
                        if unsafe { cb(buf.as_mut_ptr(), 9, &mut v, ud as *mut c_void) } == 1 {
                            out.push(v);
                        } else {
                            failed += 1;
                        }
                    }
                    if t % 2 == 1 {
                        // A bad call on odd threads only.
                        let mut buf = [1.0, 2.0];
                        let mut v = 0.0;
                        if unsafe { cb(buf.as_mut_ptr(), 2, &mut v, ud as *mut c_void) } == 0 {
                            failed += 1;
                        }
                    }
                    (out, failed)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let want: Vec<f64> = (0..data.len() - 9)
        .map(|i| core.call(&data[i..i + 9]).unwrap())
        .collect();
    for (t, (out, failed)) in results.iter().enumerate() {
        assert_eq!(out.len(), want.len(), "thread {t}");
        for (k, (&g, &w)) in out.iter().zip(&want).enumerate() {
            same(&format!("thread {t} value {k}"), g, w);
        }
        assert_eq!(*failed, t % 2);
        let r = call(|e| unsafe { (a.context_failure)(contexts[t], e) });
        if t % 2 == 1 {
            let e = r.unwrap_err();
            assert_eq!(
                (e.status, e.kind.as_str()),
                (NDJIT_ERR_RUNTIME, "IndexError")
            );
            assert_eq!(unsafe { (a.context_reset)(contexts[t]) }, NDJIT_OK);
            call(|e| unsafe { (a.context_failure)(contexts[t], e) }).unwrap();
        } else {
            r.unwrap();
        }
    }
    for c in contexts {
        unsafe { (a.context_free)(c) };
    }
}

// ---------------------------------------------------------------------------------------------
// The driver

const DTYPES: [(i32, Dtype); 11] = [
    (0, Dtype::Bool),
    (1, Dtype::U8),
    (2, Dtype::U16),
    (3, Dtype::U32),
    (4, Dtype::U64),
    (5, Dtype::I8),
    (6, Dtype::I16),
    (7, Dtype::I32),
    (8, Dtype::I64),
    (9, Dtype::F32),
    (10, Dtype::F64),
];
const MODES: [(i32, Mode); 8] = [
    (0, Mode::Reflect),
    (1, Mode::Constant),
    (2, Mode::Nearest),
    (3, Mode::Mirror),
    (4, Mode::Wrap),
    (5, Mode::GridMirror),
    (6, Mode::GridConstant),
    (7, Mode::GridWrap),
];

/// Values stored as `dtype`, C-cast style (what a C program's array would hold).
fn encode(dtype: Dtype, values: &[f64]) -> Vec<u8> {
    let mut out = Vec::new();
    for &v in values {
        match dtype {
            Dtype::Bool => out.push((v != 0.0) as u8),
            Dtype::U8 => out.push(v as u8),
            Dtype::I8 => out.push(v as i8 as u8),
            Dtype::U16 => out.extend((v as u16).to_ne_bytes()),
            Dtype::I16 => out.extend((v as i16).to_ne_bytes()),
            Dtype::U32 => out.extend((v as u32).to_ne_bytes()),
            Dtype::I32 => out.extend((v as i32).to_ne_bytes()),
            Dtype::U64 => out.extend((v as u64).to_ne_bytes()),
            Dtype::I64 => out.extend((v as i64).to_ne_bytes()),
            Dtype::F32 => out.extend((v as f32).to_ne_bytes()),
            Dtype::F64 => out.extend(v.to_ne_bytes()),
        }
    }
    out
}

/// A driver run, described once and executed both through the C ABI and the Rust driver.
struct Run<'a> {
    filter_src: &'a str,
    shape: Vec<usize>,
    in_dtype: (i32, Dtype),
    out_dtype: (i32, Dtype),
    /// Byte strides of the input view over its buffer, and the offset of element 0; `None` for
    /// C order.
    view: Option<(Vec<isize>, isize)>,
    footprint: (Vec<usize>, Option<Vec<bool>>),
    mode: (i32, Mode),
    cval: f64,
    origin: Vec<isize>,
    axes: Option<Vec<isize>>,
    threads: usize,
}

impl Run<'_> {
    fn new<'a>(filter_src: &'a str, shape: &[usize]) -> Run<'a> {
        Run {
            filter_src,
            shape: shape.to_vec(),
            in_dtype: DTYPES[10],
            out_dtype: DTYPES[10],
            view: None,
            footprint: (vec![3; shape.len()], None),
            mode: MODES[0],
            cval: 0.0,
            origin: Vec::new(),
            axes: None,
            threads: 0,
        }
    }

    /// The input's backing block: more elements than any view used here reaches.
    fn input(&self) -> Vec<u8> {
        let n: usize = self.shape.iter().product();
        let total = n * 4 + 8;
        let values: Vec<f64> = (0..total)
            .map(|i| ((i * 2_654_435_761usize) % 613) as f64 * 0.75 - 120.0)
            .collect();
        encode(self.in_dtype.1, &values)
    }

    /// Runs through the C ABI and the Rust driver; returns the two outputs' bytes.
    fn both(&self) -> (Result<Vec<u8>, CError>, Vec<u8>) {
        let a = api();
        let mut inbuf = self.input();
        let item_out = self.out_dtype.1.itemsize();
        let n: usize = self.shape.iter().product();
        let (strides, offset) = self
            .view
            .clone()
            .unwrap_or_else(|| (driver::c_strides(&self.shape, self.in_dtype.1), 0));
        let shape_c: Vec<isize> = self.shape.iter().map(|&s| s as isize).collect();

        // C ABI.
        let f = CFilter::compile(self.filter_src, None, 0).unwrap();
        let o = unsafe { (a.options_new)() };
        let fshape: Vec<isize> = self.footprint.0.iter().map(|&s| s as isize).collect();
        match &self.footprint.1 {
            None => call(|e| unsafe {
                (a.options_set_size)(o, fshape.as_ptr(), fshape.len() as isize, e)
            })
            .unwrap(),
            Some(mask) => {
                let m: Vec<u8> = mask.iter().map(|&b| b as u8 * 3).collect(); // any non-zero byte is true
                call(|e| unsafe {
                    (a.options_set_footprint)(
                        o,
                        fshape.as_ptr(),
                        fshape.len() as isize,
                        m.as_ptr(),
                        e,
                    )
                })
                .unwrap()
            }
        }
        call(|e| unsafe { (a.options_set_mode)(o, self.mode.0, e) }).unwrap();
        call(|e| unsafe { (a.options_set_cval)(o, self.cval, e) }).unwrap();
        call(|e| unsafe {
            (a.options_set_origin)(o, self.origin.as_ptr(), self.origin.len() as isize, e)
        })
        .unwrap();
        if let Some(axes) = &self.axes {
            call(|e| unsafe { (a.options_set_axes)(o, axes.as_ptr(), axes.len() as isize, e) })
                .unwrap();
        }
        call(|e| unsafe { (a.options_set_threads)(o, self.threads as isize, e) }).unwrap();
        let mut c_out = vec![0xA5u8; n * item_out];
        let cin = CArray {
            data: inbuf.as_mut_ptr().cast(),
            nbytes: inbuf.len() as isize,
            offset,
            dtype: self.in_dtype.0,
            ndim: shape_c.len() as isize,
            shape: shape_c.as_ptr(),
            strides: if self.view.is_some() {
                strides.as_ptr()
            } else {
                null()
            },
        };
        let cout = CArray {
            data: c_out.as_mut_ptr().cast(),
            nbytes: c_out.len() as isize,
            offset: 0,
            dtype: self.out_dtype.0,
            ndim: shape_c.len() as isize,
            shape: shape_c.as_ptr(),
            strides: null(),
        };
        let r = call(|e| unsafe { (a.generic_filter)(f.0, &cin, &cout, o, e) });
        unsafe { (a.options_free)(o) };

        // Rust driver.
        let core = Filter::compile(self.filter_src, &Bindings::new()).unwrap();
        let fp = match &self.footprint.1 {
            None => Footprint::from_size(&self.footprint.0),
            Some(mask) => Footprint::new(self.footprint.0.clone(), mask.clone()).unwrap(),
        };
        let mut opts = Options::new(fp)
            .mode(self.mode.1)
            .cval(self.cval)
            .origin(&self.origin);
        if let Some(axes) = &self.axes {
            opts = opts.axes(axes);
        }
        if self.threads > 0 {
            opts = opts.threads(self.threads);
        }
        let mut r_out = vec![0xA5u8; n * item_out];
        let rin = RawArray {
            ptr: unsafe { inbuf.as_ptr().offset(offset) },
            dtype: self.in_dtype.1,
            shape: self.shape.clone(),
            strides,
        };
        let rout = RawArrayMut {
            ptr: r_out.as_mut_ptr(),
            dtype: self.out_dtype.1,
            shape: self.shape.clone(),
            strides: driver::c_strides(&self.shape, self.out_dtype.1),
        };
        let rr = unsafe { driver::generic_filter_raw(&rin, &rout, &core, &opts) };
        match (&r, &rr) {
            (Ok(()), Ok(())) => {}
            (Err(e), Err(de)) => match de.runtime_error() {
                Some(re) => assert!(
                    e.status == NDJIT_ERR_RUNTIME && e.message.starts_with(&re.message),
                    "{e:?} vs {de}"
                ),
                None => assert_eq!(e.message, de.to_string()),
            },
            _ => panic!("C ABI gave {r:?}, Rust driver gave {rr:?}"),
        }
        (r.map(|()| c_out), r_out)
    }

    fn check(&self, what: &str) {
        let (c, r) = self.both();
        let c = c.unwrap_or_else(|e| panic!("{what}: {}", e.text));
        assert!(c == r, "{what}: the C ABI and the Rust driver differ");
    }
}

#[test]
fn driver_matches_rust_for_every_mode_and_input_dtype() {
    let src = "np.median(x) * 0.5 + x[0] - np.mean(x) / 3";
    for mode in MODES {
        for dtype in DTYPES {
            let mut run = Run::new(src, &[7, 9]);
            run.mode = mode;
            run.cval = -7.5;
            run.in_dtype = dtype;
            run.check(&format!("mode {mode:?}, input {dtype:?}"));
        }
    }
}

#[test]
fn driver_matches_rust_for_every_output_dtype() {
    // Out-of-range and NaN results exercise the C casts.
    let src = "np.nan if x[4] > 100 else np.sum(x) * 3";
    for dtype in DTYPES {
        let mut run = Run::new(src, &[6, 5]);
        run.out_dtype = dtype;
        run.threads = 1;
        run.check(&format!("output {dtype:?}"));
    }
}

#[test]
fn driver_matches_rust_for_footprints_origins_axes_and_views() {
    let src = "np.max(x) - np.min(x) + len(x) * 0.001";
    // A masked footprint with an origin.
    let mut run = Run::new(src, &[8, 6]);
    run.footprint = (
        vec![3, 4],
        Some(vec![
            true, false, true, false, true, true, false, true, false, false, true, true,
        ]),
    );
    run.origin = vec![1, -2];
    run.mode = MODES[4];
    run.check("mask + origin");
    // 3-D, filtering two of the axes given as (-1, 0).
    let mut run = Run::new(src, &[4, 3, 5]);
    run.footprint = (vec![2, 3], None);
    run.axes = Some(vec![-1, 0]);
    run.origin = vec![1, 0];
    run.in_dtype = DTYPES[6];
    run.check("3-D, axes (-1, 0)");
    // A flipped, strided view: rows reversed, every other column, over a larger buffer.
    let mut run = Run::new(src, &[5, 4]);
    let item = 4; // int32
    run.in_dtype = DTYPES[7];
    let row = 9 * item as isize;
    run.view = Some((vec![-row, 2 * item as isize], 4 * row));
    run.check("flipped strided view");
    // Zero strides (a broadcast input).
    let mut run = Run::new(src, &[3, 4]);
    run.view = Some((vec![0, 8], 0));
    run.check("broadcast rows");
    // 1-D and 0-d.
    let mut run = Run::new("np.sum(x)", &[11]);
    run.footprint = (vec![4], None);
    run.mode = MODES[3];
    run.check("1-D, even size");
    let mut run = Run::new("x[0] * 2", &[]);
    run.footprint = (vec![], None);
    run.check("0-d");
    // Thread counts do not change the result.
    for threads in [1, 2, 3, 8] {
        let mut run = Run::new("np.median(x)", &[33, 17]);
        run.footprint = (vec![5, 5], None);
        run.threads = threads;
        run.check(&format!("{threads} threads"));
    }
}

#[test]
fn driver_errors_match_rust() {
    // The filter fails on some pixel: both report the first in C order.
    let mut run = Run::new("x[0] if x[4] < 150 else x[20]", &[6, 7]);
    run.in_dtype = DTYPES[1];
    let (c, _) = run.both();
    let e = c.unwrap_err();
    assert_eq!(
        (e.status, e.kind.as_str()),
        (NDJIT_ERR_RUNTIME, "IndexError")
    );
    assert!(e.message.contains(" at pixel ["), "{e:?}");
    // An invalid origin.
    let mut run = Run::new("x[0]", &[6, 7]);
    run.origin = vec![2, 0];
    let e = run.both().0.unwrap_err();
    assert_eq!(
        (e.status, e.kind.as_str(), e.message.as_str()),
        (NDJIT_ERR_SHAPE, "ValueError", "invalid origin")
    );
}

#[test]
fn driver_in_place_matches_rust_in_place() {
    // Output == input: scipy's sequential in-place result, through both APIs.
    let a = api();
    let shape = [5usize, 6];
    let vals: Vec<f64> = (0..30).map(|i| ((i * 37) % 23) as f64).collect();
    let mut c_buf = vals.clone();
    let mut r_buf = vals.clone();
    let src = "np.mean(x)";
    let f = CFilter::compile(src, None, 0).unwrap();
    let o = unsafe { (a.options_new)() };
    let size = [3isize, 3];
    call(|e| unsafe { (a.options_set_size)(o, size.as_ptr(), 2, e) }).unwrap();
    let shape_c = [5isize, 6];
    let arr = CArray {
        data: c_buf.as_mut_ptr().cast(),
        nbytes: 240,
        offset: 0,
        dtype: 10,
        ndim: 2,
        shape: shape_c.as_ptr(),
        strides: null(),
    };
    call(|e| unsafe { (a.generic_filter)(f.0, &arr, &arr, o, e) }).unwrap();
    unsafe { (a.options_free)(o) };
    let core = Filter::compile(src, &Bindings::new()).unwrap();
    let p = r_buf.as_mut_ptr();
    let rin = RawArray {
        ptr: p as *const u8,
        dtype: Dtype::F64,
        shape: shape.to_vec(),
        strides: vec![48, 8],
    };
    let rout = RawArrayMut {
        ptr: p as *mut u8,
        dtype: Dtype::F64,
        shape: shape.to_vec(),
        strides: vec![48, 8],
    };
    unsafe { driver::generic_filter_raw(&rin, &rout, &core, &Options::size(&[3, 3])) }.unwrap();
    assert_eq!(
        c_buf.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        r_buf.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    assert_ne!(c_buf, vals);
}

// ---------------------------------------------------------------------------------------------
// Arguments a C program could get wrong (beyond ffi/examples/bad_input.c)

#[test]
fn footprint_sizes_whose_product_overflows_are_refused() {
    // {2^32, 2^32} once returned OK and the filter saw an empty buffer (the output all zeros);
    // {3, 2^62} panicked with a backtrace on the host's stderr.
    let a = api();
    let f = CFilter::compile("x[0] + 1", None, 0).unwrap();
    let mut data = [5.0f64; 6];
    let shape = [2isize, 3];
    let arr = CArray {
        data: data.as_mut_ptr().cast(),
        nbytes: 48,
        offset: 0,
        dtype: 10,
        ndim: 2,
        shape: shape.as_ptr(),
        strides: null(),
    };
    let mut out = [0.0f64; 6];
    let out_arr = CArray {
        data: out.as_mut_ptr().cast(),
        ..arr
    };
    for size in [[1isize << 32, 1 << 32], [3, 1 << 62]] {
        let o = unsafe { (a.options_new)() };
        call(|e| unsafe { (a.options_set_size)(o, size.as_ptr(), 2, e) }).unwrap();
        let e = call(|e| unsafe { (a.generic_filter)(f.0, &arr, &out_arr, o, e) }).unwrap_err();
        unsafe { (a.options_free)(o) };
        assert_eq!(
            (e.status, e.kind.as_str()),
            (NDJIT_ERR_INVALID_ARGUMENT, "ValueError"),
            "{size:?}: {e:?}"
        );
        assert!(
            e.message.contains("more entries than fit in memory"),
            "{e:?}"
        );
    }
    assert_eq!(out, [0.0; 6], "nothing is written");
}

#[test]
fn bad_pointers_and_sizes() {
    let a = api();
    let f = CFilter::compile("np.sum(x)", None, 0).unwrap();
    let storage = [0f64; 4];
    let misaligned = unsafe { (storage.as_ptr() as *const u8).add(1) } as *const f64;
    let mut out = 0.0;
    let e = call(|e| unsafe { (a.filter_call)(f.0, misaligned, 2, &mut out, e) }).unwrap_err();
    assert_eq!(e.status, NDJIT_ERR_INVALID_ARGUMENT, "{e:?}");
    let e = call(|e| unsafe { (a.filter_call)(f.0, storage.as_ptr(), isize::MAX, &mut out, e) })
        .unwrap_err();
    assert_eq!(e.status, NDJIT_ERR_INVALID_ARGUMENT, "{e:?}");
    let b = Bound::new(&[]);
    let name = c("w");
    let e = call(|e| unsafe { (a.bindings_set_array)(b.0, name.as_ptr(), misaligned, 2, e) })
        .unwrap_err();
    assert_eq!(e.status, NDJIT_ERR_INVALID_ARGUMENT);
    let bad = b"x[0] \xe2\x28\xa1\0";
    let mut h: Handle = null_mut();
    let e = call(|e| unsafe { (a.filter_compile)(bad.as_ptr().cast(), null_mut(), 0, &mut h, e) })
        .unwrap_err();
    assert_eq!(e.status, NDJIT_ERR_UTF8);
    assert!(e.message.contains("offset 5"), "{e:?}");
    // A NUL-free message survives an embedded newline in the source.
    assert_eq!(
        CFilter::compile("x[0] +\n", None, 0).err().unwrap().status,
        NDJIT_ERR_COMPILE
    );
    // Status-only calls (error pointer NULL).
    assert_eq!(
        unsafe { (a.filter_call)(null_mut(), null(), 0, &mut out, null_mut()) },
        NDJIT_ERR_NULL
    );
    // Options: every setter refuses NULL options and keeps going.
    let o = unsafe { (a.options_new)() };
    assert_eq!(
        unsafe { (a.options_set_mode)(o, 8, null_mut()) },
        NDJIT_ERR_UNKNOWN_ENUM
    );
    let huge = [isize::MAX, isize::MAX];
    let mask = [1u8; 4];
    let e = call(|e| unsafe { (a.options_set_footprint)(o, huge.as_ptr(), 2, mask.as_ptr(), e) })
        .unwrap_err();
    assert_eq!(e.status, NDJIT_ERR_INVALID_ARGUMENT);
    let too_many = [1isize; 65];
    let e = call(|e| unsafe { (a.options_set_axes)(o, too_many.as_ptr(), 65, e) }).unwrap_err();
    assert_eq!(e.status, NDJIT_ERR_INVALID_ARGUMENT);
    // A shape whose element count overflows.
    let size = [3isize];
    call(|e| unsafe { (a.options_set_size)(o, size.as_ptr(), 1, e) }).unwrap();
    let shape = [isize::MAX, 4];
    let mut byte = [0u8; 8];
    let arr = CArray {
        data: byte.as_mut_ptr().cast(),
        nbytes: 8,
        offset: 0,
        dtype: 1,
        ndim: 2,
        shape: shape.as_ptr(),
        strides: null(),
    };
    let e = call(|e| unsafe { (a.generic_filter)(f.0, &arr, &arr, o, e) }).unwrap_err();
    assert_eq!(e.status, NDJIT_ERR_SHAPE, "{e:?}");
    unsafe { (a.options_free)(o) };
    let _ = (NDJIT_ERR_UTF8, NDJIT_ERR_COMPILE);
}
