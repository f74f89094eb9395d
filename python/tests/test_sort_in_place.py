"""An array's `x.sort()`, NumPy's in-place sort (NaN last), against CPython running the same
function through scipy and through ndjit's own driver: the window's own buffer, local arrays
of every kind, sorts in branches and helpers, generic_filter1d's output line; and the forms that
would change memory another name or a later pixel reads, each refused with the reason."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter


def _image():
    rng = np.random.default_rng(20261204)
    return rng.choice([0.1, 0.3, 0.6, 0.9, 2.0, -1.0, 5.0, 0.3, -7.5, 11.0], size=(7, 8))


IMAGE = _image()
NAN_IMAGE = IMAGE.copy()
NAN_IMAGE[2, 3] = np.nan
NAN_IMAGE[5, 6] = np.nan

SOURCES = [
    # the window's own buffer, sorted in place: a median, a trimmed mean, the extremes
    "def f(w):\n    w.sort()\n    return w[len(w) // 2]\n",
    "def f(w):\n    w.sort()\n    return w[2:-2].mean()\n",
    "def f(w):\n    w.sort()\n    return w[-1] - w[0]\n",
    "def f(w):\n    w.sort(kind='stable')\n    w.sort(axis=-1)\n    return w[1] * 10 + w[-2]\n",
    "def f(w):\n    w.sort(-1, 'heapsort')\n    w.sort(0, stable=True)\n    w.sort(kind=None, stable=None)\n    return w[3]\n",
    # names of a tuple assignment
    "def f(w):\n    a, b = w.copy(), w[::2].copy()\n    b.sort()\n    a.sort()\n    return a[1] - b[1]\n",
    # read before and after the sort: the buffer changes in place
    "def f(w):\n    c = w[4]\n    w.sort()\n    return c - w[4]\n",
    "def f(w):\n    s = 0.0\n    for i in range(3):\n        s += w[i]\n    w.sort()\n    for i in range(3):\n        s -= w[i] * 2\n    return s\n",
    # a sort in a branch and in a loop
    "def f(w):\n    if w[4] > 0.5:\n        w.sort()\n    return w[0] * 3 + w[8]\n",
    "def f(w):\n    t = 0.0\n    for k in range(2):\n        w.sort()\n        t += w[k]\n        w[0] = 9.0\n    return t\n",
    # local arrays: copies, selections, NumPy's own, ints, bools
    "def f(w):\n    v = w.copy()\n    v.sort()\n    return v[-1] - v[0] + w[0]\n",
    "def f(w):\n    v = w[w > 0.2]\n    v.sort()\n    return v[0] if len(v) else -1.0\n",
    "def f(w):\n    v = np.array(w)\n    v.sort(kind='mergesort')\n    return v[1] + w[1]\n",
    "def f(w):\n    v = (w * 10).astype(int)\n    v.sort()\n    return v[4] // 3\n",
    "def f(w):\n    v = w > 0.5\n    v.sort()\n    return float(v[4]) + float(v[-1]) * 2\n",
    "def f(w):\n    v = np.abs(w - np.mean(w))\n    v.sort()\n    return v[len(v) // 2]\n",
    "def f(w):\n    y = np.sort(w)\n    y.sort()\n    return y[0] + y[-1]\n",
    # a name sorted in place that is rebound: each array sorted in turn
    "def f(w):\n    v = w.copy()\n    v.sort()\n    a = v[0]\n    v = w * -1.0\n    v.sort()\n    return a + v[0]\n",
    # a helper sorting its own copy
    "def med(a):\n    b = a.copy()\n    b.sort()\n    return b[len(b) // 2]\n\ndef f(w):\n    return med(w) - med(w[:4])\n",
    # NaN sorts last, as np.sort puts it
    "def f(w):\n    w.sort()\n    return w[0] + w[7]\n",
]

CASES = [(s, IMAGE) for s in SOURCES] + [
    # (NumPy casts NaN to an int without raising; ndjit raises: Known deviations.)
    (s, NAN_IMAGE) for s in SOURCES if "astype(int)" not in s]


def _run_python(image, source):
    namespace = {"np": np}
    exec(compile(source, "<test>", "exec"), namespace)
    return python_generic_filter(image, namespace["f"], size=3)


@pytest.mark.parametrize("source, image", CASES)
def test_agrees_with_python(source, image):
    want, error = _run_python(image, source)
    cb = ndjit.jit_filter(source)
    for run in (lambda: ndi.generic_filter(image, cb, size=3),
                lambda: ndjit.generic_filter(image, cb, size=3)):
        if error is not None:
            with pytest.raises(type(error)):
                run()
            continue
        got = run()
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_the_python_functions_do_change_their_arrays():
    # The oracle's own premise: NumPy sorts the buffer in place, so a test above would fail
    # if ndjit sorted a copy and read the unsorted buffer afterwards.
    source = SOURCES[4]  # c = w[4]; w.sort(); return c - w[4]
    want, error = _run_python(IMAGE, source)
    assert error is None and np.any(want != 0)


def test_zeros_of_both_signs_raise_as_np_sort_does():
    # NumPy's order of 0.0 and -0.0 after a sort is its SIMD code's: ndjit raises where a
    # window holds both (as for np.sort, see Known deviations), and sorts the others.
    image = np.array([[0.0, -0.0, 1.0, 4.0], [2.0, 3.0, 2.0, 6.0], [3.0, 0.5, 7.0, 8.0]])
    sort_in_place = "def f(w):\n    w.sort()\n    return w[0]\n"
    np_sort = "def f(w):\n    v = np.sort(w)\n    return v[0]\n"
    for source in (sort_in_place, np_sort):
        with pytest.raises(ValueError, match="both 0.0 and -0.0"):
            ndjit.generic_filter(image, ndjit.jit_filter(source), size=3, mode="nearest")
    away = image[:, 2:]
    want, error = _run_python(away, sort_in_place)
    assert error is None
    np.testing.assert_array_equal(ndjit.generic_filter(away, ndjit.jit_filter(sort_in_place), size=3),
                                  want)


def test_generic_filter1d_output_line_sorted_in_place():
    def f(iline, oline):
        oline[:] = iline[1:-1] * -1.0
        oline.sort()

    source = "def f(iline, oline):\n    oline[:] = iline[1:-1] * -1.0\n    oline.sort()\n"
    x = np.random.default_rng(3).normal(size=(4, 12))
    want = ndi.generic_filter1d(x, f, 3)
    assert np.all(np.diff(want, axis=1) >= 0)  # scipy's output lines are the sorted lines
    got = ndi.generic_filter1d(x, ndjit.jit_filter1d(source), 3)
    np.testing.assert_array_equal(got, want)


REFUSED = [
    # another name for the buffer, read after the sort
    ("def f(w):\n    v = w[1:]\n    v.sort()\n    return w[1]\n", "shares memory"),
    ("def f(w):\n    v = w\n    v.sort()\n    return w[0] + v[0]\n", "shares memory"),
    # the value of the call, or a receiver that is not a name
    ("def f(w):\n    v = w.sort()\n    return w[0]\n", "gives None"),
    ("def f(w):\n    return w.sort()\n", "gives None"),
    ("def f(w):\n    w[1:].sort()\n    return w[0]\n", "gives None"),
    # arguments
    ("def f(w):\n    w.sort(0, 'stable', None)\n    return w[0]\n", "nothing more"),
    ("def f(w):\n    w.sort(order='x')\n    return w[0]\n", "not supported"),
    ("def f(w):\n    w.sort(kind='bogo')\n    return w[0]\n", "not supported"),
    ("def f(w):\n    w.sort(axis=1)\n    return w[0]\n", "not supported"),
    # a 2-D array's sort runs along its rows
    ("def f(w):\n    m = w.reshape(3, 3)\n    m.sort()\n    return m[0, 0]\n", "2-D"),
]


@pytest.mark.parametrize("source, message", REFUSED)
def test_refused_with_the_reason(source, message):
    with pytest.raises(ndjit.FilterError, match=message):
        ndjit.jit_filter(source)


KERNEL = np.array([3.0, 1.0, 2.0])


def _sorts_the_bound_array(w):
    KERNEL.sort()
    return w[0] * KERNEL[0]


def _sorts_another_name_for_it(w):
    k = KERNEL
    k.sort()
    return w[0] * k[0]


def _sorts_a_view_of_it(w):
    k = KERNEL[1:]
    k.sort()
    return w[0] * k[0]


def _sorts_a_default_argument(w, k=KERNEL):
    k.sort()
    return w[0] * k[0]


@pytest.mark.parametrize("func", [_sorts_the_bound_array, _sorts_another_name_for_it,
                                  _sorts_a_view_of_it, _sorts_a_default_argument])
def test_sorting_a_bound_array_every_pixel_reads_is_refused(func):
    # Python would sort the module's array at the first pixel, and every later pixel would
    # read it sorted.
    with pytest.raises(ndjit.FilterError, match="KERNEL|shares memory|own copy|bound"):
        ndjit.jit_filter(func)
    assert list(KERNEL) == [3.0, 1.0, 2.0]


def test_an_argument_array_and_an_input_line_are_not_the_filters_own_copy():
    with pytest.raises(ndjit.FilterError, match="not the filter's own copy"):
        ndjit.jit_filter("def f(w, k):\n    k.sort()\n    return w[0] * k[0]\n",
                         extra_arguments=(KERNEL,))
    with pytest.raises(ndjit.FilterError, match="not the filter's own copy"):
        ndjit.jit_filter1d("def f(iline, oline):\n    iline.sort()\n    oline[:] = iline[1:-1]\n")


def test_a_helper_sorting_its_argument_is_refused():
    # Python's helper would sort the caller's array, which the caller reads afterwards.
    source = ("def trim(a):\n    a.sort()\n    return a[0]\n\n"
              "def f(w):\n    v = w.copy()\n    return trim(v) + v[-1]\n")
    with pytest.raises(ndjit.FilterError):
        ndjit.jit_filter(source)
