"""The fused graph VJPs of layer norm, GELU and softmax: a GPT block's training step compiled by
``mg.function`` gives, bit for bit, the loss and gradients of ``Graph.backward``."""

import math

import numpy as np
import pytest

import minigraph as mg
from test_random_graphs import same


def gpt_block(dtype, rng, B=2, T=5, C=8, n_head=2, V=11):
    """Embedding, layer norm, causal attention (a masked softmax), GELU, linear, cross-entropy."""
    def weight(name, *shape):
        return mg.Parameter((0.3 * rng.standard_normal(shape)).astype(dtype), name=name)
    wte, wpe = weight("wte", V, C), weight("wpe", T, C)
    ln_1, ln_1b, ln_2 = weight("ln_1", C) + 1, weight("ln_1b", C), weight("ln_2", C)
    params = [wte, wpe, weight("W_qkv", C, 3 * C), weight("W_proj", C, C), weight("W_fc", C, 4 * C),
              weight("b_fc", 4 * C), weight("W_out", 4 * C, C), weight("b_out", C)]
    wte, wpe, W_qkv, W_proj, W_fc, b_fc, W_out, b_out = params
    gammas = [mg.Parameter((1 + 0.1 * rng.standard_normal(C)).astype(dtype), name=n) for n in ("g1", "g2")]
    beta = weight("beta", C)
    ids, targets = mg.Input("ids", dtype=np.int64), mg.Input("targets", dtype=np.int64)
    x = mg.reshape(mg.embedding(wte, ids) + wpe, (-1, C))
    size = C // n_head
    q, k, v = (mg.transpose(mg.reshape(part, (-1, T, n_head, size)), (0, 2, 1, 3))
               for part in mg.split(mg.layer_norm(x, gammas[0], beta) @ W_qkv, 3, axis=-1))
    scores = (q @ mg.transpose(k, (0, 1, 3, 2))) * (1.0 / math.sqrt(size))
    heads = mg.softmax(scores, axis=-1, mask=mg.causal_mask(T)) @ v
    x = x + mg.reshape(mg.transpose(heads, (0, 2, 1, 3)), (-1, C)) @ W_proj
    hidden = mg.gelu(mg.linear(mg.layer_norm(x, gammas[1]), W_fc, b_fc))
    x = x + mg.linear(hidden, W_out, b_out)
    loss = mg.softmax_cross_entropy(x @ mg.transpose(wte), targets)
    return (ids, targets), params + gammas + [beta], loss


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_gpt_block_compiled_is_the_interpreter_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    (ids, targets), params, loss = gpt_block(dtype, rng)
    train = mg.function([ids, targets], [loss] + mg.grad(loss, params))
    graph = mg.Graph(loss)
    for step in range(3):
        feed = {ids: rng.integers(0, 11, (2, 5)), targets: rng.integers(0, 11, 10)}
        got = train(feed[ids], feed[targets])
        expected = graph.backward(feed, wrt=params)
        assert same(got[0], expected)
        for p, g in zip(params, got[1:]):
            assert same(g, p.grad), (step, p.name)
        for p in params:                        # a step of training: new values, same for both
            p.value = p.value - dtype(0.1) * p.grad
    for fused in ("layer_norm_grad_x_from", "layer_norm_grad_gamma_from", "layer_norm_grad_beta",
                  "gelu_grad_of_tanh", "softmax_grad"):          # each gradient one op of the step
        assert f"= {fused}(" in train.source
    # each layer norm's centering and scale computed once for its two gradients
    # (rewrites.share_layer_norm_centering)
    assert train.source.count("= layer_norm_centered(") == train.source.count("= layer_norm_grad_x_from(") == 2
    # GELU's tanh computed once, for the forward pass and the gradient (rewrites.keep_gelu_tanh)
    assert train.source.count("= gelu_tanh(") == 1 and "= gelu_of_tanh(" in train.source


def test_a_fused_step_is_named_by_what_it_computes():
    """The generated code names a fused step after its op (tanh_grad_7), not after the node it
    replaced (mul_4 = tanh_grad(...))."""
    import re
    x, t = mg.Input("x"), mg.Input("t", dtype=np.int64)
    W = mg.Parameter(np.full((3, 4), 0.1), name="W")
    loss = mg.softmax_cross_entropy(mg.tanh(x @ W), t)
    (dW,) = mg.grad(loss, [W])
    step = mg.function([x, t], loss, updates={W: W - 0.1 * dW})
    step(np.ones((2, 3)), np.array([0, 1]))
    calls = re.findall(r"^\s+(\w+)_ = \w+\(.*# \S+ = (\w+)\(", step.source, re.MULTILINE)
    fused = [(name, op) for name, op in calls if op in ("tanh_grad", "softmax_ce_grad")]
    assert len(fused) == 2 and all(re.fullmatch(rf"{op}_\d+", name) for name, op in fused), calls
