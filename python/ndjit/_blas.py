"""Asks NumPy in which order its BLAS adds a dot product, and tells the core.

``np.dot``, ``@`` and ``np.linalg.norm`` of float64 vectors call BLAS's ``ddot``; NumPy's wheels
ship OpenBLAS, whose kernel (and so the last bits of every dot product) depends on the CPU.
ndjit reproduces two of them (``ndjit::math::blas``). The core guesses from the CPU's features;
this compiles a dot product under each order and keeps the one whose results equal NumPy's on
probe vectors: lengths 1 to 80 and a few long ones, whose products cancel and differ in
magnitude, so that the orders' results differ on most of them. Where none does (another BLAS,
another CPU), dot products of floats are refused rather than computed in another order.
"""
import numpy as np

from . import _core

#: Compiled under each order; the window holds the two vectors one after the other.
SOURCE = "lambda w: np.dot(w[:len(w) // 2], w[len(w) // 2:])"
LENGTHS = list(range(1, 81)) + [95, 127, 160, 250, 300]


def probe_vectors(seed: int = 20261206):
    rng = np.random.default_rng(seed)
    for n in LENGTHS:
        scale = 2.0 ** rng.integers(-30, 30, size=2 * n)
        yield rng.standard_normal(2 * n) * scale


def matches(order: str) -> bool:
    """Whether ``order`` gives NumPy's bits on every probe vector."""
    _core.set_dot_order(order)
    f = _core.compile(SOURCE, None, [("numpy", "np")], None, False, "filter", False)
    for w in probe_vectors():
        half = len(w) // 2
        want = np.float64(np.dot(w[:half], w[half:]))
        if np.float64(f.interpret(w)).view(np.uint64) != want.view(np.uint64):
            return False
    return True


def tell_core() -> None:
    guess = _core.dot_order()
    candidates = [guess] + [o for o in ("skylakex", "haswell") if o != guess]
    for order in candidates:
        if order != "unknown" and matches(order):
            return
    _core.set_dot_order("unknown")
