//! Targeted semantics: where CPython and NumPy differ, ndjit does what the user's Python does.

use ndjit::{Bindings, Filter};

/// Runs `src` on `x` through the JIT (general and specialised to `x.len()`) and the interpreter,
/// which must agree bit for bit.
fn run(src: &str, x: &[f64]) -> Result<f64, String> {
    let f = Filter::compile(src, &Bindings::new()).map_err(|e| e.to_string())?;
    let jit = f.call(x).map_err(|e| e.message.clone());
    let interp = f.interpret(x).map_err(|e| e.message.clone());
    assert_eq!(format!("{jit:?}"), format!("{interp:?}"), "{src}");
    let fixed = Filter::builder(src).filter_size(x.len()).compile().unwrap();
    let unrolled = fixed.call(x).map_err(|e| e.message.clone());
    assert_eq!(
        format!("{jit:?}"),
        format!("{unrolled:?}"),
        "{src} (specialised)"
    );
    jit
}

/// The Python exception `src` raises on `x` (every backend must agree, see [`run`]).
fn raises(src: &str, x: &[f64]) -> &'static str {
    let f = Filter::compile(src, &Bindings::new()).unwrap();
    let e = f.call(x).expect_err(src);
    assert_eq!(run(src, x), Err(e.message.clone()));
    e.exception.name()
}

/// Python's own `sum`: `0 + x0 + x1 + ...`, left to right.
fn python_sum(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |acc, v| acc + v)
}

#[test]
fn python_numbers_raise_on_division_by_zero_numpy_scalars_do_not() {
    let unguarded = "def f(v):\n    t = 0.0\n    n = 0\n    for a in v:\n        if a > 0:\n            t += a\n            n += 1\n    return t / n";
    assert_eq!(run(unguarded, &[1.0, -1.0, 3.0]), Ok(2.0));
    assert_eq!(
        run(unguarded, &[-1.0, -2.0]),
        Err("float division by zero".into())
    );
    // A buffer element is an np.float64: dividing it by zero gives inf, as NumPy does.
    assert_eq!(run("x[0] / 0", &[1.0]), Ok(f64::INFINITY));
    assert_eq!(run("np.float64(1.0) / 0", &[1.0]), Ok(f64::INFINITY));
    // Python numbers: len() and literals.
    assert_eq!(
        run("1.0 / (len(x) - 2)", &[1.0, 2.0]),
        Err("float division by zero".into())
    );
    assert_eq!(
        run("len(x) // (len(x) - 2)", &[1.0, 2.0]),
        Err("integer division or modulo by zero".into())
    );
    assert_eq!(
        run("float(x[0]) % 0.0", &[1.0]),
        Err("float modulo by zero".into())
    );
    // NumPy integers give 0 for a zero divisor.
    assert_eq!(run("np.count_nonzero(x) // 0", &[1.0]), Ok(0.0));
    assert!(run("np.count_nonzero(x) / x.size", &[]).unwrap().is_nan());
}

#[test]
fn numpy_functions_convert_python_numbers_to_numpy_scalars_first() {
    // The operators raise for these Python numbers; NumPy's functions of them do not.
    assert_eq!(
        run("1.0 / (len(x) - 1)", &[1.0]),
        Err("float division by zero".into())
    );
    assert_eq!(run("np.divide(1.0, len(x) - 1)", &[1.0]), Ok(f64::INFINITY));
    assert_eq!(
        run("np.true_divide(-7.0, 0)", &[1.0]),
        Ok(f64::NEG_INFINITY)
    );
    assert!(run("np.divide(len(x) - 1, 0)", &[1.0]).unwrap().is_nan());
    assert_eq!(run("np.floor_divide(7, len(x) - 1)", &[1.0]), Ok(0.0));
    assert_eq!(run("np.remainder(7, len(x) - 1)", &[1.0]), Ok(0.0));
    assert!(run("np.mod(7.0, 0.0)", &[1.0]).unwrap().is_nan());
    assert_eq!(run("np.floor_divide(7.0, 0.0)", &[1.0]), Ok(f64::INFINITY));
    // int64 arithmetic wraps where Python's ints would need more than 64 bits.
    assert_eq!(
        run("np.multiply(2**62, 4 + len(x))", &[1.0]),
        Ok(2f64.powi(62))
    );
    assert_eq!(run("np.add(2**62, 2**62)", &[1.0]), Ok(-(2f64.powi(63))));
    assert_eq!(run("np.dot(2**62, 4)", &[1.0]), Ok(0.0));
    assert_eq!(raises("(2**62) * (4 + len(x))", &[1.0]), "OverflowError");
    // Two bools: a logical or and a logical and (Python's `True + True` is 2).
    assert_eq!(run("np.add(True, len(x) > 0) * 3", &[1.0]), Ok(3.0));
    assert_eq!(run("(True + (len(x) > 0)) * 3", &[1.0]), Ok(6.0));
    assert_eq!(run("np.multiply(True, len(x) > 1)", &[1.0]), Ok(0.0));
    assert_eq!(run("np.add(True, 1)", &[1.0]), Ok(2.0));
}

#[test]
fn numpy_results_keep_numpys_kinds_and_python_builtins_pythons() {
    // The extremes of bools are bools: an or with a mask, not an int sum.
    let x = [1.0, 0.7, 0.2];
    assert_eq!(run("np.sum(np.max(x > 0) + (x > 0.5))", &x), Ok(3.0));
    assert_eq!(run("np.sum(max(x > 0) + (x > 0.5))", &x), Ok(3.0));
    assert_eq!(run("np.sum(np.nanmax(x > 0) + (x > 0.5))", &x), Ok(3.0));
    assert!(Filter::compile("-np.max(x > 0)", &Bindings::new()).is_err());
    // Of ints, ints (NumPy's `// 0` is 0), also for the `nan` forms and np.sign.
    assert_eq!(run("np.nanmax(x.astype(int)) // 0", &x), Ok(0.0));
    assert_eq!(run("np.sign(len(x)) // 0", &x), Ok(0.0));
    assert_eq!(run("np.sign(x.astype(int))[0] // 0", &x), Ok(0.0));
    // Python's any() and all() give Python bools.
    assert_eq!(raises("1.0 / any(x > 2.0)", &x), "ZeroDivisionError");
    assert_eq!(run("1.0 / np.any(x > 2.0)", &x), Ok(f64::INFINITY));
    // np.abs of a Python bool is NumPy's bool; np.round of bools is float16 in NumPy: refused.
    assert!(Filter::compile("-np.abs(len(x) > 1)", &Bindings::new()).is_err());
    assert_eq!(run("-abs(len(x) > 1)", &x), Ok(-1.0));
    assert!(Filter::compile("np.round(x > 0)[0]", &Bindings::new()).is_err());
}

#[test]
fn builtin_min_max_follow_cpython_numpy_propagates() {
    let nan_first = [f64::NAN, 1.0, 2.0];
    let nan_later = [1.0, f64::NAN, 2.0];
    assert!(run("min(x)", &nan_first).unwrap().is_nan());
    assert_eq!(run("min(x)", &nan_later), Ok(1.0));
    assert_eq!(run("max(x)", &nan_later), Ok(2.0));
    assert!(run("np.min(x)", &nan_later).unwrap().is_nan());
    assert_eq!(run("np.nanmin(x)", &nan_later), Ok(1.0));
    assert!(run("np.nanmax(x)", &[f64::NAN, f64::NAN]).unwrap().is_nan());
    assert_eq!(
        run("min(x)", &[]),
        Err("min() arg is an empty sequence".into())
    );
    assert!(run("np.min(x)", &[])
        .unwrap_err()
        .contains("zero-size array"));
}

#[test]
fn sums_are_numpys_pairwise_sums() {
    // Values whose sum depends on the order: NumPy's 8-way pairwise order is reproduced exactly.
    let x: Vec<f64> = (0..25).map(|i| if i % 3 == 0 { 1e16 } else { 1.0 + i as f64 * 1e-3 } * if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let mut r = [0.0f64; 8];
    r.copy_from_slice(&x[..8]);
    for k in (8..24).step_by(8) {
        for j in 0..8 {
            r[j] += x[k + j];
        }
    }
    let mut expect = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    expect += x[24];
    expect += 0.0;
    assert_eq!(run("np.sum(x)", &x).unwrap().to_bits(), expect.to_bits());
    assert_eq!(
        run("np.mean(x)", &x).unwrap().to_bits(),
        (expect / 25.0).to_bits()
    );
}

#[test]
fn builtin_sum_adds_in_order_numpy_sums_pairwise() {
    // Python gives 0.0 (1e16 + 1.0 rounds back to 1e16 each time); NumPy's pairwise sum gives 8.0.
    let mut x = vec![1e16];
    x.extend([1.0; 8]);
    x.push(-1e16);
    assert_eq!(python_sum(&x), 0.0);
    assert_eq!(run("sum(x)", &x), Ok(0.0));
    assert_eq!(run("np.sum(x)", &x), Ok(8.0));
    assert_eq!(run("x.sum()", &x), Ok(8.0));
    assert_eq!(run("sum(x, 0.0)", &x), Ok(0.0));
    assert_eq!(run("sum(x, 0)", &x), Ok(0.0));
    let mixed: Vec<f64> = (0..40)
        .map(|i| (i as f64 * 0.37).sin() * 10f64.powi(i % 7))
        .collect();
    assert_eq!(
        run("sum(x)", &mixed).unwrap().to_bits(),
        python_sum(&mixed).to_bits()
    );
    // `0 + -0.0` is `0.0`; an empty sum is the int 0 (a Python number: dividing by it raises).
    assert_eq!(run("sum(x)", &[-0.0]).unwrap().to_bits(), 0.0f64.to_bits());
    assert_eq!(run("sum(x[:0])", &x), Ok(0.0));
    assert!(run("1 / sum(x[:0])", &x)
        .unwrap_err()
        .contains("division by zero"));
    assert_eq!(run("1 / sum(x[:1] * 0)", &x), Ok(f64::INFINITY));
    // A literal adds its items one `+` at a time; int arrays sum exactly.
    assert_eq!(run("sum([x[0], x[1], x[9]])", &x), Ok(0.0));
    assert_eq!(run("sum(x > 0)", &x), Ok(9.0));
}

#[test]
fn powers_raise_for_python_floats_numpy_gives_inf_or_nan() {
    // Python floats: ZeroDivisionError, a complex result (refused), OverflowError.
    assert_eq!(raises("float(x[0]) ** -1.0", &[0.0]), "ZeroDivisionError");
    assert_eq!(raises("0.0 ** -x.size", &[0.0]), "ZeroDivisionError");
    assert_eq!(raises("float(x[0]) ** 0.5", &[-4.0]), "ValueError");
    assert_eq!(raises("float(x[0]) ** 2", &[1e200]), "OverflowError");
    assert_eq!(raises("pow(float(x[0]), 3.0)", &[1e200]), "OverflowError");
    assert_eq!(run("float(x[0]) ** 3.0", &[-2.0]), Ok(-8.0));
    assert_eq!(run("float(x[0]) ** -1.0", &[f64::INFINITY]), Ok(0.0));
    // NumPy scalars and np.power never raise.
    assert_eq!(run("x[0] ** -1.0", &[0.0]), Ok(f64::INFINITY));
    assert!(run("x[0] ** 0.5", &[-4.0]).unwrap().is_nan());
    assert_eq!(run("np.power(0.0, -1.0)", &[0.0]), Ok(f64::INFINITY));
    // math.pow: an infinite result from a zero base is a domain error, otherwise a range error.
    assert_eq!(raises("math.pow(x[0], -1.0)", &[0.0]), "ValueError");
    assert_eq!(
        run("math.pow(x[0], -1.0)", &[-0.0]),
        Err("math domain error".into())
    );
    assert_eq!(raises("math.pow(x[0], 2.0)", &[1e200]), "OverflowError");
}

#[test]
fn numpy_sign_of_zero_is_positive_zero_and_of_nan_nan() {
    assert_eq!(
        run("np.sign(x[0])", &[-0.0]).unwrap().to_bits(),
        0.0f64.to_bits()
    );
    assert_eq!(
        run("np.sign(x)[0]", &[-0.0]).unwrap().to_bits(),
        0.0f64.to_bits()
    );
    assert!(run("np.sign(x[0])", &[f64::NAN]).unwrap().is_nan());
    assert_eq!(run("np.sign(x[0])", &[-3.0]), Ok(-1.0));
}

#[test]
fn python_ints_are_exact_within_64_bits_and_raise_past_them() {
    const MIN: f64 = -9223372036854775808.0;
    let nine = [1.0; 9];
    // Conversions: int(1e19) is 10**19 in Python, past 64 bits.
    for src in [
        "int(x[0])",
        "round(x[0])",
        "math.floor(x[0])",
        "np.int64(x[0])",
    ] {
        assert_eq!(raises(src, &[1e19]), "OverflowError", "{src}");
        assert_eq!(raises(src, &[-1e19]), "OverflowError", "{src}");
    }
    assert_eq!(run("int(x[0])", &[MIN]), Ok(MIN));
    // Arithmetic: exact within 64 bits, OverflowError past them.
    assert_eq!(
        raises("int(x[0]) * int(x[1])", &[3e9, 4e9]),
        "OverflowError"
    );
    assert_eq!(
        run("int(x[0]) * int(x[1]) // 1000", &[3e9, -3e9]),
        Ok(-9e15)
    );
    assert_eq!(
        raises("int(x[0]) + int(x[1])", &[9e18, 9e18]),
        "OverflowError"
    );
    assert_eq!(
        raises("int(x[0]) - int(x[1])", &[-9e18, 9e18]),
        "OverflowError"
    );
    assert_eq!(raises("-int(x[0])", &[MIN]), "OverflowError");
    assert_eq!(raises("abs(int(x[0]))", &[MIN]), "OverflowError");
    assert_eq!(raises("int(x[0]) // -1", &[MIN]), "OverflowError");
    assert_eq!(run("int(x[0]) % -1", &[MIN]), Ok(0.0));
    assert_eq!(run("int(x[0]) + int(x[1])", &[MIN, 9e18]), Ok(MIN + 9e18));
    // Constant steps compare against the bound: 2**63 - 1 is fine, one more is not.
    let max = "((1 << 62) - len(x) + (1 << 62))";
    assert_eq!(run(&format!("{max} + 8 - 2**62"), &nine), Ok(2f64.powi(62)));
    assert_eq!(raises(&format!("{max} + 9"), &nine), "OverflowError");
    assert_eq!(raises(&format!("-{max} - 10"), &nine), "OverflowError");
    assert_eq!(
        run(&format!("-{max} - 9 + 2**62"), &nine),
        Ok(-(2f64.powi(62)))
    );
    // Shifts: Python's `<<` is exact, a negative count is a ValueError, `>>` saturates.
    assert_eq!(raises("len(x) << 70", &nine), "OverflowError");
    assert_eq!(raises("len(x) << 60", &nine), "OverflowError");
    assert_eq!(run("len(x) << 59", &nine), Ok((9i64 << 59) as f64));
    assert_eq!(
        run("len(x) << -1", &nine),
        Err("negative shift count".into())
    );
    assert_eq!(raises("len(x) >> -1", &nine), "ValueError");
    assert_eq!(run("len(x) >> 70", &nine), Ok(0.0));
    assert_eq!(run("-len(x) >> 70", &nine), Ok(-1.0));
    assert_eq!(run("(len(x) - 9) << 100", &nine), Ok(0.0));
    // Powers of ints are exact integer powers (a float for a negative exponent).
    assert_eq!(
        run("len(x) ** 19 % 1000", &nine),
        Ok((9i64.pow(19) % 1000) as f64)
    );
    assert_eq!(run("3 ** 39 % 7", &nine), Ok((3i64.pow(39) % 7) as f64));
    assert_eq!(raises("3 ** 40 % 7", &nine), "OverflowError");
    // An exponent known only at run time goes through a float power: refused past 2**53.
    assert_eq!(
        run("3 ** (len(x) + 24) % 7", &nine),
        Ok((3i64.pow(33) % 7) as f64)
    );
    assert_eq!(raises("3 ** (len(x) + 30) % 7", &nine), "OverflowError");
    assert_eq!(raises("len(x) ** 20", &nine), "OverflowError");
    assert_eq!(run("len(x) ** -1", &nine), Ok(1.0 / 9.0));
    assert_eq!(raises("len(x) ** len(x) ** 2", &nine), "OverflowError");
    assert_eq!(run("2 ** len(x)", &nine), Ok(512.0));
    // A checked product in a branch (if-converted, its check guarded) fails only when taken.
    let square = "def f(v):\n    n = int(v[0])\n    if v[1] > 0:\n        n = n * n\n    return n";
    assert_eq!(run(square, &[4e9, -1.0]), Ok(4e9));
    assert_eq!(run(square, &[3e9, 1.0]), Ok(9e18));
    assert_eq!(raises(square, &[4e9, 1.0]), "OverflowError");
}

#[test]
fn numpy_ints_keep_numpy_fixed_width_rules() {
    const MIN: f64 = -9223372036854775808.0;
    let wrapped = 3_000_000_000i64.wrapping_mul(4_000_000_000) as f64;
    assert_eq!(
        run("x.astype(int)[0] * x.astype(int)[1]", &[3e9, 4e9]),
        Ok(wrapped)
    );
    // x86-64's float-to-int cast, which NumPy uses: NaN and out of range give -(2**63).
    for v in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e19, -1e19] {
        assert_eq!(run("x.astype(int)[0]", &[v]), Ok(MIN), "{v}");
    }
    assert_eq!(run("x.astype(int)[0]", &[-2.9]), Ok(-2.0));
    // NumPy shifts by counts past the width give 0 (or the sign for >>).
    assert_eq!(run("x.astype(int)[0] << 70", &[1.0]), Ok(0.0));
    assert_eq!(run("x.astype(int)[0] >> 70", &[-5.0]), Ok(-1.0));
}

/// CPython's `round(v, n)` for `n >= 0`: the exact value rounded half-even to `n` decimals
/// (Rust formats floats exactly), read back correctly rounded.
fn python_round(v: f64, n: usize) -> f64 {
    format!("{v:.n$}").parse().unwrap()
}

#[test]
fn round_with_digits_is_pythons_for_python_floats_and_numpys_for_numpy_floats() {
    assert_eq!(python_round(2.675, 2), 2.67);
    assert_eq!(python_round(0.125, 2), 0.12);
    assert_eq!(run("round(float(x[0]), 2)", &[2.675]), Ok(2.67));
    // round() of an np.float64 is np.round: 2.675 * 100 rounds up to 267.5 first.
    assert_eq!(run("round(x[0], 2)", &[2.675]), Ok(2.68));
    assert_eq!(run("np.round(x[0], 2)", &[2.675]), Ok(2.68));
    // Bit for bit on ties, near-ties, signs, zeros and magnitudes where x * 10**n is inexact.
    let mut vals = vec![
        0.125,
        -0.125,
        2.5,
        0.5,
        -0.5,
        1.005,
        5e-324,
        1e15 + 0.3,
        4503599627370497.5,
    ];
    let mut s = 0x9E3779B97F4A7C15u64;
    for _ in 0..400 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let m = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        vals.push(m * 10f64.powi((s % 24) as i32 - 8));
        vals.push(((s % 100_000) as f64 + 0.5) / 10f64.powi((s % 6) as i32));
    }
    for n in [0usize, 1, 2, 3, 5, 9, 22] {
        let f = Filter::compile(&format!("round(float(x[0]), {n})"), &Bindings::new()).unwrap();
        for &v in &vals {
            let got = f.call(&[v]).unwrap();
            assert_eq!(
                got.to_bits(),
                python_round(v, n).to_bits(),
                "round({v:?}, {n})"
            );
            assert_eq!(f.interpret(&[v]).unwrap().to_bits(), got.to_bits());
        }
    }
    // Negative digits: rounding to tens and thousands.
    assert_eq!(run("round(float(x[0]), -1)", &[25.0]), Ok(20.0));
    assert_eq!(
        run("round(float(x[0]), -1)", &[25.000000000000004]),
        Ok(30.0)
    );
    assert_eq!(run("round(float(x[0]), -3)", &[-1500.0]), Ok(-2000.0));
    assert_eq!(
        run("round(float(x[0]), -1)", &[-4.0]).unwrap().to_bits(),
        (-0.0f64).to_bits()
    );
    assert!(run("round(float(x[0]), 2)", &[f64::NAN]).unwrap().is_nan());
    assert_eq!(
        run("round(float(x[0]), 2)", &[f64::INFINITY]),
        Ok(f64::INFINITY)
    );
}

#[test]
fn rounding_floor_division_and_casts() {
    assert_eq!(run("round(x[0])", &[2.5]), Ok(2.0));
    assert_eq!(run("round(x[0])", &[3.5]), Ok(4.0));
    assert_eq!(run("np.round(x[0], 1)", &[0.25]), Ok(0.2));
    assert_eq!(run("x[0] // 2", &[-7.0]), Ok(-4.0));
    assert_eq!(run("x[0] % 2", &[-7.0]), Ok(1.0));
    assert_eq!(run("int(x[0])", &[-2.7]), Ok(-2.0));
    assert_eq!(
        run("int(x[0])", &[f64::NAN]),
        Err("cannot convert float NaN to integer".into())
    );
    assert_eq!(
        run("math.sqrt(x[0])", &[-1.0]),
        Err("math domain error".into())
    );
    assert!(run("np.sqrt(x[0])", &[-1.0]).unwrap().is_nan());
    assert_eq!(
        run("math.exp(x[0])", &[1000.0]),
        Err("math range error".into())
    );
}

#[test]
fn median_percentile_and_masks() {
    let x = [5.0, 1.0, 4.0, 2.0];
    assert_eq!(run("np.median(x)", &x), Ok(3.0));
    assert_eq!(run("np.percentile(x, 25)", &x), Ok(1.75));
    assert!(run("np.median(x)", &[1.0, f64::NAN]).unwrap().is_nan());
    assert_eq!(run("np.nanmedian(x)", &[1.0, f64::NAN, 3.0]), Ok(2.0));
    assert_eq!(run("len(x[x > 2])", &x), Ok(2.0));
    assert_eq!(run("np.sum(x[::-1][:2])", &x), Ok(6.0));
    assert_eq!(run("np.concatenate((x[:1], x[3:])).sum()", &x), Ok(7.0));
    assert_eq!(run("np.delete(x, -1).max()", &x), Ok(5.0));
    assert_eq!(
        run("x[9]", &x),
        Err("index 9 is out of bounds for axis 0 with size 4".into())
    );
    assert_eq!(
        run("x[-5]", &x),
        Err("index -5 is out of bounds for axis 0 with size 4".into())
    );
    assert_eq!(
        run("np.percentile(x, 101)", &x),
        Err("Percentiles must be in the range [0, 100]".into())
    );
}

#[test]
fn len_of_a_2d_array_is_its_number_of_rows() {
    let x: Vec<f64> = (0..12).map(f64::from).collect();
    assert_eq!(run("len(x.reshape(4, 3))", &x), Ok(4.0));
    assert_eq!(
        run("len(x.reshape(-1, 6)) + 100 * x.reshape(4, 3).size", &x),
        Ok(1202.0)
    );
}

#[test]
fn np_dot_with_a_number_scales_the_array() {
    // np.dot(w, 2.0) is the array w * 2.0, not its sum.
    assert_eq!(run("np.dot(x, 2.0)[1]", &[1.0, 3.0]), Ok(6.0));
    assert_eq!(run("np.dot(x, x)", &[1.0, 3.0]), Ok(10.0));
    let neg_zero = run("np.dot(x[0], 2.0)", &[-0.0]).unwrap();
    assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
}

#[test]
fn sums_along_axis_0_add_rows_in_order_unless_there_is_one_column() {
    // Pairwise, 1e16 + 1 + ... keeps some of the ones; in order, each one is rounded away.
    let x = [1e16, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1e16, 0.0];
    let col = "x[:9].reshape(9, 1).sum(axis=0)[0]";
    assert_eq!(run(col, &x), Ok(6.0));
    assert_eq!(run("x[:9].reshape(1, 9).sum(axis=1)[0]", &x), Ok(6.0));
    let two_columns: Vec<f64> = x[..9].iter().flat_map(|&v| [v, 0.0]).collect();
    assert_eq!(run("x.reshape(9, 2).sum(axis=0)[0]", &two_columns), Ok(0.0));
    assert_eq!(run("np.sum(x.reshape(9, 2)[:, 0])", &two_columns), Ok(6.0));
    // Columns known only at run time: both orders are compiled, the shape picks one.
    assert_eq!(run("x[:9].reshape(9, -1).sum(axis=0)[0]", &x), Ok(6.0));
    assert_eq!(
        run(
            "x.reshape(5, -1).mean(axis=0)[0]",
            &[1e16, 0.0, 1.0, 0.0, 1.0, 0.0, -1e16, 0.0, 0.0, 0.0]
        ),
        Ok(0.0)
    );
}

#[test]
fn unique_groups_nans_and_counts_runs() {
    let x = [2.0, f64::NAN, -1.0, 2.0, f64::NAN];
    let u = "np.unique(x, return_index=True, return_inverse=True, return_counts=True)";
    let pick = |part: usize, i: usize| format!("{u}[{part}][{i}]");
    assert_eq!(run(&pick(0, 0), &x), Ok(-1.0));
    assert!(run(&pick(0, 2), &x).unwrap().is_nan());
    assert_eq!(run(&format!("len({u}[0])"), &x), Ok(3.0));
    // first indices [2, 0, 1], inverse [1, 2, 0, 1, 2], counts [1, 2, 2]
    assert_eq!(run(&pick(1, 0), &x), Ok(2.0));
    assert_eq!(run(&pick(1, 2), &x), Ok(1.0));
    assert_eq!(run(&pick(2, 1), &x), Ok(2.0));
    assert_eq!(run(&pick(2, 2), &x), Ok(0.0));
    assert_eq!(run(&pick(3, 2), &x), Ok(2.0));
    assert_eq!(run("len(np.unique(x, equal_nan=False))", &x), Ok(4.0));
    assert_eq!(run("len(np.unique(x[:0]))", &x), Ok(0.0));
}

#[test]
fn histogram_edges_follow_numpys_searchsorted() {
    let x = [0.0, 0.5, 1.0, f64::NAN];
    assert_eq!(
        run("np.histogram(x, bins=[0.0, 0.5, 1.0])[0][1]", &x),
        Ok(2.0)
    );
    // A NaN edge sorts last: every number is below it.
    assert_eq!(
        run("np.histogram(x, bins=[0.0, np.nan])[0][0]", &x),
        Ok(4.0)
    );
    assert_eq!(
        run("np.histogram(x, bins=[1.0, 0.0])[0][0]", &x),
        Err("`bins` must increase monotonically, when an array".into())
    );
    assert_eq!(raises("np.histogram(x, bins=[])[0][0]", &x), "IndexError");
    assert_eq!(
        run("np.histogram(x, bins=3)[0][0]", &x),
        Err("autodetected range of [min, max] is not finite".into())
    );
    assert_eq!(
        run("np.histogram(x, bins=3, range=(np.nan, 1.0))[0][0]", &x),
        Err("supplied range of [lo, hi] is not finite".into())
    );
}

#[test]
fn integer_array_indexing_checks_every_index_first() {
    let x = [1.0, 2.0, 3.0];
    assert_eq!(run("x[[2, -3, 0]].sum() + x[[]].size", &x), Ok(5.0));
    assert_eq!(run("x[[True, False, True]].sum()", &x), Ok(4.0));
    assert_eq!(
        run("x[[0, 3]].sum()", &x),
        Err("index 3 is out of bounds for axis 0 with size 3".into())
    );
    assert_eq!(
        run("x[[-4]].sum()", &x),
        Err("index -4 is out of bounds for axis 0 with size 3".into())
    );
}

#[test]
fn a_second_positional_argument_of_a_reduction_is_its_axis() {
    let x: Vec<f64> = (0..6).map(f64::from).collect();
    // np.sum(m, 1) sums each row; it used to be ignored (the total) and np.var(x, 1) took it
    // as ddof.
    assert_eq!(run("np.sum(x.reshape(2, 3), 1)[1]", &x), Ok(12.0));
    assert_eq!(run("x.reshape(2, 3).max(0)[0]", &x), Ok(3.0));
    assert_eq!(run("np.var(x, 0)", &[1.0, 3.0]), Ok(1.0));
    assert_eq!(run("np.percentile(x.reshape(2, 3), 50, 0)[2]", &x), Ok(3.5));
    let e = Filter::compile("np.var(x, 1)", &Bindings::new()).unwrap_err();
    assert!(e
        .to_string()
        .contains("axis 1 is out of bounds for array of dimension 1"));
}

#[test]
fn linspace_is_numpys() {
    // One point: start (NumPy multiplies k = 0 by the whole span); none: an empty array.
    assert_eq!(run("np.linspace(2.0, 3.0, 1)[0]", &[0.0]), Ok(2.0));
    assert_eq!(run("np.linspace(2.0, 3.0, 0).size", &[0.0]), Ok(0.0));
    assert_eq!(
        run("np.linspace(0.0, 1.0, 4, endpoint=False)[3]", &[0.0]),
        Ok(0.75)
    );
    // A step that underflows to 0 scales k / div by the span instead.
    assert_eq!(run("np.linspace(0.0, 5e-324, 3)[1]", &[0.0]), Ok(0.0));
    assert_eq!(run("np.linspace(0.0, 5e-324, 3)[2]", &[0.0]), Ok(5e-324));
    assert_eq!(
        run("np.linspace(0.0, 1.0, len(x) - 3)[0]", &[1.0]),
        Err("Number of samples, -2, must be non-negative.".into())
    );
}

/// Runs `src` with `bindings` through the JIT and the interpreter, which must agree.
fn run_bound(src: &str, bindings: &Bindings, x: &[f64]) -> Result<f64, String> {
    let f = Filter::compile(src, bindings).map_err(|e| e.to_string())?;
    let jit = f.call(x).map_err(|e| e.message.clone());
    let interp = f.interpret(x).map_err(|e| e.message.clone());
    assert_eq!(format!("{jit:?}"), format!("{interp:?}"), "{src}");
    jit
}

#[test]
fn bound_values_keep_their_python_or_numpy_kind() {
    use ndjit::{ArrayKind, Value};
    let with = |v: Value| {
        let mut b = Bindings::new();
        b.set("w", v);
        b
    };
    let pair = |kind| with(Value::Array(vec![7.0, 0.0], kind));
    let floordiv = "def f(x, w):\n    return w[0] // w[1]";
    let zero = "integer division or modulo by zero";
    // A tuple of Python ints raises, an int64 array gives 0, a float64 array gives inf.
    assert_eq!(
        run_bound(floordiv, &pair(ArrayKind::PyInts), &[1.0]),
        Err(zero.into())
    );
    assert_eq!(
        run_bound(floordiv, &pair(ArrayKind::Int64), &[1.0]),
        Ok(0.0)
    );
    assert_eq!(
        run_bound(floordiv, &pair(ArrayKind::Float64), &[1.0]),
        Ok(f64::INFINITY)
    );
    assert_eq!(
        run_bound(
            "def f(x, w):\n    return w[0] / w[1]",
            &pair(ArrayKind::PyFloats),
            &[1.0]
        ),
        Err("float division by zero".into())
    );
    // `*` repeats a tuple: refused, where an array multiplies.
    let repeat = "def f(x, w):\n    return np.sum(w * 2)";
    assert!(run_bound(repeat, &pair(ArrayKind::PyInts), &[1.0]).is_err());
    assert_eq!(
        run_bound(repeat, &pair(ArrayKind::Float64), &[1.0]),
        Ok(14.0)
    );
    // NumPy's bools: True + True is True.
    let bools = with(Value::Array(vec![1.0, 1.0], ArrayKind::Bool));
    assert_eq!(
        run_bound("def f(x, w):\n    return np.sum(w) // 0", &bools, &[1.0]),
        Ok(0.0)
    );
    // Scalars: an np.int64 divides by zero to 0 and an np.float64 to inf; Python's raise.
    let s = "def f(x, s):\n    return s // 0";
    let scalar = |v: Value| {
        let mut b = Bindings::new();
        b.set("s", v);
        b
    };
    assert_eq!(run_bound(s, &scalar(Value::NpInt64(7)), &[1.0]), Ok(0.0));
    assert_eq!(
        run_bound(s, &scalar(Value::Int(7)), &[1.0]),
        Err(zero.into())
    );
    let d = "def f(x, s):\n    return 1.0 / s";
    assert_eq!(
        run_bound(d, &scalar(Value::NpFloat64(0.0)), &[1.0]),
        Ok(f64::INFINITY)
    );
    assert_eq!(
        run_bound(d, &scalar(Value::Float(0.0)), &[1.0]),
        Err("float division by zero".into())
    );
    // A Python bool: an int to Python's `+`, a bool to NumPy's (an or); so is a default.
    let t = scalar(Value::Bool(true));
    assert_eq!(
        run_bound("def f(x, s):\n    return (s + s) * 3", &t, &[1.0]),
        Ok(6.0)
    );
    assert_eq!(
        run_bound("def f(x, s):\n    return np.add(s, s) * 3", &t, &[1.0]),
        Ok(3.0)
    );
    let default = "def f(x, s=True):\n    return np.add(s, s) * 3 + (s + s)";
    assert_eq!(run_bound(default, &Bindings::new(), &[1.0]), Ok(5.0));
}

#[test]
fn tuple_defaults_are_python_tuples() {
    let none = Bindings::new();
    let ints = "def f(x, w=(7, 0)):\n    return w[0] // w[1]";
    assert_eq!(
        run_bound(ints, &none, &[1.0]),
        Err("integer division or modulo by zero".into())
    );
    // Past 2**53 a double would round the product; Python's ints do not.
    let big = "def f(x, w=(4503599627370497,)):\n    return w[0] * 3 - w[0] * 2";
    assert_eq!(run_bound(big, &none, &[1.0]), Ok(4503599627370497.0));
    for mixed in ["(1, 0.5)", "(True, False)", "(9007199254740993,)"] {
        let src = format!("def f(x, w={mixed}):\n    return w[0]");
        let e = run_bound(&src, &none, &[1.0]).unwrap_err();
        assert!(
            e.contains("default values must be numbers or tuples of numbers"),
            "{mixed}: {e}"
        );
    }
}

#[test]
fn an_int_on_one_path_and_a_float_on_another_computes_as_the_one_chosen() {
    // `r` is the int 0 unless an element equals 7: Python's `-0` is 0, a float's `-0.0`.
    let loop_src = |use_: &str| {
        format!("def f(x):\n    r = 0\n    for v in x:\n        if v == 7.0:\n            r = v\n    return {use_}")
    };
    let neg = loop_src("-r");
    assert_eq!(run(&neg, &[1.0, 2.0]).unwrap().to_bits(), 0.0f64.to_bits());
    assert_eq!(run(&neg, &[7.0]).unwrap(), -7.0);
    for use_ in [
        "r * -2",
        "r // -2",
        "r % -2",
        "-abs(r)",
        "-(+r)",
        "-max(r, -5)",
    ] {
        let r = run(&loop_src(use_), &[1.0]).unwrap();
        assert_eq!(r.to_bits(), 0.0f64.to_bits(), "{use_}");
    }
    // The float zero keeps its sign: `-(0.0 * 1)` where the float is chosen.
    let float_zero = loop_src("-(r * 1)").replace("v == 7.0", "v == 0.0");
    assert!(run(&float_zero, &[0.0]).unwrap().is_sign_negative());
    // A NumPy int's `// 0` is 0 (with a warning); a float's is NaN or inf; a Python int raises.
    let numpy = "def f(x):\n    r = np.sum(x > 5)\n    for v in x:\n        if v < 0:\n            r = v\n    return r // 0";
    assert_eq!(run(numpy, &[1.0, 7.0]).unwrap(), 0.0);
    assert_eq!(run(numpy, &[1.0, -7.0]).unwrap(), f64::NEG_INFINITY);
    assert_eq!(raises(&loop_src("r // 0"), &[1.0]), "ZeroDivisionError");
    // Chosen by a conditional, `or`, or Python's `max`.
    for src in [
        "-(0 if x[0] < 5 else x[1])",
        "-(x[0] or 0)",
        "-max(x[1], 0)",
    ] {
        let r = run(src, &[0.0, -1.0]).unwrap();
        assert_eq!(r.to_bits(), 0.0f64.to_bits(), "{src}");
    }
    // An int a double cannot hold exactly raises where it is stored; 2**53 fits.
    let big =
        |i: &str| format!("def f(x):\n    r = {i} if x[0] > 5 else x[1]\n    return r - 2**53");
    assert_eq!(raises(&big("2**53 + 1"), &[9.0, 1.0]), "OverflowError");
    assert_eq!(run(&big("2**53"), &[9.0, 1.0]).unwrap(), 0.0);
    // NumPy's functions of it are lowered for the int and for the float, and branch too ...
    assert_eq!(
        run(&loop_src("np.negative(r)"), &[1.0]).unwrap().to_bits(),
        0.0f64.to_bits()
    );
    assert_eq!(
        run(&loop_src("np.sign(-r)"), &[1.0]).unwrap().to_bits(),
        0.0f64.to_bits()
    );
    // ... but where an array is involved the dtype would depend on the path: refused.
    for use_ in ["np.array([r, 1])[0]", "np.sum(np.maximum(r, x[:2]))"] {
        let e = Filter::compile(&loop_src(use_), &Bindings::new()).expect_err(use_);
        assert!(e.to_string().contains("int on one path and a float"), "{e}");
    }
}

#[test]
fn an_int_to_a_computed_power_is_an_int_for_exponents_from_zero() {
    // `len(x) - 8` is 1 for nine values: Python's `-(0 ** 1)` is the int 0, not -0.0.
    let src = "def f(x):\n    k = len(x) - 8\n    return -(0 ** k)";
    assert_eq!(run(src, &[0.0; 9]).unwrap().to_bits(), 0.0f64.to_bits());
    assert_eq!(run(src, &[0.0; 12]).unwrap(), 0.0); // 0 ** 4
    assert_eq!(raises(src, &[0.0; 7]), "ZeroDivisionError"); // 0 ** -1
    assert_eq!(
        run(
            "def f(x):\n    k = len(x) - 11\n    return 2 ** k",
            &[0.0; 9]
        )
        .unwrap(),
        0.25
    );
}
