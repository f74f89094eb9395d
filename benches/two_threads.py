"""Two threads against one, for the driver's six goal filters on 1024² float64.

    python3 benches/two_threads.py [--processes 9] [--exe PATH] [--into]

Each process of the `driver_bench` bench binary times one and two threads in alternating rounds
(11 rounds, 5 for the median) and reports the median of each. This script starts one process per
filter, cycling through the six filters `--processes` times, so that a burst of load on this
shared machine falls on one process of each filter rather than on all the processes of one. It
prints, per filter, the range of the per-process speed-ups (one-thread median / two-thread median)
and their median, which is the figure the README quotes.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver_bench import Ndjit  # noqa: E402  (finds, or builds, the bench binary)

CASES = [("min", "cross"), ("min", "5x5"), ("range", "5x5"), ("wsum", "cross"), ("mean", "5x5"),
         ("median", "5x5")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--processes", type=int, default=9, help="processes per filter (default 9)")
    ap.add_argument("--exe", help="the driver_bench binary (default: build it with cargo)")
    ap.add_argument("--into", action="store_true", help="time the runs into a reused output array")
    args = ap.parse_args()
    bench = Ndjit(quick=False, exe=args.exe)
    label = lambda case: f"{case}/into" if args.into else case
    results = {c: ([], [], []) for c in CASES}
    for _ in range(args.processes):
        for case, fp in CASES:
            for acc, new in zip(results[(case, fp)], bench.two_threads(label(case), fp, 1)):
                acc.extend(new)
    print(f"# {args.processes} processes per filter; ms are medians within a process")
    print("| filter | 1 thread, ms | 2 threads, ms | speed-up, per process | median |")
    print("|---|---|---|---|---|")
    for (case, fp), (one, two, s) in results.items():
        print(f"| {case} {fp} | {min(one):.2f}–{max(one):.2f} | {min(two):.2f}–{max(two):.2f} "
              f"| {min(s):.2f}–{max(s):.2f} | {statistics.median(s):.2f}× |")


if __name__ == "__main__":
    main()
