"""Backward, unrolled: a graph's forward and backward written out as one straight-line function.

``Graph.backward`` in ``graph.py`` is an interpreter: it loops over the nodes and, for each one,
looks up its op, gathers its inputs' values, checks for hooks, and so on. On small layers that
bookkeeping costs as much as the numpy work itself. For a fixed graph the loop takes the same
path every time, so it can be written out once, as Python source with one call per op and one
per gradient. For ``y = tanh(w * x)`` and ``wrt=[w]``, ``print(mg.unrolled.source(graph, [w]))``
shows (abridged)::

    def _run(_feed_values, _seed_value):
        _feed(_feed_values)
        w_ = _value(w)                                   # the node's own array
        x_ = _value(x)
        if w.stamp > mul_1.stamp or x.stamp > mul_1.stamp or _value(mul_1) is None:
            mul_1_ = _store(mul_1, f_mul_1(w_, x_))      # recompute only what is stale
        else:
            mul_1_ = _value(mul_1)
        ...
        g_y = _seed(y_, _seed_value)                     # 1 for a scalar output
        if g_y is not None:
            _gi = vjp_y_0(g_y, y_, mul_1_)               # tanh's VJP: g * (1 - y**2)
            ...
            g_mul_1 = _gi if g_mul_1 is None else _add(g_mul_1, _gi)
        ...
        _give((w, ), (g_w, ))                            # w.grad = g_w
        return y_

What to compute, in which order, and the helpers it calls all come from the graph's
``BackwardPlan`` (``graph.plan(wrt)``), the same plan ``Graph.backward`` interprets: this module
imports nothing of ``graph.py``, so it can only do what the interpreter does.

``Graph.backward`` runs that function from the second call with the same ``wrt`` on (once
the interpreter has run the plan through without error), when
nothing unusual is going on: no hooks, no ``detect_anomaly``, at most
``MAX_OPS`` ops. It calls the same op functions on the same arrays in the same order as the
interpreter, so the numbers are identical (the tests check this bit for bit). If anything
raises, here or while writing the function, the interpreter runs the call again (so an op that
fails runs twice), and its error message says what went wrong.
"""

import keyword
import re

import numpy as np

MAX_OPS = 1000                    # bigger graphs stay with the interpreter: writing them out is slow


def build(plan):
    """The unrolled ``_run(feed, seed)`` of a ``BackwardPlan`` (``graph.plan(wrt)``)."""
    text, env = _write(plan)
    exec(compile(text, f"<minigraph: backward of '{plan.output.name}'>", "exec"), env)
    return env["_run"]


def source(graph, wrt=None):
    """The Python source ``graph.backward(wrt=wrt)`` runs (to read, not to edit)."""
    return _write(graph.plan(wrt))[0]


def _write(plan):
    """The source and the names it uses. Helpers start with ``_``; every other name comes from a
    node: ``x`` is the node, ``x_`` its value, ``g_x`` its gradient, ``f_x`` its op's forward.
    Everything it calls comes from the plan: the op functions and the plan's own steps."""
    name = _identifiers(plan.nodes)
    env = {name[node]: node for node in plan.nodes}
    env.update(_feed=plan.feed, _seed=plan.seed, _value=plan.value_of, _store=plan.store_value,
               _add=plan.add_gradients, _fill=plan.fill_unused_outputs,
               _checked=plan.checked_gradient, _give=plan.give_gradients, _ndarray=np.ndarray,
               _type=type)
    out = name[plan.output]
    lines = ["def _run(_feed_values, _seed_value):", "    _feed(_feed_values)"]
    lines += [f"    {name[n]}_ = _value({name[n]})" for n in plan.leaves]

    # forward: recompute an op only if one of its inputs is newer (as Graph.forward does)
    for node in plan.ops:
        me, args = name[node], _arguments(node, name)
        env[f"f_{me}"], env[f"attrs_{me}"] = node.op.forward, node.attrs
        newer = [f"{name[p]}.stamp > {me}.stamp" for p in dict.fromkeys(node.inputs)]
        lines += [f"    if {' or '.join(newer + [f'_value({me}) is None'])}:",
                  f"        {me}_ = _store({me}, f_{me}({args}))",
                  f"    else:",
                  f"        {me}_ = _value({me})"]

    # backward: one VJP call per edge that needs a gradient; what a node receives is summed
    steps = [(node, wanted) for node, wanted in plan.steps if wanted]   # others send nothing
    receiving = ({plan.output} | {node for node, _ in steps} |
                 {node.inputs[k] for node, wanted in steps for k in wanted})
    lines += [f"    {name[n]}.grad = None" for n in plan.nodes]
    lines += [f"    g_{name[n]} = None" for n in plan.nodes if n in receiving and n is not plan.output]
    lines += [f"    g_{out} = _seed({out}_, _seed_value)"]
    for node, wanted in steps:
        me, args = name[node], _arguments(node, name)
        inputs = ", ".join(f"{name[p]}_" for p in node.inputs)
        lines += [f"    if g_{me} is not None:"]
        upstream = f"g_{me}"
        if node.op.n_outputs > 1:                 # one gradient per output, zeros if unused
            upstream = "_g"
            lines += [f"        _g = _fill(g_{me}, {me}_)"]
        for k in wanted:
            parent = name[node.inputs[k]]
            env[f"vjp_{me}_{k}"] = node.op.vjps[k]
            lines += [f"        _gi = vjp_{me}_{k}({upstream}, {me}_, {args})",
                      f"        if not (_type(_gi) is _type({parent}_) is _ndarray and _gi.shape == {parent}_.shape):",
                      f"            _gi = _checked({me}, {k}, _gi, [{inputs}])",
                      f"        g_{parent} = _gi if g_{parent} is None else _add(g_{parent}, _gi)"]
    graded = [n for n in plan.graded if n in receiving]
    lines += [f"    _give(({''.join(name[n] + ', ' for n in graded)}), "
              f"({''.join(f'g_{name[n]}, ' for n in graded)}))",
              f"    return {out}_"]
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
