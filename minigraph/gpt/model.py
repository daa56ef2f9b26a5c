"""A GPT: characters -> embeddings -> transformer blocks -> a score for every next character.

Karpathy's nanoGPT (``model.py``) on this engine, with its defaults: no biases, no dropout,
the LM head tied to the token embedding.

    model = GPT(vocab_size=65, n_layer=4, n_head=4, n_embd=128, block_size=64, rng=0)
    window = model.window()                       # the graph of block_size positions, built once
    loss = window.graph.backward(window.feed(ids, targets), wrt=model.parameters)   # (B, T) ints
    logits = window.run(ids)                      # (B, T, vocabulary): forward only

Every position is one row of the *residual stream*: a (B·T, C) array (C = ``n_embd``) that
each block reads and adds to. Most of the model works on those rows one at a time (layer norm,
the projections, the MLP); the one place where positions meet is attention:

    x = wte[ids] + wpe                             token + position embeddings
    for each block:
        x = x + attention(layer_norm(x))           positions look back at earlier positions
        x = x + mlp(layer_norm(x))                 each position on its own: C -> 4C -> GELU -> C
    logits = layer_norm(x) @ wteᵀ                  the head is the token embedding, transposed

``attention`` projects each row to a query, a key and a value at once (one (C, 3C) matrix),
cuts each into ``n_head`` heads of C / n_head numbers, scores every query against every key
(``q @ kᵀ / √(head size)``), masks the future (``causal_mask``: position t sees 0 .. t only),
softmaxes, averages the values with those weights, and joins the heads back to C numbers
through an output projection. Position t's logits depend on characters 0 .. t alone.

Names: block 2's nodes are ``h2.attn.qkv``, ``h2.mlp.fc``, ... and its Parameters
``h2.attn.W_qkv``, ``h2.mlp.W_fc``, ... (nanoGPT's ``transformer.h[2]``), so ``mg.draw``
frames each sub-layer. Weights start as N(0, 0.02), the two projections that write into the
residual stream (``attn.W_proj``, ``mlp.W_proj``) as N(0, 0.02 / √(2·n_layer)), layer norms'
gains as 1, as nanoGPT does.
"""

import math

import numpy as np

from .. import (BadValueError, Graph, Input, Parameter, ShapeError, add, causal_mask, embedding,
               gelu, getitem, layer_norm, matmul, mul, nn, reshape, softmax, softmax_cross_entropy,
               split, transpose)
from ..blas import one_thread
from ..training import text
from ..training.scores import character_losses


class GPT:
    """A decoder-only transformer over ``vocab_size`` characters, reading at most ``block_size``
    of them at once. Its Parameters have ``dtype`` (float32 by default)."""

    def __init__(self, vocab_size, n_layer=4, n_head=4, n_embd=128, block_size=64, rng=None,
                 dtype=np.float32):
        rng = np.random.default_rng(rng)
        self.vocab_size = nn.whole_number(vocab_size, "vocab_size")
        self.n_layer = nn.whole_number(n_layer, "n_layer, the number of blocks,")
        self.n_head = nn.whole_number(n_head, "n_head, the number of attention heads,")
        self.n_embd = C = nn.whole_number(n_embd, "n_embd, the width of the residual stream,")
        self.block_size = nn.whole_number(block_size, "block_size, the longest context,")
        if C % self.n_head:
            raise ShapeError(f"n_embd = {C} is cut into n_head = {self.n_head} heads of equal size, "
                             f"so it must be a multiple of n_head: change one of them.")
        self.dtype = np.dtype(dtype)
        residual_std = 0.02 / math.sqrt(2 * self.n_layer)

        def weight(name, *shape, std=0.02):
            return Parameter(rng.normal(0.0, std, shape), name=name, dtype=self.dtype)

        def gain(name):
            return Parameter(np.ones(C), name=name, dtype=self.dtype)

        self.wte = weight("wte", self.vocab_size, C)          # token embedding, and the LM head
        self.wpe = weight("wpe", self.block_size, C)          # position embedding
        self.blocks = [{"ln_1": gain(f"h{i}.ln_1.g"),
                        "W_qkv": weight(f"h{i}.attn.W_qkv", C, 3 * C),
                        "W_attn_proj": weight(f"h{i}.attn.W_proj", C, C, std=residual_std),
                        "ln_2": gain(f"h{i}.ln_2.g"),
                        "W_fc": weight(f"h{i}.mlp.W_fc", C, 4 * C),
                        "W_mlp_proj": weight(f"h{i}.mlp.W_proj", 4 * C, C, std=residual_std)}
                       for i in range(self.n_layer)]
        self.ln_f = gain("ln_f.g")
        self.parameters = [self.wte, self.wpe, *(p for b in self.blocks for p in b.values()), self.ln_f]
        self._windows = {}

    def window(self, length=None):
        """The graph of ``length`` positions (``block_size`` if None), built on first use."""
        length = self.block_size if length is None else length
        if length not in self._windows:
            self._windows[length] = Window(self, length)
        return self._windows[length]

    def reader(self):
        """A function ``read(id)`` that reads one more character and returns the scores of the
        next one: what ``training.sample`` drives. It keeps the last ``block_size`` characters and
        runs them through the window of ``block_size`` positions, padded on the right; the
        padding changes nothing before it (the model is causal), so one graph serves every
        length of context."""
        window, context = self.window(), []

        def read(i):
            context.append(i)
            del context[:-self.block_size]
            ids = np.zeros((1, self.block_size), np.int64)
            ids[0, :len(context)] = context
            return window.run(ids)[0, len(context) - 1]

        return read

    def __repr__(self):
        numbers = sum(p.value.size for p in self.parameters)
        return (f"GPT({self.n_layer} layers, {self.n_head} heads, n_embd {self.n_embd}, block_size "
                f"{self.block_size}, {self.vocab_size} characters, {numbers:,} parameters, {self.dtype})")


class Window:
    """The graph of the model reading ``length`` positions of B sequences at once.

    ids       an Input of (B, length) character ids
    targets   an Input of (B·length,) ids: the character after each position, row by row
    logits    (B·length, vocabulary) scores, one row per position, in the order of ``targets``
    loss      the mean over all positions of -log p(next character), in nats
    graph     the loss's Graph (a training step); ``scores``: the logits' Graph (no targets)
    """

    def __init__(self, model, length):
        self.model = model
        self.length = T = nn.whole_number(length, "length, the number of positions,")
        if T > model.block_size:
            raise ShapeError(f"this GPT has position embeddings for {model.block_size} positions "
                             f"(block_size); a window of {T} needs more. Read at most the last "
                             f"{model.block_size} characters.")
        self.ids = Input("ids", dtype=np.int64)
        self.targets = Input("targets", dtype=np.int64)
        pos = model.wpe if T == model.block_size else getitem(model.wpe, slice(0, T), name="wpe[:T]")
        x = reshape(add(embedding(model.wte, self.ids, name="tok"), pos, name="tok+pos"),
                    (-1, model.n_embd), name="x")                         # (B·T, C)
        for i, block in enumerate(model.blocks):
            x = add(x, attention(layer_norm(x, block["ln_1"], name=f"h{i}.ln_1"), block,
                                 model.n_head, T, f"h{i}.attn"), name=f"h{i}.x_attn")
            x = add(x, mlp(layer_norm(x, block["ln_2"], name=f"h{i}.ln_2"), block, f"h{i}.mlp"),
                    name=f"h{i}.x_mlp")
        x = layer_norm(x, model.ln_f, name="ln_f")
        self.logits = matmul(x, transpose(model.wte, name="wteᵀ"), name="logits")
        self.loss = softmax_cross_entropy(self.logits, self.targets, name="loss")
        self.graph = Graph(self.loss)
        self.scores = Graph(self.logits)

    def feed(self, ids, targets=None):
        """The feed for (B, length) ids and their (B, length) targets (None: no targets)."""
        ids = np.asarray(ids)
        if ids.ndim != 2 or ids.shape[1] != self.length:
            raise ShapeError(f"this window reads {self.length} characters per sequence: it is fed "
                             f"ids of shape (B, {self.length}); got shape {ids.shape}. Use "
                             f"model.window(n) for windows of n characters.")
        feed = {self.ids: ids}
        if targets is not None:
            feed[self.targets] = np.asarray(targets).reshape(-1)
        return feed

    def run(self, ids):
        """Forward only: the (B, length, vocabulary) logits of (B, length) ids."""
        ids = np.asarray(ids)
        return self.scores.forward(self.feed(ids)).reshape(*ids.shape, -1)

    def __repr__(self):
        return f"Window({self.length} positions of {self.model!r})"


def attention(x, block, n_head, T, name):
    """Causal multi-head self-attention of the rows ``x`` (B·T, C): T positions per sequence,
    ``n_head`` heads of C / n_head numbers each."""
    C = block["W_qkv"].shape[0]
    size = C // n_head
    qkv = matmul(x, block["W_qkv"], name=f"{name}.qkv")                 # (B·T, 3C)
    q, k, v = (transpose(reshape(part, (-1, T, n_head, size), name=f"{name}.{letter}"),
                         (0, 2, 1, 3), name=f"{name}.{letter}_heads")     # (B, heads, T, size)
               for letter, part in zip("qkv", split(qkv, 3, axis=-1, name=f"{name}.split")))
    scores = mul(matmul(q, transpose(k, (0, 1, 3, 2), name=f"{name}.kᵀ"), name=f"{name}.q·k"),
                 1.0 / math.sqrt(size), name=f"{name}.scores")            # (B, heads, T, T)
    weights = softmax(scores, axis=-1, mask=causal_mask(T), name=f"{name}.weights")
    heads = matmul(weights, v, name=f"{name}.mix")                        # (B, heads, T, size)
    merged = reshape(transpose(heads, (0, 2, 1, 3), name=f"{name}.merge"), (-1, C),
                     name=f"{name}.y")                                    # (B·T, C)
    return matmul(merged, block["W_attn_proj"], name=f"{name}.proj")


def mlp(x, block, name):
    """Each row on its own: C -> 4C, GELU, -> C."""
    hidden = gelu(matmul(x, block["W_fc"], name=f"{name}.fc"), name=f"{name}.gelu")
    return matmul(hidden, block["W_mlp_proj"], name=f"{name}.proj")


@one_thread
def mean_loss(model, ids, batch=64):
    """The mean loss, in nats per character, of predicting ``ids[1:]`` from what precedes them
    within non-overlapping windows of ``block_size`` characters.

    Every character from the second on is scored exactly once; the first of a window is
    predicted from the one character before it, the last from ``block_size``, as in training
    (and in nanoGPT's ``estimate_loss``, whose windows start at random places). ``batch``
    windows are read at once; the last window is padded at its end (the padding is not scored).
    To score a whole held-out split, pass it with the character before it in front
    (``training.text.held_out_ids(ids)``).
    """
    if len(ids) < 2:
        raise BadValueError(f"mean_loss scores every character after the first; it was given "
                            f"{len(ids)} character(s). Pass at least two.")
    T = model.block_size
    inputs, targets, scored = text.scored_rows(ids, -(-(len(ids) - 1) // T), T)
    window, total = model.window(), 0.0
    for rows in (slice(start, start + batch) for start in range(0, len(inputs), batch)):
        logits = window.run(inputs[rows]).reshape(-1, model.vocab_size)
        losses = character_losses(logits.astype(np.float64), targets[rows].reshape(-1))
        total += float(np.sum(losses[scored[rows].reshape(-1)]))
    return total / (len(ids) - 1)
