"""The array code behind the op table's longer rows (its *kernels*), in the table's order.

A row of ``ops.py`` whose forward and VJPs fit in a line writes them there. The ones that take
more live here: the shape bookkeeping every gradient needs (``unbroadcast``, ``sum_back``,
``scatter_add``, ``concat_slice``), matmul and linear with vectors and batches, the numerically
stable sigmoid and log-softmax, and max's VJP. They work on numpy arrays only (no nodes);
``symbolic.py`` reuses the bookkeeping for the gradient ops it builds. The fused losses' kernels
are in ``losses.py``.

Broadcasting (``x + b`` with ``x`` of shape (n, 3) and ``b`` of shape (3,)) copies ``b`` along
an axis in the forward pass, so its gradient must be *summed* along that axis in the backward
pass. ``unbroadcast`` does that in one place for every op.
"""

import numpy as np


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
    """x @ y, for vectors and matrices only (what the VJPs below are written for)."""
    if x.ndim > 2 or y.ndim > 2 or x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"matmul takes vectors and matrices; got shapes {x.shape} and {y.shape}")
    return x @ y


def _as_matrices(g, x, y):
    """View vectors as 1-row (left) / 1-column (right) matrices, and ``g`` to match."""
    X = x.reshape(1, -1) if x.ndim == 1 else x
    Y = y.reshape(-1, 1) if y.ndim == 1 else y
    return X, Y, np.reshape(g, (X.shape[0], Y.shape[1]))


def matmul_vjp_x(g, ans, x, y):
    """x @ y: the gradient of x is g @ yᵀ."""
    if x.ndim == y.ndim == 2:
        return g @ y.T
    X, Y, G = _as_matrices(g, x, y)
    return (G @ Y.T).reshape(x.shape)


def matmul_vjp_y(g, ans, x, y):
    """x @ y: the gradient of y is xᵀ @ g."""
    if x.ndim == y.ndim == 2:
        return x.T @ g
    X, Y, G = _as_matrices(g, x, y)
    return (X.T @ G).reshape(y.shape)


def linear(x, W, b):
    """x @ W + b, with b added in place into the fresh product (one temporary array fewer)."""
    out = x @ W
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


def log_softmax(x, axis=-1):
    """x - log(sum(exp(x))), shifted by the row maximum so that no exp overflows."""
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


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
