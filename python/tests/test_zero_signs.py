"""Order statistics against NumPy bit for bit, signs of zeros included.

NumPy's median is the mean of the middle part (so a middle ``-0.0`` becomes ``0.0``), and its
linear quantile takes index ``-1`` at the top (so ``gamma = virtual_index + 1`` there, which picks
the other branch of ``_lerp``). Every path must agree: the JIT, the interpreter, the sorting
networks of sized filters (the native driver), and scipy with ndjit's callable.

A quantile of an array holding zeros of *both* signs whose result is a zero depends on where
NumPy's introselect (``np.partition``) leaves each zero, and ``np.min``, ``np.max``, ``np.sort`` and
the rest choose between equal zeros by their SIMD lanes: ndjit raises ``ValueError`` there (see
``src/ir/zero_signs.rs``), and nowhere else.
"""
import itertools

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

VALUES = [-0.0, 0.0, 1.0, -1.0]
PROGRAMS = {
    "median": lambda x: np.median(x),
    "percentile 0": lambda x: np.percentile(x, 0),
    "percentile 30": lambda x: np.percentile(x, 30),
    "percentile 50": lambda x: np.percentile(x, 50),
    "percentile 100": lambda x: np.percentile(x, 100),
    "quantile 0.75": lambda x: np.quantile(x, 0.75),
}


def bits(v) -> str:
    v = np.float64(v)
    return "nan" if np.isnan(v) else v.tobytes().hex()


def mixed_zeros(a) -> bool:
    zeros = a[a == 0]
    return np.signbit(zeros).any() and not np.signbit(zeros).all()


def arrays(name):
    for n in (1, 2, 3, 4, 5):
        for combo in itertools.product(VALUES, repeat=n):
            if n >= 4 and combo.count(-0.0) + combo.count(0.0) < n - 1:
                continue  # keep the sweep small: mostly zeros for longer arrays
            yield np.array(combo)


def refused(call) -> bool:
    """Whether `call()` raises the zero-sign ValueError (any other error propagates)."""
    try:
        call()
    except ValueError as e:
        assert "both 0.0 and -0.0" in str(e), e
        return True
    return False


@pytest.mark.parametrize("name", PROGRAMS)
def test_evaluate_and_interpret_match_numpy(name):
    func = PROGRAMS[name]
    f = ndjit.jit_filter(func)
    bad, checked, raised = [], 0, 0
    for a in arrays(name):
        if name != "median" and mixed_zeros(a) and func(a) == 0:
            # NumPy's zero here is its SIMD code's choice: both paths refuse it.
            assert refused(lambda: f.evaluate(a)) and refused(lambda: f.interpret(a)), a
            raised += 1
            continue
        checked += 1
        want = bits(func(a))
        got, interp = bits(f.evaluate(a)), bits(f.interpret(a))
        if got != want or interp != want:
            bad.append(f"{a.tolist()}: numpy {want}, jit {got}, interpreter {interp}")
    assert not bad, "\n".join(bad[:10])
    assert checked > 100
    assert (raised > 0) == (name != "median")


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("size", [3, 5])
def test_sized_filters_and_driver_match_numpy(name, size):
    """Images of signed zeros and ones filtered with a known size: the driver's networks and
    scipy with ndjit's callable against scipy running NumPy."""
    func = PROGRAMS[name]
    rng = np.random.default_rng(size)
    zeros = [-0.0, 0.0] if name == "median" else [-0.0, -0.0] if size == 3 else [0.0, 0.0]
    image = rng.choice(np.array(zeros + [0.0 * zeros[0], -1.0, 1.0]), size=200)
    want = ndi.generic_filter(image, func, size=size, mode="nearest")
    f = ndjit.jit_filter(func, filter_size=size)
    for got in (ndi.generic_filter(image, f, size=size, mode="nearest"),
                ndjit.generic_filter(image, func, size=size, mode="nearest")):
        assert [bits(v) for v in got] == [bits(v) for v in want]


# --- NumPy's two-operand extremes and clip, zeros of both signs and NaN -------------------------
SPECIALS = [-0.0, 0.0, 1.0, -1.0, np.nan]
PAIRWISE = {
    # NumPy keeps the second of two equal values in maximum/minimum (scalar and SIMD loops alike),
    # the first in the C library's fmax/fmin (scalars), and x at a clip bound equal to it.
    "np.maximum(x[0], x[1])": lambda x: np.maximum(x[0], x[1]),
    "np.minimum(x[0], x[1])": lambda x: np.minimum(x[0], x[1]),
    "np.fmax(x[0], x[1])": lambda x: np.fmax(x[0], x[1]),
    "np.fmin(x[0], x[1])": lambda x: np.fmin(x[0], x[1]),
    "np.clip(x[0], x[1], 2.0)": lambda x: np.clip(x[0], x[1], 2.0),
    "np.clip(x[0], -2.0, x[1])": lambda x: np.clip(x[0], -2.0, x[1]),
    "np.clip(x[0], x[1], x[2])": lambda x: np.clip(x[0], x[1], x[2]),
}


@pytest.mark.parametrize("src", sorted(PAIRWISE))
def test_scalar_extremes_and_clip_match_numpy_bit_for_bit(src):
    f = ndjit.jit_filter(src)
    for w in itertools.product(SPECIALS, repeat=3):
        want = bits(PAIRWISE[src](np.array(w)))
        assert bits(f.evaluate(list(w))) == want, (src, w)
        assert bits(f.interpret(list(w))) == want, (src, w)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 9, 25])
def test_array_maximum_minimum_and_clip_match_numpy_at_every_length(n):
    """Whole-window operations, whose NumPy loops run in SIMD lanes and a scalar tail: maximum,
    minimum and clip keep the same operand everywhere (fmax/fmin of arrays do not, and are
    refused where zeros of opposite signs meet: the next test)."""
    rng = np.random.default_rng(n)
    for src, want in [
        ("np.maximum(x, 0.0)", lambda x: np.maximum(x, 0.0)),
        ("np.minimum(x, 0.0)", lambda x: np.minimum(x, 0.0)),
        ("np.maximum(-0.0, x)", lambda x: np.maximum(-0.0, x)),
        ("np.clip(x, 0.0, 0.5)", lambda x: np.clip(x, 0.0, 0.5)),
        ("np.clip(x, -0.0, 0.5)", lambda x: np.clip(x, -0.0, 0.5)),
    ]:
        positions = sorted({0, (n - 1) // 2, n - 1})
        compiled = [(k, ndjit.jit_filter(f"def f(x):\n    return ({src})[{k}]")) for k in positions]
        for _ in range(40):
            w = rng.choice(np.array([-0.0, 0.0, 0.25, -1.0, 1.0]), n)
            for k, f in compiled:
                assert bits(f.evaluate(list(w))) == bits(want(w)[k]), (src, list(w), k)


# --- NumPy's choices between equal zeros: refused, and only where they could show ---------------
CHOOSERS = {
    "np.min(x)": np.min,
    "np.max(x)": np.max,
    "x.min()": lambda x: x.min(),
    "np.nanmin(x)": np.nanmin,
    "np.nanmax(x)": np.nanmax,
    "np.ptp(x)": np.ptp,
    "np.sort(x)[1]": lambda x: np.sort(x)[1],
    "np.percentile(x, 90)": lambda x: np.percentile(x, 90),
    "np.quantile(x, 0.25)": lambda x: np.quantile(x, 0.25),
}
# The same statistics by rules that leave nothing to choose: never refused.
DETERMINED = {
    "min(x)": min,
    "sorted(x)[1]": lambda x: sorted(x)[1],
    "np.median(x)": np.median,
    "np.min(x + 0.0)": lambda x: np.min(x + 0.0),
}


def shows_a_choice(src, a) -> bool:
    """Whether NumPy's result for `a` could depend on which of two zeros it picked."""
    if not mixed_zeros(a[~np.isnan(a)] if "nan" in src else a):
        return False
    return "sort" in src or CHOOSERS[src](a) == 0


@pytest.mark.parametrize("src", sorted(CHOOSERS))
def test_a_choice_between_zeros_is_refused_and_everything_else_is_numpys(src):
    f = ndjit.jit_filter(src)
    rng = np.random.default_rng(len(src))
    compared = raised = 0
    for n in (2, 3, 5, 9, 25):
        for _ in range(60):
            a = rng.choice(np.array([-0.0, 0.0, 1.0, -1.0, 2.0, np.nan]), n,
                           p=[0.3, 0.3, 0.15, 0.15, 0.05, 0.05])
            if shows_a_choice(src, a):
                assert refused(lambda: f.evaluate(a)) and refused(lambda: f.interpret(a)), a
                raised += 1
                continue
            want = bits(CHOOSERS[src](a))
            assert bits(f.evaluate(a)) == want and bits(f.interpret(a)) == want, (src, a)
            compared += 1
    assert compared > 50 and raised > 20, (compared, raised)


@pytest.mark.parametrize("src", sorted(DETERMINED))
def test_rules_that_leave_no_choice_are_never_refused(src):
    f = ndjit.jit_filter(src)
    for a in itertools.product([-0.0, 0.0, 1.0], repeat=4):
        a = np.array(a)
        assert bits(f.evaluate(a)) == bits(DETERMINED[src](a)), (src, a)


@pytest.mark.parametrize("src", ["np.min(x)", "np.max(x)", "np.ptp(x)", "np.sort(x)[4]",
                                 "np.percentile(x, 10)"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_images_through_every_face(src, dtype):
    """The rank executor (which leaves windows holding -0.0 to the general engine), the general
    engine, and scipy with ndjit's callable: an image of one zero sign is NumPy's bit for bit, and
    one -0.0 in a window of 0.0s raises."""
    func = eval(f"lambda x: {src}", {"np": np})
    rng = np.random.default_rng(7)
    image = rng.choice(np.array([0.0, 0.0, 1.0, 2.0]), (24, 31)).astype(dtype)
    f = ndjit.jit_filter(src)
    want = ndi.generic_filter(image, func, size=3)
    for got in (ndjit.generic_filter(image, f, size=3),
                ndjit.generic_filter(image, f, size=3, workers=2),
                ndi.generic_filter(image, ndjit.jit_filter(src, filter_size=9), size=3)):
        assert [bits(v) for v in got.ravel()] == [bits(v) for v in want.ravel()]
    # A window of zeros, one of them -0.0: every statistic here is a zero there.
    image[4:7, 6:9] = 0.0
    image[5, 7] = -0.0
    for run in (lambda: ndjit.generic_filter(image, f, size=3),
                lambda: ndi.generic_filter(image, ndjit.jit_filter(src, filter_size=9), size=3)):
        with pytest.raises(ValueError, match="both 0.0 and -0.0"):
            run()


@pytest.mark.parametrize("src", ["np.min(x) + np.mean(x)", "np.max(x) * 2.0 - np.mean(x)",
                                 "np.nanmin(x) - x[4]"])
def test_guards_in_the_general_engines_lane_groups(src):
    """Callbacks that are no rank statistic run in the row kernel's lane groups, which branch
    around a guard no lane enters (src/jit/lanes.rs): windows whose result is a zero of one sign
    enter it and are NumPy's bit for bit, and a window holding both zeros raises."""
    func = eval(f"lambda x: {src}", {"np": np})
    rng = np.random.default_rng(3)
    f = ndjit.jit_filter(src)
    for zero in (0.0, -0.0):
        sign = -1.0 if "max" in src else 1.0
        image = sign * rng.choice(np.array([1.0, 2.0, 3.0]), (20, 37))
        image[rng.random(image.shape) < 0.4] = zero
        want = ndi.generic_filter(image, func, size=3)
        assert (want == 0).any() or "mean" in src
        for got in (ndjit.generic_filter(image, f, size=3, workers=1),
                    ndi.generic_filter(image, ndjit.jit_filter(src, filter_size=9), size=3)):
            assert [bits(v) for v in got.ravel()] == [bits(v) for v in want.ravel()], zero
    image[4:7, 6:9] = 0.0
    image[5, 7] = -0.0
    with pytest.raises(ValueError, match="both 0.0 and -0.0"):
        ndjit.generic_filter(image, f, size=3, workers=1)


@pytest.mark.parametrize("src", ["np.fmax(x, x[::-1])", "np.fmin(x, x[::-1])", "np.fmax(x, -0.0)",
                                 "np.fmin(0.0, x)"])
@pytest.mark.parametrize("n", [2, 5, 9, 25])
def test_fmax_fmin_of_arrays_refuse_opposite_zeros_and_are_numpys_elsewhere(src, n):
    """NumPy's fmax/fmin of arrays keep the first of two equal zeros in their scalar tail and the
    second in their vector lanes: where 0.0 meets -0.0 ndjit raises; elsewhere every element is
    NumPy's, NaN rule included."""
    rng = np.random.default_rng(n)
    f = [(k, ndjit.jit_filter(f"def f(x):\n    return ({src})[{k}]")) for k in sorted({0, n // 2, n - 1})]
    py = eval(f"lambda x: {src}", {"np": np})
    compared = raised = 0
    for trial in range(60):
        dense = [0.3, 0.3, 0.15, 0.15, 0.1] if trial % 2 else [0.03, 0.03, 0.42, 0.42, 0.1]
        w = rng.choice(np.array([-0.0, 0.0, 1.0, -1.0, np.nan]), n, p=dense)
        a, b = eval(src.replace("np.fmax", "").replace("np.fmin", "").replace("(x", "(w"),
                    {"w": w, "x": w})
        a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
        meet = ((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))).any()
        for k, g in f:
            if meet:
                assert refused(lambda: g.evaluate(w)) and refused(lambda: g.interpret(w)), (w, k)
                raised += 1
            else:
                assert bits(g.evaluate(w)) == bits(py(w)[k]) == bits(g.interpret(w)), (w, k)
                compared += 1
    assert compared > 5 and raised > 5, (compared, raised)
