"""`len(set(x))`, the count of distinct values (richness and diversity filters), against
CPython running the same function: equal values one item, `0.0` and `-0.0` one, each NaN of an
array one of its own; a list's NaNs, which a set counts once per object, raised rather than
guessed where two or more could be one object. Any other use of a set is refused by name (it
iterates in CPython's hash order), and `len(np.unique(x))` counts without the zero-sign guard
that reading np.unique's values needs."""
import math

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from test_statistics_mode import agrees_window_by_window, windows


SOURCES = [
    "lambda x: len(set(x))",
    "lambda x: len(frozenset(x)) * 10 + len(x)",
    "lambda x: len(set(x[:4]))",
    "lambda x: len(set(x > 1.0))",
    "lambda x: len(set(x[~np.isnan(x)].astype(int)))",
    "lambda x: len(set(v for v in x if v > 0))",
    "lambda x: len(set([abs(v) for v in x if v == v]))",
    "lambda x: len(set((bool(x[0] > 1), bool(x[-1] > 1), True)))",
    "lambda x: len(set()) + len(set(x)) / len(x)",
    "lambda x: 1 / (len(set(x)) - 1)",
    # np.unique's count and np.sort's size read no zero's sign: no guard
    "lambda x: len(np.unique(x))",
    "lambda x: np.unique(x).size + np.sort(x).shape[0]",
    "lambda x: len(np.unique(x, equal_nan=False))",
]


@pytest.mark.parametrize("src", SOURCES)
def test_agrees_with_python_window_by_window(src):
    py = eval(src, {"np": np, "math": math})
    f = ndjit.jit_filter(src)
    agrees_window_by_window(py, f)


def richness(x):
    kinds = set(x)
    if len(kinds) == 1:
        return 0.0
    return len(kinds) / len(x)


def test_a_named_set_through_scipy_and_the_driver():
    agrees_window_by_window(richness, ndjit.jit_filter(richness))
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 5, size=(30, 40)).astype(np.float64)
    labels[rng.random(labels.shape) < 0.05] = np.nan
    labels[rng.random(labels.shape) < 0.05] = -0.0
    want = ndi.generic_filter(labels, richness, size=3)
    cb = ndjit.jit_filter(richness)
    np.testing.assert_array_equal(ndi.generic_filter(labels, cb, size=3), want)
    np.testing.assert_array_equal(ndjit.generic_filter(labels, richness, size=3), want)


def test_mixed_zeros_count_once_and_nans_of_an_array_each():
    f = ndjit.jit_filter("len(set(x))")
    x = np.array([0.0, -0.0, np.nan, np.nan, 1.0])
    assert len(set(x)) == 4
    assert f.evaluate(x) == 4
    g = ndjit.jit_filter("len(np.unique(x))")
    assert g.evaluate(x) == len(np.unique(x)) == 3


def test_the_values_of_np_unique_still_guard_mixed_zeros():
    # Reading the values shows which zero NumPy's sort left first: still refused.
    f = ndjit.jit_filter("np.unique(x)[0] + len(np.unique(x))")
    with pytest.raises(ValueError, match="both 0.0 and -0.0"):
        f.evaluate(np.array([0.0, -0.0, 1.0]))
    assert f.evaluate(np.array([0.0, 0.0, 1.0])) == 2.0


LIST_OF_NANS = "lambda x: len(set([v for v in x]))"


@pytest.mark.parametrize("window", [[np.nan, np.nan, 1.0], [np.nan, 2.0, np.nan, 2.0]])
def test_two_nans_of_a_list_are_refused(window):
    # CPython counts a NaN once per object: [v for v in x] holds new objects, [v, v] one.
    f = ndjit.jit_filter(LIST_OF_NANS)
    with pytest.raises(ValueError, match="two NaNs or more"):
        f.evaluate(np.array(window))
    v = float("nan")
    assert len(set([v, v])) == 1 and len(set([v, float("nan")])) == 2


@pytest.mark.parametrize("window", [[np.nan, 1.0, 1.0], [0.0, -0.0, 3.0]])
def test_one_nan_of_a_list_is_counted(window):
    f = ndjit.jit_filter(LIST_OF_NANS)
    py = eval(LIST_OF_NANS)
    assert f.evaluate(np.array(window)) == py(np.array(window))


REFUSED = [
    ("sum(set(x))", "a set whose items are read"),
    ("max(frozenset(x))", "a frozenset whose items are read"),
    ("s = set(x)\n    t = 0.0\n    for v in s:\n        t += v\n    return t", "a set whose items are read"),
    ("return float(x[0] in set(x))", "a set whose items are read"),
    ("s = set(x)\n    return len(s) + sorted(s)[0]", "a set whose items are read"),
    ("return len(set(x) | set(x[:2]))", "a set whose items are read"),
    ("return 1.0 if set(x) else 0.0", "a set whose items are read"),
    ("return float(set(x) == set(x[:3]))", "a set whose items are read"),
    ("s = set(x)\n    assert s\n    return len(s)", "a set whose items are read"),
]


@pytest.mark.parametrize("body,message", REFUSED)
def test_a_sets_other_uses_are_refused_by_name(body, message):
    if not body.startswith("return") and "\n" not in body:
        body = "return " + body
    src = f"def f(x):\n    {body}\n"
    with pytest.raises(ndjit.FilterError, match=message) as e:
        ndjit.jit_filter(src, filter_size=9)
    assert "<filter>:2:" in str(e.value) or "<filter>:3:" in str(e.value), e.value
    assert "len(set(x))" in str(e.value), e.value


def test_a_set_of_a_2d_array_is_a_type_error():
    with pytest.raises(ndjit.FilterError, match="unhashable"):
        ndjit.jit_filter("len(set(x.reshape(3, 3)))", filter_size=9)


def test_windows_hold_what_the_cases_need():
    # The shared windows hold mixed zeros and several NaNs, so the cases above meet both.
    ws = list(windows())
    assert any(np.isnan(w).sum() >= 2 for w in ws)
    assert any((w == 0).any() and np.signbit(w[w == 0]).any() and (~np.signbit(w[w == 0])).any() for w in ws)
