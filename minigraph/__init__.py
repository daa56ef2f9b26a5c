"""minigraph: a small numpy engine for computational graphs, built to be read and watched.

    import minigraph as mg
    x = mg.Input("x")
    W = mg.Parameter([[1., 0.], [0., -1.]], name="W")
    b = mg.Parameter([1., 1.], name="b")
    loss = mg.sum(mg.tanh(W @ x + b) ** 2)
    g = mg.Graph(loss)
    g.backward({x: [1., 2.]})       # every node now holds .value and .grad
    W.grad

Modules, in reading order: ``graph`` (nodes, Graph, forward/backward, hooks), ``values``
(what the engine accepts as numbers; read-only values), ``explain`` (the engine's error
messages), ``ops`` (the op table: forward + backward of each op; its longer rules in
``kernels`` and ``losses``, ``defop`` in ``opdef``), ``dtypes`` (float64 or float32, and the
default), ``nn`` (layers, losses), ``optim`` (optimizers),
``gradcheck`` (is a backward right?), ``data`` (small datasets), ``viz`` (``mg.draw``),
``widgets`` (``mg.widgets.explore``, ``step_through``, ``train``), ``codegen`` (a graph
written out as straight-line Python: ``print(mg.codegen.source(graph))``) and ``fastpath``
(when ``Graph.backward`` runs that code instead of its loop),
``symbolic`` (``mg.grad``: the backward pass built as a graph, to draw or differentiate again)
and ``compiled`` (``mg.function``: a graph as a callable training step, as in Theano). The
chapters' own tools: ``digits`` (05), ``landscape`` (06), ``recurrent`` (07), ``charlm`` (09),
``attention`` (10 and 11), ``translate`` (10) and ``gpt`` (11); what their three training
commands share: ``training`` (a run's file, written atomically and checked when read; the
loop that stops only between steps); ``yours`` (an engine made of the learner's own answers)
and ``sidebyside`` (a network trained on it next to minigraph's, 04 and 05).
"""

from . import data, gradcheck, nn, optim
from .dtypes import get_default_dtype, set_default_dtype
from .errors import (BadValueError, CheckpointError, CycleError, DrawingError, GraphError,
                     MissingFeedError, NonFiniteError, OpError, ShapeError)
from .graph import Constant, Graph, Input, Node, Op, Parameter, detect_anomaly
from .ops import (add, bce_with_logits, causal_mask, concatenate, defop, div, embedding, exp, gelu,
                  getitem, layer_norm, leaky_relu, linear, log, log_softmax, matmul, max, mean, mse,
                  mul, neg, power, relu, reshape, sigmoid, softmax, softmax_cross_entropy, split,
                  sub, sum, tanh, transpose, unbroadcast)

from .compiled import function
from .symbolic import defvjp, grad
from .viz import draw

__version__ = "0.1.0"


def __getattr__(name):
    """``mg.widgets`` and the chapters' tools (``mg.digits``, ``mg.landscape``, ``mg.recurrent``,
    ``mg.charlm``, ``mg.attention``, ``mg.translate``, ``mg.gpt``, ``mg.yours``, ``mg.sidebyside``)
    are imported on first use:
    ipywidgets and matplotlib are slow to import."""
    if name in ("widgets", "digits", "landscape", "recurrent", "charlm", "attention", "translate", "gpt",
                "yours", "sidebyside"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'minigraph' has no attribute '{name}'")
