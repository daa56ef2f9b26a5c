"""Each optimizer against update sequences worked out by hand.

The loss is (w - 3)², so the gradient is 2 (w - 3); every run starts at w = 0 with lr = 0.1.
"""

import numpy as np
import pytest

import minigraph as mg


def run(optimizer_class, steps=2, **kwargs):
    w = mg.Parameter(0.0, name="w")
    g = mg.Graph((w - 3.0) ** 2)
    opt = optimizer_class(g.parameters, lr=0.1, **kwargs)
    values = []
    for _ in range(steps):
        g.backward()
        opt.step()
        values.append(float(w.value))
    return values


def test_gradient_descent():
    # g0 = -6 -> w1 = 0 + 0.6 = 0.6 ; g1 = 2(0.6 - 3) = -4.8 -> w2 = 0.6 + 0.48 = 1.08
    assert run(mg.optim.GD) == pytest.approx([0.6, 1.08])


def test_momentum():
    # v1 = -0.1*-6 = 0.6, w1 = 0.6 ; g1 = -4.8, v2 = 0.9*0.6 + 0.48 = 1.02, w2 = 1.62
    assert run(mg.optim.Momentum, momentum=0.9) == pytest.approx([0.6, 1.62])


def test_nesterov_momentum():
    # v1 = 0.6, w1 = 0 + 0.9*0.6 + 0.6 = 1.14 ; g1 = 2(1.14-3) = -3.72
    # v2 = 0.9*0.6 + 0.372 = 0.912, w2 = 1.14 + 0.9*0.912 + 0.372 = 2.3328
    assert run(mg.optim.Momentum, momentum=0.9, nesterov=True) == pytest.approx([1.14, 2.3328])


def test_adagrad():
    # s1 = 36, w1 = 0.1*6/6 = 0.1 ; g1 = -5.8, s2 = 36 + 33.64 = 69.64
    # w2 = 0.1 + 0.58/8.345058 = 0.1 + 0.0695022 = 0.1695022
    assert run(mg.optim.AdaGrad, eps=0.0) == pytest.approx([0.1, 0.1695022], abs=1e-7)


def test_rmsprop():
    # s1 = 0.1*36 = 3.6, w1 = 0.6/sqrt(3.6) = 0.3162278 ; g1 = 2(0.3162278-3) = -5.3675445
    # s2 = 0.9*3.6 + 0.1*28.8105 = 6.1210548, w2 = w1 + 0.53675445/2.4740765 = 0.5331795
    assert run(mg.optim.RMSProp, decay=0.9, eps=0.0) == pytest.approx([0.3162278, 0.5331795], abs=1e-6)


def test_adam():
    # t=1: m = -0.6, s = 0.036; m^ = -6, s^ = 36 -> w1 = 0.1
    # t=2: g = -5.8; m = -0.54 - 0.58 = -1.12, s = 0.035964 + 0.03364 = 0.069604
    #      m^ = -1.12/0.19 = -5.8947368, s^ = 0.069604/0.001999 = 34.819410 -> sqrt 5.9008
    #      w2 = 0.1 + 0.1*5.8947368/5.9007974 = 0.1998973
    assert run(mg.optim.Adam, eps=0.0) == pytest.approx([0.1, 0.1998973], abs=1e-6)


def test_a_custom_strategy_is_one_method():
    class HalfStep(mg.optim.Optimizer):
        def update(self, value, grad, state):
            state["calls"] = state.get("calls", 0) + 1
            return value - 0.5 * self.lr * grad
    assert run(HalfStep) == pytest.approx([0.3, 0.3 + 0.05 * 5.4])


def test_step_works_on_arrays_and_changes_the_graph():
    W = mg.Parameter(np.ones((2, 2)), name="W")
    g = mg.Graph(mg.sum(W * W))
    before = g.backward()
    mg.optim.Adam(g.parameters, lr=0.1).step()
    assert np.allclose(W.value, 0.9) and g.forward() < before


@pytest.mark.parametrize("rate", [None, "0.1", -0.5, float("nan"), np.array([0.1, 0.2])])
def test_a_schedule_must_give_a_learning_rate(rate):
    w = mg.Parameter([1.0, 2.0], name="w")
    mg.Graph(mg.sum(w * w)).backward()
    scheduled = mg.optim.Scheduled(mg.optim.GD([w]), lambda t: rate)
    with pytest.raises(mg.BadValueError, match="the schedule of GD gave the learning rate .* at step t=0: it must be a number >= 0"):
        scheduled.step()
    assert np.array_equal(w.value, [1.0, 2.0])


def test_a_step_that_finds_a_missing_gradient_moves_nothing():
    # a Parameter outside the graph comes last: the ones before it must not move either
    w, outside = mg.Parameter(0.0, name="w"), mg.Parameter(5.0, name="outside")
    g = mg.Graph((w - 3.0) ** 2)
    g.backward()
    with pytest.raises(mg.GraphError, match="'outside' has no gradient, so no Parameter was moved"):
        mg.optim.GD([w, outside], lr=0.1).step()
    assert float(w.value) == 0.0


def test_adamw_decays_matrices_not_vectors_by_default_and_only_what_decay_lists():
    """With a zero gradient Adam's step is 0, so what moves is the decay alone: value·(1 - lr·wd)."""
    W, b = mg.Parameter(np.ones((2, 2)), name="W"), mg.Parameter(np.ones(2), name="b")
    for decay, W_after, b_after in [(None, 0.95, 1.0), ([b], 1.0, 0.95)]:
        W.value, b.value = np.ones((2, 2)), np.ones(2)
        opt = mg.optim.AdamW([W, b], lr=0.1, weight_decay=0.5, decay=decay)
        W.grad, b.grad = np.zeros((2, 2)), np.zeros(2)
        opt.step()
        assert np.allclose(W.value, W_after) and np.allclose(b.value, b_after)


def test_adamw_refuses_to_decay_a_parameter_it_does_not_move():
    W, other = mg.Parameter(np.ones((2, 2)), name="W"), mg.Parameter(np.ones((2, 2)), name="other")
    with pytest.raises(mg.BadValueError, match="other"):
        mg.optim.AdamW([W], decay=[other])


def test_clip_grad_norm_scales_all_gradients_together_and_returns_the_norm_before():
    a, b = mg.Parameter([0.0, 0.0], name="a"), mg.Parameter(0.0, name="b")
    a.grad, b.grad = np.array([3.0, 0.0]), np.array(4.0)            # global norm 5
    assert mg.optim.clip_grad_norm([a, b], max_norm=1.0) == 5.0
    assert np.allclose(a.grad, [0.6, 0.0]) and np.isclose(b.grad, 0.8)
    assert mg.optim.clip_grad_norm([a, b], max_norm=10.0) == pytest.approx(1.0, rel=1e-6)
    assert np.allclose(a.grad, [0.6, 0.0])                          # under max_norm: untouched


@pytest.mark.parametrize("seed", range(10))
def test_chapter_07s_clip_and_clip_grad_norm_are_one_formula_with_and_without_eps(seed):
    """``recurrent.clip_by_global_norm`` (new arrays) is ``clip_grad_norm(..., eps=0)`` (in
    place), bit for bit, float32 and float64, clipped or not."""
    from minigraph.chapters import recurrent
    rng = np.random.default_rng(seed)
    dtype = (np.float32, np.float64)[seed % 2]
    grads = [(rng.normal(size=shape) * 10.0 ** rng.uniform(-2, 2)).astype(dtype)
             for shape in [(3, 4), (5,), (2, 2, 2)]]
    max_norm = 10.0 ** rng.uniform(-1, 1)
    params = [mg.Parameter(np.zeros_like(g), name=f"p{k}") for k, g in enumerate(grads)]
    for p, g in zip(params, grads):
        p.grad = g.copy()
    clipped, norm = recurrent.clip_by_global_norm(grads, max_norm)
    assert mg.optim.clip_grad_norm(params, max_norm, eps=0) == norm
    for p, c in zip(params, clipped):
        assert p.grad.dtype == c.dtype == dtype and np.array_equal(p.grad, c)
