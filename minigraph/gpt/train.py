"""Train the GPT on Tiny Shakespeare: the command that makes chapter 11's checkpoint.

    python -m minigraph.gpt.train --out build/gpt/run.npz --best build/gpt/best.npz
    python -m minigraph.gpt.train --out build/gpt/run.npz --best build/gpt/best.npz --resume   # after a stop

With no settings it is nanoGPT's published CPU run (``training.Config``). The language
models' command does the work (``minigraph.training.language_model``, on
``minigraph.training.command``), as for chapter 09's LSTM: a progress bar
with the time left, every ``--eval-every`` iterations a held-out estimate, a sample and a
checkpoint that records the command, the commit, the config, the wall clock and the machine;
Ctrl-C stops at the end of a step, saved, and ``--resume`` continues to the same numbers as a
run never stopped. Score the whole held-out split with ``python -m minigraph.gpt.evaluate``.
"""

import sys

from ..training.command import run_command
from ..training.language_model import language_model_command
from . import checkpoint
from .training import Config, Training

COMMAND = language_model_command(
    checkpoint.COMMAND, Config, Training, checkpoint,
    lambda run: f"{run.config.batch} windows of {run.config.block_size} characters per iteration",
    __doc__)


def main(argv=None):
    return run_command(sys.argv[1:] if argv is None else argv, COMMAND)


if __name__ == "__main__":
    sys.exit(main())
