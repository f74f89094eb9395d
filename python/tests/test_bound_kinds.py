"""Bound values keep their Python or NumPy kind: a tuple of ints is Python ints (`T[0] // 0`
raises), an int64 array wraps and divides by zero to 0, a bool array holds NumPy bools, an
`np.float64` divides by zero to inf and rounds as NumPy does.

ndjit once read every bound tuple, list and array as a float64 array, every NumPy scalar as a
Python number, and (until stop 48) a Python bool as the int 0 or 1: each source in FIXED gave another number or no error. Now each one equals scipy
running the same source through CPython and NumPy (value, or exception class), as each
source in KEPT still does, and
`test_each_fixed_source_shows_the_old_difference` checks that the old reading would have
failed it. What ndjit cannot reproduce raises instead (REFUSED, and the binding errors).
"""
import math
import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter

IMAGE = np.random.default_rng(11).standard_normal((6, 7)) * 10

BIG = 2**52 + 1  # an int a double holds, whose multiples it does not
WRAPS = 3037000500  # its square passes 2**63: int64 wraps, a Python int does not

VALUES = {
    "py_ints": (7, 0, -3, BIG),
    "py_floats": [7.0, 0.0, -3.5, -0.0],
    "int64_array": np.array([7, 0, -3, WRAPS]),
    "bool_array": np.array([True, False, True]),
    "int64_matrix": np.array([[7, 0], [-3, WRAPS]]),
    "int64_scalar": np.int64(7),
    "float64_scalar": np.float64(2.675),
    "py_bool": True,
}

# Sources of a filter `def f(x, V)`, V bound to VALUES[name] through extra_arguments, that the
# old reading got wrong ...
FIXED = {
    "py_ints": [
        "V[0] // V[1]", "V[0] % V[1]", "V[0] / V[1]", "V[3] * 3 - V[3] * 2", "sum(V) * 3 - sum(V) * 2",
        "sum(v * 3 for v in V) - V[3] * 2",
    ],
    "py_floats": ["V[0] / V[1]", "V[0] // V[3]", "V[0] % V[1]", "V[2] / V[1] + x[4]"],
    "int64_array": ["V[0] // V[1]", "V[0] % V[1]", "V[3] * V[3]", "np.prod(V[2:] * V[3])", "V.sum() * V[3]"],
    "bool_array": ["np.sum(V) // 0", "V[0] * 3 // 0", "~V[1] * 1"],
    "int64_matrix": ["V[0, 0] // V[0, 1]", "V[1, 1] * V[1, 1]", "V[1].sum() // 0"],
    "int64_scalar": ["V // 0", "V % 0", "V * 2**61", "x[4] + V // (V - 7)"],
    "float64_scalar": ["1.0 / (V - V)", "(V - V) ** -1", "1.0 // (V - V)", "round(V, 2)"],
    # A Python bool is an int to Python and a bool to NumPy (it was bound as the int 1).
    "py_bool": ["np.add(V, V) * 3", "np.sum(np.maximum(V, x > 0) + (x > 1))"],
}

# ... and that it got right, and still must.
KEPT = {
    "py_ints": ["V[0] ** -1", "V[2] ** 3 // 2", "x[V[2]]", "max(V) - min(V)", "np.sum(x[:4] * V)", "len(V)"],
    "py_floats": ["math.copysign(1.0, V[3])", "np.sum(x[:4] * V)", "V[2] ** 2", "x[4] / V[3]"],
    "int64_array": ["V[0] / V[1]", "V[2] // 2", "x[V[2]]", "np.sum(x[:4] * V)"],
    "bool_array": ["np.sum(x[:3] * V)", "x[:3][V].sum()", "x[4] / V[1]", "np.count_nonzero(V)"],
    # A 2-D array passed as an argument is 2-D: V[1] is a row (it was read flat, as element 1).
    "int64_matrix": ["np.sum(x[:4].reshape(2, 2) * V)", "V[1, 0]", "np.sum(V[1]) * 1.0"],
    "int64_scalar": ["V / 0", "V * x[4]"],
    "float64_scalar": ["V * x[4]", "x[4] / (V - V)"],
    "py_bool": ["V + V", "-V * x[4]", "abs(V) * 2", "x[4] if V else 0.0", "np.sum(x * V)"],
}

# Sources whose Python meaning ndjit does not model: each must raise, never give a number.
REFUSED = {
    "py_ints": ["len(V * 2)", "len(V + V)", "V * x[4]"],
    # Python 3.12 sums floats with compensation, 3.11 does not.
    "py_floats": ["len(V * 2)", "sum(V)"],
    "int64_array": ["V[0] ** -1"],
    "bool_array": ["V[0] + V[2]", "-V[0]"],
    "int64_scalar": ["V ** -1"],
    # Python inverts the int (`~True` is -2); NumPy floor-divides bools in int8.
    "py_bool": ["~V", "np.floor_divide(V, V)"],
}

SOURCE = "def f(x, V):\n    return {}\n"


def cpython(src, name, value=None):
    """What scipy gives running the source in CPython + NumPy: the output, or the exception."""
    namespace = {"np": np, "math": math}
    exec(SOURCE.format(src), namespace)
    value = VALUES[name] if value is None else value
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            result, failure = python_generic_filter(IMAGE, namespace["f"], size=3, extra_arguments=(value,))
        except Exception as e:  # noqa: BLE001 - the oracle's exception is the expected outcome
            return e
        return result if failure is None else failure


def run_ndjit(src, name):
    return ndjit.generic_filter(IMAGE, SOURCE.format(src), size=3, extra_arguments=(VALUES[name],))


def same(got, want):
    return np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want))


def cases(table):
    return [(name, src) for name, sources in table.items() for src in sources]


@pytest.mark.parametrize("name,src", cases(FIXED) + cases(KEPT))
def test_bound_values_keep_their_kind(name, src):
    want = cpython(src, name)
    if isinstance(want, Exception):
        with pytest.raises(type(want)):
            run_ndjit(src, name)
    else:
        got = run_ndjit(src, name)
        assert same(got, want), (got[2, 2], want[2, 2])


def as_float64_array(value):
    """The old reading: every bound sequence a float64 array, every NumPy scalar a Python float."""
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return float(value)
    return np.asarray(value, dtype=np.float64)


@pytest.mark.parametrize("name,src", cases(FIXED))
def test_each_fixed_source_shows_the_old_difference(name, src):
    """Running the source on the old reading gives another outcome, so the test above fails if
    ndjit goes back to it."""
    want, old = cpython(src, name), cpython(src, name, as_float64_array(VALUES[name]))
    if isinstance(want, Exception) or isinstance(old, Exception):
        assert type(want) is not type(old), (want, old)
    else:
        assert not same(old, want), src


@pytest.mark.parametrize("name,src", [(n, s) for n, sources in REFUSED.items() for s in sources])
def test_what_ndjit_does_not_model_is_refused(name, src):
    want = cpython(src, name)
    with pytest.raises((ndjit.FilterCompileError, TypeError)) as e:
        run_ndjit(src, name)
    # Not the oracle's own error: ndjit refuses at compile time, before any pixel.
    assert not isinstance(e.value, ndjit.FilterRuntimeError), (e.value, want)


@pytest.mark.parametrize("value,message", [
    ((1, 0.5), "mixes ints and floats"),
    ([[1.0, 2.0], [3.0, 4.0]], "is nested"),
    ([np.float64(1.0), np.float64(2.0)], "holds float64"),
    ((True, False), "holds bool"),
    ((1, 2**53 + 1), "past 2**53"),
    (np.array([1, 2**60]), "past 2**53"),
    (np.array([[1, -(2**62)]]), "past 2**53"),
    (np.longdouble(2.5), "float64 arithmetic is what you mean"),
    (np.array(2.5), "is a 0-d array"),
])
def test_sequences_ndjit_cannot_hold_are_refused_with_the_fix(value, message):
    with pytest.raises(TypeError, match=message.replace("*", r"\*")):
        ndjit.generic_filter(IMAGE, SOURCE.format("x[4]"), size=3, extra_arguments=(value,))


def test_rebinding_another_kind_is_refused_without_recompiling():
    f = ndjit.jit_filter(SOURCE.format("V[0] // V[1]"), extra_arguments=((7, 2),))
    assert same(ndi.generic_filter(IMAGE, f.bind(V=(9, 4)), size=3), np.full(IMAGE.shape, 2.0))
    for other, kind in [((9.0, 4.0), "a tuple of floats"), (np.array([9, 4]), "an int64 array"),
                        (np.float64(2.0), "an np.float64")]:
        with pytest.raises(Exception, match=f"compiled as a tuple of ints, but {kind} was given"):
            f.bind(V=other)


@pytest.mark.parametrize("first,second", [((BIG,), (float(BIG),)), ((float(BIG),), (BIG,)),
                                          (0.0, -0.0), (np.float64(2.675), 2.675)])
def test_values_equal_in_python_but_of_another_kind_do_not_share_a_compiled_filter(first, second):
    # (BIG,) == (float(BIG),) and 0.0 == -0.0 in Python: ndjit's compile cache must tell them apart.
    src = "V[0] * 3 - V[0] * 2" if isinstance(first, tuple) else "math.copysign(1.0, V) + round(V, 2)"
    for value in (first, second):
        want = cpython(src, "", value)
        got = ndjit.generic_filter(IMAGE, SOURCE.format(src), size=3, extra_arguments=(value,))
        assert same(got, want), (value, got[0, 0], want[0, 0])
    assert not same(cpython(src, "", first), cpython(src, "", second))


def test_bound_values_round_trip_with_their_kind():
    values = {"a": (1, 2), "b": (1.5,), "c": np.array([3, 4]), "d": np.array([True, False]),
              "e": np.int64(5), "f": np.float64(0.5)}
    f = ndjit.jit_filter("def f(x, a, b, c, d, e, f):\n    return x[0]", extra_keywords=values)
    got = f.bound_values
    for k, v in values.items():
        assert type(got[k]) is type(v), (k, got[k])
        assert np.array_equal(got[k], v), (k, got[k])
        if isinstance(v, np.ndarray):
            assert got[k].dtype == v.dtype, (k, got[k].dtype)


class Settings:
    kernel = np.array([[1.0, 2.0], [3.0, 4.0]])


KERNEL = np.array([[1.0, 2.0], [3.0, 4.0]])


def row_of_attribute(x):
    return np.sum(Settings.kernel[1]) + x[0]


def row_of_default(x, k=KERNEL):
    return np.sum(k[1]) + x[0]


def row_of_global(x):
    return np.sum(KERNEL[1]) + x[0]


@pytest.mark.parametrize("f", [row_of_attribute, row_of_default, row_of_global])
def test_a_2d_array_is_2d_however_it_is_bound(f):
    # `k[1]` is a row (sum 7); read flat, it was element 1 (2).
    want = ndi.generic_filter(IMAGE, f, size=3)
    assert same(ndjit.generic_filter(IMAGE, f, size=3), want)
    assert np.allclose(want - ndi.generic_filter(IMAGE, lambda x: x[0], size=3), 7.0)


@pytest.mark.parametrize("first,second", [(np.array([5.0]), np.float64(5.0)), (np.float64(5.0), np.array([5.0]))])
def test_arrays_of_another_shape_do_not_share_a_compiled_filter(first, second):
    # Same dtype and bytes: the compile cache must key the shape too (`V[0]` of a scalar raises).
    src = "V[0] + 0.0"
    for value in (first, second):
        want = cpython(src, "", value)
        if isinstance(want, Exception):
            with pytest.raises(Exception):
                ndjit.generic_filter(IMAGE, SOURCE.format(src), size=3, extra_arguments=(value,))
        else:
            assert same(ndjit.generic_filter(IMAGE, SOURCE.format(src), size=3, extra_arguments=(value,)), want)


def test_rebinding_another_shape_or_an_int_for_a_float_is_refused():
    two_d = ndjit.jit_filter(SOURCE.format("np.sum(V[1]) + 0.0"), extra_arguments=(KERNEL,))
    with pytest.raises(TypeError, match="compiled as a 2-D array"):
        two_d.bind(V=KERNEL.ravel())
    one_d = ndjit.jit_filter(SOURCE.format("np.sum(V[1]) + 0.0"), extra_arguments=(KERNEL.ravel(),))
    with pytest.raises(TypeError, match="compiled as a 1-D array"):
        one_d.bind(V=KERNEL)
    # `-V` of an int 0 is 0, of a float -0.0: an int does not fill a float's slot.
    negate = ndjit.jit_filter(SOURCE.format("-V"), extra_arguments=(1.0,))
    for other, kind in ((0, "an int"), (False, "a bool")):
        with pytest.raises(Exception, match=f"compiled as a float, but {kind} was given"):
            negate.bind(V=other)


T_SHARED = np.array([7.0, 0.0])


def _int_pair_helper():
    T_SHARED = np.array([7, 0])  # noqa: N806 - the same name as the global, on purpose

    def helper(v):
        return T_SHARED[0] // T_SHARED[1] + v

    return helper


def test_a_name_bound_to_values_of_two_kinds_in_a_helper_and_the_filter_is_refused():
    helper = _int_pair_helper()

    def f(x):
        return helper(x[0]) + T_SHARED[0] / T_SHARED[1]

    with pytest.raises(TypeError, match="means different values"):
        ndjit.jit_filter(f)


def test_inspecting_a_filter_with_numpy_scalars_bound():
    f = ndjit.jit_filter(SOURCE.format("x[0] * V"), extra_arguments=(np.float64(2.0),))
    assert "fmul" in f.clif
    assert f.bind(V=np.float64(3.0)).clif
