"""Per-call cost of ``ndjit.generic_filter`` from Python, against scipy on the same images.

    python benches/percall.py [--calls 4000] [--rounds 5]

A compiled ``min`` over ``size=3`` on a 1×1 and a 64×64 float64 image, four ways side by side:
- ``ndjit.generic_filter(x, f, size=3)`` with ``f`` compiled once (one worker, and all cores);
- ``scipy.ndimage.minimum_filter(x, size=3)``, scipy's own C filter;
- ``scipy.ndimage.generic_filter(x, f, size=3)``, scipy's loop calling ndjit's LowLevelCallable.

Each case runs ``--calls`` timed calls per round after a warm-up, and the rounds take turns so that
a noisy machine slows every case alike; the table gives the median of all calls, in µs, and its
ratio to ``minimum_filter``'s.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np
import scipy
import scipy.ndimage as ndi

import ndjit


def cases(x: np.ndarray, f: ndjit.Filter) -> dict:
    return {
        "ndjit.generic_filter": lambda: ndjit.generic_filter(x, f, size=3),
        "ndjit.generic_filter workers=1": lambda: ndjit.generic_filter(x, f, size=3, workers=1),
        "ndi.minimum_filter": lambda: ndi.minimum_filter(x, size=3),
        "ndi.generic_filter(LowLevelCallable)": lambda: ndi.generic_filter(x, f, size=3),
    }


def time_calls(call, n: int) -> list:
    samples = []
    clock = time.perf_counter_ns
    for _ in range(n):
        t = clock()
        call()
        samples.append(clock() - t)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=4000, help="timed calls per case and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    f = ndjit.jit_filter(lambda x: x.min())
    images = {"1x1": np.ones((1, 1)), "64x64": np.random.default_rng(0).random((64, 64))}
    for x in images.values():  # the results agree before anything is timed
        assert np.array_equal(ndjit.generic_filter(x, f, size=3), ndi.minimum_filter(x, size=3))
    table = {(img, name): [] for img, x in images.items() for name in cases(x, f)}
    for _ in range(args.rounds):
        for img, x in images.items():
            for name, call in cases(x, f).items():
                time_calls(call, 200)  # warm-up: caches, branch predictors, allocator
                table[img, name] += time_calls(call, args.calls)
    print(f"ndjit {ndjit.__version__}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs; "
          f"median of {args.rounds}×{args.calls} calls, µs")
    print(f"{'image':6s} {'call':38s} {'µs':>8s} {'× minimum_filter':>17s}")
    for img in images:
        base = statistics.median(table[img, "ndi.minimum_filter"])
        for name in cases(images[img], f):
            med = statistics.median(table[img, name])
            print(f"{img:6s} {name:38s} {med / 1e3:8.2f} {med / base:17.2f}")


if __name__ == "__main__":
    main()
