"""Runs ndjit's box minimum on a CuPy image a few times, for a profiler to read its kernels.

    ncu --clock-control none -k regex:ndjit --metrics gpu__time_duration.sum,dram__bytes.sum \
        python3 benches/prof_passes.py [--size 8192] [--k 15] [--dtype float32] [--runs 2]

Prints "cupy: not installed" without CuPy.
"""
import argparse
import sys

import numpy as np

try:
    import cupy
except ImportError:
    print("cupy: not installed")
    sys.exit(0)

import ndjit


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--k", type=int, default=15)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--runs", type=int, default=2)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    a = cupy.asarray((rng.random((args.size, args.size)) * 200).astype(args.dtype))
    out = cupy.empty_like(a)
    f = ndjit.jit_filter("np.min(x)")
    for _ in range(args.runs):
        ndjit.generic_filter(a, f, size=args.k, output=out, target="cuda")
    cupy.cuda.get_current_stream().synchronize()
    print("ran", args)


if __name__ == "__main__":
    main()
