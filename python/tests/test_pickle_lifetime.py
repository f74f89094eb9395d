"""Pickling (to source, bound values and options; recompiled on load, through a per-process cache)
and lifetime (code lives as long as any callable that refers to it)."""
import gc
import pickle
import resource

import cloudpickle
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from ndjit import _filter

LEVEL = 0.5


def above(x):
    return np.count_nonzero(x > LEVEL) / x.size


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps])
def test_round_trip(dumps):
    img = np.random.default_rng(1).random((10, 11))
    filters = [
        ndjit.jit_filter(above),
        ndjit.jit_filter(lambda v: v.std()),
        ndjit.jit_filter("def g(x, k):\n    return x[4] * k", extra_arguments=(3.0,)),
        ndjit.jit_filter(np.median, filter_size=9),
    ]
    for f in filters:
        g = pickle.loads(dumps(f))
        assert isinstance(g, ndjit.Filter) and g is not f
        assert g.source == f.source and g.bound_values.keys() == f.bound_values.keys()
        assert np.array_equal(ndi.generic_filter(img, g, size=3), ndi.generic_filter(img, f, size=3))


def test_unpickling_many_times_compiles_once(monkeypatch):
    blob = pickle.dumps(ndjit.jit_filter("np.var(x) + 1234.5"))
    _filter._cache.clear()
    calls = []
    real = _filter._core.compile
    monkeypatch.setattr(_filter._core, "compile", lambda *a, **k: calls.append(1) or real(*a, **k))
    for _ in range(50):
        pickle.loads(blob)
    assert len(calls) == 1


def test_filter_deleted_while_scipy_holds_the_callable():
    img = np.random.default_rng(2).random((64, 64))
    f = ndjit.jit_filter("np.mean(x) + 7.0")
    ref = ndi.generic_filter(img, f, size=3)
    holder = [f]
    del f
    gc.collect()
    out = ndi.generic_filter(img, holder.pop(), size=3)  # scipy holds the only reference now
    gc.collect()
    assert np.array_equal(out, ref)


def _rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def test_compiling_and_dropping_100k_filters_does_not_grow_memory():
    img = np.random.default_rng(0).random((3, 3))
    def churn(n, start):
        for i in range(start, start + n):
            f = ndjit.jit_filter(f"np.max(x) + {i}.5")
            ndi.generic_filter(img, f, size=3)
            del f
    churn(5_000, 0)  # warm up: allocator pools, caches at their bound
    gc.collect()
    before = _rss_mb()
    churn(100_000, 5_000)
    gc.collect()
    grown = _rss_mb() - before
    assert grown < 40, f"RSS grew by {grown:.1f} MiB over 100k compile/drop cycles"
