"""``ndjit.generic_filter``: a Dask array goes to :mod:`ndjit.dask`, anything else to ``_driver``.

This is the one module that knows both paths, so that ``ndjit.dask`` (whose chunks run through
``_driver``) and ``_driver`` need not know each other. Dask is imported only for a Dask array.
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Optional

from . import _driver

__all__ = ["generic_filter"]


def _is_dask_array(a: Any) -> bool:
    """Whether ``a`` is a Dask array; Dask is not imported when it is not loaded already (no Dask
    array can exist then)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(a, da.Array)


@functools.wraps(_driver.generic_filter)
def generic_filter(input, function, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0,
                   extra_arguments=(), extra_keywords=None, *, axes=None, workers: Optional[int] = None,
                   target: str = "cpu"):
    # The signature spelled out, not `*args, **kwargs`: repacking them cost a microsecond a
    # call, a tenth of a small image's whole call. It is `_driver.generic_filter`'s, defaults
    # included (`test_native.py::test_the_dispatch_has_the_drivers_signature`).
    if _is_dask_array(input):
        if target not in ("cpu", "cuda"):  # as for NumPy input
            raise ValueError(f"target must be 'cpu' or 'cuda', not {target!r}")
        if target != "cpu":
            raise TypeError("target applies to NumPy and device arrays: Dask chunks of CuPy arrays run on the GPU by themselves")
        from .dask import generic_filter as dask_filter
        return dask_filter(input, function, size, footprint, output, mode, cval, origin, extra_arguments,
                           extra_keywords, axes=axes, workers=workers)
    return _driver.generic_filter(input, function, size, footprint, output, mode, cval, origin, extra_arguments,
                                  extra_keywords, axes=axes, workers=workers, target=target)
