"""How far ndjit's math functions are from CPython's `math` and from NumPy's `np.*`, per function.

    python benches/math_accuracy.py [N]

For N random inputs of every magnitude (default 100000) the table gives, per function, how many
results differ from CPython's and from NumPy's, and by how many ulps at most. ndjit calls the C
library CPython calls, so the `math` columns are 0 on Linux; NumPy uses SIMD kernels of its own
on some CPUs (AVX-512 here), which the `np` columns measure.
"""
import math
import sys

import numpy as np
import scipy.ndimage as ndi

import ndjit

UNARY = {"exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
         "log10": "log10", "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan",
         "asin": "arcsin", "acos": "arccos", "atan": "arctan", "sinh": "sinh", "cosh": "cosh",
         "tanh": "tanh", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh",
         "cbrt": "cbrt"}


def ulps(a, b):
    """Element-wise ulp distance of two float64 arrays (NaN against NaN is 0)."""
    ia, ib = a.view(np.int64).copy(), b.view(np.int64).copy()
    ia[ia < 0] = np.int64(-2**63) - ia[ia < 0]
    ib[ib < 0] = np.int64(-2**63) - ib[ib < 0]
    d = np.abs(ia.astype(object) - ib.astype(object)).astype(float)
    both_nan = np.isnan(a) & np.isnan(b)
    d[both_nan] = 0
    return d


def main(n):
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-4, 4, n // 2),
                        rng.uniform(-1, 1, n - n // 2) * 10.0 ** rng.integers(-12, 12, n - n // 2)])
    print(f"{n} inputs per function; ulps of ndjit's result from CPython's math and NumPy's np")
    print(f"{'function':<10}{'math: differ':>14}{'max ulp':>9}{'np: differ':>12}{'max ulp':>9}")
    for name, npname in UNARY.items():
        fn = getattr(math, name)
        keep, want = [], []
        for v in x:
            try:
                want.append(fn(v))
                keep.append(v)
            except (ValueError, OverflowError):
                pass
        keep, want = np.array(keep), np.array(want)
        got = ndi.generic_filter(keep, ndjit.jit_filter(f"math.{name}(x[0])"), size=1)
        d_math = ulps(got, want)
        with np.errstate(all="ignore"):
            npw = getattr(np, npname)(x)
        npg = ndi.generic_filter(x, ndjit.jit_filter(f"np.{npname}(x[0])"), size=1)
        d_np = ulps(npg, npw)
        print(f"{name:<10}{int((d_math > 0).sum()):>14}{int(d_math.max()):>9}"
              f"{int((d_np > 0).sum()):>12}{int(d_np.max()):>9}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
