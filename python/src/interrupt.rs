//! Ctrl-C inside compiled filters: the poll hook of [`ndjit::interrupt`], which runs Python's
//! signal handlers.
//!
//! Compiled loops and the native driver call the hook now and then (see `ndjit::interrupt`). Python
//! runs signal handlers on the main thread only, with the GIL, so the hook does nothing on other
//! threads and, on the main thread, at most every [`INTERVAL_MS`]: it takes the GIL (already held
//! on scipy's path, where scipy's loop calls the callback; released by the native driver, which
//! then waits for it) and calls `PyErr_CheckSignals`. When a handler raises (`KeyboardInterrupt`
//! from the default SIGINT handler), the call stops:
//! - on scipy's path the exception stays set, and scipy raises it when the callback returns 0;
//! - in the native driver ([`detached`]) it is kept here, per thread, and raised by the driver's
//!   binding ([`take_pending`]) when the run returns `DriverError::Cancelled`.

use pyo3::prelude::*;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// The most often the main thread checks for signals: a person pressing Ctrl-C sees the filter
/// stop within this, and the native driver's main thread takes the GIL back no more often.
const INTERVAL_MS: u64 = 20;

/// `threading.main_thread().ident`.
static MAIN_THREAD: OnceLock<u64> = OnceLock::new();
/// When the hook last checked, in ms since `EPOCH`.
static LAST_CHECK: AtomicU64 = AtomicU64::new(0);
static EPOCH: OnceLock<Instant> = OnceLock::new();

thread_local! {
    /// Whether this thread is in [`detached`]: a native run with the GIL released.
    static DETACHED: Cell<bool> = const { Cell::new(false) };
    /// The exception a signal handler raised during that run, for the binding to raise.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Installs the hook (at module import).
pub fn install(py: Python<'_>) -> PyResult<()> {
    let main: u64 = py
        .import("threading")?
        .call_method0("main_thread")?
        .getattr("ident")?
        .extract()?;
    let _ = MAIN_THREAD.set(main);
    EPOCH.get_or_init(Instant::now);
    ndjit::interrupt::set_poll_hook(Some(Box::new(poll)));
    Ok(())
}

/// Runs `f`, a native run, with the GIL released. A signal handler that raises meanwhile stops
/// the run; its exception is returned by [`take_pending`].
pub fn detached<R: Send>(py: Python<'_>, f: impl FnOnce() -> R + Send) -> R {
    PENDING.with(|p| *p.borrow_mut() = None);
    py.detach(|| {
        DETACHED.with(|d| d.set(true));
        let r = f();
        DETACHED.with(|d| d.set(false));
        r
    })
}

/// The exception a signal handler raised during the last [`detached`] run on this thread, or
/// `KeyboardInterrupt` if there is none (the run was cancelled otherwise).
pub fn take_pending(message: String) -> PyErr {
    PENDING
        .with(|p| p.borrow_mut().take())
        .unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err(message))
}

/// The hook: whether a signal handler has raised on the main thread.
fn poll() -> bool {
    // SAFETY: a plain query of the calling thread's id; needs no GIL.
    let me = unsafe { pyo3::ffi::PyThread_get_thread_ident() } as u64;
    if MAIN_THREAD.get() != Some(&me) || !due() {
        return false;
    }
    // Re-entrant when the GIL is held already (scipy's loop): then it only counts.
    Python::attach(|py| {
        // SAFETY: the GIL is held.
        if unsafe { pyo3::ffi::PyErr_CheckSignals() } == 0 {
            return false;
        }
        if DETACHED.with(Cell::get) {
            let err = PyErr::fetch(py);
            PENDING.with(|p| *p.borrow_mut() = Some(err));
        }
        true
    })
}

/// Whether `INTERVAL_MS` have passed since the last check (and if so, starts a new interval).
fn due() -> bool {
    let now = EPOCH.get().map_or(0, |e| e.elapsed().as_millis() as u64);
    let last = LAST_CHECK.load(Ordering::Relaxed);
    now >= last + INTERVAL_MS
        && LAST_CHECK
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}
