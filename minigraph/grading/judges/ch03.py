"""Chapter 03's judges that hold no answer (``content/ch03.py`` has the exercises): the
gradients worked out by hand, against the ones minigraph's own ``Graph.backward`` computes."""

from ..content.ch03 import HAND_FEED, HAND_HINTS, HAND_ORDER, hand_graph
from ..toolkit.exercise import Verdict, compare
from ..toolkit.values import decode


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
