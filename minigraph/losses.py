"""The fused losses' kernels: the forward (and the longer VJPs) of ``mse``, ``bce_with_logits``
and ``softmax_cross_entropy``, rows of the op table in ``ops.py`` (``mg.nn`` re-exports them).

Each loss is one op instead of several, for speed and numerical stability: binary cross-entropy
is computed from the logits without ever forming log σ(z), and softmax cross-entropy from a
log-softmax shifted by the row maximum, so no exp overflows. Every loss is a mean (mse's and
bce's over all entries, cross-entropy's over the examples); a batch of none is refused: 0 / 0
would be NaN. mse and bce take predictions and targets of one shape: a (n, 1) against a (n,) would
silently broadcast to (n, n).

Softmax cross-entropy takes labels two ways: integer classes, one per example (shape (n,) for
(n, C) logits), or one-hot (or soft) labels of the logits' shape.
"""

import functools
import math

import numpy as np

from .errors import BadValueError, ShapeError
from .kernels import log_softmax

_NO_EXAMPLES = "a loss averages over the examples, and there are none (size 0)"


def mse(p, t):
    """mean((p - t)²)."""
    _same_shape(p, t, "mse")
    return _mean((p - t) ** 2)


def bce_with_logits(z, y):
    """mean(-y log σ(z) - (1-y) log(1-σ(z))) = mean(max(z,0) - z y + log(1 + e^-|z|)), never overflowing."""
    _same_shape(z, y, "bce_with_logits")
    return _mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def _same_shape(a, b, what):
    if a.shape != b.shape:
        raise ShapeError(f"{what} needs predictions and targets of the same shape, got {a.shape} "
                         f"and {b.shape} (a (n, 1) vs (n,) mismatch would silently broadcast to (n, n))")


def _mean(x):
    """The mean of all of ``x``: the same number as ``np.mean(x)`` (the same sum, divided by the
    same count), without np.mean's layers of Python, which cost more than the sum on small arrays.
    The mean of no numbers at all (a batch of 0 examples) is refused: 0 / 0 would be NaN."""
    if not x.size:
        raise ValueError(_NO_EXAMPLES)
    return x.sum() / x.size


# -- softmax cross-entropy -----------------------------------------------------------------------

class _LastResult:
    """Remember ``f(x)`` for the last array ``x`` it saw (compared by identity, not by value).

    The fused softmax-CE needs the log-softmax of the same logits in its forward and in its
    backward. The engine passes a node's own value array to both, and values are read-only, so
    "the same array object" means "the same numbers": the backward reuses the forward's result.
    """

    def __init__(self, f):
        self.f, self.x, self.fx = f, None, None

    def __call__(self, x):
        if x is not self.x:
            self.x, self.fx = x, self.f(x)
        return self.fx


_log_softmax_of_logits = _LastResult(log_softmax)


def softmax_ce(logits, labels):
    """Mean over examples of -log p(correct class); with one-hot/soft labels, of -sum(labels * log p)."""
    logp, n = _log_softmax_of_logits(logits), _examples(logits)
    if not n:
        raise ValueError(_NO_EXAMPLES)
    if _class_indices(labels, logits):
        try:                                       # a label >= C raises IndexError; numpy would
            picked = logp.reshape(n, -1)[_correct_class(n, labels)]          # read -1 as the
            if n and labels.min() < 0:             # last class, so negative labels are refused
                raise IndexError
        except IndexError:
            raise _not_classes(labels, logits.shape[-1]) from None
        return -picked.sum() / n
    return -(labels * logp).sum() / n


def softmax_ce_vjp_logits(g, ans, logits, labels):
    """softmax - onehot, per example (for soft labels: softmax * total label mass - labels)."""
    p, n = np.exp(_log_softmax_of_logits(logits)), _examples(logits)
    if _class_indices(labels, logits):
        p.reshape(n, -1)[_correct_class(n, labels)] -= 1       # a view: p changes
    else:
        p = p * np.sum(labels, axis=-1, keepdims=True) - labels
    p /= n                                         # p is a fresh array: update it in place
    if float(g) != 1:                              # g: one number, usually the 1 a backward starts
        p *= g                                     # from, and multiplying by 1 changes nothing
    return p


def softmax_ce_vjp_labels(g, ans, logits, labels):
    """-log softmax per example for one-hot/soft labels; integer classes take no gradient."""
    if _class_indices(labels, logits):
        return np.zeros(labels.shape)              # integer classes: no gradient flows
    return -g * _log_softmax_of_logits(logits) / _examples(logits)


def _examples(logits):
    """How many examples the logits score: rows of an (n, C) array; one for a (C,) vector."""
    return len(logits) if logits.ndim == 2 else math.prod(logits.shape[:-1])


def _class_indices(labels, logits):
    """True for integer class labels, one per example (shape ``logits.shape[:-1]``: (n,) for (n, C)
    logits, a single number for one example's (C,) logits); False for one-hot (or soft) labels of
    the logits' shape. Integer labels of the logits' shape must be one-hot (0s and 1s): [2, 0, 1]
    next to (3,) logits is three class numbers given with one example's scores, not weights."""
    if labels.shape == logits.shape and logits.ndim:
        if labels.dtype.kind in "iu" and np.any((labels != 0) & (labels != 1)):
            raise ShapeError(
                f"integer labels of the logits' shape {logits.shape} must be one-hot (0s and 1s), but "
                f"these hold {labels.flat[np.argmax((labels != 0) & (labels != 1))]}. Class numbers? "
                f"Logits have one row of class scores per example, so labels for n examples go with "
                f"(n, C) logits (class numbers of shape (n,)); (C,) logits are one example, whose "
                f"label is one number. For weighted (soft) labels, give floats")
        return False
    if logits.ndim == 0 or labels.shape != logits.shape[:-1] or labels.dtype.kind not in "iu":
        raise ShapeError(f"labels must be integer classes of shape {logits.shape[:-1]} or one-hot of "
                         f"shape {logits.shape} (logits: one row of class scores per example); got "
                         f"{labels.dtype} labels of shape {labels.shape}")
    return True


def _correct_class(n, labels):
    """The index of each example's correct class in its row of (n, C) logits: (rows, labels)."""
    return _row_numbers(n), labels.reshape(n)


@functools.lru_cache(maxsize=8)
def _row_numbers(n):
    """0, 1, ..., n-1, made once per batch size (read-only, since every call shares it)."""
    rows = np.arange(n)
    rows.setflags(write=False)
    return rows


def _not_classes(labels, n_classes):
    """The error for class labels outside 0, 1, ..., n_classes - 1."""
    wrong = labels[(labels < 0) | (labels >= n_classes)]
    return BadValueError(f"label {wrong.flat[0]} is not a class: with {n_classes} columns of "
                         f"logits, labels must be 0 to {n_classes - 1}")
