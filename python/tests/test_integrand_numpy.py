"""NumPy scalars among quad's `args`: `args=(params[0],)` of a float64 array passes an np.float64,
whose rules differ from a Python float's (`1 / a` is `inf` for NumPy's zero where Python raises,
`round(a, 2)` rounds by another rule, an np.int64 wraps and floor-divides by zero to 0), and quad
hands both over as the same double. Where the integrand's result can depend on it, ndjit runs it
both ways and raises where they differ; where it cannot (the NumPy typing compiles to the same IR),
nothing more runs. A declared parameter (`a: np.float64`, `n: np.int64`) runs as NumPy's.
The oracle is quad running the Python function itself, with the scalar itself."""
import struct
import warnings

import numpy as np
import pytest
from scipy import integrate

import ndjit


def bits(v):
    return struct.pack("<d", v)


def quad_python(f, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return integrate.quad(f, 0, 1, args=args)[0]
        except Exception as e:  # the oracle's error, compared by class
            return type(e)


def quad_ndjit(f, args):
    return integrate.quad(ndjit.jit_integrand(f), 0, 1, args=args)[0]


def divided(x, a):
    return x / a


def rounded(x, a):
    return x * round(a, 2)


def floor_divided_by_zero(x, n):
    return x + n // (n - n)


DIFFERING = [
    # (integrand, the value, Python's result with the Python number, with the NumPy scalar)
    (divided, 0.0, np.float64),
    (rounded, 2.675, np.float64),
    (floor_divided_by_zero, 3, np.int64),
]


@pytest.mark.parametrize("func, value, numpy_type", DIFFERING)
def test_where_python_and_numpy_differ_either_value_raises(func, value, numpy_type):
    # The oracle differs between the two kinds of the same double.
    assert quad_python(func, (value,)) != quad_python(func, (numpy_type(value),))
    for arg in [value, numpy_type(value)]:
        with pytest.raises(TypeError, match=r"may stand for a Python number or a NumPy scalar") as e:
            quad_ndjit(func, (arg,))
        message = str(e.value)
        assert f"quad passed {float(value)!r} for" in message
        assert "np.float64" in message and "declare it" in message


@pytest.mark.parametrize("func, value, numpy_type", DIFFERING)
def test_a_numpy_declaration_gives_numpys_result(func, value, numpy_type):
    name = {np.float64: "np.float64", np.int64: "np.int64"}[numpy_type]
    param = func.__code__.co_varnames[1]
    body = {divided: "x / a", rounded: "x * round(a, 2)", floor_divided_by_zero: "x + n // (n - n)"}[func]
    source = f"def g(x, {param}: {name}):\n    return {body}"
    want = quad_python(func, (numpy_type(value),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = integrate.quad(ndjit.jit_integrand(source), 0, 1, args=(value,))[0]
    assert bits(got) == bits(want)


@pytest.mark.parametrize("func, value, numpy_type", DIFFERING)
def test_other_values_agree_and_run(func, value, numpy_type):
    other = {divided: 2.5, rounded: 0.5, floor_divided_by_zero: None}[func]
    if other is None:
        pytest.skip("this integrand raises or wraps for every int (checked above)")
    for arg in [other, numpy_type(other)]:
        assert bits(quad_ndjit(func, (arg,))) == bits(quad_python(func, (arg,)))


def test_numpy_typings_that_compile_alike_cost_nothing_and_count_for_nothing():
    # Nine float parameters: 2^9 = 512 typings, past the 256 ndjit runs, if each NumPy typing
    # counted; a product and sums never meet a rule in which NumPy's scalars differ, so none does.
    def polynomial(x, a, b, c, d, e, f, g, h, i):
        return x * (a + b + c + d + e + f + g + h + i)

    values = (0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5)
    for args in [values, tuple(np.float64(v) for v in values)]:
        assert bits(quad_ndjit(polynomial, args)) == bits(quad_python(polynomial, args))
    f = ndjit.jit_integrand(polynomial)
    assert f.evaluate(0.5, *values) == polynomial(0.5, *values)
    # With a division by each, every NumPy typing runs: too many.
    divided_by_all = ndjit.jit_integrand(
        "def q(x, a, b, c, d, e, f, g, h, i):\n    return x / a / b / c / d / e / f / g / h / i")
    with pytest.raises(TypeError, match="too many values"):
        integrate.quad(divided_by_all, 0, 1, args=values)


def test_ints_and_numpy_choices_count_together():
    def mixed(x, a, b, c, d, e):
        return x / a + x / b + x / c + (d + e) * 0.0

    f = ndjit.jit_integrand(mixed)
    # Three divisions (NumPy-sensitive) and five values that may be ints: 576 typings.
    with pytest.raises(TypeError, match="too many values that may stand for ints"):
        integrate.quad(f, 0, 1, args=(1, 2, 3, 4, 5))
    args = (1.5, 2.5, 3.5, 4.5, 5.5)
    assert bits(integrate.quad(f, 0, 1, args=args)[0]) == bits(quad_python(mixed, args))


def test_evaluate_runs_numpy_scalars_by_numpys_rules():
    f = ndjit.jit_integrand(divided)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = divided(0.5, np.float64(0.0))
    assert want == np.inf
    assert f.evaluate(0.5, np.float64(0.0)) == want
    assert f.interpret(0.5, np.float64(0.0)) == want
    g = ndjit.jit_integrand(rounded)
    assert bits(g.evaluate(1.0, np.float64(2.675))) == bits(rounded(1.0, np.float64(2.675)))
    assert bits(g.evaluate(1.0, 2.675)) == bits(rounded(1.0, 2.675))
    h = ndjit.jit_integrand(floor_divided_by_zero)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert h.evaluate(0.5, np.int64(3)) == floor_divided_by_zero(0.5, np.int64(3))
    with pytest.raises(ZeroDivisionError):
        h.evaluate(0.5, 3)


@pytest.mark.parametrize("arg", [np.float32(0.5), np.int32(3), np.uint8(3), np.bool_(True), np.float16(1)])
def test_evaluate_refuses_numpy_scalars_it_does_not_model(arg):
    f = ndjit.jit_integrand(divided)
    with pytest.raises(TypeError, match=f"NumPy {type(arg).__name__}: ndjit models np.float64 and np.int64"):
        f.evaluate(0.5, arg)


@pytest.mark.parametrize("annotation", ["np.float32", "np.int32", "numpy.uint8"])
def test_a_narrower_numpy_declaration_is_refused_at_compile_time(annotation):
    source = f"def g(x, a: {annotation}):\n    return x * a"
    with pytest.raises(ndjit.FilterError, match="np.float64 or np.int64") as e:
        ndjit.jit_integrand(source)
    assert "narrower" in str(e.value)


def test_a_numpy_declaration_takes_no_default():
    with pytest.raises(ndjit.FilterError, match="declared a NumPy scalar takes no default"):
        ndjit.jit_integrand("def g(x, a: np.float64 = 0.5):\n    return x * a")


def test_a_declared_numpy_int_refuses_a_fraction():
    f = ndjit.jit_integrand("def g(x, n: np.int64):\n    return x * n")
    with pytest.raises(TypeError, match="declared an int"):
        integrate.quad(f, 0, 1, args=(2.5,))
    assert integrate.quad(f, 0, 1, args=(3,))[0] == integrate.quad(lambda x, n: x * n, 0, 1, args=(np.int64(3),))[0]


def test_an_np_int64_wraps_as_numpy_does_when_declared():
    source = "def g(x, n: np.int64):\n    return x * float(n * n * n * n * n)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = integrate.quad(lambda x, n: x * float(n * n * n * n * n), 0, 1, args=(np.int64(9_000_001),))[0]
        got = integrate.quad(ndjit.jit_integrand(source), 0, 1, args=(9_000_001,))[0]
    assert bits(got) == bits(want)
