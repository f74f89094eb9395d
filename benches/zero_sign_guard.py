"""What the zero-sign guards (src/ir/zero_signs.rs) cost the general engine: callbacks that hold
`np.min`/`np.max`/`np.nanmin` but are no rank statistic, 5×5 on 1024² float64 with no zeros (so no
window enters a guard), one thread, best of 5 runs in ms.

    python benches/zero_sign_guard.py

Run it on two builds (each wheel in its own folder on PYTHONPATH) to compare them.
"""
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

import ndjit

rng = np.random.default_rng(0)
x = rng.random((1024, 1024)) + 0.5
for src in ["np.min(x) + np.mean(x)", "np.max(x) - np.min(x) + 0.5 * x[12]", "np.nanmin(x)"]:
    f = ndjit.jit_filter(src)
    ndjit.generic_filter(x, f, size=5, workers=1)
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        ndjit.generic_filter(x, f, size=5, workers=1)
        runs.append(time.perf_counter() - t)
    print(f"{src:40s} {min(runs) * 1e3:8.2f} ms")
