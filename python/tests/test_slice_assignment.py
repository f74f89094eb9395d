"""Slice assignment `a[lo:hi:step] = value` in filters: NumPy's positions (negative bounds and
steps, empty slices), a number or an array of as many elements (or one), a right-hand side that
overlaps the array read in full first, NumPy's conversions and errors; the window stays each
pixel's own copy."""
import math

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

WINDOW = np.array([0.5, 1.5, -2.0, 3.0, 7.25, 0.0, 2.0, 9.0, 4.0])

PROGRAMS = {
    "fill": "def f(x):\n    y = x.copy()\n    y[1:4] = 0\n    return y.sum() + y[1]\n",
    "step": "def f(x):\n    y = x.copy()\n    y[::2] = -1.0\n    return y.sum()\n",
    "negative_step": "def f(x):\n    y = x.copy()\n    y[::-3] = 5\n    return y[8] * 100 + y[5] * 10 + y[2]\n",
    "array": "def f(x):\n    y = np.zeros(9)\n    y[1:4] = x[1:4]\n    return y.sum() + y[3]\n",
    "overlap_shift": "def f(x):\n    y = x.copy()\n    y[1:] = y[:-1]\n    return y[1] * 100 + y[8]\n",
    "overlap_reversed": "def f(x):\n    y = x.copy()\n    y[:] = y[::-1]\n    return y[0] * 100 + y[8]\n",
    "broadcast_one": "def f(x):\n    y = x.copy()\n    y[2:5] = x[4:5]\n    return y.sum()\n",
    "into_int_array": "def f(x):\n    y = np.zeros(9, dtype=int)\n    y[0:3] = x[0:3] * 1.5\n    return y.sum()\n",
    "window_itself": "def f(x):\n    x[:4] = 0\n    return x.sum()\n",
    "empty": "def f(x):\n    y = x.copy()\n    y[5:2] = 1\n    return y.sum()\n",
    "negative_bounds": "def f(x):\n    y = x.copy()\n    y[-3:] = 0\n    return y.sum()\n",
    "bounds_from_data": "def f(x):\n    y = x.copy()\n    k = int(x[4]) % 9\n    y[k:] = 1\n    return y.sum()\n",
}


def python(src):
    ns = {"np": np, "math": math}
    exec(src, ns)
    return ns["f"]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_equal_pythons(name):
    src = PROGRAMS[name]
    want = python(src)(WINDOW.copy())
    got = ndjit.jit_filter(src).evaluate(WINDOW.copy())
    assert np.float64(got).tobytes() == np.float64(want).tobytes(), (name, got, want)


@pytest.mark.parametrize("name", ["fill", "overlap_shift", "window_itself", "bounds_from_data", "into_int_array"])
@pytest.mark.parametrize("mode", ["reflect", "constant", "wrap"])
def test_through_scipy_and_the_driver_each_pixel_has_its_own_window(name, mode):
    img = np.random.default_rng(3).random((7, 9)) * 9
    f = ndjit.jit_filter(PROGRAMS[name])
    want = ndi.generic_filter(img, python(PROGRAMS[name]), size=3, mode=mode)
    assert np.array_equal(ndi.generic_filter(img, f, size=3, mode=mode), want)
    assert np.array_equal(ndjit.generic_filter(img, f, size=3, mode=mode), want)


@pytest.mark.parametrize("src,exc,msg", [
    ("def f(x):\n    y = x.copy()\n    y[2:5] = x[0:2]\n    return y.sum()\n", ValueError,
     r"could not broadcast input array from shape \(2,\) into shape \(3,\)"),
    ("def f(x):\n    y = np.zeros(9, dtype=int)\n    y[0:3] = x[0] * np.nan\n    return y.sum()\n", ValueError,
     "cannot convert float NaN to integer"),
])
def test_errors_are_numpys(src, exc, msg):
    with pytest.raises(exc, match=msg):
        python(src)(WINDOW.copy())
    with pytest.raises(exc, match=msg) as e:
        ndjit.jit_filter(src).evaluate(WINDOW.copy())
    assert isinstance(e.value, ndjit.FilterRuntimeError)


@pytest.mark.parametrize("src,what", [
    ("def f(x):\n    y = x.copy()\n    y[::0] = 1\n    return y.sum()\n", "slice step cannot be zero"),
    ("def f(x):\n    y = x.copy()\n    y[::int(x[0])] = 1\n    return y.sum()\n", "the slice step must be a constant"),
    ("def f(x):\n    y = x.reshape(3, 3).copy()\n    y[1, ::0] = 0\n    return y.sum()\n", "slice step cannot be zero"),
])
def test_what_is_not_supported_is_a_compile_error(src, what):
    with pytest.raises(ndjit.FilterCompileError, match=what):
        ndjit.jit_filter(src)


# --- 2-D arrays: copies stay 2-D, elements are assigned as w[i, j] ------------------------------

TWO_D = {
    "copy_row_sum": "lambda x: x.reshape(3, 3).copy()[1].sum()",
    "array_row_sum": "lambda x: np.array(x.reshape(3, 3))[1].sum()",
    "asarray_shape": "lambda x: np.asarray(x.reshape(3, 3)).shape[0]",
    "copy_len": "lambda x: len(x.reshape(3, 3).copy())",
    "array_dtype": "lambda x: np.array(x.reshape(3, 3), dtype=int)[2, 1] / 2",
    "flatten_is_1d": "lambda x: x.reshape(3, 3).flatten()[1] + len(x.reshape(3, 3).ravel())",
    "np_ravel_is_1d": "lambda x: np.ravel(x.reshape(3, 3))[4]",
    "element": "def f(x):\n    w = x.reshape(3, 3).copy()\n    w[1, 1] = 0\n    return w.sum() + w[1].sum()\n",
    "negative_element": "def f(x):\n    w = x.reshape(3, 3).copy()\n    w[2, -1] = 0.5\n    return w.sum()\n",
    "astype_keeps_shape": "lambda x: x.reshape(3, 3).astype(int)[2].sum()",
    "flip_keeps_shape": "lambda x: np.flip(x.reshape(3, 3))[0].sum() + np.flip(x.reshape(3, 3))[2, 0]",
    "transposed_copies": "lambda x: x.reshape(3, 3).T.copy()[0, 1] + np.array(x.reshape(3, 3).T)[2, 1]",
}


@pytest.mark.parametrize("name", sorted(TWO_D))
def test_two_d_copies_and_element_writes_equal_numpys(name):
    src = TWO_D[name]
    f = eval(src, {"np": np}) if src.startswith("lambda") else python(src)
    want = f(WINDOW.copy())
    got = ndjit.jit_filter(src).evaluate(WINDOW.copy())
    assert np.float64(got).tobytes() == np.float64(want).tobytes(), (name, got, want)


def test_two_d_index_errors_name_the_axis_size():
    src = "def f(x):\n    w = x.reshape(3, 3).copy()\n    w[3, 0] = 1\n    return w.sum()\n"
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        python(src)(WINDOW.copy())
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        ndjit.jit_filter(src).evaluate(WINDOW.copy())


TWO_D_TARGETS = ["w[1]", "w[0:2]", "w[:, 0]", "w[1, :]", "w[-1, ::-2]", "w[::2, 1:]", "w[1:, 1]"]
TWO_D_VALUES = ["0", "x[:3] * 2", "x[4:5]", "[7.0, 8.0, 9.0]", "w[2]"]


@pytest.mark.parametrize("target", TWO_D_TARGETS)
@pytest.mark.parametrize("value", TWO_D_VALUES)
def test_rows_columns_and_blocks_of_a_two_d_array_are_written_as_numpy_writes_them(target, value):
    # Stored flat, `w[1] = 0` once wrote element 1 instead of row 1 (then it was refused).
    src = (f"def f(x):\n    w = x.reshape(3, 3).copy()\n    {target} = {value}\n"
           "    return np.sum(w * np.arange(1, 10).reshape(3, 3))\n")
    try:
        want = python(src)(WINDOW.copy())
    except ValueError as e:  # the value does not broadcast to that selection
        with pytest.raises(ValueError, match="could not broadcast"):
            ndjit.jit_filter(src).evaluate(WINDOW.copy())
        assert "broadcast" in str(e)
        return
    got = ndjit.jit_filter(src).evaluate(WINDOW.copy())
    assert np.float64(got).tobytes() == np.float64(want).tobytes(), (src, got, want)


@pytest.mark.parametrize("target,value,msg", [
    ("w[1]", "x.reshape(3, 3)", "2-D array to a row or a column"),
    ("w[1, 2, 0]", "1", "too many indices"),
    ("w[True]", "1", "with a bool"),
])
def test_two_d_writes_ndjit_cannot_follow_are_refused(target, value, msg):
    src = f"def f(x):\n    w = x.reshape(3, 3).copy()\n    {target} = {value}\n    return w.sum()\n"
    with pytest.raises(ndjit.FilterCompileError, match=msg):
        ndjit.jit_filter(src)


FANCY = {
    "list_of_indices": "def f(x):\n    y = x.copy()\n    y[[0, 2, -1]] = 0\n    return np.sum(y * np.arange(9))\n",
    "values_per_index": "def f(x):\n    y = x.copy()\n    y[[1, 3]] = [10, 20]\n    return np.sum(y * np.arange(9))\n",
    "from_argsort": "def f(x):\n    y = x.copy()\n    y[np.argsort(y, kind='stable')[:2]] = 0\n    return np.sum(y * np.arange(9))\n",
    "repeated_index_last_wins": "def f(x):\n    y = x.copy()\n    y[[0, 0, 0]] = x[3:6]\n    return y[0]\n",
    "from_nonzero": "def f(x):\n    y = x.copy()\n    y[np.nonzero(y > 1)[0]] = 1\n    return np.sum(y * np.arange(9))\n",
    "int_array_into_ints": "def f(x):\n    y = np.zeros(9, dtype=int)\n    y[np.arange(0, 9, 4)] = x[:3] * 1.5\n    return np.sum(y * np.arange(9))\n",
}


@pytest.mark.parametrize("name", sorted(FANCY))
def test_index_array_assignment_equals_numpys(name):
    src = FANCY[name]
    want = python(src)(WINDOW.copy())
    got = ndjit.jit_filter(src).evaluate(WINDOW.copy())
    assert np.float64(got).tobytes() == np.float64(want).tobytes(), (name, got, want)


@pytest.mark.parametrize("src,exc,msg", [
    ("def f(x):\n    y = x.copy()\n    y[[0, 20]] = 1\n    return y.sum()\n", IndexError,
     "index 20 is out of bounds for axis 0 with size 9"),
    ("def f(x):\n    y = x.copy()\n    y[[0, 1]] = x[:3]\n    return y.sum()\n", ValueError,
     r"shape mismatch: value array of shape \(3,\) could not be broadcast to indexing result of shape \(2,\)"),
])
def test_index_array_assignment_errors_are_numpys(src, exc, msg):
    with pytest.raises(exc, match=msg):
        python(src)(WINDOW.copy())
    with pytest.raises(exc, match=msg):
        ndjit.jit_filter(src).evaluate(WINDOW.copy())


@pytest.mark.parametrize("expr", ["np.sort(w)[0].sum()", "np.diff(w)[0].sum()", "np.concatenate((w, w))[3].sum()"])
def test_functions_along_an_axis_of_a_two_d_array_are_refused_not_computed_flat(expr):
    # Each once flattened the array and gave another result (np.sort(w)[0] was -2.0 where
    # NumPy, sorting each row, gives 0.0).
    with pytest.raises(ndjit.FilterCompileError, match="of a 2-D array works along an axis"):
        ndjit.jit_filter(f"def f(x):\n    w = x.reshape(3, 3)\n    return {expr}\n")



TWO_D_READS = ["m[1:, ::2]", "m[::-1, 1]", "m[0, 1:]", "m[1:3]", "m[:, :]", "m[2:, 2:]", "m[5:, :]",
               "m[-2]", "m[:2, -1:]", "m[1:, 1:].T", "np.sum(m[::2, ::2], axis=0)", "m[:2, :2].ravel()"]


@pytest.mark.parametrize("read", TWO_D_READS)
def test_rows_columns_and_blocks_of_a_two_d_array_read_as_numpy(read):
    src = (f"def f(x):\n    m = x.reshape(3, 3)\n    r = {read}\n    a = np.asarray(r).ravel()\n"
           "    return np.sum(a * np.arange(1, a.size + 1)) + len(r) * 100\n")
    rng = np.random.default_rng(len(read))
    f = ndjit.jit_filter(src)
    for _ in range(10):
        w = rng.normal(size=9)
        want = python(src)(w.copy())
        assert np.float64(f.evaluate(w.copy())).tobytes() == np.float64(want).tobytes(), (read, w)
