"""The op table: each op is a forward function plus one vector-Jacobian product (VJP) per input.

A VJP answers: "if the output's gradient is ``g``, what is the gradient of this input?" It is
called as ``vjp(g, ans, *inputs, **attrs)`` where ``ans`` is the op's output, and returns an
array with the input's shape (or ``None``: no gradient flows to that input). The engine hands
every function here numpy arrays (or numpy scalars), so ``x.shape`` and ``x.size`` always work.
Reading down this file is reading the local derivatives of deep learning, one or two lines each.

Broadcasting (``x + b`` with ``x`` of shape (n, 3) and ``b`` of shape (3,)) copies ``b`` along
an axis in the forward pass, so its gradient must be *summed* along that axis in the backward
pass. ``unbroadcast`` does that in one place for every op.
"""

import functools
import inspect
import math

import numpy as np

from .errors import BadValueError, ShapeError
from .graph import Node, Op, as_node


class OpDef:
    """One row of the op table."""

    def __init__(self, name, forward, vjps, symbol=None, n_outputs=1):
        self.name, self.forward, self.vjps = name, forward, tuple(vjps)
        self.symbol, self.n_outputs = symbol or name, n_outputs

    def __repr__(self):
        return f"OpDef('{self.name}')"


def defop(name, forward, vjps, symbol=None, n_outputs=1):
    """Add an op to the table; returns the function that builds its nodes.

    >>> square = defop("square", lambda x: x * x, [lambda g, ans, x: 2 * x * g], symbol="x²")
    >>> y = square(x)                     # an Op node
    An op with ``n_outputs > 1`` returns a tuple of arrays from ``forward`` and receives a tuple
    of gradients in its VJPs; building it gives one node per output. Arguments after the inputs
    (one per VJP) are attributes, not nodes: ``sum(x, 0)`` means ``sum(x, axis=0)``.
    """
    if not callable(forward) or callable(vjps) or not all(callable(v) for v in vjps):
        raise BadValueError(f"defop('{name}', forward, vjps): forward is a function and vjps a list "
                            f"of functions, one per input (even for one input: [vjp]).")
    opdef = OpDef(name, forward, vjps, symbol, n_outputs)
    n_inputs = len(opdef.vjps)

    def build(*args, name=None, **attrs):
        inputs, extra = args[:n_inputs], args[n_inputs:]
        if extra:
            attrs.update(_positional_attributes(opdef, extra))
        _check_attributes(opdef, attrs)
        nodes = [as_node(x, f"input {i + 1} of mg.{opdef.name}") for i, x in enumerate(inputs)]
        node = Op(opdef, nodes, attrs, name)
        if n_outputs == 1:
            return node
        return tuple(Op(OUTPUT, [node], {"index": i}, f"{node.name}[{i}]") for i in range(n_outputs))

    build.opdef = opdef
    build.__name__ = name
    return build


@functools.cache
def _attributes(opdef):
    """The attributes an op takes: ``forward``'s parameters after the inputs (None: any, when
    ``forward`` takes ``**kwargs`` or has no signature, like numpy's ufuncs)."""
    try:
        parameters = list(inspect.signature(opdef.forward).parameters.values())
    except ValueError:                               # a builtin without a signature
        return None
    if any(p.kind == p.VAR_KEYWORD for p in parameters):
        return None
    start = 0 if any(p.kind == p.VAR_POSITIONAL for p in parameters) else len(opdef.vjps)
    return [p.name for p in parameters[start:] if p.name not in ("out", "dtype")
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _check_attributes(opdef, attrs):
    names = _attributes(opdef)
    unknown = [a for a in attrs if names is not None and a not in names]
    if unknown:
        raise BadValueError(f"mg.{opdef.name} has no attribute {', '.join(map(repr, unknown))}; its "
                            f"attributes are: {', '.join(names) or 'none'}.")
    for name, value in attrs.items():
        node = next((v for v in (value if isinstance(value, tuple) else (value,))
                     if isinstance(v, Node)), None)
        if node is not None:
            raise BadValueError(f"mg.{opdef.name}'s attribute {name} is the node '{node.name}', but "
                                f"attributes are fixed numbers written into the graph (axis=0, "
                                f"x[0], x[:, 1:3]); only an op's inputs can be nodes.")


def _positional_attributes(opdef, extra):
    """``{"axis": 0}`` for ``sum(x, 0)``: name the arguments after the inputs by ``forward``'s
    parameters; more arguments than that is a mistake worth saying so."""
    n_inputs = len(opdef.vjps)
    try:
        parameters = list(inspect.signature(opdef.forward).parameters.values())[n_inputs:]
    except ValueError:                               # a builtin without a signature: inputs only
        parameters = []
    names = [p.name for p in parameters if p.name not in ("out", "dtype")
             and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(extra) > len(names):
        raise TypeError(f"{opdef.name} takes {n_inputs} input(s)"
                        + (f" and then the attributes {', '.join(names)}" if names else "")
                        + f"; it was given {n_inputs + len(extra)} positional arguments")
    return dict(zip(names, extra))


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


def _sum_back(g, x, axis, keepdims):
    """Spread a reduction's gradient back over the axes it reduced."""
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    elif axis is None and not keepdims:
        g = np.reshape(g, (1,) * x.ndim)
    return np.broadcast_to(g, x.shape)


def _as_matrices(g, x, y):
    """View vectors as 1-row (left) / 1-column (right) matrices, and ``g`` to match."""
    X = x.reshape(1, -1) if x.ndim == 1 else x
    Y = y.reshape(-1, 1) if y.ndim == 1 else y
    return X, Y, np.reshape(g, (X.shape[0], Y.shape[1]))


def _matmul(x, y):
    if x.ndim > 2 or y.ndim > 2 or x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"matmul takes vectors and matrices; got shapes {x.shape} and {y.shape}")
    return x @ y


def _matmul_vjp_x(g, ans, x, y):
    """x @ y: the gradient of x is g @ yᵀ."""
    if x.ndim == y.ndim == 2:
        return g @ y.T
    X, Y, G = _as_matrices(g, x, y)
    return (G @ Y.T).reshape(x.shape)


def _matmul_vjp_y(g, ans, x, y):
    """x @ y: the gradient of y is xᵀ @ g."""
    if x.ndim == y.ndim == 2:
        return x.T @ g
    X, Y, G = _as_matrices(g, x, y)
    return (X.T @ G).reshape(y.shape)


def _linear(x, W, b):
    """x @ W + b, with b added in place into the fresh product (one temporary array fewer)."""
    out = x @ W
    if getattr(out, "dtype", None) is not b.dtype:   # another dtype: numpy's promotion decides
        return out + b
    try:
        out += b
    except ValueError:                       # b stretches the product
        out = out + b
    return out


def _power_vjp_x(g, ans, x, y):
    """x ** y: the gradient of x is g·y·x^(y-1); where y is 0 (x ** 0 is 1 everywhere) it is 0,
    even at x = 0, where x^(y-1) would be infinite (as in PyTorch)."""
    return unbroadcast(g * y * x ** np.where(y == 0, 1, y - 1), x.shape)


def _power_vjp_y(g, ans, x, y):
    """x ** y: the gradient of y is g·x^y·log(x); 0 where x is 0 (as in PyTorch), not 0·log 0 = NaN."""
    return unbroadcast(g * ans * np.log(np.where(x == 0, 1, x)), y.shape)


def _product_grad(g, x, W):
    """In linear, the gradient of the product x @ W: ``g`` itself, unless b stretched the product
    (a (1, 1) product plus a (1, 9) bias), then summed back to the product's shape."""
    shape = x.shape[:-1] + W.shape[1:]
    return g if g.shape == shape else unbroadcast(g, shape)


def _rows_times_matrix(g, x, W):
    """linear's usual case, written out in its VJPs because it runs for every layer: x a batch
    of rows, W a matrix, and b did not stretch the product, so ``g`` is the product's gradient."""
    return x.ndim == W.ndim == 2 and g.shape == (len(x), W.shape[1])


def _linear_vjp_x(g, ans, x, W, b):
    """linear: x's gradient is matmul's, g @ Wᵀ, for the product's gradient."""
    if _rows_times_matrix(g, x, W):
        return g @ W.T
    return _matmul_vjp_x(_product_grad(g, x, W), ans, x, W)


def _linear_vjp_W(g, ans, x, W, b):
    """linear: W's gradient is matmul's, xᵀ @ g, for the product's gradient."""
    if _rows_times_matrix(g, x, W):
        return x.T @ g
    return _matmul_vjp_y(_product_grad(g, x, W), ans, x, W)


def _sigmoid(x):
    """1 / (1 + exp(-x)), written so that no exp overflows for large |x|."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _transpose_vjp(g, ans, x, axes=None):
    """Undo the permutation: axis ``axes[i]`` of x became axis i (``-1`` counts from the end)."""
    return np.transpose(g, None if axes is None else np.argsort(np.mod(axes, x.ndim)))


def _getitem_vjp(g, ans, x, index):
    out = np.zeros(x.shape, np.result_type(g))
    np.add.at(out, index, g)                      # repeated indices add up
    return out


def _max_vjp(g, ans, x, axis=None, keepdims=False):
    top = _sum_back(ans, x, axis, keepdims)
    is_max = x == top
    spread = _sum_back(g, x, axis, keepdims) * is_max
    return spread / np.sum(is_max, axis=axis, keepdims=True, dtype=spread.dtype)   # ties share g


def _same_shape(a, b, what):
    if a.shape != b.shape:
        raise ShapeError(f"{what} needs predictions and targets of the same shape, got {a.shape} "
                         f"and {b.shape} (a (n, 1) vs (n,) mismatch would silently broadcast to (n, n))")


def _log_softmax(x, axis=-1):
    """x - log(sum(exp(x))), shifted by the row maximum so that no exp overflows."""
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _class_indices(labels, logits):
    """True for integer class labels, one per example (shape ``logits.shape[:-1]``: (n,) for (n, C)
    logits, a single number for one example's (C,) logits); False for one-hot (or soft) labels of
    the logits' shape."""
    if labels.shape == logits.shape and logits.ndim:
        return False
    if logits.ndim == 0 or labels.shape != logits.shape[:-1] or labels.dtype.kind not in "iu":
        raise ShapeError(f"labels must be integer classes of shape {logits.shape[:-1]} or one-hot of "
                         f"shape {logits.shape} (logits: one row of class scores per example); got "
                         f"{labels.dtype} labels of shape {labels.shape}")
    return True


def _not_classes(labels, n_classes):
    """The error for class labels outside 0, 1, ..., n_classes - 1."""
    wrong = labels[(labels < 0) | (labels >= n_classes)]
    return BadValueError(f"label {wrong.flat[0]} is not a class: with {n_classes} columns of "
                         f"logits, labels must be 0 to {n_classes - 1}")


def _examples(logits):
    """How many examples the logits score: rows of an (n, C) array; one for a (C,) vector."""
    return len(logits) if logits.ndim == 2 else math.prod(logits.shape[:-1])


class _LastResult:
    """Remember ``f(x)`` for the last array ``x`` it saw (compared by identity, not by value).

    The fused softmax-CE needs the log-softmax of the same logits in its forward and in its
    backward. The engine passes a node's own value array to both, and values are read-only, so
    "the same array object" means "the same numbers": the backward reuses the forward's result.
    """

    def __init__(self, f):
        self.f, self.x, self.fx = f, None, None

    def __call__(self, x):
        if x is not self.x:
            self.x, self.fx = x, self.f(x)
        return self.fx


_log_softmax_of_logits = _LastResult(_log_softmax)


def _softmax_ce(logits, labels):
    """Mean over examples of -log p(correct class); with one-hot/soft labels, of -sum(labels * log p)."""
    logp, n = _log_softmax_of_logits(logits), _examples(logits)
    if not n:
        raise ValueError(_NO_EXAMPLES)
    if _class_indices(labels, logits):
        try:                                       # a label >= C raises IndexError; numpy would
            picked = logp.reshape(n, -1)[_correct_class(n, labels)]          # read -1 as the
            if n and labels.min() < 0:             # last class, so negative labels are refused
                raise IndexError
        except IndexError:
            raise _not_classes(labels, logits.shape[-1]) from None
        return -picked.sum() / n
    return -(labels * logp).sum() / n


def _softmax_ce_vjp_logits(g, ans, logits, labels):
    """softmax - onehot, per example (for soft labels: softmax * total label mass - labels)."""
    p, n = np.exp(_log_softmax_of_logits(logits)), _examples(logits)
    if _class_indices(labels, logits):
        p.reshape(n, -1)[_correct_class(n, labels)] -= 1       # a view: p changes
    else:
        p = p * np.sum(labels, axis=-1, keepdims=True) - labels
    p /= n                                         # p is a fresh array: update it in place
    if float(g) != 1:                              # g: one number, usually the 1 a backward starts
        p *= g                                     # from, and multiplying by 1 changes nothing
    return p


def _correct_class(n, labels):
    """The index of each example's correct class in its row of (n, C) logits: (rows, labels)."""
    return _row_numbers(n), labels.reshape(n)


@functools.lru_cache(maxsize=8)
def _row_numbers(n):
    """0, 1, ..., n-1, made once per batch size (read-only, since every call shares it)."""
    rows = np.arange(n)
    rows.setflags(write=False)
    return rows


def _softmax_ce_vjp_labels(g, ans, logits, labels):
    if _class_indices(labels, logits):
        return np.zeros(labels.shape)              # integer classes: no gradient flows
    return -g * _log_softmax_of_logits(logits) / _examples(logits)


def _bce_with_logits(z, y):
    """mean(-y log σ(z) - (1-y) log(1-σ(z))) = mean(max(z,0) - z y + log(1 + e^-|z|)), never overflowing."""
    _same_shape(z, y, "bce_with_logits")
    return _mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def _mse(p, t):
    _same_shape(p, t, "mse")
    return _mean((p - t) ** 2)


def _mean(x):
    """The mean of all of ``x``: the same number as ``np.mean(x)`` (the same sum, divided by the
    same count), without np.mean's layers of Python, which cost more than the sum on small arrays.
    The mean of no numbers at all (a batch of 0 examples) is refused: 0 / 0 would be NaN."""
    if not x.size:
        raise ValueError(_NO_EXAMPLES)
    return x.sum() / x.size


_NO_EXAMPLES = "a loss averages over the examples, and there are none (size 0)"


def _split(x, n, axis=-1):
    return tuple(np.split(x, n, axis=axis))


@functools.cache
def _concat_op(k):
    """Concatenation of k nodes (one table row per k, so each input has its own VJP)."""
    def vjp_for(i):
        def vjp(g, ans, *xs, axis=0):
            start = int(np.sum([np.shape(x)[axis] for x in xs[:i]]))
            return np.take(g, range(start, start + np.shape(xs[i])[axis]), axis=axis)
        return vjp
    return defop("concatenate", lambda *xs, axis=0: np.concatenate(xs, axis=axis),
                 [vjp_for(i) for i in range(k)], symbol="concat")

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
power = defop("pow", np.power, [_power_vjp_x, _power_vjp_y], "^")
neg = defop("neg", np.negative, [lambda g, ans, x: -g], "−")
matmul = defop("matmul", _matmul, [_matmul_vjp_x, _matmul_vjp_y], "@")

exp = defop("exp", np.exp, [lambda g, ans, x: g * ans], "exp")
log = defop("log", np.log, [lambda g, ans, x: g / x], "log")
tanh = defop("tanh", np.tanh, [lambda g, ans, x: g * (1 - ans ** 2)], "tanh")
sigmoid = defop("sigmoid", _sigmoid, [lambda g, ans, x: g * ans * (1 - ans)], "σ")
relu = defop("relu", lambda x: np.maximum(x, 0), [lambda g, ans, x: g * (x > 0)], "relu")
leaky_relu = defop("leaky_relu", lambda x, slope=0.01: np.where(x > 0, x, slope * x),
                   [lambda g, ans, x, slope=0.01: np.where(x > 0, g, slope * g)], "lrelu")

sum = defop("sum", np.sum,
            [lambda g, ans, x, axis=None, keepdims=False: _sum_back(g, x, axis, keepdims)], "Σ")
mean = defop("mean", np.mean,
             [lambda g, ans, x, axis=None, keepdims=False:
              _sum_back(g, x, axis, keepdims) * (ans.size / x.size)], "mean")
max = defop("max", np.max, [_max_vjp], "max")

reshape = defop("reshape", lambda x, shape: np.reshape(x, shape),
                [lambda g, ans, x, shape: np.reshape(g, x.shape)], "reshape")
transpose = defop("transpose", lambda x, axes=None: np.transpose(x, axes), [_transpose_vjp], "ᵀ")
getitem = defop("getitem", lambda x, index: x[index], [_getitem_vjp], "[ ]")

softmax = defop("softmax", lambda x, axis=-1: np.exp(_log_softmax(x, axis)),
                [lambda g, ans, x, axis=-1: ans * (g - np.sum(g * ans, axis=axis, keepdims=True))], "softmax")
log_softmax = defop("log_softmax", _log_softmax,
                    [lambda g, ans, x, axis=-1: g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)],
                    "log_softmax")

# fused ops: one node instead of several, for speed and numerical stability
linear = defop("linear", _linear,
               [_linear_vjp_x, _linear_vjp_W, lambda g, ans, x, W, b: unbroadcast(g, b.shape)], "linear")
mse = defop("mse", _mse,
            [lambda g, ans, p, t: g * 2 * (p - t) / p.size,
             lambda g, ans, p, t: g * 2 * (t - p) / p.size], "MSE")
bce_with_logits = defop("bce_with_logits", _bce_with_logits,
                        [lambda g, ans, z, y: g * (_sigmoid(z) - y) / z.size,
                         lambda g, ans, z, y: -g * z / z.size], "BCE")
softmax_cross_entropy = defop("softmax_cross_entropy", _softmax_ce,
                              [_softmax_ce_vjp_logits, _softmax_ce_vjp_labels], "CE")

# picking output i of a multi-output op: its VJP puts g in slot i of a tuple of gradients
OUTPUT = OpDef("output", lambda t, index: t[index],
               [lambda g, ans, t, index: tuple(g if i == index else None for i in range(len(t)))], "out")


def split(x, n, axis=-1, name=None):
    """Cut ``x`` into ``n`` equal parts along ``axis``: a multi-output op, one node per part."""
    return _split_op(n)(x, n=n, axis=axis, name=name)


@functools.cache
def _split_op(n):
    return defop("split", _split, [lambda g, ans, x, n, axis=-1: np.concatenate(g, axis=axis)],
                 "split", n_outputs=n)


def concatenate(nodes, axis=0, name=None):
    """Join nodes along an existing axis."""
    if isinstance(nodes, Node) or not isinstance(nodes, (list, tuple)) or not nodes:
        raise BadValueError(f"mg.concatenate takes a non-empty list of nodes, e.g. "
                            f"mg.concatenate([a, b], axis=0); got {str(nodes)[:40]!r}.")
    return _concat_op(len(nodes))(*nodes, axis=axis, name=name)


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
