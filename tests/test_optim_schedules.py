"""Learning-rate schedules (``step_decay``, ``cosine_decay``) and ``Scheduled``, by hand."""

import numpy as np
import pytest

import minigraph as mg


def test_step_decay_multiplies_by_the_factor_every_so_many_steps():
    rates = [mg.optim.step_decay(t, 0.5, factor=0.1, every=3) for t in range(8)]
    assert rates == pytest.approx([0.5, 0.5, 0.5, 0.05, 0.05, 0.05, 0.005, 0.005])


def test_cosine_decay_runs_half_a_cosine_from_lr_to_lr_min_and_stays_there():
    # cos(0) = 1, cos(pi/3) = 1/2, cos(pi/2) = 0, cos(pi) = -1
    t = np.array([0, 20, 30, 60, 61, 1000])
    np.testing.assert_allclose(mg.optim.cosine_decay(t, 60, 0.4, lr_min=0.1),
                               [0.4, 0.1 + 0.3 * 0.75, 0.25, 0.1, 0.1, 0.1], rtol=1e-12)
    assert mg.optim.cosine_decay(45, 90, 1.0) == pytest.approx(0.5)


def test_scheduled_sets_the_rate_before_each_step_and_counts_steps():
    w = mg.Parameter(0.0, name="w")
    graph = mg.Graph((w - 3.0) ** 2)                     # gradient 2 (w - 3)
    opt = mg.optim.Scheduled(mg.optim.GD([w], lr=123.0), lambda t: 0.1 / (t + 1))
    expected = 0.0
    for t in range(4):
        graph.backward()
        opt.step()
        expected -= 0.1 / (t + 1) * 2 * (expected - 3)
        assert float(w.value) == pytest.approx(expected) and opt.lr == pytest.approx(0.1 / (t + 1))
    assert opt.t == 4 and opt.params == [w]


def nanogpt_get_lr(it, learning_rate, warmup_iters, lr_decay_iters, min_lr):
    """nanoGPT's train.py get_lr, as written there."""
    import math
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def test_warmup_cosine_is_nanogpts_get_lr():
    rates = [mg.optim.warmup_cosine(t, 6e-4, warmup=10, total=50, lr_min=6e-5) for t in range(60)]
    assert rates == pytest.approx([nanogpt_get_lr(t, 6e-4, 10, 50, 6e-5) for t in range(60)], rel=1e-12)
    assert rates[0] == pytest.approx(6e-4 / 11) and rates[10] == pytest.approx(6e-4) and rates[59] == 6e-5


def test_warmup_cosine_drives_scheduled():
    w = mg.Parameter(0.0, name="w")
    graph = mg.Graph((w - 3.0) ** 2)
    opt = mg.optim.Scheduled(mg.optim.GD([w], lr=1.0), lambda t: mg.optim.warmup_cosine(t, 0.1, 2, 4, 0.0))
    for _ in range(5):
        graph.backward()
        opt.step()
    assert opt.lr == 0.0 and 0 < float(w.value) < 3
