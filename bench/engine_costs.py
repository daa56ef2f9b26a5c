"""Where does minigraph's time go on T2 (64-128-10 MLP, digits, batch 64, float32), next to numpy?

engine_speed.py compares the whole engine with hand-written numpy. This script climbs from one to
the other, adding one of the engine's promises at a time to the numpy step, and prints each
rung's median time ratio against numpy_step (interleaved repeats, as in engine_speed.py):

  numpy            engine_speed.numpy_step (the baseline: one function for any number of layers)
  written out      the same numpy, written out for these two layers (nothing added yet)
  + copy feeds     each fed batch is copied (an Input keeps its own copy of what it was fed)
  + new params     an update makes new, read-only parameter arrays instead of changing them in place
  + keep values    every value and gradient of the step is kept until the next one (for viewing)
  + op table       forward and backward through the op table's kernels (kernels.py, losses.py)
  minigraph        the real thing: Graph.backward + optim.GD

Run: python bench/engine_costs.py
"""

import time

import numpy as np

from engine_speed import LR, MinigraphNet, in_dtype, init_params, numpy_step, softmax_cross_entropy, task_digits
from minigraph import kernels, losses


def rung(params, copy_feeds, new_params, keep_values, op_table):
    """A T2 training step with some of the engine's promises; the same numbers as numpy_step."""
    W1, b1, W2, b2 = params = [p.copy() for p in params]
    kept = []

    def step(X, y):
        nonlocal W1, b1, W2, b2
        if copy_feeds:
            X, y = (np.frombuffer(a.tobytes(), a.dtype).reshape(a.shape) for a in (X, y))
        if op_table:
            z1 = kernels.linear(X, W1, b1)
            h = np.maximum(z1, 0)
            z = kernels.linear(h, W2, b2)
            value = losses.softmax_ce(z, y)
            dz = losses.softmax_ce_vjp_logits(np.array(1.0, z.dtype), value, z, y)
            dW2, db2 = kernels.matmul_vjp_y(dz, z, h, W2), kernels.unbroadcast(dz, b2.shape)
            dz1 = kernels.matmul_vjp_x(dz, z, h, W2) * (z1 > 0)
            dW1, db1 = kernels.matmul_vjp_y(dz1, z1, X, W1), kernels.unbroadcast(dz1, b1.shape)
        else:
            z1 = X @ W1 + b1
            h = np.maximum(z1, 0)
            z = h @ W2 + b2
            value, dz = softmax_cross_entropy(z, y)
            dW2, db2 = h.T @ dz, dz.sum(axis=0)
            dz1 = (dz @ W2.T) * (z1 > 0)
            dW1, db1 = X.T @ dz1, dz1.sum(axis=0)
        if keep_values:
            kept[:] = [X, y, z1, h, z, value, dz, dz1, dW1, db1, dW2, db2]
        if new_params:
            W1, b1, W2, b2 = new = [p - LR * d for p, d in [(W1, dW1), (b1, db1), (W2, dW2), (b2, db2)]]
            for p in new:
                p.setflags(write=False)
        else:
            for p, d in [(W1, dW1), (b1, db1), (W2, dW2), (b2, db2)]:
                p -= LR * d
        return value
    return step


def main():
    name, sizes, activation, loss, batches, _ = task_digits(np.random.default_rng(1))
    batches = in_dtype(batches, np.float32)
    params = init_params(sizes, np.random.default_rng(0), np.float32)
    baseline = [p.copy() for p in params]
    net = MinigraphNet(params, activation, loss)
    steps = {"numpy": lambda X, y: numpy_step(baseline, X, y, activation, loss),
             "written out": rung(params, False, False, False, False),
             "+ copy feeds": rung(params, True, False, False, False),
             "+ new params": rung(params, True, True, False, False),
             "+ keep values": rung(params, True, True, True, False),
             "+ op table": rung(params, True, True, True, True),
             "minigraph": net.step}
    times = {who: [] for who in steps}
    last = {}
    for _ in range(40):
        for who, step in steps.items():
            start = time.perf_counter()
            for X, labels, _ in batches:
                last[who] = step(X, labels)
            times[who].append(time.perf_counter() - start)
    assert len(set(map(float, last.values()))) == 1, last        # every rung: the same numbers
    print(f"{name}: time per epoch / numpy's (median of 40 interleaved repeats)")
    for who in steps:
        print(f"  {who:<14}{np.median(np.array(times[who]) / np.array(times['numpy'])):6.2f}x")


if __name__ == "__main__":
    main()
