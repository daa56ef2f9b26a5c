"""One training step, four ways, next to the fastest numpy: is mg.function's compiled step as fast?

  numpy      the step written by hand by a numpy expert (bench/engine_speed.py's numpy_step:
             fused loss gradient, updates in place, nothing copied)
  compiled   mg.function of the loss, its mg.grad nodes and the updates W - lr * dW: rewritten,
             given a memory plan, written out as straight-line code (minigraph/compiler/)
  plain      the same mg.function with optimize=False: no rewrites, no buffers
  backward   Graph.backward + mg.optim.GD, the engine's usual path (interpreter, then its
             generated code). The update matters to the timing: Graph.backward recomputes only
             what is stale, so repeated on unchanged weights it skips the whole forward pass
             (on T4, 0.27 s a step instead of 0.45)
  torch      on T1-T3, the same MLP and GD step in PyTorch (bench/engine_speed.py's
             torch_contender), when it is installed; its loss is not asserted (other kernels)

on the tasks of bench/engine_speed.py, T1 2-4-4-1 tanh MLP + BCE on the 4 XOR points, T2
64-128-10 ReLU MLP + softmax-CE on a batch of 256, T3 784-512-512-10 ReLU MLP + softmax-CE on a
batch of 256, and on T4, chapter 09's character LSTM (512 units, 64 streams x 64 characters,
truncated BPTT on one chunk, bench/char_lstm_step.py), each in float32 and float64, every
contender from the same initial weights (T4: the same chunk and carried state at every step).
For T4, numpy is bench/char_lstm_step.py's hand-written step (``by_hand.lstm_step``) followed by
the updates ``W -= lr * dW``. Each contender takes one step first (the compiled ones plan their
code then); the repeats are interleaved (numpy, compiled, plain, backward, numpy, ...) so that a
slow moment of the machine hits every contender; the figures are medians of the per-repeat
ratios to numpy (``(cpu)``: the compiled step's, by the process's CPU time rather than the wall
clock, which on a shared machine also counts the time others ran). The final losses must be
identical (same math, same numbers: asserted), but T4's numpy step's, whose math differs (its
sigmoid is 0.5 (1 + tanh(z / 2)), each weight's gradient one product over all steps), which
must only be close. The last lines give the peak memory of one T3 step (tracemalloc, traced
from before the contender is built, so its buffers and copies count), compiled's next to
numpy's.

Planning: the first call of an ``mg.function`` with new shapes computes the program op by op,
rewrites it for those shapes, plans its memory and writes its code (minigraph/compiler/). The
column ``plan`` is the median over five fresh compiled steps (one on T4) of that first call's
time, minus one planned call's (so it is what planning adds), in wall-clock ms and in ms of the
process's CPU time (``cpu``: on a shared machine, the wall clock also counts the time others
ran); its target is 5 ms on T1-T3.

    python bench/compiled_step.py [--quick] [--tasks T4 ...]   # --quick: 3 repeats, T4 at 128
                                                               # units, 16 x 16

On a machine shared with other work, OPENBLAS_NUM_THREADS=1 keeps BLAS from waiting for a busy
second core (every contender calls the same BLAS).
"""

import argparse
import os
import time
import tracemalloc

import numpy as np

import minigraph as mg
from char_lstm_step import LOSS_TOLERANCE, setup
from engine_speed import LR, MinigraphNet, init_params, numpy_step, torch_contender
from minigraph.charlm import by_hand

TASKS = {"T1": ([2, 4, 4, 1], "tanh", "bce", 200, 30),          # sizes, activation, loss,
         "T2": ([64, 128, 10], "relu", "ce", 20, 30),           # steps per repeat, repeats
         "T3": ([784, 512, 512, 10], "relu", "ce", 2, 15)}
LSTM = {"T4": (512, 64, 64)}         # hidden units, streams, characters per stream (one chunk)
LSTM_QUICK, LSTM_REPEATS = (128, 16, 16), 7
TARGET = 1.00                                                    # compiled / numpy, at most
PLAN_TARGET = 5e-3                                               # seconds to plan T1-T3, at most
PLANS = 5                                                        # fresh plans timed per task


def batch(task, dtype):
    """(X, targets): XOR's 4 points for T1 (0/1 targets, float), else 256 random examples with
    integer classes."""
    if task == "T1":
        X, Y = mg.data.xor()
        return X.astype(dtype), Y.reshape(-1, 1).astype(dtype)
    sizes, rng = TASKS[task][0], np.random.default_rng(1)
    return rng.normal(size=(256, sizes[0])).astype(dtype), rng.integers(0, sizes[-1], 256)


def compiled_step(params, activation, loss, optimize=True):
    """mg.function of one training step of the MLP with these initial ``params``."""
    net = MinigraphNet(params, activation, loss)
    out, weights = net.graph.outputs[0], net.graph.parameters
    grads = mg.grad(out, weights)
    step = mg.function([net.x, net.y], out, updates={p: p - LR * g for p, g in zip(weights, grads)},
                       optimize=optimize)
    return step


def contenders(task, dtype, quick=False, only=None):
    """Step functions ``step()`` (each returns the loss) from the same initial weights (each its
    own copy)."""
    if task in LSTM:
        return lstm_contenders(LSTM_QUICK if quick else LSTM[task], dtype, only)
    sizes, activation, loss = TASKS[task][:3]
    params, (X, y) = init_params(sizes, np.random.default_rng(0), dtype), batch(task, dtype)
    make = {"numpy": lambda: (lambda X, y, P=[p.copy() for p in params]: numpy_step(P, X, y, activation, loss)),
            "compiled": lambda: compiled_step(params, activation, loss),
            "plain": lambda: compiled_step(params, activation, loss, optimize=False),
            "backward": lambda: MinigraphNet(params, activation, loss).step,
            "torch": lambda: torch_step(params, activation, loss, sizes[-1])}
    made = {who: build() for who, build in make.items() if only is None or who in only}
    return {who: (lambda step=step: step(X, y)) for who, step in made.items() if step is not None}


def torch_step(params, activation, loss, classes):
    """engine_speed.py's PyTorch step, fed 0/1 targets (T1) or integer classes (T2, T3); None
    without PyTorch. One thread, as every contender here."""
    step = torch_contender(params, activation, loss)
    if step is None:
        return None
    import torch
    torch.set_num_threads(1)
    return lambda X, y: step(X, y if loss == "bce" else np.eye(classes, dtype=X.dtype)[y])


def lstm_contenders(sizes, dtype, only=None):
    """T4's step functions, each on a model of its own built by ``char_lstm_step.setup`` (the same
    weights, chunk and carried state for all)."""
    def numpy():
        model, _, (inputs, targets), state = setup(*sizes, dtype=dtype)
        values = {p.name: p.value.copy() for p in model.parameters}

        def step():
            loss, grads, _ = by_hand.lstm_step(values, inputs, targets, state)
            for name, grad in grads.items():
                values[name] -= LR * grad
            return loss
        return step

    def compiled(optimize=True):
        model, chunk, (inputs, targets), state = setup(*sizes, dtype=dtype)
        grads = mg.grad(chunk.loss, model.parameters)
        step = mg.function(chunk.xs + chunk.start + [chunk.targets], chunk.loss, optimize=optimize,
                           updates={p: p - LR * g for p, g in zip(model.parameters, grads)})
        feed = chunk.feed(inputs, targets, state)
        arrays = [feed[node] for node in step.inputs]
        return lambda: step(*arrays)

    def backward():
        model, chunk, (inputs, targets), state = setup(*sizes, dtype=dtype)
        feed, optimizer = chunk.feed(inputs, targets, state), mg.optim.GD(model.parameters, lr=LR)

        def step():
            loss = chunk.graph.backward(feed, wrt=model.parameters)
            optimizer.step()
            return loss
        return step

    make = {"numpy": numpy, "compiled": compiled, "plain": lambda: compiled(optimize=False),
            "backward": backward}
    return {who: build() for who, build in make.items() if only is None or who in only}


def run(task, dtype, quick):
    """Median time ratios to numpy of each contender (and, as "compiled cpu", of the compiled
    step's CPU time to numpy's), numpy's time of a step and its final loss (the same for all,
    T4's numpy's only close)."""
    steps, repeats = TASKS[task][3:] if task in TASKS else (1, LSTM_REPEATS)
    repeats = 3 if quick else repeats
    ways = contenders(task, dtype, quick)
    last = {who: step() for who, step in ways.items()}           # (the compiled ones plan here)
    times = {who: [] for who in ways}
    cpu = {who: [] for who in ways}
    for _ in range(repeats):
        for who, step in ways.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(steps):
                last[who] = step()
            times[who].append(time.perf_counter() - start)
            cpu[who].append(time.process_time() - start_cpu)
    losses = {who: float(value) for who, value in last.items() if who != "torch"}
    exact = {who: loss for who, loss in losses.items() if who != "numpy" or task in TASKS}
    assert len(set(exact.values())) == 1, (task, losses)          # same math, same numbers
    assert abs(losses["numpy"] - losses["backward"]) <= LOSS_TOLERANCE * abs(losses["backward"]), (task, losses)
    numpy_times = np.array(times["numpy"])
    ratios = {who: float(np.median(np.array(t) / numpy_times)) for who, t in times.items() if who != "numpy"}
    ratios["compiled cpu"] = float(np.median(np.array(cpu["compiled"]) / np.array(cpu["numpy"])))
    return losses["numpy"], float(np.median(numpy_times)) / steps, ratios


def planning(task, dtype, quick):
    """Median seconds that planning adds to a compiled step's first call, by the wall clock and
    by the process's CPU time: the first call of ``PLANS`` fresh compiled steps (of one on T4,
    whose model takes long to build), each less a second call of the same step."""
    added = {clock: [] for clock in (time.perf_counter, time.process_time)}
    for _ in range(PLANS if task in TASKS else 1):
        step = contenders(task, dtype, quick, only=["compiled"])["compiled"]
        before = {clock: clock() for clock in added}
        step()
        first = {clock: clock() - before[clock] for clock in added}
        before = {clock: clock() for clock in added}
        step()
        for clock, seconds in added.items():
            seconds.append(first[clock] - (clock() - before[clock]))
    return [float(np.median(seconds)) for seconds in added.values()]


def peak_memory(task, dtype):
    """Peak bytes of one step (after two warm-up steps), numpy's and the compiled step's."""
    peaks = {}
    for who in ("numpy", "compiled"):
        tracemalloc.start()
        step = contenders(task, dtype, only=[who])[who]
        step()
        step()
        tracemalloc.reset_peak()
        step()
        peaks[who] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peaks


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 repeats, a smaller T4 (a smoke run)")
    parser.add_argument("--tasks", nargs="+", choices=[*TASKS, *LSTM], default=[*TASKS, *LSTM],
                        help="the tasks to run (all by default)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} at the start")
    print(f"{'task':<5}{'dtype':>8}{'final loss':>12}{'numpy/step':>12}{'compiled':>10}{'(cpu)':>7}{'plain':>8}"
          f"{'backward':>10}{'torch':>8}{'plan':>9}{'cpu':>7}   (x numpy, median; target: compiled <= "
          f"{TARGET:.2f}x; plan: ms, target <= {PLAN_TARGET * 1e3:.0f} on T1-T3)")
    for task in args.tasks:
        for dtype in (np.float32, np.float64):
            loss, seconds, r = run(task, dtype, args.quick)
            torch_ratio = f"{r['torch']:>7.2f}x" if "torch" in r else f"{'-':>8}"
            wall, cpu = planning(task, dtype, args.quick)
            print(f"{task:<5}{np.dtype(dtype).name:>8}{loss:>12.6f}{seconds * 1e6:>10.0f}µs"
                  f"{r['compiled']:>9.2f}x{r['compiled cpu']:>6.2f}x{r['plain']:>7.2f}x{r['backward']:>9.2f}x{torch_ratio}"
                  f"{wall * 1e3:>9.1f}{cpu * 1e3:>7.1f}", flush=True)
    for dtype in (np.float32, np.float64) if "T3" in args.tasks else ():
        peaks = peak_memory("T3", dtype)
        print(f"T3 {np.dtype(dtype).name} peak memory of a step: compiled {peaks['compiled'] / 2**20:.3g} MB, "
              f"numpy {peaks['numpy'] / 2**20:.3g} MB ({peaks['compiled'] / peaks['numpy']:.2f}x)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
