"""NumPy's broadcasting between the window and 2-D arrays.

A 2-D array (bound, or made by ``reshape``) met the 1-D window element-wise as its flat elements:
``x * W`` with ``W`` of shape ``(9, 1)`` gave the product of ``x`` and ``W.ravel()`` where NumPy
gives the ``(9, 9)`` outer product, and ``W`` of shape ``(3, 3)``, which NumPy refuses to broadcast
against ``(9,)``, was multiplied element by element. Each case below is CPython's result, or
NumPy's exception type.
"""
import itertools

import numpy as np
import pytest
from scipy import ndimage as ndi

import ndjit

X = np.arange(9.0) - 3.0
SHAPES = [(1, 1), (9, 1), (1, 9), (3, 3), (2, 9), (9, 9), (9, 2), (1, 3), (3, 1), (1,), (3,), (9,)]
OPS = [
    "np.sum(x * W)", "np.sum(W + x)", "np.sum(x > W)", "np.sum(np.maximum(x, W))", "np.sum(x[:3] * W)",
    "np.sum(np.where(x > 0, W, x))", "np.sum((x * W)[0])", "len(x * W) * 1.0", "np.mean(x - W)",
    "np.max(x * W)", "np.sum(W * W)", "np.sum(W[0] * x)", "np.sum(x[:1] * W)", "np.sum((x * W) * (W + 1))",
    "np.sum(np.abs(W - x) * 2.0)", "len(W + x[:1]) * 1.0",
]


def outcome(fn):
    try:
        return "value", float(fn())
    except Exception as e:  # noqa: BLE001 - the exception's type is the result compared
        return "raise", type(e).__name__.replace("Filter", "")


def weights(shape):
    return (np.arange(np.prod(shape)).reshape(shape) % 4 + 1).astype(float)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_the_window_broadcasts_against_bound_arrays_as_numpy_does(shape):
    w = weights(shape)
    wrong = []
    for op in OPS:
        want = outcome(lambda: eval(op, {"np": np, "x": X.copy(), "W": w}))
        got = outcome(lambda: ndjit.jit_filter("lambda x, W: " + op, extra_arguments=(w,)).evaluate(X.copy()))
        if got != want:
            wrong.append(f"{op}: NumPy {want}, ndjit {got}")
    assert not wrong, "\n".join(wrong)


COLUMN = np.arange(1.0, 10.0).reshape(9, 1)


def through_global(x):
    return np.sum(x * COLUMN)


def through_default(x, W=COLUMN):
    return np.sum(x * W)


def through_reshape(x):
    return np.sum(x * np.arange(1.0, 10.0).reshape(9, 1))


@pytest.mark.parametrize("f", [through_global, through_default, through_reshape], ids=lambda f: f.__name__)
def test_every_route_to_a_2d_array_broadcasts(f):
    a = np.arange(16.0).reshape(4, 4)
    want = ndi.generic_filter(a, f, size=3)
    assert np.array_equal(ndjit.generic_filter(a, f, size=3), want)
    # The flat reading (an inner product with the column's elements) gives other values.
    flat = ndi.generic_filter(a, lambda x: np.sum(x * np.arange(1.0, 10.0)), size=3)
    assert not np.array_equal(want, flat)


def test_shapes_numpy_cannot_broadcast_raise_value_error_at_run_time():
    f = ndjit.jit_filter("lambda x, W: np.sum(x * W)", extra_arguments=(weights((3, 3)),))
    with pytest.raises(ValueError, match="could not be broadcast"):
        f.evaluate(X.copy())
    # The extents are checked when the window's length is known: a 3-element window broadcasts.
    assert f.evaluate(X[:3].copy()) == float(np.sum(X[:3] * weights((3, 3))))


@pytest.mark.parametrize("a_shape, b_shape", list(itertools.product([(3, 3), (1, 3), (3, 1), (1, 1)], repeat=2)))
def test_two_2d_arrays_broadcast_axis_by_axis(a_shape, b_shape):
    a, b = weights(a_shape), weights(b_shape) * 0.5
    src = "lambda x, A, B: np.sum((A - B) * x[0]) + len(A * B)"
    want = outcome(lambda: eval(src)(X.copy(), a, b))
    got = outcome(lambda: ndjit.jit_filter(src, extra_arguments=(a, b)).evaluate(X.copy()))
    assert got == want
