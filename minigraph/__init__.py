"""minigraph: a small numpy engine for computational graphs, built to be read and watched.

    import minigraph as mg
    x = mg.Input("x")
    W = mg.Parameter([[1., 0.], [0., -1.]], name="W")
    b = mg.Parameter([1., 1.], name="b")
    loss = mg.sum(mg.tanh(W @ x + b) ** 2)
    g = mg.Graph(loss)
    g.backward({x: [1., 2.]})       # every node now holds .value and .grad
    W.grad

Modules, in reading order (docs/ENGINE.md draws the same map):

* the engine: ``graph`` (nodes, Graph, forward/backward), ``hooks`` (hooks and
  ``detect_anomaly``: watching what flows), ``values`` (what the engine
  accepts as numbers; read-only values), ``explain`` (its error messages), ``opdef`` (how a
  row of the op table is made: ``defop``), ``ops`` (the op table, each row with all of its
  op's maths; its longer rules in ``kernels`` and ``losses``; the ops gradients are made of
  in ``gradops``), ``dtypes`` (float64 or float32, and the default), ``nn``
  (layers, losses), ``optim`` (optimizers), ``gradcheck`` (is a backward right?), ``data``
  (small datasets);
* seeing it: ``viz`` (``mg.draw``, its layout in ``layout``), ``widgets`` (``explore``,
  ``step_through``, ``train``);
* running it faster: ``codegen`` (a backward written out as straight-line Python:
  ``print(mg.codegen.source(graph))``) and ``fastpath`` (when ``Graph.backward`` runs that code
  instead of its loop); ``symbolic`` (``mg.grad``: the backward pass built as a graph, to draw or
  differentiate again); ``compiler/`` (``mg.function``: a graph as one compiled training step,
  as in Theano);
* the learner's own engine: ``yours`` (an engine made of the learner's answers);
* the chapters' tools: ``chapters/`` (``mg.sidebyside``, ``mg.digits``, ``mg.landscape``,
  ``mg.recurrent``, ``mg.attention``); the language models ``charlm`` (09), ``translate`` (10)
  and ``gpt`` (11), and what their training shares: ``training`` (a run's files, written
  atomically and checked when read; the loop that stops only between steps; its command line);
* ``grading/``: the exercises' checks and the grader.
"""

from . import data, gradcheck, nn, optim
from .dtypes import get_default_dtype, set_default_dtype
from .errors import (BadValueError, CheckpointError, CycleError, DrawingError, GraphError,
                     MissingFeedError, NonFiniteError, OpError, ShapeError)
from .graph import Constant, Graph, Input, Node, Op, Parameter
from .hooks import detect_anomaly
from .ops import (add, bce_with_logits, causal_mask, concatenate, defop, div, embedding, exp, gelu,
                  getitem, layer_norm, leaky_relu, linear, log, log_softmax, matmul, max, mean, mse,
                  mul, neg, power, relu, reshape, sigmoid, softmax, softmax_cross_entropy, split,
                  sub, sum, tanh, transpose, unbroadcast)

from .compiler import function
from .symbolic import defvjp, grad
from .viz import draw

__version__ = "0.1.0"


CHAPTER_TOOLS = ("digits", "landscape", "recurrent", "recurrent_widgets", "attention", "sidebyside")
MODELS = ("charlm", "translate", "gpt")


def __getattr__(name):
    """``mg.widgets``, ``mg.yours``, the chapters' tools (``mg.digits``, ``mg.landscape``,
    ``mg.recurrent``, ``mg.attention``, ``mg.sidebyside``: modules of ``minigraph/chapters/``)
    and the models (``mg.charlm``, ``mg.translate``, ``mg.gpt``) are imported on first use:
    ipywidgets and matplotlib are slow to import."""
    import importlib
    if name in CHAPTER_TOOLS:
        return importlib.import_module(".chapters." + name, __name__)
    if name in ("widgets", "yours") + MODELS:
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'minigraph' has no attribute '{name}'")


def _jupyter_labextension_paths():
    """minigraph's JupyterLab extension (built from jupyter/widget-labels: it names the handles
    of widget sliders for screen readers), for ``jupyter labextension develop``."""
    return [{"src": "labextension", "dest": "minigraph-widget-labels"}]
