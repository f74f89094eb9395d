"""Regressions found by the differential fuzzer (tests/fuzz/differential.py), each checked
against CPython + NumPy running the same source at test time."""
import math

import numpy as np
import pytest

import ndjit


def python_outcome(source, window):
    ns = {"np": np, "math": math}
    exec(source, ns)
    try:
        with np.errstate(all="ignore"):
            return "ok", float(ns["f"](np.array(window, dtype=np.float64)))
    except Exception as e:  # noqa: BLE001 - the class is the expectation
        return "raise", type(e)


def same(a, b):
    """Bit for bit, NaN equal to NaN."""
    return (math.isnan(a) and math.isnan(b)) or np.float64(a).tobytes() == np.float64(b).tobytes()


def ndjit_outcomes(source, window):
    f = ndjit.jit_filter(source)
    out = []
    for call in (f.evaluate, f.interpret):
        try:
            out.append(("ok", float(call(window))))
        except ndjit.FilterRuntimeError as e:
            out.append(("raise", e))
    return out


# A chained comparison stops at the first false link: Python never evaluates the later operands,
# so `x[-2]` on a 1-element window, or `math.asin` of a huge value, must not raise there.
CHAINS = [
    ("def f(x):\n    return 0.5 == -2.5 >= x[-2]\n", [[np.nan], [1.0, 2.0], [3.0, -4.0, 1.0]]),
    ("def f(x):\n    return 0.5 > x[0] <= math.asin(x[1])\n", [[1.0, 9e18], [0.0, 0.5], [0.0, 2.0]]),
    ("def f(x):\n    return x[0] < x[1] < x[2] < x[3]\n", [[1.0, 0.0], [0.0, 1.0, 0.5], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0, 3.0]]),
    ("def f(x):\n    return 1 if x[0] < 0.5 < np.min(x[x > 9]) else 2\n", [[1.0, 2.0], [0.0, 10.0], [0.0, 2.0]]),
]


@pytest.mark.parametrize("source,windows", CHAINS)
def test_chained_comparison_short_circuits_as_python(source, windows):
    for w in windows:
        want = python_outcome(source, w)
        for got in ndjit_outcomes(source, w):
            if want[0] == "ok":
                assert got[0] == "ok" and same(got[1], want[1]), (source, w, got, want)
            else:
                assert got[0] == "raise" and isinstance(got[1], want[1]), (source, w, got, want)


# A conditional expression (or `and`/`or`) whose branch needs a check (x[1]: an index) is lowered
# to an `if` with a temporary; the temporary must carry the provenance of the branch that ran, so
# that a Python float 0.0 divides as Python's (ZeroDivisionError) and a NumPy one as NumPy's.
BRANCHES = [
    ("def f(x):\n    return 0.5 // (0.0 if x[0] < 9 else x[1])\n", [[0.5, 0.0], [10.0, 0.0], [10.0, 2.0]]),
    ("def f(x):\n    return (x[2] if x[0] > 0.5 else 0.5) % (-0.0)\n", [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]]),
    ("def f(x):\n    v = (x[0] > 0 and 0.0)\n    return 1.0 / v\n", [[1.0, 0.0], [-1.0, 0.0]]),
    ("def f(x):\n    return 1.0 / (x[0] > 0 or x[1])\n", [[1.0, 0.0], [-1.0, 0.0], [-1.0, 2.0]]),
]


@pytest.mark.parametrize("source,windows", BRANCHES)
def test_conditional_keeps_the_provenance_of_its_branch(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


# The IR folder merged `select(c, -0.0, 0.0)` into one arm (the two constants compare equal), so
# the sign of a zero result ignored the condition.
SIGNED_ZEROS = [
    ("def f(x):\n    return (-0.0) if x[0] > 0.5 else 0.0\n", [[1.0], [0.0]]),
    ("def f(x):\n    return 0.0 if x[0] > 0.5 else (7 // 4503599627370497.0) * -1.0\n", [[1.0], [0.0]]),
]


@pytest.mark.parametrize("source,windows", SIGNED_ZEROS)
def test_select_of_opposite_zeros_keeps_the_sign(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


# `%`, `//` and `**` of two Python floats give a Python float (a NumPy result before: a later
# division by it gave inf or nan where Python raises ZeroDivisionError).
PYTHON_FLOAT_RESULTS = [
    ("def f(x):\n    return 1 % (1 % 0.5)\n", [[1.0]]),
    ("def f(x):\n    return 1.0 / (3.0 // 4.0)\n", [[1.0]]),
    ("def f(x):\n    return 1.0 / (0.0 ** 1.5)\n", [[1.0]]),
    ("def f(x):\n    return x[0] / (1 % 0.5)\n", [[1.0], [0.0]]),
]


@pytest.mark.parametrize("source,windows", PYTHON_FLOAT_RESULTS)
def test_python_float_operations_give_python_floats(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


# NumPy integers to a constant power wrap at 64 bits (a float power before: 7 ** 40 gave 6.4e33),
# and np.dot of 1-D arrays of different lengths raises (it broadcast a length-1 side before).
NUMPY_INTS_AND_DOT = [
    ("def f(x):\n    return np.argmax(x) ** 40\n", [[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 9.0]]),
    ("def f(x):\n    return x.astype(int)[0] ** 3\n", [[3.0e6], [-3.0]]),
    ("def f(x):\n    return np.dot(x[x < 0], x)\n", [[-2.8, 0.0], [-1.0, -2.0], [1.0, 2.0]]),
]


@pytest.mark.parametrize("source,windows", NUMPY_INTS_AND_DOT)
def test_numpy_integer_powers_and_dot_lengths(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


# A variable that holds a Python int on one path and a NumPy int on another: `%`/`//` by zero
# raises exactly when it holds the Python int (it never raised before).
MIXED_INTS = [
    ("def f(x):\n    v = 1\n    if x[0] > 0.5:\n        v = np.argmax(x)\n    return 7 // (v - v)\n",
     [[0.0, 1.0], [1.0, 0.0], [2.0, 3.0]]),
    ("def f(x):\n    v = 1\n    if x[0] > 0.5:\n        v %= np.argmax(x)\n    else:\n        v %= int(0.5)\n"
     "    return v\n", [[0.0, 1.0], [1.0, 0.0], [1.0, 3.0]]),
]


@pytest.mark.parametrize("source,windows", MIXED_INTS)
def test_mixed_python_and_numpy_ints_divide_as_each_would(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)
