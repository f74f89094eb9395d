"""Host time per call of ``ndjit.generic_filter(cupy_array, f, ..., output=out, target="cuda")``
beyond the kernel (issue 13's goal: at most 30 µs).

    python benches/percall_gpu.py [--size 8192] [--calls 50] [--rounds 5] [--warmup 200]

For ``min`` over a 3×3 cross (float64) and the median of 5×5, on a CuPy array of size² float64
with a preallocated ``output=``. Every case (ndjit's and the anchors') is first called
``--warmup`` times untimed: a process's first hundred or so calls are slower on the device
machines, which made single runs disagree by 4×. Then ``--rounds`` rounds each time every case
in turn, ``--calls`` calls each, so that ndjit and the anchors share the host's load. Reported:
medians over all calls, with the range of the rounds' medians, of:
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
The host time beyond the kernel is each call's end to end minus its GPU time. ``cupyx.scipy.ndimage``'s own
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
    """One round of ``calls`` calls: per call ``(GPU ms, end-to-end ms, call ms)``, and the
    back-to-back ms per call of ``calls`` more. ndjit launches on the stream named by the input's
    ``__cuda_array_interface__``, i.e. CuPy's current stream, where the events are recorded."""
    stream = cupy.cuda.get_current_stream()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    per_call = []
    for _ in range(calls):
        stream.synchronize()
        t0 = time.perf_counter()
        call_once()
        t1 = time.perf_counter()
        stream.synchronize()
        wall, alone = (time.perf_counter() - t0) * 1e3, (t1 - t0) * 1e3
        # About 10 ms of spinning at 2 GHz: far more than the host needs to queue the call.
        SPIN((1,), (1,), (np.int64(20_000_000),))  # on the current stream
        start.record(stream)
        call_once()
        stop.record(stream)
        stop.synchronize()
        per_call.append((cupy.cuda.get_elapsed_time(start, stop), wall, alone))
    stream.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        call_once()
    stream.synchronize()
    return per_call, (time.perf_counter() - t0) * 1e3 / calls


def anchors(a, out):
    """What a CuPy user has instead (``cupyx.scipy.ndimage``), and ``cupy.copyto``, the floor of
    any call: one elementwise kernel, no arguments to check, so its time beyond the kernel is
    the launch and the synchronisation alone."""
    try:
        import cupyx.scipy.ndimage as cndi
    except ImportError:
        print("cupyx.scipy.ndimage: not installed")
        return [("cupy.copyto (the floor)", lambda: cupy.copyto(out, a))]
    cross = cupy.asarray(CASES[0][2]["footprint"])
    return [("cupyx minimum_filter cross", lambda: cndi.minimum_filter(a, footprint=cross, output=out)),
            ("cupyx median_filter 5x5", lambda: cndi.median_filter(a, size=5, output=out)),
            ("cupy.copyto (the floor)", lambda: cupy.copyto(out, a))]


def report(rounds):
    """Per case, medians over every call of every round (the host time beyond the kernel is the
    median of each call's end to end minus its own GPU time) and, in brackets, the range of the
    rounds' medians; then each case's host time beyond the floor's, round by round."""
    print(f"{'case':<26} {'GPU ms':>8} {'end to end ms':>14} {'host us beyond [rounds]':>26} {'call us':>8} "
          f"{'back to back ms':>16} {'beyond us':>10}")
    beyond = {}
    for name, runs in rounds.items():
        calls = [c for per_call, _ in runs for c in per_call]
        beyond[name] = [statistics.median((w - g) * 1e3 for g, w, _ in per_call) for per_call, _ in runs]
        gpu = statistics.median(g for g, _, _ in calls)
        in_a_row = statistics.median(r for _, r in runs)
        ranged = f"{statistics.median((w - g) * 1e3 for g, w, _ in calls):.1f} " \
                 f"[{min(beyond[name]):.1f}-{max(beyond[name]):.1f}]"
        print(f"{name:<26} {gpu:>8.3f} {statistics.median(w for _, w, _ in calls):>14.3f} {ranged:>26} "
              f"{statistics.median(c for _, _, c in calls) * 1e3:>8.1f} {in_a_row:>16.3f} "
              f"{(in_a_row - gpu) * 1e3:>10.1f}")
    floor = beyond.get("cupy.copyto (the floor)")
    print("host us beyond the kernel, above cupy.copyto's, round by round:")
    for name, b in beyond.items():
        if floor is not None and b is not floor:
            print(f"  {name:<26} " + " ".join(f"{x - y:+6.1f}" for x, y in zip(b, floor)))


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
    p.add_argument("--calls", type=int, default=50, help="timed calls per case and round")
    p.add_argument("--rounds", type=int, default=5,
                   help="rounds, each timing every case in turn (ndjit and the anchors side by side)")
    p.add_argument("--warmup", type=int, default=200,
                   help="untimed calls of every case first (a process's first calls are slow)")
    p.add_argument("--split", action="store_true",
                   help="also time the Rust part of a call and profile the Python part")
    args = p.parse_args()
    if not ndjit.cuda.is_available():
        print(f"no CUDA device: {ndjit._core.cuda_unavailable_reason()}")
        return
    info = ndjit.cuda.device()
    n = args.size
    print(f"{info['name']} ({info['ptx_target']}), {n}x{n} float64, ndjit {ndjit.__version__} from "
          f"{ndjit.__file__}; {args.warmup} warm-up calls a case, then {args.rounds} rounds of "
          f"{args.calls} calls a case; medians over all calls, [range of the rounds' medians]")
    rng = np.random.default_rng(0)
    a = cupy.asarray(rng.normal(size=(n, n)))
    out = cupy.empty_like(a)
    cases = []
    for name, fn, kwargs in CASES:
        f = ndjit.jit_filter(fn)
        cases.append((name, lambda f=f, kwargs=kwargs: ndjit.generic_filter(a, f, output=out, target="cuda",
                                                                           **kwargs)))
    cases += anchors(a, out)
    for name, call in cases:
        for _ in range(args.warmup):  # kernel generation, module load, caches, clocks
            call()
        cupy.cuda.Device().synchronize()
    rounds = {name: [] for name, _ in cases}
    for _ in range(args.rounds):
        for name, call in cases:
            rounds[name].append(measure(call, args.calls))
    report(rounds)
    if args.split:
        for name, call in cases[:len(CASES)]:
            print(name)
            split(call, args.calls)
    # The result is scipy's (a crop, so that the CPU check stays quick).
    crop = a[:256, :256]
    got = ndjit.generic_filter(crop, CASES[1][1], size=5, target="cuda")
    want = ndi.generic_filter(cupy.asnumpy(crop), ndjit.jit_filter(CASES[1][1]), size=5)
    assert cupy.asnumpy(got).tobytes() == want.tobytes(), "the GPU result differs from scipy's"


if __name__ == "__main__":
    main()
