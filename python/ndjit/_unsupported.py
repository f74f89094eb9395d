"""The error for a name the filter reads that ndjit cannot bind (a module other than NumPy and
math, a dict, an object without numeric attributes), in the user's file, saying what to write."""
from __future__ import annotations

import re
import sysconfig
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from ._errors import FilterCompileError, FilterTypeError

__all__ = ["LibraryFunction", "OtherCallable", "library_argument", "library_function", "unbindable"]

# Functions of other libraries that callbacks call, and the closest thing ndjit compiles.
_CLOSEST = {
    "skew": "np.mean(((x - x.mean()) / x.std()) ** 3)",
    "kurtosis": "np.mean(((x - x.mean()) / x.std()) ** 4) - 3.0",
    "mode": "np.bincount(x.astype(int)).argmax()",
    "entropy": "-np.sum(p * np.log(p)) with p = x[x > 0] / x.sum()",
    "variation": "np.std(x) / np.mean(x)",
    "iqr": "np.percentile(x, 75) - np.percentile(x, 25)",
    "gmean": "np.exp(np.mean(np.log(x)))",
    "hmean": "len(x) / np.sum(1.0 / x)",
    "median_abs_deviation": "np.median(np.abs(x - np.median(x)))",
    "tmean": "x[(x >= lo) & (x <= hi)].mean()",
    "sem": "np.std(x, ddof=1) / np.sqrt(len(x))",
    "nanmean": "np.nanmean(x)",
    "median": "np.median(x)",
    "mean": "np.mean(x)",
    "pstdev": "np.std(x)",
    "stdev": "np.std(x, ddof=1)",
    "pvariance": "np.var(x)",
    "variance": "np.var(x, ddof=1)",
}


@dataclass(frozen=True)
class OtherCallable:
    """A callable that is not a Python function (its type's full name): ndjit inlines only
    functions it can read the source of."""

    type_name: str


@dataclass(frozen=True)
class LibraryFunction:
    """What a name the filter calls is, where it is a library's Python function (`from
    scipy.stats import kurtosis`): ndjit inlines the program's own functions, not libraries'."""

    origin: str  # `scipy.stats.kurtosis`

    def __str__(self) -> str:
        return f"function of a library (`{self.origin}`)"


def _library_roots() -> tuple:
    """Where installed packages and the standard library live."""
    paths = sysconfig.get_paths()
    return tuple({Path(paths[k]).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths})


_ROOTS = _library_roots()


def library_function(func: types.FunctionType) -> Optional[LibraryFunction]:
    """`func` as a library's function (the standard library's, or an installed package's, like
    `statistics.median` or `scipy.stats.iqr`), or None for the user's own."""
    module = getattr(func, "__module__", None) or ""
    filename = getattr(func.__code__, "co_filename", "")
    try:
        path = Path(filename).resolve()
        installed = any(root in path.parents for root in _ROOTS)
    except (OSError, ValueError):
        installed = False
    if installed:  # by where its file is: a project's own `code/` package is no stdlib module
        return LibraryFunction(f"{module}.{func.__qualname__}" if module else func.__qualname__)
    return None


def _library_message(used: str, library: LibraryFunction) -> tuple:
    closest = _CLOSEST.get(library.origin.rsplit(".", 1)[-1])
    message = (f"`{used}` is `{library.origin}`, a library's function: ndjit compiles NumPy and math "
               "functions, statistics' medians and the program's own Python functions, not other libraries'")
    hint = f"the closest supported code is `{closest}`" if closest else "write it with NumPy or math functions"
    return message, hint


def library_argument(name: str, library: LibraryFunction, func: types.FunctionType) -> FilterTypeError:
    """The error for a library's function passed as the value of `func`'s parameter `name`."""
    message, hint = _library_message(name, library)
    line = func.__code__.co_firstlineno
    err = FilterTypeError("binding error", message, line, 1, line, 1, None, hint, "")
    err.filename = func.__code__.co_filename
    return err


def unbindable(e: FilterCompileError, name: str,
               type_name: Union[str, LibraryFunction, OtherCallable]) -> FilterTypeError:
    """The error replacing `e` ("name is not defined") for `name`, a `type_name` ndjit cannot bind."""
    used = _dotted_at(e.text, e.col) or name
    if isinstance(type_name, LibraryFunction):
        message, hint = _library_message(used, type_name)
    elif isinstance(type_name, OtherCallable):
        message = (f"`{name}` is a {type_name.type_name}, not a Python function: ndjit inlines the functions "
                   "a filter calls from their source (a def or a lambda)")
        hint = "call a plain function (with the values a partial would add as arguments)"
    elif type_name == "module":
        function = used.rsplit(".", 1)[-1]
        closest = _CLOSEST.get(function)
        message = f"`{used}` is not supported: ndjit compiles NumPy and math functions, not the `{name}` module"
        hint = f"the closest supported code is `{closest}`" if closest else "write it with NumPy or math functions"
    else:
        message = (f"`{name}` is a {type_name}; ndjit can bind numbers, strings, NumPy scalars, 1-D numeric "
                   "arrays, tuples of numbers, and such attributes of classes and instances")
        hint = "pass the value the filter needs as a number or array"
    err = FilterTypeError("binding error", message, e.lineno, e.col, e.lineno, e.col + len(used),
                          getattr(e, "text", None), hint, "")
    err.filename = e.filename
    return err


def _dotted_at(text: Optional[str], col: int) -> Optional[str]:
    """The dotted name (`scipy.stats.skew`) starting at 1-based column `col` of `text`."""
    if not text:
        return None
    m = re.match(r"[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*", text[col - 1:])
    return re.sub(r"\s+", "", m.group(0)) if m else None
