"""minigraph/kernels.py's speed tricks give the numbers of the plain numpy they replace."""

import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from minigraph import kernels

SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 6e4, -6e-8])   # (float16 holds them)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_row_max_is_the_maximum_along_the_axis(data):
    """Any shape (rows of 1 to 20 numbers, 0 to 3 leading axes, few rows or many: both ways
    of computing it), float16 to float64, NaN and infinities anywhere, any axis."""
    dtype = data.draw(st.sampled_from([np.float16, np.float32, np.float64]))
    lead = data.draw(st.lists(st.integers(1, 40), max_size=3))
    shape = tuple(lead) + (data.draw(st.integers(1, 20)),)
    x = data.draw(hnp.arrays(dtype, shape, elements=st.floats(-1e4, 1e4, width=16) | SPECIAL))
    axis = data.draw(st.sampled_from([-1, x.ndim - 1] + list(range(x.ndim))))
    got, expected = kernels.row_max(x, axis), x.max(axis=axis, keepdims=True)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected, equal_nan=True)


def test_row_max_of_many_short_rows_takes_the_column_loop_and_agrees():
    x = np.random.default_rng(0).normal(size=(300, 10)).astype(np.float32)
    x[5, 3], x[7, :] = np.nan, -np.inf
    got = kernels.row_max(x)
    assert got.base is not None and got.base.shape == (300,)          # the loop's (300,) array
    assert np.array_equal(got, x.max(axis=-1, keepdims=True), equal_nan=True)
    assert np.isnan(got[5, 0]) and got[7, 0] == -np.inf
