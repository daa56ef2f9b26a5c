"""Chapter 03, backpropagation (``solutions/03_backpropagation.ipynb``).

``03.backward`` asks for the whole algorithm, ``backward(loss, values)``: ``run`` builds a case's
graph from a spec (``toolkit/graphs.py``) with every op's rule wrapped so that it counts its
calls and refuses a call with the wrong arguments (a gradient of another shape than its node's,
another ``ans`` or input values, the node's attributes left out; what it hands back is
read-only), runs a forward pass for ``values``, calls the answer (twice when the case says
``again``, the second time on another feed) while every node's ``.value`` holds another pass's
numbers, refuses an answer that changed the dict ``values``, and sends back the gradients by
node name, every Parameter's ``.grad`` and the counts. The judge (``answers/ch03.py``) compares them with the engine's
``Graph.backward`` on the same graph and names the first node, walking back from the loss,
whose gradient is wrong.

The backward-rule exercises (``tanh_vjp``, ``mul_vjp``, ``matmul_vjp``) are built by
``vjp.vjp_exercise``, like chapter 00's ``sigmoid_vjp``: plain cases call the learner's rule on
given arrays; a graph case plugs it into the engine as a custom op (``mg.defop``) inside a small
network and names the first node, walking back from the loss, whose gradient is wrong, and the
op that sent it. Each graph below uses the op where broadcasting or a batch matters.
"""

from collections.abc import Mapping

import numpy as np

import minigraph as mg

from ..toolkit.answers import answers_of, judges_of
from ..toolkit.engine import refused, vjps_of
from ..toolkit.exercise import Exercise, Rule, arrays, case, describe_inputs, random_array
from ..toolkit.graphs import ancestors, build, formula, stacked_diamonds
from ..toolkit.public import Public, stored_values
from ..toolkit.values import encode, shape_text
from ..toolkit.vjp import chained, elementwise_cases, elementwise_hidden, graph_case, vjp_exercise
from .ch02 import FEEDS, REDUCE, chain

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


# -- 03.backward: the whole algorithm ------------------------------------------------------------

def _as_it_came(g, ans, x, b):
    """bias_add's rule for both inputs: ``g`` as it came, of the output's shape. Summing it back
    to an input's shape is left to ``backward`` (as the statement says: ``mg.unbroadcast``)."""
    return g


# x + b, whose rule hands back the output-shaped gradient (the statement shows it): where
# broadcasting stretched b, only a backward that sums each share back to its node's shape gives
# b the right gradient
bias_add = mg.defop("bias_add", np.add, [_as_it_came, _as_it_came], symbol="+b")

# the public graphs, as specs (``toolkit/graphs.py``); the loss is each one's last row
BACKWARD_GRAPHS = {
    # loss = sum(σ(tanh(x·w)·v))
    "CHAIN": (("x", "input"), ("w", "parameter", [0.5, -1.2, 2.0]), ("v", "parameter", [1.5, 0.3, -0.8]),
              ("h", "mul", "x", "w"), ("t", "tanh", "h"), ("u", "mul", "t", "v"), ("s", "sigmoid", "u"),
              ("loss", "sum", "s")),
    # a feeds d directly and through b and c: the longer way round arrives later
    "DIAMOND": (("x", "input"), ("w", "parameter", [0.8, -0.5]), ("v", "parameter", [2.0, 1.5]),
                ("a", "mul", "x", "w"), ("b", "tanh", "a"), ("c", "mul", "b", "v"), ("d", "add", "a", "c"),
                ("loss", "sum", "d")),
    # one op uses h twice: h·h
    "SQUARE": (("x", "input"), ("w", "parameter", [1.5, -0.5, 0.25]), ("h", "sub", "x", "w"),
               ("s", "mul", "h", "h"), ("loss", "sum", "s")),
    # the weight W is used by two layers
    "SHARED": (("X", "input"), ("W", "parameter", [[0.5, -1.0], [1.2, 0.3]]),
               ("z1", "matmul", "X", "W"), ("h1", "tanh", "z1"), ("z2", "matmul", "h1", "W"),
               ("h2", "sigmoid", "z2"), ("loss", "sum", "h2")),
    # b (2,) is stretched to (3, 2) by bias_add, whose rule does not sum back; k (3, 1) by mul
    "BROADCAST": (("X", "input"), ("W", "parameter", [[0.7, -0.4], [0.2, 1.1]]),
                  ("b", "parameter", [0.5, -1.0]), ("k", "parameter", [[1.0], [-2.0], [0.5]]),
                  ("z", "matmul", "X", "W"), ("y", "bias_add", "z", "b"), ("a", "tanh", "y"),
                  ("m", "mul", "a", "k"), ("loss", "sum", "m")),
    # b (1, 2) and s (a number) stretched by bias_add to (3, 2): summing over axis 0 alone gives s
    # a gradient of shape (2,); b also feeds a product, whose rule sums back itself, so a share
    # added before it is summed back stretches the sum (and b's other share counts 3 times)
    "BIASES": (("X", "input"), ("W", "parameter", [[0.6, -0.3], [0.9, 0.4]]),
               ("b", "parameter", [[0.2, -0.7]]), ("s", "parameter", 0.4),
               ("z", "matmul", "X", "W"), ("y", "bias_add", "z", "b"), ("a", "tanh", "y"),
               ("u", "bias_add", "a", "s"), ("m", "mul", "u", "b"), ("loss", "sum", "m")),
    # sums over one axis: their rules need the node's attributes
    "REDUCE": REDUCE[:-1] + (("loss", "sum", "m"),),
    # an Input of integers (as class labels are), Constants, and an op of Constants only
    "CONSTANTS": (("x", "input", "int"), ("w", "parameter", [0.3, -1.0, 0.7]),
                  ("t", "constant", [1.0, 0.0, -1.0]), ("two", "constant", 2.0), ("half", "constant", 0.5),
                  ("h", "mul", "x", "w"), ("e", "sub", "h", "t"), ("q", "mul", "e", "e"),
                  ("four", "mul", "two", "two"), ("r", "mul", "q", "four"), ("s", "sum", "r"),
                  ("loss", "mul", "s", "half")),
}
BACKWARD_FEEDS = {"CHAIN": {"x": [1.0, 0.5, -0.3]}, "DIAMOND": {"x": [0.5, -1.5]},
                  "SQUARE": {"x": [1.0, 2.0, -1.0]}, "SHARED": {"X": [[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]]},
                  "BROADCAST": {"X": [[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]]},
                  "BIASES": {"X": [[1.0, -0.5], [0.3, 0.8], [-1.2, 0.1]]}, "REDUCE": FEEDS["REDUCE"],
                  "CONSTANTS": {"x": [1, -2, 3]}, "deep": {"x": [0.5, -1.0]},
                  "diamonds": {"x": [0.3, -0.2]}}
# ops in the deep chain: a recursive walk is within Python's recursion limit (1,000 calls deep)
# even when it recurses inside a list comprehension, two calls per node on Python 3.11
DEEP = 300
STALE = 0.25         # each Parameter's .grad before the first call, as an earlier pass left it


def backward_spec(case):
    """The case's graph as a spec whose last row is the loss."""
    if "spec" in case:                           # a hidden case's random graph
        return case["spec"]
    graph = case["graph"]
    if graph == "deep":
        return chain(DEEP) + (("loss", "sum", f"t{DEEP}"),)
    if graph == "diamonds":
        return stacked_diamonds(8) + (("loss", "sum", "out"),)
    return BACKWARD_GRAPHS[graph]


def backward_feed(case):
    return case.get("feed") or BACKWARD_FEEDS[case["graph"]]


def other_feed(feed):
    """A feed of the same shapes and dtypes with other numbers (integers stay integers)."""
    def other(value):
        value = np.asarray(value)
        return (1 - value).tolist() if value.dtype.kind in "iu" else np.round(0.3 - 0.8 * value, 6).tolist()
    return {name: other(value) for name, value in feed.items()}


def backward_feeds(case):
    """The feed of each call: one, or two with other numbers when the case calls backward twice
    (a second call on the same values would not show gradients kept from the first)."""
    feed = backward_feed(case)
    return [feed, other_feed(feed)] if case.get("again") else [feed]


def engine_op(name, what, inputs, attrs):
    """An op node of a spec made with the engine's own op; bias_add is the engine's add (the
    same forward, with rules that sum back): ``graphs.build(spec, engine_op)``."""
    return getattr(mg, "add" if what == "bias_add" else what)(*inputs, name=name, **attrs)


def opdef_of(what):
    """The op table's row for a spec's op name."""
    return bias_add.opdef if what == "bias_add" else getattr(mg, what).opdef


def _counted(counts, current):
    """``make_op`` for ``graphs.build``: each op with its rules wrapped, so that every call is
    counted in ``counts`` ("node:k" -> calls) and refused when its arguments are not the node's
    values in ``current`` (``{node: value}`` of the call under way). What a rule hands back is
    read-only, as in the engine: a share may be the very array of the gradient it was given."""

    def make_op(name, what, inputs, attrs):
        base, made = opdef_of(what), []

        def rule(k):
            def vjp(g, ans, *args, **given):
                node = made[0]
                _check_call(node, g, ans, args, given, current)
                counts[f"{node.name}:{k}"] = counts.get(f"{node.name}:{k}", 0) + 1
                return mg.yours.read_only(base.vjps[k](g, ans, *args, **given))
            return vjp

        op = mg.defop(base.name, base.forward, [rule(k) for k in range(len(inputs))], base.symbol)
        made.append(op(*inputs, name=name, **attrs))
        return made[0]

    return make_op


STALE_VALUE = ("did backward read node.value? It holds the value of another forward pass (the last "
               "one run), not this call's: read every value from the dict values, by its node")


def _check_call(node, g, ans, args, given, current):
    """Refuse (``Rule``) a call of ``node``'s rule whose arguments are not the node's: its
    gradient, its value, its inputs' values (``current``), its attributes."""
    what = f"the rule of '{node.name}' ({node.op.name})"
    if node.attrs and not given and len(args) == len(node.inputs):
        settings = ", ".join(f"{key}={value!r}" for key, value in node.attrs.items())
        raise Rule(f"{what} was called without the node's attributes ({settings}): a rule takes "
                   "them as keywords after the input values, and node.attrs holds them")
    if len(args) < len(node.inputs):
        raise Rule(f"{what} was given {len(args)} input value(s), but '{node.name}' has "
                   f"{len(node.inputs)} inputs: after g and ans come the values of all its inputs")
    value = current[node]
    if np.shape(g) != np.shape(value):
        if np.size(g) < np.size(value) and not np.any(g):
            raise Rule(f"{what} was called with g = 0 of {shape_text(g)}: no gradient had reached "
                       f"'{node.name}' yet. Visit the nodes from the loss back (reverse topological "
                       "order), so that every consumer has sent its share first")
        raise Rule(f"{what} was handed a gradient of {shape_text(g)}, but '{node.name}' has "
                   f"{shape_text(value)}: a gradient has its node's shape. Where broadcasting "
                   "stretched an input, sum the gradient back to the input's shape (mg.unbroadcast)")
    if not np.array_equal(ans, value):
        stale = ans is None or np.array_equal(ans, node.value)
        raise Rule(f"{what} was given, as ans, something other than this call's value of "
                   f"'{node.name}': " + (STALE_VALUE if stale else
                                         "ans is the op's own output, the node's own entry in values"))
    for parent, arg in zip(node.inputs, args):
        if not np.array_equal(arg, current[parent]):
            stale = arg is None or np.array_equal(arg, parent.value)
            raise Rule(f"{what} was given, for its input '{parent.name}', another value than this "
                       "call's: " + (STALE_VALUE if stale else "after g and ans come the values of "
                                     "the node's inputs, in the order of node.inputs"))


def _named(grads, graph):
    """The answer's ``{node: grad}`` as ``{name: encoded grad}``; ``Rule`` if it is not that."""
    if grads is None:
        raise Rule("backward returned None: did you forget `return`? It returns the dict of gradients")
    if not isinstance(grads, Mapping):
        raise Rule(f"backward returned a {type(grads).__name__}, not a dict {{node: gradient}}")
    ours = set(graph.nodes)
    for key in grads:
        if isinstance(key, str):
            raise Rule(f"grads is keyed by names ('{key}'): key it by the nodes themselves, as values is")
        if not isinstance(key, mg.Node):
            raise Rule(f"grads holds a key of type {type(key).__name__}: its keys are the graph's nodes")
        if key not in ours:
            raise Rule(f"grads holds a node '{key.name}' of another graph (not the loss or a node "
                       "it depends on): is it a dict kept from an earlier call? A default argument "
                       "(grads={}) is made once, when def runs, and every call shares it")
    return {node.name: encode(value) for node, value in grads.items()}


def _untouched(given, values):
    """Refuse (``Rule``) an answer that changed the caller's dict ``values`` (``given``, as it is now)."""
    for node, value in values.items():
        if node not in given:
            raise Rule(f"backward deleted the entry of '{node.name}' from values: values belongs to "
                       "the caller, who still needs it after backward returns (your engine's next "
                       "piece reads it); read it, never change it")
        if given[node] is not value:
            raise Rule(f"backward replaced the entry of '{node.name}' in values: values belongs to "
                       "the caller; keep what you compute in a dict of your own")


def _one_call(answer, loss, graph, current, counts):
    """The answer called once on ``current`` (``{node: value}``), its results as JSON."""
    counts.clear()
    values = {node: mg.yours.read_only(value) for node, value in current.items()}
    given = dict(values)
    try:
        grads = answer(loss, given)
    except KeyError as error:
        node = error.args[0] if error.args else None
        if not isinstance(node, mg.Node):
            raise
        _untouched(given, values)
        raise Rule(f"backward looked up the gradient of '{node.name}' before any had reached it: "
                   "visit the nodes from the loss back (reverse topological order), so that every "
                   "op that uses a node has sent its share first") from None
    except (ValueError, TypeError) as error:
        integers = [node.name for node, value in current.items() if np.asarray(value).dtype.kind in "iu"]
        message = mg.yours.in_place_trouble(error, "backward", (integers or [None])[0])
        if message is None:
            raise
        raise Rule(message) from None
    _untouched(given, values)
    return {"grads": _named(grads, graph), "params": {p.name: encode(p.grad) for p in graph.parameters},
            "counts": dict(counts)}


def _run_backward(answer, case):
    """Each call of the case on its own values; meanwhile every node's ``.value`` holds another
    forward pass's (the other call's, or another feed's), as in an engine that has run since."""
    counts, current = {}, {}
    spec = backward_spec(case)
    nodes = build(spec, _counted(counts, current))
    loss = nodes[spec[-1][0]]
    graph = mg.Graph(loss)
    for p in graph.parameters:                   # as an earlier backward pass would leave them
        p.grad = np.full(np.shape(p.value), STALE)
    feeds, calls = backward_feeds(case), []
    for index, feed in enumerate(feeds):
        graph.forward(feed)
        current.clear()
        current.update({node: np.array(node.value) for node in graph.nodes})
        graph.forward(feeds[index - 1] if len(feeds) > 1 else other_feed(feed))
        calls.append(_one_call(answer, loss, graph, current, counts))
    return {"calls": calls}


def _shapes(spec, case):
    """``x (3,), W (2, 2)``: the shapes of the leaves of a hidden case."""
    feed = backward_feed(case)
    above = set(ancestors(spec, spec[-1][0]))
    leaves = {name: (feed.get(name) if what == "input" else args[0])
              for name, what, *args in spec if what in ("input", "parameter", "constant") and name in above}
    return ", ".join(f"{name} {tuple(np.shape(value))}" for name, value in leaves.items() if value is not None)


BACKWARD_TEXTS = {
    "CHAIN": "a chain: loss = sum(σ(tanh(x·w)·v))",
    "DIAMOND": "a diamond: a = x·w, b = tanh(a), c = b·v, d = a + c, loss = sum(d)",
    "SQUARE": "one op uses h twice: h = x − w, s = h·h, loss = sum(s)",
    "SHARED": "W in two layers: h1 = tanh(X@W), h2 = σ(h1@W), loss = sum(h2)",
    "BROADCAST": "broadcasting: y = bias_add(X@W, b), b (2,); m = tanh(y)·k, k (3, 1); loss = sum(m)",
    "BIASES": "broadcasting, a shared bias: y = bias_add(X@W, b), b (1, 2); u = bias_add(tanh(y), s), "
              "s a number; loss = sum(u·b)",
    "REDUCE": "attributes: a = x·w, s = sum(a, axis=0), k = sum(a, axis=1, keepdims=True), "
              "loss = sum(k·tanh(s))",
    "CONSTANTS": "x an Input of integers; Constants t, two, half; four = two·two; "
                 "loss = sum((x·w − t)²·four)·half",
    "deep": f"a chain of {DEEP} tanh ops: t1 = tanh(x), …, loss = sum(t{DEEP})",
    "diamonds": "8 stacked diamonds: p1=tanh(h0), q1=σ(h0), h1=p1+q1, …, loss = sum(h8·x)",
}


def _describe_backward(case):
    if "spec" in case:
        text = f"random graph: {formula(case['spec'], 'loss')}; {_shapes(case['spec'], case)}"
    else:
        text = BACKWARD_TEXTS[case["graph"]]
    return text + ("; called twice, with other values the second time" if case.get("again") else "")


def random_backward_case(rng):
    """A hidden case: a random graph of 5 to 10 ops on an Input X (n, m) of integers, an Input y
    (m,), a Parameter W (m, m) for matmuls (shared when used twice), a Parameter b of (m,) or
    (1, m), a Parameter s (a number), a Constant c, each op on earlier nodes, mostly recent ones
    (diamonds; the same node twice in one op); broadcasting (bias_add among them: it always adds
    s, which also feeds s·s), sums over an axis; the ops nothing uses are added up, so that every
    op reaches the loss, and loss = sum of that. Every case calls backward twice, with other
    values the second time."""
    n, m = int(rng.integers(1, 4)), int(rng.integers(2, 5))

    def drawn(shape, scale=1.0):
        return np.round(rng.normal(0.0, scale, shape), 4).tolist()

    b_shape = (m,) if rng.random() < 0.5 else (1, m)
    spec = [["X", "input", "int"], ["y", "input"], ["W", "parameter", drawn((m, m), 0.7)],
            ["b", "parameter", drawn(b_shape)],
            ["s", "parameter", round(float(rng.choice([-1, 1]) * rng.uniform(0.3, 1.5)), 4)],
            ["c", "constant", drawn((m,)) if rng.random() < 0.5 else round(float(rng.normal()), 4)]]
    leaves = len(spec)
    shapes = {"X": (n, m), "y": (m,), "W": (m, m), "b": b_shape, "s": (), "c": np.shape(spec[-1][2])}
    first = "matmul" if rng.random() < 0.5 else "bias_add"
    spec += [["h1", first, "X", "W" if first == "matmul" else "b"], ["h2", "bias_add", "h1", "s"]]
    shapes["h1"] = shapes["h2"] = (n, m)
    ops = ["add", "sub", "mul", "tanh", "sigmoid", "matmul", "bias_add", "sum"]
    for k in range(3, int(rng.integers(6, 12))):
        earlier = [row[0] for row in spec if row[0] not in ("W", "s")]

        def recent():
            return earlier[-1 - min(int(rng.geometric(0.35)) - 1, len(earlier) - 1)]

        what, name = str(rng.choice(ops, p=[0.12, 0.1, 0.16, 0.1, 0.1, 0.12, 0.14, 0.16])), f"h{k}"
        if what in ("matmul", "bias_add"):
            wide = [e for e in earlier if len(shapes[e]) == 2 and shapes[e][-1] == m]
            left = wide[-1 - min(int(rng.geometric(0.5)) - 1, len(wide) - 1)]
            row = [name, what, left, "W" if what == "matmul" else str(rng.choice(["b", "y", "c"]))]
            shape = shapes[left] if what == "matmul" else np.broadcast_shapes(shapes[left], shapes[row[3]])
            if what == "bias_add" and shape != shapes[left]:
                row[2:] = row[3], row[2]          # the wider one first
        elif what in ("tanh", "sigmoid"):
            row = [name, what, recent()]
            shape = shapes[row[2]]
        elif what == "sum":
            source = recent()
            attrs = ({} if not shapes[source] else
                     [{"axis": 0}, {"axis": -1, "keepdims": True}][int(rng.integers(0, 2))])
            row = [name, what, source, attrs] if attrs else [name, what, source]
            shape = np.sum(np.zeros(shapes[source]), **attrs).shape
        else:
            left = recent()
            right = left if rng.random() < 0.2 else recent()
            row = [name, what, left, right]
            shape = np.broadcast_shapes(shapes[left], shapes[right])
        spec.append(row)
        shapes[name] = tuple(shape)
    spec.append(["ss", "mul", "s", "s"])          # s gets a share of its own shape too
    used = {name for row in spec[leaves:] for name in row[2:] if isinstance(name, str)}
    ends = [row[0] for row in spec[leaves:] if row[0] not in used]     # ops nothing uses yet
    total = ends[0]
    for k, end in enumerate(ends[1:], start=1):                   # so every op reaches the loss
        spec.append([f"out{k}", "add", total, end])
        total = f"out{k}"
    spec.append(["loss", "sum", total])
    above = set(ancestors(spec, "loss"))
    feed = {"X": rng.integers(-3, 4, (n, m)).tolist(), **({"y": drawn((m,))} if "y" in above else {})}
    return {"spec": spec, "feed": feed, "again": True}


backward = Exercise(
    "03.backward", "backward", 4,
    ({"graph": "CHAIN"},
     {"graph": "DIAMOND",
      "hint": "a feeds two ops: its gradient is complete only when both have sent their share."},
     {"graph": "SQUARE", "hint": "h·h sends h two gradients, one for each input position: add both."},
     {"graph": "SHARED"},
     {"graph": "BROADCAST",
      "hint": ("bias_add's rule hands back a gradient of its output's shape for both inputs.",
               "b has shape (2,); what arrives for it has shape (3, 2): sum it back to b's shape "
               "before adding it to b's gradient.")},
     {"graph": "BIASES",
      "hint": ("b (1, 2) and s (a number) were stretched to (3, 2): sum each share back to its "
               "node's own shape, whatever broadcasting did.",
               "mg.unbroadcast(share, shape) sums over every axis broadcasting added or stretched; "
               "b also gets a share from the product, so sum each share back before adding it.")},
     {"graph": "REDUCE", "hint": "A sum over one axis has attributes (axis, keepdims): its rule needs them too."},
     {"graph": "CONSTANTS",
      "hint": "x holds integers, but its gradient is floats: a gradient never takes its value's dtype."},
     {"graph": "SHARED", "again": True,
      "hint": "A second call, with other values, must give their gradients: nothing may outlive a call."},
     {"graph": "diamonds",
      "hint": "Every h feeds two ops: visit each node once, after all its consumers."},
     {"graph": "deep"}),
    _run_backward, answers.judge_backward, title="backward(loss, values)",
    describe=_describe_backward, hidden=random_backward_case,
    public=Public(judges.judge_backward, fresh=True),
    engine=refused({"mg.Graph.backward": "backward pass", "mg.fastpath.FastPath.run": "backward pass",
                    "mg.grad": "backward pass (as a graph)",
                    "mg.gradcheck.numerical_grad": "numerical gradient"},
                   advice="call each op's rule yourself, node by node"),
    hint=("Start from the seed at the loss, visit the nodes from the loss back to the leaves, and "
          "let each op send a gradient to each of its inputs.",
          "Reverse topological order: a node's gradient is complete only when every op that uses "
          "it has sent its share, and the shares add up. Each share is summed back to its "
          "node's shape, and every Parameter's .grad is set to its gradient."))


EXERCISES = [tanh_vjp, mul_vjp, matmul_vjp, hand_backprop, backward, central_difference]

