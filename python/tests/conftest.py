import os
import sys

import numpy as np
import pytest

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


sys.path.insert(0, os.path.dirname(__file__))
