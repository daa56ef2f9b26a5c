"""T5: one training iteration of chapter 11's GPT (nanoGPT's CPU configuration), three ways, side
by side: minigraph's compiled step, minigraph's interpreter and the same model in PyTorch.

One iteration is what ``minigraph.gpt.training.Training.step`` does: forward through a batch
of 12 windows of 64 characters, the mean cross-entropy, backward, gradient clipping to norm 1
and one AdamW step. The contenders:

  compiled     ``mg.function([ids, targets], [loss, *mg.grad(loss, parameters)])`` (rewritten,
               given a memory plan, written out as straight-line code: minigraph/compiler/),
               its gradients handed to the Parameters, then ``optim.clip_grad_norm`` and AdamW
  interpreter  ``Graph.backward`` (the engine's usual path: the interpreter, then its
               generated backward code), then the same clipping and AdamW
  torch        nanoGPT's ``train.py`` in PyTorch: ``F.scaled_dot_product_attention``,
               ``clip_grad_norm_``, ``torch.optim.AdamW``

All three start from the same weights and the same batch, in float32. Before anything is timed,
the compiled step's loss and gradients are asserted equal to the interpreter's, bit for bit (the
graph gradients of layer norm, GELU and softmax are one op each, computing the interpreter's
numbers), and the interpreter's to PyTorch's within float32 rounding (AdamW itself is checked
against PyTorch's in tests/test_optim.py). Each then steps on its own copy of the weights. The
first call of the compiled step plans it (rewrites, memory plan, code): its time is printed as
``planning``, with the size of the buffers its memory plan allocates once (they are in place
before the iterations whose resident size is measured, so they are not in ``peak MB``).

Repeats are interleaved (compiled, interpreter, torch, compiled, ...) so that a slow moment of the
machine hits all three; the printed ratios are the medians of the per-repeat ratios to PyTorch,
by the wall clock and by the process's CPU time (on a shared machine the wall clock also counts
the time others ran; all three run on one thread).
Peak memory: how far the process's resident size rises above its size between iterations during
three of them (sampled every millisecond), each contender in a fresh process (tracemalloc
cannot see PyTorch's allocations). All use one thread. Run:

    python bench/gpt_step.py
    python bench/gpt_step.py --repeats 21 --profile       # and where the compiled step's time goes
"""

import argparse
import cProfile
import pstats
import os
import subprocess
import sys
import threading
import time

import numpy as np
from threadpoolctl import threadpool_limits

import minigraph as mg
from minigraph.gpt.reference import torch_adamw, torch_loss, torch_weights
from minigraph.gpt.training import Config, Training

TARGET = 1.00                                     # compiled / PyTorch, at most: no slower


def setup():
    """A run (nanoGPT's configuration) and one batch of it (the same batch for every run made)."""
    run = Training(Config(), mg.data.shakespeare())
    return run, run.batch()


def compiled(run):
    """The compiled step of ``run``'s window: ``step(ids, targets)`` -> [loss, *the gradients of
    run.model.parameters] (the window's targets are fed flat, one per position)."""
    window, params = run.window, run.model.parameters
    step = mg.function([window.ids, window.targets], [window.loss, *mg.grad(window.loss, params)])
    return step


def iterations(run, batch, step=None):
    """A function running one iteration of ``run`` on ``batch`` and returning its loss: through
    the compiled ``step`` if given, else through ``Graph.backward``."""
    params, clip = run.model.parameters, run.config.clip
    ids, targets = batch[0], batch[1].reshape(-1)
    feed = run.window.feed(*batch)

    def iteration():
        if step is None:
            loss = run.window.graph.backward(feed, wrt=params)
        else:
            loss, *grads = step(ids, targets)
            for p, grad in zip(params, grads):
                p.grad = grad
        mg.optim.clip_grad_norm(params, clip)
        run.optimizer.step()
        return float(loss)
    return iteration


def pytorch_iteration(run, batch):
    """One iteration of the same model in PyTorch, from ``run``'s weights, on ``batch``."""
    import torch
    torch.set_num_threads(1)
    cfg = run.config
    weights = torch_weights(run.model, "float32")
    adamw = torch_adamw(weights, cfg)
    ids, targets = (torch.as_tensor(a) for a in batch)
    step_count = [0]

    def iteration():
        for group in adamw.param_groups:
            group["lr"] = mg.optim.warmup_cosine(step_count[0], cfg.lr, cfg.warmup, cfg.iterations, cfg.lr_min)
        step_count[0] += 1
        loss = torch_loss(weights, ids, targets, cfg.n_layer, cfg.n_head)
        adamw.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(weights.values()), cfg.clip)
        adamw.step()
        return loss.item()
    return iteration


def contenders(only=None):
    """name -> a function running one iteration and returning its loss, each on a run of its own
    from the same weights and batch; and the compiled step's planning time in seconds and its
    buffers' bytes."""
    made, planning = {}, None
    for name in ("compiled", "interpreter", "torch"):
        if only is not None and name not in only:
            continue
        run, batch = setup()
        if name == "torch":
            made[name] = pytorch_iteration(run, batch)
        elif name == "interpreter":
            made[name] = iterations(run, batch)
        else:
            step = compiled(run)
            made[name] = iterations(run, batch, step)
            start = time.perf_counter()
            step(batch[0], batch[1].reshape(-1))                # planned here
            planning = time.perf_counter() - start, step.memory.nbytes
    return made, planning


def agree():
    """Assert the compiled step's loss and gradients equal the interpreter's, bit for bit, and
    the interpreter's PyTorch's (float32 tolerances); return the loss."""
    run, batch = setup()
    cfg, params = run.config, run.model.parameters
    loss = float(run.window.graph.backward(run.window.feed(*batch), wrt=params))
    same_loss, *grads = compiled(run)(batch[0], batch[1].reshape(-1))
    for p, grad in zip(params, grads):
        assert np.array_equal(grad, p.grad), f"the compiled gradient of {p.name} differs from the interpreter's"
    assert same_loss == loss, f"the compiled step's loss {same_loss} != the interpreter's {loss}"
    weights = torch_weights(run.model, "float32")
    other = torch_loss(weights, *batch, cfg.n_layer, cfg.n_head)
    other.backward()
    assert abs(loss - other.item()) <= 1e-5 * abs(loss), f"loss {loss} != PyTorch's {other.item()}"
    for p in params:
        want = weights[p.name].grad.numpy()
        error = float(np.abs(p.grad - want).max()) / (float(np.abs(want).max()) or 1.0)
        assert error < 1e-3, f"the gradient of {p.name} differs from PyTorch's by {error:.1e} (relative)"
    return loss


def peak_rise(name):
    """MB by which three iterations of one contender raise the resident size at its highest,
    measured in a fresh process (run with --peak NAME)."""
    out = subprocess.run([sys.executable, __file__, "--peak", name], capture_output=True, text=True,
                         check=True).stdout
    return float(out.split()[-1])


def resident_mb():
    """The process's resident size now, in MB (Linux: /proc/self/statm)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure_peak(name):
    """Print the highest resident size during three iterations minus the size before them,
    sampled every millisecond by a second thread."""
    with threadpool_limits(1, user_api="blas"):
        step = contenders([name])[0][name]
        step()                                         # warm-up: the arrays kept between steps
        before, highest, done = resident_mb(), [0.0], threading.Event()

        def watch():
            while not done.is_set():
                highest[0] = max(highest[0], resident_mb())
                time.sleep(0.001)

        watcher = threading.Thread(target=watch)
        watcher.start()
        for _ in range(3):
            step()
        done.set()
        watcher.join()
        print(max(highest[0], resident_mb()) - before)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--profile", action="store_true", help="print where the compiled step spends its time")
    parser.add_argument("--peak", help=argparse.SUPPRESS)          # the child process of peak_rise
    args = parser.parse_args()
    if args.peak:
        return measure_peak(args.peak)
    with threadpool_limits(1, user_api="blas"):
        loss = agree()
        steps, planning = contenders()
        for step in steps.values():
            step()                                                 # each warms up once
        seconds = {name: [] for name in steps}
        cpu = {name: [] for name in steps}
        for _ in range(args.repeats):
            for name, step in steps.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                step()
                seconds[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(lambda: [steps["compiled"]() for _ in range(5)])
            pstats.Stats(profile).sort_stats("tottime").print_stats(12)
    torch_seconds, torch_cpu = np.array(seconds["torch"]), np.array(cpu["torch"])
    ratio = {name: float(np.median(np.array(s) / torch_seconds)) for name, s in seconds.items()}
    cpu_ratio = {name: float(np.median(np.array(s) / torch_cpu)) for name, s in cpu.items()}
    peaks = {name: peak_rise(name) for name in steps}
    print(f"T5 GPT 4x128, 4 heads, 12x64, float32, one iteration; loss {loss:.4f}; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'':<13}{'ms/iteration':>13}{'x PyTorch':>11}{'CPU ms':>8}{'x PyTorch':>11}{'peak MB':>9}")
    for name in steps:
        print(f"{name:<13}{np.median(seconds[name]) * 1e3:>13.1f}{ratio[name]:>10.2f}x"
              f"{np.median(cpu[name]) * 1e3:>8.1f}{cpu_ratio[name]:>10.2f}x{peaks[name]:>9.3g}")
    per_repeat = sorted(np.array(seconds["compiled"]) / torch_seconds)
    print(f"compiled per-repeat ratios: {', '.join(f'{r:.2f}' for r in per_repeat)}"
          f"  (target <= {TARGET:.2f}x: {'met' if ratio['compiled'] <= TARGET else 'missed'})")
    print(f"planning (the compiled step's first call): {planning[0] * 1e3:.0f} ms; its memory plan's "
          f"buffers, allocated once: {planning[1] / 2**20:.1f} MB")


if __name__ == "__main__":
    main()
