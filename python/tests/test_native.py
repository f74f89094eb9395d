"""ndjit.generic_filter is scipy.ndimage.generic_filter, bit for bit, given ndjit's own callable:
a randomised sweep over modes, origins, footprints, dtypes, shapes, strides, output dtypes and axes,
plus scipy's errors with scipy's exception types."""
import itertools

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-mirror", "grid-constant", "grid-wrap"]
DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float32", "float64"]
FILTERS = [ndjit.jit_filter(s) for s in ["np.mean(x) * 3.7 - 1.1", "np.median(x)", "max(x) - x[0] if len(x) else -1.0",
                                          "np.sum(x * x) / (len(x) + 0.5)"]]


def _random_case(rng):
    ndim = int(rng.integers(0, 5))
    shape = tuple(int(s) for s in rng.integers(0, 7, ndim)) if rng.random() < 0.2 else tuple(int(s) for s in rng.integers(1, 9, ndim))
    dtype = DTYPES[rng.integers(len(DTYPES))]
    scale = 300 if dtype not in ("bool", "float32", "float64") else 1
    data = (rng.random(shape) * scale * (1 if dtype.startswith("u") or dtype == "bool" else rng.choice([-1, 1]))).astype(dtype) if ndim else np.array(rng.random() * scale).astype(dtype)
    if ndim and rng.random() < 0.4:  # non-contiguous / negative-stride views
        big = np.concatenate([data, data], axis=0)
        data = big[::-2] if rng.random() < 0.5 else big[::2]
    axes = None
    nax = max(ndim, 1) if ndim else 0
    if ndim >= 2 and rng.random() < 0.3:
        axes = tuple(int(a) for a in rng.choice(ndim, size=int(rng.integers(1, ndim + 1)), replace=False))
        nax = len(axes)
    fshape = tuple(int(s) for s in rng.integers(1, 4, nax))
    footprint = rng.random(fshape) < 0.7 if nax else None
    origin = [int(rng.integers(-(s // 2), s - s // 2)) for s in fshape] if nax and rng.random() < 0.5 else 0
    out_dtype = DTYPES[rng.integers(len(DTYPES))] if rng.random() < 0.3 else None
    return data, footprint, fshape, origin, axes, out_dtype


@pytest.mark.parametrize("seed", range(160))
def test_random_sweep_is_bit_identical_to_scipy(seed):
    rng = np.random.default_rng(seed)
    data, footprint, fshape, origin, axes, out_dtype = _random_case(rng)
    mode = MODES[seed % len(MODES)]
    f = FILTERS[seed % len(FILTERS)]
    kw = dict(mode=mode, cval=float(rng.normal() * 5), origin=origin)
    if axes is not None:
        kw["axes"] = axes
    if footprint is None:
        kw["size"] = 1
    else:
        kw["footprint"] = footprint
    if out_dtype is not None:
        kw["output"] = np.dtype(out_dtype)

    def run(fn):
        with np.errstate(all="ignore"):
            try:
                return fn(data, f, **kw), None
            except Exception as e:
                return None, e

    want, werr = run(ndi.generic_filter)
    got, gerr = run(ndjit.generic_filter)
    if werr is not None:
        assert type(gerr) is type(werr) or isinstance(gerr, type(werr)), (werr, gerr)
        return
    assert gerr is None, gerr
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), "not bit-identical"


@pytest.mark.parametrize("mode,dtype", list(itertools.product(MODES, DTYPES)))
def test_every_mode_and_dtype(mode, dtype):
    rng = np.random.default_rng(7)
    data = (rng.random((9, 8)) * 200).astype(dtype)
    f = FILTERS[1]
    for origin in (0, -1, 1):
        want = ndi.generic_filter(data, f, size=3, mode=mode, cval=3.5, origin=origin)
        got = ndjit.generic_filter(data, f, size=3, mode=mode, cval=3.5, origin=origin)
        assert got.tobytes() == want.tobytes()


def test_output_cast_is_scipys_c_cast():
    data = np.array([[300.0, -1.0, np.nan]])
    f = ndjit.jit_filter("x[0]")
    for out in ("uint8", "int32", "int8", "uint16"):
        want = ndi.generic_filter(data, f, size=1, output=np.dtype(out))
        got = ndjit.generic_filter(data, f, size=1, output=np.dtype(out))
        assert got.tobytes() == want.tobytes(), out


# Where a cast to an integer could part from scipy's C cast: both sides of each limit, NaN,
# infinities, signed zeros, fractions, subnormals.
CAST_VALUES = np.array([np.nan, np.inf, -np.inf, 300.7, -1.5, 1e10, -3e9, 2.0**31, -2.0**31 - 1, -2.0**31,
                        2.0**31 - 0.5, 2.0**32 + 5, 2.0**63, -2.0**63, 2.0**64, -1e19, -0.0, 0.999, 255.5,
                        65535.9, -32769.2, 5e-324, 1e300, -1e300])


@pytest.mark.parametrize("out", ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64",
                                 "int64", "float32", "float64"])
def test_every_output_dtype_is_scipys_cast_contiguous_or_strided(out):
    # The driver writes a contiguous line of outputs through a vectorised loop and a strided
    # one element by element: both must be scipy's cast (x86-64's cvttsd2si for the integers).
    img = np.random.default_rng(1).choice(CAST_VALUES, size=(13, 17))
    pick = lambda w: w[4]  # noqa: E731
    with np.errstate(invalid="ignore", over="ignore"):
        inputs = [img, img.astype(np.float32), img[::2, ::-1]]
    for src in inputs:
        want = ndi.generic_filter(src, pick, size=3, output=np.dtype(out), mode="nearest")
        got = ndjit.generic_filter(src, "x[4]", size=3, output=np.dtype(out), mode="nearest")
        assert got.tobytes() == want.tobytes(), (out, src.dtype, src.strides)
        strided = [np.zeros((src.shape[0], 2 * src.shape[1]), out)[:, ::2] for _ in range(2)]
        ndi.generic_filter(src, pick, size=3, output=strided[0], mode="nearest")
        ndjit.generic_filter(src, "x[4]", size=3, output=strided[1], mode="nearest")
        assert strided[1].tobytes() == strided[0].tobytes(), (out, src.dtype, "strided output")


@pytest.mark.parametrize("kwargs,exc", [
    (dict(size=3, origin=2), ValueError),
    (dict(), RuntimeError),
    (dict(size=3, mode="bogus"), RuntimeError),
    (dict(footprint=np.ones((3, 3, 3), bool)), RuntimeError),
    (dict(size=3, output=np.zeros((2, 2))), RuntimeError),
])
def test_scipys_errors(kwargs, exc):
    data = np.zeros((5, 5))
    with pytest.raises(exc):
        ndi.generic_filter(data, FILTERS[0], **kwargs)
    with pytest.raises(exc):
        ndjit.generic_filter(data, FILTERS[0], **kwargs)


def test_input_dtypes_scipy_rejects():
    with pytest.raises(TypeError):
        ndjit.generic_filter(np.zeros((3, 3), complex), FILTERS[0], size=3)
    with pytest.raises(RuntimeError):
        ndjit.generic_filter(np.zeros((3, 3), np.float16), FILTERS[0], size=3)


@pytest.mark.parametrize("out", [np.float16, np.complex64, np.complex128, np.longdouble, ">f8", "<i2", np.bool_,
                                 np.uint64, "l", "q"])
def test_output_types_as_scipy(out):
    """Output element types: refused (RuntimeError) exactly where scipy refuses them, the same
    bytes elsewhere, byte-swapped and platform-named types included."""
    data = np.random.default_rng(5).random((4, 5)) * 50
    try:
        want = ndi.generic_filter(data, FILTERS[0], size=3, output=out)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=str(e)):
            ndjit.generic_filter(data, FILTERS[0], size=3, output=out)
        return
    got = ndjit.generic_filter(data, FILTERS[0], size=3, output=out)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_the_dispatch_has_the_drivers_signature():
    """`ndjit.generic_filter` spells out `_driver.generic_filter`'s parameters (for speed, not
    `*args, **kwargs`): the same names, kinds and defaults, or a default would differ silently."""
    import inspect
    from ndjit import _driver, _dispatch
    ours = inspect.signature(_dispatch.generic_filter, follow_wrapped=False)
    assert ours == inspect.signature(_driver.generic_filter)
    assert ndjit.generic_filter is _dispatch.generic_filter


def test_run_time_errors_and_foreign_callables():
    with pytest.raises(IndexError, match="index 20 is out of bounds"):
        ndjit.generic_filter(np.zeros((4, 4)), "x[20]", size=3)
    from scipy import LowLevelCallable
    import ctypes
    CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_void_p, ctypes.c_void_p)
    llc = LowLevelCallable(CB(lambda *a: 1), signature="int (double *, intptr_t, double *, void *)")
    with pytest.raises(TypeError, match="not made by ndjit"):
        ndjit.generic_filter(np.zeros((4, 4)), llc, size=3)


def test_in_place_output_matches_scipy():
    data = np.random.default_rng(1).random((10, 10))
    a, b = data.copy(), data.copy()
    ndi.generic_filter(a, FILTERS[0], size=3, output=a)
    ndjit.generic_filter(b, FILTERS[0], size=3, output=b)
    assert a.tobytes() == b.tobytes()


def _smooth(iline, oline):
    oline[...] = iline[:-2] + 2.0 * iline[1:-1] + iline[2:]


def _overlapping(a, case):
    """An input view of `a` and an output view of it that shares memory with the input."""
    return {
        "in place": (a, a),
        "one line down": (a[:-1], a[1:]),
        "one line up": (a[1:], a[:-1]),
        "one column right": (a[:, :-1], a[:, 1:]),
        "transposed": (a[:70, :70], a[:70, :70].T),
        "reversed": (a, a[::-1]),
    }[case]


@pytest.mark.parametrize("case,shape", [
    (case, shape) for shape in [(900, 70), (6, 40000)]
    for case in ["in place", "one line down", "one line up", "one column right", "transposed", "reversed"]
    if case != "transposed" or shape[0] >= 70])  # the transposed view needs 70 lines
@pytest.mark.parametrize("axis", [0, 1])
def test_filter1d_output_overlapping_its_input_matches_scipy(case, axis, shape):
    """scipy filters such lines in batches of its 256000-byte line buffer, each batch read before
    it is written, so later batches read what earlier ones wrote (a 900×70 array: three batches
    of rows along axis 1, 444 + 444 + 12, and two of columns along axis 0, 35 + 35; lines of 40000
    values: one line a batch). Parallel lines would read them in any order: the driver must
    follow scipy's batches."""
    base = np.random.default_rng(7).standard_normal(shape)
    want, got = base.copy(), base.copy()
    ndi.generic_filter1d(*_overlapping(want, case)[:1], _smooth, 3, axis=axis,
                         output=_overlapping(want, case)[1])
    f = ndjit.jit_filter1d(_smooth)
    ndjit.generic_filter1d(*_overlapping(got, case)[:1], f, 3, axis=axis, output=_overlapping(got, case)[1])
    assert got.tobytes() == want.tobytes()
    assert not np.array_equal(got, base)  # the filter wrote where the input is


def test_filter1d_overlapping_unaligned_arrays_read_the_input_as_it_was():
    """scipy reads an unaligned input (and writes an unaligned output) through an aligned copy,
    so an overlapping input is read as it was before any line is written."""
    def unaligned(values):
        raw = np.zeros(values.nbytes + 1, np.uint8)
        a = raw[1:].view(np.float64).reshape(values.shape)
        a[...] = values
        assert not a.flags.aligned
        return a
    base = np.random.default_rng(8).standard_normal((700, 60))
    want, got = unaligned(base), unaligned(base)
    ndi.generic_filter1d(want[:-1], _smooth, 3, axis=1, output=want[1:])
    ndjit.generic_filter1d(got[:-1], ndjit.jit_filter1d(_smooth), 3, axis=1, output=got[1:])
    assert got.tobytes() == want.tobytes()


def test_filter1d_self_overlapping_output_is_written_in_scipys_order():
    """Every line written over the same memory (a zero stride): the last line in C order wins."""
    data = np.random.default_rng(9).standard_normal((500, 30))
    want, got = np.zeros(30), np.zeros(30)
    for out in (want, got):
        view = np.lib.stride_tricks.as_strided(out, shape=data.shape, strides=(0, 8), writeable=True)
        (ndi.generic_filter1d if out is want else ndjit.generic_filter1d)(
            data, _smooth if out is want else ndjit.jit_filter1d(_smooth), 3, axis=1, output=view)
    assert got.tobytes() == want.tobytes()
    assert np.any(want != 0)


def _difference(iline, oline):
    oline[...] = iline[2:] - iline[:-2]


@pytest.mark.parametrize("dtype", DTYPES)
def test_big_endian_arrays_as_scipy(dtype):
    """Byte-swapped input, output dtype and output arrays (scipy converts them): the same bytes
    as scipy, in the same dtype, and a given output array is the one filled."""
    swapped = np.dtype(dtype).newbyteorder(">" if np.little_endian else "<")
    data = (np.random.default_rng(3).random((9, 8)) * 200).astype(swapped)
    f, f1d = FILTERS[2], ndjit.jit_filter1d(_difference)
    for output in (None, swapped, np.float64):
        want = ndi.generic_filter(data, f, size=3, output=output)
        got = ndjit.generic_filter(data, f, size=3, output=output)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), output
        want = ndi.generic_filter1d(data, f1d, 3, axis=0, output=output)
        got = ndjit.generic_filter1d(data, f1d, 3, axis=0, output=output)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), output
    want, got = data.copy(), data.copy()  # in place: the output is the (byte-swapped) input
    ndi.generic_filter(want, f, size=3, output=want)
    assert ndjit.generic_filter(got, f, size=3, output=got) is got
    assert got.tobytes() == want.tobytes()


def test_big_endian_read_only_output():
    out = np.zeros((4, 4), ">f8")
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ndi.generic_filter(np.zeros((4, 4)), FILTERS[0], size=3, output=out)
    with pytest.raises(ValueError, match="read-only"):
        ndjit.generic_filter(np.zeros((4, 4)), FILTERS[0], size=3, output=out)


# Bodies the row kernel computes in lane groups of 4 pixels (src/jit/lanes.rs), with the remainder
# of each row pixel by pixel: every row width from 1 to 2 groups + 1, data with NaN, ±0 and ±inf.
LANE_SOURCES = [
    "max(x) - min(x)",
    "np.var(x)",
    "def f(x):\n    t = 0.0\n    c = 0\n    for v in x:\n        if not np.isnan(v):\n            t += v\n            c += 1\n    return t / c if c else np.nan\n",
    "(x[len(x) // 2] - np.mean(x)) / np.std(x)",
    "np.count_nonzero(x > 0.5) + (x[0] if x[0] > x[1] else -x[1])",
]


@pytest.mark.parametrize("src", LANE_SOURCES)
def test_lane_groups_match_scipy_at_every_row_remainder(src):
    rng = np.random.default_rng(len(src))
    special = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0])
    f = ndjit.jit_filter(src)
    for width in range(1, 10):
        data = rng.integers(-4, 5, (5, width)) / 4.0
        picks = rng.random(data.shape) < 0.2
        data[picks] = rng.choice(special, size=int(picks.sum()))
        with np.errstate(all="ignore"):
            want = ndi.generic_filter(data, f, size=3, mode="reflect")
            got = ndjit.generic_filter(data, f, size=3, mode="reflect", workers=1)
        assert np.array_equal(want, got, equal_nan=True) and (np.signbit(want) == np.signbit(got)).all(), (src, width)


def test_lane_groups_report_the_first_failing_pixel_as_scipy():
    # ValueError where the centre leaves [-1, 1], ZeroDivisionError where the right neighbour
    # truncates to 0: one of each in a row, in either order, at every pair of lane positions.
    f = ndjit.jit_filter("math.acos(x[4]) + 1 // int(x[5])")
    for width in range(1, 10):
        for value_error, zero_division in itertools.permutations(range(width), 2):
            data = np.ones((3, width))
            data[1, value_error] = 2.0
            if zero_division + 1 < width:
                data[1, zero_division + 1] = 0.5
            first = ValueError if value_error < zero_division or zero_division + 1 >= width else ZeroDivisionError
            kw = dict(size=3, mode="constant", cval=1.0)
            with pytest.raises(first) as want:
                ndi.generic_filter(data, f, **kw)
            with pytest.raises(first) as got:
                ndjit.generic_filter(data, f, workers=1, **kw)
            assert str(got.value) == str(want.value)
