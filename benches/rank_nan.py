"""Rank filters on images with scattered NaNs (issue 14): the same filter on clean data and on
the data with one NaN in every 97×89 pixels, side by side with the anchors a user would pick.

    python benches/rank_nan.py [--n 1024] [--threads 1] [--sizes 3,7,15,31] [--reps 5]
                               [--filters np.min,np.max,np.median] [--dtypes f32,f64]
                               [--pattern scattered|region]

``--pattern region`` puts the NaNs in one block instead, rows and columns n/5 to 7n/10 (a quarter of
the image), as an image's no-data area.

NumPy's `np.min`, `np.max` and `np.median` are NaN wherever a window holds a NaN; ndjit writes
those windows NaN without running the filter there (`ndjit::driver::NanRule`). The anchors:
scipy's built-in filter on the NaN data (``minimum_filter`` and friends; their NaN rules are not
NumPy's, so their results differ in those windows and only their time is comparable) and, for
the min/max, OpenCV's ``erode``/``dilate`` (optional import). Before timing, each ndjit result on
the NaN data is checked equal (NaN = NaN) to scipy's ``generic_filter`` running the NumPy
function itself on a 120×120 crop. ms are medians of ``--reps``; ratio = anchor / ndjit.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np
from scipy import ndimage as ndi

import ndjit

try:
    import cv2
except ImportError:
    cv2 = None
    print("opencv: not installed")

DT = {"f32": np.float32, "f64": np.float64}
NUMPY = {"np.min": np.min, "np.max": np.max, "np.median": np.median}
BUILTIN = {"np.min": ndi.minimum_filter, "np.max": ndi.maximum_filter, "np.median": ndi.median_filter}


def timed(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - t))
    return statistics.median(times)


def opencv(name, a, k):
    if cv2 is None or name == "np.median":
        return None
    kernel = np.ones((k, k), np.uint8)
    op = cv2.erode if name == "np.min" else cv2.dilate
    return lambda: op(a, kernel, borderType=cv2.BORDER_REFLECT)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sizes", default="3,7,15,31")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--filters", default="np.min,np.max,np.median")
    ap.add_argument("--dtypes", default="f32,f64")
    ap.add_argument("--pattern", choices=["scattered", "region"], default="scattered")
    args = ap.parse_args()
    if cv2 is not None:
        cv2.setNumThreads(args.threads)
    rng = np.random.default_rng(5)
    where = {"scattered": "one NaN in every 97×89 pixels", "region": "a NaN block of a quarter of the image"}
    print(f"{args.n}², {args.threads} thread(s), mode reflect; {where[args.pattern]}; ms")
    print(f"{'filter':10s} {'dtype':5s} {'k':>3s} {'clean':>8s} {'NaN':>8s} {'scipy':>9s} {'ratio':>7s} "
          f"{'OpenCV':>8s} {'ratio':>7s}")
    for name in args.filters.split(","):
        for dt in args.dtypes.split(","):
            clean = rng.random((args.n, args.n)).astype(DT[dt])
            nan = clean.copy()
            if args.pattern == "scattered":
                nan[::97, ::89] = np.nan
            else:
                nan[args.n // 5: 7 * args.n // 10, args.n // 5: 7 * args.n // 10] = np.nan
            for k in map(int, args.sizes.split(",")):
                if name == "np.median" and k > 15:
                    continue  # scipy's built-in median takes minutes past 15×15
                # A crop holding NaNs: the block's corner for the region.
                c0 = 0 if args.pattern == "scattered" else args.n // 5 - 60
                crop = nan[c0:c0 + 120, c0:c0 + 120]
                want = ndi.generic_filter(crop, NUMPY[name], size=k, mode="reflect")
                got = ndjit.generic_filter(crop, name + "(x)", size=k, mode="reflect")
                assert np.array_equal(got, want, equal_nan=True), (name, dt, k)
                run = lambda a: ndjit.generic_filter(a, name + "(x)", size=k, mode="reflect",
                                                     workers=args.threads)
                t_clean, t_nan = timed(lambda: run(clean), args.reps), timed(lambda: run(nan), args.reps)
                t_scipy = timed(lambda: BUILTIN[name](nan, size=k, mode="reflect"), max(1, args.reps // 2))
                cv = opencv(name, nan, k)
                t_cv = timed(cv, args.reps) if cv else None
                cv_cells = f"{t_cv:8.2f} {t_cv / t_nan:7.2f}" if t_cv else f"{'-':>8s} {'-':>7s}"
                print(f"{name:10s} {dt:5s} {k:3d} {t_clean:8.2f} {t_nan:8.2f} {t_scipy:9.2f} "
                      f"{t_scipy / t_nan:7.2f} {cv_cells}", flush=True)


if __name__ == "__main__":
    main()
