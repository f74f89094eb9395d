"""Stop 56's hunts: one Filter shared by threads on scipy's face (each thread raises its own
failure, and another thread's failure neither stops nor hides it), the kept spec of a function
whose global another thread rebinds, an interrupt's exception given no position, and the
realistic callbacks' constructs: tuples of tuples looped over, slices of tuples and list literals,
and clear errors for Python's builtins, list repetition and assignment into lists."""
import sys
import threading

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from ndjit._filter import locate_error


def reads_at_centre(w):
    return w[int(-w[4]) + 8] if w[4] < 0 else w[4]


def test_threads_sharing_a_filter_on_scipys_face_each_get_their_own_result():
    f = ndjit.jit_filter(reads_at_centre)
    bad = np.random.default_rng(0).random((60, 60))
    bad[30, 10] = -1.0  # index 9: out of bounds; a second failing pixel later
    bad[50, 50] = -5.0
    good = np.random.default_rng(1).random((12, 12))
    want_good = ndi.generic_filter(good, reads_at_centre, size=3)
    stop, seen, other = threading.Event(), [], []

    def background():
        while not stop.is_set():
            try:
                got = ndi.generic_filter(good, f, size=3)
                other.append(np.array_equal(got, want_good))
            except Exception as e:  # a failure here is the bug
                other.append(repr(e))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    t = threading.Thread(target=background)
    t.start()
    try:
        for _ in range(40):
            with pytest.raises(IndexError) as e:
                ndi.generic_filter(bad, f, size=3)
            seen.append(type(e.value).__name__)
            assert "index 9 is out of bounds" in str(e.value)
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(interval)
    assert set(seen) == {"FilterIndexError"}
    assert other and all(r is True for r in other), [r for r in other if r is not True][:3]
    # Afterwards the filter computes as scipy does, on either image's good part.
    assert np.array_equal(ndi.generic_filter(good, f, size=3), want_good)


def test_an_interrupts_exception_has_no_position_to_move():
    f = ndjit.jit_filter(reads_at_centre)
    e = KeyboardInterrupt()
    locate_error(e, f._spec)  # raised AttributeError (no `lineno`) inside the failure hook
    assert not hasattr(e, "_located")


W = np.random.default_rng(3).normal(size=(7, 8))
W[2, 3] = np.nan


def agree(func, **kw):
    want = ndi.generic_filter(W, func, size=3, mode="reflect", **kw)
    got = ndjit.generic_filter(W, func, size=3, mode="reflect", **kw)
    scipy_face = ndi.generic_filter(W, ndjit.jit_filter(func), size=3, mode="reflect", **kw)
    for g in (got, scipy_face):
        assert np.array_equal(g, want, equal_nan=True)
        assert np.array_equal(np.signbit(g), np.signbit(want))


def four_neighbours(w):
    s = 0.0
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        s += w[4 + 3 * dy + dx]
    return s


def weighted_pairs(w):
    total = 0.0
    for k, weight in [(1, 0.5), (7, 2.0), (3, -1.0)]:
        total += w[k] * weight
    return total


def first_matching(w):
    for k, threshold in ((0, 0.5), (4, 0.0), (8, -0.5)):
        if w[k] > threshold:
            return float(k)
    return -1.0


def comprehension_over_offsets(w):
    return max([w[4 + 3 * dy + dx] for dy, dx in ((-1, -1), (1, 1))])


def sliced_literal(w):
    nb = [w[1], w[3], w[5], w[7]]
    tail = nb[1:]
    back = nb[::-2]
    return tail[0] + 2.0 * back[0] - nb[-3:-1][1]


@pytest.mark.parametrize("func", [four_neighbours, weighted_pairs, first_matching,
                                  comprehension_over_offsets, sliced_literal])
def test_tuples_of_tuples_and_sliced_sequences_compute_as_python(func):
    agree(func)


def test_a_sliced_tuple_runs_as_python_for_every_constant_slice():
    items = (1.5, -2.0, 3.25, 0.0, -0.0)
    for lo in [None, -7, -2, 0, 1, 3, 9]:
        for hi in [None, -7, -2, 0, 2, 4, 9]:
            for step in [None, -3, -1, 1, 2]:
                text = f"{'' if lo is None else lo}:{'' if hi is None else hi}:{'' if step is None else step}"
                body = "s = float(len(t))\n    for v in t:\n        s = s * 2.0 + v\n    return s"
                src = f"def f(x):\n    t = (1.5, -2.0, 3.25, 0.0, -0.0)[{text}]\n    {body}"
                namespace = {}
                exec(f"def f(x):\n    t = {items!r}[{text}]\n    {body}", namespace)
                want = namespace["f"](None)
                got = ndjit.jit_filter(src).evaluate(np.zeros(1))
                assert np.array_equal(got, want) and np.signbit(got) == np.signbit(want), text


@pytest.mark.parametrize("src, message, hint", [
    # A set's size is counted since stop 68; what reads its items is refused.
    ("lambda w: float(sum(set(w)))", "a set whose items are read", "np.unique"),
    ("lambda w: w[0] + len(reversed(w))", "Python's builtin `reversed` is not supported", "x[::-1]"),
    ("def f(w):\n    c = [0, 0, 0, 0]\n    c[int(w[0]) % 4] += 1\n    return c[0]",
     "assigning into a list or tuple is not supported", "np.zeros"),
    ("def f(w):\n    c = [0] * 4\n    return c[0]",
     "operators on Python lists and tuples", "np.zeros(n)"),
    ("def f(w):\n    t = (w[0], w[1]) + (w[2],)\n    return t[0]",
     "operators on Python lists and tuples", "np.concatenate"),
    ("def f(w):\n    t = (w[0], w[1], w[2])\n    return t[:int(w[0])][0]",
     "slicing a list or tuple needs constant bounds", "np.array"),
    ("def f(w):\n    t = (w[0], w[1], w[2])\n    return t[::0][0]", "slice step cannot be zero", None),
    ("def f(w):\n    s = 0.0\n    for pair in ((1, 0.5), (7, 2.0)):\n        s += w[pair[0]]\n    return s",
     "`pair` holds a tuple, so it must be assigned once", None),
    ("def f(w):\n    s = 0.0\n    for i, p in enumerate(((1, 2), (3, 4))):\n        s += w[i]\n    return s",
     "a tuple or list of tuples is supported only as what a `for` loop", "np.array"),
    ("def f(w):\n    s = 0.0\n    for a in ((0, 1), (2, 3, 4)):\n        s += w[0]\n    return s",
     "with items of one length", None),
])
def test_unsupported_sequence_constructs_get_a_clear_error(src, message, hint):
    with pytest.raises(ndjit.FilterError) as e:
        ndjit.jit_filter(src)
    text = str(e.value)
    assert message in text
    assert hint is None or hint in text
    assert e.value.lineno >= 1 and e.value.col >= 1


def test_a_tuple_times_an_array_still_broadcasts():
    agree(lambda w: float(np.sum((1.0, 2.0, 3.0) * w[:3])))


# Windows whose maximum is a zero, with zeros of both signs: NumPy's choice of zero is its SIMD
# code's, so ndjit raises where a use could tell which, and computes where none can.
ZEROS = np.array([[0.0, -0.0, -1.0, -2.0], [-0.0, 0.0, -3.0, -0.0], [-1.0, -0.0, 0.0, -4.0],
                  [-2.0, -5.0, -0.0, 0.0]])


def is_peak(w, m):
    return w[4] == m


def peak_through_helper(w):
    return 1.0 if is_peak(w, np.max(w)) else 0.0


def maximum_as_truth(w):
    m = np.max(w)
    if m > 0 or not m:
        return 1.0
    return 2.0


@pytest.mark.parametrize("func", [
    lambda w: float(w[4] == w.max()),
    lambda w: float(np.min(w) < w[4] <= np.max(w)),
    lambda w: abs(np.max(w)) + 1.0,
    lambda w: float(int(np.percentile(w, 90))),
    peak_through_helper,
    maximum_as_truth,
])
def test_a_zero_extreme_whose_sign_no_use_tells_computes(func):
    want = ndi.generic_filter(ZEROS, func, size=3, mode="constant", cval=-0.0)
    for got in [ndjit.generic_filter(ZEROS, func, size=3, mode="constant", cval=-0.0),
                ndi.generic_filter(ZEROS, ndjit.jit_filter(func), size=3, mode="constant", cval=-0.0)]:
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


def divided_by_maximum(w):
    m = w.max()
    return 1.0 / m if m != 0.5 else 0.0


@pytest.mark.parametrize("func", [
    lambda w: w.max(),
    lambda w: np.max(w) * 2.0,
    divided_by_maximum,
    lambda w: float(np.percentile(w, 90)),
    lambda w: max(np.max(w), -1.0),
])
def test_a_zero_extreme_whose_sign_a_use_may_tell_still_raises(func):
    with pytest.raises(ValueError, match="both 0.0 and -0.0"):
        ndjit.generic_filter(ZEROS, func, size=3, mode="constant", cval=-0.0)
