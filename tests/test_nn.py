"""Layers, initialisations, and the two learning tasks the course promises."""

import numpy as np
import pytest

import minigraph as mg


def train(sizes, activation, X, Y, opt, lr, steps, seed, init=None):
    x, y = mg.Input("x"), mg.Input("y")
    net = mg.nn.MLP(sizes, activation, rng=seed, init=init)
    logits = net(x)
    g = mg.Graph(mg.bce_with_logits(logits, y))
    optimizer = mg.optim.OPTIMIZERS[opt](g.parameters, lr=lr)
    for _ in range(steps):
        g.backward({x: X, y: Y}, wrt=g.parameters)
        optimizer.step()
    return x, logits


def test_xor_is_learned_by_a_2_2_1_network():
    X, Y = mg.data.xor()
    x, logits = train([2, 2, 1], "tanh", X, Y, "gd", lr=0.5, steps=2000, seed=0, init="normal")
    assert mg.nn.binary_accuracy(logits.value, Y) == 1.0


def test_disk_is_learned_to_95_percent_on_fresh_points():
    X, Y = mg.data.disk(400, seed=0)
    x, logits = train([2, 16, 1], "tanh", X, Y, "adam", lr=0.05, steps=1000, seed=0)
    X_test, Y_test = mg.data.disk(400, seed=1)
    accuracy = mg.nn.binary_accuracy(mg.Graph(logits).forward({x: X_test}), Y_test)
    assert accuracy >= 0.95
    assert 0.25 < Y_test.mean() < 0.45            # not a task a constant answer solves


def test_linear_layer_shapes_names_and_value():
    rng = np.random.default_rng(0)
    layer = mg.nn.Linear(3, 2, rng=rng, name="fc")
    assert layer.W.shape == (3, 2) and layer.b.shape == (2,)
    assert [p.name for p in layer.parameters] == ["fc.W", "fc.b"]
    x = mg.Input("x")
    out = mg.Graph(layer(x)).forward({x: np.ones((4, 3))})
    assert np.allclose(out, np.ones((4, 3)) @ layer.W.value + layer.b.value)


def test_mlp_is_deterministic_given_a_seed():
    a, b = mg.nn.MLP([2, 3, 1], rng=7), mg.nn.MLP([2, 3, 1], rng=7)
    assert all(np.array_equal(p.value, q.value) for p, q in zip(a.parameters, b.parameters))
    c = mg.nn.MLP([2, 3, 1], rng=8)
    assert not np.array_equal(a.parameters[0].value, c.parameters[0].value)
    assert repr(a) == "MLP([2, 3, 1], tanh)"


@pytest.mark.parametrize("init,expected_std", [("xavier", np.sqrt(2 / (400 + 300))),
                                               ("he", np.sqrt(2 / 400))])
def test_initialisations_have_their_textbook_variance(init, expected_std):
    W = mg.nn.INITS[init](np.random.default_rng(0), 400, 300)
    assert W.shape == (400, 300)
    assert abs(W.std() / expected_std - 1) < 0.02 and abs(W.mean()) < 0.01 * expected_std * 10


def test_relu_mlp_defaults_to_he_init():
    net = mg.nn.MLP([100, 50, 1], "relu", rng=0)
    assert abs(net.layers[0].W.value.std() / np.sqrt(2 / 100) - 1) < 0.05
