"""Chapter 03, backpropagation (``solutions/03_backpropagation.ipynb``).

The backward-rule exercises (``tanh_vjp``, ``mul_vjp``, ``matmul_vjp``) are built by
``vjp.vjp_exercise``, like chapter 00's ``sigmoid_vjp``: plain cases call the learner's rule on
given arrays; a graph case plugs it into the engine as a custom op (``mg.defop``) inside a small
network and names the first node, walking back from the loss, whose gradient is wrong, and the
op that sent it. Each graph below uses the op where broadcasting or a batch matters.
"""

import numpy as np

import minigraph as mg

from ..toolkit.answers import answers_of, judges_of
from ..toolkit.engine import refused, vjps_of
from ..toolkit.exercise import Exercise, Rule, arrays, case, describe_inputs, random_array
from ..toolkit.public import Public, stored_values
from ..toolkit.values import encode
from ..toolkit.vjp import chained, elementwise_cases, elementwise_hidden, graph_case, vjp_exercise

TITLE = "Backpropagation"
answers = answers_of(__name__)    # answers/ch03.py: reference rules, judges and mistakes
judges = judges_of(__name__)      # judges/ch03.py: the judges that hold no answer


# -- 03.tanh_vjp ------------------------------------------------------------------------------

def tanh_graph(rules):
    """loss = sum(tanh(tanh(x * w) * v)), both tanh nodes using the rule being checked."""
    tanh_op = mg.defop("tanh_exercise", np.tanh, rules, symbol="tanh")
    return chained(tanh_op, [0.9, -1.3, 0.4], [1.5, 0.7, -2.0], "t")


tanh_vjp = vjp_exercise(
    "03.tanh_vjp", "tanh_vjp", 2, "tanh_vjp(g, ans, x)", np.tanh,
    answers.tanh_vjp, tanh_graph, "loss = sum(tanh(tanh(x·w)·v))",
    elementwise_cases("The upstream gradient g multiplies the local derivative, entry by entry."),
    mistakes=answers.TANH_MISTAKES,
    hint=("Chain rule: the upstream gradient g times tanh'(x), entry by entry.",
          "tanh'(x) = 1 − tanh(x)², and ans already holds tanh(x)."),
    engine=refused(vjps_of(mg.tanh)), hidden=elementwise_hidden)


# -- 03.mul_vjp (with broadcasting) -------------------------------------------------------------

def mul_graph(rules):
    """loss = sum(tanh(X * w) * k): X (3, 2) times w (2,), then times k (3, 1): both broadcast."""
    mul = mg.defop("mul_exercise", np.multiply, rules, symbol="×")
    X = mg.Input("X")
    w = mg.Parameter([0.7, -1.1], name="w")
    k = mg.Parameter([[0.5], [-1.5], [2.0]], name="k")
    h = mg.tanh(mul(X, w, name="Xw"), name="h")
    return mg.Graph(mg.sum(mul(h, k, name="hk"), name="loss"))


def _hidden_mul(rng):
    """g of a random shape (1 or 2 axes of 1 to 4 entries); x and y each of that shape or of
    one that broadcasts to it (some axes of size 1, some leading axes dropped)."""
    shape = [int(k) for k in rng.integers(1, 5, size=int(rng.integers(1, 3)))]

    def broadcasting():
        kept = [1 if rng.random() < 0.4 else k for k in shape]
        return tuple(kept[int(rng.integers(0, len(kept))) if rng.random() < 0.4 else 0:])

    return case(g=random_array(rng, scale=2.0, shape=tuple(shape)),
                x=random_array(rng, shape=broadcasting()), y=random_array(rng, shape=broadcasting()))


mul_vjp = vjp_exercise(
    "03.mul_vjp", "mul_vjp", 3, "mul_vjp(g, ans, x, y) -> (grad_x, grad_y)", np.multiply,
    answers.mul_vjp, mul_graph, "loss = sum(tanh(X·w)·k), w (2,), k (3, 1)",
    cases=[
        case(g=[1.0, 1.0, 1.0], x=[1.0, -2.0, 3.0], y=[0.5, 4.0, -1.0]),
        case(g=[2.0, -1.0], x=[3.0, 5.0], y=[-2.0, 0.5],
             hint="Each gradient is g times the *other* input."),
        case(g=[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], x=[[1.0, 0.0], [2.0, -1.0], [0.5, 3.0]],
             y=[2.0, -3.0],
             hint=("y has shape (2,) but was stretched to (3, 2) in the forward pass: its gradient "
                   "must come back with shape (2,).",
                   "Each entry of y was used in 3 products, so its gradient is the sum of 3 "
                   "contributions: mg.unbroadcast sums a gradient back to a given shape.")),
        case(g=[[1.0, -1.0, 2.0], [0.5, 0.0, 1.0]], x=[[2.0], [-1.0]], y=[[1.0, 3.0, -2.0]],
             hint="Here both inputs were stretched: x from (2, 1), y from (1, 3). Sum each "
                  "gradient back to its own input's shape."),
        graph_case(X=[[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]]),
    ],
    mistakes=answers.MUL_MISTAKES,
    hint=("Each input's gradient is g times the other input, then brought back to its own shape.",
          "Where broadcasting stretched an input, sum its gradient over the stretched axes "
          "(mg.unbroadcast, given the input's shape)."),
    engine=refused(vjps_of(mg.mul)), hidden=_hidden_mul)


# -- 03.matmul_vjp ------------------------------------------------------------------------------

def matmul_graph(rules):
    """loss = sum(tanh(tanh(X @ W1) @ W2)): a two-layer network without biases."""
    matmul = mg.defop("matmul_exercise", np.matmul, rules, symbol="@")
    X = mg.Input("X")
    W1 = mg.Parameter([[0.5, -1.0, 0.8], [1.2, 0.3, -0.6]], name="W1")
    W2 = mg.Parameter([[1.0], [-0.7], [0.4]], name="W2")
    h = mg.tanh(matmul(X, W1, name="XW1"), name="h")
    out = mg.tanh(matmul(h, W2, name="hW2"), name="out")
    return mg.Graph(mg.sum(out, name="loss"))


def _hidden_matmul(rng):
    """x (n, k), W (k, m) and g (n, m), n, k and m each from 1 to 4."""
    n, k, m = (int(size) for size in rng.integers(1, 5, size=3))
    return case(g=random_array(rng, scale=2.0, shape=(n, m)), x=random_array(rng, shape=(n, k)),
                W=random_array(rng, scale=1.0, shape=(k, m)))


matmul_vjp = vjp_exercise(
    "03.matmul_vjp", "matmul_vjp", 3, "matmul_vjp(g, ans, x, W) -> (grad_x, grad_W)", np.matmul,
    answers.matmul_vjp, matmul_graph,
    "loss = sum(tanh(tanh(X@W1)@W2))",
    cases=[
        case(g=[[1.0]], x=[[2.0, -1.0]], W=[[3.0], [0.5]]),
        case(g=[[1.0, -1.0], [2.0, 0.5]], x=[[1.0, 2.0, 3.0], [0.0, -1.0, 1.0]],
             W=[[1.0, 0.0], [2.0, -1.0], [0.5, 0.5]],
             hint="Check the shapes: grad_x must be (2, 3) like x, grad_W (3, 2) like W. "
                  "Only one way of multiplying g with W (or x) gives each shape."),
        case(g=[[1.0], [2.0], [-1.0], [0.5]], x=[[1.0, -1.0], [0.5, 2.0], [3.0, 0.0], [-2.0, 1.0]],
             W=[[0.3], [-0.8]],
             hint="With a batch of 4 rows, grad_W sums the contributions of all rows: the "
                  "matrix product of the right shape does that sum for you."),
        graph_case(X=[[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8], [1.0, 1.0]]),
    ],
    mistakes=answers.MATMUL_MISTAKES,
    hint=("Each gradient has its input's shape: only one product of g with the other matrix "
          "(or its transpose) gives it.",
          "For x (n, k) the product is g (n, m) times something (m, k); for W (k, m) it is "
          "something (k, n) times g. The batch is summed by that product."),
    engine=refused(vjps_of(mg.matmul)), hidden=_hidden_matmul)


# -- 03.hand_backprop -----------------------------------------------------------------------

HAND_FEED = {"x": 2.0, "w": -1.0, "b": 3.0}
HAND_ORDER = ["L", "c", "a", "b", "w", "x"]          # from the loss back to the leaves
HAND_HINTS = {
    "L": "The gradient of the loss with respect to itself is the seed.",
    "c": "L = c · a, so dL/dc is the *other* factor, a.",
    "a": "a has two consumers: L = c · a uses it directly, and c = a + b uses it too. Add both "
         "contributions.",
    "b": "c = a + b passes its gradient to b unchanged.",
    "w": "a = w · x, so dL/dw = dL/da · x.",
    "x": "a = w · x, so dL/dx = dL/da · w.",
}


def hand_graph():
    """The graph of the hand-backprop exercise: a = w·x, c = a + b, L = c·a."""
    x = mg.Input("x")
    w, b = mg.Parameter(HAND_FEED["w"], name="w"), mg.Parameter(HAND_FEED["b"], name="b")
    a = mg.mul(w, x, name="a")
    c = mg.add(a, b, name="c")
    return mg.Graph(mg.mul(c, a, name="L"))


def _run_hand(answer, case):
    if not isinstance(answer, dict):
        raise TypeError(f"hand_grads must be a dict {{node name: gradient}}, not {type(answer).__name__}")
    return {str(k): encode(v) for k, v in answer.items()}


hand_backprop = Exercise(
    "03.hand_backprop", "hand_grads", 2, ({"inputs": {}},), _run_hand, judges.judge_hand,
    public=Public(judges.judge_hand),
    title="hand_grads: dL/d(node) for L = (w·x + b)·(w·x)",
    hint=("Walk from L back to the leaves, one node at a time.",
          "Where a node feeds two ops, its gradient is the sum of what both ops send back."),
    describe=lambda case: "x = 2, w = −1, b = 3")


# -- 03.central_difference --------------------------------------------------------------------

FUNCTIONS = {                    # their derivatives are in answers/ch03.py
    "sum(x³)": lambda x: np.sum(x ** 3),
    "sum(sin(x)·x)": lambda x: np.sum(np.sin(x) * x),
    "x[0]·x[1]": lambda x: x.flat[0] * x.flat[1],
    "log(sum(exp(x)))": lambda x: np.log(np.sum(np.exp(x))),
}


def _run_central(answer, case):
    f = FUNCTIONS[case["f"]]
    (x,) = arrays(case)
    original = x.copy()
    out = answer(f, x)
    if not np.array_equal(x, original):
        raise Rule("central_difference changed x in place and left it changed; bump copies of x "
                   "instead, so the caller's x stays as it was")
    return encode(out)


def _hidden_central(rng):
    """One of the functions, at an x of 2 to 5 entries (1-D, or two rows)."""
    shape = (int(rng.integers(2, 6)),) if rng.random() < 0.5 else (2, int(rng.integers(1, 4)))
    return {"f": str(rng.choice(list(FUNCTIONS))), "inputs": {"x": random_array(rng, scale=1.5, shape=shape)}}


central_difference = Exercise(
    "03.central_difference", "central_difference", 2,
    (
        {"f": "sum(x³)", "inputs": {"x": [1.0, -2.0, 0.5]}},
        {"f": "sum(sin(x)·x)", "inputs": {"x": [0.3, 2.0, -1.0, 4.0]}},
        {"f": "x[0]·x[1]", "inputs": {"x": [3.0, -2.0, 7.0]},
         "hint": "Bump one entry at a time and leave the others where they are."},
        {"f": "log(sum(exp(x)))", "inputs": {"x": [[1.0, 2.0], [0.0, -1.0]]},
         "hint": "x can have any shape: np.ndindex walks over every index of an array of any "
                 "shape, and the result has x's shape."},
    ),
    _run_central, answers.judge_central, title="central_difference(f, x, eps=1e-6)",
    hint=("Central: one step of eps on each side of x, along one entry at a time.",
          "For entry i: bump a copy of x up by eps and another down by eps (entry i only), and "
          "divide the difference of f by the distance between the two points."),
    describe=lambda case: f"f(x) = {case['f']}, {describe_inputs(case)}", hidden=_hidden_central,
    expected=lambda case: encode(answers.DERIVATIVES[case["f"]](*arrays(case))),
    public=stored_values("03.central_difference", rtol=1e-6, atol=1e-8))


EXERCISES = [tanh_vjp, mul_vjp, matmul_vjp, hand_backprop, central_difference]
