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
the Parameters), and your optimizer's ``step``. A piece that returns nothing, returns another
value than it computed, leaves a node out, hands back a gradient of the wrong shape or NaN from
finite numbers, reads ``node.value`` (which only minigraph's engine sets), deletes entries of
``values`` or adds in place into a share a rule handed back (read-only, as it may be another
node's gradient) is named in the error, with the node and the op.

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
from .graph import Graph, Node, Op
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
        optimizer = pieces.get("optimizer")
        if optimizer is not None and not isinstance(optimizer, type):
            raise BadValueError(f"Engine's piece optimizer is your answer to 04.gd, a class such as MyGD "
                                f"(the class itself, not MyGD(...)); it was given {type(optimizer).__name__} "
                                f"{str(optimizer)[:40]!r}.")
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
        computed = mirror.values[mirror.output]
        if np.shape(out) != np.shape(computed) or not np.array_equal(out, computed, equal_nan=True):
            raise BadValueError(f"{self.whose('evaluate')} returned {_shown(out)} for '{output.name}', "
                                f"but the value it computed for '{output.name}' is {_shown(computed)}: "
                                "it returns the output's own value, as computed.")
        values = {leaf: np.asarray(feed[leaf]) if leaf.kind == "input" else leaf.value for leaf in mirror.leaves}
        return {**values, **mirror.values}

    def backward(self, loss, values):
        """``{node: gradient}`` from your ``backward``, checked: one per node, of its value's shape."""
        mirror = self.mirror(loss)
        given = dict(values)
        try:
            grads = self.pieces["backward"](mirror.output, given)
        except (ValueError, TypeError) as error:
            message = in_place_trouble(error, self.whose("backward"))
            if message is None:
                raise
            raise BadValueError(message) from error
        deleted = [node for node in values if node not in given]
        if deleted:
            raise GraphError(f"{self.whose('backward')} deleted the entry of '{deleted[0].name}' from "
                             "values: values belongs to the caller (the engine reads it after your "
                             "backward returns); read it, never change it.")
        if not isinstance(grads, dict):
            raise BadValueError(f"{self.whose('backward')} returned {type(grads).__name__}, not a dict "
                                f"{{node: gradient}}: did it forget to return the gradients?")
        named = next((key for key in grads if not isinstance(key, Node)), None)
        if named is not None:
            raise BadValueError(f"{self.whose('backward')} returned a dict keyed by "
                                f"{type(named).__name__} {str(named)[:30]!r}: key it by the nodes "
                                "themselves, as values is.")
        for node in mirror.order:
            g, what = grads.get(node), f"'{node.name}' ({node.kind}{', op ' + node.op.name if node.op else ''}"
            if g is None and node.kind in ("op", "parameter"):
                raise GraphError(f"{self.whose('backward')} gave no gradient to {what}): every op and "
                                 f"Parameter the loss depends on gets one.")
            if g is not None and np.shape(g) != np.shape(values[node]):
                raise ShapeError(f"{self.whose('backward')} gave {what}, {shape_text(values[node])}) a "
                                 f"gradient of {shape_text(np.asarray(g))}: each gradient has its node's "
                                 f"shape (sum what broadcasting stretched back with mg.unbroadcast).")
            if node.kind == "parameter" and (node.grad is None or not np.array_equal(node.grad, g, equal_nan=True)):
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


def in_place_trouble(error, who, integers=None):
    """What went wrong, in words, when numpy refused a backward's ``+=`` (``who``: the backward,
    ``integers``: the node that holds integers, if known), or None for any other ``error``."""
    if isinstance(error, ValueError) and "read-only" in str(error):
        return (f"{who} added into an array in place (+=) that is not its own: use + (a new array), "
                "not +=. A share a rule hands back may be the very array of another node's gradient "
                "(an addition passes g on as it is), and values belong to the caller.")
    if isinstance(error, TypeError) and "Cannot cast ufunc" in str(error):
        held = f"'{integers}' holds integers, as class labels do" if integers else "an Input of class labels"
        return (f"{who} added floats into an integer array in place (+=), and numpy refused: "
                f"np.zeros_like of an integer value ({held}) is an integer array. A gradient is floats: "
                "start from np.zeros of the node's shape, or from the first share.")
    return None


def read_only(share):
    """``share`` as an array a backward may read but not write into in place (a view of it): what a
    rule hands back may be the very array of the gradient it was given (an addition passes g on
    as it is), and values belong to their caller. The check of 03.backward hands out the same."""
    if isinstance(share, np.ndarray):
        share = share.view()
        share.flags.writeable = False
    return share


def _shown(value):
    """A value in a message: its shape, and a few of its numbers."""
    array = np.asarray(value) if value is not None else None
    if array is None or array.dtype == object:
        return repr(value)[:40]
    numbers = np.array2string(array.ravel()[:3], precision=4, separator=", ")
    return f"{shape_text(array)} {numbers[:-1]}{', …]' if array.size > 3 else ']'}"


def _returned(who, where, parent, share, given, shape, out_shape):
    """Refuse what your rule ``who`` handed back at ``where`` for its input ``parent`` (of
    ``shape``): None, something of another shape than the input's or the output's (a share of
    the output's shape is summed back by backward), or NaN or inf from finite numbers ``given``."""
    if share is None:
        raise BadValueError(f"{who} returned None for input '{parent.name}' at {where}: did it forget "
                            f"`return`? It returns the gradient of each input.")
    if np.shape(share) not in (shape, out_shape):
        raise ShapeError(f"{who} returned, for input '{parent.name}' of {where}, a gradient of "
                         f"{shape_text(np.asarray(share))}, but '{parent.name}' has {shape_text(np.zeros(shape))}: "
                         "each gradient has its input's shape.")
    if not np.all(np.isfinite(share)) and all(np.all(np.isfinite(v)) for v in given):
        raise BadValueError(f"{who} returned {_shown(share)} for input '{parent.name}' at {where}, not "
                            "finite numbers (NaN or inf), though g, ans and the inputs all were.")


class Mirror:
    """``output``'s graph again, in the engine's topological order: a twin of every op node that
    records its value in ``values`` as it is computed and carries the engine's backward rules; the
    leaves are the graph's own."""

    def __init__(self, engine, output):
        self.values, twins, self.engine, self.originals = {}, {}, engine, {}
        order = engine.pieces["topo_sort"](output)
        if order is None or isinstance(order, (str, Node)) or not hasattr(order, "__iter__"):
            raise BadValueError(f"{engine.whose('topo_sort')} returned {type(order).__name__} for "
                                f"'{output.name}', not a list of nodes: did it forget to return the list?")
        order = list(order)
        strange = next((item for item in order if not isinstance(item, Node)), None)
        if strange is not None:
            raise BadValueError(f"{engine.whose('topo_sort')} listed {type(strange).__name__} "
                                f"{str(strange)[:30]!r} among the nodes of '{output.name}': it lists the "
                                "nodes themselves.")
        for node in order:
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
        opdef = OpDef(plain.name, forward, self.engine_rules(node, plain), plain.symbol)
        opdef.on_your_engine = True          # mg.grad says so, rather than ask for a graph rule
        made.append(Op(opdef, inputs, node.attrs, node.name))
        self.originals[made[0]] = node
        return made[0]

    def engine_rules(self, node, plain):
        """The op's backward rules: the engine's piece for it where there is one, else minigraph's;
        each refuses a call whose ``ans`` or inputs are not values (``node.value`` read instead of
        ``values[node]``), and yours a result that is None, of another shape, or not finite; what
        each hands back is read-only."""
        name, _, answers = RULES.get(plain.name, (None, None, None))
        rule = self.engine.pieces.get(name)
        where = f"'{node.name}' ({plain.name})"

        def called(g, ans, args):
            for what, value in (("g", g), ("ans", ans), *((f"input '{p.name}'", a) for p, a in zip(node.inputs, args))):
                if value is None:
                    raise BadValueError(f"{self.engine.whose('backward')} called the rule of {where} with "
                                        f"None for {what}: did it read node.value? On your engine only "
                                        "the dict values holds them: read each there, by its node.")

        def minigraphs(k):
            def vjp(g, ans, *args, **attrs):
                called(g, ans, args)
                return read_only(plain.vjps[k](g, ans, *args, **attrs))
            return vjp

        if rule is None:
            return tuple(minigraphs(k) for k in range(len(plain.vjps)))
        who = self.engine.whose(name)

        def part(k):
            def vjp(g, ans, *args, **attrs):
                called(g, ans, args)
                given = args
                if answers == "logits" and np.shape(args[1]) == np.shape(args[0]):   # one-hot labels:
                    args = (args[0], np.argmax(args[1], axis=-1))     # your rule takes class numbers
                try:
                    out = rule(g, ans, *args, **attrs)
                except Exception as error:
                    raise OpError(f"{who} failed at {where[:-1]} of "
                                  f"{', '.join(shape_text(a) for a in args)}): {type(error).__name__}: {error}") from error
                if answers == "each" and not (isinstance(out, (tuple, list)) and len(out) == len(args)):
                    raise BadValueError(f"{who} returned {type(out).__name__} at {where}: it returns one "
                                        f"gradient per input, a tuple of {len(args)}.")
                share = out[k] if answers == "each" else out
                _returned(who, where, node.inputs[k], share, (g, ans, *given), np.shape(given[k]), np.shape(ans))
                return read_only(share)
            return vjp
        return tuple(part(k) if answers == "each" or k == 0 else minigraphs(k) for k in range(len(plain.vjps)))

    def minigraphs(self, twin, k, g, values):
        """What minigraph's own rule sends from the op ``twin`` to its input ``k``."""
        node = self.originals[twin]
        return node.op.vjps[k](g, values[twin], *[values[p] for p in twin.inputs], **twin.attrs)
