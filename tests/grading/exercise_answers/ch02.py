"""Chapter 02 (running a graph): typical wrong answers and different right answers."""

import functools
import sys

import numpy as np

import minigraph as mg

from minigraph.graph import topological_order

from . import wrong


def ancestors_of(output):
    """output and everything it depends on, found without the engine (for Kahn's algorithm)."""
    seen, todo = {}, [output]
    while todo:
        node = todo.pop()
        if node not in seen:
            seen[node] = True
            todo.extend(node.inputs)
    return list(seen)


# -- 02.topo_sort -------------------------------------------------------------------------------

def topo_stack(output):
    order, placed, stack = [], set(), [(output, False)]
    while stack:
        node, ready = stack.pop()
        if node in placed:
            continue
        if ready:
            placed.add(node)
            order.append(node)
        else:
            stack.append((node, True))
            stack.extend((parent, False) for parent in node.inputs if parent not in placed)
    return order


def topo_kahn(output):
    nodes = ancestors_of(output)
    waiting = {n: len(n.inputs) for n in nodes}
    consumers = {n: [] for n in nodes}
    for n in nodes:
        for parent in n.inputs:
            consumers[parent].append(n)
    ready = [n for n in nodes if waiting[n] == 0]
    order = []
    while ready:
        node = ready.pop()
        order.append(node)
        for other in consumers[node]:
            waiting[other] -= 1
            if waiting[other] == 0:
                ready.append(other)
    return order


def topo_recursive(output):
    order, placed = [], set()

    def visit(node):
        if node not in placed:
            for parent in node.inputs:
                visit(parent)
            placed.add(node)
            order.append(node)

    visit(output)
    return order


def topo_recursive_deep(output):
    """Recursion is fine once the limit allows the deepest chain."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        return topo_recursive(output)
    finally:
        sys.setrecursionlimit(limit)


def topo_without_placed(output):
    order, stack = [], [(output, False)]
    while stack:
        node, ready = stack.pop()
        if ready:
            order.append(node)
        else:
            stack.append((node, True))
            stack.extend((parent, False) for parent in node.inputs)
    return order


def topo_preorder(output):
    order, seen, stack = [], set(), [output]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            order.append(node)
            stack.extend(node.inputs)
    return order


def topo_without_output(output):
    return topo_stack(output)[:-1]


# -- 02.waves -------------------------------------------------------------------------------------

def waves_kahn(output, consumers_once=False):
    """Kahn's algorithm; with ``consumers_once`` a consumer that uses a node twice (``c * c``)
    is listed once, but its count still says two: the typical mistake."""
    nodes = mg.Graph(output).nodes
    waiting = {n: len(n.inputs) for n in nodes}
    consumers = {n: [] for n in nodes}
    for n in nodes:
        for parent in (dict.fromkeys(n.inputs) if consumers_once else n.inputs):
            consumers[parent].append(n)
    wave, result = [n for n in nodes if waiting[n] == 0], []
    while wave:
        result.append(wave)
        following = []
        for n in wave:
            for c in consumers[n]:
                waiting[c] -= 1
                if waiting[c] == 0:
                    following.append(c)
        wave = following
    return result


def waves_by_level(output):
    level, result = {}, []
    for n in mg.Graph(output).nodes:
        level[n] = 1 + max(level[p] for p in n.inputs) if n.inputs else 0
        if level[n] == len(result):
            result.append([])
        result[level[n]].append(n)
    return result


def waves_counting_twice(output):
    return waves_kahn(output, consumers_once=True)


def waves_inputs_first(output):
    """Only the Inputs in wave 0; Parameters and Constants wait a wave."""
    nodes = mg.Graph(output).nodes
    level = {}
    for n in nodes:
        if n.kind == "input":
            level[n] = 0
        else:
            level[n] = 1 + max((level[p] for p in n.inputs), default=0)
    return [[n for n in level if level[n] == k] for k in range(max(level.values()) + 1)]


def waves_by_depth_from_output(output):
    """Each node in the wave of its longest path from the output, reversed."""
    depth = {output: 0}
    for n in reversed(mg.Graph(output).nodes):
        for p in n.inputs:
            depth[p] = max(depth.get(p, 0), depth[n] + 1)
    deepest = max(depth.values())
    return [[n for n in depth if depth[n] == deepest - k] for k in range(deepest + 1)]


def waves_one_node_each(output):
    return [[n] for n in mg.Graph(output).nodes]


# -- 02.must_recompute --------------------------------------------------------------------------

def recompute_forward(output, changed):
    stale, result = {changed}, []
    for node in mg.Graph(output).nodes:
        if any(parent in stale for parent in node.inputs):
            stale.add(node)
            result.append(node)
    return result


def recompute_backward(output, changed):
    """Ancestors of each node, checked one node at a time (slower, also right)."""
    return [n for n in mg.Graph(output).nodes if n is not changed and changed in ancestors_of(n)]


def recompute_with_changed(output, changed):
    return [changed] + recompute_forward(output, changed)


def recompute_direct_only(output, changed):
    return [n for n in mg.Graph(output).nodes if changed in n.inputs]


def recompute_every_op(output, changed):
    return [n for n in mg.Graph(output).nodes if n.op is not None]


def recompute_without_output(output, changed):
    return [n for n in recompute_forward(output, changed) if n is not output]


def recompute_with_leaves(output, changed):
    stale, result = {changed}, []
    for node in mg.Graph(output).nodes:
        if node.op is None or any(parent in stale for parent in node.inputs):
            stale.add(node)
            result.append(node)
    return [n for n in result if n is not changed]


# -- 02.evaluate -----------------------------------------------------------------------------------

def evaluate_in_order(output, feed):
    values = {}
    for node in topo_stack(output):
        if node.kind == "input":
            values[node] = feed[node]
        elif node.op is None:
            values[node] = node.value
        else:
            values[node] = node.op.forward(*[values[p] for p in node.inputs], **node.attrs)
    return values[output]


def evaluate_memo(output, feed):
    @functools.lru_cache(maxsize=None)
    def value(node):
        if node.op is None:
            return feed[node] if node.kind == "input" else node.value
        return node.op.forward(*[value(p) for p in node.inputs], **node.attrs)

    return value(output)


def evaluate_memo_kept(output, feed, memo={}):
    """A memo as a default argument: one dict for every call, so a new feed gets old values."""
    def value(node):
        if node not in memo:
            if node.kind == "input":
                memo[node] = feed[node]
            elif node.op is None:
                memo[node] = node.value
            else:
                memo[node] = node.op.forward(*[value(p) for p in node.inputs], **node.attrs)
        return memo[node]
    return value(output)


def evaluate_without_attrs(output, feed):
    values = {}
    for node in mg.Graph(output).nodes:
        if node.op is None:
            values[node] = feed[node] if node.kind == "input" else node.value
        else:
            values[node] = node.op.forward(*[values[p] for p in node.inputs])
    return values[output]


def evaluate_no_memo(output, feed):
    if output.op is None:
        return feed[output] if output.kind == "input" else output.value
    return output.op.forward(*[evaluate_no_memo(p, feed) for p in output.inputs], **output.attrs)


def evaluate_every_leaf_fed(output, feed):
    values = {}
    for node in mg.Graph(output).nodes:
        if node.op is None:
            values[node] = feed[node]
        else:
            values[node] = node.op.forward(*[values[p] for p in node.inputs], **node.attrs)
    return values[output]


def evaluate_all_values(output, feed):
    values = {}
    for node in mg.Graph(output).nodes:
        if node.op is None:
            values[node] = feed[node] if node.kind == "input" else node.value
        else:
            values[node] = node.op.forward(*[values[p] for p in node.inputs], **node.attrs)
    return values


# the engine's functions taken before any check runs (a reference kept, another module path)
GRAPH_FORWARD = mg.Graph.forward


WRONG = {
    "02.topo_sort": {
        "the engine's walk, from its module": wrong(lambda output: list(topological_order([output])), "engine's own graph walk", "mg.graph.topological_order"),
        "plain recursion": wrong(topo_recursive, "recursionerror"),
        "no set of placed nodes": wrong(topo_without_placed, "appears", "exactly once"),
        "pre-order": wrong(topo_preorder, "pre-order"),
        "the output left out": wrong(topo_without_output, "the output itself"),
        "the engine does it": wrong(lambda output: mg.Graph(output).nodes, "engine's own graph walk", "yourself"),
        "forgot return": wrong(lambda output: None, "forget `return`"),
    },
    "02.waves": {
        "c * c counted as two inputs": wrong(waves_counting_twice, "lists c twice"),
        "only Inputs in wave 0": wrong(waves_inputs_first, "leaf needs nothing", "wave 0"),
        "levels counted from the output": wrong(waves_by_depth_from_output, "belongs in wave"),
        "one node per wave": wrong(waves_one_node_each, "belongs in wave"),
        "a flat list": wrong(lambda output: mg.Graph(output).nodes, "a wave that is", "not a list of nodes"),
        "forgot return": wrong(lambda output: None, "not a list of waves"),
    },
    "02.must_recompute": {
        "the changed Input too": wrong(recompute_with_changed, "is the input that changed"),
        "only the direct consumers": wrong(recompute_direct_only, "missing op"),
        "every op": wrong(recompute_every_op, "does not depend on"),
        "the output left out": wrong(recompute_without_output, "missing op"),
        "leaves too": wrong(recompute_with_leaves, "only ops compute"),
        "forgot return": wrong(lambda output, changed: None, "forget `return`"),
    },
    "02.evaluate": {
        "the engine's forward, kept before the check": wrong(lambda output, feed: GRAPH_FORWARD(mg.Graph(output), feed), "engine's own evaluation", "mg.Graph.forward"),
        "the engine's forward": wrong(lambda output, feed: mg.Graph(output).forward(feed), "graph.forward",
                                      "yourself"),
        "attributes ignored": wrong(evaluate_without_attrs, "attributes", "attrs"),
        "no memo": wrong(evaluate_no_memo, "computed 16384 times", "remember"),
        "every leaf looked up in feed": wrong(evaluate_every_leaf_fed, "only inputs are fed"),
        "all the values, not the output's": wrong(evaluate_all_values, "returned a dict"),
        "forgot return": wrong(lambda output, feed: None, "forget `return`"),
        "a memo kept between calls": wrong(evaluate_memo_kept, "returned the first call's value", "new dict"),
    },
}

RIGHT = {
    "02.topo_sort": {"an explicit stack": topo_stack, "Kahn's algorithm": topo_kahn,
                     "recursion with a higher limit": topo_recursive_deep},
    "02.waves": {"Kahn, wave by wave": waves_kahn, "levels": waves_by_level},
    "02.must_recompute": {"forward through the order": recompute_forward,
                          "ancestors of each node": recompute_backward},
    "02.evaluate": {"a dict, in topological order": evaluate_in_order, "recursion with a memo": evaluate_memo,
                    "values as float arrays": lambda output, feed: np.asarray(evaluate_memo(output, feed))},
}
