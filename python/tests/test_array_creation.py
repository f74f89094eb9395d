"""New arrays inside filters: np.zeros, np.ones, np.full (and their _like forms) and np.arange give
NumPy's values (np.arange's float steps included) and NumPy's exceptions, and accept index
assignment."""
import math

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

WINDOW = np.array([0.5, 1.5, -2.0, 3.0, 7.25, 0.0, 2.0, 9.0, 4.0])

SOURCES = [
    "np.zeros(9).sum() + len(np.zeros(4))",
    "np.ones(int(x[3])).sum()",
    "np.full(3, 2.5).sum()",
    "np.full(3, 2).sum() * 1.5",
    "np.full(4, True).sum()",
    "np.zeros((3, 3)).sum(axis=0)[1] + np.ones((2, 3)).shape[1]",
    "np.zeros(3, dtype=int).sum() + np.ones(2, dtype=bool).sum()",
    "np.zeros_like(x).sum() + np.ones_like(x).sum()",
    "np.full_like(x, 2.7).sum()",
    "np.full_like(x.astype(int), 2.7).sum()",
    "np.full_like(x.astype(int), -np.inf).sum() / 2.0**63",
    "np.arange(9).sum()",
    "np.arange(2, 9, 3)[2]",
    "np.arange(9, 2, -2).sum()",
    "np.arange(0, 1, 0.1)[3]",
    "np.arange(0.1, 0.9, 0.1)[2] + len(np.arange(0.1, 0.9, 0.1))",
    "np.arange(-3, 3, 0.7)[3] * 1e16",
    "np.arange(1e300, 1e301, 1e299)[7]",
    "len(np.arange(1, 0))",
    "np.sum(x * np.arange(9))",
    "np.arange(x[3]).sum()",
    "np.arange(x[0], x[7], x[1]).sum()",
    "np.arange(2**60, 2**60 + 5).sum() - 5 * 2**60",
    "np.arange(5, dtype=float).sum() / 3",
    "np.arange(5, dtype=int).sum() / 3",
]


@pytest.mark.parametrize("src", SOURCES)
def test_values_equal_numpys(src):
    want = eval("lambda x: " + src, {"np": np, "math": math})(WINDOW)
    got = ndjit.jit_filter(src).evaluate(WINDOW)
    assert np.float64(got).tobytes() == np.float64(want).tobytes(), (src, got, want)


@pytest.mark.parametrize("src,exc,msg", [
    ("np.zeros(int(x[2])).sum()", ValueError, "negative dimensions are not allowed"),
    ("np.arange(0, 5, int(x[5])).sum()", ZeroDivisionError, "^division by zero"),
    ("np.arange(0.0, 5, int(x[5])).sum()", ZeroDivisionError, "float division by zero"),
    ("np.arange(x[5], math.inf).sum()", ValueError, "Maximum allowed size exceeded"),
    ("np.arange(x[5] * math.nan, 3).sum()", ValueError, "arange: cannot compute length"),
])
def test_errors_are_numpys(src, exc, msg):
    with pytest.raises(exc, match=msg):
        eval("lambda x: " + src, {"np": np, "math": math})(WINDOW)
    with pytest.raises(exc, match=msg) as e:
        ndjit.jit_filter(src).evaluate(WINDOW)
    assert isinstance(e.value, ndjit.FilterRuntimeError)


@pytest.mark.parametrize("src,what", [
    ("np.zeros(2.0).sum()", "must be an integer, not a float"),
    ("np.zeros((2, 2, 2)).sum()", "a shape of 3 dimensions"),
    ("np.full(2, x).sum()", "must be a number, but this is an array"),
    ("np.arange(0.5, 3, dtype=int).sum()", "np.arange with this dtype"),
    ("np.zeros(3, dtype='int8').sum()", "supports int, float and bool"),
])
def test_what_ndjit_cannot_reproduce_is_a_compile_error(src, what):
    with pytest.raises(ndjit.FilterCompileError, match=what):
        ndjit.jit_filter(src)


def test_huge_arrays_raise_memory_error_instead_of_running_for_ever():
    with pytest.raises(MemoryError, match="more than 2\\*\\*31"):
        ndjit.jit_filter("np.ones(int(x[0]) * 2**40).sum()").evaluate(np.ones(9))


def built_in_a_loop(x):
    y = np.zeros(len(x))
    for i in range(len(x)):
        if x[i] > 0.5:
            y[i] = x[i] * 2
    y[0] = -1.0
    return y.sum() + np.arange(len(x))[-1]


def test_index_assignment_into_a_new_array_through_scipy():
    img = np.random.default_rng(5).random((9, 11))
    f = ndjit.jit_filter(built_in_a_loop)
    for mode in ("reflect", "constant", "wrap"):
        want = ndi.generic_filter(img, built_in_a_loop, size=3, mode=mode)
        assert np.array_equal(ndi.generic_filter(img, f, size=3, mode=mode), want)
        assert np.array_equal(ndjit.generic_filter(img, f, size=3, mode=mode), want)


TWO_D_LITERALS = {
    "gauss_kernel": "def f(x):\n    k = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 16.0\n    return np.sum(x.reshape(3, 3) * k)\n",
    "rows_of_window_slices": "def f(x):\n    m = np.array([x[:3], x[3:6], x[6:]])\n    return m[1, 2] * 10 + m[2, 0] + m.sum(axis=0)[1]\n",
    "mixed_int_float_rows": "def f(x):\n    m = np.asarray([[1, 2.5], [3, 4]])\n    return m[0, 1] + m[1].sum() + len(m) * 100\n",
    "dtype_int": "def f(x):\n    m = np.array([[1.7, 2.2], [3.9, -4.5]], dtype=int)\n    return float(m.sum()) + m[1, 1]\n",
}


@pytest.mark.parametrize("name", sorted(TWO_D_LITERALS))
def test_two_d_array_literals_equal_numpys(name):
    src = TWO_D_LITERALS[name]
    ns = {"np": np}
    exec(src, ns)
    w = np.arange(9.0) * 0.75 - 2
    want = ns["f"](w.copy())
    got = ndjit.jit_filter(src).evaluate(w.copy())
    assert np.float64(got).tobytes() == np.float64(want).tobytes(), (name, got, want)


def test_rows_of_different_lengths_raise_numpys_value_error():
    src = "def f(x):\n    m = np.array([x[:3], x[3:5]])\n    return m.sum()\n"
    ns = {"np": np}
    exec(src, ns)
    with pytest.raises(ValueError, match="inhomogeneous shape"):
        ns["f"](np.arange(9.0))
    with pytest.raises(ValueError, match="inhomogeneous shape"):
        ndjit.jit_filter(src).evaluate(np.arange(9.0))
