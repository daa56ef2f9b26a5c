"""The loop and the command line that the three training commands share, made so that no run
is ever lost.

    python -m minigraph.charlm.train --out build/lstm/run.npz --best build/lstm/best.npz
    python -m minigraph.charlm.train --out build/lstm/run.npz --resume        # after a stop

What each promise rests on:

- **A stop is always between two steps.** Ctrl-C (SIGINT) only sets a flag (``Stop``); the
  step under way finishes (its backward, its clipping, every Parameter's optimizer update),
  so does the evaluation or the write under way, and then the run is saved and the command
  exits with status 130. ``--resume`` continues to the numbers, bit for bit, of a run that
  never stopped. (A second Ctrl-C is the same request: nothing is cut in half.)
- **A write never loses the last good file** (``files.write``: a temporary file renamed over
  the old one), and a full disk is an error that says so and names the intact file.
- **The files are checked before the first step:** the folder of ``--out`` is made (or the
  command stops, having trained nothing); an existing ``--out`` is refused unless
  ``--resume`` continues it or ``--force`` says to start over; ``--best`` never replaces a
  shipped model (``minigraph/checkpoints/``) or another run's unless ``--force`` says so.
- **The record:** every file holds the command, the commit, the wall-clock time of training
  and the machine (cores, BLAS threads); ``evaluate`` shows them. In a log (no terminal) the
  progress bar writes one line per update instead of rewriting one line.

**The engine.** ``--engine compiled`` (the default) computes each step's gradients with the
compiled step (``mg.function``), ``--engine interpreter`` with ``Graph.backward``: the same
numbers, bit for bit (``minigraph.training.step``), so a run may be resumed with either.

A command is described by a ``Command`` (its name, config, how to make, save and load a run,
how to report an evaluation); ``run_command`` does the rest.
"""

import argparse
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, fields
from typing import Callable

from threadpoolctl import threadpool_limits

from ..errors import BadValueError, CheckpointError, GraphError
from ..progress import Progress
from . import files
from .step import ENGINES

SHIPPED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "checkpoints")


class Stop:
    """A Ctrl-C that asks the loop to stop at the next step's end, instead of interrupting it.

    ``with Stop() as stop:`` replaces the SIGINT handler (in the main thread; elsewhere signals
    do not arrive and nothing changes) by one that sets ``stop.requested``; the old handler
    comes back at the end of the block.
    """

    def __init__(self):
        self.requested, self._previous = False, None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._request)
        return self

    def _request(self, signum, frame):
        self.requested = True

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def train(run, report, is_best, until=None, out=None, best=None, save=None, command=None,
          commit=None, progress=None, fields=lambda run, loss: {"loss": f"{loss:.3f}"}):
    """Step ``run`` to iteration ``until`` (the config's ``iterations`` if None); returns True if
    a Ctrl-C stopped it before ``until``.

    Every ``eval_every`` iterations and at the end, ``report(run, bar)`` evaluates (and writes
    what it finds above the bar), ``save(run, out, command, commit)`` writes the run to ``out``
    (if given), and when ``is_best(run)``, ``save(..., resumable=False)`` writes the model alone
    to ``best`` (if given). After a Ctrl-C the run is saved to ``out`` at the end of its step.
    ``progress`` is the bar (``Progress``); ``fields(run, loss)`` what it shows after each step.
    """
    cfg = run.config
    until = cfg.iterations if until is None else until
    bar = progress or Progress(until, label="train", start=run.iteration)
    began, start, saved_at = getattr(run, "wall_clock", 0.0) or 0.0, time.monotonic(), None

    def write(path, resumable=True):
        run.wall_clock = began + time.monotonic() - start
        save(run, path, command, commit, resumable=resumable)

    with Stop() as stop:
        try:
            while run.iteration < until and not stop.requested:
                loss = run.step()
                bar.update(**fields(run, loss))
                if run.iteration % cfg.eval_every == 0 or run.iteration == until:
                    report(run, bar)
                    if out:
                        write(out)
                        saved_at = run.iteration
                    if best and is_best(run):
                        write(best, resumable=False)
            stopped = stop.requested and run.iteration < until
            if stopped and out and saved_at != run.iteration:
                write(out)
            if stopped:
                bar.write(f"stopped at iteration {run.iteration}" + (
                    f"; saved to {out} (--resume continues)" if out else " (Ctrl-C)"))
        finally:
            bar.close()
    return stopped


@dataclass
class Command:
    """What one training command is: ``prog`` (its command line), ``description`` (its help,
    first line), ``config`` (the Config class: one flag per field), ``make_run(config)``,
    ``load(path)`` (the run saved at ``path``, to continue), ``files`` (a module with
    ``save(run, path, command, commit, resumable)`` and ``read(path)``), ``describe(run)`` (a
    line printed at the start), ``report(run, bar, args)`` (an evaluation, written above the
    bar), ``is_best(run)`` (was the last evaluation the best so far?), ``fields(run, loss)``
    (what the bar shows), ``rate`` (``(unit, per_step(run))`` for the bar's speed) and
    ``arguments(parser)`` (flags of its own)."""
    prog: str
    description: str
    config: type
    make_run: Callable
    load: Callable
    files: object
    describe: Callable
    report: Callable
    is_best: Callable
    fields: Callable
    rate: tuple
    arguments: Callable = lambda parser: None


def run_command(argv, spec):
    """Run the training command ``spec`` (a ``Command``) on the command line ``argv``. Returns the
    exit status: 0 done, 130 stopped by Ctrl-C (saved; ``--resume`` continues), 1 a file that
    could not be written (the message says which, and that the last good one is intact), 2 a
    command refused before training (a setting no run can use, a file that is not this run's):
    as for argparse's own refusals, one line ``prog: error: ...`` on stderr, no traceback."""
    p = parser(spec.config, spec.prog, spec.description.split("\n")[0])
    p.add_argument("--resume", action="store_true", help="continue the run saved in --out")
    p.add_argument("--best", help="also write the model alone (no optimizer state) to this file "
                                  "whenever its held-out score is the best so far")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out (starting over) or --best (even a shipped model)")
    p.add_argument("--engine", choices=ENGINES, default=ENGINES[0],
                   help="what computes each step's gradients: the compiled step (mg.function, the "
                        "default) or the interpreter (Graph.backward); the same numbers either way")
    spec.arguments(p)
    args = p.parse_args(argv)
    try:
        run, command, commit = start(args, spec, argv)
    except GraphError as error:
        return refuse(spec.prog, error)
    unit, per_step = spec.rate
    bar = Progress(run.config.iterations, label="train", rate_unit=unit, rate_per_step=per_step(run),
                   start=run.iteration)
    try:
        with threadpool_limits(args.threads, user_api="blas"):
            stopped = train(run, lambda run, bar: spec.report(run, bar, args), spec.is_best,
                            out=args.out, best=args.best, save=spec.files.save, command=command,
                            commit=commit, progress=bar, fields=spec.fields)
    except CheckpointError as error:
        print(f"{spec.prog}: error: {error}", file=sys.stderr)
        return 1
    return 130 if stopped else 0


def start(args, spec, argv):
    """Everything before the first step: the run (new, or loaded to ``--resume``), its files
    checked, leftovers of killed writes removed; returns ``(run, command, commit)`` for the
    record. A refusal is a minigraph error, raised before anything is trained or written."""
    given = settings(args, spec.config)
    if args.resume:
        if given:
            raise BadValueError(f"--resume continues with the settings saved in {args.out}; drop "
                                f"--{', --'.join(k.replace('_', '-') for k in given)}.")
        run = spec.load(args.out)
    else:
        check_new_out(args.out, args.force, spec.prog)
        run = spec.make_run(spec.config(**given))
        run.run_id = uuid.uuid4().hex
    prepare_folder(args.out)
    if args.best:
        check_best(args.best, run, args.force, spec.files)
        prepare_folder(args.best)
    run.machine = {"cores": os.cpu_count(), "blas_threads": args.threads}
    run.engine = args.engine
    print(f"{run.model!r}\n{run.config}\n{spec.describe(run)}; from iteration {run.iteration}", flush=True)
    command = f"{spec.prog} {shlex.join(argv)}"
    commit = git_commit()                       # before this run writes any file of the tree
    if args.resume:                             # the record keeps the command that started it
        started = spec.files.read(args.out)[0]
        command, commit = f"{started['command']}; then {command}", f"{started['commit']}; then {commit}"
    for path in filter(None, (args.out, args.best)):
        for leftover in files.remove_leftovers(path):
            print(f"removed {leftover}: the temporary file of a write of {path} that was killed "
                  f"before it finished (the file it was replacing stayed whole)", flush=True)
    return run, command, commit


def check_new_out(out, force, prog):
    """Before a new run: a CheckpointError if ``out`` exists (another run's file), unless ``force``."""
    if os.path.exists(out) and not force:
        raise CheckpointError(f"{out} exists already: continue its run with {prog} --out {out} "
                              f"--resume, give another --out, or add --force to start over and "
                              f"replace it.")


def prepare_folder(path):
    """Make the folder of ``path`` (and its parents) before training, or a CheckpointError that
    says why it cannot be written there."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as error:
        raise CheckpointError(f"cannot make the folder {folder} for {path}: {error.strerror}. "
                              f"Nothing was trained; choose another path.") from None
    if not os.access(folder, os.W_OK):
        raise CheckpointError(f"cannot write in the folder {folder} (for {path}): no permission. "
                              f"Nothing was trained; choose another path.")


def check_best(best, run, force, checkpoints):
    """Before training: a CheckpointError if ``best`` is a shipped model or holds another run's
    model (which may be better than anything this run will reach), unless ``force``."""
    if force:
        return
    if os.path.dirname(os.path.abspath(best)) == SHIPPED:
        raise CheckpointError(f"--best {best} is a model shipped with minigraph (its notebooks "
                              f"compare their outputs with it): write your run's best model "
                              f"elsewhere, e.g. --best build/best.npz, or add --force to replace it.")
    if os.path.exists(best):
        try:
            meta = checkpoints.read(best)[0]
        except CheckpointError as error:
            raise CheckpointError(f"--best {best} exists and is not this run's model ({error}); "
                                  f"give another --best, or add --force to replace it.") from None
        if meta.get("run") is None or meta.get("run") != getattr(run, "run_id", None):
            scores = meta["history"]["held_out"]
            raise CheckpointError(
                f"--best {best} holds another run's model (iteration {meta['iteration']}, held-out "
                f"{scores[-1][1] if scores else 'not scored'}), which may be better than this "
                f"run's: give another --best, or add --force to replace it.")


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
    """The command line of a training command: ``--out``, ``--threads``, then one flag per field
    of the Config class ``config`` (``--eval-every`` sets ``eval_every``), None unless given:
    ``settings`` reads them back."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--out", required=True, help="the file (.npz) to write; its folder is made")
    p.add_argument("--threads", type=at_least_one, default=1,
                   help="threads of numpy's matrix products (default 1: faster on a busy machine)")
    for f in fields(config):
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=None,
                       help=f"default {f.default}")
    return p


def refuse(prog, error):
    """A command refused by a minigraph error (each says what is wrong and what to do), as
    argparse refuses a bad flag: one line ``prog: error: ...`` on stderr, no traceback; returns
    the exit status, 2."""
    print(f"{prog}: error: {error}", file=sys.stderr)
    return 2


def at_least_one(text):
    """argparse's type of a count given on the command line (``--threads``): a whole number >= 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return n


def settings(args, config):
    """The fields of ``config`` set on the command line (``args``, parsed by ``parser``), by name."""
    return {f.name: getattr(args, f.name) for f in fields(config) if getattr(args, f.name) is not None}
