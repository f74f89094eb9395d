"""ndjit on a Dask process cluster, Zarr to Zarr, against dask-image (scipy + a Numba cfunc).

    python benches/dask_bench.py                # 16384² float32, 1024² chunks (the issue's size)
    python benches/dask_bench.py --size 4096    # a quicker run

For each filter (range 5×5, median 5×5, NaN-aware mean 5×5) and each engine, on a LocalCluster
of 2 single-threaded worker processes:
- end to end: Zarr read, filter, Zarr write (a new store each time);
- compute alone: the same graph on an array persisted in the workers' memory, result persisted;
- peak RSS of each worker process above its idle baseline (sampled every 20 ms, end to end);
- bytes the workers spilled to disk.
A plain Zarr-to-Zarr copy of the same array is the storage baseline. Exactness: ndjit's result on
a crop equals scipy's ``generic_filter`` over that crop (scipy's own driver calling the callback),
and ``np.nanmean`` itself in Python on a corner of it.

dask-image's ``generic_filter`` needs the callback pickled to the workers; a Numba cfunc's
``LowLevelCallable`` cannot be (numba#3418), so the bench first shows that failure, then ships a
``LowLevelCallable`` subclass that pickles to the function's name and recompiles with Numba in each
worker (what a user would have to write). Optional imports missing print "not installed".
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

import numpy as np


def optional(name):
    try:
        return __import__(name, fromlist=["_"])
    except ImportError:
        print(f"{name}: not installed")
        return None


da = optional("dask.array")
distributed = optional("distributed")
zarr = optional("zarr")
ndfilters = optional("dask_image.ndfilters")
numba = optional("numba")
psutil = optional("psutil")
import scipy.ndimage as ndi  # noqa: E402
from scipy import LowLevelCallable  # noqa: E402

import ndjit  # noqa: E402

# The workers import the Numba helper by name: this folder goes on their path.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ["PYTHONPATH"] = os.pathsep.join([HERE] + [p for p in [os.environ.get("PYTHONPATH")] if p])
from numba_callbacks import numba_callable  # noqa: E402

SIZE = 5
FILTERS = {  # name: (ndjit expression, Numba body over (values, n) returning a float)
    "range 5x5": "max(x) - min(x)",
    "median 5x5": "np.median(x)",
    "nanmean 5x5": "np.nanmean(x)",
}


# --- measuring ---------------------------------------------------------------------------------
class RssSampler:
    """Peak RSS of each worker process above its RSS when sampling started."""

    def __init__(self, pids):
        self.procs = {pid: psutil.Process(pid) for pid in pids} if psutil else {}
        self.base = {pid: p.memory_info().rss for pid, p in self.procs.items()}
        self.peak = dict(self.base)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(0.02):
            for pid, p in self.procs.items():
                try:
                    self.peak[pid] = max(self.peak[pid], p.memory_info().rss)
                except psutil.Error:
                    pass

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def above_idle_mb(self):
        return [round((self.peak[p] - self.base[p]) / 2**20) for p in self.procs]


def spilled_bytes(client) -> int:
    def spilled(dask_worker):
        return int(getattr(dask_worker.data, "cumulative_metrics", {}).get(("disk-write", "bytes"), 0))
    return sum(client.run(spilled).values())


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


# --- the runs ----------------------------------------------------------------------------------
def engines(name: str):
    """``{engine: function(dask array) -> filtered dask array}`` for one filter."""
    expr = FILTERS[name]
    out = {"ndjit": lambda x: ndjit.dask.generic_filter(x, expr, size=SIZE)}
    if ndfilters is None:
        return out
    if name == "median 5x5":
        out["dask-image median_filter"] = lambda x: ndfilters.median_filter(x, size=SIZE)
    elif numba is not None:
        out["dask-image + Numba"] = lambda x: ndfilters.generic_filter(x, numba_callable(name), size=SIZE)
    return out


def warm_up(client, name: str):
    """Compiles ``name``'s callbacks in every worker first: the timings are of filtering only
    (ndjit compiles in about a millisecond, Numba in seconds)."""
    expr = FILTERS[name]
    client.run(lambda: ndjit.jit_filter(expr) and None)
    if numba is not None and name != "median 5x5":
        client.run(lambda: numba_callable(name) and None)


def settle(client):
    """Returns the workers' freed memory to the system, so each run's idle baseline is idle."""
    def trim():
        import ctypes
        import gc
        gc.collect()
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except OSError:  # not glibc
            pass
    client.run(trim)


def run_one(client, src: str, work: str, make, pids, persisted):
    dst = os.path.join(work, "out.zarr")
    shutil.rmtree(dst, ignore_errors=True)
    settle(client)
    before = spilled_bytes(client)
    with RssSampler(pids) as rss:
        end_to_end = timed(lambda: make(da.from_zarr(src)).to_zarr(dst, compute=True))
    spilled = spilled_bytes(client) - before
    shutil.rmtree(dst, ignore_errors=True)

    def compute():
        y = client.persist(make(persisted))
        distributed.wait(y)
        del y
    return end_to_end, timed(compute), rss.above_idle_mb(), spilled


def show_unpicklable_cfunc(client, src):
    """dask-image with a plain Numba ``LowLevelCallable`` on process workers: it cannot travel."""
    if ndfilters is None or numba is None:
        return
    from numba import carray, cfunc, types
    sig = types.intc(types.CPointer(types.float64), types.intp, types.CPointer(types.float64), types.voidptr)

    @cfunc(sig)
    def vmax(values_ptr, n, result, data):
        result[0] = carray(values_ptr, (n,)).max()
        return 1
    try:
        ndfilters.generic_filter(da.from_zarr(src)[:2048, :2048], LowLevelCallable(vmax.ctypes), size=3).compute()
        print("dask-image + plain Numba LowLevelCallable: ran (unexpected)")
    except Exception as e:
        print(f"dask-image + plain Numba LowLevelCallable on process workers: {type(e).__name__}: {str(e)[:100]}")


def check_exact(src: str, crop: int):
    """ndjit on a crop of the store (chunked as the store) against scipy over the whole crop."""
    x = da.from_zarr(src)[:crop, :crop]
    a = x.compute()
    for name, expr in FILTERS.items():
        got = ndjit.dask.generic_filter(x, expr, size=SIZE).compute()
        want = ndi.generic_filter(a, ndjit.jit_filter(expr), size=SIZE)
        same = got.tobytes() == want.tobytes()
        print(f"exact vs scipy.ndimage.generic_filter on {crop}x{crop} ({name}): {same}")
    corner = a[:200, :200]
    got = ndjit.dask.generic_filter(da.from_array(corner, chunks=64), "np.nanmean(x)", size=SIZE).compute()
    print("exact vs scipy + Python np.nanmean on 200x200:",
          got.tobytes() == ndi.generic_filter(corner, np.nanmean, size=SIZE).tobytes())


def make_store(path: str, n: int, chunk: int):
    """A float32 image with a few NaN (so the NaN-aware mean has work)."""
    rng = da.random.default_rng(0)
    x = rng.standard_normal((n, n), chunks=chunk, dtype=np.float32)
    x = da.where(rng.random((n, n), chunks=chunk) < 0.001, np.float32(np.nan), x)
    x.to_zarr(path, overwrite=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=16384)
    p.add_argument("--chunk", type=int, default=1024)
    p.add_argument("--crop", type=int, default=4096)
    p.add_argument("--dir", default=None, help="where the Zarr stores go (default: a temporary folder)")
    args = p.parse_args()
    if None in (da, distributed, zarr, psutil):
        print("dask[array], distributed, zarr and psutil are needed: pip install './python[dask]'")
        return 1
    work = tempfile.mkdtemp(dir=args.dir, prefix="ndjit-dask-bench-")
    src = os.path.join(work, "in.zarr")
    try:
        print(f"{args.size}x{args.size} float32, {args.chunk}x{args.chunk} chunks, {os.cpu_count()} CPUs, "
              f"store in {work}")
        make_store(src, args.size, args.chunk)
        check_exact(src, min(args.crop, args.size))
        with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            client.run(lambda: (__import__("ndjit"), __import__("numba") if numba else None) and None)
            pids = list(client.run(os.getpid).values())
            show_unpicklable_cfunc(client, src)
            persisted = client.persist(da.from_zarr(src))
            distributed.wait(persisted)
            rows = [("plain Zarr copy", "copy") + run_one(client, src, work, lambda x: x, pids, persisted)]
            for name in FILTERS:
                warm_up(client, name)
                for engine, make in engines(name).items():
                    rows.append((name, engine) + run_one(client, src, work, make, pids, persisted))
                    print(*rows[-1], flush=True)
        print()
        print("| filter | engine | end to end (s) | compute alone (s) | worker RSS above idle (MB) | spilled (bytes) |")
        print("|---|---|---:|---:|---|---:|")
        for name, engine, e2e, comp, rss, spilled in rows:
            print(f"| {name} | {engine} | {e2e:.2f} | {comp:.2f} | {', '.join(map(str, rss))} | {spilled} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
