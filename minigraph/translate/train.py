"""Train the translator on the dates task: the command that makes chapter 10's model.

    python -m minigraph.translate.train --out dates.npz
    python -m minigraph.translate.train --out tiny.npz --iterations 20 --examples 200 --hidden 8

A progress bar shows the loss and the time left. Every ``--eval-every`` iterations (and at the
end) it scores ``--eval-examples`` held-out examples (exact match of the greedy translation),
prints the accuracy and a few translations, and saves the model to ``--out`` with its config,
history, this command line and the git commit of the code. The same settings give the same
file's numbers, bit for bit. Score a saved model with ``python -m minigraph.translate.evaluate``.
"""

import shlex
import sys

from threadpoolctl import threadpool_limits

from ..charlm.train import git_commit, parser, settings
from ..progress import Progress
from .training import Config, Training, save

PROG = "python -m minigraph.translate.train"


def train(run, out=None, command=None, commit=None, progress=None, show=3):
    """Step ``run`` to the config's ``iterations``, evaluating and saving to ``out`` (if given)
    every ``eval_every`` iterations and at the end; ``show`` held-out translations are printed
    at each evaluation. Returns the run."""
    cfg = run.config
    bar = progress or Progress(cfg.iterations, label="train", rate_unit="examples",
                               rate_per_step=cfg.batch, start=run.iteration)
    try:
        while run.iteration < cfg.iterations:
            loss = run.step()
            bar.update(loss=f"{loss:.3f}")
            if run.iteration % cfg.eval_every == 0 or run.iteration == cfg.iterations:
                accuracy = run.evaluate()
                bar.write(f"iteration {run.iteration}: exact match {accuracy:.1%} on "
                          f"{cfg.eval_examples} held-out examples")
                sources = [source for source, _ in run.task.held_out[:show]]
                for source, output in zip(sources, run.model.translate(sources)[0]):
                    bar.write(f"    {source!r} -> {output!r}")
                if out:
                    save(run, out, command, commit)
    finally:
        bar.close()
    return run


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parser(Config, PROG, __doc__.split("\n")[0]).parse_args(argv)
    run = Training(Config(**settings(args, Config)))
    print(f"{run.model!r}\n{run.config}\n{run.task!r}", flush=True)
    command = f"{PROG} {shlex.join(argv)}"
    commit = git_commit()                       # before this run writes any file of the tree
    with threadpool_limits(args.threads, user_api="blas"):
        train(run, out=args.out, command=command, commit=commit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
