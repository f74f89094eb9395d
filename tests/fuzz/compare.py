"""One program through every backend, against the oracle.

Backends: the reference interpreter (``Filter.interpret``), the JIT (``Filter.evaluate``), scipy's
own loop calling the compiled callback (``scipy.ndimage.generic_filter(img, Filter)``), ndjit's
native driver (``ndjit.generic_filter``) and, when the emulator binary is given, the GPU kernel in
the PTX emulator (gpu/examples/fuzz_emulate.rs). Rules (BRIEF, issue 12):

- a value must equal the oracle's bit for bit (NaN equals NaN; the sign of zero matters);
- where CPython raises, ndjit raises an instance of the same builtin class;
- a compile-time refusal (FilterSyntaxError / FilterTypeError) is acceptable, counted apart;
- anything else (another exception, a PanicException, a number where Python raises) is a finding.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
import scipy.ndimage as ndi

import ndjit

from oracle import BigInt, Oracle, builtin_class, same


class InvalidProgram(AssertionError):
    """The program text is not Python (a 'continue' a shrinking step moved out of its loop)."""


@dataclass
class Finding:
    backend: str
    kind: str  # "value", "raise-vs-value", "value-vs-raise", "class", "crash"
    detail: str
    window: Any = None  # the window (a list) or the driver's image (an ndarray)
    classes: str = ""  # the exception classes involved, which tell findings apart
    deviation: Optional[str] = None  # the README's documented deviation that explains it


    def signature(self) -> Tuple[str, str, str, str]:
        # What explains a finding is part of its kind: a category's first example must not
        # excuse the others (stop 73 found a raise of one cause counted under another's).
        return self.backend, self.kind, self.classes, self.known_open or ""

    @property
    def known_open(self) -> Optional[str]:
        """The open issue-12 item (or documented deviation) this finding falls under, if any."""
        if self.deviation:
            return f"documented deviation: {self.deviation}"
        if self.classes.startswith("BigInt"):
            return "ints past 64 bits must raise OverflowError (issue 12, item 3)"
        # ndjit's ints are 64-bit: where a Python int grows past them, ndjit raises OverflowError
        # and Python goes on (to a value, or to another exception later). An error, never a
        # wrong number; the oracle flags the plain cases itself (BigInt), not every path to them.
        if self.kind in ("class", "value-vs-raise") and self.classes.endswith("/ OverflowError"):
            return "ndjit raises OverflowError past 64 bits where Python's ints go on (by design)"
        return None


@dataclass
class Result:
    refused: Optional[str] = None  # the refusal's kind and message head
    timeout: bool = False
    findings: List[Finding] = field(default_factory=list)
    compared: int = 0
    gpu_unsupported: Optional[str] = None  # why the GPU backend refused the program


def _describe(outcome: Tuple[str, Any]) -> str:
    what, v = outcome[:2]
    if what == "raise":
        return f"raises {v.__name__}"
    if what == "crash":
        return f"crashes: {v}"
    if isinstance(v, np.ndarray):
        return "an image"
    return f"{v!r} ({float(v).hex()})"


def _class_of(outcome: Tuple[str, Any]) -> str:
    what, v = outcome[:2]
    if what == "raise":
        return v.__name__
    return v.split(":")[0] if what == "crash" else "value"


def _first_difference(ev, gv) -> Optional[str]:
    """Where two results (numbers, or images) differ, bit for bit, NaN equal to NaN."""
    a, b = np.atleast_1d(np.asarray(ev, dtype=np.float64)).ravel(), np.atleast_1d(np.asarray(gv, dtype=np.float64)).ravel()
    for k in range(a.size):
        if not same(float(a[k]), float(b[k])):
            where = f"pixel {k}: " if isinstance(ev, np.ndarray) else ""
            return f"{where}CPython {float(a[k])!r} ({float(a[k]).hex()}), ndjit {float(b[k])!r} ({float(b[k]).hex()})"
    return None


def judge(backend: str, expected: Tuple[str, Any], got: Tuple[str, Any], where) -> Optional[Finding]:
    """The finding, if ``got`` (ndjit) breaks the rules against ``expected`` (CPython);
    ``where`` is the window or the image."""
    (ew, ev), (gw, gv) = expected, got[:2]
    classes = f"{_class_of(expected)} / {_class_of(got)}"
    if gw == "crash":
        return Finding(backend, "crash", f"ndjit {_describe(got)}; CPython {_describe(expected)}", where, classes)
    if ew == "ok" and gw == "ok":
        diff = _first_difference(ev, gv)
        return Finding(backend, "value", diff, where) if diff else None
    if ew == "raise" and gw == "raise":
        if issubclass(gv, OverflowError if ev is BigInt else ev):
            return None
        return Finding(backend, "class", f"CPython raises {ev.__name__}, ndjit {gv.__name__}", where, classes)
    kind = "value-vs-raise" if ew == "ok" else "raise-vs-value"
    return Finding(backend, kind, f"CPython {_describe(expected)}, ndjit {_describe(got)}", where, classes)


def outcome(call: Callable[[], Any]) -> Tuple[Any, ...]:
    """An ndjit backend's result: ("ok", value), ("raise", builtin class, message) for ndjit's
    run-time errors, or ("crash", text) for any other exception (a PanicException, a SystemError ...)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", call()
    except ndjit.FilterRuntimeError as e:
        return "raise", builtin_class(e), str(e)
    except Exception as e:  # noqa: BLE001 - an exception that is not ndjit's run-time error
        return "crash", f"{type(e).__module__}.{type(e).__name__}: {str(e)[:200]}"
    except BaseException as e:  # a PanicException is a BaseException
        if isinstance(e, KeyboardInterrupt):
            raise
        return "crash", f"{type(e).__name__}: {str(e)[:200]}"


# What a program must contain for a finding to fall under a deviation the README documents
# (*Known deviations*), and how the finding must look. Anything else stays unexplained.
# (`**` calls pow, whose GPU transcription is within the same bound.)
_TRANSCENDENTAL = re.compile(r"\b(math|np)\.(exp|log|sin|cos|tan|sinh|cosh|tanh|arc|a(sin|cos|tan)|cbrt|pow|power|hypot|expm1|log1p|exp2|log2|log10)|\*\*")
# Where the host's glibc runs the builds the GPU's math transcribes, the GPU's math is the CPU's,
# bit for bit, and nothing needs excusing.
_GPU_MATH_EXACT = ndjit._core.gpu_math_matches_cpu()


def _within_gpu_math_bound(expected, got) -> bool:
    """Elsewhere the GPU's math is within 1-3 ulp of the CPU's; what a program computes from such
    a value is compared as ndjit's own GPU tests do (gpu/tests/common: 1e-13 relative)."""
    a = np.atleast_1d(np.asarray(expected, dtype=np.float64)).ravel()
    b = np.atleast_1d(np.asarray(got, dtype=np.float64)).ravel()
    with np.errstate(all="ignore"):
        close = np.abs(a - b) <= 1e-13 * np.maximum(1.0, np.abs(a))
    return bool(np.all(close | (a == b) | (np.isnan(a) & np.isnan(b))))


def documented(source: str, finding: Finding, expected, got) -> Optional[str]:
    """The documented deviation that explains ``finding``, if one does."""
    if (finding.backend == "gpu-emulator" and finding.kind == "value" and not _GPU_MATH_EXACT
            and _TRANSCENDENTAL.search(source) and _within_gpu_math_bound(expected[1], got[1])):
        return "off the glibc builds it transcribes, the GPU's math is within 1-3 ulp of the CPU's"
    if got[0] == "raise" and len(got) > 2 and "both 0.0 and -0.0" in got[2]:
        return ("np.min/max/sort/quantile/fmax's choice between 0.0 and -0.0 (NumPy's SIMD code "
                "picks by lane) raises ValueError")
    if got[0] == "raise" and len(got) > 2 and "result is complex" in got[2]:
        return "a Python float power whose result would be complex raises ValueError"
    if got[0] == "raise" and len(got) > 2 and "sum() of an empty iterable is Python's int 0" in got[2]:
        return "sum() of an empty iterable whose int 0 reaches a use where int and float differ raises TypeError"
    if got[0] == "raise" and len(got) > 2 and "the same object as an item" in got[2]:
        return "a NaN searched for in a list or tuple holding NaN raises ValueError (CPython's answer is object identity)"
    if got[0] == "raise" and len(got) > 2 and "copysign of a NaN made by arithmetic" in got[2]:
        return ("copysign of a NaN that ndjit may not carry with NumPy's sign raises ValueError "
                "(src/lower/nan_signs.rs)")
    if got[0] == "raise" and len(got) > 2 and "sorted() of values that include NaN" in got[2]:
        return "sorted() of values with a NaN raises ValueError (CPython's order is its merge steps')"
    return None


def compile_filter(source: str):
    """(Filter, None), (None, refusal reason) or raises for a crash."""
    try:
        return ndjit.jit_filter(source), None
    except (ndjit.FilterSyntaxError, ndjit.FilterTypeError) as e:
        return None, f"{type(e).__name__}: {getattr(e, 'kind', '')}: {str(getattr(e, 'msg', e))[:60]}"


def _first_failure_filter(image: np.ndarray, fn, mode: str) -> np.ndarray:
    """scipy's generic_filter with the Python function, raising the first pixel's exception.
    scipy itself keeps calling the function after a failure, so the exception it finally raises
    depends on the later pixels (often a SystemError): ndjit reports the first pixel's."""
    failure = []

    def guarded(buf):
        if failure:
            return 0.0
        try:
            return fn(buf)
        except Exception as e:  # noqa: BLE001 - re-raised below, after scipy's loop
            failure.append(e)
            return 0.0

    out = ndi.generic_filter(image, guarded, size=3, mode=mode)
    if failure:
        raise failure[0]
    return out


class Runner:
    def __init__(self, oracle: Oracle, emulator=None):
        self.oracle = oracle
        self.emulator = emulator

    def run(self, source: str, oracle_source: str, windows: List[List[float]], image: Optional[np.ndarray],
            mode: str = "reflect") -> Result:
        res = Result()
        try:
            fn = self.oracle.function(oracle_source)
        except SyntaxError as e:  # the generator's own bug (or a shrinking step's): make it loud
            raise InvalidProgram(f"generated invalid Python: {e}\n{oracle_source}") from None
        try:
            f, refused = compile_filter(source)
        except BaseException as e:  # noqa: BLE001 - a crash of the compiler
            if isinstance(e, KeyboardInterrupt):
                raise
            res.findings.append(Finding("compile", "crash", f"{type(e).__name__}: {str(e)[:300]}", None, type(e).__name__))
            return res
        if refused:
            res.refused = refused
            return res
        for w in windows:
            expected = self.oracle.call(fn, w)
            if expected[0] == "timeout":
                res.timeout = True
                return res
            for backend, call in (("interpreter", f.interpret), ("jit", f.evaluate)):
                res.compared += 1
                got = outcome(lambda: float(call(w)))
                finding = judge(backend, expected, got, w)
                if finding:
                    finding.deviation = documented(source, finding, expected, got)
                    res.findings.append(finding)
        if image is not None and not res.findings:
            self.run_image(res, fn, f, source, image, mode)
        return res

    def run_image(self, res: Result, fn, f, source: str, image: np.ndarray, mode: str) -> None:
        expected = self.oracle.guarded(lambda: _first_failure_filter(image, fn, mode))
        if expected[0] == "timeout":
            res.timeout = True
            return
        backends = [("scipy-callback", lambda: ndi.generic_filter(image, f, size=3, mode=mode)),
                    ("driver", lambda: ndjit.generic_filter(image, f, size=3, mode=mode))]
        results = [(backend, outcome(call)) for backend, call in backends]
        if self.emulator is not None:
            emulated = self.emulator.run(source, image, mode)
            if emulated[0] == "unsupported":
                res.gpu_unsupported = emulated[1]
            else:
                results.append(("gpu-emulator", emulated))
        for backend, got in results:
            res.compared += 1
            finding = judge(backend, expected, got, image)
            if finding:
                finding.deviation = documented(source, finding, expected, got)
                res.findings.append(finding)
