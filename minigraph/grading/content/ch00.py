"""Chapter 00, warm-up: numpy and one backward rule (``solutions/00_warmup.ipynb``).

Three of these exercises need no engine: ``function_exercise`` and ``value_exercise`` do all the
work. The last one, ``sigmoid_vjp``, is a backward-rule exercise (``vjp.py``): plain cases call
the learner's rule on arrays, and a graph case plugs it into the engine as a custom op and names
the first node (walking back from the loss) whose gradient is wrong.
"""

import numpy as np

import minigraph as mg

from ..toolkit.answers import answers_of
from ..toolkit.engine import forward_of, refused, vjps_of
from ..toolkit.exercise import case, function_exercise, random_array, value_exercise
from ..toolkit.vjp import chained, elementwise_cases, elementwise_hidden, vjp_exercise

TITLE = "Warm-up: numpy and one backward rule"
answers = answers_of(__name__)    # answers/ch00.py: references and mistakes, used only to judge
_sigmoid = mg.sigmoid.opdef.forward     # the engine's stable sigmoid: exp only ever of -|x| <= 0


def _hidden_relu(rng):
    """One or two rows of 2 to 4 entries, each row with entries of both signs (as in the public
    cases, an answer that keeps x, or takes |x|, fails every one); one row is sent 1-D."""
    rows, size = int(rng.integers(1, 3)), int(rng.integers(2, 5))
    x = rng.normal(0.0, 3.0, (rows, size))
    x[:, 0], x[:, 1] = -np.abs(x[:, 0]) - 0.5, np.abs(x[:, 1]) + 0.5
    x = np.round(rng.permuted(x, axis=1), 4)
    return case(x=(x[0] if rows == 1 else x).tolist())


relu = function_exercise(
    "00.relu", "relu", answers.relu, points=1, no_loops=True,
    cases=[
        case(x=[-2.0, -0.5, 0.0, 1.5, 3.0]),
        case(x=[[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]],
             hint="relu works on arrays of any shape, entry by entry, and keeps the shape."),
        case(x=-7.0, hint="A single number (a 0-d array) is an array too."),
        case(x=[[[0.5], [-0.5]]]),
    ],
    mistakes=answers.RELU_MISTAKES,
    hint=("relu keeps the positive entries and puts 0 everywhere else, entry by entry.",
          "numpy has an elementwise maximum of two arrays (or of an array and a number) that "
          "does every entry at once and keeps the shape; a reduction such as np.max does not."),
    engine=refused(forward_of(mg.relu)), hidden=_hidden_relu)

sigmoid = function_exercise(
    "00.sigmoid", "sigmoid", answers.sigmoid, points=2, raise_on=("over", "invalid"),
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
    mistakes=answers.SIGMOID_MISTAKES,
    hint=("σ(x) = 1 / (1 + exp(-x)) = exp(x) / (1 + exp(x)): each form is safe for one sign of x.",
          "exp(-|x|) never overflows. Write both forms with it, and pick one per entry by the sign "
          "of x."),
    engine=refused(forward_of(mg.sigmoid)), hidden=lambda rng: case(x=random_array(rng, scale=800.0)))

broadcast_shape = value_exercise(
    "00.broadcast_shape", "broadcast_shape", answers.BROADCAST_SHAPE, points=1,
    title="shape of np.ones((3, 1)) + np.ones(4)",
    mistakes=answers.BROADCAST_MISTAKES,
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
    answers.sigmoid_vjp, sigmoid_graph, "loss = sum(σ(σ(x·w)·v))",
    elementwise_cases("A VJP multiplies the local derivative by the upstream gradient g."),
    mistakes=answers.SIGMOID_VJP_MISTAKES,
    hint=("Chain rule: the upstream gradient g times σ'(x), entry by entry.",
          "σ'(x) = σ(x)·(1 − σ(x)), and ans already holds σ(x), so nothing needs recomputing."),
    engine=refused(vjps_of(mg.sigmoid)), hidden=elementwise_hidden)

EXERCISES = [relu, sigmoid, broadcast_shape, sigmoid_vjp]
