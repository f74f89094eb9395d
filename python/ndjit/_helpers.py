"""Helper functions a callback calls, sent with it to be inlined.

A filter may call functions defined in its module, in an enclosing function, or passed into a
factory (``def make(func): return lambda w: func(w)``). Each one's source is found as the
filter's is (``_locate``) and appended to the filter's source: a ``def`` under its own name (with
``name = def_name`` where the caller knows it by another name), a lambda as ``name = (lambda ...)``.
Their numbers, arrays and modules join the filter's bindings; the Rust side picks the filter out
as the one function nothing else calls, and inlines the rest. :class:`Region` records where each
appended line comes from, so that errors inside a helper point into the helper's own file.
"""
from __future__ import annotations

import ast
import dataclasses
import types
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _shadowing
from ._locate import locate, source_of

__all__ = ["Region", "collect", "find"]


@dataclass(frozen=True)
class Region:
    """Lines ``first_line`` onwards of the compiled source come from ``filename``, shifted by
    ``line_offset`` lines, ``col_offset`` columns on their first line and ``indent`` on every line."""

    first_line: int
    filename: Optional[str]
    line_offset: int
    col_offset: int
    indent: int


def collect(source: str, helpers: List[Tuple[str, types.FunctionType]], bindings: Dict[str, Any], imports: list,
            unsupported: list, outer_values: Callable) -> Tuple[str, List[Region]]:
    """The source of every helper reachable from `helpers` ((name, function) pairs), to append
    to the filter's `source`, and the regions of the appended lines.
    `bindings`, `imports` and `unsupported` are extended with what the helpers read."""
    if not helpers:
        return "", []
    emitted: Dict[int, str] = {}  # id(function) -> the name its source defines
    owners: Dict[str, types.FunctionType] = {}
    parts: List[Tuple[str, Optional[Region]]] = []
    aliases: List[str] = []
    queue = list(helpers)
    while queue:
        name, func = queue.pop(0)
        if id(func) in emitted:
            if emitted[id(func)] != name:
                aliases.append(f"{name} = {emitted[id(func)]}")
            continue
        located = locate(func)
        text, line_offset, col_offset, indent = source_of(located)
        if isinstance(located.node, ast.Lambda):
            prefix = f"{name} = "
            defined, text, col_offset = name, prefix + text, col_offset - len(prefix)
        else:
            defined = func.__name__
            if defined != name:
                aliases.append(f"{name} = {defined}")
        if owners.get(defined, func) is not func:
            raise TypeError(
                f"two different helper functions are both named `{defined}`; ndjit inlines helpers into "
                "one program: rename one of them"
            )
        owners[defined] = func
        emitted[id(func)] = defined
        parts.append((text, Region(0, located.filename, line_offset, col_offset, indent)))
        more_imports, more_unsupported, shadowed, more_helpers = outer_values(func, bindings)
        _shadowing.check(func, located, shadowed)
        imports.extend(i for i in more_imports if i not in imports)
        unsupported.extend(u for u in more_unsupported if u not in unsupported)
        queue.extend(more_helpers)
    parts.extend((a + "\n", None) for a in aliases)
    return _join(source, parts)


def _join(source: str, parts: List[Tuple[str, Optional[Region]]]) -> Tuple[str, List[Region]]:
    """What to append to the filter's `source` (after a blank line), and the regions, numbered
    in the whole source."""
    text = ("" if source.endswith("\n") else "\n") + "\n"
    line = source.count("\n") + text.count("\n") + 1
    regions = []
    for part, region in parts:
        part = part if part.endswith("\n") else part + "\n"
        if region is not None:
            regions.append(dataclasses.replace(region, first_line=line))
        text += part
        line += part.count("\n")
    return text, regions


def find(regions, line: int) -> Optional[Tuple[Region, int]]:
    """The helper region holding `line` of the compiled source, and the line's number within it
    (None for the filter's own lines)."""
    best = None
    for r in regions:
        if r.first_line <= line:
            best = r
    return None if best is None else (best, line - best.first_line + 1)
