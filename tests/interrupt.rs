//! Interrupting runaway filters (`while True: pass`): every engine polls `ndjit::interrupt` on
//! loop back edges and between pieces of driver work, and stops with the interrupt error.
//!
//! The poll hook is process-wide, so this file is its own test binary, and one test sets it.

use ndjit::driver::{
    generic_filter, generic_filter_raw, DriverError, Engine, Options, RawArray, RawArrayMut,
};
use ndjit::{Bindings, Filter, Sig};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

const RUNAWAY: &str = "def f(x):\n    s = 0.0\n    while True:\n        s += x[0]\n    return s";
const LONG_RANGE: &str =
    "def f(x):\n    s = 0.0\n    for i in range(10**12):\n        s += x[0]\n    return s";

/// Runs `f` on another thread; panics if it does not finish within 20 s (it hung).
fn finishes<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what}: not interrupted"))
}

#[test]
fn runaway_loops_stop_in_every_engine_when_the_hook_says_so() {
    let polls = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (p, s) = (polls.clone(), stop.clone());
    ndjit::interrupt::set_poll_hook(Some(Box::new(move || {
        p.fetch_add(1, Ordering::Relaxed);
        s.load(Ordering::Relaxed)
    })));
    // Finite loops run to their end while the hook answers no: polls cost nothing else.
    let count = Filter::compile(
        "def f(x):\n    n = 0\n    while n < 300000:\n        n += 1\n    return n",
        &Bindings::new(),
    )
    .unwrap();
    assert_eq!(count.call(&[0.0]).unwrap(), 300000.0);
    assert_eq!(count.interpret(&[0.0]).unwrap(), 300000.0);
    assert!(
        polls.load(Ordering::Relaxed) >= 8,
        "4 polls per 300 000 back edges, twice"
    );
    stop.store(true, Ordering::Relaxed);

    for src in [RUNAWAY, LONG_RANGE] {
        let f = Filter::compile(src, &Bindings::new()).unwrap();
        // The compiled callback and the interpreter: the interrupt error, with no source place.
        let g = f.clone();
        let e = finishes("callback", move || g.call(&[1.0, 2.0]).unwrap_err());
        assert!(e.is_interrupt(), "{e:?}");
        assert_eq!(e.to_string(), "the filter was interrupted");
        f.reset();
        let g = f.clone();
        let e = finishes("interpreter", move || g.interpret(&[1.0, 2.0]).unwrap_err());
        assert!(e.is_interrupt(), "{e:?}");
        // The driver, on every engine and with helper threads: Cancelled (KeyboardInterrupt).
        for (engine, threads) in [
            (Engine::Auto, 1),
            (Engine::Auto, 2),
            (Engine::Callback, 2),
            (Engine::Interpreter, 2),
            (Engine::Sequential, 1),
        ] {
            let g = f.clone();
            let e = finishes("driver", move || {
                let a = ndarray::ArrayD::<f64>::zeros(ndarray::IxDyn(&[200, 200]));
                let o = Options::size(&[3, 3]).engine(engine).threads(threads);
                generic_filter(a.view(), &g, &o).unwrap_err()
            });
            assert_eq!(e, DriverError::Cancelled, "{engine:?} on {threads} threads");
            assert_eq!(e.python_type(), "KeyboardInterrupt");
        }
    }
    let f = Filter::builder("def f(a, o):\n    while True:\n        o[0] = a[0]\n")
        .signature(Sig::Filter1d)
        .compile()
        .unwrap();
    let e = finishes("generic_filter1d", move || {
        let data = vec![1.0; 40];
        let mut out = vec![0.0; 40];
        let input = RawArray::from_slice(&data, &[4, 10]).unwrap();
        let output = RawArrayMut::from_slice(&mut out, &[4, 10]).unwrap();
        let o = Options::filter1d(3, -1).threads(2);
        unsafe { generic_filter_raw(&input, &output, &f, &o) }.unwrap_err()
    });
    assert_eq!(e, DriverError::Cancelled);
    ndjit::interrupt::set_poll_hook(None);
}
