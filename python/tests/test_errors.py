"""Compile errors carry the user's file, line, column and a caret; run-time errors raise the
exception the user's Python would raise, with the location, and leave the Filter usable."""
import os

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit


def test_syntax_error_points_into_the_users_file():
    def bad(x):
        return x.max() - undefined_thing  # noqa: F821

    with pytest.raises(ndjit.FilterSyntaxError) as info:
        ndjit.jit_filter(bad)
    e = info.value
    assert isinstance(e, SyntaxError)
    assert e.filename == os.path.abspath(__file__)
    assert e.lineno == bad.__code__.co_firstlineno + 1
    assert e.text.strip() == "return x.max() - undefined_thing  # noqa: F821"
    assert e.text[e.offset - 1 :].startswith("undefined_thing")
    assert "name `undefined_thing` is not defined" in str(e) and "^^^^" in str(e)


def test_inline_lambda_error_column():
    with pytest.raises(ndjit.FilterSyntaxError) as info:
        ndjit.jit_filter(lambda v: v.max() + nope)  # noqa: F821
    e = info.value
    assert e.text[e.offset - 1 :].startswith("nope")


def test_type_errors_are_type_errors():
    with pytest.raises(ndjit.FilterTypeError) as info:
        ndjit.jit_filter("x[1.5]")
    assert isinstance(info.value, TypeError)
    assert (info.value.lineno, info.value.col) == (1, 3)
    with pytest.raises(TypeError, match="must be a number, but this is an array"):
        ndjit.jit_filter("x - 1")


@pytest.mark.parametrize("src,exc,msg", [
    ("x[12]", IndexError, "index 12 is out of bounds for axis 0 with size 9"),
    ("np.min(x[x > 2])", ValueError, "zero-size array to reduction operation minimum"),
    ("def f(x):\n    n = 0\n    return 1.0 / n", ZeroDivisionError, "float division by zero"),
    ("math.log(x[0] - 1)", ValueError, "math domain error"),
    ("int(x[0] / 0)", OverflowError, "cannot convert float infinity to integer"),
])
def test_runtime_errors_raise_pythons_exception_through_scipy(src, exc, msg):
    img = np.random.default_rng(0).random((8, 8))
    f = ndjit.jit_filter(src)
    with pytest.raises(exc, match=msg) as info:
        ndi.generic_filter(img, f, size=3)
    assert isinstance(info.value, ndjit.FilterRuntimeError)
    assert info.value.lineno >= 1 and info.value.snippet and "^" in info.value.snippet
    # The filter stays usable after the exception was consumed.
    with pytest.raises(exc):
        ndi.generic_filter(img, f, size=3)


def _capsule_pointer(f):
    """The function pointer in scipy's own capsule of a LowLevelCallable (its item 0)."""
    import ctypes

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    capsule = tuple.__getitem__(f, 0)
    return get(capsule, name(capsule))


def test_successes_and_failures_alternate_with_scipys_capsule_redirected():
    """After the first call, scipy's capsule points straight at the specialised code; a failure
    points it back at the trampoline, whose next call resumes. Each call gives its own result."""
    f = ndjit.jit_filter("def f(x):\n    if x[4] < 0:\n        return x[100]\n    return np.max(x) - x[4]")
    trampoline = _capsule_pointer(f)
    good = np.random.default_rng(1).random((20, 20))
    bad = good.copy()
    bad[7, 7] = -1.0
    expected = ndi.generic_filter(good, lambda x: np.max(x) - x[4], size=3)
    for _ in range(3):
        assert np.array_equal(ndi.generic_filter(good, f, size=3), expected)
        assert _capsule_pointer(f) != trampoline, "the capsule was not redirected"
        with pytest.raises(IndexError, match="index 100"):
            ndi.generic_filter(bad, f, size=3)
        assert _capsule_pointer(f) == trampoline, "a failure must restore the trampoline"
    # The debug (interpreter) callable is never redirected.
    d = f.debug()
    ndi.generic_filter(good, d, size=3)
    assert _capsule_pointer(d) == _capsule_pointer(f.debug())


def test_redirect_takes_only_scipys_generic_filter_capsule():
    f = ndjit.jit_filter("np.max(x)")
    with pytest.raises(TypeError, match="generic_filter capsule"):
        f._context.redirect(object())
    with pytest.raises(TypeError, match="generic_filter capsule"):
        f._context.redirect(tuple.__getitem__(ndjit.jit_integrand("x * 2"), 0))


def test_scipy_stops_working_after_the_first_failure():
    """scipy keeps calling after a failure; the callback returns at once (and records only the first)."""
    img = np.zeros((300, 300))
    img[0, 0] = 1.0
    f = ndjit.jit_filter("def f(x):\n    if x[4] == 1.0:\n        return x[100]\n    return np.median(x)")
    with pytest.raises(IndexError):
        ndi.generic_filter(img, f, size=3)
    assert "index 100" in str(f.failure())
    f.reset()
    assert f.failure() is None


def test_debug_mode_runs_the_interpreter_with_the_same_results():
    img = np.random.default_rng(3).random((9, 9))
    f = ndjit.jit_filter("np.std(x) / (np.mean(x) + 1)")
    a = ndi.generic_filter(img, f, size=3)
    b = ndi.generic_filter(img, f.debug(), size=3)
    assert np.array_equal(a, b)
    with pytest.raises(IndexError):
        ndi.generic_filter(img, ndjit.jit_filter("x[9]").debug(), size=3)


def test_nothing_a_user_passes_crashes():
    f = ndjit.jit_filter("np.median(x)")
    for bad in ([], [np.nan], [np.inf, -np.inf], np.arange(10_000.0)):
        f.evaluate(bad)
    with pytest.raises(IndexError):
        ndjit.jit_filter("x[0]").evaluate([])


def test_every_compile_error_kind_has_its_class():
    """The core's kinds, enumerated from the core itself: each makes a FilterSyntaxError or a
    FilterTypeError (wrong types, arguments and bound values) carrying its typed kind."""
    from ndjit import _core, _errors

    type_kinds = {"type error", "wrong arguments", "binding error"}
    assert {k.value for k in ndjit.ErrorKind} == {display for display, _ in _core.ERROR_KINDS}
    for display, _ in _core.ERROR_KINDS:
        e = _errors.compile_error(display, "m", 1, 2, 1, 3, "x + y", None, "", None)
        assert isinstance(e, ndjit.FilterTypeError if display in type_kinds else ndjit.FilterSyntaxError)
        assert isinstance(e, TypeError if display in type_kinds else SyntaxError)
        assert e.error_kind is ndjit.ErrorKind(display) and e.kind == display


def test_every_runtime_exception_has_its_class():
    """Each exception the core names maps to a FilterRuntimeError that is also that exception."""
    import builtins
    import statistics

    from ndjit import _core, _errors

    assert len(_core.EXCEPTIONS) == len(set(_core.EXCEPTIONS)) >= 6
    libraries = {"AxisError": np.exceptions.AxisError, "StatisticsError": statistics.StatisticsError}
    for name in _core.EXCEPTIONS:
        e = _errors.runtime_error(name, "m", 1, 2, None)
        base = libraries.get(name) or getattr(builtins, name)
        assert isinstance(e, ndjit.FilterRuntimeError) and isinstance(e, base), name
        assert getattr(ndjit, type(e).__name__) is type(e)


def test_unknown_names_carry_the_name():
    """The binding layer tells an unbound value by the error's typed kind and name, not its text."""
    with pytest.raises(ndjit.FilterSyntaxError) as info:
        ndjit.jit_filter("x[0] + undefined_thing")
    assert info.value.error_kind is ndjit.ErrorKind.UNKNOWN_NAME
    assert info.value.name == "undefined_thing"
    with pytest.raises(ndjit.FilterSyntaxError) as info:
        ndjit.jit_filter("np.undefined_thing(x)")
    assert info.value.error_kind is ndjit.ErrorKind.UNKNOWN_NAME and info.value.name is None


RUNTIME_MODULE = '''
import numpy as np


def helper(v):
    return v[20]


def f(x):
    if x.sum() > 4:
        raise ValueError("too big")
    return helper(x)
'''


def test_runtime_errors_point_into_the_users_file_like_compile_errors(tmp_path, monkeypatch):
    """Through scipy, ndjit's driver and evaluate, in the function and in an inlined helper: the
    file, its line and column, and the file's own line quoted with a caret."""
    (tmp_path / "ndjit_runtime_lines.py").write_text(RUNTIME_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    import sys
    try:
        mod = importlib.import_module("ndjit_runtime_lines")
        f = ndjit.jit_filter(mod.f)
        path = mod.__file__
        big, small = np.ones((5, 5)), np.zeros((5, 5))
        calls = [
            (lambda img: ndi.generic_filter(img, f, size=3), "scipy"),
            (lambda img: ndjit.generic_filter(img, f, size=3), "driver"),
            (lambda img: ndjit.generic_filter(img, f, size=3, workers=2), "driver, 2 threads"),
            # The plain function: the driver compiles it without making an ndjit.Filter.
            (lambda img: ndjit.generic_filter(img, mod.f, size=3), "driver, the function itself"),
            (lambda img: f.evaluate(img[:3, :3]), "evaluate"),
        ]
        for call, how in calls:
            with pytest.raises(ValueError, match="too big") as e:
                call(big)
            err = e.value
            assert (err.filename, err.lineno, err.col) == (path, 11, 9), how
            assert str(err).startswith(f"too big ({path}:11:9)\n11 |         raise ValueError"), how
            assert err.snippet.splitlines()[1] == "   |         " + "^" * len('raise ValueError("too big")')
            with pytest.raises(IndexError) as e:
                call(small)
            assert (e.value.filename, e.value.lineno, e.value.col) == (path, 6, 14), how
            assert e.value.snippet.startswith("6 |     return v[20]"), how
    finally:
        sys.modules.pop("ndjit_runtime_lines", None)


def test_runtime_errors_of_source_text_keep_the_filters_own_lines():
    f = ndjit.jit_filter("def g(x):\n    return x[20]")
    with pytest.raises(IndexError) as e:
        f.evaluate(np.zeros(9))
    assert e.value.filename is None and (e.value.lineno, e.value.col) == (2, 14)
    assert str(e.value).startswith("index 20 is out of bounds for axis 0 with size 9 (filter line 2, column 14)")


def test_errors_pickle_with_their_type_message_and_position():
    """A Dask worker's failure reaches the client pickled: the same class (so still a ValueError,
    an IndexError...), message, file, line and column."""
    import pickle

    def located(x):
        return x[20]

    errors = []
    for call in (lambda: ndjit.jit_filter(located).evaluate(np.zeros(9)),
                 lambda: ndjit.jit_filter("x[20]").evaluate(np.zeros(9)),
                 lambda: ndjit.jit_filter("x[1.5]"),
                 lambda: ndjit.jit_filter(bad_for_pickling)):
        with pytest.raises(ndjit.FilterError) as e:
            call()
        errors.append(e.value)
    assert errors[0].filename == os.path.abspath(__file__)
    for e in errors:
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e) and str(back) == str(e)
        assert (back.filename, back.lineno, back.col) == (e.filename, e.lineno, e.col)
    assert isinstance(pickle.loads(pickle.dumps(errors[0])), IndexError)
    assert pickle.loads(pickle.dumps(errors[3])).error_kind is ndjit.ErrorKind.UNKNOWN_NAME


def bad_for_pickling(x):
    return x.max() + not_defined_anywhere  # noqa: F821
