"""List comprehensions, generator expressions, sorted(), list() and lists grown by append(): values equal to CPython's
running the same function (each element keeps its own kind: Python number or NumPy scalar), the
same errors at the same places, and a clear refusal wherever ndjit cannot follow Python."""
import math

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

WINDOW = np.array([0.5, 1.5, -2.0, 3.0, 7.25, 0.0, 2.0, 9.0, 4.0])
ZEROS = np.array([0.0, -0.0, 1.0, -0.0, 0.0, 2.0, -1.0, 0.0, -0.0])

PROGRAMS = {
    "sum_of_squares": "def f(x):\n    return sum(v * v for v in x)\n",
    "count_if": "def f(x):\n    return sum(1 for v in x if v > 1)\n",
    "max_deviation": "def f(x):\n    c = x[4]\n    return max(abs(v - c) for v in x)\n",
    "min_with_two_ifs": "def f(x):\n    return min(v for v in x if v > 0 if v < 5)\n",
    "list_then_numpy": "def f(x):\n    vals = [v for v in x if v > 0]\n    return np.mean(vals) + np.median(vals)\n",
    "list_len_and_items": "def f(x):\n    vals = [v for v in x if v > 0]\n    return len(vals) + vals[0] + vals[-1]\n",
    "list_slice": "def f(x):\n    vals = [v * 2 for v in x]\n    return sum(vals[1:-1:2])\n",
    "sorted_middle": "def f(x):\n    s = sorted(x)\n    return s[len(s) // 2]\n",
    "sorted_trimmed": "def f(x):\n    s = sorted(x)[1:-1]\n    return sum(s) / len(s)\n",
    "sorted_reverse": "def f(x):\n    return sorted(x, reverse=True)[0] - sorted(x)[0]\n",
    "sorted_of_list": "def f(x):\n    return sorted([abs(v) for v in x])[-2]\n",
    "any": "def f(x):\n    return float(any(v > 8 for v in x))\n",
    "all": "def f(x):\n    return float(all(v > -3 for v in x))\n",
    "any_two_fors": "def f(x):\n    return float(any(x[i] + x[j] > 16 for i in range(9) for j in range(i)))\n",
    "all_tuple_targets": "def f(x):\n    return float(all(a <= b + 10 for a, b in zip(x, x[1:])))\n",
    "range_with_if": "def f(x):\n    w = [x[i] * (i + 1) for i in range(len(x)) if i % 2 == 0]\n    return sum(w)\n",
    "range_step": "def f(x):\n    return sum(x[i] for i in range(len(x) - 1, -1, -3))\n",
    "python_ints": "def f(x):\n    return sum([int(v) for v in x])\n",
    "python_int_divides": "def f(x):\n    ks = [int(v) for v in x if v > 1]\n    return 7 // ks[0] + ks[-1] % 3\n",
    "bools_sum": "def f(x):\n    b = [v > 2 for v in x]\n    return sum(b)\n",
    "list_of_window": "def f(x):\n    l = list(x)\n    return l[2] + len(l)\n",
    "list_of_generator": "def f(x):\n    l = list(v + 1 for v in x)\n    return l[0] * l[-1]\n",
    "enumerate": "def f(x):\n    return sum(v * i for i, v in enumerate(x))\n",
    "zip": "def f(x):\n    return sum(a * b for a, b in zip(x, x[::-1]))\n",
    "shadowing": "def f(x):\n    v = 100.0\n    s = sum(v for v in x)\n    return s + v\n",
    "iterate_a_list": "def f(x):\n    t = 0\n    for k in [int(v) for v in x]:\n        t += k\n    return t\n",
    # Python floats and NumPy scalars (an int and a float by path is refused: test_int_or_float).
    "mixed_kinds_to_numpy": "def f(x):\n    return np.std(np.array([0.0 if v < 0 else v for v in x]))\n",
    "nested_comprehension_iterable": "def f(x):\n    return sum(v for v in [w * 2 for w in x] if v > 1)\n",
    "array_minus_list": "def f(x):\n    return np.sum(x - [v * 2 for v in x])\n",
    "empty_list_is_false": "def f(x):\n    l = [v for v in x if v > 100]\n    return 1.0 if l else 0.0\n",
    "lambda": "lambda x: max(v for v in x if v < 5)",
    "min_of_python_tuple": "def f(x):\n    return 1 / min((2.0, 4.0)) + x[0]\n",
    # `default=`: the default where nothing is left (its own kind: a Python int here), else the
    # extreme, whose empty case never runs.
    "max_default_empty": "def f(x):\n    return max((v for v in x if v > 100), default=-1)\n",
    "min_default_found": "def f(x):\n    return 1 / min((abs(v) for v in x if v > 1), default=0)\n",
    "max_default_list": "def f(x):\n    return max([v for v in x if v < -5], default=np.nan)\n",
    "max_default_tuple": "def f(x):\n    return max((), default=2.5) + min(x, default=0)\n",
}


def python(src):
    ns = {"np": np, "math": math}
    if src.startswith("lambda"):
        return eval(src, ns)
    exec(src, ns)
    return ns["f"]


def same(got, want):
    return np.float64(got).tobytes() == np.float64(want).tobytes()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_equal_pythons(name):
    src = PROGRAMS[name]
    want = python(src)(WINDOW.copy())
    got = ndjit.jit_filter(src).evaluate(WINDOW.copy())
    assert same(got, want), (name, got, want)


@pytest.mark.parametrize("name", ["sum_of_squares", "count_if", "list_then_numpy", "sorted_middle", "any_two_fors", "range_step"])
@pytest.mark.parametrize("mode", ["reflect", "constant"])
def test_through_scipy_and_the_driver(name, mode):
    img = np.random.default_rng(5).random((8, 9)) * 6 - 1
    f = ndjit.jit_filter(PROGRAMS[name])
    want = ndi.generic_filter(img, python(PROGRAMS[name]), size=3, mode=mode)
    assert np.array_equal(ndi.generic_filter(img, f, size=3, mode=mode), want)
    assert np.array_equal(ndjit.generic_filter(img, f, size=3, mode=mode), want)


@pytest.mark.parametrize("src", [
    "def f(x):\n    s = sorted(x)\n    return sum(np.copysign(1.0, v) * 10 ** i for i, v in enumerate(s) if v == 0)\n",
    "def f(x):\n    s = sorted(x, reverse=True)\n    return np.sum(np.copysign(1.0, np.array(s)) * 3.0 ** np.arange(9))\n",
])
def test_sorted_keeps_equal_zeros_in_their_order(src):
    """Python's sort is stable, so where -0.0 and 0.0 end up is defined; ndjit's sort is too."""
    want = python(src)(ZEROS.copy())
    got = ndjit.jit_filter(src).evaluate(ZEROS.copy())
    assert same(got, want), (got, want)


def test_python_ints_past_64_bits_raise_instead_of_wrapping():
    """A documented deviation: Python's ints are unbounded, ndjit's are 64-bit, so a sum of Python
    ints past 2**63 raises OverflowError (never a wrapped total)."""
    src = "def f(x):\n    return sum(int(v) * 2**62 for v in x)\n"
    assert python(src)(WINDOW.copy()) == 24 * 2**62
    with pytest.raises(OverflowError, match="64 bits"):
        ndjit.jit_filter(src).evaluate(WINDOW.copy())
    small = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert ndjit.jit_filter(src).evaluate(small) == float(2**62)


def test_any_and_all_stop_at_the_deciding_element():
    """Elements after the one that decides are never evaluated: here the next would divide by 0."""
    w = np.array([1.0, 0.0, 2.0])
    for src in ("def f(x):\n    return float(any(1 // int(v) > 0 for v in x))\n",
                "def f(x):\n    return float(all(1 // int(v) > 5 for v in x))\n"):
        assert same(ndjit.jit_filter(src).evaluate(w.copy()), python(src)(w.copy()))
    raising = "def f(x):\n    return float(any(1 // int(v) > 5 for v in x))\n"
    with pytest.raises(ZeroDivisionError):
        python(raising)(w.copy())
    with pytest.raises(ZeroDivisionError, match="integer division or modulo by zero"):
        ndjit.jit_filter(raising).evaluate(w.copy())


@pytest.mark.parametrize("src,exc,msg", [
    ("def f(x):\n    return max(v for v in x if v > 100)\n", ValueError, r"max\(\) arg is an empty sequence"),
    ("def f(x):\n    l = [v for v in x if v > 3]\n    return l[5]\n", IndexError, "list index out of range"),
    ("def f(x):\n    return sorted(x)[0]\n", ValueError, "NaN"),
    ("def f(x):\n    return len([i for i in range(10**15)])\n", MemoryError, "2\\*\\*31"),
    ("def f(x):\n    return sum(1.0 / v for v in x)\n", None, None),  # NumPy scalars: inf, no error
    ("def f(x):\n    return 1 / max((v for v in x if v > 100), default=0)\n", ZeroDivisionError, "division by zero"),
    # The call's other arguments first, then the generator's items (Python runs it inside the
    # call): the default's error, not the items' (`1 // 0` of the 0.0 at x[5]).
    ("def f(x):\n    return max((1 // int(v) for v in x), default=1 / int(x[5]))\n", ZeroDivisionError,
     "^division by zero"),
])
def test_run_time_errors_are_pythons(src, exc, msg):
    w = WINDOW.copy()
    w[1] = np.nan if "sorted" in src else w[1]
    f = ndjit.jit_filter(src)
    if exc is None:
        with np.errstate(divide="ignore"):
            assert same(f.evaluate(w.copy()), python(src)(w.copy()))
        return
    if exc is not ValueError or "NaN" not in msg:
        if exc is not MemoryError:  # CPython would build the 10**15-element list first
            with pytest.raises(exc):
                python(src)(w.copy())
    with pytest.raises(exc, match=msg):
        f.evaluate(w.copy())


@pytest.mark.parametrize("src,msg", [
    ("def f(x):\n    g = (v for v in x)\n    return sum(g)\n", "generator expression is supported only as the argument"),
    ("def f(x):\n    return np.sum(v for v in x)\n", "generator expression is supported only as the argument"),
    ("def f(x):\n    return max(v for v in x, 0)\n", "Generator expression must be parenthesized"),
    ("def f(x):\n    return len([a * b for a in x for b in x])\n", "more than one `for`"),
    ("def f(x):\n    return sum([v for v in x] + [1.0])\n", "operators on Python lists and tuples"),
    ("def f(x):\n    return len([v for v in x] * 2)\n", "operators on Python lists and tuples"),
    ("def f(x):\n    return sum(float(v) for v in x)\n", "depends on the Python version"),
    ("def f(x):\n    return min([0 if v < 0 else v for v in x])\n", "Python numbers and NumPy scalars"),
    ("def f(x):\n    return sorted(x, key=abs)[0]\n", r"sorted\(key=...\)"),
    ("def f(x):\n    return [v for v in x].sum()\n", "a list has no attribute `.sum`"),
    ("def f(x):\n    l = [v for v in x]\n    l[0] = 2.5\n    return sum(l)\n", "assigning into a list"),
    ("def f(x):\n    l = [v for v in x]\n    l = np.array(l)\n    return l.sum()\n", "holds a list here but an array elsewhere"),
    ("def f(x):\n    l = [v for v in x]\n    return l[1.0]\n", "list indices must be integers"),
    ("def f(x):\n    l = [v for v in x]\n    return v\n", "name `v` is not defined"),
    ("def f(x):\n    return {v for v in x}\n", "set literals"),
    ("def f(x):\n    return max(x[0], x[1], default=0.0)\n", r"Cannot specify a default for max\(\) with multiple"),
    ("def f(x):\n    return max(x, default=None)\n", r"the default of max\(\)"),
    ("def f(x):\n    return min(x, key=abs)\n", "unsupported keyword argument `key`"),
])
def test_unsupported_uses_are_refused_with_the_place(src, msg):
    with pytest.raises(ndjit.FilterCompileError, match=msg) as e:
        ndjit.jit_filter(src)
    assert "<filter>:" in str(e.value) and "^" in str(e.value)


# ---- lists grown by .append() ---------------------------------------------------------------------

NAN_WINDOW = np.array([0.5, 1.5, -2.0, 3.0, 7.25, np.nan, 2.0, 9.0, 4.0])

APPENDS = {
    "valid_mean": "def f(x):\n    vals = []\n    for v in x:\n        if not np.isnan(v):\n            vals.append(v)\n    return np.mean(vals)\n",
    "sum_and_len": "def f(x):\n    vals = []\n    for v in x:\n        if v > 0:\n            vals.append(v * 2)\n    return sum(vals) + len(vals)\n",
    "python_ints": "def f(x):\n    ks = []\n    for i in range(len(x)):\n        if x[i] > 1:\n            ks.append(i)\n    return sum(ks) * 10 + ks[-1] + 7 // (ks[0] + 1) if ks else -1.0\n",
    "empty_is_false": "def f(x):\n    vals = []\n    for v in x:\n        if v > 100:\n            vals.append(v)\n    if not vals:\n        return -1.0\n    return max(vals)\n",
    "grows_past_its_storage": "def f(x):\n    vals = []\n    for k in range(100):\n        vals.append(k * 0.5)\n    return sorted(vals, reverse=True)[3] + len(vals) + vals[57]\n",
    "starts_from_a_literal": "def f(x):\n    vals = [x[0], x[1]]\n    vals.append(x[2])\n    return vals[2] + len(vals)\n",
    "while_len": "def f(x):\n    vals = []\n    i = 0\n    while len(vals) < 4:\n        vals.append(x[i])\n        i += 1\n    return np.median(vals)\n",
    "mixed_kinds_to_numpy": "def f(x):\n    vals = []\n    for v in x:\n        vals.append(v if v > 0 else 0.0)\n    return np.sum(np.array(vals))\n",
    "numpy_zero_divides_to_inf": "def f(x):\n    vals = []\n    vals.append(x[0] * 0)\n    return 1.0 / vals[0]\n",
    "bools": "def f(x):\n    flags = []\n    for v in x:\n        flags.append(v > 1)\n    return sum(flags)\n",
    "rebuilt_by_a_comprehension": "def f(x):\n    vals = []\n    for v in x:\n        vals.append(v)\n    vals = [v * 2 for v in vals if v > 2]\n    vals.append(x[0])\n    return sum(vals) + len(vals)\n",
    "in_a_helper_local": "def grow(x):\n    out = []\n    for v in x:\n        out.append(abs(v))\n    return max(out)\n\ndef f(x):\n    return grow(x) + grow(x[1:])\n",
}


@pytest.mark.parametrize("name", sorted(APPENDS))
def test_appended_lists_equal_pythons(name):
    src = APPENDS[name]
    with np.errstate(all="ignore"):
        want = python(src)(NAN_WINDOW.copy())
    got = ndjit.jit_filter(src).evaluate(NAN_WINDOW.copy())
    assert same(got, want), (name, got, want)


@pytest.mark.parametrize("name", ["valid_mean", "python_ints", "grows_past_its_storage"])
def test_appended_lists_through_scipy_and_the_driver(name):
    img = np.random.default_rng(9).random((7, 8)) * 4
    img[2, 3] = np.nan
    f = ndjit.jit_filter(APPENDS[name])
    with np.errstate(all="ignore"):
        want = ndi.generic_filter(img, python(APPENDS[name]), size=3, mode="nearest")
    assert np.array_equal(ndi.generic_filter(img, f, size=3, mode="nearest"), want, equal_nan=True)
    assert np.array_equal(ndjit.generic_filter(img, f, size=3, mode="nearest"), want, equal_nan=True)


def test_a_python_float_appended_keeps_pythons_division_error():
    src = "def f(x):\n    vals = []\n    vals.append(0.0)\n    return 1.0 / vals[0]\n"
    with pytest.raises(ZeroDivisionError):
        python(src)(WINDOW.copy())
    with pytest.raises(ZeroDivisionError, match="float division by zero"):
        ndjit.jit_filter(src).evaluate(WINDOW.copy())


@pytest.mark.parametrize("src,msg", [
    ("def f(x):\n    a = []\n    b = a\n    b.append(1.0)\n    return len(a)\n", "second name"),
    ("def f(x):\n    a = []\n    a.append(1.0)\n    b = a\n    return len(b)\n", "second name"),
    ("def f(x):\n    a = []\n    t = (a, 1)\n    a.append(1.0)\n    return len(t[0])\n", "second name"),
    ("def f(x):\n    vals = [1.0]\n    for v in vals:\n        vals.append(v)\n    return len(vals)\n", "changes `vals` while it iterates"),
    ("def f(x):\n    rows = []\n    rows.append([1, 2])\n    return len(rows)\n", "element of a list must be a number"),
    ("def f(x):\n    vals = []\n    vals.append(1.0, 2.0)\n    return len(vals)\n", "exactly one argument"),
    ("def f(x):\n    vals = []\n    return len(vals) + vals.extend(x)\n", "changes the list in place"),
    ("def f(x):\n    vals = []\n    vals = 3.0\n    vals.append(1.0)\n    return vals\n", "holds a list"),
    ("def f(x):\n    vals = []\n    for v in x:\n        vals.append(v if v > 0 else 0.0)\n    return sum(vals)\n", "Python numbers and NumPy scalars"),
    ("def helper(l):\n    l.append(1.0)\n    return len(l)\n\ndef f(x):\n    a = [x[0]]\n    return helper(a)\n", "append"),
])
def test_unsupported_list_growth_is_refused(src, msg):
    with pytest.raises(ndjit.FilterCompileError, match=msg):
        ndjit.jit_filter(src)


def test_a_transform_returns_a_tuple_built_by_a_generator():
    from ndjit_transform_helpers import halve, shift_list  # a real module: ndjit reads its source

    img = np.random.default_rng(2).random((9, 8))
    for mapping in (halve, shift_list):
        want = ndi.geometric_transform(img, mapping)
        assert np.array_equal(ndi.geometric_transform(img, ndjit.jit_transform(mapping)), want)


@pytest.fixture(autouse=True, scope="module")
def transform_helpers(tmp_path_factory):
    import sys

    d = tmp_path_factory.mktemp("transform_helpers")
    (d / "ndjit_transform_helpers.py").write_text(
        "def halve(oc):\n    return tuple(c / 1.5 for c in oc)\n\n"
        "def shift_list(oc):\n    return tuple([oc[0] * 0.5, oc[1] + 0.25])\n"
    )
    sys.path.insert(0, str(d))
    yield
    sys.path.remove(str(d))
