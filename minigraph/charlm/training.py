"""A training run of the character model: everything that changes as it trains, in one object.

    run = Training(Config(hidden=256, iterations=2000), text=mg.data.shakespeare())
    while run.iteration < run.config.iterations:
        loss = run.step()

One step (one iteration) is truncated BPTT on one chunk of the B streams:

1. feed the chunk's (B, S) characters, their targets and the state carried from the chunk
   before (zeros at the start of an epoch, when the streams start again);
2. forward and backward, ``wrt=`` the Parameters only (the carried state is an Input), by
   the compiled step (``mg.function``) or, with ``run.engine = "interpreter"``, by
   ``Graph.backward``: the same numbers, bit for bit (``minigraph.training.step``);
3. clip the gradients to a global norm of at most ``clip``;
4. one Adam step, at the learning rate of a cosine schedule from ``lr`` down to ``lr_min``;
5. keep the chunk's final h and c (numbers, no gradient) for the next chunk.

Everything is decided by the config and its seed: the same config gives the same losses, bit
for bit. ``checkpoint.save`` stores all of a run's state (Parameters, Adam's moments, the
schedule's step, the carried state, the random generator of the samples, the history), so a
run saved, loaded and continued gives the same numbers as one never stopped.

What every run shares (its settings' round trip, the text it reads, held-out scores, samples,
the clipping and the update) is ``minigraph.training.run``'s.
"""

from dataclasses import dataclass

import numpy as np

from .. import optim
from ..training import text as texts
from ..training.run import Run, Settings, clip_and_update
from ..training.step import Gradients
from .model import CharLSTM, mean_loss


@dataclass(frozen=True)
class Config(Settings):
    """The choices that define a run. ``eval_chars`` held-out characters are scored every
    ``eval_every`` iterations, read as ``eval_batch`` streams (the whole split is scored by
    ``python -m minigraph.charlm.evaluate``). Keep those streams a few thousand characters
    long: each starts from a zero state, which a model trained on carried state has rarely
    seen, and its first hundred or so characters score worse than the rest (with 32 streams
    of 625 characters, 0.2 nats per character worse in a measured run)."""
    layers: int = 1
    hidden: int = 256
    batch: int = 32
    steps: int = 64
    iterations: int = 2000
    lr: float = 2e-3
    lr_min: float = 2e-4
    clip: float = 5.0
    seed: int = 0
    eval_every: int = 200
    eval_chars: int = 20_000
    eval_batch: int = 8
    dtype: str = "float32"


class Training(Run):
    """A model, its optimizer and the position in the data: one run, one step at a time.
    ``engine`` ("compiled" or "interpreter") computes the steps' gradients."""

    engine = "compiled"

    def __init__(self, config, text):
        self.config = config
        self.read(text)
        self.inputs, self.targets = texts.streams(self.train_ids, config.batch, config.steps)
        self.per_epoch = self.inputs.shape[1] // config.steps
        self.model = CharLSTM(len(self.vocab), config.hidden, config.layers, rng=config.seed,
                              dtype=np.dtype(config.dtype))
        self.adam = optim.Adam(self.model.parameters, lr=config.lr)
        self.optimizer = optim.Scheduled(self.adam, lambda t: optim.cosine_decay(
            t, config.iterations, config.lr, config.lr_min))
        self.rng = np.random.default_rng(config.seed + 1)     # for the samples
        self.state = self.model.initial_state(config.batch)
        chunk = self.model.chunk(config.steps)
        self.gradients = Gradients(chunk.graph, self.model.parameters, carried=chunk.end)

    @property
    def chars_per_step(self):
        """Characters read by one iteration: B streams of S."""
        return self.config.batch * self.config.steps

    @property
    def epoch(self):
        """How many times the training split has been read (a fraction)."""
        return self.iteration / self.per_epoch

    def step(self):
        """One iteration on the next chunk; returns its training loss (nats per character)."""
        cfg, position = self.config, self.iteration % self.per_epoch
        if position == 0:                                   # the streams start again
            self.state = self.model.initial_state(cfg.batch)
        cut = slice(position * cfg.steps, (position + 1) * cfg.steps)
        feed = self.model.chunk(cfg.steps).feed(self.inputs[:, cut], self.targets[:, cut], self.state)
        loss, self.state = self.gradients(feed, self.engine)
        return clip_and_update(self, loss)

    def score(self, ids):
        """The mean loss of predicting ``ids[1:]``: ``eval_batch`` streams, ``steps`` at a time."""
        return mean_loss(self.model, ids, batch=self.config.eval_batch, steps=self.config.steps)
