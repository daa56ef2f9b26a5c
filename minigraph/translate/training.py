"""A training run of the translator, and the file a trained model is shipped in.

    run = Training(Config())
    while run.iteration < run.config.iterations:
        loss = run.step()
    save(run, "dates.npz", command="...", commit="...")
    model, meta = load_model("dates.npz")

One step reads ``batch`` training examples (the examples shuffled once per epoch), runs the
teacher-forced graph forward and backward (``wrt=`` the Parameters; by the compiled step,
``mg.function``, or with ``run.engine = "interpreter"`` by ``Graph.backward``: the same
numbers, bit for bit, ``minigraph.training.step``), clips the gradients to a
global norm of ``clip`` and takes one Adam step at the learning rate of a cosine schedule from
``lr`` to ``lr_min``. The config and its seed decide everything: the same config gives the
same losses, bit for bit.

The file is an ``.npz`` of numpy arrays only (``np.load(path, allow_pickle=False)`` reads it):
``param/<name>`` for each Parameter and ``meta.json``, one string of JSON: the format, the
config, the iteration, the history of losses and exact-match accuracies, the command line, the
git commit, the wall clock and the machine, and a checksum. A resumable file (``--out``) also
holds Adam's moments (``adam/m/<name>``, ``adam/s/<name>``), the examples left in this epoch's
order (``order``) and the state of the generator that shuffles them, so ``load`` continues the
run to the numbers of one never stopped; the model alone (``--best``, the shipped file) does
not. It is written and read by ``minigraph.training.files``, in this format of its own.
"""

from dataclasses import dataclass

import numpy as np

from .. import optim
from ..training import files
from ..training.run import Settings, clip_and_update
from ..training.step import Gradients
from . import data
from .model import Translator

FORMAT = "minigraph.translate/2"
KIND, COMMAND = "translator", "python -m minigraph.translate.train"


@dataclass(frozen=True)
class Config(Settings):
    """The choices that define a run: the task (``examples`` training examples from ``seed``),
    the model's sizes, the optimizer, and how often ``eval_examples`` held-out examples are
    scored (exact match) while it trains."""
    examples: int = 20_000
    embedding: int = 16
    hidden: int = 32
    decoder: int = 64
    attention: int = 32
    batch: int = 64
    iterations: int = 2000
    lr: float = 3e-3
    lr_min: float = 1e-4
    clip: float = 5.0
    seed: int = 0
    eval_every: int = 250
    eval_examples: int = 500
    dtype: str = "float32"

    def model(self):
        """A new, untrained ``Translator`` of this config's sizes (initialised from its seed)."""
        return Translator(embedding=self.embedding, hidden=self.hidden, decoder=self.decoder,
                          attention=self.attention, rng=self.seed, dtype=np.dtype(self.dtype))


class Training:
    """A model, its optimizer and the position in the data: one run, one step at a time.
    ``engine`` ("compiled" or "interpreter") computes the steps' gradients."""

    engine = "compiled"

    def __init__(self, config):
        self.config = config
        self.task = data.dates(config.examples, config.eval_examples, seed=config.seed)
        sources, targets = zip(*self.task.train)
        self.source_ids, _ = data.encode_sources(sources)
        self.target_ids = data.encode_targets(targets)
        self.model = config.model()
        self.gradients = Gradients(self.model.teacher_forced().graph, self.model.parameters)
        self.adam = optim.Adam(self.model.parameters, lr=config.lr)
        self.optimizer = optim.Scheduled(self.adam, lambda t: optim.cosine_decay(
            t, config.iterations, config.lr, config.lr_min))
        self.rng = np.random.default_rng(config.seed + 1)         # the order of the examples
        self.order = np.arange(0)
        self.iteration = 0
        self.history = {"train": [], "held_out": []}       # [iteration, loss] and [iteration, accuracy]

    def step(self):
        """One iteration on the next batch; returns its training loss (nats per character)."""
        cfg, net = self.config, self.model.teacher_forced()
        if len(self.order) < cfg.batch:                     # a new epoch: a new order
            self.order = self.rng.permutation(len(self.source_ids))
        rows, self.order = self.order[:cfg.batch], self.order[cfg.batch:]
        loss, _ = self.gradients(net.feed(self.source_ids[rows], self.target_ids[rows]), self.engine)
        return clip_and_update(self, loss)

    def evaluate(self):
        """Exact match on ``eval_examples`` held-out examples, recorded in the history."""
        sources, targets = zip(*self.task.held_out[:self.config.eval_examples])
        accuracy = exact_match(self.model.translate(list(sources))[0], targets)
        self.history["held_out"].append([self.iteration, accuracy])
        return accuracy


def exact_match(translations, targets):
    """The fraction of the translations equal to their target, every character of it."""
    return float(np.mean([out == target for out, target in zip(translations, targets, strict=True)]))


def save(run, path, command=None, commit=None, resumable=True):
    """Write ``run`` to ``path`` (``command`` and ``commit`` as given); ``resumable=False`` writes
    the model and its record alone (the file to ship)."""
    arrays, meta = files.record(run, FORMAT, command, commit, resumable)
    if resumable:
        arrays["order"] = run.order
        meta["rng"] = run.rng.bit_generator.state
    files.write(path, arrays, meta)


def read(path):
    """``(meta, arrays)`` of a translator's file (``files.read`` checks it)."""
    return files.read(path, FORMAT, KIND, COMMAND)


def load(path):
    """The run saved (resumable) at ``path``, ready to continue."""
    meta, arrays = read(path)
    files.check_resumable(meta, path)
    run = Training(Config.from_dict(meta["config"]))
    files.restore(run, meta, arrays)
    run.order, run.rng.bit_generator.state = arrays["order"], meta["rng"]
    return run


def load_model(path):
    """``(model, meta)``: the trained ``Translator`` saved at ``path`` and its record."""
    meta, arrays = read(path)
    model = Config.from_dict(meta["config"]).model()
    files.set_parameters(model, arrays)
    return model, meta
