"""Recurrent networks: cells against numpy, unrolled graphs, BPTT against a hand-written
min-char-rnn backward, gradient clipping, spectral radius, Reber training and accuracies."""

import numpy as np
import pytest

import minigraph as mg
from minigraph import recurrent


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def run_step(cell, x, state):
    xs = mg.Input("x")
    states = [mg.Input(f"s{k}") for k in range(len(state))]
    out = cell(xs, tuple(states), t=1)
    feed = {xs: x, **{s: v for s, v in zip(states, state)}}
    values = mg.Graph(list(out)).forward(feed)
    return values if isinstance(values, list) else [values]


@pytest.mark.parametrize("seed", range(5))
def test_an_rnn_step_is_the_formula(seed):
    rng = np.random.default_rng(seed)
    n, n_in, n_h = rng.integers(1, 5), rng.integers(1, 6), rng.integers(1, 6)
    cell = recurrent.RNNCell(n_in, n_h, rng=rng)
    cell.b_h.value = rng.normal(size=n_h)
    x, h = rng.normal(size=(n, n_in)), rng.normal(size=(n, n_h))
    (got,) = run_step(cell, x, [h])
    np.testing.assert_allclose(got, np.tanh(x @ cell.W_xh.value + h @ cell.W_hh.value + cell.b_h.value))


@pytest.mark.parametrize("seed", range(5))
def test_an_lstm_step_is_the_formula(seed):
    rng = np.random.default_rng(seed)
    n, n_in, n_h = rng.integers(1, 5), rng.integers(1, 6), rng.integers(1, 6)
    cell = recurrent.LSTMCell(n_in, n_h, rng=rng)
    x, h, c = rng.normal(size=(n, n_in)), rng.normal(size=(n, n_h)), rng.normal(size=(n, n_h))
    z = x @ cell.W_x.value + h @ cell.W_h.value + cell.b.value
    i, f, g, o = (z[:, k * n_h:(k + 1) * n_h] for k in range(4))
    c_new = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h_new, c_got = run_step(cell, x, [h, c])
    np.testing.assert_allclose(c_got, c_new)
    np.testing.assert_allclose(h_new, sigmoid(o) * np.tanh(c_new))
    assert np.all(cell.b.value[n_h:2 * n_h] == 1.0) and not cell.b.value[:n_h].any()


def test_unrolling_shares_the_parameters_and_grows_linearly():
    model = recurrent.SequenceModel(recurrent.RNNCell(7, 3, rng=0), n_out=7, rng=0)
    sizes = []
    for T in (1, 2, 3, 6):
        graph = model.unroll(T).graph
        sizes.append(len(graph.nodes))
        assert set(graph.parameters) == set(model.parameters)
        assert sum(model.cell.W_hh in n.inputs for n in graph.nodes) == T
        assert [n.name for n in graph.inputs] == [f"x{t}" for t in range(1, T + 1)] + ["target"]
    assert sizes[2] - sizes[1] == sizes[1] - sizes[0] - 1 == (sizes[3] - sizes[2]) / 3   # T = 1 has no concat
    assert model.unroll(3) is model.unroll(3)


@pytest.mark.parametrize("make_cell", [lambda: recurrent.RNNCell(7, 3, rng=1),
                                       lambda: recurrent.LSTMCell(7, 2, rng=1)], ids=["rnn", "lstm"])
def test_bptt_gradients_agree_with_central_differences_and_sum_per_step(make_cell):
    model = recurrent.SequenceModel(make_cell(), n_out=7, rng=2)
    X, targets, _ = recurrent.reber_targets(["BTBPVVETE", "BPBTXSEPE"])
    net = model.unroll(4)
    feed = net.feed(X[:, :4], targets[:, :4])
    report = mg.gradcheck.check_graph(net.graph, feed)
    assert report.ok, str(report)
    W_hh = model.cell.parameters[1]
    uses = [n for n in net.graph.nodes if W_hh in n.inputs]
    shares = [mg.viz.edge_gradient(n, n.inputs.index(W_hh)) for n in uses]
    net.graph.backward(feed)
    np.testing.assert_allclose(sum(shares), W_hh.grad, rtol=1e-12, atol=1e-15)


def min_char_rnn_gradients(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    """min-char-rnn's hand-written BPTT (Karpathy, BSD licence), column vectors, summed loss."""
    xs, hs, ps = {}, {-1: hprev}, {}
    loss = 0.0
    for t, i in enumerate(inputs):
        xs[t] = np.zeros((Wxh.shape[1], 1))
        xs[t][i] = 1
        hs[t] = np.tanh(Wxh @ xs[t] + Whh @ hs[t - 1] + bh)
        y = Why @ hs[t] + by
        ps[t] = np.exp(y) / np.sum(np.exp(y))
        loss += -np.log(ps[t][targets[t], 0])
    grads = [np.zeros_like(W) for W in (Wxh, Whh, Why, bh, by)]
    dhnext = np.zeros_like(hprev)
    for t in reversed(range(len(inputs))):
        dy = ps[t].copy()
        dy[targets[t]] -= 1
        grads[2] += dy @ hs[t].T
        grads[4] += dy
        dhraw = (1 - hs[t] ** 2) * (Why.T @ dy + dhnext)
        grads[3] += dhraw
        grads[0] += dhraw @ xs[t].T
        grads[1] += dhraw @ hs[t - 1].T
        dhnext = Whh.T @ dhraw
    return loss, grads


@pytest.mark.parametrize("seed", range(6))
def test_the_engine_reproduces_min_char_rnns_hand_written_bptt(seed):
    rng = np.random.default_rng(seed)
    V, H, T = 7, int(rng.integers(1, 7)), int(rng.integers(1, 12))
    params = [rng.normal(size=s) * 0.7 for s in [(H, V), (H, H), (V, H), (H, 1), (V, 1)]]
    inputs, targets = rng.integers(V, size=T), rng.integers(V, size=T)
    hprev = rng.normal(size=(H, 1)) * 0.5
    loss, expected = min_char_rnn_gradients(*params, inputs, targets, hprev)

    Wxh, Whh, Why, bh, by = [mg.Parameter(p, name=n) for p, n in zip(params, ["Wxh", "Whh", "Why", "bh", "by"])]
    h, total = mg.Constant(hprev, name="h0"), None
    for t, (i, j) in enumerate(zip(inputs, targets)):
        h = mg.tanh(Wxh @ mg.Constant(np.eye(V)[:, [i]]) + Whh @ h + bh, name=f"h{t + 1}")
        step = mg.softmax_cross_entropy(mg.transpose(Why @ h + by), mg.Constant([j]))
        total = step if total is None else total + step
    graph = mg.Graph(total)
    for _ in range(2):                                # the interpreter, then the unrolled backward
        np.testing.assert_allclose(graph.backward(), loss, rtol=1e-13)
        for node, want in zip([Wxh, Whh, Why, bh, by], expected):
            np.testing.assert_allclose(node.grad, want, rtol=1e-11, atol=1e-13)


def random_gradients(rng):
    """A list of 1-4 arrays of random shapes (0-d to 3-d) and scales, zeros included."""
    shapes = [tuple(rng.integers(1, 4, size=rng.integers(0, 4))) for _ in range(rng.integers(1, 5))]
    scale = 10.0 ** rng.uniform(-3, 3)
    return [rng.normal(size=s) * scale * (rng.random() > 0.2) for s in shapes]


@pytest.mark.parametrize("seed", range(20))
def test_clipping_by_global_norm_caps_the_length_and_keeps_the_direction(seed):
    rng = np.random.default_rng(seed)
    grads, max_norm = random_gradients(rng), 10.0 ** rng.uniform(-1, 1)
    copies = [g.copy() for g in grads]
    clipped, norm = recurrent.clip_by_global_norm(grads, max_norm)
    flat = np.concatenate([np.ravel(g) for g in grads])
    assert norm == pytest.approx(np.linalg.norm(flat))
    new_norm = np.linalg.norm(np.concatenate([np.ravel(g) for g in clipped]))
    assert new_norm == pytest.approx(min(norm, max_norm))
    factor = min(1.0, max_norm / norm) if norm else 1.0
    for g, c, original in zip(grads, clipped, copies):
        assert c.shape == g.shape
        np.testing.assert_allclose(c, g * factor)
        np.testing.assert_array_equal(g, original)               # the inputs are not changed
    assert recurrent.clip_by_global_norm([np.zeros(3)], 1.0)[1] == 0.0


@pytest.mark.parametrize("radius", [0.3, 1.0, 2.5])
def test_spectral_radius_is_set_and_the_gradient_vanishes_or_grows(radius):
    rng = np.random.default_rng(0)
    model = recurrent.SequenceModel(recurrent.RNNCell(7, 8, rng=rng), n_out=7, rng=rng)
    recurrent.set_spectral_radius(model.cell.W_hh, radius)
    assert recurrent.spectral_radius(model.cell.W_hh.value) == pytest.approx(radius)
    norms, c_norms = recurrent.last_step_gradients(model, rng.normal(0, 0.1, size=(1, 30, 7)))
    assert len(norms) == 30 and c_norms == []
    if radius < 1:
        assert norms[0] < 1e-8 * norms[-1]
    if radius > 2:
        assert norms[0] > norms[-1]


def test_an_orthogonal_matrix_is_orthogonal():
    Q = recurrent.orthogonal(np.random.default_rng(3), 6)
    np.testing.assert_allclose(Q @ Q.T, np.eye(6), atol=1e-12)


def test_padding_adds_no_gradient_only_a_constant_factor():
    """A string padded with empty steps gets the same gradients, times rows / padded rows."""
    model = recurrent.SequenceModel(recurrent.LSTMCell(7, 3, rng=4), n_out=7, rng=5)
    grads = []
    for length in (8, 12):
        X, targets, mask = recurrent.reber_targets(["BTBTXSETE"], length=length)
        net = model.unroll(length)
        net.graph.backward(net.feed(X, targets), wrt=model.parameters)
        grads.append([p.grad for p in model.parameters])
    for short, padded in zip(*grads):
        np.testing.assert_allclose(padded * 12 / 8, short, rtol=1e-10, atol=1e-14)


class Oracle:
    """A stand-in model that predicts from the automaton itself: exactly right, or, with
    ``forget=True``, unsure (T and P, 0.5 each) at the long-range step."""

    def __init__(self, forget=False):
        self.forget = forget

    def unroll(self, T):
        return self

    def probabilities(self, X):
        p = np.zeros(X.shape)
        for row in range(len(X)):
            symbols = [mg.data.REBER_SYMBOLS[k] for k in X[row].argmax(axis=1)[X[row].any(axis=1)]]
            sets = mg.data.reber_walk("".join(symbols))
            for t in range(len(symbols)):
                legal = sets[t + 1]
                if self.forget and t == len(symbols) - 2:
                    legal = {"T", "P"}
                for s in legal:
                    p[row, t, mg.data.REBER_SYMBOLS.index(s)] = 1 / len(legal)
        return p


def test_the_two_accuracies_count_what_they_say():
    strings = mg.data.reber_strings(50, seed=7)
    assert recurrent.reber_accuracy(Oracle(), strings) == (1.0, 1.0)
    assert recurrent.reber_accuracy(Oracle(forget=True), strings) == (1.0, 0.0)


def test_training_lowers_the_loss_and_learns_the_local_rules():
    rng = np.random.default_rng(0)
    model = recurrent.SequenceModel(recurrent.RNNCell(7, 12, rng=rng), n_out=7, rng=rng)
    run = recurrent.ReberTraining(model, batch=16, lr=0.03)
    losses = run.train(mg.data.reber_strings(1500, seed=1))
    assert run.seen == 1500 and len(losses) == 94
    assert np.mean(losses[-10:]) < 0.6 * np.mean(losses[:5])
    local, _ = recurrent.reber_accuracy(model, mg.data.reber_strings(100, seed=2))
    assert local > 0.9
    curve = recurrent.reber_learning_curve(model, mg.data.reber_strings(64, seed=3),
                                           mg.data.reber_strings(20, seed=4), every=32)
    assert [row[0] for row in curve] == [32, 64] and all(0 <= v <= 1 for row in curve for v in row[1:])


def test_mistakes_with_sequences_are_explained():
    model = recurrent.SequenceModel(recurrent.RNNCell(3, 4, rng=0), 3, rng=0)
    unrolled = model.unroll(5)
    X, targets = np.zeros((2, 5, 3)), np.zeros((2, 5, 3))
    with pytest.raises(mg.ShapeError, match=r"T=5 steps.*X \(batch, 5, n_in\).*got X shape \(2, 3, 3\)"):
        unrolled.feed(X[:, :3], targets[:, :3])
    with pytest.raises(mg.ShapeError, match=r"targets \(batch, 5, n_out\).*targets shape \(2, 5\)"):
        unrolled.feed(X, targets[..., 0])
    assert np.array_equal(unrolled.feed(X.tolist(), targets)[unrolled.xs[0]], X[:, 0])   # lists are fine
    for T in (0, -1, 2.0, True):
        with pytest.raises(mg.BadValueError, match="T, the number of time steps, must be a whole number"):
            model.unroll(T)
    with pytest.raises(mg.BadValueError, match="gradient 2 is None.*backward"):
        recurrent.clip_by_global_norm([np.ones(2), np.ones(3), None], 1.0)


@pytest.mark.parametrize("make_cell", [recurrent.RNNCell, recurrent.LSTMCell])
def test_a_model_built_with_the_default_dtype_float32_stays_float32(make_cell):
    previous = mg.set_default_dtype(np.float32)
    try:
        model = recurrent.SequenceModel(make_cell(3, 4, rng=0), 3, rng=0)
        unrolled = model.unroll(4)
    finally:
        mg.set_default_dtype(previous)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2, 4, 3)).astype(np.float32)
    targets = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=(2, 4))]
    loss = unrolled.graph.backward(unrolled.feed(X, targets))
    assert loss.dtype == np.float32
    assert {p.value.dtype for p in model.parameters} == {p.grad.dtype for p in model.parameters} == {np.dtype(np.float32)}
