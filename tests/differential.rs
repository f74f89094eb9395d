//! Differential tests: the JIT and the reference interpreter agree bit for bit (NaN payloads aside),
//! on every corpus program over random awkward inputs, and on randomly generated programs.

mod common;

use common::{same, Inputs};
use ndjit::{Bindings, Filter};
use proptest::prelude::*;

const SIZES: &[usize] = &[0, 1, 2, 5, 8, 9, 13, 25, 49];

#[test]
fn corpus_programs_agree_on_random_inputs() {
    let corpus = common::corpus();
    let mut failures = Vec::new();
    let mut checked = 0;
    for p in &corpus.programs {
        let b = common::bindings(p).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let general = Filter::compile(&p.source, &b).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        for &n in SIZES {
            let sized = Filter::builder(&p.source)
                .bindings(&b)
                .filter_size(n)
                .compile()
                .unwrap();
            let mut gen = Inputs::new(n as u64 * 7919 + p.name.len() as u64);
            for _ in 0..40 {
                let buf = gen.buffer(n);
                let reference = general.interpret(&buf);
                for (what, got) in [
                    ("jit", general.call(&buf)),
                    ("sized jit", sized.call(&buf)),
                    ("sized interpreter", sized.interpret(&buf)),
                ] {
                    checked += 1;
                    if !same(&reference, &got) {
                        failures.push(format!(
                            "{} [{what}] on {buf:?}: interpreter {reference:?}, got {got:?}",
                            p.name
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 10_000, "only {checked} comparisons");
    assert!(
        failures.is_empty(),
        "{} disagreements, first 20:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Random well-typed filter programs, built from the constructs callbacks use.
mod gen {
    use proptest::prelude::*;

    /// Scalar-valued expressions (`depth` bounds the size).
    pub fn scalar(depth: u32) -> BoxedStrategy<String> {
        let leaf = prop_oneof![
            (-9i64..9).prop_map(|k| format!("x[{k}]")),
            prop_oneof![
                Just("0.5"),
                Just("2.0"),
                Just("-1.25"),
                Just("0.0"),
                Just("np.nan"),
                Just("np.inf"),
                Just("t"),
                Just("3")
            ]
            .prop_map(String::from),
            Just("x[len(x) // 2]".to_string()),
        ];
        if depth == 0 {
            return leaf.boxed();
        }
        let s = scalar(depth - 1);
        let a = array(depth - 1);
        prop_oneof![
            3 => leaf,
            2 => (s.clone(), prop_oneof![Just("+"), Just("-"), Just("*"), Just("/"), Just("//"), Just("%")], s.clone())
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            // A float exponent: a NumPy integer (`np.argmax(x)`) to a power that is not a
            // constant is refused at compile time (NumPy wraps at 64 bits), and these programs
            // must all compile. Integer powers have their own tests (`test_powers.py`).
            1 => (s.clone(), s.clone()).prop_map(|(a, b)| format!("({a} ** float({b}))")),
            2 => (prop_oneof![Just("np.sum"), Just("np.mean"), Just("np.max"), Just("np.min"), Just("np.median"), Just("np.std"),
                              Just("np.nanmax"), Just("np.nanmean"), Just("np.ptp"), Just("np.prod"), Just("np.argmax"),
                              Just("np.count_nonzero"), Just("len"), Just("max"), Just("min"), Just("np.nanmedian"), Just("np.var")], a.clone())
                .prop_map(|(f, a)| format!("{f}({a})")),
            1 => (a.clone(), 0u32..101).prop_map(|(a, q)| format!("np.percentile({a}, {q})")),
            1 => (prop_oneof![Just("np.sqrt"), Just("np.exp"), Just("np.log"), Just("abs"), Just("np.floor"), Just("np.sin"),
                              Just("np.tanh"), Just("np.round"), Just("float"), Just("np.sign")], s.clone())
                .prop_map(|(f, a)| format!("{f}({a})")),
            1 => (s.clone(), prop_oneof![Just("<"), Just("<="), Just("=="), Just("!=")], s.clone(), s.clone(), s.clone())
                .prop_map(|(a, op, b, c, d)| format!("({c} if {a} {op} {b} else {d})")),
            1 => (s.clone(), s.clone()).prop_map(|(a, b)| format!("min({a}, {b})")),
            1 => (s.clone(), s.clone()).prop_map(|(a, b)| format!("np.hypot({a}, {b})")),
        ]
        .boxed()
    }

    /// Array-valued expressions.
    pub fn array(depth: u32) -> BoxedStrategy<String> {
        let leaf = prop_oneof![
            Just("x".to_string()),
            Just("w".to_string()),
            Just("x[1:-1]".to_string()),
            Just("x[::-2]".to_string())
        ];
        if depth == 0 {
            return leaf.boxed();
        }
        let s = scalar(depth - 1);
        let a = array(depth - 1);
        prop_oneof![
            3 => leaf,
            2 => (a.clone(), prop_oneof![Just("+"), Just("-"), Just("*"), Just("/")], s.clone()).prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            1 => (a.clone(), s.clone()).prop_map(|(a, b)| { let _ = a; format!("x[x > {b}]") }),
            1 => (a.clone(), s.clone()).prop_map(|(a, b)| format!("np.abs({a} - {b})")),
            1 => (a.clone(), s.clone(), s.clone()).prop_map(|(a, b, c)| format!("np.clip({a}, {b}, {c})")),
            1 => (a.clone(), s.clone()).prop_map(|(a, b)| format!("np.where({a} > {b}, {a}, {b})")),
            1 => (a.clone(), s.clone()).prop_map(|(a, _)| format!("{a}[np.isfinite({a})]")),
            1 => a.clone().prop_map(|a| format!("np.delete({a}, 0)")),
            1 => (a.clone(), a.clone()).prop_map(|(a, b)| format!("np.concatenate(({a}, {b}))")),
        ]
        .boxed()
    }

    /// A `def` with a loop, a branch and an accumulator around generated expressions.
    pub fn program() -> impl Strategy<Value = String> {
        prop_oneof![
            scalar(3),
            (scalar(2), scalar(2), scalar(1), prop_oneof![Just("<"), Just(">"), Just(">=")]).prop_map(|(init, step, ret, op)| {
                format!(
                    "def f(x):\n    acc = {init}\n    n = 0\n    for i, v in enumerate(x):\n        if v {op} acc:\n            acc = acc + v * {step}\n            n += 1\n        elif n > 3:\n            break\n    return acc + n + {ret}"
                )
            }),
            (scalar(2), scalar(2)).prop_map(|(a, b)| {
                format!("def f(x):\n    k = 0\n    s = 0.0\n    while k < len(x):\n        s += x[k] * {a}\n        k += 2\n        if s > 100:\n            continue\n    return s - {b}")
            }),
        ]
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_agree(src in gen::program(), seed in any::<u64>(), n in prop::sample::select(vec![0usize, 1, 3, 9, 25])) {
        let mut b = Bindings::new();
        b.set_float("t", 0.25).set_array("w", (0..n).map(|i| i as f64 * 0.5 - 1.0).collect());
        // Every generated program is well typed, so compiling must succeed, but for one refusal
        // by design: a scalar that is an int on one path and a float on another (`min(x[0], 3)`)
        // given to a NumPy function with an array, whose dtype would depend on the path.
        let f = match Filter::compile(&src, &b) {
            Ok(f) => f,
            Err(e) if e.to_string().contains("an int on one path and a float on another") => {
                return Err(TestCaseError::reject("an int or a float by path, with an array"));
            }
            Err(e) => return Err(TestCaseError::fail(format!("{src}\n{e}"))),
        };
        let sized = Filter::builder(&src).bindings(&b).filter_size(n).compile().unwrap();
        let mut gen = Inputs::new(seed);
        for _ in 0..8 {
            let buf = gen.buffer(n);
            let reference = f.interpret(&buf);
            let jit = f.call(&buf);
            let sjit = sized.call(&buf);
            prop_assert!(same(&reference, &jit), "{src}\non {buf:?}\ninterpreter {reference:?}\njit {jit:?}");
            prop_assert!(same(&reference, &sjit), "{src}\non {buf:?}\ninterpreter {reference:?}\nsized jit {sjit:?}");
        }
    }
}

#[test]
fn failed_state_sticks_until_reset_through_the_raw_callback() {
    let f = Filter::compile("x[5]", &Bindings::new()).unwrap();
    let (cb, ud) = (f.callback().unwrap(), f.user_data());
    let mut short = [1.0, 2.0];
    let mut long = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
    let mut out = 0.0;
    unsafe {
        assert_eq!(cb(short.as_mut_ptr(), 2, &mut out, ud), 0);
        assert_eq!(
            cb(long.as_mut_ptr(), 6, &mut out, ud),
            0,
            "a failed context refuses later calls"
        );
    }
    let e = f.failure().expect("the failure is recorded");
    assert_eq!(e.message, "index 5 is out of bounds for axis 0 with size 2");
    assert_eq!((e.span.start.line, e.span.start.column), (1, 3));
    f.reset();
    unsafe {
        assert_eq!(cb(long.as_mut_ptr(), 6, &mut out, ud), 1);
    }
    assert_eq!(out, 5.0);
    unsafe {
        assert_eq!(
            cb(std::ptr::null_mut(), 6, &mut out, ud),
            0,
            "NULL buffer is refused"
        );
        assert_eq!(
            cb(long.as_mut_ptr(), 6, &mut out, std::ptr::null_mut()),
            0,
            "NULL user_data is refused"
        );
    }
    assert!(f.failure().unwrap().message.contains("NULL"));
}

#[test]
fn rebinding_changes_values_without_recompiling() {
    let mut b = Bindings::new();
    b.set_float("t", 0.5).set_array("w", vec![1.0, 2.0, 3.0]);
    let f = Filter::compile("np.sum(x * w) + t", &b).unwrap();
    assert_eq!(f.call(&[1.0, 1.0, 1.0]).unwrap(), 6.5);
    let mut nb = Bindings::new();
    nb.set_array("w", vec![0.0, 0.0, 10.0]);
    let g = f.with_bindings(&nb).unwrap();
    assert_eq!(
        g.callback().unwrap() as usize,
        f.callback().unwrap() as usize,
        "same code"
    );
    assert_eq!(g.call(&[1.0, 1.0, 1.0]).unwrap(), 10.5);
    assert_eq!(
        f.call(&[1.0, 1.0, 1.0]).unwrap(),
        6.5,
        "the original keeps its values"
    );
    let e = g.call(&[1.0, 1.0]).unwrap_err();
    assert!(e.message.contains("could not be broadcast"), "{e}");
}

/// A filter built with `native_code(false)` has its IR and interpreter at once and generates its
/// native code at the first call that needs it, once, with the eager filter's results; what
/// inspects the code sees none before.
#[test]
fn native_code_waits_for_its_first_use() {
    let src = "np.median(x) + t * np.var(x)";
    let mut b = Bindings::new();
    b.set_float("t", 0.5);
    let eager = Filter::builder(src)
        .bindings(&b)
        .inspect(true)
        .compile()
        .unwrap();
    let build = || {
        Filter::builder(src)
            .bindings(&b)
            .inspect(true)
            .native_code(false)
    };
    assert!(eager.has_native_code());
    let buf = [3.0, -1.0, 0.25, 8.0, 2.0];
    let want = eager.call(&buf).unwrap();

    let lazy = build().compile().unwrap();
    assert!(
        !lazy.has_native_code(),
        "compile generated code it was told to defer"
    );
    assert!(lazy.clif_text().is_none() && lazy.disasm().is_none());
    assert_eq!(lazy.ir().to_string(), eager.ir().to_string());
    assert_eq!(lazy.interpret(&buf).unwrap().to_bits(), want.to_bits());
    assert!(
        !lazy.has_native_code(),
        "the interpreter needs no native code"
    );
    assert_eq!(lazy.call(&buf).unwrap().to_bits(), want.to_bits());
    assert!(lazy.has_native_code() && lazy.clif_text().is_some());
    let first = lazy.callback().unwrap() as usize;
    assert_eq!(lazy.callback().unwrap() as usize, first, "generated once");
    let rebound = lazy.with_bindings(&Bindings::new()).unwrap();
    assert_eq!(
        rebound.callback().unwrap() as usize,
        first,
        "clones share it"
    );

    // Each way in generates it: a context, a call.
    let lazy = build().compile().unwrap();
    let ctx = lazy.new_context().unwrap();
    assert!(lazy.has_native_code());
    let mut out = 0.0;
    let mut values = buf;
    let ok = unsafe { ndjit::adaptive_callback(values.as_mut_ptr(), 5, &mut out, ctx.user_data()) };
    assert_eq!((ok, out.to_bits()), (1, want.to_bits()));
    let lazy = build().compile().unwrap();
    assert_eq!(lazy.call(&buf).unwrap().to_bits(), want.to_bits());
    let input = ndarray::array![1.0, 4.0, -2.0, 0.5, 9.0, 3.0, 0.0];
    use ndjit::driver::Engine;
    for engine in [Engine::Callback, Engine::Auto, Engine::Sequential] {
        let opts = ndjit::driver::Options::size(&[5]).engine(engine);
        let run = |f: &Filter| ndjit::driver::generic_filter(input.view(), f, &opts).unwrap();
        // The driver may run a version specialised to the footprint (code of its own) instead.
        assert_eq!(run(&build().compile().unwrap()), run(&eager), "{engine:?}");
    }
}

#[test]
fn concurrent_calls_on_one_context() {
    let f = Filter::compile("np.median(x[x > 0.25])", &Bindings::new()).unwrap();
    let (cb, ud) = (f.callback().unwrap() as usize, f.user_data() as usize);
    std::thread::scope(|s| {
        for t in 0..4 {
            s.spawn(move || {
                let cb: ndjit::FilterFn = unsafe { std::mem::transmute(cb) };
                let mut gen = Inputs::new(t);
                for _ in 0..2000 {
                    let mut buf: Vec<f64> = gen
                        .buffer(9)
                        .iter()
                        .map(|v| if v.is_finite() { v.abs() % 1.0 } else { 0.5 })
                        .collect();
                    buf[0] = 0.75; // never empty after the mask
                    let expect = {
                        let mut k: Vec<f64> = buf.iter().copied().filter(|&v| v > 0.25).collect();
                        k.sort_by(|a, b| a.partial_cmp(b).unwrap());
                        let m = k.len();
                        if m % 2 == 1 {
                            k[m / 2]
                        } else {
                            (k[m / 2 - 1] + k[m / 2]) / 2.0
                        }
                    };
                    let mut out = 0.0;
                    assert_eq!(
                        unsafe { cb(buf.as_mut_ptr(), 9, &mut out, ud as *mut _) },
                        1
                    );
                    assert_eq!(out, expect);
                }
            });
        }
    });
}

#[test]
fn the_adaptive_callback_specialises_without_changing_results() {
    let f = Filter::compile(
        "np.median(x) - np.mean(x[x > 0.2]) if len(x) > 3 else np.sum(x)",
        &Bindings::new(),
    )
    .unwrap();
    let ctx = f.new_context().unwrap();
    let mut gen = Inputs::new(99);
    // The first call specialises for 9; later calls of every size must still match the interpreter.
    for n in [9usize, 9, 4, 25, 9, 0, 1, 9] {
        for _ in 0..20 {
            let mut buf = gen.buffer(n);
            let expect = f.interpret(&buf);
            let mut out = 0.0;
            let ok = unsafe {
                ndjit::adaptive_callback(buf.as_mut_ptr(), n as isize, &mut out, ctx.user_data())
            };
            let got = if ok == 1 {
                Ok(out)
            } else {
                Err(ctx.failure().unwrap())
            };
            ctx.reset();
            assert!(same(&expect, &got), "n={n} {buf:?}: {expect:?} vs {got:?}");
        }
    }
}
