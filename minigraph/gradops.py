"""The ops gradients are made of: what ``mg.grad`` needs beside the rows of ``ops.py``.

Some graph VJPs need a few more ops than the table has: undoing broadcasting (``sum_to``),
spreading a sum back (``broadcast_like``), a mask such as ``x > 0`` (``step``), the views of
matmul's operands as matrices. Each is a row like those of ``ops.py``: a forward, a numeric VJP
(so ``Graph.backward`` runs through it) and a graph VJP (so ``mg.grad`` goes through it again),
and, where it has one, its ``out=`` form. Ops whose value does not change under small changes of
their inputs (masks, shapes, sizes) have gradient 0: their graph VJP is ``None``, no gradient
flows.

These ops keep the dtype of what they are given, as every op does (see ``dtypes.py``): the mask
of a float32 ``x`` is float32, and so are the zeros sent to its inputs by a float32 gradient.
Something that has no floating dtype of its own (integer labels, a count) takes the floating
dtype of the values it meets (``float_dtype``: its own if floating, else the default), so the
gradients of a float32 graph stay float32 however often ``grad`` is applied.
"""

import numpy as np

from . import kernels
from .dtypes import float_dtype
from .opdef import defop


def _zero_vjps(n):
    """VJPs that send zeros, each of its input's shape, in the dtype of the gradient received."""
    return [lambda h, ans, *xs, k=k, **attrs: np.zeros(np.shape(xs[k]), float_dtype(h)) for k in range(n)]


def _piecewise_constant(name, forward, n_inputs=1, symbol=None, out=None):
    """An op whose gradient is 0 almost everywhere (a mask, a shape, a count)."""
    return defop(name, forward, _zero_vjps(n_inputs), symbol, graph=[None] * n_inputs, out=out)


ones_like = _piecewise_constant("ones_like", lambda x: np.ones(np.shape(x), float_dtype(x)), symbol="1")
zeros_like = _piecewise_constant("zeros_like", lambda x: np.zeros(np.shape(x), float_dtype(x)), symbol="0")
step = _piecewise_constant("step", lambda x: (x > 0).astype(float_dtype(x)), symbol="x>0",
                           out=kernels.step_into)
is_zero = _piecewise_constant("is_zero", lambda x: (x == 0).astype(float_dtype(x)), symbol="x=0")
leaky_slope = _piecewise_constant("leaky_slope", lambda x, slope=0.01:
                                  np.where(x > 0, 1.0, slope).astype(float_dtype(x)),
                                  symbol="slope")
size = _piecewise_constant("size", lambda x: np.array(np.size(x), float_dtype(x)), symbol="size")
size_ratio = _piecewise_constant("size_ratio",
                                 lambda a, b: np.array(np.size(a) / np.size(b), float_dtype(a)), 2,
                                 symbol="ratio")
examples = _piecewise_constant("examples", lambda x: np.array(np.prod(np.shape(x)[:-1]), float_dtype(x)),
                               symbol="n")


def _max_share(x, axis=None, keepdims=False):
    """1/k at each of the k places where x reaches its maximum (along ``axis``), 0 elsewhere."""
    is_max = (x == np.max(x, axis=axis, keepdims=True)).astype(float_dtype(x))
    return is_max / np.sum(is_max, axis=axis, keepdims=True)


max_share = _piecewise_constant("max_share", _max_share, symbol="argmax")


def _targets(labels, logits):
    """Cross-entropy targets in the logits' shape (and dtype): class labels as one-hot rows, else
    the labels."""
    if labels.shape == logits.shape and logits.ndim:
        return labels.astype(float_dtype(logits))
    return np.eye(logits.shape[-1], dtype=float_dtype(logits))[labels]


targets = _piecewise_constant("one_hot", _targets, 2, symbol="one-hot")

# -- shapes: undoing broadcasting, spreading a sum back, reshaping -----------------------------
sum_to = defop("sum_to", lambda g, x: kernels.unbroadcast(g, np.shape(x)),
               [lambda h, ans, g, x: np.broadcast_to(h, np.shape(g)).copy()] + _zero_vjps(2)[1:],
               "sum_to", graph=[lambda h, ans, g, x: broadcast_like(h, g), None], out=kernels.sum_to_into)
broadcast_like = defop("broadcast_like", lambda g, x: np.broadcast_to(g, np.shape(x)).copy(),
                       [lambda h, ans, g, x: kernels.unbroadcast(h, np.shape(g))] + _zero_vjps(2)[1:],
                       "broadcast", graph=[lambda h, ans, g, x: sum_to(h, g), None],
                       out=kernels.broadcast_into)
reshape_like = defop("reshape_like", lambda a, b: np.reshape(a, np.shape(b)),
                     [lambda h, ans, a, b: np.reshape(h, np.shape(a))] + _zero_vjps(2)[1:],
                     "reshape", graph=[lambda h, ans, a, b: reshape_like(h, a), None])
expand_dims = defop("expand_dims", lambda g, axis: np.expand_dims(g, axis),
                    [lambda h, ans, g, axis: np.reshape(h, np.shape(g))], "expand",
                    graph=[lambda h, ans, g, axis: reshape_like(h, g)])


def spread(g, axis, keepdims):
    """A reduction's gradient (a node), with the reduced axis put back (size 1), ready to broadcast."""
    return g if axis is None or keepdims else expand_dims(g, axis)


def _seed_for(seed, output):
    """``mg.grad``'s seed, checked when the gradient graph runs: it has the output's shape."""
    if np.shape(seed) != np.shape(output):
        raise ValueError(f"the seed gradient has shape {np.shape(seed)}, but the output has shape "
                         f"{np.shape(output)}; they must match")
    return seed


seed_for = defop("seed", _seed_for, [lambda h, ans, seed, output: h] + _zero_vjps(2)[1:], "seed",
                 graph=[lambda h, ans, seed, output: h, None])

# -- matmul's operands seen as matrices (vectors as 1-row or 1-column matrices) ------------------


def _as_matrix(x, side):
    """A vector as a 1-row ("left" operand of @) or 1-column ("right") matrix; matrices stay."""
    if np.ndim(x) != 1:
        return x
    return np.reshape(x, (1, -1) if side == "left" else (-1, 1))


as_matrix = defop("as_matrix", _as_matrix, [lambda h, ans, x, side: np.reshape(h, np.shape(x))],
                  "matrix", graph=[lambda h, ans, x, side: reshape_like(h, x)])

# the matrix transpose of each matrix of a stack (its last two axes): named "transpose" since it
# is one (a matrix's transpose is the table's transpose, which reverses every axis)
matrix_transpose = defop("transpose", lambda x: np.swapaxes(x, -1, -2),
                         [lambda h, ans, x: np.swapaxes(h, -1, -2)], "ᵀ",
                         graph=[lambda h, ans, x: matrix_transpose(h)])


def _left_matrix(x, y):
    """The left operand of x @ y seen as a matrix, for y's gradient xᵀ @ g: a vector as a 1-row
    matrix; a stack of rows times one matrix, (..., T, C) @ (C, D), as one tall matrix of all
    its rows, (N, C) (so that xᵀ @ g is one product of two tall matrices, as
    ``kernels.matmul_vjp_y`` computes it, not one per matrix of the stack and then a sum, which
    rounds otherwise); a matrix or another stack as it is."""
    if kernels.stacked_rows(x, y):
        return np.reshape(x, (-1, np.shape(x)[-1]))
    return _as_matrix(x, "left")


left_matrix = defop("left_matrix", _left_matrix,
                    [lambda h, ans, x, y: np.reshape(h, np.shape(x))] + _zero_vjps(2)[1:],
                    "matrix", graph=[lambda h, ans, x, y: reshape_like(h, x), None])


def _product_matrix(g, x, y):
    """The gradient of x @ y shaped like the product of their matrix views (see ``as_matrix``):
    a stack of matrices when x or y is one; for a stack of rows times one matrix, one tall
    matrix of all the rows, (N, D), as ``left_matrix`` sees x."""
    if kernels.stacked_rows(x, y):
        return np.reshape(g, (-1, np.shape(g)[-1]))
    return kernels.as_matrices(g, x, y)[2]


product_matrix = defop("product_matrix", _product_matrix,
                       [lambda h, ans, g, x, y: np.reshape(h, np.shape(g))] + _zero_vjps(3)[1:],
                       "matrix", graph=[lambda h, ans, g, x, y: reshape_like(h, g), None, None])


def _to_operand(a, x, side):
    """The gradient of the matrix view of an operand ``x`` of @, computed for each matrix of the
    stack (``a``): summed over the stack axes that broadcasting added to ``x``, in ``x``'s shape.
    (A stack of rows ``x`` seen as one tall matrix has its gradient as one too: a matrix ``a``
    for an ``x`` of more axes is that, put back in x's shape.)"""
    if side == "left" and np.ndim(a) == 2 < np.ndim(x):
        return np.reshape(a, np.shape(x))
    return np.reshape(kernels.unbroadcast(a, np.shape(_as_matrix(x, side))), np.shape(x))


def _to_stack(h, a, side):
    """``to_operand``'s gradient: ``h`` (of x's shape) in the shape of the matrices ``a``: spread
    along the stack axes that broadcasting added to x, or, for a stack of rows seen as one tall
    matrix, reshaped to it."""
    if side == "left" and np.ndim(a) == 2 < np.ndim(h):
        return np.reshape(h, np.shape(a))
    return np.broadcast_to(_as_matrix(h, side), np.shape(a)).copy()


to_operand = defop(
    "to_operand", _to_operand, [lambda h, ans, a, x, side: _to_stack(h, a, side)] + _zero_vjps(2)[1:],
    "sum_to", graph=[lambda h, ans, a, x, side: to_stack(h, a, side=side), None])
to_stack = defop(
    "to_stack", _to_stack, [lambda k, ans, h, a, side: _to_operand(k, h, side)] + _zero_vjps(2)[1:],
    "broadcast", graph=[lambda k, ans, h, a, side: to_operand(k, h, side=side), None])

sum_to_product = defop(
    "sum_to_product", lambda g, x, W: kernels.unbroadcast(g, np.shape(x)[:-1] + np.shape(W)[1:]),
    [lambda h, ans, g, x, W: np.broadcast_to(h, np.shape(g)).copy()] + _zero_vjps(3)[1:], "sum_to",
    graph=[lambda h, ans, g, x, W: broadcast_like(h, g), None, None])

# the gradient of x[index], as an op (scatter-add); its own gradient picks x[index] again
scatter = defop("scatter", lambda g, x, index: kernels.scatter_add(g, index, np.shape(x), float_dtype(g)),
                [lambda h, ans, g, x, index: h[index]] + _zero_vjps(2)[1:], "scatter",
                graph=[lambda h, ans, g, x, index: h[index], None])
