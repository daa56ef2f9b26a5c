"""Score a GPT checkpoint on the whole held-out split of Tiny Shakespeare.

    python -m minigraph.gpt.evaluate shakespeare_gpt.npz

The held-out split (the last 10 % of the text, 111,540 characters) is cut into
non-overlapping windows of ``block_size`` characters, and every character is scored exactly
once, given the characters before it in its window (``model.mean_loss``): the first of a
window sees one character, the last ``block_size``, as in training and in nanoGPT's
``estimate_loss``. The loss is printed in nats per character, bits per character and as a
perplexity.
"""

import argparse
import sys

from threadpoolctl import threadpool_limits

from ..errors import GraphError
from ..training.command import at_least_one, refuse
from .. import data
from ..training import text as texts
from ..training.scores import summary
from . import checkpoint
from .model import mean_loss


def held_out_loss(path):
    """``(loss in nats per character, meta)`` of the checkpoint at ``path`` on the held-out split."""
    model, vocab, meta = checkpoint.load_model(path)
    corpus = data.shakespeare()
    texts.check_vocabulary(meta, texts.Vocabulary(corpus), path)
    return mean_loss(model, texts.held_out_ids(vocab.encode(corpus))), meta


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m minigraph.gpt.evaluate", description=__doc__.split("\n")[0])
    p.add_argument("checkpoint", help="a .npz file written by python -m minigraph.gpt.train")
    p.add_argument("--threads", type=at_least_one, default=1, help="threads of numpy's matrix products")
    args = p.parse_args(argv)
    try:
        with threadpool_limits(args.threads, user_api="blas"):
            loss, meta = held_out_loss(args.checkpoint)
    except GraphError as error:                 # a file that is not a checkpoint of this model, ...
        return refuse(p.prog, error)
    print(summary(args.checkpoint, loss, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
