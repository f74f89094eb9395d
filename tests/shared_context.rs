//! One context shared by the threads calling one callback (scipy's face: the Python package hands
//! scipy one `user_data` per `Filter`, and scipy may call it from any thread, directly into the
//! compiled code). Each thread raises its own failure: a failure stops only its own thread's
//! calls, until its hook says the exception is consumed, while the other threads' calls run on
//! (apart, on a scratch context) and report their own failures.
//!
//! The hooks here stand in for the Python package's: the failure hook marks the calling thread's
//! exception pending, and the resume hook answers whether this thread has none.

use ndjit::{adaptive_callback, Bindings, CallContext, Filter, FilterFn, Hooks};
use std::cell::Cell;
use std::sync::{Arc, Mutex};

thread_local! {
    /// This thread's exception is raised and not yet consumed.
    static PENDING: Cell<bool> = const { Cell::new(false) };
}

/// Reads `x[int(x[0])]`: `[1, 7, 2]` gives 7, `[5, 0, 0]` an `IndexError`.
const SOURCE: &str = "lambda x: x[int(x[0])]";
const GOOD: [f64; 3] = [1.0, 7.0, 2.0];
const BAD: [f64; 3] = [5.0, 0.0, 0.0];

/// The failures told to a hook: (thread, message).
type Told = Arc<Mutex<Vec<(String, String)>>>;

/// The context with the stand-in hooks, and the failures told to its hook.
fn shared() -> (Arc<CallContext>, Told) {
    let told = Arc::new(Mutex::new(Vec::new()));
    let t = told.clone();
    let hooks = Hooks {
        on_failure: Some(Box::new(move |e| {
            let thread = std::thread::current().name().unwrap_or("?").to_string();
            t.lock().unwrap().push((thread, e.message));
            PENDING.with(|p| p.set(true));
        })),
        resume: Some(Box::new(|| !PENDING.with(|p| p.get()))),
        direct_entry: None,
    };
    let f = Filter::compile(SOURCE, &Bindings::new()).unwrap();
    (f.new_context_with_hooks(hooks).unwrap(), told)
}

/// One call through `entry` (the compiled code itself, or the trampoline): its return code and
/// value.
fn call(entry: FilterFn, ctx: &CallContext, buffer: [f64; 3]) -> (i32, f64) {
    let mut buffer = buffer;
    let mut out = f64::NAN;
    let rc = unsafe { entry(buffer.as_mut_ptr(), 3, &mut out, ctx.user_data()) };
    (rc, out)
}

fn on_thread<R: Send>(name: &str, f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name(name.into())
            .spawn_scoped(s, f);
        h.unwrap().join().unwrap()
    })
}

fn each_entry(ctx: &CallContext) -> [(&'static str, FilterFn); 2] {
    let compiled = ctx.filter().callback().unwrap();
    [
        ("compiled code", compiled),
        ("trampoline", adaptive_callback as FilterFn),
    ]
}

#[test]
fn a_failure_stops_its_own_threads_calls_only() {
    for (how, entry) in each_entry(&shared().0) {
        let (ctx, told) = shared();
        let main = std::thread::current().name().unwrap_or("?").to_string();
        assert_eq!(call(entry, &ctx, BAD).0, 0, "{how}");
        assert_eq!(
            told.lock().unwrap().len(),
            1,
            "{how}: the hook is told once"
        );
        // Its exception pending, this thread's later calls return at once.
        assert_eq!(call(entry, &ctx, GOOD).0, 0, "{how}");
        assert_eq!(call(entry, &ctx, BAD).0, 0, "{how}");
        assert_eq!(told.lock().unwrap().len(), 1, "{how}: nothing more is told");

        on_thread("other", || {
            // Another thread computes, and fails on its own.
            assert_eq!(call(entry, &ctx, GOOD), (1, 7.0), "{how}");
            assert_eq!(call(entry, &ctx, BAD).0, 0, "{how}");
            assert_eq!(
                call(entry, &ctx, GOOD).0,
                0,
                "{how}: its own exception pending"
            );
            PENDING.with(|p| p.set(false));
            assert_eq!(
                call(entry, &ctx, GOOD),
                (1, 7.0),
                "{how}: consumed, it runs again"
            );
        });
        let told_now = told.lock().unwrap().clone();
        assert_eq!(told_now.len(), 2, "{how}: {told_now:?}");
        assert_eq!(told_now[0].0, main, "{how}");
        assert_eq!(told_now[1].0, "other", "{how}");
        assert!(
            told_now[1].1.contains("out of bounds"),
            "{how}: {told_now:?}"
        );
        // The context still holds this thread's failure, which stops it until consumed.
        assert!(ctx.failure().is_some(), "{how}");
        assert_eq!(call(entry, &ctx, GOOD).0, 0, "{how}");
        PENDING.with(|p| p.set(false));
        assert_eq!(
            call(entry, &ctx, GOOD),
            (1, 7.0),
            "{how}: consumed, the failure is cleared"
        );
        assert!(ctx.failure().is_none(), "{how}");
    }
}

#[test]
fn a_context_without_hooks_stops_every_threads_calls_until_reset() {
    let f = Filter::compile(SOURCE, &Bindings::new()).unwrap();
    let ctx = f.new_context().unwrap();
    let compiled = f.callback().unwrap();
    assert_eq!(call(compiled, &ctx, BAD).0, 0);
    on_thread("other", || assert_eq!(call(compiled, &ctx, GOOD).0, 0));
    assert_eq!(call(compiled, &ctx, GOOD).0, 0);
    ctx.reset();
    assert_eq!(call(compiled, &ctx, GOOD), (1, 7.0));
}
