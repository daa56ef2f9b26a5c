"""Codegen: a graph written out as straight-line Python, one line per op.

``Graph.forward`` and ``Graph.backward`` in ``graph.py`` are interpreters: they loop over the
nodes and, for each one, look up its op, gather its inputs' values, check for hooks, and so on.
For a fixed graph the loop takes the same path every time, so it can be written out once, as
Python source with one call per op and one per gradient: ``backward_function(plan)`` writes a
whole ``graph.backward`` as one function, which ``Graph.backward`` runs from its second call on
(``fastpath.py`` says when); ``print(mg.codegen.source(graph, wrt))`` shows it. The training
step of ``mg.function`` is written by its own writer, ``compiler/stepcode.py``, which names
values and calls ops as this module does (``identifiers``, ``arguments``).

For ``y = tanh(w * x)`` and ``wrt=[w]``, ``source`` shows (abridged)::

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
imports nothing of ``graph.py``, so it can only do what the interpreter does. It calls the same
op functions on the same arrays in the same order, so the numbers are identical (the tests check
this bit for bit). The names that start with ``_`` are graph.py's helpers, the plan's
``callbacks`` (a ``graph.Callbacks``): ``_feed`` gives the Inputs their values, ``_seed`` the
gradient to start from, ``_value`` a leaf's array, ``_store`` keeps an op's value, ``_checked``
checks a VJP's result as the interpreter does, ``_add`` sums two gradients, ``_fill`` fills in
a multi-output op's unused gradients and ``_give`` sets ``node.grad``.

The function knows which op each of its lines calls (``failed_op``): when an op raises in it,
the fast path raises the interpreter's own error for that op (``plan.op_failed``), and the op
has run once, not twice.

``compile_function`` compiles what both writers write and registers their source with ``linecache``, as if it
were a file: a traceback through generated code (an op that fails, a ``traceback.print_stack()``
in an op's forward) shows the generated line, e.g.
``File "<minigraph 3: backward of 'loss'>", line 22, in _run`` followed by that line's text.
"""

import itertools
import keyword
import linecache
import re
import unicodedata
import weakref

import numpy as np

_serial = itertools.count(1)          # each generated function gets a file name of its own


def compile_function(text, env, title):
    """Compile ``text`` (the source of a function ``_run``) with the names of ``env`` and return
    ``_run``. Its file name, ``<minigraph 3: {title}>``, is registered with ``linecache`` for as
    long as the function lives, so tracebacks show its lines."""
    filename = f"<minigraph {next(_serial)}: {title}>"
    exec(compile(text, filename, "exec"), env)
    run = env["_run"]
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    weakref.finalize(run, linecache.cache.pop, filename, None)
    return run


# -- the backward of a BackwardPlan -----------------------------------------------------------

def backward_function(plan):
    """The straight-line ``_run(feed, seed)`` of a ``BackwardPlan`` (``graph.plan(wrt)``): the
    same work as ``graph.backward(feed, seed, wrt)``, returning the output's value. Its
    ``op_lines`` say which op each line calls (see ``failed_op``)."""
    text, env, op_lines = _backward_code(plan)
    run = compile_function(text, env, f"backward of '{plan.output.name}'")
    run.op_lines = op_lines
    return run


def failed_op(run, error):
    """Where in ``run`` (a ``backward_function``) an op raised ``error``: ``(node, None)`` if
    ``node``'s forward raised it, ``(node, k)`` if its VJP for input ``k`` did; None if no op
    raised it (a helper of the plan did: its error is the interpreter's already). Read from
    the traceback: the line of ``run`` it passed through, and the function that line called."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code is not run.__code__:
        tb = tb.tb_next
    if tb is None or tb.tb_lineno not in run.op_lines:
        return None
    node, k = run.op_lines[tb.tb_lineno]
    callee = tb.tb_next                   # a forward's line also stores the value it computed
    if k is None and callee is not None and callee.tb_frame.f_code is run.__globals__["_store"].__code__:
        return None
    return node, k


def source(graph, wrt=None):
    """The Python source ``graph.backward(wrt=wrt)`` runs from its second call on (to read, not
    to edit)."""
    return backward_source(graph.plan(wrt))[0]


def backward_source(plan):
    """The source and the names it uses. Helpers start with ``_``; every other name comes from a
    node: ``x`` is the node, ``x_`` its value, ``g_x`` its gradient, ``f_x`` its op's forward.
    Everything it calls comes from the plan: the op functions and the plan's ``callbacks``."""
    text, env, _ = _backward_code(plan)
    return text, env


def _backward_code(plan):
    """``backward_source``, and the op each line calls: line number -> ``(node, None)`` for a
    forward, ``(node, k)`` for the VJP of input ``k``."""
    name = identifiers(plan.nodes)
    value = {node: f"{name[node]}_" for node in plan.nodes}
    env = {name[node]: node for node in plan.nodes}
    env.update({f"_{helper}": call for helper, call in plan.callbacks._asdict().items()})
    env.update(_ndarray=np.ndarray, _type=type)
    op_lines = {}                         # filled in as the lines are written
    out = name[plan.output]
    lines = ["def _run(_feed_values, _seed_value):", "    _feed(_feed_values)"]
    lines += [f"    {value[n]} = _value({name[n]})" for n in plan.leaves]

    # forward: recompute an op only if one of its inputs is newer (as Graph.forward does)
    for node in plan.ops:
        me = name[node]
        args = arguments(node, value, f"attrs_{me}")
        env[f"f_{me}"], env[f"attrs_{me}"] = node.op.forward, node.attrs
        newer = [f"{name[p]}.stamp > {me}.stamp" for p in dict.fromkeys(node.inputs)]
        lines += [f"    if {' or '.join(newer + [f'_value({me}) is None'])}:"]
        op_lines[len(lines) + 1] = (node, None)
        lines += [f"        {me}_ = _store({me}, f_{me}({args}))",
                  "    else:",
                  f"        {me}_ = _value({me})"]

    # backward: one VJP call per edge that needs a gradient; what a node receives is summed
    steps = [(node, wanted) for node, wanted in plan.steps if wanted]   # others send nothing
    receiving = ({plan.output} | {node for node, _ in steps} |
                 {node.inputs[k] for node, wanted in steps for k in wanted})
    lines += [f"    {name[n]}.grad = None" for n in plan.nodes]
    lines += [f"    g_{name[n]} = None" for n in plan.nodes if n in receiving and n is not plan.output]
    lines += [f"    g_{out} = _seed({out}_, _seed_value)"]
    for node, wanted in steps:
        me = name[node]
        args = arguments(node, value, f"attrs_{me}")
        inputs = ", ".join(value[p] for p in node.inputs)
        lines += [f"    if g_{me} is not None:"]
        upstream = f"g_{me}"
        if node.op.n_outputs > 1:                 # one gradient per output, zeros if unused
            upstream = "_g"
            lines += [f"        _g = _fill(g_{me}, {me}_)"]
        for k in wanted:
            parent = name[node.inputs[k]]
            env[f"vjp_{me}_{k}"] = node.op.vjps[k]
            op_lines[len(lines) + 1] = (node, k)
            lines += [f"        _gi = vjp_{me}_{k}({upstream}, {me}_, {args})",
                      f"        if not (_type(_gi) is _type({parent}_) is _ndarray and _gi.shape == {parent}_.shape):",
                      f"            _gi = _checked({me}, {k}, _gi, [{inputs}])",
                      f"        g_{parent} = _gi if g_{parent} is None else _add(g_{parent}, _gi)"]
    graded = [n for n in plan.graded if n in receiving]
    lines += [f"    _give(({''.join(name[n] + ', ' for n in graded)}), "
              f"({''.join(f'g_{name[n]}, ' for n in graded)}))",
              f"    return {out}_"]
    return "\n".join(lines) + "\n", env, op_lines


def identifiers(nodes):
    """A Python name for each node, made from its own name (``mlp.fc1`` -> ``mlp_fc1``); plain
    numbers (``n0``, ``n1``, ...) if those names could clash with each other or with keywords.
    Python reads a name in its NFKC form (``kᵀ`` as ``kT``, ``x²`` as ``x2``), so the names are
    made of that form: the code and the dict of the names it uses spell them alike."""
    names = {node: re.sub(r"\W", "_", unicodedata.normalize("NFKC", node.name)) for node in nodes}
    derived = [f"{prefix}{names[n]}{suffix}" for n in nodes
               for prefix, suffix in [("", ""), ("", "_"), ("g_", ""), ("f_", ""), ("attrs_", ""),
                                      ("into_", ""), ("out_", "")]]
    derived += [f"vjp_{names[n]}_{k}" for n in nodes for k in range(len(n.inputs))]
    usable = all(b.isidentifier() and not b.startswith("_") and not keyword.iskeyword(b)
                 for b in names.values())
    if usable and len(set(derived)) == len(derived):
        return names
    return {node: f"n{i}" for i, node in enumerate(nodes)}


def arguments(node, value, attrs):
    """The arguments of a call of ``node``'s forward (and, after ``g, ans``, of its VJPs), for
    both writers: its inputs' variables (``value[input]``), then ``**attrs`` if the op has any."""
    return ", ".join([value[p] for p in node.inputs] + ([f"**{attrs}"] if node.attrs else []))
