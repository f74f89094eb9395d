"""Per-call cost of ``ndjit.generic_filter`` given a plain Python function (not a compiled
``ndjit.Filter``) on a 1×1 image, so that the call is all overhead: each call describes the
function again (its globals and closure values may have changed), so what matters is what that
costs.

    python benches/percall_plain.py [--calls 3000]

Prints medians of 7 rounds, µs per call: the whole call for a min over a cross and a 5×5
median, and ``as_filter`` (describing the function and finding its compiled code) alone.
"""
import argparse
import statistics
import time

import numpy as np
import scipy.ndimage as ndi

import ndjit
from ndjit._filter import as_filter


def per_call_us(fn, calls):
    for _ in range(200):
        fn()
    rounds = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        rounds.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(rounds)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=3000)
    calls = ap.parse_args().calls
    x, out = np.zeros((1, 1)), np.zeros((1, 1))
    cross = ndi.generate_binary_structure(2, 1)
    fmin = lambda v: v.min()  # noqa: E731
    fmed = lambda v: np.median(v)  # noqa: E731
    print(f"µs per call, medians of 7 rounds of {calls} calls")
    print(f"generic_filter(1x1, lambda v: v.min(), footprint=cross): "
          f"{per_call_us(lambda: ndjit.generic_filter(x, fmin, footprint=cross, output=out), calls):8.1f}")
    print(f"generic_filter(1x1, lambda v: np.median(v), size=5):     "
          f"{per_call_us(lambda: ndjit.generic_filter(x, fmed, size=5, output=out), calls):8.1f}")
    print(f"as_filter(lambda v: v.min()) alone:                      "
          f"{per_call_us(lambda: as_filter(fmin, (), None), calls):8.1f}")


if __name__ == "__main__":
    main()
