"""T5: one training iteration of chapter 11's GPT (nanoGPT's CPU configuration), minigraph next
to the same model in PyTorch.

One iteration is what ``minigraph.gpt.training.Training.step`` does: forward through a batch
of 12 windows of 64 characters, the mean cross-entropy, backward, gradient clipping to norm 1
and one AdamW step (nanoGPT's ``train.py`` in PyTorch: ``F.scaled_dot_product_attention``,
``clip_grad_norm_``, ``torch.optim.AdamW``). Both start from the same weights and the same
batch, in float32; their losses and gradients must agree within float32 rounding (asserted)
before anything is timed (AdamW itself is checked against PyTorch's in tests/test_optim.py).
Each then steps on its own copy of the weights.

Repeats are interleaved (minigraph, torch, minigraph, ...) so that a slow moment of the machine
hits both; the printed ratio is the median of the per-repeat ratios minigraph / PyTorch. Peak
memory: how far the process's resident size rises above its size between iterations during
three of them (sampled every millisecond), each contender in a fresh process (tracemalloc
cannot see PyTorch's allocations). Both use one
thread. Run:

    python bench/gpt_step.py
    python bench/gpt_step.py --repeats 21 --profile       # and where minigraph's time goes
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


def setup():
    """The run (nanoGPT's configuration) and one batch of it."""
    run = Training(Config(), mg.data.shakespeare())
    return run, run.batch()


def contenders(run, batch):
    """name -> a function running one iteration on ``batch`` and returning its loss."""
    import torch
    torch.set_num_threads(1)
    cfg = run.config
    weights = torch_weights(run.model, "float32")
    adamw = torch_adamw(weights, cfg)
    ids, targets = (torch.as_tensor(a) for a in batch)
    step_count = [0]

    def engine():
        params = run.model.parameters
        loss = run.window.graph.backward(run.window.feed(*batch), wrt=params)
        mg.optim.clip_grad_norm(params, cfg.clip)
        run.optimizer.step()
        return float(loss)

    def pytorch():
        for group in adamw.param_groups:
            group["lr"] = mg.optim.warmup_cosine(step_count[0], cfg.lr, cfg.warmup, cfg.iterations, cfg.lr_min)
        step_count[0] += 1
        loss = torch_loss(weights, ids, targets, cfg.n_layer, cfg.n_head)
        adamw.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(weights.values()), cfg.clip)
        adamw.step()
        return loss.item()

    return {"minigraph": engine, "torch": pytorch}


def agree(run, batch):
    """Assert minigraph's loss and gradients on ``batch`` equal PyTorch's (float32 tolerances)."""
    cfg, params = run.config, run.model.parameters
    loss = float(run.window.graph.backward(run.window.feed(*batch), wrt=params))
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
        run, batch = setup()
        step = contenders(run, batch)[name]
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
    parser.add_argument("--profile", action="store_true", help="print where minigraph's iteration spends its time")
    parser.add_argument("--peak", help=argparse.SUPPRESS)          # the child process of peak_rise
    args = parser.parse_args()
    if args.peak:
        return measure_peak(args.peak)
    with threadpool_limits(1, user_api="blas"):
        run, batch = setup()
        loss = agree(run, batch)
        steps = contenders(run, batch)
        ratios = []
        for _ in range(args.repeats):
            seconds = {}
            for name, step in steps.items():
                start = time.perf_counter()
                step()
                seconds[name] = time.perf_counter() - start
            ratios.append(seconds["minigraph"] / seconds["torch"])
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(lambda: [steps["minigraph"]() for _ in range(5)])
            pstats.Stats(profile).sort_stats("tottime").print_stats(12)
    peaks = {name: peak_rise(name) for name in steps}
    print(f"{'task':<52}{'dtype':>8}{'loss':>9}{'minigraph/torch':>17}{'peak MB minigraph/torch':>26}")
    name = "T5 GPT 4x128, 4 heads, 12x64 (per iteration)"
    memory = f"{peaks['minigraph']:.3g}/{peaks['torch']:.3g}"
    print(f"{name:<52}{'float32':>8}{loss:>9.4f}{np.median(ratios):>16.2f}x{memory:>26}")
    print(f"per-repeat ratios: {', '.join(f'{r:.2f}' for r in sorted(ratios))}")


if __name__ == "__main__":
    main()
