"""The Python side of a ``target="cuda"`` call, measurable without a GPU (issue 13).

    python benches/percall_host.py [--calls 5000]

``ndjit.generic_filter(a, f, ..., output=out, target="cuda")`` on stand-in device arrays (objects
with a ``__cuda_array_interface__`` whose pointer is never read) with the launch stubbed out:
what remains is the host time the Python layer adds to every call (reading the interfaces,
scipy's argument rules, describing and finding the compiled filter). The cases are those of
``benches/percall_gpu.py``: plain lambdas, whose spec is kept between calls
(``ndjit/_spec_cache.py``). Prints the median over ``--calls`` calls, in µs. ``--ab ROUNDS``
instead alternates rounds with the spec kept and described afresh on every call, and prints
each round's median.
"""
import argparse
import statistics
import time

import numpy as np
import scipy.ndimage as ndi

import ndjit
from ndjit import _core, _spec_cache


class StandIn:
    """A C-contiguous float64 "device array": only its interface is read."""

    def __init__(self, shape):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f8", "data": (1 << 20, False),
                                         "version": 3, "strides": None, "stream": 1}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--ab", type=int, default=0, metavar="ROUNDS",
                    help="alternate rounds with the spec kept and described afresh")
    args = ap.parse_args()
    launches = []
    _core.cuda_filter_device = lambda *a: launches.append(a[2])  # the launch, stubbed out
    a, out = StandIn((8192, 8192)), StandIn((8192, 8192))
    cases = [
        ("min, 3x3 cross", lambda x: x.min(), {"footprint": ndi.generate_binary_structure(2, 1)}),
        ("median 5x5", lambda x: np.median(x), {"size": 5}),
    ]
    if args.ab:
        return compare(a, out, cases[0], args.calls, args.ab)
    print(f"Python host time per target='cuda' call, stand-in arrays, launch stubbed; "
          f"medians of {args.calls} calls, µs")
    for name, f, kw in cases:
        for _ in range(100):
            ndjit.generic_filter(a, f, output=out, target="cuda", **kw)
        times = []
        for _ in range(args.calls):
            t = time.perf_counter()
            ndjit.generic_filter(a, f, output=out, target="cuda", **kw)
            times.append(time.perf_counter() - t)
        assert launches and launches[-1] is launches[0], "one compiled filter for every call"
        launches.clear()
        print(f"{name:16s} {1e6 * statistics.median(times):6.1f}")


def compare(a, out, case, calls, rounds):
    """Rounds of ``calls`` calls, in turn with the spec kept and described afresh."""
    name, f, kw = case
    keep = _spec_cache.spec_of
    modes = {"kept": keep, "afresh": lambda func, signature, describe: describe()}
    medians = {mode: [] for mode in modes}
    try:
        for _ in range(rounds):
            for mode, spec_of in modes.items():
                _spec_cache.spec_of = spec_of
                times = []
                for _ in range(calls):
                    t = time.perf_counter()
                    ndjit.generic_filter(a, f, output=out, target="cuda", **kw)
                    times.append(time.perf_counter() - t)
                medians[mode].append(1e6 * statistics.median(times))
    finally:
        _spec_cache.spec_of = keep
    print(f"{name}: Python host time per call, µs, medians of {calls} calls per round")
    for mode, ms in medians.items():
        print(f"{mode:7s} " + " ".join(f"{m:.1f}" for m in ms) + f"   median {statistics.median(ms):.1f}")


if __name__ == "__main__":
    main()
