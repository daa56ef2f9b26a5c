"""Chapter 00, warm-up: numpy and one backward rule (``solutions/00_warmup.ipynb``).

Three of these exercises need no engine: ``function_exercise`` and ``value_exercise`` do all the
work. The last one, ``sigmoid_vjp``, is the pattern for gradient exercises: ``run`` plugs the
learner's backward rule into the engine as a custom op inside a small graph and sends back every
node's gradient; ``judge`` builds the same graph with the right rule, takes the leaves'
gradients from central differences, and names the first node (walking back from the loss)
whose gradient disagrees.
"""

import numpy as np

import minigraph as mg

from .exercise import (Exercise, Verdict, arrays, case, compare, describe_inputs, function_exercise,
                       value_exercise)
from .values import decode, encode

TITLE = "Warm-up: numpy and one backward rule"


def _relu(x):
    return np.maximum(x, 0.0)


def _sigmoid(x):
    """The stable sigmoid: exp is only ever taken of -|x| <= 0, so it cannot overflow."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


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


# -- a backward rule, checked inside the engine ---------------------------------------------

W_VALUE, V_VALUE = [0.8, -1.2, 0.3], [2.0, -1.0, 0.5]
GRAPH_TEXT = "loss = sum(σ(σ(x·w)·v))"


def _graph(vjp, x_value):
    """loss = sum(σ(σ(x·w)·v)) with ``vjp`` as σ's backward; run backward; return the graph."""
    sig = mg.defop("sigmoid_exercise", _sigmoid, [vjp], symbol="σ")
    x = mg.Input("x")
    w, v = mg.Parameter(W_VALUE, name="w"), mg.Parameter(V_VALUE, name="v")
    s1 = sig(mg.mul(x, w, name="z1"), name="s1")
    s2 = sig(mg.mul(s1, v, name="z2"), name="s2")
    graph = mg.Graph(mg.sum(s2, name="loss"))
    graph.backward({x: x_value})
    return graph


def _learner_graph(answer, x_value):
    """Like ``_graph``, but if the learner's rule raised, re-raise *its* exception (the engine
    wraps it in an OpError, which would hide a NotImplementedError stub)."""
    raised = []

    def vjp(g, ans, x):
        try:
            return answer(g, ans, x)
        except Exception as error:
            raised.append(error)
            raise

    try:
        return _graph(vjp, x_value)
    except mg.GraphError:
        if raised:
            raise raised[0] from None
        raise


def _run_vjp(answer, case):
    if case.get("graph"):
        (x,) = arrays(case)
        graph = _learner_graph(answer, x)
        return {"grads": {n.name: encode(n.grad) for n in graph.nodes if n.grad is not None}}
    g, x = arrays(case)
    return encode(answer(g, _sigmoid(x), x))


def _judge_vjp(case, got):
    if not case.get("graph"):
        g, x = arrays(case)
        s = _sigmoid(x)
        return compare(g * s * (1 - s), decode(got))
    (x_value,) = arrays(case)
    graph = _graph(lambda g, ans, x: g * ans * (1 - ans), x_value)
    expected = {n.name: n.grad for n in graph.nodes if n.grad is not None}
    for leaf in [n for n in graph.nodes if n.op is None and n.name in expected]:
        expected[leaf.name] = mg.gradcheck.numerical_grad(graph, leaf, {"x": x_value})
    grads = got["grads"]
    for node in reversed(graph.nodes):                  # from the loss back to the leaves
        if node.name not in expected:
            continue
        if node.name not in grads:
            return Verdict(False, "a gradient", "none",
                           f"no gradient reached node '{node.name}' (does sigmoid_vjp return?)")
        verdict = compare(expected[node.name], decode(grads[node.name]), rtol=1e-5, atol=1e-7)
        if not verdict.passed:
            return Verdict(False, verdict.expected, verdict.got,
                           f"node '{node.name}' has the wrong gradient, sent back by "
                           f"'{_consumer(graph, node)}': "
                           f"{verdict.message}")
    return Verdict(True, f"{len(expected)} node gradients", "all agree")


def _consumer(graph, node):
    """The op that sends ``node`` its gradient (the first op that uses it)."""
    return next(n.name for n in graph.nodes if node in n.inputs)


def _describe_vjp(case):
    where = f"in the graph {GRAPH_TEXT}, " if case.get("graph") else ""
    return where + describe_inputs(case)


sigmoid_vjp = Exercise(
    "00.sigmoid_vjp", "sigmoid_vjp", points=3, run=_run_vjp, judge=_judge_vjp,
    title="sigmoid_vjp(g, ans, x)", describe=_describe_vjp,
    cases=(
        case(g=[1.0, 1.0, 1.0], x=[-1.0, 0.0, 2.0]),
        case(g=[2.0, -1.0, 0.5], x=[0.5, -0.5, 1.0],
             hint="A VJP multiplies the local derivative by the upstream gradient g."),
        case(g=[[1.0, -2.0], [0.5, 3.0]], x=[[0.0, 1.0], [-1.0, 4.0]]),
        {"graph": True, "inputs": {"x": [-1.5, 0.5, 2.0]}},
    ),
    hint="σ'(x) = σ(x)·(1 − σ(x)), and ans already holds σ(x): return g * ans * (1 - ans).")

EXERCISES = [relu, sigmoid, broadcast_shape, sigmoid_vjp]
