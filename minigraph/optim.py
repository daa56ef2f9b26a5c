"""Optimizers as strategies: each one is a single ``update`` rule; the base class does the rest.

``step()`` moves every parameter once, using the gradients the last ``backward`` left on them:
``param.value = update(param.value, param.grad, state)``. ``state`` is a small dict per
parameter where a rule keeps what it remembers between steps (a velocity, running averages).
``update`` returns a *new* array (values are read-only; the engine keeps the returned array
without copying it, converted to the parameter's dtype) and the parameter is stamped, so the
next forward recomputes what depends on it.
"""

import numbers

import numpy as np

from .errors import BadValueError, GraphError, ShapeError, describe, shape_text
from .graph import Node, first_repeat


class Optimizer:
    """Base class. Subclasses set their hyper-parameters and write ``update``."""

    def __init__(self, params, lr):
        self.params = _parameters(params, type(self).__name__)
        if not _is_learning_rate(lr):
            raise BadValueError(f"{type(self).__name__}'s learning rate lr must be a number >= 0, "
                                f"e.g. lr=0.1; got {type(lr).__name__} {lr!r}.")
        self.lr = lr
        self.state = {p: {} for p in self.params}

    def step(self):
        for p in self.params:             # every gradient is there before anything moves:
            if p.grad is None:            # a step that fails half-way would move some of them
                raise GraphError(f"Parameter '{p.name}' has no gradient, so no Parameter was moved. "
                                 "Run graph.backward(feed) before opt.step(), on a graph that "
                                 "contains every Parameter the optimizer moves.")
        for p in self.params:
            value, grad = p._value, p.grad
            new = self.update(value, grad, self.state[p])
            if not (type(new) is np.ndarray and new.dtype is value.dtype and new.shape == value.shape):
                new = self._checked(p, new)
            p._set(new)

    def _checked(self, p, new):
        """What ``update`` returned for ``p``, as an array of ``p``'s dtype, or an error if it is
        None or has the wrong shape (it must be the new value)."""
        if new is None or np.shape(new) != p._value.shape:
            raise (BadValueError if new is None else ShapeError)(
                f"{type(self).__name__}.update returned "
                f"{'None' if new is None else shape_text(np.asarray(new))} for Parameter "
                f"'{p.name}' ({shape_text(p._value)}): it must return the new value, of the "
                f"Parameter's shape" + (" (did it forget `return`?)." if new is None else "."))
        return np.asarray(new, dtype=p._value.dtype)

    def update(self, value, grad, state):
        raise NotImplementedError("an optimizer must say how a value moves: write update()")


def _is_learning_rate(lr):
    """Is ``lr`` a number >= 0 (not a bool, not NaN)?"""
    return not isinstance(lr, bool) and isinstance(lr, numbers.Real) and lr >= 0


def _parameters(params, optimizer):
    """The list of Parameters an optimizer moves (one Parameter alone is a list of one)."""
    if isinstance(params, Node):
        params = [params]
    elif hasattr(params, "parameters") or not isinstance(params, (list, tuple)):
        what = type(params).__name__
        owner = "graph" if what == "Graph" else "model"
        hint = f"its .parameters: {optimizer}({owner}.parameters, lr=...)" if hasattr(
            params, "parameters") else f"a list, e.g. {optimizer}(graph.parameters, lr=...)"
        raise BadValueError(f"{optimizer} takes a list of Parameters; it was given a {what}. Pass {hint}.")
    wrong = [p for p in params if not (isinstance(p, Node) and p.kind == "parameter")]
    if wrong:
        if hasattr(wrong[0], "parameters"):           # a layer or a model inside the list
            what = type(wrong[0]).__name__
            raise BadValueError(f"{optimizer} moves Parameters only; the list holds a {what}, which "
                                f"owns Parameters but is not one. Put its Parameters in the list: "
                                f"[*layer.parameters, W] (or layer.parameters + [W]).")
        what = describe(wrong[0]) if isinstance(wrong[0], Node) else (
            f"{type(wrong[0]).__name__} {repr(wrong[0])[:40]}")
        raise BadValueError(f"{optimizer} moves Parameters only; {what} is not one. Pass "
                            f"graph.parameters (or a list of Parameters).")
    twice = first_repeat(params)
    if twice is not None:
        raise BadValueError(f"{optimizer}: Parameter '{twice.name}' is in the list twice, so each step "
                            f"would move it twice. Pass each Parameter once "
                            f"(list(dict.fromkeys(params)) drops the repeats).")
    return list(params)


class GD(Optimizer):
    """Gradient descent: step downhill, ``value - lr * grad``."""

    def __init__(self, params, lr=0.1):
        super().__init__(params, lr)

    def update(self, value, grad, state):
        return subtract_into(value, self.lr * grad)


SGD = GD      # with minibatches, the same rule is called stochastic gradient descent


class Momentum(Optimizer):
    """A heavy ball: velocity v <- mu v - lr g; value <- value + v (Nesterov: look ahead by mu v)."""

    def __init__(self, params, lr=0.1, momentum=0.9, nesterov=False):
        super().__init__(params, lr)
        self.momentum, self.nesterov = momentum, nesterov

    def update(self, value, grad, state):
        v = self.momentum * state.get("v", 0.0) - self.lr * grad
        state["v"] = v
        return value + (self.momentum * v - self.lr * grad if self.nesterov else v)


class AdaGrad(Optimizer):
    """Per-coordinate steps shrinking with the sum of all squared gradients seen so far."""

    def __init__(self, params, lr=0.1, eps=1e-8):
        super().__init__(params, lr)
        self.eps = eps

    def update(self, value, grad, state):
        state["s"] = state.get("s", 0.0) + grad ** 2
        return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


class RMSProp(Optimizer):
    """Like AdaGrad, but a running *average* of squared gradients, so steps do not die out."""

    def __init__(self, params, lr=0.01, decay=0.9, eps=1e-8):
        super().__init__(params, lr)
        self.decay, self.eps = decay, eps

    def update(self, value, grad, state):
        state["s"] = self.decay * state.get("s", 0.0) + (1 - self.decay) * grad ** 2
        return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


class Adam(Optimizer):
    """Momentum on the gradient (m) and RMSProp on its square (s), both bias-corrected."""

    def __init__(self, params, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8):
        super().__init__(params, lr)
        self.beta1, self.beta2, self.eps = beta1, beta2, eps

    def update(self, value, grad, state):
        t = state["t"] = state.get("t", 0) + 1
        m = state["m"] = self.beta1 * state.get("m", 0.0) + (1 - self.beta1) * grad
        s = state["s"] = self.beta2 * state.get("s", 0.0) + (1 - self.beta2) * grad ** 2
        m_hat, s_hat = m / (1 - self.beta1 ** t), s / (1 - self.beta2 ** t)
        return value - self.lr * m_hat / (np.sqrt(s_hat) + self.eps)


class AdamW(Adam):
    """Adam with *decoupled* weight decay, as ``torch.optim.AdamW``: each step first shrinks a
    decayed value, ``value * (1 - lr * weight_decay)``, then takes Adam's step, so the decay is
    not divided by Adam's running scale as an L2 term in the loss would be. ``decay``: the
    Parameters that decay; by default those with two or more axes (weight matrices and
    embeddings, not biases or layer-norm gains, as nanoGPT)."""

    def __init__(self, params, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01, decay=None):
        super().__init__(params, lr, beta1, beta2, eps)
        self.weight_decay = weight_decay
        decay = [p for p in self.params if p.value.ndim >= 2] if decay is None else _parameters(
            decay, "AdamW's decay")
        strangers = [p.name for p in decay if p not in self.state]
        if strangers:
            raise BadValueError(f"AdamW: decay lists Parameter(s) {', '.join(strangers)}, which it does "
                                f"not move; decay must be some of the Parameters passed first.")
        for p in decay:
            self.state[p]["decays"] = True

    def update(self, value, grad, state):
        if state.get("decays"):
            value = value * (1 - self.lr * self.weight_decay)
        return super().update(value, grad, state)


def clip_grad_norm(params, max_norm):
    """Scale every Parameter's ``.grad`` in place, by one factor, so that their global L2 norm
    (of all their numbers together) is at most ``max_norm``; return the norm they had before.
    As ``torch.nn.utils.clip_grad_norm_``: a step along the same direction, never a huge one."""
    grads = [p.grad for p in _parameters(params, "clip_grad_norm") if p.grad is not None]
    norm = float(np.sqrt(sum(np.vdot(g, g) for g in grads)))
    scale = max_norm / (norm + 1e-6)
    if scale < 1:
        for g in grads:
            g *= scale
    return norm


def subtract_into(value, change):
    """``value - change``, written into the memory of ``change`` when it is an array of the same
    dtype and shape: the same numbers, with one big array fewer. ``change`` must be an array
    nobody else holds, such as ``lr * grad`` just computed.

    A speed trick, kept in this one place: GD's update runs once per parameter per step, and on
    the 784-512-512-10 MLP of bench/engine_speed.py the extra array was a sixth of a step's
    memory and a third of an update's time.
    """
    if type(change) is np.ndarray and change.dtype is value.dtype and change.shape == value.shape:
        return np.subtract(value, change, change)        # the third argument is where it goes
    return value - change


OPTIMIZERS = {"gd": GD, "momentum": Momentum, "adagrad": AdaGrad, "rmsprop": RMSProp, "adam": Adam}


# -- learning-rate schedules --------------------------------------------------------------------
# A schedule is a function of the step number t = 0, 1, 2, ... that returns the learning rate
# for that step. ``Scheduled`` sets an optimizer's ``lr`` from one before every step.

def step_decay(t, lr, factor=0.1, every=100):
    """``lr`` for the first ``every`` steps, then ``lr * factor``, then ``lr * factor**2``, ..."""
    return lr * factor ** (t // every)


def cosine_decay(t, total, lr, lr_min=0.0):
    """From ``lr`` at t = 0 down to ``lr_min`` at t = ``total`` along half a cosine wave:
    ``lr_min + (lr - lr_min) * (1 + cos(pi * t / total)) / 2`` (``lr_min`` after ``total``)."""
    t = np.minimum(t, total)
    return lr_min + (lr - lr_min) * (1 + np.cos(np.pi * t / total)) / 2


def warmup_cosine(t, lr, warmup, total, lr_min):
    """nanoGPT's schedule: a linear warm-up, ``lr * (t + 1) / (warmup + 1)`` for t < ``warmup``,
    then ``cosine_decay`` from ``lr`` at t = ``warmup`` to ``lr_min`` at t = ``total``
    (``lr_min`` after)."""
    if t < warmup:
        return lr * (t + 1) / (warmup + 1)
    return cosine_decay(t - warmup, total - warmup, lr, lr_min)


class Scheduled:
    """An optimizer whose learning rate follows ``schedule(t)``; ``step()`` sets it, then steps.

        opt = Scheduled(Momentum(params, lr=0.1), lambda t: cosine_decay(t, 1000, lr=0.1))
    """

    def __init__(self, optimizer, schedule):
        self.optimizer, self.schedule, self.t = optimizer, schedule, 0

    @property
    def params(self):
        return self.optimizer.params

    @property
    def lr(self):
        return self.optimizer.lr

    def step(self):
        lr = self.schedule(self.t)
        if not _is_learning_rate(lr):
            raise BadValueError(f"the schedule of {type(self.optimizer).__name__} gave the learning "
                                f"rate {type(lr).__name__} {lr!r} at step t={self.t}: it must be a "
                                f"number >= 0 (a function of t such as lambda t: 0.1 / (1 + t)).")
        self.optimizer.lr = float(lr)
        self.optimizer.step()
        self.t += 1
