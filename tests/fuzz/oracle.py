"""The oracle: CPython + NumPy running the program's own text, as scipy's generic_filter would.

Transcendental functions: ``math.*`` is glibc's, as CPython's is, but ``np.*`` (and an array's
``**``) may be within 1 ulp of NumPy's own SIMD kernels rather than equal to them (README, *Known
deviations*). A tolerance on the final result would not do: one ulp in ``exp`` can flip a comparison or be amplified by a
subtraction. So the oracle calls the real function (for its exceptions and its value), then
substitutes the value ndjit computes for that very call, counting how often that changed the
value and by how much. Everything else in the program is then compared bit for bit.
"""
from __future__ import annotations

import builtins
import math
import signal
import struct
import warnings
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

import ndjit

# math.* and np.* names whose ndjit value is substituted (exact operations such as sqrt, floor or
# fabs are not: they must match bit for bit as they are).
MATH_NAMES = "exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh hypot cbrt pow".split()
NP_NAMES = ("exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh "
            "arccosh arctanh hypot cbrt power").split()


def bits(v: float) -> int:
    return struct.unpack("<q", struct.pack("<d", v))[0]


def same(a: float, b: float) -> bool:
    """Bit-identical, except that every NaN equals every NaN (payloads are not specified)."""
    return (math.isnan(a) and math.isnan(b)) or bits(a) == bits(b)


def ulps(a: float, b: float) -> float:
    """The distance between two finite doubles in units in the last place."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    ia, ib = bits(a), bits(b)
    ia = ia if ia >= 0 else -(ia & 0x7FFFFFFFFFFFFFFF)
    ib = ib if ib >= 0 else -(ib & 0x7FFFFFFFFFFFFFFF)
    return abs(ia - ib)


def builtin_class(exc: BaseException) -> type:
    """The nearest builtin exception class (numpy's AxisError is a ValueError, ndjit's
    FilterRuntimeError subclasses the builtin one Python would raise)."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return BaseException


class Substitutions:
    """ndjit's value of single transcendental calls, through small compiled helpers, and the
    statistics of how often they differed from CPython/NumPy's value."""

    def __init__(self):
        self.helpers: Dict[str, Any] = {}
        self.changed = 0  # calls whose value ndjit computes differently (<= 1 ulp: known)
        self.beyond = {}  # (call, args) -> (python value, ndjit value): more than 1 ulp apart, a finding

    def helper(self, source: str):
        f = self.helpers.get(source)
        if f is None:
            f = self.helpers[source] = ndjit.jit_filter(source)
        return f

    def value(self, source: str, args: Tuple[float, ...], real: float) -> float:
        try:
            mine = float(self.helper(source).evaluate(np.array(args, dtype=np.float64)))
        except Exception:  # ndjit's own failure shows in the program's comparison
            return real
        if not same(mine, real):
            self.changed += 1
            if ulps(mine, real) > 1:
                self.beyond[(source, args)] = (real, mine)
        return mine

    def scalar_call(self, module: str, name: str, real_fn: Callable, arity: int):
        params = ", ".join(f"x[{k}]" for k in range(arity))
        source = f"lambda x: {module}.{name}({params})"

        def call(*args):
            real = real_fn(*args)
            if isinstance(real, np.ndarray):
                return self.array_call(source, args, real)
            if not isinstance(real, (float, np.floating)) or not all(isinstance(a, (int, float, np.number)) for a in args):
                return real
            return type(real)(self.value(source, tuple(float(a) for a in args), float(real)))

        return call

    def array_call(self, source: str, args, real: np.ndarray) -> np.ndarray:
        if real.dtype != np.float64:
            return real
        parts = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in args])
        out = real.copy()
        for k in range(out.size):
            out.flat[k] = self.value(source, tuple(float(p.flat[k]) for p in parts), float(real.flat[k]))
        return out

    def power(self, a, b, exponent: Optional[str]):
        """``a ** b``; ``exponent`` is the exponent's source when it is a literal, since ndjit
        may compute ``v ** 3`` differently from ``v ** w`` with ``w == 3.0``."""
        real = a ** b
        if not isinstance(real, (float, np.floating)) or isinstance(real, bool):
            return real
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return real
        if exponent is not None:
            source, args = f"lambda x: x[0] ** {exponent}", (float(a),)
        else:
            source, args = "lambda x: x[0] ** x[1]", (float(a), float(b))
        return type(real)(self.value(source, args, float(real)))


class BigInt(OverflowError):
    """A Python int past 64 bits: ndjit raises OverflowError there (issue 12, item 3)."""


def int64(v):
    """Passes ``v`` on, raising :class:`BigInt` for a Python int outside [-2**63, 2**63).
    NumPy's integers keep their fixed-width rules, so only ``int`` is checked."""
    if type(v) is int and not -(1 << 63) <= v < (1 << 63):
        raise BigInt("Python int past 64 bits")
    return v


class _Module:
    """``math`` or ``np`` as the oracle's program sees them: the real module, with the
    transcendental functions substituted."""

    def __init__(self, real, names, subs: Substitutions, module: str):
        self._real, self._subs, self._module = real, subs, module
        self._names = set(names)
        self._cache: Dict[str, Any] = {}

    def __getattr__(self, name):
        hit = self._cache.get(name)
        if hit is not None:
            return hit
        value = getattr(self._real, name)
        if name in self._names:
            arity = 2 if name in ("atan2", "arctan2", "hypot", "pow", "power") else 1
            value = self._subs.scalar_call(self._module, name, value, arity)
        self._cache[name] = value
        return value


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


class Oracle:
    """Runs a program's oracle text (see grammar.Program.source(oracle=True)) under CPython."""

    def __init__(self, subs: Substitutions, time_limit: float = 1.0):
        self.subs = subs
        self.time_limit = time_limit
        self.namespace = {"np": _Module(np, NP_NAMES, subs, "np"), "math": _Module(math, MATH_NAMES, subs, "math"),
                          "_pow": subs.power, "_i": int64, "__builtins__": builtins}

    def function(self, source: str) -> Callable:
        ns = dict(self.namespace)
        exec(compile(source, "<fuzz>", "exec"), ns)
        return ns["f"]

    def call(self, fn: Callable, window) -> Tuple[str, Any]:
        """("ok", float) as scipy would store it, ("raise", builtin class) or ("timeout", None)."""
        buf = np.array(window, dtype=np.float64)
        # scipy stores PyFloat_AsDouble(result): float() is the same conversion.
        return self.guarded(lambda: float(fn(buf)))

    def guarded(self, thunk: Callable[[], Any]) -> Tuple[str, Any]:
        """Runs ``thunk`` with NumPy's warnings off and a time limit (a program may build huge
        Python ints, which ndjit refuses but CPython computes slowly)."""
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, self.time_limit)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                return "ok", thunk()
        except (Timeout, RecursionError, MemoryError):
            return "timeout", None
        except BigInt:
            return "raise", BigInt
        except Exception as e:  # noqa: BLE001 - every exception class is a result to compare
            return "raise", builtin_class(e)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
