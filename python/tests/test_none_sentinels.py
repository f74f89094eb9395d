"""`None` as a sentinel in a local that otherwise holds numbers (`best = None`, then `if best is
None or v > best: best = v`), against CPython running the same function through scipy: the flag
"holds None" is followed through `is None`, `is not None` and conditions; a read where Python
raises `TypeError` for None raises it too; a read where Python would carry the None on is refused
at compile time."""
import textwrap

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter


def _image():
    rng = np.random.default_rng(20261202)
    img = rng.choice([0.1, 0.3, 0.6, 0.9, 0.0, -0.0, 2.0, np.nan, -1.0], size=(8, 9))
    return img


IMAGE = _image()


def _python(image, func):
    """scipy running `func`: (result, None) or (None, the first exception), scipy's own
    `TypeError` for a returned None included."""
    try:
        return python_generic_filter(image, func, size=3)
    except TypeError as e:
        return None, e


def _compile_both(source):
    source = textwrap.dedent(source)
    namespace = {"np": np, "math": __import__("math")}
    exec(compile(source, "<test>", "exec"), namespace)
    return namespace["f"], ndjit.jit_filter(source)


# Each runs over windows where the sentinel stays None on some pixels and not on others.
AGREE = [
    # the running extreme of the values above a threshold, None when there is none
    """
    def f(x):
        best = None
        for v in x:
            if v > 0.5 and (best is None or v < best):
                best = v
        return best if best is not None else -1.0
    """,
    """
    def f(x):
        best = None
        for v in x:
            if best is None or v > best:
                best = v
        return best
    """,
    # the previous value, None on the first pass
    """
    def f(x):
        prev = None
        total = 0.0
        for v in x:
            if prev is not None:
                total += abs(v - prev)
            prev = v
        return total
    """,
    # `is None` on the left or right, `not`, and a condition's truth (0.0 is false too)
    """
    def f(x):
        found = None
        for v in x:
            if v < 0:
                found = v
        if None is found:
            return 1.0
        if not found:
            return 2.0
        return 3.0 if found else 4.0
    """,
    """
    def f(x):
        first = None
        i = 0
        while first is None and i < len(x):
            if x[i] > 0.8:
                first = i
            i += 1
        return -1 if first is None else first
    """,
    # a local that only ever holds None, tested
    """
    def f(x):
        m = None
        return 7.0 if m is None else m + 1.0
    """,
    # guarded reads: the branch of `is not None`, the operands after `and`
    """
    def f(x):
        lo = None
        for v in x:
            if v > 0.2:
                lo = v if lo is None else min(lo, v)
        if lo is not None:
            return lo * 2
        return np.nan
    """,
    # a sentinel reset to None inside the loop
    """
    def f(x):
        run = None
        longest = 0
        for v in x:
            if v > 0.5:
                run = 1 if run is None else run + 1
                longest = max(longest, run)
            else:
                run = None
        return longest
    """,
    # a helper's own sentinel
    """
    def first_above(x, t):
        hit = None
        for v in x:
            if hit is None and v > t:
                hit = v
        return hit if hit is not None else 0.0

    def f(x):
        return first_above(x, 0.5) + first_above(x, 1.5)
    """,
]


@pytest.mark.parametrize("source", AGREE)
@pytest.mark.parametrize("mode", ["reflect", "constant"])
def test_sentinels_agree_with_python(source, mode):
    func, cb = _compile_both(source)
    want, error = python_generic_filter(IMAGE, func, size=3, mode=mode)
    assert error is None, error
    got = ndi.generic_filter(IMAGE, cb, size=3, mode=mode)
    np.testing.assert_array_equal(got, want)
    native = ndjit.generic_filter(IMAGE, textwrap.dedent(source), size=3, mode=mode)
    np.testing.assert_array_equal(native, want)


# Each raises TypeError on the windows where the sentinel is still None, as Python does.
RAISE = [
    # returned: scipy's float() of None
    """
    def f(x):
        best = None
        for v in x:
            if v > 1.5:
                best = v
        return best
    """,
    # arithmetic, an ordering, an augmented assignment, a builtin and a math function
    """
    def f(x):
        m = None
        for v in x:
            if v > 1.5:
                m = v
        return m + 1.0
    """,
    """
    def f(x):
        m = None
        for v in x:
            if v > 1.5:
                m = v
        return 1.0 if x[4] < m else 0.0
    """,
    """
    def f(x):
        m = None
        if x[4] > 1.5:
            m = 0.0
        m += 1
        return m
    """,
    """
    def f(x):
        m = None
        v = x[0]
        if x[4] > 1.5:
            m = x[4]
        return max(m, v)
    """,
    """
    def f(x):
        m = None
        if x[4] > 1.5:
            m = x[4]
        return math.sqrt(m)
    """,
    """
    def f(x):
        m = None
        if x[4] > 1.5:
            m = x[4]
        return -m
    """,
]


@pytest.mark.parametrize("source", RAISE)
def test_none_where_python_raises_type_error(source):
    func, cb = _compile_both(source)
    image = IMAGE.copy()
    image[4, 4] = 3.0  # some windows set the sentinel, most do not
    want, error = _python(image, func)
    assert isinstance(error, TypeError), (want, error)
    with pytest.raises(TypeError):
        ndi.generic_filter(image, cb, size=3)
    # where every window sets it, the same function computes
    full = np.full((5, 5), 2.0)
    want, error = _python(full, func)
    assert error is None, error
    np.testing.assert_array_equal(ndi.generic_filter(full, cb, size=3), want)


# Arguments a call may take as None, or reads after another failure: Python does not raise
# TypeError there (the review's findings).
OTHER_ARGUMENTS = [
    # `sum(empty, None)` is None
    """
    def f(x):
        m = None
        if x[4] > 0.5:
            m = 0.0
        t = sum((), m)
        return -1.0 if t is None else t
    """,
    # math.log's base is read after the domain check of its first argument: ValueError first
    """
    def f(x):
        m = None
        if x[4] > 0.5:
            m = 10.0
        return math.log(x[4] - 0.5, m)
    """,
    # round's digits and pow's modulus may be None
    """
    def f(x):
        m = None
        if x[4] > 0.5:
            m = 1
        return round(x[4], m)
    """,
]


@pytest.mark.parametrize("source", OTHER_ARGUMENTS)
def test_arguments_python_takes_as_none_are_refused_not_checked(source):
    # A check there would raise TypeError where Python computes (or raises another class).
    with pytest.raises(ndjit.FilterError, match="may hold None"):
        ndjit.jit_filter(textwrap.dedent(source))


def test_none_bound_from_outside_is_a_binding_error():
    source = "def f(x, t):\n    return float(x[4] > t)\n"
    with pytest.raises(ndjit.BindingError, match="is None"):
        ndjit.jit_filter(source, extra_arguments=(None,))
    with pytest.raises(TypeError):  # still Python's class for a wrong argument
        ndjit.jit_filter(source, extra_arguments=(None,))


REFUSED = [
    # Python carries the None on: a copy, a tuple, a helper's argument, `==`, `in`
    ("def f(x):\n    m = None\n    y = m\n    return 0.0\n", "may hold None"),
    ("def f(x):\n    m = None\n    t = (m, 1)\n    return 0.0\n", "may hold None"),
    ("def g(a):\n    return 1.0\n\ndef f(x):\n    m = None\n    return g(m)\n", "may hold None"),
    ("def f(x):\n    m = None\n    return 1.0 if m == None else 0.0\n", "may hold None"),
    # an operand evaluated after the sentinel's read could raise first (x[20] IndexError)
    ("def f(x):\n    m = None\n    if x[0] > 0:\n        m = 1.0\n    return m + x[20]\n", "may hold None"),
    # None and an array in one name
    ("def f(x):\n    m = None\n    m = x[:3]\n    return 0.0\n", "holds None elsewhere and an array here"),
]


@pytest.mark.parametrize("source, message", REFUSED)
def test_sentinel_reads_that_carry_none_on_are_refused(source, message):
    with pytest.raises(ndjit.FilterError, match=message):
        ndjit.jit_filter(source)


def test_a_sentinel_read_before_any_assignment_is_unbound():
    source = textwrap.dedent("""
    def f(x):
        if x[4] > 0.5:
            m = None
        return 1.0 if m is None else 2.0
    """)
    func, cb = _compile_both(source)
    want, error = python_generic_filter(IMAGE, func, size=3)
    assert isinstance(error, UnboundLocalError)
    with pytest.raises(UnboundLocalError):
        ndi.generic_filter(IMAGE, cb, size=3)


def test_run_time_type_errors_are_filter_runtime_type_errors():
    import pickle
    cb = ndjit.jit_filter("def f(x):\n    m = None\n    if x[4] > 5:\n        m = 1.0\n    return m + 1\n")
    with pytest.raises(ndjit.FilterRuntimeTypeError) as info:
        ndi.generic_filter(np.zeros((3, 3)), cb, size=3)
    assert isinstance(info.value, TypeError)
    assert ndjit.FilterReturnTypeError is ndjit.FilterRuntimeTypeError  # the earlier name
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is ndjit.FilterRuntimeTypeError and again.lineno == info.value.lineno
