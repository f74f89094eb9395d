"""Stop 55: what four hunts found (realistic callbacks, the other faces, the driver's arguments,
Dask and Zarr) and what the realistic callbacks asked for.

The oracle is CPython + NumPy running the same function (`test_int_or_float.compare`): every
program gives Python's value or exception, or is refused (at compile time, or at run time with a
documented message)."""
import itertools
import math

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from test_int_or_float import compare

NAN = float("nan")
WINDOWS = [[NAN, 1.0, 2.0], [1.0, NAN, 1.0], [3.0, 1.0, 2.0], [2.0, 2.0, -0.0], [0.0, 5.0, 0.0],
           [float(2**53), 1.0, 2.0], [-1.5, 7.0, 7.0], [NAN, NAN, 4.0]]


def body(src):
    return "def f(x):\n    " + src.replace("\n", "\n    ") + "\n"


def agree_or_refuse(programs, windows=WINDOWS, min_compared=0.6):
    results = {(p, tuple(w)): compare(body(p), w) for p in programs for w in windows}
    wrong = [f"{p} on {w}: {r}" for (p, w), r in results.items() if r not in (None, "refused")]
    assert not wrong, "\n".join(wrong[:10])
    compared = sum(r is None for r in results.values())
    assert compared >= min_compared * len(results), (compared, len(results))
    return results


# ---- `in` on a list or tuple: identity before equality -----------------------------------

# Python's `in` finds a NaN that is the very object of an item: each of these is 1.0 in CPython
# where ndjit's equality said 0.0 (silently wrong before this stop). Now a documented ValueError.
IDENTITY = [
    "vals = [v for v in x]\nm = max(vals)\nreturn 1.0 if m in vals else 0.0",
    "return 1.0 if np.nan in [np.nan, 1.0] else 0.0",
    "return 1.0 if math.nan in (math.nan, x[1]) else 0.0",
    "t = (x[0], 2.0)\nreturn 1.0 if t[0] in t else 0.0",
    "l = list(x)\nreturn 1.0 if l[0] in l else 0.0",
    "l = list(x)\nreturn 1.0 if l[0] not in l else 0.0",
]


@pytest.mark.parametrize("src", IDENTITY)
def test_a_nan_searched_in_a_sequence_holding_nan_is_refused(src):
    assert compare(body(src), [NAN, 1.0]) == "refused"
    f = ndjit.jit_filter(body(src))
    with pytest.raises(ValueError, match="the same object as an item"):
        f.evaluate(np.array([NAN, 1.0]))
    # Without a NaN in play (where the NaN comes from the window), the same program computes.
    if "nan in" not in src:
        assert compare(body(src), [3.0, 1.0]) is None


@pytest.mark.parametrize("src", [
    "return 1.0 if np.nan in (1.0, 2.0) else 0.0",      # no NaN item: found by nothing
    "return 1.0 if x[0] in (1.0, 2.0) else 0.0",
    "return 1.0 if x[0] in [v for v in x[1:] if v == v] else 0.0",
    "return 1.0 if np.nan in x else 0.0",               # an array compares values only
    "return 1.0 if x[0] in x else 0.0",
    "return 1.0 if 1.0 in list(x) else 0.0",
])
def test_membership_without_identity_in_question_computes(src):
    for w in ([NAN, 1.0], [1.0, NAN], [2.0, 1.0]):
        assert compare(body(src), w) is None, (src, w)


# ---- list.index, list.count, tuple.index, tuple.count -------------------------------------

SEQUENCES = ["list(x)", "[v for v in x]", "[float(v) for v in x]", "sorted(x[x == x])",
             "[int(v) for v in x if v == v]", "(x[0], x[1], 2.0)", "(1, 2, 3)", "[v > 1 for v in x]",
             "[round(v) for v in x if v == v]"]
VALUES = ["x[0]", "x[1]", "2.0", "2", "1", "True", "max(s)", "np.float64(2.0)", "np.int64(1)", "-0.0",
          "np.nan", "2**53 + 1"]


def test_index_and_count_are_pythons():
    programs = [f"s = {seq}\nreturn float(s.{m}({v}))"
                for seq, v, m in itertools.product(SEQUENCES, VALUES, ["index", "count"])]
    results = agree_or_refuse(programs, min_compared=0.7)
    # `.index` of a value not there raises ValueError in both.
    assert compare(body("return float([1.0, 2.0].index(x[0]))"), [3.0]) is None
    assert compare(body("return float((1, 2).index(x[0]))"), [3.0]) is None
    assert any(r is None for (p, _), r in results.items() if ".count(" in p)


def test_index_finds_the_first_equal_item_and_count_all():
    f = ndjit.jit_filter("lambda x: list(x).index(2.0) * 10 + list(x).count(2.0)")
    assert f.evaluate(np.array([1.0, 2.0, 3.0, 2.0])) == 12
    g = ndjit.jit_filter("def f(x):\n    c = [np.sum(x == k) for k in (0, 1, 2)]\n    return (0, 1, 2)[c.index(max(c))]")
    assert g.evaluate(np.array([2.0, 1.0, 2.0, 0.0])) == 2
    with pytest.raises(ValueError, match="not in list"):
        f.evaluate(np.array([1.0, 3.0]))
    # Python ints compare with Python floats exactly (2**53 + 1 is not 2.0**53), NumPy's floats
    # through float64 (`np.float64(2**53) == 2**53 + 1`).
    h = ndjit.jit_filter("def f(x):\n    return [2**53 + 1, 2**53].index(float(x[0]))")
    assert h.evaluate(np.array([2.0**53])) == 1
    g = ndjit.jit_filter("def f(x):\n    return [2**53 + 1, 2**53].index(x[0])")
    assert g.evaluate(np.array([2.0**53])) == 0


@pytest.mark.parametrize("src, kind", [
    ("return float(x.index(1.0))", "array has no method"),
    ("return float(np.sort(x).count(1.0))", "array has no method"),
    ("return float([1.0, 2.0].index(x))", "the value searched for must be a number"),
    ("return float([1.0].index(1.0, 0))", "takes 2 positional arguments"),
])
def test_index_and_count_refuse_what_python_cannot_run(src, kind):
    with pytest.raises((ndjit.FilterTypeError, ndjit.FilterSyntaxError), match=kind):
        ndjit.jit_filter(body(src))


# ---- divmod -------------------------------------------------------------------------------

OPERANDS = ["x[0]", "x[1]", "int(x[0])", "7", "-7", "2.5", "-0.0", "0", "0.0", "True", "np.int64(3)",
            "np.float64(-2.0)", "np.inf", "np.nan", "np.sum(x > 1)"]


@pytest.mark.parametrize("fn", ["divmod", "np.divmod"])
def test_divmod_is_floor_division_and_remainder(fn):
    programs = [f"q, r = {fn}({a}, {b})\nreturn q * 1000 + r" for a, b in itertools.product(OPERANDS, repeat=2)]
    programs += [f"return {fn}({a}, {b})[1] // 0" for a, b in itertools.product(OPERANDS[:8], OPERANDS[3:9])]
    agree_or_refuse(programs, windows=[[7.5, -2.0], [-0.0, 0.0], [3.0, NAN], [-1e300, 1e-300]], min_compared=0.8)


def test_divmod_of_arrays_gives_two_arrays():
    assert compare(body("q, r = divmod(x, 2)\nreturn np.sum(q) * 100 + np.sum(r)"), [7.0, -3.5, 2.0]) is None
    assert compare(body("q, r = np.divmod(x, x[0])\nreturn np.sum(q) + np.sum(r)"), [0.0, 1.0]) is None
    with pytest.raises((ndjit.FilterTypeError, ndjit.FilterSyntaxError), match="takes 2"):
        ndjit.jit_filter(body("return divmod(x[0])[0]"))


# ---- np.nanargmax, np.nanargmin -----------------------------------------------------------

@pytest.mark.parametrize("fn", ["np.nanargmax", "np.nanargmin"])
def test_nan_arg_extremes_are_numpys(fn):
    windows = WINDOWS + [[NAN, NAN, NAN], [NAN, -np.inf, 2.0], [np.inf, NAN, np.inf], [-np.inf, NAN]]
    programs = [f"return float({fn}(x))", f"return float({fn}(x[1:]))", f"return float({fn}(x[:0]))",
                f"return float({fn}(x[x == x].astype(int)))",
                f"return float({fn}(x > 1))", f"return float(np.sum({fn}(x.reshape(1, -1), axis=1)))",
                f"return float(np.sum({fn}(x.reshape(-1, 1), axis=0)))"]
    results = agree_or_refuse(programs, windows=windows, min_compared=0.9)
    assert any(r is None for (p, w), r in results.items() if all(np.isnan(w)))  # the ValueError


# ---- library functions ---------------------------------------------------------------------

def test_a_librarys_function_is_refused_with_the_closest_code():
    from scipy.stats import iqr, kurtosis
    from statistics import stdev

    def f(x):
        return kurtosis(x)

    def g(x):
        return stdev(x)

    def h(x):
        return iqr(x)

    for fn, origin, closest in [(f, "scipy.stats", "np.mean(((x - x.mean())"), (g, "statistics.stdev", "np.std(x, ddof=1)"),
                                (h, "scipy.stats", "np.percentile(x, 75)")]:
        with pytest.raises(ndjit.FilterTypeError, match="a library's function") as e:
            ndjit.jit_filter(fn)
        assert origin in str(e.value) and closest in str(e.value)


def helper(v):
    return v * 2.0


def test_the_programs_own_helpers_are_still_inlined():
    f = ndjit.jit_filter(lambda x: helper(x[0]))
    assert f.evaluate(np.array([1.5])) == 3.0


# ---- generic_filter1d: the output line written through another name -------------------------

# NumPy's `o = oline` (a view: `oline[1:]`, `oline.T`, `oline.reshape(-1)`, `np.asarray(oline)`)
# shares the output line's memory, so writes through `o` are the result; ndjit copies on
# assignment, and such writes were lost (zeros, silently). Now refused: scipy reads the output line
# after the callback, as a later read of it.
@pytest.mark.parametrize("src", [
    "def f(iline, oline):\n    o = oline\n    o[0] = 7.0\n",
    "def f(iline, oline):\n    o, = (oline,)\n    o[0] = 7.0\n",
    "def f(iline, oline):\n    o = oline[:]\n    o[0] = 7.0\n",
    "def f(iline, oline):\n    o = oline[1:]\n    o[0] = 7.0\n",
    "def f(iline, oline):\n    o = oline[::-1]\n    o[0] = 7.0\n",
    "def f(iline, oline):\n    o = oline.reshape(-1)\n    o[0] = 7.0\n",
    "def f(iline, oline):\n    o = np.asarray(oline)\n    o[0] = 7.0\n",
    "def f(iline, oline):\n    o = oline\n    o += 1.0\n",
    "def f(iline, oline):\n    o = oline\n    o[:] = 7.0\n",
    "def f(iline, oline):\n    o = oline\n    for i in range(len(o)):\n        o[i] = iline[i]\n",
])
def test_an_alias_of_the_output_line_written_into_is_refused(src):
    ns = {"np": np}
    exec(src, ns)
    want = ndi.generic_filter1d(np.arange(4.0), ns["f"], 1)
    assert np.any(want != 0)  # NumPy writes the result through the alias
    with pytest.raises((ndjit.FilterSyntaxError, ndjit.FilterTypeError), match="shares memory with `oline`"):
        ndjit.jit_filter1d(src)


def test_a_copy_of_the_output_line_or_reading_an_alias_compiles():
    for src in ["def f(iline, oline):\n    o = oline.copy()\n    o[0] = 7.0\n    oline[1] = o[0]\n",
                "def f(iline, oline):\n    o = oline\n    t = o[0] + iline[0]\n"]:
        ns = {"np": np}
        exec(src, ns)
        want = ndi.generic_filter1d(np.arange(4.0), ns["f"], 1)
        got = ndi.generic_filter1d(np.arange(4.0), ndjit.jit_filter1d(src), 1)
        np.testing.assert_array_equal(got, want)


# ---- geometric_transform: what the coordinates tuple gives is Python's ints ------------------

def mapping(src):
    """The mapping `m` that `src` defines, run by Python, and an image to transform."""
    ns = {"np": np, "math": math}
    exec(src, ns)
    return ns["m"], np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("src", [
    "def m(c):\n    return (1 / min(c), 0.0)\n",
    "def m(c):\n    return (1 // max(c), 0.0)\n",
    "def m(c):\n    return (1 % sum(c), 0.0)\n",
    "def m(c):\n    return (1.5 / sorted(c)[0], 0.0)\n",
    "def m(c):\n    return (1.0 / list(c)[0], 0.0)\n",
    "def m(c):\n    return (1.0 / tuple(c)[0], 0.0)\n",
    "def m(c):\n    return (c[0], math.trunc(sum(c)))\n",
    "def m(c):\n    return (float(-min(c)), float(max(c) % 7 - 1))\n",
])
def test_the_coordinates_items_are_python_ints_through_sequences(src):
    python, img = mapping(src)

    def run(m):
        try:
            return ("value", ndi.geometric_transform(img, m, order=0))
        except Exception as e:  # Python's exception, ndjit's subclass of it
            return ("raise", [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"][0])

    want = run(python)
    got = run(ndjit.jit_transform(src))
    assert want[0] == got[0], (want, got)
    if want[0] == "value":
        np.testing.assert_array_equal(got[1], want[1])
    else:
        assert want[1] == got[1]


@pytest.mark.parametrize("src", [
    "def m(c):\n    return ((sum(c) * 2**62 * 2) % 3, 1.0)\n",
    "def m(c):\n    return (float(-min(c)), float(max(c) ** 40 % 7))\n",
])
def test_coordinates_past_64_bits_raise_where_numpy_would_wrap(src):
    # Python's ints are exact past 64 bits, ndjit's raise there (README: Integers); before this
    # stop these wrapped as NumPy's int64 (silently other values).
    python, img = mapping(src)
    ndi.geometric_transform(img, python, order=0)  # Python computes
    with pytest.raises(OverflowError):
        ndi.geometric_transform(img, ndjit.jit_transform(src), order=0)


# ---- the driver's arguments (a hunt of about 8,500 calls against scipy) --------------------

@pytest.mark.parametrize("fn", ["lambda x: x[0]", "lambda x: x[len(x) - 3] - x[5]", "lambda x: np.max(x)"])
@pytest.mark.parametrize("mode", ["constant", "reflect", "wrap"])
def test_a_footprint_over_many_axes_is_exact(fn, mode):
    # 2**12 taps over 13 axes: each its own row of the plan. Its kernel compiled code per row and
    # tap, taking seconds (minutes past 16 axes) where scipy takes milliseconds.
    a = np.random.default_rng(9).normal(size=(3,) + (1,) * 11 + (2,))
    f = eval(fn, {"np": np})
    want = ndi.generic_filter(a, f, size=2, mode=mode, cval=-1.5)
    np.testing.assert_array_equal(ndjit.generic_filter(a, fn, size=2, mode=mode, cval=-1.5), want)
    np.testing.assert_array_equal(ndi.generic_filter(a, ndjit.jit_filter(fn), size=2, mode=mode, cval=-1.5), want)


def test_a_structured_input_raises_scipys_typeerror():
    a = np.zeros((3, 3), dtype=[("a", "f8")])
    with pytest.raises(TypeError) as want:
        ndi.generic_filter(a, lambda x: x[0], size=2)
    with pytest.raises(TypeError) as got:
        ndjit.generic_filter(a, lambda x: x[0], size=2)
    assert str(got.value) == str(want.value)


# ---- found by the review of these fixes ----------------------------------------------------

@pytest.mark.parametrize("src", [
    "return [1, 2].index(2) // 0",
    "n = [1, 2].count(2)\nreturn n // 0",
    "return 1 / [1, 2].count(3)",
    "return (x[0], x[1]).count(5.0) % 0",
    "return divmod([1, 2].count(1), 0)[1]",
    "return -([1, 2].index(1) * 1.0)",
])
def test_index_and_count_are_python_ints(src):
    # They were NumPy ints (a method's result), so `// 0` gave 0 where Python raises.
    assert compare(body(src), [1.0, 2.0]) is None


@pytest.mark.parametrize("src, window", [
    ("return float(x[0]) in [0, 2**53 + 1]", [2.0**53]),
    ("return 9007199254740992.0 in [0, 2**53 + 1]", [1.0]),
    ("return 2**53 + 1 in (float(x[0]),)", [2.0**53]),
    ("return float(x[0]) not in (2**53 + 1,)", [2.0**53]),
    ("return int(x[0]) + 1 in [float(v) for v in x]", [2.0**53]),
    ("return x[0] in [0, 2**53 + 1]", [2.0**53]),             # NumPy's float64 compare: True
    ("return 1.0 in (True, 2)", [1.0]),
    ("return int(x[0]) in [v for v in x]", [3.0, 1.0]),
])
def test_membership_compares_ints_and_floats_as_python_does(src, window):
    # A Python int and a Python float compare exactly: `in` compared them through float64.
    assert compare(body(src), window) is None


def test_a_transforms_coordinates_have_count_and_index():
    img = np.arange(12.0).reshape(3, 4)
    for src in ["lambda c: (c.count(0) * 1.0, c.index(c[1]) * 1.0)", "lambda c: (1.0 * (0 in c), 0.5)"]:
        want = ndi.geometric_transform(img, eval(src), order=0)
        np.testing.assert_array_equal(ndi.geometric_transform(img, ndjit.jit_transform(src), order=0), want)


def test_the_output_store_holding_the_input_in_memory_is_refused():
    zarr = pytest.importorskip("zarr", reason='zarr is not installed: pip install "./python[dask]"')
    pytest.importorskip("dask.array", reason='dask is not installed: pip install "./python[dask]"')
    store = zarr.storage.MemoryStore()
    src = zarr.open_array(store, mode="w", shape=(6, 6), chunks=(3, 3), dtype="f8", path="a")
    src[:] = np.arange(36.0).reshape(6, 6)
    with pytest.raises(ValueError, match="is the input, lies inside it or holds it"):
        ndjit.dask.filter_zarr(src, store, "np.max(x)", size=3, overwrite=True)
    np.testing.assert_array_equal(zarr.open_array(store, mode="r", path="a")[...], np.arange(36.0).reshape(6, 6))
    # Another array of the same store is another place.
    out = zarr.open_array(store, mode="w", shape=(6, 6), chunks=(3, 3), dtype="f8", path="b")
    ndjit.dask.filter_zarr(src, out, "np.max(x)", size=3, overwrite=True)
    np.testing.assert_array_equal(zarr.open_array(store, mode="r", path="b")[...],
                                  ndi.maximum_filter(np.arange(36.0).reshape(6, 6), size=3))


def test_a_library_function_given_as_a_default_or_an_argument_is_refused():
    import colorsys

    def d(x, fn=colorsys.rgb_to_hsv):
        return fn(x[0], x[1], x[2])[0]

    def e(x, fn):
        return fn(x[0], x[1], x[2])[0]

    # Before, each was inlined as if it were the program's own.
    with pytest.raises(ndjit.FilterTypeError, match="colorsys.rgb_to_hsv"):
        ndjit.jit_filter(d)
    with pytest.raises(ndjit.FilterTypeError, match="colorsys.rgb_to_hsv"):
        ndjit.jit_filter(e, extra_arguments=(colorsys.rgb_to_hsv,))
