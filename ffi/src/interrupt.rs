//! Stopping long calls from C: a filter stuck in `while True: pass` must not hang its host.
//!
//! The core polls between pieces of a driver call and every 65,536 iterations of a loop whose
//! trip count is unknown ([`ndjit_core::interrupt`]); the Python package answers those polls with
//! `PyErr_CheckSignals`, and a C host with the function it installs here.

use ndjit_core::interrupt::{set_poll_hook, PollHook};
use std::ffi::c_void;

/// A function the library calls to ask whether the call in progress should stop: nonzero stops
/// it. The call then fails with `NDJIT_ERR_RUNTIME`, its error's kind `"KeyboardInterrupt"`.
/// It is called from whichever thread runs the filter (the caller's or the driver's workers),
/// about once a millisecond of a long loop: it must be thread-safe and cheap, e.g. read an atomic
/// flag that a signal handler or another thread sets.
pub type ndjit_poll_hook = Option<unsafe extern "C" fn(user_data: *mut c_void) -> i32>;

/// The hook's `user_data`, handed to the hook on any thread: the caller's contract.
struct UserData(*mut c_void);
// SAFETY: `ndjit_set_poll_hook`'s contract: the hook may be called with it from any thread.
unsafe impl Send for UserData {}
// SAFETY: as above.
unsafe impl Sync for UserData {}

impl UserData {
    fn get(&self) -> *mut c_void {
        self.0
    }
}

/// Installs `hook`, called with `user_data`, for every call in the process, replacing any hook
/// installed before; NULL removes it. Calls in progress see the change at their next poll; once
/// this returns, the old hook is neither running nor called again. Thread-safe, but not from
/// inside a hook (it waits for the hooks running).
///
/// # Safety
/// `hook` must be safe to call with `user_data` from any thread until it is replaced or
/// removed.
#[no_mangle]
pub unsafe extern "C" fn ndjit_set_poll_hook(hook: ndjit_poll_hook, user_data: *mut c_void) {
    let hook = hook.map(|h| {
        let data = UserData(user_data);
        // SAFETY: the caller's contract.
        Box::new(move || unsafe { h(data.get()) } != 0) as PollHook
    });
    set_poll_hook(hook);
}
