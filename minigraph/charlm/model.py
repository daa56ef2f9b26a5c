"""The character model: one-hot characters -> LSTM layers -> a softmax over the vocabulary.

    model = CharLSTM(vocab_size=65, hidden=256, layers=2, rng=0)
    chunk = model.chunk(steps=64)                  # the graph of 64 steps, built once
    state = model.initial_state(batch=32)          # zeros: h and c of every layer
    loss = chunk.graph.backward(chunk.feed(inputs, targets, state), wrt=model.parameters)
    state = chunk.final_state()                    # carried to the next chunk, without gradient

Truncated backprop through time: the graph of a chunk has the state it starts from as
*Inputs* (``L1.h0``, ``L1.c0``, ...). Their values are the previous chunk's final h and c,
fed as plain numbers, so the model remembers across chunks, but the gradient stops at the
chunk's edge: nothing connects this chunk's loss to the Parameters' use in the chunk before.
``backward(wrt=model.parameters)`` computes only what the Parameters need.

Step t of layer k is ``recurrent.LSTMCell``'s graph (chapter 07) with its nodes named
``t3.L2.h``, ``t3.L2.c``, ...; layer k's Parameters are ``L2.W_x``, ``L2.W_h``, ``L2.b``. The
readout ``W_hy``, ``b_y`` is applied once to the top layer's h of every step (one product of
(steps·batch, hidden) by (hidden, vocabulary)): rows ``t·batch .. (t+1)·batch - 1`` are step t.
"""

import numpy as np

from .. import (BadValueError, Graph, Input, Parameter, ShapeError, concatenate, linear, nn,
               recurrent, set_default_dtype, softmax_cross_entropy)
from ..blas import one_thread
from ..nn import one_hot
from ..training import text
from ..training.scores import character_losses


class CharLSTM:
    """An LSTM language model over ``vocab_size`` characters: ``layers`` LSTM layers of
    ``hidden`` units each and a linear readout to one score (logit) per character.

    Its Parameters have ``dtype`` (float32 by default: training's usual precision).
    """

    def __init__(self, vocab_size, hidden=256, layers=1, rng=None, dtype=np.float32):
        rng = np.random.default_rng(rng)
        self.vocab_size = nn.whole_number(vocab_size, "vocab_size")
        self.hidden = nn.whole_number(hidden, "hidden, the number of units of a layer,")
        self.layers = nn.whole_number(layers, "layers")
        previous = set_default_dtype(dtype)                # the cells read the default dtype
        try:
            self.cells = [recurrent.LSTMCell(self.vocab_size if k == 0 else self.hidden,
                                             self.hidden, rng=rng) for k in range(self.layers)]
            self.W_hy = Parameter(nn.xavier_uniform(rng, self.hidden, self.vocab_size), name="W_hy",
                                  dtype=dtype)
            self.b_y = Parameter(np.zeros(self.vocab_size), name="b_y", dtype=dtype)
        finally:
            set_default_dtype(previous)
        self.dtype = self.W_hy.dtype
        for k, cell in enumerate(self.cells, start=1):
            for p in cell.parameters:                      # W_x of layer 2 is 'L2.W_x'
                p.name = f"L{k}.{p.name}"
        self.parameters = [p for cell in self.cells for p in cell.parameters] + [self.W_hy, self.b_y]
        self._chunks = {}

    def initial_state(self, batch):
        """The state before the first character: h = c = 0 for every layer, (batch, hidden) each,
        as the list ``[h of layer 1, c of layer 1, h of layer 2, ...]``."""
        return [np.zeros((batch, self.hidden), self.dtype) for _ in range(2 * self.layers)]

    def reader(self):
        """A function ``read(id)`` that reads one more character and returns the (1, vocabulary)
        scores of the next one, carrying the state from call to call: what ``sample`` drives."""
        step, state = self.chunk(1), self.initial_state(1)

        def read(i):
            nonlocal state
            logits, state = step.run([[i]], state)
            return logits

        return read

    def chunk(self, steps):
        """The graph of ``steps`` characters (built on first use, then reused)."""
        if steps not in self._chunks:
            self._chunks[steps] = Chunk(self, steps)
        return self._chunks[steps]

    def __repr__(self):
        numbers = sum(p.value.size for p in self.parameters)
        return (f"CharLSTM({self.layers} layer{'s' * (self.layers > 1)} of {self.hidden}, "
                f"{self.vocab_size} characters, {numbers:,} parameters, {self.dtype})")


class Chunk:
    """The graph of a model reading ``steps`` characters from a given state.

    xs        Inputs ``x1 .. x{steps}``: the one-hot characters of each step, (batch, vocabulary)
    start     Inputs ``L1.h0, L1.c0, L2.h0, ...``: the state the chunk starts from
    targets   an Input of (steps·batch,) character ids, step-major: the next character of each
    logits    (steps·batch, vocabulary) scores, in the same order as ``targets``
    end       the final h and c of every layer, in the order of ``start``
    graph     the loss: the mean over the chunk's characters of -log p(next character), in nats
    """

    def __init__(self, model, steps):
        self.model = model
        self.steps = steps = nn.whole_number(steps, "steps, the length of a chunk,")
        self.xs = [Input(f"x{t}") for t in range(1, steps + 1)]
        self.start = [Input(f"L{k}.{s}0") for k in range(1, model.layers + 1) for s in "hc"]
        self.targets = Input("targets", dtype=np.int64)
        states = [tuple(self.start[2 * k:2 * k + 2]) for k in range(model.layers)]
        tops = []
        for t, x in enumerate(self.xs, start=1):
            for k, cell in enumerate(model.cells):
                states[k] = cell(x, states[k], f"{t}.L{k + 1}")
                x = states[k][0]                           # layer k's h is layer k+1's input
            tops.append(x)
        top = tops[0] if steps == 1 else concatenate(tops, axis=0, name="h")
        self.logits = linear(top, model.W_hy, model.b_y, name="y")
        self.end = [node for state in states for node in state]
        self.loss = softmax_cross_entropy(self.logits, self.targets, name="loss")
        self.graph = Graph(self.loss)
        self.scores = Graph([self.logits, *self.end])      # no loss: for sampling and evaluation

    def feed(self, inputs, targets, state):
        """The feed for (batch, steps) character ids ``inputs`` and ``targets`` (None: no
        targets, for ``run``) starting from ``state`` (a list of arrays, as ``initial_state``)."""
        inputs = np.asarray(inputs)
        if inputs.ndim != 2 or inputs.shape[1] != self.steps:
            raise ShapeError(f"this chunk reads {self.steps} characters per stream: it is fed ids of "
                             f"shape (batch, {self.steps}); got shape {inputs.shape}. Use "
                             f"model.chunk({inputs.shape[-1] if inputs.ndim else 1}) for chunks of "
                             f"another length.")
        if len(state) != len(self.start):
            raise ShapeError(f"the state of a {self.model.layers}-layer model is {len(self.start)} "
                             f"arrays (h and c of each layer); got {len(state)}. Start from "
                             f"model.initial_state(batch) or chunk.final_state().")
        feed = dict(zip(self.xs, one_hot(inputs.T, self.model.vocab_size, self.model.dtype)))
        feed.update(zip(self.start, state))
        if targets is not None:
            feed[self.targets] = np.asarray(targets).T.reshape(-1)     # step-major, as the logits
        return feed

    def final_state(self):
        """The state after the last step of the last run, as plain arrays: what the next chunk
        starts from. The numbers are carried; the gradient is not (they become Inputs' values)."""
        return [node.value for node in self.end]

    def run(self, inputs, state):
        """Forward only: ``(logits, final state)`` for (batch, steps) ids from ``state``."""
        logits, *end = self.scores.forward(self.feed(inputs, None, state))
        return logits, list(end)

    def __repr__(self):
        return f"Chunk({self.steps} steps of {self.model!r})"


@one_thread
def mean_loss(model, ids, batch=32, steps=100):
    """The mean loss, in nats per character, of predicting ``ids[1:]`` from what precedes them.

    Every character from the second on is scored exactly once: the ids are cut into ``batch``
    streams (the last one padded at its end; the padding is not scored), read ``steps`` at a
    time with the state carried from chunk to chunk, as in training. To score a whole held-out
    split, pass it with the one character before it in front (``text.held_out_ids(ids)``).
    """
    if len(ids) < 2:
        raise BadValueError(f"mean_loss scores every character after the first; it was given "
                            f"{len(ids)} character(s). Pass at least two.")
    n = len(ids) - 1
    length = -(-n // (batch * steps)) * steps              # rounded up to whole chunks
    inputs, targets, scored = text.scored_rows(ids, batch, length)
    chunk, state, total = model.chunk(steps), model.initial_state(batch), 0.0
    for start in range(0, length, steps):
        cut = slice(start, start + steps)
        logits, state = chunk.run(inputs[:, cut], state)
        losses = character_losses(logits.astype(np.float64), targets[:, cut].T.reshape(-1))
        total += float(np.sum(losses[scored[:, cut].T.reshape(-1)]))
    return total / n
