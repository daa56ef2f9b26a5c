"""Score a saved translator on held-out examples: exact match of its greedy translations.

    python -m minigraph.translate.evaluate minigraph/checkpoints/dates_attention.npz

The held-out examples are those of the model's own task (its config's seed): dates it never
saw in training, each written in one of the formats. A translation counts only if all ten
characters are right. The first few mistakes, if any, are printed.
"""

import argparse
import sys

from threadpoolctl import threadpool_limits

from ..errors import GraphError
from ..training.command import at_least_one, refuse
from ..training.files import provenance
from . import data
from .training import exact_match, load_model


def held_out_accuracy(path, examples=2000):
    """``(exact match, [(source, target, translation), ...], meta)`` of the model saved at
    ``path`` on the first ``examples`` held-out examples of its task."""
    model, meta = load_model(path)
    sources, targets = zip(*data.dates(1, examples, seed=meta["config"]["seed"]).held_out)
    translations, _ = model.translate(list(sources))
    return exact_match(translations, targets), list(zip(sources, targets, translations)), meta


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m minigraph.translate.evaluate",
                                description=__doc__.split("\n")[0])
    p.add_argument("model", help="a .npz file written by python -m minigraph.translate.train")
    p.add_argument("--examples", type=at_least_one, default=2000, help="held-out examples to score")
    p.add_argument("--threads", type=at_least_one, default=1, help="threads of numpy's matrix products")
    args = p.parse_args(argv)
    try:
        with threadpool_limits(args.threads, user_api="blas"):
            accuracy, rows, meta = held_out_accuracy(args.model, args.examples)
    except GraphError as error:                 # a file that is not a checkpoint of this model, ...
        return refuse(p.prog, error)
    print(f"{provenance(args.model, meta)}\n"
          f"exact match {accuracy:.2%} on {len(rows)} held-out examples")
    wrong = [(s, t, o) for s, t, o in rows if o != t]
    for source, target, output in wrong[:10]:
        print(f"    {source!r} -> {output!r} (should be {target!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
