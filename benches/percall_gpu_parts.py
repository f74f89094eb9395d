"""Where the Python part of a ``target="cuda"`` call goes, on a real CuPy array (issue 13).

    python benches/percall_gpu_parts.py [--calls 5000]

``benches/percall_gpu.py --split`` separates the Rust entry (``_core.cuda_filter_device``) from
the rest of a call; this times the rest's steps one by one on a CuPy 8192² float64 array, medians
of ``--calls`` calls, µs: reading ``__cuda_array_interface__`` (CuPy builds the dictionary on every
read), ndjit's description of it, scipy's argument rules, finding the compiled filter, and the
whole call with the Rust entry stubbed out. Prints "not installed" and exits 0 without CuPy.
"""
import argparse
import statistics
import sys
import time

try:
    import cupy
except ImportError:
    print("cupy: not installed")
    sys.exit(0)

import ndjit
from ndjit import _core, _cuda, _filter, _scipy_args


def us(f, calls):
    for _ in range(100):
        f()
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=5000)
    calls = ap.parse_args().calls
    x = cupy.random.random((8192, 8192))
    out = cupy.empty_like(x)
    f = lambda v: v.min()  # noqa: E731 (a plain lambda, as percall_gpu.py's cases)
    cai = x.__cuda_array_interface__
    parts = [
        ("x.__cuda_array_interface__", lambda: x.__cuda_array_interface__),
        ("_cuda.interface(x)", lambda: _cuda.interface(x)),
        ("_cuda._describe(cai)", lambda: _cuda._describe(cai, "input")),
        ("footprint_and_origins(size=3)", lambda: _scipy_args.footprint_and_origins(2, 3, None, 0, None, "reflect")),
        ("compiled_filter(lambda)", lambda: _filter.compiled_filter(f, (), None)),
    ]
    print(f"Python parts of a target='cuda' call on CuPy {x.shape} float64, medians of {calls}, µs")
    for name, g in parts:
        print(f"{name:34s} {us(g, calls):7.2f}")
    whole = lambda: ndjit.generic_filter(x, f, size=3, output=out, target="cuda")  # noqa: E731
    print(f"{'whole call':34s} {us(whole, calls // 10):7.2f}")
    real = _core.cuda_filter_device
    _core.cuda_filter_device = lambda *a: None
    try:
        print(f"{'whole call, Rust entry stubbed':34s} {us(whole, calls):7.2f}")
    finally:
        _core.cuda_filter_device = real


main()
