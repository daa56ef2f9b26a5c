"""Chapter 01, computational graphs (``solutions/01_computational_graphs.ipynb``).

The answers here are graphs, or functions that walk graphs, so the exercises write their own
``run`` and ``judge``. The small graphs the cases use are written down as *specs*
(``toolkit/graphs.py``, shared with chapter 02), so that the learner's kernel and the grader
talk about nodes by name and only names travel as JSON.
"""

import minigraph as mg

from ..toolkit.answers import answers_of, judges_of
from ..toolkit.exercise import Exercise, arrays, random_array, value_exercise
from ..toolkit.graphs import (BRANCHES, SHARED, ancestors, build, formula, kinds_of, names_of, random_spec,
                              stacked_diamonds, WALKING_YOURSELF)
from ..toolkit.public import Public
from ..toolkit.values import encode

TITLE = "Computational graphs"
answers = answers_of(__name__)    # answers/ch01.py: references, judges and mistakes
judges = judges_of(__name__)      # judges/ch01.py: the judges that hold no answer


# -- 01.neuron: build sigma(x @ W + b) as a graph ----------------------------------------------

def _run_neuron(answer, case):
    W, b, x = arrays(case)
    out = answer(W, b)
    if not isinstance(out, mg.Node):
        return {"problem": f"neuron(...) returned a {type(out).__name__}, not a node"}
    graph = mg.Graph(out)
    leaves = [{"name": n.name, "kind": n.kind,
               "value": None if n.kind == "input" else encode(n.value)}
              for n in graph.nodes if n.op is None]
    got = {"leaves": leaves, "ops": [n.op.name for n in graph.nodes if n.op is not None]}
    if len(graph.inputs) == 1:
        got["output"] = encode(graph.forward({graph.inputs[0]: x}))
    return got


def _hidden_neuron(rng):
    """W (d, m), b (m,) and a batch x (n, d), d, m and n each from 1 to 3."""
    d, m, n = (int(k) for k in rng.integers(1, 4, size=3))
    return {"inputs": {"W_value": random_array(rng, scale=1.0, shape=(d, m)),
                       "b_value": random_array(rng, scale=1.0, shape=(m,)),
                       "x": random_array(rng, scale=2.0, shape=(n, d))}}


neuron = Exercise(
    "01.neuron", "neuron", points=3, run=_run_neuron, judge=answers.judge_neuron,
    expected=lambda case: encode(answers.neuron(*arrays(case))), public=Public(judges.judge_stored_neuron),
    title="neuron(W_value, b_value) -> σ(x @ W + b)",
    cases=(
        {"inputs": {"W_value": [[0.5], [-1.0]], "b_value": [0.25], "x": [[1.0, 2.0], [0.0, 0.0], [-2.0, 1.0]]}},
        {"inputs": {"W_value": [[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]], "b_value": [0.0, 1.0, -1.0],
                    "x": [[0.5, -0.5]]},
         "hint": "With W of shape (2, 3) the neuron has three outputs per row; x @ W + b handles "
                 "that with no change to your code."},
        {"inputs": {"W_value": [[2.0], [0.0], [-1.0]], "b_value": [-0.5],
                    "x": [[1.0, 1.0, 1.0], [0.0, 3.0, 2.0]]}},
    ),
    hint=("Three leaves, each of the right kind: which one is fed at run time, and which two "
          "does training change?",
          "x is an Input named 'x'; W and b are Parameters made from W_value and b_value; the "
          "output applies σ to the affine map, with x on the left of the matrix product."),
    hidden=_hidden_neuron)


# -- 01.predict: values of nodes, by hand ---------------------------------------------------------

predict = value_exercise(
    "01.predict", "predicted", answers.PREDICTED, points=2,
    title="values of u, v, out at x = 2", labels=("u", "v", "out"),
    mistakes=answers.PREDICT_MISTAKES,
    hint=("Go through the nodes in order; each op only needs the values of its inputs.",
          "u first (from w and x), then v (from u), then out (from u, v and x); x is 2 and w is "
          "the Parameter's value."))


# -- 01.consumers: who uses this node? ------------------------------------------------------------

CONSUMER_CASES = ("a", "c", "x", "w", "f", "out")
CONSUMER_HINTS = {
    "c": "e = c·c uses c twice, but e is one consumer: list it once.",
    "out": "Nothing uses the output: its list of consumers is empty.",
}


def spec_of(case):
    """A case's graph: a hidden case's own (``graphs.random_spec``), or one of ``SPECS`` by
    name (SHARED for the consumers)."""
    return case["spec"] if "spec" in case else SPECS[case.get("graph", "SHARED")]


def _hidden_consumers(rng):
    """A random graph cut to its last node's ancestors (the graph the answer gets), and one of
    its nodes."""
    spec = random_spec(rng)
    above = ancestors(spec, spec[-1][0])
    return {"graph": "random", "spec": [row for row in spec if row[0] in above],
            "node": str(rng.choice(above))}


def _run_consumers(answer, case):
    spec = spec_of(case)
    nodes = build(spec)
    graph = mg.Graph(nodes[spec[-1][0]])
    names, problem = names_of(answer(graph, nodes[case["node"]]))
    return {"problem": problem} if problem else {"names": names}


consumers = Exercise(
    "01.consumers", "consumers", points=2, run=_run_consumers, judge=judges.judge_consumers,
    public=Public(judges.judge_consumers, fresh=True),
    title="consumers(graph, node)",
    describe=lambda case: f"node {case['node']} of: {formula(spec_of(case), spec_of(case)[-1][0])}",
    hidden=_hidden_consumers,
    cases=tuple({"node": n, **({"hint": CONSUMER_HINTS[n]} if n in CONSUMER_HINTS else {})}
                for n in CONSUMER_CASES),
    hint=("A node stores its inputs, not its consumers: look at every node of the graph.",
          "A consumer of `node` is a node of graph.nodes that has `node` among its own inputs; "
          "keep each such node once."))


# -- 01.find_inputs: which Inputs does a node depend on? -----------------------------------------

DIAMONDS = 30                    # stacked diamonds: 2³⁰ paths down to h0, ~100 nodes
INPUT_CASES = (("SHARED", "out"), ("SHARED", "c"), ("SHARED", "w"), ("SHARED", "x"),
               ("BRANCHES", "t"), ("DIAMONDS", "out"))
INPUT_HINTS = {
    ("SHARED", "c"): "c = tanh(a) and a = x·w: y is in the graph, but c does not depend on it.",
    ("SHARED", "w"): "w is a Parameter: a leaf with no inputs, and not an Input.",
    ("SHARED", "x"): "x is an Input itself: the graph of x is just x.",
    ("DIAMONDS", "out"): f"Every h feeds two ops: a walk that does not remember the nodes it has "
                         f"seen reaches h0 along 2^{DIAMONDS} paths, and never finishes.",
}
SPECS = {"SHARED": SHARED, "BRANCHES": BRANCHES, "DIAMONDS": stacked_diamonds(DIAMONDS)}


def _describe_find_inputs(case):
    graph, output = case["graph"], case["output"]
    if graph == "DIAMONDS":
        return f"output out of {DIAMONDS} stacked diamonds: h_k = tanh(h_k-1) + σ(h_k-1), out = h{DIAMONDS}·x"
    if output in ("w", "x", "y"):
        return f"output {output} (a leaf)"
    base = next((row[2] for row in spec_of(case) if row[0] == "p1"), None)
    if base is not None:
        return (f"output {output} of {output[1:]} diamonds h_k = tanh(h_k-1) + σ(h_k-1), h0 = "
                f"{base}, on: {formula(spec_of(case), base)}")
    return f"output {output} of: {formula(spec_of(case), output)}"


def _run_find_inputs(answer, case):
    nodes = build(spec_of(case))
    result = answer(nodes[case["output"]])
    names, problem = names_of(result)
    return {"problem": problem} if problem else {"names": names}


def _hidden_find_inputs(rng):
    """A random graph and an output in one of three regimes (each shows other mistakes): one of
    its ops; its Input y itself (a walk that starts at the output's inputs misses it); or the
    top of 24 to 30 diamonds stacked on its last op (a walk that does not remember what it has
    seen never finishes)."""
    spec = random_spec(rng)
    regime = rng.choice(["an op", "an Input", "stacked diamonds"])
    if regime == "an Input":
        return {"graph": "random", "spec": spec, "output": "y"}
    if regime == "stacked diamonds":
        below = spec[-1][0]
        for k in range(1, int(rng.integers(24, 31))):
            spec += [[f"p{k}", "tanh", below], [f"q{k}", "sigmoid", below], [f"h{k}", "add", f"p{k}", f"q{k}"]]
            below = f"h{k}"
        return {"graph": "random", "spec": spec, "output": below}
    ops = [name for name, kind in kinds_of(spec).items() if kind == "op"]
    return {"graph": "random", "spec": spec, "output": str(rng.choice(ops))}


find_inputs = Exercise(
    "01.find_inputs", "find_inputs", points=2, run=_run_find_inputs, judge=judges.judge_find_inputs,
    public=Public(judges.judge_find_inputs, fresh=True),
    title="find_inputs(output)", engine=WALKING_YOURSELF, hidden=_hidden_find_inputs,
    describe=_describe_find_inputs,
    cases=tuple({"graph": g, "output": o, **({"hint": INPUT_HINTS[g, o]} if (g, o) in INPUT_HINTS else {})}
                for g, o in INPUT_CASES),
    hint=("Walk back from the output through .inputs, all the way to the leaves.",
          "Keep a list of nodes still to visit and a set of nodes already seen (a shared node is "
          "reached along several paths); keep the visited nodes whose kind is 'input', the output "
          "itself included."))

EXERCISES = [neuron, predict, consumers, find_inputs]
