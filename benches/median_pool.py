"""Medians on big images, ndjit on all threads against scipy's ``median_filter``, whose single
threaded calls at 4096² take minutes each: they run first, side by side in a pool of processes,
each timed once; ndjit's rows run after them, alone, on every thread. Every ndjit result is
checked against scipy's whole output (by a hash of its bytes, so that no image crosses processes).

    python benches/median_pool.py [--n 4096] [--dtypes f32,f64,i64,u64] [--sizes 3,5,7,9,15,21,25,31]
                                  [--pool 14] [--reps 5]

scipy's calls share the machine's memory bandwidth in the pool, so they run slower than alone
would: ``--calibrate`` times one of them (the first row) alone at the end, for the ratio between.
The image is ``benches/rank.py``'s (uniform over the type, seed 3).
"""
import argparse
import hashlib
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np
from scipy import ndimage as ndi

DT = {"u8": np.uint8, "u16": np.uint16, "i16": np.int16, "i32": np.int32, "u32": np.uint32,
      "i64": np.int64, "u64": np.uint64, "f32": np.float32, "f64": np.float64}


def image(n: int, dt: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    if dt.startswith("f"):
        return rng.random((n, n)).astype(DT[dt])
    info = np.iinfo(DT[dt])
    return rng.integers(info.min, int(info.max) + 1, (n, n), dtype=DT[dt])


def digest(a: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=16).hexdigest()


def scipy_row(row):
    """(ms, digest) of one scipy call."""
    n, dt, k = row
    x = image(n, dt)
    t = time.perf_counter()
    out = ndi.median_filter(x, size=k, mode="reflect")
    return 1e3 * (time.perf_counter() - t), digest(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--dtypes", default="f32,f64,i64,u64")
    ap.add_argument("--sizes", default="3,5,7,9,15,21,25,31")
    ap.add_argument("--pool", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--calibrate", action="store_true")
    args = ap.parse_args()
    rows = [(args.n, dt, int(k)) for dt in args.dtypes.split(",") for k in args.sizes.split(",")]
    t0 = time.perf_counter()
    # The slowest first, so that the pool's tail is short.
    order = sorted(rows, key=lambda r: -r[2])
    with ProcessPoolExecutor(args.pool) as pool:
        scipy = dict(zip(order, pool.map(scipy_row, order)))
    print(f"scipy's {len(rows)} calls in a pool of {args.pool} processes: {time.perf_counter() - t0:.0f} s")

    import ndjit  # after the pool: its workers need no ndjit
    f = ndjit.jit_filter("np.median(x)")
    threads = os.cpu_count()
    print(f"np.median(x), {args.n}², mode reflect, ndjit on {threads} threads (median of {args.reps}), "
          f"scipy.ndimage.median_filter once each in the pool; ms; ratio = scipy / ndjit; goal 5x")
    print(f"{'dtype':5s} {'k':>3s} {'ndjit':>9s} {'scipy':>10s} {'ratio':>8s}  goal")
    for row in rows:
        _, dt, k = row
        x = image(args.n, dt)
        out = ndjit.generic_filter(x, f, size=k, mode="reflect", workers=threads)
        same = digest(out) == scipy[row][1]
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            ndjit.generic_filter(x, f, size=k, mode="reflect", workers=threads, output=out)
            times.append(1e3 * (time.perf_counter() - t))
        nd = statistics.median(times)
        ratio = scipy[row][0] / nd
        verdict = "DIFFERS" if not same else ("met" if ratio >= 5 else "MISSED")
        print(f"{dt:5s} {k:3d} {nd:9.2f} {scipy[row][0]:10.1f} {ratio:8.1f}  {verdict}", flush=True)
    if args.calibrate:
        ms, _ = scipy_row(rows[0])
        print(f"calibration: {rows[0][1]} {rows[0][2]}x{rows[0][2]} scipy alone {ms:.1f} ms, "
              f"in the pool {scipy[rows[0]][0]:.1f} ms")


if __name__ == "__main__":
    main()
