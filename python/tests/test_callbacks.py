"""Issue 15: callbacks as people write them compile unchanged and give scipy's result: helper
functions (module level, enclosing scope, factories, defaults), rebinding and writing into the
window, raise and assert. Each is checked against scipy running the plain Python function."""
import importlib.util
import os
import textwrap

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import assert_same

IMG = np.random.default_rng(15).random((9, 11))
IMG_NAN = np.where(np.random.default_rng(16).random((9, 11)) < 0.2, np.nan, IMG)


def same_as_scipy(func, img=IMG, **kw):
    """ndjit's callable and its native driver give what scipy gives with the Python function."""
    want = ndi.generic_filter(img, func, size=3, **kw)
    f = ndjit.jit_filter(func, extra_arguments=kw.pop("extra_arguments", ()))
    assert_same(ndi.generic_filter(img, f, size=3, **kw), want)
    assert_same(ndjit.generic_filter(img, f, size=3, **kw), want)


def load_module(tmp_path, name, text):
    """A module of the user's (pytest rewrites `assert` in test files, not in modules)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- helper functions ---------------------------------------------------------------------------

GAIN = 2.5


def clamp(v, lo=0.2, hi=0.8):
    return min(max(v, lo), hi)


def scaled_range(a):
    return (a.max() - a.min()) * GAIN


square = lambda v: v * v  # noqa: E731


def uses_module_helpers(w):
    return clamp(w.mean()) + scaled_range(w) + square(w[4])


def test_module_level_helpers_with_their_globals():
    same_as_scipy(uses_module_helpers)


def test_enclosing_scope_helper_and_closure_values():
    k = 3.0

    def spread(a):
        return a.std() * k

    def filt(w):
        return spread(w) - w.min()

    same_as_scipy(filt)


def make(func):
    return lambda w: func(w) + 1.0


def test_function_passed_into_a_factory():
    same_as_scipy(make(scaled_range))
    same_as_scipy(make(np.median))


def test_function_as_default_and_extra_argument():
    def filt(w, reduce=scaled_range):
        return reduce(w)

    same_as_scipy(filt)

    def apply(w, reduce):
        return reduce(w) * 2

    want = ndi.generic_filter(IMG, apply, size=3, extra_arguments=(clamp_mean,))
    f = ndjit.jit_filter(apply, extra_arguments=(clamp_mean,))
    assert_same(ndi.generic_filter(IMG, f, size=3), want)


def clamp_mean(a):
    return clamp(a.mean())


def test_helper_from_another_module(tmp_path):
    trimmed = load_module(tmp_path, "ndjit_cb_other", """
        import numpy as np
        SCALE = 4.0

        def trimmed(a):
            s = np.sort(a)
            return s[1:-1].mean() * SCALE
    """).trimmed

    def filt(w):
        return trimmed(w) - w[4]

    same_as_scipy(filt)


def recurse(v):
    return recurse(v - 1) if v > 0 else v


def bad_helper(v):
    return v + undefined_in_helper  # noqa: F821


def test_errors_inside_helpers_point_into_the_helpers_file():
    with pytest.raises(ndjit.FilterCompileError, match="recursion cannot be inlined: `recurse` calls `recurse`") as info:
        ndjit.jit_filter(lambda w: recurse(w[0]))
    e = info.value
    assert e.filename == os.path.abspath(__file__)
    assert e.lineno == recurse.__code__.co_firstlineno + 1
    assert e.text.strip().startswith("return recurse(v - 1)")
    with pytest.raises(ndjit.FilterCompileError, match="undefined_in_helper") as info:
        ndjit.jit_filter(lambda w: bad_helper(w[0]))
    e = info.value
    assert e.lineno == bad_helper.__code__.co_firstlineno + 1
    assert e.text[e.col - 1:].startswith("undefined_in_helper")


def test_one_name_two_values_is_an_error():
    def inner(a):
        return a.sum() * GAIN

    def filt(w, GAIN=1.0):  # noqa: N803  (a parameter named like the helper's global)
        return inner(w) + GAIN

    with pytest.raises(TypeError, match="`GAIN` means different values"):
        ndjit.jit_filter(filt)


# --- rebinding and writing into the window ------------------------------------------------------

def test_writes_into_the_window_do_not_leak_between_pixels():
    def zero_centre(buf):
        buf[4] = 0
        buf[buf > 0.7] = 0.7
        return buf.sum()

    same_as_scipy(zero_centre)

    def majority(values):
        values = values.astype(int)
        return np.bincount(values).argmax()

    same_as_scipy(majority, img=np.floor(IMG * 4))

    def finite_mean(x):
        x = x[np.isfinite(x)]
        return x.mean() if x.size else -1.0

    same_as_scipy(finite_mean, img=IMG_NAN)


# --- raise and assert ---------------------------------------------------------------------------

def test_raise_and_assert_give_the_same_exception_and_message(tmp_path):
    def no_nan(w):
        if np.isnan(w).any():
            raise ValueError("window has NaN")
        return w.mean()

    sized = load_module(tmp_path, "ndjit_cb_assert", """
        def sized(w):
            assert len(w) == 9, "expected 3x3"
            return w.mean()
    """).sized

    # scipy keeps calling a Python callback after it raised (a SystemError at the next pixel),
    # so the reference is the function itself on a window of that kind.
    for func, exc, msg, kw, window in [(no_nan, ValueError, "window has NaN", {}, [1.0, np.nan]),
                                       (sized, AssertionError, "expected 3x3", {"size": 2}, [1.0] * 4)]:
        with pytest.raises(exc, match=msg):
            func(np.array(window))
        f = ndjit.jit_filter(func)
        with pytest.raises(exc, match=msg) as info:
            ndi.generic_filter(IMG_NAN, f, **({"size": 3} | kw))
        assert isinstance(info.value, ndjit.FilterRuntimeError)


def test_source_unavailable_is_exported():
    assert issubclass(ndjit.SourceUnavailable, Exception)
    ns = {}
    exec("f = lambda x: x.sum()", ns)  # no linecache entry: Python keeps no source
    with pytest.raises(ndjit.SourceUnavailable, match="pass its source as a string"):
        ndjit.jit_filter(ns["f"])


# --- more bound values --------------------------------------------------------------------------

class Cfg:
    k = 2.0
    method = "mean"


class Params:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


def test_class_and_instance_attributes_and_strings():
    cfg = Params(0.2, 0.7)

    def filt(w):
        v = w.mean() if Cfg.method == "mean" else np.median(w)
        return np.clip(v * Cfg.k, cfg.lo, cfg.hi)

    same_as_scipy(filt)


def test_string_parameter_selects_the_branch_at_compile_time():
    def filt(w, method="median"):
        if method == "mean":
            return w.mean()
        return np.median(w)

    same_as_scipy(filt)
    want = ndi.generic_filter(IMG, filt, size=3, extra_keywords={"method": "mean"})
    f = ndjit.jit_filter(filt, extra_keywords={"method": "mean"})
    assert_same(ndi.generic_filter(IMG, f, size=3), want)


def test_unbindable_attribute_is_named():
    class Holder:
        data = {"k": 1}

    def filt(w):
        return w.sum() * Holder.data

    with pytest.raises(ndjit.FilterTypeError, match="`Holder` is a type"):
        ndjit.jit_filter(filt)


# --- new-user errors ----------------------------------------------------------------------------

def test_scipy_function_is_named_with_the_closest_supported_code():
    import scipy
    import scipy.stats  # noqa: F401

    def filt(x):
        return scipy.stats.skew(x)

    with pytest.raises(ndjit.FilterTypeError) as info:
        ndjit.jit_filter(filt)
    e = info.value
    assert "`scipy.stats.skew` is not supported" in e.msg
    assert "np.mean(((x - x.mean()) / x.std()) ** 3)" in e.hint
    assert e.filename == os.path.abspath(__file__)
    assert e.lineno == filt.__code__.co_firstlineno + 1
    assert e.text[e.col - 1:].startswith("scipy.stats.skew")
    assert str(e).startswith(f"binding error at {os.path.abspath(__file__)}:{e.lineno}:")


def test_source_from_a_linecache_entry_like_ipython_cells():
    import linecache

    src = "import numpy as np\n\ndef cell_helper(a):\n    return a.max()\n\ndef cell_filter(w):\n    return cell_helper(w) - w.min()\n"
    name = "<ndjit-test-cell-1>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {}
    exec(compile(src, name, "exec"), ns)
    same_as_scipy(ns["cell_filter"])


KERNEL = np.array([[1.0, 2.0, 1.0], [0.0, 0.0, 0.0], [-1.0, -2.0, -1.0]])


def test_two_d_bound_arrays_index_by_row_and_column():
    def sobel(w):
        win = w.reshape(3, 3)
        total = 0.0
        for i in range(3):
            for j in range(3):
                total += win[i, j] * KERNEL[i, j]
        return total + KERNEL[-1, 0]

    same_as_scipy(sobel)

    def weighted(w, k):
        return (w.reshape(3, 3) * k).sum()

    want = ndi.generic_filter(IMG, weighted, size=3, extra_arguments=(KERNEL.T,))
    f = ndjit.jit_filter(weighted, extra_arguments=(KERNEL.T,))
    assert_same(ndi.generic_filter(IMG, f, size=3), want)
    assert_same(ndi.generic_filter(IMG, f.bind(k=KERNEL), size=3),
                ndi.generic_filter(IMG, weighted, size=3, extra_arguments=(KERNEL,)))
