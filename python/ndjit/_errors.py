"""Exceptions raised by ndjit.

Compile errors are ``FilterSyntaxError`` (a ``SyntaxError``: the program is not in the language)
or ``FilterTypeError`` (a ``TypeError``: wrong types, arity or bound values). Both carry the line
and column in the user's file and render a caret under the offending span.

Run-time failures inside a compiled filter raise a ``FilterRuntimeError`` that is *also* the
exception the user's own Python raises in that situation (``IndexError`` for an index out of
range, ``ValueError`` for the minimum of an empty array, ``ZeroDivisionError`` ...), so existing
``except`` clauses keep working.
"""
from __future__ import annotations

import builtins as _builtins
import enum
import linecache
from typing import Optional

try:
    from numpy.exceptions import AxisError as _AxisError
except ImportError:  # NumPy < 1.25
    from numpy import AxisError as _AxisError

from statistics import StatisticsError as _StatisticsError

from . import _core

__all__ = [
    "ErrorKind",
    "FilterError",
    "FilterCompileError",
    "FilterSyntaxError",
    "FilterTypeError",
    "FilterRuntimeError",
    "CudaError",
    "CudaUnavailableError",
    "SourceUnavailable",
    "SourceMismatch",
    "BindingError",
]


# The kinds of compile error, as the core defines them: each member's value is its display name
# ("unknown name" ...). Compile errors carry theirs as ``error_kind``.
ErrorKind = enum.Enum("ErrorKind", [(display.upper().replace(" ", "_"), display) for display, _ in _core.ERROR_KINDS],
                      module=__name__)
ErrorKind.__doc__ = "What went wrong at compile time, coarsely (the message says exactly)."
# The kinds Python reports as a ``TypeError`` (wrong types, arguments or bound values); the others
# are a ``SyntaxError``.
_TYPE_ERROR_KINDS = frozenset(ErrorKind(display) for display, is_type in _core.ERROR_KINDS if is_type)


class FilterError(Exception):
    """Base of every ndjit error."""


class SourceUnavailable(FilterError, TypeError):
    """A function's source cannot be found: defined at the interactive prompt, by ``exec`` without
    a ``linecache`` entry, in C ... Pass the source as a string instead."""


class BindingError(FilterError, TypeError):
    """A value the filter reads from outside (an argument of ``extra_arguments`` or
    ``extra_keywords``, a default, a closure variable or a global) that ndjit cannot bind: of a
    type it does not model, or past what it holds exactly. A ``TypeError``, as Python's own for a
    wrong argument."""


class SourceMismatch(SourceUnavailable):
    """The source found for a function is not the program Python runs (its file changed after the
    module was imported): reload the module."""


class _Positioned:
    """What compile and run-time errors share: a position in the compiled text (``lineno``,
    ``col``, ``end_lineno`` and an end column) that moves into the user's file."""

    def _locate(self, filename: Optional[str], line_offset: int, col_offset: int, indent: int = 0) -> None:
        """Moves the position from the compiled text to the user's file and quotes the file's
        line: `col_offset` shifts the first line, `indent` every line."""
        first = col_offset if self.lineno == 1 else 0
        self.col += first + indent
        if self.end_lineno == self.lineno:
            self._shift_end(first + indent)
        self.lineno += line_offset
        if self.end_lineno is not None:
            self.end_lineno += line_offset
        self.filename = filename
        line = linecache.getline(filename, self.lineno).rstrip("\n") if filename else ""
        if line:
            self._quote(line)


class FilterCompileError(FilterError, _Positioned):
    """A program ndjit cannot compile. ``lineno``/``col`` are 1-based, in the user's file.
    ``error_kind`` is its :class:`ErrorKind` (``kind`` that kind's display name), and ``name`` the
    unknown name for an ``ErrorKind.UNKNOWN_NAME`` error about a plain name (else ``None``)."""

    error_kind: ErrorKind
    kind: str
    hint: Optional[str]
    rendered: str
    name: Optional[str]

    def _describe(self, kind, hint, rendered, name) -> None:
        """Sets the fields both subclasses share; `kind` is an ErrorKind or its display name."""
        self.error_kind = ErrorKind(kind)
        self.kind, self.hint, self.rendered, self.name = self.error_kind.value, hint, rendered, name

    def __reduce__(self):
        # Pickled as it stands, located in the user's file (SyntaxError keeps its position in
        # slots that the default pickling of exceptions does not carry).
        end_col = self.end_offset if isinstance(self, SyntaxError) else self.end_col
        args = (self.kind, self.msg, self.lineno, self.col, self.end_lineno, end_col, self.text, self.hint,
                self.rendered, self.name)
        return _rebuilt, (type(self), args, self.filename, dict(self.__dict__))

    def _quote(self, line: str) -> None:
        self.text = line


def _rebuilt(cls, args, filename, state):
    """A compile error from its pickled fields."""
    e = cls(*args)
    e.__dict__.update(state)
    e.filename = filename
    return e


class FilterSyntaxError(FilterCompileError, SyntaxError):
    """Source that is not in ndjit's Python subset (or not Python at all)."""

    def __init__(self, kind, message, line, col, end_line, end_col, text, hint, rendered, name=None):
        SyntaxError.__init__(self, message, ("<filter>", line, col, text, end_line, end_col))
        self._describe(kind, hint, rendered, name)
        # An uncaught SyntaxError's traceback shows its `msg`, not `str()`: the hint goes in a
        # note, which tracebacks print (Python 3.11 and later).
        if hint and hasattr(self, "add_note"):
            self.add_note(f"help: {hint}")

    @property
    def col(self) -> int:
        return self.offset

    @col.setter
    def col(self, value: int) -> None:
        self.offset = value

    def _shift_end(self, by: int) -> None:
        if self.end_offset is not None:
            self.end_offset += by

    def __str__(self) -> str:
        where = f"{self.filename or '<filter>'}:{self.lineno}:{self.offset}"
        text = f"{self.kind} at {where}: {self.msg}"
        if self.text:
            caret = " " * (self.offset - 1) + "^" * max(1, (self.end_offset or self.offset + 1) - self.offset if self.end_lineno == self.lineno else 1)
            text += f"\n    {self.text}\n    {caret}"
        if self.hint:
            text += f"\nhelp: {self.hint}"
        return text


class FilterTypeError(FilterCompileError, TypeError):
    """A type, arity or binding problem in a filter program."""

    def __init__(self, kind, message, line, col, end_line, end_col, text, hint, rendered, name=None):
        TypeError.__init__(self, message)
        self._describe(kind, hint, rendered, name)
        self.msg = message
        self.lineno, self.col, self.end_lineno, self.end_col, self.text = line, col, end_line, end_col, text
        self.filename = None

    def __str__(self) -> str:
        where = f"{self.filename or '<filter>'}:{self.lineno}:{self.col}"
        text = f"{self.kind} at {where}: {self.msg}"
        if self.text:
            width = (self.end_col - self.col) if self.end_line_same() else 1
            text += f"\n    {self.text}\n    {' ' * (self.col - 1)}{'^' * max(1, width)}"
        if self.hint:
            text += f"\nhelp: {self.hint}"
        return text

    def end_line_same(self) -> bool:
        return self.end_lineno == self.lineno

    def _shift_end(self, by: int) -> None:
        self.end_col += by


class FilterRuntimeError(FilterError, _Positioned):
    """A failure while a compiled filter ran. ``filename``/``lineno``/``col`` locate it in the
    user's file, as for compile errors (``filename`` is ``None`` for source given as text, whose
    lines are the filter's own); ``snippet`` quotes the line."""

    def __init__(self, message, line, col, snippet, end_line=None, end_col=None):
        super().__init__(message)
        self.msg, self.lineno, self.col, self.snippet = message, line, col, snippet
        self.end_lineno, self.end_col = end_line, end_col
        self.filename: Optional[str] = None

    def __reduce__(self):
        # Pickled with its position (a Dask worker's failure reaches the client this way).
        args = (self.msg, self.lineno, self.col, self.snippet, self.end_lineno, self.end_col)
        return type(self), args, self.__dict__

    def _shift_end(self, by: int) -> None:
        if self.end_col is not None:
            self.end_col += by

    def _quote(self, line: str) -> None:
        width = self.end_col - self.col if self.end_lineno == self.lineno and self.end_col else 1
        gutter = " " * len(str(self.lineno))
        self.snippet = f"{self.lineno} | {line}\n{gutter} | {' ' * (self.col - 1)}{'^' * max(1, width)}"

    def __str__(self) -> str:
        where = f"{self.filename}:{self.lineno}:{self.col}" if self.filename else f"filter line {self.lineno}, column {self.col}"
        text = f"{self.msg} ({where})"
        if self.snippet:
            text += "\n" + self.snippet
        return text


# Run-time failures, each also the exception the user's Python raises in that situation: one class
# per exception the core names (``Filter<Name>``, but for the two below).
_RUNTIME_CLASS_NAMES = {
    "TypeError": "FilterRuntimeTypeError",  # `FilterTypeError` is the compile-time one
    "RuntimeError": "FilterInternalError",
}
# The exceptions that are not builtins: NumPy's and the statistics module's.
_LIBRARY_EXCEPTIONS = {"AxisError": _AxisError, "StatisticsError": _StatisticsError}
_RUNTIME = {
    base: type(_RUNTIME_CLASS_NAMES.get(base, "Filter" + base),
               (FilterRuntimeError, _LIBRARY_EXCEPTIONS.get(base) or getattr(_builtins, base)),
               {"__module__": __name__})
    for base in _core.EXCEPTIONS
}
globals().update({cls.__name__: cls for cls in _RUNTIME.values()})
__all__ += [cls.__name__ for cls in _RUNTIME.values()]
# The run-time TypeError's earlier name, from when only a path returning None raised it.
FilterReturnTypeError = _RUNTIME["TypeError"]
__all__ += ["FilterReturnTypeError"]


class CudaError(FilterError, RuntimeError):
    """The GPU backend failed: a CUDA driver call, or the driver rejected the generated PTX
    (ptxas's own log is in the message)."""


class CudaUnavailableError(CudaError):
    """``target="cuda"`` without a usable NVIDIA driver or GPU. The CPU paths are unaffected."""


def compile_error(kind, message, line, col, end_line, end_col, text, hint, rendered, name):
    """Called by the Rust layer: the exception for a compile error of `kind` (a display name)."""
    cls = FilterTypeError if ErrorKind(kind) in _TYPE_ERROR_KINDS else FilterSyntaxError
    return cls(kind, message, line, col, end_line, end_col, text, hint, rendered, name)


def runtime_error(exception, message, line, col, snippet, end_line=None, end_col=None):
    """Called by the Rust layer: the exception for a run-time failure (`exception` is one of
    ``_core.EXCEPTIONS``), at the filter text's own lines until it is located in the file."""
    return _RUNTIME[exception](message, line, col, snippet, end_line, end_col)


def deferred(exc: BaseException) -> type:
    """Called by the Rust layer, for a failure in a callback whose caller has no error channel:
    the class it schedules with ``PyThreadState_SetAsyncExc``, so that ``exc`` itself is raised in
    this thread as soon as it runs Python code again.

    quad's integrand returns a bare double and scipy does not look for an exception after the
    integration: one left set when quad's C function returns becomes a ``SystemError``, with the
    real exception only in ``__cause__``. An asynchronous exception is raised where that function
    returns to Python instead. It names a class, which Python instantiates when it raises it: this
    subclass's ``__new__`` hands back ``exc`` (message, location and exact type), and clears
    ``pending``, which the Rust layer reads to know the exception has been raised."""

    def __new__(cls, *args):
        cls.pending = False
        return exc

    return type(type(exc).__name__, (type(exc),), {"__new__": __new__, "__module__": __name__, "pending": True})
