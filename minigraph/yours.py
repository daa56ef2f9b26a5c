"""Your engine: train a network on the pieces of minigraph that you wrote yourself.

Across the exercises you write the pieces an engine is made of: the topological order and the
forward pass (02), backpropagation (03), the backward rules of sigmoid (00), tanh, mul and
matmul (03) and of softmax cross-entropy (05), and the update step of an optimizer (04). An
``Engine`` puts them together::

    engine = mg.yours.Engine(topo_sort=topo_sort, evaluate=evaluate, backward=backward,
                             tanh_vjp=tanh_vjp, matmul_vjp=matmul_vjp, optimizer=MyGD)
    engine                                    # the table: which pieces are yours
    mg.sidebyside.compare(engine, mg.sidebyside.xor)  # XOR trained on it, next to minigraph's engine

A piece you leave out, or whose exercise you have not solved yet (its cell still raises
``NotImplementedError``), is played by minigraph's own, and the table says so. ``Engine()``,
with no piece of yours, *is* minigraph's engine: ``sidebyside.compare`` runs it next to yours.

**Where your pieces come from.** Each notebook is a fresh Python: a notebook that trains on
your engine holds the pieces it uses, pasted from the notebooks where you wrote them (a
MiniTorch student carries their module from one assignment to the next the same way). The
exercise notebooks of chapters 04 and 05 have that cell; the grader, which runs one notebook
alone, finds the pieces of the capstone (``05.capstone``) in it.

**How it runs a graph.** Your ``evaluate(output, feed)`` returns only the output's value, but
your ``backward(loss, values)`` needs every node's value. So the engine builds, once per graph
and in *your* topological order, a mirror of it: a twin of every op node whose op records its
value when your ``evaluate`` computes it, and whose backward rules are yours where you wrote one;
the leaves (Inputs, Parameters, Constants) are the graph's own. One training step is your
``evaluate`` on the mirror, your ``backward`` on the values it recorded (which sets ``.grad`` on
the Parameters), and your optimizer's ``step``. A piece that returns nothing, leaves a node out
or hands back a gradient of the wrong shape is named in the error, with the node and the op.

``engine.train(model)`` trains one of ``sidebyside``'s networks (XOR, the disk, the digits) on
your pieces; ``sidebyside.compare`` trains it on yours and on minigraph's at once and names the
first step, node and piece where the numbers part.
"""

import functools
from html import escape

import numpy as np

from . import optim
from .dtypes import row_of
from .errors import BadValueError, GraphError, OpError, ShapeError, shape_text
from .graph import Graph, Op
from .opdef import OpDef

# op -> (the name of your rule, its exercise, which of the op's inputs it answers for)
RULES = {"sigmoid": ("sigmoid_vjp", "00.sigmoid_vjp", "one"),
         "tanh": ("tanh_vjp", "03.tanh_vjp", "one"),
         "mul": ("mul_vjp", "03.mul_vjp", "each"),
         "matmul": ("matmul_vjp", "03.matmul_vjp", "each"),
         "softmax_cross_entropy": ("softmax_ce_vjp", "05.softmax_ce_vjp", "logits")}
PIECES = {"topo_sort": ("02.topo_sort", "topological order"),
          "evaluate": ("02.evaluate", "forward pass"),
          "backward": ("03.backward", "backpropagation"),
          **{name: (exercise, f"backward rule of {op}") for op, (name, exercise, _) in RULES.items()},
          "optimizer": ("04.gd", "update step")}


@functools.lru_cache(maxsize=32)
def _graph(output):
    """minigraph's Graph of ``output``, made once (its fast path is written once per Graph)."""
    return Graph(output)


def _topo_sort(output):
    return _graph(output).nodes


def _evaluate(output, feed):
    return _graph(output).forward(feed)


def _backward(loss, values):
    graph = _graph(loss)
    graph.backward({node: values[node] for node in graph.inputs})
    return {node: node.grad for node in graph.nodes}


STAND_INS = {"topo_sort": _topo_sort, "evaluate": _evaluate, "backward": _backward, "optimizer": optim.GD}


def _not_written(piece):
    """Is ``piece`` an exercise's stub, whose whole body raises NotImplementedError?"""
    function = getattr(piece, "update", piece)
    return getattr(getattr(function, "__code__", None), "co_names", None) == ("NotImplementedError",)


class Engine:
    """An engine made of your pieces (see the module's docstring); minigraph's stand in for the rest."""

    def __init__(self, **pieces):
        unknown = sorted(set(pieces) - set(PIECES))
        if unknown:
            raise BadValueError(f"Engine has no piece called {', '.join(unknown)}; its pieces are: "
                                f"{', '.join(PIECES)}.")
        for name, piece in pieces.items():
            if piece is not None and not callable(piece):
                raise BadValueError(f"Engine's piece {name} is your answer to {PIECES[name][0]}, a function "
                                    f"(the optimizer: a class); it was given {type(piece).__name__} "
                                    f"{str(piece)[:40]!r}.")
        given = {name: piece for name, piece in pieces.items() if piece is not None and not _not_written(piece)}
        self.pieces = {**STAND_INS, **given}          # a backward rule not given: the op's own
        self.yours = {name: piece for name, piece in given.items()
                      if not (getattr(piece, "__module__", None) or "").startswith("minigraph")}
        self._mirrors = {}

    def whose(self, name):
        """``your backward (03.backward)`` or ``minigraph's backward``: for messages."""
        return f"your {name} ({PIECES[name][0]})" if name in self.yours else f"minigraph's {name}"

    def rows(self):
        """``(piece, exercise, what it is, whose)`` for every piece: the table the engine shows."""
        return [(name, *PIECES[name], "yours" if name in self.yours else "minigraph's stand-in")
                for name in PIECES]

    def __repr__(self):
        return "\n".join(f"{name:<15} {exercise:<18} {what:<39} {who}"
                         for name, exercise, what, who in [("piece", "exercise", "what it is", "whose"),
                                                           *self.rows()])

    def _repr_html_(self):
        cells = "".join(f"<tr><td><code>{n}</code></td><td>{e}</td><td>{escape(w)}</td><td>"
                        f"{'<b>yours</b>' if who == 'yours' else who}</td></tr>" for n, e, w, who in self.rows())
        return ("<table><tr><th>piece</th><th>exercise</th><th>what it is</th><th>whose</th></tr>"
                f"{cells}</table>")

    # -- running a graph on your pieces --------------------------------------------------------

    def mirror(self, output):
        """``output``'s ``Mirror`` on this engine, built on first use."""
        if output not in self._mirrors:
            self._mirrors[output] = Mirror(self, output)
        return self._mirrors[output]

    def forward(self, output, feed):
        """``{node: value}`` for every node of ``output``'s mirror, as your ``evaluate`` computed them."""
        mirror = self.mirror(output)
        mirror.values.clear()
        out = self.pieces["evaluate"](mirror.output, feed)
        if out is None:
            raise BadValueError(f"{self.whose('evaluate')} returned None for '{output.name}': did it "
                                f"forget to return the output's value?")
        skipped = [n for n in mirror.ops if n not in mirror.values]
        if skipped:
            raise GraphError(f"{self.whose('evaluate')} never computed '{skipped[0].name}' "
                             f"({skipped[0].op.name}): it must compute every op the output depends on.")
        values = {leaf: np.asarray(feed[leaf]) if leaf.kind == "input" else leaf.value for leaf in mirror.leaves}
        return {**values, **mirror.values}

    def backward(self, loss, values):
        """``{node: gradient}`` from your ``backward``, checked: one per node, of its value's shape."""
        mirror = self.mirror(loss)
        grads = self.pieces["backward"](mirror.output, values)
        if not isinstance(grads, dict):
            raise BadValueError(f"{self.whose('backward')} returned {type(grads).__name__}, not a dict "
                                f"{{node: gradient}}: did it forget to return the gradients?")
        for node in mirror.order:
            g, what = grads.get(node), f"'{node.name}' ({node.kind}{', op ' + node.op.name if node.op else ''}"
            if g is None and node.kind in ("op", "parameter"):
                raise GraphError(f"{self.whose('backward')} gave no gradient to {what}): every op and "
                                 f"Parameter the loss depends on gets one.")
            if g is not None and np.shape(g) != np.shape(values[node]):
                raise ShapeError(f"{self.whose('backward')} gave {what}, {shape_text(values[node])}) a "
                                 f"gradient of {shape_text(np.asarray(g))}: each gradient has its node's "
                                 f"shape (sum what broadcasting stretched back with mg.unbroadcast).")
            if node.kind == "parameter" and (node.grad is None or not np.array_equal(node.grad, g)):
                raise GraphError(f"{self.whose('backward')} did not set .grad of Parameter '{node.name}' "
                                 f"to its gradient: the optimizer reads it there.")
        return grads

    def optimizer(self, parameters, lr):
        """Your optimizer (or gradient descent) moving ``parameters`` with learning rate ``lr``."""
        return self.pieces["optimizer"](parameters, lr=lr)

    # -- training on your pieces ------------------------------------------------------------------

    def step(self, model, optimizer, step):
        """One training step of ``model`` (a ``sidebyside.Model``): your evaluate, your backward,
        your optimizer's step. Returns the values and gradients (``{node: array}``)."""
        values = self.forward(model.loss, model.feeds(step))
        grads = self.backward(model.loss, values)
        optimizer.step()
        return values, grads

    def train(self, model, steps=None):
        """Train ``model`` for its number of steps (or ``steps``); the loss before each step."""
        optimizer = self.optimizer(model.parameters, model.lr)
        return [float(self.step(model, optimizer, step)[0][self.mirror(model.loss).output])
                for step in range(model.steps if steps is None else steps)]

    def predictions(self, model):
        """The class of each of ``model``'s held-out examples: its largest logit, computed on this
        engine (``np.mean(engine.predictions(model) == model.test[1])`` is the accuracy)."""
        values = self.forward(model.logits, {model.x: model.test[0]})
        return np.argmax(values[self.mirror(model.logits).output], axis=1)


class Mirror:
    """``output``'s graph again, in the engine's topological order: a twin of every op node that
    records its value in ``values`` as it is computed and carries the engine's backward rules; the
    leaves are the graph's own."""

    def __init__(self, engine, output):
        self.values, twins, self.engine, self.originals = {}, {}, engine, {}
        for node in engine.pieces["topo_sort"](output):
            early = [p for p in node.inputs if p not in twins]
            if node in twins or early:
                raise GraphError(f"{engine.whose('topo_sort')} lists '{node.name}' " + (
                    "twice" if node in twins else f"before its input '{early[0].name}' (or leaves that "
                    f"input out)") + ": every node comes once, after all of its inputs.")
            twins[node] = node if node.op is None else self._twin(node, [twins[p] for p in node.inputs])
        if output not in twins:
            raise GraphError(f"{engine.whose('topo_sort')} leaves out the output '{output.name}' itself.")
        self.output, self.twins = twins[output], twins
        self.order = list(twins.values())
        self.ops = [n for n in self.order if n.op is not None]
        self.leaves = [n for n in self.order if n.op is None]

    def _twin(self, node, inputs):
        plain, made = row_of(node.op), []

        def forward(*args, **attrs):
            self.values[made[0]] = out = plain.forward(*args, **attrs)
            return out
        made.append(Op(OpDef(plain.name, forward, self.engine_rules(node, plain), plain.symbol),
                       inputs, node.attrs, node.name))
        self.originals[made[0]] = node
        return made[0]

    def engine_rules(self, node, plain):
        """The op's backward rules: the engine's piece for it where there is one, else minigraph's."""
        name, _, answers = RULES.get(plain.name, (None, None, None))
        rule = self.engine.pieces.get(name)
        if rule is None:
            return plain.vjps
        who = self.engine.whose(name)

        def part(k):
            def vjp(g, ans, *args, **attrs):
                if answers == "logits" and np.shape(args[1]) == np.shape(args[0]):   # one-hot labels:
                    args = (args[0], np.argmax(args[1], axis=-1))     # your rule takes class numbers
                try:
                    out = rule(g, ans, *args, **attrs)
                except Exception as error:
                    raise OpError(f"{who} failed at '{node.name}' ({plain.name} of "
                                  f"{', '.join(shape_text(a) for a in args)}): {type(error).__name__}: {error}") from error
                if answers == "each" and not (isinstance(out, (tuple, list)) and len(out) == len(args)):
                    raise BadValueError(f"{who} returned {type(out).__name__} at '{node.name}' "
                                        f"({plain.name}): it returns one gradient per input, a tuple of {len(args)}.")
                return out[k] if answers == "each" else out
            return vjp
        return tuple(part(k) if answers == "each" or k == 0 else plain.vjps[k] for k in range(len(plain.vjps)))

    def minigraphs(self, twin, k, g, values):
        """What minigraph's own rule sends from the op ``twin`` to its input ``k``."""
        node = self.originals[twin]
        return node.op.vjps[k](g, values[twin], *[values[p] for p in twin.inputs], **twin.attrs)
