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


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_stack_of_rows_times_a_matrix_is_numpys_product_and_its_out_form_the_same_numbers(data):
    """(..., T, C) @ (C, D) as one product of all the rows (kernels.one_product): numpy's
    product up to rounding, for 1 to 3 leading axes of any size (0 too), rows read in place or
    through a transposed view, float32, float64 and integers; its out= form (the compiled
    step's) gives the same numbers bit for bit, and so does x's gradient through the same path."""
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int64]))
    lead = tuple(data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    T, C, D = (data.draw(st.integers(0, 12)) for _ in range(3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    numbers = lambda *shape: (rng.normal(size=shape) * 4).astype(dtype)
    x = numbers(*lead, T, C)
    if data.draw(st.booleans()):                             # a view whose rows are not in C order
        x = np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)
    y, g = numbers(C, D), numbers(*lead, T, D)
    got = kernels.matmul(x, y)
    expected = x @ y
    assert got.shape == expected.shape and got.dtype == expected.dtype
    tolerance = 0 if dtype is np.int64 else 8 * np.finfo(dtype).eps * max(C, 1)
    scale = np.abs(x).max(initial=1) * np.abs(y).max(initial=1) * max(C, 1)
    assert np.abs(got - expected).max(initial=0) <= tolerance * scale
    out = np.full(expected.shape, -1, dtype)
    assert kernels.matmul_into(x, y, out) is out and np.array_equal(out, got)
    assert np.array_equal(kernels.matmul_vjp_x(g, got, x, y), kernels.matmul(g, np.swapaxes(y, 0, 1)))


def test_stacks_on_both_sides_stay_numpys_products_bit_for_bit():
    """(B, H, T, d) @ (B, H, d, T) is one product per matrix, as numpy's @, and its out= form
    the same numbers."""
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 3, 5, 4)).astype(np.float32), rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    out = np.empty((2, 3, 5, 5), np.float32)
    assert np.array_equal(kernels.matmul(q, k), q @ k)
    assert kernels.matmul_into(q, k, out) is out and np.array_equal(out, q @ k)


def test_rows_added_by_id_are_np_add_at_bit_for_bit():
    """``rows_added_by_id`` (the embedding's table gradient, when it is large) gives np.add.at's
    bits: each id's rows added one after another from 0, on every shape, skew of ids, dtype and
    edge number (NaN, infinities, signed zeros), and for ids counted from the end."""
    rng = np.random.default_rng(7)
    compared = 0
    for dtype in (np.float32, np.float64):
        for n_rows, C, V in [(1, 2, 1), (9, 2, 3), (300, 3, 2), (768, 128, 65), (1000, 5, 512),
                             (4096, 64, 512), (2000, 17, 7)]:
            for skew in ("uniform", "one id", "a few ids"):
                high = {"uniform": V, "one id": 1, "a few ids": min(V, 3)}[skew]
                ids = rng.integers(0, high, n_rows)
                rows = (rng.standard_normal((n_rows, C)) * 10.0 ** rng.integers(-3, 4, (n_rows, 1))).astype(dtype)
                flat = rows.reshape(-1)
                flat[rng.random(flat.size) < 0.05] = -0.0
                if skew == "a few ids":
                    flat[rng.random(flat.size) < 0.01] = rng.choice([np.nan, np.inf, -np.inf])
                for count_from_end in (False, True):
                    picked = ids - V if count_from_end else ids
                    expected = np.zeros((V, C), dtype)
                    np.add.at(expected, picked, rows)
                    got = kernels.rows_added_by_id(rows, picked, V)
                    assert got.dtype == dtype and got.tobytes() == expected.tobytes(), (dtype, n_rows, C, V, skew)
                    compared += 1
    assert compared == 84
    none = kernels.rows_added_by_id(np.zeros((0, 3), np.float32), np.zeros(0, int), 4)   # no rows
    assert none.dtype == np.float32 and none.tobytes() == np.zeros((4, 3), np.float32).tobytes()
    g = rng.standard_normal((12, 64, 128)).astype(np.float32)        # the GPT's, through the VJP
    ids, table = rng.integers(0, 65, (12, 64)), np.zeros((65, 128), np.float32)
    expected = np.zeros_like(table)
    np.add.at(expected, ids, g)
    assert kernels.embedding_vjp_table(g, table, ids).tobytes() == expected.tobytes()


def test_row_max_of_long_even_rows_halves_them_and_agrees():
    """Rows of more than 16 numbers (an even count, 256 rows or more) are halved first: the
    same maxima as numpy's, NaN and infinities included, in every float dtype."""
    rng = np.random.default_rng(3)
    for dtype in (np.float16, np.float32, np.float64):
        for shape in [(256, 18), (12, 4, 64, 64), (300, 34), (2, 128, 128), (255, 64), (256, 66)]:
            x = rng.normal(size=shape).astype(dtype)
            flat = x.reshape(-1)
            flat[rng.random(flat.size) < 0.01] = rng.choice([np.nan, np.inf, -np.inf])
            got, expected = kernels.row_max(x), x.max(axis=-1, keepdims=True)
            assert got.dtype == expected.dtype and got.shape == expected.shape
            assert np.array_equal(got, expected, equal_nan=True), (dtype, shape)


def test_a_masked_softmax_is_np_where_then_softmax_bit_for_bit():
    """The mask is written into a new array (or ``out``) rather than by np.where: the same bits,
    with and without ``out``, for a causal mask and a row mask, NaN and infinities included."""
    rng = np.random.default_rng(4)
    for dtype in (np.float32, np.float64):
        x = (rng.normal(size=(12, 4, 64, 64)) * 5).astype(dtype)
        x.reshape(-1)[rng.random(x.size) < 0.01] = np.inf
        for mask in (np.tri(64, dtype=bool), rng.random(64) < 0.7):
            mask[0] = True
            with np.errstate(all="ignore"):
                masked = np.where(mask, x, -np.inf)
                expected = np.exp(masked - masked.max(axis=-1, keepdims=True))
                expected /= expected.sum(axis=-1, keepdims=True)
                out = np.empty_like(x)
                for got in (kernels.softmax(x, -1, mask), kernels.softmax(x, -1, mask, out=out)):
                    assert got.dtype == dtype and got.tobytes() == expected.tobytes()
