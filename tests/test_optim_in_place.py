"""Adam and AdamW step in arrays they keep (``optim._moved_in_place``): the numbers must be the
textbook formulas', bit for bit, and a refused step must leave the moments as they were."""

import numpy as np
import pytest

import minigraph as mg


def textbook_adamw(value, grads, lr, beta1, beta2, eps, weight_decay):
    """The values after each step, by the formulas as written (new arrays every step)."""
    m = s = 0.0
    values = []
    for t, grad in enumerate(grads, start=1):
        if weight_decay is not None:
            value = value * (1 - lr * weight_decay)
        m = beta1 * m + (1 - beta1) * grad
        s = beta2 * s + (1 - beta2) * grad ** 2
        m_hat, s_hat = m / (1 - beta1 ** t), s / (1 - beta2 ** t)
        value = value - lr * m_hat / (np.sqrt(s_hat) + eps)
        values.append(value)
    return values, m, s


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weight_decay", [None, 0.1])
@pytest.mark.parametrize("seed", range(4))
def test_adam_and_adamw_give_the_textbook_numbers_bit_for_bit(dtype, weight_decay, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 6, rng.integers(1, 4)))
    start = rng.standard_normal(shape).astype(dtype)
    grads = [(rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 3)).astype(dtype) for _ in range(5)]
    settings = dict(lr=float(rng.uniform(1e-4, 0.1)), beta1=float(rng.uniform(0.5, 0.99)),
                    beta2=float(rng.uniform(0.9, 0.999)), eps=float(10.0 ** rng.integers(-8, -3)))
    W = mg.Parameter(start.copy(), name="W")
    if weight_decay is None:
        opt = mg.optim.Adam([W], **settings)
    else:
        opt = mg.optim.AdamW([W], weight_decay=weight_decay, decay=[W], **settings)
    expected, m, s = textbook_adamw(start, grads, weight_decay=weight_decay, **settings)
    for grad, value in zip(grads, expected):
        W.grad = grad.copy()
        opt.step()
        assert W.value.dtype == dtype and np.array_equal(W.value, value)
    assert np.array_equal(opt.state[W]["m"], m) and np.array_equal(opt.state[W]["s"], s)


def test_a_refused_step_leaves_the_moments_as_they_were():
    W, twin = (mg.Parameter(np.ones((2, 3), np.float32), name=n) for n in ("W", "twin"))
    opt, twin_opt = mg.optim.AdamW([W], lr=0.1), mg.optim.AdamW([twin], lr=0.1)
    half = np.full((2, 3), 0.5, np.float32)
    for _ in range(3):                           # from the second step on, the moments are reused arrays
        W.grad, twin.grad = half.copy(), half.copy()
        opt.step(), twin_opt.step()
    m, s = opt.state[W]["m"].copy(), opt.state[W]["s"].copy()
    W.grad = np.full((2, 3), np.inf, np.float32)
    with pytest.raises(mg.NonFiniteError), np.errstate(invalid="ignore"):
        opt.step()
    assert np.array_equal(W.value, twin.value) and opt.state[W]["t"] == 3
    assert np.array_equal(opt.state[W]["m"], m) and np.array_equal(opt.state[W]["s"], s)
    W.grad, twin.grad = half.copy(), half.copy()     # and the next step goes on as if none was refused
    opt.step(), twin_opt.step()
    assert np.array_equal(W.value, twin.value)


@pytest.mark.parametrize("optimizer", [mg.optim.Adam, mg.optim.AdamW])
def test_the_state_holds_only_what_adam_remembers_and_a_kept_moment_keeps_its_numbers(optimizer):
    """The working arrays are not in ``state`` (chapter 06 draws it: t, m and s), and a moment a
    learner keeps from one step (to plot it, say) is never written by a later one."""
    w = mg.Parameter(np.array([1.0, -2.0, 0.5]), name="w")
    graph, opt, kept = mg.Graph(mg.sum(w * w * w)), optimizer([w], lr=0.1), []
    for _ in range(5):
        graph.backward()
        opt.step()
        kept.append({k: (v, np.array(v)) for k, v in opt.state[w].items() if k in ("m", "s")})
    assert set(opt.state[w]) <= {"t", "m", "s", "decays"}
    assert all(np.array_equal(now, then) for step in kept for now, then in step.values())
