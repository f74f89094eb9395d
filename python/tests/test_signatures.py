"""generic_filter1d, geometric_transform and quad callables, as scipy's own C-API tests use them."""
import math
import threading

import numpy as np
import pytest
import scipy.ndimage as ndi
from scipy import integrate

import ndjit
from conftest import assert_same


def filter1d(input_line, output_line, filter_size):
    for i in range(output_line.size):
        output_line[i] = 0
        for j in range(filter_size):
            output_line[i] += input_line[i + j]
    output_line /= filter_size


def moving_average(iline, oline):
    oline[...] = (iline[:-2] + iline[1:-1] + iline[2:]) / 3.0


def transform(output_coordinates, shift):
    return output_coordinates[0] - shift, output_coordinates[1] - shift


def test_generic_filter1d_like_scipys_c_api_test():
    im = np.tile(np.hstack((np.zeros(10), np.ones(10))), (10, 1))
    f = ndjit.jit_filter1d(filter1d, extra_arguments=(3,))
    assert f.signature == "int (double *, intptr_t, double *, intptr_t, void *)"
    res = ndi.generic_filter1d(im, f, 3)
    std = ndi.generic_filter1d(im, filter1d, 3, extra_arguments=(3,))
    assert_same(res, std)
    g = ndjit.jit_filter1d(moving_average)
    assert_same(ndi.generic_filter1d(im, g, 3, mode="nearest"), ndi.generic_filter1d(im, moving_average, 3, mode="nearest"))
    assert np.allclose(g.evaluate([3.0, 6.0, 9.0, 12.0], 2), [6.0, 9.0])


def test_geometric_transform_like_scipys_c_api_test():
    im = np.arange(12).reshape(4, 3).astype(np.float64)
    f = ndjit.jit_transform(transform, extra_arguments=(0.5,))
    assert f.signature == "int (intptr_t *, double *, int, int, void *)"
    assert_same(ndi.geometric_transform(im, f), ndi.geometric_transform(im, transform, extra_arguments=(0.5,)))
    assert f.evaluate([3, 2]) == (2.5, 1.5)
    # Too few coordinates: scipy's TypeError (from PyTuple_GetItem and PyFloat_AsDouble).
    with pytest.raises(TypeError):
        ndi.geometric_transform(np.zeros((2, 2, 2)), transform, extra_arguments=(0.5,))
    with pytest.raises(TypeError, match="returned 2 coordinates, but the input has rank 3"):
        ndi.geometric_transform(np.zeros((2, 2, 2)), f)


def test_quad_passes_args_through():
    def damped(x, a, b):
        return math.exp(-a * x) * math.cos(b * x)

    f = ndjit.jit_integrand(damped)
    assert f.signature == "double (int, double *, void *)"
    got = integrate.quad(f, 0.0, 10.0, args=(0.5, 3.0))[0]
    want = integrate.quad(damped, 0.0, 10.0, args=(0.5, 3.0))[0]
    assert abs(got - want) <= 1e-12 * max(1, abs(want))
    g = ndjit.jit_integrand(lambda x: math.exp(-x * x))
    assert abs(integrate.quad(g, 0, 3)[0] - integrate.quad(lambda x: math.exp(-x * x), 0, 3)[0]) < 1e-14
    h = ndjit.jit_integrand("lambda x, y: x * y")
    assert abs(integrate.dblquad(h, 0, 1, 0, 2)[0] - 1.0) < 1e-12
    assert f.evaluate(0.5, 2.0, 3.0) == math.exp(-1.0) * math.cos(1.5)


def _domain(x):
    return math.sqrt(x - 0.5)


def test_quad_raises_the_integrands_own_exception():
    """quad's integrand has no error channel: the failure is raised from the quad call as the
    exception CPython raises there (not a SystemError), with the filter's location, in any thread."""
    f = ndjit.jit_integrand(_domain)
    with pytest.raises(ValueError) as want:
        integrate.quad(_domain, 0.0, 1.0)
    for _ in range(2):  # and again: the integrand stays usable
        with pytest.raises(ndjit.FilterValueError) as got:
            integrate.quad(f, 0.0, 1.0)
        assert type(got.value) is ndjit.FilterValueError and isinstance(got.value, ValueError)
        assert str(want.value) in str(got.value)
        # Located in this file, as compile errors are.
        assert (got.value.filename, got.value.lineno) == (__file__, _domain.__code__.co_firstlineno + 1)
        assert "math domain error" in str(f.failure())
        assert integrate.quad(f, 0.5, 1.0)[0] == integrate.quad(_domain, 0.5, 1.0)[0]
    raised = []

    def work():
        try:
            integrate.quad(f, 0.0, 1.0)
        except BaseException as e:  # noqa: BLE001 - the type is the assertion
            raised.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert [type(e) for e in raised] == [ndjit.FilterValueError]


def test_wrong_signature_is_refused_by_scipy():
    with pytest.raises(ValueError, match="signature"):
        ndi.generic_filter(np.zeros((3, 3)), ndjit.jit_transform(transform, extra_arguments=(0.5,)), size=3)
    with pytest.raises(TypeError, match="returns nothing"):
        ndjit.jit_filter1d("def f(a, o):\n    return 1.0")
    with pytest.raises(ValueError, match="debug mode"):
        ndjit.jit_filter1d(moving_average).debug()


@pytest.mark.parametrize("mode", ["reflect", "nearest", "constant", "wrap", "mirror"])
def test_native_generic_filter1d_matches_scipy(mode):
    im = np.random.default_rng(2).random((7, 30)).astype(np.float32)
    f = ndjit.jit_filter1d(moving_average)
    for axis in (-1, 0):
        for origin in (0, 1):
            want = ndi.generic_filter1d(im, f, 3, axis=axis, mode=mode, cval=0.5, origin=origin)
            got = ndjit.generic_filter1d(im, moving_average, 3, axis=axis, mode=mode, cval=0.5, origin=origin)
            assert got.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="invalid origin"):
        ndjit.generic_filter1d(im, f, 3, origin=2)
    with pytest.raises(TypeError, match="needs a generic_filter1d callback"):
        ndjit.generic_filter1d(im, ndjit.jit_filter("x[0]"), 3)


def accumulate(iline, oline):
    oline += iline[1:-1]
    oline[0] += 1.0


def test_the_output_line_starts_at_zero_on_every_line():
    # scipy gives a Python callback a new, zeroed `oline` for each line, but a C callback the
    # buffer of the line before: a callback that adds into `oline` must read zeros through both.
    im = np.arange(20.0).reshape(4, 5)
    want = ndi.generic_filter1d(im, accumulate, 3)
    assert want[:, 0].tolist() == (im[:, 0] + 1).tolist()  # not 1, 2, 3, 4 accumulated
    assert_same(ndi.generic_filter1d(im, ndjit.jit_filter1d(accumulate), 3), want)
    assert_same(ndjit.generic_filter1d(im, accumulate, 3), want)
    assert_same(ndjit.generic_filter1d(im, accumulate, 3, axis=0), ndi.generic_filter1d(im, accumulate, 3, axis=0))
