"""Chapter 06's checks, tested like a test suite: by the wrong answers they must reject (each
with a message naming the mistake) and the different right answers they must accept.

The tables below are the whole test: WRONG maps an exercise id to answers a learner might
write, each with words its message must contain; RIGHT maps it to different correct answers.
The wrong answers are written as a learner would write them, independently of the checker's
own lists of typical mistakes (reusing those would make the test circular).
"""

import math

import numpy as np
import pytest

import minigraph as mg
from minigraph import landscape
from minigraph.grading import ch06, registry
from minigraph.grading.exercise import grade, run_cases


def optimizer(update, **defaults):
    """A learner's optimizer class: the notebook's ``__init__`` (hyper-parameters as attributes),
    and ``update`` as written by the learner."""

    class Answer(mg.optim.Optimizer):
        def __init__(self, params, lr=0.1, **settings):
            super().__init__(params, lr)
            for name, value in {**defaults, **settings}.items():
                setattr(self, name, value)

    Answer.update = update
    return Answer


# -- AdaGrad ------------------------------------------------------------------------------------

def adagrad_right(self, value, grad, state):
    state["s"] = state.get("s", 0.0) + grad ** 2
    return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


def adagrad_right_in_place(self, value, grad, state):
    s = state.setdefault("sum_sq", np.zeros_like(value))
    s += grad * grad
    return value - self.lr * grad / (s ** 0.5 + self.eps)


def adagrad_uphill(self, value, grad, state):
    state["s"] = state.get("s", 0.0) + grad ** 2
    return value + self.lr * grad / (np.sqrt(state["s"]) + self.eps)


def adagrad_no_sum(self, value, grad, state):
    return value - self.lr * grad / (np.sqrt(grad ** 2) + self.eps)


def adagrad_adds_g(self, value, grad, state):
    state["s"] = state.get("s", 0.0) + grad
    return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


def adagrad_eps_inside(self, value, grad, state):
    state["s"] = state.get("s", 0.0) + grad ** 2
    return value - self.lr * grad / np.sqrt(state["s"] + self.eps)


def adagrad_no_root(self, value, grad, state):
    state["s"] = state.get("s", 0.0) + grad ** 2
    return value - self.lr * grad / (state["s"] + self.eps)


def adagrad_one_sum(self, value, grad, state):
    state["s"] = state.get("s", 0.0) + np.sum(grad ** 2)
    return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


def adagrad_divides_first(self, value, grad, state):
    s = state.get("s", 0.0)
    new = value - self.lr * grad / (np.sqrt(s) + self.eps)
    state["s"] = s + grad ** 2
    return new


# -- RMSProp ------------------------------------------------------------------------------------

def rmsprop_right(self, value, grad, state):
    state["s"] = self.decay * state.get("s", 0.0) + (1 - self.decay) * grad ** 2
    return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


def rmsprop_right_lerp(self, value, grad, state):
    avg = state.get("avg", np.zeros_like(value))
    avg = avg + (1 - self.decay) * (grad * grad - avg)          # the same average, written as a lerp
    state["avg"] = avg
    return value - self.lr * grad / (np.sqrt(avg) + self.eps)


def rmsprop_uphill(self, value, grad, state):
    state["s"] = self.decay * state.get("s", 0.0) + (1 - self.decay) * grad ** 2
    return value + self.lr * grad / (np.sqrt(state["s"]) + self.eps)


def rmsprop_swapped(self, value, grad, state):
    state["s"] = (1 - self.decay) * state.get("s", 0.0) + self.decay * grad ** 2
    return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


def rmsprop_forgets(self, value, grad, state):
    s = (1 - self.decay) * grad ** 2
    return value - self.lr * grad / (np.sqrt(s) + self.eps)


def rmsprop_eps_inside(self, value, grad, state):
    state["s"] = self.decay * state.get("s", 0.0) + (1 - self.decay) * grad ** 2
    return value - self.lr * grad / np.sqrt(state["s"] + self.eps)


def rmsprop_no_root(self, value, grad, state):
    state["s"] = self.decay * state.get("s", 0.0) + (1 - self.decay) * grad ** 2
    return value - self.lr * grad / (state["s"] + self.eps)


def rmsprop_whole_square(self, value, grad, state):
    state["s"] = self.decay * state.get("s", 0.0) + grad ** 2
    return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


# -- Adam -----------------------------------------------------------------------------------------

def adam_right(self, value, grad, state):
    t = state["t"] = state.get("t", 0) + 1
    m = state["m"] = self.beta1 * state.get("m", 0.0) + (1 - self.beta1) * grad
    s = state["s"] = self.beta2 * state.get("s", 0.0) + (1 - self.beta2) * grad ** 2
    return value - self.lr * (m / (1 - self.beta1 ** t)) / (np.sqrt(s / (1 - self.beta2 ** t)) + self.eps)


def adam_right_powers(self, value, grad, state):
    if not state:
        state.update(step=0, first=np.zeros_like(value), second=np.zeros_like(value))
    state["step"] += 1
    state["first"] = state["first"] * self.beta1 + grad * (1 - self.beta1)
    state["second"] = state["second"] * self.beta2 + np.square(grad) * (1 - self.beta2)
    m_hat = state["first"] / (1 - np.power(self.beta1, state["step"]))
    s_hat = state["second"] / (1 - np.power(self.beta2, state["step"]))
    return value - self.lr * m_hat / (np.sqrt(s_hat) + self.eps)


def adam_variant(**mistake):
    """Adam as a learner might get it wrong, one mistake at a time."""

    def update(self, value, grad, state):
        b1, b2 = (self.beta2, self.beta1) if mistake.get("swap") else (self.beta1, self.beta2)
        t = state.get("t", 0)
        if not mistake.get("t_from_0"):
            t += 1
        state["t"] = t + 1 if mistake.get("t_from_0") else t
        m = state["m"] = b1 * state.get("m", 0.0) + (1 - b1) * grad
        s = state["s"] = b2 * state.get("s", 0.0) + (1 - b2) * grad ** 2
        m_hat = m if mistake.get("raw_m") else m / (1 - b1 ** t)
        s_hat = s if mistake.get("raw_s") else s / (1 - b2 ** t)
        step = self.lr * m_hat / (np.sqrt(s_hat + self.eps) if mistake.get("eps_inside") else np.sqrt(s_hat) + self.eps)
        return value + step if mistake.get("uphill") else value - step

    return update


# -- cosine ---------------------------------------------------------------------------------------

def cosine_right(t, total, lr_max, lr_min):
    return lr_min + (lr_max - lr_min) * (1 + np.cos(np.pi * t / total)) / 2


def cosine_right_from_top(t, total, lr_max, lr_min):
    return lr_max - (lr_max - lr_min) * (1 - math.cos(math.pi * t / total)) / 2


def cosine_engine(t, total, lr_max, lr_min):
    return mg.optim.cosine_decay(t, total, lr=lr_max, lr_min=lr_min)


# -- the tables -------------------------------------------------------------------------------------

ADAGRAD = dict(eps=1e-8)
RMSPROP = dict(decay=0.9, eps=1e-8)
ADAM = dict(beta1=0.9, beta2=0.999, eps=1e-8)
L_FAST, B_FAST = (2 / 11) ** 2, (9 / 11) ** 2        # the formula's pair for curvatures 1 and 100

RIGHT = {
    "06.adagrad": [optimizer(adagrad_right, **ADAGRAD), optimizer(adagrad_right_in_place, **ADAGRAD),
                   mg.optim.AdaGrad],
    "06.rmsprop": [optimizer(rmsprop_right, **RMSPROP), optimizer(rmsprop_right_lerp, **RMSPROP),
                   mg.optim.RMSProp],
    "06.adam": [optimizer(adam_right, **ADAM), optimizer(adam_right_powers, **ADAM), mg.optim.Adam],
    "06.cosine": [cosine_right, cosine_right_from_top, cosine_engine],
    "06.fastest_momentum": [(L_FAST, B_FAST), [0.033, 0.669], np.array([0.032, 0.68]),
                            landscape.best_momentum((100.0, 1.0))],
}

WRONG = {
    "06.adagrad": [
        (optimizer(adagrad_uphill, **ADAGRAD), ["uphill"]),
        (optimizer(adagrad_no_sum, **ADAGRAD), ["not accumulated"]),
        (optimizer(adagrad_adds_g, **ADAGRAD), ["adds g, not g²"]),
        (optimizer(adagrad_eps_inside, **ADAGRAD), ["eps is inside the square root"]),
        (optimizer(adagrad_no_root, **ADAGRAD), ["no square root"]),
        (optimizer(adagrad_one_sum, **ADAGRAD), ["per coordinate"]),
        (optimizer(adagrad_divides_first, **ADAGRAD), ["add g² first"]),
    ],
    "06.rmsprop": [
        (optimizer(rmsprop_uphill, **RMSPROP), ["uphill"]),
        (optimizer(rmsprop_swapped, **RMSPROP), ["swapped"]),
        (optimizer(rmsprop_forgets, **RMSPROP), ["not kept between steps"]),
        (optimizer(rmsprop_eps_inside, **RMSPROP), ["eps is inside the square root"]),
        (optimizer(rmsprop_no_root, **RMSPROP), ["no square root"]),
        (optimizer(rmsprop_whole_square, **RMSPROP), ["added whole"]),
    ],
    "06.adam": [
        (optimizer(adam_variant(raw_m=True, raw_s=True), **ADAM), ["no bias correction"]),
        (optimizer(adam_variant(t_from_0=True), **ADAM), ["t starting at 0"]),
        (optimizer(adam_variant(swap=True), **ADAM), ["beta1 and beta2 are swapped"]),
        (optimizer(adam_variant(raw_s=True), **ADAM), ["on m only"]),
        (optimizer(adam_variant(raw_m=True), **ADAM), ["on s only"]),
        (optimizer(adam_variant(eps_inside=True), **ADAM), ["eps is inside the square root"]),
        (optimizer(adam_variant(uphill=True), **ADAM), ["uphill"]),
    ],
    "06.cosine": [
        (lambda t, total, lr_max, lr_min: lr_min + (lr_max - lr_min) * (1 + np.sin(np.pi * t / total)) / 2,
         ["sin instead of cos"]),
        (lambda t, total, lr_max, lr_min: lr_min + (lr_max - lr_min) * (1 + np.cos(np.pi * t / total)),
         ["factor 1/2 is missing"]),
        (lambda t, total, lr_max, lr_min: lr_min + (lr_max - lr_min) * np.cos(np.pi * t / total) / 2,
         ["1 + is missing"]),
        (lambda t, total, lr_max, lr_min: lr_min + (lr_max - lr_min) * (1 + np.cos(t / total)) / 2,
         ["multiply by pi"]),
        (lambda t, total, lr_max, lr_min: lr_min + (lr_max - lr_min) * (1 - np.cos(np.pi * t / total)) / 2,
         ["upside down"]),
        (lambda t, total, lr_max, lr_min: lr_max * (1 + np.cos(np.pi * t / total)) / 2,
         ["lr_min is ignored"]),
        (lambda t, total, lr_max, lr_min: lr_min + (lr_max - lr_min) * (1 + np.cos(np.pi * (t + 1) / total)) / 2,
         ["off by one"]),
    ],
    "06.fastest_momentum": [
        ((2 / 101, 0.0), ["plain gradient descent"]),
        ((L_FAST, 9 / 11), ["momentum is not squared"]),
        ((2 / 11, B_FAST), ["learning rate is not squared"]),
        (((2 / 101) ** 2, (99 / 101) ** 2), ["without its square root"]),
        ((B_FAST, L_FAST), ["swapped"]),
        ((0.05, 0.5), ["diverges"]),
        ((0.01, 0.6), ["times as many steps"]),
        ((0.0325, 0.67), ["times as many steps"]),                   # close, but 13 % slower
        ((0.03, 1.2), ["momentum between 0 and 1"]),
        (("fast", "slow"), ["two numbers"]),
    ],
}


def results(exercise_id, answer):
    exercise = registry.find(exercise_id)
    with np.errstate(all="ignore"):           # some wrong answers divide by zero, as a learner's would
        return grade(exercise, run_cases(exercise, answer))


def test_every_exercise_has_five_wrong_and_two_right_answers_in_the_tables():
    ids = {e.id for e in registry.exercises("06")}
    assert set(WRONG) == set(RIGHT) == ids
    assert all(len(WRONG[i]) >= 5 and len(RIGHT[i]) >= 2 for i in ids)


@pytest.mark.parametrize("exercise_id, k", [(i, k) for i in RIGHT for k in range(len(RIGHT[i]))])
def test_a_right_answer_passes(exercise_id, k):
    result = results(exercise_id, RIGHT[exercise_id][k])
    assert result.status == "passed", [c.message for c in result.cases]
    assert result.score == registry.find(exercise_id).points


@pytest.mark.parametrize("exercise_id, k", [(i, k) for i in WRONG for k in range(len(WRONG[i]))])
def test_a_wrong_answer_fails_and_its_message_names_the_mistake(exercise_id, k):
    answer, words = WRONG[exercise_id][k]
    result = results(exercise_id, answer)
    assert result.status == "failed" and result.score < registry.find(exercise_id).points
    messages = " | ".join(c.message for c in result.cases if c.status != "pass")
    assert all(word in messages for word in words), messages


def test_the_hand_worked_sequences_are_what_the_engines_optimizers_do():
    """The expected values in the cases were worked out by hand; mg.optim must agree with every
    one (so neither the hand arithmetic nor the engine is wrong)."""
    engine = {"06.adagrad": mg.optim.AdaGrad, "06.rmsprop": mg.optim.RMSProp, "06.adam": mg.optim.Adam}
    for exercise_id, cls in engine.items():
        for case in registry.find(exercise_id).cases:
            p = mg.Parameter(case["inputs"]["value"], name="p")
            opt = cls([p], **case["settings"])
            for grad, want in zip(case["inputs"]["grads"], case["expected"]):
                p.grad = np.array(grad, dtype=float)
                opt.step()
                np.testing.assert_allclose(p.value, want, rtol=1e-12, atol=1e-15)
    for case in ch06.cosine.cases:
        s = case["settings"]
        got = [mg.optim.cosine_decay(t, s["total"], s["lr_max"], s["lr_min"]) for t in case["inputs"]["steps"]]
        np.testing.assert_allclose(got, case["expected"], rtol=1e-12, atol=1e-15)


def test_the_best_momentum_pair_is_the_fastest_on_a_fine_grid():
    """The accepted optimum is really optimal: no pair of a fine grid converges faster."""
    lrs, betas = np.meshgrid(np.linspace(1e-4, 0.04, 401), np.linspace(0, 0.99, 400))
    rates = landscape.momentum_rate(lrs, betas, ch06.CURVATURES)
    best = landscape.momentum_rate(*landscape.best_momentum(ch06.CURVATURES), ch06.CURVATURES)
    assert best <= rates.min() + 1e-9
    assert rates.min() < best + 0.001                              # the grid gets close to it


def test_an_unsolved_stub_is_not_done_and_a_non_optimizer_is_told_what_to_write():
    def stub(*args, **kwargs):
        raise NotImplementedError
    assert results("06.adagrad", optimizer(lambda self, v, g, s: stub())).status == "not_done"
    assert results("06.cosine", stub).status == "not_done"
    wrong_type = results("06.adam", lambda v: v)
    assert wrong_type.status == "failed" and "subclasses mg.optim.Optimizer" in wrong_type.cases[0].message


def in_place(self, value, grad, state):
    value -= self.lr * grad
    return value


@pytest.mark.parametrize("update, words", [(lambda self, v, g, s: None, "did you forget `return`"),
                                           (in_place, "return a new array")])
def test_an_update_that_returns_nothing_or_changes_its_input_is_told_so(update, words):
    result = results("06.adagrad", optimizer(update, **ADAGRAD))
    assert result.status == "failed" and all(words in c.message for c in result.cases)
