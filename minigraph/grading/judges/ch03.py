"""Chapter 03's judges that hold no answer (``content/ch03.py`` has the exercises): the gradients
worked out by hand, and the learner's whole backward pass, each against the ones minigraph's own
``Graph.backward`` computes."""

import numpy as np

import minigraph as mg

from ..content.ch03 import (HAND_FEED, HAND_HINTS, HAND_ORDER, STALE, backward_feeds, backward_spec,
                            engine_op, hand_graph)
from ..toolkit.exercise import Verdict, compare
from ..toolkit.graphs import a_kind, build, kinds_of
from ..toolkit.values import decode, show


def judge_hand(case, got):
    graph = hand_graph()
    graph.backward({"x": HAND_FEED["x"]})
    for name in HAND_ORDER:
        if name not in got:
            return Verdict(False, "a number", "missing", f"no gradient for node '{name}' in the dict")
        verdict = compare(graph.node(name).grad, decode(got[name]), reveal=False)
        if not verdict.passed:
            return Verdict(False, "(hidden)", verdict.got,
                           f"node '{name}' has the wrong gradient ({verdict.message}). "
                           f"{HAND_HINTS[name]}")
    return Verdict(True, "6 node gradients", "all right")


# -- 03.backward: against the engine's own Graph.backward, which ships anyway ----------------------

class BackwardCase:
    """One call of a case of 03.backward in the grader: the engine's gradients (``Graph.backward``
    with respect to every node, Constants included) on the case's graph for ``feed``.
    ``mistakes`` is left for whoever can name typical mistakes (the full course's ``answers/ch03.py``)."""

    def __init__(self, case, feed):
        self.spec, self.feed = backward_spec(case), feed
        self.kinds = kinds_of(self.spec)
        nodes = build(self.spec, engine_op)
        graph = mg.Graph(nodes[self.spec[-1][0]])
        graph.backward(self.feed, wrt=graph.nodes)
        self.order = [node.name for node in reversed(graph.nodes)]      # from the loss back
        self.expected = {node.name: node.grad for node in graph.nodes}
        self.parameters = [node.name for node in graph.parameters]
        self.mistakes = None


def no_gradient(grad):
    """Is ``grad`` (decoded) zeros, or None: what a Constant may get instead of its gradient?"""
    return grad is None or (isinstance(grad, (np.ndarray, float, int)) and not np.any(grad))


def _as_found(reference, grads, verdict):
    return verdict


def judge_backward(case, got, named=_as_found):
    """Each call's gradients against the engine's, the first wrong node named walking back from
    the loss; ``named(reference, grads, verdict)`` may put a typical mistake's name on a verdict."""
    calls = got.get("calls") if isinstance(got, dict) else None
    feeds = backward_feeds(case)
    if (not isinstance(calls, list) or len(calls) != len(feeds)
            or not all(isinstance(c, dict) for c in calls)):
        return Verdict(False, message="the notebook sent no readable results")
    references = [BackwardCase(case, feed) for feed in feeds]
    for index, (reference, call) in enumerate(zip(references, calls)):
        verdict = _judge_call(reference, call, named)
        if not verdict.passed:
            if index == 0:
                return verdict
            if _judge_call(references[0], call, _as_found).passed:
                return Verdict(False, verdict.expected, verdict.got,
                               "the second call, with other values, returned the first call's "
                               "gradients: they were kept from the first call (in a dict at the "
                               "notebook's top level, or a default argument such as grads={}, which "
                               "is made once, when def runs). Compute them afresh on every call")
            return Verdict(False, verdict.expected, verdict.got,
                           "the first call was right, but the second call on the same graph, with "
                           "other values, was not: something outlived the first call (a dict given "
                           "as a default argument, grads={}, is made once and shared by every call; "
                           f"a .grad added onto keeps the last one). {verdict.message}")
    twice = ", on both calls" if len(calls) > 1 else ""
    return Verdict(True, f"{len(references[0].expected)} gradients{twice}", "all right")


def _judge_call(reference, call, named):
    counts = call.get("counts") or {}
    for key, times in counts.items():
        if isinstance(times, int) and times > 1:
            name, k = str(key).rsplit(":", 1)
            return Verdict(False, "each rule called once", f"{times} calls",
                           f"the rule of '{name}' for its input {int(k) + 1} ran {times} times in "
                           "one backward call: a shared node was visited twice (once per path "
                           "that reaches it). Visit each node once, after all its consumers")
    grads = {name: decode(value) for name, value in (call.get("grads") or {}).items()}
    for name in reference.order:
        if reference.kinds[name] == "constant" and (name not in grads or no_gradient(grads[name])):
            continue                   # a Constant's gradient may be left out, or zeros: none is used
        if name not in grads:
            return named(reference, grads, Verdict(False, "a gradient", "none",
                         f"no gradient for node '{name}' ({a_kind(reference.kinds[name])})"))
        expected = reference.expected[name]
        verdict = compare(expected, grads[name])
        if not verdict.passed:
            shaped = np.shape(grads[name]) != np.shape(expected)
            truncated = np.trunc(expected)
            cut = not shaped and np.any(truncated) and np.array_equal(truncated, grads[name])
            return named(reference, grads, Verdict(
                False, verdict.expected, verdict.got,
                f"node '{name}' ({a_kind(reference.kinds[name])}) has the wrong gradient: {verdict.message}"
                + (". Sum each share back to its node's own shape, over every axis broadcasting added "
                   "or stretched, not only axis 0 (mg.unbroadcast)" if shaped else "")
                + (". It is the gradient with its fractions cut off: it was kept in integers, the "
                   "dtype of the node's value; a gradient is floats whatever its value's dtype"
                   if cut else "")))
    params = call.get("params") or {}
    for name in reference.parameters:
        expected, value = reference.expected[name], decode(params.get(name, {"type": "none"}))
        if value is None:
            return Verdict(False, show(expected), "None",
                           f"Parameter '{name}' has no .grad: backward sets node.grad on every Parameter")
        verdict = compare(expected, value)
        if verdict.passed:
            continue
        if np.shape(value) == np.shape(expected) and np.allclose(value, STALE):
            why = (f"Parameter '{name}'.grad still holds what it held before the call: backward sets "
                   "node.grad = its gradient on every Parameter")
        elif np.shape(value) == np.shape(expected) and np.allclose(value, expected + STALE):
            why = (f"Parameter '{name}'.grad is the new gradient added onto what it held before the "
                   "call: backward replaces .grad, it never adds onto it")
        else:
            why = f"Parameter '{name}'.grad is not its gradient: {verdict.message}"
        return Verdict(False, verdict.expected, verdict.got, why)
    return Verdict(True)
