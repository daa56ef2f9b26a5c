"""T4: one training step of chapter 09's character LSTM, minigraph next to hand-written numpy
(and PyTorch, if it is installed).

The step is truncated BPTT on one chunk: forward through ``steps`` characters of ``batch``
streams, the mean cross-entropy, and the gradients of every Parameter (no optimizer: that is
the same few numpy lines for everyone). The three read the same weights, the same chunk of
Tiny Shakespeare and the same carried state (that of the chunk before), in float32; their
losses must agree and their gradients too (asserted) before anything is timed.

Repeats are interleaved (numpy, minigraph, torch, numpy, ...) so that a slow moment of the
machine hits every contender; the printed figures are the medians of the per-repeat ratios to
numpy, and the peak memory of one step (tracemalloc: numpy's allocations), minigraph's next to
numpy's. Run:

    python bench/char_lstm_step.py                    # 512 units, 64 streams x 64 characters
    python bench/char_lstm_step.py --hidden 128 --batch 32 --steps 32 --repeats 5
"""

import argparse
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits

import minigraph as mg
from minigraph.charlm import by_hand, model as charmodel, text as texts


LOSS_TOLERANCE = 1e-5      # relative: how close numpy's loss must be to the engine's (float32)


def setup(hidden, batch, steps, seed=0, dtype=np.float32):
    """The model (its Parameters of ``dtype``), the graph of a chunk, the next chunk of the text
    (its ids and targets) and the state carried into it."""
    corpus = mg.data.shakespeare()
    vocab = texts.Vocabulary(corpus)
    chunks = texts.chunks(texts.split(vocab.encode(corpus))[0], batch, steps)
    first, second = next(chunks), next(chunks)
    model = charmodel.CharLSTM(len(vocab), hidden, rng=seed, dtype=dtype)
    chunk = model.chunk(steps)
    chunk.scores.forward(chunk.feed(first[0], None, model.initial_state(batch)))
    return model, chunk, second, chunk.final_state()


def contenders(model, chunk, data, state, with_torch=True):
    """name -> a function running one step and returning ``(loss, grads by name)``."""
    inputs, targets = data
    values = {p.name: p.value for p in model.parameters}

    def engine():
        loss = chunk.graph.backward(chunk.feed(inputs, targets, state), wrt=model.parameters)
        return float(loss), {p.name: p.grad for p in model.parameters}

    steps = {"numpy": lambda: by_hand.lstm_step(values, inputs, targets, state)[:2], "minigraph": engine}
    if with_torch:
        try:
            import torch
            torch.set_num_threads(1)
            steps["torch"] = lambda: by_hand.torch_step(values, inputs, targets, state)[:2]
        except ImportError:
            pass
    return steps


def agree(results):
    """Assert every contender's loss and gradients equal numpy's (float32 tolerances)."""
    loss, grads = results["numpy"]
    for name, (other_loss, other_grads) in results.items():
        assert abs(other_loss - loss) <= LOSS_TOLERANCE * abs(loss), f"{name}: loss {other_loss} != numpy's {loss}"
        for key, grad in grads.items():
            scale = float(np.abs(grad).max()) or 1.0
            error = float(np.abs(other_grads[key] - grad).max()) / scale
            assert error < 1e-3, f"{name}: gradient of {key} differs from numpy's by {error:.1e} (relative)"
    return loss


def peak_memory(step):
    """Peak bytes allocated during one call of ``step`` (after a warm-up call)."""
    step()
    tracemalloc.start()
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help="threads of numpy's matrix products")
    args = parser.parse_args()
    with threadpool_limits(args.threads, user_api="blas"):
        model, chunk, data, state = setup(args.hidden, args.batch, args.steps)
        steps = contenders(model, chunk, data, state)
        loss = agree({name: step() for name, step in steps.items()})
        ratios = {name: [] for name in steps}
        for _ in range(args.repeats):
            seconds = {}
            for name, step in steps.items():
                start = time.perf_counter()
                step()
                seconds[name] = time.perf_counter() - start
            for name in steps:
                ratios[name].append(seconds[name] / seconds["numpy"])
        peaks = {name: peak_memory(steps[name]) for name in ("numpy", "minigraph")}
    torch_text = f"{np.median(ratios['torch']):.2f}x" if "torch" in ratios else "—"
    print(f"{'task':<44}{'dtype':>8}{'loss':>10}{'minigraph/numpy':>17}{'torch/numpy':>13}"
          f"{'peak MB minigraph/numpy':>26}")
    name = f"T4 char LSTM {args.hidden} units, {args.batch}x{args.steps} (per step)"
    memory = (f"{peaks['minigraph'] / 2**20:.3g}/{peaks['numpy'] / 2**20:.3g} = "
              f"{peaks['minigraph'] / peaks['numpy']:.2f}x")
    print(f"{name:<44}{'float32':>8}{loss:>10.4f}{np.median(ratios['minigraph']):>16.2f}x{torch_text:>13}"
          f"{memory:>26}")


if __name__ == "__main__":
    main()
