"""Chapter 00's reference answers and typical mistakes (``content/ch00.py`` has the exercises)."""

import numpy as np

import minigraph as mg

sigmoid = mg.sigmoid.opdef.forward     # the engine's stable sigmoid: exp only ever of -|x| <= 0


def relu(x):
    return np.maximum(x, 0.0)


RELU_MISTAKES = {
    "negative entries came out positive: relu puts 0 there, it does not flip the sign": np.abs,
    "the positive entries became 0 and the negative ones were kept: the comparison is the "
    "wrong way round": lambda x: np.minimum(x, 0.0),
}

SIGMOID_MISTAKES = {
    "σ(x) came out as σ(-x): the sign of the exponent is flipped": lambda x: sigmoid(-x),
    "only right where x < 0: the form built on exp(-|x|) needs its other branch where x is "
    "positive": lambda x: np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))),
}

BROADCAST_SHAPE = (3, 4)
BROADCAST_MISTAKES = {
    "that is the shape reversed: line the shapes up from the right, not from the left": (4, 3),
    "that is only the first shape: the size-1 axis stretches to the other side's 4": (3, 1),
    "that is the second shape with a new axis in front: the first shape's 3 stays": (1, 4),
    "a shape is a tuple of sizes, one per axis, not the number of entries": 12,
}


def sigmoid_vjp(g, ans, x):
    return g * ans * (1 - ans)


SIGMOID_VJP_MISTAKES = {
    "the upstream gradient g is missing: a VJP multiplies the local derivative by g":
        lambda g, ans, x: ans * (1 - ans),
    "the sign is flipped": lambda g, ans, x: -g * ans * (1 - ans),
    "the factor (1 − σ(x)) is missing from σ'(x)": lambda g, ans, x: g * ans,
    "that is tanh's derivative, not sigmoid's": lambda g, ans, x: g * (1 - ans ** 2),
    "σ'(x) is written with x where it needs σ(x), which ans holds":
        lambda g, ans, x: g * x * (1 - x),
    "all entries were summed into one number: a VJP keeps one gradient per entry of x":
        lambda g, ans, x: np.sum(g * ans * (1 - ans)),
}
