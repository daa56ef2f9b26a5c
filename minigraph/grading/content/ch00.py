"""Chapter 00, warm-up: numpy and one backward rule (``solutions/00_warmup.ipynb``).

Three of these exercises need no engine: ``function_exercise`` and ``value_exercise`` do all the
work. The last one, ``sigmoid_vjp``, is a backward-rule exercise (``vjp.py``): plain cases call
the learner's rule on arrays, and a graph case plugs it into the engine as a custom op and names
the first node (walking back from the loss) whose gradient is wrong.
"""

import numpy as np

import minigraph as mg

from ..toolkit.engine import forward_of, refused, vjps_of
from ..toolkit.exercise import case, function_exercise, value_exercise
from ..toolkit.vjp import chained, elementwise_cases, vjp_exercise

TITLE = "Warm-up: numpy and one backward rule"
_sigmoid = mg.sigmoid.opdef.forward     # the engine's stable sigmoid: exp only ever of -|x| <= 0


def _relu(x):
    return np.maximum(x, 0.0)


relu = function_exercise(
    "00.relu", "relu", _relu, points=1, no_loops=True,
    cases=[
        case(x=[-2.0, -0.5, 0.0, 1.5, 3.0]),
        case(x=[[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]],
             hint="relu works on arrays of any shape, entry by entry, and keeps the shape."),
        case(x=-7.0, hint="A single number (a 0-d array) is an array too."),
        case(x=[[[0.5], [-0.5]]]),
    ],
    mistakes={
        "negative entries came out positive: relu puts 0 there, it does not flip the sign": np.abs,
        "the positive entries became 0 and the negative ones were kept: the comparison is the "
        "wrong way round": lambda x: np.minimum(x, 0.0),
    },
    hint=("relu keeps the positive entries and puts 0 everywhere else, entry by entry.",
          "numpy has an elementwise maximum of two arrays (or of an array and a number) that "
          "does every entry at once and keeps the shape; a reduction such as np.max does not."),
    engine=refused(forward_of(mg.relu)))

sigmoid = function_exercise(
    "00.sigmoid", "sigmoid", _sigmoid, points=2, raise_on=("over", "invalid"),
    cases=[
        case(x=[-2.0, 0.0, 2.0]),
        case(x=[[1.0, -1.0], [0.5, 3.0]]),
        case(x=[-1000.0, 1000.0],
             hint=("For x = -1000, exp(-x) overflows: take exp only of a number that is never "
                   "positive, such as -|x|.",
                   "Choose between the two forms of σ by the sign of x. np.where computes both "
                   "branches for every entry, so neither branch may overflow anywhere.")),
        case(x=[-800.0, -30.0, 30.0, 800.0]),
    ],
    mistakes={
        "σ(x) came out as σ(-x): the sign of the exponent is flipped": lambda x: _sigmoid(-x),
        "only right where x < 0: the form built on exp(-|x|) needs its other branch where x is "
        "positive": lambda x: np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))),
    },
    hint=("σ(x) = 1 / (1 + exp(-x)) = exp(x) / (1 + exp(x)): each form is safe for one sign of x.",
          "exp(-|x|) never overflows. Write both forms with it, and pick one per entry by the sign "
          "of x."),
    engine=refused(forward_of(mg.sigmoid)))

broadcast_shape = value_exercise(
    "00.broadcast_shape", "broadcast_shape", (3, 4), points=1,
    title="shape of np.ones((3, 1)) + np.ones(4)",
    mistakes={
        "that is the shape reversed: line the shapes up from the right, not from the left": (4, 3),
        "that is only the first shape: the size-1 axis stretches to the other side's 4": (3, 1),
        "that is the second shape with a new axis in front: the first shape's 3 stays": (1, 4),
        "a shape is a tuple of sizes, one per axis, not the number of entries": 12,
    },
    hint=("Line the shapes up from the right; a missing axis counts as size 1.",
          "On each axis, a size 1 stretches to match the other side; the result has as many axes "
          "as the longer shape."))
# -- a backward rule, checked inside the engine (see vjp.py) ---------------------------------

def sigmoid_graph(rules):
    """loss = sum(σ(σ(x·w)·v)), both σ nodes using the rule being checked."""
    sigmoid_op = mg.defop("sigmoid_exercise", _sigmoid, rules, symbol="σ")
    return chained(sigmoid_op, [0.8, -1.2, 0.3], [2.0, -1.0, 0.5], "s")


sigmoid_vjp = vjp_exercise(
    "00.sigmoid_vjp", "sigmoid_vjp", 3, "sigmoid_vjp(g, ans, x)", _sigmoid,
    lambda g, ans, x: g * ans * (1 - ans), sigmoid_graph, "loss = sum(σ(σ(x·w)·v))",
    elementwise_cases("A VJP multiplies the local derivative by the upstream gradient g."),
    mistakes={
        "the upstream gradient g is missing: a VJP multiplies the local derivative by g":
            lambda g, ans, x: ans * (1 - ans),
        "the sign is flipped": lambda g, ans, x: -g * ans * (1 - ans),
        "the factor (1 − σ(x)) is missing from σ'(x)": lambda g, ans, x: g * ans,
        "that is tanh's derivative, not sigmoid's": lambda g, ans, x: g * (1 - ans ** 2),
        "σ'(x) is written with x where it needs σ(x), which ans holds":
            lambda g, ans, x: g * x * (1 - x),
        "all entries were summed into one number: a VJP keeps one gradient per entry of x":
            lambda g, ans, x: np.sum(g * ans * (1 - ans)),
    },
    hint=("Chain rule: the upstream gradient g times σ'(x), entry by entry.",
          "σ'(x) = σ(x)·(1 − σ(x)), and ans already holds σ(x), so nothing needs recomputing."),
    engine=refused(vjps_of(mg.sigmoid)))

EXERCISES = [relu, sigmoid, broadcast_shape, sigmoid_vjp]
