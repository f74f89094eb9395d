"""scipy's argument handling as ndjit remembers it (ndjit/_scipy_args.py): the same results,
errors and warnings as scipy's on every call, and a small per-call cost."""
import statistics
import time
import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

MIN = ndjit.jit_filter(lambda x: x.min())


def outcome(call):
    """``("ok", result)`` or ``(exception type, message)``."""
    try:
        return "ok", call()
    except Exception as e:  # noqa: BLE001 - the comparison is the point
        return type(e), str(e)


def assert_same_outcome(got, want):
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        np.testing.assert_array_equal(got[1], want[1])
    else:
        assert got[1] == want[1]


# Arguments equal in Python but read differently by scipy, and errors: each is normalised anew
# or from the memory of an argument of the same type, and must give scipy's outcome either way.
@pytest.mark.parametrize("kwargs", [
    dict(size=3), dict(size=3.0), dict(size=True), dict(size=np.int64(3)), dict(size=(3, 2)), dict(size=(3, 2.0)),
    dict(size=3, origin=1), dict(size=3, origin=2), dict(size=3, origin=(1, -1)), dict(size=3, origin=True),
    dict(size=3, origin=np.True_), dict(size=3, origin=1.0), dict(size=3, origin=(0, np.float64(1))),
    dict(size=3, origin=np.int8(-1)), dict(size=3, origin="1"), dict(size=3, origin=2**70),
    dict(size=3, axes=1), dict(size=3, axes=(1, 1)), dict(size=3, axes=5), dict(size=(2, 2), axes=(-1, 0)),
    dict(size=3, mode="wrap"), dict(size=3, mode="nope"), dict(size=None),
])
def test_arguments_give_scipys_outcome_on_every_call(kwargs):
    x = np.arange(20.0).reshape(4, 5)
    want = outcome(lambda: ndi.generic_filter(x, MIN, **kwargs))
    for _ in range(2):
        assert_same_outcome(outcome(lambda: ndjit.generic_filter(x, MIN, **kwargs)), want)


FILTER1D = ndjit.jit_filter1d("def f(i, o):\n    o[:] = i[:len(o)]\n")


@pytest.mark.parametrize("filter_size", [3, 3.0, True, np.int8(3)])
@pytest.mark.parametrize("origin", [0, 1.0, True, np.int8(-1)])
def test_generic_filter1d_reads_size_and_origin_as_scipy_does(filter_size, origin):
    x = np.arange(20.0).reshape(4, 5)
    want = outcome(lambda: ndi.generic_filter1d(x, FILTER1D, filter_size, origin=origin))
    assert_same_outcome(outcome(lambda: ndjit.generic_filter1d(x, FILTER1D, filter_size, origin=origin)), want)


def test_a_remembered_footprint_is_shared_read_only():
    from ndjit._scipy_args import footprint_and_origins
    fp, origins = footprint_and_origins(2, 3, None, 0, None, "reflect")
    again, origins_again = footprint_and_origins(2, 3, None, 0, None, "reflect")
    assert again is fp and not fp.flags.writeable
    origins.append(7)  # each call has its own list
    assert origins_again == [0, 0]
    big, _ = footprint_and_origins(2, 65, None, 0, None, "reflect")  # too large to keep: made anew
    assert big.all() and big.shape == (65, 65) and big.flags.writeable and big.flags.c_contiguous
    assert footprint_and_origins(2, 65, None, 0, None, "reflect")[0] is not big


CROSS = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]])


# Footprint arrays are remembered by dtype, shape and bytes: equal ones share the normalised
# footprint, different ones (content, dtype, shape, strides) and errors get scipy's outcome.
@pytest.mark.parametrize("kwargs", [
    dict(footprint=CROSS), dict(footprint=CROSS.astype(bool)), dict(footprint=CROSS.astype(np.float32)),
    dict(footprint=CROSS.T.copy()), dict(footprint=CROSS[::-1]), dict(footprint=np.ones((3, 1), np.int8)),
    dict(footprint=np.array([[0.5, np.nan, 0.0]])), dict(footprint=np.zeros((3, 3))),
    dict(footprint=CROSS, origin=1), dict(footprint=CROSS, origin=2), dict(footprint=CROSS, axes=(1, 0)),
    dict(footprint=CROSS, mode="nope"), dict(footprint=np.ones(3)), dict(footprint=np.ones((2, 2, 2))),
    dict(footprint=CROSS, size=5),
])
def test_footprint_arrays_give_scipys_outcome_on_every_call(kwargs):
    x = np.arange(20.0).reshape(4, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = outcome(lambda: ndi.generic_filter(x, MIN, **kwargs))
        for _ in range(2):
            assert_same_outcome(outcome(lambda: ndjit.generic_filter(x, MIN, **kwargs)), want)


def test_a_footprint_array_is_remembered_by_its_contents():
    from ndjit._scipy_args import footprint_and_origins
    a, _ = footprint_and_origins(2, None, CROSS, 0, None, "reflect")
    b, _ = footprint_and_origins(2, None, CROSS.copy(), 0, None, "reflect")
    assert a is b and not a.flags.writeable and a.dtype == bool
    changed = CROSS.copy()
    changed[0, 0] = 1
    c, _ = footprint_and_origins(2, None, changed, 0, None, "reflect")
    assert c is not a and c[0, 0] and not a[0, 0]


@pytest.mark.parametrize("via", ["numpy", "inspect_ptx"])
def test_the_size_and_footprint_warning_points_at_the_callers_line(via):
    x, fp = np.arange(9.0).reshape(3, 3), np.ones((3, 3), bool)
    with warnings.catch_warnings(record=True) as scipy_w:
        warnings.simplefilter("always")
        ndi.generic_filter(x, MIN, size=3, footprint=fp)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        if via == "numpy":
            ndjit.generic_filter(x, MIN, size=3, footprint=fp)
        else:
            MIN.inspect_ptx(size=3, footprint=fp)
    assert [(w.category, str(w.message)) for w in ours] == [(w.category, str(w.message)) for w in scipy_w]
    assert ours[0].filename == __file__


def test_a_small_image_costs_microseconds_per_call():
    # 50 µs before the driver remembered its keys and the arguments (benches/percall.py); the
    # bound leaves room for a loaded machine.
    x = np.ones((1, 1))
    for _ in range(100):
        ndjit.generic_filter(x, MIN, size=3)
    times = []
    for _ in range(500):
        t = time.perf_counter_ns()
        ndjit.generic_filter(x, MIN, size=3)
        times.append(time.perf_counter_ns() - t)
    assert statistics.median(times) < 25_000, f"{statistics.median(times) / 1e3:.1f} µs per call"
