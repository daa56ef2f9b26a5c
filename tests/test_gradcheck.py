"""The gradient checker must catch a wrong backward and name the node it belongs to."""

import numpy as np

import minigraph as mg
from minigraph.gradcheck import check_graph, check_ops, numerical_grad

# a learner's sigmoid with a classic mistake: forgetting the upstream gradient g
wrong_sigmoid = mg.defop("my_sigmoid", lambda x: 1 / (1 + np.exp(-x)),
                         [lambda g, ans, x: ans * (1 - ans)])
right_sigmoid = mg.defop("my_sigmoid", lambda x: 1 / (1 + np.exp(-x)),
                         [lambda g, ans, x: g * ans * (1 - ans)])


def network(sigmoid):
    x = mg.Input("x")
    W = mg.Parameter(np.random.default_rng(0).normal(size=(2, 3)), name="W")
    hidden = sigmoid(x @ W, name="hidden")
    loss = mg.sum(mg.tanh(hidden) * 3.0)
    return mg.Graph(loss), {x: np.array([[0.5, -1.0], [2.0, 0.3]])}


def test_correct_backward_passes_both_checks():
    g, feed = network(right_sigmoid)
    assert check_graph(g, feed).ok and check_ops(g, feed).ok
    assert "< 1e-8" in repr(check_ops(g, feed))        # noise is not printed digit by digit


def test_wrong_backward_is_caught_and_named():
    g, feed = network(wrong_sigmoid)
    whole = check_graph(g, feed)
    assert not whole.ok and whole.bad_node.name in ("x", "W")
    per_op = check_ops(g, feed)
    assert not per_op.ok and per_op.bad_node.name == "hidden"
    assert "MISMATCH at hidden" in repr(per_op) and "<-- wrong" in repr(per_op)


def test_backward_that_raises_or_has_wrong_shape_is_reported_not_raised():
    broken = mg.defop("broken", lambda x: 2 * x, [lambda g, ans, x: np.sum(g)])
    x = mg.Parameter([1.0, 2.0], name="x")
    report = check_ops(mg.Graph(mg.sum(broken(x, name="b"))))
    assert report.bad_node.name == "b" and "expected shape (2,)" in repr(report)


def test_numerical_grad_matches_a_hand_derivative_and_restores_the_value():
    x = mg.Parameter([1.0, -2.0], name="x")
    g = mg.Graph(mg.sum(x ** 3))
    assert np.allclose(numerical_grad(g, x), 3 * np.array([1.0, 4.0]), atol=1e-5)
    assert np.array_equal(x.value, [1.0, -2.0]) and g.forward() == -7.0
