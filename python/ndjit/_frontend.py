"""From what the user passes to scipy to what ndjit compiles: source text and bound values.

A callback arrives as a Python function, a lambda (possibly written inline inside a larger
expression), a NumPy or builtin function (``np.var``, ``max``), or a source string. This module
finds its source, the names it reads from its closure and module, its defaults, and the
``extra_arguments``/``extra_keywords`` scipy would pass, and turns them into a :class:`Spec`.
"""
from __future__ import annotations

import ast
import builtins
import collections
import dis
import functools
import inspect
import io
import math
import statistics
import struct
import textwrap
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple, Union

import numpy as np

from . import _helpers, _shadowing, _spec_cache
from ._errors import BindingError, FilterSyntaxError, SourceUnavailable
from ._locate import locate, source_of
from ._unsupported import LibraryFunction, OtherCallable, library_argument, library_function

__all__ = ["Spec", "describe", "SourceUnavailable"]


@dataclass(frozen=True)
class Spec:
    """Everything needed to compile a callback, and to compile it again after unpickling."""

    source: str
    # Which scipy API calls it: "filter", "filter1d", "transform" or "integrand".
    signature: str = "filter"
    bindings: Dict[str, Any] = field(default_factory=dict)
    imports: Tuple[Tuple[str, str], ...] = ()
    name: str = "<filter>"
    filename: Optional[str] = None
    line_offset: int = 0
    # Added to columns on the first line (a lambda taken from the middle of a line) ...
    col_offset: int = 0
    # ... and to columns on every line (the indentation a `def` was dedented by).
    indent: int = 0
    # Globals and closure cells the function reads that ndjit cannot bind, with their type names:
    # used to turn "name is not defined" into a precise error.
    unsupported: Tuple[Tuple[str, Union[str, LibraryFunction, OtherCallable]], ...] = ()
    # Helper functions appended to `source`: where each one's lines come from (see `_helpers`).
    regions: Tuple["_helpers.Region", ...] = ()

    def key(self) -> tuple:
        """A hashable identity of the compiled content (source, bound values, imports)."""
        items = tuple((k, _identity(v)) for k, v in sorted(self.bindings.items()))
        return (self.source, self.signature, items, self.imports)


def _identity(v: Any) -> tuple:
    """A bound value's identity down to its type and bits: `0.0 == -0.0` and `(1,) == (1.0,)` in
    Python, but a filter compiled with one must not serve the other."""
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, tuple):
        return ("tuple",) + tuple(_identity(e) for e in v)
    if isinstance(v, float):
        return ("float", struct.pack("<d", v))
    return (type(v).__name__, v)


# NumPy reductions a user may pass directly (``generic_filter(img, np.var, ...)``).
_NUMPY_DIRECT = {
    "sum", "prod", "mean", "var", "std", "min", "max", "amin", "amax", "ptp", "median", "percentile",
    "quantile", "any", "all", "count_nonzero", "argmin", "argmax", "nansum", "nanprod", "nanmean",
    "nanvar", "nanstd", "nanmin", "nanmax", "nanmedian", "nanpercentile", "nanquantile", "average",
}
_BUILTIN_DIRECT = {"max", "min", "sum", "len", "any", "all"}


# How many leading parameters scipy fills per call (the rest are bound values): the buffer; the
# input and output lines; the output coordinates; or, for quad, every parameter (from `xx`).
_INPUTS = {"filter": 1, "filter1d": 2, "transform": 1, "integrand": None}


def describe(func: Any, extra_arguments: tuple = (), extra_keywords: Optional[dict] = None,
             signature: str = "filter") -> Spec:
    """The :class:`Spec` of a callback as scipy would call it: ``func(x, *extra_arguments, **extra_keywords)``."""
    extra_keywords = dict(extra_keywords or {})
    extra_arguments = tuple(extra_arguments or ())
    if isinstance(func, functools.partial):
        # scipy calls `partial(x, *extra_arguments, **extra_keywords)`: the partial's keywords
        # join the call's (which win), its positional arguments would come before `x`.
        if func.args:
            raise TypeError(
                f"ndjit cannot compile {func!r}: its positional arguments would come before the "
                "neighbourhood; bind them by keyword (functools.partial(f, k=2.0)) or pass "
                "extra_arguments")
        return describe(func.func, extra_arguments, {**func.keywords, **extra_keywords}, signature)
    text, name = _text_of(func, signature)
    if text is not None and not extra_arguments and not extra_keywords:
        return _text_spec(text, name, signature)
    if text is not None:
        spec = _from_text(text, name, extra_arguments, extra_keywords, signature)
    elif isinstance(func, types.FunctionType) and not extra_arguments and not extra_keywords:
        return _spec_cache.spec_of(func, signature, lambda outer: _with_signature(
            _from_function(func, (), {}, inputs=_INPUTS[signature], outer=outer), signature))
    elif isinstance(func, types.FunctionType):
        spec = _from_function(func, extra_arguments, extra_keywords, inputs=_INPUTS[signature])
    else:
        spec = None
    if spec is not None:
        return _with_signature(spec, signature)
    raise TypeError(
        f"ndjit cannot compile {func!r}: pass a Python function or lambda, a NumPy reduction such as np.var, "
        "or the source as a string"
    )


def _with_signature(spec: Spec, signature: str) -> Spec:
    return Spec(**{**spec.__dict__, "signature": signature})


def _text_of(func: Any, signature: str) -> Tuple[Optional[str], Optional[str]]:
    """``(source text, name)`` of a callback given as text (name ``None``) or as a NumPy or builtin
    reduction (``np.var``: its call), else ``(None, None)``."""
    if isinstance(func, str):
        return func, None
    direct = _direct_source(func) if signature == "filter" else None
    if direct is not None:
        return direct, getattr(func, "__name__", direct)
    return None, None


def _from_text(text: str, name: Optional[str], args: tuple, kwargs: dict, signature: str) -> Spec:
    if name is None:
        return _from_string(text, args, kwargs, inputs=_INPUTS[signature])
    return _from_string(text, args, kwargs, name=name)


@functools.lru_cache(maxsize=256)
def _text_spec(text: str, name: Optional[str], signature: str) -> Spec:
    """The spec of a callback given as text or a reduction with no extra arguments: a function of
    its text alone, so worked out once per text (4 µs of a repeated call's host time)."""
    return _with_signature(_from_text(text, name, (), {}, signature), signature)


def _direct_source(func: Any) -> Optional[str]:
    """``np.var`` becomes ``lambda x, *args: np.var(x, *args)``'s body; ``max`` becomes ``max(x)``."""
    name = getattr(func, "__name__", None)
    if name is None:
        return None
    if name in _NUMPY_DIRECT and getattr(np, name, None) is func:
        return f"np.{name}"
    if name in _BUILTIN_DIRECT and getattr(builtins, name, None) is func:
        return name
    return None


def _from_string(source: str, args: tuple, kwargs: dict, name: str = "<filter>", inputs: Optional[int] = 1) -> Spec:
    if name != "<filter>" or _is_callable_name(source):
        # A function name (np.var, max): call it on the buffer, passing the extra arguments on.
        params = [f"_a{i}" for i in range(len(args))]
        call_args = ["x"] + params + [f"{k}={k}" for k in kwargs]
        source = f"lambda {', '.join(['x'] + params + list(kwargs))}: {source}({', '.join(call_args)})"
        bindings = {p: _convert(p, v) for p, v in zip(params, args)}
        bindings.update({k: _convert(k, v) for k, v in kwargs.items()})
        return Spec(source=source, bindings=_flatten_matrices(bindings), name=name)
    text = textwrap.dedent(source).strip("\n")
    _refuse_decorators(text)
    bindings: Dict[str, Any] = {}
    if args or kwargs:
        if inputs is None:
            raise TypeError("an integrand's extra arguments come from quad(..., args=...), not extra_arguments")
        params = _string_params(text)[inputs - 1 :]
        variadic = _variadic_source(text)  # the compiler refuses `*args`/`**kwargs` where they are
        if len(args) > len(params) and not variadic:
            raise TypeError(f"the filter takes {len(params)} extra argument(s) but extra_arguments has {len(args)}")
        for k in kwargs:
            if k not in params and not variadic:
                raise TypeError(f"the filter has no parameter {k!r} (extra_keywords)")
        if not variadic:
            _check_call(_source_signature(text), "the filter", inputs, args, kwargs)
        bindings.update({p: _convert(p, v) for p, v in zip(params, args)})
        bindings.update({k: _convert(k, v) for k, v in kwargs.items()})
    return Spec(source=text, bindings=_flatten_matrices(bindings), name=name)


# The decorators a source string may carry: ndjit's own, which compile the function (a
# function's source keeps those it was made with, and ndjit compiles the undecorated function).
_MAKERS = frozenset({"jit_filter", "jit_filter1d", "jit_transform", "jit_integrand"})


def _refuse_decorators(text: str) -> None:
    """Refuses a decorator of a source string's functions other than ndjit's own: ndjit would
    compile the function it decorates, not what the decorator makes of it."""
    if "@" not in text:  # (no parse on the common path: most strings are expressions)
        return
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return  # the compiler reports it, located
    for node in ast.walk(tree):
        for d in getattr(node, "decorator_list", ()):
            target = d.func if isinstance(d, ast.Call) else d
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
            if name not in _MAKERS:
                line = text.splitlines()[d.lineno - 1]
                raise FilterSyntaxError(
                    "unsupported", "a decorator of source text: ndjit would compile the function without it",
                    d.lineno, d.col_offset + 1, d.end_lineno, d.end_col_offset + 1, line,
                    "pass the decorated function itself, or write what the decorator does into the function", "")


def _is_callable_name(source: str) -> bool:
    return source in {f"np.{n}" for n in _NUMPY_DIRECT} | _BUILTIN_DIRECT


def _string_params(text: str) -> list:
    """The parameters after the first of a `def`/`lambda` source string."""
    sig = _source_signature(text)
    return list(sig.parameters)[1:] if sig is not None else []


def _first_function(text: str) -> Optional[typing.Union[ast.FunctionDef, ast.Lambda]]:
    """The first `def`/`lambda` of a source string (None if there is none or it does not parse:
    the compiler reports that with a precise position)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    return next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda))), None)


def _source_signature(text: str) -> Optional[inspect.Signature]:
    """The signature of the first `def`/`lambda` of a source string, if any."""
    node = _first_function(text)
    if node is None:
        return None
    a, P = node.args, inspect.Parameter
    positional = [(p, P.POSITIONAL_ONLY) for p in a.posonlyargs] + [(p, P.POSITIONAL_OR_KEYWORD) for p in a.args]
    defaults = [P.empty] * (len(positional) - len(a.defaults)) + [True] * len(a.defaults)
    params = [P(p.arg, kind, default=d) for (p, kind), d in zip(positional, defaults)]
    params += [P(p.arg, P.KEYWORD_ONLY, default=P.empty if d is None else True)
               for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return inspect.Signature(params)


def _variadic_source(text: str) -> bool:
    """Whether the first `def`/`lambda` of a source string takes `*args` or `**kwargs`, which the
    compiler refuses with their position (counting the extra arguments first would hide that)."""
    node = _first_function(text)
    return node is not None and (node.args.vararg is not None or node.args.kwarg is not None)


def _check_call(sig: Optional[inspect.Signature], name: str, inputs: int, args: tuple, kwargs: dict) -> None:
    """Python's TypeError where scipy's call `func(x, *extra_arguments, **extra_keywords)` would
    raise one (too many arguments, a value given twice, a positional-only one by keyword)."""
    if sig is None:
        return
    try:
        sig.bind_partial(*([None] * inputs), *args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}: {e} (extra_arguments and extra_keywords)") from None


def _from_function(func: types.FunctionType, args: tuple, kwargs: dict, inputs: Optional[int] = 1,
                   outer: Optional["_spec_cache.Outer"] = None) -> Spec:
    """The spec of `func` called with `args` and `kwargs`; `outer`: the defaults, closure cells'
    and globals' values to compile in, read once by the caller (else read here, once)."""
    located = locate(func)
    source, line_offset, col_offset, indent = source_of(located)
    outer = _spec_cache.outer_of(func) if outer is None else outer
    bindings = _parameter_values(func, args, kwargs, inputs, outer)
    imports, unsupported, shadowed, helpers = _outer_values(func, bindings, outer)
    _shadowing.check(func, located, shadowed)
    extra, regions = _helpers.collect(source, helpers, bindings, imports, unsupported, _outer_values)
    return Spec(
        source=source + extra,
        bindings=_flatten_matrices(bindings),
        imports=tuple(imports),
        name=func.__qualname__,
        filename=located.filename,
        line_offset=line_offset,
        col_offset=col_offset,
        indent=indent,
        unsupported=tuple(unsupported),
        regions=tuple(regions),
    )


def _parameter_values(func: types.FunctionType, args: tuple, kwargs: dict, inputs: Optional[int],
                      read: "_spec_cache.Outer") -> Dict[str, Any]:
    """The values of the parameters after the ones scipy fills: defaults (as `read` holds them),
    extra arguments."""
    code = func.__code__
    pos = list(code.co_varnames[: code.co_argcount])
    kwonly = list(code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount])
    if not pos:
        raise TypeError(f"{func.__qualname__} takes no arguments; its first parameter receives the neighbourhood")
    if inputs is None:  # an integrand: quad passes every parameter (defaults are in the source)
        if args or kwargs:
            raise TypeError("an integrand's extra arguments come from quad(..., args=...), not extra_arguments")
        inputs = len(pos)
    if len(pos) < inputs:
        raise TypeError(f"{func.__qualname__} must take {inputs} leading parameters for this scipy function")
    params = pos[inputs:]
    values: Dict[str, Any] = {}
    defaults = read.defaults
    if defaults:
        for name, d in zip(pos[len(pos) - len(defaults) :], defaults):
            if name in params:
                values[name] = d
    values.update(read.kwdefaults)
    # `*args`/`**kwargs`: the compiler refuses them with their position.
    variadic = bool(code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))
    if len(args) > len(params) and not variadic:
        raise TypeError(f"{func.__qualname__} takes {len(params)} extra argument(s) but extra_arguments has {len(args)}")
    values.update(zip(params, args))
    for k, v in kwargs.items():
        if k in params + kwonly:
            values[k] = v
        elif not variadic:
            raise TypeError(f"{func.__qualname__} got an unexpected keyword argument {k!r} (extra_keywords)")
    _check_call(inspect.signature(func), func.__qualname__, inputs, args, kwargs)
    missing = [p for p in params + kwonly if p not in values]
    if missing:
        raise TypeError(f"{func.__qualname__} needs a value for {', '.join(missing)}: pass extra_arguments or extra_keywords")
    # A function passed as a parameter value is a helper, inlined under the parameter's name.
    return {k: v if isinstance(v, types.FunctionType) else _convert(k, v) for k, v in values.items()}


def _global_loads(codes: List[types.CodeType]) -> Dict[str, None]:
    """The module-level names the code objects `codes` (a function's and those nested in it:
    `_codes`) read, in order. Not `co_names`, which also holds attribute names: `np.ptp(x)`
    inside a module's own `def ptp` does not read the global `ptp`."""
    names: Dict[str, None] = {}
    for c in codes:
        names.update((ins.argval, None) for ins in dis.get_instructions(c) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"))
    return names


def _codes(code: types.CodeType) -> List[types.CodeType]:
    """`code` and the code objects nested in it (lambdas, comprehensions, inner functions)."""
    out = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out += _codes(const)
    return out


def _outer_values(func: types.FunctionType, bindings: Dict[str, Any],
                  read: Optional["_spec_cache.Outer"] = None):
    """The closure cells and module globals the function reads: numbers and arrays are added to
    `bindings` (a name bound to two different values is an error), NumPy and math to the imports,
    Python functions to the helpers; also the names ndjit cannot bind and the builtins shadowed.
    `read`: their values as the caller read them (one reading: another thread may rebind a global
    meanwhile), else read here."""
    code = func.__code__
    imports, unsupported, shadowed, helpers = [], [], [], []
    for name in [k for k, v in bindings.items() if isinstance(v, types.FunctionType)]:
        helper = bindings.pop(name)  # a parameter's default or extra argument
        library = library_function(helper)
        if library is not None:
            raise library_argument(name, library, func)
        helpers.append((name, helper))
    if read is None:
        read = _spec_cache.outer_of(func)
    outer = {}
    for name, value in read.cells.items():
        if value is _spec_cache.ABSENT:
            unsupported.append((name, "unassigned closure variable"))
        else:
            outer[name] = value
    codes = _codes(code)
    attributes = [n for c in codes for n in c.co_names]  # every name read after a dot, too
    for name in _global_loads(codes):
        if read.globals.get(name, _spec_cache.ABSENT) is not _spec_cache.ABSENT and name not in outer:
            outer[name] = read.globals[name]
    own = set(code.co_varnames)  # attribute names in co_names may equal a parameter's
    for name, v in outer.items():
        if name in own:
            continue
        kind = _classify(v)
        if kind == "value":
            _bind(bindings, name, _convert(name, v), func)
        elif kind is not None:
            # `np`, `numpy` and `math` are known already; aliases (`xp`, `from numpy import mean`)
            # and the other modules are not.
            if kind != name or kind in ("typing", "statistics", "collections"):
                imports.append((kind, name))
        elif name in _shadowing.IMPLICIT and v is not getattr(builtins, name, None):
            # ndjit would compile its own `abs`/`np`/... where Python calls the user's object.
            shadowed.append((name, v))
        elif v is func and name == func.__name__:
            continue  # the filter calling itself: its own `def` defines the name (recursion, refused)
        elif isinstance(v, types.FunctionType):
            library = library_function(v)
            if library is None:
                helpers.append((name, v))
            else:
                unsupported.append((name, library))
        elif _bind_attributes(bindings, name, v, attributes, func) or not callable(v) or isinstance(v, type):
            unsupported.append((name, type(v).__name__))
        else:  # functools.partial, a callable object, a compiled (Numba, C) function ...
            unsupported.append((name, OtherCallable(f"{type(v).__module__}.{type(v).__qualname__}")))
    return imports, unsupported, shadowed, helpers


def _bind_attributes(bindings: Dict[str, Any], name: str, obj: Any, attrs, func: types.FunctionType) -> bool:
    """Binds `name.attr` for the attributes of a class or instance the function may read
    (`cfg.k`, `Cfg.k`: `attrs` holds every attribute name it reads). Returns whether `obj` is
    such an object."""
    if isinstance(obj, (types.ModuleType, types.BuiltinFunctionType)) or (callable(obj) and not isinstance(obj, type)):
        return False
    for attr in attrs:
        try:
            value = getattr(obj, attr)
        except Exception:  # a property that raises, or no such attribute: not read from here
            continue
        if _classify(value) == "value":
            _bind(bindings, f"{name}.{attr}", _convert(f"{name}.{attr}", value), func)
    return True


def _bind(bindings: Dict[str, Any], name: str, value: Any, func: types.FunctionType) -> None:
    """Adds a bound value; the filter and its helpers share one namespace, so one name must
    mean one value in all of them."""
    if name in bindings:
        if _identity(bindings[name]) != _identity(value):  # `==` takes 0.0 for -0.0, (1,) for (1.0,)
            raise TypeError(
                f"`{name}` means different values in {func.__qualname__} and the filter or another "
                "helper; ndjit inlines helpers into one program: rename one of them"
            )
        return
    bindings[name] = value


class _Matrix(NamedTuple):
    """A 2-D bound array: bound flat (row by row) under its name, with its column count beside
    it, and the memory order NumPy lays it out in (`memory_order`)."""

    flat: np.ndarray
    cols: int
    order: Optional[str]


class _Strided(NamedTuple):
    """A bound float array (flat, or a `_Matrix`) whose rows, its elements if 1-D, are not
    contiguous in memory: `stride` is "S" where they lie more than one element apart forwards,
    "R" where backwards or broadcast (`row_stride`)."""

    value: Any
    stride: str


# The Rust side's names for a 2-D array's column count and memory order, and for an array's
# strided rows (`lower/attributes.rs`).
_COLUMNS_SUFFIX = ".__ncols__"
_ORDER_SUFFIX = ".__order__"
_STRIDE_SUFFIX = ".__stride__"
_LAYOUT_SUFFIXES = (_ORDER_SUFFIX, _STRIDE_SUFFIX)


def memory_order(v: np.ndarray) -> Optional[str]:
    """The order NumPy's iterator visits the 2-D array `v` in: "F" column by column, "C" row by
    row, None where its strides decide nothing (one row or column, a broadcast axis of stride 0,
    equal strides). NumPy's reductions go in that order (the axis of the smaller stride
    innermost), so a transposed C array is "F" and a sliced or flipped one "C"; an element-wise
    result takes the order its operands agree on, C where they disagree, and an operand whose
    strides decide nothing has no say."""
    s0, s1 = (abs(s) for s in v.strides)
    if min(v.shape) <= 1 or s0 == 0 or s1 == 0 or s0 == s1:
        return None
    return "F" if s0 < s1 else "C"


def row_stride(v: np.ndarray) -> Optional[str]:
    """How the rows of the float array `v` (its elements, if 1-D) lie in memory, where NumPy's
    dot products see it: "S" more than one element apart forwards (BLAS's strided loop), "R"
    backwards or broadcast (`@`'s own loop; a backwards slice of them steps forwards again),
    None contiguous (or one element: no stride). A 2-D array of one column is one line stepping
    by rows (its `reshape(-1)` is a view); one whose rows run backwards is "R" too (a backwards
    column of it steps forwards)."""
    if v.dtype.kind != "f" or v.ndim == 0:
        return None
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    along = v.strides[-1] if v.shape[-1] > 1 else v.itemsize  # a row's step
    down = v.strides[0] if v.ndim == 2 and v.shape[0] > 1 else 1  # a column's
    if along > v.itemsize:
        return "S"
    return "R" if along <= 0 or down <= 0 else None


def _flatten_matrices(bindings: Dict[str, Any]) -> Dict[str, Any]:
    """The bindings as the Rust layer takes them: each 2-D array flat, with its column count
    and its memory order where it has one, and the stride of an array's rows where they are
    not contiguous."""
    out = {}
    for k, v in bindings.items():
        if isinstance(v, _Strided):
            out[k + _STRIDE_SUFFIX] = v.stride
            v = v.value
        if isinstance(v, _Matrix):
            out[k], out[k + _COLUMNS_SUFFIX] = v.flat, v.cols
            if v.order is not None:
                out[k + _ORDER_SUFFIX] = v.order
        else:
            out[k] = v
    return out


# The functions of Python's statistics module that ndjit compiles.
_STATISTICS = ("median", "median_low", "median_high", "mode")


def _classify(v: Any) -> Optional[str]:
    """'value' for numbers/arrays, a module path for NumPy/math modules and functions, else None."""
    if isinstance(v, types.ModuleType):
        return {"numpy": "numpy", "math": "math", "typing": "typing", "statistics": "statistics",
                "collections": "collections"}.get(v.__name__)
    if v is typing.cast:
        return "typing.cast"
    if v is collections.Counter:
        return "collections.Counter"
    if isinstance(v, (bool, int, float, str, np.number, np.bool_, tuple, list, np.ndarray)):
        return "value"
    name = getattr(v, "__name__", None)
    if name and (getattr(np, name, None) is v):
        return f"numpy.{name}"
    if name and getattr(math, name, None) is v:
        return f"math.{name}"
    # (The module's other functions are a library's, refused with the closest NumPy code.)
    if name in _STATISTICS and getattr(statistics, name, None) is v:
        return f"statistics.{name}"
    return None


def _narrow_float(name: str, dtype) -> BindingError:
    return BindingError(
        f"bound value {name!r} is {np.dtype(dtype).name}: NumPy computes with it in that precision "
        "(beside a Python number, or another such value), while ndjit computes in float64; "
        f"bind {name}.astype(np.float64) (or float({name})) if float64 arithmetic is what you mean"
    )


def _narrow_int(dtype) -> bool:
    """Integer types whose NumPy arithmetic differs from int64's: the narrow ones and uint64."""
    dtype = np.dtype(dtype)
    return dtype.kind in "iu" and (dtype.itemsize < 8 or dtype.kind == "u")


def _numpy_kind(name: str, dtype, why: str, instead: str) -> BindingError:
    return BindingError(
        f"bound value {name!r} is a NumPy {np.dtype(dtype).name}: NumPy {why}, which ndjit does not "
        f"model; bind {instead} if that arithmetic is what you mean"
    )


def _python_sequence(name: str, v) -> tuple:
    """A bound tuple or list: its elements stay Python numbers (`T[0] // 0` raises, `T * 2`
    repeats), all ints or all floats, as the Rust layer takes them."""
    kinds = {type(e) for e in v}
    if kinds <= {float} or kinds == {int}:
        if kinds == {int} and any(abs(e) > 2**53 for e in v):
            raise BindingError(f"bound value {name!r} holds ints past 2**53, which ndjit cannot hold exactly")
        return tuple(v)
    if kinds <= {int, float}:
        why, instead = "mixes ints and floats", f"a tuple of floats or np.array({name})"
    elif any(isinstance(e, (tuple, list)) for e in v):
        why, instead = "is nested", f"np.array({name}) (a 2-D array)"
    else:
        names = ", ".join(sorted(k.__name__ for k in kinds))
        why, instead = f"holds {names}", f"a tuple of Python floats or ints, or np.array({name})"
    raise BindingError(f"bound {type(v).__name__} {name!r} {why}; ndjit binds tuples and lists whose elements are "
                    f"all Python ints or all Python floats: bind {instead}")


def _convert(name: str, v: Any):
    """A bound value in the form the Rust layer takes: int, float, str, a 1-D float64, int64 or
    bool array (a 2-D one as a `_Matrix`), or a tuple of Python floats or of Python ints."""
    if isinstance(v, np.floating) and v.dtype.itemsize != 8:
        raise _narrow_float(name, v.dtype)
    if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.dtype.itemsize != 8:
        raise _narrow_float(name, v.dtype)
    if isinstance(v, np.bool_):
        raise _numpy_kind(name, v.dtype, "adds and multiplies NumPy's bools as `or` and `and`, and "
                          "refuses to subtract or negate them", f"bool({name})")
    if isinstance(v, np.integer) and _narrow_int(v.dtype):
        raise _numpy_kind(name, v.dtype, f"wraps its arithmetic at {v.dtype.itemsize * 8} bits",
                          f"int({name})")
    if isinstance(v, np.ndarray) and _narrow_int(v.dtype):
        raise _numpy_kind(name, v.dtype, f"wraps its elements' arithmetic at {v.dtype.itemsize * 8} bits",
                          f"{name}.astype(np.float64)")
    if isinstance(v, (np.floating, np.integer)):
        # np.float64 or np.int64 (the rest are refused above), passed on as a 0-d array: the
        # Rust layer takes it as a NumPy scalar, with NumPy's arithmetic.
        return np.array(v)
    if isinstance(v, bool):
        return bool(v)  # a Python bool: an int to Python, a bool to NumPy's functions
    if isinstance(v, int):
        v = int(v)
        if not -(2**63) <= v < 2**63:
            raise BindingError(f"bound value {name!r} = {v} does not fit in 64 bits")
        return v
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return v  # folded into the code: `if method == "mean":`
    if isinstance(v, np.ndarray) and v.dtype.kind in "biuf":
        if v.ndim == 0:  # not quite its NumPy scalar: round() raises, for one
            raise BindingError(f"bound value {name!r} is a 0-d array, which some Python functions treat otherwise "
                            f"than a number; bind {name}[()] (its NumPy scalar) or float({name})")
        if v.ndim > 2:
            raise BindingError(f"bound value {name!r} is a {v.ndim}-D {v.dtype} array; ndjit binds numbers "
                            "and 1-D and 2-D numeric arrays")
        if v.ndim == 2 and v.shape[1] == 0 and v.shape[0] > 0:
            raise BindingError(f"bound value {name!r} is a 2-D array of shape {v.shape}, rows without elements, "
                            "which ndjit cannot represent (it keeps a 2-D array's rows as its size over its columns)")
        dtype = {"b": np.bool_, "i": np.int64, "f": np.float64}[v.dtype.kind]  # narrow ints refused above
        flat = np.ascontiguousarray(v, dtype=dtype).ravel()
        if dtype is np.int64 and ((flat > 2**53) | (flat < -(2**53))).any():
            raise BindingError(f"bound value {name!r} holds ints past 2**53, which ndjit cannot hold exactly; "
                            f"bind {name}.astype(np.float64) if float64 arithmetic is what you mean")
        value = _Matrix(flat, v.shape[1], memory_order(v)) if v.ndim == 2 else flat
        stride = row_stride(v)
        return value if stride is None else _Strided(value, stride)
    if isinstance(v, (tuple, list)):
        return _python_sequence(name, v)
    if v is None:
        raise BindingError(f"bound value {name!r} is None; ndjit binds numbers, arrays and tuples of numbers: "
                           f"decide in Python before the call (`if {name} is None: ...`), or bind a number "
                           "such as np.nan for 'none'")
    raise BindingError(
        f"bound value {name!r} is a {type(v).__name__}; ndjit binds numbers, NumPy scalars, "
        "1-D numeric arrays and tuples of numbers"
    )
