"""NumPy's array functions in filters (issue 15, item 7), against NumPy run at test time.

Each callback runs three ways on images holding NaN, inf and zeros of both signs: scipy with the
plain Python function (the reference), scipy with ndjit's callable (the JIT), and ndjit's native
driver. All must match bit for bit, dot products (``@``, ``np.linalg.norm``) too: ndjit adds them in
the order of NumPy's BLAS (``tests/test_blas_dot.py``), and refuses products of matrices
(``tests/test_strided_dots.py``), written here as NumPy's pairwise sums.
"""
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

NBINS = 6
EDGES = np.array([-1.0, -0.25, 0.0, 0.5, 2.0])
LABELS = np.array([1.0, 3.0, -0.0])
W9 = np.arange(9.0) / 36.0


def majority(values):
    vals, counts = np.unique(values, return_counts=True)
    return vals[np.argmax(counts)]


def first_index_mode(values):
    vals, first = np.unique(values, return_index=True)
    return first[np.argmax(vals)] + 10.0 * len(vals)


def inverse_rank(values):
    vals, inv, counts = np.unique(values, return_inverse=True, return_counts=True)
    return inv[len(values) // 2] + 100.0 * counts.max()


def entropy_bound_bins(values):
    hist, _ = np.histogram(values, bins=NBINS, range=(-1.0, 1.0))
    p = hist / len(values)
    p = p[p > 0]
    return -np.sum(p * np.log2(p))


def histogram_auto(values):
    hist, edges = np.histogram(values[np.isfinite(values)], bins=NBINS)
    k = np.argmax(hist)
    return edges[k] + hist[k]


def histogram_edges(values):
    hist, edges = np.histogram(values, EDGES)
    return hist @ np.array([1, 10, 100, 1000]) + edges[1]


def column_sums(values):
    m = values.reshape(3, 3)
    return m.sum(axis=0)[0] * 3 + m.mean(axis=1)[2] - np.nanstd(m, axis=0).max()


def row_medians(values):
    m = values.reshape(3, 3)
    return np.median(m, axis=1).min() + np.argmax(m.max(axis=0)) + np.all(m > 0, axis=1).sum()


def where_nonzero_take(values):
    idx = np.where(values > 0)[0]
    if len(idx) == 0:
        return -1.0
    return values[idx].sum() + np.nonzero(values < 0)[0].size + values[[0, -1]].max()


def argwhere_centre(values):
    pts = np.argwhere(values.reshape(3, 3) > 0)
    return pts.sum() + len(pts)


def cumsum_roll_isin(values):
    c = np.cumsum(values)
    return c[-1] - c[0] + np.roll(values, 2)[0] + np.isin(values, LABELS).sum()


def r_concat(values):
    ring = np.r_[values[:4], values[5:]]
    return ring.max() - np.r_[values[4], 0.0][0]


def norms(values):
    return np.linalg.norm(values) + np.linalg.norm(values, 1) + np.linalg.norm(values, np.inf)


def matmul(values):
    m = values.reshape(3, 3)
    return values @ W9 + np.sum(m * np.array([1.0, 0.0, -1.0]), axis=1).sum()


EXACT = [majority, first_index_mode, inverse_rank, entropy_bound_bins, histogram_auto, histogram_edges,
         column_sums, row_medians, where_nonzero_take, argwhere_centre, cumsum_roll_isin, r_concat,
         norms, matmul]


def image(rng, kind):
    if kind == "labels":
        return rng.integers(0, 4, (16, 17)).astype(float)
    a = np.round(rng.normal(0.0, 0.8, (16, 17)), 1)
    if kind == "special":
        hits = rng.random(a.shape) < 0.15
        a[hits] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], hits.sum())
    return a


@pytest.mark.parametrize("func", EXACT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("kind", ["labels", "normal", "special"])
def test_filters_match_scipy_running_python(func, kind, rng):
    img = image(rng, kind)
    if func is histogram_auto and kind == "labels":
        img[0, 0] = np.inf  # an infinite value filtered out before the histogram
    try:
        jit = ndi.generic_filter(img, ndjit.jit_filter(func), size=3, mode="reflect")
        native = ndjit.generic_filter(img, func, size=3, mode="reflect")
    except ValueError as e:
        # NumPy's min/max/sort/quantile chose between a 0.0 and a -0.0 by its SIMD code, which
        # ndjit refuses to guess (src/ir/zero_signs.rs); with every zero 0.0, nothing is refused.
        assert "both 0.0 and -0.0" in str(e), e
        assert np.signbit(img[img == 0]).any() and not np.signbit(img[img == 0]).all()
        img = img + 0.0
        jit = ndi.generic_filter(img, ndjit.jit_filter(func), size=3, mode="reflect")
        native = ndjit.generic_filter(img, func, size=3, mode="reflect")
    want = ndi.generic_filter(img, func, size=3, mode="reflect")
    for got in (jit, native):
        assert_bits(got, want)


def assert_bits(got, want):
    """NaN where NumPy has NaN, NumPy's bits elsewhere (signed zeros included)."""
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint64), want[~nan].view(np.uint64))


def bits(v):
    v = np.float64(v)
    return "nan" if np.isnan(v) else v.tobytes().hex()


def test_unique_keeps_the_first_zero_with_return_index_and_refuses_mixed_zeros_without():
    # With return_index NumPy sorts stably and keeps the input's first zero; without, which zero
    # its sort leaves first is its SIMD code's choice (a 3x3 window of mixed zeros showed the
    # other one), so ndjit refuses mixed zeros there, as for np.sort.
    plain = ndjit.jit_filter(lambda x: np.unique(x)[0])
    indexed = ndjit.jit_filter(lambda x: np.unique(x, return_index=True)[0][0])
    for combo in ([-0.0, 0.0, 1.0], [0.0, -0.0, 1.0], [1.0, -0.0, 0.0, -0.0], [np.nan, 0.0, -0.0]):
        a = np.array(combo)
        want = bits(np.unique(a, return_index=True)[0][0])
        assert bits(indexed.evaluate(a)) == want, combo
        assert bits(indexed.interpret(a)) == want, combo
        for run in (plain.evaluate, plain.interpret):
            with pytest.raises(ValueError, match="both 0.0 and -0.0"):
                run(a)
    one_sign = np.array([-0.0, 1.0, -0.0])
    assert bits(plain.evaluate(one_sign)) == bits(np.unique(one_sign)[0])


def test_unique_collapses_nans_unless_asked_not_to():
    a = np.array([np.nan, 2.0, np.nan, 1.0, np.nan])
    count = ndjit.jit_filter(lambda x: len(np.unique(x)) + 10 * len(np.unique(x, equal_nan=False)))
    assert count.evaluate(a) == len(np.unique(a)) + 10 * len(np.unique(a, equal_nan=False))
    counts = ndjit.jit_filter(lambda x: np.unique(x, return_counts=True)[1][-1])
    assert counts.evaluate(a) == np.unique(a, return_counts=True)[1][-1] == 3


NB = 3
ZERO_BINS = 0
DIGITS = 10.0 ** np.arange(10)
ONES4 = np.ones(4)


def test_histogram_of_values_within_an_ulp_of_the_edges():
    # NumPy's corrections move values the division puts in the wrong bin; check every edge.
    def hist(values):
        return np.histogram(values, bins=NB, range=(0.1, 0.7))[0] @ DIGITS[:NB]

    f = ndjit.jit_filter(hist)
    for nb in (3, 7, 10):
        edges = np.linspace(0.1, 0.7, nb + 1)
        near = np.concatenate([edges, np.nextafter(edges, -1), np.nextafter(edges, 2)])
        g = f.bind(NB=nb)
        for start in range(0, len(near) - 5, 5):
            a = near[start:start + 5]
            want = np.histogram(a, bins=nb, range=(0.1, 0.7))[0] @ (10.0 ** np.arange(nb))
            assert g.evaluate(a) == want, (nb, a)


@pytest.mark.parametrize("func", [
    lambda x: x[[0, 12]].sum(),
    lambda x: x[[-4]].sum(),
    lambda x: np.histogram(x, bins=ZERO_BINS)[0][0],
    lambda x: np.histogram(x, bins=np.array([0.0, 1.0, 0.5]))[0][0],
    lambda x: np.histogram(x, bins=4)[0][0],
    lambda x: np.histogram(x, bins=4, range=(1.0, 0.0))[0][0],
    lambda x: x @ ONES4,
    lambda x: np.linalg.norm(x[:0], -np.inf),
])
def test_run_time_errors_are_numpys(func):
    a = np.array([1.0, np.nan, 3.0])
    with pytest.raises(Exception) as want:
        func(a)
    with pytest.raises(type(want.value)) as got:
        ndjit.jit_filter(func).evaluate(a)
    if isinstance(want.value, IndexError):
        assert str(want.value) in str(got.value)


def test_unique_refuses_integers_it_cannot_sort_exactly():
    f = ndjit.jit_filter(lambda x: np.unique(x.astype(int))[0])
    assert f.evaluate(np.array([2.0 ** 53, 1.0])) == 1.0
    with pytest.raises(ValueError, match="2\\*\\*53"):
        f.evaluate(np.array([2.0 ** 60, 1.0]))


def test_compile_errors_point_at_the_call():
    with pytest.raises(ndjit.FilterTypeError) as e:
        ndjit.jit_filter("lambda x: x @ 2.0")
    assert "matmul" in str(e.value) and "^" in str(e.value)
    with pytest.raises((ndjit.FilterSyntaxError, ndjit.FilterTypeError)) as e:
        ndjit.jit_filter("lambda x: np.linalg.norm(x, 3)")
    assert "ord" in str(e.value) and "^" in str(e.value)


CUMULATIVE_ALONG_AXES = [
    "lambda x: np.sum(np.cumsum(x.reshape(3, 3), axis=0) * np.arange(9).reshape(3, 3))",
    "lambda x: np.sum(np.cumsum(x.reshape(3, 3), axis=1) * np.arange(9).reshape(3, 3))",
    "lambda x: np.sum(np.cumsum(x.reshape(3, 3), -2)[2] * np.arange(3))",
    "lambda x: np.cumprod(x.reshape(3, 3), axis=-1)[1, 2]",
    "lambda x: np.cumsum(x.reshape(3, 3).astype(int), axis=0)[2, 1] * 1.0",
    "lambda x: np.cumsum(x.reshape(3, 3))[7]",
]


@pytest.mark.parametrize("src", CUMULATIVE_ALONG_AXES)
def test_cumulative_sums_along_an_axis_equal_numpys(src):
    """Each column (axis 0) or row (axis 1) accumulates on its own, in NumPy's order; without an
    axis the flattened array does (signed zeros and NaN included)."""
    f = ndjit.jit_filter(src)
    py = eval(src, {"np": np})
    rng = np.random.default_rng(len(src))
    for k in range(60):
        w = rng.normal(size=9) * 3
        if k % 5 == 0:
            w[rng.integers(9)] = -0.0
        if k % 7 == 0 and "astype" not in src:
            w[rng.integers(9)] = np.nan
        want = py(w.copy())
        got = f.evaluate(w.copy())
        assert np.float64(got).tobytes() == np.float64(want).tobytes(), (src, w, got, want)


@pytest.mark.parametrize("src", ["lambda x: np.cumsum(x.reshape(3, 3), axis=2)[0, 0]",
                                 "lambda x: np.cumsum(x, axis=1)[0]"])
def test_cumulative_sums_along_a_missing_axis_are_refused(src):
    with pytest.raises(ndjit.FilterCompileError, match="out of bounds for array of dimension"):
        ndjit.jit_filter(src)


SEVERAL_QUANTILES = [
    "lambda x: np.percentile(x, [75, 25])[0] - np.percentile(x, [75, 25])[1]",
    "lambda x: np.sum(np.quantile(x, np.array([0.1, 0.5, 0.9])) * np.array([1.0, 10.0, 100.0]))",
    "lambda x: np.nanpercentile(x, [10, 90]).sum()",
    "lambda x: len(np.percentile(x, (5, 50, 95))) * 1000 + np.percentile(x, (5, 50, 95))[2]",
]


@pytest.mark.parametrize("src", SEVERAL_QUANTILES)
def test_several_quantiles_at_once_equal_numpys(src):
    f = ndjit.jit_filter(src)
    py = eval(src, {"np": np})
    rng = np.random.default_rng(len(src))
    for k in range(100):
        w = rng.normal(size=9)
        if k % 5 == 0:
            w[rng.integers(9)] = np.nan
        with np.errstate(all="ignore"):
            want = py(w.copy())
        assert np.float64(f.evaluate(w.copy())).tobytes() == np.float64(want).tobytes(), (src, w)


def test_every_q_is_checked_before_any_is_computed():
    src = "lambda x: np.percentile(x, [75, 125])[0]"
    with pytest.raises(ValueError, match=r"Percentiles must be in the range \[0, 100\]"):
        eval(src, {"np": np})(np.arange(9.0))
    with pytest.raises(ValueError, match=r"Percentiles must be in the range \[0, 100\]"):
        ndjit.jit_filter(src).evaluate(np.arange(9.0))
