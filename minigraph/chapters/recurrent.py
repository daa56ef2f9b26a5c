"""Recurrent networks: one cell, the same weights at every time step, unrolled into one graph.

A recurrent network reads a sequence x_1, ..., x_T one step at a time and carries a *state*
from each step to the next: ``h_t = cell(x_t, h_{t-1})``. Unrolled for T steps this is an
ordinary, static computational graph in which every step's ops read the *same* Parameter nodes.
The engine's backward pass sums the gradients of all those uses into each Parameter's ``.grad``:
that is backpropagation through time (BPTT), with nothing new to implement.

    cell = RNNCell(7, 16, rng=0)             # h_t = tanh(x_t W_xh + h_{t-1} W_hh + b_h)
    cell = LSTMCell(7, 8, rng=0)             # (h_t, c_t) from four gates
    model = SequenceModel(cell, n_out=7)     # a linear readout y_t = h_t W_hy + b_y at every step
    net = model.unroll(T=4)                  # Inputs x1..x4, targets; net.graph is the loss
    ReberTraining(model).train(mg.data.reber_strings(4000, seed=0))
    reber_accuracy(model, mg.data.reber_strings(300, seed=1))   # (local, long-range)

Names: the nodes of step t are called ``t3.h``, ``t3.c``, ``t3.f`` ..., so ``mg.draw`` frames
each time step; the shared Parameters (``W_hh``, ...) stand outside the frames, one box each,
with an edge into every step that uses them.
"""

import numpy as np

from .. import data, nn, optim, ops
from ..dtypes import get_default_dtype
from ..errors import BadValueError, ShapeError, shape_text
from ..graph import Constant, Graph, Input, Parameter


class RNNCell:
    """The simple (Elman) recurrent cell: ``h_t = tanh(x_t W_xh + h_{t-1} W_hh + b_h)``.

    Rows are batch entries, as in ``nn.Linear``: x_t is (batch, n_in), h_t is (batch, n_hidden).
    Its parameters and h_0 have the default dtype (``mg.get_default_dtype()``) of when it is built.
    """

    def __init__(self, n_in, n_hidden, rng=None, init_scale=1.0):
        rng = np.random.default_rng(rng)
        self.n_in, self.n_hidden, self.dtype = n_in, n_hidden, get_default_dtype()
        self.W_xh = Parameter(nn.xavier_uniform(rng, n_in, n_hidden), name="W_xh", dtype=self.dtype)
        self.W_hh = Parameter(init_scale * orthogonal(rng, n_hidden), name="W_hh", dtype=self.dtype)
        self.b_h = Parameter(np.zeros(n_hidden), name="b_h", dtype=self.dtype)
        self.parameters = [self.W_xh, self.W_hh, self.b_h]

    def initial_state(self):
        """h_0 = 0: one row, which broadcasts over any batch."""
        return (Constant(np.zeros((1, self.n_hidden)), name="h0", dtype=self.dtype),)

    def __call__(self, x, state, t):
        """Step ``t``: the new state ``(h_t,)`` from the input node ``x`` and the state ``(h_{t-1},)``."""
        (h,) = state
        z = ops.add(ops.linear(x, self.W_xh, self.b_h, name=f"t{t}.xW+b"),
                    ops.matmul(h, self.W_hh, name=f"t{t}.hW"), name=f"t{t}.z")
        return (ops.tanh(z, name=f"t{t}.h"),)

    def __repr__(self):
        return f"RNNCell({self.n_in} -> {self.n_hidden})"


class LSTMCell:
    """The long short-term memory cell (Hochreiter & Schmidhuber 1997, with a forget gate).

    One product gives the four gates' pre-activations, ``z = x_t W_x + h_{t-1} W_h + b``;
    ``mg.split`` cuts it into four (a multi-output op: one node per gate), then

        i = σ(z_i)   input gate        f = σ(z_f)   forget gate
        g = tanh(z_g) candidate        o = σ(z_o)   output gate
        c_t = f · c_{t-1} + i · g      the cell state: kept (f) plus written (i · g)
        h_t = o · tanh(c_t)            what the cell shows the rest of the network

    The state is the pair ``(h_t, c_t)``: two nodes. Along c the backward pass multiplies by f
    at each step (no squashing, no matrix), which is why the gradient survives long sequences.
    ``forget_bias`` starts f near 1 (σ(1) ≈ 0.73): remember by default. Its parameters and the
    initial state have the default dtype of when it is built, as ``RNNCell``'s.
    """

    def __init__(self, n_in, n_hidden, rng=None, forget_bias=1.0, init_scale=1.0):
        rng = np.random.default_rng(rng)
        self.n_in, self.n_hidden, self.dtype = n_in, n_hidden, get_default_dtype()
        self.W_x = Parameter(nn.xavier_uniform(rng, n_in, 4 * n_hidden), name="W_x", dtype=self.dtype)
        self.W_h = Parameter(init_scale * np.hstack([orthogonal(rng, n_hidden) for _ in range(4)]),
                             name="W_h", dtype=self.dtype)
        bias = np.zeros(4 * n_hidden)
        bias[n_hidden:2 * n_hidden] = forget_bias          # the order of the gates: i, f, g, o
        self.b = Parameter(bias, name="b", dtype=self.dtype)
        self.parameters = [self.W_x, self.W_h, self.b]

    def initial_state(self):
        """h_0 = c_0 = 0 (one row each, broadcast over the batch)."""
        zeros = np.zeros((1, self.n_hidden), self.dtype)
        return Constant(zeros, name="h0"), Constant(zeros, name="c0")

    def __call__(self, x, state, t):
        """Step ``t``: ``(h_t, c_t)`` from the input node ``x`` and ``(h_{t-1}, c_{t-1})``."""
        h, c = state
        z = ops.add(ops.linear(x, self.W_x, self.b, name=f"t{t}.xW+b"),
                    ops.matmul(h, self.W_h, name=f"t{t}.hW"), name=f"t{t}.z")
        z_i, z_f, z_g, z_o = ops.split(z, 4, axis=-1, name=f"t{t}.gates")
        i = ops.sigmoid(z_i, name=f"t{t}.i")
        f = ops.sigmoid(z_f, name=f"t{t}.f")
        g = ops.tanh(z_g, name=f"t{t}.g")
        o = ops.sigmoid(z_o, name=f"t{t}.o")
        c = ops.add(ops.mul(f, c, name=f"t{t}.f·c"), ops.mul(i, g, name=f"t{t}.i·g"), name=f"t{t}.c")
        h = ops.mul(o, ops.tanh(c, name=f"t{t}.tanh(c)"), name=f"t{t}.h")
        return h, c

    def __repr__(self):
        return f"LSTMCell({self.n_in} -> {self.n_hidden})"


def orthogonal(rng, n):
    """A random n x n orthogonal matrix (all singular values 1): a recurrent matrix that neither
    shrinks nor stretches the state at the start of training."""
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


def spectral_radius(W):
    """The largest |eigenvalue| of a square matrix: how much repeated ``h @ W`` grows or shrinks h."""
    return float(np.max(np.abs(np.linalg.eigvals(W))))


def clip_by_global_norm(grads, max_norm):
    """Scale a list of gradients together so that their global norm is at most ``max_norm``.

    The global norm is sqrt(sum of every entry squared, over all the arrays). Returns the
    (possibly scaled) list, new arrays, and the norm before clipping. Scaling all of them by one
    factor keeps the direction of the step; only its length is capped.

    The front door for a list of arrays; the formula is ``optim``'s, the one that
    ``optim.clip_grad_norm`` applies in place to Parameters' gradients (here without its
    ``eps``: the norm is capped at exactly ``max_norm``).
    """
    missing = [k for k, g in enumerate(grads) if g is None]
    if missing:
        raise BadValueError(f"gradient {missing[0]} is None: run graph.backward(feed) on a graph "
                            f"that contains every parameter before clipping.")
    norm = optim.global_norm(grads)
    scale = optim.clip_factor(norm, max_norm)
    return [g * scale for g in grads], norm


class Unrolled:
    """A SequenceModel unrolled for T steps: one graph, its Inputs, and the nodes of every step.

    xs       the Inputs x1 .. xT, each (batch, n_in)
    target   an Input (T·batch, n_out): step t's rows are t·batch .. (t+1)·batch - 1; each row
             holds the probabilities of the next symbols (all zeros on padding: no loss there)
    hs, cs   h_t (and, for an LSTM, c_t) of each step; logits: y_t of each step
    graph    the loss: softmax cross-entropy of every step's y_t against its target row,
             averaged over all T·batch rows
    """

    def __init__(self, model, T):
        self.T = T = nn.whole_number(T, "T, the number of time steps,")
        self.xs = [Input(f"x{t}") for t in range(1, T + 1)]
        self.target = Input("target")
        state = model.cell.initial_state()
        self.hs, self.cs, self.logits = [], [], []
        for t, x in enumerate(self.xs, start=1):
            state = model.cell(x, state, t)
            self.hs.append(state[0])
            self.cs.extend(state[1:])
            self.logits.append(ops.linear(state[0], model.W_hy, model.b_y, name=f"t{t}.y"))
        every_step = self.logits[0] if T == 1 else ops.concatenate(self.logits, axis=0, name="y")
        self.loss = ops.softmax_cross_entropy(every_step, self.target, name="loss")
        self.graph = Graph(self.loss)

    def feed(self, X, targets):
        """The feed for a batch: ``X`` (batch, T, n_in) and ``targets`` (batch, T, n_out)."""
        X, targets = np.asarray(X), np.asarray(targets)
        if X.ndim != 3 or targets.ndim != 3 or X.shape[1] != self.T or targets.shape[:2] != X.shape[:2]:
            raise ShapeError(f"this graph is unrolled for T={self.T} steps: it is fed X (batch, "
                             f"{self.T}, n_in) and targets (batch, {self.T}, n_out); got X "
                             f"{shape_text(X)} and targets {shape_text(targets)}. Unroll the model "
                             f"for the length of the sequences (model.unroll(T)).")
        feed = {x: X[:, t] for t, x in enumerate(self.xs)}
        feed[self.target] = np.swapaxes(targets, 0, 1).reshape(-1, targets.shape[-1])
        return feed

    def probabilities(self, X):
        """Softmax of every step's logits for a batch X (batch, T, n_in): (batch, T, n_out)."""
        outs = Graph(self.logits).forward({x: X[:, t] for t, x in enumerate(self.xs)})
        logits = np.stack(outs if self.T > 1 else [outs], axis=1)
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


class SequenceModel:
    """A recurrent cell plus a linear readout ``y_t = h_t W_hy + b_y`` at every step.

    ``unroll(T)`` builds (once per T, then cached) the graph of T steps.
    """

    def __init__(self, cell, n_out, rng=None):
        rng = np.random.default_rng(rng)
        self.cell, dtype = cell, get_default_dtype()
        self.W_hy = Parameter(nn.xavier_uniform(rng, cell.n_hidden, n_out), name="W_hy", dtype=dtype)
        self.b_y = Parameter(np.zeros(n_out), name="b_y", dtype=dtype)
        self.parameters = cell.parameters + [self.W_hy, self.b_y]
        self._unrolled = {}

    def unroll(self, T):
        if T not in self._unrolled:
            self._unrolled[T] = Unrolled(self, T)
        return self._unrolled[T]

    @property
    def size(self):
        """The number of trainable numbers."""
        return int(sum(p.value.size for p in self.parameters))

    def __repr__(self):
        return f"SequenceModel({self.cell!r}, {self.size} parameters)"


# -- the embedded Reber grammar: train, then measure two accuracies --------------------------

THRESHOLD = 0.25     # a symbol is predicted legal if its probability is above this


def reber_targets(strings, length=None):
    """One-hot inputs, target probabilities (legal next symbols, equally likely) and a mask."""
    X, legal, mask = data.reber_arrays(strings, length)
    counts = legal.sum(axis=-1, keepdims=True)
    return X, np.divide(legal, counts, out=np.zeros_like(legal), where=counts > 0), mask


class ReberTraining:
    """Train a SequenceModel on embedded Reber strings with Adam, a batch at a time.

    Each batch is padded to its longest string (padding rows have no target, hence no loss);
    the graph of each length is built once and reused. Gradients are clipped to global norm
    ``clip`` before each step. The optimizer keeps its state from one ``train`` call to the next.
    """

    def __init__(self, model, batch=16, lr=0.03, clip=1.0):
        self.model, self.batch, self.clip = model, batch, clip
        self.optimizer = optim.Adam(model.parameters, lr=lr)
        self.seen, self.losses = 0, []

    def train(self, strings):
        """One optimizer step per batch of ``strings``; returns the loss of each batch."""
        params = self.model.parameters
        losses = []
        for start in range(0, len(strings), self.batch):
            X, targets, mask = reber_targets(strings[start:start + self.batch])
            net = self.model.unroll(X.shape[1])
            loss = net.graph.backward(net.feed(X, targets), wrt=params)
            clipped, _ = clip_by_global_norm([p.grad for p in params], self.clip)
            for p, g in zip(params, clipped):
                p.grad = g
            self.optimizer.step()
            losses.append(float(loss) * mask.size / mask.sum())     # per real step, not per row
        self.seen += len(strings)
        self.losses += losses
        return losses


def reber_learning_curve(model, strings, test, every=2000, **training):
    """Train ``model`` on ``strings`` (``ReberTraining(model, **training)``) and measure
    ``reber_accuracy`` on ``test`` after every ``every`` strings.

    Returns ``[(strings seen, local, long-range), ...]``. Keep ``every`` a multiple of the batch
    size, and the batches are those of one training run over all the strings.
    """
    run = ReberTraining(model, **training)
    curve = []
    for start in range(0, len(strings), every):
        run.train(strings[start:start + every])
        curve.append((run.seen, *reber_accuracy(model, test)))
    return curve


def predicted_sets(model, strings):
    """For each string, the set of symbols the model calls legal after each prefix."""
    X, _, mask = reber_targets(strings)
    p = model.unroll(X.shape[1]).probabilities(X)
    return [[{data.REBER_SYMBOLS[k] for k in np.flatnonzero(p[row, t] > THRESHOLD)}
             for t in range(int(mask[row].sum()))] for row in range(len(strings))]


def reber_accuracy(model, strings):
    """(local, long-range): the fraction of strings whose predictions are all right.

    local       every step except the long-range one predicts exactly the legal next symbols
    long-range  after the inner string's E, the model predicts exactly the symbol that must
                repeat the string's second symbol (the step that needs memory)
    """
    local = long_range = 0
    for string, sets in zip(strings, predicted_sets(model, strings)):
        truth = [data.reber_next(string[:t + 1]) for t in range(len(string) - 1)]
        far = len(string) - 3                               # the step that reads the inner E
        local += all(sets[t] == truth[t] for t in range(len(truth)) if t != far)
        long_range += sets[far] == truth[far]
    return local / len(strings), long_range / len(strings)


# -- how far back does the gradient reach? ----------------------------------------------------

def last_step_gradients(model, X, symbol=0):
    """Backpropagate a loss on the *last* step only and return the gradient norms of every step.

    The target is ``symbol`` at step T and nothing before it, so whatever gradient step t
    receives has travelled back from step T through T - t recurrent steps. Returns
    ``(h_norms, c_norms)``: ``||dL/dh_t||`` and, for an LSTM, ``||dL/dc_t||`` (else empty),
    for t = 1 .. T.
    """
    n, T = X.shape[:2]
    targets = np.zeros((n, T, model.W_hy.value.shape[1]))
    targets[:, -1, symbol] = 1
    net = model.unroll(T)
    net.graph.backward(net.feed(X, targets))
    norm = lambda nodes: [float(np.linalg.norm(node.grad)) for node in nodes]   # noqa: E731
    return norm(net.hs), norm(net.cs)


def set_spectral_radius(W, radius):
    """Scale the square Parameter ``W`` so that its spectral radius becomes ``radius``."""
    W.value = W.value * (radius / spectral_radius(W.value))
