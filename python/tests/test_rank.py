"""The rank executor (issue 14) against scipy running the plain Python callback, bit for bit.

Min, max, range, median, percentile and ``np.sort(x)[k]`` take the native rank executor under the
default engine when the data allow it (no NaN; no ``-0.0`` except for the median), and the general
engine otherwise: both must give scipy's result. Random footprints (box, cross, disk, random
masks), modes, origins, ``cval``s, dtypes and NaN/±inf/-0.0 data, on shapes up to smaller than
the footprint, in 1-3 dimensions.
"""
import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

# (ndjit source, the plain callback, whether -0.0 may be in the data: NumPy's own min/max, sort
# and quantiles pick between zeros of both signs by where its SIMD loops and introselect leave
# them, which every engine refuses with ValueError (python/tests/test_zero_signs.py); the median
# and Python's builtins are exact.)
FILTERS = [
    ("min(x)", lambda v: min(v), True),
    ("max(x)", lambda v: max(v), True),
    ("np.min(x)", np.min, False),
    ("x.max() - x.min()", lambda v: v.max() - v.min(), False),
    ("np.median(x)", np.median, True),
    ("np.percentile(x, 90)", lambda v: np.percentile(v, 90), False),
    ("np.quantile(x, 0.3)", lambda v: np.quantile(v, 0.3), False),
    ("np.sort(x)[0]", lambda v: np.sort(v)[0], False),
]
DTYPES = [np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint32, np.int64, np.float32,
          np.float64]
MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-wrap", "grid-constant"]


def footprint(rng, ndim):
    kind = rng.integers(4)
    if kind == 0:
        return np.ones(tuple(rng.integers(1, 5, ndim)), bool)
    if kind == 1:
        return ndi.generate_binary_structure(ndim, 1)
    if kind == 2 and ndim == 2:
        r = int(rng.integers(1, 4))
        y, x = np.mgrid[-r:r + 1, -r:r + 1]
        return x * x + y * y <= r * r
    fp = rng.random(tuple(rng.integers(1, 5, ndim))) < 0.6
    fp.flat[0] = True
    return fp


def data(rng, dtype, shape, zeros):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        lo, hi = (info.min, info.max) if rng.random() < 0.5 else (max(info.min, -3), 4)
        return rng.integers(lo, int(hi) + 1, shape, dtype=dtype) if hi > lo else np.zeros(shape, dtype)
    a = rng.integers(-3, 4, shape).astype(dtype)
    if rng.random() < 0.3:
        specials = [np.nan, np.inf, -np.inf] + ([-0.0, 0.0] if zeros else [])
        mask = rng.random(shape) < 0.1
        a[mask] = rng.choice(specials, mask.sum())
    return a


def same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "f":
        g, w = got.copy(), want.copy()
        assert np.array_equal(np.isnan(g), np.isnan(w))
        g[np.isnan(g)] = 0
        w[np.isnan(w)] = 0
        assert g.tobytes() == w.tobytes(), (got, want)
    else:
        assert np.array_equal(got, want), (got, want)


def test_random_rank_filters_equal_scipy_with_the_plain_callback():
    rng = np.random.default_rng(14)
    compiled = {src: ndjit.jit_filter(src) for src, _, _ in FILTERS}
    for case in range(250):
        src, plain, zeros = FILTERS[rng.integers(len(FILTERS))]
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(s) for s in rng.integers(1, 8 if ndim < 3 else 5, ndim))
        dtype = DTYPES[rng.integers(len(DTYPES))]
        x = data(rng, dtype, shape, zeros)
        fp = footprint(rng, ndim)
        origin = [int(rng.integers(n)) - n // 2 for n in fp.shape]
        mode = MODES[rng.integers(len(MODES))]
        cval = float(rng.choice([0.0, 2.0, 0.5, -1.0]))
        kw = dict(footprint=fp, mode=mode, cval=cval, origin=origin)
        with np.errstate(invalid="ignore"):  # NumPy's lerp of inf - inf warns
            want = ndi.generic_filter(x, plain, **kw)
        got = ndjit.generic_filter(x, compiled[src], workers=1 + case % 2, **kw)
        same_bits(got, want)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.uint64, np.float32,
                                   np.float64])
@pytest.mark.parametrize("src,plain", [("np.median(x)", np.median),
                                       ("np.percentile(x, 37)", lambda v: np.percentile(v, 37))])
def test_large_footprints_equal_scipy(dtype, src, plain):
    """Beyond the selection networks: the sliding histogram (8-bit), ranks (the other types),
    on an image smaller than the footprint and on one whose lines several bands serve (two
    workers), with a NaN in the float data, and a -0.0 for the median (their windows patched;
    NumPy's percentile of both zeros is refused: test_zero_signs.py)."""
    rng = np.random.default_rng(5)
    small = data(rng, dtype, (14, 17), False)
    wide = data(rng, dtype, (36, 150), False)
    if wide.dtype.kind == "f":
        wide[5, 7] = np.nan
        wide[30, 100] = -0.0 if src == "np.median(x)" else 2.0
    y, x = np.mgrid[-7:8, -7:8]
    for image in (small, wide):
        for fp in (np.ones((9, 13), bool), np.ones((12, 12), bool), x * x + y * y <= 49):
            for mode in ("mirror", "constant"):
                same_bits(ndjit.generic_filter(image, src, footprint=fp, mode=mode, cval=1.0,
                                               workers=2),
                          ndi.generic_filter(image, plain, footprint=fp, mode=mode, cval=1.0))


@pytest.mark.parametrize("dtype,shape", [(np.float32, (2048, 4096)), (np.uint16, (4096, 4096))])
def test_outputs_too_large_to_stay_cached_are_streamed_exactly(dtype, shape):
    """Outputs of 32 MiB and more take streaming stores (`rank::store::Store::Streamed`), boxes
    and disks (a chord table): the same values at every column, into an output whose lines start
    off 32-byte addresses, from two threads, and the windows that read a NaN written NaN after
    the rank pass's streams."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 1000, shape).astype(dtype)
    if a.dtype.kind == "f":
        a[rng.integers(0, shape[0], 40), rng.integers(0, shape[1], 40)] = np.nan
    # One value in, so that no line of the output starts on a 32-byte address; written once,
    # so that its pages are mapped (fresh pages are stored through the caches).
    buf = np.zeros(a.size + 1, dtype)
    buf.fill(1)
    out = buf[1:].reshape(shape)
    y, x = np.mgrid[-3:4, -3:4]
    box, disk = np.ones((7, 9), bool), x * x + y * y <= 9
    for src, builtin in (("np.min(x)", ndi.minimum_filter), ("np.max(x)", ndi.maximum_filter)):
        for fp in (box, disk):
            got = ndjit.generic_filter(a, src, footprint=fp, mode="reflect", workers=2, output=out)
            assert got is out
            if a.dtype.kind == "f":
                # np.min and np.max propagate NaN; the other windows are the built-in's.
                fill = np.inf if builtin is ndi.minimum_filter else -np.inf
                want = builtin(np.where(np.isnan(a), fill, a), footprint=fp, mode="reflect")
                want[ndi.maximum_filter(np.isnan(a), footprint=fp, mode="reflect")] = np.nan
            else:
                want = builtin(a, footprint=fp, mode="reflect")
            same_bits(out, want)
