"""The character model's training step written by hand in numpy, for comparison with the engine.

One chunk of a one-layer ``CharLSTM``: the forward pass over ``steps`` characters from a given
state, the mean cross-entropy, and backpropagation through time written out as min-char-rnn
writes it, a loop backward over the steps with the gradient of h and c carried from step t to
step t - 1 (each weight's gradient, the sum of one share per step, then taken in one matrix
product over all the steps). It computes exactly what ``chunk.graph.backward(feed, wrt=model.parameters)``
computes (the tests and ``bench/char_lstm_step.py`` assert the loss and gradients equal), so
timing the two compares the engine's bookkeeping with no bookkeeping at all.

    params = {p.name: p.value for p in model.parameters}       # L1.W_x, L1.W_h, L1.b, W_hy, b_y
    loss, grads, state = lstm_step(params, inputs, targets, state)
"""

import numpy as np


def _sigmoid(z):
    return 0.5 * (1 + np.tanh(0.5 * z))


def lstm_step(params, inputs, targets, state):
    """``(loss, grads, final state)`` for (batch, steps) ids ``inputs`` and ``targets`` from
    ``state = [h, c]``; ``grads`` maps each parameter name to its gradient."""
    W_x, W_h, b, W_hy, b_y = (params[k] for k in ("L1.W_x", "L1.W_h", "L1.b", "W_hy", "b_y"))
    batch, steps = inputs.shape
    n, vocab = W_h.shape[0], W_hy.shape[1]
    h, c = state
    cache = []
    for t in range(steps):                                  # forward, keeping what backward needs
        z = W_x[inputs[:, t]] + h @ W_h + b                 # one-hot @ W_x is a row lookup
        i, f, o = _sigmoid(z[:, :n]), _sigmoid(z[:, n:2 * n]), _sigmoid(z[:, 3 * n:])
        g = np.tanh(z[:, 2 * n:3 * n])
        c_new = f * c + i * g
        tanh_c = np.tanh(c_new)
        cache.append((h, c, i, f, g, o, tanh_c))
        h, c = o * tanh_c, c_new
    hs = np.stack([entry[0] for entry in cache[1:]] + [h])   # (steps, batch, n): h_1 .. h_S
    logits = hs.reshape(-1, n) @ W_hy + b_y                  # step-major, as the engine's
    shifted = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(shifted)
    p /= p.sum(axis=1, keepdims=True)
    rows, labels = np.arange(batch * steps), targets.T.reshape(-1)
    loss = -np.mean(np.log(p[rows, labels]))

    dlogits = p
    dlogits[rows, labels] -= 1
    dlogits /= batch * steps
    grads = {"W_hy": hs.reshape(-1, n).T @ dlogits, "b_y": dlogits.sum(axis=0)}
    dhs = (dlogits @ W_hy.T).reshape(steps, batch, n)
    dh_next, dc_next, dzs = np.zeros_like(h), np.zeros_like(c), []
    for t in reversed(range(steps)):                         # BPTT: from the last step back
        h_prev, c_prev, i, f, g, o, tanh_c = cache[t]
        dh = dhs[t] + dh_next
        dc = dc_next + dh * o * (1 - tanh_c ** 2)
        dz = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                             dc * i * (1 - g ** 2), dh * tanh_c * o * (1 - o)], axis=1)
        dzs.append(dz)
        dh_next, dc_next = dz @ W_h.T, dc * f
    dz = np.concatenate(dzs[::-1])                           # (steps·batch, 4n), step-major
    h_prev = np.concatenate([entry[0] for entry in cache])   # the h each step started from
    x = np.eye(vocab, dtype=W_x.dtype)[inputs.T.reshape(-1)]    # one-hot inputs, step-major
    grads.update({"L1.W_x": x.T @ dz, "L1.W_h": h_prev.T @ dz, "L1.b": dz.sum(axis=0)})
    return float(loss), grads, [h, c]


def torch_step(params, inputs, targets, state):
    """The same step in PyTorch (its autograd does the backward): ``(loss, grads, final state)``
    as ``lstm_step``'s, numpy arrays in and out. Needs ``torch``."""
    import torch
    p = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    n = p["L1.W_h"].shape[0]
    h, c = (torch.tensor(s) for s in state)
    x, tops = torch.tensor(inputs), []
    for t in range(inputs.shape[1]):
        z = p["L1.W_x"][x[:, t]] + h @ p["L1.W_h"] + p["L1.b"]
        i, f, g, o = torch.sigmoid(z[:, :n]), torch.sigmoid(z[:, n:2 * n]), torch.tanh(z[:, 2 * n:3 * n]), \
            torch.sigmoid(z[:, 3 * n:])
        c = f * c + i * g
        h = o * torch.tanh(c)
        tops.append(h)
    logits = torch.cat(tops) @ p["W_hy"] + p["b_y"]
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor(targets.T.reshape(-1)))
    loss.backward()
    return (float(loss.detach()), {k: v.grad.numpy() for k, v in p.items()},
            [h.detach().numpy(), c.detach().numpy()])
