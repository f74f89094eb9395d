"""Host time per call of ``ndjit.generic_filter(cupy_array, f, ..., output=out, target="cuda")``
beyond the kernel (issue 13's goal: at most 30 µs).

    python benches/percall_gpu.py [--size 8192] [--calls 50]

For ``min`` over a 3×3 cross (float64) and the median of 5×5, on a CuPy array of size² float64
with a preallocated ``output=``, after warm-up calls (kernel generated, module loaded), medians
over ``--calls`` calls of:
- end to end: ``time.perf_counter`` around the Python call and a synchronisation of the stream,
  so until the result is ready (a filter that cannot fail returns as soon as its kernel is
  queued on CuPy's stream, as CuPy's own calls do; one that can fail waits for the kernel to
  read its error record);
- the call alone: ``time.perf_counter`` around the Python call (the host time it takes from
  the caller when the filter cannot fail);
- back to back: ``--calls`` calls in a row, then one synchronisation, per call: where the calls
  do not wait, the host queues the next call while the GPU runs the last, and only the GPU's
  time remains;
- GPU time: CUDA events around the same call, with the stream held busy by a spin kernel queued
  first, so that everything ndjit queues (error-record reset, the stencil kernel, the 8-byte
  error-key copy) is queued before the GPU gets to it: the events then time the GPU work alone,
  not the host's preparation.
The host time beyond the kernel is end to end minus GPU time. ``cupyx.scipy.ndimage``'s own
``minimum_filter`` and ``median_filter`` are timed the same way, as the anchor a CuPy user has,
and ``cupy.copyto`` as the floor: what a launch and a synchronisation cost beyond the kernel.
``--split`` also times the Rust part of each call alone (``_core.cuda_filter_device``) and prints
the Python functions with the most time of their own (cProfile). Prints "not installed" and exits 0
without CuPy, and "no CUDA device" without a GPU.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time

import numpy as np

try:
    import cupy
except ImportError:
    print("cupy: not installed")
    sys.exit(0)

import scipy.ndimage as ndi

import ndjit

CASES = [
    ("min, 3x3 cross, f64", lambda x: x.min(), {"footprint": ndi.generate_binary_structure(2, 1)}),
    ("median 5x5, f64", lambda x: np.median(x), {"size": 5}),
    # Can fail (int() of a NaN or an infinity raises), so the call waits to read its error record.
    ("int(x[4]) 3x3, f64", "float(int(x[4]))", {"size": 3}),
]


SPIN = cupy.RawKernel(r"""
extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}""", "spin")


def measure(call_once, calls):
    """(GPU ms, end-to-end ms, call ms, back-to-back ms) medians. ndjit launches on the stream
    named by the input's ``__cuda_array_interface__``, i.e. CuPy's current stream, where the
    events are recorded."""
    stream = cupy.cuda.get_current_stream()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    gpu, wall, call = [], [], []
    for _ in range(calls):
        stream.synchronize()
        t0 = time.perf_counter()
        call_once()
        t1 = time.perf_counter()
        stream.synchronize()
        wall.append((time.perf_counter() - t0) * 1e3)
        call.append((t1 - t0) * 1e3)
        # About 10 ms of spinning at 2 GHz: far more than the host needs to queue the call.
        SPIN((1,), (1,), (np.int64(20_000_000),))  # on the current stream
        start.record(stream)
        call_once()
        stop.record(stream)
        stop.synchronize()
        gpu.append(cupy.cuda.get_elapsed_time(start, stop))
    stream.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        call_once()
    stream.synchronize()
    in_a_row = (time.perf_counter() - t0) * 1e3 / calls
    return statistics.median(gpu), statistics.median(wall), statistics.median(call), in_a_row


def split(call_once, calls):
    """The Rust part of a call alone (``_core.cuda_filter_device``, timed from Python around it)
    and the Python functions with the most time of their own over ``calls`` calls."""
    from ndjit import _cuda
    core, rust = _cuda._core, []

    class Timed:
        def __getattr__(self, name):
            return getattr(core, name)

        def cuda_filter_device(self, *args):
            t0 = time.perf_counter_ns()
            try:
                return core.cuda_filter_device(*args)
            finally:
                rust.append((time.perf_counter_ns() - t0) / 1e3)

    stream = cupy.cuda.get_current_stream()
    _cuda._core = Timed()
    try:
        for _ in range(calls):
            stream.synchronize()
            call_once()
        profile = cProfile.Profile()
        for _ in range(calls):
            stream.synchronize()
            profile.enable()
            call_once()
            profile.disable()
    finally:
        _cuda._core = core
    print(f"    Rust part (_core.cuda_filter_device): median {statistics.median(rust[:calls]):.1f} us, "
          f"min {min(rust[:calls]):.1f} us")
    pstats.Stats(profile).sort_stats("tottime").print_stats(12)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--calls", type=int, default=50)
    p.add_argument("--split", action="store_true",
                   help="also time the Rust part of a call and profile the Python part")
    args = p.parse_args()
    if not ndjit.cuda.is_available():
        print(f"no CUDA device: {ndjit._core.cuda_unavailable_reason()}")
        return
    info = ndjit.cuda.device()
    n = args.size
    print(f"{info['name']} ({info['ptx_target']}), {n}x{n} float64, medians of {args.calls} calls")
    rng = np.random.default_rng(0)
    a = cupy.asarray(rng.normal(size=(n, n)))
    out = cupy.empty_like(a)
    print(f"{'case':<26} {'GPU ms':>10} {'end to end ms':>14} {'host us beyond':>15} {'call us':>9} "
          f"{'back to back ms':>16} {'beyond us':>10}")
    row = "{:<26} {:>10.3f} {:>14.3f} {:>15.1f} {:>9.1f} {:>16.3f} {:>10.1f}"
    for name, fn, kwargs in CASES:
        f = ndjit.jit_filter(fn)
        call = lambda: ndjit.generic_filter(a, f, output=out, target="cuda", **kwargs)
        for _ in range(3):  # kernel generation, module load, first launches
            call()
        cupy.cuda.Device().synchronize()
        kernel, wall, alone, in_a_row = measure(call, args.calls)
        print(row.format(name, kernel, wall, (wall - kernel) * 1e3, alone * 1e3, in_a_row,
                         (in_a_row - kernel) * 1e3))
        if args.split:
            split(call, args.calls)
    try:
        import cupyx.scipy.ndimage as cndi
    except ImportError:
        print("cupyx.scipy.ndimage: not installed")
    else:
        cross = cupy.asarray(CASES[0][2]["footprint"])
        # `copyto` is the floor of any call: one elementwise kernel, no arguments to check, so
        # its time beyond the kernel is the launch and synchronisation alone.
        anchors = [("cupyx minimum_filter cross", lambda: cndi.minimum_filter(a, footprint=cross, output=out)),
                   ("cupyx median_filter 5x5", lambda: cndi.median_filter(a, size=5, output=out)),
                   ("cupy.copyto (the floor)", lambda: cupy.copyto(out, a))]
        for name, call in anchors:
            for _ in range(3):
                call()
            cupy.cuda.Device().synchronize()
            kernel, wall, alone, in_a_row = measure(call, args.calls)
            print(row.format(name, kernel, wall, (wall - kernel) * 1e3, alone * 1e3, in_a_row,
                             (in_a_row - kernel) * 1e3))
    # The result is scipy's (a crop, so that the CPU check stays quick).
    crop = a[:256, :256]
    got = ndjit.generic_filter(crop, CASES[1][1], size=5, target="cuda")
    want = ndi.generic_filter(cupy.asnumpy(crop), ndjit.jit_filter(CASES[1][1]), size=5)
    assert cupy.asnumpy(got).tobytes() == want.tobytes(), "the GPU result differs from scipy's"


if __name__ == "__main__":
    main()
