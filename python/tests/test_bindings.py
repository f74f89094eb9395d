"""Bound values: closures, module globals, defaults, extra_arguments/extra_keywords, tuples and
arrays; rebinding without recompiling; clear errors for values ndjit cannot bind."""
import re

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from ndjit import _filter
from conftest import assert_same

WEIGHTS = np.array([1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]) / 16
CONFIG = {"k": 3}


def weighted(values):
    return np.sum(values * WEIGHTS)


def sigma(x, two_sigma, *, floor=0.0):
    c = x[x.shape[0] // 2]
    close = x[np.abs(x - c) <= two_sigma]
    return max(np.mean(close), floor) if len(close) > 4 else c


def test_global_array_and_extra_arguments(rng):
    img = rng.random((17, 16))
    assert_same(ndi.generic_filter(img, ndjit.jit_filter(weighted), size=3), ndi.generic_filter(img, weighted, size=3))
    f = ndjit.jit_filter(sigma, extra_arguments=(0.3,), extra_keywords={"floor": 0.1})
    assert_same(ndi.generic_filter(img, f, size=5),
                ndi.generic_filter(img, sigma, size=5, extra_arguments=(0.3,), extra_keywords={"floor": 0.1}))


@pytest.mark.parametrize("narrow", [np.float32(2.5), np.float16(2.5), np.array([1.0, 2.0], np.float32)])
def test_float32_bound_values_are_refused_not_widened(narrow):
    # NumPy computes `scale * 0.1` in float32 when scale is np.float32; ndjit computes in float64.
    def f(x):
        return np.sum(x) * np.sum(narrow * 0.1)

    with pytest.raises(TypeError, match="float64 arithmetic is what you mean"):
        ndjit.jit_filter(f)


@pytest.mark.parametrize("value,hint", [
    (np.True_, "bool(value)"),
    (np.uint8(200), "int(value)"),
    (np.int32(7), "int(value)"),
    (np.uint64(3), "int(value)"),
    (np.array([200, 100], np.uint8), "value.astype(np.float64)"),
    (np.array([1, 2], np.int16), "value.astype(np.float64)"),
])
def test_numpy_bools_and_narrow_ints_are_refused_not_taken_as_python_numbers(value, hint):
    # NumPy's uint8 200 * 200 is 64 and np.True_ + np.True_ is True; as Python numbers they
    # would be 40000 and 2.
    def f(x):
        return x[0] + value * value

    with pytest.raises(TypeError, match=re.escape(hint)):
        ndjit.jit_filter(f)
    with pytest.raises(TypeError, match="which ndjit does not model"):
        ndjit.generic_filter(np.zeros((3, 3)), f, size=3)


def test_closures_defaults_tuples_and_numpy_scalars(rng):
    img = rng.random((15, 14))
    scale = np.float64(2.5)
    kernel = (0.0, 1.0, 0.0, 1.0, 4.0, 1.0, 0.0, 1.0, 0.0)
    count = np.int64(4)

    def f(x, offset=0.125):
        return np.dot(x, kernel) * scale / count + offset

    ref = ndi.generic_filter(img, f, size=3)
    g = ndjit.jit_filter(f)
    assert set(g.bound_values) == {"scale", "kernel", "count", "offset"}
    assert_same(ndi.generic_filter(img, g, size=3), ref)


def test_bind_rebinds_without_recompiling(rng, monkeypatch):
    img = rng.random((12, 12))
    f = ndjit.jit_filter(sigma, extra_arguments=(0.3,))
    calls = []
    real = _filter._core.compile
    monkeypatch.setattr(_filter._core, "compile", lambda *a, **k: calls.append(a) or real(*a, **k))
    g = f.bind(two_sigma=0.05)
    assert calls == [], "bind() must not recompile"
    assert_same(ndi.generic_filter(img, g, size=5), ndi.generic_filter(img, sigma, size=5, extra_arguments=(0.05,)))
    assert_same(ndi.generic_filter(img, f, size=5), ndi.generic_filter(img, sigma, size=5, extra_arguments=(0.3,)))
    with pytest.raises(TypeError, match="no bound value named 'nope'"):
        f.bind(nope=1.0)
    with pytest.raises(TypeError, match="compiled as a float"):
        f.bind(two_sigma=np.ones(3))


def test_values_that_cannot_be_bound_are_named():
    def uses_dict(x):
        return x[0] * CONFIG["k"]

    with pytest.raises(TypeError, match="`CONFIG` is a dict"):
        ndjit.jit_filter(uses_dict)
    # 2-D arrays bind (issue 15: a 2-D kernel, `img[i, j]`); three dimensions do not.
    with pytest.raises(TypeError, match="'w' is a 3-D float64 array"):
        ndjit.jit_filter("def f(x, w):\n    return x[0]", extra_arguments=(np.ones((2, 2, 2)),))
    with pytest.raises(TypeError, match="needs a value for two_sigma"):
        ndjit.jit_filter(sigma)
    with pytest.raises(TypeError, match="takes 1 extra argument"):
        ndjit.jit_filter(sigma, extra_arguments=(1.0, 2.0))
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        ndjit.jit_filter(sigma, extra_arguments=(1.0,), extra_keywords={"bogus": 1})
    with pytest.raises(TypeError, match="does not fit in 64 bits"):
        ndjit.jit_filter("def f(x, k):\n    return x[0]", extra_arguments=(2**70,))
