"""``target="cuda"`` on device arrays: anything with ``__cuda_array_interface__`` (CuPy, PyTorch,
Numba ...) is filtered where it lies, with no copies, and the result is an array of the same kind.

Arguments go through the same scipy normalisation as the CPU path (``_scipy_args``); the kernel runs
on the stream the array's producer names in its interface, so it is ordered after the work that
made the input.
"""
from __future__ import annotations

import functools
from typing import Any, Optional

import numpy as np

from . import _core
from ._errors import FilterRuntimeError
from ._filter import compiled_filter, locate_error
from ._scipy_args import footprint_and_origins, real_cval, scipy_extras

__all__ = ["is_available", "device", "is_device_array"]

def is_available() -> bool:
    """Whether ``target="cuda"`` can run here (an NVIDIA driver and a GPU)."""
    return _core.cuda_unavailable_reason() is None


def device(ordinal: int = 0) -> dict:
    """The GPU ``target="cuda"`` runs on: name, compute capability, driver version and the PTX
    target ndjit emits for it. Raises :class:`ndjit.CudaUnavailableError` without one."""
    name, capability, driver, ptx = _core.cuda_device(ordinal)
    return {"name": name, "compute_capability": capability, "driver_version": driver, "ptx_target": ptx}


def is_device_array(a: Any) -> bool:
    return interface(a) is not None


def interface(a: Any) -> Optional[dict]:
    """``a.__cuda_array_interface__``, or ``None`` for a NumPy array or an object without one. Read
    once per call and passed on: CuPy builds the dictionary afresh on every read."""
    if isinstance(a, np.ndarray):
        return None
    return getattr(a, "__cuda_array_interface__", None)


@functools.lru_cache(maxsize=64)
def _device_dtype(typestr: str):
    """The NumPy dtype of an array interface's typestr, worked out once per typestr: NumPy's dtype
    lookups cost microseconds, a tenth of a repeated call's host time."""
    return np.dtype(typestr)


def _describe(cai: dict, role: str):
    """``((pointer, typestr, shape, byte strides or None), dtype, stream)`` from an array interface
    (v2/v3); the typestr goes to the driver as the interface states it, and strides ``None``
    (C-contiguous) are worked out there."""
    dtype = _device_dtype(cai["typestr"])
    # scipy's first check; the driver refuses the other dtypes it does not take (float16 ...)
    # with scipy's errors when it reads the typestr.
    if dtype.kind == "c":
        raise TypeError("Complex type not supported")
    ptr, readonly = cai["data"]
    if role == "output" and readonly:
        raise ValueError("output array is read-only")
    return (ptr, cai["typestr"], cai["shape"], cai.get("strides")), dtype, cai.get("stream")


def _empty_like(a: Any, shape: tuple, dtype: np.dtype) -> Any:
    """A new device array of the input's kind, on its device."""
    module = type(a).__module__.split(".")[0]
    if module == "cupy":
        import cupy
        with cupy.cuda.Device(a.device.id):
            return cupy.empty(shape, dtype=dtype)
    if module == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype.name), device=a.device)
    if module == "numba":
        from numba import cuda
        return cuda.device_array(shape, dtype=dtype)
    raise TypeError(f"cannot allocate an output like a {type(a).__name__}: pass output= "
                    "(an array with __cuda_array_interface__)")


def generic_filter_device(input, cai, function, size, footprint, output, mode, cval, origin, extra_arguments,
                          extra_keywords, axes):
    """``input`` filtered on its device; ``cai`` is its array interface (:func:`interface`)."""
    in_arg, in_dtype, stream = _describe(cai, "input")
    shape = tuple(in_arg[2])
    footprint, origins = footprint_and_origins(len(shape), size, footprint, origin, axes, mode)
    if output is None or isinstance(output, (type, np.dtype, str)):
        output = _empty_like(input, shape, np.dtype(in_dtype if output is None else output))
    out_cai = interface(output)
    if out_cai is None:
        raise TypeError("output must be a device array (with __cuda_array_interface__) when the input is one")
    out_arg, _, _ = _describe(out_cai, "output")
    if tuple(out_arg[2]) != shape:
        raise RuntimeError("output shape not correct")
    # The GPU runs the IR as PTX: no native code unless a CPU call asks for it later.
    spec, compiled = compiled_filter(function, scipy_extras(extra_arguments, extra_keywords), extra_keywords,
                                     native=False)
    try:  # `located(spec)`, written out: its generator costs a microsecond on every call
        _core.cuda_filter_device(in_arg, out_arg, compiled, footprint, mode, real_cval(cval), origins,
                                 None if stream is None else int(stream))
    except FilterRuntimeError as e:
        locate_error(e, spec)
        raise
    return output
