"""np.argsort and .argsort(): NumPy's indices (NaN last) compared with NumPy itself on random
windows with ties, NaN and signed zeros; kind='stable' keeps ties in index order; the default kind
raises on ties, whose order NumPy leaves to its sort algorithm and the CPU."""
import numpy as np
import pytest

import ndjit

PROGRAMS = [
    "lambda x: np.argsort(x)[len(x) // 2]",
    "lambda x: float(np.argsort(x)[0] * 100 + np.argsort(x, kind='quicksort')[-1])",
    "lambda x: np.sum(np.argsort(x, kind='stable') * np.arange(len(x)))",
    "lambda x: np.sum(x.argsort(kind='mergesort') ** 2 * np.arange(len(x)))",
    "lambda x: x[np.argsort(x, kind='stable')][len(x) // 3]",
]


def windows(seed):
    rng = np.random.default_rng(seed)
    for trial in range(200):
        n = int(rng.choice([1, 2, 5, 9, 25]))
        w = np.round(rng.normal(size=n) * 2) / 2 if trial % 2 else rng.normal(size=n)
        if trial % 7 == 0:
            w[rng.integers(n)] = np.nan
        if trial % 5 == 0:
            w[rng.integers(n)] = -0.0
        yield w


@pytest.mark.parametrize("src", PROGRAMS)
def test_indices_equal_numpys(src):
    f = ndjit.jit_filter(src)
    py = eval(src, {"np": np})
    compared = refused = 0
    for w in windows(len(src)):
        want = py(w.copy())
        try:
            got = f.evaluate(w.copy())
        except ValueError as e:
            # Only the default kind refuses, and only with ties.
            assert "stable" not in src and "mergesort" not in src
            assert "equal values" in str(e)
            assert len(np.unique(w)) < len(w) or np.isnan(w).sum() > 1 or (w == 0).sum() > 1
            refused += 1
            continue
        assert np.float64(got).tobytes() == np.float64(want).tobytes(), (src, w, got, want)
        compared += 1
    assert compared > 100
    if "stable" in src or "mergesort" in src:
        assert refused == 0


@pytest.mark.parametrize("src,msg", [
    ("lambda x: np.argsort(x, kind='bogus')[0]", "sort kind must be one of"),
    ("lambda x: np.argsort(x.reshape(3, 3))[0, 0]", "2-D"),
    ("lambda x: np.argsort(x, kind=1)[0]", "kind is a string"),
])
def test_bad_arguments_are_refused(src, msg):
    with pytest.raises(ndjit.FilterCompileError, match=msg):
        ndjit.jit_filter(src)
