"""scipy's argument handling for ``generic_filter``, shared by the NumPy, CUDA and Dask paths.

``size``/``footprint``/``origin``/``axes``/``mode`` are normalised by scipy's own helpers, so every
check, warning and error is scipy's, in scipy's order. Normalising takes several microseconds,
more than a small image's whole run, so the result for plain arguments (``size``, ``origin`` and
``axes`` as ints or tuples of ints, ``mode`` a string) is remembered.
"""
from __future__ import annotations

import functools
import operator
import sys
import warnings
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
from scipy.ndimage import _filters as _scipy_filters
from scipy.ndimage import _ni_support

_PACKAGE = __name__.rpartition(".")[0] + "."

__all__ = ["footprint_and_origins", "native", "output_like", "into", "check_mode", "check_workers",
           "check_element_types", "check_writeable"]


def footprint_and_origins(ndim: int, size, footprint, origin, axes, mode) -> Tuple[np.ndarray, List[int]]:
    """The n-d boolean footprint (C-contiguous) and one origin per axis, with scipy's checks and
    errors in its order. A remembered footprint is read-only: it is shared between calls."""
    if footprint is None and _plain(size) and _plain(origin) and _plain(axes) and type(mode) is str:
        shape, fp, origins = _normalised(ndim, size, origin, axes, mode)
        return (np.ones(shape, dtype=bool) if fp is None else fp), list(origins)
    if (size is None and type(footprint) is np.ndarray and footprint.dtype.kind in "biuf"
            and footprint.size <= _REMEMBERED_ELEMENTS and _plain(origin) and _plain(axes) and type(mode) is str):
        # A small numeric footprint array: remembered by its dtype, shape and bytes (equal keys are
        # equal arrays, which scipy reads alike).
        key = (footprint.dtype.str, footprint.shape, footprint.tobytes())
        fp, origins = _normalised_footprint(ndim, key, origin, axes, mode)
        return fp, list(origins)
    if (size is not None) and (footprint is not None):
        warnings.warn("ignoring size because footprint is set", UserWarning, stacklevel=_caller_level())
    return _normalise(ndim, size, footprint, origin, axes, mode)


@functools.lru_cache(maxsize=256)
def _normalised_footprint(ndim: int, key: tuple, origin, axes, mode: str) -> Tuple[np.ndarray, tuple]:
    """:func:`_normalise` for a footprint array given by ``(dtype, shape, bytes)`` and plain
    arguments, remembered (an error is raised anew each time); the footprint is read-only."""
    dtype, shape, data = key
    footprint = np.frombuffer(data, dtype=dtype).reshape(shape)
    fp, origins = _normalise(ndim, None, footprint, origin, axes, mode)
    fp = np.array(fp, dtype=bool, order="C")
    fp.flags.writeable = False
    return fp, tuple(origins)


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside ndjit, whichever entry point (NumPy, CUDA,
    Dask, ``inspect_ptx``) led here: a warning points at the user's call, as scipy's does."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _plain(value: Any) -> bool:
    """Whether ``value`` is ``None``, an ``int`` or a tuple of ``int``: arguments that are equal
    exactly when scipy reads them alike (``3.0 == 3`` and ``True == 1``, which scipy does not read
    alike, are excluded by type)."""
    if value is None or type(value) is int:
        return True
    return type(value) is tuple and all(type(v) is int for v in value)


# The largest footprint kept with its arguments (in elements): the memory stays small (4 KiB an
# entry) while larger footprints, whose runs take far longer than making them, are made anew.
_REMEMBERED_ELEMENTS = 4096


@functools.lru_cache(maxsize=256)
def _normalised(ndim: int, size, origin, axes, mode: str) -> Tuple[Tuple[int, ...], Optional[np.ndarray], tuple]:
    """:func:`_normalise` for plain arguments, remembered (an error is raised anew each time): the
    footprint's shape, the footprint itself unless it is large (one made from ``size`` is all
    ones), and the origins."""
    fp, origins = _normalise(ndim, size, None, origin, axes, mode)
    if fp.size > _REMEMBERED_ELEMENTS:
        return fp.shape, None, tuple(origins)
    fp.flags.writeable = False
    return fp.shape, fp, tuple(origins)


def _normalise(ndim: int, size, footprint, origin, axes, mode) -> Tuple[np.ndarray, List[int]]:
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
    check_mode(mode)
    return footprint, [_origin_int(o) for o in origins]


def _origin_int(origin) -> int:
    """An origin as scipy's C layer reads it (NumPy's ``PyArray_PyIntAsIntp``): an integer of any
    kind, but not a bool or a float, which ``int()`` would have accepted."""
    if isinstance(origin, (bool, np.bool_)):
        raise TypeError("an integer is required")
    return operator.index(origin)


def check_mode(mode) -> None:
    """scipy's error for an unknown mode."""
    _ni_support._extend_mode_to_code(mode)


def native(a: np.ndarray) -> np.ndarray:
    """``a`` in the machine's byte order: big-endian input (``'>f8'``), which scipy accepts, is
    converted exactly, as scipy's own C layer does."""
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


# The element types scipy's filters read and write (`NI_*`'s type switch), by kind and size.
_ELEMENT_TYPES = {("b", 1), ("u", 1), ("u", 2), ("u", 4), ("u", 8), ("i", 1), ("i", 2), ("i", 4), ("i", 8),
                  ("f", 4), ("f", 8)}


def check_element_types(input_dtype, output_dtype, size: int) -> None:
    """scipy's RuntimeError for element types its filters meet reading or writing an element and
    do not handle (a complex output among them: a complex input is its Python layer's TypeError,
    checked first by every caller), so an empty array passes (``generic_filter1d``'s line
    buffers check even an empty array's: its callers pass a ``size`` of 1). Raised after every
    argument check, as scipy's C layer meets the types last. The set mirrors the driver's
    `Dtype::from_kind`, for the lazy Dask face, which checks before any native call."""
    if not size or (input_dtype in _NATIVE_ELEMENT_TYPES and output_dtype in _NATIVE_ELEMENT_TYPES):
        return  # the common case, a set lookup: the general test cost a microsecond a call
    if any((d.kind, d.itemsize) not in _ELEMENT_TYPES for d in map(np.dtype, (input_dtype, output_dtype))):
        raise RuntimeError("array type not supported")


# The same types as NumPy dtypes in native byte order (others take the general test).
_NATIVE_ELEMENT_TYPES = frozenset(np.dtype(f"{kind}{size}") for kind, size in _ELEMENT_TYPES)


def output_like(output, input: np.ndarray, every_element_written: bool = False) -> np.ndarray:
    """scipy's ``output=`` rules (an array, a dtype, or ``None`` for the input's dtype). A new
    array is zeroed as scipy's is, unless the caller writes ``every_element_written`` before
    anyone sees it (``generic_filter``: one value per pixel, and on an error the array is never
    returned): zeroing 1024² bytes took 12 µs, a tenth of a 3×3 median of them."""
    # The common case, without scipy's dispatch (which makes a string's or a record's output from
    # the dtype's name: a TypeError for strings and bytes).
    if output is None and input.dtype.kind not in "VUS":
        new = np.empty if every_element_written else np.zeros
        return new(input.shape, dtype=input.dtype)
    return _ni_support._get_output(output, input)


def into(output: np.ndarray, run: Callable[[np.ndarray], None]) -> np.ndarray:
    """Calls ``run(out)`` to fill ``output``. A byte-swapped ``output`` (the driver writes native
    order only) or an unaligned one is filled through a native, aligned copy of it, written back
    afterwards, also when ``run`` raises: scipy's WRITEBACKIFCOPY copy, whose write-back is
    NumPy's assignment (its order decides an output whose elements overlap each other)."""
    if output.dtype.isnative and output.flags.aligned:
        run(output)
        return output
    check_writeable(output)
    buffer = output.astype(output.dtype.newbyteorder("="))
    try:
        run(buffer)
    finally:
        output[...] = buffer
    return output


def check_writeable(output: np.ndarray) -> None:
    """scipy's error for a read-only output, raised where its C layer reads the output argument."""
    if not output.flags.writeable:
        raise ValueError("output array is read-only")


def scipy_extras(extra_arguments, extra_keywords) -> tuple:
    """The callback's extra arguments after scipy's checks: a tuple, and a dict or None (its C
    layer raises RuntimeError for a list or a float)."""
    if not isinstance(extra_arguments, tuple):
        raise RuntimeError("extra_arguments must be a tuple")
    if extra_keywords is not None and not isinstance(extra_keywords, dict):
        raise RuntimeError("extra_keywords must be a dictionary")
    return extra_arguments


def real_cval(cval) -> float:
    """``cval`` as scipy's C layer reads it: a real number (bools and NumPy scalars too), never a
    string, None or a complex."""
    if not isinstance(cval, (str, bytes, bytearray)):
        try:
            return float(cval)
        except TypeError:
            pass
    raise TypeError(f"must be real number, not {type(cval).__name__}")


def check_workers(workers: Optional[int]) -> None:
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
