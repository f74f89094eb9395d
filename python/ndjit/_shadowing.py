"""Names ndjit resolves itself (``abs``, ``np`` ...) that mean something else where a function lives.

A filter's bare ``abs`` or ``np`` compiles to ndjit's own built-in or NumPy. Python looks the name
up in the function's closure and module first: where that finds the user's own object, or will once
the module has run further (a decorator compiles the function before a later ``def abs``), ndjit
would compile another program than the one Python runs, so that is an error, at the name's use.
"""
from __future__ import annotations

import ast
import builtins
import functools
import linecache
import types
from typing import Any, Dict, Iterable, Tuple

from ._errors import FilterTypeError
from ._locate import Located

__all__ = ["IMPLICIT", "check"]

# Names a filter may use without binding them (`lower/builtins.rs`'s `global`), and every other
# builtin: a global or closure variable of that name that is something else changes its meaning.
IMPLICIT = frozenset(dir(builtins)) | {"np", "numpy", "math"}


def check(func: types.FunctionType, located: Located, shadowed: Iterable[Tuple[str, Any]]) -> None:
    """Raises for the first of ``shadowed`` (names in :data:`IMPLICIT` bound, in the closure or the
    module, to other objects) the function reads, then for names it reads that the module binds
    later, at its top level."""
    code = func.__code__
    uses = _implicit_uses(located, code)
    for name, value in shadowed:
        if name in uses:
            what = f"your {type(value).__name__} {getattr(value, '__name__', '')}".rstrip()
            raise _error(located, uses[name], f"`{name}` here is {what}, not {_known(name)}, which ndjit would "
                         "compile instead")
    later = _module_bindings(located.tree)
    for name, use in uses.items():
        if name in later and name not in func.__globals__ and name not in code.co_freevars:
            raise _error(located, use, f"`{name}` is bound at line {later[name]} of this module, after the filter was "
                         f"compiled: Python will call that `{name}`, where ndjit would compile {_known(name)}")


@functools.lru_cache(maxsize=256)
def _implicit_uses(located: Located, code: types.CodeType) -> Dict[str, ast.Name]:
    """The first use of each name in :data:`IMPLICIT` the function reads as a global or closure
    variable (fixed by its source and code: remembered, as calls with a plain function repeat
    it; callers only read the dict)."""
    names = sorted((n for n in ast.walk(located.node) if isinstance(n, ast.Name)), key=lambda n: (n.lineno, n.col_offset))
    uses: Dict[str, ast.Name] = {}
    for n in names:
        # Globals and closure variables only (co_names also holds attributes, as in `x.sum()`).
        if n.id in IMPLICIT and (n.id in code.co_names or n.id in code.co_freevars):
            uses.setdefault(n.id, n)
    return uses


def _known(name: str) -> str:
    return "the NumPy or math module" if name in ("np", "numpy", "math") else f"Python's built-in `{name}`"


@functools.lru_cache(maxsize=64)
def _module_bindings(tree: ast.Module) -> Dict[str, int]:
    """The names the module's top-level statements bind, with the line of the first."""
    bound: Dict[str, int] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [stmt.name]
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names = [(a.asname or a.name).split(".")[0] for a in stmt.names]
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            continue
        for name in names:
            bound.setdefault(name, stmt.lineno)
    return bound


def _error(located: Located, use: ast.Name, message: str) -> FilterTypeError:
    name = use.id
    error = FilterTypeError(
        "binding error", message, use.lineno, use.col_offset + 1, use.lineno, use.col_offset + 1 + len(name),
        linecache.getline(located.filename, use.lineno).rstrip("\n") or None,
        f"ndjit cannot call your `{name}`: write its computation in the filter, under another name", "",
    )
    error.filename = located.filename
    return error
