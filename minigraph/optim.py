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

from .errors import BadValueError, GraphError, NonFiniteError, ShapeError, describe, shape_text
from .graph import Node, first_repeat


class Optimizer:
    """Base class. Subclasses set their hyper-parameters and write ``update``."""

    def __init__(self, params, lr):
        self.params = _parameters(params, type(self).__name__)
        if not _is_learning_rate(lr):
            raise BadValueError(f"{type(self).__name__}'s learning rate lr must be a finite number >= 0, "
                                f"e.g. lr=0.1; got {type(lr).__name__} {lr!r}.")
        self.lr = lr
        self.state = {p: {} for p in self.params}

    def step(self):
        for p in self.params:             # every gradient is there before anything moves:
            if p.grad is None:            # a step that fails half-way would move some of them
                raise GraphError(f"Parameter '{p.name}' has no gradient, so no Parameter was moved. "
                                 "Run graph.backward(feed) before opt.step(), on a graph that "
                                 "contains every Parameter the optimizer moves.")
        before = {p: dict(state) for p, state in self.state.items()}
        moved = []
        for p in self.params:             # every new value is computed and checked before any is set
            value, grad = p._value, p.grad
            new = self.update(value, grad, self.state[p])
            if not (type(new) is np.ndarray and new.dtype is value.dtype and new.shape == value.shape):
                new = self._checked(p, new)
            if not np.isfinite(new).all():
                self.state = before       # as if the step had not started: nothing moved, nothing counted
                raise NonFiniteError(
                    f"{type(self).__name__}'s step would write NaN or infinity into Parameter "
                    f"'{p.name}' ({shape_text(value)}; its gradient {_finite_text(grad)}), so no "
                    f"Parameter was moved. Look for the node that overflows (mg.detect_anomaly()), "
                    f"lower the learning rate or clip the gradients (optim.clip_grad_norm).")
            moved.append(new)
        for p, new in zip(self.params, moved):
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
    """Is ``lr`` a finite number >= 0 (not a bool, not NaN, not infinity)?"""
    return _is_number(lr) and 0 <= lr < np.inf


def _is_number(x):
    """Is ``x`` a real number (not a bool)?"""
    return not isinstance(x, bool) and isinstance(x, numbers.Real)


def _check_setting(optimizer, name, value, low, high=np.inf, high_included=False, example=None):
    """A BadValueError unless the hyper-parameter ``name`` is a number in [low, high) (or
    [low, high] if ``high_included``), the ranges ``torch.optim`` accepts."""
    inside = _is_number(value) and low <= value and (value <= high if high_included else value < high)
    if not inside:
        closing = "]" if high_included else ")"
        raise BadValueError(f"{optimizer}'s {name} must be a number in [{low}, {high}{closing}"
                            f"{f', e.g. {name}={example}' if example is not None else ''}; got "
                            f"{type(value).__name__} {value!r}.")


def _finite_text(grad):
    """``is finite`` or how many of its numbers are NaN or infinite, for messages."""
    bad = int(np.size(grad) - np.count_nonzero(np.isfinite(grad)))
    return "is finite" if not bad else f"has {bad} NaN or infinite number(s) of {np.size(grad)}"


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
        _check_setting("Momentum", "momentum", momentum, 0, example=0.9)
        self.momentum, self.nesterov = momentum, nesterov

    def update(self, value, grad, state):
        v = self.momentum * state.get("v", 0.0) - self.lr * grad
        state["v"] = v
        return value + (self.momentum * v - self.lr * grad if self.nesterov else v)


class AdaGrad(Optimizer):
    """Per-coordinate steps shrinking with the sum of all squared gradients seen so far."""

    def __init__(self, params, lr=0.1, eps=1e-8):
        super().__init__(params, lr)
        _check_setting("AdaGrad", "eps", eps, 0, example=1e-8)
        self.eps = eps

    def update(self, value, grad, state):
        state["s"] = state.get("s", 0.0) + grad ** 2
        return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


class RMSProp(Optimizer):
    """Like AdaGrad, but a running *average* of squared gradients, so steps do not die out."""

    def __init__(self, params, lr=0.01, decay=0.9, eps=1e-8):
        super().__init__(params, lr)
        _check_setting("RMSProp", "decay", decay, 0, 1, high_included=True, example=0.9)
        _check_setting("RMSProp", "eps", eps, 0, example=1e-8)
        self.decay, self.eps = decay, eps

    def update(self, value, grad, state):
        state["s"] = self.decay * state.get("s", 0.0) + (1 - self.decay) * grad ** 2
        return value - self.lr * grad / (np.sqrt(state["s"]) + self.eps)


class Adam(Optimizer):
    """Momentum on the gradient (m) and RMSProp on its square (s), both bias-corrected."""

    def __init__(self, params, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8):
        super().__init__(params, lr)
        name = type(self).__name__
        _check_setting(name, "beta1", beta1, 0, 1, example=0.9)
        _check_setting(name, "beta2", beta2, 0, 1, example=0.999)
        _check_setting(name, "eps", eps, 0, example=1e-8)
        self.beta1, self.beta2, self.eps = beta1, beta2, eps
        self.scratch = {}     # id(state) -> (state, arrays): working memory, not what Adam remembers

    def update(self, value, grad, state):
        return self._step(value, grad, state)

    def _step(self, value, grad, state, value_is_new=False):
        """Adam's update; ``value_is_new``: ``value`` is an array made for this step, which
        nobody else holds (AdamW's decayed value), and the new value may be written into it."""
        t = state["t"] = state.get("t", 0) + 1
        if _same_arrays(value, grad, state.get("m"), state.get("s")):
            return _moved_in_place(self, value, grad, state, t, value_is_new)
        m = state["m"] = self.beta1 * state.get("m", 0.0) + (1 - self.beta1) * grad
        s = state["s"] = self.beta2 * state.get("s", 0.0) + (1 - self.beta2) * grad ** 2
        m_hat, s_hat = m / (1 - self.beta1 ** t), s / (1 - self.beta2 ** t)
        return value - self.lr * m_hat / (np.sqrt(s_hat) + self.eps)


def _same_arrays(*arrays):
    """Are these all numpy arrays (not 0-d) of one shape and one dtype?"""
    first = arrays[0]
    return all(type(a) is np.ndarray and a.ndim and a.shape == first.shape and a.dtype == first.dtype
               for a in arrays)


def _moved_in_place(adam, value, grad, state, t, value_is_new=False):
    """Adam's step with the operations of ``Adam.update``, in the same order on the same dtypes
    (so the same numbers, bit for bit), with two new arrays of the Parameter's size per step
    (the new moments) instead of a dozen: the intermediate results go into two arrays kept from
    one step to the next (``adam.scratch``, apart from ``state``: working memory, not what Adam
    remembers). The old moments are never written: a step that ``Optimizer.step`` refuses
    leaves them as they were, and a moment you kept (``adam.state[p]["m"]``) keeps its numbers.
    ``value - step`` is written into ``value`` when it is an array of this step's own
    (``value_is_new``: AdamW's decayed value), the same numbers with one array fewer."""
    entry = adam.scratch.get(id(state))
    kept = entry[1] if entry is not None and entry[0] is state else None
    if kept is None or not (_same_arrays(value, *kept) and all(a.flags.writeable for a in kept)):
        kept = [np.empty_like(value) for _ in range(2)]  # the first time (or a new shape of value)
        live = {id(s) for s in adam.state.values()}     # (a refused step's states are gone)
        adam.scratch = {k: v for k, v in adam.scratch.items() if k in live}
        adam.scratch[id(state)] = (state, kept)
    work, denominator = kept
    m_new = np.multiply(state["m"], adam.beta1)                 # m = beta1 m + (1 - beta1) g
    m_new += np.multiply(grad, 1 - adam.beta1, out=work)
    np.multiply(grad, grad, out=work)                           # s = beta2 s + (1 - beta2) g²
    np.multiply(work, 1 - adam.beta2, out=work)
    s_new = np.multiply(state["s"], adam.beta2)
    s_new += work
    np.divide(s_new, 1 - adam.beta2 ** t, out=denominator)      # sqrt(s_hat) + eps
    np.sqrt(denominator, out=denominator)
    denominator += adam.eps
    np.divide(m_new, 1 - adam.beta1 ** t, out=work)             # lr m_hat / (sqrt(s_hat) + eps)
    np.multiply(work, adam.lr, out=work)
    np.divide(work, denominator, out=work)
    state.update(m=m_new, s=s_new)
    return np.subtract(value, work, out=value) if value_is_new else value - work


class AdamW(Adam):
    """Adam with *decoupled* weight decay, as ``torch.optim.AdamW``: each step first shrinks a
    decayed value, ``value * (1 - lr * weight_decay)``, then takes Adam's step, so the decay is
    not divided by Adam's running scale as an L2 term in the loss would be. ``decay``: the
    Parameters that decay; by default those with two or more axes (weight matrices and
    embeddings, not biases or layer-norm gains, as nanoGPT)."""

    def __init__(self, params, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01, decay=None):
        super().__init__(params, lr, beta1, beta2, eps)
        _check_setting("AdamW", "weight_decay", weight_decay, 0, example=0.01)
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
        if state.get("decays"):         # a new array, into which Adam's step may be subtracted
            return self._step(value * (1 - self.lr * self.weight_decay), grad, state, value_is_new=True)
        return self._step(value, grad, state)


def global_norm(grads):
    """The global L2 norm of a list of arrays: the square root of the sum of the squares of all
    their numbers together (as if they were one long vector)."""
    return float(np.sqrt(sum(np.vdot(g, g) for g in grads)))


def clip_factor(norm, max_norm, eps=0.0):
    """The one formula of clipping by the global norm: the factor that scales gradients of
    global norm ``norm`` down to ``max_norm``, ``max_norm / (norm + eps)``, or 1 when that would
    not shrink them. ``eps = 0`` caps the norm at exactly ``max_norm`` (chapter 07's
    ``recurrent.clip_by_global_norm``); PyTorch's ``clip_grad_norm_`` adds ``eps = 1e-6``
    (``clip_grad_norm``'s default), which keeps a norm of 0 from being divided by."""
    return max_norm / (norm + eps) if norm + eps > max_norm else 1.0


def clip_grad_norm(params, max_norm, eps=1e-6):
    """Scale every Parameter's ``.grad`` in place, by one factor, so that their global L2 norm
    (of all their numbers together) is at most ``max_norm``; return the norm they had before.
    As ``torch.nn.utils.clip_grad_norm_``: a step along the same direction, never a huge one.
    The factor is ``clip_factor(norm, max_norm, eps)`` (chapter 07's clip on a list of arrays,
    ``recurrent.clip_by_global_norm``, is the same formula with ``eps = 0``)."""
    if not (_is_number(max_norm) and 0 < max_norm < np.inf):
        raise BadValueError(f"clip_grad_norm's max_norm must be a finite number > 0, e.g. "
                            f"max_norm=1.0; got {type(max_norm).__name__} {max_norm!r}.")
    params = [p for p in _parameters(params, "clip_grad_norm") if p.grad is not None]
    norm = global_norm(p.grad for p in params)
    if not np.isfinite(norm):
        bad = next((p for p in params if not np.isfinite(p.grad).all()), params[0])
        raise NonFiniteError(f"clip_grad_norm: the gradient of Parameter '{bad.name}' "
                             f"({shape_text(bad.grad)}) {_finite_text(bad.grad)}, so no direction "
                             f"is left to keep (the global norm is {norm}). Find the node that "
                             f"overflows with mg.detect_anomaly(), or lower the learning rate.")
    scale = clip_factor(norm, max_norm, eps)
    if scale < 1:
        for p in params:                  # in place when it can (a 0-d gradient is a number: a new one)
            p.grad = _scaled(p.grad, scale)
    return norm


def _scaled(grad, scale):
    """``grad * scale`` in ``grad``'s dtype, in ``grad``'s memory if it is a writable array."""
    if type(grad) is np.ndarray and grad.ndim and grad.flags.writeable:
        grad *= scale
        return grad
    return np.asarray(grad * scale, dtype=np.result_type(grad))


def subtract_into(value, change):
    """``value - change``, written into the memory of ``change`` when it is an array of the same
    dtype and shape: the same numbers, with one big array fewer. ``change`` must be an array
    nobody else holds, such as ``lr * grad`` just computed.

    A speed trick, kept in this one place: GD's update runs once per parameter per step, and
    each time it makes one array of the Parameter's size fewer (``bench/engine_speed.py``
    times whole steps).
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
    if t >= total:                  # (also when warmup == total: no cosine to run)
        return lr_min
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
