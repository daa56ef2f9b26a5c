"""Chapter 08's claim, checked where PyTorch is installed (it is never a dependency): chapter 03's
2-2-1 sigmoid network gives the same loss and gradients in minigraph and in PyTorch, and so
do its second derivatives (mg.grad twice vs torch.autograd.grad with create_graph=True)."""

import numpy as np
import pytest

import minigraph as mg

torch = pytest.importorskip("torch")

WEIGHTS = {"w11": 0.4, "w21": -0.6, "b1": 0.1, "w12": 0.3, "w22": 0.8, "b2": -0.2,
           "v1": 1.2, "v2": -0.7, "c": 0.05}


def network(P, sigmoid, x1=0.5, x2=-1.0, target=1.0):
    h1 = sigmoid(x1 * P["w11"] + x2 * P["w21"] + P["b1"])
    h2 = sigmoid(x1 * P["w12"] + x2 * P["w22"] + P["b2"])
    out = sigmoid(h1 * P["v1"] + h2 * P["v2"] + P["c"])
    return 0.5 * (out - target) * (out - target)


@pytest.mark.parametrize("seed", range(5))
def test_minigraph_and_pytorch_agree(seed):
    rng = np.random.default_rng(seed)
    weights = {k: v + (rng.normal() if seed else 0.0) for k, v in WEIGHTS.items()}
    P = {k: mg.Parameter(v, name=k) for k, v in weights.items()}
    E = network(P, mg.sigmoid)
    grads = mg.grad(E, list(P.values()))
    second = mg.grad(grads[-1], list(P.values()))          # a row of the Hessian: d/dθ dE/dc
    E_mg, *rest = mg.Graph([E, *grads, *second]).forward()

    T = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in weights.items()}
    E_t = network(T, torch.sigmoid)
    g_t = torch.autograd.grad(E_t, list(T.values()), create_graph=True)
    s_t = torch.autograd.grad(g_t[-1], list(T.values()))
    assert np.isclose(float(E_mg), E_t.item(), rtol=1e-12)
    assert np.allclose([float(v) for v in rest], [g.item() for g in g_t] + [s.item() for s in s_t],
                       rtol=1e-10, atol=1e-14)
