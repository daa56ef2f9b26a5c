"""Two ops of chapter 11's GPT step (B=12, T=64, C=128, 4 heads), minigraph against PyTorch, float32.

  masked softmax   attention weights: softmax of (12, 4, 64, 64) scores under the causal mask
  layer norm       a (768, 128) batch of rows (B*T = 768), with gamma and beta
  gelu             the MLP's hidden layer, (12, 64, 512)

Each is timed as one forward and one backward (the gradient of every input, for a fixed
upstream gradient g), three ways, interleaved (each repeat runs all three once, so load on the
shared machine hits them alike), and the median time of each is printed as a ratio to PyTorch's:

  kernels      the op table's forward and VJPs called on numpy arrays (what the engine runs per op)
  minigraph    Graph.backward on the graph out = op(x, ...), seeded with g (the whole engine)
  torch        torch.softmax / F.layer_norm and .backward(g) on CPU tensors

Run: python bench/transformer_ops.py [--repeats 200] [--threads 1]
"""

import argparse
import statistics
import time

import numpy as np

import minigraph as mg
from minigraph import ops


def cases(rng):
    """(name, op, numpy inputs, attributes, torch function of the same inputs)."""
    import torch
    F = torch.nn.functional
    scores = rng.normal(size=(12, 4, 64, 64)).astype(np.float32)
    mask = mg.causal_mask(64)
    forbidden = torch.tensor(~mask)
    x = rng.normal(size=(768, 128)).astype(np.float32)
    gamma, beta = (rng.normal(size=128).astype(np.float32) for _ in range(2))
    return [
        ("masked softmax (12, 4, 64, 64)", ops.softmax, [scores], {"mask": mask},
         lambda s: torch.softmax(s.masked_fill(forbidden, -torch.inf), dim=-1)),
        ("layer norm (768, 128)", ops.layer_norm_shifted, [x, gamma, beta], {},
         lambda x, gamma, beta: F.layer_norm(x, (128,), gamma, beta)),
        ("gelu (12, 64, 512)", ops.gelu, [rng.normal(size=(12, 64, 512)).astype(np.float32)], {},
         lambda h: F.gelu(h, approximate="tanh")),
    ]


def timers(op, inputs, attrs, torch_fn, rng):
    """One callable per way of running op forward + backward."""
    import torch
    forward, vjps = op.opdef.forward, op.opdef.vjps
    g = rng.normal(size=np.shape(forward(*inputs, **attrs))).astype(np.float32)

    def kernels():
        ans = forward(*inputs, **attrs)
        return [vjp(g, ans, *inputs, **attrs) for vjp in vjps]

    params = [mg.Parameter(v) for v in inputs]
    graph = mg.Graph(op(*params, **attrs))

    def minigraph():
        for p, v in zip(params, inputs):
            p.value = v                             # a new value each time: nothing is cached
        graph.backward(seed=g)

    tensors = [torch.tensor(v, requires_grad=True) for v in inputs]
    g_t = torch.tensor(g)

    def pytorch():
        for t in tensors:
            t.grad = None
        torch_fn(*tensors).backward(g_t)

    return {"kernels": kernels, "minigraph": minigraph, "torch": pytorch}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    args = parser.parse_args()
    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"median time of forward + backward, as a multiple of PyTorch's ({args.repeats} interleaved "
          f"repeats, torch threads: {torch.get_num_threads()})")
    for name, op, inputs, attrs, torch_fn in cases(rng):
        runs = timers(op, inputs, attrs, torch_fn, rng)
        times = {way: [] for way in runs}
        for _ in range(args.repeats):
            for way, run in runs.items():
                start = time.perf_counter()
                run()
                times[way].append(time.perf_counter() - start)
        base = statistics.median(times["torch"])
        print(f"  {name:<32}" + "  ".join(f"{way} {statistics.median(t) / base:5.2f}x"
                                           for way, t in times.items()))


if __name__ == "__main__":
    main()
