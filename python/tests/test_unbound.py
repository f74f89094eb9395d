"""A local read before any assignment has run raises CPython's UnboundLocalError.

Before, the lowering's variable held its initial zero there: ``last`` below was 0.0 for windows
with nothing above 5, where CPython raises.
"""
import numpy as np
import pytest
from scipy import ndimage as ndi

import ndjit
from test_int_or_float import compare

LAST_ABOVE = "def f(x):\n    for v in x:\n        if v > 5:\n            last = v\n    return last\n"

# (source, windows): each window either assigns on its path or not.
CASES = [
    ("def f(x):\n    if x[0] > 0:\n        a = 1.0\n    return a\n", [[-1.0], [1.0]]),
    ("def f(x):\n    for v in x[:0]:\n        pass\n    return v\n", [[1.0]]),
    ("def f(x):\n    for v in x[:1]:\n        pass\n    return v\n", [[1.0]]),
    ("def f(x):\n    a = a + 1\n    return a\n", [[1.0]]),
    ("def f(x):\n    a += 1\n    return a\n", [[1.0]]),
    (LAST_ABOVE, [[1.0, 2.0], [1.0, 7.0]]),
    ("def f(x):\n    i = 0\n    while i < len(x) - 2:\n        w = x[i]\n        i += 1\n    return w\n",
     [[1.0, 2.0], [1.0, 2.0, 3.0]]),
    ("def f(x):\n    for i in range(len(x) - 2):\n        w = x[i]\n    return w * 2\n", [[1.0], [1.0, 2.0, 3.0]]),
    ("def f(x):\n    if x[0] > 0:\n        l = []\n    l.append(1.0)\n    return len(l)\n", [[-1.0], [1.0]]),
    ("def f(x):\n    if x[0] > 0:\n        a = np.zeros(3)\n    a[0] = 1.0\n    return a[0]\n", [[-1.0], [1.0]]),
    ("def f(x):\n    if x[0] > 0:\n        m = x * 2\n    return np.sum(m)\n", [[-1.0], [1.0]]),
    # Loop-carried: assigned on one trip, read on a later one.
    ("def f(x):\n    s = 0.0\n    for v in x:\n        if v > 0:\n            k = v\n        s += k\n    return s\n",
     [[1.0, -2.0], [-1.0, 2.0]]),
    # A helper's locals are a new frame at every call.
    ("def h(v):\n    if v > 0:\n        r = v\n    return r\n\ndef f(x):\n    return h(x[0]) + h(x[1])\n",
     [[1.0, -1.0], [1.0, 2.0]]),
    ("def h(v):\n    if v > 0:\n        r = v\n    return r\n\ndef f(x):\n    s = 0.0\n    for v in x:\n        s += h(v)\n    return s\n",
     [[1.0, 2.0], [1.0, -2.0]]),
    # Definitely assigned: no check, the value.
    ("def f(x):\n    if x[0] > 0:\n        a = 1.0\n    else:\n        a = 2.0\n    return a\n", [[-1.0], [1.0]]),
    ("def f(x):\n    if x[0] > 0:\n        a = 1.0\n    else:\n        return 0.5\n    return a\n", [[-1.0], [1.0]]),
]


@pytest.mark.parametrize("src, windows", CASES, ids=range(len(CASES)))
def test_reads_of_unassigned_locals_raise_as_cpython_does(src, windows):
    for w in windows:
        assert compare(src, w) is None, (src, w, compare(src, w))


def test_the_error_names_the_variable_at_its_read():
    f = ndjit.jit_filter(LAST_ABOVE)
    with pytest.raises(UnboundLocalError, match="cannot access local variable 'last' where it is not "
                                               "associated with a value") as e:
        f.evaluate(np.array([1.0, 2.0]))
    assert isinstance(e.value, ndjit.FilterRuntimeError)
    assert "line 5, column 12" in str(e.value)  # `return last`, at the name
    assert f.evaluate(np.array([1.0, 7.0, 3.0])) == 7.0


def test_every_face_raises_it_for_the_first_window_that_reads_it_unassigned():
    image = np.full((5, 5), 9.0)
    image[3, 3] = 1.0  # the only pixel whose 1×2 window holds nothing above 5 is none: all hold a 9
    filt = ndjit.jit_filter(LAST_ABOVE)
    want = ndi.generic_filter(image, filt, size=(1, 2))
    assert np.array_equal(ndjit.generic_filter(image, LAST_ABOVE, size=(1, 2)), want)
    image[1, :] = 0.0  # row 1's windows hold no value above 5 (row 1, column 0 first)
    with pytest.raises(UnboundLocalError):
        ndi.generic_filter(image, filt, size=(1, 2))
    with pytest.raises(UnboundLocalError):
        ndjit.generic_filter(image, LAST_ABOVE, size=(1, 2))


def test_a_comprehension_reading_an_unassigned_local_raises_a_name_error():
    # CPython 3.11 raises NameError (the comprehension is a nested scope), 3.12 and later
    # UnboundLocalError (PEP 709 inlines it), a NameError too.
    src = "def f(x):\n    if x[0] > 0:\n        k = 2.0\n    return sum([v * k for v in x])\n"
    ns = {}
    exec(src, ns)
    with pytest.raises(NameError):
        ns["f"](np.array([-1.0, 1.0]))
    f = ndjit.jit_filter(src)
    with pytest.raises(NameError):
        f.evaluate(np.array([-1.0, 1.0]))
    assert f.evaluate(np.array([1.0, 2.0])) == ns["f"](np.array([1.0, 2.0]))
