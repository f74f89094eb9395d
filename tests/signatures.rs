//! The other scipy callback signatures: generic_filter1d lines, geometric_transform mappings and
//! quad integrands, through the JIT and the interpreter.

use ndjit::interp::Args;
use ndjit::{Bindings, Filter, Sig};

fn compile(src: &str, sig: Sig, b: &Bindings) -> Filter {
    Filter::builder(src)
        .bindings(b)
        .signature(sig)
        .compile()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs both engines; returns (result, output) and asserts they agree bit for bit.
fn both(
    f: &Filter,
    values: &[f64],
    coords: &[i64],
    out_len: usize,
) -> (Result<Option<f64>, String>, Vec<f64>) {
    let mut o1 = vec![-7.0; out_len];
    let mut o2 = vec![-7.0; out_len];
    let r1 = f
        .call_args(Args {
            values,
            coords,
            output: &mut o1,
        })
        .map_err(|e| e.message);
    let r2 = f
        .interpret_args(Args {
            values,
            coords,
            output: &mut o2,
        })
        .map_err(|e| e.message);
    assert_eq!(format!("{r1:?}"), format!("{r2:?}"), "{}", f.source());
    assert_eq!(
        o1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        o2.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    (r1, o1)
}

#[test]
fn filter1d_writes_the_output_line() {
    let b = Bindings::new();
    let mean3 = compile(
        "def f(iline, oline):\n    oline[...] = (iline[:-2] + iline[1:-1] + iline[2:]) / 3.0",
        Sig::Filter1d,
        &b,
    );
    let (r, out) = both(&mean3, &[3.0, 6.0, 9.0, 12.0, 15.0], &[], 3);
    assert_eq!(r, Ok(None));
    assert_eq!(out, vec![6.0, 9.0, 12.0]);
    // scipy's own test_c_api filter1d, with a loop, `+=` on elements and an in-place `/=`.
    let mut bound = Bindings::new();
    bound.set_int("filter_size", 3);
    let loop_style = compile(
        "def filter1d(input_line, output_line, filter_size):\n    for i in range(output_line.size):\n        output_line[i] = 0\n        for j in range(filter_size):\n            output_line[i] += input_line[i+j]\n    output_line /= filter_size",
        Sig::Filter1d,
        &bound,
    );
    let (_, out) = both(&loop_style, &[3.0, 6.0, 9.0, 12.0, 15.0], &[], 3);
    assert_eq!(out, vec![6.0, 9.0, 12.0]);
    // A mismatched assignment and an out-of-range store are run-time errors, not corruption;
    // a length-1 array is broadcast to the line, as NumPy does.
    let (r, _) = both(&mean3, &[1.0, 2.0, 3.0, 4.0], &[], 3);
    assert_eq!(
        r,
        Err("could not broadcast input array from shape (2,) into shape (3,)".into())
    );
    let (r, out) = both(&mean3, &[1.0, 2.0, 3.0], &[], 3);
    assert_eq!((r, out), (Ok(None), vec![2.0, 2.0, 2.0]));
    let bad_store = compile("def f(a, o):\n    o[len(o)] = 1.0", Sig::Filter1d, &b);
    assert!(both(&bad_store, &[1.0], &[], 2)
        .0
        .unwrap_err()
        .contains("out of bounds"));
    // Scalars broadcast over the line; an in-place reversal reads a copy.
    let fill = compile("def f(a, o):\n    o[...] = a[0]", Sig::Filter1d, &b);
    assert_eq!(both(&fill, &[2.5, 0.0], &[], 3).1, vec![2.5; 3]);
    let rev = compile(
        "def f(a, o):\n    for i in range(len(o)):\n        o[i] = i\n    o[...] = o[::-1]",
        Sig::Filter1d,
        &b,
    );
    assert_eq!(both(&rev, &[0.0], &[], 4).1, vec![3.0, 2.0, 1.0, 0.0]);
}

#[test]
fn filter1d_rejects_a_return_value() {
    let e = Filter::builder("def f(a, o):\n    return 1.0")
        .signature(Sig::Filter1d)
        .compile()
        .unwrap_err();
    assert!(e.to_string().contains("returns nothing"), "{e}");
    let e = Filter::builder("def f(a):\n    pass")
        .signature(Sig::Filter1d)
        .compile()
        .unwrap_err();
    assert!(
        e.to_string().contains("input line and the output line"),
        "{e}"
    );
}

#[test]
fn transforms_map_output_to_input_coordinates() {
    let mut b = Bindings::new();
    b.set_float("shift", 0.5);
    let f = compile("def transform(output_coordinates, shift):\n    return output_coordinates[0] - shift, output_coordinates[1] - shift", Sig::Transform, &b);
    let (r, out) = both(&f, &[], &[3, 7], 2);
    assert_eq!(r, Ok(None));
    assert_eq!(out, vec![2.5, 6.5]);
    // Rank mismatch: the mapping returns two coordinates for a 3-D input.
    let (r, _) = both(&f, &[], &[3, 7], 3);
    assert_eq!(
        r,
        Err("the mapping returned 2 coordinates, but the input has rank 3".into())
    );
    let swap = compile(
        "lambda c: (c[1], c[0] * 2)",
        Sig::Transform,
        &Bindings::new(),
    );
    assert_eq!(both(&swap, &[], &[4, 9], 2).1, vec![9.0, 8.0]);
    // Coordinates are Python ints: dividing one by zero raises, as CPython does.
    let div = compile(
        "lambda c: (c[0] / c[1], 0.0)",
        Sig::Transform,
        &Bindings::new(),
    );
    assert_eq!(
        both(&div, &[], &[1, 0], 2).0,
        Err("division by zero".into())
    );
}

#[test]
fn integrands_read_quads_arguments() {
    let f = compile(
        "def f(x, a, b):\n    return math.exp(-a * x) * math.cos(b * x)",
        Sig::Integrand,
        &Bindings::new(),
    );
    let (r, _) = both(&f, &[0.5, 2.0, 3.0], &[], 0);
    assert_eq!(r, Ok(Some((-1.0f64).exp() * 1.5f64.cos())));
    assert_eq!(
        f.call(&[0.5, 2.0, 3.0]).unwrap(),
        (-1.0f64).exp() * 1.5f64.cos()
    );
    // Too few values from quad: an error (the raw callback returns NaN).
    let (r, _) = both(&f, &[0.5], &[], 0);
    assert!(r
        .unwrap_err()
        .contains("needs argument 2 but quad passed 1"));
    // Too many: Python's TypeError for a call with more arguments than the function takes.
    let (r, _) = both(&f, &[0.5, 2.0, 3.0, 4.0], &[], 0);
    assert!(r
        .unwrap_err()
        .contains("takes 3 arguments but quad passed 4"));
    // Defaults fill in what quad does not pass.
    let g = compile(
        "def g(x, k=2.0):\n    return x ** k",
        Sig::Integrand,
        &Bindings::new(),
    );
    assert_eq!(both(&g, &[3.0], &[], 0).0, Ok(Some(9.0)));
    assert_eq!(both(&g, &[3.0, 3.0], &[], 0).0, Ok(Some(27.0)));
    let raw: unsafe extern "C" fn(i32, *mut f64, *mut std::ffi::c_void) -> f64 =
        unsafe { std::mem::transmute(g.entry_address().unwrap()) };
    let mut xx = [2.0, 10.0];
    assert_eq!(unsafe { raw(2, xx.as_mut_ptr(), g.user_data()) }, 1024.0);
    assert!(
        unsafe { raw(-1, xx.as_mut_ptr(), g.user_data()) }.is_nan(),
        "a negative count is refused"
    );
}

#[test]
fn integrand_defaults_are_floats_as_quad_passes() {
    // `-k` of an int default 0 is 0, of a float from quad -0.0: one parameter, two types.
    let e = Filter::builder("def g(x, k=0):\n    return math.copysign(1.0, -k)")
        .signature(Sig::Integrand)
        .compile()
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("an integrand's parameter defaults are floats"),
        "{e}"
    );
}

/// quad's trampoline with `values`: the result, or the context's failure.
fn through_quads_trampoline(f: &Filter, values: &[f64]) -> Result<f64, ndjit::RuntimeError> {
    type Integrand = unsafe extern "C" fn(i32, *mut f64, *mut std::ffi::c_void) -> f64;
    let ctx = f.new_context().unwrap();
    let entry = ndjit::resumable_callback(Sig::Integrand);
    // SAFETY: the integrand trampoline has quad's C type; `xx` holds `n` values.
    let call: Integrand = unsafe { std::mem::transmute(entry) };
    let mut xx = values.to_vec();
    let v = unsafe { call(xx.len() as i32, xx.as_mut_ptr(), ctx.user_data()) };
    ctx.failure().map_or(Ok(v), Err)
}

#[test]
fn quads_doubles_that_may_be_ints_run_every_typing_and_must_agree() {
    let neg = compile("lambda x, a: -a * x", Sig::Integrand, &Bindings::new());
    // a = 0 as an int gives 0.0, as a float -0.0: quad's 0.0 may be either.
    let e = through_quads_trampoline(&neg, &[0.5, 0.0]).unwrap_err();
    assert_eq!(e.exception, ndjit::Exception::TypeError);
    assert!(
        e.message
            .contains("quad passed 0 for `a`, which may stand for the int or the float"),
        "{}",
        e.message
    );
    // Not integral, or -0.0 (no int is): a float, computed at once.
    assert_eq!(
        through_quads_trampoline(&neg, &[0.5, 0.25]).unwrap(),
        -0.125
    );
    assert_eq!(
        through_quads_trampoline(&neg, &[0.5, -0.0])
            .unwrap()
            .to_bits(),
        0.0f64.to_bits()
    );
    // Both typings agree: their common value.
    let pow = compile("lambda x, n: x ** n", Sig::Integrand, &Bindings::new());
    assert_eq!(through_quads_trampoline(&pow, &[0.5, 3.0]).unwrap(), 0.125);
    // Declared: one typing, Python's for that type.
    for (src, want) in [
        ("def f(x, a: int):\n    return -a * x", 0.0f64),
        ("def f(x, a: float):\n    return -a * x", -0.0),
    ] {
        let f = compile(src, Sig::Integrand, &Bindings::new());
        assert_eq!(
            through_quads_trampoline(&f, &[0.5, 0.0]).unwrap().to_bits(),
            want.to_bits(),
            "{src}"
        );
    }
    // From 2**53 on a double stands for several ints: refused unless declared a float.
    let e = through_quads_trampoline(&neg, &[0.5, 1e17]).unwrap_err();
    assert!(
        e.message.contains("a value of 2**53 or more"),
        "{}",
        e.message
    );
    // The direct entry keeps quad's doubles as floats (the C face has no Python ints).
    assert_eq!(
        neg.call(&[0.5, 0.0]).unwrap().to_bits(),
        (-0.0f64).to_bits()
    );
}
