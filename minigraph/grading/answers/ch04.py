"""Chapter 04's reference rules and typical mistakes (``content/ch04.py`` has the exercises)."""

import numpy as np

import minigraph as mg

from ..toolkit.optimizer import shared_state


def gd_update(value, grad, state, lr):
    return value - lr * grad


def momentum_update(value, grad, state, lr, momentum=0.9):
    state["v"] = momentum * state.get("v", 0.0) - lr * grad
    return value + state["v"]


def _uphill(value, grad, state, lr, momentum=0.9):
    """A typical wrong momentum: the velocity steps *up* the gradient."""
    state["v"] = momentum * state.get("v", 0.0) + lr * grad
    return value + state["v"]


def _undecayed(value, grad, state, lr, momentum=0.9):
    """A typical wrong momentum: the old velocity is never scaled down."""
    state["v"] = state.get("v", 0.0) - lr * grad
    return value + state["v"]


GD_MISTAKES = {
    "the step goes up the gradient: descent moves against it": lambda v, g, s, lr: v + lr * g,
    "the step ignores the learning rate": lambda v, g, s, lr: v - g,
    "the learning rate is fixed at 0.1 instead of the one the optimizer was made with":
        lambda v, g, s, lr: v - 0.1 * g,
    "update returned the step, not the parameter's new value": lambda v, g, s, lr: -lr * g,
}


MOMENTUM_MISTAKES = {
    "no velocity is kept from one step to the next (plain gradient descent): remember it in "
    "state": lambda value, grad, state, lr, momentum=0.9: gd_update(value, grad, state, lr),
    "one velocity is shared by all parameters: each parameter keeps its own in its state dict":
        shared_state(momentum_update),
    "the new velocity adds the gradient step; it must go against the gradient": _uphill,
    "the old velocity is not decayed by the momentum factor": _undecayed,
    "the momentum and the learning rate are swapped":
        lambda v, g, s, lr, momentum=0.9: momentum_update(v, g, s, momentum, lr),
}


bce = mg.bce_with_logits.opdef.forward      # the engine's stable BCE


BCE_MISTAKES = {
    "the losses were summed: the loss is their mean over all entries":
        lambda z, y: z.size * mg.bce_with_logits.opdef.forward(z, y),
    "the sign is flipped: a loss is never negative":
        lambda z, y: -mg.bce_with_logits.opdef.forward(z, y),
    "the term log(1 + exp(−|z|)) is missing":
        lambda z, y: np.mean(np.maximum(z, 0) - z * y),
    "y and 1 − y are swapped: a logit far above 0 should give a small loss for y = 1":
        lambda z, y: mg.bce_with_logits.opdef.forward(z, 1 - y),
    "divided by the number of rows: the mean is over all entries (z.size of them)":
        lambda z, y: z.size / len(z) * mg.bce_with_logits.opdef.forward(z, y),
    "one loss per entry: the answer is one number, their mean":
        lambda z, y: np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))),
}
