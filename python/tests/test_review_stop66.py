"""Stop 66's review finds: NumPy refuses a bool as a shape's dimension or as the axis of a
reduction written in C (TypeError where the call runs), which ndjit took as 1 or 0; a reshape to shape () panicked
the compiler; an empty array reshaped to a dimension whose bytes overflow an intp is NumPy's
ValueError ("array is too big"); an out-of-range constant tuple index is refused (Python's
IndexError comes only where it runs)."""
import numpy as np
import pytest

import ndjit

W = np.arange(9.0)


def python_raises(src, exc):
    f = eval("lambda x: " + src, {"np": np})
    with pytest.raises(exc):
        f(W.copy())


@pytest.mark.parametrize("src", [
    "x.reshape(True, -1)[0, 0]",
    "x.reshape((9, True))[0, 0]",
    "x.reshape(len(x) > 3, -1)[0, 0]",
    "x.reshape(-1, 1 == 1).sum()",
    "x.reshape(3, False).sum()",
    "np.zeros(True).sum() + x[0]",
    "np.ones((True, 2)).sum()",
    "np.full(True, 2.0).sum()",
    "np.zeros((3, True)).sum()",
    "x.reshape(3, -1).sum(axis=True)[0]",
    "x.reshape(3, -1).max(axis=True)[0]",
    "np.ptp(x.reshape(3, 3), axis=True)[0]",
    "np.any(x.reshape(3, 3) > 0, axis=True)[0]",
    "np.count_nonzero(x.reshape(3, 3), axis=True)[0]",
    "np.nanmean(x.reshape(3, 3), axis=True)[0]",
    "np.cumsum(x.reshape(3, 3), axis=True)[0, 0]",
    "np.argmax(x.reshape(3, 3), axis=True)[0]",
])
def test_a_bool_as_a_dimension_or_a_c_reductions_axis_is_a_type_error(src):
    python_raises(src, TypeError)
    f = ndjit.jit_filter("lambda x: " + src)
    with pytest.raises(TypeError, match="an integer is required"):
        f.evaluate(W)
    img = np.arange(30.0).reshape(5, 6)
    with pytest.raises(TypeError, match="an integer is required"):
        ndjit.generic_filter(img, "lambda x: " + src, size=3)


@pytest.mark.parametrize("src", [
    "np.median(x.reshape(3, 3), axis=True)[0]",
    "np.percentile(x.reshape(3, 3), 50, axis=True)[1]",
])
def test_numpy_functions_written_in_python_still_take_true_as_one(src):
    f = eval("lambda x: " + src, {"np": np})
    assert ndjit.jit_filter("lambda x: " + src).evaluate(W) == f(W.copy())


@pytest.mark.parametrize("src", ["x.reshape(())", "float(x[:1].reshape(()))", "x.reshape([]).sum()",
                                 "np.reshape(x, ()).sum()"])
def test_a_reshape_to_shape_empty_is_refused_not_a_panic(src):
    with pytest.raises(ndjit.FilterError, match=r"0-d array|shape as constants"):
        ndjit.jit_filter("lambda x: " + src)


@pytest.mark.parametrize("src", ["x[x > 100].reshape(0, 2**60).shape[1]",
                                 "x[x > 100].reshape(-1, 2**62).shape[0]",
                                 "x[x > 100].reshape(2**60, 0).shape[0]"])
def test_an_empty_array_reshaped_too_big_is_numpys_value_error(src):
    python_raises(src, ValueError)
    f = ndjit.jit_filter("lambda x: " + src)
    with pytest.raises(ValueError, match="array is too big"):
        f.evaluate(W)
    # A dimension whose bytes fit an intp is taken, as in NumPy (the filter returns a float).
    ok = ndjit.jit_filter("lambda x: x[x > 100].reshape(0, 2**59 + 1).shape[1]")
    assert ok.evaluate(W) == float((lambda x: x[x > 100].reshape(0, 2**59 + 1).shape[1])(W))


def test_an_out_of_range_constant_tuple_index_is_refused():
    with pytest.raises(ndjit.FilterError, match="Python raises IndexError") as e:
        ndjit.jit_filter("from collections import Counter\nf = lambda x: Counter(x).most_common(1)[0][2]")
    assert not isinstance(e.value, TypeError)
