"""Chapter 07's Reber study over several seeds: an LSTM and a simple RNN of about the same size.

For each seed, train each model on embedded Reber strings (batches of 16, Adam, lr 0.03,
gradients clipped to norm 1) and, every 2,000 sequences, measure both accuracies of
``recurrent.reber_accuracy`` (local, long-range) on 300 fresh test strings and on 200 long
ones (20 symbols or more). Prints one line per seed and model: the sequences seen when both
accuracies first reached 100 %, and the accuracies at the end.

    python bench/reber_seeds.py [seeds] [sequences]      # default: 5 seeds, 10,000 sequences

It takes a few minutes (about 10 training runs of 10,000 sequences); the chapter quotes its table.
"""

import sys

import numpy as np

import minigraph as mg
from minigraph import recurrent

SEEDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
SEQUENCES = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
EVERY = 2000
MODELS = {"LSTM, 8 units": lambda rng: recurrent.LSTMCell(7, 8, rng),
          "RNN, 18 units": lambda rng: recurrent.RNNCell(7, 18, rng)}


def long_strings(n, seed):
    strings = [s for s in mg.data.reber_strings(40 * n, seed=seed) if len(s) >= 20]
    return strings[:n]


def study(make_cell, seed):
    rng = np.random.default_rng(seed)
    model = recurrent.SequenceModel(make_cell(rng), 7, rng)
    test, longer = mg.data.reber_strings(300, seed=10_000 + seed), long_strings(200, 20_000 + seed)
    curve = recurrent.reber_learning_curve(model, mg.data.reber_strings(SEQUENCES, seed=seed), test,
                                           every=EVERY, batch=16, lr=0.03, clip=1.0)
    learned = next((seen for seen, local, far in curve if local == far == 1.0), None)
    return model.size, learned, curve[-1][1:], recurrent.reber_accuracy(model, longer)


if __name__ == "__main__":
    print(f"{'model':<15} {'size':>5} {'seed':>4} {'both 100 % after':>17} {'local':>6} {'long-range':>10}"
          f" {'long strings: local':>20} {'long-range':>10}")
    for name, make_cell in MODELS.items():
        for seed in range(SEEDS):
            size, learned, (local, far), (long_local, long_far) = study(make_cell, seed)
            print(f"{name:<15} {size:>5} {seed:>4} {learned or 'not yet':>17} {local:>6.1%} {far:>10.1%}"
                  f" {long_local:>20.1%} {long_far:>10.1%}", flush=True)
