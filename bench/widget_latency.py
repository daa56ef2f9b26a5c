"""How long a slider move takes, kernel side: set the value, until the drawing's HTML is updated.

The graph is a 2-4-4-1 network written with small ops (reshape, concatenate, matmul, add, tanh,
sigmoid, and the squared error spelled out), its first layer built neuron by neuron: 41 boxes.
A slider moves one of the two scalar Inputs. Budget: p95 <= 100 ms.

    python bench/widget_latency.py [changes]
"""

import sys
import time

import numpy as np

import minigraph as mg


def network(seed=0):
    """2-4-4-1: layer 1 neuron by neuron, layers 2 and 3 as matrices; mean squared error."""
    rng = np.random.default_rng(seed)
    x1, x2, y = mg.Input("x1"), mg.Input("x2"), mg.Input("y")
    x = mg.concatenate([mg.reshape(x1, (1,)), mg.reshape(x2, (1,))], name="x")
    neurons = [mg.tanh(mg.matmul(x, mg.Parameter(rng.normal(size=(2, 1)), name=f"fc1.w{j}"))
                       + mg.Parameter([0.0], name=f"fc1.b{j}")) for j in range(4)]
    h = mg.concatenate(neurons)
    h = mg.tanh(h @ mg.Parameter(rng.normal(size=(4, 4)), name="fc2.W") + mg.Parameter(np.zeros(4), name="fc2.b"))
    p = mg.sigmoid(h @ mg.Parameter(rng.normal(size=(4, 1)), name="fc3.W") + mg.Parameter([0.0], name="fc3.b"))
    loss = mg.mean((p - y) ** 2, name="loss")
    return mg.Graph(loss), x1, x2, y


def main(changes=100):
    graph, x1, x2, y = network()
    explorer = mg.widgets.explore(graph, {x1: (-3, 3), x2: (-3, 3)}, feed={x1: 0.5, x2: -0.5, y: [1.0]})
    slider = explorer.sliders[x1]
    times = []
    for value in np.linspace(-3, 3, changes):
        before = explorer.view.value
        start = time.perf_counter()
        slider.value = float(value)
        assert explorer.view.value != before or np.isclose(value, 0.5)
        times.append(1000 * (time.perf_counter() - start))
    p50, p95 = np.percentile(times, [50, 95])
    print(f"{len(graph.nodes)} nodes, {changes} slider changes: "
          f"p50 {p50:.2f} ms, p95 {p95:.2f} ms, max {max(times):.2f} ms (budget: p95 <= 100 ms)")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
