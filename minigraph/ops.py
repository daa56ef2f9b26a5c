"""The op table: each op is a forward function plus one vector-Jacobian product (VJP) per input.

A VJP answers: "if the output's gradient is ``g``, what is the gradient of this input?" It is
called as ``vjp(g, ans, *inputs, **attrs)`` where ``ans`` is the op's output, and returns an
array with the input's shape (or ``None``: no gradient flows to that input). The engine hands
every function here numpy arrays (or numpy scalars), so ``x.shape`` and ``x.size`` always work.
Reading down this file is reading the local derivatives of deep learning, one or two lines each.

Each row holds the rest of its op's maths too (``opdef.py`` says what a row may declare):
``graph=``, the same VJPs written with ops, for ``mg.grad`` (a node ``g`` in, a node out; the
ops they use beside the table's, ``sum_to``, ``step``, ..., are in ``gradops.py``); ``out=``, the
forward writing into an array it is given, for ``mg.function``'s memory plan. A gradient that
takes several ops has a *fused gradient* op, defined just above its row, whose forward calls
the row's own VJP (the interpreter's numbers, bit for bit) and whose ``expansion`` is the same
maths written with ops (what ``mg.grad`` differentiates to go through it). For GELU, softmax
and layer norm the graph VJP is the fused op itself (``gelu_grad``, ...); tanh's, sigmoid's,
relu's and cross-entropy's graph VJPs are small formulas you can draw and read, and their rows
declare the fused op that may replace them (``fusions=``: ``mg.function`` does, see
``compiler/rewrites.py``).

Broadcasting (``x + b`` with ``x`` of shape (n, 3) and ``b`` of shape (3,)) copies ``b`` along
an axis, so its gradient is summed back along it: ``unbroadcast`` (``sum_to`` in a graph). A
rule longer than a line is in ``kernels.py`` (the fused losses' in ``losses.py``); ``defop`` is
in ``opdef.py``. The rows for sum and max are named ``sum_`` and ``max_`` so that Python's own
sum and max keep their names here; ``ops.sum``, ``ops.max`` (and ``mg.sum``, ``mg.max``) are
those rows.
"""

import functools

import numpy as np

from . import gradops, kernels, losses
from .dtypes import float_dtype
from .errors import BadValueError
from .graph import Constant, Node, Op
from .kernels import unbroadcast
from .opdef import OUTPUT, Fusion, defop, defvjp

# -- the table ------------------------------------------------------------------------------
#                forward                                 VJP for each input: g -> gradient
add = defop("add", np.add,
            [lambda g, ans, x, y: unbroadcast(g, x.shape),
             lambda g, ans, x, y: unbroadcast(g, y.shape)], "+",
            graph=[lambda g, ans, x, y: gradops.sum_to(g, x),
                   lambda g, ans, x, y: gradops.sum_to(g, y)], out=np.add)
sub = defop("sub", np.subtract,
            [lambda g, ans, x, y: unbroadcast(g, x.shape),
             lambda g, ans, x, y: unbroadcast(-g, y.shape)], "−",
            graph=[lambda g, ans, x, y: gradops.sum_to(g, x),
                   lambda g, ans, x, y: gradops.sum_to(-g, y)], out=np.subtract)
mul = defop("mul", np.multiply,
            [lambda g, ans, x, y: unbroadcast(g * y, x.shape),
             lambda g, ans, x, y: unbroadcast(g * x, y.shape)], "×",
            graph=[lambda g, ans, x, y: gradops.sum_to(g * y, x),
                   lambda g, ans, x, y: gradops.sum_to(g * x, y)],
            out=np.multiply)
div = defop("div", np.divide,
            [lambda g, ans, x, y: unbroadcast(g / y, x.shape),
             lambda g, ans, x, y: unbroadcast(-g * x / y ** 2, y.shape)], "÷",
            graph=[lambda g, ans, x, y: gradops.sum_to(g / y, x),
                   lambda g, ans, x, y: gradops.sum_to(-g * x / (y * y), y)],
            out=np.divide)


def _power_x(g, ans, x, y):
    """x ** y as a graph: the gradient of x is g·y·x^(y-1), and 0 at 0 ** 0 (as the numeric VJP).

    At 0 ** 0 alone, y·x^(y-1) would be 0·inf: there the base becomes 1 and the product is
    multiplied by 0 (``both_zero`` is a mask: it adds no gradient of its own). Everywhere else
    this is y·x^(y-1) itself, so its own derivative with respect to y is right also at y = 0:
    x^(y-1)·(1 + y·ln x) = 1/x (a mask on y alone, turning x^(y-1) into x^0 or x, would not be).
    """
    both_zero = gradops.is_zero(x) * gradops.is_zero(y)
    return gradops.sum_to(g * y * (x + both_zero) ** (y - 1) * (1 - both_zero), x)


def _power_y(g, ans, x, y):
    """x ** y as a graph: the gradient of y is g·x^y·ln x, and 0 where x is 0 (the limit from x > 0).

    At x = 0, ln is taken of 1 and the result multiplied by 0, so that this gradient's own
    derivative with respect to x is 0 there too (as the other mixed derivative, from ``_power_x``),
    not x^y/1 = 1 at 0 ** 0.
    """
    return gradops.sum_to(g * ans * log(x + gradops.is_zero(x)) * (1 - gradops.is_zero(x)), y)


power = defop("pow", np.power,     # x's gradient is 0 where y is 0, y's where x is 0 (as in PyTorch)
              [lambda g, ans, x, y: unbroadcast(g * y * x ** np.where(y == 0, 1, y - 1), x.shape),
               lambda g, ans, x, y: unbroadcast(g * ans * np.log(np.where(x == 0, 1, x)), y.shape)], "^",
              graph=[_power_x, _power_y], out=np.power)
neg = defop("neg", np.negative, [lambda g, ans, x: -g], "−", graph=[lambda g, ans, x: -g], out=np.negative)

# a + x @ y in one op (the product written where the sum goes): matmul's row declares it, and
# mg.function puts it in place of add(a, matmul(x, y)) (compiler/rewrites.py)
matmul_add = defop("matmul_add", lambda a, x, y: a + kernels.matmul(x, y), None, "a+x@y",
                   out=kernels.matmul_accumulate_into, expansion=lambda a, x, y: a + x @ y)


def _matmul_x(g, ans, x, y):
    """x @ y as a graph: the gradient of x is g @ yᵀ (vectors viewed as 1-row / 1-column matrices;
    for stacks of matrices, each matrix's, summed over the stack axes x was broadcast along)."""
    yT = gradops.matrix_transpose(gradops.as_matrix(y, "right"))
    return gradops.to_operand(gradops.product_matrix(g, x, y) @ yT, x, side="left")


def _matmul_y(g, ans, x, y):
    """x @ y as a graph: the gradient of y is xᵀ @ g (for a stack of rows times one matrix, one
    product of x's and g's rows as two tall matrices, as the numeric VJP computes it)."""
    xT = gradops.matrix_transpose(gradops.left_matrix(x, y))
    return gradops.to_operand(xT @ gradops.product_matrix(g, x, y), y, side="right")


matmul = defop("matmul", kernels.matmul, [kernels.matmul_vjp_x, kernels.matmul_vjp_y], "@",
               graph=[_matmul_x, _matmul_y], out=kernels.matmul_into, fusions={"accumulate": matmul_add})

exp = defop("exp", np.exp, [lambda g, ans, x: g * ans], "exp", graph=[lambda g, ans, x: g * ans], out=np.exp)
log = defop("log", np.log, [lambda g, ans, x: g / x], "log", graph=[lambda g, ans, x: g / x], out=np.log)


def _tanh_grad_ops(g, t):
    return g * (1 - t * t)


def _sigmoid_grad_ops(g, s):
    return g * s * (1 - s)


def _relu_grad_ops(g, x):
    return g * gradops.step(x)


# tanh's, sigmoid's and relu's gradients, each one op (mg.function puts it in place of the
# graph their rows' graph VJPs build, and its forward is the row's VJP)
tanh_grad = defop("tanh_grad", lambda g, t: tanh.opdef.vjps[0](g, t, None), None, "g·(1−t²)",
                  out=kernels.tanh_gradient_into, expansion=_tanh_grad_ops)
sigmoid_grad = defop("sigmoid_grad", lambda g, s: sigmoid.opdef.vjps[0](g, s, None), None, "g·s·(1−s)",
                     out=kernels.sigmoid_gradient_into, expansion=_sigmoid_grad_ops)
relu_grad = defop("relu_grad", lambda g, x: relu.opdef.vjps[0](g, None, x), None, "g·[x>0]",
                  out=kernels.relu_gradient_into, expansion=_relu_grad_ops)
tanh = defop("tanh", np.tanh, [lambda g, ans, x: g * (1 - ans ** 2)], "tanh",
             graph=[lambda g, ans, x: _tanh_grad_ops(g, ans)], out=np.tanh,
             fusions={0: Fusion(tanh_grad, ("g", "ans"))})
sigmoid = defop("sigmoid", kernels.sigmoid, [lambda g, ans, x: g * ans * (1 - ans)], "σ",
                graph=[lambda g, ans, x: _sigmoid_grad_ops(g, ans)], out=kernels.sigmoid_into,
                fusions={0: Fusion(sigmoid_grad, ("g", "ans"))})
relu = defop("relu", lambda x: np.maximum(x, 0), [lambda g, ans, x: g * (x > 0)], "relu",
             graph=[lambda g, ans, x: _relu_grad_ops(g, x)], out=kernels.relu_into,
             fusions={0: Fusion(relu_grad, ("g", 0))})
leaky_relu = defop("leaky_relu", lambda x, slope=0.01: np.where(x > 0, x, slope * x),
                   [lambda g, ans, x, slope=0.01: np.where(x > 0, g, slope * g)], "lrelu",
                   graph=[lambda g, ans, x, slope=0.01: g * gradops.leaky_slope(x, slope=slope)])

sum_ = defop("sum", np.sum,
             [lambda g, ans, x, axis=None, keepdims=False: kernels.sum_back(g, x, axis, keepdims)], "Σ",
             graph=[lambda g, ans, x, axis=None, keepdims=False:
                    gradops.broadcast_like(gradops.spread(g, axis, keepdims), x)],
             out=kernels.sum_into)
mean = defop("mean", np.mean,
             [lambda g, ans, x, axis=None, keepdims=False:
              kernels.sum_back(g, x, axis, keepdims) * (ans.size / x.size)], "mean",
             graph=[lambda g, ans, x, axis=None, keepdims=False:
                    gradops.broadcast_like(gradops.spread(g, axis, keepdims), x) * gradops.size_ratio(ans, x)])
max_ = defop("max", np.max, [kernels.max_vjp], "max",
             graph=[lambda g, ans, x, axis=None, keepdims=False:
                    gradops.broadcast_like(gradops.spread(g, axis, keepdims), x) * gradops.max_share(x, axis=axis)])

reshape = defop("reshape", lambda x, shape: np.reshape(x, shape),
                [lambda g, ans, x, shape: np.reshape(g, x.shape)], "reshape",
                graph=[lambda g, ans, x, shape: gradops.reshape_like(g, x)])
transpose = defop("transpose", lambda x, axes=None: np.transpose(x, axes),     # undo the permutation
                  [lambda g, ans, x, axes=None:
                   np.transpose(g, None if axes is None else np.argsort(np.mod(axes, x.ndim)))], "ᵀ",
                  graph=[lambda g, ans, x, axes=None: transpose(
                      g, None if axes is None else tuple(int(i) for i in np.argsort(np.mod(axes, len(axes)))))])
getitem = defop("getitem", lambda x, index: x[index],
                [lambda g, ans, x, index: kernels.scatter_add(g, index, x.shape, np.result_type(g))],
                "[ ]", graph=[lambda g, ans, x, index: gradops.scatter(g, x, index=index)])

softmax_grad = defop("softmax_grad", lambda g, s, axis=-1: softmax.opdef.vjps[0](g, s, None, axis=axis),
                     None, "dsoftmax",
                     expansion=lambda g, s, axis=-1: s * (g - sum_(g * s, axis=axis, keepdims=True)),
                     out=kernels.softmax_gradient)
softmax = defop("softmax", kernels.softmax,            # ans is 0 where a mask forbids: so is g there
                [lambda g, ans, x, axis=-1, mask=None: kernels.softmax_gradient(g, ans, axis=axis)],
                "softmax", graph=[lambda g, ans, x, axis=-1, mask=None: softmax_grad(g, ans, axis=axis)],
                out=kernels.softmax)
log_softmax = defop("log_softmax", kernels.log_softmax,
                    [lambda g, ans, x, axis=-1: g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)],
                    "log_softmax",
                    graph=[lambda g, ans, x, axis=-1: g - exp(ans) * sum_(g, axis=axis, keepdims=True)])

# -- the pieces of a transformer (chapters 10 and 11) -----------------------------------------


def _gelu_slope(x, t=None):
    """gelu'(x) written with ops (the same formula as kernels.gelu_slope), t its tanh."""
    t = tanh(kernels.GELU_C * (x + 0.044715 * x * x * x)) if t is None else t
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kernels.GELU_C * (1 + 3 * 0.044715 * x * x)


def _gelu_tanh_slope(x, t):
    """d/dx of t = tanh(√(2/π) (x + 0.044715 x³)), given t (with arrays or with nodes)."""
    return (1 - t * t) * kernels.GELU_C * (1 + 3 * 0.044715 * x * x)


gelu_grad = defop("gelu_grad", lambda g, x: gelu.opdef.vjps[0](g, None, x), None, "dgelu",
                  expansion=lambda g, x: g * _gelu_slope(x), out=kernels.gelu_gradient)
# GELU in two steps, t = gelu_tanh(x) and 0.5 x (1 + t), and its gradient from that t: the same
# numbers as gelu and gelu_grad. mg.function computes t once, for both (the fusions of gelu's row).
# (their VJPs hold for arrays and for nodes alike: one list is both the numeric and the graph VJPs)
_GELU_TANH_VJPS = [lambda g, ans, x: g * _gelu_tanh_slope(x, ans)]
_GELU_OF_TANH_VJPS = [lambda g, ans, x, t: g * (0.5 * (1 + t)), lambda g, ans, x, t: g * (0.5 * x)]
gelu_tanh = defop("gelu_tanh", kernels.gelu_tanh, _GELU_TANH_VJPS, "tanh(gelu)", graph=_GELU_TANH_VJPS,
                  out=kernels.gelu_tanh)
gelu_of_tanh = defop("gelu_of_tanh", kernels.gelu_from_tanh, _GELU_OF_TANH_VJPS, "gelu", graph=_GELU_OF_TANH_VJPS,
                     out=kernels.gelu_from_tanh)
gelu_grad_of_tanh = defop("gelu_grad_of_tanh", kernels.gelu_gradient_from_tanh, None, "dgelu",
                          expansion=lambda g, x, t: g * _gelu_slope(x, t), out=kernels.gelu_gradient_from_tanh)
gelu = defop("gelu", kernels.gelu, [lambda g, ans, x: kernels.gelu_gradient(g, x)], "gelu",
             graph=[lambda g, ans, x: gelu_grad(g, x)], out=kernels.gelu,
             fusions={"tanh": gelu_tanh, "from_tanh": gelu_of_tanh, "grad_from_tanh": gelu_grad_of_tanh})

# the gradient of embedding(table, ids) for the table, as an op; its own gradient picks rows again
embedding_grad = defop("embedding_grad", lambda g, table, ids: kernels.embedding_vjp_table(g, table, ids),
                       [lambda h, ans, g, table, ids: kernels.embedding(h, ids),
                        lambda h, ans, g, table, ids: np.zeros(np.shape(table), float_dtype(h)),
                        lambda h, ans, g, table, ids: np.zeros(np.shape(ids), float_dtype(h))], "scatter",
                       graph=[lambda h, ans, g, table, ids: embedding(h, ids), None, None])
_embedding = defop("embedding", kernels.embedding,    # integer ids take no gradient: zeros
                   [lambda g, ans, table, ids: kernels.embedding_vjp_table(g, table, ids),
                    lambda g, ans, table, ids: np.zeros(np.shape(ids), np.result_type(g))], "embed",
                   graph=[lambda g, ans, table, ids: embedding_grad(g, table, ids), None],
                   out=kernels.embedding_into)


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
               "linear",
               graph=[lambda g, ans, x, W, b: _matmul_x(gradops.sum_to_product(g, x, W), None, x, W),
                      lambda g, ans, x, W, b: _matmul_y(gradops.sum_to_product(g, x, W), None, x, W),
                      lambda g, ans, x, W, b: gradops.sum_to(g, b)], out=kernels.linear_into)
mse = defop("mse", losses.mse,
            [lambda g, ans, p, t: g * 2 * (p - t) / p.size,
             lambda g, ans, p, t: g * 2 * (t - p) / p.size], "MSE",
            graph=[lambda g, ans, p, t: g * 2 * (p - t) / gradops.size(p),
                   lambda g, ans, p, t: g * 2 * (t - p) / gradops.size(p)])
bce_with_logits = defop("bce_with_logits", losses.bce_with_logits,
                        [lambda g, ans, z, y: g * (kernels.sigmoid(z) - y) / z.size,
                         lambda g, ans, z, y: -g * z / z.size], "BCE",
                        graph=[lambda g, ans, z, y: g * (sigmoid(z) - y) / gradops.size(z),
                               lambda g, ans, z, y: -g * z / gradops.size(z)])


def _is_integer(node):
    """Integer labels (class indices, or integer one-hot) take no gradient."""
    if node.value is not None:
        return np.asarray(node.value).dtype.kind in "biu"
    return node.kind == "input" and np.dtype(node.dtype).kind in "biu"


def _cross_entropy_logits(g, ans, logits, labels):
    """softmax · (total label mass) - targets, per example, times g; the softmax as exp(log-softmax),
    each number rounded as the loss's numeric VJP rounds it."""
    t = gradops.targets(labels, logits) if _is_integer(labels) else labels
    p = exp(log_softmax(logits, axis=-1)) * sum_(t, axis=-1, keepdims=True)
    return (p - t) / gradops.examples(logits) * g


def _cross_entropy_labels(g, ans, logits, labels):
    return None if _is_integer(labels) else -g * log_softmax(logits, axis=-1) / gradops.examples(logits)


def _one_hot_rows(z, y):
    """Where the fused gradient of cross-entropy gives the graph's numbers: (n, C) logits and n
    integer labels."""
    return z.ndim == 2 and y.dtype.kind in "iu" and y.shape == z.shape[:1]


# the gradient of the loss (g = 1) for the logits, in one op; mg.function puts it in place of
# the graph above for class labels
softmax_ce_grad = defop("softmax_ce_grad", lambda z, y: losses.softmax_ce_vjp_logits(1, None, z, y),
                        None, "dCE", expansion=lambda z, y: _cross_entropy_logits(1, None, z, y))
softmax_cross_entropy = defop("softmax_cross_entropy", losses.softmax_ce,
                              [losses.softmax_ce_vjp_logits, losses.softmax_ce_vjp_labels], "CE",
                              graph=[_cross_entropy_logits, _cross_entropy_labels],
                              fusions={0: Fusion(softmax_ce_grad, (0, 1), _one_hot_rows, unit_gradient=True)})


def _normalized(x, eps):
    """layer_norm's x̂ = (x - mean) / sqrt(variance + eps) over the last axis, and 1 / sqrt(...),
    written with ops."""
    centered = x - mean(x, axis=-1, keepdims=True)
    inv_std = (mean(centered * centered, axis=-1, keepdims=True) + eps) ** -0.5
    return centered * inv_std, inv_std


def _layer_norm_x(g, x, gamma, eps=1e-5):
    """(h - mean(h) - x̂ · mean(h · x̂)) / std, with h = g · gamma (as kernels.layer_norm_vjp_x)."""
    x_hat, inv_std = _normalized(x, eps)
    h = g * gamma
    return inv_std * (h - mean(h, axis=-1, keepdims=True) - x_hat * mean(h * x_hat, axis=-1, keepdims=True))


def _layer_norm_x_from(g, centered, scale, gamma):
    """The gradient of x above from x's centered rows and their scale, written with ops."""
    h = g * gamma
    return (scale * (h - mean(h, axis=-1, keepdims=True))
            - centered * (scale * scale * scale) * mean(h * centered, axis=-1, keepdims=True))


# Layer norm's first steps as ops, and its two gradients from them: the same numbers as
# layer_norm_grad_x and layer_norm_grad_gamma, which compute the centering and scale again each.
# mg.function computes them once, for the value and both gradients (the fusions of
# layer_norm_grad_x's row; the value is then c · s · γ + β).
layer_norm_centered = defop("layer_norm_centered", kernels.layer_norm_centered,
                            [lambda g, ans, x: g - kernels.row_means(g)], "x-μ",
                            graph=[lambda g, ans, x: g - mean(g, axis=-1, keepdims=True)],
                            out=kernels.layer_norm_centered)
layer_norm_scale = defop("layer_norm_scale", kernels.layer_norm_scale,
                         [lambda g, ans, c, eps=1e-5: -(g * ans ** 3) * c / np.shape(c)[-1]], "1/σ",
                         graph=[lambda g, ans, c, eps=1e-5: -(g * (ans * ans * ans)) * c * gradops.size_ratio(ans, c)])
layer_norm_grad_x_from = defop(
    "layer_norm_grad_x_from", lambda g, c, s, gamma: kernels.layer_norm_grad_x_from(g, c, s, gamma), None,
    "dLN/dx", expansion=_layer_norm_x_from,
    out=lambda g, c, s, gamma, out=None: kernels.layer_norm_grad_x_from(g, c, s, gamma, out))
layer_norm_grad_gamma_from = defop(
    "layer_norm_grad_gamma_from", lambda g, c, s, gamma: kernels.layer_norm_grad_gamma_from(g, c, s, gamma),
    None, "dLN/dγ", expansion=lambda g, c, s, gamma: gradops.sum_to(g * c * s, gamma))

# layer norm's gradients, one op each: the numeric VJPs of kernels.py, expanded with ops above
layer_norm_grad_x = defop(
    "layer_norm_grad_x", lambda g, x, gamma, eps=1e-5: kernels.layer_norm_vjp_x(g, None, x, gamma, None, eps),
    None, "dLN/dx", expansion=_layer_norm_x,
    out=lambda g, x, gamma, eps=1e-5, out=None: kernels.layer_norm_vjp_x(g, None, x, gamma, None, eps, out),
    fusions={"centered": layer_norm_centered, "scale": layer_norm_scale,
             "x_from_centered": layer_norm_grad_x_from, "gamma_from_centered": layer_norm_grad_gamma_from})
layer_norm_grad_gamma = defop(
    "layer_norm_grad_gamma",
    lambda g, x, gamma, eps=1e-5: kernels.layer_norm_vjp_gamma(g, None, x, gamma, None, eps), None, "dLN/dγ",
    expansion=lambda g, x, gamma, eps=1e-5: gradops.sum_to(g * _normalized(x, eps)[0], gamma))
layer_norm_grad_beta = defop(
    "layer_norm_grad_beta", lambda g, x, beta: kernels.layer_norm_vjp_beta(g, None, x, None, beta), None,
    "dLN/dβ", expansion=lambda g, x, beta: gradops.sum_to(g, beta))
layer_norm_shifted = defop("layer_norm", kernels.layer_norm,
                           [kernels.layer_norm_vjp_x, kernels.layer_norm_vjp_gamma,
                            kernels.layer_norm_vjp_beta], "LN",
                           graph=[lambda g, ans, x, gamma, beta, eps=1e-5: layer_norm_grad_x(g, x, gamma, eps=eps),
                                  lambda g, ans, x, gamma, beta, eps=1e-5:
                                  layer_norm_grad_gamma(g, x, gamma, eps=eps),
                                  lambda g, ans, x, gamma, beta, eps=1e-5: layer_norm_grad_beta(g, x, beta)])
layer_norm_scaled = defop("layer_norm", lambda x, gamma, eps=1e-5: kernels.layer_norm(x, gamma, None, eps),
                          [kernels.layer_norm_vjp_x, kernels.layer_norm_vjp_gamma], "LN",
                          graph=[lambda g, ans, x, gamma, eps=1e-5: layer_norm_grad_x(g, x, gamma, eps=eps),
                                 lambda g, ans, x, gamma, eps=1e-5: layer_norm_grad_gamma(g, x, gamma, eps=eps)])


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


def _split(g, ans, x, n, axis=-1):
    """split as a graph: join the parts' gradients again; a part nobody used contributes zeros."""
    return concatenate([gi if gi is not None else gradops.zeros_like(Op(OUTPUT, [ans], {"index": i}))
                        for i, gi in enumerate(g)], axis=axis)


defvjp("split", _split)            # (by name: every row of split, whatever its n)


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
                 symbol="concat", out=kernels.concatenate_into,
                 graph=[lambda g, ans, *xs, axis=0, i=i: concat_part(k)(g, *xs, axis=axis, i=i) for i in range(k)])


@functools.cache
def concat_part(k):
    """Input i of a k-way concatenation: its slice of the gradient (one op per k); its own
    gradient is that slice put back among zeros."""
    def part(g, *xs, axis=0, i=0):
        return kernels.concat_slice(g, xs, i, axis)

    def pad(h, ans, g, *xs, axis=0, i=0):
        return np.concatenate([h if j == i else np.zeros(np.shape(x), float_dtype(h))
                               for j, x in enumerate(xs)], axis)

    zeros = [lambda h, ans, *args, k=k, **attrs: np.zeros(np.shape(args[k]), float_dtype(h))
             for k in range(1, k + 1)]
    return defop("concat_part", part, [pad] + zeros, "slice",
                 graph=[lambda h, ans, g, *xs, axis=0, i=0: concatenate(
                     [h if j == i else gradops.zeros_like(x) for j, x in enumerate(xs)], axis=axis)] + [None] * k)


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
