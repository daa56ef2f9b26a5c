"""What every training run shares besides its steps: its settings, the text it reads, its
held-out scores and samples, and the end of a step (clip, update, count).

    @dataclass(frozen=True)
    class Config(Settings): ...                    # Config.from_dict(config.as_dict()) == config

    class Training(Run):                           # a language model's run
        def step(self):
            loss = ...                             # forward and backward: p.grad of every Parameter
            return clip_and_update(self, loss)

``Settings`` is mixed into the three models' Configs (chapter 09's LSTM, chapter 10's
translator, chapter 11's GPT), ``Run`` into the two language models' runs, and
``clip_and_update`` ends the LSTM's and the translator's steps.
"""

import math
from dataclasses import asdict, fields

import numpy as np

from .. import optim
from ..errors import BadValueError
from . import text as texts
from .sample import sample


# settings that may be 0 (every other whole number is at least 1, every other number above 0)
MAY_BE_ZERO = {"seed", "warmup", "lr_min", "weight_decay", "beta1", "beta2"}
BELOW_ONE = {"beta1", "beta2"}               # Adam's decay rates: in [0, 1)


class Settings:
    """What a run's config can do besides holding its values: check them, go to a dict and back
    (the checkpoint's JSON). Mixed into a frozen dataclass (each model's ``Config``).

    A config no run can use is refused when it is made (from a command line, a notebook or a
    checkpoint), with a ``BadValueError`` naming the setting: a whole number (a size, a count,
    a seed) below 1 (below 0 for ``MAY_BE_ZERO``), a number that is not finite, negative or 0
    (unless ``MAY_BE_ZERO``), an Adam decay rate of 1 or more, a ``dtype`` that is not a float,
    an ``lr_min`` above ``lr``."""

    def __post_init__(self):
        for f in fields(self):
            check_setting(f.name, getattr(self, f.name), type(f.default))
        lr, lr_min = getattr(self, "lr", None), getattr(self, "lr_min", None)
        if lr is not None and lr_min is not None and lr_min > lr:
            raise BadValueError(f"the setting lr_min ({lr_min}) is above lr ({lr}): the learning rate "
                                f"goes from lr down to lr_min; give an lr_min of at most lr.")

    @classmethod
    def from_dict(cls, values):
        """A config from a dict such as ``config.as_dict()``; unknown names are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise BadValueError(f"unknown setting(s) {', '.join(unknown)} for a training run; "
                                f"the settings are: {', '.join(sorted(known))}.")
        return cls(**values)

    def as_dict(self):
        return asdict(self)


def check_setting(name, value, kind):
    """A BadValueError unless ``value`` is one a run can use for the setting ``name`` of type
    ``kind`` (the type of its default); see ``Settings``."""
    if name == "dtype":
        try:
            floating = np.dtype(value).kind == "f"
        except TypeError:                        # not a dtype at all: "foo"
            floating = False
        if not floating:
            raise BadValueError(f"the setting dtype must name a float dtype (float32 or float64), "
                                f"got {value!r}.")
    elif kind is int:
        least = 0 if name in MAY_BE_ZERO else 1
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise BadValueError(f"the setting {name} must be a whole number >= {least}, got {value!r}.")
    elif kind is float:
        number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0 or (value == 0 and name not in MAY_BE_ZERO) \
                or (name in BELOW_ONE and value >= 1):
            wanted = ("a number in [0, 1)" if name in BELOW_ONE else
                      "a number >= 0" if name in MAY_BE_ZERO else "a number > 0")
            raise BadValueError(f"the setting {name} must be {wanted}, got {value!r}.")


class Run:
    """What a training run of a character model does besides its steps (chapter 09's
    ``Training``, the GPT's): read the text, score held-out characters, write samples. A
    subclass sets ``config`` (with ``eval_chars``), ``model`` and ``rng`` and writes
    ``score(ids)``, the mean loss of predicting ``ids[1:]`` from what precedes them."""

    def read(self, text):
        """The text as ids (``vocab``, ``train_ids``, ``held_out_ids``); iteration 0, no history."""
        self.vocab = texts.Vocabulary(text)
        ids = self.vocab.encode(text)
        self.train_ids = texts.split(ids)[0]
        self.held_out_ids = texts.held_out_ids(ids)
        self.iteration = 0
        self.history = {"train": [], "held_out": []}       # [iteration, loss] pairs

    def held_out_loss(self, chars=None):
        """The loss on the first ``chars`` held-out characters (all of them if None)."""
        return self.score(self.held_out_ids if chars is None else self.held_out_ids[:chars + 1])

    def evaluate(self):
        """Score ``config.eval_chars`` held-out characters and record the loss in the history."""
        loss = self.held_out_loss(self.config.eval_chars)
        self.history["held_out"].append([self.iteration, loss])
        return loss

    def sample(self, prime="\n", length=200, temperature=1.0, top_k=None):
        """Text written by the model now, from the run's own generator."""
        return sample(self.model, self.vocab, prime, length, self.rng, temperature, top_k)


def clip_and_update(run, loss, eps=0.0):
    """The end of a step, once the Parameters' gradients are filled (chapter 09's runs, chapter
    10's translator, and with ``eps=1e-6`` chapter 11's GPT): clip them to a global norm of at
    most ``config.clip`` (``optim.clip_grad_norm``, whose ``eps`` is added to the norm: 0 clips
    exactly to ``clip``, as chapter 07 teaches; PyTorch adds 1e-6), take one step of the
    optimizer, count the iteration and record its training ``loss`` in the history. Returns
    ``loss``."""
    optim.clip_grad_norm(run.model.parameters, run.config.clip, eps=eps)
    run.optimizer.step()
    run.iteration += 1
    run.history["train"].append([run.iteration, loss])
    return loss
