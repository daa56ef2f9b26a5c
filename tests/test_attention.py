"""minigraph.attention: scaled dot-product attention as a graph, and the √d experiment."""

import matplotlib
import numpy as np
import pytest

import minigraph as mg
from minigraph.chapters.attention import attention, saturation, saturation_plot, scale_view, softmax_slope

matplotlib.use("Agg")


def by_numpy(q, k, v, scaled=True, allowed=None):
    scores = q @ k.T / (np.sqrt(k.shape[-1]) if scaled else 1.0)
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return p, p @ v


def random_attention(rng, n, m, d, dv, one_query):
    q = rng.normal(size=(d,) if one_query else (n, d))
    return q, rng.normal(size=(m, d)), rng.normal(size=(m, dv))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scaled", [True, False])
def test_attention_computes_what_numpy_computes_and_its_gradients_check(seed, scaled):
    rng = np.random.default_rng(seed)
    n, m, d, dv = rng.integers(1, 6, size=4)
    q, k, v = random_attention(rng, n, m, d, dv, one_query=seed % 2 == 0)
    Q, K, V = mg.Input("q"), mg.Input("K"), mg.Input("V")
    att = attention(Q, K, V, d=d, scaled=scaled)
    graph = mg.Graph([att.weights, att.output])
    weights, output = graph.forward({Q: q, K: k, V: v})
    expected_weights, expected_output = by_numpy(np.atleast_2d(q), k, v, scaled)
    np.testing.assert_allclose(np.atleast_2d(weights), expected_weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.atleast_2d(output), expected_output, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.sum(weights, axis=-1), 1.0, rtol=1e-12)
    loss = mg.sum(att.output * mg.Constant(rng.normal(size=np.shape(output))))
    report = mg.gradcheck.check_graph(mg.Graph(loss), {Q: q, K: k, V: v})
    assert report.ok, report


def test_the_chapters_worked_example_by_hand():
    q, K, V = mg.Input("q"), mg.Input("K"), mg.Input("V")
    att = attention(q, K, V, d=2)
    graph = mg.Graph(mg.sum(att.output))
    graph.backward({q: np.array([2.0, 0.0]), K: np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]),
                    V: np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])})
    e = np.exp([np.sqrt(2), 0.0, -np.sqrt(2)])
    np.testing.assert_allclose(att.scores.value, [np.sqrt(2), 0.0, -np.sqrt(2)])
    np.testing.assert_allclose(att.weights.value, e / e.sum())
    np.testing.assert_allclose(np.round(att.output.value, 3), [0.813, 0.232])
    np.testing.assert_allclose(att.weights.grad, [1.0, 1.0, 2.0])
    np.testing.assert_allclose(np.round(att.scores.grad, 3), [-0.035, -0.008, 0.043])
    assert [n.name for n in (att.scores, att.weights, att.output)] == ["scores", "weights", "output"]


def test_d_is_read_from_the_keys_value_or_asked_for():
    k = mg.Constant(np.eye(4, 3))
    att = attention(mg.Constant(np.ones(3)), k, mg.Constant(np.ones((4, 2))))
    np.testing.assert_allclose(mg.Graph(att.scores).forward(), np.ones(3) @ np.eye(4, 3).T / np.sqrt(3))
    with pytest.raises(mg.BadValueError, match=r"'keys'.*d="):
        attention(mg.Input("q"), mg.Input("keys"), mg.Input("V"))


def test_a_mask_gives_the_hidden_keys_weight_and_gradient_zero():
    rng = np.random.default_rng(3)
    q, k, v = random_attention(rng, 4, 5, 3, 2, one_query=False)
    allowed = rng.random((4, 5)) < 0.6
    allowed[:, 0] = True                                   # every query may look at a key
    allowed[:, -1] = False                                 # and no query at the last one
    Q, K, V = mg.Input("q"), mg.Input("K"), mg.Input("V")
    att = attention(Q, K, V, mask=allowed, d=3)
    mg.Graph(mg.sum(att.output)).backward({Q: q, K: k, V: v})
    expected_weights, expected_output = by_numpy(q, k, v, allowed=allowed)
    np.testing.assert_allclose(att.weights.value, expected_weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(att.output.value, expected_output, rtol=1e-12, atol=1e-15)
    assert np.all(att.weights.value[~allowed] == 0)
    unseen = ~allowed.any(axis=0)                          # keys no query may look at
    assert unseen[-1]
    assert np.all(K.grad[unseen] == 0) and np.all(V.grad[unseen] == 0)


def test_saturation_unscaled_scores_saturate_the_softmax_scaled_ones_do_not():
    dims = (1, 4, 16, 64, 256)
    found = saturation(dims, keys=8, trials=300, rng=1)
    assert set(found) == {"largest", "largest_scaled", "slope", "slope_scaled"}
    assert all(len(values) == len(dims) for values in found.values())
    assert np.all(np.diff(found["largest"]) > 0) and found["largest"][-1] > 0.9
    assert np.all(np.diff(found["slope"][1:]) < 0) and found["slope"][-1] < 0.3 * found["slope"][0]
    assert np.all(np.abs(found["largest_scaled"] - found["largest_scaled"][0]) < 0.1)
    assert np.all(np.abs(found["slope_scaled"] - found["slope_scaled"][0]) < 0.05)
    assert np.all((found["largest"] >= 1 / 8) & (found["largest"] <= 1))
    again = saturation(dims, keys=8, trials=300, rng=1)
    assert all(np.array_equal(found[name], again[name]) for name in found)


def test_saturation_plot_returns_what_it_draws():
    found = saturation_plot(dims=(1, 8, 64), trials=50)
    assert found["largest"].shape == (3,)
    matplotlib.pyplot.close("all")


def test_the_scale_view_follows_its_slider():
    view = scale_view(d=1, keys=8, seed=0)
    assert view.image.value[1:4] == b"PNG" and "d = 1:" in view.readout.value
    first = {name: p.copy() for name, p in view.weights.items()}
    np.testing.assert_allclose(first["q·k"], first["q·k / √d"])      # √1 = 1
    image = view.image.value
    view.slider.value = 512
    assert "d = 512:" in view.readout.value and view.image.value != image
    unscaled, scaled = view.weights["q·k"], view.weights["q·k / √d"]
    assert unscaled.max() > 0.99 and scaled.max() < 0.9
    assert softmax_slope(unscaled) < 1e-3 < softmax_slope(scaled)
    for p in (unscaled, scaled):
        np.testing.assert_allclose(p.sum(), 1.0)
    products = view.k[:, :512] @ view.q[:512]                          # the same vectors, longer
    np.testing.assert_allclose(scaled, np.exp(products / np.sqrt(512)) / np.exp(products / np.sqrt(512)).sum())


def test_softmax_slope_is_the_size_of_the_softmax_jacobian():
    rng = np.random.default_rng(0)
    p = np.exp(rng.normal(size=(3, 5)))
    p /= p.sum(axis=1, keepdims=True)
    for row, slope in zip(p, softmax_slope(p)):
        np.testing.assert_allclose(slope, np.linalg.norm(np.diag(row) - np.outer(row, row)))
    assert softmax_slope(np.array([0.0, 1.0, 0.0])) == 0


def test_two_attentions_in_one_graph_are_told_apart_by_name():
    rng = np.random.default_rng(5)
    q, k, v = random_attention(rng, 2, 3, 4, 2, one_query=False)
    Q, K, V = mg.Input("q"), mg.Input("K"), mg.Input("V")
    first, second = attention(Q, K, V, d=4, name="a"), attention(Q, K, V, d=4, name="b", scaled=False)
    graph = mg.Graph([first.output, second.output])
    out_a, out_b = graph.forward({Q: q, K: k, V: v})
    np.testing.assert_allclose(out_a, by_numpy(q, k, v)[1])
    np.testing.assert_allclose(out_b, by_numpy(q, k, v, scaled=False)[1])
    assert {"a.kᵀ", "a.q·k", "a.√d", "a.scores", "a.weights", "a.output",
            "b.weights", "b.output"} <= {n.name for n in graph.nodes}
    assert first.scores.name == "a.scores" and second.scores.name == "b.q·k"     # no √d: raw scores
