"""The methods that change a list in place (`.append`, `.extend`, `.insert`, `.pop`, `.remove`,
`.clear`, `.sort`, `.reverse`), against CPython running the same function through scipy and
through ndjit's own driver: the values, their kinds (Python's or NumPy's), the exceptions
(`pop from empty list`, `list.remove(x): x not in list` ...) and their order; and the forms ndjit
refuses, each with the reason (a second name for the list, a call inside a larger expression).
An array's `.sort()` is NumPy's: `test_sort_in_place.py`."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter


def _image():
    rng = np.random.default_rng(20261202)
    return rng.choice([0.1, 0.3, 0.6, 0.9, 0.0, -0.0, 2.0, -1.0, 5.0, 0.3], size=(7, 8))


IMAGE = _image()
NAN_IMAGE = IMAGE.copy()
NAN_IMAGE[2, 3] = np.nan

SOURCES = [
    # sort: the median by hand, descending, with zeros of both signs kept in their order
    "def f(x):\n    v = list(x)\n    v.sort()\n    return v[len(v) // 2]\n",
    "def f(x):\n    v = [a for a in x if a > 0.2]\n    v.sort(reverse=True)\n    return v[0] if v else -9.0\n",
    "def f(x):\n    v = list(x)\n    v.sort(key=None, reverse=False)\n    return np.copysign(1.0, v[3]) + v[0]\n",
    "def f(x):\n    v = list(x)\n    v.sort(reverse=True)\n    return np.copysign(1.0, v[5]) * 10 + v[8]\n",
    # pop: the last, by index, negative, the value's kind (a Python float divides by zero)
    "def f(x):\n    v = sorted(x)\n    v.pop()\n    v.pop(0)\n    return sum(v) / len(v)\n",
    "def f(x):\n    v = x.tolist()\n    m = v.pop(4)\n    return 1.0 / m + len(v)\n",
    "def f(x):\n    v = list(x)\n    m = v.pop(-2)\n    return m * 100 + v[-1] + len(v)\n",
    "def f(x):\n    v = list(x)\n    while v:\n        m = v.pop()\n        if m > 1.0:\n            return m\n    return -1.0\n",
    # pop's errors: empty first, then out of range, NumPy bools refused as indices
    "def f(x):\n    v = [a for a in x if a > 4.0]\n    m = v.pop()\n    return m\n",
    "def f(x):\n    v = list(x)\n    m = v.pop(9)\n    return m\n",
    "def f(x):\n    v = list(x)\n    m = v.pop(-10)\n    return m\n",
    "def f(x):\n    v = list(x)\n    m = v.pop(x[0] > 0.5)\n    return m\n",
    "def f(x):\n    v = list(x)\n    m = v.pop(True)\n    return m\n",
    # insert: clamped positions, negative ones
    "def f(x):\n    v = [float(a) for a in x[:3]]\n    v.insert(0, 7.0)\n    v.insert(100, 8.0)\n    v.insert(-1, 9.0)\n    v.insert(-100, 10.0)\n    return v[0] * 1000 + v[-1] * 100 + v[-2] * 10 + v[1]\n",
    "def f(x):\n    v = []\n    for a in x:\n        v.insert(0, a)\n    return v[0] - v[-1] * 2\n",
    "def f(x):\n    v = [1.5]\n    v.insert(int(x[4] * 3), float(x[0]))\n    return v[0] + 10 * v[1]\n",
    # extend: a list, a tuple, an array, itself, a generator; grows past the capacity
    "def f(x):\n    v = [x[0]]\n    v.extend(x)\n    v.extend(x[:2] * 2)\n    v.extend(v)\n    return len(v) + v[11] + v[-1]\n",
    "def f(x):\n    v = []\n    for _ in range(4):\n        v.extend(a for a in x if a > 0.2)\n    return len(v) + sum(v)\n",
    "def f(x):\n    v = [a for a in x if a > 0.0]\n    v.extend(x[x < 0.0])\n    return v[-1] if len(v) > 3 else 0.0\n",
    # remove: the first equal item; ValueError where none is
    "def f(x):\n    v = list(x)\n    v.remove(v[4])\n    v.remove(max(v))\n    return len(v) + v[0]\n",
    "def f(x):\n    v = list(x)\n    v.remove(0.3)\n    return len(v)\n",
    "def f(x):\n    v = [1, 2, 3]\n    v.remove(2.0)\n    return v[1] / 0 if x[0] > 100 else v[1] * 1.0\n",
    # clear and reverse
    "def f(x):\n    v = list(x)\n    if x[4] > 0.5:\n        v.clear()\n    v.append(1.0)\n    return len(v)\n",
    "def f(x):\n    v = list(x)\n    v.reverse()\n    return v[0] * 10 + v[-1]\n",
    "def f(x):\n    v = [a for a in x if a != 0.0]\n    v.sort()\n    v.reverse()\n    return v[0] - v[-1]\n",
    # ints keep Python's arithmetic (an int list sorted, popped, divided exactly)
    "def f(x):\n    v = [int(a * 10) for a in x]\n    v.sort()\n    v.append(3)\n    m = v.pop(0)\n    return (m + v[-1]) // 3\n",
    # copy: a new list of the same items and kinds, not an array
    "def f(x):\n    v = list(x)\n    w = v.copy()\n    v.sort()\n    return w[0] - v[0] + len(w)\n",
    "def f(x):\n    v = x.tolist()\n    w = v.copy()\n    w.pop()\n    return 1.0 / w[4] + len(v)\n",
    # a helper handed the list that gives back a number, and a copy iterated
    "def mid(a):\n    return sorted(a)[len(a) // 2]\n\ndef f(x):\n    v = list(x)\n    m = mid(v)\n    v.append(m)\n    return m + len(v)\n",
    "def f(x):\n    v = list(x)\n    w = v[:]\n    for a in w:\n        if a > 0.5:\n            v.remove(a)\n    return len(v)\n",
    "def f(x):\n    v = list(x)\n    v.extend([b * 2 for b in v])\n    return len(v) + v[-1]\n",
    # items of a changed list read into names (numbers, not the list)
    "def f(x):\n    v = list(x)\n    v.sort()\n    m = v[len(v) // 2]\n    lo, hi = v[0], v[-1]\n    return m + hi - lo\n",
    "def f(x):\n    v = []\n    for a in x:\n        v.append(a)\n    m = v[0] if v else 0.0\n    s = v[1] or v[2]\n    return m + s\n",
    # a trimmed mean, the way people write it
    "def f(x):\n    vals = list(x)\n    vals.sort()\n    for _ in range(2):\n        vals.pop()\n        vals.pop(0)\n    return sum(vals) / len(vals)\n",
]


def _run_python(image, source):
    namespace = {"np": np}
    exec(compile(source, "<test>", "exec"), namespace)
    return python_generic_filter(image, namespace["f"], size=3)


CASES = [(s, IMAGE) for s in SOURCES] + [
    # A sort of values holding NaN raises (documented; see the test below).
    (s, NAN_IMAGE) for s in SOURCES if "sort" not in s and "remove" not in s
]


@pytest.mark.parametrize("source, image", CASES)
def test_agrees_with_python(source, image):
    want, error = _run_python(image, source)
    cb = ndjit.jit_filter(source)
    for run in (lambda: ndi.generic_filter(image, cb, size=3),
                lambda: ndjit.generic_filter(image, cb, size=3)):
        if error is not None:
            with pytest.raises(type(error)) as info:
                run()
            assert str(info.value).startswith(str(error)), (info.value, error)
            continue
        got = run()
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_sort_of_values_holding_nan_raises():
    # CPython's order with a NaN depends on its merge steps: ndjit raises (documented).
    source = "def f(x):\n    v = list(x)\n    v.sort()\n    return v[0]\n"
    with pytest.raises(ValueError, match="NaN"):
        ndi.generic_filter(NAN_IMAGE, ndjit.jit_filter(source), size=3)


def test_removing_a_nan_among_nans_raises():
    # CPython finds a NaN only if it is the very object (see `in`): here it is, and Python
    # removes it; ndjit cannot tell and raises.
    source = "def f(x):\n    v = list(x)\n    v.remove(v[4])\n    return len(v)\n"
    image = np.full((4, 4), np.nan)
    want, error = _run_python(image, source)
    assert error is None and (want == 8).all()
    with pytest.raises(ValueError, match="same object"):
        ndi.generic_filter(image, ndjit.jit_filter(source), size=3)
    # Where no item is NaN the search is by value, as in CPython: np.nan is not found.
    source = "def f(x):\n    v = list(x)\n    v.remove(np.nan)\n    return len(v)\n"
    with pytest.raises(ValueError, match="x not in list"):
        ndi.generic_filter(IMAGE, ndjit.jit_filter(source), size=3)


REFUSED = [
    # a second name, or a tuple holding the list: Python's names share it
    ("def f(x):\n    v = list(x)\n    w = v\n    v.sort()\n    return w[0]\n", "second name"),
    ("def f(x):\n    v = list(x)\n    t = (v, 1)\n    v.reverse()\n    return t[0][0]\n", "second name"),
    # inside a larger expression, the reads around the call would follow its change
    ("def f(x):\n    v = list(x)\n    return v.pop() + v[-1]\n", "whole right side"),
    ("def f(x):\n    v = list(x)\n    s = 0.0\n    s += v.pop()\n    return s\n", "whole right side"),
    ("def f(x):\n    v = list(x)\n    return v.sort()\n", "statement of its own"),
    # a list method that arrays do not have
    ("def f(x):\n    v = list(x)\n    v.sort(key=abs)\n    return v[0]\n", "key="),
    ("def f(x):\n    v = list(x)\n    return np.sum(v.copy() * 2)\n", "repeats"),
    ("def f(x):\n    v = list(x)\n    v.sort(True)\n    return v[0]\n", "no positional arguments"),
    ("def f(x):\n    v = list(x)\n    v.sort(reversed=True)\n    return v[0]\n", "unexpected keyword argument 'reversed'"),
    ("def f(x):\n    v = list(x)\n    v.pop(1, 2)\n    return v[0]\n", "pop expected at most 1 argument, got 2"),
    ("def f(x):\n    v = list(x)\n    v.insert(1)\n    return v[0]\n", "insert expected 2 arguments, got 1"),
    ("def f(x):\n    v = list(x)\n    v.pop(1.0)\n    return v[0]\n", "must be an integer"),
    ("def f(x):\n    v = list(x)\n    v.clear(1)\n    return len(v)\n", "takes no arguments (1 given)"),
    ("def f(x):\n    v = list(x)\n    v.remove()\n    return len(v)\n", "takes exactly one argument (0 given)"),
    ("def f(x):\n    v = list(x)\n    for a in v:\n        v.pop()\n    return len(v)\n", "while it iterates"),
    # found by the review: other ways to a second name, and a generator that never ends
    ("def f(x):\n    v = list(x)\n    a, b = v, v\n    a.append(x[0])\n    return len(b)\n", "second name"),
    ("def f(x):\n    v = list(x)\n    t = ((v, 1), 2)\n    v.pop()\n    return len(t[0][0])\n", "second name"),
    ("def f(x):\n    v = list(x)\n    w = v if x[0] > 0.5 else [1.0]\n    v.sort()\n    return w[0]\n", "second name"),
    ("def f(x):\n    v = (1.0, 2.0)\n    v.append(3.0)\n    return len(v)\n", "second name"),
    ("def ident(a):\n    return a\n\ndef f(x):\n    v = list(x)\n    w = ident(v)\n    v.append(x[0])\n    return len(w)\n", "may be that very list"),
    ("def f(x):\n    v = [1.0, 2.0, 3.0]\n    for a in v[:]:\n        v.remove(a)\n    return len(v)\n", "while it iterates"),
    ("def f(x):\n    v = [float(x[4])]\n    v.extend(b * 2 for b in v)\n    return len(v)\n", "never ends"),
    ("def f(x):\n    v = [0.0, 1.0]\n    return 1.0 / v.pop(0)\n", "whole right side"),
    # a helper changing its parameter would change the caller's list
    ("def trim(v):\n    v.sort()\n    return v[0]\n\ndef f(x):\n    v = list(x)\n    return trim(v) + v[0]\n", "writes into its argument `v`, which would change the caller's list"),
]


@pytest.mark.parametrize("source, message", REFUSED)
def test_refused_with_the_reason(source, message):
    with pytest.raises(ndjit.FilterError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        ndjit.jit_filter(source)


def test_python_rejects_what_ndjit_refuses_as_arity_errors():
    # The compile-time arity errors are CPython's own TypeErrors for these calls.
    for call, message in [("[1].pop(1, 2)", "pop expected at most 1 argument, got 2"),
                          ("[1].insert(1)", "insert expected 2 arguments, got 1"),
                          ("[1].sort(True)", "sort() takes no positional arguments"),
                          ("[1].clear(1)", "takes no arguments (1 given)"),
                          ("[1].remove()", "takes exactly one argument (0 given)")]:
        with pytest.raises(TypeError) as info:
            eval(call)
        assert message in str(info.value)
