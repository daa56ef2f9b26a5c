"""The array code behind the op table's longer rows (its *kernels*), in the table's order.

A row of ``ops.py`` whose forward and VJPs fit in a line writes them there. The ones that take
more live here: the shape bookkeeping every gradient needs (``unbroadcast``, ``sum_back``,
``scatter_add``, ``concat_slice``), matmul and linear with vectors, matrices and stacks of
matrices, the numerically stable sigmoid, log-softmax and softmax (with attention's mask), max's
VJP, and the pieces of a transformer: layer norm, GELU, embedding. Where a kernel is written for
speed (the GPT of chapter 11 runs these thousands of times), its docstring says how and why.
At the end, the rows' ``out=`` forms that are not a numpy function or a kernel above taking
``out=`` itself (softmax and GELU do): the forward writing into an array it is given, for
``mg.function``'s memory plan. They work on numpy arrays only (no nodes); ``gradops.py``
reuses the bookkeeping for the gradient ops. The fused losses' kernels are in ``losses.py``.

Broadcasting (``x + b`` with ``x`` of shape (n, 3) and ``b`` of shape (3,)) copies ``b`` along
an axis in the forward pass, so its gradient must be *summed* along that axis in the backward
pass. ``unbroadcast`` does that in one place for every op.
"""

import math
import numbers

import numpy as np

from .dtypes import float_dtype
from .errors import BadValueError


def unbroadcast(g, shape):
    """Sum ``g`` over the axes that broadcasting added or stretched, so it has ``shape``."""
    g = g if type(g) is np.ndarray else np.asarray(g)
    if g.shape == shape:
        return g
    added = g.ndim - len(shape)                      # leading axes broadcasting added
    if g.shape[added:] == shape:                     # only those (a bias on each row: one axis,
        return g.sum(axis=0 if added == 1 else tuple(range(added)))   # given as an int: faster)
    stretched = tuple(                               # axes of size 1 that broadcasting stretched
        i for i, size in enumerate(shape, added) if size == 1 and g.shape[i] != 1)
    g = g.sum(axis=tuple(range(added)) + stretched)
    return g.reshape(shape) if stretched else g       # (no stretch: a wrong shape stays visible)


# -- matmul and linear ---------------------------------------------------------------------------

def matmul(x, y):
    """x @ y: vectors, matrices, and stacks of matrices over leading axes that broadcast as in
    numpy, e.g. (B, H, T, d) @ (B, H, d, T), or (B, T, C) @ (C, D).

    A stack of rows times one matrix, (B, T, C) @ (C, D), is one product of a (B·T, C) matrix
    (``one_product``): numpy's ``@`` would make B products of (T, C) @ (C, D), one BLAS
    call each, slower by a tenth or more, and a few of their last bits differ from the single
    product's. A stack on both sides, (B, H, T, d) @ (B, H, d, T), is one product per matrix."""
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"matmul takes vectors, matrices or stacks of them; got shapes {x.shape} "
                         f"and {y.shape} (a number times an array is mg.mul)")
    if stacked_rows(x, y):
        return one_product(x, y)
    return x @ y


def stacked_rows(x, y):
    """Is x @ y a stack of rows times one matrix, (..., T, C) @ (C, D), with matching C?"""
    return y.ndim == 2 and x.ndim > 2 and x.shape[-1] == y.shape[0]


def one_product(x, y, out=None):
    """x @ y for a stack of rows ``x`` (..., C) and a matrix ``y`` (C, D), as one matrix product
    of all of x's rows, in ``out`` if given (an array of the product's shape, in C order)."""
    rows = math.prod(x.shape[:-1])
    shape = x.shape[:-1] + y.shape[1:]
    if out is None:
        return np.matmul(x.reshape(rows, x.shape[-1]), y).reshape(shape)
    np.matmul(x.reshape(rows, x.shape[-1]), y, out=out.reshape(rows, y.shape[1]))
    return out


def matmul_into(x, y, out):
    """``matmul(x, y)`` written into ``out`` (the compiled step's form of the op for a stack of
    rows times a matrix; otherwise it is ``np.matmul``'s own): the same products, so the same
    numbers."""
    if stacked_rows(x, y) and out.flags.c_contiguous:
        return one_product(x, y, out)
    return np.matmul(x, y, out=out)


def as_matrices(g, x, y):
    """View vectors as 1-row (left) / 1-column (right) matrices, and ``g`` as their product's
    gradient: a stack of matrices over the leading axes of x and y broadcast together."""
    X = x.reshape(1, -1) if x.ndim == 1 else x
    Y = y.reshape(-1, 1) if y.ndim == 1 else y
    stack = np.broadcast_shapes(X.shape[:-2], Y.shape[:-2])
    return X, Y, np.reshape(g, stack + (X.shape[-2], Y.shape[-1]))


def matmul_vjp_x(g, ans, x, y):
    """x @ y: the gradient of x is g @ yᵀ (summed over the leading axes that x was broadcast along)."""
    if x.ndim == y.ndim == 2:
        return g @ y.T
    if y.ndim == 2 and x.ndim > 2:                    # one product over all of g's rows
        return one_product(g, y.T)
    X, Y, G = as_matrices(g, x, y)
    return unbroadcast(G @ np.swapaxes(Y, -1, -2), X.shape).reshape(x.shape)


def matmul_vjp_y(g, ans, x, y):
    """x @ y: the gradient of y is xᵀ @ g (summed over the leading axes that y was broadcast along:
    for a stack of rows x times one matrix y, xᵀ @ g of x and g as two tall matrices)."""
    if x.ndim == y.ndim == 2:
        return x.T @ g
    if y.ndim == 2 and x.ndim > 2:
        return x.reshape(-1, x.shape[-1]).T @ g.reshape(-1, g.shape[-1])
    X, Y, G = as_matrices(g, x, y)
    return unbroadcast(np.swapaxes(X, -1, -2) @ G, Y.shape).reshape(y.shape)


def linear(x, W, b):
    """x @ W + b, with b added in place into the fresh product (one temporary array fewer)."""
    out = x @ W if x.ndim <= 2 else matmul(x, W)       # (a batch of rows: no call in between)
    if getattr(out, "dtype", None) is not b.dtype:   # another dtype: numpy's promotion decides
        return out + b
    try:
        out += b
    except ValueError:                       # b stretches the product
        out = out + b
    return out


def _product_grad(g, x, W):
    """In linear, the gradient of the product x @ W: ``g`` itself, unless b stretched the product
    (a (1, 1) product plus a (1, 9) bias), then summed back to the product's shape."""
    shape = x.shape[:-1] + W.shape[1:]
    return g if g.shape == shape else unbroadcast(g, shape)


def _rows_times_matrix(g, x, W):
    """linear's usual case, written out in its VJPs because it runs for every layer: x a batch
    of rows, W a matrix, and b did not stretch the product, so ``g`` is the product's gradient."""
    return x.ndim == W.ndim == 2 and g.shape == (len(x), W.shape[1])


def linear_vjp_x(g, ans, x, W, b):
    """linear: x's gradient is matmul's, g @ Wᵀ, for the product's gradient."""
    if _rows_times_matrix(g, x, W):
        return g @ W.T
    return matmul_vjp_x(_product_grad(g, x, W), ans, x, W)


def linear_vjp_W(g, ans, x, W, b):
    """linear: W's gradient is matmul's, xᵀ @ g, for the product's gradient."""
    if _rows_times_matrix(g, x, W):
        return x.T @ g
    return matmul_vjp_y(_product_grad(g, x, W), ans, x, W)


# -- stable forwards -----------------------------------------------------------------------------

def sigmoid(x):
    """1 / (1 + exp(-x)), written so that no exp overflows for large |x|."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def row_max(x, axis=-1):
    """``x.max(axis=axis, keepdims=True)``, the same numbers (a maximum does not round), faster
    for short rows: numpy reduces along a last axis of a few numbers slowly, while comparing
    whole columns, one ``np.maximum`` per column, is quick (``bench/`` measures both). With
    fewer than 16 rows per column, the calls cost more than they save. An even row of more than
    16 numbers, in 256 rows or more, is first halved (the larger of its two halves, place by
    place): attention's rows of 64 in 0.14 ms instead of 0.18. A speed trick, kept in this one
    place."""
    columns = x.shape[-1] if x.ndim else 0
    last, rows = axis in (-1, x.ndim - 1), x.size // columns if columns else 0
    if last and columns > 16 and columns % 2 == 0 and rows >= 256:     # longer rows: halved first
        return row_max(np.maximum(x[..., :columns // 2], x[..., columns // 2:]))   # (64 -> 32 -> 16)
    if not (1 < columns <= 16 and x.size >= 16 * columns * columns and last):
        return x.max(axis=axis, keepdims=True)
    top = x[..., 0].copy()
    for j in range(1, columns):
        np.maximum(top, x[..., j], out=top)
    return top[..., None]


def log_softmax(x, axis=-1):
    """x - log(sum(exp(x))), shifted by the row maximum so that no exp overflows."""
    shifted = x - row_max(x, axis)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def softmax(x, axis=-1, mask=None, out=None):
    """exp(x) / sum(exp(x)) along ``axis``, shifted by the row maximum so that no exp overflows.
    With a boolean ``mask`` (broadcastable to x; True = may attend), the places it forbids are
    set to -inf first, so their probability is exactly 0 (and so is their gradient: it is
    ``ans`` times something). Written into ``out`` if given (the op's out= form)."""
    if mask is not None:                # np.where(mask, x, -inf), written into out if given
        mask = _checked_mask(mask, x, axis)
        fresh = out is None or np.may_share_memory(out, x)
        masked = np.empty(np.shape(x), np.result_type(x, -np.inf)) if fresh else out
        np.copyto(masked, -np.inf)
        np.copyto(masked, x, where=mask)
        x = masked
    e = np.exp(np.subtract(x, row_max(x, axis), out=out), out=out)
    e /= e.sum(axis=axis, keepdims=True)                 # a fresh array (or out): divided in place
    return e


def _checked_mask(mask, x, axis):
    """``mask`` if it is a boolean array broadcastable to ``x`` that allows something in every
    row along ``axis``; otherwise an error that says which of these it is not."""
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise BadValueError(f"softmax's mask must be a boolean array (True = may attend), e.g. "
                            f"mg.causal_mask(T); got dtype {mask.dtype}, shape {mask.shape}")
    if mask.ndim > x.ndim or not all(m in (1, n) for m, n in zip(mask.shape[::-1], x.shape[::-1])):
        raise BadValueError(f"softmax's mask of shape {mask.shape} does not broadcast to the input's "
                            f"shape {x.shape}: give it the input's last axes (e.g. (T, T) for "
                            f"(B, H, T, T) scores)")
    rows = np.reshape(mask, (1,) * (x.ndim - mask.ndim) + mask.shape)   # one row of it per row of x
    if not np.all(np.any(rows, axis=axis)):
        raise BadValueError(f"softmax's mask of shape {mask.shape} allows nothing in some row along "
                            f"axis {axis} of the input {x.shape}: each row needs at least one True "
                            f"(a probability distribution over nothing does not exist)")
    return mask


def causal_mask(T):
    """The (T, T) boolean mask of causal attention: position i may attend to j <= i (True on and
    below the diagonal). ``T``, the number of positions, is a whole number >= 1."""
    if isinstance(T, bool) or not isinstance(T, numbers.Integral) or T < 1:
        raise BadValueError(f"causal_mask(T) takes the number of positions T, a whole number >= 1 "
                            f"(e.g. causal_mask(8) for a window of 8 characters); got "
                            f"{type(T).__name__} {T!r}.")
    return np.tri(T, dtype=bool)


# -- layer norm, GELU, embedding -----------------------------------------------------------------

def row_means(x):
    """The mean of each row (the last axis) of ``x``, kept as an axis of size 1: a matrix-vector
    product with (1/C, ..., 1/C), which BLAS does many times faster than ``np.mean`` over a
    short last axis (a row of 128 numbers)."""
    C = np.shape(x)[-1]
    return np.expand_dims(x @ np.full(C, 1 / C, float_dtype(x)), -1)


def _row_dots(a, b):
    """The dot product of each row of ``a`` with the same row of ``b``, kept as an axis of size 1."""
    return np.expand_dims(np.einsum("...i,...i->...", a, b), -1)


def centered_and_scale(x, eps):
    """x - mean, and 1 / sqrt(variance + eps), over the last axis (population variance, as
    PyTorch): x̂ = (x - mean) · scale is the normalized x. The gradients take the two apart, which
    saves passes over the array."""
    centered = layer_norm_centered(x)
    return centered, layer_norm_scale(centered, eps)


def layer_norm_centered(x, out=None):
    """x minus the mean of its row (the last axis); written into ``out`` if given."""
    return np.subtract(x, row_means(x), out=out)


def layer_norm_scale(centered, eps=1e-5):
    """1 / sqrt(variance + eps) of each row of x, from x's ``centered`` rows: shape (..., 1)."""
    return 1 / np.sqrt(_row_dots(centered, centered) / np.shape(centered)[-1] + eps)


def layer_norm(x, gamma, beta=None, eps=1e-5):
    """Normalize each row (the last axis), then scale by gamma and shift by beta."""
    if np.ndim(x) == 0:
        raise BadValueError("layer_norm normalizes the last axis of x, and this x is a single number "
                            "(0-d): give it rows, e.g. shape (B, T, C)")
    for name, value in (("gamma", gamma), ("beta", beta)):
        if value is not None and _broadcast_shape(value, x) != np.shape(x):
            grown = _broadcast_shape(value, x)
            raise BadValueError(
                f"layer_norm's {name} of shape {np.shape(value)} does not fit x of shape "
                f"{np.shape(x)}: " + (f"it would change the output's shape to {grown}" if grown
                                      else "they do not broadcast together") +
                f". {name} holds one number per feature of the last axis: give it shape "
                f"({np.shape(x)[-1]},)")
    centered, scale = centered_and_scale(x, eps)
    centered *= scale                                    # a fresh array: x̂, made in place
    out = _in_first(np.multiply, centered, gamma)
    return out if beta is None else _in_first(np.add, out, beta)


def _in_first(ufunc, fresh, b):
    """``ufunc(fresh, b)``, written into ``fresh`` (an array made for this computation, which
    nobody else holds) when the result has its dtype and shape: the same numbers, one new array
    fewer."""
    if np.result_type(fresh, b) == fresh.dtype and np.broadcast_shapes(fresh.shape, np.shape(b)) == fresh.shape:
        return ufunc(fresh, b, out=fresh)
    return ufunc(fresh, b)


def _broadcast_shape(a, b):
    """The shape of ``a`` and ``b`` broadcast together, or None if they do not broadcast."""
    try:
        return np.broadcast_shapes(np.shape(a), np.shape(b))
    except ValueError:
        return None


def layer_norm_vjp_x(g, ans, x, gamma, beta=None, eps=1e-5, out=None):
    """layer_norm: with h = g·gamma and x̂ the normalized x (computed again: cheaper than kept),
    the gradient of x is (h - mean(h) - x̂ · mean(h · x̂)) · scale, means over the last axis;
    with x̂ = centered · scale, the last term is centered · scale³ · mean(h · centered).
    Written into ``out`` if given (``layer_norm_grad_x``'s out= form), which must not be the
    array of g or x."""
    centered, scale = centered_and_scale(x, eps)
    return layer_norm_grad_x_from(g, centered, scale, gamma, out, centered_is_scratch=True)


def layer_norm_grad_x_from(g, centered, scale, gamma, out=None, centered_is_scratch=False):
    """The gradient of x above from x's ``centered`` rows and their ``scale``, computed once for
    both gradients (mg.function): the same numbers. ``centered`` is written over only if it is
    scratch, an array made for this call."""
    h = g * gamma
    grad = np.subtract(h, row_means(h), out=_fitting(out, np.result_type(h), np.shape(h)))
    grad *= scale
    factor = scale ** 3 * _row_dots(h, centered) / np.shape(centered)[-1]
    grad -= _in_first(np.multiply, centered, factor) if centered_is_scratch else centered * factor
    return grad


def layer_norm_vjp_gamma(g, ans, x, gamma, beta=None, eps=1e-5):
    """layer_norm: the gradient of gamma is g · x̂, summed over the rows: the sum of the rows of
    g · centered, each weighted by its scale."""
    centered, scale = centered_and_scale(x, eps)
    return layer_norm_grad_gamma_from(g, centered, scale, gamma, centered_is_scratch=True)


def layer_norm_grad_gamma_from(g, centered, scale, gamma, centered_is_scratch=False):
    """The gradient of gamma above from x's ``centered`` rows and their ``scale`` (as
    ``layer_norm_grad_x_from``): the same numbers."""
    g_centered = _in_first(np.multiply, centered, g) if centered_is_scratch else centered * g
    if np.shape(gamma) == np.shape(centered)[-1:] and g_centered.shape == np.shape(centered):
        rows = np.reshape(g_centered, (-1, np.shape(centered)[-1]))
        return np.reshape(scale, -1) @ rows              # one vector-matrix product (BLAS)
    return unbroadcast(g_centered * scale, np.shape(gamma))


def layer_norm_vjp_beta(g, ans, x, gamma, beta, eps=1e-5):
    """layer_norm: the gradient of beta is g, summed over the rows (as a product with ones, which
    BLAS does faster than a sum over the rows)."""
    if np.shape(beta) == np.shape(x)[-1:] and g.shape == np.shape(x):
        rows = np.reshape(g, (-1, np.shape(x)[-1]))
        return np.ones(len(rows), rows.dtype) @ rows
    return unbroadcast(g, np.shape(beta))


GELU_C = math.sqrt(2 / math.pi)           # a Python number: float32 stays float32


def gelu(x, out=None):
    """GELU, the tanh approximation: 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))); written into
    ``out`` if given (the op's out= form)."""
    t = gelu_tanh(x, out)
    return gelu_from_tanh(x, t, out=t)


def gelu_tanh(x, out=None):
    """tanh(√(2/π) x (1 + 0.044715 x²)), the inner part of GELU: one fresh array (or ``out``),
    every step computed in place in it (a new big array costs about as much as a pass over it),
    with x · x for x² (x ** 3 on float32 is much slower)."""
    if out is None:
        inner = np.asarray(np.multiply(x, x, dtype=float_dtype(x)))   # an array even for a 0-d x
    else:
        inner = np.multiply(x, x, out=out)
    inner *= 0.044715
    inner += 1
    inner *= x
    inner *= GELU_C
    return np.tanh(inner, out=inner)


def gelu_from_tanh(x, t, out=None):
    """GELU from its tanh t = gelu_tanh(x): 0.5 x (1 + t), the same numbers as ``gelu(x)``.
    Written into ``out`` if given (t's own array may be it; x's may not)."""
    out = np.add(t, 1, out=np.empty_like(t) if out is None else out)
    out *= x
    out *= 0.5
    return out


def gelu_slope(x, out=None):
    """gelu'(x) = 0.5 (1 + t) + 0.5 √(2/π) x (1 + 3 · 0.044715 x²) (1 - t²), t the tanh above;
    written into ``out`` if given (of x's float dtype; not x's array)."""
    return _slope_from_tanh(x, gelu_tanh(x), out, t_is_scratch=True)


def _slope_from_tanh(x, t, out, t_is_scratch):
    """gelu'(x) from t = gelu_tanh(x), into ``out`` if given; t's array holds 0.5 (1 + t)
    afterwards if it is scratch (one new array fewer), else it is left as it was."""
    slope = np.multiply(x, x, dtype=float_dtype(x), out=out)
    slope *= 3 * 0.044715
    slope += 1
    slope *= x
    slope *= 0.5 * GELU_C
    slope *= 1 - t * t
    half = np.add(t, 1, out=t if t_is_scratch else None)
    half *= 0.5
    slope += half
    return slope


def gelu_gradient(g, x, out=None):
    """g · gelu'(x), the gradient of GELU (``gelu_grad``); written into ``out`` if given (its
    out= form), which must not be g's array or x's."""
    return gelu_gradient_from_tanh(g, x, None, out)


def gelu_gradient_from_tanh(g, x, t, out=None):
    """g · gelu'(x) from t = gelu_tanh(x), kept from the forward pass (None: computed here):
    the same numbers as ``gelu_gradient(g, x)``. Written into ``out`` if given, which must not
    be the array of g, x or t."""
    dtype, shape = float_dtype(x), np.shape(x)
    scratch = t is None
    t = gelu_tanh(x) if scratch else t
    if (np.result_type(g, dtype) != dtype or np.broadcast_shapes(np.shape(g), shape) != shape
            or _fitting(out, dtype, shape) is None):
        return _written(g * _slope_from_tanh(x, t, None, scratch), out)
    return np.multiply(g, _slope_from_tanh(x, t, out, scratch), out=out)


def softmax_gradient(g, ans, axis=-1, out=None):
    """softmax: the gradient of x is ans · (g - sum(g · ans)), sums along ``axis``
    (``softmax_grad``); written into ``out`` if given (its out= form), which must not be the
    array of g or ans."""
    shape = np.broadcast_shapes(np.shape(g), np.shape(ans))
    product = np.multiply(g, ans, out=_fitting(out, np.result_type(g, ans), shape))
    sums = np.sum(product, axis=axis, keepdims=True)
    if product is out:
        return np.multiply(ans, np.subtract(g, sums, out=out), out=out)
    return _written(ans * (g - sums), out)


def _fitting(out, dtype, shape):
    """``out`` if it is an array of this dtype and shape, so that a computation written into
    it rounds as the same one on new arrays; else None."""
    ok = type(out) is np.ndarray and out.dtype == dtype and out.shape == shape
    return out if ok else None


def _written(result, out):
    """``result``, copied into ``out`` if there is one."""
    if out is None:
        return result
    out[...] = result
    return out


def embedding(table, ids):
    """The rows of ``table`` (V, C) at the integer ``ids`` (any shape): ids.shape + (C,)."""
    return table[checked_ids(ids, table)]


def checked_ids(ids, table):
    """``ids`` if they are integers that pick rows of ``table``, else an error naming both shapes."""
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise BadValueError(f"embedding takes integer ids (token numbers), shape {ids.shape}; got dtype "
                            f"{ids.dtype}. Feed an integer array, or an mg.Input(dtype=int)")
    if np.ndim(table) != 2:
        raise BadValueError(f"embedding's table must be a (V, C) matrix, one row per id; got shape "
                            f"{np.shape(table)}")
    if ids.size and (ids.min() < 0 or ids.max() >= len(table)):
        raise BadValueError(f"embedding ids of shape {ids.shape} range over [{ids.min()}, {ids.max()}], "
                            f"but the table of shape {np.shape(table)} has rows 0 to {len(table) - 1}")
    return ids


def embedding_vjp_table(g, table, ids):
    """embedding: each row of the table gets the sum of the gradients of the places that picked it
    (an id used twice adds up, in the order of the places), zeros for rows nobody picked."""
    dtype, shape = np.result_type(g), np.shape(table)
    if np.size(g) >= 8192 and shape[-1] >= 2 and dtype in (np.float32, np.float64):
        return rows_added_by_id(np.reshape(g, (-1, shape[-1])), np.reshape(ids, -1), shape[0])
    return scatter_add(g, ids, shape, dtype)


def rows_added_by_id(rows, ids, n):
    """``np.add.at(np.zeros((n, C)), ids, rows)``, the same numbers, faster: the rows of each id
    added one after another, in their order, to 0. Sorted by id (a stable sort keeps each id's
    rows in their order), each id's block is summed down its columns (numpy adds the rows of a
    block one by one), then added to the zero row. ``np.add.at`` takes 0.84 ms for the GPT's
    768 rows of 128 (this, 0.19 ms) and 18 ms for 4,096 rows of 512 (this, 1.1 ms). A speed
    trick, kept in this one place; tests/test_kernels.py compares the bits with np.add.at's."""
    if not ids.size or ids.min() < 0:                 # (an id counted from the end: np.add.at's way)
        return scatter_add(rows, ids, (n, rows.shape[1]), rows.dtype)
    out = np.zeros((n, rows.shape[1]), rows.dtype)
    order = np.argsort(ids, kind="stable")
    ids, rows = ids[order], rows[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    for start, end in zip(starts.tolist(), [*starts[1:].tolist(), len(ids)]):
        out[ids[start]] += rows[start:end].sum(axis=0)
    return out


# -- reductions, indexing, joining ---------------------------------------------------------------

def sum_back(g, x, axis, keepdims):
    """Spread a reduction's gradient back over the axes it reduced."""
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    elif axis is None and not keepdims:
        g = np.reshape(g, (1,) * x.ndim)
    return np.broadcast_to(g, x.shape)


def max_vjp(g, ans, x, axis=None, keepdims=False):
    """max: g goes to the places where x reaches its maximum; k tied places share it, g/k each."""
    top = sum_back(ans, x, axis, keepdims)
    is_max = x == top
    spread = sum_back(g, x, axis, keepdims) * is_max
    return spread / np.sum(is_max, axis=axis, keepdims=True, dtype=spread.dtype)


def scatter_add(g, index, shape, dtype):
    """The gradient of ``x[index]`` for an ``x`` of ``shape``: zeros, with ``g`` added at
    ``index`` (an index that picks an entry twice adds both gradients there)."""
    out = np.zeros(shape, dtype)
    np.add.at(out, index, g)
    return out


def concat_slice(g, xs, i, axis):
    """The gradient of ``xs[i]`` in ``concatenate(xs, axis)``: its slice of ``g`` along ``axis``."""
    start = sum(np.shape(x)[axis] for x in xs[:i])
    return np.take(g, range(start, start + np.shape(xs[i])[axis]), axis=axis)


# -- out= forms: an op's forward writing into an array it is given --------------------------------
# (the memory plan of mg.function uses them, compiler/memory.py; each gives the forward's numbers)

def relu_into(x, out):
    return np.maximum(x, 0, out=out)


def linear_into(x, W, b, out):
    product = np.matmul(x, W, out=out) if x.ndim <= 2 else matmul_into(x, W, out)
    return np.add(product, b, out=out)                    # linear: x @ W, then += b


def sum_into(x, axis=None, keepdims=False, out=None):
    return np.add.reduce(x, axis=axis, keepdims=keepdims, out=out)   # np.sum, without its wrappers


def sigmoid_into(x, out):
    """sigmoid's numbers in 7 calls instead of 8, one array allocated instead of seven:
    where(x >= 0, 1, e) / (1 + e), e = exp(-|x|), with where(x >= 0, 1, e) = exp(min(x, 0)) (x
    for x < 0 is -|x|, exp(0) is 1), divided once."""
    np.exp(np.negative(np.abs(x, out=out), out=out), out=out)      # e
    denominator = np.add(out, 1)                                   # 1 + e
    np.exp(np.minimum(x, 0, out=out), out=out)                     # 1, or e where x < 0
    return np.divide(out, denominator, out=out)


def embedding_into(table, ids, out):
    return np.take(table, checked_ids(ids, table), axis=0, out=out)   # table[ids]


def concatenate_into(*xs, axis=0, out=None):
    return np.concatenate(xs, axis=axis, out=out)


def step_into(x, out):
    return np.greater(x, 0, out=out)                      # step: (x > 0) as 1.0 and 0.0


def sum_to_into(g, x, out):
    """sum_to (``unbroadcast``) in its usual case, leading axes summed away; others refused."""
    added = g.ndim - np.ndim(x)
    if added < 1 or g.shape[added:] != np.shape(x):
        raise ValueError("not the usual case of sum_to")
    return np.add.reduce(g, axis=0 if added == 1 else tuple(range(added)), out=out)


def broadcast_into(g, x, out):
    np.copyto(out, g)                                     # broadcast_like: g copied to x's shape
    return out


def relu_gradient_into(g, x, out):
    return np.multiply(g, np.greater(x, 0), out=out)     # g * (x > 0): g times True or False


def sigmoid_gradient_into(g, s, out):
    """g * s * (1 - s): g·s into ``out``, then times 1 - s (one array of its own). It reads s
    after writing ``out``: ``out`` must not be s's array."""
    np.multiply(g, s, out=out)
    return np.multiply(out, np.subtract(1, s), out=out)


def tanh_gradient_into(g, t, out):
    """g * (1 - t * t), all three in ``out`` (so only where t has out's dtype: t * t is rounded in
    t's); it reads g after writing ``out``: ``out`` must not be g's array."""
    if t.dtype != out.dtype:
        raise ValueError("t * t would be rounded in out's dtype, not t's")
    np.multiply(t, t, out=out)
    np.subtract(1, out, out=out)
    return np.multiply(g, out, out=out)


def matmul_accumulate_into(a, x, y, out):
    """a + x @ y: the product into ``out``, then a added to it there; ``out`` must not be a's
    array."""
    matmul_into(x, y, out)
    return np.add(out, a, out=out)
