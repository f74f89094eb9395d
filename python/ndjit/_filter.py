"""``ndjit.Filter``: a compiled filter that *is* a ``scipy.LowLevelCallable``."""
from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any, Callable, Optional

import numpy as np
from scipy import LowLevelCallable

from . import _core
from ._errors import FilterCompileError, FilterTypeError
from ._frontend import Spec, _convert, describe

__all__ = ["Filter", "jit_filter"]

_CACHE_SIZE = 256
_cache: "OrderedDict[tuple, _core.CompiledFilter]" = OrderedDict()


def _compile(spec: Spec, filter_size: Optional[int] = None, inspect: bool = False) -> _core.CompiledFilter:
    """Compiles a spec, through a per-process LRU cache keyed by its content (so unpickling the
    same filter many times, e.g. on Dask workers, compiles it once)."""
    key = (spec.key(), filter_size, inspect)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    try:
        compiled = _core.compile(spec.source, spec.bindings, list(spec.imports), filter_size, inspect)
    except FilterCompileError as e:
        e._locate(spec.filename, spec.line_offset, spec.col_offset)
        for name, type_name in spec.unsupported:
            if e.kind == "unknown name" and f"`{name}`" in e.msg:
                raise FilterTypeError(
                    "binding error", f"`{name}` is a {type_name}; ndjit can bind numbers, NumPy scalars, "
                    "1-D numeric arrays and tuples of numbers", e.lineno, e.col, e.lineno, e.col + len(name),
                    getattr(e, "text", None), "pass the value the filter needs as a number or array", "",
                ) from None
        raise
    _cache[key] = compiled
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return compiled


class Filter(LowLevelCallable):
    """A compiled filter for ``scipy.ndimage.generic_filter``.

    It is a ``scipy.LowLevelCallable``, so ``generic_filter(image, f, size=3)`` calls native code.
    The compiled code lives as long as any callable built from it. Filters pickle to their source
    and bound values and recompile when loaded.

    ``Filter`` deliberately does not define ``__call__``: scipy treats any callable object as a
    Python callback (one Python call per pixel), so evaluate once with :meth:`evaluate` instead.
    """

    def __new__(cls, spec: Spec, compiled: "_core.CompiledFilter", *, filter_size: Optional[int] = None, debug: bool = False):
        context = compiled.new_context(debug)
        function, user_data = context.capsules()
        self = super().__new__(cls, function, user_data)
        self._spec, self._compiled, self._context = spec, compiled, context
        self._filter_size, self._debug = filter_size, debug
        return self

    # --- evaluation ------------------------------------------------------------------------
    def evaluate(self, values) -> float:
        """Runs the compiled filter once on a neighbourhood (any array-like, flattened)."""
        return self._compiled.call(np.ascontiguousarray(values, dtype=np.float64).ravel())

    def interpret(self, values) -> float:
        """Runs the reference interpreter once: the same result as :meth:`evaluate`, bit for bit."""
        return self._compiled.interpret(np.ascontiguousarray(values, dtype=np.float64).ravel())

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
        """A filter reading new bound values, without recompiling. Unknown names are an error."""
        known = self._compiled.bound_values
        unknown = [k for k in values if k not in known]
        if unknown:
            raise TypeError(f"the filter has no bound value named {', '.join(map(repr, unknown))} (it reads {sorted(known)})")
        converted = {k: _convert(k, v) for k, v in values.items()}
        compiled = self._compiled.with_bindings(converted)
        bindings = dict(self._spec.bindings)
        bindings.update(converted)
        spec = Spec(**{**self._spec.__dict__, "bindings": bindings})
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
        return _compile(self._spec, self._filter_size, inspect=True).with_bindings(dict(self._compiled.bound_values))

    @property
    def clif(self) -> str:
        """Cranelift IR of the compiled function."""
        return self._inspected().clif

    @property
    def disasm(self) -> str:
        """The native code, disassembled."""
        return self._inspected().disasm

    def __repr__(self) -> str:
        first = self._spec.source.strip().splitlines()[0] if self._spec.source.strip() else ""
        return f"<ndjit.Filter {self._spec.name} {first!r}{' debug' if self._debug else ''}>"

    # --- pickling --------------------------------------------------------------------------
    def __reduce__(self):
        return (_rebuild, (dict(self._spec.__dict__), self._filter_size, self._debug))


def _rebuild(spec_fields: dict, filter_size: Optional[int], debug: bool) -> Filter:
    spec = Spec(**spec_fields)
    return Filter(spec, _compile(spec, filter_size), filter_size=filter_size, debug=debug)


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
    spec = describe(func, extra_arguments, extra_keywords)
    return Filter(spec, _compile(spec, filter_size), filter_size=filter_size, debug=debug)
