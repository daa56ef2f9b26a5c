"""``mg.function``: a graph turned into a callable, in the spirit of Theano's ``function``.

    x, t = mg.Input("x"), mg.Input("t")
    loss = ...                                             # built from x, t and Parameters W, b
    dW, db = mg.grad(loss, [W, b])                         # the backward pass, as nodes
    train = mg.function([x, t], loss, updates={W: W - 0.1 * dW, b: b - 0.1 * db})
    train(x_values, t_values)                              # one step: returns the loss

All the work of a training step (forward, backward, the update) is one graph, fixed once, so
it is written out once as straight-line Python by ``codegen.py`` (which also writes the
backward's fast path): one line per op, calling the op's forward from the op table
(``print(train.source)`` shows it, and so does a traceback through it). A call feeds the
Inputs, runs those lines (no stamps, hooks or stored values: the interpreter's bookkeeping is
gone) and then assigns every update at once, so each update sees the old values of all
Parameters. The op values stay local to the call: ``node.value`` of an op is what the
interpreter (``Graph.forward``) last computed. If a line raises, the interpreter runs the same
graph again and explains the error.
"""

from . import codegen
from .errors import BadValueError, GraphError, ShapeError, describe
from .graph import Graph, Node, as_node, first_repeat, value_of


class Function:
    """A compiled graph: ``f(*values)`` feeds ``inputs`` in order and returns ``outputs``' values."""

    def __init__(self, inputs, outputs, updates=None):
        self.inputs = [inputs] if isinstance(inputs, Node) else list(inputs)
        self.single = not isinstance(outputs, (list, tuple))     # one node (or a mistake: Graph says)
        self.outputs = [outputs] if self.single else list(outputs)
        pairs = list((updates or {}).items() if hasattr(updates or {}, "items") else updates)
        for parameter, _ in pairs:
            if getattr(parameter, "kind", None) != "parameter":
                raise BadValueError(f"updates maps Parameters to the node of their new value; "
                                    f"{parameter!r} is not a Parameter.")
        self.updated = [p for p, _ in pairs]
        twice = first_repeat(self.updated)
        if twice is not None:
            raise BadValueError(f"mg.function updates '{twice.name}' twice; give each Parameter one "
                                f"new value (both would be computed, and the last one kept).")
        self.graph = Graph(self.outputs + [as_node(new) for _, new in pairs])
        strangers = [n for n in self.inputs if getattr(n, "kind", None) != "input"]
        if strangers:
            raise BadValueError(f"mg.function's inputs are Input nodes, in the order of the call's "
                                f"arguments; {strangers[0]!r} is not an Input.")
        twice = first_repeat(self.inputs)
        if twice is not None:
            raise BadValueError(f"mg.function's inputs name the Input '{twice.name}' twice; give each "
                                f"Input once (one value per Input in each call).")
        missing = [n.name for n in self.graph.inputs if n not in self.inputs]
        if missing:
            raise GraphError(f"the outputs and updates need the Input(s) {', '.join(missing)}, which "
                             f"are not among the function's inputs: add them to the list of inputs.")
        self.source, env = codegen.forward_source(self.graph.nodes, self.graph.outputs, value_of)
        self._run = codegen.compile_function(self.source, env, "mg.function")

    def __call__(self, *values):
        if len(values) != len(self.inputs):
            raise BadValueError(f"this function takes {len(self.inputs)} value(s), one per input "
                                f"({', '.join(n.name for n in self.inputs)}); it was given {len(values)}.")
        feed = dict(zip(self.inputs, values))
        try:
            for node, value in feed.items():
                node.feed(value)
            results = self._run()
        except Exception:                # the interpreter runs the call again and explains
            results = self.graph.forward(feed)
            results = results if len(self.graph.outputs) > 1 else [results]
        n = len(self.outputs)
        for parameter, new in zip(self.updated, results[n:]):
            if new.shape != parameter.shape:
                raise ShapeError(f"the update of {describe(parameter)} computes {new.shape}: an "
                                 f"update must keep the Parameter's shape.")
        for parameter, new in zip(self.updated, results[n:]):
            parameter.value = new
        return results[0] if self.single else results[:n]


def function(inputs, outputs, updates=None):
    """Compile ``outputs`` (a node or a list) into a callable taking one value per node of
    ``inputs``; ``updates`` ({Parameter: node}, or a list of pairs) are assigned after each call."""
    return Function(inputs, outputs, updates)
