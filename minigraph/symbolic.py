"""Gradients as graphs: ``mg.grad(loss, wrt)`` builds the backward pass out of ops.

``Graph.backward`` computes gradients as numbers. ``grad`` writes the same computation down as
*nodes*: for each node of ``wrt`` it returns a node whose value is d(loss)/d(node). The backward
pass becomes part of the graph, so you can draw it (``mg.draw``), run it (``mg.Graph(...)``)
and differentiate it again: ``mg.grad(mg.grad(f, x), x)`` is f''(x).

It walks the same ``BackwardPlan`` as ``Graph.backward`` (same order, same inputs wanted) and,
where the interpreter calls an op's VJP on arrays, it calls the op's *graph VJP* on nodes:

    defvjp(mg.tanh, lambda g, ans, x: g * (1 - ans * ans))

which builds ``g * (1 - ans * ans)`` as three new ops. A node that feeds several consumers
receives one gradient from each, added up with ``mg.add`` (the interpreter adds arrays).

Some VJPs need a few more ops than the table has: undoing broadcasting (``sum_to``), spreading a
sum back (``broadcast_like``), a mask such as ``x > 0`` (``step``). They are defined here, each
with a numeric VJP (so ``Graph.backward`` runs through them) and a graph VJP (so ``grad`` can go
through them again). Ops whose value does not change under small changes of their inputs
(masks, shapes, sizes) have gradient 0: their graph VJP is ``None``, no gradient flows.

These helpers keep the dtype of what they are given, as every op does (see ``dtypes.py``): the
mask of a float32 ``x`` is float32, and so are the zeros sent to its inputs by a float32
gradient. Something that has no floating dtype of its own (integer labels, a count) takes the
floating dtype of the values it meets (``float_dtype``: its own if floating, else the
default), so the gradients of a float32 graph stay float32 however often ``grad`` is applied.
"""

import functools
import inspect

import numpy as np

from . import kernels, ops
from .dtypes import float_dtype, row_of
from .errors import OpError
from .graph import Constant, Graph, Input, Node, Op, auto_name, topological_order
from .opdef import OUTPUT

GRAPH_VJPS = {}          # op (its OpDef) or op name -> one function per input: (g, ans, *inputs, **attrs) -> node


def defvjp(op, *vjps):
    """Give an op (``mg.tanh``; or a name, for every op of that name) its VJP written with ops,
    one function per input:
    ``vjp(g, ans, *inputs, **attrs)`` gets *nodes* and returns a node; None instead of a function
    (or a function returning None) means no gradient flows to that input."""
    GRAPH_VJPS[getattr(op, "opdef", op)] = [
        _nothing if vjp is None else vjp for vjp in vjps]


def _nothing(*args, **attrs):
    return None


# -- ops the graph VJPs need ---------------------------------------------------------------------

def _no_gradient(op):
    """Declare that ``op``'s value does not move when its inputs move a little: gradient 0."""
    defvjp(op, *[None] * len(op.opdef.vjps))
    return op


def _zero_vjps(n):
    """VJPs that send zeros, each of its input's shape, in the dtype of the gradient received."""
    return [lambda h, ans, *xs, k=k, **attrs: np.zeros(np.shape(xs[k]), float_dtype(h)) for k in range(n)]


def _piecewise_constant(name, forward, n_inputs=1, symbol=None):
    """An op whose gradient is 0 almost everywhere (a mask, a shape, a count)."""
    return _no_gradient(ops.defop(name, forward, _zero_vjps(n_inputs), symbol))


ones_like = _piecewise_constant("ones_like", lambda x: np.ones(np.shape(x), float_dtype(x)), symbol="1")
zeros_like = _piecewise_constant("zeros_like", lambda x: np.zeros(np.shape(x), float_dtype(x)), symbol="0")
step = _piecewise_constant("step", lambda x: (x > 0).astype(float_dtype(x)), symbol="x>0")
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

sum_to = ops.defop("sum_to", lambda g, x: ops.unbroadcast(g, np.shape(x)),
                   [lambda h, ans, g, x: np.broadcast_to(h, np.shape(g)).copy()] + _zero_vjps(2)[1:],
                   "sum_to")
broadcast_like = ops.defop("broadcast_like", lambda g, x: np.broadcast_to(g, np.shape(x)).copy(),
                           [lambda h, ans, g, x: ops.unbroadcast(h, np.shape(g))] + _zero_vjps(2)[1:],
                           "broadcast")
reshape_like = ops.defop("reshape_like", lambda a, b: np.reshape(a, np.shape(b)),
                         [lambda h, ans, a, b: np.reshape(h, np.shape(a))] + _zero_vjps(2)[1:],
                         "reshape")
expand_dims = ops.defop("expand_dims", lambda g, axis: np.expand_dims(g, axis),
                        [lambda h, ans, g, axis: np.reshape(h, np.shape(g))], "expand")
defvjp(sum_to, lambda h, ans, g, x: broadcast_like(h, g), None)
defvjp(broadcast_like, lambda h, ans, g, x: sum_to(h, g), None)
defvjp(reshape_like, lambda h, ans, a, b: reshape_like(h, a), None)
defvjp(expand_dims, lambda h, ans, g, axis: reshape_like(h, g))


def _seed_for(seed, output):
    """``mg.grad``'s seed, checked when the gradient graph runs: it has the output's shape."""
    if np.shape(seed) != np.shape(output):
        raise ValueError(f"the seed gradient has shape {np.shape(seed)}, but the output has shape "
                         f"{np.shape(output)}; they must match")
    return seed


seed_for = ops.defop("seed", _seed_for, [lambda h, ans, seed, output: h] + _zero_vjps(2)[1:], "seed")
defvjp(seed_for, lambda h, ans, seed, output: h, None)


def _as_matrix(x, side):
    """A vector as a 1-row ("left" operand of @) or 1-column ("right") matrix; matrices stay."""
    if np.ndim(x) != 1:
        return x
    return np.reshape(x, (1, -1) if side == "left" else (-1, 1))


as_matrix = ops.defop("as_matrix", _as_matrix, [lambda h, ans, x, side: np.reshape(h, np.shape(x))],
                      "matrix")
defvjp(as_matrix, lambda h, ans, x, side: reshape_like(h, x))


# the matrix transpose of each matrix of a stack (its last two axes): named "transpose" since it
# is one (a matrix's transpose is the table's transpose, which reverses every axis)
matrix_transpose = ops.defop("transpose", lambda x: np.swapaxes(x, -1, -2),
                             [lambda h, ans, x: np.swapaxes(h, -1, -2)], "ᵀ")
defvjp(matrix_transpose, lambda h, ans, x: matrix_transpose(h))


def _product_matrix(g, x, y):
    """The gradient of x @ y shaped like the product of their matrix views (see ``as_matrix``):
    a stack of matrices when x or y is one."""
    return kernels.as_matrices(g, x, y)[2]


product_matrix = ops.defop("product_matrix", _product_matrix,
                           [lambda h, ans, g, x, y: np.reshape(h, np.shape(g))] + _zero_vjps(3)[1:],
                           "matrix")
defvjp(product_matrix, lambda h, ans, g, x, y: reshape_like(h, g), None, None)


def _to_operand(a, x, side):
    """The gradient of the matrix view of an operand ``x`` of @, computed for each matrix of the
    stack (``a``): summed over the stack axes that broadcasting added to ``x``, in ``x``'s shape."""
    return np.reshape(ops.unbroadcast(a, np.shape(_as_matrix(x, side))), np.shape(x))


to_operand = ops.defop(
    "to_operand", _to_operand,
    [lambda h, ans, a, x, side: np.broadcast_to(_as_matrix(h, side), np.shape(a)).copy()] + _zero_vjps(2)[1:],
    "sum_to")
defvjp(to_operand, lambda h, ans, a, x, side: broadcast_like(as_matrix(h, side), a), None)

sum_to_product = ops.defop(
    "sum_to_product", lambda g, x, W: ops.unbroadcast(g, np.shape(x)[:-1] + np.shape(W)[1:]),
    [lambda h, ans, g, x, W: np.broadcast_to(h, np.shape(g)).copy()] + _zero_vjps(3)[1:], "sum_to")
defvjp(sum_to_product, lambda h, ans, g, x, W: broadcast_like(h, g), None, None)


def _spread(g, axis, keepdims):
    """A reduction's gradient, with the reduced axis put back (size 1), ready to broadcast."""
    return g if axis is None or keepdims else expand_dims(g, axis)


@functools.cache
def _concat_part(k):
    """Input i of a k-way concatenation: its slice of the gradient (one op per k)."""
    def part(g, *xs, axis=0, i=0):
        return kernels.concat_slice(g, xs, i, axis)

    def pad(h, ans, g, *xs, axis=0, i=0):
        return np.concatenate([h if j == i else np.zeros(np.shape(x), float_dtype(h))
                               for j, x in enumerate(xs)], axis)

    op = ops.defop("concat_part", part, [pad] + _zero_vjps(k + 1)[1:], "slice")
    defvjp(op, lambda h, ans, g, *xs, axis=0, i=0: ops.concatenate(
        [h if j == i else zeros_like(x) for j, x in enumerate(xs)], axis=axis), *[None] * k)
    return op


# -- the graph VJP of each op of the table -----------------------------------------------------

def _matmul_x(g, ans, x, y):
    """x @ y: the gradient of x is g @ yᵀ (vectors viewed as 1-row / 1-column matrices; for
    stacks of matrices, each matrix's, summed over the stack axes x was broadcast along)."""
    return to_operand(product_matrix(g, x, y) @ matrix_transpose(as_matrix(y, "right")), x, side="left")


def _matmul_y(g, ans, x, y):
    """x @ y: the gradient of y is xᵀ @ g."""
    return to_operand(matrix_transpose(as_matrix(x, "left")) @ product_matrix(g, x, y), y, side="right")


def _transpose(g, ans, x, axes=None):
    return ops.transpose(g, None if axes is None else tuple(int(i) for i in np.argsort(np.mod(axes, len(axes)))))


def _is_integer(node):
    """Integer labels (class indices, or integer one-hot) take no gradient."""
    if node.value is not None:
        return np.asarray(node.value).dtype.kind in "biu"
    return node.kind == "input" and np.dtype(node.dtype).kind in "biu"


def _cross_entropy_logits(g, ans, logits, labels):
    """softmax · (total label mass) - targets, per example, times g; the softmax as exp(log-softmax),
    the loss's own numbers (as its numeric VJP computes it)."""
    t = targets(labels, logits) if _is_integer(labels) else labels
    p = ops.exp(ops.log_softmax(logits, axis=-1)) * ops.sum(t, axis=-1, keepdims=True)
    return g * (p - t) / examples(logits)


def _cross_entropy_labels(g, ans, logits, labels):
    return None if _is_integer(labels) else -g * ops.log_softmax(logits, axis=-1) / examples(logits)


def _power_x(g, ans, x, y):
    """x ** y: the gradient of x is g·y·x^(y-1), and 0 at 0 ** 0 (as the numeric VJP).

    At 0 ** 0 alone, y·x^(y-1) would be 0·inf: there the base becomes 1 and the product is
    multiplied by 0 (``both_zero`` is a mask: it adds no gradient of its own). Everywhere else
    this is y·x^(y-1) itself, so its own derivative with respect to y is right also at y = 0:
    x^(y-1)·(1 + y·ln x) = 1/x (a mask on y alone, turning x^(y-1) into x^0 or x, would not be).
    """
    both_zero = is_zero(x) * is_zero(y)
    return sum_to(g * y * (x + both_zero) ** (y - 1) * (1 - both_zero), x)


def _power_y(g, ans, x, y):
    """x ** y: the gradient of y is g·x^y·ln x, and 0 where x is 0 (the limit from x > 0).

    At x = 0, ln is taken of 1 and the result multiplied by 0, so that this gradient's own
    derivative with respect to x is 0 there too (as the other mixed derivative, from ``_power_x``),
    not x^y/1 = 1 at 0 ** 0.
    """
    not_zero = 1 - is_zero(x)
    return sum_to(g * ans * ops.log(x + is_zero(x)) * not_zero, y)


def _normalized(x, eps):
    """layer_norm's x̂ = (x - mean) / sqrt(variance + eps) over the last axis, and 1 / sqrt(...)."""
    centered = x - ops.mean(x, axis=-1, keepdims=True)
    inv_std = (ops.mean(centered * centered, axis=-1, keepdims=True) + eps) ** -0.5
    return centered * inv_std, inv_std


def _layer_norm_x(g, ans, x, gamma, beta=None, eps=1e-5):
    """(h - mean(h) - x̂ · mean(h · x̂)) / std, with h = g · gamma (as kernels.layer_norm_vjp_x)."""
    x_hat, inv_std = _normalized(x, eps)
    h = g * gamma
    return inv_std * (h - ops.mean(h, axis=-1, keepdims=True) - x_hat * ops.mean(h * x_hat, axis=-1, keepdims=True))


def _layer_norm_gamma(g, ans, x, gamma, beta=None, eps=1e-5):
    return sum_to(g * _normalized(x, eps)[0], gamma)


def _gelu_slope(x):
    """gelu'(x), from table ops (as kernels.gelu_slope), so that mg.grad goes through it again."""
    t = ops.tanh(kernels.GELU_C * (x + 0.044715 * x * x * x))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kernels.GELU_C * (1 + 3 * 0.044715 * x * x)


def _softmax_x(g, ans, axis=-1):
    return ans * (g - ops.sum(g * ans, axis=axis, keepdims=True))


# -- fused gradients: the VJP of a row as one op --------------------------------------------------

def _fused_gradient(name, forward, expansion, symbol):
    """An op whose value is an op's VJP for one input, computed in one step by ``forward`` (a
    call of the row's own numeric VJP, so the numbers are the interpreter's, bit for bit), and
    whose own derivatives are those of ``expansion``, the same maths written with ops: ``mg.grad``
    and ``Graph.backward`` go through it again by going through its expansion."""
    n_inputs = sum(p.default is p.empty for p in inspect.signature(expansion).parameters.values())
    op = ops.defop(name, forward, [_numeric_through(expansion, k) for k in range(n_inputs)], symbol)
    defvjp(op, *[_graph_through(expansion, k) for k in range(n_inputs)])
    op.opdef.expansion = expansion
    return op


def _graph_through(expansion, k):
    """The graph VJP for input ``k`` of an op that computes ``expansion``: ``grad`` of the
    expansion built on stand-ins for the op's inputs, the stand-ins then replaced by them."""
    def vjp(h, ans, *inputs, **attrs):
        stand_ins = [Input(f"_{i}") for i in range(len(inputs))]
        seed = Input("_seed")
        out = expansion(*stand_ins, **attrs)
        if stand_ins[k] not in topological_order([out]):
            return None
        return _replaced(grad(out, stand_ins[k], seed=seed), {seed: h, **dict(zip(stand_ins, inputs))})
    return vjp


def _numeric_through(expansion, k):
    """The numeric VJP for input ``k`` of an op that computes ``expansion``: its graph VJP, run."""
    graph_vjp = _graph_through(expansion, k)

    def vjp(h, ans, *inputs, **attrs):
        node = graph_vjp(Constant(h), None, *[Constant(x) for x in inputs], **attrs)
        return np.zeros(np.shape(inputs[k]), float_dtype(h)) if node is None else Graph(node).forward()
    return vjp


def _replaced(output, new):
    """``output`` built again with the nodes ``new`` maps put in place of the keys."""
    for node in topological_order([output]):
        if node not in new and node.op is not None:
            inputs = [new.get(p, p) for p in node.inputs]
            if any(a is not b for a, b in zip(inputs, node.inputs)):
                new[node] = Op(row_of(node.op), inputs, node.attrs)
    return new.get(output, output)


layer_norm_grad_x = _fused_gradient(
    "layer_norm_grad_x", lambda g, x, gamma, eps=1e-5: kernels.layer_norm_vjp_x(g, None, x, gamma, None, eps),
    lambda g, x, gamma, eps=1e-5: _layer_norm_x(g, None, x, gamma, eps=eps), "dLN/dx")
layer_norm_grad_gamma = _fused_gradient(
    "layer_norm_grad_gamma",
    lambda g, x, gamma, eps=1e-5: kernels.layer_norm_vjp_gamma(g, None, x, gamma, None, eps),
    lambda g, x, gamma, eps=1e-5: _layer_norm_gamma(g, None, x, gamma, eps=eps), "dLN/dγ")
layer_norm_grad_beta = _fused_gradient(
    "layer_norm_grad_beta", lambda g, x, beta: kernels.layer_norm_vjp_beta(g, None, x, None, beta),
    lambda g, x, beta: sum_to(g, beta), "dLN/dβ")
gelu_grad = _fused_gradient("gelu_grad", lambda g, x: ops.gelu.opdef.vjps[0](g, None, x),
                            lambda g, x: g * _gelu_slope(x), "dgelu")
softmax_grad = _fused_gradient(
    "softmax_grad", lambda g, ans, axis=-1: ops.softmax.opdef.vjps[0](g, ans, None, axis=axis),
    _softmax_x, "dsoftmax")


def _split(g, ans, x, n, axis=-1):
    """Join the parts' gradients again; a part nobody used contributes zeros."""
    return ops.concatenate([gi if gi is not None else zeros_like(Op(OUTPUT, [ans], {"index": i}))
                            for i, gi in enumerate(g)], axis=axis)


defvjp(ops.add, lambda g, ans, x, y: sum_to(g, x), lambda g, ans, x, y: sum_to(g, y))
defvjp(ops.sub, lambda g, ans, x, y: sum_to(g, x), lambda g, ans, x, y: sum_to(-g, y))
defvjp(ops.mul, lambda g, ans, x, y: sum_to(g * y, x), lambda g, ans, x, y: sum_to(g * x, y))
defvjp(ops.div, lambda g, ans, x, y: sum_to(g / y, x), lambda g, ans, x, y: sum_to(-g * x / (y * y), y))
defvjp(ops.power, _power_x, _power_y)
defvjp(ops.neg, lambda g, ans, x: -g)
defvjp(ops.matmul, _matmul_x, _matmul_y)
defvjp(ops.exp, lambda g, ans, x: g * ans)
defvjp(ops.log, lambda g, ans, x: g / x)
defvjp(ops.tanh, lambda g, ans, x: g * (1 - ans * ans))
defvjp(ops.sigmoid, lambda g, ans, x: g * ans * (1 - ans))
defvjp(ops.relu, lambda g, ans, x: g * step(x))
defvjp(ops.leaky_relu, lambda g, ans, x, slope=0.01: g * leaky_slope(x, slope=slope))
defvjp(ops.sum, lambda g, ans, x, axis=None, keepdims=False: broadcast_like(_spread(g, axis, keepdims), x))
defvjp(ops.mean, lambda g, ans, x, axis=None, keepdims=False:
       broadcast_like(_spread(g, axis, keepdims), x) * size_ratio(ans, x))
defvjp(ops.max, lambda g, ans, x, axis=None, keepdims=False:
       broadcast_like(_spread(g, axis, keepdims), x) * max_share(x, axis=axis))
defvjp(ops.reshape, lambda g, ans, x, shape: reshape_like(g, x))
defvjp(ops.transpose, _transpose)
defvjp(ops.getitem, lambda g, ans, x, index: _scatter(g, x, index=index))
defvjp(ops.softmax, lambda g, ans, x, axis=-1, mask=None: softmax_grad(g, ans, axis=axis))
defvjp(ops.log_softmax, lambda g, ans, x, axis=-1: g - ops.exp(ans) * ops.sum(g, axis=axis, keepdims=True))
defvjp(ops.linear, lambda g, ans, x, W, b: _matmul_x(sum_to_product(g, x, W), None, x, W),
       lambda g, ans, x, W, b: _matmul_y(sum_to_product(g, x, W), None, x, W),
       lambda g, ans, x, W, b: sum_to(g, b))
defvjp(ops.mse, lambda g, ans, p, t: g * 2 * (p - t) / size(p),
       lambda g, ans, p, t: g * 2 * (t - p) / size(p))
defvjp(ops.bce_with_logits, lambda g, ans, z, y: g * (ops.sigmoid(z) - y) / size(z),
       lambda g, ans, z, y: -g * z / size(z))
defvjp(ops.softmax_cross_entropy, _cross_entropy_logits, _cross_entropy_labels)
defvjp(ops.gelu, lambda g, ans, x: gelu_grad(g, x))
defvjp(ops.embedding, lambda g, ans, table, ids: _embedding_table(g, table, ids), None)
defvjp(ops.layer_norm_shifted, lambda g, ans, x, gamma, beta, eps=1e-5: layer_norm_grad_x(g, x, gamma, eps=eps),
       lambda g, ans, x, gamma, beta, eps=1e-5: layer_norm_grad_gamma(g, x, gamma, eps=eps),
       lambda g, ans, x, gamma, beta, eps=1e-5: layer_norm_grad_beta(g, x, beta))
defvjp(ops.layer_norm_scaled, lambda g, ans, x, gamma, eps=1e-5: layer_norm_grad_x(g, x, gamma, eps=eps),
       lambda g, ans, x, gamma, eps=1e-5: layer_norm_grad_gamma(g, x, gamma, eps=eps))
defvjp("split", _split)
defvjp(OUTPUT, lambda g, ans, t, index: tuple(g if i == index else None
                                              for i in range(t.op.n_outputs)))
CONCATENATE = "concatenate"      # k inputs: the VJP of input i is concat_part(k) with i=i


_scatter = ops.defop("scatter",                 # the gradient of x[index], as an op (scatter-add)
                     lambda g, x, index: kernels.scatter_add(g, index, np.shape(x), float_dtype(g)),
                     [lambda h, ans, g, x, index: h[index]] + _zero_vjps(2)[1:],
                     "scatter")
defvjp(_scatter, lambda h, ans, g, x, index: ops.getitem(h, index=index), None)

_embedding_table = ops.defop("embedding_grad",     # the gradient of embedding(table, ids), as an op
                             lambda g, table, ids: kernels.embedding_vjp_table(g, table, ids),
                             [lambda h, ans, g, table, ids: kernels.embedding(h, ids)] + _zero_vjps(3)[1:],
                             "scatter")
defvjp(_embedding_table, lambda h, ans, g, table, ids: ops.embedding(h, ids), None, None)


# -- grad -----------------------------------------------------------------------------------------

def _vjp(node, k):
    """The graph VJP of ``node``'s op for its input ``k``, or an error naming the op."""
    name = node.op.name
    if name == CONCATENATE:
        k_inputs = len(node.inputs)
        return lambda g, ans, *xs, axis=0: _concat_part(k_inputs)(g, *xs, axis=axis, i=k)
    op = getattr(node.op, "plain", node.op)      # used with Python numbers: dtypes.WithNumbers
    vjps = GRAPH_VJPS.get(op) or GRAPH_VJPS.get(name)
    if vjps is None:
        raise OpError(f"mg.grad: the op '{name}' (node '{node.name}') has no VJP written as a graph "
                      f"yet, so its backward cannot become part of the graph. Give it one with "
                      f"mg.defvjp(op, lambda g, ans, x: ...), building the gradient from ops.")
    return vjps[k]


def _add(a, b):
    """Sum two gradients (nodes, or tuples of nodes for a multi-output op; None means zero)."""
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b))
    return b if a is None else a if b is None else ops.add(a, b)


def grad(output, wrt, seed=None):
    """For each node of ``wrt`` (a list of nodes or names, or one), a node whose value is
    d(output)/d(node).

    The gradient is built from ops, following ``Graph(output).plan(wrt)``: the same steps
    ``Graph.backward`` takes. ``seed`` (a node; checked, when it runs, to have the output's shape)
    is the gradient of the output to start from; by default ``ones_like(output)``:
    d(output)/d(output) = 1 (for a non-scalar output, this is the gradient of ``sum(output)``).
    A node the output does not depend on gets zeros.
    """
    graph = Graph(output)
    single = isinstance(wrt, (Node, str)) or not hasattr(wrt, "__iter__")   # one node (or a mistake)
    wrt = [graph.node(w) for w in ([wrt] if single else wrt)]     # nodes, or their names
    plan = graph.plan(wrt)
    grads = {plan.output: ones_like(output) if seed is None else seed_for(seed, output)}
    for node, wanted in plan.steps:
        g = grads.get(node)
        if g is None or all(gi is None for gi in (g if isinstance(g, tuple) else (g,))):
            continue
        for k in wanted:
            gi = _vjp(node, k)(g, node, *node.inputs, **node.attrs)
            parent = node.inputs[k]
            if gi is not None:
                grads[parent] = _add(grads.get(parent), gi)
    result = [grads.get(w) if grads.get(w) is not None else zeros_like(w) for w in plan.graded]
    named = {}
    for w, g in zip(plan.graded, result):
        if g.op is not None and g.name.startswith(g.op.name + "_") and g not in named.values():
            g.name = named[w] = auto_name(f"d{plan.output.name}/d{w.name}")
    by_node = dict(zip(plan.graded, result))
    return by_node[wrt[0]] if single else [by_node[w] for w in wrt]
