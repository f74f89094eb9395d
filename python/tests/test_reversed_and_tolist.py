"""`for v in reversed(seq)` and `a.tolist()`, against CPython running the same function through
scipy: reversed iteration reads the items last to first with their own kinds; `.tolist()` makes
Python numbers (Python's float arithmetic, not NumPy's); the forms Python refuses stay refused."""
import textwrap

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter


def _image():
    rng = np.random.default_rng(20261203)
    return rng.choice([0.1, 0.3, 0.6, 0.9, 0.0, -0.0, 2.0, np.nan, -1.0, 1e308], size=(7, 8))


IMAGE = _image()

SOURCES = [
    # reversed over the window, a slice, a list, a tuple of mixed kinds, a comprehension
    "def f(x):\n    s = 0.0\n    for v in reversed(x):\n        s = s * 0.5 + v\n    return s\n",
    "def f(x):\n    for v in reversed(x[:5]):\n        if v > 0.5:\n            return v\n    return -1.0\n",
    "def f(x):\n    s = 0.0\n    for v in reversed([float(u) for u in x]):\n        s = s / 2 + v\n    return s\n",
    "def f(x):\n    s = 0.0\n    for w in reversed((1.0, 2.5, x[0])):\n        s = s * 3 + w\n    return s\n",
    "lambda x: sum([v * i for i, v in enumerate([u for u in reversed(x)])])",
    "def f(x):\n    y = x.copy()\n    for v in reversed(y):\n        y[0] = v\n    return y[0]\n",
    # reversed reads the live array: writes ahead of it are seen, as in Python
    "def f(x):\n    y = x.copy()\n    t = 0.0\n    for v in reversed(y):\n        t += v\n        y[:3] = 1.0\n    return t\n",
    # tolist: Python floats (1/0.0 raises, sum adds left to right), ints, bools
    "lambda x: np.sum(x.tolist())",
    "lambda x: max(x.tolist()) - min(x.tolist())",
    "lambda x: sum((x > 0.5).tolist())",
    "lambda x: sorted((x > 0.2).astype(int).tolist())[4] + len((x * 2).astype(int).tolist())",
    "lambda x: x[4].tolist() * 2",
    "def f(x):\n    vals = x.tolist()\n    return 1 / vals[4] if vals[4] != 0 else 0.0\n",
    "def f(x):\n    vals = x[::2].tolist()\n    t = 0.0\n    for v in vals:\n        t = t + v ** 2\n    return t\n",
]


@pytest.mark.parametrize("source", SOURCES)
def test_agrees_with_python(source):
    namespace = {"np": np}
    exec(compile(source if source.startswith("def") else "f = " + source, "<test>", "exec"), namespace)
    func = namespace["f"]
    want, error = python_generic_filter(IMAGE, func, size=3)
    cb = ndjit.jit_filter(source)
    if error is not None:
        with pytest.raises(type(error)):
            ndi.generic_filter(IMAGE, cb, size=3)
        return
    got = ndi.generic_filter(IMAGE, cb, size=3)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_python_floats_from_tolist_raise_where_numpy_would_not():
    source = "lambda x: 1.0 / x.tolist()[4]"
    image = np.zeros((3, 3))
    _, error = python_generic_filter(image, eval(source), size=3)
    assert isinstance(error, ZeroDivisionError)
    with pytest.raises(ZeroDivisionError):
        ndi.generic_filter(image, ndjit.jit_filter(source), size=3)


@pytest.mark.parametrize("source, message", [
    # reversed() is an iterator: no length, index or arithmetic in Python
    ("lambda x: len(reversed(x))", "reversed"),
    ("lambda x: reversed(x)[0]", "reversed"),
    ("def f(x):\n    for i in reversed(range(3)):\n        return x[i]\n    return 0.0\n", "range"),
    ("def f(x):\n    for v in reversed(x, 1):\n        return v\n    return 0.0\n", "exactly one argument"),
    # Python floats: builtin sum's rounding depends on the Python version
    ("lambda x: sum(x.tolist())", "Python version"),
    # nested lists, and Python numbers have no tolist
    ("lambda x: x.reshape(3, 3).tolist()[0][0]", "list of lists"),
    ("lambda x: float(x[0]).tolist()", "no attribute"),
])
def test_refused(source, message):
    with pytest.raises(ndjit.FilterError, match=message):
        ndjit.jit_filter(source)


# The review's findings: a module's own `reversed`/`range`/`zip` is the one called; a loop that
# writes into what its iterable reads sees what Python's would, or is refused.
HELPERS = [
    "def reversed(a):\n    return a\n\ndef f(x):\n    s = 0.0\n    for v in reversed(x):\n        s = s * 2 + v\n    return s\n",
    "def range(a):\n    return [5.0, 7.0]\n\ndef f(x):\n    s = 0.0\n    for v in range(3):\n        s = s * 10 + v\n    return s\n",
    "def zip(a, b):\n    return a\n\ndef f(x):\n    s = 0.0\n    for v in zip(x, x):\n        s = s * 2 + v\n    return s\n",
    # element writes into a view being iterated are seen, as Python's live iteration sees them
    "def f(x):\n    y = x.copy()\n    s = 0.0\n    for v in reversed(y[1:]):\n        s = s * 2 + v\n        y[1] = 100.0\n    return s\n",
    "def f(x):\n    y = x.copy()\n    s = 0.0\n    for v in y:\n        s = s * 2 + v\n        y[8] = 100.0\n    return s\n",
]


@pytest.mark.parametrize("source", HELPERS)
def test_helpers_and_live_views_agree_with_python(source):
    test_agrees_with_python(source)


@pytest.mark.parametrize("source, message", [
    # Python computes the iterated array once, before the loop
    ("def f(x):\n    s = 0.0\n    for v in reversed(x * 2):\n        s = s * 2 + v\n        x[0] = 100.0\n    return s\n",
     "computed from"),
    ("def f(x):\n    s = 0.0\n    for v in x.copy():\n        s = s * 2 + v\n        x[8] = 100.0\n    return s\n",
     "computed from"),
    # NumPy updates `x` in place; the loop over it sees the new values
    ("def f(x):\n    s = 0.0\n    for v in reversed(x):\n        s = s * 2 + v\n        x += 1.0\n    return s\n",
     "in place"),
    ("def f(x):\n    s = 0.0\n    for v in x:\n        s = s * 2 + v\n        x *= 0.5\n    return s\n",
     "in place"),
])
def test_loops_writing_what_they_iterate_are_refused(source, message):
    with pytest.raises(ndjit.FilterError, match=message):
        ndjit.jit_filter(source)


def test_loops_over_a_computed_array_rebinding_its_source_agree():
    # `x += 1` on a scalar, and a rebinding, leave the array Python computed before the loop
    test_agrees_with_python(
        "def f(x):\n    k = 1.0\n    s = 0.0\n    for v in x * k:\n        s = s * 2 + v\n        k += 1.0\n    return s\n")
