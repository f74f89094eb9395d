"""Specs of plain functions, kept while everything they read from outside is the same objects.

Describing a function (``_frontend._from_function``) reads its defaults, closure cells and the
globals it names on every call, so that a changed value is compiled in: about 10 µs, a third of
the Python host time of a repeated ``target="cuda"`` call. Here the spec of a function is kept
with those values, and reused while each is the *same object* and the object cannot change in
place: numbers, strings, NumPy scalars, modules, builtin functions and ufuncs, and tuples of
these. A function that reads anything else (an array, a list, a helper function, a class whose
attributes may be reassigned) is described afresh on every call, as before.
"""
from __future__ import annotations

import builtins
import functools
import itertools
import operator
import types
import weakref
from typing import Callable, Dict, NamedTuple, Optional, Tuple

import numpy as np

# Values that cannot change without becoming another object.
_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), np.generic, types.ModuleType,
              types.BuiltinFunctionType, np.ufunc)
# A name neither the globals nor the builtins hold, and a closure cell not yet filled.
ABSENT = _ABSENT = object()

_specs: "weakref.WeakKeyDictionary[types.FunctionType, tuple]" = weakref.WeakKeyDictionary()


@functools.lru_cache(maxsize=512)
def _names_read(code: types.CodeType) -> Tuple[str, ...]:
    """Every name a code object and the code nested in it (lambdas, comprehensions) look up."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.update(_names_read(c))
    return tuple(sorted(names))


def _frozen(v) -> bool:
    if isinstance(v, tuple):
        return all(_frozen(x) for x in v)
    return v is _ABSENT or isinstance(v, _IMMUTABLE)


def _cell(c) -> object:
    try:
        return c.cell_contents
    except ValueError:
        return _ABSENT


def _read(func: types.FunctionType) -> tuple:
    """What the function reads from outside its body: its code, its defaults (the tuple itself:
    replacing them makes a new tuple), its keyword defaults (a dict, changeable in place, so by
    item), its closure cells' values, and the globals and builtins it names. Built with C-level
    ``map``: this runs on every call, and a generator per part cost microseconds."""
    g = func.__globals__
    b = g.get("__builtins__", builtins)
    b = b if isinstance(b, dict) else b.__dict__
    names = _names_read(func.__code__)
    kw = func.__kwdefaults__
    return (
        func.__code__,
        func.__defaults__,
        *(() if not kw else (x for item in sorted(kw.items()) for x in item)),
        *map(_cell, func.__closure__ or ()),
        *map(g.get, names, itertools.repeat(_ABSENT)),
        *map(b.get, names, itertools.repeat(_ABSENT)),
    )


def fingerprint(func: types.FunctionType, values: Optional[tuple] = None) -> Optional[tuple]:
    """What the function reads from outside its body (:func:`_read`, or `values`, a reading by
    it), or ``None`` when some of it could change in place (then nothing may be kept)."""
    values = _read(func) if values is None else values
    if not all(_frozen(v) for v in values[1:]):
        return None
    return values


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))


class Outer(NamedTuple):
    """What a function reads from outside its body, as read at one moment: its defaults and
    keyword defaults, its closure cells' values (by free variable; :data:`ABSENT` where
    unfilled) and the globals it names (:data:`ABSENT` where none)."""
    defaults: tuple
    kwdefaults: Dict[str, object]
    cells: Dict[str, object]
    globals: Dict[str, object]


def outer_of(func: types.FunctionType, values: Optional[tuple] = None) -> Outer:
    """What `values` (a reading by :func:`_read`) holds of the function's defaults, closure cells
    and globals, or what they hold now."""
    values = _read(func) if values is None else values
    free = func.__code__.co_freevars
    names = _names_read(func.__code__)
    # The keyword defaults' items are what the other parts leave (not read again: they may
    # have changed since).
    cells_start = len(values) - len(free) - 2 * len(names)
    globals_start = cells_start + len(free)
    kw_items = values[2:cells_start]
    return Outer(
        defaults=values[1] or (),
        kwdefaults=dict(zip(kw_items[0::2], kw_items[1::2])),
        cells=dict(zip(free, values[cells_start:globals_start])),
        globals=dict(zip(names, values[globals_start:globals_start + len(names)])),
    )


def spec_of(func: types.FunctionType, signature: str, describe: Callable[[Outer], object]):
    """``describe(outer)`` (the function's spec for ``signature``, compiled with the values
    ``outer`` holds), or the one kept from an earlier call when everything the function reads is
    still the same objects. A kept entry's values were all unchangeable when it was kept, so a
    call that finds the same objects need not check them again. The spec is described from the
    very reading it is kept under: another thread rebinding a global meanwhile must not leave a
    spec of one value kept under another."""
    kept = _specs.get(func)
    if kept is not None and kept[0] == signature and _same(kept[1], _read(func)):
        return kept[2]
    values = _read(func)
    key = fingerprint(func, values)
    spec = describe(outer_of(func, values))
    if key is not None:
        _specs[func] = (signature, key, spec)
    return spec
