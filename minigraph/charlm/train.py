"""Train the character model on Tiny Shakespeare: the command that makes chapter 09's checkpoint.

    python -m minigraph.charlm.train --out build/lstm/run.npz --best build/lstm/best.npz --hidden 512
    python -m minigraph.charlm.train --out build/lstm/run.npz --best build/lstm/best.npz --resume

(the second line after a stop). Every ``--eval-every`` iterations it scores part of the
held-out split, prints a sample and saves the checkpoint (also at the end), so a run stopped
at any time loses little. Ctrl-C
stops it at the end of the step under way, saved: ``--resume`` continues it, with the
checkpoint's settings, to the same numbers, bit for bit, as a run that never stopped. The same
settings and seed give the same losses, bit for bit. ``--best`` keeps the model alone (a third
of the checkpoint's size: the file to ship) from the evaluation with the lowest held-out loss;
it never replaces a shipped model or another run's unless ``--force`` says so
(``minigraph.training.command`` says what else keeps a run safe; the language model's
command, shared with chapter 11's GPT, is ``minigraph.training.language_model``).
Score the whole held-out split afterwards with ``python -m minigraph.charlm.evaluate``.
"""

import sys

from ..training import command as commands
from ..training.language_model import (language_model_command, lowest_held_out, loss_and_epoch,
                                       report)
from . import checkpoint
from .training import Config, Training


def train(run, until=None, out=None, progress=None, command=None, sample_length=200, best=None,
          commit=None, save=checkpoint.save):
    """Step ``run`` to iteration ``until`` (the config's ``iterations`` if None).

    Every ``eval_every`` iterations (and at the end): score the held-out characters, write the
    loss and a sample above the bar, and save to ``out`` (if given); when that held-out loss is
    the lowest so far, also save the model alone to ``best`` (if given): early stopping, in
    case the model starts to learn the training text by heart. ``command`` and ``commit`` (the
    code that runs, read once when the run starts) go into every file saved. ``progress`` is a
    ``Progress`` (one is made if None). ``save(run, path, command, commit, resumable=True)``
    writes a checkpoint (the GPT passes its own). A Ctrl-C stops the run at the end of its
    step, saved to ``out``. Returns the run.
    """
    commands.train(run, lambda run, bar: report(run, bar, sample_length), lowest_held_out,
                   until=until, out=out, best=best, save=save, command=command, commit=commit,
                   progress=progress, fields=loss_and_epoch)
    return run


COMMAND = language_model_command(
    checkpoint.COMMAND, Config, Training, checkpoint,
    lambda run: f"{run.per_epoch} chunks of {run.config.batch}x{run.config.steps} characters per epoch",
    __doc__)


def main(argv=None):
    return commands.run_command(sys.argv[1:] if argv is None else argv, COMMAND)


if __name__ == "__main__":
    sys.exit(main())
