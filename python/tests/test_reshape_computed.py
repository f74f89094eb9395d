"""`reshape` with computed dimensions (`n = int(np.sqrt(len(w))); w.reshape(n, n)`, the way
callbacks make a 2-D window of the flat buffer), and NumPy's unknown dimension (any negative
one), against CPython + NumPy running the same function: the values, and the ValueError where
the length does not fit, with NumPy's message where ndjit can show it."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter

IMAGE = np.random.default_rng(20261204).normal(size=(9, 11))

SQUARE = [
    "def f(w):\n    n = int(np.sqrt(len(w)))\n    m = w.reshape(n, n)\n    return m[0, 0] - m[-1, -1] + m[n // 2].sum()\n",
    "def f(w):\n    n = int(len(w) ** 0.5)\n    m = w.reshape((n, n))\n    return np.mean(m[:, 0]) * m.shape[0]\n",
    "def f(w):\n    k = int(np.sqrt(w.size))\n    m = np.reshape(w, (k, k))\n    return m[k // 2, k // 2] + m.T[0, 1]\n",
    "def f(w):\n    n = int(np.sqrt(len(w)))\n    m = w.reshape(n, -1)\n    return m[-1].max() - m[:, -1].min()\n",
    "def f(w):\n    n = int(np.sqrt(len(w)))\n    m = w.reshape(-1, n)\n    return float(m.shape[0] * 10 + m.shape[1])\n",
    "def f(w):\n    m = w.reshape(-3, 3)\n    return m[1, 2]\n",
    "def f(w):\n    n = len(w)\n    return w.reshape(n)[n - 1] + w.reshape(-5)[0]\n",
]


# (25 values do not make rows of 3: that error is tested below.)
@pytest.mark.parametrize("source, size", [(s, k) for s in SQUARE for k in (3, 5) if not ("-3, 3" in s and k == 5)])
def test_square_windows_agree_with_python(source, size):
    namespace = {"np": np}
    exec(compile(source, "<test>", "exec"), namespace)
    want = ndi.generic_filter(IMAGE, namespace["f"], size=size)
    cb = ndjit.jit_filter(source)
    for got in (ndi.generic_filter(IMAGE, cb, size=size), ndjit.generic_filter(IMAGE, cb, size=size)):
        assert got.tobytes() == want.tobytes()


def _python(source):
    namespace = {"np": np}
    exec(compile(source, "<test>", "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("source", [
    # Dimensions read from the data: negative, zero, too large, both unknown, rows or columns.
    "def f(w):\n    m = w.reshape(int(w[0]), int(w[1]))\n    return float(m.shape[0] * 100 + m.shape[1]) + (m[0, 0] if m.size else 0.0)\n",
    "def f(w):\n    m = w.reshape(int(w[0]), -1)\n    return float(m.shape[1]) + m[-1, 0]\n",
    "def f(w):\n    m = w.reshape(-1, int(w[0]))\n    return float(m.shape[0]) + m[0, -1]\n",
    "def f(w):\n    n = int(w[0])\n    m = w.reshape(n, n)\n    return m[n - 1, 0]\n",
    "def f(w):\n    v = w.reshape(int(w[0]))\n    return v[-1] + len(v)\n",
])
def test_dimensions_from_the_data_agree_window_by_window(source):
    py, f = _python(source), ndjit.jit_filter(source)
    rng = np.random.default_rng(5)
    compared = raised = 0
    for n in list(range(0, 13)) + [16, 25, 30]:
        for _ in range(12):
            w = rng.normal(size=n)
            if n >= 2:
                w[:2] = rng.integers(-4, 8, size=2)
            try:
                want = py(w.copy())
            except (ValueError, IndexError) as e:
                with pytest.raises(type(e)) as info:
                    f.evaluate(w.copy())
                if isinstance(e, ValueError) and "reshape" in str(e) and "(" in str(info.value):
                    # Where both show a shape, it is the same text.
                    assert str(e) in str(info.value) or "elements" in str(info.value) or "rows" in str(info.value), (
                        str(e), str(info.value))
                raised += 1
                continue
            got = f.evaluate(w.copy())
            assert np.float64(got).tobytes() == np.float64(want).tobytes(), (w, got, want)
            compared += 1
    assert compared >= 3 and raised >= 10, (compared, raised)


def test_a_footprint_that_is_not_square_raises_numpys_error():
    ring = np.ones((3, 3), bool)
    ring[1, 1] = False
    source = SQUARE[0]
    want, error = python_generic_filter(IMAGE, _python(source), footprint=ring)
    assert isinstance(error, ValueError) and str(error) == "cannot reshape array of size 8 into shape (2,2)"
    with pytest.raises(ValueError, match=r"cannot reshape array of size 8 into shape \(2,2\)"):
        ndjit.generic_filter(IMAGE, ndjit.jit_filter(source), footprint=ring)


@pytest.mark.parametrize("source, numpy_message", [
    ("def f(w):\n    n = int(np.sqrt(len(w)))\n    return w.reshape(n, n + 1)[0, 0]\n", "into shape (3,4)"),
    ("def f(w):\n    k = len(w)\n    return w.reshape(-k, -1)[0, 0]\n", "can only specify one unknown dimension"),
    ("def f(w):\n    return w.reshape(-1, 2)[0, 0]\n", "cannot reshape array of size 9"),
    ("def f(w):\n    return w.reshape(4, 2)[0, 0]\n", "into shape (4,2)"),
    ("def f(w):\n    return w.reshape(10)[0]\n", "into shape (10,)"),
])
def test_lengths_that_do_not_fit_raise_value_error(source, numpy_message):
    with pytest.raises(ValueError) as numpy_error:
        _python(source)(np.zeros(9))
    assert numpy_message in str(numpy_error.value)
    with pytest.raises(ValueError, match="cannot reshape|one unknown dimension"):
        ndjit.jit_filter(source).evaluate(np.zeros(9))


def test_three_dimensions_and_float_dimensions_refused():
    with pytest.raises(ndjit.FilterError, match="1-D or 2-D"):
        ndjit.jit_filter("def f(w):\n    return w.reshape(1, 3, 3)[0, 0, 0]\n")
    with pytest.raises(TypeError):
        ndjit.jit_filter("def f(w):\n    n = np.sqrt(len(w))\n    return w.reshape(n, n)[0, 0]\n").evaluate(np.zeros(9))
