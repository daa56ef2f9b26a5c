"""mg.function: Koehn's worked example (a 2-2-1 sigmoid network on XOR) and Theano's semantics."""

import numpy as np
import pytest

import minigraph as mg


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def koehn_network():
    """Koehn's weights, with his column convention: h = σ(W x + b), y = σ(W2 · h + b2)."""
    x, t = mg.Input("x"), mg.Input("t")
    W = mg.Parameter([[3.0, 4.0], [2.0, 3.0]], name="W")
    b = mg.Parameter([-2.0, -4.0], name="b")
    W2 = mg.Parameter([5.0, -5.0], name="W2")
    b2 = mg.Parameter([-2.0], name="b2")
    h = mg.sigmoid(x @ W.T + b)                    # a batch of rows: (1, 2) @ (2, 2)
    y = mg.sigmoid(h @ W2 + b2)
    error = mg.sum(0.5 * (t - y) ** mg.Constant(2.0))
    return (x, t), (W, b, W2, b2), h, y, error


def test_koehn_forward_and_one_training_step():
    (x, t), params, h, y, error = koehn_network()
    W, b, W2, b2 = params
    lr = 0.1
    grads = mg.grad(error, list(params))
    train = mg.function([x, t], [h, y, error],
                        updates={p: p - lr * g for p, g in zip(params, grads)})
    before = [np.array(p.value) for p in params]
    hidden, prediction, e = train([[1.0, 0.0]], [1.0])
    assert np.allclose(hidden, [[0.731, 0.119]], atol=5e-4)
    assert np.allclose(prediction, [0.7425526], atol=5e-8)
    assert np.isclose(e, 0.5 * (1 - 0.7425526) ** 2, atol=1e-7)

    # Koehn's hand-derived updates (delta rule), independent of the engine
    Wn, bn, W2n, b2n = before
    xv, tv = np.array([1.0, 0.0]), 1.0
    hv = sigmoid(Wn @ xv + bn)
    yv = sigmoid(W2n @ hv + b2n)
    delta2 = (tv - yv) * yv * (1 - yv)              # -d error / dz, at the output
    delta1 = delta2 * W2n * hv * (1 - hv)           # -d error / ds, at the hidden layer
    expected = [Wn + lr * np.outer(delta1, xv), bn + lr * delta1, W2n + lr * delta2 * hv, b2n + lr * delta2]
    for p, want in zip(params, expected):
        assert np.allclose(p.value, want, rtol=1e-12), p.name
    assert np.allclose(W2.value, [5.0 + 0.1 * 0.0492 * 0.731, -5.0 + 0.1 * 0.0492 * 0.119], atol=1e-4)  # Koehn: δ2 = 0.0492


def test_the_same_step_as_backward_and_an_update_by_hand():
    """Compiled and interpreted: ten steps each from the same start give the same Parameters."""
    (x, t), params, h, y, error = koehn_network()
    start = [np.array(p.value) for p in params]
    data = [([[0.0, 0.0]], [0.0]), ([[0.0, 1.0]], [1.0]), ([[1.0, 0.0]], [1.0]), ([[1.0, 1.0]], [0.0])]
    train = mg.function([x, t], error, updates={p: p - 0.5 * g for p, g in zip(params, mg.grad(error, list(params)))})
    compiled = [train(*data[i % 4]) for i in range(10)]
    after = [np.array(p.value) for p in params]
    for p, s in zip(params, start):
        p.value = s
    graph, interpreted = mg.Graph(error), []
    for i in range(10):
        interpreted.append(graph.backward({x: data[i % 4][0], t: data[i % 4][1]}, wrt=list(params)))
        for p in params:
            p.value = p.value - 0.5 * p.grad
    assert np.allclose(compiled, interpreted, rtol=1e-12)
    assert all(np.allclose(p.value, a, rtol=1e-12) for p, a in zip(params, after))
    assert not np.allclose(after[0], start[0])


def test_updates_see_the_old_values():
    a, b = mg.Parameter(1.0, name="a"), mg.Parameter(2.0, name="b")
    swap = mg.function([], [a, b], updates=[(a, b), (b, a)])
    assert [float(v) for v in swap()] == [1.0, 2.0]
    assert (float(a.value), float(b.value)) == (2.0, 1.0)


def test_mistakes_are_explained():
    x, W = mg.Input("x"), mg.Parameter([1.0, 2.0], name="W")
    y = mg.sum(W * x)
    with pytest.raises(mg.GraphError, match="Input.*x.*not among the function's inputs"):
        mg.function([], y)
    with pytest.raises(mg.BadValueError, match="not an Input"):
        mg.function([W], y)
    with pytest.raises(mg.BadValueError, match="not a Parameter"):
        mg.function([x], y, updates={x: x * 2})
    f = mg.function([x], y, updates={W: mg.sum(W)})
    with pytest.raises(mg.BadValueError, match="takes 1 value"):
        f()
    with pytest.raises(mg.ShapeError, match="keep the Parameter's shape"):
        f([1.0, 1.0])
    assert np.allclose(W.value, [1.0, 2.0])        # a refused update changes nothing
    with pytest.raises(mg.BadValueError, match="Graph takes the node.*float64"):
        mg.function([x], mg.Graph(y).forward({x: [1.0, 1.0]}))      # outputs=y.value
    with pytest.raises(mg.BadValueError, match="Input 'x' twice"):
        mg.function([x, x], y)                     # which of the two values would x get?
    with pytest.raises(mg.BadValueError, match="updates 'W' twice"):
        mg.function([x], y, updates=[(W, W * 2), (W, W * 3)])     # which one is the new value?


def test_compiled_code_equals_the_interpreter_on_random_graphs():
    """The fast path fuzzed against the reference: on the engine's random graphs, a function of
    the loss and its mg.grad nodes returns, bit for bit, what Graph.forward computes, at the
    first call and after new feeds and a reassigned Parameter."""
    from test_random_graphs import draw_graph, new_feed, same
    from test_symbolic import wrt_of
    checked = 0
    for seed in range(300):
        loss, drawer = draw_graph(seed)
        wrt = wrt_of(loss, np.random.default_rng(seed))
        if not wrt:
            continue
        outputs = [loss] + mg.grad(loss, wrt)
        inputs = mg.Graph(loss).inputs
        f = mg.function(inputs, outputs)
        for feed in ({n: drawer.feed[n] for n in inputs}, new_feed(drawer, inputs)):
            reference = mg.Graph(outputs)
            reference.invalidate()
            expected = reference.forward(feed)
            got = f(*[feed[n] for n in inputs])
            assert len(got) == len(expected) and all(same(a, b) for a, b in zip(got, expected)), f"seed {seed}"
            straight = f._run()                   # the written-out code itself (a call would fall
            assert all(same(a, b) for a, b in zip(straight, expected)), f"seed {seed}"   # back)
            for p in reference.parameters[:1]:
                p.value = drawer.floats(np.shape(p.value))
        checked += 1
    assert checked >= 290


def test_a_failing_line_is_explained_by_the_interpreter():
    x = mg.Input("x")
    f = mg.function([x], mg.sum(x @ mg.Parameter([[1.0, 2.0]], name="W")))
    with pytest.raises(mg.ShapeError, match="matmul"):
        f([[1.0, 2.0, 3.0]])
    assert "matmul" in f.source and "def _run" in f.source


def test_a_float32_training_step_stays_float32_and_matches_backward():
    """A 2-2-1 sigmoid network in float32 (the default left at float64, Python numbers in the
    formulas): the compiled step's loss and gradients are float32, equal to Graph.backward's
    within float32 rounding, and the Parameters it updates stay float32, step after step."""
    x, t = mg.Input("x"), mg.Input("t")
    W = mg.Parameter(np.array([[3.0, 4.0], [2.0, 3.0]], np.float32), name="W")
    b = mg.Parameter(np.array([-2.0, -4.0], np.float32), name="b")
    W2 = mg.Parameter(np.array([5.0, -5.0], np.float32), name="W2")
    params = [W, b, W2]
    y = mg.sigmoid(mg.sigmoid(x @ W.T + b) @ W2 - 2)
    loss = mg.sum(0.5 * (t - y) ** 2) + 1e-3 * mg.sum(W ** 2)
    grads = mg.grad(loss, params)
    step = mg.function([x, t], [loss] + grads, updates={p: p - 0.5 * g for p, g in zip(params, grads)})
    graph = mg.Graph(loss)
    data = [(np.array([[0.0, 1.0]], np.float32), np.array([1.0], np.float32)),
            (np.array([[1.0, 1.0]], np.float32), np.array([0.0], np.float32))]
    for i in range(4):
        X, T = data[i % 2]
        value = graph.backward({x: X, t: T}, wrt=params)
        expected = [value] + [p.grad for p in params]
        got = step(X, T)
        assert [np.asarray(v).dtype for v in got] == [np.float32] * len(got)
        for a, e in zip(got, expected):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
        assert all(p.value.dtype == np.float32 for p in params)
