"""Numba cfuncs for ``scipy.ndimage.generic_filter``, as ``LowLevelCallable``s that survive pickling.

A Numba cfunc's ``LowLevelCallable`` holds a PyCapsule, which cannot be pickled (numba#3418), so it
cannot reach Dask's process workers. This subclass pickles to the filter's name and compiles the
cfunc again, once per process, where it is loaded: what a dask-image user has to write. It lives in
its own module so that workers import it by name (a function of ``__main__`` would not unpickle).
"""
import numpy as np
from scipy import LowLevelCallable

_cache: dict = {}


class PicklableCfunc(LowLevelCallable):
    def __new__(cls, function, name):
        self = super().__new__(cls, function)
        self._name = name
        return self

    def __reduce__(self):
        return (numba_callable, (self._name,))


def numba_callable(name: str) -> LowLevelCallable:
    """The cfunc for ``name`` (``"range 5x5"`` or ``"nanmean 5x5"``), compiled once per process."""
    if name in _cache:
        return _cache[name]
    from numba import carray, cfunc, types

    sig = types.intc(types.CPointer(types.float64), types.intp, types.CPointer(types.float64), types.voidptr)
    if name == "range 5x5":
        def body(values_ptr, n, result, data):
            v = carray(values_ptr, (n,))
            result[0] = v.max() - v.min()
            return 1
    elif name == "nanmean 5x5":
        def body(values_ptr, n, result, data):
            result[0] = np.nanmean(carray(values_ptr, (n,)))
            return 1
    else:
        raise ValueError(name)
    _cache[name] = PicklableCfunc(cfunc(sig)(body).ctypes, name)
    return _cache[name]
