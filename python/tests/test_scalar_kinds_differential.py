"""A differential grid: NumPy's functions and reductions, and Python's builtins, over Python
numbers, NumPy scalars, bools and small arrays, each result then used where the kinds differ
(`-r`, `r + r`, `1.0 / r`, `r // 0`, `r * 3`). The oracle is CPython + NumPy running the same
expression. Every source must either be refused at compile time, or give CPython's value (bit
for bit, the sign of zero included) or raise CPython's exception; the only other outcome allowed
is a documented refusal at run time (ints past 2**53 ranked as doubles; NumPy's choice between
two zeros).

A hunt over this grid (stop 48) found the extremes of bools taken as ints, `np.nanmax` and
`np.sign` of ints as floats, `np.abs`/`np.add` of Python bools as Python's ints, Python's
`any()` as a NumPy bool, NumPy's functions of Python numbers raising Python's errors, a NumPy
bool or a number (`b or 2`) taken as a number, and Python's `~True` as `False`."""
import itertools
import warnings

import numpy as np
import pytest

import ndjit

X = np.array([0.0, 1.0, -3.0, 2.5, np.nan, np.inf, -0.0, 1e300, 7.0])

SCALARS = ["True", "False", "0", "-3", "2**62", "0.0", "-0.0", "1.5", "x[0]", "x[2]", "x[4]",
           "x[6]", "(x[1] > 0)", "(x[0] > 0)", "x.astype(int)[2]", "x.astype(int)[0]", "len(x)",
           "(len(x) > 3)", "float(x[3])"]
ARRAYS = ["(x > 0)", "x.astype(int)", "x[:3]", "np.array([True, False])", "np.array([1, 2])",
          "np.array([0.0, -0.0])", "x[:0]"]
# One of two values (`or`, `and`, a conditional, Python's `max`), and the unary operators.
CHOICES = ["({a}) or 2", "({a}) and 2.5", "({a}) if len(x) > 3 else 0", "max({a}, 0)",
           "min(0.5, {a})", "~({a})", "+({a})"]
USES = ["{r}", "-{r}", "{r} + {r}", "1.0 / {r}", "{r} // 0", "{r} * 3", "1 / {r}"]

BINARY = ["np.add", "np.subtract", "np.multiply", "np.divide", "np.floor_divide",
          "np.remainder", "np.maximum", "np.minimum", "np.fmax", "np.fmin", "np.logical_and"]
UNARY = ["np.abs", "np.negative", "np.square", "np.sign", "np.floor", "np.rint", "np.sqrt",
         "np.round", "np.reciprocal", "np.logical_not"]
REDUCTIONS = ["np.sum", "np.prod", "np.min", "np.max", "np.nanmax", "np.any", "np.all",
              "np.median", "np.ptp", "np.count_nonzero", "np.argmax", "sum", "max", "min",
              "any", "all", "len"]

# Run-time refusals the README documents (*Known deviations*), with their reasons.
DOCUMENTED = ("up to 2**53", "beyond 2**53", "exceeds 64 bits", "both 0.0 and -0.0",
              "sum() of an empty iterable")


def sources():
    for f, (a, b) in itertools.product(BINARY, itertools.product(SCALARS[:12], SCALARS[8:])):
        yield from (u.format(r=f"{f}({a}, {b})") for u in USES)
    for f, a in itertools.product(UNARY, SCALARS):
        yield from (u.format(r=f"{f}({a})") for u in USES)
    for f, a in itertools.product(REDUCTIONS, ARRAYS):
        yield from (u.format(r=f"{f}({a})") for u in USES)
    yield from CHOSEN


CHOSEN = [u.format(r=f"({c.format(a=a)})")
          for c, a, u in itertools.product(CHOICES, SCALARS, USES)]


def outcome(f):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            v = f()
    except Exception as e:  # noqa: BLE001 - the exception's class is the outcome
        # ndjit's run-time TypeError is FilterRuntimeTypeError (a TypeError).
        return ("raise", type(e).__name__.replace("RuntimeTypeError", "TypeError"), str(e))
    return ("value", float(v))


def check(src):
    """None where ndjit agrees with CPython or refuses; else what differs."""
    want = outcome(lambda: eval("lambda x: " + src)(X))
    try:
        f = ndjit.jit_filter(src)
    except (ndjit.FilterSyntaxError, ndjit.FilterTypeError):
        return None
    got = outcome(lambda: f.evaluate(X))
    if got[0] == "raise" and any(d in got[2] for d in DOCUMENTED):
        return None
    if got[0] == "raise":
        got = ("raise", got[1].replace("Filter", ""), got[2])
    if want[0] != got[0]:
        return f"{src}: CPython {want[:2]}, ndjit {got[:2]}"
    if want[0] == "raise":
        return None if want[1] == got[1] or (want[1], got[1]) in EQUIVALENT else \
            f"{src}: CPython raises {want[1]}, ndjit {got[1]}"
    a, b = want[1], got[1]
    if (np.isnan(a) and np.isnan(b)) or (a == b and np.signbit(a) == np.signbit(b)):
        return None
    return f"{src}: CPython {a!r}, ndjit {b!r}"


# NumPy's UFuncTypeError is a TypeError; ndjit raises TypeError.
EQUIVALENT = {("UFuncTypeError", "TypeError")}

SOURCES = list(sources())


@pytest.mark.parametrize("part", range(4))
def test_results_and_errors_are_cpythons_or_refused(part):
    chunk = SOURCES[part::4]
    differences = [d for d in map(check, chunk) if d]
    assert not differences, "\n".join(differences[:20])


def test_a_value_that_is_an_int_or_a_float_keeps_the_ints_zero():
    # An int chosen beside a float (`max(v, 0)`, `v or 2`, `0 if c else v`) stays an int: these
    # gave -0.0 where Python's `-0` is 0, and NaN or inf where NumPy's int `// 0` is 0. They
    # compile, and the grid's check compares them with CPython.
    for src in ["-(max(x[2], 0))", "-(min(0.5, 0))", "(max(x[2], 0)) * 3",
                "-((x.astype(int)[0]) if len(x) > 3 else 0)",
                "((x.astype(int)[0]) if len(x) > 3 else 0) // 0"]:
        assert src in CHOSEN, src
        ndjit.jit_filter(src)
        assert check(src) is None, check(src)


def test_the_grid_holds_the_cases_that_were_wrong():
    # Sources the hunt found wrong or falsely raising are in the grid. These compile, so the
    # check above compares their results with CPython's ...
    for src in ["1.0 / any((x > 0))", "np.divide(0.0, x[0])", "np.sign(-3) // 0",
                "np.add(True, (x[1] > 0))", "np.multiply(2**62, len(x))", "np.max((x > 0)) * 3"]:
        assert src in SOURCES, src
        ndjit.jit_filter(src)
    # ... and these, which gave 2, -1, 2, 0 and 2, are now refused (two NumPy bools added;
    # NumPy's boolean negative; a NumPy bool or a number; Python's `~` of a bool; NumPy's
    # positive of a bool).
    for src in ["np.max((x > 0)) + np.max((x > 0))", "-np.maximum(True, (x[0] > 0))",
                "(((x[1] > 0)) or 2) + (((x[1] > 0)) or 2)", "(~(True))",
                "(+((x[1] > 0))) * 3"]:
        assert src in SOURCES, src
        with pytest.raises((ndjit.FilterSyntaxError, ndjit.FilterTypeError)):
            ndjit.jit_filter(src)
