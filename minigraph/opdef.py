"""How a row of the op table is made: ``defop(name, forward, vjps)``.

An op is a forward function plus one vector-Jacobian product (VJP) per input; ``defop`` stores
them in an ``OpDef`` and returns the function that builds the op's nodes. The rows themselves
are in ``ops.py``; a learner's own op (``mg.defop``) is made the same way.

Arguments after the inputs are *attributes*: fixed numbers written into the graph, such as the
``axis`` of a sum. ``forward``'s signature says which attributes an op takes, so ``sum(x, 0)``
means ``sum(x, axis=0)`` and ``sum(x, axes=0)`` is refused with the list of the right names.
"""

import functools
import inspect

from .errors import BadValueError
from .graph import Node, Op, as_node


class OpDef:
    """One row of the op table."""

    def __init__(self, name, forward, vjps, symbol=None, n_outputs=1):
        self.name, self.forward, self.vjps = name, forward, tuple(vjps)
        self.symbol, self.n_outputs = symbol or name, n_outputs

    def __repr__(self):
        return f"OpDef('{self.name}')"


def defop(name, forward, vjps, symbol=None, n_outputs=1):
    """Add an op to the table; returns the function that builds its nodes.

    >>> square = defop("square", lambda x: x * x, [lambda g, ans, x: 2 * x * g], symbol="x²")
    >>> y = square(x)                     # an Op node
    An op with ``n_outputs > 1`` returns a tuple of arrays from ``forward`` and receives a tuple
    of gradients in its VJPs; building it gives one node per output. Arguments after the inputs
    (one per VJP) are attributes, not nodes: ``sum(x, 0)`` means ``sum(x, axis=0)``.
    """
    if not callable(forward) or callable(vjps) or not all(callable(v) for v in vjps):
        raise BadValueError(f"defop('{name}', forward, vjps): forward is a function and vjps a list "
                            f"of functions, one per input (even for one input: [vjp]).")
    opdef = OpDef(name, forward, vjps, symbol, n_outputs)
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


# picking output i of a multi-output op: its VJP puts g in slot i of a tuple of gradients
OUTPUT = OpDef("output", lambda t, index: t[index],
               [lambda g, ans, t, index: tuple(g if i == index else None for i in range(len(t)))], "out")


@functools.cache
def _attributes(opdef):
    """What its ``forward``'s parameters after the inputs say of an op's attributes, read once:
    ``(positional, names)``. ``positional``: the attributes an argument after the inputs fills,
    in order. ``names``: every attribute the op takes, or None for any (when ``forward`` takes
    ``**kwargs``). A builtin without a signature takes no positional attribute and any name.
    ``out`` and ``dtype`` are numpy's own parameters, never attributes."""
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
    names = _attributes(opdef)[1]
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
    n_inputs, names = len(opdef.vjps), _attributes(opdef)[0]
    if len(extra) > len(names):
        raise TypeError(f"{opdef.name} takes {n_inputs} input(s)"
                        + (f" and then the attributes {', '.join(names)}" if names else "")
                        + f"; it was given {n_inputs + len(extra)} positional arguments")
    return dict(zip(names, extra))
