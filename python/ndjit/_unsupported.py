"""The error for a name the filter reads that ndjit cannot bind (a module other than NumPy and
math, a dict, an object without numeric attributes), in the user's file, saying what to write."""
from __future__ import annotations

import re
from typing import Optional

from ._errors import FilterCompileError, FilterTypeError

__all__ = ["unbindable"]

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
}


def unbindable(e: FilterCompileError, name: str, type_name: str) -> FilterTypeError:
    """The error replacing `e` ("name is not defined") for `name`, a `type_name` ndjit cannot bind."""
    used = _dotted_at(e.text, e.col) or name
    if type_name == "module":
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
