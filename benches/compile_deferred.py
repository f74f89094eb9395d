"""What deferring the native code saves a compile (`FilterBuilder::native_code(false)`, the CUDA
path's): every program of the corpus (`tests/corpus/programs.toml`) compiled with Cranelift's
code and without it, best of 5 each, median over the programs in µs.

    python benches/compile_deferred.py
"""
import statistics
import time
import tomllib
from pathlib import Path

import ndjit

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "programs.toml"


def best_compile_us(source: str, native: bool, reps: int = 5):
    best = None
    for _ in range(reps):
        t = time.perf_counter()
        try:
            ndjit._core.compile(source, native=native)
        except ndjit.FilterCompileError:
            return None  # programs that need bound values
        dt = (time.perf_counter() - t) * 1e6
        best = dt if best is None else min(best, dt)
    return best


def main() -> None:
    sources = [p["source"] for p in tomllib.loads(CORPUS.read_text())["programs"]]
    for _ in range(2):
        now = [best_compile_us(s, True) for s in sources]
        later = [best_compile_us(s, False) for s in sources]
        pairs = [(a, b) for a, b in zip(now, later) if a is not None and b is not None]
        print(f"{len(pairs)} of {len(sources)} programs: with native code median "
              f"{statistics.median(a for a, _ in pairs):.0f} µs, deferred "
              f"{statistics.median(b for _, b in pairs):.0f} µs")


if __name__ == "__main__":
    main()
