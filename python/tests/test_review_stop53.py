"""NumPy semantics an adversarial review found differing at stop 53 (about 600,000 evaluations of
NumPy functions on edge-case windows against CPython + NumPy), each now NumPy's result or its
exception. `compare` runs the source through CPython + NumPy and through ndjit: None when they
agree bit for bit (or raise the same exception class)."""
import pytest

from test_int_or_float import compare

INF, NAN = float("inf"), float("nan")

CASES = [
    # An integer q takes the sorted value itself (NumPy's `supports_integers` path): no NaN from
    # infinities, no lost zero sign.
    ("np.quantile(x, 0)", [INF]),
    ("np.quantile(x, 0)", [-1e308, 1e308]),
    ("np.quantile(x, 0)", [-0.0, 1.0]),
    ("np.quantile(x, 1)", [INF, 1.0]),
    ("np.quantile(x, True)", [-0.0, 1.0]),
    ("np.quantile(x, False)", [INF, 2.0]),
    ("np.nanquantile(x, 0)", [-INF, 0.5, NAN]),
    ("np.nanquantile(x, 1)", [NAN, NAN]),
    ("np.quantile(x, 0)", [1.0, NAN]),
    ("np.quantile(x, [0, 1])[0]", [-INF, INF]),
    ("np.quantile(x, np.arange(2))[1]", [INF, 2.0]),
    ("np.quantile(x, len(x) // 100)", [-0.0, 3.0, 2.0]),
    ("int(np.nanquantile(x, 0))", [INF]),
    ("np.percentile(x, 0)", [INF]),  # q / 100 is a float: interpolated, as NumPy does
    # q = -0.0: NumPy's gamma is -0.0 (the previous index subtracted as an int).
    ("np.quantile(x, -0.0)", [-0.0, 1.0]),
    ("np.percentile(x, -0.0)", [-0.0, 1.0]),
    ("np.nanquantile(x, -0.0)", [-0.0, 1.0, NAN]),
    ("np.quantile(x, x[0])", [-0.0, 1.0]),
    ("np.quantile(x, [-0.0])[0]", [-0.0, 1.0]),
    # A percentile's range is checked after dividing by 100: -5e-324 / 100 is -0.0, in range.
    ("np.percentile(x, -5e-324)", [-0.0, 1.0]),
    ("np.percentile(x, x[0])", [-5e-324, 1.0]),
    ("np.nanpercentile(x, -2e-322)", [-0.0, 1.0]),
    ("np.percentile(x, -1e-300)", [-0.0, 1.0]),  # still out of range after dividing
    # np.arange's length, as NumPy's `_calc_length`.
    ("len(np.arange(0.0, x[0], x[1]))", [1e-300, 1e300]),
    ("len(np.arange(0.0, -x[0], x[1]))", [1e-300, 1e300]),
    ("len(np.arange(0.0, 1.0, x[0]))", [INF]),
    ("len(np.arange(0.0, -1.0, x[0]))", [INF]),
    ("len(np.arange(x[0], x[1]))", [INF, 0.0]),
    ("len(np.arange(x[0], x[1]))", [0.0, -INF]),
    ("len(np.arange(x[0], x[1]))", [1e308, -1e308]),
    ("len(np.arange(x[0], x[1]))", [2.0, 0.5]),
    # NumPy 2 converts only 0-d arrays to Python numbers; truth values take one element.
    ("float(x)", [2.5]),
    ("int(x[:1])", [3.0, 1.0]),
    ("float(x[x > 2])", [1.0, 2.5]),
    ("float(x)", [1.0, 2.0]),
    ("bool(x[:1])", [2.5]),
    ("bool(x[:0])", [2.5]),
    ("bool(x)", [1.0, 2.0]),
]


@pytest.mark.parametrize("src, window", CASES)
def test_numpy_semantics_found_by_the_stop_53_review(src, window):
    assert compare(f"def f(x):\n    return {src}\n", window) is None


MASKS = [
    # NumPy selects nothing with an empty boolean mask, whatever the array's length.
    ("np.sum(x[x[x < 0] > 0.5])", [2.0, 3.0]),
    ("len(x[x[x < 0] > 0.5])", [2.0]),
    ("np.min(x[x[x < 0] > 0.5])", [2.0]),  # then a zero-size reduction: ValueError
    ("len(x[np.isfinite(np.log1p(np.abs(x[1:])))])", [2.0]),
    ("len(x[x[:1] > 0])", [2.0, 3.0]),  # a mask of another non-zero length: IndexError
]


@pytest.mark.parametrize("src, window", MASKS)
def test_an_empty_mask_selects_nothing(src, window):
    assert compare(f"def f(x):\n    return {src}\n", window) is None


@pytest.mark.parametrize("window", [[2.0, 3.0], [1.0]])
def test_an_empty_mask_writes_nothing(window):
    src = "def f(x):\n    a = x.copy()\n    a[a[a < 0] > 0] = 7.0\n    return np.sum(a)\n"
    assert compare(src, window) is None


ARANGE = [
    # A zero step raises ZeroDivisionError only among Python numbers; with a NumPy scalar (a
    # window element) the length is NaN or infinite: NumPy's ValueErrors.
    ("len(np.arange(0, 10, x[0]))", [0.0]),
    ("len(np.arange(x[0], 1.0, 0))", [0.0]),
    ("len(np.arange(x[0], x[1], x[2]))", [1.0, 2.0, 0.0]),
    ("len(np.arange(x[0], x[0], 0))", [1.0]),
    ("len(np.arange(0, 10, int(x[0])))", [0.0]),
    ("len(np.arange(1.0, 1.0, 0.0 * len(x)))", [0.0]),
    # A length down to -2**63 is an empty array; below it, NumPy's ValueError.
    ("len(np.arange(0, -x[0]))", [9.21e18]),
    ("len(np.arange(x[0], -x[0]))", [4.6e18]),
    ("len(np.arange(0, -x[0]))", [9.3e18]),
]


@pytest.mark.parametrize("src, window", ARANGE)
def test_arange_lengths_as_numpy(src, window):
    assert compare(f"def f(x):\n    return {src}\n", window) is None
