"""Chapter 01's judges that hold no answer (``content/ch01.py`` has the exercises): a graph's
structure, and the consumers or Inputs of a node, by the graph's properties."""

import numpy as np

from ..content.ch01 import spec_of
from ..toolkit.exercise import Verdict, arrays, compare
from ..toolkit.graphs import a_kind, ancestors, compare_sets, inputs_of, kinds_of
from ..toolkit.public import stored
from ..toolkit.values import decode


def neuron_judge(expected_of):
    """The neuron's judge: its graph's structure, then its output against ``expected_of(case)``
    (the reference's value in the full course, the stored one in the student edition)."""
    def judge(case, got):
        flaw = neuron_structure(case, got)
        if flaw is not None:
            return flaw
        if "output" not in got:
            return Verdict(False, "an output", "none", "the graph could not be run")
        W, b, x = arrays(case)
        return neuron_output(expected_of(case), decode(got["output"]), x, W, b)
    return judge


judge_stored_neuron = neuron_judge(lambda case: decode(stored("01.neuron", case)))


def neuron_structure(case, got):
    """The flaw of the neuron's graph (its leaves' kinds, names and values), or None."""
    W, b, x = arrays(case)
    if "problem" in got:
        return Verdict(False, "an output node", "not a node", got["problem"])
    leaves = got["leaves"]
    inputs = [leaf["name"] for leaf in leaves if leaf["kind"] == "input"]
    if len(inputs) != 1:
        return Verdict(False, "one Input", f"{len(inputs)} Inputs",
                       f"the graph has {len(inputs)} Inputs ({', '.join(inputs) or 'none'}); it needs "
                       "exactly one, x, whose value is fed at run time (an Input, not a Parameter)")
    if inputs[0] != "x":
        return Verdict(False, "an Input named 'x'", f"named '{inputs[0]}'",
                       f"the Input is named '{inputs[0]}'; the statement names it 'x'")
    for label, value in (("W", W), ("b", b)):
        holders = [leaf for leaf in leaves if leaf["value"] is not None
                   and same(decode(leaf["value"]), value)]
        if not holders:
            return Verdict(False, f"a Parameter holding {label}", "none",
                           f"no node of the graph holds {label}_value: {label} is missing, or "
                           f"holds something else (a Parameter holds {label}_value itself)")
        if not any(leaf["kind"] == "parameter" for leaf in holders):
            return Verdict(False, "Parameter", holders[0]["kind"].capitalize(),
                           f"'{holders[0]['name']}' holds {label}_value but is {a_kind(holders[0]['kind'])}; "
                           f"{label} must be a Parameter: its value belongs to the graph, and training will change it")
    return None


def named(verdict, mistake):
    """A failing verdict whose message is ``mistake``, a typical one, said in full."""
    return Verdict(False, verdict.expected, verdict.got, mistake, mistake)


def neuron_output(expected, output, x, W, b):
    """The neuron's output against ``expected``, naming an activation left out or mistaken."""
    verdict = compare(expected, output)
    if not verdict.passed and same(output, x @ W + b):
        return named(verdict, "your output is the value before the activation: the neuron's "
                              "output goes through σ (mg.sigmoid)")
    if not verdict.passed and same(output, np.tanh(x @ W + b)):
        return named(verdict, "your activation is tanh; the neuron asks for σ (mg.sigmoid)")
    return verdict


def same(a, b):
    return isinstance(a, np.ndarray) and a.shape == b.shape and np.allclose(a, b)


def judge_consumers(case, got):
    if got.get("problem"):
        return Verdict(False, "a list of nodes", "?", f"returned {got['problem']}")
    spec = spec_of(case)
    node, parents = case["node"], inputs_of(spec)
    consumers = [n for n, ins in parents.items() if node in ins]
    names = [str(n) for n in got["names"]]
    if names and set(names) == set(parents[node]) != set(consumers):
        return Verdict(False, ", ".join(consumers) or "(none)", ", ".join(names),
                       f"those are the inputs of '{node}' (what it uses), not its consumers "
                       f"(the nodes that use it)")

    def why(n):
        if n not in parents:
            return "is not a node of this graph"
        if n == node:
            return "is the node itself: a node does not consume itself"
        if node in ancestors(spec, n):
            return (f"depends on '{node}' only through other nodes: list only the nodes that have "
                    f"'{node}' among their own inputs")
        return f"does not use '{node}' as an input"

    return compare_sets(consumers, names, "consumer", why)


def judge_find_inputs(case, got):
    if got.get("problem"):
        return Verdict(False, "a list of Input nodes", "?", f"returned {got['problem']}")
    spec, output = spec_of(case), case["output"]
    kinds, above = kinds_of(spec), ancestors(spec, output)
    expected = [n for n in above if kinds[n] == "input"]

    def why(name):
        if name not in kinds:
            return "is not a node of this graph"
        if kinds[name] != "input":
            return f"is {a_kind(kinds[name])}, not an Input"
        return f"is an Input, but '{output}' does not depend on it"

    return compare_sets(expected, [str(n) for n in got["names"]], "Input", why)
