"""`np.clip` and the array method `.clip` take their bounds as NumPy does, each its own way:
the method's `min` and `max` both optional (one given is `np.maximum`/`np.minimum`, which keep
the bound of two equal zeros; none is `np.positive`, the values themselves), the function's
`a_min` and `a_max` both or neither (then its keywords `min` and `max`). Against CPython running
the same function through scipy and through ndjit's own driver, values and signs of zeros; and
the calls NumPy rejects, refused at compile time with NumPy's message."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter


def _image():
    rng = np.random.default_rng(20261203)
    image = rng.choice([0.1, -0.3, 0.6, 0.9, 0.0, -0.0, 2.0, -1.0, 5.0], size=(7, 8))
    image[2, 3] = np.nan
    return image


IMAGE = _image()

SOURCES = [
    # the method with one bound: np.maximum / np.minimum, -0.0 against 0 kept as the bound
    "def f(x):\n    return x.clip(min=0).sum()\n",
    "def f(x):\n    return x.clip(0)[4]\n",
    "def f(x):\n    return np.copysign(1.0, x.clip(0.0)[4]) + x.clip(max=0.5).sum()\n",
    "def f(x):\n    return x.clip(None, 1.0).sum() + x.clip(-0.5, None)[7]\n",
    "def f(x):\n    return np.copysign(3.0, x.clip(max=0.0)[4])\n",
    # no bounds: the values themselves, -0.0 and NaN kept
    "def f(x):\n    return np.copysign(2.0, x.clip()[4]) + x.clip(None, None)[0]\n",
    "def f(x):\n    return np.copysign(2.0, np.clip(x[4])) + np.clip(x, None, None)[1]\n",
    # the function's keywords when neither a_min nor a_max is given
    "def f(x):\n    return np.clip(x, min=0.0).sum() + np.clip(x, max=0.2).sum()\n",
    "def f(x):\n    return np.copysign(1.0, np.clip(x[4], min=0.0, max=1.0))\n",
    "def f(x):\n    return np.clip(x, a_min=-0.2, a_max=0.7).sum() + np.clip(x, 0, None)[4]\n",
    # a number's own method and NumPy's ints
    "def f(x):\n    return np.float64(x[4]).clip(0.0) + np.int64(3).clip(max=2)\n",
    "def f(x):\n    return float(np.argmax(x).clip(2, 5)) / 3\n",
    # bools clipped by bools stay bools (an or, an and): a mask, `+ True` an or, `~` a not
    "def f(x):\n    return x[np.clip(x > 0, False, True)].sum()\n",
    "def f(x):\n    return np.sum(np.clip(x > 0, False, True) + True) + np.sum(np.clip(True, False, True) & (x > 1))\n",
    "def f(x):\n    return ((x > 0).clip(False) + True)[2] * 2 + ((x > 0).clip(max=True) + True)[0]\n",
    "def f(x):\n    return np.sum(np.clip(x > 0, min=x > 0.5) + True) + ~np.clip(x[2] > 0, False, True)\n",
    "def f(x):\n    return np.clip(x > 0, False, True) @ np.ones(len(x))\n",
    "def f(x):\n    return np.sum(np.sort(np.clip(x > 0, x > 0.5, x < 1)) + True)\n",
    # one value with array bounds: ints and bools have no zeros to tell apart, so no refusal
    "def f(x):\n    return np.clip(np.arange(3)[:1] + np.argmax(x), 0, np.arange(1) + 2)[0]\n",
    "def f(x):\n    return np.clip(x[:1] > 0, x[1:2] > 0, True)[0] * 3 + np.clip(x[4:5] > 0, 0, np.arange(1))[0]\n",
]


@pytest.mark.parametrize("source", SOURCES)
def test_agrees_with_python(source):
    namespace = {"np": np}
    exec(compile(source, "<test>", "exec"), namespace)
    want, error = python_generic_filter(IMAGE, namespace["f"], size=3)
    assert error is None, error
    cb = ndjit.jit_filter(source)
    for got in (ndi.generic_filter(IMAGE, cb, size=3), ndjit.generic_filter(IMAGE, cb, size=3)):
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


# Each call raises in NumPy; ndjit refuses it at compile time with NumPy's reason.
REFUSED = [
    ("np.clip(x, 0.0)", TypeError, "missing 1 required positional argument: 'a_max'"),
    ("np.clip(x, a_min=0.0)", TypeError, "missing 1 required positional argument: 'a_max'"),
    ("np.clip(x, a_max=1.0)", TypeError, "missing 1 required positional argument: 'a_min'"),
    ("np.clip(x, 0.0, 1.0, min=0.0)", ValueError, "is forbidden"),
    ("np.clip(x, a_min=0.0, a_max=1.0, max=2.0)", ValueError, "is forbidden"),
    ("x.clip(a_min=0.0)", TypeError, "unexpected keyword argument 'a_min'"),
    ("x.clip(0.0, a_max=1.0)", TypeError, "unexpected keyword argument 'a_max'"),
    ("x.clip(0.0, min=1.0)", TypeError, "multiple values for argument 'min'"),
    ("(x > 0.5).clip()", TypeError, "positive"),
    ("np.clip(x[0] > 0.5)", TypeError, "positive"),
    ("-np.clip(x[2] > 0, False, True)", TypeError, "boolean negative"),
    ("np.clip(x > 0, False, True) - True", TypeError, "boolean subtract"),
    ("np.clip(x > 0, False, True).clip()", TypeError, "positive"),
]


@pytest.mark.parametrize("call, numpy_error, numpy_message", REFUSED)
def test_calls_numpy_rejects_are_refused(call, numpy_error, numpy_message):
    window = IMAGE[:3, :3].ravel()
    with pytest.raises(numpy_error, match=numpy_message.replace("(", r"\(").replace(")", r"\)")):
        eval(call, {"np": np, "x": window})
    with pytest.raises(ndjit.FilterError):
        ndjit.jit_filter(f"def f(x):\n    return np.sum({call})\n")


@pytest.mark.parametrize("call, message", [
    ("np.clip(x, 0.0)", "'a_max'"),
    ("np.clip(x, a_max=1.0)", "'a_min'"),
    ("np.clip(x, 0.0, 1.0, min=0.0)", "forbidden"),
    ("(x > 0.5).clip()", "booleans"),
])
def test_refusals_say_why(call, message):
    with pytest.raises(ndjit.FilterError, match=message) as info:
        ndjit.jit_filter(f"def f(x):\n    return np.sum({call})\n")
    assert "2:" in str(info.value), "the refusal is located in the source"


@pytest.mark.parametrize("expr", [
    "np.clip(x > 0, False, True)[2] + True",
    "np.clip(True, False, True) + True",
    "np.clip(x > 0, False, True) @ np.clip(x > 0, False, True)",
])
def test_bools_clipped_by_bools_are_never_taken_as_ints(expr):
    # NumPy's bool + bool is an or and its bool @ bool an any; these once computed 2 and 5, the
    # clipped bools taken as ints. A bool's `+`/`@` is refused as it is for any NumPy bool.
    window = IMAGE[:3, :3].ravel()
    assert isinstance(eval(expr, {"np": np, "x": window}), np.bool_)
    with pytest.raises(ndjit.FilterError, match="bool"):
        ndjit.jit_filter(f"lambda x: {expr}")
