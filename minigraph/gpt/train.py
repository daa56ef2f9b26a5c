"""Train the GPT on Tiny Shakespeare: the command that makes chapter 11's checkpoint.

    python -m minigraph.gpt.train --out run.npz --best shakespeare_gpt.npz
    python -m minigraph.gpt.train --out run.npz --resume          # after a stop

With no settings it is nanoGPT's published CPU run (``training.Config``). Chapter 09's
command does the work (``charlm.train``): a progress bar with the time left, every
``--eval-every`` iterations a held-out estimate, a sample and a checkpoint that records the
command, the commit and the config; ``--resume`` continues a run to the same numbers as a
run never stopped. Score the whole held-out split with ``python -m minigraph.gpt.evaluate``.
"""

import sys

from ..charlm.train import training_command
from . import checkpoint
from .training import Config, Training


def main(argv=None):
    return training_command(sys.argv[1:] if argv is None else argv, "python -m minigraph.gpt.train",
                            Config, Training, checkpoint,
                            lambda run: f"{run.config.batch} windows of {run.config.block_size} "
                                        f"characters per iteration", __doc__)


if __name__ == "__main__":
    sys.exit(main())
