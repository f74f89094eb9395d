"""np.isclose, np.allclose and np.nan_to_num against NumPy running the same filter through scipy,
on windows with NaN, infinities, signed zeros, and values a tolerance apart."""
import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter


def _image():
    rng = np.random.default_rng(20261202)
    img = rng.choice([0.5, 0.5 + 1e-9, 0.5 + 1e-6, 0.5 + 1e-4, 1.0, 3.0, 0.0, -0.0, 1e-8, 2e-8,
                      np.nan, np.inf, -np.inf, 1e300, -1e300], size=(9, 10))
    return img


IMAGE = _image()

SOURCES = [
    "np.isclose(x, x[4]).sum()",
    "np.isclose(x[0], x[1])",
    "np.isclose(x[0], 0.5) | np.isclose(x[1], 0.5)",
    "np.allclose(x, x[4]) + np.allclose(x[:2], 0.5)",           # Python bools: an int sum
    "-np.allclose(x[0], x[1])",
    "np.isclose(x, 0.5, rtol=0.0).sum()",
    "np.isclose(x, 0.5, 1e-3).sum()",
    "np.isclose(x, 0.5, 0.0, 1e-6).sum()",
    "np.isclose(x, 0.5, atol=0).sum() * 10 + np.isclose(x, 0.5, atol=1e-9, rtol=0).sum()",
    "np.isclose(x, x[::-1], equal_nan=True).sum()",
    "np.isclose(x, x[::-1], equal_nan=x[0] > 1).sum()",
    "np.isclose(x[:4], x[4:8], atol=np.abs(x[:4])).sum()",
    "np.isclose(a=x[0], b=x[1], rtol=1e-2)",
    "np.isclose(x.astype(int), 1).sum()",
    "np.isclose(np.isnan(x), 0).sum()",
    "np.isclose(x, np.inf).sum() + 2 * np.isclose(-np.inf, x).sum()",
    "np.allclose(x, x, equal_nan=True)",
    "np.allclose(x, x)",
    "np.nan_to_num(x).sum()",
    "np.nan_to_num(x).max()",
    "np.nan_to_num(x, nan=-1.0, posinf=5, neginf=-5).sum()",
    "np.nan_to_num(x, True, 7.0).sum()",
    "np.nan_to_num(x, copy=True, posinf=None, neginf=0).max()",
    "np.nan_to_num(x[0]) / 0",                                   # a NumPy float: inf, no error
    "np.nan_to_num(x[0], nan=2.5)",
    "np.nan_to_num(len(x)) // 0",                                # a NumPy int: 0
    "np.nan_to_num(x.astype(int)).sum()",
    "np.nan_to_num(x > 0.5).sum()",
    "float(np.nan_to_num(x[0])) / 0",                            # a Python float: raises
]


def _outcome(run):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return run(), None
        except Exception as e:  # noqa: BLE001 - compared below
            return None, e


def _same(got, want):
    return np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("src", SOURCES)
def test_matches_numpy_through_scipy(src):
    py = eval(f"lambda x: {src}", {"np": np})  # noqa: S307 - the test's own sources
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want, want_err = python_generic_filter(IMAGE, py, size=3)
    f = ndjit.jit_filter(src)
    for face in (ndi.generic_filter, ndjit.generic_filter):
        got, got_err = _outcome(lambda: face(IMAGE, f, size=3))
        if want_err is not None:
            assert isinstance(got_err, type(want_err)), (face, got_err, want_err)
            assert isinstance(got_err, ndjit.FilterRuntimeError), got_err
        else:
            assert got_err is None, (face, got_err)
            assert _same(got, want), (face, got, want)


def test_both_outcomes_happen():
    """The image makes the comparisons above tell things apart: some windows close, some not."""
    close = ndjit.generic_filter(IMAGE, "np.isclose(x, x[4]).sum()", size=3)
    assert len(np.unique(close)) > 3
    near = ndjit.generic_filter(IMAGE, "(np.isclose(x, x[4]) & (x != x[4])).sum()", size=3)
    assert near.max() > 0  # close but not equal
    assert np.isinf(IMAGE).any() and np.isnan(IMAGE).any()


@pytest.mark.parametrize("src,match", [
    ("np.nan_to_num(x, copy=False).sum()", "in place"),
    ("np.nan_to_num(x, False).sum()", "in place"),
    ("np.nan_to_num(x, nan=x).sum()", "takes a number"),
    ("np.isclose(x).sum()", "two arrays or numbers"),
    ("np.isclose(x, 1.0, tol=0.1).sum()", "unsupported keyword argument `tol`"),
    ("np.allclose(x, 1.0, 0.1, 0.1, True, 5)", "positional arguments"),
    # isclose gives NumPy bools, refused where they compute otherwise than Python's (as np.isnan's)
    ("np.isclose(x[0], 0.5) + np.isclose(x[1], 0.5)", "one of them NumPy's"),
    ("-np.isclose(x[0], x[1])", "numpy boolean negative"),
])
def test_what_is_refused_says_what_to_write(src, match):
    with pytest.raises(ndjit.FilterCompileError, match=match):
        ndjit.jit_filter(src)
