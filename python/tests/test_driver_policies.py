"""Policies the driver owns for every face (Python, C, Rust, the GPU): negative axes, and the
order of writes when the output overlaps the input or itself. Checked against scipy running the
same filter as a LowLevelCallable."""
import numpy as np
import pytest
import scipy.ndimage as ndi
from numpy.lib.stride_tricks import as_strided

import ndjit

F = ndjit.jit_filter(lambda x: np.max(x) - 0.5 * x[0] + len(x))


def image(shape, seed=3):
    return np.random.default_rng(seed).normal(size=shape).round(2)


@pytest.mark.parametrize("axes", [(-1,), (-3, -1), (0, -2), (-2, 2)])
def test_negative_axes_are_the_axes_counted_from_the_end(axes):
    a = image((4, 5, 6))
    want = ndi.generic_filter(a, F, size=3, axes=axes, mode="mirror")
    got = ndjit.generic_filter(a, F, size=3, axes=axes, mode="mirror")
    assert got.tobytes() == want.tobytes()


def test_axes_out_of_range_or_repeated_raise_scipys_errors():
    a = image((4, 5))
    for axes, error in (((-3,), "out of range"), ((0, -2), "unique")):
        with pytest.raises(ValueError) as want:
            ndi.generic_filter(a, F, size=3, axes=axes)
        with pytest.raises(ValueError, match=error) as got:
            ndjit.generic_filter(a, F, size=3, axes=axes)
        assert str(got.value) == str(want.value)


def test_an_output_overlapping_the_input_is_written_in_scipys_order():
    a = image((9, 11))
    want, got = a.copy(), a.copy()
    ndi.generic_filter(want, F, size=3, output=want)
    ndjit.generic_filter(got, F, size=3, output=got)
    assert got.tobytes() == want.tobytes()
    # It differs from the out-of-place result: later pixels read earlier ones.
    assert got.tobytes() != ndi.generic_filter(a, F, size=3).tobytes()


def test_an_output_overlapping_itself_is_written_in_scipys_order():
    """Output elements shared by many pixels of different lines (each row one element past the
    previous one): written in parallel, the last writer would be whichever thread finished last;
    the driver writes such an output sequentially, so the last pixel in C order wins, as in scipy."""
    a = image((64, 4000))

    def shifted_rows():
        return as_strided(np.zeros(4000 + 63), shape=(64, 4000), strides=(8, 8), writeable=True)

    want = shifted_rows()
    ndi.generic_filter(a, F, size=3, output=want)
    for _ in range(3):
        got = shifted_rows()
        ndjit.generic_filter(a, F, size=3, output=got, workers=4)
        assert got.tobytes() == want.tobytes()
