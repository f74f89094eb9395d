"""`math.*` is bit-identical to CPython's, and `np.*` within 1 ulp of NumPy's.

CPython's math module calls the C library (glibc on Linux) and ndjit's compiled code calls the very
same functions, except `math.hypot`, which CPython computes itself and ndjit follows step for step.
NumPy uses SIMD kernels of its own for some functions on some CPUs, so there the contract is
1 ulp (README, *Known deviations*; `test_numpy_kernels.py` for the five functions where that
takes ndjit's own accurate routines). Inputs span many magnitudes; those where Python raises
(domain and range errors) are checked to raise in ndjit too.
"""
import math

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "sqrt"]
BINARY = ["atan2", "hypot", "pow", "fmod", "copysign"]
NUMPY = {"exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
         "log10": "log10", "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan",
         "asin": "arcsin", "acos": "arccos", "atan": "arctan", "sinh": "sinh", "cosh": "cosh",
         "tanh": "tanh", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh",
         "cbrt": "cbrt", "atan2": "arctan2", "hypot": "hypot", "pow": "power"}


def samples(n, seed):
    """Doubles of every magnitude and both signs, with the special values."""
    rng = np.random.default_rng(seed)
    v = rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-12, 12, n)
    v[: n // 4] = rng.uniform(-4, 4, n // 4)
    v[n // 4: n // 3] = rng.uniform(0.999, 1.001, n // 3 - n // 4)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 5e-324, 1e-310, 1e308,
               np.pi, 710.0, -745.5]
    return np.concatenate([v, special])


def python_results(fn, *columns):
    """CPython's result per element, or None where it raises."""
    out = []
    for args in zip(*columns):
        try:
            out.append(fn(*map(float, args)))
        except (ValueError, OverflowError):
            out.append(None)
    return out


def bits(v):
    return "nan" if math.isnan(v) else np.float64(v).tobytes().hex()


def through_every_face(src, data):
    """The expression `src` of `x[0]` for each value, through scipy's loop around the JIT and
    through ndjit's native driver."""
    a = ndi.generic_filter(data, ndjit.jit_filter(src), size=1, mode="constant")
    b = ndjit.generic_filter(data, src, size=1, mode="constant")
    return a, b


def pairwise(src, xs, ys):
    """The expression `src` of `x[0], x[1]` for each pair, through the JIT and the interpreter
    (a filter over an image would also run it on windows that straddle two pairs)."""
    f = ndjit.jit_filter(src)
    return [f.evaluate([a, b]) for a, b in zip(xs, ys)], [f.interpret([a, b]) for a, b in zip(xs, ys)]


def assert_same(name, want, args, faces):
    """`want` (CPython's, per window) against each face's result, bit for bit."""
    bad = [(a, w, got) for a, w, *got in zip(args, want, *faces)
           if any(bits(w) != bits(g) for g in got)]
    assert not bad, f"{name}: {len(bad)} of {len(want)} differ, e.g. {bad[:3]}"


@pytest.mark.parametrize("name", UNARY)
def test_math_unary_is_bit_identical_to_cpython(name):
    data = samples(3000, UNARY.index(name))
    fn = getattr(math, name)
    want = python_results(fn, data)
    ok = [i for i, w in enumerate(want) if w is not None]
    assert len(ok) > 100
    faces = through_every_face(f"math.{name}(x[0])", data[ok])
    assert_same(name, [want[i] for i in ok], data[ok], faces)
    raising = [v for v, w in zip(data, want) if w is None][:5]
    for v in raising:
        with pytest.raises((ValueError, OverflowError)):
            ndjit.jit_filter(f"math.{name}(x[0])").evaluate([v])


@pytest.mark.parametrize("name", BINARY)
def test_math_binary_is_bit_identical_to_cpython(name):
    x = samples(3000, 100 + BINARY.index(name))
    y = np.random.default_rng(7).permutation(samples(3000, 2))
    want = python_results(getattr(math, name), x, y)
    ok = [i for i, w in enumerate(want) if w is not None]
    assert len(ok) > 100
    faces = pairwise(f"math.{name}(x[0], x[1])", x[ok], y[ok])
    assert_same(name, [want[i] for i in ok], list(zip(x[ok], y[ok])), faces)


def test_hypot_follows_cpython_in_the_subnormal_range():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, 2000) * 1e-310
    y = rng.uniform(-1, 1, 2000) * 10.0 ** rng.integers(-323, -307, 2000)
    want = [math.hypot(a, b) for a, b in zip(x, y)]
    faces = pairwise("math.hypot(x[0], x[1])", x, y)
    assert_same("hypot", want, list(zip(x, y)), faces)


def ulps(a, b):
    if np.isnan(a) and np.isnan(b):
        return 0
    if np.isnan(a) or np.isnan(b):
        return 2**63
    ia, ib = (np.float64(v).view(np.int64) for v in (a, b))
    ia = ia if ia >= 0 else np.int64(-2**63) - ia
    ib = ib if ib >= 0 else np.int64(-2**63) - ib
    return abs(int(ia) - int(ib))


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_numpy_functions_are_within_their_bound(name):
    npname = NUMPY[name]
    two = name in BINARY
    x = samples(2000, 11)
    y = np.random.default_rng(5).permutation(samples(2000, 12))
    with np.errstate(all="ignore"):
        want = getattr(np, npname)(x, y) if two else getattr(np, npname)(x)
    src = f"np.{npname}(x[0], x[1])" if two else f"np.{npname}(x[0])"
    for got in pairwise(src, x, y) if two else through_every_face(src, x):
        worst = max(ulps(w, g) for w, g in zip(want, got))
        assert worst <= 1, f"np.{npname}: {worst} ulp from NumPy"


@pytest.mark.parametrize("src", ["np.sum(x)", "np.mean(x)", "np.var(x)", "np.sum(x[x > 0.0])"])
def test_long_sums_are_numpys_pairwise_sums(src):
    """NumPy sums more than 128 values by splitting them in two (at half, rounded down to a
    multiple of 8) and recursing: windows of every length around the splits, with magnitudes far
    apart so that any other order of additions rounds differently."""
    rng = np.random.default_rng(12)
    fn = eval("lambda x: " + src, {"np": np})
    f = ndjit.jit_filter(src)
    lengths = [129, 136, 137, 200, 255, 256, 257, 263, 300, 511, 1000, 1025, 2049, 4100]
    windows = [rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-8, 16, n) for n in lengths]
    assert sum(float(np.sum(w)) != math.fsum(w) for w in windows) > len(windows) // 2
    want = [float(fn(w)) for w in windows]
    assert_same(src, want, lengths, [[f.evaluate(w) for w in windows], [f.interpret(w) for w in windows]])
    # Through the native driver, where the footprint's size is known when compiling (unrolled
    # for 13x13, a loop for 37x37).
    img = rng.uniform(-1, 1, (40, 40)) * 10.0 ** rng.integers(-8, 16, (40, 40))
    for k in (13, 37):
        want = ndi.generic_filter(img, fn, size=k, mode="reflect")
        got = ndjit.generic_filter(img, src, size=k, mode="reflect")
        assert np.array_equal(want.view(np.int64), got.view(np.int64)), (src, k)
