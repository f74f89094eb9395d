"""Asks NumPy which of its math kernels are the C library's, and tells the core.

NumPy computes ``np.tanh``, ``np.sinh``, ``np.log10``, ``np.arccosh`` and ``np.cbrt`` with kernels
of its own on some CPUs (SVML with AVX-512, its own tanh with AVX2) and with the C library on
others. Where it calls the C library, ndjit calls it too and gives NumPy's bits; where the
kernel is NumPy's own, ndjit computes within 0.51 ulp, which is within 1 ulp of NumPy's
(``ndjit::math::numpy_kernels``). The core guesses from the CPU's features; this asks NumPy
itself, which also covers NumPy builds without SVML and ``NPY_ENABLE_CPU_FEATURES``.
"""
import numpy as np

from . import _core

#: ``np.<name>``: an interval where the C library's results and NumPy's own kernels' differ
#: often (between a tenth and a half of the inputs, measured with NumPy 2.4).
PROBES = {
    "tanh": (-3.0, 3.0),
    "sinh": (-3.0, 3.0),
    "log10": (1e-3, 1e3),
    "arccosh": (1.0, 50.0),
    "cbrt": (-8.0, 8.0),
}


def numpy_calls_c_library(name: str, n: int = 509) -> bool:
    """Whether ``np.<name>`` gives the C library's bits on n points of its probe interval.

    A kernel of NumPy's own differs from the C library on at least a tenth of them, so all n
    agreeing means NumPy calls the C library (the chance of the other is below 1e-23)."""
    lo, hi = PROBES[name]
    x = np.linspace(lo, hi, n)
    with np.errstate(all="ignore"):
        got = getattr(np, name)(x)
    want = np.array(_core.c_library_math(name, x.tolist()))
    return bool(np.array_equal(got, want))


def tell_core() -> None:
    for name in PROBES:
        _core.set_numpy_kernel(name, not numpy_calls_c_library(name))
