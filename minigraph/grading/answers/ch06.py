"""Chapter 06's reference rules, hand-worked values, judges and typical mistakes
(``content/ch06.py`` has the exercises)."""

import numpy as np

from ..judges.ch06 import judge_rates


def adagrad_update(v, g, s, lr, eps, sign=-1, keep=True, square=True, inside=False, root=np.sqrt,
         per_coordinate=True, late=False):
    """AdaGrad with knobs that turn it into the typical wrong rules."""
    g2 = g * g if square else g
    before = s.get("s", 0.0) if keep else 0.0
    s["s"] = before + (g2 if per_coordinate else np.sum(g2))
    total = before if late else s["s"]
    return v + sign * lr * g / (root(total + eps) if inside else root(total) + eps)


ADAGRAD_MISTAKES = {
    "a step uphill: subtract the step (value - ...), do not add it":
        lambda *a, **k: adagrad_update(*a, **k, sign=1),
    "the squared gradients are not accumulated: keep their "
    "running sum in state and add g² each step":
        lambda *a, **k: adagrad_update(*a, **k, keep=False),
    "the sum adds g, not g²: square the gradient before adding it":
        lambda *a, **k: adagrad_update(*a, **k, square=False),
    "eps is inside the square root: divide by sqrt(s) + eps":
        lambda *a, **k: adagrad_update(*a, **k, inside=True),
    "no square root: divide by sqrt(s) + eps, not by s + eps":
        lambda *a, **k: adagrad_update(*a, **k, root=lambda x: x),
    "one sum for all coordinates (np.sum): AdaGrad "
    "keeps a sum per coordinate":
        lambda *a, **k: adagrad_update(*a, **k, per_coordinate=False),
    "the step divides by the sum before this step's g² is added: "
    "add g² first, then divide":
        lambda *a, **k: adagrad_update(*a, **k, late=True),
}


def rmsprop_update(v, g, s, lr, decay, eps, sign=-1, swap=False, keep=True, whole=False, inside=False, root=np.sqrt,
         start_at_g2=False):
    """RMSProp with knobs that turn it into the typical wrong rules."""
    old, new = (1 - decay, decay) if swap else (decay, 1.0 if whole else 1 - decay)
    if start_at_g2 and "s" not in s:
        old, new = 0.0, 1.0
    s["s"] = (old * s.get("s", 0.0) if keep else 0.0) + new * g * g
    return v + sign * lr * g / (root(s["s"] + eps) if inside else root(s["s"]) + eps)


RMSPROP_MISTAKES = {
    "a step uphill: subtract the step (value - ...), do not add it":
        lambda *a, **k: rmsprop_update(*a, **k, sign=1),
    "decay and 1 - decay are swapped: decay multiplies the old "
    "average, 1 - decay the new g²":
        lambda *a, **k: rmsprop_update(*a, **k, swap=True),
    "the average is not kept between steps: read the previous s "
    "from state and store the new one":
        lambda *a, **k: rmsprop_update(*a, **k, keep=False),
    "eps is inside the square root: divide by sqrt(s) + eps":
        lambda *a, **k: rmsprop_update(*a, **k, inside=True),
    "no square root: divide by sqrt(s) + eps, not by s + eps":
        lambda *a, **k: rmsprop_update(*a, **k, root=lambda x: x),
    "g² is added whole: the new average is decay·s + (1 - decay)·g²":
        lambda *a, **k: rmsprop_update(*a, **k, whole=True),
    "the average starts at the first g² instead of at 0: start s at 0 and blend every g² in, "
    "the first one too": lambda *a, **k: rmsprop_update(*a, **k, start_at_g2=True),
}


def adam_update(v, g, s, lr, beta1, beta2, eps, correct_m=True, correct_s=True, first_t=1, sign=-1,
          swap=False, inside=False, power=True, eps_corrected=False):
    """Adam with knobs that turn it into the typical wrong rules. ``eps_corrected``: eps added
    to √s before the correction, as in the paper's "efficient" form (the correction folded
    into the step size), so that √(1 - beta2^t) divides eps too."""
    if swap:
        beta1, beta2 = beta2, beta1
    t = s["t"] = s.get("t", first_t - 1) + 1
    m = s["m"] = beta1 * s.get("m", 0.0) + (1 - beta1) * g
    q = s["s"] = beta2 * s.get("s", 0.0) + (1 - beta2) * g * g
    m_hat = m / (1 - beta1 ** (t if power else 1)) if correct_m else m
    q_hat = q / (1 - beta2 ** (t if power else 1)) if correct_s else q
    if eps_corrected:
        eps = eps / np.sqrt(1 - beta2 ** t)
    return v + sign * lr * m_hat / (np.sqrt(q_hat + eps) if inside else np.sqrt(q_hat) + eps)


ADAM_MISTAKES = {
    "no bias correction: divide m by 1 - beta1^t and s by 1 - beta2^t":
        lambda *a, **k: adam_update(*a, **k, correct_m=False, correct_s=False),
    "bias correction with t starting at 0: 1 - beta^0 = 0; "
    "count t = 1 at the first step":
        lambda *a, **k: adam_update(*a, **k, first_t=0),
    "beta1 and beta2 are swapped: beta1 averages the gradient, "
    "beta2 its square":
        lambda *a, **k: adam_update(*a, **k, swap=True),
    "bias correction on m only: correct s too":
        lambda *a, **k: adam_update(*a, **k, correct_s=False),
    "bias correction on s only: correct m too":
        lambda *a, **k: adam_update(*a, **k, correct_m=False),
    "eps is inside the square root: divide by sqrt(ŝ) + eps":
        lambda *a, **k: adam_update(*a, **k, inside=True),
    "eps is added to √s before the bias correction (the correction folded into the step "
    "size), so the correction scales eps too: add eps to √ŝ, after correcting s":
        lambda *a, **k: adam_update(*a, **k, eps_corrected=True),
    "a step uphill: subtract the step (value - ...), do not add it":
        lambda *a, **k: adam_update(*a, **k, sign=1),
    "the bias correction divides by 1 - beta at every step: the power t (the step count, "
    "1, 2, 3, ...) is missing from 1 - beta1^t and 1 - beta2^t":
        lambda *a, **k: adam_update(*a, **k, power=False),
}


r2, r3 = np.sqrt(2), np.sqrt(3)

ADAGRAD_TWINS = [                   # the value after each step, worked out by hand
    # s = 9, 25, 169 (and 36, 100, 676): steps 3/3, 4/5, 12/13 -- the same in both coordinates
    [[9.0, 9.0], [8.2, 8.2], [8.2 - 12 / 13, 8.2 - 12 / 13]],
    # s = 1, 2, 3, 4: steps -0.1, 0.1/√2, -0.1/√3, 0.1/2
    [2.1, 2.1 - 0.1 / r2, 2.1 - 0.1 / r2 + 0.1 / r3, 2.1 - 0.1 / r2 + 0.1 / r3 - 0.05],
    # s = 9, 25; eps = 1 outside the square root: steps 0.5·3/4, 0.5·4/6
    [0.625, 0.625 - 1 / 3],
]


RMSPROP_TWINS = [                   # the value after each step, worked out by hand
    # s = 0.5·4 = 2, then 0.5·2 + 0.5·4 = 3: steps 0.1·2/√2, 0.1·2/√3
    [1 - 0.2 / r2, 1 - 0.2 / r2 - 0.2 / r3],
    # s = 0.75·4 = 3, then 0.25·3 + 0.75·1 = 1.5, then 0.25·1.5 = 0.375 (gradient 0: no step)
    [[-0.6 / r3, 1 - 0.6 / r3], [-0.6 / r3 + 0.3 / np.sqrt(1.5), 1 - 0.6 / r3 + 0.3 / np.sqrt(1.5)],
     [-0.6 / r3 + 0.3 / np.sqrt(1.5), 1 - 0.6 / r3 + 0.3 / np.sqrt(1.5)]],
    # eps = 1 outside the root: s = 0.1·9 = 0.9 -> step 0.5·3/(√0.9 + 1)
    [-1.5 / (np.sqrt(0.9) + 1)],
]


ADAM_TWINS = [                   # the value after each step, worked out by hand
    # a constant gradient: m̂ = 1 and ŝ = 1 at every step, so each step is exactly lr
    [-0.1, -0.2, -0.3],
    # m = 1, ŝ: s = 0.25·4 = 1, ŝ = 4 -> step 0.2·2/2; then m = 0.5·1 - 0.5 = 0, step 0
    # then m = 0.5·0 + 0.5·8 = 4, m̂ = 4/0.875; s = 0.75·(0.75 + 0.25) + 0.25·64 = 16.75, ŝ = 16.75/0.578125
    [[0.8, -0.8], [0.8, -0.8],
     [0.8 - 0.2 * (4 / 0.875) / np.sqrt(16.75 / 0.578125),
      -0.8 + 0.2 * (4 / 0.875) / np.sqrt(16.75 / 0.578125)]],
    # eps = 1 outside the root, added after the correction: m̂ = 3, ŝ = 9 -> step 0.5·3/(3 + 1)
    [-0.375],
]


COSINE_RATES = [                   # the rate at each t, worked out by hand
    # cos(0) = 1, cos(pi/2) = 0, cos(pi) = -1: lr_max, the middle, lr_min
    [0.1, 0.05, 0.0],
    # cos(pi/3) = 0.5, cos(2 pi/3) = -0.5: 0.01 + 0.09·0.75, 0.01 + 0.09·0.25
    [0.1, 0.0775, 0.0325, 0.01],
    # cos(pi/4) = √2/2
    [0.5 + 0.25 * (1 + np.sqrt(0.5)), 0.5 + 0.25 * (1 - np.sqrt(0.5))],
]


def cosine_lr(t, total, lr_max, lr_min, f=np.cos, half=0.5, one=1.0, phase=np.pi):
    return lr_min + (lr_max - lr_min) * half * (one + f(phase * t / total))


COSINE_MISTAKES = [
    (lambda t, **k: cosine_lr(t, **k, f=np.sin), "sin instead of cos: the rate must start at lr_max"),
    (lambda t, **k: cosine_lr(t, **k, half=1.0), "the factor 1/2 is missing: (1 + cos) runs from 2 to 0"),
    (lambda t, **k: cosine_lr(t, **k, one=0.0),
     "the 1 + is missing: cos runs from 1 to -1, (1 + cos)/2 from 1 to 0"),
    (lambda t, **k: cosine_lr(t, **k, phase=1.0), "the angle is t / total radians: multiply by pi"),
    (lambda t, **k: cosine_lr(t, **k, f=lambda a: -np.cos(a)), "upside down: the rate should fall from "
                                                           "lr_max, (1 + cos) not (1 - cos)"),
    (lambda t, total, lr_max, lr_min: cosine_lr(t, total, lr_max, 0.0), "lr_min is ignored: the rate "
                                                                   "must end at lr_min, not 0"),
    (lambda t, **k: cosine_lr(t + 1, **k), "off by one: at t = 0 the rate is lr_max, so use t, not t + 1"),
]


def _same(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True))


def _diagnose(case, got):
    """The message of the one typical mistake whose rates are exactly ``got``, else None
    (also when several give them: the case cannot tell which one was made)."""
    with np.errstate(all="ignore"):
        named = [message for rule, message in COSINE_MISTAKES
                 if _same([rule(t, **case["settings"]) for t in case["inputs"]["steps"]], got)]
    return named[0] if len(named) == 1 else None


def judge_cosine(case, got):
    """Compare rate by rate with the hand-worked ``case["expected"]`` (a hidden case: the
    reference's rates); name a typical mistake."""
    expected = case["expected"] if "expected" in case else [
        cosine_lr(t, **case["settings"]) for t in case["inputs"]["steps"]]
    return judge_rates(expected, case, got, _diagnose)
