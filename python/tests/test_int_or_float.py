"""A value that is an int on one path and a float on another (`r = 0`, then `r = v` in a loop)
is an int where the int is chosen: `-r` of the int 0 is 0 (a float's is -0.0), a NumPy int's
`r // 0` is 0 (a float's NaN), `r * r` exact past 2**53. ndjit holds such a value in a double
with a run-time flag "holds an int" (`src/lower/int_or_float.rs`): Python's operators branch on
it, and consumers that cannot branch refuse it at compile time.

The oracle is CPython + NumPy running the same function: every program either gives CPython's
value (bit for bit, the sign of zero included) or raises CPython's exception, or is refused
(at compile time, or at run time with the documented "exact only up to 2**53")."""
import itertools
import math
import textwrap

import numpy as np
import pytest

import ndjit

X = np.array([0.0, 1.0, -3.0, 2.5, np.nan, np.inf, -0.0, 1e300, 7.0])

# Ways a name comes to hold an int on one path and a float on another; `{i}` is the int.
# `{hit}` is a value of X (the float path is taken) or one absent from it (the int path).
PRODUCERS = [
    "r = {i}\nfor v in x:\n    if v == {hit}:\n        r = v",
    "r = x[2]\nfor v in x:\n    if v == {hit}:\n        r = {i}",
    "if {hit} in (1.0, 7.0):\n    r = x[3]\nelse:\n    r = {i}",
    "r = {i} if {hit} == 12345 else x[2]",
    "r = x[0] if {hit} == 1.0 else {i}",
    "r = max(x[2], {i}) if {hit} == 12345 else x[8]",
    "r = {i}\nr2 = r\nif {hit} == 7.0:\n    r2 = x[1]\nr = r2",
]
INTS = ["0", "-3", "np.sum(x > 1e308 * 10)", "np.int64(-2)", "2**60", "len(x) - 9"]
HITS = ["7.0", "12345"]
USES = [
    "-r", "r * -2", "r // -2", "r % -2", "r // 0", "r % 0", "-abs(r)", "r - r", "r * r",
    "-(r + 0)", "1 / r", "r ** 2", "-(r ** 2)", "-float(r)", "-int(r)", "-max(r, -5)",
    "-round(r)", "np.sqrt(r)", "-(+r)", "~r", "r & 1", "np.negative(r)", "-neg(r)",
    "-(r if x[1] > 0 else 1.5)", "-sum([r])", "-t(r)[0]", "r * 0.0", "-(r * 1)", "r == 0",
    "-(r or 0)", "-(r and 3)", "-min(r, 4)", "-pow(r, 1)", "np.exp(r) - 1",
    "r * 2**60", "-(r // 1)", "r / 3", "-(r - r)", "np.sign(-r)", "-np.maximum(r, -1)",
    "-np.round(r, 1)", "round(-r, 2)", "-np.floor(r)", "-np.clip(r, -1, 1)", "np.square(r) * -1",
    "-np.where(r > 0, r, 0)", "np.fmod(r, -3)", "np.remainder(r, -3)", "np.floor_divide(r, 0)",
]
HELPERS = {"neg(": "def neg(a):\n    return -a\n\n", "t(": "def t(a):\n    return (a, 1.5)\n\n"}

# Run-time refusals the README documents (*Known deviations*).
DOCUMENTED = ("up to 2**53", "exceeds 2**53", "exceeds 64 bits", "both 0.0 and -0.0",
              "rows without elements", "the same object as an item")


def program(producer, i, hit, use):
    body = producer.format(i=i, hit=hit) + f"\nreturn {use}"
    helpers = "".join(h for call, h in HELPERS.items() if f"-{call}" in use)
    return helpers + "def f(x):\n" + textwrap.indent(body, "    ") + "\n"


SOURCES = [program(p, i, h, u) for p, i, h, u in itertools.product(PRODUCERS, INTS, HITS, USES)]


from test_scalar_kinds_differential import outcome  # noqa: E402 - the same oracle


def check(src):
    """"refused" where ndjit refuses, None where it agrees with CPython; else what differs."""
    ns = {"np": np, "math": math}
    exec(src, ns)
    want = outcome(lambda: ns["f"](X))
    try:
        f = ndjit.jit_filter(src)
    except (ndjit.FilterSyntaxError, ndjit.FilterTypeError):
        return "refused"
    got = outcome(lambda: f.evaluate(X))
    if got[0] == "raise" and any(d in got[2] for d in DOCUMENTED):
        return "refused"
    if got[0] == "raise":
        got = ("raise", got[1].replace("Filter", ""), got[2])
    if want[0] != got[0]:
        return f"CPython {want[:2]}, ndjit {got[:2]}"
    if want[0] == "raise":
        same = want[1] == got[1] or {want[1], got[1]} == {"UFuncTypeError", "TypeError"}
        return None if same else f"CPython raises {want[1]}, ndjit {got[1]}"
    a, b = want[1], got[1]
    if (np.isnan(a) and np.isnan(b)) or (a == b and np.signbit(a) == np.signbit(b)):
        return None
    return f"CPython {a!r}, ndjit {b!r}"


@pytest.mark.parametrize("part", range(4))
def test_ints_or_floats_compute_as_cpython_or_are_refused(part):
    results = {src: check(src) for src in SOURCES[part::4]}
    wrong = [f"{src}\n  -> {r}" for src, r in results.items() if r not in (None, "refused")]
    assert not wrong, "\n".join(wrong[:10])
    # Most of the grid compiles and is compared, not refused.
    compared = sum(r is None for r in results.values())
    assert compared > 0.75 * len(results), compared


# The uses Python's operators and conversions take: never refused, whatever the producer.
EXACT_USES = ["-r", "r * -2", "r // -2", "r % -2", "-abs(r)", "r * r", "-(r ** 2)", "-float(r)",
              "-max(r, -5)", "-(+r)", "-neg(r)", "-t(r)[0]", "-(r or 0)", "-pow(r, 1)",
              "np.negative(r)", "np.sign(-r)", "-np.maximum(r, -1)", "round(-r, 2)"]


@pytest.mark.parametrize("use", EXACT_USES)
def test_operators_on_an_int_or_a_float_compile_and_are_exact(use):
    for p, i, h in itertools.product(PRODUCERS, INTS[:3], HITS):
        src = program(p, i, h, use)
        assert check(src) is None, src


def test_the_int_zero_negated_is_zero_and_the_float_zero_negative_zero():
    f = ndjit.jit_filter(program(PRODUCERS[0], "0", "{hit}", "-r").replace("{hit}", "x[1]"))
    # x[1] is never equal to another element but itself: r is the float x[1] when it occurs.
    assert np.signbit(f.evaluate(np.array([0.0, -0.0]))) == np.signbit(-(-0.0))
    g = ndjit.jit_filter(program(PRODUCERS[0], "0", "12345", "-r"))
    assert not np.signbit(g.evaluate(np.array([1.0, 2.0])))      # the int 0: 0, not -0.0
    assert np.signbit(g.evaluate(np.array([0.0, 12345.0]))) == np.signbit(-12345.0)
    h = ndjit.jit_filter("def f(x):\n    r = np.sum(x > 5)\n    for v in x:\n        if v < 0:\n"
                         "            r = v\n    return r // 0")
    assert h.evaluate(np.array([1.0, 7.0])) == 0                 # NumPy's int // 0
    assert h.evaluate(np.array([1.0, -7.0])) == np.float64(-7.0) // 0   # NumPy's float: -inf


@pytest.mark.parametrize("use, why", [
    ("-np.array([r, 1])[0]", "an item of a sequence"),
    ("np.sum(np.maximum(r, x[:2]))", "passed to np.maximum() with an array"),
    ("-[r + 0 for v in x][0]", "an element of a list"),
    ("np.std(np.array([0 if v < 0 else v for v in x]))", "an element of a list"),
    ("np.sum(r * x.astype(int))", "with an int array"),
])
def test_consumers_that_cannot_branch_refuse_it(use, why):
    with pytest.raises((ndjit.FilterSyntaxError, ndjit.FilterTypeError),
                       match="int on one path and a float") as e:
        # The int is a NumPy int, as the loop's floats are NumPy's: only its kind is in doubt.
        ndjit.jit_filter(program(PRODUCERS[0], "np.int64(0)", "12345", use))
    assert why in str(e.value)


def test_an_int_a_double_cannot_hold_raises_where_it_is_stored():
    f = ndjit.jit_filter(program(PRODUCERS[3], "2**53 + 1", "12345", "r - 2**53"))
    with pytest.raises(OverflowError, match="exact only up to 2\\*\\*53"):
        f.evaluate(X)
    g = ndjit.jit_filter(program(PRODUCERS[3], "2**53", "12345", "r - 2**53"))
    assert g.evaluate(X) == 0


@pytest.mark.parametrize("src", [
    "def f(x):\n    k = len(x) - 8\n    return -(0 ** k)",
    "def f(x):\n    k = int(x[1])\n    return -pow(0, k)",
    "def f(x):\n    k = len(x) - 10\n    return -(0 ** k)",          # raises: 0 to a negative power
    "def f(x):\n    k = len(x) - 11\n    return 2 ** k",             # a float: 0.25
    "def f(x):\n    k = len(x) - 8\n    return (3 ** k) // 0",      # an int: raises
])
def test_an_int_to_a_computed_power_is_an_int_for_exponents_from_zero(src):
    # Python's int ** int is an int for an exponent >= 0 (`-(0 ** 1)` is 0, not -0.0) and a
    # float for a negative one; the exponent is known only at run time.
    assert check(src) is None, check(src)


@pytest.mark.parametrize("src", [
    "def f(x):\n    r = False\n    if x[0] > 5:\n        r = x[1]\n    return np.negative(r)",
    "def f(x):\n    r = 0\n    if x[0] > 5:\n        r = True\n    return np.add(r, r)",
    "def f(x):\n    r = True if x[0] > 5 else 2\n    return np.add(r, r)",
    "def f(x):\n    r = x[0] if x[1] > 0 else False\n    return -r",
])
def test_a_bool_on_one_path_and_a_number_on_another_is_refused(src):
    # Python's bools are ints to Python's operators but bools to NumPy's functions
    # (`np.negative(False)` raises, `np.add(True, True)` is True): one IR type cannot hold both.
    with pytest.raises((ndjit.FilterSyntaxError, ndjit.FilterTypeError),
                       match="either a bool or a number"):
        ndjit.jit_filter(src)


def compare(src, window):
    """check() on another window: None, "refused", or what differs."""
    global X
    saved, X = X, np.array(window, dtype=float)
    try:
        return check(src)
    finally:
        X = saved


# Found by a review of the fix (stop 49), each silently wrong before: now CPython's result, or
# refused (at compile time, or at run time with a documented message).
REVIEWED = [
    # sequences holding ints and floats, read by index or ranked
    ("def f(x):\n    t = (0, 1.5)\n    return -t[len(x) % 2]\n", [1.0, 2.0]),
    ("def f(x):\n    return -min([0, 1.5])\n", [1.0]),
    ("def f(x):\n    return -sorted([1.5, 0])[0]\n", [1.0]),
    ("def f(x):\n    l = [float(v) for v in x]\n    l.append(0)\n    return -l[-1]\n", [1.0]),
    ("def f(x):\n    r = (np.sum(x > 100), x[0])[len(x) % 2]\n    return r // 0\n", [1.0, 2.0]),
    ("def f(x):\n    return min((np.int64(0), x[0])) % 0\n", [1.0]),
    # an array variable holding an int array and a float array
    ("def f(x):\n    a = np.arange(2)\n    if x[0] > 0:\n        a = x[:2] * 0\n    return a[0] // 0\n",
     [0.0, 1.0]),
    ("def f(x):\n    a = np.arange(3)\n    a *= 1.5\n    return a[1]\n", [0.0]),
    # flags and provenance copied when the value is, not read later
    ("def f(x):\n    r = x[-1] if x[0] >= 0 else 0\n    r, s = 0.5, abs(r)\n    return -s\n", [-1.0, 0.0]),
    ("def f(x):\n    r = x[-1] if x[0] >= 0 else 0\n    r, s = 1.5, -r\n    return s // 0\n", [1.0, 7.0]),
    ("def f(x):\n    r = x[-1] if x[0] >= 0 else 0.0\n    r, s = 1.5, r + 0.0\n    return s / 0\n",
     [1.0, 7.0]),
    # np.fabs and math.fabs are floats
    ("def f(x):\n    r = 0\n    for v in x:\n        if v > 100:\n            r = v\n    return -np.fabs(r)\n",
     [1.0]),
    ("def f(x):\n    r = x[0] if x[0] > 100 else 3\n    return np.fabs(r) // 0\n", [1.0]),
    # a Python int or a NumPy int by path, to a power
    ("def f(x):\n    r = np.int64(int(x[1])) if x[0] < 0 else int(x[1])\n    return 2 ** r\n",
     [-1.0, -1.0]),
    ("def f(x):\n    r = np.int64(int(x[1])) if x[0] < 0 else x[1]\n    return math.trunc(r)\n",
     [-1.0, 2.0]),
    # comparisons of a NumPy int held as a float, past 2**53
    ("def f(x):\n    r = np.int64(int(x[1])) if x[0] < 0 else x[1]\n    return r == 2**53 + 1\n",
     [-1.0, 2.0**53]),
    ("def f(x):\n    r = int(x[1]) if x[0] < 0 else x[1]\n    return max(r, 2**53 + 1) - r\n",
     [-1.0, 2.0**53]),
    # NumPy functions whose result is an int or a bool either way
    ("def f(x):\n    r = 0\n    for v in x:\n        if v > 2:\n            r = v\n    return np.count_nonzero(r) // 0\n",
     [2.5, -1.0]),
    ("def f(x):\n    r = 0\n    for v in x:\n        if v > 2:\n            r = v\n    return -np.argmax(r)\n",
     [2.5, -1.0]),
    # `in` gives a Python bool (found by a second review)
    ("def f(x):\n    res = x[0] in (0, 7)\n    return res % 0\n", [0.0, 1.0]),
    ("def f(x):\n    res = x[0] not in x[1:]\n    return 1 // res\n", [0.0, 0.0]),
    # np.size() is a Python int; round(n, d) of a NumPy int a NumPy int
    ("def f(x):\n    return np.size(x[0]) // 0\n", [1.0]),
    ("def f(x):\n    return round(np.sum(x > 0), 0) // 0\n", [1.0]),
]


@pytest.mark.parametrize("src, window", REVIEWED)
def test_cases_a_review_found_compute_as_cpython_or_are_refused(src, window):
    assert compare(src, window) in (None, "refused")


def test_the_reviewed_cases_that_compile_are_compared():
    # Not all of them are refused: the flags, comparisons, powers and kinds compute.
    assert sum(compare(src, w) is None for src, w in REVIEWED) >= 9


# Lists of ints and floats read only by NumPy's float statistics (src/lower/float_statistics.rs):
# NumPy's int64 array gives the float64 array's statistic, so they compile.
STAT_LISTS = ["[0 if np.isnan(v) else v for v in x]", "[max(v, 0) for v in x]",
              "[v if v > 1 else -3 for v in x if v != 2.5]"]
STAT_USES = ["np.mean({l})", "np.var({l})", "np.std({l}, ddof=1)", "np.median({l})",
             "np.nanmean({l})", "np.nanvar({l})", "np.nanstd({l})", "np.nanmedian({l})",
             "len({l}) * 1.5"]
STAT_BODIES = ([f"return {u}" for u in STAT_USES]
               + ["vals = {l}\nreturn np.median(vals) + len(vals)",
                  "vals = {l}\nw = vals\nreturn np.mean(w) if vals else -1.0"])
STAT_WINDOWS = [X, np.full(4, np.nan), np.array([7.0, -1.0, 2.0]), np.array([-1.0, -2.0])]


@pytest.mark.parametrize("body", STAT_BODIES)
def test_lists_of_ints_and_floats_read_by_float_statistics_compile_and_are_exact(body):
    for lst, window in itertools.product(STAT_LISTS, STAT_WINDOWS):
        src = "def f(x):\n" + textwrap.indent(body.format(l=lst), "    ") + "\n"
        assert compare(src, list(window)) is None, (src, window)


@pytest.mark.parametrize("use", [
    "np.sum({l})", "np.max({l})", "np.mean({l}, axis=0)", "sorted({l})[0]", "{l}[0]",
    "np.mean(np.array({l}))", "np.mean({l} + [1.5])", "np.percentile({l}, 50)",
])
def test_other_readers_of_a_list_of_ints_and_floats_refuse_it(use):
    src = f"def f(x):\n    return {use.format(l=STAT_LISTS[0])}\n"
    with pytest.raises((ndjit.FilterSyntaxError, ndjit.FilterTypeError)):
        ndjit.jit_filter(src)


def test_a_list_of_ints_and_floats_past_numpys_buffer_raises():
    # Past 8192 items NumPy sums an int array's items a buffer at a time: not the float sum.
    f = ndjit.jit_filter("def f(x):\n    return np.mean([0 if np.isnan(v) else v for v in x])\n")
    ok = np.arange(8192.0)
    assert f.evaluate(ok) == np.mean([0 if np.isnan(v) else v for v in ok])
    with pytest.raises(ValueError, match="only up to 8192 items"):
        f.evaluate(np.arange(8193.0))


# Found by a review at stop 50, each silently wrong before; each now compiles and is exact.
REVIEWED_STOP50 = [
    # np.nanvar/np.nanstd of ints are np.var/np.std: past the count, inf (floats' NaN)
    ("def f(x):\n    return np.nanvar(x.astype(int), ddof=12)\n", [1.0, 2.0, 4.0]),
    ("def f(x):\n    return np.nanstd(x > 1.5, ddof=9)\n", [1.0, 2.0, 4.0]),
    ("def f(x):\n    l = [int(v) if v > 0 else v for v in x]\n    return np.var(l, ddof=5)\n",
     [1.0, 2.0, 3.0, 4.5, 9.0]),
    # math.floor/math.ceil of a NumPy int go through a double (np.int64 has no __floor__)
    ("def f(x):\n    return math.floor(np.int64(2**60) + np.sum(x > 0)) - 2**60\n", [1.0]),
    ("def f(x):\n    return math.ceil(np.int64(-2**60) - int(x[0])) + 2**60\n", [3.0]),
    ("def f(x):\n    return math.floor(2**60 + int(x[0])) - 2**60\n", [1.0]),
]


@pytest.mark.parametrize("src, window", REVIEWED_STOP50)
def test_cases_the_stop_50_review_found_are_exact(src, window):
    assert compare(src, window) is None


# A list of ints and floats with nanvar's ddof is refused: its result would depend on the kind.
def test_nanvar_with_ddof_of_a_list_of_ints_and_floats_is_refused():
    src = "def f(x):\n    l = [0 if v > 0 else v for v in x]\n    return np.nanvar(l, ddof=1)\n"
    with pytest.raises(ndjit.FilterSyntaxError, match="int on one path and a float"):
        ndjit.jit_filter(src)


@pytest.mark.parametrize("helper", [
    "def len(l):\n    return np.sum(l) // 0\n\n",
    "def len(l):\n    return -(np.sum(l) * 0)\n\n",
])
def test_a_helper_named_like_a_builtin_is_not_the_builtin(helper):
    # `len` here is the helper: the list reaches np.sum, whose kind depends on the path.
    src = helper + "def f(x):\n    l = [0 if v > 0 else v for v in x]\n    return len(l)\n"
    with pytest.raises(ndjit.FilterSyntaxError, match="int on one path and a float"):
        ndjit.jit_filter(src)


@pytest.mark.parametrize("helper, compiles", [
    ("def m(l):\n    return np.mean(l) + len(l)\n\n", True),
    ("def m(l):\n    return l[0] * -1\n\n", False),
    ("def m(l):\n    return np.sum(l)\n\n", False),
])
def test_a_list_of_ints_and_floats_passed_to_a_helper_goes_where_it_sends_it(helper, compiles):
    src = helper + "def f(x):\n    return m([0 if np.isnan(v) else v for v in x])\n"
    for window in STAT_WINDOWS:
        assert compare(src, list(window)) == (None if compiles else "refused"), (src, window)
