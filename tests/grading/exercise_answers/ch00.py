"""Chapter 00 (warm-up): typical wrong answers and different right answers (see __init__.py)."""

import math

import numpy as np

import minigraph as mg

from minigraph.kernels import sigmoid as kernel_sigmoid

from . import wrong


# -- 00.relu ---------------------------------------------------------------------------------

def relu_loop(x):
    return np.array([max(v, 0.0) for v in x])


def relu_in_place(x):
    x[x < 0] = 0.0
    return x


# -- 00.sigmoid ------------------------------------------------------------------------------

def sigmoid_both_branches(x):
    return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))


def sigmoid_math_loop(x):
    return np.array([1 / (1 + math.exp(-v)) for v in np.ravel(x)]).reshape(np.shape(x))


def sigmoid_stable(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def sigmoid_masks(x):
    out = np.empty_like(x)
    positive = x >= 0
    out[positive] = 1 / (1 + np.exp(-x[positive]))
    e = np.exp(x[~positive])
    out[~positive] = e / (1 + e)
    return out


# -- 00.sigmoid_vjp --------------------------------------------------------------------------

def sigmoid_vjp_in_place(g, ans, x):
    g *= ans * (1 - ans)
    return g


# the engine's functions taken before any check runs (a reference kept, another module path)
RELU_FORWARD = mg.relu.opdef.forward
SIGMOID_VJP = mg.sigmoid.opdef.vjps[0]


WRONG = {
    "00.relu": {
        "the engine's relu, kept before the check": wrong(lambda x: RELU_FORWARD(x), "engine's own forward function", "mg.relu.opdef.forward"),
        "abs instead of max": wrong(np.abs, "flip the sign"),
        "the comparison the wrong way round": wrong(lambda x: np.minimum(x, 0.0), "wrong way round"),
        "a Python loop (a list)": wrong(relu_loop, "loop"),
        "np.max, a reduction": wrong(lambda x: np.max(x, 0), "fewer entries"),
        "in-place change of the input": wrong(relu_in_place, "in place"),
        "keeps the shape only for vectors": wrong(lambda x: np.maximum(np.ravel(x), 0.0), "wrong shape"),
        "Python's max": wrong(lambda x: max(x, 0), "python's if, and, or, max or min", "entry by entry"),
        "the engine's relu": wrong(mg.relu.opdef.forward, "engine's own forward function"),
    },
    "00.sigmoid": {
        "the engine's kernel, from its module": wrong(lambda x: kernel_sigmoid(x), "engine's own forward function", "mg.sigmoid.opdef.forward"),
        "the textbook formula overflows": wrong(lambda x: 1 / (1 + np.exp(-x)), "overflow"),
        "the other textbook form overflows": wrong(lambda x: np.exp(x) / (1 + np.exp(x)), "overflow"),
        "np.where with both unsafe branches": wrong(sigmoid_both_branches, "overflow"),
        "the sign of the exponent flipped": wrong(lambda x: 1 / (1 + np.exp(x)), "sign", "flipped"),
        "only the branch for negative x": wrong(
            lambda x: np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))), "other branch"),
        "math.exp in a loop": wrong(sigmoid_math_loop, "overflow"),
        "the engine's sigmoid": wrong(lambda x: mg.Graph(mg.sigmoid(mg.Constant(x))).forward(),
                                      "engine's own forward function"),
    },
    "00.broadcast_shape": {
        "lined up from the left": wrong((4, 3), "from the right"),
        "only the first shape": wrong((3, 1), "stretches"),
        "a new axis in front of the second": wrong((1, 4), "first shape"),
        "the number of entries": wrong(12, "tuple of sizes"),
        "a shape that does not exist": wrong((3, 4, 1), "shape (3,), expected shape (2,)"),
    },
    "00.sigmoid_vjp": {
        "the engine's rule, kept before the check": wrong(lambda g, ans, x: SIGMOID_VJP(g, ans, x), "engine's own backward rule"),
        "forgets the upstream gradient g": wrong(lambda g, ans, x: ans * (1 - ans), "upstream gradient g"),
        "wrong sign": wrong(lambda g, ans, x: -g * ans * (1 - ans), "sign"),
        "misses the factor 1 - sigma": wrong(lambda g, ans, x: g * ans, "(1 − σ(x)) is missing"),
        "tanh's derivative": wrong(lambda g, ans, x: g * (1 - ans ** 2), "tanh"),
        "x where sigma(x) belongs": wrong(lambda g, ans, x: g * x * (1 - x), "with x where"),
        "sums everything": wrong(lambda g, ans, x: np.sum(g * ans * (1 - ans)), "summed into one number"),
        "changes g in place": wrong(sigmoid_vjp_in_place, "in place"),
        "the engine's own rule": wrong(mg.sigmoid.opdef.vjps[0], "engine's own backward rule"),
    },
}

RIGHT = {
    "00.relu": {
        "np.maximum": lambda x: np.maximum(x, 0),
        "np.where": lambda x: np.where(x > 0, x, 0.0),
        "a mask": lambda x: x * (x > 0),
        "np.clip": lambda x: np.clip(x, 0, None),
    },
    "00.sigmoid": {
        "exp(-|x|) and np.where": sigmoid_stable,
        "boolean masks": sigmoid_masks,
        "tanh": lambda x: 0.5 * (1 + np.tanh(x / 2)),
    },
    "00.broadcast_shape": {
        "a tuple": (3, 4),
        "a list": [3, 4],
        "numpy's own rule": np.broadcast_shapes((3, 1), (4,)),
    },
    "00.sigmoid_vjp": {
        "from ans": lambda g, ans, x: g * ans * (1 - ans),
        "recomputed from x": lambda g, ans, x: g * np.exp(-x) / (1 + np.exp(-x)) ** 2,
        "ans minus its square": lambda g, ans, x: g * (ans - ans ** 2),
    },
}
