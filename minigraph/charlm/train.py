"""Train the character model on Tiny Shakespeare: the command that makes chapter 09's checkpoint.

    python -m minigraph.charlm.train --out run.npz --best shakespeare.npz --hidden 512 --batch 64
    python -m minigraph.charlm.train --out run.npz --best shakespeare.npz --resume   # after a stop

Every ``--eval-every`` iterations it scores part of the held-out split, prints a sample and
saves the checkpoint (also at the end, and on Ctrl-C), so a run stopped at any time loses
little and ``--resume`` continues it: with the checkpoint's settings, to the same numbers as
a run that never stopped. The same settings and seed give the same losses, bit for bit.
``--best`` keeps the model alone (a third of the checkpoint's size: the file to ship) from
the evaluation with the lowest held-out loss.
Score the whole held-out split afterwards with ``python -m minigraph.charlm.evaluate``.
"""

import argparse
import os
import shlex
import subprocess
import sys
from dataclasses import fields

from threadpoolctl import threadpool_limits

from .. import BadValueError, data
from ..progress import Progress
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
    writes a checkpoint (the GPT passes its own). Returns the run.
    """
    cfg = run.config
    until = cfg.iterations if until is None else until
    bar = progress or Progress(until, label="train", rate_unit="chars",
                               rate_per_step=run.chars_per_step, start=run.iteration)
    try:
        while run.iteration < until:
            loss = run.step()
            bar.update(loss=f"{loss:.3f}", epoch=f"{run.epoch:.2f}")
            if run.iteration % cfg.eval_every == 0 or run.iteration == until:
                held_out = report(run, bar, sample_length)
                if out:
                    save(run, out, command, commit)
                if best and held_out == min(loss for _, loss in run.history["held_out"]):
                    save(run, best, command, commit, resumable=False)
    except KeyboardInterrupt:
        if out:
            save(run, out, command, commit)
            bar.write(f"stopped at iteration {run.iteration}; saved to {out} (--resume continues)")
        raise
    finally:
        bar.close()
    return run


def report(run, bar, sample_length):
    """Score the held-out characters, show the loss and a sample above the bar; return the loss."""
    held_out = run.evaluate()
    bar.write(f"iteration {run.iteration}: held-out loss {held_out:.4f} nats/char "
              f"({run.config.eval_chars:,} characters)")
    if sample_length:
        bar.write(run.sample(length=sample_length).strip("\n") + "\n" + "-" * 40)
    return held_out


def git_commit():
    """The commit of the code that runs (with ``+changes`` if the work tree differs), or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+changes" if dirty else "")


def parser(config, prog, description):
    """The command line of a training command (this chapter's, the GPT's, the translator's):
    ``--out``, ``--threads``, then one flag per field of the Config class ``config``
    (``--eval-every`` sets ``eval_every``), None unless given: ``settings`` reads them back."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--out", required=True, help="the file (.npz) to write")
    p.add_argument("--threads", type=int, default=1,
                   help="threads of numpy's matrix products (default 1: faster on a busy machine)")
    for f in fields(config):
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=None,
                       help=f"default {f.default}")
    return p


def settings(args, config):
    """The fields of ``config`` set on the command line (``args``, parsed by ``parser``), by name."""
    return {f.name: getattr(args, f.name) for f in fields(config) if getattr(args, f.name) is not None}


def main(argv=None):
    return training_command(sys.argv[1:] if argv is None else argv, "python -m minigraph.charlm.train",
                   Config, Training, checkpoint,
                   lambda run: f"{run.per_epoch} chunks of {run.config.batch}x{run.config.steps} "
                               f"characters per epoch")


def training_command(argv, prog, config, make_run, files, describe, description=__doc__):
    """Run a training command (this chapter's, the GPT's) on the command line ``argv``.

    ``config`` is the run's Config class (one flag per field), ``make_run(config, text)`` makes
    a run, ``files`` is the module with its checkpoint's ``save``, ``load`` and ``read``, and
    ``describe(run)`` one line printed at the start; the first line of ``description`` is the
    command's help. Returns the exit status (130 on Ctrl-C).
    """
    p = parser(config, prog, description.split("\n")[0])
    p.add_argument("--resume", action="store_true", help="continue the run saved in --out")
    p.add_argument("--best", help="also write the model alone (no optimizer state: a third of the "
                                  "size) to this file whenever its held-out loss is the lowest so far")
    p.add_argument("--sample-length", type=int, default=200, help="characters per sample (0: none)")
    args = p.parse_args(argv)
    given = settings(args, config)
    text = data.shakespeare()
    if args.resume:
        if given:
            raise BadValueError(f"--resume continues with the settings saved in {args.out}; drop "
                                f"--{', --'.join(k.replace('_', '-') for k in given)}.")
        run = files.load(args.out, text)
    else:
        run = make_run(config(**given), text)
    print(f"{run.model!r}\n{run.config}\n{describe(run)}; from iteration {run.iteration}", flush=True)
    command = f"{prog} {shlex.join(argv)}"
    commit = git_commit()                       # before this run writes any file of the tree
    if args.resume:                             # the record keeps the command that started it
        started = files.read(args.out)[0]
        command, commit = f"{started['command']}; then {command}", f"{started['commit']}; then {commit}"
    try:
        with threadpool_limits(args.threads, user_api="blas"):
            train(run, out=args.out, command=command, sample_length=args.sample_length, best=args.best,
                  commit=commit, save=files.save)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
