"""What the benchmarks compare ndjit against, in one place: the callbacks users write, and Numba's
cfunc recipe for them (the "llc" recipe of ../shared/bench/cpu_anchor.py). Imports no ndjit, so the
driver benchmark (which runs ndjit as a Rust binary) can use it too.
"""
import numpy as np
from scipy import LowLevelCallable


def fmin(values):
    result = np.inf
    for v in values:
        if v < result:
            result = v
    return result


def frange(values):
    lo = np.inf
    hi = -np.inf
    for v in values:
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    return hi - lo


def fmedian(values):
    return np.median(values)


def numba_llc(func):
    """`func` compiled by Numba and wrapped as a scipy LowLevelCallable; None without Numba."""
    try:
        import numba
        from numba import carray, cfunc
        from numba.types import CPointer, float64, intc, intp, voidptr
    except ImportError:
        return None
    jitted = numba.jit(func, nopython=True)

    @cfunc(intc(CPointer(float64), intp, CPointer(float64), voidptr))
    def wrapped(values_ptr, len_values, result, data):
        values = carray(values_ptr, (len_values,), dtype=float64)
        result[0] = jitted(values)
        return 1

    return LowLevelCallable(wrapped.ctypes)
