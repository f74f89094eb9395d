"""A plain function's spec is kept between calls only while everything it reads from outside is
the same unchangeable objects (`ndjit/_spec_cache.py`): every way of changing such a value
between two calls must reach the compiled filter."""
import types

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from ndjit import _spec_cache

X = np.arange(9.0)
SCALE = 2.0
WEIGHTS = np.ones(9)


def scaled(x):
    return np.max(x) * SCALE


def weighted(x):
    return np.sum(x * WEIGHTS)


class Config:
    k = 1.0


def configured(x):
    return np.max(x) + Config.k


def helper(v):
    return v + 1.0


def helped(x):
    return helper(np.max(x))


def run(f):
    return ndjit.jit_filter(f).evaluate(X)


def test_the_spec_is_kept_while_the_values_are_the_same_objects():
    global SCALE
    assert run(scaled) == 16.0
    first = ndjit.jit_filter(scaled)._spec
    assert ndjit.jit_filter(scaled)._spec is first  # kept
    SCALE = 3.0  # a global rebound
    try:
        assert run(scaled) == 24.0
        assert ndjit.jit_filter(scaled)._spec is not first
    finally:
        SCALE = 2.0
    assert run(scaled) == 16.0


def test_values_that_change_in_place_are_read_on_every_call():
    # An array mutated in place, a class attribute reassigned, a helper redefined: never kept.
    global helper
    assert run(weighted) == 36.0
    WEIGHTS[:] = 2.0
    try:
        assert run(weighted) == 72.0
    finally:
        WEIGHTS[:] = 1.0
    assert run(configured) == 9.0
    Config.k = 5.0
    try:
        assert run(configured) == 13.0
    finally:
        Config.k = 1.0
    assert run(helped) == 9.0
    old = helper
    helper = lambda v: v * 10.0  # noqa: E731
    try:
        assert run(helped) == 80.0
    finally:
        helper = old
    for f in (weighted, configured, helped):
        assert _spec_cache.fingerprint(f) is None, f.__name__


def test_defaults_closures_and_code_are_part_of_what_is_kept():
    def make(c):
        def f(x, k=1.0, *, j=0.5):
            return np.max(x) * k + j + c
        return f

    f = make(10.0)
    assert run(f) == 8.0 + 0.5 + 10.0
    f.__defaults__ = (2.0,)
    assert run(f) == 16.0 + 0.5 + 10.0
    f.__kwdefaults__["j"] = 0.25  # the dict changed in place
    assert run(f) == 16.0 + 0.25 + 10.0
    # The closure cell rebound.
    g = make(1.0)
    cell = g.__closure__[0]
    assert run(g) == 8.0 + 0.5 + 1.0
    cell.cell_contents = 4.0
    assert run(g) == 8.0 + 0.5 + 4.0
    # The code replaced (same names, another body).
    h = make(0.0)
    assert run(h) == 8.5
    h.__code__ = make2().__code__
    assert run(h) == 0.0 * 1.0 + 0.5 + 0.0


def make2():
    c = 0.0

    def f(x, k=1.0, *, j=0.5):
        return np.min(x) * k + j + c
    return f


def uses_max(x):
    return max(x)


K = 1.0


def plus_k(x):
    return x[0] + K


def test_shadowing_a_builtin_after_a_call_is_seen():
    # A global `max` defined after the first call changes what `max(x)` means to Python: the spec
    # is described again, and ndjit follows Python or refuses, as on a first call.
    assert run(uses_max) == 8.0
    globals()["max"] = lambda v: -1.0
    try:
        try:
            got = run(uses_max)
        except Exception as e:  # refused: it must name the shadowed builtin
            assert "max" in str(e)
        else:
            assert got == uses_max(X) == -1.0
    finally:
        del globals()["max"]
    assert run(uses_max) == 8.0


def test_kept_values_compare_by_identity_not_equality():
    # 1.0 and True are equal, but ndjit binds a float and a bool differently.
    global K
    keys = _spec_cache.fingerprint(plus_k)
    assert keys is not None
    K = True
    try:
        assert not _spec_cache._same(keys, _spec_cache.fingerprint(plus_k))
        assert not isinstance(ndjit.jit_filter(plus_k)._spec.bindings["K"], float)  # bound as a bool or an int
        assert run(plus_k) == plus_k(X)
    finally:
        K = 1.0
    assert ndjit.jit_filter(plus_k)._spec.bindings["K"] == 1.0


def scaled_by_sum(x):
    return np.max(x) * np.sum(SCALE)


def test_a_global_rebound_to_an_array_then_changed_in_place_is_read_afresh():
    # The kept entry (SCALE a float) must not be reused once SCALE is an array, nor after that
    # array changes in place, nor stay stale when the float comes back.
    global SCALE
    assert run(scaled_by_sum) == 16.0
    SCALE = np.array([3.0])
    try:
        assert run(scaled_by_sum) == 24.0
        SCALE[...] = 4.0
        assert run(scaled_by_sum) == 32.0
    finally:
        SCALE = 2.0
    assert run(scaled_by_sum) == 16.0


ONE_AND_A_HALF, TWO_AND_A_HALF = 1.5, 2.5
RACED = ONE_AND_A_HALF


def times_raced(x):
    return x[0] * RACED


def test_a_global_rebound_while_the_function_is_described_is_compiled_as_first_read(monkeypatch):
    # Another thread rebinding a global between the reading the spec is kept under and the one
    # it is described from left a spec of 2.5 kept under 1.5: every later call with 1.5 gave 2.5.
    from ndjit import _frontend

    global RACED
    original = _frontend._from_function

    def rebinding_meanwhile(func, *args, **kwargs):
        global RACED
        RACED = TWO_AND_A_HALF
        return original(func, *args, **kwargs)

    monkeypatch.setattr(_frontend, "_from_function", rebinding_meanwhile)
    try:
        RACED = ONE_AND_A_HALF
        _spec_cache._specs.pop(times_raced, None)
        assert ndjit.jit_filter(times_raced)._spec.bindings["RACED"] == 1.5
    finally:
        monkeypatch.undo()
    RACED = ONE_AND_A_HALF  # the same object the kept spec was read with
    a = np.ones((2, 2))
    assert ndjit.generic_filter(a, times_raced, size=1)[0, 0] == times_raced(a.ravel()) == 1.5
    RACED = TWO_AND_A_HALF
    assert ndjit.generic_filter(a, times_raced, size=1)[0, 0] == times_raced(a.ravel()) == 2.5
    RACED = ONE_AND_A_HALF


def scaled_by_default(w, d=1.5):
    return w[4] * d


def scaled_by_keyword(w, *, k=1.5):
    return w[4] * k


@pytest.mark.parametrize("func, rebind", [
    (scaled_by_default, lambda f: setattr(f, "__defaults__", (-3.0,))),
    (scaled_by_keyword, lambda f: f.__kwdefaults__.__setitem__("k", -3.0)),
])
def test_a_default_rebound_while_the_function_is_described_is_compiled_as_first_read(func, rebind):
    # As for globals: the defaults too are read once, for the key and the spec alike.
    import sys

    a = np.arange(9.0).reshape(3, 3)
    saved = (func.__defaults__, dict(func.__kwdefaults__ or {}))

    def profile(frame, event, arg):  # another thread rebinding the default mid-description
        if event == "call" and frame.f_code.co_name == "_parameter_values":
            rebind(func)

    _spec_cache._specs.pop(func, None)
    sys.setprofile(profile)
    try:
        ndjit.jit_filter(func)
    finally:
        sys.setprofile(None)
    func.__defaults__ = saved[0]
    if func.__kwdefaults__ is not None:
        func.__kwdefaults__.update(saved[1])
    want = ndi.generic_filter(a, func, size=3)
    assert want[1, 1] == 6.0
    assert np.array_equal(ndi.generic_filter(a, ndjit.jit_filter(func), size=3), want)
    assert np.array_equal(ndjit.generic_filter(a, func, size=3), want)
