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

from dataclasses import asdict, fields

from .. import optim
from ..errors import BadValueError
from . import text as texts
from .sample import sample


class Settings:
    """What a run's config can do besides holding its values: go to a dict and back (the
    checkpoint's JSON). Mixed into a frozen dataclass (each model's ``Config``)."""

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
