"""The cost of NumPy's BLAS order for dot products (README, *Known deviations*).

    python benches/dot_order.py [--n 1024] [--k 5] [--reps 7]

A k×k weighted sum over an n² float64 image on one thread, through ndjit's driver: `np.dot(x, w)`
(OpenBLAS's order, bit for bit with NumPy: fused multiply-adds, the kernel's accumulators) beside
`np.sum(x * w)` (NumPy's pairwise order, what ndjit computed for `np.dot` before stop 74), and
scipy's `correlate` (its own order: not the same sums) as the anchor. Medians of --reps runs.
"""
import argparse
import statistics
import time

import numpy as np
from scipy import ndimage as ndi

import ndjit


def median_ms(run, reps):
    run()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def weighted_sums(w):
    """The weighted sum in BLAS's order and in NumPy's pairwise one (`w` a bound value)."""
    def dot(x):
        return np.dot(x, w)

    def pairwise(x):
        return np.sum(x * w)

    return dot, pairwise


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--reps", type=int, default=7)
    a = p.parse_args()
    w = np.random.default_rng(1).standard_normal(a.k * a.k)
    img = np.random.default_rng(2).standard_normal((a.n, a.n))
    out = np.empty_like(img)
    print(f"dot order: {ndjit._core.dot_order()}; {a.n}² float64, {a.k}×{a.k}, one thread, ms (median of {a.reps})")
    for name, fn in zip(("np.dot(x, w)", "np.sum(x * w)"), weighted_sums(w)):
        f = ndjit.jit_filter(fn)
        ms = median_ms(lambda: ndjit.generic_filter(img, f, size=a.k, output=out, workers=1), a.reps)
        print(f"  ndjit {name:<16} {ms:8.1f}")
    ms = median_ms(lambda: ndi.correlate(img, w.reshape(a.k, a.k), output=out, mode="reflect"), a.reps)
    print(f"  scipy correlate        {ms:8.1f}")


if __name__ == "__main__":
    main()
