"""Where unrolled code stops paying (MAX_UNROLLED_TAPS in src/driver/mod.rs): time and peak memory
of ndjit.generic_filter on a tiny image with a 1×n footprint, in a fresh process per n, so that the
first call's compilation dominates.

    python benches/unroll_threshold.py 16384 65536
"""
import subprocess
import sys

CHILD = """
import resource, sys, time, numpy as np, ndjit
src, n = sys.argv[1], int(sys.argv[2])
f = ndjit.jit_filter(src)
t = time.perf_counter()
ndjit.generic_filter(np.random.default_rng(0).random((8, 8)), f, size=(1, n), workers=1)
print(f"{src:12s} taps={n:8d} {time.perf_counter() - t:7.3f} s, "
      f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB")
"""

for n in sys.argv[1:] or ["16384", "65536", "65537", "262144"]:
    for src in ["x[0]", "np.mean(x)"]:
        subprocess.run([sys.executable, "-c", CHILD, src, n], check=True)
