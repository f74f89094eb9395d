"""``ndjit.Filter``: a compiled filter that *is* a ``scipy.LowLevelCallable``."""
from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np
from scipy import LowLevelCallable

from . import _core, _helpers
from ._errors import ErrorKind, FilterCompileError, FilterRuntimeError
from ._frontend import (_COLUMNS_SUFFIX, _LAYOUT_SUFFIXES, _ORDER_SUFFIX, _STRIDE_SUFFIX, Spec, _Matrix, _Strided,
                        _convert, _flatten_matrices, describe)
from ._scipy_args import footprint_and_origins, scipy_extras
from ._unsupported import unbindable

__all__ = ["Filter", "as_filter", "jit_filter", "jit_filter1d", "jit_transform", "jit_integrand"]

_CACHE_SIZE = 256
_cache: "OrderedDict[tuple, _core.CompiledFilter]" = OrderedDict()
# Guards `_cache`: a lookup's move_to_end races another thread's eviction of the same key. Held
# for the dictionary operations only; two threads missing on one key may both compile it.
_cache_lock = threading.Lock()
# The spec compiled last (general code) and its compiled filter. A repeated call with a plain
# function gets the same spec object back from `_spec_cache`, and finds its code here by identity,
# without hashing the spec's content (a spec's fields are never changed once made).
_last: Tuple[Optional[Spec], Optional["_core.CompiledFilter"]] = (None, None)


def _compile(spec: Spec, filter_size: Optional[int] = None, inspect: bool = False,
             native: bool = True) -> _core.CompiledFilter:
    """Compiles a spec, through a per-process LRU cache keyed by its content (so unpickling the
    same filter many times, e.g. on Dask workers, compiles it once). ``native=False`` defers the
    native code to the first CPU call that needs it: the cache holds one filter either way."""
    global _last
    general = filter_size is None and not inspect
    last = _last  # one read: another thread may replace it
    if general and last[0] is spec:
        return last[1]
    key = (spec.key(), filter_size, inspect)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
    if hit is not None:
        if general:
            _last = (spec, hit)
        return hit
    try:
        compiled = _core.compile(spec.source, spec.bindings, list(spec.imports), filter_size, inspect,
                                 spec.signature, native)
    except FilterCompileError as e:
        locate_error(e, spec)
        for name, type_name in spec.unsupported:
            if e.error_kind is ErrorKind.UNKNOWN_NAME and e.name == name:
                raise unbindable(e, name, type_name) from None
        raise
    with _cache_lock:
        _cache[key] = compiled
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    if general:
        _last = (spec, compiled)
    return compiled


def locate_error(e: Union[FilterCompileError, FilterRuntimeError], spec: Spec) -> None:
    """Moves a compile or run-time error's position into the user's file: the filter's, or a
    helper's (once: a run-time error may pass several layers). Other exceptions (an interrupt's
    KeyboardInterrupt) have no position to move."""
    if not isinstance(e, (FilterCompileError, FilterRuntimeError)) or getattr(e, "_located", False):
        return
    e._located = True
    hit = _helpers.find(spec.regions, e.lineno)
    if hit is None:
        e._locate(spec.filename, spec.line_offset, spec.col_offset, spec.indent)
        return
    region, line = hit
    shift = e.lineno - line
    e.lineno -= shift
    if e.end_lineno is not None:
        e.end_lineno -= shift
    e._locate(region.filename, region.line_offset, region.col_offset, region.indent)


class located:
    """``with located(spec):`` run-time errors of the filter described by `spec` raised inside the
    block come out located in the user's file. A class rather than a ``contextlib`` generator: it
    wraps every call of the native driver, where the generator's 1.2 µs was a tenth of a small
    image's whole call."""

    __slots__ = ("spec",)

    def __init__(self, spec: Spec):
        self.spec = spec

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, traceback) -> bool:
        if kind is not None and issubclass(kind, FilterRuntimeError):
            locate_error(error, self.spec)
        return False  # the exception, if any, goes on


def _matrix_order(bindings: dict, name: str) -> Optional[str]:
    """The memory order of the bound 2-D array `name` ("F", "C", or "" where its strides decide
    nothing: `_frontend.memory_order`), None if it is no 2-D array."""
    if name + _COLUMNS_SUFFIX not in bindings:
        return None
    return bindings.get(name + _ORDER_SUFFIX, "")


class Filter(LowLevelCallable):
    """A compiled callback: for ``scipy.ndimage.generic_filter`` (from :func:`jit_filter`),
    ``generic_filter1d`` (:func:`jit_filter1d`), ``geometric_transform`` (:func:`jit_transform`) or
    ``scipy.integrate.quad`` (:func:`jit_integrand`); ``kind`` says which.

    It is a ``scipy.LowLevelCallable``, so ``generic_filter(image, f, size=3)`` calls native code.
    The compiled code lives as long as any callable built from it. Filters pickle to their source
    and bound values and recompile when loaded.

    ``Filter`` deliberately does not define ``__call__``: scipy treats any callable object as a
    Python callback (one Python call per pixel), so evaluate once with :meth:`evaluate` instead.
    """

    def __new__(cls, spec: Spec, compiled: "_core.CompiledFilter", *, filter_size: Optional[int] = None, debug: bool = False):
        context = compiled.new_context(debug, lambda exc: locate_error(exc, spec))
        function, user_data = context.capsules()
        self = super().__new__(cls, function, user_data)
        # scipy's capsule (item 0) then follows the specialised code: no trampoline per pixel.
        context.redirect(tuple.__getitem__(self, 0))
        self._spec, self._compiled, self._context = spec, compiled, context
        self._filter_size, self._debug = filter_size, debug
        return self

    @property
    def kind(self) -> str:
        """``"filter"``, ``"filter1d"``, ``"transform"`` or ``"integrand"``."""
        return self._spec.signature

    # --- evaluation ------------------------------------------------------------------------
    def evaluate(self, *args):
        """Runs the compiled code once, with the arguments scipy would pass:

        - filter: ``evaluate(values)`` (any array-like, flattened) → float
        - filter1d: ``evaluate(input_line, output_length)`` → the output line
        - transform: ``evaluate(output_coordinates, input_rank=None)`` → input coordinates (tuple)
        - integrand: ``evaluate(x, *args)`` → float
        """
        return self._run(args, interpret=False)

    def interpret(self, *args):
        """As :meth:`evaluate`, through the reference interpreter (bit-identical, for debugging)."""
        return self._run(args, interpret=True)

    def _run(self, args, interpret: bool):
        with located(self._spec):
            return self._run_here(args, interpret)

    def _run_here(self, args, interpret: bool):
        kind = self._spec.signature
        empty_f, empty_i = np.empty(0), np.empty(0, dtype=np.int64)
        as_f = lambda v: np.ascontiguousarray(v, dtype=np.float64).ravel()  # noqa: E731
        if kind == "filter":
            (values,) = args
            if interpret:
                return self._compiled.interpret(as_f(values))
            return self._compiled.call(as_f(values))
        if kind == "integrand":
            value, _ = self._compiled.call_args(as_f(args), empty_i, 0, interpret, _typing(args))
            return value
        if kind == "filter1d":
            line, out_len = args
            line = as_f(line)
            # scipy's output line is never longer than its input line (filter_size - 1 shorter).
            out_len = _bounded("output_length", out_len, 0, len(line))
            return self._compiled.call_args(line, empty_i, out_len, interpret)[1]
        coords = np.ascontiguousarray(args[0], dtype=np.int64).ravel()
        rank = len(coords) if len(args) < 2 or args[1] is None else args[1]
        rank = _bounded("input_rank", rank, 1, _MAX_RANK)
        return tuple(self._compiled.call_args(empty_f, coords, rank, interpret)[1])

    def debug(self) -> "Filter":
        """The same filter whose callback runs the reference interpreter (slow, for debugging)."""
        return Filter(self._spec, self._compiled, filter_size=self._filter_size, debug=True)

    def failure(self) -> Optional[BaseException]:
        """The first run-time failure seen through this callable since the last :meth:`reset`."""
        return self._context.failure()

    def reset(self) -> None:
        self._context.reset()

    # --- bound values ----------------------------------------------------------------------
    def bind(self, **values: Any) -> "Filter":
        """A filter reading new bound values, without recompiling (but where a 2-D array's memory
        order changes). Unknown names are an error."""
        known = self._compiled.bound_values
        unknown = [k for k in values if k not in known]
        if unknown:
            raise TypeError(f"the filter has no bound value named {', '.join(map(repr, unknown))} (it reads {sorted(known)})")
        converted = {k: _convert(k, v) for k, v in values.items()}
        for k, v in converted.items():
            # The column count of a 2-D array is compiled in as a binding of its own.
            was_2d = k + _COLUMNS_SUFFIX in known
            if was_2d != isinstance(v.value if isinstance(v, _Strided) else v, _Matrix):
                raise TypeError(f"{k!r} was compiled as a {'2' if was_2d else '1'}-D array; recompile the "
                                "filter (ndjit.jit_filter) to bind another shape")
        flat = _flatten_matrices(converted)
        bindings = {k: v for k, v in self._spec.bindings.items()
                    if not any(k.endswith(s) and k[:-len(s)] in converted for s in _LAYOUT_SUFFIXES)}
        bindings.update(flat)
        spec = Spec(**{**self._spec.__dict__, "bindings": bindings})
        # A 2-D array's memory order decides which of its sums compile (`lower/transposed.rs`),
        # and the stride of an array's rows which of its dot products (`lower/strided_dots.rs`):
        # another layout compiles anew (and may be refused there).
        layout = lambda b, k: (_matrix_order(b, k), b.get(k + _STRIDE_SUFFIX))
        if any(layout(bindings, k) != layout(self._spec.bindings, k) for k in converted):
            compiled = _compile(spec, self._filter_size)
        else:
            compiled = self._compiled.with_bindings(flat)
        return Filter(spec, compiled, filter_size=self._filter_size, debug=self._debug)

    @property
    def bound_values(self) -> dict:
        return dict(self._compiled.bound_values)

    # --- introspection ---------------------------------------------------------------------
    @property
    def source(self) -> str:
        return self._spec.source

    @property
    def ir(self) -> str:
        """ndjit's IR of the filter (what every backend compiles)."""
        return self._compiled.ir

    def _inspected(self) -> "_core.CompiledFilter":
        # The spec holds the current values, converted as the Rust layer takes them (`bind`).
        return _compile(self._spec, self._filter_size, inspect=True)

    @property
    def clif(self) -> str:
        """Cranelift IR of the compiled function."""
        return self._inspected().clif

    @property
    def disasm(self) -> str:
        """The native code, disassembled."""
        return self._inspected().disasm

    def inspect_ptx(self, size=None, footprint=None, *, ndim: Optional[int] = None, mode: str = "reflect",
                    cval: float = 0.0, origin=0, dtype="float64", output=None, target: Optional[str] = None) -> str:
        """The PTX of the GPU stencil kernel that ``generic_filter(..., target="cuda")`` runs for
        these arguments (same meaning as there; ``ndim`` defaults to the footprint's, or 2 for an
        integer ``size``). ``dtype``/``output`` are the input and output element types;
        ``target`` is ``"sm_90"``, ``"portable"`` (sm_75) or ``None`` (this machine's GPU, else
        sm_90). Needs no GPU."""
        if self.kind != "filter":
            raise TypeError(f"inspect_ptx needs a generic_filter callback, not a {self.kind} one")
        if ndim is None:
            ndim = np.ndim(footprint) if footprint is not None else (len(size) if np.iterable(size) else 2)
        fp, origins = footprint_and_origins(int(ndim), size, footprint, origin, None, mode)
        targets = {None: None, "sm_90": 90, "portable": 75, "sm_75": 75}
        if target not in targets:
            raise ValueError(f"target must be 'sm_90', 'portable' or None, not {target!r}")
        out = np.dtype(dtype if output is None else output).name
        return _core.cuda_ptx(self._compiled, fp, mode, float(cval), origins, np.dtype(dtype).name, out, targets[target])

    def __repr__(self) -> str:
        first = self._spec.source.strip().splitlines()[0] if self._spec.source.strip() else ""
        return f"<ndjit.Filter {self._spec.name} {first!r}{' debug' if self._debug else ''}>"

    # --- pickling --------------------------------------------------------------------------
    def __reduce__(self):
        return (_rebuild, (dict(self._spec.__dict__), self._filter_size, self._debug))


# NumPy's most dimensions (NPY_MAXDIMS): a transform's input rank is at most this.
_MAX_RANK = 64


def _bounded(name: str, value, lo: int, hi: int) -> int:
    """An int argument of :meth:`Filter.evaluate` within ``[lo, hi]``, or an error naming it."""
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, got {value}")
    return value


def _rebuild(spec_fields: dict, filter_size: Optional[int], debug: bool) -> Filter:
    spec = Spec(**spec_fields)
    return Filter(spec, _compile(spec, filter_size), filter_size=filter_size, debug=debug)


def _jit(signature: str, func: Any, extra_arguments: tuple, extra_keywords: Optional[dict],
         filter_size: Optional[int] = None, debug: bool = False) -> Filter:
    # scipy's checks: a dict or a string would bind its keys or characters, one by one.
    scipy_extras(extra_arguments, extra_keywords)
    spec = describe(func, extra_arguments, extra_keywords, signature)
    return Filter(spec, _compile(spec, filter_size), filter_size=filter_size, debug=debug)


def _decorating(maker):
    """Lets a maker be used as ``@maker``, ``@maker(...)`` or ``maker(func, ...)``."""
    @functools.wraps(maker)
    def wrapper(func: Any = None, **kwargs):
        if func is None:
            return functools.partial(maker, **kwargs)
        return maker(func, **kwargs)
    return wrapper


@_decorating
def jit_filter1d(func: Any, *, extra_arguments: tuple = (), extra_keywords: Optional[dict] = None) -> Filter:
    """Compiles a ``generic_filter1d`` callback ``f(input_line, output_line, ...)`` that writes the
    output line in place (``oline[...] = ...`` or a loop over ``range(len(oline))``)."""
    return _jit("filter1d", func, extra_arguments, extra_keywords)


@_decorating
def jit_transform(func: Any, *, extra_arguments: tuple = (), extra_keywords: Optional[dict] = None) -> Filter:
    """Compiles a ``geometric_transform`` mapping from an output-coordinate tuple to an
    input-coordinate tuple."""
    return _jit("transform", func, extra_arguments, extra_keywords)


def _typing(args) -> tuple:
    """The masks ``(ints, numpy)`` of an integrand's arguments: bit k of ``ints`` where argument k
    is an int (a bool computes as one), of ``numpy`` where it is a NumPy scalar. Python calls the
    function with them as such, where quad would hand it doubles (``src/integrand.rs``). A
    parameter declared ``float`` takes it as a float, as quad passes it."""
    ints = numpy = 0
    for k, a in enumerate(args):
        is_numpy = isinstance(a, np.generic)
        if is_numpy and not isinstance(a, (np.float64, np.int64)):
            raise TypeError(f"argument {k} is a NumPy {type(a).__name__}: ndjit models np.float64 and "
                            "np.int64 scalars only (pass float(v) or int(v))")
        is_int = isinstance(a, (int, np.int64))
        if not (is_int or is_numpy):
            continue
        if k >= 64:
            raise TypeError("an integrand takes ints and NumPy scalars among its first 64 arguments only")
        if is_int and abs(int(a)) > 2 ** 53:
            raise OverflowError(f"argument {k} ({a}) is past 2**53: quad's doubles cannot hold it")
        ints |= is_int << k
        numpy |= is_numpy << k
    return ints, numpy


@_decorating
def jit_integrand(func: Any) -> Filter:
    """Compiles an integrand ``f(x, *args)`` for ``scipy.integrate.quad``/``dblquad``/``nquad``;
    ``quad(ndjit.jit_integrand(f), a, b, args=(p, q))`` passes ``args`` through as scipy does.
    quad has no error channel: a run-time error makes the integrand return NaN until quad returns,
    and is then raised from the quad call, as the exception itself (see :meth:`Filter.failure`).

    quad hands ``args`` over as doubles, so ``args=(0,)`` and ``args=(0.0,)`` look alike: where a
    value after the variable may stand for an int, the integrand runs as both, and a result that
    differs (``-a * x`` is ``0.0`` for the int 0, ``-0.0`` for the float) raises ``TypeError``.
    A value may also be a NumPy scalar (``args=(params[0],)`` of an array passes an ``np.float64``),
    whose rules differ from Python's in errors, rounding and wrapping (``1 / a`` is ``inf`` for
    NumPy's zero): where they can change the result, the integrand runs both ways too.
    Annotate such a parameter to say which: ``def f(x, n: int)``, ``def f(y, x: float)``,
    ``def f(x, a: np.float64)``."""
    return _jit("integrand", func, (), None)


def jit_filter(func: Any = None, *, extra_arguments: tuple = (), extra_keywords: Optional[dict] = None,
               filter_size: Optional[int] = None, debug: bool = False):
    """Compiles a ``generic_filter`` callback into an :class:`ndjit.Filter`.

    ``func`` is a Python function or lambda (exactly what you would pass to scipy), a NumPy or
    builtin reduction (``np.var``, ``max``), or source text (``"max(x) - min(x)"``, a ``def`` or a
    ``lambda``). ``extra_arguments``/``extra_keywords`` are bound as scipy would pass them.
    ``filter_size`` (the number of footprint elements, e.g. 9 for ``size=3`` in 2-D) adds code
    specialised to that size. Works as a decorator too: ``@jit_filter`` or
    ``@jit_filter(extra_arguments=(0.5,))``.
    """
    if func is None:
        return functools.partial(jit_filter, extra_arguments=extra_arguments, extra_keywords=extra_keywords,
                                 filter_size=filter_size, debug=debug)
    return _jit("filter", func, extra_arguments, extra_keywords, filter_size, debug)


def as_filter(function: Any, extra_arguments: tuple, extra_keywords: Optional[dict]) -> Filter:
    """The ``generic_filter`` callback ``function`` as a :class:`Filter`: itself, or compiled
    (through the cache) from what :func:`jit_filter` accepts."""
    if isinstance(function, Filter):
        if function.kind != "filter":
            raise TypeError(f"generic_filter needs a generic_filter callback, not a {function.kind} one")
        if extra_arguments or extra_keywords:
            raise TypeError("this ndjit.Filter is compiled already: bind values with f.bind(...) or jit_filter(..., extra_arguments=...)")
        return function
    if isinstance(function, LowLevelCallable):
        raise TypeError("ndjit.generic_filter runs ndjit filters; this LowLevelCallable was not made by ndjit "
                        "(pass the Python function instead, or use scipy.ndimage.generic_filter)")
    return jit_filter(function, extra_arguments=extra_arguments, extra_keywords=extra_keywords)


def compiled_filter(function: Any, extra_arguments: tuple, extra_keywords: Optional[dict],
                    native: bool = True) -> Tuple[Spec, "_core.CompiledFilter"]:
    """What ndjit's own drivers run for the ``generic_filter`` callback ``function``: its spec and
    compiled code, as :func:`as_filter` would give them, but without building the
    ``LowLevelCallable`` (a context and two capsules) that a :class:`Filter` adds for scipy:
    a repeated call's host time is what it costs."""
    if isinstance(function, (Filter, LowLevelCallable)):
        f = as_filter(function, extra_arguments, extra_keywords)
        return f._spec, f._compiled
    spec = describe(function, extra_arguments, extra_keywords, "filter")
    return spec, _compile(spec, native=native)
