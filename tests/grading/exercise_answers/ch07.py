"""Chapter 07 (recurrent networks): typical wrong answers and different right answers."""

import random

import numpy as np

import minigraph as mg
from minigraph import recurrent

from minigraph.chapters.recurrent import clip_by_global_norm as engine_clip

from . import wrong


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- answers for 07.rnn_step ----------------------------------------------------------------------

def rnn_step_engine(x, h, W_xh, W_hh, b):
    """The step built from minigraph ops and run by the engine."""
    xs, hs = mg.Input("x"), mg.Input("h")
    out = mg.tanh(mg.linear(xs, mg.Parameter(W_xh), mg.Parameter(b)) + mg.matmul(hs, mg.Parameter(W_hh)))
    return mg.Graph(out).forward({xs: x, hs: h})


def rnn_step_einsum(x, h, W_xh, W_hh, b):
    return np.tanh(np.einsum("ni,ij->nj", x, W_xh) + np.einsum("nk,kj->nj", h, W_hh) + b)


# -- answers for 07.bptt_two_steps --------------------------------------------------------------------

def bptt_numpy(x1, x2, h0, W_xh, W_hh, b, u, slope=True, through=True, transpose_back=True,
               step1=True, step2=True):
    h1 = np.tanh(x1 @ W_xh + h0 @ W_hh + b)
    h2 = np.tanh(x2 @ W_xh + h1 @ W_hh + b)
    dz2 = u * (1 - h2 ** 2) if slope else u
    dh1 = (dz2 @ (W_hh.T if transpose_back else W_hh)) if through else dz2
    dz1 = dh1 * (1 - h1 ** 2) if slope else dh1
    return (h1.T @ dz2 if step2 else 0) + (h0.T @ dz1 if step1 else 0)


def bptt_engine(x1, x2, h0, W_xh, W_hh, b, u):
    """The two steps built with minigraph; the engine's gradient of the shared W_hh."""
    W = mg.Parameter(W_hh)
    h = mg.Constant(h0)
    for x in (x1, x2):
        h = mg.tanh(mg.Constant(x) @ mg.Constant(W_xh) + h @ W + mg.Constant(b))
    mg.Graph(mg.sum(h * mg.Constant(u))).backward()
    return W.grad


def bptt_loop(x1, x2, h0, W_xh, W_hh, b, u):
    """min-char-rnn's style: a loop backward over the steps with dhnext."""
    hs, xs = [h0], [x1, x2]
    for x in xs:
        hs.append(np.tanh(x @ W_xh + hs[-1] @ W_hh + b))
    dW, dhnext = np.zeros_like(W_hh), np.zeros_like(h0)
    for t in (2, 1):
        dh = (u if t == 2 else 0) + dhnext
        dz = dh * (1 - hs[t] * hs[t])
        dW += hs[t - 1].T @ dz
        dhnext = dz @ W_hh.T
    return dW


# -- answers for 07.gate_vjp --------------------------------------------------------------------------

def gate_right(g, ans, z, c):
    s = sigmoid(z)
    return g * c * s * (1 - s), g * s


def gate_via_tanh(g, ans, z, c):
    s = 0.5 * (1 + np.tanh(z / 2))                   # σ(z) written with tanh
    return g * c * s * (1 - s), g * s


def gate_from_ans(g, ans, z, c):
    with np.errstate(invalid="ignore"):             # 0 / 0 where c = 0: the mistake
        s = ans / c
    return g * c * s * (1 - s), g * s


def gate_product_rule_with_ans(g, ans, z, c):
    """ans = σ(z)·c, so σ'(z)·c = σ(z)(1 − σ(z))·c = ans·(1 − σ(z)): right, even where c = 0."""
    s = sigmoid(z)
    return g * ans * (1 - s), g * s


# -- answers for 07.clip_global_norm -----------------------------------------------------------------

def clip_concatenated(grads, max_norm):
    norm = np.linalg.norm(np.concatenate([np.ravel(g) for g in grads]))
    return [g * max_norm / norm for g in grads] if norm > max_norm else [np.array(g) for g in grads]


def clip_in_place(grads, max_norm):
    norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    if norm > max_norm:
        for g in grads:
            g *= max_norm / norm
    return grads


def clip_returns_the_given_arrays(grads, max_norm):
    norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    return [g * (max_norm / norm) for g in grads] if norm > max_norm else grads


def clip_returns_slices(grads, max_norm):
    """g[:] taken for a copy: a view sharing the caller's memory (and an IndexError on a 0-d g)."""
    norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    if norm <= max_norm:
        return [g[:] for g in grads]
    return [g * (max_norm / norm) for g in grads]


def clip_returns_ellipsis_views(grads, max_norm):
    """g[...] taken for a copy: a view, of a 0-d g too."""
    norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    if norm <= max_norm:
        return [g[...] for g in grads]
    return [g * (max_norm / norm) for g in grads]


# -- answers for 07.reber_generator -------------------------------------------------------------------

def reber_walk(rng, transitions=None, choose=None):
    transitions = transitions or mg.data.REBER_AUTOMATON
    symbols, state = ["B"], 0
    while state is not None:
        pairs = transitions[state]
        symbol, state = pairs[choose(pairs) if choose else rng.integers(len(pairs))]
        symbols.append(symbol)
    return "".join(symbols)


def reber_recursive(rng):
    """A different right answer: the automaton as recursive functions, rng.choice at each fork."""
    def state(n):
        if n is None:
            return ""
        symbol, nxt = mg.data.REBER_AUTOMATON[n][rng.choice(len(mg.data.REBER_AUTOMATON[n]))]
        return symbol + state(nxt)
    outer = rng.choice(["T", "P"])
    return f"B{outer}B{state(0)}{outer}E"


BROKEN_AUTOMATON = {**mg.data.REBER_AUTOMATON, 3: (("X", 3), ("S", 5))}


def reber_python_random(rng):
    """Every choice made with Python's random module: legal and varied, but not from rng."""
    outer = random.choice("TP")
    return "B" + outer + reber_walk(rng, choose=lambda pairs: random.randrange(len(pairs))) + outer + "E"


def reber_global_numpy(rng):
    outer = np.random.choice(["T", "P"])
    return "B" + outer + reber_walk(rng, choose=lambda pairs: np.random.randint(len(pairs))) + outer + "E"


def reber_off_by_one(rng):
    """rng.integers(len + 1) folded back with %: the first transition comes twice as often."""
    return embedded(lambda r: reber_walk(r, choose=lambda pairs: r.integers(len(pairs) + 1) % len(pairs)))(rng)


# -- the tables -----------------------------------------------------------------------------------------

def embedded(walk):
    """The answer that wraps ``walk(rng)`` in B, the same T or P on both sides, and E."""
    def answer(rng):
        outer = "TP"[rng.integers(2)]
        return "B" + outer + walk(rng) + outer + "E"
    return answer


def clip_by_norms(grads, max_norm):
    norm = np.sqrt(sum(np.linalg.norm(g) ** 2 for g in grads))
    scale = max_norm / norm if norm > max_norm else 1.0
    return [g * scale for g in grads]


def clip_like_pytorch(grads, max_norm):
    """PyTorch's clip_grad_norm_: the norm guarded by 1e-6, clipped when the factor is below 1."""
    norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    coef = max_norm / (norm + 1e-6)
    return [g * coef if coef < 1 else g.copy() for g in grads]


WRONG = {
    "07.rnn_step": {
        "no tanh": wrong(lambda x, h, W_xh, W_hh, b: x @ W_xh + h @ W_hh + b, "tanh is missing"),
        "no bias": wrong(lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh), "bias", "left out"),
        "no previous state": wrong(lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + b), "previous state", "left out"),
        "W_hh transposed": wrong(lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh.T + b),
                                 "W_hh was transposed"),
        "sigmoid": wrong(lambda x, h, W_xh, W_hh, b: sigmoid(x @ W_xh + h @ W_hh + b), "sigmoid", "tanh"),
        "bias after tanh": wrong(lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh) + b,
                                 "before adding the bias"),
    },
    "07.bptt_two_steps": {
        "only the last step": wrong(lambda *a: bptt_numpy(*a, step1=False), "only the last step",
                                    "step 1 used W_hh too"),
        "only the first step": wrong(lambda *a: bptt_numpy(*a, step2=False), "only the first step"),
        "no tanh slope": wrong(lambda *a: bptt_numpy(*a, slope=False), "slope (1 − h²) is missing"),
        "not back through W_hh": wrong(lambda *a: bptt_numpy(*a, through=False),
                                       "without going back through the matmul with W_hh"),
        "W_hh not transposed": wrong(lambda *a: bptt_numpy(*a, transpose_back=False), "W_hh instead of W_hhᵀ"),
        "transposed gradient": wrong(lambda *a: bptt_numpy(*a).T, "gradient is transposed"),
    },
    "07.gate_vjp": {
        "σ instead of its slope": wrong(lambda g, ans, z, c: (g * c * sigmoid(z), g * sigmoid(z)),
                                        "σ(z) instead of its slope"),
        "slope from ans": wrong(lambda g, ans, z, c: (g * ans * (1 - ans), g * sigmoid(z)),
                                "ans·(1 − ans)", "not σ(z)"),
        "no g": wrong(lambda g, ans, z, c: (c * sigmoid(z) * (1 - sigmoid(z)), sigmoid(z)), "upstream gradient g"),
        "swapped": wrong(lambda g, ans, z, c: gate_right(g, ans, z, c)[::-1], "swapped"),
        "grad_c from z": wrong(lambda g, ans, z, c: (gate_right(g, ans, z, c)[0], g * z), "grad_c used z"),
        "no factor c": wrong(lambda g, ans, z, c: (g * sigmoid(z) * (1 - sigmoid(z)), g * sigmoid(z)),
                             "forgot the factor c"),
        "σ(z) recovered as ans / c": wrong(gate_from_ans, "recovered as ans / c"),
    },
    "07.clip_global_norm": {
        "recurrent.clip_by_global_norm": wrong(lambda grads, m: recurrent.clip_by_global_norm(grads, m)[0], "engine's own clip by the global norm", "mg.recurrent.clip_by_global_norm"),
        "the engine's clip, from its module": wrong(lambda grads, m: engine_clip(grads, m)[0], "engine's own clip"),
        "each array by its own norm": wrong(lambda grads, m: [g * min(1, m / np.linalg.norm(g)) for g in grads],
                                            "its own norm"),
        "np.clip": wrong(lambda grads, m: [np.clip(g, -m, m) for g in grads], "np.clip", "direction"),
        "always rescaled": wrong(lambda grads, m: [g * m / np.sqrt(sum(np.sum(x ** 2) for x in grads))
                                                   for g in grads], "scaled up too"),
        "sum of norms": wrong(lambda grads, m: [g * min(1, m / sum(np.linalg.norm(x) for x in grads))
                                                for g in grads], "sum of the arrays' norms"),
        "no square root": wrong(lambda grads, m: [g * min(1, m / sum(np.sum(x ** 2) for x in grads))
                                                  for g in grads], "square root was forgotten"),
        "L1 norm": wrong(lambda grads, m: [g * min(1, m / sum(np.abs(x).sum() for x in grads)) for g in grads],
                         "L1"),
        "in place": wrong(clip_in_place, "changed the gradients in place"),
        "the given arrays back when the norm is small": wrong(clip_returns_the_given_arrays,
                                                              "returned one of the arrays it was given"),
        "views g[:] back when the norm is small": wrong(clip_returns_slices, "or a view of one",
                                                        "not a copy for numpy arrays"),
        "views g[...] back when the norm is small": wrong(clip_returns_ellipsis_views, "or a view of one",
                                                          "not a copy for numpy arrays"),
    },
    "07.reber_generator": {
        "mg.data.embedded_reber_string": wrong(mg.data.embedded_reber_string, "engine's own reber generator"),
        "mg.data.reber_strings": wrong(lambda rng: mg.data.reber_strings(1, seed=rng)[0], "engine's own reber generator", "mg.data.reber_strings"),
        "not embedded": wrong(lambda rng: reber_walk(rng), "not embedded"),
        "two outer symbols drawn": wrong(lambda rng: "B" + "TP"[rng.integers(2)] + reber_walk(rng)
                                         + "TP"[rng.integers(2)] + "E",
                                         "second-to-last symbol must repeat the second"),
        "one fixed string": wrong(lambda rng: "BTBTXSETE", "all 300 strings are the same"),
        "no final E": wrong(lambda rng: "BT" + reber_walk(rng) + "T", "stops too early"),
        "always T outside": wrong(lambda rng: "BT" + reber_walk(rng) + "TE", "T or P with equal chances"),
        "always the last branch": wrong(embedded(lambda rng: reber_walk(rng, choose=lambda pairs: -1)),
                                        "never emitted", "loops included"),
        "a wrong automaton": wrong(embedded(lambda rng: reber_walk(rng, BROKEN_AUTOMATON)),
                                   "the automaton allows only"),
        "Python's random instead of rng": wrong(reber_python_random, "same seed gave different strings"),
        "np.random instead of rng": wrong(reber_global_numpy, "same seed gave different strings"),
        "first transition twice as likely": wrong(reber_off_by_one, "equal chances"),
    },
}

RIGHT = {
    "07.rnn_step": {"numpy": lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh + b),
                    "the engine": rnn_step_engine, "einsum": rnn_step_einsum},
    "07.bptt_two_steps": {"by hand": bptt_numpy, "the engine": bptt_engine, "a backward loop": bptt_loop},
    "07.gate_vjp": {"σ": gate_right, "σ through tanh": gate_via_tanh, "ans·(1 − σ(z))": gate_product_rule_with_ans},
    "07.clip_global_norm": {"np.linalg.norm of each, then one factor": clip_by_norms,
                            "one concatenated vector": clip_concatenated,
                            "PyTorch's clip_grad_norm_, norm + 1e-6": clip_like_pytorch},
    "07.reber_generator": {"a walk": embedded(reber_walk), "recursive": reber_recursive},
}
