"""`statistics.mode`, the majority filter as people write it, against CPython running the same
function: the value counted most, the first seen of those counted equally, `0.0` and `-0.0` one
value (the first seen kept, with its sign), each NaN of an array counted once, the items' kind
(an array's NumPy scalars, a list's Python numbers), `StatisticsError` for no data, and the
NaN of a list, whose count depends on object identity, raised rather than guessed."""
import math
import statistics

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit


def windows():
    rng = np.random.default_rng(20261204)
    for n in (1, 2, 3, 5, 9, 25):
        for _ in range(40):
            # Few distinct values, so that counts tie and differ; zeros of both signs; NaN.
            pool = np.array([0.0, -0.0, 1.0, 2.0, 2.5, -3.0, np.nan, 7.0])
            yield rng.choice(pool[: rng.integers(2, 9)], size=n)


SOURCES = [
    "lambda x: statistics.mode(x)",
    "lambda x: statistics.mode(x[:4])",
    "lambda x: statistics.mode(x) * 10 + len(x)",
    "lambda x: np.copysign(1.0, statistics.mode(x))",
    "lambda x: statistics.mode(x > 1.0) + 0.5",
    "lambda x: statistics.mode((x * 2).astype(int)) / 3",
    # a list's items are Python numbers: 1 / 0 raises ZeroDivisionError, NumPy's gives inf
    "lambda x: 1 / statistics.mode([int(v) for v in x if not math.isnan(v)])",
    "lambda x: 1 / statistics.mode(x)",
    "lambda x: statistics.mode([v for v in x if v > 0])",
    "lambda x: statistics.mode(tuple(float(v) for v in x[:3] if v == v))",
]


@pytest.mark.parametrize("src", SOURCES)
def test_agrees_with_python_window_by_window(src):
    py = eval(src, {"np": np, "math": math, "statistics": statistics})
    agrees_window_by_window(py, ndjit.jit_filter("import statistics\nf = " + src))


def agrees_window_by_window(py, f, among=None, at_least=50):
    """`f` (ndjit's) gives `py`'s value, or raises its exception class, on every window (of
    `among`, or [`windows`]); at least `at_least` windows give a value."""
    compared = 0
    for w in windows() if among is None else among:
        with np.errstate(all="ignore"):
            try:
                want = np.float64(py(w.copy()))
            except Exception as e:  # noqa: BLE001 - the same class is expected from ndjit
                with pytest.raises(type(e)):
                    f.evaluate(w.copy())
                continue
        got = np.float64(f.evaluate(w.copy()))
        assert got.tobytes() == want.tobytes() or (np.isnan(got) and np.isnan(want)), (w, got, want)
        compared += 1
    assert compared >= at_least, compared


def majority(x):
    return statistics.mode(x)


def test_a_majority_filter_through_scipy_and_the_driver():
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 4, size=(40, 50)).astype(np.float64)
    want = ndi.generic_filter(labels, majority, size=3)
    cb = ndjit.jit_filter(majority)
    np.testing.assert_array_equal(ndi.generic_filter(labels, cb, size=3), want)
    np.testing.assert_array_equal(ndjit.generic_filter(labels, majority, size=3), want)
    # uint8 labels in, uint8 out, as a segmentation's majority vote runs
    small = labels.astype(np.uint8)
    np.testing.assert_array_equal(ndjit.generic_filter(small, majority, size=5),
                                  ndi.generic_filter(small, majority, size=5))


def test_ties_go_to_the_first_seen_and_zeros_keep_the_first_sign():
    f = ndjit.jit_filter(majority)
    for w in ([2.0, 1.0, 1.0, 2.0], [-0.0, 0.0, 5.0], [0.0, 5.0, -0.0], [np.nan, np.nan, 3.0],
              [np.nan, 4.0], [3.0, 1.0, 2.0]):
        w = np.array(w)
        want = statistics.mode(w)
        got = f.evaluate(w)
        assert np.float64(got).tobytes() == np.float64(want).tobytes(), (w, got, want)


def test_no_data_raises_statistics_error():
    f = ndjit.jit_filter(lambda x: statistics.mode(x[x > 100]))
    with pytest.raises(statistics.StatisticsError, match="no mode for empty data") as e:
        f.evaluate(np.zeros(9))
    assert isinstance(e.value, ValueError)
    with pytest.raises(statistics.StatisticsError, match="no mode for empty data"):
        statistics.mode(np.zeros(9)[np.zeros(9) > 100])


def test_a_nan_in_a_list_raises_only_where_its_identity_decides():
    # CPython counts a NaN with the items that are the same object: [v, v] counts 2.
    nan = float("nan")
    assert math.isnan(statistics.mode([1.0, nan, nan]))
    assert statistics.mode([1.0, float("nan"), float("nan")]) == 1.0
    f = ndjit.jit_filter("import statistics\nf = lambda x: statistics.mode([v for v in x])\n")
    with pytest.raises(ValueError, match="same object"):
        f.evaluate(np.array([1.0, np.nan, np.nan]))
    # Where every way of sharing objects gives one answer, that is the answer: a NaN first
    # wins a tie of ones however the NaNs are shared; two zeros seen first beat two NaNs.
    assert math.isnan(f.evaluate(np.array([np.nan, 1.0, 2.0])))
    assert f.evaluate(np.array([2.0, 1.0, 2.0])) == 2.0
    g = ndjit.jit_filter("import statistics\nf = lambda x: 1 / statistics.mode(x.tolist())\n")
    window = np.array([0.0, 0.0, 1.0, 3.0, np.nan, 7.0, np.nan, 7.0, 1.0])
    with pytest.raises(ZeroDivisionError):
        1 / statistics.mode(window.tolist())
    with pytest.raises(ZeroDivisionError):
        g.evaluate(window)
    # An array's NaNs are new objects each: counted once, never refused.
    h = ndjit.jit_filter(majority)
    assert h.evaluate(np.array([1.0, np.nan, np.nan])) == statistics.mode(np.array([1.0, np.nan, np.nan]))


def test_mixed_python_and_numpy_items_refused():
    with pytest.raises(ndjit.FilterError, match="Python numbers and NumPy scalars"):
        ndjit.jit_filter("import statistics\ndef f(x):\n    return statistics.mode([x[0], 1.0])\n")


def test_from_import_and_alias():
    f = ndjit.jit_filter("from statistics import mode\ndef f(x):\n    return mode(x)\n")
    g = ndjit.jit_filter("import statistics as st\nf = lambda x: st.mode(x)\n")
    w = np.array([1.0, 3.0, 3.0, 1.0, 3.0])
    assert f.evaluate(w) == g.evaluate(w) == 3.0


def test_other_statistics_functions_still_name_what_ndjit_has():
    with pytest.raises(ndjit.FilterError, match="median, median_low, median_high and mode"):
        ndjit.jit_filter("import statistics\nf = lambda x: statistics.multimode(x)[0]\n")
