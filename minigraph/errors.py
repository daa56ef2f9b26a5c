"""The errors minigraph raises, each one a sentence a learner can act on.

Every error names the node it happened at, the op, and the shapes involved, and says what to
do next. Catch them all with ``except mg.GraphError``.
"""


class GraphError(Exception):
    """Base class: something about the graph, its feed or its ops is not right."""


class MissingFeedError(GraphError):
    """An Input has no value: it was never fed."""


class ShapeError(GraphError):
    """An op's inputs (or a gradient) have shapes that do not fit together."""


class CycleError(GraphError):
    """The nodes form a cycle, so there is no order in which to compute them."""


class NonFiniteError(GraphError):
    """A node produced NaN or infinity (raised only inside ``detect_anomaly()``)."""


class BadValueError(GraphError):
    """A value minigraph was given (a feed, a Parameter's value, a label, an argument) is not one
    it can use: not a number, of the wrong kind, or out of range."""


class OpError(GraphError):
    """An op's forward or backward function failed for a reason other than shapes."""


class CheckpointError(BadValueError):
    """A training run's file that cannot be written (a full disk, a folder that cannot be made)
    or read back (missing, damaged, edited after it was written, of another kind), or that a
    command refuses to replace."""


class DrawingError(GraphError):
    """A graph too big to draw in full, or Graphviz's ``dot`` missing, too slow or crashing."""


def describe(node):
    """``name (kind, shape (2, 3))``: how error messages refer to a node."""
    return f"'{node.name}' ({node.kind}, {shape_text(node.value)})"


def shape_text(value):
    """The shape of a value in words, for messages: ``shape (2, 3)``, ``scalar``, ``no value yet``."""
    if value is None:
        return "no value yet"
    if isinstance(value, tuple):
        return "outputs (" + ", ".join(shape_text(v) for v in value) + ")"
    shape = getattr(value, "shape", ())
    return f"shape {shape}" if shape else "scalar"
