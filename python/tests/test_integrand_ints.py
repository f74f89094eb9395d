"""Python ints among quad's `args`: scipy hands a LowLevelCallable its args as doubles, so ndjit
cannot see whether `args=(0,)` held the int or the float. Where the integrand's result depends on
it, the call raises (naming the parameter and the declaration to write); where it does not, or
the parameter's type is declared (`a: int`, `a: float`), the result is CPython's, bit for bit.
The oracle is quad running the Python function itself."""
import math
import struct

import pytest
from scipy import integrate

import ndjit


def bits(v):
    return struct.pack("<d", v)


def quad_both(f, *args, lo=0.0, hi=1.0):
    """quad of the Python function and of its ndjit integrand, values only."""
    want = integrate.quad(f, lo, hi, args=args)[0]
    got = integrate.quad(ndjit.jit_integrand(f), lo, hi, args=args)[0]
    return got, want


def neg_times(x, a):
    return -a * x


def neg_times_float(x, a: float):
    return -a * x


def neg_times_int(x, a: int):
    return -a * x


def test_a_zero_int_and_a_zero_float_differ_so_the_call_raises():
    # CPython: the int 0 gives 0.0 at every node, the float 0.0 gives -0.0.
    assert bits(integrate.quad(neg_times, 0, 1, args=(0,))[0]) == bits(0.0)
    assert bits(integrate.quad(neg_times, 0, 1, args=(0.0,))[0]) == bits(-0.0)
    f = ndjit.jit_integrand(neg_times)
    for args in [(0,), (0.0,)]:
        with pytest.raises(TypeError, match=r"quad passed 0 for `a`, which may stand for the int or the float") as e:
            integrate.quad(f, 0, 1, args=args)
        assert "`a: int` or `a: float`" in str(e.value)
    # The integrand stays usable, and a value no int can be runs as before.
    got, want = quad_both(neg_times, 0.25)
    assert bits(got) == bits(want)


@pytest.mark.parametrize("func, args", [(neg_times_int, (0,)), (neg_times_float, (0.0,))])
def test_a_declared_type_says_which_and_gives_cpythons_result(func, args):
    got, want = quad_both(func, *args)
    assert bits(got) == bits(want)


def test_a_negative_zero_is_a_float_so_nothing_is_in_doubt():
    got, want = quad_both(neg_times, -0.0)
    assert bits(got) == bits(want) == bits(0.0)


@pytest.mark.parametrize("n", [0, 1, 3, 7])
def test_an_int_power_agrees_under_both_typings_and_runs(n):
    got, want = quad_both(lambda x, n: x ** n, n)
    assert bits(got) == bits(want)


def test_range_needs_an_int_declared():
    def repeated_int(x, n: int):
        s = 0.0
        for _ in range(n):
            s += x
        return s

    got, want = quad_both(repeated_int, 5)
    assert bits(got) == bits(want)

    def repeated(x, n):
        s = 0.0
        for _ in range(n):
            s += x
        return s

    # Undeclared, `n` is the float quad passes, which range refuses, as CPython does.
    with pytest.raises(TypeError):
        integrate.quad(repeated, 0, 1, args=(5.0,))
    with pytest.raises(ndjit.FilterTypeError, match=r"range\(\) arguments must be integers") as e:
        ndjit.jit_integrand(repeated)
    assert "declare the parameter an int (`def f(x, n: int)`)" in str(e.value)


def test_a_declared_int_takes_an_int_default_and_refuses_a_fraction():
    def power(x, n: int = 2):
        return x ** n

    f = ndjit.jit_integrand(power)
    assert bits(integrate.quad(f, 0, 1)[0]) == bits(integrate.quad(power, 0, 1)[0])
    with pytest.raises(TypeError, match="`n` is declared an int, but quad passed a value that is not one: not an integer"):
        integrate.quad(f, 0, 1, args=(2.5,))
    with pytest.raises(ndjit.FilterCompileError, match="a parameter declared an int takes an int default"):
        ndjit.jit_integrand("def f(x, n: int = 2.0):\n    return x ** n")
    with pytest.raises(ndjit.FilterCompileError, match="defaults are floats"):
        ndjit.jit_integrand("def f(x, n=2):\n    return x ** n")


def test_a_value_past_2_53_stands_for_many_ints_and_is_refused_unless_declared_float():
    def scaled(x, a):
        return a * x

    for a in [6.02214076e23, 2 ** 53, 2 ** 53 + 1, -(2 ** 53), 1e300]:
        with pytest.raises(TypeError, match=r"quad passed a value of 2\*\*53 or more for `a`, where a double stands for a float or for several ints"):
            integrate.quad(ndjit.jit_integrand(scaled), 0, 1, args=(a,))

    def scaled_float(x, a: float):
        return a * x

    got, want = quad_both(scaled_float, 6.02214076e23)
    assert bits(got) == bits(want)
    declared_int = ndjit.jit_integrand("def f(x, a: int):\n    return (a % 2) * x + x")
    for a in [1e20, 2 ** 53 + 1]:  # 2**53 + 1 arrives as 2**53, which is even
        with pytest.raises(TypeError, match="declared an int"):
            integrate.quad(declared_int, 0, 1, args=(a,))


def test_exact_int_arithmetic_is_not_replaced_by_float_arithmetic():
    # 3 ** 40 is exact as an int and rounded as a float; ndjit's int overflows 64 bits there.
    def residue(x, n):
        return (n ** 40 % 7) * x

    with pytest.raises(TypeError, match="`n`"):
        integrate.quad(ndjit.jit_integrand(residue), 0, 1, args=(3,))


def test_errors_both_typings_raise_alike_are_raised_as_cpython_raises_them():
    def blows_up(x, a):
        return x / (a - a)

    with pytest.raises(ZeroDivisionError):
        integrate.quad(blows_up, 0, 1, args=(1,))
    # An np.int64 or np.float64 would make it inf: the int and the float raise alike, NumPy's
    # scalars do not, so the call asks which the value is.
    with pytest.raises(TypeError, match="may stand for a Python number or a NumPy scalar"):
        integrate.quad(ndjit.jit_integrand(blows_up), 0, 1, args=(1,))
    declared = ndjit.jit_integrand("def blows_up(x, a: int):\n    return x / (a - a)")
    with pytest.raises(ZeroDivisionError):
        integrate.quad(declared, 0, 1, args=(1,))


def test_more_than_256_typings_are_refused():
    def many(x, a, b, c, d, e, f, g, h, i):
        return x * (a + b + c + d + e + f + g + h + i)

    f = ndjit.jit_integrand(many)
    # Nine values that may be ints or floats: 2^9 = 512 typings, past the 256 ndjit runs.
    with pytest.raises(TypeError, match="too many values that may stand for ints or floats"):
        integrate.quad(f, 0, 1, args=(1, 2, 3, 4, 5, 6, 7, 8, 9))
    for args in [(1, 2, 3, 4, 5, 6, 7.5, 8.5, 9.5), (1, 2, 3, 4, 5.5, 6.5, 7.5, 8.5, 9.5)]:
        got = integrate.quad(f, 0, 1, args=args)[0]
        assert bits(got) == bits(integrate.quad(many, 0, 1, args=args)[0])


def test_dblquads_outer_variable_is_a_float_which_a_declaration_says():
    # Gauss-Kronrod's middle node of [-1, 1] is 0.0: the outer variable x arrives as 0.0.
    def product(y, x):
        return x * y

    got = integrate.dblquad(ndjit.jit_integrand(product), -1, 1, -1, 1)[0]
    assert bits(got) == bits(integrate.dblquad(product, -1, 1, -1, 1)[0])

    def negated(y, x):
        return -x * y

    with pytest.raises(TypeError, match="`x`"):
        integrate.dblquad(ndjit.jit_integrand(negated), -1, 1, -1, 1)

    def negated_float(y, x: float):
        return -x * y

    got = integrate.dblquad(ndjit.jit_integrand(negated_float), -1, 1, -1, 1)[0]
    assert bits(got) == bits(integrate.dblquad(negated_float, -1, 1, -1, 1)[0])


K = 3


def test_the_typings_read_the_same_bound_values():
    def scaled_power(x, n):
        return K * x ** n

    got, want = quad_both(scaled_power, 2)
    assert bits(got) == bits(want)


def test_evaluate_sees_the_python_types_it_is_given():
    f = ndjit.jit_integrand(neg_times)
    for args in [(0.5, 0), (0.5, 0.0), (0.5, 3), (0.5, -2.5)]:
        assert bits(f.evaluate(*args)) == bits(neg_times(*args)), args
        assert bits(f.interpret(*args)) == bits(neg_times(*args)), args
    with pytest.raises(OverflowError, match=r"past 2\*\*53"):
        f.evaluate(0.5, 2 ** 60 + 1)
    # The variable too, as Python would take it (quad never passes an int there).
    g = ndjit.jit_integrand(lambda x, a: -x * a)
    for args in [(0, 0.5), (0.0, 0.5)]:
        assert bits(g.evaluate(*args)) == bits(-args[0] * args[1]), args


def test_a_declared_int_refuses_negative_zero_which_no_int_is():
    f = ndjit.jit_integrand("def f(x, b: int):\n    return math.copysign(1.0, b) * x")
    with pytest.raises(TypeError, match="not one: not an integer, -0.0"):
        integrate.quad(f, 0, 1, args=(-0.0,))


def test_a_parameter_the_body_never_reads_is_never_in_doubt():
    def ignores(x, a, b, c, d, e):
        return x

    for args in [(1e16, 2 ** 60, 0, 1, 2), (1, 2, 3, 4, 5)]:
        got, want = quad_both(ignores, *args)
        assert bits(got) == bits(want)


def test_threads_sharing_an_integrand_fail_on_their_own():
    """quad has no error channel: one thread's failure must neither stop another thread's calls
    (which returned NaN, silently) nor hide a second thread's own failure."""
    import concurrent.futures

    def work(x, a):
        s = 0.0
        for i in range(200):
            s += math.sin(x * i * a)
        return s + math.copysign(1.0, -a) * x

    f = ndjit.jit_integrand(work)

    def one(a):
        try:
            return integrate.quad(f, 0, 1, args=(a,))[0]
        except TypeError as e:
            return e

    values = [0, 1.5, 2.5, 3.5, -1.5] * 40
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, values))
    for a, got in zip(values, results):
        if a == 0:  # int 0 or float 0.0: copysign tells them apart
            assert isinstance(got, TypeError) and "`a`" in str(got), (a, got)
        else:
            assert bits(got) == bits(integrate.quad(work, 0, 1, args=(a,))[0]), (a, got)
