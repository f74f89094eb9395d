"""Which global input indices each output chunk of a chunked filter reads (NumPy only, no Dask).

A chunk of ``generic_filter``'s output depends on the input inside its footprint's reach, and at
the array's true edges on the boundary mode. Each output chunk therefore gathers, per axis, the
*global* input indices its windows read, mapped through the mode exactly as scipy maps them, then
filters that gathered block and keeps its interior. Inner chunk edges never see the mode, so the
result equals a filter over the whole array, whatever the chunking (chunks thinner than the reach
included: the gathered indices may span several input chunks).

``map_indices`` is the vectorised twin of the driver's ``Mode::map`` (``src/driver/mode.rs``, which
transcribes scipy's ``NI_InitFilterOffsets``): a Dask graph has to know the indices before any
task runs, so the mapping is needed here, in Python, over whole index ranges.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

# Inside filters the ``grid-*`` modes are aliases (scipy's ``_extend_mode_to_code(is_filter=True)``).
_IN_FILTER = {"grid-mirror": "reflect", "grid-constant": "constant", "grid-wrap": "wrap"}


def filter_mode(mode: str) -> str:
    """The mode a filter applies: ``grid-*`` names resolved to their filter equivalents."""
    return _IN_FILTER.get(mode, mode)


def map_indices(mode: str, idx: np.ndarray, n: int) -> np.ndarray:
    """Maps indices (possibly outside ``0..n``) onto an axis of length ``n >= 1`` as scipy's
    filters do; ``constant`` maps outside indices to ``-1`` (read ``cval`` there)."""
    mode = filter_mode(mode)
    idx = np.asarray(idx, dtype=np.int64)
    if mode == "constant":
        return np.where((idx >= 0) & (idx < n), idx, -1)
    if mode == "nearest":
        return np.clip(idx, 0, n - 1)
    if n == 1:  # scipy: reflect, mirror and wrap all read index 0 on an axis of length 1
        return np.zeros_like(idx)
    if mode == "wrap":
        return idx % n
    if mode == "mirror":
        period = 2 * n - 2
        r = idx % period
        return np.where(r >= n, period - r, r)
    period = 2 * n  # reflect
    r = idx % period
    return np.where(r >= n, period - r - 1, r)


def reach(length: int, origin: int) -> Tuple[int, int]:
    """How far a footprint of ``length`` along an axis reads before and after the output pixel
    (scipy: element ``j`` of the footprint reads offset ``j - (length // 2 + origin)``)."""
    before = length // 2 + origin
    return before, length - 1 - before


@dataclass(frozen=True)
class AxisGather:
    """One output chunk's reads along one axis.

    ``slabs``: ``(input chunk, start, stop)`` slices, local to each input chunk, in chunk order;
    their concatenation holds every index read. ``take``: positions in that concatenation giving
    the gathered line (``None`` when it is the concatenation itself). ``interior``: where the
    chunk's own outputs lie in the filtered gathered line.
    """

    slabs: Tuple[Tuple[int, int, int], ...]
    take: Optional[np.ndarray]
    interior: slice


def _gather(reads: np.ndarray, bounds: np.ndarray, interior: slice) -> AxisGather:
    """Groups global indices ``reads`` by the input chunk holding them (``bounds``: chunk offsets
    then the axis length)."""
    chunk_of = np.searchsorted(bounds, reads, side="right") - 1
    slabs, starts = [], {}
    length = 0
    for k in np.unique(chunk_of):
        inside = reads[chunk_of == k]
        lo, hi = int(inside.min()), int(inside.max()) + 1
        slabs.append((int(k), lo - int(bounds[k]), hi - int(bounds[k])))
        starts[int(k)] = length - lo  # concatenation position = global index + this
        length += hi - lo
    take = reads + np.array([starts[int(k)] for k in chunk_of], dtype=np.int64)
    if take.size == length and np.array_equal(take, np.arange(length)):
        take = None
    return AxisGather(tuple(slabs), take, interior)


def axis_gathers(chunks: Sequence[int], fp_length: int, origin: int, mode: str) -> List[AxisGather]:
    """Per output chunk along one axis (chunked as the input), what it gathers.

    Every mode but ``constant`` gathers the mapped indices of its whole reach, so the filter over
    the gathered block never applies a mode to the pixels kept. ``constant`` gathers the in-range
    part only: the gathered block's own edges are then the array's edges exactly where the reach
    leaves the array, and the filter's ``constant`` mode supplies ``cval`` there (inserting
    ``cval`` into the input would round it to the input's dtype, which scipy does not do)."""
    before, after = reach(fp_length, origin)
    bounds = np.concatenate([[0], np.cumsum(chunks)]).astype(np.int64)
    n = int(bounds[-1])
    gathers = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        if start == stop:  # an empty chunk reads nothing
            gathers.append(AxisGather((), None, slice(0, 0)))
            continue
        lo, hi = int(start) - before, int(stop) + after
        if filter_mode(mode) == "constant":
            first, last = max(lo, 0), min(hi, n)
            reads = np.arange(first, last, dtype=np.int64)
            interior = slice(int(start) - first, int(stop) - first)
        else:
            reads = map_indices(mode, np.arange(lo, hi), n)
            interior = slice(before, before + int(stop - start))
        gathers.append(_gather(reads, bounds, interior))
    return gathers
