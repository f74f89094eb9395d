"""GPU time against the window size: ndjit's ``target="cuda"`` beside cupyx's built-in filters.

    python benches/gpu_window.py [--size 8192] [--reps 10] [--k 3,5,7,9,11,15,21,31] [--budget 240]
                                 [--filters min,max,min+nan,range,median,percentile,mean,nanmean] [--dtypes float32,float64]
                                 [--footprint box|disk|cross]

For k×k boxes (mode reflect; ``--footprint disk`` or ``cross``: the disk of radius k//2, or the
cross of arms k//2, given to both libraries as ``footprint=``, where cupyx's mean has no anchor) on a CuPy array of size² float32 and float64 (or the ``--dtypes``
given: integer images are uniform over their type's range and skip the NaN filters): min, max, range,
median, the 30th percentile, mean and a NaN-aware mean, as ndjit callbacks (``np.min(x)`` ...) and as
cupyx.scipy.ndimage's ``minimum_filter``, ``maximum_filter`` (the range: their difference),
``median_filter``, ``percentile_filter`` and ``uniform_filter`` (cupyx has no NaN-aware filter: its column stays
empty). The image is uniform noise; the NaN-aware mean's, and
``min+nan``'s (a minimum over the same data with one NaN in every 97×89 pixels: ``np.min``
is NaN wherever a window holds one, which ndjit's box passes carry to the output), have NaNs. Each cell is the median over ``--reps`` runs timed with
CUDA events after a warm-up call (kernel generation and loading), with ``output=`` preallocated.
A cell whose warm-up takes more than a second is timed over 3 runs; once ``--budget`` seconds are
spent, the remaining cells print "skipped". The copy floor is a device-to-device copy of the
image. The ratio is cupyx's time over ndjit's: above 1, ndjit is faster.

Prints "cupy: not installed" and exits 0 without CuPy, "no CUDA device" without a GPU.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

try:
    import cupy
    import cupyx.scipy.ndimage as cndi
except ImportError:
    print("cupy: not installed")
    sys.exit(0)

import ndjit

def window(k, fp):
    """cupyx's and scipy's window arguments: ``size=k`` for a box, else ``footprint=`` (host bools)."""
    return {"size": k} if fp is None else {"footprint": fp}


def footprint(kind, k):
    """None for a k×k box; the disk of radius k//2 or the cross of arms k//2 as a k×k bool array."""
    if kind == "box":
        return None
    r = k // 2
    y, x = np.mgrid[-r:r + 1, -r:r + 1]
    return (x * x + y * y <= r * r) if kind == "disk" else ((x == 0) | (y == 0))


def cupyx_min(a, k, out, fp=None):
    return cndi.minimum_filter(a, **window(k, fp), mode="reflect", output=out)


def cupyx_mean(a, k, out, fp=None):
    # uniform_filter is a box's mean only.
    return cndi.uniform_filter(a, size=k, mode="reflect", output=out) if fp is None else None


# name, ndjit source, cupyx's filter (None: cupyx has none), whether the image holds NaNs.
FILTERS = [
    ("min", "np.min(x)", cupyx_min, False),
    ("max", "np.max(x)", lambda a, k, out, fp=None: cndi.maximum_filter(a, **window(k, fp), mode="reflect", output=out),
     False),
    ("min+nan", "np.min(x)", cupyx_min, True),
    # A CuPy user's range: two filters and a subtraction.
    ("range", "np.max(x) - np.min(x)", lambda a, k, out, fp=None: cupy.subtract(
        cndi.maximum_filter(a, **window(k, fp), mode="reflect"), cupyx_min(a, k, None, fp), out=out), False),
    ("median", "np.median(x)",
     lambda a, k, out, fp=None: cndi.median_filter(a, **window(k, fp), mode="reflect", output=out), False),
    ("percentile", "np.percentile(x, 30)",
     lambda a, k, out, fp=None: cndi.percentile_filter(a, 30, **window(k, fp), mode="reflect", output=out), False),
    ("mean", "np.mean(x)", cupyx_mean, False),
    ("nanmean", "np.nanmean(x) if np.any(~np.isnan(x)) else 0.0", None, True),
]


def timed(run, reps):
    """Median milliseconds of ``run()`` over ``reps`` runs, CUDA events on the current stream
    (where ndjit launches for a CuPy input, and where cupyx runs)."""
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def warm_then_time(run, reps):
    t0 = time.perf_counter()
    run()
    cupy.cuda.get_current_stream().synchronize()
    slow = time.perf_counter() - t0 > 1.0
    return timed(run, 3 if slow else reps)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--k", default="3,5,7,9,11,15,21,31")
    p.add_argument("--budget", type=float, default=240.0)
    p.add_argument("--filters", default=",".join(f[0] for f in FILTERS))
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--footprint", choices=["box", "disk", "cross"], default="box")
    args = p.parse_args()
    chosen = args.filters.split(",")
    if not ndjit.cuda.is_available():
        print("no CUDA device")
        return
    info = ndjit.cuda.device()
    sizes = [int(k) for k in args.k.split(",")]
    print(f"== gpu_window on {info['name']}, {args.size}x{args.size}, median of {args.reps} "
          f"(CUDA events), {args.footprint} windows, cupy {cupy.__version__} ==")
    rng = np.random.default_rng(0)
    t_start = time.perf_counter()
    rows = []
    for dtype in [np.dtype(d) for d in args.dtypes.split(",")]:
        shape = (args.size, args.size)
        if dtype.kind == "f":
            clean = cupy.asarray(rng.random(shape).astype(dtype))
            holed = clean.copy()
            holed[::97, ::89] = np.nan  # a NaN-aware statistic has NaNs to skip
        else:
            # Integer images: uniform over the type's range; no NaN to hold.
            lim = np.iinfo(dtype)
            clean = cupy.asarray(rng.integers(lim.min, lim.max, size=shape, dtype=dtype, endpoint=True))
            holed = None
        out = cupy.empty_like(clean)
        floor = timed(lambda: out.__setitem__(Ellipsis, clean), args.reps)
        print(f"copy floor {np.dtype(dtype).name}: {floor:.3f} ms")
        for name, source, anchor, nans in FILTERS:
            if name not in chosen or (nans and holed is None):
                continue
            a = holed if nans else clean
            f = ndjit.jit_filter(source)
            for k in sizes:
                fp = footprint(args.footprint, k)
                cell = f"{name:8} {np.dtype(dtype).name:8} k={k:2}"
                if time.perf_counter() - t_start > args.budget:
                    rows.append(f"{cell}  skipped (budget)")
                    print(rows[-1], flush=True)
                    continue
                ours = warm_then_time(
                    lambda: ndjit.generic_filter(a, f, **window(k, fp), mode="reflect", output=out, target="cuda"),
                    args.reps)
                has_anchor = anchor is not None and (fp is None or anchor is not cupyx_mean)
                theirs = warm_then_time(lambda: anchor(a, k, out, fp), args.reps) if has_anchor else None
                ratio = f"{theirs / ours:7.2f}" if theirs else "      -"
                cupyx_ms = f"{theirs:10.3f}" if theirs else "         -"
                rows.append(f"{cell}  ndjit {ours:10.3f} ms  cupyx {cupyx_ms} ms  ratio {ratio}  "
                            f"x copy {ours / floor:6.1f}")
                print(rows[-1], flush=True)
    print("\n== gpu_window table (ratio = cupyx / ndjit; above 1 ndjit is faster) ==")
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
