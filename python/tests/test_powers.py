"""`**` and np.power as CPython and NumPy compute them. A Python float's and a NumPy scalar's `**`
call the C library's pow (which is not always x*x for an exponent of 2); NumPy's power loop (an
array's `**`, np.power) with one exponent for every element takes exact shortcuts for -1, 0, 0.5,
1 and 2 (NumPy >= 2.0). Other array exponents go to NumPy's own kernels (SVML on AVX-512 CPUs) and
are not compared here: the README lists them with the other NumPy kernels."""
import math

import numpy as np
import pytest

import ndjit

SHORTCUT_EXPONENTS = ["-1", "0", "0.5", "1", "2", "2.0"]


def windows(seed, n=4000):
    rng = np.random.default_rng(seed)
    for k in range(n):
        w = rng.normal(size=4) * 10.0 ** rng.integers(-3, 4)
        if k % 50 == 0:
            w[0] = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan])
        yield w


def check(src, seed):
    f = ndjit.jit_filter(src)
    py = eval(src, {"np": np, "math": math})
    differ = 0
    for w in windows(seed):
        with np.errstate(all="ignore"):
            try:
                want = ("value", float(py(w.copy())))
            except Exception as e:  # noqa: BLE001 - the class is the expectation
                want = ("raise", type(e))
        try:
            got = ("value", f.evaluate(w.copy()))
        except Exception as e:  # noqa: BLE001
            got = ("raise", type(e))
        if want[0] == "raise":
            assert got[0] == "raise" and issubclass(got[1], want[1]), (src, w, got, want)
        else:
            differ += np.float64(got[1]).tobytes() != np.float64(want[1]).tobytes()
    assert differ == 0, (src, differ)


@pytest.mark.parametrize("k", SHORTCUT_EXPONENTS + ["3", "-2", "1.5"])
def test_scalar_powers_call_pow(k):
    # x[0] is a NumPy scalar; float(x[0]) a Python float (which raises where pow's result would be
    # complex or infinite).
    check(f"lambda x: x[0] ** {k}", len(k))
    check(f"lambda x: abs(float(x[0])) ** {k} if x[0] != 0 else 1.0", len(k) + 1)


@pytest.mark.parametrize("k", SHORTCUT_EXPONENTS)
def test_the_power_loop_takes_numpys_shortcuts(k):
    check(f"lambda x: np.sum(x ** {k} * np.arange(1, len(x) + 1))", len(k) + 2)
    check(f"lambda x: np.sum(np.power(x, {k}) * np.arange(1, len(x) + 1))", len(k) + 3)
    check(f"lambda x: np.power(x[0], {k})", len(k) + 4)


def test_the_shortcut_is_chosen_by_the_exponents_value():
    # The exponent is read at run time: x[1] rounded to one of the shortcut values, or not.
    check("lambda x: np.sum(x ** np.array([-1.0, 0.0, 0.5, 1.0, 2.0])[int(abs(x[1]) * 7) % 5])"
          " if np.isfinite(x[1]) else 0.0", 11)
    check("lambda x: np.sum(np.power(np.abs(x), np.float64(0.5)))", 12)


def test_a_square_in_a_loop_matches_python():
    # The helper that found it: a two-pass variance written with `** 2` on NumPy scalars.
    check("lambda x: sum((v - np.mean(x)) ** 2 for v in x) / (len(x) - 1)", 13)


@pytest.mark.parametrize("src, col", [
    ("lambda x: pow(int(x[0]), 3, 7)", 29),
    ("lambda x: pow(int(x[0]), 3, mod=7)", 29),
])
def test_three_argument_pow_is_refused_as_unsupported_not_miscounted(src, col):
    # Python's pow takes a modulus; calling that an arity error would say Python has no such form.
    assert pow(5, 3, 7) == eval(src)(np.array([5.0]))
    with pytest.raises(ndjit.FilterSyntaxError) as e:
        ndjit.jit_filter(src)
    assert "three-argument pow" in str(e.value)
    assert "(b ** e) % m" in str(e.value)
    assert e.value.col == col


@pytest.mark.parametrize("src", [
    "lambda x: pow(x[0], 2, None)",
    "lambda x: pow(x[0], 3, mod=None) + pow(base=x[1], exp=2)",
])
def test_pow_with_a_modulus_of_none_is_two_argument_pow(src):
    check(src, len(src))


@pytest.mark.parametrize("src", ["lambda x: pow(x[0])", "lambda x: pow(x[0], 2, 3, 4)", "lambda x: pow(x[0], 2, m=3)"])
def test_pow_s_other_wrong_arguments_are_refused(src):
    with pytest.raises(TypeError):
        eval(src)(np.array([5.0]))
    with pytest.raises(ndjit.FilterError):
        ndjit.jit_filter(src)
