"""Translation with attention (Bahdanau, Cho & Bengio 2015): an encoder reads the source, a
decoder writes the target one character at a time, looking back at the source as it goes.

    model = Translator(rng=0)                     # sizes of the dates task by default
    net = model.teacher_forced()                  # the training graph, built once
    loss = net.graph.backward(net.feed(source_ids, target_ids), wrt=model.parameters)
    texts, alignments = model.translate(["3 mar 1997"])    # greedy decoding
    alignments[0]                                 # (10, 10): where each output step looked

The encoder embeds each source character (a row of ``source_embedding``) and reads the
sequence with two LSTMs (chapter 07's cell), one forward and one backward; the state of
position j is both directions' h side by side, ``h_j`` (a summary of the whole source, centred
on character j). The decoder is an LSTM too. At output step i, before it writes, it scores
every source position with its previous state ``s_{i-1}`` (additive attention)::

    e_ij = v · tanh(s_{i-1} W_q + h_j W_k)        how well position j fits what comes next
    α_i  = softmax(e_i)                            weights over the source, summing to 1
    c_i  = Σ_j α_ij h_j                            the context: a weighted mean of the h_j

and reads ``[embedding of the previous output character, c_i]`` to make ``s_i``; the scores of
the next character are a linear map of ``[s_i, c_i]``. The matrix of the ``α_i`` (outputs by
source characters) is the *alignment*: it shows which characters each output came from.

Sources of different lengths share one graph: every source is padded to
``data.MAX_SOURCE_LENGTH`` with rows of zeros (no character), and a *mask* adds -1e9 to the
scores of the padding, so its attention weight is 0. In training the decoder reads the true
previous character (*teacher forcing*; before the first, a row of zeros); ``translate`` reads
its own previous choice instead, the most likely character (greedy decoding), through the
graph of one decoder step, run ten times.
"""

import numpy as np

from .. import (BadValueError, Graph, Input, Parameter, ShapeError, concatenate, linear, matmul, mul, nn,
                ops, recurrent, reshape, set_default_dtype, softmax, softmax_cross_entropy, tanh)
from ..blas import one_thread
from . import data

MASKED = -1e9          # the score given to padding: exp(-1e9) is 0, in float32 as in float64


class Translator:
    """The encoder, the attention and the decoder: their Parameters and the graphs that use them.

    ``embedding`` numbers per character, ``hidden`` units per encoder direction, ``decoder``
    units in the decoder's LSTM, ``attention`` units in the scoring layer. Its Parameters have
    ``dtype`` (float32 by default; float64 for gradcheck).
    """

    def __init__(self, source_size=len(data.SOURCE), target_size=len(data.TARGET),
                 source_length=data.MAX_SOURCE_LENGTH, target_length=data.TARGET_LENGTH,
                 embedding=16, hidden=32, decoder=64, attention=32, rng=None, dtype=np.float32):
        rng = np.random.default_rng(rng)
        whole = nn.whole_number
        self.source_size = whole(source_size, "source_size")
        self.target_size = whole(target_size, "target_size")
        self.source_length = whole(source_length, "source_length")
        self.target_length = whole(target_length, "target_length")
        self.sizes = dict(embedding=whole(embedding, "embedding"), hidden=whole(hidden, "hidden"),
                          decoder=whole(decoder, "decoder"), attention=whole(attention, "attention"))
        e, h, d, a = self.sizes.values()
        previous = set_default_dtype(dtype)                 # the cells read the default dtype
        try:
            def weights(name, n_in, n_out):
                return Parameter(nn.xavier_uniform(rng, n_in, n_out), name=name, dtype=dtype)

            self.source_embedding = weights("source_embedding", self.source_size, e)
            self.forward_cell = recurrent.LSTMCell(e, h, rng=rng)
            self.backward_cell = recurrent.LSTMCell(e, h, rng=rng)
            self.W_init = weights("W_init", h, d)
            self.b_init = Parameter(np.zeros(d), name="b_init", dtype=dtype)
            self.W_k, self.W_q = weights("W_k", 2 * h, a), weights("W_q", d, a)
            self.v = weights("v", a, 1)
            self.target_embedding = weights("target_embedding", self.target_size, e)
            self.decoder_cell = recurrent.LSTMCell(e + 2 * h, d, rng=rng)
            self.W_out = weights("W_out", d + 2 * h, self.target_size)
            self.b_out = Parameter(np.zeros(self.target_size), name="b_out", dtype=dtype)
        finally:
            set_default_dtype(previous)
        self.dtype = self.W_out.dtype
        for prefix, cell in (("enc.fwd", self.forward_cell), ("enc.bwd", self.backward_cell),
                             ("dec", self.decoder_cell)):
            for p in cell.parameters:                       # 'enc.fwd.W_x', 'dec.b', ...
                p.name = f"{prefix}.{p.name}"
        self.parameters = [self.source_embedding, *self.forward_cell.parameters,
                           *self.backward_cell.parameters, self.W_init, self.b_init, self.W_k,
                           self.W_q, self.v, self.target_embedding, *self.decoder_cell.parameters,
                           self.W_out, self.b_out]
        self._graphs = {}

    # -- the pieces of the graphs ---------------------------------------------------------

    def encode(self, xs):
        """Encoder nodes for the one-hot source characters ``xs`` (one node (batch, source
        characters) per position): ``(memory, keys, s0)``, the states h_j as (batch, T, 2·hidden),
        their projections h_j W_k as (batch, T, attention), and the decoder's first state."""
        T, (_, h, _, a) = len(xs), self.sizes.values()
        embedded = [matmul(x, self.source_embedding, name=f"t{t}.embed") for t, x in enumerate(xs, 1)]
        forward, backward = [], [None] * T
        state = initial_state(self.forward_cell, "enc.fwd")
        for t in range(T):
            state = self.forward_cell(embedded[t], state, f"{t + 1}.fwd")
            forward.append(state[0])
        state = initial_state(self.backward_cell, "enc.bwd")
        for t in reversed(range(T)):
            state = self.backward_cell(embedded[t], state, f"{t + 1}.bwd")
            backward[t] = state[0]
        states = [concatenate([f, b], axis=1, name=f"t{t}.h") for t, (f, b) in
                  enumerate(zip(forward, backward), 1)]
        memory = reshape(concatenate(states, axis=1, name="h"), shape=(-1, T, 2 * h), name="memory")
        keys = reshape(matmul(reshape(memory, shape=(-1, 2 * h)), self.W_k), shape=(-1, T, a), name="keys")
        s0 = tanh(linear(backward[0], self.W_init, self.b_init), name="s0")    # read all the source
        return memory, keys, s0

    def attend(self, s, memory, keys, mask, i):
        """Step ``i``'s attention: ``(weights α_i (batch, T), context c_i (batch, 2·hidden))``."""
        T, a = self.source_length, self.sizes["attention"]
        query = reshape(matmul(s, self.W_q), shape=(-1, 1, a), name=f"t{i}.query")
        fit = tanh(keys + query, name=f"t{i}.fit")                       # (batch, T, attention)
        scores = reshape(matmul(reshape(fit, shape=(-1, a)), self.v), shape=(-1, T)) + mask
        alpha = softmax(scores, axis=-1, name=f"t{i}.α")
        context = ops.sum(mul(reshape(alpha, shape=(-1, T, 1)), memory), axis=1, name=f"t{i}.context")
        return alpha, context

    def decode_step(self, y_previous, state, memory, keys, mask, i):
        """Output step ``i``: ``(logits, α_i, new state)`` from the one-hot previous character
        and the decoder state ``(s, c)``."""
        alpha, context = self.attend(state[0], memory, keys, mask, i)
        embedded = matmul(y_previous, self.target_embedding, name=f"t{i}.embed_y")
        state = self.decoder_cell(concatenate([embedded, context], axis=1), state, f"{i}.dec")
        logits = linear(concatenate([state[0], context], axis=1), self.W_out, self.b_out,
                        name=f"t{i}.y")
        return logits, alpha, state

    # -- the graphs, built once each ------------------------------------------------------

    def teacher_forced(self):
        """The training graph (``TeacherForced``), built on first use."""
        if "train" not in self._graphs:
            self._graphs["train"] = TeacherForced(self)
        return self._graphs["train"]

    def step(self):
        """The graph of one decoder step (``DecoderStep``), built on first use."""
        if "step" not in self._graphs:
            self._graphs["step"] = DecoderStep(self)
        return self._graphs["step"]

    # -- using it -------------------------------------------------------------------------

    def greedy(self, source_ids):
        """Greedy decoding of (batch, source_length) ids (-1: padding): ``(output ids (batch,
        target_length), alignments (batch, target_length, source_length))``."""
        outputs, alignments, _ = self.decode(source_ids)
        return outputs, alignments

    def decode(self, source_ids):
        """``greedy``'s ``(outputs, alignments)`` and the probability the model gave each whole
        output (batch,): the product, over the steps, of the softmax probability of the
        character it chose: how sure it is, which is no sign of being right (a model trained on
        dates that exist is as sure of ``1997-02-31``)."""
        net = self.teacher_forced()
        memory, keys, s0 = net.encoder.forward(net.feed(source_ids))
        step, mask = self.step(), source_mask(source_ids, self.dtype)
        state = [s0, np.zeros_like(s0)]
        y = np.full(len(source_ids), -1)                                 # nothing written yet
        outputs, alignments, log_probability = [], [], 0.0
        for _ in range(self.target_length):
            logits, alpha, *state = step.graph.forward(
                {step.y: nn.one_hot(y, self.target_size, self.dtype), step.s: state[0],
                 step.c: state[1], step.memory: memory, step.keys: keys, step.mask: mask})
            y = np.argmax(logits, axis=1)
            log_probability = log_probability + np.max(nn.log_probabilities(np.asarray(logits, np.float64)), axis=1)
            outputs.append(y)
            alignments.append(alpha)
        return np.stack(outputs, axis=1), np.stack(alignments, axis=1), np.exp(log_probability)

    @one_thread
    def translate(self, texts, batch=500):
        """``(translations, alignments)`` of a list of source texts: each output string and its
        alignment, (target_length, len(source)) weights (rows: output characters, columns:
        source characters). A BadValueError names a text the model cannot read."""
        translations, alignments, _ = self.translate_with_confidence(texts, batch)
        return translations, alignments

    def translate_with_confidence(self, texts, batch=500):
        """``translate``'s ``(translations, alignments)`` and the model's probability of each
        translation (``decode``)."""
        translations, alignments, confidences = [], [], []
        for start in range(0, len(texts), batch):
            chunk = texts[start:start + batch]
            ids, lengths = data.encode_sources(chunk)
            outputs, weights, probabilities = self.decode(ids)
            translations += [data.TARGET.decode(row) for row in outputs]
            alignments += [w[:, :n] for w, n in zip(weights, lengths)]
            confidences += [float(p) for p in probabilities]
        return translations, alignments, confidences

    @property
    def size(self):
        """The number of trainable numbers."""
        return int(np.sum([p.value.size for p in self.parameters]))

    def __repr__(self):
        e, h, d, a = self.sizes.values()
        return (f"Translator(embedding {e}, encoder 2x{h}, decoder {d}, attention {a}: "
                f"{self.size:,} parameters, {self.dtype})")


class TeacherForced:
    """The training graph: the encoder and ``target_length`` decoder steps, each reading the
    true previous character.

    xs        Inputs ``x1 ..``: the one-hot source characters of each position (zeros: padding)
    mask      an Input (batch, T): 0 on characters, -1e9 on padding
    ys        Inputs ``y0 ..``: the one-hot previous target characters (y0: zeros)
    targets   an Input of (target_length·batch,) ids, step-major (rows i·batch ..: step i)
    alphas    the attention weights of each step, (batch, T) each
    encoder   the graph of the encoder alone: (memory, keys, s0), for greedy decoding
    graph     the loss: the mean cross-entropy of every output character, in nats
    """

    def __init__(self, model):
        self.model = model
        self.xs = [Input(f"x{t}") for t in range(1, model.source_length + 1)]
        self.mask = Input("mask")
        self.ys = [Input(f"y{i}") for i in range(model.target_length)]
        self.targets = Input("targets", dtype=np.int64)
        memory, keys, s0 = model.encode(self.xs)
        self.encoder = Graph([memory, keys, s0])
        state = (s0, initial_state(model.decoder_cell, "dec")[1])
        logits, self.alphas = [], []
        for i, y in enumerate(self.ys, 1):
            scores, alpha, state = model.decode_step(y, state, memory, keys, self.mask, i)
            logits.append(scores)
            self.alphas.append(alpha)
        self.logits = concatenate(logits, axis=0, name="y")
        self.loss = softmax_cross_entropy(self.logits, self.targets, name="loss")
        self.graph = Graph(self.loss)

    def feed(self, source_ids, target_ids=None):
        """The feed for (batch, source_length) source ids (-1: padding) and (batch,
        target_length) target ids (None: the encoder's feed alone)."""
        model, source_ids = self.model, np.asarray(source_ids)
        if source_ids.ndim != 2 or source_ids.shape[1] != model.source_length:
            raise ShapeError(f"the translator reads sources padded to {model.source_length} "
                             f"characters: ids of shape (batch, {model.source_length}); got shape "
                             f"{source_ids.shape}. Make them with data.encode_sources(texts).")
        check_ids(source_ids, model.source_size, "source", -1)
        feed = dict(zip(self.xs, nn.one_hot(source_ids.T, model.source_size, model.dtype)))
        if target_ids is None:
            return feed
        target_ids = np.asarray(target_ids)
        if target_ids.shape != (len(source_ids), model.target_length):
            raise ShapeError(f"the targets of {len(source_ids)} sources are ids of shape "
                             f"({len(source_ids)}, {model.target_length}); got shape "
                             f"{target_ids.shape}. Make them with data.encode_targets(texts).")
        check_ids(target_ids, model.target_size, "target", 0)
        previous = np.concatenate([np.full((len(target_ids), 1), -1), target_ids[:, :-1]], axis=1)
        feed.update(zip(self.ys, nn.one_hot(previous.T, model.target_size, model.dtype)))
        feed[self.mask] = source_mask(source_ids, model.dtype)
        feed[self.targets] = target_ids.T.reshape(-1)                    # step-major, as the logits
        return feed


class DecoderStep:
    """The graph of one decoder step, every input an Input: ``y`` (the previous character,
    one-hot), ``s`` and ``c`` (the decoder's state), ``memory``, ``keys`` and ``mask`` (from the
    encoder). ``graph`` computes ``(logits, α, s, c)``."""

    def __init__(self, model):
        self.y, self.s, self.c = Input("y"), Input("s"), Input("c")
        self.memory, self.keys, self.mask = Input("memory"), Input("keys"), Input("mask")
        logits, alpha, state = model.decode_step(self.y, (self.s, self.c), self.memory, self.keys,
                                                 self.mask, 1)
        self.graph = Graph([logits, alpha, *state])


def initial_state(cell, prefix):
    """The cell's initial state (zeros), its nodes named ``prefix.h0``, ``prefix.c0``: a graph
    with three cells holds three of them, and a graph's names are unique."""
    state = cell.initial_state()
    for node in state:
        node.name = f"{prefix}.{node.name}"
    return state


def check_ids(ids, size, side, lowest):
    """A BadValueError unless every id is a character of the vocabulary (or -1, padding, if
    ``lowest`` is -1)."""
    outside = ids.size > 0 and not lowest <= ids.min() <= ids.max() < size
    if not np.issubdtype(ids.dtype, np.integer) or outside:
        raise BadValueError(f"{side} ids are whole numbers from {lowest} to {size - 1} (the {side} "
                            f"vocabulary has {size} characters{', -1 is padding' * (lowest < 0)}); got "
                            f"{ids.dtype} ids from {ids.min()} to {ids.max()}. Make them with "
                            f"data.encode_{side}s(texts).")


def source_mask(source_ids, dtype=np.float64):
    """0 where a source has a character, -1e9 on its padding (ids -1): added to the scores."""
    return np.where(np.asarray(source_ids) >= 0, 0.0, MASKED).astype(dtype)
