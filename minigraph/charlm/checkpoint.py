"""Save a training run to one ``.npz`` file and load it back, bit for bit, without pickle.

The file holds numpy arrays only (``np.load(path, allow_pickle=False)`` reads it):

    param/L1.W_x, param/L1.W_h, ...        the model's Parameters, in their dtype
    adam/m/L1.W_x, adam/s/L1.W_x, ...      Adam's running moments of each Parameter
    state/0, state/1, ...                  the h and c carried into the next chunk
    meta.json                              one string of JSON: everything else

and ``meta.json`` says what the run is and how it was made: the vocabulary, the config, the
iteration, the training and held-out losses (history), Adam's and the schedule's step count,
the state of the samples' random generator, the command line and the git commit that
produced it. ``load`` rebuilds the run from the config (the same text gives the same
streams), then puts every saved number back, so training continues exactly where it stopped.

The pieces every run's file shares (``record``, ``write``, ``read``, ``restore``,
``parameters``, ``set_parameters``) are public: chapter 11's GPT (``minigraph.gpt.checkpoint``)
writes its runs with them, and chapter 10's translator (``minigraph.translate.training``) its
model, each in its own format.
"""

import json

import numpy as np

from .. import BadValueError
from .text import Vocabulary
from .model import CharLSTM
from .training import Config, Training

FORMAT = "minigraph.charlm/1"


def save(run, path, command=None, commit=None, resumable=True):
    """Write ``run`` (a ``Training``) to ``path``; ``command`` and ``commit`` are recorded as given.

    ``resumable=False`` writes the model alone (its Parameters and the record, not Adam's
    moments, the carried state or the generator): a third of the size, for shipping a model
    to sample from and to score (``train --best`` writes one); ``load_model`` reads it,
    ``load`` cannot continue it.
    """
    arrays, meta = record(run, FORMAT, command, commit, resumable)
    if resumable:
        arrays.update({f"state/{k}": value for k, value in enumerate(run.state)})
        meta["rng"] = run.rng.bit_generator.state
    write(path, arrays, meta)


def record(run, format, command, commit, resumable):
    """``(arrays, meta)`` that the checkpoint of any run holds (this chapter's, the GPT's): the
    Parameters and the record (format, vocabulary, config, iteration, history, command,
    commit); if ``resumable``, also the optimizer's moments and step counts. A run has
    ``model.parameters``, ``vocab``, ``config``, ``iteration``, ``history`` and ``optimizer``
    (an ``optim.Scheduled`` Adam)."""
    params, adam = run.model.parameters, run.optimizer.optimizer
    arrays = parameters(run.model)
    meta = {"format": format, "vocabulary": run.vocab.chars, "config": run.config.as_dict(),
            "iteration": run.iteration, "history": run.history, "command": command,
            "commit": commit, "resumable": resumable}
    if resumable:
        for p in params:
            moments = adam.state[p]
            arrays.update({f"adam/{key}/{p.name}": moments[key] for key in ("m", "s") if key in moments})
        meta.update(adam_steps={p.name: adam.state[p].get("t", 0) for p in params},
                    schedule_step=run.optimizer.t)
    return arrays, meta


def write(path, arrays, meta):
    """Write the arrays and ``meta`` (as the string ``meta.json``) to one ``.npz`` file."""
    arrays = {**arrays, "meta.json": np.array(json.dumps(meta))}
    with open(path, "wb") as file:
        np.savez(file, **arrays)


def read(path, format=FORMAT, kind="character-model", command="python -m minigraph.charlm.train"):
    """``(meta, arrays)`` of a checkpoint file: its JSON as a dict, and its arrays by name. A
    file of another ``format`` is an error: not a ``kind`` checkpoint, make it with ``command``."""
    with np.load(path, allow_pickle=False) as saved:
        arrays = {key: saved[key] for key in saved.files}
    meta = json.loads(str(arrays.pop("meta.json")))
    if meta.get("format") != format:
        raise BadValueError(f"{path} is not a {kind} checkpoint of this version (format "
                            f"{meta.get('format')!r}, expected {format!r}): make it again with "
                            f"{command}.")
    return meta, arrays


def load_model(path):
    """``(model, vocabulary, meta)`` from a checkpoint: the trained model alone, to sample from
    or to score a text, without the training split or the optimizer."""
    meta, arrays = read(path)
    config = Config.from_dict(meta["config"])
    model = CharLSTM(len(meta["vocabulary"]), config.hidden, config.layers,
                     dtype=np.dtype(config.dtype))
    set_parameters(model, arrays)
    return model, Vocabulary(meta["vocabulary"]), meta


def load(path, text):
    """The run saved at ``path``, ready to continue on ``text`` (the text it was trained on)."""
    meta, arrays = read(path)
    check_resumable(meta, path)
    check_vocabulary(meta, Vocabulary(text), path)
    run = Training(Config.from_dict(meta["config"]), text)
    restore(run, meta, arrays)
    run.state = [arrays[f"state/{k}"] for k in range(len(run.state))]
    run.rng.bit_generator.state = meta["rng"]
    return run


def restore(run, meta, arrays):
    """Put back into ``run`` (made from the saved config) what ``record`` saved."""
    set_parameters(run.model, arrays)
    adam = run.optimizer.optimizer
    for p in run.model.parameters:
        moments = {key: arrays[f"adam/{key}/{p.name}"] for key in ("m", "s")
                   if f"adam/{key}/{p.name}" in arrays}
        if meta["adam_steps"][p.name]:
            moments["t"] = meta["adam_steps"][p.name]
        adam.state[p].update(moments)         # beside what the optimizer set itself (AdamW: decays)
    run.optimizer.t, run.iteration, run.history = meta["schedule_step"], meta["iteration"], meta["history"]


def check_resumable(meta, path):
    """A BadValueError unless the checkpoint holds a whole run (not the model alone)."""
    if not meta["resumable"]:
        raise BadValueError(f"{path} holds a model alone (saved with resumable=False: no optimizer "
                            f"state), so training cannot continue from it. Sample from it or score "
                            f"it with load_model; resume from the run's own checkpoint (--out).")


def parameters(model):
    """The values of the model's Parameters by name (``param/<name>``): what ``set_parameters``
    puts back."""
    return {f"param/{p.name}": p.value for p in model.parameters}


def set_parameters(model, arrays):
    """Give each of the model's Parameters its saved value."""
    for p in model.parameters:
        p.value = arrays[f"param/{p.name}"]


def check_vocabulary(meta, vocab, path):
    """A BadValueError unless ``vocab`` is the vocabulary the checkpoint was trained with."""
    if vocab.chars != meta["vocabulary"]:
        raise BadValueError(
            f"{path} was trained on a text of {len(meta['vocabulary'])} distinct characters "
            f"({meta['vocabulary']!r}); this text has {len(vocab)} ({vocab.chars!r}). A model reads "
            f"only its own vocabulary: use it with the text it was trained on, or train a new one.")
