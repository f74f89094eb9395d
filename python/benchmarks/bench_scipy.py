"""ndjit against the tools people use today, side by side in one run (medians; the machine is noisy).

    python python/benchmarks/bench_scipy.py [N]

Through ``scipy.ndimage.generic_filter`` on an N×N float64 image (default 1024): the same Python
callback compiled by ndjit (``ndjit.jit_filter(f)``, nothing else), by Numba as a cfunc (the "llc"
recipe of ../shared/bench/cpu_anchor.py), by SymJit where it can express the filter, the plain Python
callable (timed on 128² and scaled), and a trivial callback (scipy's own per-pixel floor). Then
ndjit's native driver (``ndjit.generic_filter``), compile latency and ``import ndjit`` time.
Numba and SymJit are optional: their columns read "-" when they are not installed.
"""
import statistics
import subprocess
import sys
import time

import numpy as np
from scipy import ndimage as ndi

import ndjit
from anchors import fmedian, fmin, frange, numba_llc

W5 = np.array([0.1, 0.2, 0.4, 0.2, 0.1])


def wsum(values):
    s = 0.0
    for i in range(len(values)):
        s += values[i] * W5[i]
    return s


def nanmean(values):
    total = 0.0
    count = 0
    for v in values:
        if not np.isnan(v):
            total += v
            count += 1
    if count == 0:
        return np.nan
    return total / count


def center(values):
    return values[0]


CROSS = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool)
ROWS = [  # name, callback, footprint, image kind
    ("min, cross", fmin, CROSS, "u"),
    ("min, 5x5", fmin, np.ones((5, 5), bool), "u"),
    ("range, 5x5", frange, np.ones((5, 5), bool), "u"),
    ("weighted sum, cross", wsum, CROSS, "u"),
    ("median, 5x5", fmedian, np.ones((5, 5), bool), "u"),
    ("NaN-aware mean, 3x3", nanmean, np.ones((3, 3), bool), "nan"),
]


def timed(fn, reps=5):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return 1e3 * statistics.median(ts)


def timed_together(fns, reps=7):
    """Medians (ms) of `fns` timed in turn, one round after another: on a noisy machine a burst of
    load then hits every contender of a round alike, not whichever happened to be running."""
    for fn in fns:
        fn()
    ts = [[] for _ in fns]
    for _ in range(reps):
        for k, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            ts[k].append(time.perf_counter() - t)
    return [1e3 * statistics.median(t) for t in ts]


_keep_alive = []


def symjit_wsum():
    try:
        import sympy as sp
        import symjit
    except ImportError:
        return None, None
    xs = sp.symbols("x0:5")
    t = time.perf_counter()
    compiled = symjit.compile_func(list(xs), [sum(float(w) * x for w, x in zip(W5, xs))])
    f = compiled.callable_filter()
    elapsed = 1e3 * (time.perf_counter() - t)
    # SymJit's callable does not keep its code alive: the compiled object must outlive it.
    _keep_alive.append(compiled)
    return f, elapsed


def fmt(v):
    return "-" if v is None else f"{v:.1f}"


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    rng = np.random.default_rng(0)
    images = {"u": rng.random((n, n))}
    images["nan"] = images["u"].copy()
    images["nan"][rng.random((n, n)) < 0.15] = np.nan
    small = {k: v[:128, :128] for k, v in images.items()}
    sym, sym_compile = symjit_wsum()

    print(f"# {n}x{n} float64 through scipy.ndimage.generic_filter (ms; ndjit, floor and Numba timed in "
          "alternating rounds, medians of 9, 5 for the median row)\n")
    print("| filter | ndjit | Numba cfunc | SymJit | Python callable | trivial-callback floor | ndjit / Numba |")
    print("|---|---|---|---|---|---|---|")
    for name, func, fp, kind in ROWS:
        img = images[kind]
        nd = ndjit.jit_filter(func)
        nb = numba_llc(func)
        floor = ndjit.jit_filter(center)
        contenders = [lambda: ndi.generic_filter(img, nd, footprint=fp),
                      lambda: ndi.generic_filter(img, floor, footprint=fp)]
        if nb is not None:
            contenders.append(lambda: ndi.generic_filter(img, nb, footprint=fp))
        t_nd, t_floor, *rest = timed_together(contenders, reps=5 if func is fmedian else 9)
        t_nb = rest[0] if rest else None
        t_sym = timed(lambda: ndi.generic_filter(img, sym, footprint=fp)) if (sym is not None and func is wsum) else None
        t_py = timed(lambda: ndi.generic_filter(small[kind], func, footprint=fp), reps=3) * (n * n) / 128**2
        ratio = f"{t_nd / t_nb:.2f}" if t_nb else "-"
        print(f"| {name} | {t_nd:.1f} | {fmt(t_nb)} | {fmt(t_sym)} | {t_py:.0f} | {t_floor:.1f} | {ratio} |")

    print(f"\n# ndjit's native driver (ndjit.generic_filter), same image (ms, median of 5)\n")
    print("| filter | 1 thread | all threads | vs ndjit through scipy |")
    print("|---|---|---|---|")
    for name, func, fp, kind in ROWS:
        img = images[kind]
        nd = ndjit.jit_filter(func)
        t1 = timed(lambda: ndjit.generic_filter(img, nd, footprint=fp, workers=1))
        ta = timed(lambda: ndjit.generic_filter(img, nd, footprint=fp))
        ts = timed(lambda: ndi.generic_filter(img, nd, footprint=fp))
        print(f"| {name} | {t1:.1f} | {ta:.1f} | {ts / t1:.1f}x faster |")

    print("\n# Compile latency, source to LowLevelCallable (ms)\n")
    lat = []
    for i in range(60):
        t = time.perf_counter()
        ndjit.jit_filter(f"def f(v):\n    r = np.inf\n    for a in v:\n        if a < r:\n            r = a\n    return r + {i}.5\n")
        lat.append(1e3 * (time.perf_counter() - t))
    nb_lat = []
    for _ in range(3):
        t = time.perf_counter()
        if numba_llc(lambda v: v[0] + 1.0) is None:
            break
        nb_lat.append(1e3 * (time.perf_counter() - t))
    print("| tool | median | p90 |")
    print("|---|---|---|")
    print(f"| ndjit (60 distinct sources) | {statistics.median(lat):.2f} | {sorted(lat)[int(0.9 * len(lat))]:.2f} |")
    print(f"| Numba cfunc | {fmt(statistics.median(nb_lat) if nb_lat else None)} | - |")
    print(f"| SymJit (weighted sum) | {fmt(sym_compile)} | - |")

    print("\n# `import ndjit` beyond numpy + scipy (ms, median of 7 fresh interpreters)\n")
    code = ("import time, numpy, scipy, scipy.ndimage; t=time.perf_counter(); import {m}; "
            "print((time.perf_counter()-t)*1e3)")
    for m in ("ndjit", "numba"):
        ts = []
        for _ in range(7):
            r = subprocess.run([sys.executable, "-c", code.format(m=m)], capture_output=True, text=True)
            if r.returncode != 0:
                break
            ts.append(float(r.stdout))
        print(f"| import {m} | {fmt(statistics.median(ts) if ts else None)} |")


if __name__ == "__main__":
    main()
