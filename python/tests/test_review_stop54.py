"""Cases the stop-54 reviews found, each silently wrong (or the wrong exception) before.

The oracle is CPython + NumPy running the same function (`test_int_or_float.compare`): every
program gives NumPy's value or exception, or is refused."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from test_int_or_float import compare

# A 2-D array of shape (n, 0), n > 0: ndjit keeps a 2-D array's rows as its size over its
# columns, so such an array had no rows (`len()` 0 where NumPy's is n, axis reductions empty,
# broadcasting and `@` of the wrong shape). Now refused where it arises, a ValueError at run time.
ROWS_WITHOUT_ELEMENTS = [
    ("return len(x.reshape(-1, 1)[:, 1:])", [1.0, 2.0, 3.0]),
    ("return np.sum(np.prod(x.reshape(-1, 1)[:, 1:], axis=1))", [1.0, 2.0, 3.0]),
    ("return np.sum(np.mean(x.reshape(-1, 1)[:, 1:], axis=1))", [1.0, 2.0]),
    ("return len(np.zeros((3, 0)))", [1.0]),
    ("return len(np.zeros((len(x), len(x) - 1)))", [1.0]),
    ("return float(len(np.zeros((0, 3)).T))", [1.0]),
    ("return float((np.ones((2, 0)) + np.ones((1, 1))).shape[0])", [1.0]),
    ("return float((np.ones((2, 1)) + x[:0]).shape[0])", [1.0]),
    ("m = x[:0].reshape(3, -1)\n    return len(np.sum(m, axis=1))", [1.0, 2.0, 3.0]),
    ("return len(x[:0].reshape(3, 0))", [1.0]),
    ("return len(np.array([x[:0], x[:0]]))", [1.0]),
]


def body(src):
    return "def f(x):\n    " + src + "\n"


@pytest.mark.parametrize("src, window", ROWS_WITHOUT_ELEMENTS)
def test_a_2d_array_of_rows_without_elements_is_refused(src, window):
    # NumPy computes a number here (it raises nothing): the refusal is ndjit's own.
    ns = {"np": np}
    exec(body(src), ns)
    assert isinstance(float(ns["f"](np.array(window))), float)
    f = ndjit.jit_filter(body(src))
    with pytest.raises(ValueError, match=r"shape \(\d+, 0\), rows without elements"):
        f.evaluate(np.array(window))
    assert compare(body(src), window) == "refused"


@pytest.mark.parametrize("src, window", [
    # Zero rows, and zero columns with zero rows, are exact as before.
    ("return len(x[:0].reshape(0, 3))", [1.0]),
    ("return float(np.zeros((0, 0)).shape[1])", [1.0]),
    ("return float(len(np.zeros((0, 3))))", [1.0]),
    ("return float(np.sum(np.zeros((0, 3)), axis=0).size)", [1.0]),
    ("return len(x.reshape(-1, 1)[:0, :])", [1.0, 2.0]),
    ("return len(x.reshape(-1, 1)[:, :1])", [1.0, 2.0]),
    ("return float(np.zeros((0, 0)).T.shape[0])", [1.0]),
])
def test_2d_arrays_without_elements_but_without_rows_compute(src, window):
    assert compare(body(src), window) is None


def test_the_refusal_reaches_generic_filter():
    f = "def f(x):\n    return len(x.reshape(-1, 1)[:, 1:])\n"
    with pytest.raises(ValueError, match="rows without elements"):
        ndjit.generic_filter(np.ones((4, 4)), f, size=3)
    with pytest.raises(ValueError, match="rows without elements"):
        ndi.generic_filter(np.ones((4, 4)), ndjit.jit_filter(f, filter_size=9), size=3)


def test_a_bound_2d_array_of_rows_without_elements_is_refused():
    with pytest.raises(TypeError, match=r"shape \(3, 0\), rows without elements"):
        ndjit.jit_filter("def f(x, k):\n    return float(len(k))\n", extra_arguments=(np.zeros((3, 0)),))
    # No rows and no columns binds and computes.
    f = ndjit.jit_filter("def f(x, k):\n    return float(len(k))\n", extra_arguments=(np.zeros((0, 0)),))
    assert f.evaluate(np.array([1.0])) == 0.0


@pytest.mark.parametrize("src, window", [
    # NumPy converts the value and checks its shape before the indices (ValueError, not
    # IndexError, where both are wrong).
    ("y = x.copy()\n    y[[0, 0, 1]] = [5.0, 6.0]\n    return y[0]", [1.0]),
    ("y = x.copy()\n    y[[0, 1]] = x[:0]\n    return y[0]", [1.0]),
    ("y = x.copy()\n    y[np.arange(2)] = x[:0]\n    return y[0]", [1.0]),
    ("y = np.zeros(3, dtype=np.int64)\n    y[[0, 5]] = np.nan\n    return y[0]", [1.0]),
    ("y = x.copy()\n    y[[0, 5]] = 2.0\n    return y[0]", [1.0, 2.0]),
    ("y = x.copy()\n    y[[0, 1]] = [3.0, 4.0]\n    return y[1] - y[0]", [1.0, 2.0]),
])
def test_fancy_assignment_checks_in_numpys_order(src, window):
    assert compare(body(src), window) is None


@pytest.mark.parametrize("src, window, want", [
    # A chain's value is its deciding link's, with that link's kind: `int(x[1]) > 3` is a
    # Python bool (`1 / False` raises), `x[0] < int(x[1])` a NumPy one (`1 / np.False_` is inf).
    ("return 1 / (x[0] < int(x[1]) > 3)", [1.0, 2.0, 5.0], None),
    ("return 1 / (x[0] < int(x[1]) > 3)", [1.0, 5.0, 5.0], None),
    ("return 1 / (x[0] < int(x[1]) > 3)", [9.0, 5.0, 5.0], None),
    ("return (x[0] <= round(x[1]) == 3) // 0", [-64.0, -1.0, 2.0], None),
    ("return (x[0] <= round(x[1]) == 3) // 0", [64.0, -1.0, 2.0], None),
    ("return 1 / (np.sum(x > x[0]) != 2**62 > 3)", [1.0, 2.0], None),
    ("return 1 / (x[0] < x[1] < x[2])", [1.0, 2.0, 0.0], None),
    ("return 1 / (0 < len(x) < 1)", [1.0, 2.0], None),
    # `~` and `-` of a bool that may be Python's are refused (as they were for a first link
    # that is Python's); where the chain was taken for NumPy's, they computed NumPy's value.
    ("return ~(x[0] < int(x[1]) < 3)", [1.0, 2.0, 5.0], "refused"),
    ("return -((x[0] + 0.0) != math.floor(x[1]) > 0)", [1.0, 2.0], "refused"),
    ("return ~(-x[0] < math.floor(x[1]) < 0)", [1.0, -0.5], "refused"),
    ("return ~(x[0] < x[1] < x[2])", [1.0, 2.0, 5.0], None),
])
def test_a_chained_comparison_has_its_deciding_links_kind(src, window, want):
    assert compare(body(src), window) == want


@pytest.mark.parametrize("src, window", [
    # A Python float meeting a NumPy int (either side of `**`) is computed by NumPy's power
    # ufunc, which takes its shortcuts: `v ** 2` is `v * v` (glibc's pow is 1 ulp off here),
    # `n ** 0.5` is `sqrt(n)`.
    ("return float(x[0]) ** np.int64(2)", [177211.67033295322]),
    ("return float(x[0]) ** np.int64(int(x[1]))", [177211.67033295322, 2.0]),
    ("return float(x[0]) ** np.sum(x > 0)", [177211.67033295322, 2.0]),
    ("return np.int64(int(x[0])) ** 0.5", [977057654042049.0]),
    ("return np.int64(int(x[0])) ** float(x[1])", [977057654042049.0, 0.5]),
    ("return float(x[0]) ** np.int64(-1)", [3.0]),
    ("return float(x[0]) ** np.int64(0)", [np.nan]),
    # Where one side is a NumPy float, or both are Python's, it is pow.
    ("return x[0] ** 2", [177211.67033295322]),
    ("return float(x[0]) ** 2", [177211.67033295322]),
    ("return x[0] ** np.int64(2)", [177211.67033295322]),
])
def test_a_python_float_and_a_numpy_int_power_is_numpys_ufunc(src, window):
    assert compare(body(src), window) is None


@pytest.mark.parametrize("offsets", [(29, 35), (30, 35), (29, 36), (30, 36), (32, 40), (35, 29), (1, 1)])
@pytest.mark.parametrize("dtype", [np.int16, np.float64])
def test_overlapping_unaligned_arrays_are_filtered_as_scipy_does(offsets, dtype):
    # scipy reads an unaligned input, and writes an unaligned output, through an aligned copy:
    # its filter then sees the input as it was, where aligned overlapping arrays see earlier
    # results (scipy's in-place loop). Both behaviours are reproduced.
    def run(filter_fn):
        pool = np.arange(256, dtype=np.uint8)
        size = np.dtype(dtype).itemsize
        a = np.ndarray((4, 3), dtype, pool.data, offsets[0], (3 * size, size))
        b = np.ndarray((4, 3), dtype, pool.data, offsets[1], (3 * size, size))
        filter_fn(a, b)
        return pool

    src = "def f(x):\n    return np.mean(x)\n"
    want = run(lambda a, b: ndi.generic_filter(a, np.mean, size=3, mode="constant", cval=2.0, output=b))
    got = run(lambda a, b: ndjit.generic_filter(a, src, size=3, mode="constant", cval=2.0, output=b))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src, window", [
    # Found by the review of this stop's fixes, each computed (or raised) otherwise before.
    # A power computed by NumPy's ufunc is a NumPy float, shortcut or not (`round(v, 2)` is
    # NumPy's, `/ 0` gives inf, `** 0.5` of a negative NaN).
    ("return round(float(x[0]) ** np.sum(x > 0), 2)", [763.775]),
    ("return round(float(x[0]) ** np.int64(1), 10)", [1e300]),
    ("return float(x[0]) ** np.int64(2) / 0", [3.0]),
    ("return (float(x[0]) ** np.int64(1)) ** 0.5", [-1e3]),
    ("return (float(x[0]) ** np.int64(2)) ** 200", [1e3]),
    # A list's or tuple's items stored into an int array convert as numbers do (NaN and
    # floats out of range raise, before the shape and the indices are checked); an array's
    # are cast.
    ("y = np.arange(3)\n    y[0:2] = [np.nan, 1.0]\n    return y[0]", [1.0]),
    ("y = np.arange(3)\n    y[0:2] = (x[0] * np.inf, 1.0)\n    return y[0]", [1.0]),
    ("y = np.zeros(3, dtype=np.int64)\n    y[[0, 5]] = [np.nan, 1.0]\n    return y[0]", [1.0]),
    ("m = np.arange(4).reshape(2, 2)\n    m[0] = [np.nan, 1.0]\n    return m[0, 1]", [1.0]),
    ("y = np.arange(3)\n    y[0:2] = [2.7, -1.9]\n    return y[1]", [1.0]),
    ("y = np.arange(3)\n    y[0:2] = x[:2] * 1.5\n    return y[1]", [1.0, np.nan]),
    ("return np.array([v * 1e300 for v in x], dtype=int)[0] * 0", [np.nan]),
    # An augmented assignment to a selection of an int or bool array is NumPy's in-place
    # ufunc, whose same-kind casting refuses a wider result.
    ("y = np.arange(3)\n    y[1:] *= 1.5\n    return y[1]", [1.0]),
    ("y = np.arange(3)\n    y[[1, 2]] += 0.5\n    return y[1]", [1.0]),
    ("y = np.arange(3)\n    y[1:] /= 2\n    return y[1]", [1.0]),
    ("y = x > 1\n    y[1:] += [1, 0]\n    return y[1]", [1.0, 2.0, 3.0]),
    ("y = np.arange(3)\n    y[1:] += 2\n    return y[1]", [1.0]),
    ("y = np.arange(3.0)\n    y[1:] *= 2\n    return y[1]", [1.0]),
    ("y = np.arange(3)\n    y[1] += 1.5\n    return y[1]", [1.0]),
    # A NumPy bool is no int to Python (no `__index__` in NumPy 2); Python's bool is.
    ("return float(len(x[x[0] > 100:]))", [1.0, 2.0]),
    ("return x[0 < x[0] < 5:][0]", [1.0, 2.0]),
    ("return np.sum(np.zeros(x[0] > 0))", [1.0]),
    ("return np.linspace(0, 1, x[0] > 0)[0]", [1.0]),
    ("return float(len(x[float(x[0]) > 0:]))", [1.0, 2.0]),
    ("return np.roll(x, x[0] > 0)[0]", [1.0, 2.0]),
    ("return np.delete(x, x[0] > 0)[0]", [1.0, 2.0]),
    ("return np.delete(x, True)[0]", [1.0, 2.0]),
])
def test_cases_the_review_of_stop_54_found(src, window):
    assert compare(body(src), window) is None
