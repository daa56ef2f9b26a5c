"""Chapter 02's judges (``content/ch02.py`` has the exercises): an order, a set of waves or of
nodes to recompute is judged by its properties, a value against minigraph's ``Graph.forward``."""

from collections import Counter

import numpy as np

import minigraph as mg

from ..content.ch02 import AGAIN, EVALUATE_YOURSELF, feed_of, output_of, spec_of
from ..toolkit.exercise import Verdict, compare
from ..toolkit.graphs import ancestors, build, compare_sets, inputs_of, kinds_of, op_args
from ..toolkit.values import decode, show


def _unreadable(got, what):
    return Verdict(False, what, "?", f"returned {got['problem']}") if got.get("problem") else None


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


def judge_topo(case, got):
    return _unreadable(got, "a list of nodes") or judge_order(
        spec_of(case), output_of(case), [str(n) for n in got["names"]])


def levels(spec, output):
    """name -> wave: 0 for leaves, 1 + the latest wave among its inputs for ops."""
    parents, level = inputs_of(spec), {}
    for n in ancestors(spec, output):                # spec order is a topological order
        level[n] = 1 + max(level[p] for p in parents[n]) if parents[n] else 0
    return level


def judge_waves(case, got):
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


def downstream(spec, output, changed):
    """The op nodes of ``output``'s graph that depend on ``changed`` (in spec order)."""
    parents, hit, above = inputs_of(spec), {changed}, ancestors(spec, output)
    for n in above:
        if any(p in hit for p in parents[n]):
            hit.add(n)
    return [n for n in above if n in hit and n != changed]


def judge_recompute(case, got):
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


def _forward(spec, output, feed):
    nodes = build(spec)
    return mg.Graph(nodes[output]).forward({k: np.array(v) for k, v in feed.items()})


def _without_attributes(spec):
    return tuple(row if row[1] in ("input", "parameter", "constant") else row[:2] + op_args(row[2:])[0]
                 for row in spec)


def judge_evaluate(case, got):
    spec, output, feed = spec_of(case), output_of(case), feed_of(case)
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
