"""How a row of the op table is made: ``defop(name, forward, vjps, ...)``.

An op is a forward function plus one vector-Jacobian product (VJP) per input; ``defop`` stores
them in an ``OpDef`` and returns the function that builds the op's nodes. The rows themselves
are in ``ops.py`` (the ops gradients are made of in ``gradops.py``); a learner's own op
(``mg.defop``) is made the same way.

A row may say more of its maths, all in the same place:

* ``graph``: its VJPs written with ops, one per input, ``(g, ans, *inputs, **attrs) -> node``
  (None: no gradient flows), so that ``mg.grad`` builds the backward pass as a graph. A
  learner gives their own op one later with ``mg.defvjp``; both land in ``GRAPH_VJPS``.
* ``out``: the same forward writing into an array it is given, ``out(*inputs, **attrs, out=)``,
  which ``mg.function``'s memory plan uses to reuse buffers (``compiler/memory.py``).
* ``expansion``: for an op that computes a gradient in one step (a *fused gradient*, such as
  ``gelu_grad``), the same maths written with ops; the op's own derivatives are those of its
  expansion (``mg.grad`` and ``Graph.backward`` go through it again that way).
* ``fusions``: ``{input k: Fusion}``, the fused gradient that computes the VJP for input ``k``
  when ``mg.grad``'s graph for it is written with several ops (``mg.function`` puts it in their
  place, ``compiler/rewrites.py``), or ``{name: op}`` for a fusion of two ops (``matmul``'s
  ``"accumulate"``, a + x @ y).

Arguments after the inputs are *attributes*: fixed numbers written into the graph, such as the
``axis`` of a sum. ``forward``'s signature says which attributes an op takes, so ``sum(x, 0)``
means ``sum(x, axis=0)`` and ``sum(x, axes=0)`` is refused with the list of the right names.
"""

import functools
import inspect

import numpy as np

from .dtypes import float_dtype
from .errors import BadValueError
from .graph import Constant, Graph, Node, Op, Parameter, as_node

GRAPH_VJPS = {}          # op (its OpDef) or op name -> one function per input: (g, ans, *inputs, **attrs) -> node


class OpDef:
    """One row of the op table: its ``name``, ``forward``, ``vjps`` and what else it declares
    (``out``, ``expansion``, ``fusions``: see the module's docstring)."""

    def __init__(self, name, forward, vjps, symbol=None, n_outputs=1, out=None, expansion=None,
                 fusions=None):
        self.name, self.forward, self.vjps = name, forward, tuple(vjps)
        self.symbol, self.n_outputs = symbol or name, n_outputs
        self.out, self.expansion, self.fusions = out, expansion, dict(fusions or {})

    def __repr__(self):
        return f"OpDef('{self.name}')"

    @functools.cached_property
    def attributes(self):
        """``(positional, names)`` of the op's attributes (``_attributes``), read once and kept
        on the row itself: a cache beside it would keep every op ever made alive, and with it
        the graphs its functions hold."""
        return _attributes(self)


class Fusion:
    """A fused gradient that may replace ``mg.grad``'s graph of an op's VJP: ``op`` (a fused
    gradient's node builder) applied to what it ``reads`` (names: "g", "ans" or the row's
    inputs by position, 0, 1, ...), where ``when(*values read)`` holds (default: always);
    ``unit_gradient``: ``op`` is the VJP for g = 1, only where g is the constant 1."""

    def __init__(self, op, reads, when=None, unit_gradient=False):
        self.op, self.reads, self.when, self.unit_gradient = op, tuple(reads), when, unit_gradient


def defop(name, forward, vjps, symbol=None, n_outputs=1, graph=None, out=None, expansion=None,
          fusions=None):
    """Add an op to the table; returns the function that builds its nodes.

    >>> square = defop("square", lambda x: x * x, [lambda g, ans, x: 2 * x * g], symbol="x²")
    >>> y = square(x)                     # an Op node
    An op with ``n_outputs > 1`` returns a tuple of arrays from ``forward`` and receives a tuple
    of gradients in its VJPs; building it gives one node per output. Arguments after the inputs
    (one per VJP) are attributes, not nodes: ``sum(x, 0)`` means ``sum(x, axis=0)``. ``graph``,
    ``out``, ``expansion`` and ``fusions`` are the rest of the row's maths (the module's docstring).
    A fused gradient (with an ``expansion``) gets its numeric VJPs from it: ``vjps`` is None.
    """
    if vjps is None and expansion is not None:
        vjps = [_numeric_through(expansion, k) for k in range(_n_inputs(expansion))]
    if not callable(forward) or vjps is None or callable(vjps) or not all(callable(v) for v in vjps):
        raise BadValueError(f"defop('{name}', forward, vjps): forward is a function and vjps a list "
                            f"of functions, one per input (even for one input: [vjp]).")
    opdef = OpDef(name, forward, vjps, symbol, n_outputs, out, expansion, fusions)
    if graph is not None:
        GRAPH_VJPS[opdef] = [_nothing if vjp is None else vjp for vjp in graph]
    n_inputs = len(opdef.vjps)

    def build(*args, name=None, **attrs):
        inputs, extra = args[:n_inputs], args[n_inputs:]
        if extra:
            attrs.update(_positional_attributes(opdef, extra))
        _check_attributes(opdef, attrs)
        nodes = [as_node(x, f"input {i + 1} of mg.{opdef.name}") for i, x in enumerate(inputs)]
        node = Op(opdef, nodes, attrs, name)
        if n_outputs == 1:
            return node
        return tuple(Op(OUTPUT, [node], {"index": i}, f"{node.name}[{i}]") for i in range(n_outputs))

    build.opdef = opdef
    build.__name__ = name
    return build


def defvjp(op, *vjps):
    """Give an op (``mg.tanh``; or a name, for every op of that name) its VJP written with ops,
    one function per input:
    ``vjp(g, ans, *inputs, **attrs)`` gets *nodes* and returns a node; None instead of a function
    (or a function returning None) means no gradient flows to that input."""
    GRAPH_VJPS[getattr(op, "opdef", op)] = [_nothing if vjp is None else vjp for vjp in vjps]


def _nothing(*args, **attrs):
    return None


def _n_inputs(expansion):
    """How many inputs an expansion takes: its parameters without a default."""
    return sum(p.default is p.empty for p in inspect.signature(expansion).parameters.values())


def _numeric_through(expansion, k):
    """The numeric VJP for input ``k`` of an op that computes ``expansion``: ``Graph.backward``
    through the expansion built on the values, seeded with the gradient received."""
    def vjp(h, ans, *inputs, **attrs):
        leaves = [(Parameter if i == k else Constant)(x, name=f"_{i}") for i, x in enumerate(inputs)]
        graph = Graph(expansion(*leaves, **attrs))
        if leaves[k] not in graph.nodes:                 # the expansion does not read it
            return np.zeros(np.shape(inputs[k]), float_dtype(h))
        graph.backward(seed=h, wrt=[leaves[k]])
        return leaves[k].grad
    return vjp


# picking output i of a multi-output op: its VJP puts g in slot i of a tuple of gradients
OUTPUT = OpDef("output", lambda t, index: t[index],
               [lambda g, ans, t, index: tuple(g if i == index else None for i in range(len(t)))], "out")
defvjp(OUTPUT, lambda g, ans, t, index: tuple(g if i == index else None for i in range(t.op.n_outputs)))


def _attributes(opdef):
    """What its ``forward``'s parameters after the inputs say of an op's attributes
    (``OpDef.attributes`` keeps it): ``(positional, names)``. ``positional``: the attributes an
    argument after the inputs fills, in order. ``names``: every attribute the op takes, or None
    for any (when ``forward`` takes ``**kwargs``). A builtin without a signature takes no
    positional attribute and any name. ``out`` and ``dtype`` are numpy's own parameters, never
    attributes."""
    try:
        parameters = list(inspect.signature(opdef.forward).parameters.values())
    except ValueError:                               # a builtin without a signature
        return [], None

    def named(params, *kinds):
        return [p.name for p in params if p.name not in ("out", "dtype") and p.kind in kinds]

    P, n_inputs = inspect.Parameter, len(opdef.vjps)
    positional = named(parameters[n_inputs:], P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
    kinds = {p.kind for p in parameters}
    if P.VAR_KEYWORD in kinds:
        return positional, None
    start = 0 if P.VAR_POSITIONAL in kinds else n_inputs     # forward(*xs): the inputs are xs
    return positional, named(parameters[start:], P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD,
                             P.KEYWORD_ONLY)


def _check_attributes(opdef, attrs):
    names = opdef.attributes[1]
    unknown = [a for a in attrs if names is not None and a not in names]
    if unknown:
        raise BadValueError(f"mg.{opdef.name} has no attribute {', '.join(map(repr, unknown))}; its "
                            f"attributes are: {', '.join(names) or 'none'}.")
    for name, value in attrs.items():
        node = next((v for v in (value if isinstance(value, tuple) else (value,))
                     if isinstance(v, Node)), None)
        if node is not None:
            raise BadValueError(f"mg.{opdef.name}'s attribute {name} is the node '{node.name}', but "
                                f"attributes are fixed numbers written into the graph (axis=0, "
                                f"x[0], x[:, 1:3]); only an op's inputs can be nodes.")


def _positional_attributes(opdef, extra):
    """``{"axis": 0}`` for ``sum(x, 0)``: name the arguments after the inputs by ``forward``'s
    parameters; more arguments than that is a mistake worth saying so."""
    n_inputs, names = len(opdef.vjps), opdef.attributes[0]
    if len(extra) > len(names):
        raise TypeError(f"{opdef.name} takes {n_inputs} input(s)"
                        + (f" and then the attributes {', '.join(names)}" if names else "")
                        + f"; it was given {n_inputs + len(extra)} positional arguments")
    return dict(zip(names, extra))
