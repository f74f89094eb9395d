"""Bound 2-D arrays in Fortran order (a transposed kernel): NumPy adds them in memory order,
column by column; ndjit binds them row by row. Every sum that may meet one is refused, and
everything else computes NumPy's result (`src/lower/transposed.rs`)."""

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from ndjit._frontend import memory_order

RNG = np.random.default_rng(52)
# Magnitudes far apart, so that adding in another order changes the last bits.
IMG = RNG.standard_normal((7, 8)) * 10.0 ** RNG.integers(-6, 14, (7, 8))
_K = np.random.default_rng(6)  # a kernel whose sums in the two orders differ
K_C = _K.standard_normal((3, 3)) * 10.0 ** _K.integers(-6, 16, (3, 3))
K_F = np.asfortranarray(K_C)


def _summed_by_numpy_in_other_order(v):
    """Whether NumPy's sum of `v` differs from the sum of its C-order copy on some data."""
    for seed in range(50):
        r = np.random.default_rng(seed)
        base = r.standard_normal((12, 12)) * 10.0 ** r.integers(-8, 14, (12, 12))
        w = VIEWS[v](base)
        if np.sum(w) != np.sum(np.ascontiguousarray(w)):
            return True
    return False


VIEWS = {
    "c": lambda b: b[:3, :4],
    "transposed": lambda b: b[:3, :4].T,
    "stepped": lambda b: b[::3, ::2],
    "stepped transposed": lambda b: b[::2, ::3].T,
    "flipped transposed": lambda b: b[::-1].T,
    "flipped": lambda b: b[::-1, ::-1],
    "broadcast row": lambda b: np.broadcast_to(b[0], (12, 12)),
    "broadcast column": lambda b: np.broadcast_to(b[:, :1], (12, 12)),
    "one column": lambda b: b[:, :1],
    "one row transposed": lambda b: b[:1, :].T,
    "fortran": lambda b: np.asfortranarray(b),
}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_the_order_ndjit_reads_is_the_one_numpy_adds_in(view):
    w = VIEWS[view](np.zeros((12, 12)))
    assert (memory_order(w) == "F") == _summed_by_numpy_in_other_order(view)


def weighted(x, k):
    return np.sum(x.reshape(3, 3) * k)  # C times Fortran: NumPy lays the product out in C order


def transposed_back(x, k):
    return np.sum(k.T * x[0])  # the transpose of a Fortran array is in C order


def shape_and_items(x, k):
    return k.shape[0] + k[1, 2] * x[0] + k.size


def raveled(x, k):
    return np.sum(np.ravel(k) * x) + np.sum(k.ravel() * x)


def extremes(x, k):
    return np.max(k) + np.median(k) + x[0]


COMPILED = [weighted, transposed_back, shape_and_items, raveled, extremes]


def scaled(x, k):
    return np.sum(k * x[0])


def mean_abs(x, k):
    return np.mean(np.abs(k)) + x[0]


def method_sum(x, k):
    return k.sum() + x[0]


def renamed(x, k):
    m = k
    return np.sum(m) + x[0]


def rebound(x, k):
    k = k * 2.0
    return np.sum(k) + x[0]


REFUSED = [scaled, mean_abs, method_sum, renamed, rebound]


@pytest.mark.parametrize("func", [f for f in COMPILED if f is not transposed_back] + REFUSED,
                         ids=lambda f: f.__name__)
def test_a_c_order_kernel_computes_numpys_result(func):
    want = ndi.generic_filter(IMG, func, size=3, extra_arguments=(K_C,))
    f = ndjit.jit_filter(func, extra_arguments=(K_C,))
    np.testing.assert_array_equal(ndi.generic_filter(IMG, f, size=3), want, strict=True)


@pytest.mark.parametrize("func", COMPILED, ids=lambda f: f.__name__)
def test_a_fortran_kernel_computes_where_no_sum_adds_it_in_memory_order(func):
    want = ndi.generic_filter(IMG, func, size=3, extra_arguments=(K_F,))
    f = ndjit.jit_filter(func, extra_arguments=(K_F,))
    np.testing.assert_array_equal(ndi.generic_filter(IMG, f, size=3), want, strict=True)
    got = ndjit.generic_filter(IMG, func, size=3, extra_arguments=(K_F,))
    np.testing.assert_array_equal(got, want, strict=True)


@pytest.mark.parametrize("func", REFUSED, ids=lambda f: f.__name__)
def test_a_fortran_kernel_summed_is_refused(func):
    # Why: NumPy's result differs from the C-order sum ndjit would compute.
    assert not np.array_equal(ndi.generic_filter(IMG, func, size=3, extra_arguments=(K_F,)),
                              ndi.generic_filter(IMG, func, size=3, extra_arguments=(K_C,)))
    with pytest.raises(ndjit.FilterSyntaxError, match=r"`k` is bound to a 2-D array in Fortran order") as e:
        ndjit.jit_filter(func, extra_arguments=(K_F,))
    assert "np.ascontiguousarray(k)" in str(e.value)


def test_the_transpose_of_a_c_order_kernel_summed_is_refused():
    with pytest.raises(ndjit.FilterSyntaxError, match=r"`.T` of a 2-D array whose sum NumPy adds in memory order"):
        ndjit.jit_filter(transposed_back, extra_arguments=(K_C,))


KERNEL = K_F


def test_a_global_fortran_kernel_read_by_a_helper_is_refused_where_summed():
    def total(v):
        return np.sum(KERNEL * v)

    def via_helper(x):
        return total(x[0])

    with pytest.raises(ndjit.FilterSyntaxError, match="`KERNEL` is bound to a 2-D array in Fortran order"):
        ndjit.jit_filter(via_helper)

    def indexed(x):
        return KERNEL[0, 1] * x[0] + np.sum(KERNEL.T)

    want = ndi.generic_filter(IMG, indexed, size=3)
    np.testing.assert_array_equal(ndjit.generic_filter(IMG, indexed, size=3), want, strict=True)


def test_rebinding_another_order_compiles_anew():
    f = ndjit.jit_filter(scaled, extra_arguments=(K_C,))
    with pytest.raises(ndjit.FilterSyntaxError, match="`k` is bound to a 2-D array in Fortran order"):
        f.bind(k=K_F)
    g = ndjit.jit_filter(weighted, extra_arguments=(K_F,))
    for k in [K_C, np.asfortranarray(K_C * 2), K_C[:1], np.asfortranarray(K_C[:, :1])]:
        np.testing.assert_array_equal(ndi.generic_filter(IMG, g.bind(k=k), size=3),
                                      ndi.generic_filter(IMG, weighted, size=3, extra_arguments=(k,)),
                                      strict=True)
    # A C-order kernel of one row meets a Fortran one as NumPy's Fortran-order product.
    h = ndjit.jit_filter(lambda x, k, m: np.sum(k * m) + x[0], extra_arguments=(K_C, K_F))
    with pytest.raises(ndjit.FilterSyntaxError, match="`m` is bound to a 2-D array in Fortran order"):
        h.bind(k=K_C[:1])


class Cfg:
    k = K_F


def attribute_sum(x):
    return np.sum(Cfg.k) + x[0]


def test_a_fortran_kernel_read_as_an_attribute_is_refused_where_summed():
    # Found by the review of the fix: `Cfg.k` is bound under its dotted name, and was not followed.
    with pytest.raises(ndjit.FilterSyntaxError, match="`Cfg.k` is bound to a 2-D array in Fortran order"):
        ndjit.jit_filter(attribute_sum)


def broadcast_product(x, k, b):
    return np.sum(k * b) + x[0]


@pytest.mark.parametrize("b", [np.broadcast_to(np.ones(3), (3, 3)), np.broadcast_to(np.ones((3, 1)), (3, 3)),
                               np.broadcast_to(np.array(2.0), (3, 3))], ids=["row", "column", "scalar"])
def test_a_broadcast_operand_has_no_say_in_the_products_order(b):
    # A stride-0 axis decides nothing: NumPy lays `K_F * b` out in Fortran order.
    assert (K_F * b).flags.f_contiguous and memory_order(b) is None
    with pytest.raises(ndjit.FilterSyntaxError, match="`k` is bound to a 2-D array in Fortran order"):
        ndjit.jit_filter(broadcast_product, extra_arguments=(K_F, b))
    want = ndi.generic_filter(IMG, broadcast_product, size=3, extra_arguments=(K_C, b))
    got = ndjit.generic_filter(IMG, broadcast_product, size=3, extra_arguments=(K_C, b))
    np.testing.assert_array_equal(got, want, strict=True)
