"""Sizes at the edges of what NumPy allows: arrays of 33 to 64 dimensions, footprints too large to
compile into unrolled code, and sizes too large for memory. Every case either matches scipy running
the Python function or raises scipy's exception; none kills or hangs the process."""
import subprocess
import sys

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import assert_same

SRC = "x[0] * 2.0 + x[len(x) // 2] - x[-1]"


def py_filter(x):
    return x[0] * 2.0 + x[len(x) // 2] - x[-1]


@pytest.mark.parametrize("ndim", [33, 40, 64])
def test_arrays_of_up_to_64_dimensions_match_scipy(ndim, rng):
    # Once a PanicException (a BaseException) with a Rust backtrace from 33 dimensions on.
    shape = (2,) + (1,) * (ndim - 3) + (3, 4)
    a = rng.random(shape)
    size = [2] + [1] * (ndim - 3) + [3, 2]
    want = ndi.generic_filter(a, py_filter, size=size, mode="wrap")
    assert_same(ndjit.generic_filter(a, SRC, size=size, mode="wrap"), want)
    assert_same(ndi.generic_filter(a, ndjit.jit_filter(SRC), size=size, mode="wrap"), want)
    footprint = np.zeros(18, dtype=bool)
    footprint[[0, 4, 8, 17]] = True
    footprint = footprint.reshape([2] + [1] * (ndim - 3) + [3, 3])
    assert_same(ndjit.generic_filter(a, SRC, footprint=footprint),
                ndi.generic_filter(a, py_filter, footprint=footprint))


def test_generic_filter1d_on_40_dimensions_matches_scipy(rng):
    a = rng.random((3,) + (1,) * 38 + (5,))

    def shift(iline, oline):
        oline[...] = iline[:-2] * 2.0 + iline[2:]

    assert_same(ndjit.generic_filter1d(a, shift, 3, axis=0), ndi.generic_filter1d(a, shift, 3, axis=0))


def _reflect(i, n):
    """scipy's 'reflect' index on an axis of length n, by its period 2n."""
    m = i % (2 * n)
    return m if m < n else 2 * n - 1 - m


def test_a_million_taps_run_without_compiling_unrolled_code():
    # The row kernel unrolled over 10**6 taps took ~10 s and 1.3 GB to compile (10**7 took 10 GB
    # and aborted the process). Run in a child, whose peak memory shows what was compiled.
    # scipy is not the oracle here: from ~1000 taps on an array of 5 it reads garbage for the
    # first pixel (2.4e-322 in scipy 1.17), so the expected values come from the mode's rule.
    script = ("import resource, numpy as np, ndjit\n"
              "print(ndjit.generic_filter(np.arange(5.0), 'x[0] + x[-1]', size=10**6).tolist())\n"
              "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    values, peak_mib = out.stdout.split("\n")[:2]
    n = 10**6
    assert eval(values) == [float(_reflect(j - n // 2, 5) + _reflect(j + n // 2 - 1, 5)) for j in range(5)]
    assert int(peak_mib) < 400, f"peak RSS {peak_mib} MiB"


def test_footprints_above_the_unrolled_size_match_scipy(rng):
    # 70 001 taps on a 2 x 9 image: the general callback's result, scipy's where scipy is sound.
    a = rng.random((2, 9))
    size = (1, 70_001)
    f = ndjit.jit_filter("np.max(x) - x[len(x) // 2]")
    assert_same(ndjit.generic_filter(a, f, size=size, mode="constant", cval=-1.0),
                ndi.generic_filter(a, f, size=size, mode="constant", cval=-1.0))


def test_sizes_too_large_for_memory_raise_memory_error():
    a = np.arange(10.0).reshape(2, 5)
    f = ndjit.jit_filter1d("def f(iline, oline):\n    oline[:] = iline[:len(oline)]\n")
    # The extended line of 2**62 values once aborted the process.
    with pytest.raises(MemoryError, match="unable to allocate the extended input line"):
        ndjit.generic_filter1d(a, f, 2**62)
    # NumPy refuses the footprint itself, as it does under scipy.
    with pytest.raises((MemoryError, ValueError)):
        ndjit.generic_filter(a, "x[0]", size=(2**40, 2**40))


def test_an_integer_array_to_a_huge_power_is_refused_not_expanded():
    # Found by the front-end fuzzer: the power of an int array is expanded into squarings per
    # element, an expression that doubled with each one (2**63 nodes exhausted the memory).
    for src, jit in [("np.argsort(x) ** 0x7fffffffffffffff", ndjit.jit_filter),
                     ("lambda v: np.mean(np.abs(v) ** 0x7fffffffffffffff)", ndjit.jit_transform)]:
        with pytest.raises(ndjit.FilterSyntaxError, match="to the power 9223372036854775807") as e:
            jit(src)
        assert "x.astype(float) ** k" in str(e.value.hint)


def test_an_integer_array_to_a_large_power_below_the_bound_is_numpys(rng):
    img = rng.integers(0, 5, (6, 7)).astype(np.float64)
    for k in (3, 1023):
        src = f"np.sum(np.argsort(x, kind='stable') ** {k})"
        got = ndi.generic_filter(img, ndjit.jit_filter(src), size=3)
        with np.errstate(over="ignore"):
            want = ndi.generic_filter(img, lambda b: np.sum(np.argsort(b, kind="stable") ** k), size=3)
        assert_same(got, want)
