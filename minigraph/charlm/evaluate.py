"""Score a checkpoint on the whole held-out split of Tiny Shakespeare.

    python -m minigraph.charlm.evaluate shakespeare.npz

Every held-out character (the last 10 % of the text, 111,540 characters) is scored exactly
once, given what precedes it: the split is read as ``--batch`` streams, ``--steps``
characters at a time, with the state carried through, as in training. The loss is printed in
nats per character, bits per character and as a perplexity.
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


def held_out_loss(path, batch=16, steps=100):
    """``(loss in nats per character, meta)`` of the checkpoint at ``path`` on the held-out split."""
    model, vocab, meta = checkpoint.load_model(path)
    corpus = data.shakespeare()
    texts.check_vocabulary(meta, texts.Vocabulary(corpus), path)
    return mean_loss(model, texts.held_out_ids(vocab.encode(corpus)), batch, steps), meta


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m minigraph.charlm.evaluate",
                                description=__doc__.split("\n")[0])
    p.add_argument("checkpoint", help="a .npz file written by python -m minigraph.charlm.train")
    p.add_argument("--batch", type=at_least_one, default=16,
                   help="streams read side by side, each from a zero state (default 16: about 7,000 "
                        "characters each)")
    p.add_argument("--steps", type=at_least_one, default=100, help="characters per chunk")
    p.add_argument("--threads", type=at_least_one, default=1, help="threads of numpy's matrix products")
    args = p.parse_args(argv)
    try:
        with threadpool_limits(args.threads, user_api="blas"):
            loss, meta = held_out_loss(args.checkpoint, args.batch, args.steps)
    except GraphError as error:                 # a file that is not a checkpoint of this model, ...
        return refuse(p.prog, error)
    print(summary(args.checkpoint, loss, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
