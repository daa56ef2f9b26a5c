"""Chapter 02, running a graph (``solutions/02_running_a_graph.ipynb``).

Every exercise walks a small graph given as a spec (``toolkit/graphs.py``): the learner's kernel builds
it with fixed node names and sends back names; the grader rebuilds the spec and judges. An order
is judged by its properties (every node after its inputs, every ancestor exactly once), never
against one particular order. As in ``ch01``, ``run`` builds graphs with the learner's own copy
of the engine (``engine_for``).
"""

from collections import Counter

import numpy as np

import minigraph as mg

from ..toolkit.engine import refused
from ..toolkit.exercise import Exercise, Rule, Verdict, compare
from ..toolkit.graphs import (BRANCHES, SHARED, a_kind, ancestors, build, compare_sets, formula, inputs_of,
                              kinds_of, names_of, op_args, stacked_diamonds, WALKING_YOURSELF)
from ..toolkit.values import decode, encode, show

TITLE = "Running a graph"

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
    graph = case["graph"]
    if graph.startswith("diamonds"):
        return stacked_diamonds(int(graph[len("diamonds"):]))
    if graph.startswith("chain"):
        return chain(int(graph[len("chain"):]))
    return {"DIAMOND": DIAMOND, "SHARED": SHARED, "BRANCHES": BRANCHES, "REDUCE": REDUCE}[graph]


def output_of(case):
    return case.get("output") or spec_of(case)[-1][0]


def describe(case):
    graph = case["graph"]
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


def _unreadable(got, what):
    return Verdict(False, what, "?", f"returned {got['problem']}") if got.get("problem") else None


# -- 02.topo_sort ---------------------------------------------------------------------------------

def judge_order(spec, output, names):
    """Is ``names`` a topological order of ``output``'s ancestors? A Verdict naming the first flaw."""
    needed, parents = ancestors(spec, output), inputs_of(spec)
    short = ", ".join(names[:6]) + (", …" if len(names) > 6 else "") or "(empty)"
    expected = f"all {len(needed)} nodes, each after its inputs"
    unknown = [n for n in names if n not in parents]
    if unknown:
        return Verdict(False, expected, short, f"'{unknown[0]}' is not a node of this graph")
    seen = Counter(names)
    repeated = [n for n in names if seen[n] > 1]
    if repeated:
        return Verdict(False, expected, short,
                       f"node {repeated[0]} appears {seen[repeated[0]]} times; each node must appear "
                       "exactly once (remember which nodes you have already placed)")
    needed_set = set(needed)
    outside = [n for n in names if n not in needed_set]
    if outside:
        return Verdict(False, expected, short,
                       f"node {outside[0]} is not needed: {output} does not depend on it")
    missing = [n for n in needed if n not in seen]
    if missing:
        return Verdict(False, expected, short,
                       f"{len(missing)} node{'s' if len(missing) > 1 else ''} missing, e.g. {missing[0]}"
                       + (" (the output itself)" if missing[0] == output else ""))
    if names and names[0] == output and len(names) > 1:
        return Verdict(False, expected, short,
                       f"the order starts with the output {output}: that is pre-order (a node before "
                       "its inputs); a node goes in only after all its inputs")
    position = {n: i for i, n in enumerate(names)}
    for n in names:
        for p in parents[n]:
            if position[p] > position[n]:
                return Verdict(False, expected, short,
                               f"node {n} came before its input {p} (positions {position[n] + 1} "
                               f"and {position[p] + 1})")
    return Verdict(True, expected, f"{len(names)} nodes in a valid order")


def _judge_topo(case, got):
    return _unreadable(got, "a list of nodes") or judge_order(
        spec_of(case), output_of(case), [str(n) for n in got["names"]])


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
    "02.topo_sort", "topo_sort", points=3, run=_run_walk, judge=_judge_topo,
    title="topo_sort(output)", describe=describe, cases=TOPO_CASES, engine=WALKING_YOURSELF,
    hint=("Post-order: a node goes into the order only after all its inputs are in it.",
          "Keep a set of placed nodes, so a node shared by several ops is placed once, and keep "
          "the nodes still to visit on a stack of your own instead of recursing."))


# -- 02.waves (Kahn's algorithm, one wave at a time) -------------------------------------------

def levels(spec, output):
    """name -> wave: 0 for leaves, 1 + the latest wave among its inputs for ops."""
    parents, level = inputs_of(spec), {}
    for n in ancestors(spec, output):                # spec order is a topological order
        level[n] = 1 + max(level[p] for p in parents[n]) if parents[n] else 0
    return level


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


def _judge_waves(case, got):
    if got.get("problem"):
        return Verdict(False, "a list of waves", "?", f"returned {got['problem']}")
    spec, output = spec_of(case), output_of(case)
    level, parents = levels(spec, output), inputs_of(spec)
    waves = [[str(n) for n in wave] for wave in got["waves"]]
    n_expected = max(level.values()) + 1
    expected = f"{n_expected} waves"
    short = " | ".join(",".join(w) for w in waves)
    short = short if len(short) < 50 else short[:49] + "…"
    flat = [n for w in waves for n in w]
    order = judge_order(spec, output, flat)
    if not order.passed and "before its input" not in order.message:
        stuck = [n for n in ancestors(spec, output) if n not in flat
                 and len(set(parents[n])) < len(parents[n]) and set(parents[n]) <= set(flat)]
        if stuck and "missing" in order.message:
            n = stuck[0]
            twice = next(p for p in parents[n] if parents[n].count(p) > 1)
            return Verdict(False, expected, short,
                           f"{order.message}. {twice} is done, yet {n} never became ready: {n} "
                           f"lists {twice} twice in {n}.inputs, so a count of len({n}.inputs) "
                           f"needs two decrements; count distinct inputs (len(set(node.inputs))) "
                           "or lower the count once per entry of .inputs")
        return Verdict(False, expected, short, order.message)
    wave_of = {n: i for i, w in enumerate(waves) for n in w}
    for n in ancestors(spec, output):
        if parents[n]:
            last = max(parents[n], key=lambda p: wave_of[p])
            if wave_of[last] >= wave_of[n]:
                return Verdict(False, expected, short,
                               f"node {n} is in wave {wave_of[n]}, but its input {last} is in wave "
                               f"{wave_of[last]}: a node can only run after all its inputs")
        if wave_of[n] != level[n]:
            reason = ("a leaf needs nothing: it belongs in wave 0" if not parents[n] else
                      f"its inputs are all ready after wave {level[n] - 1}, so it belongs in wave "
                      f"{level[n]}")
            return Verdict(False, expected, short, f"node {n} is in wave {wave_of[n]}; {reason}")
    if len(waves) != n_expected:
        return Verdict(False, expected, short, f"{len(waves)} waves; some are empty")
    return Verdict(True, expected, f"{len(waves)} waves, all right")


waves = Exercise(
    "02.waves", "waves", points=3, run=_run_waves, judge=_judge_waves,
    title="waves(output)", describe=describe,
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

def downstream(spec, output, changed):
    """The op nodes of ``output``'s graph that depend on ``changed`` (in spec order)."""
    parents, hit, above = inputs_of(spec), {changed}, ancestors(spec, output)
    for n in above:
        if any(p in hit for p in parents[n]):
            hit.add(n)
    return [n for n in above if n in hit and n != changed]


def _run_recompute(answer, case):
    return _run_walk(answer, case, case["changed"])


def _judge_recompute(case, got):
    bad = _unreadable(got, "a list of nodes")
    if bad:
        return bad
    spec, output, changed = spec_of(case), output_of(case), case["changed"]
    expected, kinds = downstream(spec, output, changed), kinds_of(spec)

    def why(name):
        if name not in kinds:
            return "is not a node of this graph"
        if name == changed:
            return "is the Input that changed: it gets its new value from the feed, not by computing"
        if kinds[name] != "op":
            return f"is a {kinds[name].capitalize()}: only ops compute"
        if name not in ancestors(spec, output):
            return f"is not part of {output}'s graph"
        return f"does not depend on {changed}: its value stays valid"

    return compare_sets(expected, [str(n) for n in got["names"]], "op", why)


must_recompute = Exercise(
    "02.must_recompute", "must_recompute", points=2, run=_run_recompute, judge=_judge_recompute,
    title="must_recompute(output, changed)", describe=describe,
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
        feed = {nodes[k]: scale * np.array(v) for k, v in FEEDS[case["graph"]].items()}
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


def _forward(spec, output, feed):
    nodes = build(spec)
    return mg.Graph(nodes[output]).forward({k: np.array(v) for k, v in feed.items()})


def _without_attributes(spec):
    return tuple(row if row[1] in ("input", "parameter", "constant") else row[:2] + op_args(row[2:])[0]
                 for row in spec)


def _judge_evaluate(case, got):
    spec, output, feed = spec_of(case), output_of(case), FEEDS[case["graph"]]
    expected = _forward(spec, output, feed)
    if got.get("used_forward"):
        return Verdict(False, "your own evaluation", "Graph.forward",
                       f"the engine's Graph.forward computed the values: {EVALUATE_YOURSELF}")
    value = decode(got["value"])
    verdict = compare(expected, value)
    if not verdict.passed:
        try:
            ignored = _forward(_without_attributes(spec), output, feed)
        except mg.GraphError:
            ignored = None
        if ignored is not None and compare(ignored, value).passed:
            return Verdict(False, verdict.expected, verdict.got,
                           "the value is what the ops give without their attributes (such as "
                           "axis=0 of a sum): pass each node's attrs to its op's forward, as "
                           f"keywords ({verdict.message})")
        return verdict
    counts, kinds = got["counts"], kinds_of(spec)
    for n in ancestors(spec, output):
        if kinds[n] == "op" and counts.get(n, 0) != 1:
            times = counts.get(n, 0)
            return Verdict(False, "each op computed once", f"{n}: {times} times",
                           f"the value is right, but op {n} was computed {times} times; compute each "
                           "op once and remember its value (a dict node -> value)")
    again = decode(got["again"])
    if not compare(_forward(spec, output, {k: AGAIN * np.array(v) for k, v in feed.items()}), again).passed:
        return Verdict(False, "a new value for a new feed", show(again),
                       "called a second time on the same graph, with new values in feed, evaluate "
                       + ("returned the first call's value: the values it remembers must not outlive "
                          "the call (a default argument memo={} is shared by every call); make a new "
                          "dict inside evaluate" if compare(expected, again).passed else "got it wrong"))
    return Verdict(True, verdict.expected, verdict.got)


evaluate = Exercise(
    "02.evaluate", "evaluate", points=3, run=_run_evaluate, judge=_judge_evaluate,
    title="evaluate(output, feed)", engine=refused({"mg.Graph.forward": "evaluation of a graph"},
                                                   advice=EVALUATE_YOURSELF),
    describe=lambda case: describe(case) + "; feed " + ", ".join(
        f"{k}={v}" for k, v in FEEDS[case["graph"]].items()),
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
