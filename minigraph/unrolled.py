"""Backward, unrolled: a graph's forward and backward written out as one straight-line function.

``Graph.backward`` in ``graph.py`` is an interpreter: it loops over the nodes and, for each one,
looks up its op, gathers its inputs' values, checks for hooks, and so on. On small layers that
bookkeeping costs as much as the numpy work itself. For a fixed graph the loop takes the same
path every time, so it can be written out once, as Python source with one call per op and one
per gradient. For ``y = tanh(w * x)`` and ``wrt=[w]``, ``print(mg.unrolled.source(graph, [w]))``
shows (abridged)::

    def _run(_feed, _seed):
        _feed_inputs(_feed)
        w_ = w._value
        x_ = x._value
        if w.stamp > mul_1.stamp or x.stamp > mul_1.stamp or mul_1._value is None:
            mul_1_ = f_mul_1(w_, x_)                     # recompute only what is stale
            ...
        g_y = _seed_for(y, y_, _seed)                    # 1 for a scalar output
        if g_y is not None:
            _gi = vjp_y_0(g_y, y_, mul_1_)               # tanh's VJP: g * (1 - y**2)
            ...
                g_mul_1 = _gi if g_mul_1 is None else _add(g_mul_1, _gi)
        ...
        w.grad = g_w
        return y_

``Graph.backward`` runs that function from the second call with the same ``wrt`` on, when
nothing unusual is going on: no hooks, no ``detect_anomaly``, no multi-output op, at most
``MAX_OPS`` ops. It calls the same op functions on the same arrays in the same order as the
interpreter, so the numbers are identical (the tests check this bit for bit). If anything
raises, the interpreter runs the call again (so an op that fails runs twice), and its error
message says what went wrong.
"""

import keyword
import re

import numpy as np

from . import graph as _graph

MAX_OPS = 1000                    # bigger graphs stay with the interpreter: writing them out is slow


def build(graph, wrt=None):
    """The unrolled ``_run(feed, seed)`` for ``graph.backward(feed, seed, wrt)``, or None if the
    graph has a multi-output op (the interpreter handles those)."""
    text, env = _write(graph, wrt)
    if text is None:
        return None
    exec(compile(text, f"<minigraph: backward of '{graph.outputs[0].name}'>", "exec"), env)
    return env["_run"]


def source(graph, wrt=None):
    """The Python source ``Graph.backward`` runs for this graph (to read, not to edit)."""
    return _write(graph, wrt)[0]


def _write(graph, wrt):
    """The source and the names it uses. Helpers start with ``_``; every other name comes from a
    node: ``x`` is the node, ``x_`` its value, ``g_x`` its gradient, ``f_x`` its op's forward."""
    if any(n.op.n_outputs > 1 for n in graph._ops):
        return None, None
    name = _identifiers(graph.nodes)
    env = {name[node]: node for node in graph.nodes}
    env.update(_feed_inputs=graph._feed, _seed_for=graph._seed, _add=_graph._add,
               _tick=_graph._clock.__next__, _frozen=_graph._frozen, _as_value=_graph._as_value,
               _checked=_graph._checked_gradient, _ndarray=np.ndarray, _type=type)
    out = name[graph.outputs[0]]
    lines = ["def _run(_feed, _seed):", "    _feed_inputs(_feed)"]
    lines += [f"    {name[n]}_ = {name[n]}._value" for n in graph.nodes if n.op is None]

    # forward: recompute an op only if one of its inputs is newer (as Graph.forward does)
    for node in graph._ops:
        me, args = name[node], _arguments(node, name)
        env[f"f_{me}"], env[f"attrs_{me}"] = node.op.forward, node.attrs
        newer = [f"{name[p]}.stamp > {me}.stamp" for p in dict.fromkeys(node.inputs)]
        lines += [f"    if {' or '.join(newer + [f'{me}._value is None'])}:",
                  f"        {me}_ = f_{me}({args})",
                  f"        {me}_ = _frozen({me}_) if _type({me}_) is _ndarray else _as_value({me}_)",
                  f"        {me}._value, {me}.stamp = {me}_, _tick()",
                  f"    else:",
                  f"        {me}_ = {me}._value"]

    # backward: one VJP call per edge that needs a gradient; what a node receives is summed
    steps, graded = graph._plan(wrt)
    receiving = ({graph.outputs[0]} | {node for node, _ in steps} |
                 {node.inputs[k] for node, wanted in steps for k in wanted})
    lines += [f"    {name[n]}.grad = None" for n in graph.nodes]
    lines += [f"    g_{name[n]} = None" for n in graph.nodes if n in receiving and name[n] != out]
    lines += [f"    g_{out} = _seed_for({out}, {out}_, _seed)"]
    for node, wanted in steps:
        if not wanted:                # its inputs are all Constants or integer Inputs
            continue
        me, args = name[node], _arguments(node, name)
        inputs = ", ".join(f"{name[p]}_" for p in node.inputs)
        lines += [f"    if g_{me} is not None:"]
        for k in wanted:
            parent = name[node.inputs[k]]
            env[f"vjp_{me}_{k}"] = node.op.vjps[k]
            lines += [f"        _gi = vjp_{me}_{k}(g_{me}, {me}_, {args})",
                      f"        if not (_type(_gi) is _type({parent}_) is _ndarray and _gi.shape == {parent}_.shape):",
                      f"            _gi = _checked({me}, {k}, _gi, [{inputs}])",
                      f"        if _gi is not None:",
                      f"            g_{parent} = _gi if g_{parent} is None else _add(g_{parent}, _gi)"]
    lines += [f"    {name[n]}.grad = g_{name[n]}" for n in graded if n in receiving]
    lines += [f"    return {out}_"]
    return "\n".join(lines) + "\n", env


def _identifiers(nodes):
    """A Python name for each node, made from its own name (``mlp.fc1`` -> ``mlp_fc1``); plain
    numbers (``n0``, ``n1``, ...) if those names could clash with each other or with keywords."""
    names = {node: re.sub(r"\W", "_", node.name) for node in nodes}
    derived = [f"{prefix}{names[n]}{suffix}" for n in nodes
               for prefix, suffix in [("", ""), ("", "_"), ("g_", ""), ("f_", ""), ("attrs_", "")]]
    derived += [f"vjp_{names[n]}_{k}" for n in nodes for k in range(len(n.inputs))]
    usable = all(b.isidentifier() and not b.startswith("_") and not keyword.iskeyword(b)
                 for b in names.values())
    if usable and len(set(derived)) == len(derived):
        return names
    return {node: f"n{i}" for i, node in enumerate(nodes)}


def _arguments(node, name):
    """The arguments of a call of ``node``'s forward (and, after ``g, ans``, of its VJPs)."""
    args = [f"{name[p]}_" for p in node.inputs] + ([f"**attrs_{name[node]}"] if node.attrs else [])
    return ", ".join(args)
