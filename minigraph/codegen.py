"""Codegen: a graph written out as straight-line Python, one line per op.

``Graph.forward`` and ``Graph.backward`` in ``graph.py`` are interpreters: they loop over the
nodes and, for each one, look up its op, gather its inputs' values, check for hooks, and so on.
For a fixed graph the loop takes the same path every time, so it can be written out once, as
Python source with one call per op (and, for a backward, one per gradient). Two parts of
minigraph do this:

* ``backward_function(plan)``: a whole ``graph.backward`` as one function, which
  ``Graph.backward`` runs from its second call on (``fastpath.py`` says when);
  ``print(mg.codegen.source(graph, wrt))`` shows it;
* ``step_source(...)``: the training step of ``mg.function`` (``compiled.py``), a graph fixed
  once, rewritten (``rewrite.py``) and given buffers (``memoryplan.py``) before it is written;
  ``print(train.source)`` shows it;
* ``raising_code(...)``: the code of a function that only raises, for the exercise checks'
  engine rule (``grading/toolkit/engine.py``), which swaps it into the engine's own functions
  while an answer runs.

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
this bit for bit).

``compile_function`` compiles both kinds and registers their source with ``linecache``, as if it
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
    same work as ``graph.backward(feed, seed, wrt)``, returning the output's value."""
    text, env = backward_source(plan)
    return compile_function(text, env, f"backward of '{plan.output.name}'")


def source(graph, wrt=None):
    """The Python source ``graph.backward(wrt=wrt)`` runs from its second call on (to read, not
    to edit)."""
    return backward_source(graph.plan(wrt))[0]


def backward_source(plan):
    """The source and the names it uses. Helpers start with ``_``; every other name comes from a
    node: ``x`` is the node, ``x_`` its value, ``g_x`` its gradient, ``f_x`` its op's forward.
    Everything it calls comes from the plan: the op functions and the plan's own steps."""
    name = identifiers(plan.nodes)
    value = {node: f"{name[node]}_" for node in plan.nodes}
    env = {name[node]: node for node in plan.nodes}
    env.update(_feed=plan.feed, _seed=plan.seed, _value=plan.value_of, _store=plan.store_value,
               _add=plan.add_gradients, _fill=plan.fill_unused_outputs,
               _checked=plan.checked_gradient, _give=plan.give_gradients, _ndarray=np.ndarray,
               _type=type)
    out = name[plan.output]
    lines = ["def _run(_feed_values, _seed_value):", "    _feed(_feed_values)"]
    lines += [f"    {value[n]} = _value({name[n]})" for n in plan.leaves]

    # forward: recompute an op only if one of its inputs is newer (as Graph.forward does)
    for node in plan.ops:
        me = name[node]
        args = _arguments(node, value, f"attrs_{me}")
        env[f"f_{me}"], env[f"attrs_{me}"] = node.op.forward, node.attrs
        newer = [f"{name[p]}.stamp > {me}.stamp" for p in dict.fromkeys(node.inputs)]
        lines += [f"    if {' or '.join(newer + [f'_value({me}) is None'])}:",
                  f"        {me}_ = _store({me}, f_{me}({args}))",
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
        args = _arguments(node, value, f"attrs_{me}")
        inputs = ", ".join(value[p] for p in node.inputs)
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


# -- the step of mg.function ----------------------------------------------------------------------

def step_source(program, inputs, value_of, memory=None, header=(), write=None, subtract=None):
    """The source of ``_run(arrays)`` for ``mg.function`` and the names it uses: one line per op
    term of ``program`` (a ``rewrite.Program``), named as in the backward's code (``x_`` is the
    value of ``x``, ``f_h`` the forward of op ``h``); ``arrays`` are the values of the Input
    nodes ``inputs``, in order; Parameters are read with ``value_of``, constants are names of
    the code. With a ``memory`` plan (``memoryplan.py``), an op that has a buffer writes into it
    (``into_h(..., out=out_h)``, ``out_h`` a view of its buffer), what the plan says is copied,
    is, and an update the plan writes early is written with ``write(parameter, value)``, or,
    for an update ``W - change`` the plan says is subtracted, ``subtract(parameter, change)``
    (its result is then None). It returns the values of ``program.results``, in a list;
    ``header`` lines open the source, as comments."""
    terms = program.terms
    name = identifiers(terms)
    value = {t: f"{name[t]}_" for t in terms}
    into = memory.into if memory else {}
    copied = memory.copied if memory else set()
    fresh = memory.fresh if memory else set()
    transposed = memory.transposed if memory else set()
    env = {"_value": value_of}
    lines = [f"# {line}" for line in header] + ["def _run(_arrays):"]
    buffers = [np.empty(size, np.uint8) for size in (memory.buffers if memory else [])]
    views = {}
    slot = {node: k for k, node in enumerate(inputs)}
    writes = memory.writes if memory else {}
    subtracted = memory.subtracted if memory else {}
    skipped = {program.results[k] for k in subtracted}          # computed by the subtraction
    env["_write"], env["_subtract"] = write, subtract
    for i, t in enumerate(terms):
        lines += _writes(writes.get(i - 1, []), program, name, subtracted)
        me = name[t]
        if t in skipped:
            continue
        if t.kind == "constant":
            env[value[t]] = t.value
            continue
        if t.kind == "input":
            read = f"_arrays[{slot[t.node]}]" + (".copy()" if t in fresh else "")
            lines.append(f"    {f'{value[t]} = {read}':<40} # input {t.name}")
            continue
        if t.kind == "parameter":
            env[me] = t.node
            lines.append(f"    {f'{value[t]} = _value({me})':<40} # parameter {t.name}")
            continue
        args = _arguments(t, value, f"attrs_{me}")
        env[f"attrs_{me}"] = t.attrs
        if t in transposed:
            call, where = f"{value[t]} = {value[t.args[0]]}.T", ""
        elif t in into:
            form, b, shape, dtype = into[t]
            if (b, shape, dtype) not in views:          # one view object per buffer and shape:
                views[b, shape, dtype] = _view(buffers[b], shape, dtype)   # numpy's out= is
            env[f"into_{me}"], env[f"out_{me}"] = form, views[b, shape, dtype]   # quickest on
            # the very array it reads (np.tanh(z, out=z)), slower on another view of its memory
            call = f"{value[t]} = into_{me}({args}, out=out_{me})"
            where = f"  -> buffer {b}"
        else:
            env[f"f_{me}"] = t.op.forward
            call, where = f"{value[t]} = f_{me}({args})", ""
        lines.append(f"    {call:<40} # {t.name} = {t.op.name}"
                     f"({', '.join(a.name for a in t.args)}){where}")
    lines += _writes(writes.get(len(terms) - 1, []), program, name, subtracted)
    written = {k for pairs in writes.values() for _, k in pairs}
    returned = ["None" if k in written else value[t] + (".copy()" if k in copied else "")
                for k, t in enumerate(program.results)]
    lines.append(f"    return [{', '.join(returned)}]")
    return "\n".join(lines) + "\n", env


def _view(buffer, shape, dtype):
    """The start of ``buffer`` (bytes) seen as an array of ``shape`` and ``dtype``, in C order."""
    return buffer[:int(np.prod(shape, dtype=int)) * dtype.itemsize].view(dtype).reshape(shape)


def _writes(pairs, program, name, subtracted):
    """The lines that write updates into their Parameters: (Parameter's term, result number);
    ``subtracted``: result number -> ``change``, for those written as ``W -= change``."""
    lines = []
    for p, k in pairs:
        new = program.results[k]
        if k in subtracted:
            change = subtracted[k]
            lines.append(f"    {f'_subtract({name[p]}, {name[change]}_)':<40} # {p.name} <- {new.name} = "
                         f"{p.name} - {change.name}, subtracted in place")
        else:
            lines.append(f"    {f'_write({name[p]}, {name[new]}_)':<40} # {p.name} <- {new.name}, in place")
    return lines


def _arguments(node, value, attrs):
    """The arguments of a call of ``node``'s forward (and, after ``g, ans``, of its VJPs), for
    both writers: its inputs' variables (``value[input]``), then ``**attrs`` if the op has any."""
    return ", ".join([value[p] for p in node.inputs] + ([f"**{attrs}"] if node.attrs else []))


# -- a function that raises, for the exercise checks' engine rule -----------------------------------

def raising_code(n_free, module, error, message):
    """The code of a function that takes any arguments and raises ``module.error(message)``, with
    ``n_free`` free variables: a function's ``__code__`` may be swapped only for code with as
    many, and a swapped function keeps its own globals, so the code imports what it raises."""
    free = [f"_free{i}" for i in range(n_free)]
    text = "\n".join(["def outer():",
                      *([f"    {', '.join(free)} = {', '.join(['None'] * n_free)}"] if free else []),
                      "    def refused(*_args, **_kwargs):",
                      f"        from {module} import {error}",
                      f"        raise {error}({message!r})",
                      *([f"        {', '.join(free)}"] if free else []),     # makes them free
                      "    return refused", ""])
    space = {}
    exec(compile(text, f"<minigraph: refused, {error}>", "exec"), space)
    return space["outer"]().__code__
