//! Stopping long calls: a filter stuck in `while True: pass` must not hang its caller.
//!
//! Compiled code and the interpreter count the back edges of every loop whose trip count is not
//! known at compile time (the IR's `Loop`) and, every [`POLL_INTERVAL`] of them, call [`poll`]
//! (through `runtime::ndjit_rt_poll`), as wasmtime's epoch interruption does. The cost on the hot
//! path is a decrement and a branch per iteration. The n-d driver also polls between pieces of
//! work.
//!
//! [`poll`] answers whether the current call should stop:
//! - the *cancel flag* of the current thread's scope ([`with_cancel`]), which the driver sets up
//!   on the caller and on each helper thread, so that one thread seeing an interrupt stops the
//!   others;
//! - the process's *poll hook* ([`set_poll_hook`]), which an embedder installs to check its own
//!   signals (the Python package runs `PyErr_CheckSignals` there). This crate knows nothing of
//!   Python.
//!
//! A call stopped this way fails with the run-time error of [`RuntimeError::interrupted`], which
//! the Python package raises as `KeyboardInterrupt`.
//!
//! [`RuntimeError::interrupted`]: crate::RuntimeError::interrupted

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

/// Loop iterations between two polls. Measured on a 2-core x86-64: a `while` loop of a few
/// instructions runs ~2^16 iterations in well under a millisecond, so an interrupt is seen within
/// a millisecond while polls cost nothing measurable.
pub const POLL_INTERVAL: u32 = 1 << 16;

/// Asked by [`poll`]: `true` stops the call in progress. It runs on whatever thread polls, so
/// it must be cheap and thread-safe.
pub type PollHook = Box<dyn Fn() -> bool + Send + Sync>;

static HOOK: RwLock<Option<PollHook>> = RwLock::new(None);

thread_local! {
    /// The cancel flag of the innermost [`with_cancel`] scope on this thread (null: none).
    static CANCEL: Cell<*const AtomicBool> = const { Cell::new(std::ptr::null()) };
}

/// Installs the process's poll hook (replacing any earlier one); `None` removes it.
pub fn set_poll_hook(hook: Option<PollHook>) {
    *HOOK.write().unwrap_or_else(|p| p.into_inner()) = hook;
}

/// Runs `f` with `flag` as this thread's cancel flag: [`poll`] on this thread answers `true` once
/// the flag is set, and sets it when the hook asks to stop.
pub fn with_cancel<R>(flag: &AtomicBool, f: impl FnOnce() -> R) -> R {
    /// Restores the outer scope's flag, also when `f` unwinds.
    struct Restore(*const AtomicBool);
    impl Drop for Restore {
        fn drop(&mut self) {
            CANCEL.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CANCEL.with(|c| c.replace(flag)));
    f()
}

/// Whether the call in progress on this thread should stop: its scope's cancel flag is set, or
/// the poll hook says so (which then sets the flag, for the scope's other threads).
pub fn poll() -> bool {
    let flag = CANCEL.with(Cell::get);
    // SAFETY: a non-null flag belongs to an enclosing `with_cancel` scope, which outlives it.
    let flag = unsafe { flag.as_ref() };
    if flag.is_some_and(|f| f.load(Ordering::Relaxed)) {
        return true;
    }
    let hook = HOOK.read().unwrap_or_else(|p| p.into_inner());
    let stop = hook.as_ref().is_some_and(|h| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(h)).unwrap_or(false)
    });
    if stop {
        if let Some(f) = flag {
            f.store(true, Ordering::Relaxed);
        }
    }
    stop
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_nest_and_see_their_flag() {
        assert!(!poll());
        let (outer, inner) = (AtomicBool::new(false), AtomicBool::new(true));
        with_cancel(&outer, || {
            assert!(!poll());
            with_cancel(&inner, || assert!(poll()));
            assert!(!poll(), "the outer scope's flag is back");
            outer.store(true, Ordering::Relaxed);
            assert!(poll());
        });
        assert!(!poll());
    }
}
