"""Gradients as graphs: ``mg.grad(loss, wrt)`` builds the backward pass out of ops.

``Graph.backward`` computes gradients as numbers. ``grad`` writes the same computation down as
*nodes*: for each node of ``wrt`` it returns a node whose value is d(loss)/d(node). The backward
pass becomes part of the graph, so you can draw it (``mg.draw``), run it (``mg.Graph(...)``)
and differentiate it again: ``mg.grad(mg.grad(f, x), x)`` is f''(x).

It walks the same ``BackwardPlan`` as ``Graph.backward`` (same order, same inputs wanted) and,
where the interpreter calls an op's VJP on arrays, it calls the op's *graph VJP* on nodes, which
its row declares (``ops.py``: ``graph=``), or a learner gives with

    mg.defvjp(cube, lambda g, ans, x: 3 * x * x * g)

A node that feeds several consumers receives one gradient from each, added up with ``mg.add``
(the interpreter adds arrays).

A *fused gradient* (``gelu_grad``, ``layer_norm_grad_x``, ...: one op computing an op's VJP)
declares its ``expansion``, the same maths written with ops; ``grad`` goes through the fused op
by going through its expansion, built on stand-ins for the op's inputs (``_through_expansion``).
Where a row declares that a fused gradient may replace the small graph its VJP builds (tanh's,
sigmoid's, relu's, cross-entropy's: ``fusions``), ``grad`` notes it on the node it returns
(``node.fusable``), for ``mg.function`` to do so (``compiler/rewrites.py``).
"""

from . import ops
from .dtypes import row_of
from .errors import BadValueError, OpError
from .gradops import ones_like, seed_for, zeros_like
from .graph import Graph, Input, Node, Op, auto_name, topological_order
from .opdef import GRAPH_VJPS, defvjp

__all__ = ["GRAPH_VJPS", "defvjp", "grad"]


def _vjp(node, k):
    """The graph VJP of ``node``'s op for its input ``k``, or an error naming the op."""
    op = row_of(node.op)                  # used with Python numbers: dtypes.WithNumbers
    vjps = GRAPH_VJPS.get(op) or GRAPH_VJPS.get(op.name)
    if vjps is not None:
        return vjps[k]
    if getattr(op, "on_your_engine", False):
        raise OpError(f"mg.grad met '{node.name}' ({op.name}), a node of your engine (mg.yours.Engine): "
                      f"there, gradients come from your backward, which calls each op's rule "
                      f"(node.op.vjps), not from mg.grad.")
    if getattr(op, "expansion", None) is not None:
        return lambda g, ans, *inputs, **attrs: _through_expansion(op.expansion, k, g, inputs, attrs)
    raise OpError(f"mg.grad: the op '{op.name}' (node '{node.name}') has no VJP written as a graph "
                  f"yet, so its backward cannot become part of the graph. Give it one with "
                  f"mg.defvjp(op, lambda g, ans, x: ...), building the gradient from ops.")


def _through_expansion(expansion, k, g, inputs, attrs):
    """The graph VJP for input ``k`` of an op that computes ``expansion``: ``grad`` of the
    expansion built on stand-ins for the op's inputs, the stand-ins then replaced by them
    (the gradient of the op's output with respect to its input ``k`` alone, not through the
    other inputs, which may themselves depend on it). None if the expansion does not read it."""
    stand_ins = [Input(f"_{i}", dtype=_known_dtype(x)) for i, x in enumerate(inputs)]
    seed = Input("_seed")
    out = expansion(*stand_ins, **attrs)
    if stand_ins[k] not in topological_order([out]):
        return None
    return _replaced(grad(out, stand_ins[k], seed=seed), {seed: g, **dict(zip(stand_ins, inputs))})


def _known_dtype(node):
    """The dtype of ``node``'s value if known now (a leaf's), else None: a stand-in for integer
    labels stays integer."""
    dtype = getattr(node.value, "dtype", None) if node.value is not None else (
        node.dtype if node.kind == "input" else None)
    return dtype if dtype is not None and dtype.kind in "biuf" else None


def _replaced(output, new):
    """``output`` built again with the nodes ``new`` maps put in place of its keys."""
    for node in topological_order([output]):
        if node not in new and node.op is not None:
            inputs = [new.get(p, p) for p in node.inputs]
            if any(a is not b for a, b in zip(inputs, node.inputs)):
                new[node] = Op(row_of(node.op), inputs, node.attrs)
    return new.get(output, output)


def _noted_fusion(gi, node, k, g):
    """Note on ``gi``, the graph of ``node``'s VJP for input ``k``, the fused gradient its row
    declares for it (if any): the fusion, the gradient ``g`` and the nodes the fused op reads."""
    fusion = row_of(node.op).fusions.get(k)
    if fusion is not None and gi is not None:
        read = {"g": g, "ans": node}
        gi.fusable = (fusion, g, [read[r] if isinstance(r, str) else node.inputs[r] for r in fusion.reads])


# -- grad -----------------------------------------------------------------------------------------

def _add(a, b):
    """Sum two gradients (nodes, or tuples of nodes for a multi-output op; None means zero)."""
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b))
    return b if a is None else a if b is None else ops.add(a, b)


def _check_one_array(node):
    """A BadValueError for a multi-output op itself (``mg.split``'s op, not one of its parts):
    its value is a tuple of arrays, and a gradient is a node of one array's shape."""
    n = getattr(node.op, "n_outputs", 1)
    if n > 1:
        parts = ", ".join(f"{node.name}[{i}]" for i in range(n))
        raise BadValueError(
            f"mg.grad: '{node.name}' is the {node.op.name} op itself, whose value is a tuple of {n} "
            f"arrays, one per output; a gradient is one node of one array's shape. Ask for the "
            f"gradients of its outputs, {parts} (the nodes mg.{node.op.name} returned).")


def grad(output, wrt, seed=None):
    """For each node of ``wrt`` (a list of nodes or names, or one), a node whose value is
    d(output)/d(node).

    The gradient is built from ops, following ``Graph(output).plan(wrt)``: the same steps
    ``Graph.backward`` takes. ``seed`` (a node; checked, when it runs, to have the output's shape)
    is the gradient of the output to start from; by default ``ones_like(output)``:
    d(output)/d(output) = 1 (for a non-scalar output, this is the gradient of ``sum(output)``).
    A node the output does not depend on gets zeros.
    """
    graph = Graph(output)
    single = isinstance(wrt, (Node, str)) or not hasattr(wrt, "__iter__")   # one node (or a mistake)
    wrt = [graph.node(w) for w in ([wrt] if single else wrt)]     # nodes, or their names
    for w in wrt:
        _check_one_array(w)
    plan = graph.plan(wrt)
    grads = {plan.output: ones_like(output) if seed is None else seed_for(seed, output)}
    for node, wanted in plan.steps:
        g = grads.get(node)
        if g is None or all(gi is None for gi in (g if isinstance(g, tuple) else (g,))):
            continue
        for k in wanted:
            gi = _vjp(node, k)(g, node, *node.inputs, **node.attrs)
            _noted_fusion(gi, node, k, g)
            parent = node.inputs[k]
            if gi is not None:
                grads[parent] = _add(grads.get(parent), gi)
    result = [grads.get(w) if grads.get(w) is not None else zeros_like(w) for w in plan.graded]
    named = {}
    for w, g in zip(plan.graded, result):
        if g.op is not None and g.name.startswith(g.op.name + "_") and g not in named.values():
            g.name = named[w] = auto_name(f"d{plan.output.name}/d{w.name}")
    by_node = dict(zip(plan.graded, result))
    return by_node[wrt[0]] if single else [by_node[w] for w in wrt]
