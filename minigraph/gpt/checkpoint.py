"""Save a GPT training run to one ``.npz`` file and load it back, bit for bit, without pickle.

The file is every training run's (``minigraph.training.files``: written atomically, checked
when read), with this format's name and the GPT's own state:

    param/wte, param/h0.attn.W_qkv, ...    the model's Parameters, in their dtype
    adam/m/wte, adam/s/wte, ...            AdamW's running moments of each Parameter
    meta.json                              the vocabulary, the config, the iteration, the
                                           history, the step counts, the states of the two
                                           random generators (windows, samples), the command
                                           line and the git commit that produced it, the
                                           wall clock, the machine, a checksum

``load`` rebuilds the run from the config and puts every saved number back, so training
continues exactly where it stopped; ``load_model`` reads the model alone.
"""

import numpy as np

from ..training import files
from ..training.text import Vocabulary, check_vocabulary
from .model import GPT
from .training import Config, Training

FORMAT = "minigraph.gpt/2"
KIND, COMMAND = "GPT", "python -m minigraph.gpt.train"


def save(run, path, command=None, commit=None, resumable=True):
    """Write ``run`` (a ``Training``) to ``path``; ``command`` and ``commit`` are recorded as given.
    ``resumable=False`` writes the model alone (no optimizer state, no generators)."""
    arrays, meta = files.record(run, FORMAT, command, commit, resumable, vocabulary=run.vocab.chars)
    if resumable:
        meta.update(batches=run.batches.bit_generator.state, rng=run.rng.bit_generator.state)
    files.write(path, arrays, meta)


def read(path):
    """``(meta, arrays)`` of a GPT checkpoint file."""
    return files.read(path, FORMAT, KIND, COMMAND)


def load_model(path):
    """``(model, vocabulary, meta)`` from a checkpoint: the trained model alone."""
    meta, arrays = read(path)
    cfg = Config.from_dict(meta["config"])
    model = GPT(len(meta["vocabulary"]), cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.block_size,
                dtype=np.dtype(cfg.dtype))
    files.set_parameters(model, arrays)
    return model, Vocabulary(meta["vocabulary"]), meta


def load(path, text):
    """The run saved at ``path``, ready to continue on ``text`` (the text it was trained on)."""
    meta, arrays = read(path)
    files.check_resumable(meta, path)
    check_vocabulary(meta, Vocabulary(text), path)
    run = Training(Config.from_dict(meta["config"]), text)
    files.restore(run, meta, arrays)
    run.batches.bit_generator.state, run.rng.bit_generator.state = meta["batches"], meta["rng"]
    return run
