"""copysign of a NaN's sign (README, *Known deviations*). NumPy and CPython copy a NaN's sign bit,
and which sign a NaN has is how it was made (`np.sqrt(-1.0)` is negative on x86) or which of its
values' NaNs a function passed on (`np.percentile`); ndjit's arithmetic and runtime routines do not
carry those signs, and a sort orders NaNs its own way. So where the sign operand may be such a NaN,
a NaN there raises ValueError; where every NaN it can be is the input's, moved (read, selected,
negated), the result is NumPy's, bit for bit. Found by the differential fuzzer (stop 73, seed 2026120673, program 18811), where
ndjit returned 0.707 and CPython raised. A copysign whose value no use reads the sign of
(unused, or only through `abs` or `np.isnan`) gets no guard (stop 74)."""
import math

import numpy as np
import pytest
from scipy import ndimage as ndi

import ndjit

MADE = [  # the sign operand may be a NaN arithmetic or a function made: guarded
    "lambda x: np.copysign(1.0, np.sqrt(x[0]))",
    "lambda x: math.copysign(2.0, x[0] - x[1])",
    "lambda x: np.copysign(0.5, np.percentile(np.sqrt(x), 90))",
    "lambda x: np.sum(np.copysign(1.0, x * 2.0) * np.arange(len(x)))",
    # a sort orders its NaNs as its algorithm does, NumPy's another way
    "lambda x: np.copysign(1.0, np.sort(x)[3])",
]
MOVED = [  # every NaN it can be is the input's: NumPy's sign
    "lambda x: np.copysign(1.0, x[0])",
    "lambda x: np.copysign(1.0, -x[2])",
    "lambda x: np.sum(np.copysign(1.0, x) * np.arange(len(x)))",
    "lambda x: np.copysign(x, x[::-1])[2]",
    "lambda x: math.copysign(3.0, x[1] if x[0] > 0 else x[3])",
]
NAN = np.float64(np.nan)
NEG_NAN = -NAN


def python(src):
    return eval(src, {"np": np, "math": math})


def bits(v):
    return np.float64(v).view(np.uint64)


@pytest.mark.parametrize("src", MADE + MOVED)
def test_copysign_without_nan_is_numpys_bit_for_bit(src):
    f, py = ndjit.jit_filter(src), python(src)
    # Zeros of one sign a window (a sort of both raises: README, *Known deviations*).
    for w in ([4.0, 1.0, 0.0, 2.5], [-0.0, 3.0, 9.0, 1e300], [3.0, 0.25, 0.0, 0.5], [1.0, 2.0, -0.0, 7.0]):
        w = np.array(w)
        want = float(py(w))
        for call in (f.evaluate, f.interpret):
            assert bits(call(w)) == bits(want), (src, w)


@pytest.mark.parametrize("src", MADE)
def test_copysign_of_a_nan_that_was_made_raises_value_error(src):
    f = ndjit.jit_filter(src)
    # A NaN each form makes: sqrt of a negative, inf - inf, inf * 0.
    w = np.array([np.inf, np.inf, 1.0, 2.0]) if "x[1]" in src else np.array([-1.0, np.inf, 0.5, np.inf])
    if "x * 2.0" in src or "np.sort" in src:
        w = np.array([1.0, np.nan, 0.5, 2.0])
    for call in (f.evaluate, f.interpret):
        with pytest.raises(ValueError, match="copysign of a NaN made by arithmetic"):
            call(w)


@pytest.mark.parametrize("src", MOVED)
def test_copysign_of_the_inputs_nan_is_numpys(src):
    f, py = ndjit.jit_filter(src), python(src)
    for w in ([NAN, 1.0, NEG_NAN, 2.0], [NEG_NAN, -0.0, NAN, 5.0], [NEG_NAN, NEG_NAN, NEG_NAN, NEG_NAN]):
        w = np.array(w)
        want = float(py(w))
        for call in (f.evaluate, f.interpret):
            assert bits(call(w)) == bits(want), (src, w)


def test_images_raise_or_agree_through_every_face():
    made, moved = "lambda x: np.copysign(1.0, np.median(x))", "lambda x: np.copysign(1.0, x[4])"
    image = np.arange(36.0).reshape(6, 6) - 10.0
    image[3, 3] = np.nan
    f = ndjit.jit_filter(made)
    for run in (lambda: ndjit.generic_filter(image, f, size=3), lambda: ndi.generic_filter(image, f, size=3)):
        with pytest.raises(ValueError, match="copysign of a NaN made by arithmetic"):
            run()
    image[2, 2] = NEG_NAN
    g = ndjit.jit_filter(moved)
    want = ndi.generic_filter(image, python(moved), size=3)
    for got in (ndjit.generic_filter(image, g, size=3), ndi.generic_filter(image, g, size=3)):
        assert np.array_equal(bits(got), bits(want))


UNREAD = [  # the copysign's value reaches no use that reads its sign: nothing is refused
    "def f(x):\n    c = np.copysign(0.5, x.sum())\n    return x[0]",
    "def f(x):\n    c = math.copysign(2.0, np.sqrt(x[0]))\n    return abs(c) + x[1]",
    "def f(x):\n    c = np.copysign(1.0, x * 2.0)\n    return float(np.isnan(c).sum())",
]


def defined(src):
    scope = {"np": np, "math": math}
    exec(src, scope)
    return scope["f"]


@pytest.mark.parametrize("src", UNREAD)
def test_a_copysign_whose_sign_no_use_reads_runs_where_cpython_does(src):
    f, py = ndjit.jit_filter(src), defined(src)
    # Windows whose sign operand is a NaN arithmetic made (the sum of an inf and -inf, sqrt of
    # a negative), and one without.
    for w in ([-1.0, np.inf, -np.inf, 2.0], [-4.0, np.nan, 3.0, 1.0], [4.0, 1.0, 0.5, 2.0]):
        w = np.array(w)
        want = float(py(w))
        for call in (f.evaluate, f.interpret):
            assert bits(call(w)) == bits(want), (src, w)
    # Read, it is refused again.
    read = src.replace("return x[0]", "return c").replace("return abs(c) + x[1]", "return c + x[1]")
    read = read.replace("np.isnan(c).sum()", "c.sum()")
    with pytest.raises(ValueError, match="copysign of a NaN made by arithmetic"):
        ndjit.jit_filter(read).evaluate(np.array([-1.0, np.nan, -np.inf, 2.0]))
