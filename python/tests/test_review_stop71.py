"""Stop 71's review of generic_filter1d against scipy (a helper's differential fuzzer, about
440,000 cases): scipy's order of argument errors when the element types are unsupported too,
a float axis, and an empty array's element types. (The overlapping outputs it also checked are
in test_native.py.)"""
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

SRC = "def f(iline, oline):\n    oline[...] = iline[:len(oline)]\n"


def _copy(iline, oline):
    oline[...] = iline[:len(oline)]


def _outcome(fn, f, x, **kw):
    try:
        fn(x, f, 3, **kw)
        return "ok"
    except Exception as e:  # the exception's type is what must agree
        return type(e).__name__


@pytest.mark.parametrize("kw", [
    dict(output=np.float16, axis=5),           # AxisError first
    dict(output="complex64", origin=7),        # ValueError('invalid origin') first
    dict(output=np.float16, origin=1.0),       # the C layer's TypeError for a float origin
    dict(output=np.float16, cval="x"),         # ... and for a cval that is not a real number
    dict(output=np.float16, filter_size=3.0),  # ... and for a float size
])
def test_argument_errors_come_before_unsupported_element_types(kw):
    size = kw.pop("filter_size", 3)
    want = _outcome(lambda x, f, _, **k: ndi.generic_filter1d(x, f, size, **k), _copy, np.zeros((4, 5)), **kw)
    got = _outcome(lambda x, f, _, **k: ndjit.generic_filter1d(x, f, size, **k), ndjit.jit_filter1d(SRC),
                   np.zeros((4, 5)), **kw)
    assert want != "RuntimeError" and got == want


@pytest.mark.parametrize("axis", [1.0, 1.5, -1.0, np.float64(0.0)])
def test_a_float_axis_is_a_type_error(axis):
    """scipy's Python layer lets a float axis through; its C layer refuses it."""
    x = np.random.default_rng(0).random((3, 6))
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        ndi.generic_filter1d(x, _copy, 3, axis=axis)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        ndjit.generic_filter1d(x, ndjit.jit_filter1d(SRC), 3, axis=axis)


@pytest.mark.parametrize("shape", [(0, 2), (2, 0), (0,)])
@pytest.mark.parametrize("output", [np.complex128, np.float16])
def test_an_empty_arrays_unsupported_element_types_are_refused(shape, output):
    """scipy's line buffers check the element types before any line: an empty array too."""
    for fn, f in ((ndi.generic_filter1d, _copy), (ndjit.generic_filter1d, ndjit.jit_filter1d(SRC))):
        with pytest.raises(RuntimeError, match="array type"):
            fn(np.zeros(shape), f, 3, output=output)


def test_the_n_d_filter_reads_cval_before_the_element_types():
    f = ndjit.jit_filter("np.max(x)")
    with pytest.raises(TypeError, match="must be real number"):
        ndi.generic_filter(np.zeros((4, 5)), lambda v: v.max(), size=3, output=np.float16, cval="x")
    with pytest.raises(TypeError, match="must be real number"):
        ndjit.generic_filter(np.zeros((4, 5)), f, size=3, output=np.float16, cval="x")


def _unaligned(shape, fill=0.0):
    raw = np.zeros(int(np.prod(shape)) * 8 + 1, np.uint8)
    a = raw[1:].view(np.float64).reshape(shape)
    a[...] = fill
    assert not a.flags.aligned
    return a


@pytest.mark.parametrize("axis,strides", [(1, (8, 16)), (0, (16, 8)), (0, (24, 8))])
def test_an_unaligned_output_overlapping_itself_is_written_back_as_scipys_copy(axis, strides):
    """scipy fills an unaligned output's aligned copy and writes it back by NumPy's assignment,
    whose order (not C order) decides which line's values stay where the elements overlap (a
    second review of stop 71)."""
    data = np.random.default_rng(4).standard_normal((40, 30))
    outs = []
    for fn, f in ((ndi.generic_filter1d, _copy), (ndjit.generic_filter1d, ndjit.jit_filter1d(SRC))):
        base = _unaligned((2000,))
        view = np.lib.stride_tricks.as_strided(base, shape=data.shape, strides=strides, writeable=True)
        fn(data, f, 3, axis=axis, output=view)
        outs.append(base.tobytes())
    assert outs[0] == outs[1]


def test_a_read_only_output_is_refused_before_the_cval_and_the_element_types():
    out = np.zeros((4, 5), np.float16)
    out.flags.writeable = False
    for fn, f in ((ndi.generic_filter1d, _copy), (ndjit.generic_filter1d, ndjit.jit_filter1d(SRC))):
        with pytest.raises(ValueError, match="read-only"):
            fn(np.zeros((4, 5)), f, 3, output=out, cval="x")
    for fn, f in ((ndi.generic_filter, lambda v: v.max()), (ndjit.generic_filter, ndjit.jit_filter("np.max(x)"))):
        with pytest.raises(ValueError, match="read-only"):
            fn(np.zeros((4, 5)), f, size=3, output=out, cval="x")


def test_the_size_is_read_before_the_extra_arguments():
    for fn in (ndi.generic_filter1d, ndjit.generic_filter1d):
        with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
            fn(np.zeros((4, 5)), lambda i, o, k: None, 3.0, extra_arguments=[1])
