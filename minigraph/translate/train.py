"""Train the translator on the dates task: the command that makes chapter 10's model.

    python -m minigraph.translate.train --out build/dates/run.npz --best build/dates/best.npz
    python -m minigraph.translate.train --out build/dates/run.npz --resume             # after a stop
    python -m minigraph.translate.train --out tiny.npz --iterations 20 --examples 200 --hidden 8

A progress bar shows the loss and the time left. Every ``--eval-every`` iterations (and at the
end) it scores ``--eval-examples`` held-out examples (exact match of the greedy translation),
prints the accuracy and a few translations, and saves the run to ``--out`` with its config,
history, this command line, the git commit of the code, the wall clock and the machine;
``--best`` keeps the model alone (the file to ship) of the highest accuracy so far. Ctrl-C stops
at the end of a step, saved, and ``--resume`` continues to the same numbers as a run never
stopped (``minigraph.training.command``). The same settings give the same file's numbers, bit
for bit. Score a saved model with ``python -m minigraph.translate.evaluate``.
"""

import sys

from ..training import command as commands
from . import training
from .training import Config, Training


def train(run, out=None, command=None, commit=None, progress=None, show=3, best=None):
    """Step ``run`` to the config's ``iterations``, evaluating and saving to ``out`` (if given)
    every ``eval_every`` iterations and at the end, the model alone to ``best`` (if given) when
    its accuracy is the highest so far; ``show`` held-out translations are printed at each
    evaluation. A Ctrl-C stops the run at the end of its step, saved to ``out``. Returns the run."""
    commands.train(run, lambda run, bar: report(run, bar, show), highest_accuracy, out=out,
                   best=best, save=training.save, command=command, commit=commit, progress=progress)
    return run


def report(run, bar, show):
    """Score ``eval_examples`` held-out examples; write the accuracy and ``show`` translations."""
    accuracy = run.evaluate()
    bar.write(f"iteration {run.iteration}: exact match {accuracy:.1%} on "
              f"{run.config.eval_examples} held-out examples")
    sources = [source for source, _ in run.task.held_out[:show]]
    for source, output in zip(sources, run.model.translate(sources)[0]):
        bar.write(f"    {source!r} -> {output!r}")
    return accuracy


def highest_accuracy(run):
    """Is the run's last held-out accuracy the highest of its history?"""
    scores = [accuracy for _, accuracy in run.history["held_out"]]
    return scores[-1] == max(scores)


COMMAND = commands.Command(
    training.COMMAND, __doc__, Config, Training, training.load, training, lambda run: repr(run.task),
    lambda run, bar, args: report(run, bar, 3), highest_accuracy,
    lambda run, loss: {"loss": f"{loss:.3f}"}, ("examples", lambda run: run.config.batch))


def main(argv=None):
    return commands.run_command(sys.argv[1:] if argv is None else argv, COMMAND)


if __name__ == "__main__":
    sys.exit(main())
