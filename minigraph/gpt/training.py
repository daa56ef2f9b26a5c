"""A training run of the GPT: nanoGPT's ``train.py`` loop, one step at a time.

    run = Training(Config(), text=mg.data.shakespeare())
    while run.iteration < run.config.iterations:
        loss = run.step()

One step (one iteration), as nanoGPT's:

1. draw ``batch`` windows of ``block_size + 1`` characters at random places of the training
   split (``get_batch``): the first ``block_size`` are the input, the last ``block_size`` the
   targets, so every position of every window is a prediction;
2. forward and backward through the window's graph (built once), by the compiled step
   (``mg.function``) or, with ``run.engine = "interpreter"``, by ``Graph.backward``: the same
   numbers, bit for bit (``minigraph.training.step``);
3. clip the gradients to a global norm of at most ``clip``;
4. one AdamW step (weight decay on the 2-D weights only) at the rate of ``warmup_cosine``:
   ``warmup`` iterations up to ``lr``, then a cosine down to ``lr_min`` at ``iterations``.

Unlike chapter 09's LSTM nothing is carried from one batch to the next: each window is read
on its own, from its first character. Everything is decided by the config and its seed, so the
same config gives the same losses, bit for bit, and ``checkpoint`` can stop and resume a run.
"""

import os
from dataclasses import dataclass

import numpy as np

from .. import optim
from ..errors import BadValueError
from ..training.run import Run, Settings, clip_and_update
from ..training.step import Gradients
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


class Training(Run):
    """A model, its optimizer and the random generator that picks the windows: one run. Its
    text, held-out scores and samples are every language model's (``training.run.Run``).
    ``engine`` ("compiled" or "interpreter") computes the steps' gradients."""

    engine = "compiled"

    def __init__(self, config, text):
        self.config = cfg = config
        self.read(text)
        check_window(cfg, len(self.train_ids))
        self.model = GPT(len(self.vocab), cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.block_size,
                         rng=cfg.seed, dtype=np.dtype(cfg.dtype))
        self.window = self.model.window()
        self.gradients = Gradients(self.window.graph, self.model.parameters)
        adamw = optim.AdamW(self.model.parameters, lr=cfg.lr, beta1=cfg.beta1, beta2=cfg.beta2,
                            weight_decay=cfg.weight_decay)
        self.optimizer = optim.Scheduled(adamw, lambda t: optim.warmup_cosine(
            t, cfg.lr, cfg.warmup, cfg.iterations, cfg.lr_min))
        self.batches = np.random.default_rng(cfg.seed + 1)    # where the windows start
        self.rng = np.random.default_rng(cfg.seed + 2)        # for the samples

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
        loss, _ = self.gradients(self.window.feed(*self.batch()), self.engine)
        return clip_and_update(self, loss, eps=1e-6)           # PyTorch's clip_grad_norm_, as nanoGPT

    def score(self, ids):
        """The mean loss of predicting ``ids[1:]``, in windows of block_size (``mean_loss``)."""
        return mean_loss(self.model, ids)


def check_window(cfg, n_train):
    """A BadValueError for a ``block_size`` no run of ``cfg`` can use: attention probabilities
    (batch × n_head × block_size² numbers per layer, which the backward pass keeps) bigger than
    this machine's memory, or windows of block_size + 1 characters longer than the training
    split (``n_train`` characters)."""
    numbers = cfg.n_layer * cfg.batch * cfg.n_head * cfg.block_size ** 2
    needed, memory = numbers * np.dtype(cfg.dtype).itemsize, physical_memory()
    if memory is not None and needed > memory:
        raise BadValueError(
            f"the setting block_size ({cfg.block_size}) makes attention probabilities of "
            f"{needed / 2**30:,.1f} GiB ({cfg.n_layer} layer(s) × batch {cfg.batch} × {cfg.n_head} heads "
            f"× {cfg.block_size}² {cfg.dtype} numbers), more than this machine's memory "
            f"({memory / 2**30:,.1f} GiB): give a smaller block_size (nanoGPT's run uses "
            f"{Config.block_size}).")
    if cfg.block_size + 1 > n_train:
        raise BadValueError(f"the setting block_size ({cfg.block_size}) asks for windows of "
                            f"{cfg.block_size + 1} characters, and the training text has {n_train}: "
                            f"give a smaller block_size.")


def physical_memory():
    """The machine's memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
