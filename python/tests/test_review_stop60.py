"""Findings of stop 60's hunts, each a test against CPython + NumPy running the same function.

A cumulative sum along an axis of a transposed array keeps its layout: NumPy's result is in
Fortran order, so a sum of it adds column by column, where ndjit's C-order result adds row by
row (`src/lower/transposed.rs`). Refused where such a sum may meet it; without an axis the
cumulative sum is 1-D and computes."""
import numpy as np
import pytest

import ndjit

# Magnitudes far apart, so that adding in another order changes the last bits.
WINDOW = np.array([1.0, 0.0, 0.0, 1e16, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("src", [
    "lambda x: np.sum(np.cumsum(x.reshape(3, 4).T, axis=0))",
    "lambda x: np.sum(np.cumsum(x.reshape(3, 4).T, 1))",
    "lambda x: np.mean(np.cumprod(x.reshape(2, 6).T, 1))",
    "lambda x: np.prod(np.cumsum(x.reshape(3, 4).T, axis=1))",
    "lambda x: x.reshape(3, 4).T.cumsum(0).sum()",
    "lambda x: np.sum(x.reshape(3, 4).T.cumprod(1) * 2.0)",
])
def test_a_cumulative_sum_along_an_axis_of_a_transpose_summed_is_refused(src):
    with pytest.raises(ndjit.FilterError, match="order"):
        ndjit.jit_filter(src)


def test_why_numpy_adds_it_in_another_order():
    c = np.cumsum(WINDOW.reshape(3, 4).T, axis=0)
    assert c.flags.f_contiguous and not c.flags.c_contiguous
    assert np.sum(c) != np.sum(np.ascontiguousarray(c))


@pytest.mark.parametrize("src", [
    "lambda x: np.sum(np.cumsum(x.reshape(3, 4).T))",
    "lambda x: np.cumsum(x.reshape(3, 4).T, axis=0)[2, 1]",
    "lambda x: np.max(np.cumsum(x.reshape(3, 4).T, axis=1))",
    "lambda x: np.sum(np.cumsum(x.reshape(3, 4), axis=0))",
])
def test_the_cumulative_sums_next_to_them_compute_numpys_result(src):
    f = ndjit.jit_filter(src)
    py = eval(src, {"np": np})
    rng = np.random.default_rng(60)
    for w in [WINDOW] + [rng.standard_normal(12) * 10.0 ** rng.integers(-8, 16, 12) for _ in range(200)]:
        want = np.float64(py(w.copy()))
        assert np.float64(f.evaluate(w.copy())).tobytes() == want.tobytes(), (src, w)


@pytest.mark.parametrize("src", [
    "lambda x: np.average(x.reshape(3, 4), axis=0)[1]",
    "lambda x: np.flip(x.reshape(3, 4), axis=1)[0, 0]",
])
def test_an_axis_not_taken_is_refused_without_calling_a_2d_array_1d(src):
    np.float64(eval(src, {"np": np})(WINDOW))  # NumPy computes it
    with pytest.raises(ndjit.FilterError, match="along an axis is not supported") as e:
        ndjit.jit_filter(src)
    assert "buffer is 1-D" not in str(e.value)


def test_scipy_gives_a_compiled_filter_no_extra_arguments():
    # scipy hands `extra_arguments` to Python callbacks only, never to a LowLevelCallable (a
    # Numba cfunc neither): a compiled filter keeps the values it was compiled with, which is
    # why the README says to bind them with jit_filter or to call ndjit.generic_filter.
    import scipy.ndimage as ndi

    def f(x, k=0):
        return x[k]

    img = np.arange(25.0).reshape(5, 5)
    compiled = ndi.generic_filter(img, ndjit.jit_filter(f), size=3, extra_arguments=(4,))
    assert np.array_equal(compiled, ndi.generic_filter(img, f, size=3, extra_arguments=(0,)))
    bound = ndi.generic_filter(img, ndjit.jit_filter(f, extra_arguments=(4,)), size=3)
    assert np.array_equal(bound, ndi.generic_filter(img, f, size=3, extra_arguments=(4,)))
    with pytest.raises(TypeError):
        ndjit.generic_filter(img, ndjit.jit_filter(f), size=3, extra_arguments=(4,))
