"""NumPy's dtypes and kinds inside a filter: `dtype=` of reductions, int64 products, NumPy's bools,
integer rounding and the functions whose NumPy result is float16 or int8.

Each source here was once silently wrong: ndjit returned a number NumPy does not. Now each one
either equals scipy running the same source through CPython and NumPy, bit for bit, or raises.
The sources that must agree run on images chosen to show the difference (values near 1e6, whose
int64 products wrap; NaN, infinities and values past 2**63 for the casts), so that each check
fails if the old lowering comes back.
"""
import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit


def images():
    rng = np.random.default_rng(7)
    special = rng.standard_normal((9, 9)) * 100
    special[2, 3], special[5, 5], special[6, 1] = np.nan, np.inf, -1e300
    huge = rng.random((9, 9)) * 1.7e308
    huge[::2] *= -1
    return {
        "unit": rng.random((9, 9)),
        "big": rng.random((9, 9)) * 1e6 + 1e6,
        "normal": rng.standard_normal((9, 9)) * 100,
        "ints": np.round(rng.random((9, 9)) * 6 - 3),
        "special": special,
        "huge": huge,
    }


IMAGES = images()


def numpy_result(src, image, **kw):
    f = eval("lambda x: " + src)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return ndi.generic_filter(image, f, **kw)


def assert_same(got, want):
    assert np.array_equal(got, want, equal_nan=True), (got, want)
    both = ~np.isnan(got) & ~np.isnan(want)
    assert np.array_equal(np.signbit(got[both]), np.signbit(want[both]))


AGREE = [
    # dtype= of the reductions that take it, by keyword and by position (after axis).
    "np.sum(x, dtype=int)",
    "np.sum(x, dtype=np.int64)",
    "np.sum(x, None, int)",
    "x.sum(dtype=int)",
    "np.sum(x.astype(int), dtype=float)",
    "np.sum(x, dtype='float64')",
    "np.nansum(x, dtype=int)",
    "np.prod(x, dtype=int)",
    "np.nanprod(x, dtype=int)",
    "np.mean(x.astype(int), dtype=float)",
    "np.var(x, dtype=float)",
    "x.reshape(3, 3).sum(axis=0, dtype=int)[1]",
    # int64 products wrap; they were computed in doubles.
    "np.prod(x.astype(int))",
    "x.astype(int).prod()",
    "np.prod(x > 0.5)",
    # NumPy's bools: + is a logical or, * a logical and, on arrays.
    "np.sum((x > 0.5) + (x > 0.3))",
    "np.sum((x > 0.5) * (x < 0.7))",
    "np.sum(np.add(x > 0.5, x > 0.3))",
    "np.sum(np.abs(x > 0.5) + (x > 0.3))",
    "np.diff(x > 0.5).sum()",
    # floor, ceil and trunc keep ints; rint does not.
    "np.floor(x.astype(int))[4] // 2",
    "np.rint(x.astype(int))[4] // 0",
    # integer fmod and reciprocal are NumPy's integer loops.
    "np.fmod(x.astype(int), 4)[4]",
    "np.fmod(x.astype(int), -3)[4]",
    "np.fmod(x.astype(int), x.astype(int)[3])[4]",
    "np.reciprocal(x.astype(int))[4]",
    # int extremes, range and sort stay int64.
    "np.ptp(x.astype(int))",
    "np.sort(x.astype(int))[0] // 0",
    "np.max(x.astype(int)) // 0",
    # np.average multiplies in float64 whatever the weights.
    "np.average(x.astype(int), weights=[1, 2, 3, 4, 5, 4, 3, 2, 1])",
    # With one bound, np.clip is np.maximum or np.minimum: of two equal zeros, the bound.
    "np.clip(-(x * 0), 0.0, None)[4]",
    "np.clip(x * 0, None, -0.0)[4]",
    "(x * 0).clip(None, -0.0)[4]",
    "np.clip(-(x * 0), 0.0, 1.0)[4]",
    # np.power of ints wraps at 64 bits, as the operator does.
    "np.power(x.astype(int), 5)[4]",
    "np.power(x.astype(int), 3)[4] // 7",
    # NumPy's extremes of two bools are bools (an or of two is a bool); its sign of an int
    # is an int64 (whose floor division by zero is 0).
    "np.sum(np.maximum(x > 0.5, x > 0.3) + (x > 0.7))",
    "np.sum(np.fmin(x > 0.5, x > 0.3) + (x > 0.7))",
    "np.sign(x.astype(int))[4] // 0",
    "np.sign(int(x[4] * 10) - 3) // 0",
    # The extremes of bools are bools (NumPy's and Python's `max` alike: the winner is an
    # element), of ints ints, `nan` forms included.
    "np.sum(np.max(x > 0.5) + (x > 0.3))",
    "np.sum(max(x > 0.5) + (x > 0.3))",
    "np.sum(np.nanmax(x > 0.5) + (x > 0.3))",
    "np.sum((x > 0.5).min() * (x > 0.3))",
    "np.nanmax(x.astype(int)) // 0",
    "np.nanmin(x.astype(int)) // 0",
    # nanmedian along an axis averages an odd count's middle with itself (overflowing).
    "np.nanmedian(x.reshape(3, 3), axis=0)[1]",
    "np.nanmedian(x.reshape(3, 3), axis=1)[2]",
]


@pytest.mark.parametrize("src", AGREE)
@pytest.mark.parametrize("image", IMAGES)
def test_numpy_kinds_agree_with_numpy(src, image):
    a = IMAGES[image]
    try:
        want = numpy_result(src, a, size=3)
    except Exception:
        # NumPy raises for this image (e.g. an overflow): ndjit must raise too.
        with pytest.raises(Exception):
            ndjit.generic_filter(a, src, size=3)
        return
    if image in ("special", "huge") and "astype(int)" in src:
        # NaN, infinities and values past 2**63 cast to -(2**63): past 2**53, where ndjit ranks
        # ints as doubles, it may refuse (and must say why) instead of agreeing.
        try:
            got = ndjit.generic_filter(a, src, size=3)
        except ValueError as e:
            assert "up to 2**53" in str(e), e
            return
    else:
        got = ndjit.generic_filter(a, src, size=3)
    assert_same(got, want)


def test_the_agreeing_sources_show_the_old_differences():
    """Each image set above exposes a difference for the sources that were wrong: an int64
    product that wraps, a cast of NaN, a NumPy or of bools. (Otherwise the checks above could
    pass with the old lowering.)"""
    big = IMAGES["big"]
    window = big[:3, :3].ravel()
    assert np.prod(window.astype(int)) != np.prod(window)  # wraps in int64
    assert np.sum(window, dtype=int) != np.sum(window)
    b = IMAGES["unit"][:3, :3].ravel()
    assert np.sum((b > 0.5) + (b > 0.3)) != np.sum((b > 0.5).astype(int) + (b > 0.3))
    with np.errstate(all="ignore"):
        assert np.isinf(np.nanmedian(IMAGES["huge"][:3, :3], axis=0)).any()
    zero = np.array([-0.0])
    assert not np.signbit(np.clip(zero, 0.0, None)[0]) and np.signbit(np.clip(zero, 0.0, 1.0)[0])
    assert np.power(window.astype(int), 5)[4] != int(window[4]) ** 5  # wraps
    extremes = np.maximum(b > 0.5, b > 0.3)
    assert np.sum(extremes + (b > 0.7)) != np.sum(extremes.astype(int) + (b > 0.7))
    with np.errstate(all="ignore"):
        assert np.sign(window.astype(int))[4] // 0 != np.sign(window.astype(float))[4] // 0
        assert np.nanmax(window.astype(int)) // 0 != np.float64(np.nanmax(window.astype(int))) // 0
    assert np.sum(np.max(b > 0.5) + (b > 0.3)) != np.sum(int(np.max(b > 0.5)) + (b > 0.3))


REFUSED = {
    # NumPy refuses these (TypeError): ndjit refuses them too.
    "np.max(x, dtype=int)": "unsupported keyword argument `dtype`",
    "np.median(x, dtype=float)": "unsupported keyword argument `dtype`",
    "np.average(x, dtype=float)": "unsupported keyword argument `dtype`",
    "np.sum((x > 0.5) - (x < 0.2))": "boolean subtract",
    "np.sum(-(x > 0.5))": "boolean negative",
    "np.negative(x > 0.5).sum()": "of bools",
    "np.sign(x > 0.5).sum()": "of bools",
    "np.ptp(x > 0.5)": "boolean subtract",
    "np.percentile(x > 0.5, 30)": "of bools",
    "-np.maximum(x[4] > 0.5, x[3] > 0.5)": "boolean negative",
    "-np.abs(bool(x[4] > 0.5))": "boolean negative",
    "-np.max(x > 0.5)": "boolean negative",
    "-max(x > 0.5)": "boolean negative",
    # NumPy computes these, in ways ndjit does not model: refused, not approximated.
    "np.mean(x, dtype=int)": "with this dtype",
    "np.sum(x, dtype=bool)": "with this dtype",
    "np.sum(x, dtype='float32')": "64-bit",
    "(x[4] > 0.5) + (x[3] > 0.5)": "two bools",
    "(x[4] > 0.5) * (x[3] > 0.5)": "two bools",
    "np.sqrt(x > 0.5).sum()": "of bools",
    "np.round(x > 0.5).sum()": "of bools",
    "(x > 0.5).round()[4]": "of bools",
    "np.round(bool(x[4] > 0.5))": "of bools",
    "np.abs(bool(x[4] > 0.5)) + np.abs(bool(x[3] > 0.5))": "two bools",
    # A NumPy bool in one place with numbers: a choice, a variable, a list (one IR type holds
    # both, and NumPy's bools add as an or and refuse `-`). These and the three after them
    # computed a number NumPy does not give (or none where NumPy raises) before stop 48.
    "max([x[1] > 0.5, x[0]]) + max([x[1] > 0.5, x[0]])": "either a bool or a number",
    "-[x[1] > 0.5, x[0]][len(x) % 2]": "either a bool or a number",
    "((x[1] > 0.5) or 2) + ((x[1] > 0.5) or 2)": "either a bool or a number",
    "def f(x):\n    r = x[1] > 0.5\n    if x[0] > 0.5:\n        r = 2\n    return r + r\n":
        "either a bool or a number",
    "def f(x):\n    m = x > 0.5\n    if x[0] > 0.5:\n        m = x\n    return np.sum(m + m)\n":
        "either a bool or a number",
    # `~` of a bool that may be Python's (Python inverts the int); NumPy's int8 of two bools.
    "~(True or (x[0] > 0.5))": "may be Python's",
    "(x[1] > 0.5) // True + 127": "int8",
    "np.floor_divide(x[1] > 0.5, x[2] > 0.5)": "int8",
    "np.sum((x > 0.5) ** (x > 0.2))": "int8",
    "+(x[1] > 0.5)": "positive",
    "np.square(x > 0.5).sum()": "of bools",
    "np.hypot(x > 0.5, x > 0.2).sum()": "of bools",
    "np.dot(x > 0.5, x > 0.2)": "two bool arrays",
    "(x > 0.5) @ (x > 0.2)": "two bool arrays",
    "round(int(x[4] * 100), -1)": "negative number of digits",
    "np.round(x.astype(int), -1)[4]": "negative number of digits",
    "np.round(x, 23)[4]": "22 decimal places",
    "np.round(x, -300)[4]": "22 decimal places",
    # NumPy raises for a negative integer power, and wraps at 64 bits for a computed one.
    "np.power(x.astype(int), -2)[0]": "constant exponent",
    "np.power(x.astype(int), x.astype(int))[0]": "constant exponent",
    # An argument no lowering takes is refused, never dropped (`out` here).
    "np.max(x, None, 1)": "positional argument",
}


@pytest.mark.parametrize("src", REFUSED)
def test_what_ndjit_cannot_reproduce_is_refused_with_a_reason(src):
    with pytest.raises(Exception) as e:
        ndjit.generic_filter(IMAGES["unit"], src, size=3)
    assert REFUSED[src] in str(e.value), str(e.value)


def test_python_bools_still_count_as_ints():
    # Python's own bools (comparisons of Python numbers, `not`) add as ints: 2, not True.
    src = "(len(x) > 3) + (len(x) > 4) + x[4]"
    got = ndjit.generic_filter(IMAGES["unit"], src, size=3)
    assert_same(got, numpy_result(src, IMAGES["unit"], size=3))
    assert np.allclose(got - IMAGES["unit"], 2)


RAISE_AT_RUN_TIME = [
    # Weights summing to zero: NumPy's ZeroDivisionError.
    ("np.average(x, weights=np.arange(9) - 4)", ZeroDivisionError, "Weights sum to zero"),
    # Python's int() of NaN, as np.array does for a list of numbers.
    ("np.array([x[4], x[3]], dtype=int)[0]", ValueError, "NaN"),
    # Ints past 2**53 would round in the doubles ndjit ranks them in.
    ("np.max(x.astype(int) + 2**60)", ValueError, "2**53"),
    ("np.sort(x.astype(int) + 2**60)[0]", ValueError, "2**53"),
    # Python's any() and all() give Python bools, whatever they iterate.
    ("1.0 / any(x > 2.0)", ZeroDivisionError, "float division by zero"),
    ("1.0 / all(x > 0.5)", ZeroDivisionError, "float division by zero"),
    ("int(x[4] > 0) // any(x > 2.0)", ZeroDivisionError, "integer division or modulo by zero"),
]


@pytest.mark.parametrize("src,error,text", RAISE_AT_RUN_TIME)
def test_run_time_errors_raise_as_numpy_or_name_the_limit(src, error, text):
    a = IMAGES["unit"].copy()
    a[4, 4] = np.nan
    with pytest.raises(error, match=text.replace("*", r"\*")):
        ndjit.generic_filter(a, src, size=3)
    # Away from the value that raises, the same source agrees with NumPy.
    clean = IMAGES["ints"] + 5
    if "arange" in src or "2**" in src:
        return
    assert_same(ndjit.generic_filter(clean, src, size=3), numpy_result(src, clean, size=3))


def test_a_refusal_waits_for_the_types_to_settle():
    # A list's elements start as bools while their type is learned, so `l[0] * l[-1]` first
    # looks like a product of two NumPy bools; it is refused only if it still does at the end.
    src = "def f(x):\n    l = [v + 1 for v in x]\n    return l[0] * l[-1]\n"
    a = IMAGES["normal"]
    f = {}
    exec(src, {"np": np}, f)
    assert_same(ndjit.generic_filter(a, src, size=3), ndi.generic_filter(a, f["f"], size=3))
    masks = "def f(x):\n    l = [v > 0 for v in x]\n    return l[0] * l[-1]\n"
    with pytest.raises(Exception, match="two bools"):
        ndjit.generic_filter(a, masks, size=3)


def test_python_ints_divide_exactly_or_raise():
    # Python divides two ints exactly, rounding once: past 2**53, where ndjit's doubles would
    # round each first, it raises. NumPy ints divide as doubles, as ndjit does.
    near = np.full((3, 3), 2.0**53 - 1)
    src = "(int(x[4]) * 3 + 1) / 3"
    assert numpy_result(src, near, size=3)[1, 1] != (float(int(near[1, 1]) * 3 + 1) / 3)
    with pytest.raises(OverflowError, match="beyond 2"):
        ndjit.generic_filter(near, src, size=3)
    small = IMAGES["ints"] + 5
    assert_same(ndjit.generic_filter(small, src, size=3), numpy_result(src, small, size=3))
    numpy_ints = "(x.astype(int)[4] * 3 + 1) / 3"
    assert_same(ndjit.generic_filter(near, numpy_ints, size=3), numpy_result(numpy_ints, near, size=3))


# NumPy's functions convert Python numbers to NumPy scalars before they compute: division by
# zero gives inf or NaN (or an int64 0), int64 sums and products wrap, two bools give a bool.
# Each of these raised ZeroDivisionError or OverflowError, or (two bools) returned 2, when the
# operands were Python numbers, as the operators of the same numbers do.
PYTHON_NUMBERS_IN_NUMPY_FUNCTIONS = [
    "np.divide(float(x[4]), 0.0)",
    "np.true_divide(1.0, float(x[4] > 0.5))",
    "np.divide(len(x) - 9, 0)",
    "np.floor_divide(float(x[4]), 0.0)",
    "np.remainder(float(x[4]), 0.0)",
    "np.mod(int(x[4] > 0.5) * 7, 0)",
    "np.floor_divide(7, int(x[4] > 0.5))",
    "np.multiply(2**62, 4 + int(x[4] > 0.5))",
    "np.add(2**62, 2**62 - int(x[4] > 0.5))",
    "np.subtract(-(2**62), 2**62 + int(x[4] > 0.5))",
    "np.dot(2**62, 4 + int(x[4] > 0.5))",
    "1.0 / np.dot(float(x[4] > 0.5), 1.0)",
    "np.add(bool(x[4] > 0.5), True) * 3",
    "np.multiply(bool(x[4] > 0.5), bool(x[3] > 0.5)) * 3",
    "np.add(bool(x[4] > 0.5), 1) * 3",
]

# Sources above and the same Python numbers through the operators, which Python computes
# otherwise (so the check above fails if the operands are taken as Python numbers again).
OPERATOR_FORMS = {
    "np.divide(float(x[4]), 0.0)": "float(x[4]) / 0.0",
    "np.floor_divide(7, int(x[4] > 0.5))": "7 // int(x[4] > 0.5)",
    "np.remainder(float(x[4]), 0.0)": "float(x[4]) % 0.0",
    "np.multiply(2**62, 4 + int(x[4] > 0.5))": "2**62 * (4 + int(x[4] > 0.5))",
    "np.dot(2**62, 4 + int(x[4] > 0.5))": "2**62 * (4 + int(x[4] > 0.5))",
    "np.add(bool(x[4] > 0.5), True) * 3": "(bool(x[4] > 0.5) + True) * 3",
}


@pytest.mark.parametrize("src", PYTHON_NUMBERS_IN_NUMPY_FUNCTIONS)
def test_numpy_functions_take_python_numbers_as_numpy_scalars(src):
    a = IMAGES["unit"]
    assert_same(ndjit.generic_filter(a, src, size=3), numpy_result(src, a, size=3))


@pytest.mark.parametrize("src", OPERATOR_FORMS)
def test_the_operators_of_the_same_python_numbers_stay_pythons(src):
    a, operators = IMAGES["unit"], OPERATOR_FORMS[src]
    try:
        python = numpy_result(operators, a, size=3)
    except (ZeroDivisionError, SystemError):  # scipy turns an int's into a SystemError
        with pytest.raises(ZeroDivisionError):
            ndjit.generic_filter(a, operators, size=3)
        return
    assert not np.array_equal(python, numpy_result(src, a, size=3))
    if np.abs(python).max() >= 2.0**63:
        # Past 64 bits, Python's ints are out of ndjit's reach: refused, not wrapped.
        with pytest.raises(OverflowError):
            ndjit.generic_filter(a, operators, size=3)
    else:
        assert_same(ndjit.generic_filter(a, operators, size=3), python)
