"""How fast is minigraph next to hand-written numpy (and PyTorch, if it is installed)?

Three tasks, each trained side by side in one run from the same initial weights on the same
batches with the same math, so the final losses must be identical (this is asserted):

  T1  2-4-4-1 tanh MLP + BCE-from-logits on the 4 XOR points, full batch   -> time per step
  T2  64-128-10 ReLU MLP + softmax-CE on scikit-learn's digits, batch 64   -> time per epoch
  T3  784-512-512-10 ReLU MLP + softmax-CE on random data, batch 256       -> time per step

each in float32 and in float64 (weights, data and numpy's arithmetic all in that dtype).
Repeats are interleaved (numpy, minigraph, torch, numpy, minigraph, ...) so that a slow moment
of the machine hits every contender, and the printed figure is the median of the per-repeat
ratios minigraph / numpy. The last columns are the peak memory allocated during one training
step (tracemalloc sees numpy's allocations), minigraph's next to numpy's.
Run: python bench/engine_speed.py [--quick] [--repeats-scale K]
"""

import argparse
import time
import tracemalloc

import numpy as np

import minigraph as mg

LR = 0.1


# -- the hand-written numpy baseline: forward, backward and update written out by hand -----------

def numpy_step(params, X, y, activation, loss):
    """One gradient-descent step of an MLP; params = [W1, b1, W2, b2, ...] updated in place."""
    n_layers = len(params) // 2
    hs, pre = [X], []
    for i in range(n_layers):
        z = hs[-1] @ params[2 * i] + params[2 * i + 1]
        pre.append(z)
        if i < n_layers - 1:
            hs.append(np.tanh(z) if activation == "tanh" else np.maximum(z, 0))
    z = pre[-1]
    if loss == "bce":
        value = np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))
        e = np.exp(-np.abs(z))
        dz = (np.where(z >= 0, 1 / (1 + e), e / (1 + e)) - y) / z.size
    else:
        value, dz = softmax_cross_entropy(z, y)
    for i in reversed(range(n_layers)):
        W, b = params[2 * i], params[2 * i + 1]
        dW, db = hs[i].T @ dz, dz.sum(axis=0)
        if i > 0:
            dh = dz @ W.T
            dz = dh * (1 - hs[i] ** 2) if activation == "tanh" else dh * (pre[i - 1] > 0)
        W -= LR * dW
        b -= LR * db
    return value


def softmax_cross_entropy(z, y):
    """Mean cross-entropy of the softmax of logits z for integer classes y, and its gradient."""
    shifted = z - z.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    rows = np.arange(len(z))
    dz = np.exp(logp)
    dz[rows, y] -= 1
    dz /= len(z)
    return -logp[rows, y].sum() / len(z), dz


# -- the same network in minigraph ------------------------------------------------------------------

class MinigraphNet:
    def __init__(self, params, activation, loss):
        self.x, self.y = mg.Input("x"), mg.Input("y", dtype=None if loss == "bce" else int)
        net = mg.nn.MLP([params[0].shape[0]] + [W.shape[1] for W in params[::2]], activation, rng=0,
                        dtype=params[0].dtype)
        for p, value in zip(net.parameters, params):
            p.value = value
        logits = net(self.x)
        out = mg.bce_with_logits(logits, self.y) if loss == "bce" else mg.softmax_cross_entropy(logits, self.y)
        self.graph = mg.Graph(out)
        self.opt = mg.optim.GD(self.graph.parameters, lr=LR)

    def step(self, X, y):
        value = self.graph.backward({self.x: X, self.y: y}, wrt=self.graph.parameters)
        self.opt.step()
        return value


# -- PyTorch, when importable (never a dependency) ----------------------------------------------------

def torch_contender(params, activation, loss):
    try:
        import torch
    except ImportError:
        return None
    # numpy's BLAS uses both cores; on small layers a second torch thread only waits for the first
    # (and, on a loaded machine, spins: 10x slower), so torch gets one thread there.
    torch.set_num_threads(2 if max(p.size for p in params) >= 100_000 else 1)
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    opt = torch.optim.SGD(ps, lr=LR)
    act = torch.tanh if activation == "tanh" else torch.relu

    def step(X, y):
        h = torch.from_numpy(X)
        for i in range(len(ps) // 2):
            h = h @ ps[2 * i] + ps[2 * i + 1]
            if i < len(ps) // 2 - 1:
                h = act(h)
        target = torch.from_numpy(y)
        value = (torch.nn.functional.binary_cross_entropy_with_logits(h, target) if loss == "bce"
                 else torch.nn.functional.cross_entropy(h, target.argmax(dim=1)))
        opt.zero_grad()
        value.backward()
        opt.step()
        return value.item()
    return step


# -- the tasks ----------------------------------------------------------------------------------------

def init_params(sizes, rng, dtype=np.float64):
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params += [mg.nn.xavier_uniform(rng, a, b).astype(dtype), np.zeros(b, dtype)]
    return params


def in_dtype(batches, dtype):
    """The batches with their features (and one-hot/0-1 targets) in ``dtype``; labels stay ints."""
    return [(X.astype(dtype), labels, y.astype(dtype)) for X, labels, y in batches]


def task_xor():
    X, Y = mg.data.xor()
    batches = [(X, Y, Y)]
    return "T1 xor 2-4-4-1 (per step)", [2, 4, 4, 1], "tanh", "bce", batches, 200


def task_digits(rng):
    X, labels = mg.data.digits()
    order = rng.permutation(len(X))
    onehot = np.eye(10)[labels]
    batches = [(X[i], labels[i], onehot[i]) for i in np.array_split(order, len(X) // 64)]
    return "T2 digits 64-128-10 (per epoch)", [64, 128, 10], "relu", "ce", batches, 1


def task_big(rng):
    X = rng.normal(size=(256, 784))
    labels = rng.integers(0, 10, size=256)
    batches = [(X, labels, np.eye(10)[labels])]
    return "T3 784-512-512-10 (per step)", [784, 512, 512, 10], "relu", "ce", batches, 1


def contenders(sizes, activation, loss, dtype, with_torch=True):
    """Step functions ``step(X, labels, y)`` for numpy, minigraph (and torch), same initial weights."""
    params = init_params(sizes, np.random.default_rng(0), dtype)
    np_params = [p.copy() for p in params]
    net = MinigraphNet(params, activation, loss)
    steps = {"numpy": lambda X, lab, y: numpy_step(np_params, X, lab if loss == "ce" else y,
                                                   activation, loss),
             "minigraph": lambda X, lab, y: net.step(X, lab if loss == "ce" else y)}
    torch_step = torch_contender(params, activation, loss) if with_torch else None
    if torch_step:
        steps["torch"] = lambda X, lab, y: torch_step(X, y)
    return steps


def run_task(name, sizes, activation, loss, batches, steps, repeats, dtype):
    """Time `steps` passes over `batches` for each contender, interleaved; return median ratios."""
    batches = in_dtype(batches, dtype)
    who_steps = contenders(sizes, activation, loss, dtype)
    times = {k: [] for k in who_steps}
    last = {}
    for _ in range(repeats):
        for who, step in who_steps.items():
            start = time.perf_counter()
            for _ in range(steps):
                for X, lab, y in batches:
                    last[who] = step(X, lab, y)
            times[who].append(time.perf_counter() - start)
    assert last["minigraph"] == last["numpy"], (name, last)     # same math, same numbers
    assert np.asarray(last["minigraph"]).dtype == dtype, (name, dtype)
    ratios = {who: float(np.median(np.array(times[who]) / np.array(times["numpy"])))
              for who in who_steps if who != "numpy"}
    return last["numpy"], ratios


def peak_memory(sizes, activation, loss, batches, dtype):
    """Peak bytes held during one training step (after two warm-up steps), per contender: its
    weights, copies of data, kept values and gradients, and temporaries; traced from before the
    contender is built, so that everything it owns counts (the batch itself does not)."""
    X, lab, y = in_dtype(batches, dtype)[0]
    peaks = {}
    for who in ("numpy", "minigraph"):
        tracemalloc.start()
        step = contenders(sizes, activation, loss, dtype, with_torch=False)[who]
        step(X, lab, y)
        step(X, lab, y)
        tracemalloc.reset_peak()
        step(X, lab, y)
        peaks[who] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peaks


TARGETS = {("T1", "float64"): 1.5, ("T2", "float32"): 1.15, ("T3", "float32"): 1.05}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    parser.add_argument("--repeats-scale", type=float, default=1.0, help="multiply every task's repeats")
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    print(f"{'task':<34}{'dtype':>8}{'final loss':>12}{'minigraph/numpy':>17}{'target':>8}"
          f"{'torch/numpy':>13}{'peak MB minigraph/numpy':>26}")
    for task, repeats in [(task_xor(), 60), (task_digits(rng), 100), (task_big(rng), 40)]:
        name, *spec, steps = task
        for dtype in (np.float32, np.float64):
            dtype_name = np.dtype(dtype).name
            n = 3 if args.quick else max(3, round(repeats * args.repeats_scale))
            loss, ratios = run_task(name, *spec, steps, n, dtype)
            peaks = peak_memory(*spec, dtype)
            torch_text = f"{ratios['torch']:.2f}x" if "torch" in ratios else "—"
            target = TARGETS.get((name[:2], dtype_name))
            target_text = f"{target:.2f}x" if target else "—"
            memory = (f"{peaks['minigraph'] / 2**20:.3g}/{peaks['numpy'] / 2**20:.3g} = "
                      f"{peaks['minigraph'] / peaks['numpy']:.2f}x")
            print(f"{name:<34}{dtype_name:>8}{loss:>12.6f}{ratios['minigraph']:>16.2f}x{target_text:>8}"
                  f"{torch_text:>13}{memory:>26}", flush=True)


if __name__ == "__main__":
    main()
