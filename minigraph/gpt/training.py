"""A training run of the GPT: nanoGPT's ``train.py`` loop, one step at a time.

    run = Training(Config(), text=mg.data.shakespeare())
    while run.iteration < run.config.iterations:
        loss = run.step()

One step (one iteration), as nanoGPT's:

1. draw ``batch`` windows of ``block_size + 1`` characters at random places of the training
   split (``get_batch``): the first ``block_size`` are the input, the last ``block_size`` the
   targets, so every position of every window is a prediction;
2. forward and backward through the window's graph (built once);
3. clip the gradients to a global norm of at most ``clip``;
4. one AdamW step (weight decay on the 2-D weights only) at the rate of ``warmup_cosine``:
   ``warmup`` iterations up to ``lr``, then a cosine down to ``lr_min`` at ``iterations``.

Unlike chapter 09's LSTM nothing is carried from one batch to the next: each window is read
on its own, from its first character. Everything is decided by the config and its seed, so the
same config gives the same losses, bit for bit, and ``checkpoint`` can stop and resume a run.
"""

from dataclasses import dataclass

import numpy as np

from .. import optim
from ..charlm import text as texts
from ..charlm.sample import sample
from ..charlm.training import Settings
from .model import GPT, mean_loss


@dataclass(frozen=True)
class Config(Settings):
    """nanoGPT's CPU run of Tiny Shakespeare (its README's command), under chapter 09's names:
    ``batch`` is nanoGPT's batch_size, ``iterations`` its max_iters and lr_decay_iters, ``lr``
    and ``lr_min`` its learning_rate and min_lr, ``warmup`` warmup_iters, ``clip`` grad_clip;
    dropout 0 and bias False. Every ``eval_every`` iterations the first ``eval_chars``
    characters of the held-out split are scored (``python -m minigraph.gpt.evaluate`` scores
    all of it)."""
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 64
    batch: int = 12
    iterations: int = 2000
    lr: float = 1e-3
    lr_min: float = 1e-4
    warmup: int = 100
    beta1: float = 0.9
    beta2: float = 0.99
    weight_decay: float = 0.1
    clip: float = 1.0
    seed: int = 1337
    eval_every: int = 250
    eval_chars: int = 20_000
    dtype: str = "float32"


class Training:
    """A model, its optimizer and the random generator that picks the windows: one run."""

    def __init__(self, config, text):
        self.config = cfg = config
        self.vocab = texts.Vocabulary(text)
        ids = self.vocab.encode(text)
        self.train_ids = texts.split(ids)[0]
        self.held_out_ids = texts.held_out_ids(ids)
        self.model = GPT(len(self.vocab), cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.block_size,
                         rng=cfg.seed, dtype=np.dtype(cfg.dtype))
        self.window = self.model.window()
        adamw = optim.AdamW(self.model.parameters, lr=cfg.lr, beta1=cfg.beta1, beta2=cfg.beta2,
                            weight_decay=cfg.weight_decay)
        self.optimizer = optim.Scheduled(adamw, lambda t: optim.warmup_cosine(
            t, cfg.lr, cfg.warmup, cfg.iterations, cfg.lr_min))
        self.batches = np.random.default_rng(cfg.seed + 1)    # where the windows start
        self.rng = np.random.default_rng(cfg.seed + 2)        # for the samples
        self.iteration = 0
        self.history = {"train": [], "held_out": []}          # [iteration, loss] pairs

    @property
    def chars_per_step(self):
        """Characters predicted by one iteration: B windows of block_size."""
        return self.config.batch * self.config.block_size

    @property
    def epoch(self):
        """How many training splits' worth of characters have been read (a fraction)."""
        return self.iteration * self.chars_per_step / len(self.train_ids)

    def batch(self):
        """``(inputs, targets)``, each (batch, block_size): windows at random places."""
        T = self.config.block_size
        starts = self.batches.integers(0, len(self.train_ids) - T, size=self.config.batch)
        windows = self.train_ids[starts[:, None] + np.arange(T + 1)]
        return windows[:, :-1], windows[:, 1:]

    def step(self):
        """One iteration on a fresh batch; returns its training loss (nats per character)."""
        params = self.model.parameters
        loss = float(self.window.graph.backward(self.window.feed(*self.batch()), wrt=params))
        optim.clip_grad_norm(params, self.config.clip)
        self.optimizer.step()
        self.iteration += 1
        self.history["train"].append([self.iteration, loss])
        return loss

    def held_out_loss(self, chars=None):
        """The loss on the first ``chars`` held-out characters (all of them if None)."""
        ids = self.held_out_ids if chars is None else self.held_out_ids[:chars + 1]
        return mean_loss(self.model, ids)

    def evaluate(self):
        """Score ``config.eval_chars`` held-out characters and record the loss in the history."""
        loss = self.held_out_loss(self.config.eval_chars)
        self.history["held_out"].append([self.iteration, loss])
        return loss

    def sample(self, prime="\n", length=200, temperature=1.0, top_k=None):
        """Text written by the model now, from the run's own generator."""
        return sample(self.model, self.vocab, prime, length, self.rng, temperature, top_k)
