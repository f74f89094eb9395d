"""The row kernel against the loop a performance-minded user writes instead of generic_filter.

For each filter of issue 17 (1024² f64 by default): ndjit's driver (`ndjit.generic_filter`, the row
kernel with lane groups, see src/jit/lanes.rs) on one thread and on all threads, against the same
stencil written as a Numba loop over a padded image (`njit`, and `njit(parallel=True)` with
`prange`; the loops include their `np.pad`). Every result is checked against scipy's
`generic_filter` with the same callable before anything is timed. Medians of `--reps` runs, ms;
the ratio is Numba's time over ndjit's (above 1: ndjit is faster).

    python benches/rowkernel.py [--threads N] [--size 1024] [--reps 9] [--clock wall|cpu]

`--clock cpu` times the process's CPU time, steadier than the wall clock on a shared machine (for
one thread only: with several, CPU time adds the threads up). Without Numba the anchor columns
say "not installed".
"""
import argparse
import os
import statistics
import time

import numpy as np
from scipy import ndimage as ndi

import ndjit

try:
    import numba
    from numba import njit, prange
except ImportError:  # the anchors are optional
    numba = None

NANMEAN = """def f(x):
    t = 0.0
    c = 0
    for v in x:
        if not np.isnan(v):
            t += v
            c += 1
    return t / c if c else np.nan
"""
WEIGHTS = np.array([1.0, 2.0, 1.0, 2.0, -12.0, 2.0, 1.0, 2.0, 1.0]) / 16.0
WEIGHTED = "def f(x):\n    return " + " + ".join(f"{w!r} * x[{k}]" for k, w in enumerate(WEIGHTS)) + "\n"
LIFE = """def f(x):
    s = np.sum(x) - x[4]
    alive = x[4] > 0.5
    return 1.0 if (alive and (s == 2.0 or s == 3.0)) or (not alive and s == 3.0) else 0.0
"""


def numba_loops(parallel):
    """The stencils as Numba loops over a padded image `p`, writing `out`."""
    deco = njit(parallel=True, fastmath=False) if parallel else njit(fastmath=False)
    rows = prange if parallel else range
    w = WEIGHTS

    @deco
    def nanmean(p, out):
        for i in rows(out.shape[0]):
            for j in range(out.shape[1]):
                t = 0.0
                c = 0
                for a in range(3):
                    for b in range(3):
                        v = p[i + a, j + b]
                        if not np.isnan(v):
                            t += v
                            c += 1
                out[i, j] = t / c if c else np.nan

    @deco
    def range_(p, out):
        for i in rows(out.shape[0]):
            for j in range(out.shape[1]):
                lo = np.inf
                hi = -np.inf
                for a in range(5):
                    for b in range(5):
                        v = p[i + a, j + b]
                        if v < lo:
                            lo = v
                        if v > hi:
                            hi = v
                out[i, j] = hi - lo

    @njit
    def window5(p, i, j, win):
        for a in range(5):
            for b in range(5):
                win[5 * a + b] = p[i + a, j + b]
        return win

    @deco
    def var(p, out):
        for i in rows(out.shape[0]):
            win = np.empty(25)
            for j in range(out.shape[1]):
                out[i, j] = np.var(window5(p, i, j, win))

    @deco
    def weighted(p, out):
        for i in rows(out.shape[0]):
            for j in range(out.shape[1]):
                t = 0.0
                for a in range(3):
                    for b in range(3):
                        t += w[3 * a + b] * p[i + a, j + b]
                out[i, j] = t

    @deco
    def count(p, out):
        for i in rows(out.shape[0]):
            for j in range(out.shape[1]):
                c = 0
                for a in range(5):
                    for b in range(5):
                        if p[i + a, j + b] > 0.5:
                            c += 1
                out[i, j] = c

    @deco
    def zscore(p, out):
        for i in rows(out.shape[0]):
            win = np.empty(25)
            for j in range(out.shape[1]):
                window5(p, i, j, win)
                out[i, j] = (win[12] - np.mean(win)) / np.std(win)

    @deco
    def life(p, out):
        for i in rows(out.shape[0]):
            for j in range(out.shape[1]):
                s = 0.0
                for a in range(3):
                    for b in range(3):
                        s += p[i + a, j + b]
                s -= p[i + 1, j + 1]
                alive = p[i + 1, j + 1] > 0.5
                out[i, j] = 1.0 if (alive and (s == 2.0 or s == 3.0)) or (not alive and s == 3.0) else 0.0

    return dict(nanmean=nanmean, range=range_, var=var, weighted=weighted, count=count, zscore=zscore, life=life)


def cases(n):
    rng = np.random.default_rng(0)
    img = rng.random((n, n))
    nan = img.copy()
    nan[rng.random(img.shape) < 0.15] = np.nan
    board = (rng.random((n, n)) < 0.3).astype(np.float64)
    return [
        ("NaN-aware mean 3x3", "nanmean", NANMEAN, nan, 3),
        ("range 5x5", "range", "max(x) - min(x)", img, 5),
        ("variance 5x5", "var", "np.var(x)", img, 5),
        ("weighted sum 3x3", "weighted", WEIGHTED, img, 3),
        ("threshold count 5x5", "count", "np.count_nonzero(x > 0.5)", img, 5),
        ("local z-score 5x5", "zscore", "(x[12] - np.mean(x)) / np.std(x)", img, 5),
        ("Game of Life 3x3", "life", LIFE, board, 3),
    ]


def median_ms(f, reps, clock):
    f()
    times = []
    for _ in range(reps):
        start = clock()
        f()
        times.append(clock() - start)
    return 1e3 * statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    args = ap.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    many = args.threads
    if numba is not None:
        serial, parallel = numba_loops(False), numba_loops(True)
    print(f"{args.size}² f64, ms, medians of {args.reps} ({args.clock} clock); ratio = Numba / ndjit; "
          f"'all' = {many} threads; Numba loops include np.pad (mode symmetric = scipy's reflect)")
    head = ["filter", "ndjit 1", "njit loop", "ratio", f"ndjit all", "njit parallel", "ratio"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for title, key, src, x, k in cases(args.size):
        f = ndjit.jit_filter(src)
        with np.errstate(all="ignore"):
            want = ndi.generic_filter(x, f, size=k)
            got = ndjit.generic_filter(x, f, size=k, workers=1)
        assert np.array_equal(want, got, equal_nan=True), f"{title}: ndjit differs from scipy"
        row = [title]
        t1 = median_ms(lambda: ndjit.generic_filter(x, f, size=k, workers=1), args.reps, clock)
        tn = median_ms(lambda: ndjit.generic_filter(x, f, size=k, workers=many), args.reps, time.perf_counter)
        if numba is None:
            row += [f"{t1:.2f}", "not installed", "", f"{tn:.2f}", "not installed", ""]
        else:
            out = np.empty_like(x)

            def loop(fn):
                def run():
                    fn(np.pad(x, k // 2, mode="symmetric"), out)
                    return out
                return run

            numba.set_num_threads(1)
            with np.errstate(all="ignore"):
                same = np.allclose(loop(serial[key])(), want, rtol=1e-12, equal_nan=True)
            assert same, f"{title}: the Numba loop differs from scipy"
            b1 = median_ms(loop(serial[key]), args.reps, clock)
            numba.set_num_threads(many)
            bn = median_ms(loop(parallel[key]), args.reps, time.perf_counter)
            row += [f"{t1:.2f}", f"{b1:.2f}", f"{b1 / t1:.2f}", f"{tn:.2f}", f"{bn:.2f}", f"{bn / tn:.2f}"]
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
