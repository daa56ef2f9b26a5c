"""One training step three ways: mg.function (compiled), Graph.forward of the same step graph
(interpreted), and Graph.backward with the update by hand (the engine's usual path, generated code
from its second call). Times are the best of several runs, as ratios to the compiled step.

    python bench/compiled_step.py

The step graph is the loss, its mg.grad nodes and the updates W - lr * dW, for Koehn's 2-2-1
sigmoid network on XOR (tiny arrays: the engine's per-op bookkeeping dominates) and for a
64-128-10 tanh MLP on a batch of 256 (numpy's work dominates).
"""

import timeit

import numpy as np

import minigraph as mg


def xor_step():
    x, t = mg.Input("x"), mg.Input("t")
    W = mg.Parameter([[3.0, 4.0], [2.0, 3.0]], name="W")
    b = mg.Parameter([-2.0, -4.0], name="b")
    W2 = mg.Parameter([5.0, -5.0], name="W2")
    b2 = mg.Parameter([-2.0], name="b2")
    y = mg.sigmoid(mg.sigmoid(x @ W.T + b) @ W2 + b2)
    loss = mg.sum(0.5 * (t - y) ** mg.Constant(2.0))
    X, T = mg.data.xor()
    return (x, t), [W, b, W2, b2], loss, (X, T.ravel())


def mlp_step():
    rng = np.random.default_rng(0)
    x, t = mg.Input("x"), mg.Input("t", dtype=int)
    net = mg.nn.MLP([64, 128, 10], activation="tanh", rng=0)
    loss = mg.softmax_cross_entropy(net(x), t)
    return (x, t), net.parameters, loss, (rng.normal(size=(256, 64)), rng.integers(0, 10, 256))


def measure(build, lr=0.1, number=20, repeat=7):
    inputs, params, loss, data = build()
    grads = mg.grad(loss, params)
    updates = [p - lr * g for p, g in zip(params, grads)]
    compiled = mg.function(list(inputs), loss, updates=dict(zip(params, updates)))
    step_graph, loss_graph = mg.Graph([loss] + updates), mg.Graph(loss)
    feed = dict(zip(inputs, data))

    def interpreted():
        values = step_graph.forward(feed)
        for p, new in zip(params, values[1:]):
            p.value = new

    def backward():
        loss_graph.backward(feed, wrt=params)
        for p in params:
            p.value = p.value - lr * p.grad

    ways = {"mg.function (compiled)": lambda: compiled(*data), "Graph.forward of the step graph": interpreted,
            "Graph.backward + update": backward}
    best = {name: min(timeit.repeat(way, number=number, repeat=repeat)) / number for name, way in ways.items()}
    base = best["mg.function (compiled)"]
    print(f"{build.__name__}: {len(step_graph.nodes)} nodes in the step graph, {len(loss_graph.nodes)} in the loss graph")
    for name, seconds in best.items():
        print(f"  {name:<34} {seconds * 1e6:9.0f} µs   {seconds / base:5.2f}x")


if __name__ == "__main__":
    measure(xor_step)
    measure(mlp_step)
