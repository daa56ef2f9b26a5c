"""Chapter 07's reference answers, judges and typical mistakes (``content/ch07.py`` has the exercises)."""

import numpy as np

from ..content.ch07 import clip_inputs, gate_forward, sigmoid
from ..judges.ch07 import judge_arrays
from ..toolkit.values import decode


def _matches(wrong, got):
    """Does a learner's (encoded) answer equal what a known mistake gives?"""
    if isinstance(wrong, tuple):
        return (isinstance(got, list) and len(got) == len(wrong)
                and all(_matches(w, g) for w, g in zip(wrong, got)))
    try:
        value = decode(got)
    except ValueError:
        return False
    wrong = np.asarray(wrong, dtype=float)
    return (isinstance(value, np.ndarray) and value.shape == wrong.shape
            and bool(np.allclose(value, wrong, rtol=1e-6, atol=1e-9)))


def rnn_step(x, h, W_xh, W_hh, b):
    return np.tanh(x @ W_xh + h @ W_hh + b)


STEP_MISTAKES = dict([
    ("It looks like the tanh is missing: h_t = tanh(x W_xh + h W_hh + b).",
     lambda x, h, W_xh, W_hh, b: x @ W_xh + h @ W_hh + b),
    ("It looks like the bias b was left out.", lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh)),
    ("It looks like the previous state h was left out: the recurrence is the h W_hh term.",
     lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + b)),
    ("It looks like W_hh was transposed: rows are batch entries, so the state (a row) multiplies W_hh "
     "from the left, untransposed.",
     lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh.T + b)),
    ("It looks like a sigmoid was used; the simple RNN squashes with tanh.",
     lambda x, h, W_xh, W_hh, b: sigmoid(x @ W_xh + h @ W_hh + b)),
    ("It looks like the tanh was applied before adding the bias.",
     lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh) + b),
])

def bptt_two_steps(x1, x2, h0, W_xh, W_hh, b, u, *, tanh_slope=True, through=True, transposed=False,
               first=True, last=True):
    """dL/dW_hh for h1 = tanh(x1 W_xh + h0 W_hh + b), h2 = tanh(x2 W_xh + h1 W_hh + b),
    L = sum(u · h2); the keywords switch on the typical mistakes."""
    h1 = np.tanh(x1 @ W_xh + h0 @ W_hh + b)
    h2 = np.tanh(x2 @ W_xh + h1 @ W_hh + b)
    dz2 = u * (1 - h2 ** 2) if tanh_slope else u
    dh1 = dz2 @ (W_hh.T if not transposed else W_hh) if through else dz2
    dz1 = dh1 * (1 - h1 ** 2) if tanh_slope else dh1
    return (h1.T @ dz2 if last else 0) + (h0.T @ dz1 if first else 0)


TWO_STEP_MISTAKES = dict([
    ("It looks like only the last step's use of W_hh counts: step 1 used W_hh too, and its "
     "gradient adds to step 2's.", lambda *a: bptt_two_steps(*a, first=False)),
    ("It looks like only the first step's use of W_hh counts: add step 2's share too.",
     lambda *a: bptt_two_steps(*a, last=False)),
    ("It looks like the tanh's slope (1 − h²) is missing from dz.", lambda *a: bptt_two_steps(*a, tanh_slope=False)),
    ("It looks like the gradient reached h1 without going back through the matmul with W_hh.",
     lambda *a: bptt_two_steps(*a, through=False)),
    ("It looks like W_hh instead of W_hhᵀ carried the gradient back to h1.",
     lambda *a: bptt_two_steps(*a, transposed=True)),
    ("It looks like the gradient is transposed: entry [i, j] belongs to unit i of h and unit j of z.",
     lambda *a: bptt_two_steps(*a).T),
])

def gate_vjp(g, ans, z, c):
    s = sigmoid(z)
    return g * c * s * (1 - s), g * s


GATE_MISTAKES = dict([
    ("It looks like the gradient for z used σ(z) instead of its slope σ(z)(1 − σ(z)).",
     lambda g, ans, z, c: (g * c * sigmoid(z), g * sigmoid(z))),
    ("It looks like ans·(1 − ans) was used as σ'(z): here ans is σ(z)·c, not σ(z).",
     lambda g, ans, z, c: (g * gate_forward(z, c) * (1 - gate_forward(z, c)), g * sigmoid(z))),
    ("It looks like the upstream gradient g was not multiplied in.",
     lambda g, ans, z, c: gate_vjp(np.ones_like(g), None, z, c)),
    ("It looks like the two gradients are swapped: return (grad_z, grad_c).",
     lambda g, ans, z, c: gate_vjp(g, None, z, c)[::-1]),
    ("It looks like grad_c used z instead of the gate's value σ(z).",
     lambda g, ans, z, c: (gate_vjp(g, None, z, c)[0], g * z)),
    ("It looks like grad_z forgot the factor c.",
     lambda g, ans, z, c: (g * sigmoid(z) * (1 - sigmoid(z)), g * sigmoid(z))),
    ("It looks like σ(z) was recovered as ans / c: where c = 0 that is 0 / 0. Compute σ(z) from z.",
     lambda g, ans, z, c: (g * ans * (1 - ans / c), g * ans / c)),
])

def clip_by_global_norm(grads, max_norm):
    norm = np.sqrt(sum(np.sum(g ** 2) for g in grads))
    return [g * min(1.0, max_norm / norm) for g in grads]


CLIP_MISTAKES = [
    ("It looks like each array was clipped by its own norm: the global norm is one number "
     "for all of them together.",
     lambda grads, m: [g * min(1.0, m / np.sqrt(np.sum(g ** 2))) for g in grads]),
    ("It looks like every entry was clipped to [−max_norm, max_norm] (np.clip): that changes the "
     "direction; scale all the arrays by one factor instead.",
     lambda grads, m: [np.clip(g, -m, m) for g in grads]),
    ("It looks like small gradients were scaled up too: clip only when the norm is above max_norm.",
     lambda grads, m: [g * m / np.sqrt(sum(np.sum(x ** 2) for x in grads)) for g in grads]),
    ("It looks like the norm is the sum of the arrays' norms; the global norm is the square root "
     "of the sum of all squared entries.",
     lambda grads, m: [g * min(1.0, m / sum(np.sqrt(np.sum(x ** 2)) for x in grads)) for g in grads]),
    ("It looks like the square root was forgotten: the norm is sqrt(sum of squares).",
     lambda grads, m: [g * min(1.0, m / sum(np.sum(x ** 2) for x in grads)) for g in grads]),
    ("It looks like the sum of absolute values (the L1 norm) was used; the global norm is the L2 norm.",
     lambda grads, m: [g * min(1.0, m / sum(np.sum(np.abs(x)) for x in grads)) for g in grads]),
]


def judge_clip(case, got):
    def named(got):
        with np.errstate(all="ignore"):
            found = [text for text, wrong in CLIP_MISTAKES
                     if all(_matches(w, d) for w, d in zip(wrong(*clip_inputs(case)), got))]
        return found[0] if len(found) == 1 else None          # several: cannot tell which
    return judge_arrays(clip_by_global_norm(*clip_inputs(case)), got, named)
