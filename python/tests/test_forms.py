"""Every form a callback can take: function, inline lambda, NumPy/builtin reduction, source string,
and decorator use. Each result is checked against scipy running the Python callable."""
import math

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import assert_same

THRESHOLD = 0.25


def local_range(x):
    return x.max() - x.min()


def centre_count(vals):
    c = vals[len(vals) // 2]
    return (vals > c + THRESHOLD).sum()


@pytest.fixture
def img(rng):
    return rng.random((23, 19))


def test_plain_function(img):
    assert_same(ndi.generic_filter(img, ndjit.jit_filter(local_range), size=3), ndi.generic_filter(img, local_range, size=3))


def test_module_constant_is_bound(img):
    f = ndjit.jit_filter(centre_count)
    assert f.bound_values == {"THRESHOLD": 0.25}
    assert_same(ndi.generic_filter(img, f, size=3), ndi.generic_filter(img, centre_count, size=3))


def test_lambdas_inline_in_a_larger_expression(img):
    # Two lambdas on one line, inside a call: each compiles to itself.
    fs = [ndjit.jit_filter(lambda v: v.max()), ndjit.jit_filter(lambda v: v.min() * 2.0)]
    assert_same(ndi.generic_filter(img, fs[0], size=3), ndi.generic_filter(img, np.max, size=3))
    assert_same(ndi.generic_filter(img, fs[1], size=3), ndi.generic_filter(img, np.min, size=3) * 2.0)
    spread = ndjit.jit_filter(lambda v: (np.nanmax(v)
                                         - np.nanmin(v)))
    assert_same(ndi.generic_filter(img, spread, size=3), ndi.generic_filter(img, np.ptp, size=3))


@pytest.mark.parametrize("func", [np.var, np.nanmax, np.median, np.ptp, np.mean, np.std, np.amax, np.sum, np.nanmean,
                                  np.nanmedian, np.nanstd, np.nanvar, np.nanmin, np.nansum, max, min, sum])
def test_numpy_and_builtin_callables(img, func):
    x = img.copy()
    x[3, 4] = np.nan
    assert_same(ndi.generic_filter(x, ndjit.jit_filter(func), size=3), ndi.generic_filter(x, func, size=3))


def test_numpy_callable_with_extra_arguments(img):
    f = ndjit.jit_filter(np.percentile, extra_arguments=(90,))
    assert_same(ndi.generic_filter(img, f, size=3), ndi.generic_filter(img, np.percentile, size=3, extra_arguments=(90,)))


@pytest.mark.parametrize("src", ["max(x) - min(x)", "lambda v: v.max() - v.min()",
                                 "def f(w):\n    return w.max() - w.min()\n"])
def test_source_strings(img, src):
    assert_same(ndi.generic_filter(img, ndjit.jit_filter(src), size=3), ndi.generic_filter(img, local_range, size=3))


def test_decorator_forms(img):
    @ndjit.jit_filter
    def a(x):
        return np.mean(x)

    @ndjit.jit_filter(extra_arguments=(0.5,))
    def b(x, k):
        return np.mean(x) * k

    assert isinstance(a, ndjit.Filter) and isinstance(b, ndjit.Filter)
    assert_same(ndi.generic_filter(img, b, size=3), ndi.generic_filter(img, np.mean, size=3) * 0.5)


def test_math_module_and_aliases(img):
    import numpy as xp
    from numpy import median as med

    def f(x):
        return math.sqrt(abs(xp.mean(x))) + med(x)

    assert_same(ndi.generic_filter(img, ndjit.jit_filter(f), size=3), ndi.generic_filter(img, f, size=3))


def test_filter_is_a_low_level_callable_and_not_callable():
    f = ndjit.jit_filter("np.mean(x)")
    from scipy import LowLevelCallable
    assert isinstance(f, LowLevelCallable)
    assert f.signature == "int (double *, intptr_t, double *, void *)"
    # Callable objects are run by scipy as Python callbacks, so a Filter deliberately is not one.
    assert not callable(f)
    assert f.evaluate([1.0, 2.0, 6.0]) == 3.0


def test_unsupported_callables_are_refused():
    with pytest.raises(TypeError, match="cannot compile"):
        ndjit.jit_filter(np.linalg.norm)
    with pytest.raises(TypeError, match="cannot compile"):
        ndjit.jit_filter(42)


def test_source_that_cannot_be_found():
    ns = {}
    exec("def hidden(x):\n    return x[0]\n", ns)
    with pytest.raises(TypeError, match="cannot find the source"):
        ndjit.jit_filter(ns["hidden"])
