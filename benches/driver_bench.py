"""The native driver side by side with what users would use instead, in one run.

    python3 benches/driver_bench.py [--quick]

Runs the `driver_bench` bench binary (ndjit::driver on N×N float64, one and two threads) for each
case right before, in this process, the anchors of ../shared/bench: scipy.ndimage.generic_filter
with a Numba cfunc LowLevelCallable, scipy's built-in filters (grey_erosion, minimum_filter,
uniform_filter, correlate, median_filter) and scipy.ndimage.vectorized_filter (SciPy >= 1.16).
The six 1024² goal cases of ndjit run in five processes of the bench binary (one with --quick);
their times and two-thread speed-ups are the medians over those. Prints medians in ms and ratios
(anchor time / ndjit one-thread time: above 1 means ndjit is faster). Needs
`pip install numpy scipy numba`.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
from scipy import ndimage as ndi

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python", "benchmarks"))
from anchors import fmedian, fmin, frange, numba_llc  # noqa: E402


class Ndjit:
    """The Rust bench binary, run per case right before that case's anchors, so that both see the
    same machine load."""

    def __init__(self, quick, exe=None):
        self.quick = quick
        if exe:
            self.exe = exe
            return
        out = subprocess.run(["cargo", "bench", "--bench", "driver_bench", "--no-run"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stderr
        exe = [l.split("(")[-1].rstrip(")") for l in out.splitlines() if "driver_bench" in l and "Executable" in l]
        if not exe:
            sys.exit("could not find the driver_bench executable in cargo's output:\n" + out)
        self.exe = os.path.join(ROOT, exe[-1]) if not os.path.isabs(exe[-1]) else exe[-1]

    def run(self, only):
        args = [self.exe, "--only", only] + (["--quick"] if self.quick else [])
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
        t, compile_ms = {}, {}
        for line in out.splitlines():
            f = line.split("\t")
            if len(f) != 7:
                continue
            if f[0] == "compile":
                compile_ms[f[1]] = (float(f[4]), float(f[5]))
            else:
                t[(f[0], f[1], int(f[2]), int(f[3]))] = float(f[4])
        return t, compile_ms


    def two_threads(self, label, fp, processes):
        """One and two threads on `label` over `fp` at 1024², in `processes` processes of the bench
        binary: the per-process medians of each, and the per-process speed-ups."""
        one, two = [], []
        for _ in range(processes):
            t, _ = self.run(f"{label} {fp} 1024")
            one.append(t[(label, fp, 1024, 1)])
            two.append(t[(label, fp, 1024, 2)])
        return one, two, [a / b for a, b in zip(one, two)]


def numba_anchors():
    """The generic_filter + Numba cfunc anchor of each case (raises ImportError without Numba)."""
    import numba  # noqa: F401  (only to fail early)
    w = np.array([0.1, 0.2, 0.4, 0.2, 0.1])

    def fmean(values):
        return np.mean(values)

    def fwsum(values):
        return np.sum(values * w)

    return {k: numba_llc(f) for k, f in
            [("min", fmin), ("range", frange), ("median", fmedian), ("mean", fmean), ("wsum", fwsum)]}


def tm(f, reps):
    f()
    ts = []
    for _ in range(reps):
        a = time.perf_counter()
        f()
        ts.append(time.perf_counter() - a)
    return 1e3 * float(np.median(ts))


CROSS = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool)


def fp_of(name):
    if name == "cross":
        return CROSS
    k = int(name.split("x")[0])
    return np.ones((k, k), bool)


def fmt(v):
    if v is None:
        return "—"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def ratio(anchor, ours):
    return "—" if anchor is None or ours is None else f"{anchor / ours:.1f}×"


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--exe", help="a prebuilt driver_bench binary (where cargo is not available)")
    args = ap.parse_args()
    reps = 3 if args.quick else 7
    ndjit = Ndjit(args.quick, args.exe)
    ours, compile_ms = {}, {}
    try:
        cf = numba_anchors()
    except ImportError:
        print("(numba is not installed: no generic_filter + Numba column)\n")
        cf = None
    rng = np.random.default_rng(0)
    img = rng.random((1024, 1024))
    w = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
    wcross = np.zeros((3, 3))
    wcross[CROSS] = w
    vf = getattr(ndi, "vectorized_filter", None)
    ptp = lambda x, axis: np.max(x, axis=axis) - np.min(x, axis=axis)
    # case -> (numba generic_filter, scipy built-in and its name, vectorized_filter)
    cases = [
        ("min", "cross", "grey_erosion", lambda: ndi.grey_erosion(img, footprint=CROSS), lambda: vf(img, np.min, footprint=CROSS)),
        ("min", "5x5", "minimum_filter", lambda: ndi.minimum_filter(img, size=5), lambda: vf(img, np.min, size=5)),
        ("range", "5x5", "max-min filters", lambda: ndi.maximum_filter(img, size=5) - ndi.minimum_filter(img, size=5), lambda: vf(img, ptp, size=5)),
        ("wsum", "cross", "correlate", lambda: ndi.correlate(img, wcross), None),
        ("mean", "5x5", "uniform_filter", lambda: ndi.uniform_filter(img, size=5), lambda: vf(img, np.mean, size=5)),
        ("median", "5x5", "median_filter", lambda: ndi.median_filter(img, size=5), lambda: vf(img, np.median, size=5)),
    ]
    names = {"min": "min(x)", "range": "max(x) - min(x)", "wsum": "np.sum(x * w)", "mean": "np.mean(x)", "median": "np.median(x)"}
    rows = []
    for case, fp, bname, builtin, vec in cases:
        slow = case == "median"
        # One process can meet a burst of load from other jobs: the goal cases take the median of
        # several (see two_threads.py for more).
        ones, twos, speedups = ndjit.two_threads(case, fp, 1 if args.quick else 5)
        one, two, speedup = (float(np.median(v)) for v in (ones, twos, speedups))
        nb = tm(lambda: ndi.generic_filter(img, cf[case], footprint=fp_of(fp)), 3 if slow else reps) if cf else None
        bt = tm(builtin, 3 if slow else reps)
        vt = tm(vec, 3 if slow else reps) if (vf is not None and vec is not None) else None
        rows.append([f"`{names[case]}` {fp}", fmt(one), fmt(two), f"{speedup:.2f}×", fmt(nb), ratio(nb, one), f"{bname} {fmt(bt)}", ratio(bt, one), fmt(vt), ratio(vt, one)])
    print("1024×1024 float64, milliseconds (median); ratio = other / ndjit one thread; ndjit's times and\n"
          "its two-thread speed-up are medians over 5 processes of the bench binary\n")
    table(["filter, footprint", "ndjit 1 thr", "ndjit 2 thr", "2 thr speed-up", "generic_filter + Numba cfunc", "ratio", "scipy built-in", "ratio", "vectorized_filter", "ratio"], rows)

    rows = []
    for k in [3, 5, 7, 9, 11, 15]:
        fp = f"{k}x{k}"
        ours.update(ndjit.run(f"min {fp} 1024")[0])
        ours.update(ndjit.run(f"median {fp} 1024")[0])
        mn, md = ours.get(("min", fp, 1024, 1)), ours.get(("median", fp, 1024, 1))
        mf = tm(lambda: ndi.minimum_filter(img, size=k), reps)
        mdf = tm(lambda: ndi.median_filter(img, size=k), 1 if k > 7 else 3)
        rows.append([fp, fmt(mn), f"{fmt(mf)} ({ratio(mf, mn)})", fmt(md), f"{fmt(mdf)} ({ratio(mdf, md)})"])
    print("Footprint size, 1024×1024, one thread, ms\n")
    table(["footprint", "ndjit min(x)", "minimum_filter (ratio)", "ndjit np.median(x)", "median_filter (ratio)"], rows)

    rows = []
    for n in [256, 512, 1024, 2048, 4096]:
        im = rng.random((n, n))
        ours.update(ndjit.run(f"min cross {n}")[0])
        ours.update(ndjit.run(f"median 5x5 {n}")[0])
        ge = tm(lambda: ndi.grey_erosion(im, footprint=CROSS), 3 if n >= 2048 else reps)
        mdf = tm(lambda: ndi.median_filter(im, size=5), 1 if n >= 2048 else 3)
        g = lambda c, f, t: ours.get((c, f, n, t))
        rows.append([f"{n}²", fmt(g("min", "cross", 1)), fmt(g("min", "cross", 2)), f"{fmt(ge)} ({ratio(ge, g('min', 'cross', 1))})",
                     fmt(g("median", "5x5", 1)), fmt(g("median", "5x5", 2)), f"{fmt(mdf)} ({ratio(mdf, g('median', '5x5', 1))})",
                     f"{1e6 * g('min', 'cross', 1) / (n * n):.2f}"])
    print("Image size, ms\n")
    table(["image", "min cross 1 thr", "2 thr", "grey_erosion (ratio)", "median 5×5 1 thr", "2 thr", "median_filter (ratio)", "min cross ns/px"], rows)

    compile_ms = ndjit.run("compile")[1]
    print("First call (specialisation + row-kernel compilation, on an 8×8 image) / later calls, ms: " +
          ", ".join(f"{k} {v[0]:.2f} / {v[1]:.3f}" for k, v in compile_ms.items()))


if __name__ == "__main__":
    main()
