"""The command of a language model trained on Tiny Shakespeare (chapter 09's LSTM, chapter
11's GPT): what it reports at each evaluation, what the bar shows, which model is the best.

    COMMAND = language_model_command(prog, Config, Training, checkpoint, describe, __doc__)
    sys.exit(command.run_command(sys.argv[1:], COMMAND))

Every ``eval_every`` iterations the run scores part of the held-out split and writes the loss
and a sample above the progress bar; the model of the lowest held-out loss so far is the best
(``--best``): early stopping, in case the model starts to learn the training text by heart.
"""

from .. import data
from . import command as commands


def report(run, bar, sample_length):
    """Score the held-out characters, show the loss and a sample above the bar; return the loss."""
    held_out = run.evaluate()
    bar.write(f"iteration {run.iteration}: held-out loss {held_out:.4f} nats/char "
              f"({run.config.eval_chars:,} characters)")
    if sample_length:
        bar.write(run.sample(length=sample_length).strip("\n") + "\n" + "-" * 40)
    return held_out


def lowest_held_out(run):
    """Is the run's last held-out loss the lowest of its history?"""
    losses = [loss for _, loss in run.history["held_out"]]
    return losses[-1] == min(losses)


def loss_and_epoch(run, loss):
    """What the bar shows after a step of a language model: its loss and the epoch."""
    return {"loss": f"{loss:.3f}", "epoch": f"{run.epoch:.2f}"}


def language_model_command(prog, config, make_run, files, describe, description):
    """The ``Command`` of a language model trained on Tiny Shakespeare: ``make_run(config,
    text)``, ``files`` its checkpoint module (``save``, ``load``, ``read``), ``describe(run)``
    the line printed at the start, ``description`` its help (the command module's docstring)."""
    return commands.Command(
        prog, description, config, lambda cfg: make_run(cfg, data.shakespeare()),
        lambda path: files.load(path, data.shakespeare()), files, describe,
        lambda run, bar, args: report(run, bar, args.sample_length), lowest_held_out, loss_and_epoch,
        ("chars", lambda run: run.chars_per_step),
        lambda p: p.add_argument("--sample-length", type=int, default=200,
                                 help="characters per sample (0: none)"))
