"""Float dot products in the order of NumPy's BLAS (README, *Known deviations*).

`np.dot`, `@` and `np.linalg.norm` of float64 vectors call OpenBLAS's `ddot`, whose kernel (and
so the last bits) depends on the CPU. At import ndjit asks NumPy which of the two orders it
reproduces is NumPy's (`ndjit/_blas.py`); where neither is, float dot products are refused.
Either way the checks below assert something: NumPy's bits, or the refusal."""
import numpy as np
import pytest
from scipy import ndimage as ndi

import ndjit
from ndjit import _core

KNOWN = _core.dot_order() != "unknown"
DOT = "lambda w: np.dot(w[:len(w) // 2], w[len(w) // 2:])"
MATMUL = "lambda w: w[:len(w) // 2] @ w[len(w) // 2:]"
NORM = "lambda w: np.linalg.norm(w)"


def python(src):
    return eval(src, {"np": np})


def bits(v):
    return np.float64(v).view(np.uint64)


def windows(seed):
    rng = np.random.default_rng(seed)
    for n in list(range(1, 70)) + [96, 128, 131, 200]:
        yield rng.standard_normal(2 * n) * 2.0 ** rng.integers(-20, 20, size=2 * n)


def test_the_probe_found_numpys_order_on_this_machine():
    if not KNOWN:
        with pytest.raises(ndjit.FilterSyntaxError, match="order ndjit does not know"):
            ndjit.jit_filter(DOT)
        return
    assert _core.dot_order() in ("skylakex", "haswell")


@pytest.mark.parametrize("src", [DOT, MATMUL, NORM])
def test_dot_products_are_numpys_bit_for_bit(src):
    if not KNOWN:
        with pytest.raises(ndjit.FilterSyntaxError, match="order ndjit does not know"):
            ndjit.jit_filter(src)
        return
    f, py = ndjit.jit_filter(src), python(src)
    differ_from_pairwise = 0
    for w in windows(11):
        want = py(w)
        for call in (f.evaluate, f.interpret):
            assert bits(call(w)) == bits(want), (src, len(w))
        if src == DOT:
            half = len(w) // 2
            differ_from_pairwise += bits(np.sum(w[:half] * w[half:])) != bits(want)
    # The vectors tell BLAS's order from NumPy's pairwise sum (what ndjit computed before).
    assert src != DOT or differ_from_pairwise > 10


def test_one_pair_keeps_numpys_zero():
    if not KNOWN:
        pytest.skip("float dot products are refused here (checked above)")
    w = np.array([-0.0, 1.0])
    for src in (DOT, MATMUL):
        assert bits(ndjit.jit_filter(src).evaluate(w)) == bits(python(src)(w)), src


def test_a_weighted_filter_through_scipy_and_the_driver_is_numpys():
    weights = np.random.default_rng(3).standard_normal(25)

    def weighted(x):
        return np.dot(x, weights)

    image = np.random.default_rng(4).standard_normal((40, 30)) * 1e3
    if not KNOWN:
        with pytest.raises(ndjit.FilterSyntaxError):
            ndjit.jit_filter(weighted)
        return
    want = ndi.generic_filter(image, weighted, size=5)
    f = ndjit.jit_filter(weighted)
    for got in (ndi.generic_filter(image, f, size=5), ndjit.generic_filter(image, f, size=5)):
        assert np.array_equal(bits(got), bits(want))


def test_past_ten_thousand_values_a_dot_product_raises():
    if not KNOWN:
        pytest.skip("float dot products are refused here (checked above)")
    f = ndjit.jit_filter("lambda x: np.dot(x, x)")
    assert f.evaluate(np.ones(10_000)) == 10_000.0
    with pytest.raises(ValueError, match="past 10000 values OpenBLAS splits it"):
        f.evaluate(np.ones(10_001))


def test_an_unknown_order_refuses_and_names_the_exact_alternative():
    saved = _core.dot_order()
    _core.set_dot_order("unknown")
    try:
        with pytest.raises(ndjit.FilterSyntaxError, match=r"np.sum\(a \* b\)"):
            ndjit.jit_filter("lambda x: np.dot(x[::-1], x) + 0.5")
        # Integers add exactly in any order.
        f = ndjit.jit_filter("lambda x: float(np.dot(x.astype(int), x.astype(int))) + 0.25")
        assert f.evaluate(np.array([1.0, 2.0, 3.0])) == 14.25
    finally:
        _core.set_dot_order(saved)
    with pytest.raises(ValueError, match="no dot order"):
        _core.set_dot_order("pairwise")
