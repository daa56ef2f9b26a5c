"""Chapter 00, warm-up: numpy and one backward rule (``solutions/00_warmup.ipynb``).

Three of these exercises need no engine: ``function_exercise`` and ``value_exercise`` do all the
work. The last one, ``sigmoid_vjp``, is a backward-rule exercise (``vjp.py``): plain cases call
the learner's rule on arrays, and a graph case plugs it into the engine as a custom op and names
the first node (walking back from the loss) whose gradient is wrong.
"""

import numpy as np

import minigraph as mg

from .exercise import case, function_exercise, value_exercise
from .vjp import chained, elementwise_cases, vjp_exercise

TITLE = "Warm-up: numpy and one backward rule"
_sigmoid = mg.sigmoid.opdef.forward     # the engine's stable sigmoid: exp only ever of -|x| <= 0


def _relu(x):
    return np.maximum(x, 0.0)


relu = function_exercise(
    "00.relu", "relu", _relu, points=1,
    cases=[
        case(x=[-2.0, -0.5, 0.0, 1.5, 3.0]),
        case(x=[[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]],
             hint="relu works on arrays of any shape, entry by entry, and keeps the shape."),
        case(x=-7.0, hint="A single number (a 0-d array) is an array too."),
        case(x=[[[0.5], [-0.5]]]),
    ],
    hint="relu keeps the positive entries and puts 0 everywhere else: np.maximum(x, 0) "
         "does it for all entries at once, without a loop.")

sigmoid = function_exercise(
    "00.sigmoid", "sigmoid", _sigmoid, points=2, raise_on=("over", "invalid"),
    cases=[
        case(x=[-2.0, 0.0, 2.0]),
        case(x=[[1.0, -1.0], [0.5, 3.0]]),
        case(x=[-1000.0, 1000.0],
             hint="For x = -1000, exp(-x) overflows. Take exp only of -|x| (never positive) and "
                  "choose the formula by the sign of x. np.where computes both branches, so "
                  "neither branch may overflow."),
        case(x=[-800.0, -30.0, 30.0, 800.0]),
    ],
    hint="sigmoid(x) = 1 / (1 + exp(-x)) = exp(x) / (1 + exp(x)): each form is safe for one "
         "sign of x.")

broadcast_shape = value_exercise(
    "00.broadcast_shape", "broadcast_shape", (3, 4), points=1,
    title="shape of np.ones((3, 1)) + np.ones(4)",
    hint="Line the shapes up from the right; a missing axis counts as size 1, and size 1 "
         "stretches to match the other side.")


# -- a backward rule, checked inside the engine (see vjp.py) ---------------------------------

def sigmoid_graph(rules):
    """loss = sum(σ(σ(x·w)·v)), both σ nodes using the rule being checked."""
    sigmoid_op = mg.defop("sigmoid_exercise", _sigmoid, rules, symbol="σ")
    return chained(sigmoid_op, [0.8, -1.2, 0.3], [2.0, -1.0, 0.5], "s")


sigmoid_vjp = vjp_exercise(
    "00.sigmoid_vjp", "sigmoid_vjp", 3, "sigmoid_vjp(g, ans, x)", _sigmoid,
    lambda g, ans, x: g * ans * (1 - ans), sigmoid_graph, "loss = sum(σ(σ(x·w)·v))",
    elementwise_cases("A VJP multiplies the local derivative by the upstream gradient g."),
    hint="σ'(x) = σ(x)·(1 − σ(x)), and ans already holds σ(x): return g * ans * (1 - ans).")

EXERCISES = [relu, sigmoid, broadcast_shape, sigmoid_vjp]
