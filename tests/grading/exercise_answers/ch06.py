"""Chapter 06 (optimizers): typical wrong answers and different right answers.

The wrong answers are written as a learner would write them, independently of the checker's own
lists of typical mistakes (reusing those would make the test circular).
"""

import math

import numpy as np

import minigraph as mg
from minigraph import landscape

from . import wrong


def optimizer(update, **defaults):
    """A learner's optimizer class: the notebook's ``__init__`` (hyper-parameters as attributes),
    and ``update`` as written by the learner. Some wrong updates divide by zero; numpy's warning
    would only clutter the test report (the check's message says what went wrong)."""

    class Answer(mg.optim.Optimizer):
        def __init__(self, params, lr=0.1, **settings):
            super().__init__(params, lr)
            for name, value in {**defaults, **settings}.items():
                setattr(self, name, value)

        def update(self, value, grad, state):
            with np.errstate(divide="ignore", invalid="ignore"):
                return update(self, value, grad, state)

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


def adagrad_sum_on_self(self, value, grad, state):
    self.s = getattr(self, "s", 0.0) + grad ** 2           # one sum for every Parameter
    return value - self.lr * grad / (np.sqrt(self.s) + self.eps)


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


def rmsprop_average_on_self(self, value, grad, state):
    self.s = self.decay * getattr(self, "s", 0.0) + (1 - self.decay) * grad ** 2
    return value - self.lr * grad / (np.sqrt(self.s) + self.eps)


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


def adam_counts_on_self(self, value, grad, state):
    self.t = getattr(self, "t", 0) + 1                      # counts every Parameter's update
    m = state["m"] = self.beta1 * state.get("m", 0.0) + (1 - self.beta1) * grad
    s = state["s"] = self.beta2 * state.get("s", 0.0) + (1 - self.beta2) * grad ** 2
    return value - self.lr * (m / (1 - self.beta1 ** self.t)) / (np.sqrt(s / (1 - self.beta2 ** self.t)) + self.eps)


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
BEST_MOMENTUM = landscape.best_momentum


def fast_pair(mu, L):
    return (2 / (np.sqrt(L) + np.sqrt(mu))) ** 2, ((np.sqrt(L) - np.sqrt(mu)) / (np.sqrt(L) + np.sqrt(mu))) ** 2


def fast_pair_through_kappa(mu, L):
    rk = math.sqrt(L / mu)
    return [4 / (mu * (rk + 1) ** 2), ((rk - 1) / (rk + 1)) ** 2]


def root_rate(mu, L):
    return (math.sqrt(L / mu) - 1) / (math.sqrt(L / mu) + 1)


def fast_pair_searched(mu, L):
    """Refine a grid search around the best rate with ``momentum_rate`` (no formula)."""
    lrs, betas = np.linspace(0.1, 6.0, 119) / L, np.linspace(0.0, 0.999, 334)
    for _ in range(4):
        rates = landscape.momentum_rate(lrs[:, None], betas[None, :], (mu, L))
        i, j = np.unravel_index(np.argmin(rates), rates.shape)
        lr_step, beta_step = lrs[1] - lrs[0], betas[1] - betas[0]
        lrs = np.linspace(lrs[i] - lr_step, lrs[i] + lr_step, 41)
        betas = np.linspace(max(betas[j] - beta_step, 0.0), min(betas[j] + beta_step, 0.999), 41)
    return lrs[20], betas[20]


def rmsprop_starts_at_g2(self, value, grad, state):
    state["s"] = self.decay * state["s"] + (1 - self.decay) * grad ** 2 if "s" in state else grad ** 2
    return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


def adam_fixed_correction(self, value, grad, state):
    state["m"] = self.beta1 * state.get("m", 0.0) + (1 - self.beta1) * grad
    state["s"] = self.beta2 * state.get("s", 0.0) + (1 - self.beta2) * grad ** 2
    m_hat, s_hat = state["m"] / (1 - self.beta1), state["s"] / (1 - self.beta2)
    return value - self.lr * m_hat / (np.sqrt(s_hat) + self.eps)


def adam_efficient_form(self, value, grad, state):
    """The paper's "efficient" form: the bias correction folded into the step size, eps added
    to √s of the uncorrected s, so the correction scales eps too."""
    t = state["t"] = state.get("t", 0) + 1
    m = state["m"] = self.beta1 * state.get("m", 0.0) + (1 - self.beta1) * grad
    s = state["s"] = self.beta2 * state.get("s", 0.0) + (1 - self.beta2) * grad ** 2
    lr_t = self.lr * np.sqrt(1 - self.beta2 ** t) / (1 - self.beta1 ** t)
    return value - lr_t * m / (np.sqrt(s) + self.eps)


class AdamFromTheEngine(mg.optim.Adam):
    """The engine's Adam under the learner's name: its update is inherited."""


def gd_in_place(self, value, grad, state):
    value -= self.lr * grad
    return value


# the engine's functions taken before any check runs (a reference kept, another module path)
ENGINE_ADAGRAD_UPDATE = mg.optim.AdaGrad.update


WRONG = {
    "06.adagrad": {
        "the engine's AdaGrad": wrong(mg.optim.AdaGrad, "engine's own AdaGrad update rule", "mg.optim.AdaGrad.update"),
        "the engine's update, kept before the check": wrong(optimizer(lambda self, v, g, s: ENGINE_ADAGRAD_UPDATE(self, v, g, s), **ADAGRAD), "engine's own AdaGrad update rule"),
        "uphill": wrong(optimizer(adagrad_uphill, **ADAGRAD), "uphill"),
        "no running sum": wrong(optimizer(adagrad_no_sum, **ADAGRAD), "not accumulated"),
        "adds g, not its square": wrong(optimizer(adagrad_adds_g, **ADAGRAD), "adds g, not g²"),
        "eps inside the root": wrong(optimizer(adagrad_eps_inside, **ADAGRAD), "eps is inside the square root"),
        "no square root": wrong(optimizer(adagrad_no_root, **ADAGRAD), "no square root"),
        "one sum for all coordinates": wrong(optimizer(adagrad_one_sum, **ADAGRAD), "per coordinate"),
        "divides before adding": wrong(optimizer(adagrad_divides_first, **ADAGRAD), "add g² first"),
        "forgot return": wrong(optimizer(lambda self, value, grad, state: None, **ADAGRAD),
                               "did you forget `return`"),
        "in place": wrong(optimizer(gd_in_place, **ADAGRAD), "return a new array"),
        "the sum kept on self": wrong(optimizer(adagrad_sum_on_self, **ADAGRAD), "keeps something on self"),
    },
    "06.rmsprop": {
        "the engine's RMSProp": wrong(mg.optim.RMSProp, "engine's own RMSProp update rule"),
        "the average starts at the first g²": wrong(optimizer(rmsprop_starts_at_g2, **RMSPROP), "starts at the first g²"),
        "uphill": wrong(optimizer(rmsprop_uphill, **RMSPROP), "uphill"),
        "decay and 1 - decay swapped": wrong(optimizer(rmsprop_swapped, **RMSPROP), "swapped"),
        "average not kept": wrong(optimizer(rmsprop_forgets, **RMSPROP), "not kept between steps"),
        "eps inside the root": wrong(optimizer(rmsprop_eps_inside, **RMSPROP), "eps is inside the square root"),
        "no square root": wrong(optimizer(rmsprop_no_root, **RMSPROP), "no square root"),
        "g² added whole": wrong(optimizer(rmsprop_whole_square, **RMSPROP), "added whole"),
        "the average kept on self": wrong(optimizer(rmsprop_average_on_self, **RMSPROP), "keeps something on self"),
    },
    "06.adam": {
        "the engine's Adam, inherited": wrong(AdamFromTheEngine, "engine's own Adam update rule"),
        "bias correction without the power t": wrong(optimizer(adam_fixed_correction, **ADAM), "power t"),
        "no bias correction": wrong(optimizer(adam_variant(raw_m=True, raw_s=True), **ADAM), "no bias correction"),
        "t from 0": wrong(optimizer(adam_variant(t_from_0=True), **ADAM), "t starting at 0"),
        "betas swapped": wrong(optimizer(adam_variant(swap=True), **ADAM), "beta1 and beta2 are swapped"),
        "m corrected only": wrong(optimizer(adam_variant(raw_s=True), **ADAM), "on m only"),
        "s corrected only": wrong(optimizer(adam_variant(raw_m=True), **ADAM), "on s only"),
        "eps inside the root": wrong(optimizer(adam_variant(eps_inside=True), **ADAM),
                                     "eps is inside the square root"),
        "eps before the bias correction (the paper's efficient form)":
            wrong(optimizer(adam_efficient_form, **ADAM), "eps is added to √s before the bias correction"),
        "uphill": wrong(optimizer(adam_variant(uphill=True), **ADAM), "uphill"),
        "not an optimizer class": wrong(lambda v: v, "subclasses mg.optim.Optimizer"),
        "the step count kept on self": wrong(optimizer(adam_counts_on_self, **ADAM), "keeps something on self"),
    },
    "06.cosine": {
        "the engine's cosine_decay": wrong(cosine_engine, "engine's own cosine schedule", "mg.optim.cosine_decay"),
        "sin": wrong(lambda t, total, lr_max, lr_min: lr_min + (lr_max - lr_min) * (1 + np.sin(np.pi * t / total)) / 2,
                     "sin instead of cos"),
        "no half": wrong(lambda t, total, lr_max, lr_min: lr_min + (lr_max - lr_min) * (1 + np.cos(np.pi * t / total)),
                         "factor 1/2 is missing"),
        "no 1 +": wrong(lambda t, total, lr_max, lr_min: lr_min + (lr_max - lr_min) * np.cos(np.pi * t / total) / 2,
                        "1 + is missing"),
        "no pi": wrong(lambda t, total, lr_max, lr_min: lr_min + (lr_max - lr_min) * (1 + np.cos(t / total)) / 2,
                       "multiply by pi"),
        "upside down": wrong(lambda t, total, lr_max, lr_min:
                             lr_min + (lr_max - lr_min) * (1 - np.cos(np.pi * t / total)) / 2, "upside down"),
        "lr_min ignored": wrong(lambda t, total, lr_max, lr_min: lr_max * (1 + np.cos(np.pi * t / total)) / 2,
                                "lr_min is ignored"),
        "off by one": wrong(lambda t, total, lr_max, lr_min:
                            lr_min + (lr_max - lr_min) * (1 + np.cos(np.pi * (t + 1) / total)) / 2, "off by one"),
    },
    "06.fastest_momentum": {
        "no momentum": wrong(lambda mu, L: (2 / (L + mu), 0.0), "plain gradient descent"),
        "momentum not squared": wrong(lambda mu, L: (fast_pair(mu, L)[0], root_rate(mu, L)), "momentum is not squared"),
        "learning rate not squared": wrong(lambda mu, L: (2 / (math.sqrt(L) + math.sqrt(mu)), fast_pair(mu, L)[1]),
                                           "learning rate is not squared"),
        "curvatures without their square root": wrong(lambda mu, L: ((2 / (L + mu)) ** 2, ((L / mu - 1) / (L / mu + 1)) ** 2),
                                                      "without its square root"),
        "swapped": wrong(lambda mu, L: fast_pair(mu, L)[::-1], "swapped"),
        "diverges": wrong(lambda mu, L: (0.05, 0.5), "diverges"),
        "far too slow": wrong(lambda mu, L: (0.01, 0.6), "times as many steps"),
        "close, but 13 % slower": wrong(lambda mu, L: (0.0325, 0.67), "times as many steps"),
        "the pair for (1, 100) whatever the curvatures": wrong(lambda mu, L: (L_FAST, B_FAST), "times as many steps"),
        "momentum above 1": wrong(lambda mu, L: (0.03, 1.2), "momentum between 0 and 1"),
        "not numbers": wrong(lambda mu, L: ("fast", "slow"), "two numbers"),
        "landscape.best_momentum": wrong(lambda mu, L: landscape.best_momentum((mu, L)),
                                         "engine's own fastest pair", "mg.landscape.best_momentum"),
        "the engine's formula, kept before the check": wrong(lambda mu, L: BEST_MOMENTUM((L, mu)), "engine's own fastest pair"),
    },
}

RIGHT = {
    "06.adagrad": {"running sum in state": optimizer(adagrad_right, **ADAGRAD),
                   "in place into a zeros_like buffer": optimizer(adagrad_right_in_place, **ADAGRAD)},
    "06.rmsprop": {"running average": optimizer(rmsprop_right, **RMSPROP),
                   "written as a lerp": optimizer(rmsprop_right_lerp, **RMSPROP)},
    "06.adam": {"bias-corrected moments": optimizer(adam_right, **ADAM),
                "np.power and np.square": optimizer(adam_right_powers, **ADAM)},
    "06.cosine": {"from lr_min up": cosine_right, "from lr_max down": cosine_right_from_top},
    "06.fastest_momentum": {"the formula": fast_pair, "through kappa": fast_pair_through_kappa,
                            "searched on a grid with momentum_rate": fast_pair_searched},
}
