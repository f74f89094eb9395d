"""The cost of the interrupt poll on loop back edges (src/jit/poll.rs): nanoseconds per iteration
of a `while` loop inside one callback, through scipy.ndimage.generic_filter (min of 7 runs).

    python benches/poll_cost.py

Run it with a build before and after a change to the poll; the loop without a call shows the
poll's own cost, the loop with `%` (a call into the runtime) how it interacts with calls.
"""
import time

import numpy as np
import scipy.ndimage as ndi

import ndjit

LOOPS = {
    "while, no call": "def f(x):\n    s = 0.0\n    i = 0\n    while i < 10000000:\n        s += x[4]\n        i += 1\n    return s\n",
    "while, i % 9": "def f(x):\n    s = 0.0\n    i = 0\n    while i < 10000000:\n        s += x[i % 9]\n        i += 1\n    return s\n",
}

a = np.arange(9.0).reshape(3, 3)
for name, src in LOOPS.items():
    f = ndjit.jit_filter(src)
    ts = []
    for _ in range(7):
        t = time.perf_counter()
        ndi.generic_filter(a, f, size=3, mode="constant")
        ts.append(time.perf_counter() - t)
    print(f"{name:16s} {1e9 * min(ts) / 9e7:6.2f} ns/iteration")
