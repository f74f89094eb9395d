"""What the "holds an int" flags cost (src/lower/int_or_float.rs).

A variable assigned an int on one path and a float on another (`m = 0`, then `m = v`) carries a
run-time flag, and each operator whose operands may all be ints is lowered twice and branches on
it. Each filter below is timed twice through ndjit's driver, 1024² f64, size 3, one thread: as
written (the int start), and with the int written as a float (`0.0`), which needs no flag. Both
give scipy's result here (checked first). The ratio is the flagged time over the plain one
(1.00: the flag costs nothing). Medians of --reps runs, ms.

    python benches/int_flags.py [--size 1024] [--reps 9] [--threads 1]
"""
import argparse
import statistics
import time

import numpy as np
from scipy import ndimage as ndi

import ndjit

# (name, source with {z} for the start value); the flag is taken where {z} is the int 0.
FILTERS = [
    ("running max from 0", "def f(x):\n    m = {z}\n    for v in x:\n        if v > m:\n"
                           "            m = v\n    return m"),
    ("sum from 0", "def f(x):\n    s = {z}\n    for v in x:\n        s += v\n    return s"),
    ("last above 0.5, scaled", "def f(x):\n    r = {z}\n    for v in x:\n        if v > 0.5:\n"
                               "            r = v\n    return r * 2 - (r > 1) + r // 3"),
    ("clip below, choice", "def f(x):\n    c = x[4] if x[4] > 0.2 else {z}\n"
                           "    return -c * 3 + abs(c) % 2"),
    ("count or value", "def f(x):\n    k = {z}\n    for v in x:\n        if v < 0.1:\n"
                       "            k = k + 1\n        elif v > 0.9:\n            k = v\n"
                       "    return k * k - k"),
]


def timed(f, reps):
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    img = np.random.default_rng(7).random((args.size, args.size))
    small = img[:64, :64]
    print(f"{args.size}² f64, size 3, {args.threads} thread(s), medians of {args.reps} (ms)")
    print("| filter | int start (flag) | float start | ratio |\n|---|---:|---:|---:|")
    for name, src in FILTERS:
        flagged, plain = src.format(z="0"), src.format(z="0.0")
        out = {}
        for key, s in (("flag", flagged), ("plain", plain)):
            ns = {"np": np}
            exec(s, ns)
            want = ndi.generic_filter(small, ns["f"], size=3)
            got = ndjit.generic_filter(small, s, size=3)
            assert np.array_equal(want, got, equal_nan=True), (name, key)
            out[key] = timed(lambda: ndjit.generic_filter(img, s, size=3,
                                                           workers=args.threads), args.reps)
        print(f"| {name} | {out['flag']:.2f} | {out['plain']:.2f} | "
              f"{out['flag'] / out['plain']:.2f} |")


if __name__ == "__main__":
    main()
