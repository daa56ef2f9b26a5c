"""The op table: each op is a forward function plus one vector-Jacobian product (VJP) per input.

A VJP answers: "if the output's gradient is ``g``, what is the gradient of this input?" It is
called as ``vjp(g, ans, *inputs, **attrs)`` where ``ans`` is the op's output, and returns an
array with the input's shape (or ``None``: no gradient flows to that input). The engine hands
every function here numpy arrays (or numpy scalars), so ``x.shape`` and ``x.size`` always work.
Reading down this file is reading the local derivatives of deep learning, one or two lines each.

Broadcasting (``x + b`` with ``x`` of shape (n, 3) and ``b`` of shape (3,)) copies ``b`` along
an axis, so its gradient is summed back along it: ``unbroadcast``. A rule longer than a line is
in ``kernels.py`` (the fused losses' in ``losses.py``); ``defop`` is in ``opdef.py``. The rows
for sum and max are named ``sum_`` and ``max_`` so that Python's own sum and max keep their
names here; ``ops.sum``, ``ops.max`` (and ``mg.sum``, ``mg.max``) are those rows.
"""

import functools

import numpy as np

from . import kernels, losses
from .errors import BadValueError
from .graph import Constant, Node
from .kernels import unbroadcast
from .opdef import defop

# -- the table ------------------------------------------------------------------------------
#                forward                                 VJP for each input: g -> gradient
add = defop("add", np.add,
            [lambda g, ans, x, y: unbroadcast(g, x.shape),
             lambda g, ans, x, y: unbroadcast(g, y.shape)], "+")
sub = defop("sub", np.subtract,
            [lambda g, ans, x, y: unbroadcast(g, x.shape),
             lambda g, ans, x, y: unbroadcast(-g, y.shape)], "−")
mul = defop("mul", np.multiply,
            [lambda g, ans, x, y: unbroadcast(g * y, x.shape),
             lambda g, ans, x, y: unbroadcast(g * x, y.shape)], "×")
div = defop("div", np.divide,
            [lambda g, ans, x, y: unbroadcast(g / y, x.shape),
             lambda g, ans, x, y: unbroadcast(-g * x / y ** 2, y.shape)], "÷")
power = defop("pow", np.power,     # x's gradient is 0 where y is 0, y's where x is 0 (as in PyTorch)
              [lambda g, ans, x, y: unbroadcast(g * y * x ** np.where(y == 0, 1, y - 1), x.shape),
               lambda g, ans, x, y: unbroadcast(g * ans * np.log(np.where(x == 0, 1, x)), y.shape)], "^")
neg = defop("neg", np.negative, [lambda g, ans, x: -g], "−")
matmul = defop("matmul", kernels.matmul, [kernels.matmul_vjp_x, kernels.matmul_vjp_y], "@")

exp = defop("exp", np.exp, [lambda g, ans, x: g * ans], "exp")
log = defop("log", np.log, [lambda g, ans, x: g / x], "log")
tanh = defop("tanh", np.tanh, [lambda g, ans, x: g * (1 - ans ** 2)], "tanh")
sigmoid = defop("sigmoid", kernels.sigmoid, [lambda g, ans, x: g * ans * (1 - ans)], "σ")
relu = defop("relu", lambda x: np.maximum(x, 0), [lambda g, ans, x: g * (x > 0)], "relu")
leaky_relu = defop("leaky_relu", lambda x, slope=0.01: np.where(x > 0, x, slope * x),
                   [lambda g, ans, x, slope=0.01: np.where(x > 0, g, slope * g)], "lrelu")

sum_ = defop("sum", np.sum,
             [lambda g, ans, x, axis=None, keepdims=False: kernels.sum_back(g, x, axis, keepdims)], "Σ")
mean = defop("mean", np.mean,
             [lambda g, ans, x, axis=None, keepdims=False:
              kernels.sum_back(g, x, axis, keepdims) * (ans.size / x.size)], "mean")
max_ = defop("max", np.max, [kernels.max_vjp], "max")

reshape = defop("reshape", lambda x, shape: np.reshape(x, shape),
                [lambda g, ans, x, shape: np.reshape(g, x.shape)], "reshape")
transpose = defop("transpose", lambda x, axes=None: np.transpose(x, axes),     # undo the permutation
                  [lambda g, ans, x, axes=None:
                   np.transpose(g, None if axes is None else np.argsort(np.mod(axes, x.ndim)))], "ᵀ")
getitem = defop("getitem", lambda x, index: x[index],
                [lambda g, ans, x, index: kernels.scatter_add(g, index, x.shape, np.result_type(g))],
                "[ ]")

softmax = defop("softmax", kernels.softmax,            # ans is 0 where a mask forbids: so is g there
                [lambda g, ans, x, axis=-1, mask=None: ans * (g - np.sum(g * ans, axis=axis, keepdims=True))],
                "softmax")
log_softmax = defop("log_softmax", kernels.log_softmax,
                    [lambda g, ans, x, axis=-1: g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)],
                    "log_softmax")

# -- the pieces of a transformer (chapters 10 and 11) -----------------------------------------
gelu = defop("gelu", kernels.gelu, [lambda g, ans, x: g * kernels.gelu_slope(x)], "gelu")
_embedding = defop("embedding", kernels.embedding,    # integer ids take no gradient: zeros
                   [lambda g, ans, table, ids: kernels.embedding_vjp_table(g, table, ids),
                    lambda g, ans, table, ids: np.zeros(np.shape(ids), np.result_type(g))], "embed")


def embedding(table, ids, name=None):
    """The rows of ``table`` (V, C) at the integer ``ids``: ids.shape + (C,). ``ids`` may be a
    node, an integer array or a lone Python int (made a Constant that stays an integer, not a
    number that takes the table's float dtype)."""
    return _embedding(table, ids if isinstance(ids, Node) else Constant(np.asarray(ids)), name=name)


embedding.opdef = _embedding.opdef
causal_mask = kernels.causal_mask

# fused ops: one node instead of several, for speed and numerical stability
linear = defop("linear", kernels.linear,
               [kernels.linear_vjp_x, kernels.linear_vjp_W, lambda g, ans, x, W, b: unbroadcast(g, b.shape)],
               "linear")
mse = defop("mse", losses.mse,
            [lambda g, ans, p, t: g * 2 * (p - t) / p.size,
             lambda g, ans, p, t: g * 2 * (t - p) / p.size], "MSE")
bce_with_logits = defop("bce_with_logits", losses.bce_with_logits,
                        [lambda g, ans, z, y: g * (kernels.sigmoid(z) - y) / z.size,
                         lambda g, ans, z, y: -g * z / z.size], "BCE")
softmax_cross_entropy = defop("softmax_cross_entropy", losses.softmax_ce,
                              [losses.softmax_ce_vjp_logits, losses.softmax_ce_vjp_labels], "CE")
layer_norm_shifted = defop("layer_norm", kernels.layer_norm,
                          [kernels.layer_norm_vjp_x, kernels.layer_norm_vjp_gamma,
                           kernels.layer_norm_vjp_beta], "LN")
layer_norm_scaled = defop("layer_norm", lambda x, gamma, eps=1e-5: kernels.layer_norm(x, gamma, None, eps),
                          [kernels.layer_norm_vjp_x, kernels.layer_norm_vjp_gamma], "LN")


def layer_norm(x, gamma, beta=None, eps=1e-5, name=None):
    """Normalize ``x`` over its last axis (mean 0, variance 1, as ``torch.nn.LayerNorm``), then
    ``* gamma + beta``; one fused op, ``layer_norm_shifted``, or without a ``beta``
    (``beta=None``, as nanoGPT's ``bias=False``) ``layer_norm_scaled``."""
    if beta is None:
        return layer_norm_scaled(x, gamma, eps=eps, name=name)
    return layer_norm_shifted(x, gamma, beta, eps=eps, name=name)


# -- ops with a row per size: split into n parts, concatenate k nodes ------------------------

def split(x, n, axis=-1, name=None):
    """Cut ``x`` into ``n`` equal parts along ``axis``: a multi-output op, one node per part."""
    return _split_op(n)(x, n=n, axis=axis, name=name)


@functools.cache
def _split_op(n):
    return defop("split", lambda x, n, axis=-1: tuple(np.split(x, n, axis=axis)),
                 [lambda g, ans, x, n, axis=-1: np.concatenate(g, axis=axis)], "split", n_outputs=n)


def concatenate(nodes, axis=0, name=None):
    """Join nodes along an existing axis."""
    if isinstance(nodes, Node) or not isinstance(nodes, (list, tuple)) or not nodes:
        raise BadValueError(f"mg.concatenate takes a non-empty list of nodes, e.g. "
                            f"mg.concatenate([a, b], axis=0); got {str(nodes)[:40]!r}.")
    return _concat_op(len(nodes))(*nodes, axis=axis, name=name)


@functools.cache
def _concat_op(k):
    """Concatenation of k nodes (one table row per k, so each input has its own VJP: its slice)."""
    return defop("concatenate", lambda *xs, axis=0: np.concatenate(xs, axis=axis),
                 [lambda g, ans, *xs, axis=0, i=i: kernels.concat_slice(g, xs, i, axis) for i in range(k)],
                 symbol="concat")


def __getattr__(name):
    """``ops.sum`` and ``ops.max`` (so also ``from minigraph.ops import sum``): the rows ``sum_``
    and ``max_``, which keep an underscore here so as not to hide Python's sum and max."""
    if name in ("sum", "max"):
        return globals()[name + "_"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- operator overloading: ``x + y`` builds add(x, y), and so on ---------------------------
Node.__add__ = lambda a, b: add(a, b)
Node.__radd__ = lambda a, b: add(b, a)
Node.__sub__ = lambda a, b: sub(a, b)
Node.__rsub__ = lambda a, b: sub(b, a)
Node.__mul__ = lambda a, b: mul(a, b)
Node.__rmul__ = lambda a, b: mul(b, a)
Node.__truediv__ = lambda a, b: div(a, b)
Node.__rtruediv__ = lambda a, b: div(b, a)
Node.__pow__ = lambda a, b: power(a, b)
Node.__rpow__ = lambda a, b: power(b, a)
Node.__matmul__ = lambda a, b: matmul(a, b)
Node.__rmatmul__ = lambda a, b: matmul(b, a)
Node.__neg__ = lambda a: neg(a)
Node.__getitem__ = lambda a, index: getitem(a, index=index)
Node.T = property(lambda a: transpose(a))
