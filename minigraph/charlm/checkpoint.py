"""Save a training run of the character model to one ``.npz`` file and load it back, bit for
bit, without pickle.

The file holds numpy arrays only (``np.load(path, allow_pickle=False)`` reads it):

    param/L1.W_x, param/L1.W_h, ...        the model's Parameters, in their dtype
    adam/m/L1.W_x, adam/s/L1.W_x, ...      Adam's running moments of each Parameter
    state/0, state/1, ...                  the h and c carried into the next chunk
    meta.json                              one string of JSON: everything else

and ``meta.json`` says what the run is and how it was made: the vocabulary, the config, the
iteration, the training and held-out losses (history), Adam's and the schedule's step count,
the state of the samples' random generator, the command line and the git commit that
produced it, the wall-clock time and the machine, and a checksum of all of it. ``load``
rebuilds the run from the config (the same text gives the same streams), then puts every
saved number back, so training continues exactly where it stopped.

Writing (atomically), reading (checked) and the parts every run's file shares are
``minigraph.training.files``; this module adds the character model's own state.
"""

import numpy as np

from ..training import files
from ..training.text import Vocabulary, check_vocabulary
from .model import CharLSTM
from .training import Config, Training

FORMAT = "minigraph.charlm/2"
KIND, COMMAND = "character-model", "python -m minigraph.charlm.train"


def save(run, path, command=None, commit=None, resumable=True):
    """Write ``run`` (a ``Training``) to ``path``; ``command`` and ``commit`` are recorded as given.

    ``resumable=False`` writes the model alone (its Parameters and the record, not Adam's
    moments, the carried state or the generator): a third of the size, for shipping a model
    to sample from and to score (``train --best`` writes one); ``load_model`` reads it,
    ``load`` cannot continue it.
    """
    arrays, meta = files.record(run, FORMAT, command, commit, resumable, vocabulary=run.vocab.chars)
    if resumable:
        arrays.update({f"state/{k}": value for k, value in enumerate(run.state)})
        meta["rng"] = run.rng.bit_generator.state
    files.write(path, arrays, meta)


def read(path):
    """``(meta, arrays)`` of a character-model checkpoint file (``files.read`` checks it)."""
    return files.read(path, FORMAT, KIND, COMMAND)


def load_model(path):
    """``(model, vocabulary, meta)`` from a checkpoint: the trained model alone, to sample from
    or to score a text, without the training split or the optimizer."""
    meta, arrays = read(path)
    config = Config.from_dict(meta["config"])
    model = CharLSTM(len(meta["vocabulary"]), config.hidden, config.layers,
                     dtype=np.dtype(config.dtype))
    files.set_parameters(model, arrays)
    return model, Vocabulary(meta["vocabulary"]), meta


def load(path, text):
    """The run saved at ``path``, ready to continue on ``text`` (the text it was trained on)."""
    meta, arrays = read(path)
    files.check_resumable(meta, path)
    check_vocabulary(meta, Vocabulary(text), path)
    run = Training(Config.from_dict(meta["config"]), text)
    files.restore(run, meta, arrays)
    run.state = [arrays[f"state/{k}"] for k in range(len(run.state))]
    run.rng.bit_generator.state = meta["rng"]
    return run
