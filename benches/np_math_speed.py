"""Time per pixel of `np.tanh`, `np.sinh`, `np.log10`, `np.arccosh` and `np.cbrt` in ndjit's
driver, with the C library's routines and with ndjit's own (within 0.51 ulp, what ndjit runs
where NumPy's kernels are its own), beside NumPy's own ufunc on the same array.

    python benches/np_math_speed.py [N]

Medians of 7 runs over N values in [1, 3] (default 2·10⁶), all cores of the driver.
"""
import sys
import time

import numpy as np

import ndjit

NAMES = ["tanh", "sinh", "log10", "arccosh", "cbrt"]


def median_ns(fn, n, repeats=7):
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) / n * 1e9


def main(n):
    x = np.random.default_rng(0).uniform(1.0, 3.0, n)
    print(f"{n} values; ns per value, medians of 7")
    print(f"{'function':<10}{'C library':>11}{'own':>8}{'NumPy':>8}")
    for name in NAMES:
        before = ndjit._core.numpy_kernel_is_own(name)
        times = {}
        try:
            for own in (False, True):
                ndjit._core.set_numpy_kernel(name, own)
                src = f"np.{name}(x[0])"
                ndjit.generic_filter(x[:10], src, size=1)
                times[own] = median_ns(lambda: ndjit.generic_filter(x, src, size=1, mode="constant"), n)
        finally:
            ndjit._core.set_numpy_kernel(name, before)
        ufunc = getattr(np, name)
        t_np = median_ns(lambda: ufunc(x), n)
        print(f"{name:<10}{times[False]:>11.1f}{times[True]:>8.1f}{t_np:>8.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000)
