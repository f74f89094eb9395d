"""``ndjit.generic_filter``: scipy's ``generic_filter``, run by ndjit's native multithreaded driver.

Arguments are interpreted by scipy's own helpers (size/footprint, axes, origins, output), so every
check, warning and error is scipy's, in scipy's order. The filtering itself runs in Rust with the
GIL released, on all cores by default, and gives the same array as
``scipy.ndimage.generic_filter(input, ndjit.jit_filter(function), ...)``, bit for bit.
"""
from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np
from scipy import LowLevelCallable
from scipy.ndimage import _filters as _scipy_filters
from scipy.ndimage import _ni_support

try:  # NumPy >= 2
    from numpy.lib.array_utils import normalize_axis_index
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import normalize_axis_index

from . import _core
from ._filter import Filter, jit_filter, jit_filter1d

__all__ = ["generic_filter", "generic_filter1d"]


def _as_filter(function: Any, extra_arguments: tuple, extra_keywords: Optional[dict]) -> Filter:
    if isinstance(function, Filter):
        if function.kind != "filter":
            raise TypeError(f"generic_filter needs a generic_filter callback, not a {function.kind} one")
        if extra_arguments or extra_keywords:
            raise TypeError("this ndjit.Filter is compiled already: bind values with f.bind(...) or jit_filter(..., extra_arguments=...)")
        return function
    if isinstance(function, LowLevelCallable):
        raise TypeError("ndjit.generic_filter runs ndjit filters; this LowLevelCallable was not made by ndjit "
                        "(pass the Python function instead, or use scipy.ndimage.generic_filter)")
    return jit_filter(function, extra_arguments=extra_arguments, extra_keywords=extra_keywords)


def _is_dask_array(a: Any) -> bool:
    """Whether ``a`` is a Dask array; Dask is not imported when it is not loaded already (no Dask
    array can exist then)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(a, da.Array)


def _native(a: np.ndarray) -> np.ndarray:
    """``a`` in the machine's byte order: big-endian input (``'>f8'``), which scipy accepts, is
    converted exactly, as scipy's own C layer does."""
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


def _into(output: np.ndarray, run) -> np.ndarray:
    """Calls ``run(out)`` to fill ``output``; a byte-swapped ``output`` (the driver writes native
    order only) is filled through a native array, then written back."""
    if output.dtype.isnative:
        run(output)
        return output
    if not output.flags.writeable:
        raise ValueError("output array is read-only")
    native = np.empty(output.shape, output.dtype.newbyteorder("="))
    run(native)
    output[...] = native
    return output


def _footprint_and_origins(ndim: int, size, footprint, origin, axes, mode):
    """scipy's own normalisation of ``size``/``footprint``/``origin``/``axes``/``mode``: the
    n-d boolean footprint and one origin per axis, with scipy's checks and errors in its order."""
    if (size is not None) and (footprint is not None):
        import warnings
        warnings.warn("ignoring size because footprint is set", UserWarning, stacklevel=3)
    axes = _ni_support._check_axes(axes, ndim)
    num_axes = len(axes)
    if footprint is None:
        if size is None:
            raise RuntimeError("no footprint or filter size provided")
        sizes = _ni_support._normalize_sequence(size, num_axes)
        footprint = np.ones(sizes, dtype=bool)
    else:
        footprint = np.asarray(footprint, dtype=bool)
    footprint = _scipy_filters._expand_footprint(ndim, axes, footprint)
    origins = _scipy_filters._expand_origin(ndim, axes, origin)
    fshape = [ii for ii in footprint.shape if ii > 0]
    if len(fshape) != ndim:
        raise RuntimeError(f"footprint.ndim ({footprint.ndim}) must match len(axes) ({num_axes})")
    for o, lenf in zip(origins, fshape):
        if (lenf // 2 + o < 0) or (lenf // 2 + o >= lenf):
            raise ValueError("invalid origin")
    if not footprint.flags.contiguous:
        footprint = footprint.copy()  # as scipy does (np.ascontiguousarray would make 0-d 1-d)
    _ni_support._extend_mode_to_code(mode)  # scipy's error for an unknown mode
    return footprint, [int(o) for o in origins]


def generic_filter(input, function, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0,
                   extra_arguments=(), extra_keywords=None, *, axes=None, workers: Optional[int] = None,
                   target: str = "cpu"):
    """A drop-in for ``scipy.ndimage.generic_filter`` that runs natively on ``workers`` threads
    (``None``: all cores). ``function`` is an :class:`ndjit.Filter` or anything
    :func:`ndjit.jit_filter` accepts (compiled on the fly, cached).

    ``target="cuda"`` runs the same filter as a GPU stencil kernel: NumPy input is copied to the
    device and back (the result is a NumPy array); a CuPy array, or anything with
    ``__cuda_array_interface__``, is filtered in place on the device and the result is an array
    of the same kind. Raises :class:`ndjit.CudaUnavailableError` without a usable GPU.

    A Dask array ``input`` gives a lazy Dask array (:func:`ndjit.dask.generic_filter`)."""
    if _is_dask_array(input):
        if target != "cpu":
            raise TypeError("target applies to NumPy and device arrays: Dask chunks of CuPy arrays run on the GPU by themselves")
        from .dask import generic_filter as dask_filter
        return dask_filter(input, function, size, footprint, output, mode, cval, origin, extra_arguments,
                           extra_keywords, axes=axes, workers=workers)
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target must be 'cpu' or 'cuda', not {target!r}")
    if target == "cuda":
        from . import _cuda
        if workers is not None:
            raise TypeError("workers applies to target='cpu' only")
        if _cuda.is_device_array(input):
            return _cuda.generic_filter_device(input, function, size, footprint, output, mode, cval, origin,
                                               extra_arguments, extra_keywords, axes)
    input = _native(np.asarray(input))
    if np.iscomplexobj(input):
        raise TypeError("Complex type not supported")
    footprint, origins = _footprint_and_origins(input.ndim, size, footprint, origin, axes, mode)
    output = _ni_support._get_output(output, input)
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    f = _as_filter(function, tuple(extra_arguments or ()), extra_keywords)
    if target == "cuda":
        return _into(output, lambda out: _core.cuda_filter_host(input, out, f._compiled, footprint, mode,
                                                                float(cval), origins))
    return _into(output, lambda out: _core.generic_filter(input, out, f._compiled, footprint, mode, float(cval),
                                                          origins, workers))


def generic_filter1d(input, function, filter_size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0,
                     extra_arguments=(), extra_keywords=None, *, workers: Optional[int] = None):
    """A drop-in for ``scipy.ndimage.generic_filter1d`` run by ndjit's native driver: ``function``
    is an :class:`ndjit.Filter` from :func:`ndjit.jit_filter1d` or anything it accepts."""
    input = _native(np.asarray(input))
    if np.iscomplexobj(input):
        raise TypeError("Complex type not supported")
    output = _ni_support._get_output(output, input)
    if filter_size < 1:
        raise RuntimeError("invalid filter size")
    axis = normalize_axis_index(axis, input.ndim)
    if (filter_size // 2 + origin < 0) or (filter_size // 2 + origin >= filter_size):
        raise ValueError("invalid origin")
    _ni_support._extend_mode_to_code(mode)
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if isinstance(function, Filter):
        if function.kind != "filter1d":
            raise TypeError(f"generic_filter1d needs a generic_filter1d callback, not a {function.kind} one")
        if extra_arguments or extra_keywords:
            raise TypeError("this ndjit.Filter is compiled already: bind values with f.bind(...)")
        f = function
    else:
        f = jit_filter1d(function, extra_arguments=tuple(extra_arguments or ()), extra_keywords=extra_keywords)
    return _into(output, lambda out: _core.generic_filter1d(input, out, f._compiled, int(filter_size), int(axis),
                                                            mode, float(cval), int(origin), workers))
