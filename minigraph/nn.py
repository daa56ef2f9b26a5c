"""Layers, initialisations and losses: the pieces a neural network is built from.

A layer is a small object that owns its Parameters and, when called on a node, adds its ops to
the graph. Batches are rows: ``x`` has shape (n, features), so a layer computes
``x @ W + b`` with ``W`` of shape (n_in, n_out). The losses live in the op table (they are
fused, numerically stable ops) and are re-exported here. A layer's ``rng`` is a seed, None or a
numpy Generator: ``np.random.default_rng(rng)`` makes a Generator of the first two, and gives the
third back as it is (so layers made with one Generator draw one sequence).

Two functions of plain numbers (arrays, not nodes) serve the models that feed and score
graphs: ``one_hot`` (the rows a character model is fed) and ``log_probabilities`` (the
log-softmax of scores, to read a model's predictions; ``mg.log_softmax`` is the op, for graphs).
"""

import numpy as np

from . import kernels, ops
from .dtypes import get_default_dtype
from .errors import BadValueError
from .graph import Parameter
from .ops import bce_with_logits, mse, softmax_cross_entropy  # noqa: F401  (losses)


def xavier_uniform(rng, n_in, n_out):
    """Glorot/Xavier: keeps the variance of activations steady through tanh/sigmoid layers."""
    limit = np.sqrt(6 / (n_in + n_out))
    return rng.uniform(-limit, limit, size=(n_in, n_out))


def he_normal(rng, n_in, n_out):
    """He/Kaiming: variance 2/n_in, made for ReLU layers (which zero half their inputs)."""
    return rng.normal(0.0, np.sqrt(2 / n_in), size=(n_in, n_out))


def normal(rng, n_in, n_out, std=1.0):
    """Plain N(0, std²): fine for tiny networks such as XOR's."""
    return rng.normal(0.0, std, size=(n_in, n_out))


INITS = {"xavier": xavier_uniform, "he": he_normal, "normal": normal}
ACTIVATIONS = {"tanh": ops.tanh, "sigmoid": ops.sigmoid, "relu": ops.relu,
               "leaky_relu": ops.leaky_relu}


def choose(table, key, what):
    """``table[key]``, or a BadValueError listing the choices."""
    if key not in table:
        raise BadValueError(f"unknown {what} {key!r}; choose one of: {', '.join(table)}.")
    return table[key]


def whole_number(n, what):
    """``n`` as an int, or a BadValueError saying ``what`` must be a whole number >= 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise BadValueError(f"{what} must be a whole number >= 1, got {n!r}.")
    return int(n)


class Linear:
    """``x @ W + b`` with W of shape (n_in, n_out), b of shape (n_out,), as one fused op.

    Its parameters have ``dtype`` (default: ``mg.get_default_dtype()``, see ``dtypes.py``).
    """

    def __init__(self, n_in, n_out, rng=None, init="xavier", name="linear", dtype=None):
        self.name = name
        n_in, n_out = whole_number(n_in, f"{name}: n_in"), whole_number(n_out, f"{name}: n_out")
        dtype = get_default_dtype() if dtype is None else dtype
        weights = choose(INITS, init, "init")(np.random.default_rng(rng), n_in, n_out)
        self.W = Parameter(weights, name=f"{name}.W", dtype=dtype)
        self.b = Parameter(np.zeros(n_out), name=f"{name}.b", dtype=dtype)
        self.parameters = [self.W, self.b]

    def __call__(self, x):
        return ops.linear(x, self.W, self.b, name=self.name)

    def __repr__(self):
        return f"Linear('{self.name}', {self.W.shape[0]} -> {self.W.shape[1]})"


class MLP:
    """A stack of Linear layers with an activation between them; returns logits (no final activation).

    ``MLP([2, 4, 1], "tanh")`` is 2 inputs -> 4 tanh units -> 1 output.
    """

    def __init__(self, sizes, activation="tanh", rng=None, init=None, name="mlp", dtype=None):
        if not isinstance(sizes, (list, tuple)) or len(sizes) < 2:
            raise BadValueError(f"MLP takes the layer sizes, inputs first, e.g. MLP([2, 4, 1]); "
                                f"got {sizes!r}.")
        rng = np.random.default_rng(rng)
        init = init or ("he" if activation in ("relu", "leaky_relu") else "xavier")
        self.activation = choose(ACTIVATIONS, activation, "activation")
        self.layers = [Linear(a, b, rng, init, name=f"{name}.fc{i + 1}", dtype=dtype)
                       for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]
        self.parameters = [p for layer in self.layers for p in layer.parameters]

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)

    def __repr__(self):
        sizes = [self.layers[0].W.shape[0]] + [layer.W.shape[1] for layer in self.layers]
        return f"MLP({sizes}, {self.activation.__name__})"


def one_hot(ids, n, dtype=np.float64):
    """``one_hot(ids, n)[..., k]`` is 1 where ``ids == k``: rows of the n x n identity, and a row
    of zeros where the id is -1 (nothing: padding, or before the first output character).
    A BadValueError names an id outside -1 .. n - 1."""
    ids = np.asarray(ids)
    if ids.size and (not np.issubdtype(ids.dtype, np.integer) or ids.min() < -1 or ids.max() >= n):
        raise BadValueError(f"one_hot takes whole-number ids from 0 to {n - 1} (or -1: a row of "
                            f"zeros); got {ids.dtype} ids from {ids.min()} to {ids.max()}.")
    return (ids[..., None] == np.arange(n)).astype(dtype)


def log_probabilities(logits, axis=-1):
    """log(softmax(logits)) along ``axis``, of plain numbers (an array, not a node): each score
    minus the log of the sum of the exponentials, computed without overflow (the kernel that
    ``mg.log_softmax`` runs)."""
    return kernels.log_softmax(np.asarray(logits), axis)


def binary_accuracy(logits, labels):
    """Fraction of rows where ``logits > 0`` agrees with 0/1 ``labels``."""
    return float(np.mean((np.asarray(logits) > 0) == (np.asarray(labels) > 0.5)))
