"""Chapter 07's exercise checks, tested by answers: typical wrong ones must be rejected with a
message naming the mistake, different right ones must be accepted.

Data-driven: ``WRONG`` lists, per exercise id, answers a learner might write (each with the key
words its failure message must contain); ``RIGHT`` lists correct answers written in different
ways. Each answer runs through the exercise exactly as in a notebook: ``run_cases`` (the
learner's side) then ``grade`` (the grader's side).
"""

import numpy as np
import pytest

import minigraph as mg
from minigraph import recurrent
from minigraph.grading import ch07, registry
from minigraph.grading.exercise import grade, run_cases


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


# -- answers for 07.reber_generator -------------------------------------------------------------------

def reber_walk(rng, transitions=None, choose=None):
    transitions = transitions or mg.data.REBER_AUTOMATON
    symbols, state = ["B"], 0
    while state is not None:
        pairs = transitions[state]
        symbol, state = pairs[choose(pairs) if choose else rng.integers(len(pairs))]
        symbols.append(symbol)
    return "".join(symbols)


def reber_right(rng):
    outer = "TP"[rng.integers(2)]
    return "B" + outer + reber_walk(rng) + outer + "E"


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


# -- the tables -----------------------------------------------------------------------------------------

WRONG = {
    "07.rnn_step": [
        (lambda x, h, W_xh, W_hh, b: x @ W_xh + h @ W_hh + b, ["tanh is missing"]),
        (lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh), ["bias", "left out"]),
        (lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + b), ["previous state", "left out"]),
        (lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh.T + b), ["W_hh was transposed"]),
        (lambda x, h, W_xh, W_hh, b: sigmoid(x @ W_xh + h @ W_hh + b), ["sigmoid", "tanh"]),
        (lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh) + b, ["before adding the bias"]),
    ],
    "07.bptt_two_steps": [
        (lambda *a: bptt_numpy(*a, step1=False), ["only the last step", "step 1 used W_hh too"]),
        (lambda *a: bptt_numpy(*a, step2=False), ["only the first step"]),
        (lambda *a: bptt_numpy(*a, slope=False), ["slope (1 − h²) is missing"]),
        (lambda *a: bptt_numpy(*a, through=False), ["without going back through the matmul with W_hh"]),
        (lambda *a: bptt_numpy(*a, transpose_back=False), ["W_hh instead of W_hhᵀ"]),
        (lambda *a: bptt_numpy(*a).T, ["gradient is transposed"]),
    ],
    "07.gate_vjp": [
        (lambda g, ans, z, c: (g * c * sigmoid(z), g * sigmoid(z)), ["σ(z) instead of its slope"]),
        (lambda g, ans, z, c: (g * ans * (1 - ans), g * sigmoid(z)), ["ans·(1 − ans)", "not σ(z)"]),
        (lambda g, ans, z, c: (c * sigmoid(z) * (1 - sigmoid(z)), sigmoid(z)), ["upstream gradient g"]),
        (lambda g, ans, z, c: gate_right(g, ans, z, c)[::-1], ["swapped"]),
        (lambda g, ans, z, c: (gate_right(g, ans, z, c)[0], g * z), ["grad_c used z"]),
        (lambda g, ans, z, c: (g * sigmoid(z) * (1 - sigmoid(z)), g * sigmoid(z)), ["forgot the factor c"]),
    ],
    "07.clip_global_norm": [
        (lambda grads, m: [g * min(1, m / np.linalg.norm(g)) for g in grads], ["its own norm"]),
        (lambda grads, m: [np.clip(g, -m, m) for g in grads], ["np.clip", "direction"]),
        (lambda grads, m: [g * m / np.sqrt(sum(np.sum(x ** 2) for x in grads)) for g in grads],
         ["scaled up too"]),
        (lambda grads, m: [g * min(1, m / sum(np.linalg.norm(x) for x in grads)) for g in grads],
         ["sum of the arrays' norms"]),
        (lambda grads, m: [g * min(1, m / sum(np.sum(x ** 2) for x in grads)) for g in grads],
         ["square root was forgotten"]),
        (lambda grads, m: [g * min(1, m / sum(np.abs(x).sum() for x in grads)) for g in grads], ["L1"]),
    ],
    "07.reber_generator": [
        (lambda rng: reber_walk(rng), ["not embedded"]),
        (lambda rng: "B" + "TP"[rng.integers(2)] + reber_walk(rng) + "TP"[rng.integers(2)] + "E",
         ["second-to-last symbol must repeat the second"]),
        (lambda rng: "BTBTXSETE", ["all 300 strings are the same"]),
        (lambda rng: "BT" + reber_walk(rng) + "T", ["stops too early"]),
        (lambda rng: "BT" + reber_walk(rng) + "TE", ["T or P with equal chances"]),
        (lambda rng: (lambda o: "B" + o + reber_walk(rng, choose=lambda pairs: -1) + o + "E")("TP"[rng.integers(2)]),
         ["never emitted", "loops included"]),
        (lambda rng: (lambda o: "B" + o + reber_walk(rng, BROKEN_AUTOMATON) + o + "E")("TP"[rng.integers(2)]),
         ["the automaton allows only"]),
    ],
}

RIGHT = {
    "07.rnn_step": [lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh + b), rnn_step_engine,
                    rnn_step_einsum],
    "07.bptt_two_steps": [bptt_numpy, bptt_engine, bptt_loop],
    "07.gate_vjp": [gate_right, gate_via_tanh],
    "07.clip_global_norm": [lambda grads, m: recurrent.clip_by_global_norm(grads, m)[0],
                            clip_concatenated],
    "07.reber_generator": [reber_right, reber_recursive, mg.data.embedded_reber_string],
}


def judge(exercise_id, answer):
    exercise = registry.find(exercise_id)
    return grade(exercise, run_cases(exercise, answer, seconds=30))


def messages(result):
    return " | ".join([result.message] + [f"{c.message} {c.hint}" for c in result.cases])


def test_every_exercise_of_the_chapter_has_enough_wrong_and_right_answers():
    ids = [e.id for e in registry.exercises("07")]
    assert sorted(ids) == sorted(WRONG) == sorted(RIGHT)
    assert all(len(WRONG[i]) >= 5 and len(RIGHT[i]) >= 2 for i in ids)
    assert sum(e.points for e in registry.exercises("07")) == 13


@pytest.mark.parametrize("exercise_id, answer, words",
                         [(i, a, w) for i, rows in WRONG.items() for a, w in rows],
                         ids=[f"{i}-wrong{k}" for i, rows in WRONG.items() for k in range(len(rows))])
def test_a_typical_wrong_answer_is_rejected_and_its_mistake_named(exercise_id, answer, words):
    result = judge(exercise_id, answer)
    assert result.status == "failed" and result.score < registry.find(exercise_id).points, result
    text = messages(result)
    missing = [w for w in words if w not in text]
    assert not missing, f"the failure does not say {missing}: {text}"


@pytest.mark.parametrize("exercise_id, answer",
                         [(i, a) for i, answers in RIGHT.items() for a in answers],
                         ids=[f"{i}-right{k}" for i, answers in RIGHT.items() for k in range(len(answers))])
def test_a_right_answer_written_another_way_is_accepted(exercise_id, answer):
    result = judge(exercise_id, answer)
    assert result.status == "passed", messages(result)
    assert result.score == registry.find(exercise_id).points


def test_clip_refuses_an_answer_that_edits_the_gradients_in_place_when_it_clips():
    result = judge("07.clip_global_norm", clip_in_place)
    assert result.status == "failed" and "changed the gradients in place" in messages(result)


@pytest.mark.parametrize("exercise_id", sorted(RIGHT))
def test_an_unfinished_stub_is_not_done_yet(exercise_id):
    def stub(*args):
        raise NotImplementedError("Replace this line with your solution.")

    assert judge(exercise_id, stub).status == "not_done"


def test_hints_and_mistake_messages_never_contain_the_answers_code():
    code_fragments = ["@ W_hh", "x @ W_xh", ".T @", "* (1 - s)", "max_norm / norm", "rng.integers",
                      "np.tanh(", "REBER_AUTOMATON["]
    for exercise in registry.exercises("07"):
        hints = [exercise.hint] + [c.get("hint", "") for c in exercise.cases] + [
            text for text, _ in ch07.STEP_MISTAKES + ch07.TWO_STEP_MISTAKES + ch07.GATE_MISTAKES + ch07.CLIP_MISTAKES]
        leaks = [f for f in code_fragments for h in hints if f in h]
        assert not leaks, f"{exercise.id}: a hint shows code {leaks}"
