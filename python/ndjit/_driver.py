"""``ndjit.generic_filter`` on NumPy and device arrays: scipy's ``generic_filter``, run by ndjit's
native multithreaded driver (or, with ``target="cuda"``, its GPU kernels).

Arguments are interpreted by scipy's own helpers (``_scipy_args``), so every check, warning and
error is scipy's, in scipy's order. The filtering itself runs in Rust with the GIL released, on
all cores by default, and gives the same array as
``scipy.ndimage.generic_filter(input, ndjit.jit_filter(function), ...)``, bit for bit. Dask arrays
take their own path (``_dispatch``), whose chunks come back here.
"""
from __future__ import annotations

import operator
from typing import Optional

import numpy as np

try:  # scipy's own (an AxisError for any int, 2**70 too), as generic_filter1d calls it
    from scipy._lib._util import normalize_axis_index
except ImportError:  # older scipy: NumPy's (an OverflowError past 64 bits)
    try:  # NumPy >= 2
        from numpy.lib.array_utils import normalize_axis_index
    except ImportError:  # NumPy 1.x
        from numpy.core.multiarray import normalize_axis_index

from . import _core, _cuda
from ._filter import Filter, compiled_filter, jit_filter1d, located
from ._scipy_args import (check_element_types, check_mode, check_workers, check_writeable, footprint_and_origins,
                          into, native, output_like, real_cval, scipy_extras)

__all__ = ["generic_filter", "generic_filter1d"]


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
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target must be 'cpu' or 'cuda', not {target!r}")
    if target == "cuda":
        if workers is not None:
            raise TypeError("workers applies to target='cpu' only")
        cai = _cuda.interface(input)
        if cai is not None:
            return _cuda.generic_filter_device(input, cai, function, size, footprint, output, mode, cval, origin,
                                               extra_arguments, extra_keywords, axes)
    input = native(np.asarray(input))
    if input.dtype.kind == "c":  # np.iscomplexobj of an array, without its call
        raise TypeError("Complex type not supported")
    footprint, origins = footprint_and_origins(input.ndim, size, footprint, origin, axes, mode)
    output = output_like(output, input, every_element_written=True)
    check_workers(workers)
    # scipy's C layer then reads the output (read-only: an error), the cval and the extra
    # arguments, and meets the element types last.
    check_writeable(output)
    cval = real_cval(cval)
    extras = scipy_extras(extra_arguments, extra_keywords)
    check_element_types(input.dtype, output.dtype, input.size)
    # The GPU runs the IR as PTX: no native code unless a CPU call asks for it later.
    spec, compiled = compiled_filter(function, extras, extra_keywords, native=target == "cpu")
    with located(spec):
        if target == "cuda":
            return into(output, lambda out: _core.cuda_filter_host(input, out, compiled, footprint, mode,
                                                                   cval, origins))
        return into(output, lambda out: _core.generic_filter(input, out, compiled, footprint, mode,
                                                             cval, origins, workers))


def filter_region(block: np.ndarray, function, footprint: np.ndarray, mode: str, cval: float, origins,
                  out_dtype, workers: Optional[int], region) -> np.ndarray:
    """``generic_filter`` of ``block`` (native, C-contiguous) at the pixels of ``region`` (a
    slice per axis) only, those returned (a view): for a block holding a halo its caller
    gathered (the Dask face), whose own pixels' windows the whole array does not have, so the
    filter must never see them (they could raise, or loop). Arguments as checked by the caller."""
    block = native(block)
    spec, compiled = compiled_filter(function, (), None)
    box = [(s.start, s.stop) for s in region]
    with located(spec):
        output = into(np.empty(block.shape, out_dtype),
                      lambda out: _core.generic_filter(block, out, compiled, footprint, mode, cval, origins,
                                                       workers, box))
    return output[tuple(region)]


def generic_filter1d(input, function, filter_size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0,
                     extra_arguments=(), extra_keywords=None, *, workers: Optional[int] = None):
    """A drop-in for ``scipy.ndimage.generic_filter1d`` run by ndjit's native driver: ``function``
    is an :class:`ndjit.Filter` from :func:`ndjit.jit_filter1d` or anything it accepts."""
    input = native(np.asarray(input))
    if np.iscomplexobj(input):
        raise TypeError("Complex type not supported")
    output = output_like(output, input)
    if filter_size < 1:
        raise RuntimeError("invalid filter size")
    axis = normalize_axis_index(axis, input.ndim)
    if (filter_size // 2 + origin < 0) or (filter_size // 2 + origin >= filter_size):
        raise ValueError("invalid origin")
    check_mode(mode)
    check_workers(workers)
    # scipy's C layer then reads its arguments in this order, the size, the axis and the origin
    # as integers (bools too, never floats: scipy's Python layer lets `axis=1.5` through), the
    # output (read-only: an error), the cval, then the extra arguments, and meets the element
    # types last, even an empty array's.
    size, axis = operator.index(filter_size), operator.index(axis)
    check_writeable(output)
    cval, origin = real_cval(cval), operator.index(origin)
    compiled = isinstance(function, Filter)
    if compiled:
        if function.kind != "filter1d":
            raise TypeError(f"generic_filter1d needs a generic_filter1d callback, not a {function.kind} one")
        if extra_arguments or extra_keywords:
            raise TypeError("this ndjit.Filter is compiled already: bind values with f.bind(...)")
    else:
        extras = scipy_extras(extra_arguments, extra_keywords)
    check_element_types(input.dtype, output.dtype, 1)
    # (Not through the decorator form, which takes a missing function for `@jit_filter1d(...)`.)
    f = function if compiled else jit_filter1d.__wrapped__(function, extra_arguments=extras,
                                                           extra_keywords=extra_keywords)
    with located(f._spec):
        return into(output, lambda out: _core.generic_filter1d(input, out, f._compiled, size, axis, mode, cval,
                                                               origin, workers))
