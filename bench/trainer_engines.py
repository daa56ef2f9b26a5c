"""The three trainers' iterations, the compiled step (``mg.function``) next to the interpreter
(``Graph.backward``): chapter 11's GPT (nanoGPT's CPU configuration), chapter 09's LSTM (the
shipped run's 512 units, 64 streams of 64 characters) and chapter 10's translator.

For each model two runs start from the same config and seed, one per engine, and step in
turn (compiled, interpreter, compiled, ...), so that a slow moment of the machine hits both;
their losses must be equal, bit for bit, at every iteration (asserted). Each iteration is the
whole ``Training.step``: the batch, forward and backward, clipping, the optimizer's step. The
compiled run's first iteration also plans the step (rewrites, memory plan, code): it is
reported on its own, and the ratio is of the other iterations (the steady state, which is
what a run of thousands of iterations spends its time in). One thread. Run:

    OPENBLAS_NUM_THREADS=1 python bench/trainer_engines.py
    OPENBLAS_NUM_THREADS=1 python bench/trainer_engines.py --models gpt --gpt 30
"""

import argparse
import statistics
import time

from threadpoolctl import threadpool_limits

import minigraph as mg
from minigraph.charlm import training as lstm
from minigraph.gpt import training as gpt
from minigraph.translate import training as translate


def runs(model):
    """Two runs of ``model`` from the same seed: (compiled, interpreter)."""
    text = mg.data.shakespeare()
    make = {"gpt": lambda: gpt.Training(gpt.Config(), text),
            "lstm": lambda: lstm.Training(lstm.Config(hidden=512, batch=64, steps=64, iterations=4000), text),
            "translate": lambda: translate.Training(translate.Config())}[model]
    compiled, interpreted = make(), make()
    interpreted.engine = "interpreter"
    return compiled, interpreted


def timed(run):
    start = time.perf_counter()
    loss = run.step()
    return loss, time.perf_counter() - start


def measure(model, iterations):
    compiled, interpreted = runs(model)
    times = {"compiled": [], "interpreter": []}
    for iteration in range(iterations + 1):            # the first: the compiled step is planned
        (a, ta), (b, tb) = timed(compiled), timed(interpreted)
        assert a == b, f"{model} iteration {iteration + 1}: losses {a!r} and {b!r} differ"
        times["compiled"].append(ta)
        times["interpreter"].append(tb)
    steady = {k: v[1:] for k, v in times.items()}
    ratios = [c / i for c, i in zip(steady["compiled"], steady["interpreter"])]
    total = {k: sum(v) for k, v in steady.items()}
    print(f"{model}: {iterations} iterations after the first, losses equal bit for bit\n"
          f"  interpreter {total['interpreter']:7.2f} s ({total['interpreter'] / iterations * 1000:6.0f} ms/it)\n"
          f"  compiled    {total['compiled']:7.2f} s ({total['compiled'] / iterations * 1000:6.0f} ms/it)"
          f"   compiled / interpreter: {total['compiled'] / total['interpreter']:.2f}x of the totals, "
          f"median per iteration {statistics.median(ratios):.2f}x\n"
          f"  first iteration: compiled {times['compiled'][0]:.2f} s (with planning), "
          f"interpreter {times['interpreter'][0]:.2f} s", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="+", default=["gpt", "lstm", "translate"])
    p.add_argument("--gpt", type=int, default=30, help="GPT iterations timed")
    p.add_argument("--lstm", type=int, default=10, help="LSTM iterations timed")
    p.add_argument("--translate", type=int, default=50, help="translator iterations timed")
    args = p.parse_args(argv)
    with threadpool_limits(1, user_api="blas"):
        for model in args.models:
            measure(model, getattr(args, model))


if __name__ == "__main__":
    main()
