"""Side by side: one network trained on your engine and on minigraph's, step by step.

``compare(engine, digits)`` builds the network twice from the same seed, trains one copy on
``engine`` (an ``mg.yours.Engine`` made of your pieces) and the other on minigraph's own engine
(``Engine()``), and after every step compares every node's value, every gradient and every
Parameter's new value. With right pieces the two runs agree to the last few bits (the losses to
1e-12); the first number that parts is named, with the step, the node and the piece behind it:
a value that differs is your ``evaluate``'s; a gradient that differs while its consumers' are
the same is your backward rule's if yours sends something else than minigraph's rule would,
else your ``backward``'s; a new value that differs is your optimizer's.

The networks are the course's: XOR and the disk (chapter 04), the 8x8 digits (chapter 05),
written with ``x @ W + b`` (matmul and add) so that your backward rules are the ones at work.
"""

import textwrap
from dataclasses import dataclass

import numpy as np

from .. import data, ops
from ..errors import BadValueError
from ..graph import Graph, Input, Parameter
from ..ops import add, bce_with_logits, matmul, mul, sigmoid, softmax_cross_entropy, tanh, unbroadcast
from ..yours import RULES, Engine

DECAY = 1e-3             # the digits' weight decay
TOLERANCE = 1e-9         # relative: closer than this, two numbers count as the same
WIDTH = 88               # a verdict's lines: they break between words, not where the screen ends


@dataclass
class Model:
    """A network to train: its loss and Parameters, the learning rate and number of steps it is
    trained with, ``feeds(step)`` (the feed of each step), its logits on Input ``x``, and the
    held-out data ``test = (X, labels)`` its accuracy is measured on."""

    name: str
    loss: object
    parameters: list
    lr: float
    steps: int
    feeds: object
    x: object
    logits: object
    test: tuple = None


def _network(sizes, activation, seed, name):
    """``x @ W + b`` layers (matmul, add) with ``activation`` between them: Input x, logits, Parameters."""
    rng, x, parameters = np.random.default_rng(seed), Input(f"{name}.x"), []
    h = x
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        W = Parameter(rng.normal(0.0, 1.0 / np.sqrt(n_in), (n_in, n_out)), name=f"{name}.W{i}")
        b = Parameter(np.zeros(n_out), name=f"{name}.b{i}")
        h = add(matmul(h, W, name=f"{name}.xW{i}"), b, name=f"{name}.z{i}")
        h = h if i == len(sizes) - 1 else activation(h, name=f"{name}.h{i}")
        parameters += [W, b]
    return x, h, parameters


def _binary(name, X, Y, sizes, activation, lr, steps, seed):
    x, logits, parameters = _network(sizes, activation, seed, name)
    y = Input(f"{name}.y")
    loss = bce_with_logits(logits, y, name=f"{name}.loss")
    return Model(name, loss, parameters, lr, steps, lambda step: {x: X, y: Y}, x, logits)


def xor(seed=0):
    """XOR (chapter 04): 2-4-1, sigmoid units, binary cross-entropy, 300 full-batch steps of lr 2."""
    return _binary("xor", *data.xor(), [2, 4, 1], sigmoid, 2.0, 300, seed)


def disk(seed=0):
    """The disk (chapter 04): 400 points, 2-8-1, tanh units, 300 full-batch steps of lr 0.5.

    Not lr 1: there the loss rises now and then after step 150, and such a run amplifies a
    difference in the last bit (another order of a sum, another processor's matrix product)
    into the third digit of the loss by step 300, so two right engines would part."""
    return _binary("disk", *data.disk(400, seed=0), [2, 8, 1], tanh, 0.5, 300, seed)


def digits(seed=0, lr=0.5, epochs=3, batch_size=50):
    """The 8x8 digits (chapter 05): 64-32-10, tanh units, softmax cross-entropy plus a small weight
    decay (``DECAY`` times the sum of the squared weights: each weight matrix feeds two ops, and
    one op twice), minibatches in an order drawn from ``seed`` (which also draws the first
    weights); 297 digits held out."""
    X, labels = data.digits()
    order = np.random.default_rng(2026).permutation(len(X))          # the same split for everyone
    train, test = order[:1500], order[1500:]
    x, logits, parameters = _network([64, 32, 10], tanh, seed, "digits")
    y, (W1, _, W2, _) = Input("digits.y"), parameters
    penalty = add(ops.sum(mul(W1, W1, name="digits.W1²")), ops.sum(mul(W2, W2, name="digits.W2²")),
                  name="digits.penalty")
    loss = add(softmax_cross_entropy(logits, y, name="digits.ce"), mul(DECAY, penalty), name="digits.loss")
    per_epoch = -(-len(train) // batch_size)

    def feeds(step):
        shuffled = train[np.random.default_rng([seed, step // per_epoch]).permutation(len(train))]
        batch = shuffled[step % per_epoch * batch_size:][:batch_size]
        return {x: X[batch], y: np.eye(10)[labels[batch]]}       # one-hot labels: floats, as any feed
    return Model("digits", loss, parameters, lr, epochs * per_epoch, feeds, x, logits,
                 (X[test], labels[test]))


def compare(engine, build, steps=None, reference=None):
    """Train ``build()`` on ``engine`` and another ``build()`` on ``reference``, step by step; a
    ``Comparison`` of their losses, naming the first difference. ``reference`` is minigraph's own
    engine, with gradient descent (for momentum: ``Engine(optimizer=mg.optim.Momentum)``).

    Once the numbers have parted, a later step may fail (a wrong rule makes training overflow
    some 50 steps on): the run then stops there, and the verdict still names the first
    difference, which is the piece to fix."""
    runs = [(engine, _built(build)), (_engine(reference or Engine(), "reference"), _built(build))]
    _engine(engine, "engine")
    steps = runs[0][1].steps if steps is None else steps
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise BadValueError(f"compare: steps is the number of training steps, a whole number of at least "
                            f"1; it was given {steps!r}.")
    pairs = _pairs(runs)
    optimizers = [e.optimizer(m.parameters, m.lr) for e, m in runs]
    losses, divergence, stopped = ([], []), None, None
    for step in range(steps):
        try:
            with np.errstate(**({"all": "ignore"} if divergence else {})):    # parted: overflow may follow
                (values, grads), (same_values, same_grads) = [e.step(m, o, step) for (e, m), o in zip(runs, optimizers)]
        except Exception as error:
            if divergence is None:
                raise
            first = str(error).split(". ")[0].rstrip(".")
            stopped = (f"then training stopped at step {step}, a consequence of that difference: "
                       f"{type(error).__name__}: {first}.")
            break
        for run, (e, m) in enumerate(runs):
            losses[run].append(float((values, same_values)[run][e.mirror(m.loss).output]))
        divergence = divergence or _difference(engine, runs[0][1], step, pairs, values, same_values,
                                               grads, same_grads, runs[1][1].parameters)
    return Comparison(runs[0][1].name, losses[0], losses[1], divergence, stopped)


def _engine(engine, what):
    if not isinstance(engine, Engine):
        raise BadValueError(f"compare: {what} must be an mg.yours.Engine(...) of pieces; it was given "
                            f"{type(engine).__name__}.")
    return engine


def _built(build):
    """``build()``, refused unless ``build`` is a function that makes a ``Model``."""
    if isinstance(build, Model):
        raise BadValueError(f"compare takes the function that builds a model, such as mg.sidebyside.xor, "
                            f"not a model it built ({build.name}): it builds one for each engine.")
    if not callable(build):
        raise BadValueError(f"compare takes the function that builds a model, such as mg.sidebyside.xor; "
                            f"it was given {type(build).__name__}.")
    model = build()
    if not isinstance(model, Model):
        raise BadValueError(f"compare: build() must return a model (mg.sidebyside.Model), such as "
                            f"mg.sidebyside.xor() does; it returned {type(model).__name__}.")
    return model


def _pairs(runs):
    """The two models' nodes, paired in the first one's order (each engine's twin of it); refused
    unless the two models are the same network (the same nodes, kinds and shapes)."""
    graphs = [Graph(m.loss).nodes for _, m in runs]
    described = [[(n.kind, n.op.name if n.op else None, np.shape(n.value) if n.op is None
                   and n.kind != "input" else None) for n in nodes] for nodes in graphs]
    if described[0] != described[1] or len(runs[0][1].parameters) != len(runs[1][1].parameters):
        first = next((a.name for a, b, c, d in zip(*graphs, *described) if c != d), None)
        raise BadValueError("compare: build() made two different networks for the two engines"
                            + (f" (from node '{first}' on)" if first else "") + ": it must make the "
                            "same network each time it is called, from the same seed.")
    return list(zip(*(map(e.mirror(m.loss).twins.get, nodes) for (e, m), nodes in zip(runs, graphs))))


def _same(a, b):
    return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=TOLERANCE, atol=1e-12, equal_nan=True)


def _difference(engine, model, step, pairs, values, same_values, grads, same_grads, same_parameters):
    """The first place where the two runs' numbers part at ``step``, in words, or None."""
    def parted(node, what, a, b, piece):
        largest = float(np.max(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))))
        return (f"step {step}: the {what} of '{node.name}' ({node.op.name if node.op else node.kind}) parts from minigraph's "
                f"(by up to {largest:.3g}); the piece that made the difference: {engine.whose(piece)}.")
    for a, b in pairs:
        if not _same(values[a], same_values[b]):
            return parted(a, "value", values[a], same_values[b], "evaluate")
    mirror = engine.mirror(model.loss)
    for a, b in reversed(pairs):
        if a.kind in ("op", "parameter") and not _same(grads[a], same_grads[b]):
            return parted(a, "gradient", grads[a], same_grads[b], _blame(engine, mirror, a, values, grads))
    for p, q in zip(model.parameters, same_parameters):
        if not _same(p.value, q.value):
            return parted(p, "new value", p.value, q.value, "optimizer")
    return None


def _blame(engine, mirror, node, values, grads):
    """The piece behind a wrong gradient of ``node``, whose consumers' gradients are right: a rule
    of one of them that sends it something else than minigraph's rule, or else the backward."""
    for twin in mirror.ops:
        for k in (k for k, parent in enumerate(twin.inputs) if parent is node):
            name = RULES.get(twin.op.name, (None,))[0]
            if name in engine.yours:
                args = (grads[twin], values[twin], *[values[p] for p in twin.inputs])
                yours, minigraphs = twin.op.vjps[k](*args, **twin.attrs), mirror.minigraphs(twin, k, grads[twin], values)
                if not _same(unbroadcast(yours, np.shape(values[node])), unbroadcast(minigraphs, np.shape(values[node]))):
                    return name
    return "backward"


def _loss(x):
    """A loss in a column of 14 characters, however large it grew."""
    return f"{x:>14.6f}" if abs(x) < 1e6 else f"{x:>14.6g}"


@dataclass
class Comparison:
    """Two runs of one model: on your engine (``losses``) and on minigraph's (``reference``)."""

    name: str
    losses: list
    reference: list
    divergence: str = None
    stopped: str = None         # why training stopped before its last step, once the numbers parted

    @property
    def largest_difference(self):
        ours, theirs = np.asarray(self.losses, dtype=float), np.asarray(self.reference, dtype=float)
        apart = np.abs(ours - theirs)[~(np.isnan(ours) & np.isnan(theirs))]      # NaN on both: alike
        return float(np.max(apart)) if apart.size else 0.0

    def __repr__(self):
        shown = sorted({int(i) for i in np.linspace(0, len(self.losses) - 1, 5)})
        rows = [f"{'step':>6}  {'your engine':>14}  {'minigraph':>14}"]
        rows += [f"{i:>6}  {_loss(self.losses[i])}  {_loss(self.reference[i])}" for i in shown]
        verdict = (f"the same losses (to 1e-12) at all {len(self.losses)} steps: your engine trains exactly "
                   f"as minigraph's" if self.divergence is None and self.largest_difference <= 1e-12
                   else self.divergence or f"the losses differ by up to {self.largest_difference:.3g}")
        verdict = "\n".join(textwrap.fill(line, WIDTH) for line in (verdict, self.stopped) if line)
        return f"{self.name}: {len(self.losses)} steps, the loss before each\n" + "\n".join(rows) + "\n" + verdict
