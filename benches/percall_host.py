"""The Python side of a ``target="cuda"`` call, measurable without a GPU (issue 13).

    python benches/percall_host.py [--calls 5000]

``ndjit.generic_filter(a, f, ..., output=out, target="cuda")`` on stand-in device arrays (objects
with a ``__cuda_array_interface__`` whose pointer is never read) with the launch stubbed out:
what remains is the host time the Python layer adds to every call (reading the interfaces,
scipy's argument rules, describing and finding the compiled filter). The cases are those of
``benches/percall_gpu.py``: plain lambdas, so each call describes the function afresh. Prints the
median over ``--calls`` calls, in µs.
"""
import argparse
import statistics
import time

import numpy as np
import scipy.ndimage as ndi

import ndjit
from ndjit import _core


class StandIn:
    """A C-contiguous float64 "device array": only its interface is read."""

    def __init__(self, shape):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f8", "data": (1 << 20, False),
                                         "version": 3, "strides": None, "stream": 1}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=5000)
    args = ap.parse_args()
    launches = []
    _core.cuda_filter_device = lambda *a: launches.append(a[2])  # the launch, stubbed out
    a, out = StandIn((8192, 8192)), StandIn((8192, 8192))
    cases = [
        ("min, 3x3 cross", lambda x: x.min(), {"footprint": ndi.generate_binary_structure(2, 1)}),
        ("median 5x5", lambda x: np.median(x), {"size": 5}),
    ]
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


if __name__ == "__main__":
    main()
