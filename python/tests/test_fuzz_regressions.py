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
    ("def f(x):\n    v = (x[0] and 0.0)\n    return 1.0 / v\n", [[1.0, 0.0], [0.0, 0.0]]),
    ("def f(x):\n    return 1.0 / (x[0] or x[1])\n", [[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]]),
]


@pytest.mark.parametrize("source,windows", BRANCHES)
def test_conditional_keeps_the_provenance_of_its_branch(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


# The fuzzer's first forms of the last two: a NumPy bool on one path and a number on the other,
# which ndjit refuses (it does not track which one the value holds, and NumPy's bools add as an
# or and refuse `-`).
@pytest.mark.parametrize("source", [
    "def f(x):\n    v = (x[0] > 0 and 0.0)\n    return 1.0 / v\n",
    "def f(x):\n    return 1.0 / (x[0] > 0 or x[1])\n",
])
def test_a_numpy_bool_or_a_number_is_refused(source):
    with pytest.raises(ndjit.FilterSyntaxError, match="either a bool or a number"):
        ndjit.jit_filter(source)


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
    # NumPy's 0 for an int divided by zero is a NumPy int: dividing by it again gives 0 too
    # (it counted as a Python 0 and raised ZeroDivisionError).
    ("def f(x):\n    v = 5\n    for e in x:\n        v //= ((v % v) // np.argmin(x))\n    return v\n",
     [[-np.inf, 0.0, -3.0, 2.5], [3.0, 1.0]]),
]


@pytest.mark.parametrize("source,windows", MIXED_INTS)
def test_mixed_python_and_numpy_ints_divide_as_each_would(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


# Builtin min/max return the chosen *argument*, which keeps its own kind: a Python float 0.0 that
# wins over a NumPy scalar still raises ZeroDivisionError, a winning Python 1e308 still overflows
# in `**`, a winning Python int divides as Python's (the result counted as NumPy before, so these
# gave inf or 0 where Python raises). An int past 2**53 that wins over a float cannot stay exact
# in ndjit: an error, never a rounded int.
MIN_MAX_KEEP_THE_WINNER = [
    ("def f(x):\n    return 1.0 // max(0.0, x[0])\n", [[-3.0], [5.0]]),
    ("def f(x):\n    return 1.0 // min(x[0], 0.0, x[1])\n", [[-3.0, 2.0], [5.0, 1.0], [5.0, -1.0]]),
    ("def f(x):\n    return max(1e308, x[0]) ** 2.0\n", [[-3.0], [1e300]]),
    ("def f(x):\n    return max(x[0], 2) / 0\n", [[-3.0], [5.0]]),
    ("def f(x):\n    v = min(1, np.argmax(x))\n    return 7 // (v - v)\n", [[0.0, 1.0], [1.0, 0.0]]),
    ("def f(x):\n    return min(2**53, x[0] * 1e300) - 2**53\n", [[-3.0], [5.0]]),
]


@pytest.mark.parametrize("source,windows", MIN_MAX_KEEP_THE_WINNER)
def test_builtin_min_max_keep_the_kind_of_the_winner(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


def test_builtin_min_max_refuse_to_round_a_winning_big_int():
    source = "def f(x):\n    return min(2**53 + 1, x[0] * 1e300) - 2**53\n"
    assert python_outcome(source, [5.0]) == ("ok", 1.0)
    for got in ndjit_outcomes(source, [5.0]):
        assert got[0] == "raise" and isinstance(got[1], OverflowError), got
        assert "exceeds 2**53" in str(got[1])
    # When the float wins, nothing is rounded and nothing is raised.
    for got in ndjit_outcomes(source, [-5.0]):
        assert got == ("ok", python_outcome(source, [-5.0])[1]), got


# CPython's float power handles an infinite exponent before the zero base: `0.0 ** -inf` is inf,
# where a finite negative exponent raises ZeroDivisionError (ndjit raised for both).
ZERO_TO_INFINITE_POWERS = [
    ("def f(x):\n    return 1.0 / ((-0.0) ** (x[0] - x[0] - math.inf))\n", [[1.0], [np.nan]]),
    ("def f(x):\n    v = (-np.inf)\n    return 0.0 ** v\n", [[1.0]]),
    ("def f(x):\n    return 0.0 ** float(x[0])\n", [[-1.0], [-np.inf], [np.inf], [-0.5]]),
]


@pytest.mark.parametrize("source,windows", ZERO_TO_INFINITE_POWERS)
def test_zero_to_an_infinite_power_is_python_s(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


# A Python float and a Python int compare exactly (the int was rounded to float first: 2**63 - 1
# became 2**63); with a NumPy scalar on either side NumPy's float64 comparison stays.
FLOAT_INT_COMPARISONS = [
    ("def f(x):\n    return 9.223372036854776e18 <= 9223372036854775807\n", [[1.0]]),
    ("def f(x):\n    return (-9.223372036854776e18) < (-9223372036854775807)\n", [[1.0]]),
    ("def f(x):\n    return 2**53 + 1 == 9007199254740992.0\n", [[1.0]]),
    ("def f(x):\n    return 9007199254740992.0 < 2**53 + 1\n", [[1.0]]),
    ("def f(x):\n    return float(x[0]) * 2.0**62 >= 9223372036854775807\n", [[2.0], [1.0], [np.nan]]),
    ("def f(x):\n    return x[0] * 2.0**62 >= 9223372036854775807\n", [[2.0], [1.0]]),
    ("def f(x):\n    if 9.223372036854776e18 <= 9223372036854775807:\n        return 1.0\n    return x[9]\n",
     [[1.0]]),
]


@pytest.mark.parametrize("source,windows", FLOAT_INT_COMPARISONS)
def test_python_floats_and_ints_compare_exactly(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


# Values the lowering computes keep the kind Python gives them: an element of an array is a NumPy
# scalar even where its expression is a literal (`np.where(c, x, 0.1)`), `.item()` is a Python
# number, and NumPy int results that are literals in the IR (`** 0`, a shift by a negative count)
# are NumPy ints; each counted as the other kind, and a division by zero raised or did not.
KINDS_OF_COMPUTED_VALUES = [
    ("def f(x):\n    v = 0.0\n    for e in np.where(x > 0.5, x, 0.1):\n        v = e // 0.5\n        v //= v\n"
     "    return v\n", [[3.0, 0.1], [0.0, 1.0]]),
    ("def f(x):\n    return 1.0 / np.where(x > 5, x, 0.0)[0]\n", [[3.0, 0.1], [6.0, 1.0]]),
    ("def f(x):\n    return 1.0 / x[0].item()\n", [[0.0], [2.0]]),
    ("def f(x):\n    return 1.0 / x[:1].item()\n", [[0.0], [2.0]]),
    ("def f(x):\n    v = np.count_nonzero(x) ** 0\n    v -= 1\n    return 2 // v\n", [[0.0, 1.0]]),
    ("def f(x):\n    v = np.count_nonzero(x) << -1\n    return 1 // v\n", [[3.0, 1.0]]),
]


@pytest.mark.parametrize("source,windows", KINDS_OF_COMPUTED_VALUES)
def test_computed_values_keep_pythons_kind(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


# If-conversion evaluates a branch's int `%`/`//` speculatively, behind the Python check that
# guards it: with a zero divisor the runtime's division aborted the process (on every backend).
SPECULATIVE_INT_DIVISIONS = [
    ("def f(x):\n    v = 0\n    for i, e in enumerate(x):\n        v = (i ** 0) if e > 0 else (i % i)\n    return v\n",
     [[1.0, 2.0], [1.0, -1.0], [-1.0, 2.0]]),
    ("def f(x):\n    v = 0\n    for i, e in enumerate(x):\n        v = (i // i) if e < 0 else 7\n    return v\n",
     [[1.0, 2.0], [1.0, -1.0], [-1.0, 2.0]]),
]


@pytest.mark.parametrize("source,windows", SPECULATIVE_INT_DIVISIONS)
def test_speculative_int_divisions_by_zero_do_not_abort(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)
    # The driver's row kernel too, on an image where the branch with the division never runs.
    image = np.array([[1.0, 4.0, 2.0], [3.0, 0.5, 2.5]])
    got = ndjit.generic_filter(image, ndjit.jit_filter(source), size=(1, 2), mode="nearest")
    want = np.empty_like(image)
    for r in range(2):
        for c in range(3):
            w = [image[r, c - 1 if c else 0], image[r, c]]
            outcome = python_outcome(source, w)
            assert outcome[0] == "ok"
            want[r, c] = outcome[1]
    assert got.tobytes() == want.tobytes()


# Items of a tuple or list display keep their kind when iterated (they were taken as NumPy
# scalars: `for v in (0.0, 2.0): 1 / v` gave inf where Python raises, and Python ints wrapped at
# 64 bits where Python's ints go on); `not v` is a Python bool whatever v is (`1 / (not x[0])`
# gave NumPy's inf); builtin min/max of a tuple of Python numbers return a Python number.
PYTHON_ITEM_KINDS = [
    ("def f(x):\n    t = 0.0\n    for v in (0.0, 2.0):\n        t += 1 / v\n    return t\n", [[1.0]]),
    ("def f(x):\n    return any(1 / v < 0 for v in (x[0], 0.0))\n", [[0.0], [4.0], [-1.0]]),
    ("def f(x):\n    t = 0.0\n    for i, v in enumerate((x[0], 0.0)):\n        t += i / v\n    return t\n", [[0.0], [2.0]]),
    ("def f(x):\n    t = 0.0\n    for a, b in zip((1.0, 0.0), x):\n        t += b * (1 / a)\n    return t\n", [[1.0], [1.0, 2.0]]),
    ("def f(x):\n    return 1 / (not x[0])\n", [[0.0], [1.0]]),
    ("def f(x):\n    return 1 / min((0.0, 1.0)) + x[0]\n", [[1.0]]),
]


@pytest.mark.parametrize("source,windows", PYTHON_ITEM_KINDS)
def test_iterated_items_keep_their_kind(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


def test_python_ints_iterated_from_a_literal_raise_past_64_bits_instead_of_wrapping():
    src = "def f(x):\n    t = 0\n    for v in [3, 2**62]:\n        t += v * 4\n    return t\n"
    with pytest.raises(OverflowError, match="64 bits"):
        ndjit.jit_filter(src).evaluate(np.zeros(3))


@pytest.mark.parametrize("source,msg", [
    ("def f(x):\n    t = 0.0\n    for row in x.reshape(3, 3):\n        t = max(t, row)\n    return t\n", "2-D array"),
    ("def f(x):\n    t = 0.0\n    for v in (1, 0.5):\n        t += v\n    return t\n", "ints and floats together"),
])
def test_iterations_ndjit_cannot_follow_are_refused(source, msg):
    with pytest.raises(ndjit.FilterCompileError, match=msg):
        ndjit.jit_filter(source)


# Builtin min/max of ints compared them as floats, which rounds past 2**53:
# `min([2**60 + 1, 2**60 + 3])` gave 2**60.
INT_MIN_MAX = [
    ("def f(x):\n    return min([2**60 + 1, 2**60 + 3]) - 2**60\n", [[0.0]]),
    ("def f(x):\n    return max(int(v) * 2**55 + 1 for v in x) - 9 * 2**55\n", [[3.0, 9.0, 1.0]]),
    ("def f(x):\n    return min(x.astype(int) * 2**55 + 3) - 2**55\n", [[3.0, 1.0, 2.0]]),
]


@pytest.mark.parametrize("source,windows", INT_MIN_MAX)
def test_builtin_min_max_of_ints_is_exact_past_2_53(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)


# NumPy's integer and bool scalars define no `__trunc__` (bools no `__round__` either), so Python
# raises TypeError where ndjit computed a number; Python ints and bools, and NumPy floats, work.
TRUNCS = [
    ("def f(x):\n    return math.trunc(np.int64(3))\n", [[1.0]]),
    ("def f(x):\n    return math.trunc(np.sum(x > 1))\n", [[1.0, 2.0]]),
    ("def f(x):\n    return math.trunc(x[0] > 0)\n", [[1.0], [-1.0]]),
    ("def f(x):\n    return round(x[0] > 0)\n", [[1.0]]),
    ("def f(x):\n    return math.trunc(len(x)) + math.trunc(x[0]) + math.trunc(True)\n", [[2.5]]),
    ("def f(x):\n    return round(np.int64(3)) + math.floor(x[0] > 0) + round(True)\n", [[2.5]]),
    ("def f(x):\n    v = 1 if x[0] > 0 else np.int64(2)\n    return math.trunc(v)\n", [[1.0], [-1.0]]),
]


@pytest.mark.parametrize("source,windows", TRUNCS)
def test_trunc_and_round_of_numpy_ints_and_bools_raise_as_python(source, windows):
    test_chained_comparison_short_circuits_as_python(source, windows)
