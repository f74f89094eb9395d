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
import json
import math
import os
import sys
import threading
import time
import shutil
import uuid
from pathlib import Path
from typing import Optional

import numpy as np
from scipy.ndimage import _ni_support

from . import _halo
from ._driver import filter_region
from ._driver import generic_filter as _generic_filter
from ._filter import as_filter
from ._scipy_args import check_element_types, check_workers, footprint_and_origins, real_cval, scipy_extras

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


def _leaves(nested, ndim: int, path=()):
    """``(index path, slab)`` of each slab nested ``ndim`` lists deep."""
    if len(path) == ndim:
        yield path, nested
        return
    for i, part in enumerate(nested):
        yield from _leaves(part, ndim, path + (i,))


_scratch = threading.local()


def _block_buffer(shape, dtype, xp):
    """An array to assemble a block in. On the host, the calling thread's previous block when it
    has this shape and dtype: a block is read only while its chunk is filtered (the result is a
    new array), so the next chunk of the thread can reuse its memory, already paged in. This
    keeps one chunk-sized buffer per worker thread."""
    if xp is not np:
        return xp.empty(shape, dtype=dtype)
    buffer = getattr(_scratch, "block", None)
    if buffer is None or buffer.shape != shape or buffer.dtype != dtype:
        buffer = _scratch.block = np.empty(shape, dtype=dtype)
    return buffer


def _assemble(nested, ndim: int, xp):
    """The block from slabs nested ``ndim`` lists deep (the outer level along the first axis),
    written into one array (``_block_buffer``); a block of one slab is that slab.

    One copy, into memory already paged in: in a ``dask.distributed`` worker every large new array
    is a fresh ``mmap`` (the nanny sets ``MALLOC_TRIM_THRESHOLD_``, which fixes glibc's mmap
    threshold), whose page faults cost about what a fast filter does."""
    slabs = list(_leaves(nested, ndim))
    if len(slabs) == 1:
        return slabs[0][1]
    # The parts along each axis share their extent on it: read it from the first slab of each.
    starts = []
    for axis in range(ndim):
        sizes = {path[axis]: slab.shape[axis] for path, slab in slabs}
        starts.append(np.concatenate([[0], np.cumsum([sizes[i] for i in range(len(sizes))])]))
    block = _block_buffer(tuple(int(s[-1]) for s in starts), slabs[0][1].dtype, xp)
    for path, slab in slabs:
        block[tuple(slice(int(starts[a][i]), int(starts[a][i + 1])) for a, i in enumerate(path))] = slab
    return block


def _filter_chunk(slabs, picks, takes, interiors, *, function, footprint, mode, cval, origins, out_dtype,
                  workers):
    """One output chunk: assembles its gathered block from the slabs (``picks`` says which slab of a
    cut bundle each is, ``None`` for a whole chunk), filters it, keeps the interior."""
    shape = tuple(s.stop - s.start for s in interiors)
    slabs = _picked(slabs, picks)
    first = slabs
    for _ in interiors:
        if not first:
            return np.empty(shape, out_dtype)  # an empty chunk
        first = first[0]
    xp = np if isinstance(first, np.ndarray) else sys.modules[type(first).__module__.split(".")[0]]
    block = _assemble(slabs, len(interiors), xp)
    for axis, take in enumerate(takes):
        if take is not None:
            block = xp.take(block, xp.asarray(take), axis=axis)
    # The interior as a view: a copy would page in another chunk's worth of memory (see
    # `_assemble`), to save the halo's rows and columns (under 1% of a 1024² chunk).
    if xp is np:  # only the interior's pixels run the filter
        return filter_region(block, function, footprint, mode, cval, origins, out_dtype,
                             workers or _task_threads(), interiors)
    out = _generic_filter(block, function, footprint=footprint, mode=mode, cval=cval, origin=origins,
                          output=out_dtype, target="cuda")
    return out[tuple(interiors)]


def _picked(values, picks):
    """``values`` nested as ``picks``, each leaf a chunk (pick ``None``) or a bundle of cut slabs
    (pick: the slab's position in it)."""
    if isinstance(picks, list):
        return [_picked(v, p) for v, p in zip(values, picks)]
    return values if picks is None else values[picks]


def _cut(chunk, cuts):
    """The slabs of one input chunk that the halos of other chunks read, ``cuts`` giving each
    slab's ``(start, stop)`` per axis."""
    return tuple(chunk[tuple(slice(lo, hi) for lo, hi in cut)] for cut in cuts)


def _output_dtype(output, input) -> np.dtype:
    """scipy's output dtype rules (``_get_output``); an output *array* has no meaning for a lazy
    result."""
    if output is not None and not isinstance(output, (type, np.dtype, str)):
        raise TypeError("a Dask result is a new lazy array: pass output as a dtype (np.float32, 'uint8'), "
                        "not an array (to fill an existing array or store, use .store() or .to_zarr())")
    return _ni_support._get_output(output, np.empty(0, input.dtype), shape=(0,)).dtype


def _nested_slabs(source, bundles: str, gathers, cuts: dict):
    """The keys of the slabs an output chunk reads, nested one list level per axis (the outer
    level along the first axis), and the pick of each (see ``_picked``). A slab that is a whole
    input chunk is that chunk's own key; the others are cut from their chunk by one task per input
    chunk, which cuts every slab any output chunk reads from it (``cuts[chunk]``: slab → position,
    added to here), so a chunk's neighbours cost one task, not one per slab, and only the slabs
    travel."""
    ndim = len(gathers)

    def level(prefix: tuple):
        axis = len(prefix)
        if axis < ndim:
            parts = [level(prefix + (slab,)) for slab in gathers[axis].slabs]
            return [key for key, _ in parts], [pick for _, pick in parts]
        chunk = tuple(k for k, _, _ in prefix)
        if all(lo == 0 and hi == source.chunks[a][k] for a, (k, lo, hi) in enumerate(prefix)):
            return (source.name,) + chunk, None
        wanted = cuts.setdefault(chunk, {})
        return (bundles,) + chunk, wanted.setdefault(tuple((lo, hi) for _, lo, hi in prefix), len(wanted))

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
    if any(math.isnan(c) for chunks in input.chunks for c in chunks):
        raise ValueError("the Dask array's chunk sizes are unknown (boolean indexing makes such arrays): "
                         "call x.compute_chunk_sizes() first, as Dask's own map_overlap needs")
    if input.dtype.kind == "c":
        raise TypeError("Complex type not supported")
    footprint, origins = footprint_and_origins(input.ndim, size, footprint, origin, axes, mode)
    out_dtype = _output_dtype(output, input)
    check_element_types(input.dtype, out_dtype, input.size)
    check_workers(workers)
    f = as_filter(function, scipy_extras(extra_arguments, extra_keywords), extra_keywords)
    cval = real_cval(cval)
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
    cuts: dict = {}
    for block in itertools.product(*(range(len(c)) for c in input.chunks)):
        here = [gathers[a][i] for a, i in enumerate(block)]
        slabs, picks = _nested_slabs(input, slab_name, here, cuts)
        dsk[(name,) + block] = (run, slabs, picks, [g.take for g in here], [g.interior for g in here])
    for chunk, wanted in cuts.items():
        dsk[(slab_name,) + chunk] = (functools.partial(_cut, cuts=tuple(wanted)), (input.name,) + chunk)
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
    check_target(source, target)
    result = generic_filter(da.from_zarr(source), function, size, footprint, output, mode, cval, origin,
                            extra_arguments, extra_keywords, axes=axes, workers=workers)
    if not compute:
        return result.to_zarr(target, overwrite=overwrite, compute=False)
    staging = Staging(target, overwrite)
    try:
        result.to_zarr(staging.path, overwrite=staging.overwrite, compute=True)
    except BaseException:
        staging.discard()
        raise
    staging.commit()
    return None


class Staging:
    """Where to write an output store so that a failure loses nothing: a local output is written
    into a hidden sibling directory and moved into place once complete (the array it replaces,
    with ``overwrite``, goes only then); any other store is written in place (Zarr's own
    ``overwrite`` clears it first). Raises FileExistsError for a local Zarr array without
    ``overwrite``."""

    def __init__(self, target, overwrite: bool):
        location = _location(target) if isinstance(target, (str, os.PathLike)) else None
        self.final = Path(location) if location and Path(location).is_absolute() else None
        self.path, self.overwrite = target, overwrite
        if self.final is None:
            return
        if _zarr_node(self.final) is not None and not overwrite:
            raise FileExistsError(f"{os.fspath(self.final)!r} holds a Zarr array: pass overwrite=True "
                                  "(--overwrite) to replace it")
        self.path = os.fspath(self.final.parent / f".{self.final.name}.ndjit-partial-{uuid.uuid4().hex}")
        self.overwrite = False

    def commit(self) -> None:
        """Moves the complete store into place, replacing what was there."""
        if self.final is None:
            return
        old = self.final.parent / f".{self.final.name}.ndjit-old-{uuid.uuid4().hex}"
        replaced = self.final.exists()
        if replaced:
            os.replace(self.final, old)
        os.replace(self.path, self.final)
        if replaced:
            shutil.rmtree(old, ignore_errors=True)

    def discard(self) -> None:
        """Removes a partial store (the output, if any, is untouched). Dask raises a task's
        exception while other tasks may still be writing their chunks (and making the directory
        again): it is removed until it stays gone."""
        if self.final is None:
            return
        quiet = 0
        for _ in range(100):
            if os.path.lexists(self.path):
                shutil.rmtree(self.path, ignore_errors=True)
                quiet = 0
            else:
                quiet += 1
                if quiet == 3:
                    return
            time.sleep(0.02)


def _location(store) -> Optional[str]:
    """Where a store lies, as Dask and Zarr will open it: a local directory's resolved path,
    another file system's URL, or for a store object that names no place (memory) the object
    itself; None where a string names nothing fsspec can open.
    Strings go through fsspec, which reads ``file:``, ``local://``, ``simplecache::`` and ``~``
    as Zarr does; store objects are unwrapped (a ``zarr.Array``'s store and path, wrapper stores)
    down to a local root or a file system and path."""
    if isinstance(store, (str, os.PathLike)):
        try:
            from fsspec.core import url_to_fs
            fs, path = url_to_fs(os.path.expanduser(os.fspath(store)))
        except Exception:  # not a URL fsspec knows: Zarr could not open it either
            return None
        return _fs_location(fs, path)
    sub = ""
    if hasattr(store, "store") and isinstance(getattr(store, "path", None), str):  # a zarr.Array or Group
        store, sub = store.store, store.path
    for _ in range(16):  # wrapper stores (LoggingStore, cache stores) hold the one they wrap
        inner = getattr(store, "_store", None)
        if inner is None or inner is store:
            break
        store = inner
    root = getattr(store, "root", None)
    if isinstance(root, (str, os.PathLike)):
        return os.fspath((Path(root) / sub).resolve())
    fs, path = getattr(store, "fs", None), getattr(store, "path", None)
    if fs is not None and isinstance(path, str):
        return _fs_location(fs, f"{path.rstrip('/')}/{sub}" if sub else path)
    if store is not None and not isinstance(store, (str, os.PathLike)):
        # A store that names no place (memory): itself, by identity.
        return f"<store {id(store):x}>/{sub}".rstrip("/")
    return None


def _fs_location(fs, path: str) -> str:
    """A file system's path as one string: resolved on the local disk, a URL elsewhere."""
    from fsspec.implementations.local import LocalFileSystem
    for _ in range(16):  # a caching or async wrapper over the file system that holds the data
        inner = getattr(fs, "fs", None) or getattr(fs, "sync_fs", None)
        if isinstance(fs, LocalFileSystem) or inner is None or inner is fs:
            break
        fs = inner
    if isinstance(fs, LocalFileSystem):
        return os.fspath(Path(fs._strip_protocol(path)).resolve())
    return fs.unstrip_protocol(path).rstrip("/")


def _overlap(a: str, b: str) -> bool:
    """Whether one location is the other or holds it."""
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def _zarr_node(path: Path) -> Optional[str]:
    """"array" or "group" for a local Zarr node (format 2 or 3), None for anything else."""
    if (path / ".zarray").is_file():
        return "array"
    if (path / ".zgroup").is_file():
        return "group"
    try:
        return json.loads((path / "zarr.json").read_text()).get("node_type")
    except (OSError, ValueError, AttributeError):
        return None


def check_target(source, target) -> None:
    """Refuses an output store whose writing would destroy data before or instead of filtering
    it, or lose the result: no store at all, the input itself (Zarr clears the target before the lazy reads of the source run), a
    store inside the input or holding it, and a local path holding anything but a Zarr array (an
    ``overwrite`` would delete the whole directory or group). Raises TypeError, ValueError or
    FileExistsError."""
    if target is None:  # Zarr would write a store in memory, and the result would be lost
        raise TypeError("filter_zarr needs an output store (a path, a URL, a store or a zarr.Array), not None")
    if isinstance(target, (str, os.PathLike)) and not os.fspath(target):
        raise ValueError("the output store's path is empty")
    t, s = _location(target), _location(source)
    if target is source or (t is not None and s is not None and _overlap(t, s)):
        raise ValueError(f"the output {t or target!r} is the input, lies inside it or "
                         "holds it: writing it would destroy the input before it is read; write to another store")
    if t is None or not Path(t).is_absolute():
        return
    t = Path(t)
    if not t.exists():
        return
    node = _zarr_node(t)
    if node == "group":
        raise FileExistsError(f"{os.fspath(t)!r} is a Zarr group: ndjit replaces only a Zarr array (choose a path "
                              "inside the group, or another one)")
    if node is None and (t.is_file() or any(t.iterdir())):
        raise FileExistsError(f"{os.fspath(t)!r} exists and is not a Zarr array: ndjit writes only where "
                              "nothing but a Zarr array would be replaced (remove it, or choose another path)")
