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


# -- the ops of attention and of a GPT (chapters 10 and 11), float64, forward and gradients ------

F = torch.nn.functional


def both(build, build_torch, *values, ids=None):
    """The output and the gradients of every input, by minigraph and by PyTorch, of a random
    weighted sum of the output (so that every entry of the output counts, differently)."""
    params = [mg.Parameter(v) for v in values]
    out = build(*params)
    value = mg.Graph(out).forward()
    weights = np.random.default_rng(1).normal(size=np.shape(value))
    mg.Graph(mg.sum(out * mg.Constant(weights))).backward()
    tensors = [torch.tensor(v, requires_grad=True) for v in values]
    out_t = build_torch(*tensors)
    (out_t * torch.tensor(weights)).sum().backward()
    return [value, *(p.grad for p in params)], [out_t.detach().numpy(), *(t.grad.numpy() for t in tensors)]


def assert_agree(ours, theirs):
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("x_shape, y_shape", [
    ((2, 3, 4, 5), (2, 3, 5, 4)),            # attention scores: (B, H, T, d) @ (B, H, d, T)
    ((3, 4, 5), (5, 6)),                     # a stack of rows times one matrix
    ((2, 1, 3, 4), (5, 4, 2)),               # batch axes that broadcast both ways
    ((5,), (2, 5, 3)), ((2, 4, 5), (5,)),    # a vector on either side of a stack
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 2)),
])
def test_batched_matmul_agrees_with_pytorch(x_shape, y_shape):
    rng = np.random.default_rng(0)
    assert_agree(*both(lambda x, y: x @ y, lambda x, y: x @ y,
                       rng.normal(size=x_shape), rng.normal(size=y_shape)))


@pytest.mark.parametrize("shape, mask", [
    ((2, 3, 5, 5), mg.causal_mask(5)),
    ((4, 6), np.random.default_rng(2).random((4, 6)) < 0.5),      # random, with one True per row below
    ((2, 4, 6), np.array([True, False, True, True, False, False])),
    ((3, 4), None),
])
def test_masked_softmax_agrees_with_pytorch_and_gives_masked_places_exactly_0(shape, mask):
    if mask is not None and mask.ndim == 2 and mask.shape[0] == 4:
        mask[:, 0] = True
    x = np.random.default_rng(0).normal(size=shape) * 3
    allowed = torch.tensor(True if mask is None else mask)
    ours, theirs = both(lambda x: mg.softmax(x, mask=mask),
                        lambda x: torch.softmax(x.masked_fill(~allowed, -torch.inf), dim=-1), x)
    assert_agree(ours, theirs)
    if mask is not None:
        forbidden = ~np.broadcast_to(mask, shape)
        assert np.all(ours[0][forbidden] == 0) and np.all(ours[1][forbidden] == 0)


@pytest.mark.parametrize("shape, with_beta", [((3, 4, 6), True), ((5, 8), False), ((7,), True), ((2, 3, 1), True)])
def test_layer_norm_agrees_with_pytorch(shape, with_beta):
    rng = np.random.default_rng(0)
    values = [rng.normal(size=shape) * 2 + 1, rng.normal(size=shape[-1:])] + [rng.normal(size=shape[-1:])] * with_beta
    assert_agree(*both(lambda x, gamma, beta=None: mg.layer_norm(x, gamma, beta),
                       lambda x, gamma, beta=None: F.layer_norm(x, shape[-1:], gamma, beta, eps=1e-5), *values))


def test_gelu_agrees_with_pytorchs_tanh_approximation():
    x = np.concatenate([np.linspace(-8, 8, 41), [0.0, 1e-8, -30.0, 30.0]]).reshape(5, 9)
    assert_agree(*both(mg.gelu, lambda x: F.gelu(x, approximate="tanh"), x))


@pytest.mark.parametrize("ids", [np.array([[1, 2, 1], [0, 1, 4]]), np.array(3), np.array([4, 4, 4, 4]),
                                 np.zeros((2, 0), int)])
def test_embedding_agrees_with_pytorch_and_adds_up_repeated_ids(ids):
    table = np.random.default_rng(0).normal(size=(5, 3))
    ours, theirs = both(lambda t: mg.embedding(t, ids), lambda t: F.embedding(torch.tensor(ids), t), table)
    assert_agree(ours, theirs)
    assert np.array_equal(np.any(ours[1] != 0, axis=1), np.isin(np.arange(5), ids))   # rows picked


def test_adamw_agrees_with_pytorch_with_a_schedule_and_clipping():
    """Ten steps of AdamW on a tiny model, the learning rate from warmup_cosine, gradients
    clipped: the same Parameters as torch.optim.AdamW with the same schedule and clip_grad_norm_.
    The bias (1-D) is not decayed, the matrix is, in both."""
    rng = np.random.default_rng(0)
    W0, b0, x = rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(6, 4))
    W, b = mg.Parameter(W0, name="W"), mg.Parameter(b0, name="b")
    graph = mg.Graph(mg.sum(mg.tanh(x @ W + b) ** 2))
    schedule = lambda t: mg.optim.warmup_cosine(t, lr=0.1, warmup=3, total=8, lr_min=0.01)  # noqa: E731
    opt = mg.optim.Scheduled(mg.optim.AdamW([W, b], lr=0.1, weight_decay=0.5), schedule)
    W_t, b_t = torch.tensor(W0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    opt_t = torch.optim.AdamW([{"params": [W_t]}, {"params": [b_t], "weight_decay": 0.0}], lr=0.1,
                              weight_decay=0.5)
    norms = []
    for t in range(10):
        graph.backward()
        norm = mg.optim.clip_grad_norm([W, b], max_norm=3.5)
        opt.step()
        opt_t.zero_grad()
        torch.sum(torch.tanh(torch.tensor(x) @ W_t + b_t) ** 2).backward()
        norm_t = torch.nn.utils.clip_grad_norm_([W_t, b_t], max_norm=3.5)
        for group in opt_t.param_groups:
            group["lr"] = schedule(t)
        opt_t.step()
        assert norm == pytest.approx(norm_t.item(), rel=1e-12)
        norms.append(norm)
        np.testing.assert_allclose(W.value, W_t.detach().numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(b.value, b_t.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert max(norms) > 3.5 > min(norms)                 # some steps were clipped, some not
