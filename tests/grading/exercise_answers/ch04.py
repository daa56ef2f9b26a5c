"""Chapter 04 (learning): typical wrong answers and different right answers."""

import numpy as np

import minigraph as mg

from minigraph.losses import bce_with_logits as losses_bce

from . import wrong


def optimizer(update, momentum=False):
    """A learner's optimizer class with this ``update`` (and a momentum setting if asked)."""
    if not momentum:
        return type("MyGD", (mg.optim.Optimizer,), {"update": update})

    def __init__(self, params, lr=0.1, momentum=0.9):
        mg.optim.Optimizer.__init__(self, params, lr)
        self.momentum = momentum

    return type("MyMomentum", (mg.optim.Optimizer,), {"__init__": __init__, "update": update})


# -- 04.gd -----------------------------------------------------------------------------------------

def gd_in_place(self, value, grad, state):
    value -= self.lr * grad
    return value


def gd_no_return(self, value, grad, state):
    value - self.lr * grad


# -- 04.momentum ---------------------------------------------------------------------------------------

def momentum_right(self, value, grad, state):
    v = self.momentum * state.get("v", 0.0) - self.lr * grad
    state["v"] = v
    return value + v


def momentum_pytorch_style(self, value, grad, state):
    """v <- mu v + g; value <- value - lr v: the same steps for a fixed learning rate."""
    state["buffer"] = self.momentum * state.get("buffer", 0.0) + grad
    return value - self.lr * state["buffer"]


def momentum_on_self(self, value, grad, state):
    self.v = self.momentum * getattr(self, "v", 0.0) - self.lr * grad
    return value + self.v


def momentum_not_stored(self, value, grad, state):
    v = self.momentum * state.get("v", 0.0) - self.lr * grad
    return value + v


def momentum_uphill(self, value, grad, state):
    state["v"] = self.momentum * state.get("v", 0.0) + self.lr * grad
    return value + state["v"]


def momentum_undecayed(self, value, grad, state):
    state["v"] = state.get("v", 0.0) - self.lr * grad
    return value + state["v"]


def momentum_swapped(self, value, grad, state):
    state["v"] = self.lr * state.get("v", 0.0) - self.momentum * grad
    return value + state["v"]


# -- 04.bce ------------------------------------------------------------------------------------------

def bce_textbook(z, y):
    p = 1 / (1 + np.exp(-z))
    return np.mean(-y * np.log(p) - (1 - y) * np.log(1 - p))


def bce_stable(z, y):
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def bce_logaddexp(z, y):
    return np.mean(np.logaddexp(0, -np.abs(z)) + np.maximum(z, 0) - z * y)


def bce_log_sigmoid(z, y):
    log_p = -np.logaddexp(0, -z)             # log σ(z), stable both ways
    log_not_p = -np.logaddexp(0, z)          # log(1 − σ(z))
    return -np.mean(y * log_p + (1 - y) * log_not_p)


def recipe(hidden, activation, optimizer_name, lr):
    return {"hidden": hidden, "activation": activation, "optimizer": optimizer_name, "lr": lr}


WRONG = {
    "04.gd": {
        "the engine's GD, inherited": wrong(type("MyGD", (mg.optim.GD,), {}), "engine's own GD update rule"),
        "uphill": wrong(optimizer(lambda self, value, grad, state: value + self.lr * grad), "up the gradient"),
        "no learning rate": wrong(optimizer(lambda self, value, grad, state: value - grad), "ignores the learning rate"),
        "a fixed learning rate": wrong(optimizer(lambda self, value, grad, state: value - 0.1 * grad), "fixed at 0.1"),
        "the step, not the value": wrong(optimizer(lambda self, value, grad, state: -self.lr * grad),
                                         "returned the step"),
        "in place": wrong(optimizer(gd_in_place), "in place", "read-only"),
        "forgot return": wrong(optimizer(gd_no_return), "returned none", "forget `return`"),
        "not a class": wrong(lambda params, lr: None, "must be a class"),
    },
    "04.momentum": {
        "the engine's Momentum, called": wrong(optimizer(lambda self, v, g, s: mg.optim.Momentum.update(self, v, g, s), momentum=True), "engine's own Momentum update rule"),
        "no velocity kept": wrong(optimizer(momentum_not_stored, momentum=True), "no velocity is kept"),
        "one velocity for all": wrong(optimizer(momentum_on_self, momentum=True), "shared by all parameters"),
        "uphill velocity": wrong(optimizer(momentum_uphill, momentum=True), "against the gradient"),
        "never decayed": wrong(optimizer(momentum_undecayed, momentum=True), "not decayed"),
        "momentum and lr swapped": wrong(optimizer(momentum_swapped, momentum=True), "swapped"),
        "plain gradient descent": wrong(optimizer(lambda self, value, grad, state: value - self.lr * grad,
                                                  momentum=True), "no velocity is kept"),
    },
    "04.bce": {
        "the engine's loss, from its module": wrong(lambda z, y: losses_bce(z, y), "engine's own forward function", "mg.bce_with_logits.opdef.forward"),
        "the textbook formula": wrong(bce_textbook, "divide by zero"),
        "summed, not averaged": wrong(lambda z, y: np.sum(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))),
                                      "summed", "mean"),
        "the sign flipped": wrong(lambda z, y: -bce_stable(z, y), "sign is flipped"),
        "the log term missing": wrong(lambda z, y: np.mean(np.maximum(z, 0) - z * y), "is missing"),
        "y and 1 - y swapped": wrong(lambda z, y: bce_stable(z, 1 - y), "swapped"),
        "exp of -z, not -|z|": wrong(lambda z, y: np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-z))),
                                     "overflow"),
        "divided by the number of rows": wrong(lambda z, y: np.sum(np.logaddexp(0, z) - z * y) / len(z),
                                               "number of rows"),
        "no mean taken": wrong(lambda z, y: np.logaddexp(0, z) - z * y, "one loss per entry", "one number"),
        "the engine's own function": wrong(lambda z, y: mg.Graph(mg.bce_with_logits(mg.Constant(z), mg.Constant(y))).forward(),
                                           "engine's own forward function"),
    },
    "04.disk_recipe": {
        "a learning rate that overshoots": wrong(recipe([16], "relu", "momentum", 5.0), "lower the learning rate"),
        "a learning rate that blows up": wrong(recipe([3], "tanh", "gd", 50), "lower the learning rate"),
        "a learning rate that crawls": wrong(recipe([3], "tanh", "gd", 0.01), "still going down",
                                            "raise the learning rate"),
        "one unit": wrong(recipe([1], "relu", "momentum", 5.0), "converged", "more hidden units"),
        "two dead relu units": wrong(recipe([2], "relu", "momentum", 0.5), "more hidden units", "at least 3"),
        "too many units": wrong(recipe([100], "tanh", "gd", 1.0), "at most 64"),
        "an unknown activation": wrong(recipe([8], "softplus", "gd", 1.0), "'activation' must be one of"),
        "not a dict": wrong([8, "tanh", "gd", 1.0], "must be a dict"),
    },
}

RIGHT = {
    "04.gd": {
        "value minus the step": optimizer(lambda self, value, grad, state: value - self.lr * grad),
        "np.subtract": optimizer(lambda self, value, grad, state: np.subtract(value, self.lr * grad)),
        "plus a negative step": optimizer(lambda self, value, grad, state: value + (-self.lr) * grad),
    },
    "04.momentum": {
        "velocity in state": optimizer(momentum_right, momentum=True),
        "PyTorch's form": optimizer(momentum_pytorch_style, momentum=True),
    },
    "04.bce": {"max, product and log1p": bce_stable, "logaddexp": bce_logaddexp, "log sigmoid": bce_log_sigmoid},
    "04.disk_recipe": {
        "tanh, gradient descent": recipe([8], "tanh", "gd", 1.0),
        "relu, momentum": recipe([16], "relu", "momentum", 0.5),
        "one int for one layer": {"hidden": 8, "activation": "tanh", "lr": 1.0},
    },
}
