"""Which ``def`` or ``lambda`` in its source a running function was compiled from.

ndjit compiles source text, while Python runs a code object. The two must be the same program, so
the text found here is checked against the code object before anything is compiled:

- the source (a file, or a ``linecache`` entry: IPython cells, ``exec`` with a registered name) is
  compiled again the way Python compiled it, and must contain a code object equal to the function's
  (bytecode, constants, names, arguments, first line and, on 3.11+, columns); otherwise the file
  changed after the import, and :class:`SourceMismatch` says so;
- several lambdas may start on the function's first line. On 3.11+ the code object's own column
  spans (``co_positions``) name the one whose body holds them; where columns are missing (3.9,
  3.10, ``-X no_debug_ranges``), each candidate is compiled in place and compared with the code
  object. A choice between different programs that cannot be told apart is an error, never a guess.
"""
from __future__ import annotations

import __future__
import ast
import functools
import inspect
import io
import linecache
import sys
import textwrap
import types
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from ._errors import SourceMismatch, SourceUnavailable

__all__ = ["Located", "locate", "source_of"]

# The `from __future__` flags a code object carries, which its source must be compiled with again.
_FUTURE_FLAGS = functools.reduce(
    lambda acc, name: acc | getattr(__future__, name).compiler_flag, __future__.all_feature_names, 0
)
# IPython compiles cells that may `await` at the top level; harmless for any other source.
_COMPILE_FLAGS = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
# The code object field holding line numbers, ignored when candidates are compared in place.
_LINE_TABLE = "co_linetable" if sys.version_info >= (3, 10) else "co_lnotab"
_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPE_NODES = _FUNCTION_NODES + (ast.ClassDef,)

Span = Tuple[Tuple[int, int], Tuple[int, int]]


@dataclass(frozen=True)
class Located:
    """A function's source: the whole text of its file or cell, its syntax tree, and the
    ``def``/``lambda`` node."""

    filename: str
    text: str
    tree: ast.Module
    node: ast.AST


def locate(func: types.FunctionType) -> Located:
    """The node ``func`` was compiled from, checked against ``func.__code__``."""
    code = func.__code__
    filename = inspect.getsourcefile(func) or code.co_filename
    try:
        return _locate_in(filename, func)
    except SourceMismatch:
        # linecache may hold the text of an earlier version (it reads a file once): read it again.
        linecache.checkcache(filename)
        return _locate_in(filename, func)


@functools.lru_cache(maxsize=256)
def source_of(located: Located) -> Tuple[str, int, int, int]:
    """A function's source as ndjit compiles it, and where it lies in its file: (text, line
    offset, column offset of the first line, indentation of every line)."""
    text, node = located.text, located.node
    if isinstance(node, ast.Lambda):
        # Parenthesised, so that a lambda spanning lines inside a call still reads as one line.
        return "(" + ast.get_source_segment(text, node) + ")", node.lineno - 1, node.col_offset - 1, 0
    # Lines as Python numbers them: split at "\n" only (str.splitlines also splits at form
    # feeds and other separators, which would shift every later line).
    lines = io.StringIO(text).readlines()[node.lineno - 1 : node.end_lineno]
    return textwrap.dedent("".join(lines)), node.lineno - 1, 0, node.col_offset


def _locate_in(filename: str, func: types.FunctionType) -> Located:
    code, qualname = func.__code__, func.__qualname__
    # The module's globals let linecache ask its loader (zip imports and other loaders).
    text = "".join(linecache.getlines(filename, func.__globals__))
    return _located(filename, text, code, qualname)


@functools.lru_cache(maxsize=256)
def _located(filename: str, text: str, code: types.CodeType, qualname: str) -> Located:
    """`_locate_in`'s answer for one text of the file and one code object, remembered: finding
    the node walks the module's whole syntax tree, which a call with a plain function would
    otherwise pay every time. The text is part of the key, so a file changed on disk (and
    re-read by linecache) is located, and checked against the running code, again."""
    if not text:
        raise SourceUnavailable(
            f"cannot find the source of {qualname}: it was defined in {code.co_filename!r}, whose text "
            "Python does not keep (the interactive prompt, exec or compile without a linecache entry, or C). "
            "Define the function in a file, or pass its source as a string, "
            "e.g. ndjit.jit_filter(\"lambda x: x.max() - x.min()\")"
        )
    mismatch = SourceMismatch(
        f"the source of {qualname} in {filename} (line {code.co_firstlineno}) does not match the running "
        "function: the file changed after it was imported. Reload the module (importlib.reload) or "
        "restart Python, then compile again"
    )
    try:
        tree = _parse(filename, text)
        module = _compile(filename, text, code.co_flags & _FUTURE_FLAGS)
    except (SyntaxError, ValueError):
        raise mismatch from None
    candidates = _candidates(tree, code)
    if not candidates or not any(c == code for c in _code_objects(module)):
        raise mismatch
    node = candidates[0] if len(candidates) == 1 else _by_positions(candidates, code)
    if node is None:
        node = _by_bytecode(filename, text, code, qualname, len(candidates))
    return Located(filename, text, tree, node)


@functools.lru_cache(maxsize=16)
def _parse(filename: str, text: str) -> ast.Module:
    """The module's syntax tree, shared: callers only read it."""
    return ast.parse(text, filename)


@functools.lru_cache(maxsize=16)
def _compile(filename: str, text: str, flags: int) -> types.CodeType:
    return compile(text, filename, "exec", flags=flags | _COMPILE_FLAGS, dont_inherit=True)


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _code_objects(c)


def _candidates(tree: ast.Module, code: types.CodeType) -> List[ast.AST]:
    """The `def`s named like `code`, or the lambdas, that start on its first line."""
    first = code.co_firstlineno
    if code.co_name == "<lambda>":
        return [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == first]
    return [
        n for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == code.co_name
        and min([d.lineno for d in n.decorator_list] + [n.lineno]) == first  # decorators count since 3.8
    ]


# --- 3.11+: the code object's own column spans ------------------------------------------------
def _by_positions(candidates: List[ast.AST], code: types.CodeType) -> Optional[ast.AST]:
    """The one candidate whose own body (less the bodies of functions and classes nested in it,
    which are other code objects) holds every span of `code`; None without column information."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return None
    spans = [
        ((line, col), (end_line, end_col)) for line, end_line, col, end_col in positions()
        if None not in (line, end_line, col, end_col)
        and (line, col) != (end_line, end_col)  # the prologue and implicit returns: no source span
    ]
    if not spans:
        return None
    owners = [n for n in candidates if all(_owns(n, s) for s in spans)]
    return owners[0] if len(owners) == 1 else None


def _owns(node: ast.AST, span: Span) -> bool:
    if not _inside(span, _body_span(node)):
        return False
    body = node.body if isinstance(node.body, list) else [node.body]
    nested = (m for b in body for m in ast.walk(b) if isinstance(m, _SCOPE_NODES))
    return not any(_inside(span, _body_span(m)) for m in nested)


def _body_span(node: ast.AST) -> Span:
    """Where the code of a function's (or class's) own scope comes from: its body. Decorators,
    defaults and the node itself are evaluated by the enclosing code."""
    first, last = (node.body, node.body) if isinstance(node, ast.Lambda) else (node.body[0], node.body[-1])
    return (first.lineno, first.col_offset), (last.end_lineno, last.end_col_offset)


def _inside(span: Span, region: Span) -> bool:
    return region[0] <= span[0] and span[1] <= region[1]


# --- anywhere: each candidate compiled in place --------------------------------------------------
def _by_bytecode(filename: str, text: str, code: types.CodeType, qualname: str, count: int) -> ast.AST:
    """The candidate that compiles to `code`, told apart by moving one candidate at a time to a
    line of its own (so its code object can be found) and comparing all but line numbers."""
    matches = []
    for i in range(count):
        tree = ast.parse(text, filename)  # a private copy: it is edited below
        node = _candidates(tree, code)[i]
        lines = node.lineno, node.end_lineno
        node.lineno = node.end_lineno = len(text.splitlines()) + 2
        module = compile(tree, filename, "exec", flags=(code.co_flags & _FUTURE_FLAGS) | _COMPILE_FLAGS,
                         dont_inherit=True)
        moved = (c for c in _code_objects(module) if c.co_firstlineno == node.lineno and c.co_name == code.co_name)
        if any(c.replace(co_firstlineno=code.co_firstlineno, **{_LINE_TABLE: getattr(code, _LINE_TABLE)}) == code
               for c in moved):
            node.lineno, node.end_lineno = lines
            matches.append(node)
    # Lambdas that differ only in spacing or parentheses are the same program: any one will do.
    if matches and all(ast.dump(m) == ast.dump(matches[0]) for m in matches):
        return matches[0]
    raise SourceUnavailable(
        f"cannot tell which of the {count} lambdas on line {code.co_firstlineno} of {filename} is {qualname}: "
        "put it on a line of its own, or pass its source as a string"
    )
