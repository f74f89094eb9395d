"""Stop 57's findings (a hunt over statement-level control flow, one over error quality), each
checked against CPython running the same function, or scipy given the same arguments."""
import textwrap
import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter

IMAGE = np.arange(30.0).reshape(5, 6)


def _function(body: str):
    src = "def f(x):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    scope = {"np": np}
    exec(compile(src, "<test>", "exec"), scope)
    return src, scope["f"]


def _assert_same_as_python(body: str, image=IMAGE):
    src, py = _function(body)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want, err = python_generic_filter(image, py, size=3)
    assert err is None, err
    f = ndjit.jit_filter(src)
    for got in (ndi.generic_filter(image, f, size=3), ndjit.generic_filter(image, f, size=3)):
        np.testing.assert_array_equal(got, want)
    return want


# Python evaluates `range(...)` once: rebinding the array in the body leaves the count alone.
RANGE_STOPS = [
    "n = 0\nfor i in range(len(x)):\n    x = x[1:]\n    n += 1\nreturn n",
    "n = 0\nfor i in range(x.size):\n    x = x[1:]\n    n += 1\nreturn n",
    "n = 0\nfor i in range(x.shape[0]):\n    x = x[:-1]\n    n += 1\nreturn n",
    "n = 0\nfor i in range(1, len(x), 2):\n    x = x[1:]\n    n += 1\nreturn n",
    "n = 0\ny = x[:5]\nfor i in range(len(y)):\n    y = x\n    n += 1\nreturn n",
    "n = 0\nfor i in range(len(x)):\n    x = np.delete(x, 0)\n    n = n * 10 + len(x)\nreturn n",
    "n = 0\nfor i in range(len(x)):\n    x = np.concatenate((x, x[:1]))\n    n += 1\nreturn n + len(x)",
]


@pytest.mark.parametrize("body", RANGE_STOPS)
def test_a_range_stop_is_read_once(body):
    _assert_same_as_python(body)


# Tuple assignment evaluates the whole right side first, arrays too.
SWAPS = [
    "a = x[:3]\nb = x[3:6]\na, b = b, a\nreturn a[0] * 100 + b[0]",
    "a = x[:3]\nb = x[3:6]\n[a, b] = [b, a]\nreturn a[0] * 100 + b[0]",
    "a = x[:3]\nb = x[3:6]\nfor k in range(3):\n    a, b = b, a + b\nreturn a[0] * 100 + b[0]",
    "a = x[:3]\nb = x[3:6]\nc = x[6:]\na, b, c = c, a + 1, b + a\nreturn a[0] * 10000 + b[0] * 100 + c[0]",
    "p = x.copy()\np, n = p[1:], len(p)\nreturn n * 100 + p[0]",
    "a = x[:3].reshape(1, 3)\nb = x[3:6].reshape(1, 3)\na, b = b, a\nreturn a[0, 0] * 100 + b[0, 0]",
    "p = x[:3]\nq = x[3:6]\np, q = q.copy(), p.copy()\nreturn p[0] * 100 + q[0]",
    "y = x.copy()\ny[0], y[1] = y[1], y[0]\nreturn y[0] * 100 + y[1]",
]


@pytest.mark.parametrize("body", SWAPS)
def test_a_tuple_assignment_reads_every_value_first(body):
    _assert_same_as_python(body)


@pytest.mark.parametrize("body", [
    "x[:3], x[3:6] = x[3:6], x[:3]\nreturn x[0] * 100 + x[3]",
    "y = x.copy()\ny[:3], y[3:6] = y[3:6].copy(), y[:3].copy()\nreturn y[0] * 100 + y[3]",
])
def test_a_tuple_assignment_writing_arrays_in_place_is_refused(body):
    """NumPy's views see the earlier writes (the first gives 404 on 1..9), copies do not (401)."""
    src, py = _function(body)
    assert py(np.arange(1.0, 10.0)) in (401.0, 404.0)
    with pytest.raises(ndjit.FilterCompileError, match="writes into an array and assigns arrays"):
        ndjit.jit_filter(src)


@pytest.mark.parametrize("src", ["any(3)", "all(x[0])", "any(x[0] > 1)"])
def test_pythons_any_and_all_take_no_number(src):
    with pytest.raises(TypeError):
        eval(src, {"x": np.arange(9.0)})  # noqa: S307 - the test's own sources
    with pytest.raises(ndjit.FilterTypeError, match="takes an iterable"):
        ndjit.jit_filter(src)
    assert ndjit.jit_filter("np.any(x[0])").evaluate(np.ones(9)) == 1.0  # NumPy's does


def test_any_worker_count_is_taken():
    img = np.random.default_rng(1).random((20, 30))
    want = ndi.generic_filter(img, np.max, size=3)
    for workers in (2**60, 2**62, 2**63 - 1):
        np.testing.assert_array_equal(ndjit.generic_filter(img, "max(x)", size=3, workers=workers), want)


def test_evaluate_checks_its_lengths():
    f1 = ndjit.jit_filter1d("def f(i, o):\n    o[...] = 0.0")
    assert list(f1.evaluate([1.0, 2.0], 2)) == [0.0, 0.0]
    for n in (3, 2**62, -1):
        with pytest.raises(ValueError, match="output_length must be between 0 and 2"):
            f1.evaluate([1.0, 2.0], n)
    t = ndjit.jit_transform("lambda c: (c[0], c[1])")
    assert t.evaluate((1, 2), 2) == (1.0, 2.0)
    for rank in (2**40, 2**31, 0, -1):
        with pytest.raises(ValueError, match="input_rank must be between 1 and 64"):
            t.evaluate((1, 2), rank)


@pytest.mark.parametrize("kw", [dict(extra_arguments={1.0: 2}), dict(extra_arguments="ab"),
                                dict(extra_arguments=iter([1.0])), dict(extra_arguments=5),
                                dict(extra_keywords="ab"), dict(extra_keywords=[("w", 1.0)])], ids=str)
@pytest.mark.parametrize("maker", [ndjit.jit_filter, ndjit.jit_filter1d, ndjit.jit_transform])
def test_makers_check_extra_arguments_as_scipy_does(maker, kw):
    with pytest.raises(RuntimeError, match="extra_(arguments must be a tuple|keywords must be a dictionary)"):
        maker("def f(x, y, w=1.0):\n    return 0.0", **kw)


def test_generic_filter1d_without_a_function_says_so():
    with pytest.raises(TypeError) as info:
        ndjit.generic_filter1d(IMAGE, None, 3)
    assert not isinstance(info.value, AttributeError)


@pytest.mark.parametrize("image", [np.array([["a", "b"], ["c", "d"]]), np.array([[b"a", b"b"]]),
                                   np.zeros(3, "V8")], ids=["str", "bytes", "void"])
def test_arrays_of_strings_get_scipys_type_error(image):
    with pytest.raises(TypeError) as want:
        ndi.generic_filter(image, lambda v: 0.0, size=1)
    with pytest.raises(TypeError, match=str(want.value)):
        ndjit.generic_filter(image, "x[0]", size=1)
    with pytest.raises(TypeError, match=str(want.value)):
        ndjit.generic_filter1d(image, "def f(i, o):\n    o[...] = 0.0", 1)


def test_filter_zarr_needs_an_output_store(tmp_path):
    zarr = pytest.importorskip("zarr", reason='zarr is not installed: pip install "./python[dask]"')
    pytest.importorskip("dask.array", reason='dask is not installed: pip install "./python[dask]"')
    import ndjit.dask as nd
    source = zarr.open_array(str(tmp_path / "in.zarr"), mode="w", shape=(8, 8), chunks=(4, 4), dtype="f8")
    source[...] = 1.0
    with pytest.raises(TypeError, match="needs an output store"):
        nd.filter_zarr(str(tmp_path / "in.zarr"), None, "max(x)", size=3)


def test_a_decorator_in_source_text_is_refused_unless_it_is_ndjits():
    with pytest.raises(ndjit.FilterSyntaxError, match="decorator") as info:
        ndjit.jit_filter("@foo\ndef f(x):\n    return x[0]")
    assert (info.value.lineno, info.value.offset) == (1, 2)
    with pytest.raises(ndjit.FilterSyntaxError, match="decorator"):
        ndjit.jit_filter("@functools.lru_cache(8)\ndef f(x):\n    return x[0]")
    assert ndjit.jit_filter("@ndjit.jit_filter\ndef f(x):\n    return x[0]").evaluate([3.0]) == 3.0
    assert ndjit.jit_filter("@jit_filter()\ndef f(x):\n    return x[1]").evaluate([3.0, 4.0]) == 4.0


def test_an_uncaught_syntax_errors_traceback_shows_its_hint():
    import traceback
    with pytest.raises(ndjit.FilterSyntaxError) as info:
        ndjit.jit_filter("def f(x):\n    return {1: 2}")
    shown = "".join(traceback.format_exception(info.value))
    assert "dict and set literals" in shown
    if hasattr(info.value, "add_note"):  # Python 3.11+: notes are printed
        assert "help: " + info.value.hint in shown
    assert str(info.value).count("help:") == 1


def test_raising_an_unsupported_class_names_it():
    with pytest.raises(ndjit.FilterCompileError, match="`KeyError` cannot be raised by a filter") as info:
        ndjit.jit_filter("def f(x):\n    raise KeyError('k')")
    assert "ValueError" in info.value.hint


def test_a_column_index_out_of_bounds_names_axis_1():
    m = np.arange(9.0).reshape(3, 3)
    with pytest.raises(IndexError) as want:
        m[0, 5]
    f = ndjit.jit_filter("x.reshape(3, 3)[0, 5]")
    with pytest.raises(IndexError, match=str(want.value)):
        f.evaluate(np.arange(9.0))
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 3"):
        ndjit.jit_filter("x.reshape(3, 3)[7, 0]").evaluate(np.arange(9.0))


def test_a_filter_calling_itself_is_refused_as_recursion(tmp_path):
    import importlib.util
    path = tmp_path / "ndjit_recursive_filter.py"
    path.write_text("def c(x):\n    return c(x[1:]) if len(x) > 1 else x[0]\n")
    spec = importlib.util.spec_from_file_location("ndjit_recursive_filter", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(ndjit.FilterCompileError, match="recursion cannot be inlined: the filter `c` calls itself") as info:
        ndjit.jit_filter(mod.c)
    assert (info.value.lineno, info.value.col) == (2, 12)


def test_generic_filter1d_takes_any_int_axis_as_scipy_does():
    for axis in (2**70, -2**70, 5):
        with pytest.raises(np.exceptions.AxisError):
            ndi.generic_filter1d(IMAGE, lambda i, o: None, 2, axis=axis)
        with pytest.raises(np.exceptions.AxisError):
            ndjit.generic_filter1d(IMAGE, "def f(i, o):\n    o[...] = 0.0", 2, axis=axis)


def test_an_unknown_target_is_a_value_error_for_dask_arrays_too():
    da = pytest.importorskip("dask.array", reason='dask is not installed: pip install "./python[dask]"')
    for image in (IMAGE, da.from_array(IMAGE, chunks=3)):
        with pytest.raises(ValueError, match="target must be 'cpu' or 'cuda', not 'bogus'"):
            ndjit.generic_filter(image, "max(x)", size=3, target="bogus")


def test_a_callable_that_is_not_a_function_is_named_as_such(tmp_path):
    import importlib.util
    path = tmp_path / "ndjit_callables.py"
    path.write_text(textwrap.dedent("""
        import functools

        def _scale(v, k):
            return v * k

        double = functools.partial(_scale, k=2.0)

        class Times:
            def __call__(self, v):
                return v * 3.0

        times = Times()

        def f(x):
            return double(x[0])

        def g(x):
            return times(x[0])
    """))
    spec = importlib.util.spec_from_file_location("ndjit_callables", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for func, what in ((mod.f, "`double` is a functools.partial, not a Python function"),
                       (mod.g, "`times` is a ndjit_callables.Times, not a Python function")):
        with pytest.raises(ndjit.FilterTypeError, match=what) as info:
            ndjit.jit_filter(func)
        assert info.value.filename == str(path)


@pytest.mark.parametrize("name", ["exec", "eval", "slice", "hex", "vars", "super"])
def test_pythons_builtins_are_named_as_builtins(name):
    with pytest.raises(ndjit.FilterCompileError, match=f"Python's builtin `{name}` is not supported"):
        ndjit.jit_filter(f"def f(x):\n    return {name}(x)")


# Only the truth of `a and b` is used in a test: a bool and a number need not be one value.
TESTED_ONLY = [
    "k = 0\nn = len(x)\nwhile k < n and x[k]:\n    k += 1\nreturn k",
    "if x[0] > 5 and x[1]:\n    return 1.0\nreturn 2.0",
    "if x[0] or x[1] > 20:\n    return 1.0\nreturn 2.0",
    "return float(not (x[0] and x[1] > 2))",
    "return 1.0 if x[4] > 3 and x[0] else 2.0",
    "return sum(v for v in x if v > 2 and v % 2)",
    "assert x[4] >= 0 or x[0], 'negative'\nreturn x[4]",
    "k = len(x)\nif k < len(x) and x[k] > 0:\n    return 1.0\nreturn 0.0",   # x[k] never read
    "k = len(x)\nif k >= len(x) or x[k] > 0:\n    return 1.0\nreturn 0.0",
    "k = 0\nwhile k < len(x) and (x[k] or k < 2) and not (x[k] > 25 and k):\n    k += 1\nreturn k",
]


@pytest.mark.parametrize("body", TESTED_ONLY)
def test_a_tested_and_or_needs_only_its_operands_truth(body):
    zeros_between = np.where(IMAGE % 4 == 0, 0.0, IMAGE)
    _assert_same_as_python(body, zeros_between)


def test_a_joined_value_of_a_bool_and_a_number_is_still_refused():
    with pytest.raises(ndjit.FilterCompileError, match="either a bool or a number"):
        ndjit.jit_filter("def f(x):\n    r = x[0] > 5 and x[1]\n    return r")


# The review of these fixes: values a tuple holds, a 2-D array's shape by path, nested targets.
BY_PATH = [
    # a tuple holds the array itself: a local rebound or a copy written after keeps the tuple's
    "y = x[:3]\nt = (y, 1)\ny = x[5:]\nreturn t[0][0] * 10 + len(t[0])",
    "a = x.copy()\nt = (a.copy(), 1)\na[0] = 99.0\nreturn t[0][0]",
    "y = x[:4]\nt = (y.reshape(2, 2), 1)\ny = x[5:]\nreturn t[0][1, 0]",
    # a 2-D array's column count follows the path taken
    "w = x.reshape(3, 3)\nif x[0] > 400:\n    w = x[:8].reshape(2, 4)\nreturn w[1, 0]",
    "w = x.reshape(3, 3)\nif x[0] > 400:\n    w = w[:, ::-1]\nreturn w[0, 2]",
    "w = x.reshape(3, 3)\nn = 0\nfor i in range(2):\n    n += w.shape[1]\n    w = w[:, 1:]\nreturn n",
    "w = x.reshape(3, 3)\nk = 0\nwhile w.shape[1] > 1:\n    w = w[:, 1:]\n    k += 1\nreturn k * 100 + w[2, 0]",
]


@pytest.mark.parametrize("body", BY_PATH)
def test_values_follow_the_path_taken(body):
    _assert_same_as_python(body)


@pytest.mark.parametrize("body,match", [
    ("y = x.copy()\ny[0], (d, c) = 5.0, (y[:3], 1.0)\nreturn d[0]", "writes into an array and assigns arrays"),
    ("y = x.copy()\n(a, c), b = (y, 1), 2\na[0] = 50.0\nreturn y[0]", "shares memory"),
    ("y = x.copy()\nb, (a, c) = 2, (y[:4], 1)\ny[0] = 5.0\nreturn a[0]", "shares memory"),
    ("return float(all(x.reshape(3, 3)))", "truth value is ambiguous"),
    ("return np.nan_to_num(x, nan=None).sum()", "takes a number"),
])
def test_nested_and_two_d_forms_are_refused(body, match):
    src, _ = _function(body)
    with pytest.raises(ndjit.FilterCompileError, match=match):
        ndjit.jit_filter(src)
