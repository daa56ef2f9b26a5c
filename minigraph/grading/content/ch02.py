"""Chapter 02, running a graph (``solutions/02_running_a_graph.ipynb``).

Every exercise walks a small graph given as a spec (``toolkit/graphs.py``): the learner's kernel builds
it with fixed node names and sends back names; the grader rebuilds the spec and judges. An order
is judged by its properties (every node after its inputs, every ancestor exactly once), never
against one particular order. As in ``ch01``, ``run`` builds graphs with the learner's own copy
of the engine (``engine_for``).
"""

import numpy as np

import minigraph as mg

from ..toolkit.answers import judges_of
from ..toolkit.engine import refused
from ..toolkit.exercise import Exercise, Rule, random_array
from ..toolkit.graphs import (BRANCHES, SHARED, a_kind, ancestors, build, formula, names_of, random_spec,
                              stacked_diamonds, WALKING_YOURSELF)
from ..toolkit.public import Public
from ..toolkit.values import encode

TITLE = "Running a graph"
judges = judges_of(__name__)      # judges/ch02.py: by properties, and by the engine's Graph.forward

DIAMOND = (
    ("x", "input"), ("tanh_1", "tanh", "x"), ("exp_1", "exp", "x"),
    ("mul_2", "mul", "tanh_1", "exp_1"),
)


# Ops with attributes, and broadcasting on both sides of a product:
#   a = x·w (2, 3),  s = sum(a, axis=0) (3,),  t = tanh(s),  k = sum(a, axis=1, keepdims) (2, 1),
#   m = k·t (2, 3),  out = sum(m)
REDUCE = (
    ("x", "input"), ("w", "parameter", [0.5, -1.0, 1.5]), ("a", "mul", "x", "w"),
    ("s", "sum", "a", {"axis": 0}), ("t", "tanh", "s"),
    ("k", "sum", "a", {"axis": 1, "keepdims": True}), ("m", "mul", "k", "t"), ("out", "sum", "m"),
)


def chain(n):
    """x -> t1 = tanh(x) -> t2 = tanh(t1) -> ... -> t{n}."""
    return tuple([("x", "input")] + [(f"t{k}", "tanh", f"t{k - 1}" if k > 1 else "x")
                                     for k in range(1, n + 1)])


def spec_of(case):
    if "spec" in case:                   # a hidden case's random graph (graphs.random_spec)
        return case["spec"]
    graph = case["graph"]
    if graph.startswith("diamonds"):
        return stacked_diamonds(int(graph[len("diamonds"):]))
    if graph.startswith("chain"):
        return chain(int(graph[len("chain"):]))
    return {"DIAMOND": DIAMOND, "SHARED": SHARED, "BRANCHES": BRANCHES, "REDUCE": REDUCE}[graph]


def random_case(rng, **more):
    """A hidden case: a random graph (``random_spec``), its last op as the output."""
    return {"graph": "random", "spec": random_spec(rng), **more}


def _hidden_topo(rng):
    """A hidden case of a walk: a random graph, a third of the time with a chain of 1,100 to
    1,600 tanh ops on top of its last op (deeper than Python's recursion limit of 1,000)."""
    drawn = random_case(rng)
    if rng.random() < 1 / 3:
        below = drawn["spec"][-1][0]
        for k in range(1, int(rng.integers(1100, 1601))):
            drawn["spec"].append([f"t{k}", "tanh", below])
            below = f"t{k}"
    return drawn


def output_of(case):
    return case.get("output") or spec_of(case)[-1][0]


def describe(case):
    graph = case["graph"]
    chained = sum(row[0].startswith("t") for row in case.get("spec", ()))
    if chained:
        below = next(row[2] for row in case["spec"] if row[0] == "t1")
        return (f"a chain of {chained:,} tanh ops (t1 = tanh({below}), t2 = tanh(t1), …) on: "
                f"{formula(case['spec'], below)}")
    if graph.startswith("chain"):
        return f"a chain of {int(graph[5:]):,} tanh ops: t1 = tanh(x), t2 = tanh(t1), …"
    if graph.startswith("diamonds"):
        return f"{graph[8:]} stacked diamonds: p1=tanh(h0), q1=σ(h0), h1=p1+q1, …, out=h{graph[8:]}·x"
    text = formula(spec_of(case), output_of(case))
    return text + (f"; changed: {case['changed']}" if "changed" in case else "")


def _run_walk(answer, case, *extra):
    """Build the case's graph, call ``answer(output, *extra)``, send back the names."""
    nodes = build(spec_of(case))
    args = [nodes[e] for e in extra]
    names, problem = names_of(answer(nodes[output_of(case)], *args))
    return {"problem": problem} if problem else {"names": names}


# -- 02.topo_sort ---------------------------------------------------------------------------------

TOPO_CASES = (
    {"graph": "DIAMOND", "hint": "x feeds both tanh_1 and exp_1: put it in the order once, "
                                 "before both."},
    {"graph": "SHARED"},
    {"graph": "BRANCHES"},
    {"graph": "SHARED", "output": "d", "hint": "Only d and its ancestors: e, f and out do not "
                                               "belong in d's order."},
    {"graph": "REDUCE"},
    {"graph": "diamonds6"},
    {"graph": "chain5000",
     "hint": "5,000 nested calls exceed Python's recursion limit: keep the nodes still to visit "
             "on a list of your own (an explicit stack), or use Kahn's algorithm."},
)

topo_sort = Exercise(
    "02.topo_sort", "topo_sort", points=3, run=_run_walk, judge=judges.judge_topo,
    public=Public(judges.judge_topo, fresh=True),
    title="topo_sort(output)", describe=describe, cases=TOPO_CASES, engine=WALKING_YOURSELF,
    hidden=_hidden_topo,
    hint=("Post-order: a node goes into the order only after all its inputs are in it.",
          "Keep a set of placed nodes, so a node shared by several ops is placed once, and keep "
          "the nodes still to visit on a stack of your own instead of recursing."))


# -- 02.waves (Kahn's algorithm, one wave at a time) -------------------------------------------

def _run_waves(answer, case):
    nodes = build(spec_of(case))
    result = answer(nodes[output_of(case)])
    if isinstance(result, (mg.Node, str)) or result is None or not hasattr(result, "__len__"):
        return {"problem": f"a {type(result).__name__}, not a list of waves"}
    waves = []
    for wave in result:
        names, problem = names_of(wave)
        if problem:
            return {"problem": "a wave that is " + problem}
        waves.append(names)
    return {"waves": waves}


waves = Exercise(
    "02.waves", "waves", points=3, run=_run_waves, judge=judges.judge_waves,
    public=Public(judges.judge_waves, fresh=True),
    title="waves(output)", describe=describe, hidden=random_case,
    cases=(
        {"graph": "DIAMOND"},
        {"graph": "SHARED",
         "hint": "Leaves (Inputs, Parameters, Constants) are all ready at the start: wave 0."},
        {"graph": "BRANCHES"},
        {"graph": "diamonds6"},
        {"graph": "chain3000"},
    ),
    hint=("Kahn's algorithm: a node is ready when all its inputs are done.",
          "Count for each node its inputs not yet done; the nodes whose count is 0 form the next "
          "wave; when a wave is done, lower the counts of its nodes' consumers."))


# -- 02.must_recompute ----------------------------------------------------------------------------

def _run_recompute(answer, case):
    return _run_walk(answer, case, case["changed"])


must_recompute = Exercise(
    "02.must_recompute", "must_recompute", points=2, run=_run_recompute, judge=judges.judge_recompute,
    public=Public(judges.judge_recompute, fresh=True),
    title="must_recompute(output, changed)", describe=describe,
    hidden=lambda rng: random_case(rng, changed=str(rng.choice(["x", "y"]))),
    cases=(
        {"graph": "SHARED", "changed": "x"},
        {"graph": "SHARED", "changed": "y",
         "hint": "c = tanh(x·w) never sees y, and neither does e = c·c."},
        {"graph": "BRANCHES", "changed": "x"},
        {"graph": "BRANCHES", "changed": "y"},
        {"graph": "diamonds3", "changed": "x"},
        {"graph": "SHARED", "output": "b", "changed": "y",
         "hint": "b = a + y uses y directly, and b is the output: the output is an op too."},
        {"graph": "REDUCE", "changed": "x"},
    ),
    hint=("A stale value spreads forward: from the changed Input to everything computed from it.",
          "Go through the graph's nodes in topological order (an mg.Graph has them): an op must "
          "be recomputed if one of its inputs changed or must be recomputed."))


# -- 02.evaluate: a memoised evaluator -------------------------------------------------------------

AGAIN = 0.5          # evaluate runs a second time on the same graph, every Input fed half its value
FEEDS = {"SHARED": {"x": [1.0, -2.0, 0.5], "y": [0.5, 0.5, -1.0]},
         "BRANCHES": {"x": [[0.5, -1.0]], "y": [[0.0, 1.0]]},
         "REDUCE": {"x": [[1.0, -0.5, 0.25], [2.0, 0.5, -1.0]]},
         "diamonds14": {"x": [0.3, -0.2]}}


def feed_of(case):
    """What the case's Inputs are fed: its own ``feed`` (a hidden case), or its graph's."""
    return case["feed"] if "feed" in case else FEEDS[case["graph"]]


def _hidden_evaluate(rng):
    """A random graph, its Inputs (x, y or both) fed arrays of one random shape; half the time
    the shape is a matrix and a sum over one axis (keepdims or not: an op whose attributes
    change its value) sits on top of the graph times x, multiplied back into it if it kept
    its axis."""
    drawn, shape = random_case(rng), (int(rng.integers(1, 4)),)
    if rng.random() < 0.5:
        shape = tuple(int(k) for k in rng.integers(2, 4, size=2))
        below, keep = drawn["spec"][-1][0], bool(rng.random() < 0.5)
        drawn["spec"] += [["b", "mul", below, "x"],
                          ["s", "sum", "b", {"axis": int(rng.integers(-2, 2)), "keepdims": keep}],
                          ["out", "mul", "s", "b" if keep else "s"]]
    fed = [name for name in ancestors(drawn["spec"], output_of(drawn)) if name in ("x", "y")]
    return {**drawn, "feed": {name: random_array(rng, scale=1.0, shape=shape) for name in fed}}


EVALUATE_YOURSELF = "walk the graph and call each op's forward yourself"


def _run_evaluate(answer, case):
    counts = {}

    def counted(name, op_name, inputs, attrs):
        forward = getattr(mg, op_name).opdef.forward

        def run(*args, **settings):
            counts[name] = counts.get(name, 0) + 1
            return forward(*args, **settings)

        op = mg.defop(op_name, run, [lambda g, ans, *xs, **settings: None] * len(inputs))
        return op(*inputs, name=name, **attrs)

    nodes = build(spec_of(case), counted)

    def value_for(scale):
        feed = {nodes[k]: scale * np.array(v) for k, v in feed_of(case).items()}
        try:
            return encode(answer(nodes[output_of(case)], feed))
        except KeyError as error:
            node = error.args[0] if error.args else None
            if isinstance(node, mg.Node) and node.kind != "input":
                raise Rule(f"evaluate looked up '{node.name}' ({a_kind(node.kind)}) in feed; only "
                           "Inputs are fed, every other leaf holds its own value") from None
            raise

    value = value_for(1.0)
    first_counts = dict(counts)
    again = value_for(AGAIN)                   # the same graph, new values in the feed
    used_forward = any(n.value is not None for n in nodes.values() if n.op is not None)
    return {"value": value, "again": again, "counts": first_counts, "used_forward": used_forward}


evaluate = Exercise(
    "02.evaluate", "evaluate", points=3, run=_run_evaluate, judge=judges.judge_evaluate,
    public=Public(judges.judge_evaluate, fresh=True),
    title="evaluate(output, feed)", hidden=_hidden_evaluate,
    engine=refused({"mg.Graph.forward": "evaluation of a graph"}, advice=EVALUATE_YOURSELF),
    describe=lambda case: describe(case) + "; feed " + ", ".join(
        f"{k}={v}" for k, v in feed_of(case).items()),
    cases=(
        {"graph": "SHARED"},
        {"graph": "SHARED", "output": "d",
         "hint": "The output need not be the last node of the graph: evaluate only what it needs."},
        {"graph": "BRANCHES"},
        {"graph": "REDUCE",
         "hint": ("Some ops have attributes (a sum over one axis): node.attrs holds them.",
                  "An op's forward takes its input values, then its attributes as keywords.")},
        {"graph": "diamonds14",
         "hint": "Every h feeds two ops; without remembering values, h0 is computed 2^14 times."},
    ),
    hint=("Remember every value you compute (a dict from node to value), and compute the nodes "
          "in an order where inputs come first.",
          "Three kinds of node: an Input's value comes from feed, any other leaf holds its own "
          "value, and an op computes its value from its inputs' values and its attributes."))

EXERCISES = [topo_sort, waves, must_recompute, evaluate]
