"""The NumPy array functions of issue 15 in real filters: ndjit against the plain Python callback
and a Numba cfunc, through ``scipy.ndimage.generic_filter``.

    python benches/numpy_functions.py [--size 512] [--rounds 5]

Filters (each written once, as a user writes it; see FILTERS): a 3×3 majority (``np.unique`` with
``return_counts``), a 5×5 histogram entropy (``np.histogram`` with bound bins), a 3×3 gradient
(``w.reshape(3, 3)`` and ``@``), a 3×3 column contrast (``.max(axis=0)``), a 3×3 norm
(``np.linalg.norm``). Columns, in ms for one ``--size``² float64 image (median of ``--rounds``):
- python: scipy calling the Python function (timed on a 64² crop and scaled by the pixel count);
- ndjit LLC: scipy calling ndjit's ``LowLevelCallable`` (one thread, scipy's loop);
- ndjit driver: ``ndjit.generic_filter``, all cores, and with ``workers=1``;
- numba: a Numba ``cfunc`` of the same body through scipy ("not installed" without Numba,
  "unsupported" where Numba refuses the body);
- compile: ndjit's compile of the filter, in ms.
ndjit's results are checked against the Python function's on the crop first.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.ndimage as ndi
from scipy import LowLevelCallable

import ndjit

try:
    import numba
except ImportError:
    numba = None
    print("numba: not installed")

NBINS = 8
KERNEL = np.array([1.0, 2.0, 1.0])


def majority(w):
    vals, counts = np.unique(w, return_counts=True)
    return vals[np.argmax(counts)]


def histogram_entropy(w):
    counts = np.histogram(w, NBINS, range=(-3.0, 3.0))[0]
    p = counts[counts > 0] / w.size
    return -(p * np.log(p)).sum()


def gradient(w):
    m = w.reshape(3, 3)
    gx = (m[:, 2] - m[:, 0]) @ KERNEL
    gy = (m[2] - m[0]) @ KERNEL
    return np.hypot(gx, gy)


def column_contrast(w):
    m = w.reshape(3, 3)
    return (m.max(axis=0) - m.min(axis=0)).sum()


def norm(w):
    return np.linalg.norm(w - w.mean())


FILTERS = [(majority, 3, "labels"), (histogram_entropy, 5, "normal"), (gradient, 3, "normal"),
           (column_contrast, 3, "normal"), (norm, 3, "normal")]


def image(kind, n, rng):
    if kind == "labels":
        return rng.integers(0, 5, (n, n)).astype(float)
    return rng.normal(0.0, 1.0, (n, n))


def numba_llc(func):
    """The function's body as a Numba cfunc for generic_filter, or a reason it is not one."""
    if numba is None:
        return "not installed"
    from numba import carray, cfunc, types

    jitted = numba.njit(func)
    sig = types.intc(types.CPointer(types.float64), types.intp, types.CPointer(types.float64), types.voidptr)

    def body(values, n, result, data):
        result[0] = jitted(carray(values, (n,)))
        return 1

    try:
        c = cfunc(sig)(body)
        llc = LowLevelCallable(c.ctypes)
        ndi.generic_filter(np.zeros((4, 4)), llc, size=3)
        return llc
    except Exception as e:  # Numba's typing errors: the body is not supported
        return f"unsupported ({type(e).__name__})"


def median_ms(call, rounds):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(15)
    scale = (args.size / 64) ** 2
    rows = []
    for func, size, kind in FILTERS:
        img = image(kind, args.size, rng)
        crop = img[:64, :64]
        t0 = time.perf_counter()
        f = ndjit.jit_filter(func)
        ndi.generic_filter(crop[:8, :8], f, size=size)  # the first call specialises
        compile_ms = (time.perf_counter() - t0) * 1e3
        want = ndi.generic_filter(crop, func, size=size)
        got = ndi.generic_filter(crop, f, size=size)
        assert np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True), func.__name__
        python = median_ms(lambda: ndi.generic_filter(crop, func, size=size), max(1, args.rounds // 2)) * scale
        llc = median_ms(lambda: ndi.generic_filter(img, f, size=size), args.rounds)
        driver = median_ms(lambda: ndjit.generic_filter(img, f, size=size), args.rounds)
        one = median_ms(lambda: ndjit.generic_filter(img, f, size=size, workers=1), args.rounds)
        nb = numba_llc(func)
        nb_ms = f"{median_ms(lambda: ndi.generic_filter(img, nb, size=size), args.rounds):.1f}" \
            if isinstance(nb, LowLevelCallable) else nb
        rows.append((f"{func.__name__} {size}x{size}", f"{python:.0f}", f"{llc:.1f}", f"{driver:.1f}",
                     f"{one:.1f}", nb_ms, f"{compile_ms:.1f}"))
    head = ("filter", "python", "ndjit LLC", "ndjit driver", "driver workers=1", "numba", "compile")
    print(f"\n{args.size}² float64, ms (median of {args.rounds}); python scaled from a 64² crop\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
