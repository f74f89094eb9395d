"""`for i in range(start, stop, step)` against CPython running the same function through scipy:
a step computed at run time (its sign chosen per call, zero a ValueError when range() is called),
and counters whose next value would pass the i64 range (Python's range has ended there; an i64
would wrap and go on counting)."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter

IMAGE = np.random.default_rng(20261204).choice([0.0, 0.2, 0.5, 0.7, 1.0, 1.4, -0.4], size=(6, 7))

SOURCES = [
    # a step bound from outside, forwards and backwards
    "def f(x, k=2):\n    s = 0.0\n    for i in range(0, len(x), k):\n        s = s * 2 + x[i]\n    return s\n",
    "def f(x, k=3):\n    s = 0.0\n    for i in range(len(x) - 1, -1, -k):\n        s = s * 2 + x[i]\n    return s\n",
    # a step from the data: its sign changes from window to window, 0 raises ValueError
    "def f(x):\n    k = int(x[4] * 3) - 1\n    c = 0\n    for i in range(4, 4 + 3 * k, k):\n        c += 1\n    return c\n",
    "def f(x):\n    k = int(x[0] * 4) - 2\n    s = 0.0\n    for i in range(2, 7, k):\n        s = s * 3 + x[i]\n    return s\n",
    # counters near the i64 limits: the next value would overflow, and Python's range ends
    "def f(x):\n    c = 0\n    for i in range(-9223372036854775807, 9223372036854775807, 6148914691236517205):\n"
    "        c += 1\n        if c > 10:\n            break\n    return c\n",
    "def f(x):\n    c = 0\n    for i in range(9223372036854775807, -9223372036854775807, -6148914691236517205):\n"
    "        c += 1\n        if c > 10:\n            break\n    return c\n",
    "def f(x, k=4611686018427387904):\n    c = 0\n    for i in range(0, 9223372036854775807, k):\n"
    "        c += 1\n        if c > 10:\n            break\n    return c\n",
    "def f(x):\n    c = 0\n    n = 9223372036854775807 - int(x[4] > 0.5)\n    for i in range(n - 2, n):\n"
    "        c += 1\n        if c > 10:\n            break\n    return c\n",
]


@pytest.mark.parametrize("source", SOURCES)
def test_agrees_with_python(source):
    namespace = {}
    exec(compile(source, "<test>", "exec"), namespace)
    want, error = python_generic_filter(IMAGE, namespace["f"], size=3)
    cb = ndjit.jit_filter(source)
    if error is not None:
        with pytest.raises(type(error)):
            ndi.generic_filter(IMAGE, cb, size=3)
        return
    np.testing.assert_array_equal(ndi.generic_filter(IMAGE, cb, size=3), want)
    np.testing.assert_array_equal(ndjit.generic_filter(IMAGE, source, size=3), want)


def test_a_zero_step_raises_value_error():
    source = "def f(x, k=0):\n    for i in range(0, 9, k):\n        return x[i]\n    return -1.0\n"
    with pytest.raises(ValueError, match="must not be zero"):
        ndi.generic_filter(IMAGE, ndjit.jit_filter(source, extra_keywords={"k": 0}), size=3)
    want, _ = python_generic_filter(IMAGE, lambda x: x[0], size=3)
    got = ndi.generic_filter(IMAGE, ndjit.jit_filter(source, extra_keywords={"k": 2}), size=3)
    np.testing.assert_array_equal(got, want)


def test_a_comprehension_over_a_computed_step_is_refused():
    with pytest.raises(ndjit.FilterError, match="step is computed"):
        ndjit.jit_filter("def f(x, k=2):\n    return sum([x[i] for i in range(0, 9, k)])\n")


def test_a_numpy_bool_is_not_a_range_argument():
    # NumPy 2's bool has no __index__ (TypeError); Python's bool is the int 1 or 0
    for source in ["def f(x):\n    c = 0\n    for i in range(0, 5, x[4] > 0.5):\n        c += 1\n    return c\n",
                   "def f(x):\n    c = 0\n    for i in range(x[4] > 0.5):\n        c += 1\n    return c\n"]:
        namespace = {}
        exec(compile(source, "<test>", "exec"), namespace)
        _, error = python_generic_filter(np.ones((3, 3)), namespace["f"], size=3)
        assert isinstance(error, TypeError)
        with pytest.raises(TypeError, match="numpy.bool"):
            ndi.generic_filter(np.ones((3, 3)), ndjit.jit_filter(source), size=3)
    python_bool = "def f(x):\n    c = 0\n    for i in range(0, 5, bool(x[4] > 0.5)):\n        c += 1\n    return c\n"
    np.testing.assert_array_equal(ndi.generic_filter(np.ones((3, 3)), ndjit.jit_filter(python_bool), size=3), 5.0)
