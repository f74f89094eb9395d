"""Rank filters (issue 14): ndjit's rank executor against OpenCV, scipy's built-ins and
scikit-image, side by side in one process. Prints one table: ms (median of --reps runs) and the
ratios other/ndjit (> 1: ndjit is faster), with each row's goal and whether it is met.

    python benches/rank.py                       # everything: 1024² and 4096², 1 and all threads
    python benches/rank.py --n 1024 --threads 1 --only min,median --dtypes u8 --sizes 3,9

Before timing, every ndjit result is checked equal (bit for bit, NaN = NaN) to scipy's
generic_filter running the plain Python callback on a 40×40 crop (corners and edges included,
in the same mode), and to scipy's built-in filter on the whole image (on its first 1024² where
`--anchors` leaves scipy out). OpenCV, scikit-image: optional
imports; a missing one prints "not installed". OpenCV's borders are BORDER_REFLECT (scipy's
"reflect"); its medianBlur only takes u8 above k=5 and f32 at k=3 and 5, and its erode takes
u8/u16/f32/f64. A range's OpenCV call is the morphological gradient (MORPH_GRADIENT: dilation
minus erosion), in the input's type as ndjit's.
"""
import argparse
import os
import statistics
import sys
import time

# NumPy's and scipy's OpenBLAS start a thread per core that spins (seen in `perf`: a fifth of
# the samples on this 2-core machine); nothing here calls BLAS, so they would only steal the
# cores the filters run on.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np
from scipy import ndimage as ndi

import ndjit

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--n", default="1024,4096", help="image sides, comma-separated")
ap.add_argument("--threads", default="1,all", help="'1', 'all' or numbers, comma-separated")
ap.add_argument("--only", default="min,max,disk,median,median-all,percentile,range",
                help="row groups, comma-separated")
ap.add_argument("--dtypes", default="", help="restrict dtypes (u8,u16,f32,f64,...)")
ap.add_argument("--sizes", default="", help="restrict k")
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--nan", type=float, default=0.0,
                help="fraction of float pixels made NaN (the windows reading one are recomputed by "
                     "the general engine; OpenCV's and scipy's built-ins have NaN rules of their own "
                     "and are timed only)")
ap.add_argument("--scipy-max-ms", type=float, default=20000,
                help="skip timing scipy where one run took longer than this")
ap.add_argument("--preallocate", action="store_true",
                help="ndjit and OpenCV write into output arrays made (and touched) once per row "
                     "(`output=`, `dst=`), so that neither call pays for a fresh array's page faults")
ap.add_argument("--anchors", default="opencv,scipy,skimage",
                help="anchors to time, comma-separated (leaving out the slow ones: scipy's "
                     "built-ins take minutes on large medians); a row's goal whose anchor is left "
                     "out says n/a")
args = ap.parse_args()
ANCHORS = set(args.anchors.split(","))

try:
    import cv2
except ImportError:
    cv2 = None
try:
    from skimage.filters import rank as skrank
except ImportError:
    skrank = None

DT = {"u8": np.uint8, "u16": np.uint16, "i16": np.int16, "i32": np.int32, "u32": np.uint32,
      "i64": np.int64, "u64": np.uint64, "f32": np.float32, "f64": np.float64}
KEEP_DT = set(args.dtypes.split(",")) if args.dtypes else None
KEEP_K = {int(k) for k in args.sizes.split(",")} if args.sizes else None
GROUPS = set(args.only.split(","))


def ms(f, reps):
    return interleaved([f], reps)[0]


def interleaved(fs, reps):
    """The median ms of each of `fs`, timed in turn within every repetition, so that the
    machine's drift (a shared, noisy one) falls on all of them alike rather than on whichever
    ran during a slow spell."""
    for f in fs:
        f()
    ts = [[] for _ in fs]
    for _ in range(reps):
        for f, t in zip(fs, ts):
            s = time.perf_counter()
            f()
            t.append(time.perf_counter() - s)
    return [1e3 * statistics.median(t) for t in ts]


def image(n, dt):
    rng = np.random.default_rng(3)
    if dt.startswith("f"):
        x = rng.random((n, n)).astype(DT[dt])
        if args.nan:
            x[rng.random((n, n)) < args.nan] = np.nan
            x[5, 7] = np.nan  # one in the crop the plain callback checks
        return x
    info = np.iinfo(DT[dt])
    return rng.integers(info.min, int(info.max) + 1, (n, n), dtype=DT[dt])


def disk(r):
    y, x = np.mgrid[-r:r + 1, -r:r + 1]
    return x * x + y * y <= r * r


# Each filter: the callback as users write it, scipy's built-in and OpenCV's counterpart.
CALLBACKS = {
    "min": "min(x)",
    "max": "np.max(x)",
    "median": "np.median(x)",
    "percentile": "np.percentile(x, 90)",
    "range": "x.max() - x.min()",
}
PLAIN = {
    "min": lambda v: min(v),
    "max": lambda v: np.max(v),
    "median": np.median,
    "percentile": lambda v: np.percentile(v, 90),
    "range": lambda v: v.max() - v.min(),
}


def scipy_builtin(op, x, fp):
    if op == "min":
        return ndi.minimum_filter(x, footprint=fp, mode="reflect")
    if op == "max":
        return ndi.maximum_filter(x, footprint=fp, mode="reflect")
    if op == "median":
        return ndi.median_filter(x, footprint=fp, mode="reflect")
    if op == "percentile":
        return ndi.percentile_filter(x, 90, footprint=fp, mode="reflect")
    hi = ndi.maximum_filter(x, footprint=fp, mode="reflect")
    lo = ndi.minimum_filter(x, footprint=fp, mode="reflect")
    return hi.astype(np.float64) - lo  # the pair, as a user computes it (not cast back)


def opencv(op, x, fp, dst=None):
    """OpenCV's call for the row (into `dst` if given), or None where OpenCV has none."""
    if cv2 is None:
        return None
    k = fp.shape[0]
    if op in ("min", "max") and x.dtype in (np.uint8, np.uint16, np.float32, np.float64):
        kern = fp.astype(np.uint8)
        f = cv2.erode if op == "min" else cv2.dilate
        return lambda: f(x, kern, dst=dst, borderType=cv2.BORDER_REFLECT)
    if op == "range" and x.dtype in (np.uint8, np.uint16, np.float32, np.float64):
        # The morphological gradient, dilation minus erosion: OpenCV's range of a footprint.
        kern = fp.astype(np.uint8)
        return lambda: cv2.morphologyEx(x, cv2.MORPH_GRADIENT, kern, dst=dst, borderType=cv2.BORDER_REFLECT)
    if op == "median" and fp.all() and (x.dtype == np.uint8 or (x.dtype in (np.uint16, np.float32) and k <= 5)):
        return lambda: cv2.medianBlur(x, k, dst=dst)
    return None


def skimage(op, x, fp):
    # u8 only: on u16 scikit-image's histograms have 65536 bins (minutes per 1024² median).
    if skrank is None or x.dtype != np.uint8 or op not in ("min", "max", "median"):
        return None
    f = {"min": skrank.minimum, "max": skrank.maximum, "median": skrank.median}[op]
    return lambda: f(x, fp.astype(np.uint8))


def check(op, x, fp, f, workers):
    """ndjit equals scipy's generic_filter with the plain callback (crop) and the built-in."""
    crop = np.ascontiguousarray(x[:40, :40])
    got = ndjit.generic_filter(crop, f, footprint=fp, mode="reflect", workers=workers)
    want = ndi.generic_filter(crop, PLAIN[op], footprint=fp, mode="reflect")
    assert np.array_equal(got, want, equal_nan=True), f"{op} {x.dtype}: differs from the plain callback"
    if "scipy" not in ANCHORS and x.shape[0] > 1024:
        # Untimed, scipy's built-in would still take minutes on the whole of a large image.
        x = np.ascontiguousarray(x[:1024, :1024])
    got = ndjit.generic_filter(x, f, footprint=fp, mode="reflect", workers=workers)
    if np.isnan(x).any():
        # The built-ins' NaN rules are not the callback's: the whole image against scipy's own
        # driver calling the compiled callback instead.
        want = ndi.generic_filter(x, f, footprint=fp, mode="reflect")
        assert np.array_equal(got, want, equal_nan=True), f"{op} {x.dtype}: differs from scipy's driver"
        return
    if op == "percentile":
        return  # scipy's percentile_filter rounds to an element: not the callback's interpolation
    want = scipy_builtin(op, x, fp)
    if op == "range":
        got = got.astype(np.float64)
        want = want.astype(x.dtype).astype(np.float64)
    assert np.array_equal(got, want, equal_nan=True), f"{op} {x.dtype}: differs from scipy's built-in"


def rows():
    """(group, op, dtype, label, footprint, goal) for every row of the table."""
    ks = [3, 5, 7, 9, 15, 25]
    for op in ("min", "max"):
        for dt in ("u8", "u16", "f32", "f64"):
            for k in ks:
                yield op, op, dt, f"{k}x{k}", np.ones((k, k), bool), "cv"
    for dt in ("u8", "u16", "f32", "f64"):
        yield "disk", "min", dt, "disk r3", disk(3), "cv"
    for k in [3, 5, 7, 9, 11, 15, 21, 25]:
        yield "median", "median", "u8", f"{k}x{k}", np.ones((k, k), bool), "cv"
    for k in (3, 5):
        yield "median", "median", "f32", f"{k}x{k}", np.ones((k, k), bool), "cv"
    for dt in ("u16", "i16", "i32", "u32", "i64", "u64", "f32", "f64"):
        for k in (3, 5, 7, 9, 11, 15, 21, 25, 31):
            yield "median-all", "median", dt, f"{k}x{k}", np.ones((k, k), bool), "5x scipy"
    for dt in ("u8", "f32"):
        for k in (3, 9, 15, 31):
            yield "percentile", "percentile", dt, f"{k}x{k}", np.ones((k, k), bool), "5x scipy"
    for dt in ("u8", "u16", "f32", "f64"):
        for k in (3, 5, 9, 15):
            yield "range", "range", dt, f"{k}x{k}", np.ones((k, k), bool), "cv"


def scipy_ms(op, x, fp, reps):
    """scipy's built-in, ms: it runs on one thread whatever the row's threads; slow ones once,
    skipped past the limit."""
    s0 = time.perf_counter()
    scipy_builtin(op, x, fp)
    once = 1e3 * (time.perf_counter() - s0)
    return once if once > args.scipy_max_ms or reps == 1 else ms(lambda: scipy_builtin(op, x, fp), reps)


def fmt(v):
    return f"{v:9.2f}" if v == v else "        -"


def main():
    ncores = os.cpu_count()
    threads = [ncores if t == "all" else int(t) for t in args.threads.split(",")]
    print(f"rank filters, mode=reflect; ms, median of {args.reps}; ratio = other / ndjit; "
          f"{'outputs preallocated (ndjit, OpenCV); ' if args.preallocate else ''}"
          f"OpenCV {'not installed' if cv2 is None else cv2.__version__}, scikit-image "
          f"{'not installed' if skrank is None else 'installed'}, {ncores} cores")
    filters = {op: ndjit.jit_filter(src) for op, src in CALLBACKS.items()}
    for n in [int(v) for v in args.n.split(",")]:
        for w in threads:
            if cv2 is not None:
                cv2.setNumThreads(w)
            print(f"\n{n}x{n}, {w} thread(s)")
            print(f"{'filter':10s} {'dtype':5s} {'footprint':9s} {'ndjit':>9s} {'opencv':>9s} {'scipy':>9s} "
                  f"{'skimage':>9s} {'cv/nd':>7s} {'sp/nd':>7s}  goal")
            for group, op, dt, label, fp, goal in rows():
                k = fp.shape[0]
                if group not in GROUPS or (KEEP_DT and dt not in KEEP_DT) or (KEEP_K and k not in KEEP_K):
                    continue
                x = image(n, dt)
                f = filters[op]
                check(op, x, fp, f, w)
                reps = args.reps if k <= 9 or n <= 1024 else max(1, args.reps // 2)
                # Outputs of the input's type, as ndjit's and OpenCV's own would be.
                out_nd, out_cv = (np.zeros_like(x), np.zeros_like(x)) if args.preallocate else (None, None)
                nd = lambda: ndjit.generic_filter(x, f, footprint=fp, mode="reflect", workers=w, output=out_nd)
                cv = opencv(op, x, fp, out_cv) if "opencv" in ANCHORS else None
                tn, tc = interleaved([nd, cv], reps) if cv else (ms(nd, reps), float("nan"))
                ts = scipy_ms(op, x, fp, reps) if "scipy" in ANCHORS else float("nan")
                sk = skimage(op, x, fp) if "skimage" in ANCHORS else None
                tk = ms(sk, max(1, reps // 2)) if sk else float("nan")
                rc, rs = tc / tn, ts / tn
                met = {"cv": rc >= 1.0 if tc == tc else None, "5x scipy": rs >= 5.0 if ts == ts else None}[goal]
                verdict = "n/a" if met is None else ("met" if met else "MISSED")
                print(f"{op:10s} {dt:5s} {label:9s} {tn:9.2f} {fmt(tc)} {fmt(ts)} {fmt(tk)} {rc:7.2f} {rs:7.2f}  "
                      f"{goal}: {verdict}")
                sys.stdout.flush()


main()
