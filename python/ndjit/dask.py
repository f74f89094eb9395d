"""ndjit on Dask arrays and Zarr stores: ``generic_filter`` chunk by chunk, exact at chunk edges.

``generic_filter(darr, function, ...)`` returns a lazy Dask array equal, bit for bit, to
``scipy.ndimage.generic_filter`` over the whole array, for every mode, footprint, origin, axes,
dtype and chunking (chunks thinner than the footprint and irregular chunks included). Each output
chunk gathers its halo from the *global* array (``_halo``: the mode applies at the array's true
edges only, never at inner chunk edges, unlike ``map_overlap(boundary="none")``), filters it with
ndjit's native driver and keeps its interior. Only thin slabs of neighbouring chunks travel between
workers, and no task holds more than one chunk and its halo.

Filters travel to process workers pickled as their source and bound values (never machine code)
and are compiled once per worker process (``ndjit._filter``'s cache, keyed by content).

Thread budget: ndjit's own threads inside a task follow the scheduler, so two pools never
oversubscribe the cores. On a ``dask.distributed`` worker a task uses the worker's thread count
divided by the number of tasks it is running now (at least 1); under Dask's local schedulers,
whose pool already runs one task per core, a task uses 1 thread. ``workers=n`` sets it explicitly.

Needs the optional dependencies: ``pip install "ndjit[dask]"`` (from a checkout:
``pip install "./python[dask]"``).
"""
from __future__ import annotations

import functools
import itertools
import operator
import sys
from typing import Optional

import numpy as np
from scipy.ndimage import _ni_support

from . import _halo
from ._driver import generic_filter as _generic_filter
from ._filter import as_filter
from ._scipy_args import check_workers, footprint_and_origins

__all__ = ["generic_filter", "filter_zarr"]

_EXTRA_HINT = ('ndjit.dask needs the optional dependencies dask[array], distributed and zarr: '
               'pip install "ndjit[dask]" (from a checkout: pip install "./python[dask]")')


def _dask_array():
    """``dask.array``, or an ImportError naming the extra that brings it."""
    try:
        import dask.array as da
    except ImportError as e:
        raise ImportError(f"{_EXTRA_HINT} ({e})") from e
    return da


def _task_threads() -> int:
    """ndjit's threads for one task: the distributed worker's threads shared among the tasks it
    runs now, or 1 under the local schedulers (their pool already fills the cores)."""
    try:
        from distributed import get_worker
        state = get_worker().state
    except (ImportError, ValueError):  # not inside a distributed worker
        return 1
    return max(1, state.nthreads // max(1, len(state.executing)))


def _assemble(nested, axis: int, ndim: int, xp):
    """The block from slabs nested ``ndim - axis`` lists deep, the outer level along ``axis``."""
    parts = nested if axis == ndim - 1 else [_assemble(part, axis + 1, ndim, xp) for part in nested]
    return parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=axis)


def _filter_chunk(slabs, takes, interiors, *, function, footprint, mode, cval, origins, out_dtype, workers):
    """One output chunk: assembles its gathered block from the slabs, filters it, keeps the
    interior."""
    shape = tuple(s.stop - s.start for s in interiors)
    first = slabs
    for _ in interiors:
        if not first:
            return np.empty(shape, out_dtype)  # an empty chunk
        first = first[0]
    xp = np if isinstance(first, np.ndarray) else sys.modules[type(first).__module__.split(".")[0]]
    block = _assemble(slabs, 0, len(interiors), xp)
    for axis, take in enumerate(takes):
        if take is not None:
            block = xp.take(block, xp.asarray(take), axis=axis)
    device = xp is not np
    out = _generic_filter(block, function, footprint=footprint, mode=mode, cval=cval, origin=origins,
                          output=out_dtype, workers=None if device else (workers or _task_threads()),
                          target="cuda" if device else "cpu")
    return xp.ascontiguousarray(out[tuple(interiors)])


def _output_dtype(output, input) -> np.dtype:
    """scipy's output dtype rules (``_get_output``); an output *array* has no meaning for a lazy
    result."""
    if output is not None and not isinstance(output, (type, np.dtype, str)):
        raise TypeError("a Dask result is a new lazy array: pass output as a dtype (np.float32, 'uint8'), "
                        "not an array (to fill an existing array or store, use .store() or .to_zarr())")
    return _ni_support._get_output(output, np.empty(0, input.dtype), shape=(0,)).dtype


def _nested_slabs(dsk: dict, source, name: str, block: tuple, gathers) -> list:
    """Adds to ``dsk`` one task per slab ``block`` reads (a slice of one input chunk, cut where
    that chunk lies, so only the slab travels) and returns their keys nested one list level per
    axis. A slab that is a whole input chunk is that chunk's own key."""
    ndim = len(gathers)

    def level(prefix: tuple):
        axis = len(prefix)
        if axis < ndim:
            return [level(prefix + (slab,)) for slab in gathers[axis].slabs]
        chunk = (source.name,) + tuple(k for k, _, _ in prefix)
        if all(lo == 0 and hi == source.chunks[a][k] for a, (k, lo, hi) in enumerate(prefix)):
            return chunk
        key = (name,) + block + tuple(itertools.chain.from_iterable((k, lo) for k, lo, _ in prefix))
        dsk[key] = (operator.getitem, chunk, tuple(slice(lo, hi) for _, lo, hi in prefix))
        return key

    return level(())


def generic_filter(input, function, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0,
                   extra_arguments=(), extra_keywords=None, *, axes=None, workers: Optional[int] = None):
    """``scipy.ndimage.generic_filter`` on a Dask array: a lazy Dask array, chunked as ``input``,
    whose value equals scipy's filter over the whole array bit for bit. Arguments as scipy's
    (``output`` is a dtype); ``workers`` is ndjit's thread count per task (default: the thread
    budget in this module's documentation). Chunks of CuPy arrays run with ``target="cuda"``."""
    da = _dask_array()
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    if not isinstance(input, da.Array):
        input = da.asarray(input)
    if input.dtype.kind == "c":
        raise TypeError("Complex type not supported")
    footprint, origins = footprint_and_origins(input.ndim, size, footprint, origin, axes, mode)
    out_dtype = _output_dtype(output, input)
    check_workers(workers)
    f = as_filter(function, tuple(extra_arguments or ()), extra_keywords)
    cval = float(cval)
    meta = da.utils.meta_from_array(input._meta, input.ndim, dtype=out_dtype)
    if input.ndim == 0:  # one element, one chunk: no halo
        whole = functools.partial(_generic_filter, function=f, footprint=footprint, mode=mode, cval=cval,
                                  origin=origins, output=out_dtype, workers=1)
        return input.map_blocks(whole, meta=meta)

    token = tokenize(input.name, f._spec.key(), footprint, mode, cval, origins, out_dtype.str, workers)
    name, slab_name = f"ndjit-generic_filter-{token}", f"ndjit-halo-{token}"
    gathers = [_halo.axis_gathers(c, footprint.shape[a], origins[a], mode) for a, c in enumerate(input.chunks)]
    # The filter rides in a partial: a Filter is a tuple (a LowLevelCallable), which Dask would
    # otherwise take apart as a nested task.
    run = functools.partial(_filter_chunk, function=f, footprint=footprint, mode=mode, cval=cval, origins=origins,
                            out_dtype=out_dtype, workers=workers)
    dsk: dict = {}
    for block in itertools.product(*(range(len(c)) for c in input.chunks)):
        here = [gathers[a][i] for a, i in enumerate(block)]
        slabs = _nested_slabs(dsk, input, slab_name, block, here)
        dsk[(name,) + block] = (run, slabs, [g.take for g in here], [g.interior for g in here])
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[input])
    return da.Array(graph, name, input.chunks, meta=meta)


def filter_zarr(source, target, function, size=None, footprint=None, output=None, mode="reflect", cval=0.0,
                origin=0, extra_arguments=(), extra_keywords=None, *, axes=None, workers: Optional[int] = None,
                overwrite: bool = False, compute: bool = True):
    """Filters a Zarr array into a new Zarr array, chunk by chunk, with the same chunks: memory is
    bounded by a few chunks per thread, not by the image. ``source``/``target`` are anything
    ``dask.array.from_zarr``/``to_zarr`` accept (a path, a URL, a store, a ``zarr.Array``);
    ``compute=False`` returns the lazy store operation instead of running it. The other
    arguments are :func:`generic_filter`'s."""
    da = _dask_array()
    result = generic_filter(da.from_zarr(source), function, size, footprint, output, mode, cval, origin,
                            extra_arguments, extra_keywords, axes=axes, workers=workers)
    return result.to_zarr(target, overwrite=overwrite, compute=compute)
