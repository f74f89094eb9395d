import os
import sys

import numpy as np
import pytest
import scipy.ndimage as ndi

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


def assert_same(got, want):
    """scipy's answer: NaN where it has NaN, 1e-10 relative elsewhere, exact for integer outputs."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
        return
    g, w = got.astype(float), want.astype(float)
    assert np.array_equal(np.isnan(g), np.isnan(w)), "NaN positions differ"
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity
        ok = np.isnan(w) | (g == w) | (np.abs(g - w) <= 1e-10 * np.maximum(1.0, np.abs(w)))
    assert ok.all(), f"{(~ok).sum()} of {ok.size} differ; first at {np.argwhere(~ok)[0]}: {g[~ok][0]!r} vs {w[~ok][0]!r}"


def python_generic_filter(image, func, **kwargs):
    """scipy's generic_filter running the user's Python `func`, as (result, None) or (None, the
    first exception it raised). scipy keeps calling a Python callback after it raised, so a later
    call runs with the exception still set: CPython then reports a SystemError in its place, and
    a later call that clears it (NumPy clears errors on some paths) makes scipy return an array as
    if nothing had failed. The oracle is the user's function, so the first exception stands and
    no call runs after it."""
    failures = []

    def first_failure_stops(buffer, *args, **kw):
        if failures:
            return 0.0
        try:
            return func(buffer, *args, **kw)
        except Exception as e:  # noqa: BLE001 - the user's own failure, kept to compare
            failures.append(e)
            return 0.0

    result = ndi.generic_filter(image, first_failure_stops, **kwargs)
    return (None, failures[0]) if failures else (result, None)


sys.path.insert(0, os.path.dirname(__file__))
