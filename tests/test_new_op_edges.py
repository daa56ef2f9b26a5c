"""The edges of chapter 10 and 11's ops and optimizers: 0-d Parameters, float32 kept float32,
non-finite steps refused, and hyper-parameters checked as ``torch.optim`` checks them.

Each test fails on the engine before its fix: clipping skipped 0-d gradients (a numpy scalar,
which ``g *= scale`` rebinds), attention divided float32 scores by a float64 √d, an optimizer
wrote NaN into Parameters, and the bad arguments below went through or failed deep inside.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import minigraph as mg
from minigraph import optim
from minigraph.errors import BadValueError, NonFiniteError


def gradients_of(values):
    """Parameters named p0, p1, ... with the given values, each given ``grad = 10 * value``."""
    params = [mg.Parameter(np.asarray(v, dtype=np.float64), name=f"p{k}") for k, v in enumerate(values)]
    for p in params:
        p.grad = np.asarray(10 * p.value)[()]            # a 0-d gradient is a numpy scalar
    return params


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(-50, 50), st.lists(st.floats(-50, 50), min_size=1, max_size=4)),
                min_size=1, max_size=4),
       st.floats(0.01, 100))
def test_clip_grad_norm_agrees_with_torch_with_0d_parameters_among_them(values, max_norm):
    params = gradients_of(values)
    tensors = [torch.tensor(np.asarray(v, dtype=np.float64), requires_grad=True) for v in values]
    for t, p in zip(tensors, params):
        t.grad = torch.tensor(np.asarray(p.grad, dtype=np.float64))
    norm = optim.clip_grad_norm(params, max_norm)
    expected = torch.nn.utils.clip_grad_norm_(tensors, max_norm)
    assert norm == pytest.approx(float(expected), rel=1e-12, abs=1e-12)
    for t, p in zip(tensors, params):
        assert np.shape(p.grad) == tuple(t.shape)
        np.testing.assert_allclose(p.grad, t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_clip_grad_norm_clips_a_lone_0d_parameter():
    (w,) = gradients_of([6.0])                           # grad 60, as in the issue
    optim.clip_grad_norm([w], 1.0)
    assert float(w.grad) == pytest.approx(1.0, rel=1e-5)


@pytest.mark.parametrize("max_norm", [float("nan"), float("inf"), 0, -1, "1.0", True, None])
def test_clip_grad_norm_refuses_a_max_norm_that_is_not_a_positive_number(max_norm):
    with pytest.raises(BadValueError, match="max_norm must be a finite number > 0"):
        optim.clip_grad_norm(gradients_of([1.0]), max_norm)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_clip_grad_norm_refuses_non_finite_gradients_naming_the_parameter(bad):
    params = gradients_of([1.0, [1.0, 2.0]])
    params[1].grad = np.array([1.0, bad])
    with pytest.raises(NonFiniteError, match="'p1'.*1 NaN or infinite number"):
        optim.clip_grad_norm(params, 1.0)


@pytest.mark.parametrize("make", [
    lambda ps: optim.GD(ps, lr=0.1), lambda ps: optim.Momentum(ps, lr=0.1),
    lambda ps: optim.AdaGrad(ps, lr=0.1), lambda ps: optim.RMSProp(ps, lr=0.1),
    lambda ps: optim.Adam(ps, lr=0.1), lambda ps: optim.AdamW(ps, lr=0.1)])
def test_every_optimizer_moves_0d_parameters_and_refuses_a_non_finite_step(make):
    w, v = mg.Parameter(np.float32(2.0), name="w"), mg.Parameter(np.ones((2, 2), np.float32), name="v")
    opt = make([v, w])
    v.grad, w.grad = np.ones((2, 2), np.float32), np.float32(1.0)
    opt.step()
    assert w.value.shape == () and w.value.dtype == np.float32 and float(w.value) < 2.0
    before_w, before_v = w.value.copy(), v.value.copy()
    state = {p: dict(s) for p, s in opt.state.items()}
    v.grad, w.grad = np.ones((2, 2), np.float32), np.float32(np.inf)
    with pytest.raises(NonFiniteError, match="Parameter 'w'.*no Parameter was moved"), \
            np.errstate(invalid="ignore"):
        opt.step()
    np.testing.assert_array_equal(w.value, before_w)     # v came first, yet did not move
    np.testing.assert_array_equal(v.value, before_v)
    assert {p: set(s) for p, s in opt.state.items()} == {p: set(s) for p, s in state.items()}
    for p in opt.state:
        for key, value in state[p].items():
            np.testing.assert_array_equal(opt.state[p][key], value)


@pytest.mark.parametrize("setting, message", [
    (dict(lr=float("inf")), "learning rate"), (dict(lr=float("nan")), "learning rate"),
    (dict(lr=-1e-3), "learning rate"), (dict(beta1=1.0), "beta1"), (dict(beta1=-0.1), "beta1"),
    (dict(beta2=1.5), "beta2"), (dict(beta2=float("nan")), "beta2"), (dict(eps=-1e-8), "eps"),
    (dict(weight_decay=-0.1), "weight_decay"), (dict(beta1="0.9"), "beta1")])
def test_adamw_refuses_what_torch_refuses(setting, message):
    w = mg.Parameter(np.ones(2), name="w")
    with pytest.raises(BadValueError, match=message):
        optim.AdamW([w], **setting)
    name, value = next(iter(setting.items()))
    if name != "weight_decay" and value != float("inf") and not isinstance(value, str):
        torch_setting = ({"betas": (value, 0.999) if name == "beta1" else (0.9, value)}
                         if name.startswith("beta") else setting)
        with pytest.raises(ValueError):                  # PyTorch refuses the same setting
            torch.optim.AdamW([torch.ones(2, requires_grad=True)], **torch_setting)


def test_adamw_accepts_the_edges_torch_accepts():
    w = mg.Parameter(np.ones(2), name="w")
    optim.AdamW([w], lr=0.0, beta1=0.0, beta2=0.0, eps=0.0, weight_decay=0.0)


@pytest.mark.parametrize("make, message", [
    (lambda ps: optim.Momentum(ps, momentum=-0.5), "momentum"),
    (lambda ps: optim.RMSProp(ps, decay=1.5), "decay"), (lambda ps: optim.AdaGrad(ps, eps=-1), "eps")])
def test_the_other_optimizers_check_their_settings(make, message):
    with pytest.raises(BadValueError, match=message):
        make([mg.Parameter(np.ones(2), name="w")])


def test_a_schedule_that_gives_infinity_is_refused():
    opt = optim.Scheduled(optim.GD([mg.Parameter(np.ones(2), name="w")]), lambda t: float("inf"))
    with pytest.raises(BadValueError, match="schedule"):
        opt.step()


@pytest.mark.parametrize("mask", [False, True])
def test_attention_of_float32_stays_float32_values_and_gradients(mask):
    rng = np.random.default_rng(0)
    q, k, v = (mg.Parameter(rng.standard_normal((3, 4)).astype(np.float32), name=n) for n in "qkv")
    att = mg.attention.attention(q, k, v, mask=mg.causal_mask(3) if mask else None)
    graph = mg.Graph(mg.sum(att.output))
    graph.backward()
    for node in (att.scores, att.weights, att.output):
        assert node.value.dtype == np.float32, node.name
    for p in (q, k, v):
        assert p.grad.dtype == np.float32, p.name


def test_attention_of_float64_agrees_with_torch():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((3, 5)) for _ in range(3)]
    att = mg.attention.attention(*(mg.Constant(a) for a in arrays))
    q, k, v = (torch.tensor(a) for a in arrays)
    expected = torch.softmax(q @ k.T / np.sqrt(5), dim=-1) @ v
    np.testing.assert_allclose(mg.Graph(att.output).forward(), expected.numpy(), rtol=1e-13, atol=1e-14)


def test_embedding_takes_a_lone_python_int():
    table = mg.Parameter(np.arange(12.0).reshape(4, 3), name="E")
    row = mg.embedding(table, 2)
    mg.Graph(mg.sum(row)).backward()
    np.testing.assert_array_equal(row.value, [6.0, 7.0, 8.0])
    np.testing.assert_array_equal(table.grad, [[0, 0, 0], [0, 0, 0], [1, 1, 1], [0, 0, 0]])


def test_embedding_still_refuses_float_ids_with_its_own_message():
    table = mg.Parameter(np.zeros((4, 3)), name="E")
    with pytest.raises(mg.GraphError, match="integer ids"):
        mg.Graph(mg.sum(mg.embedding(table, np.array([0.5, 1.0])))).backward()


@pytest.mark.parametrize("gamma_shape", [(2, 4), (1, 1, 4), (3,)])
def test_layer_norm_refuses_a_gamma_that_does_not_fit_x_naming_the_shapes(gamma_shape):
    x = mg.Parameter(np.ones((2, 4)), name="x")
    gamma = mg.Parameter(np.ones(gamma_shape), name="gamma")
    graph = mg.Graph(mg.sum(mg.layer_norm(x, gamma)))
    if gamma_shape == (2, 4):               # the shape of x itself fits (one gain per entry)
        graph.backward()
        return
    with pytest.raises(BadValueError, match=rf"gamma of shape \({gamma_shape[0]},.*give it shape \(4,\)"):
        graph.backward()


@pytest.mark.parametrize("T", [2.5, -1, 0, "3", True, np.float64(3.0)])
def test_causal_mask_refuses_what_is_not_a_number_of_positions(T):
    with pytest.raises(BadValueError, match="whole number >= 1"):
        mg.causal_mask(T)


@pytest.mark.parametrize("T", [1, 3, np.int64(5)])
def test_causal_mask_of_whole_numbers(T):
    np.testing.assert_array_equal(mg.causal_mask(T), np.tril(np.ones((T, T), bool)))
