"""Chapter 11's reference answers and typical mistakes (``content/ch11.py`` has the exercises)."""

import numpy as np

from ..content.ch11 import EPS, normalized
from ..judges.ch11 import judge_boolean_mask
from ..toolkit.exercise import diagnose


def split_heads(x, n_head):
    B, T, C = x.shape
    H = int(n_head)
    return x.reshape(B, T, H, C // H).transpose(0, 2, 1, 3)


def dealt(x, n_head):
    """Channel c to head c mod H: the heads' channels interleaved, not in blocks."""
    B, T, C = x.shape
    H = int(n_head)
    return x.reshape(B, T, C // H, H).transpose(0, 3, 1, 2)


SPLIT_MISTAKES = {
    "It looks like x was reshaped straight to (B, H, T, d): that cuts the numbers in memory "
    "order, so a head gets pieces of several positions; reshape to (B, T, H, d) first, then "
    "swap the T and H axes.": lambda x, H: x.reshape(x.shape[0], int(H), x.shape[1], -1),
    "It looks like the heads' axis was never moved: the result is (B, T, H, d); swap the T "
    "and H axes to get (B, H, T, d).": lambda x, H: x.reshape(*x.shape[:2], int(H), -1),
    "It looks like the channels were dealt out to the heads in turn (channel c to head c mod "
    "H): head h takes the h-th block of d consecutive channels.": dealt,
    "It looks like the heads' axis came first, before the batch: the result is (B, H, T, d), "
    "the batch axis stays first.":
        lambda x, H: x.reshape(*x.shape[:2], int(H), -1).transpose(2, 0, 1, 3),
    "It looks like the wrong axes were swapped (the last two as well): the result is "
    "(B, H, T, d), each head's positions along the third axis and channels along the last.":
        lambda x, H: x.reshape(*x.shape[:2], int(H), -1).transpose(0, 2, 3, 1),
}


def merge_heads(x):
    B, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)


MERGE_MISTAKES = {
    "It looks like the heads were reshaped back without moving the heads' axis: (B, H, T, d) "
    "read in memory order mixes positions; bring the positions next to the batch first, "
    "(B, T, H, d), then join the last two axes.": lambda x: x.reshape(x.shape[0], x.shape[2], -1),
    "It looks like the heads' channels were interleaved (head h's channel j landing at j·H + h): "
    "head h's d channels form the h-th block of the result.":
        lambda x: x.transpose(0, 2, 3, 1).reshape(x.shape[0], x.shape[2], -1),
    "It looks like the heads were added up: merging concatenates them, C = H·d channels.":
        lambda x: x.sum(axis=1),
    "It looks like the heads were averaged: merging concatenates them, C = H·d channels.":
        lambda x: x.mean(axis=1),
    "It looks like the heads were joined along the positions: they are joined along the "
    "channels, giving (B, T, H·d).": lambda x: x.reshape(x.shape[0], -1, x.shape[3]),
    "It looks like the last two axes were never joined: the result is (B, T, H, d) and must "
    "be (B, T, H·d).": lambda x: x.transpose(0, 2, 1, 3),
}

def causal_mask(T):
    return np.tri(int(T), dtype=bool)


MASK_MISTAKES = {
    "It looks like the diagonal is masked too (a strict lower triangle): a position may attend "
    "to itself, so the first one has something to attend to.":
        lambda T: np.tri(int(T), k=-1, dtype=bool),
    "It looks like the mask lets each position see the future (the upper triangle): position i "
    "may attend to positions 0 .. i, on and below the diagonal.":
        lambda T: np.tri(int(T), dtype=bool).T,
    "It looks like the mask marks the forbidden places (True above the diagonal): True marks "
    "where a position MAY attend.": lambda T: ~np.tri(int(T), dtype=bool),
    "It looks like nothing is masked: position i must not see the positions after it.":
        lambda T: np.ones((int(T), int(T)), dtype=bool),
    "It looks like each position sees only itself (the diagonal): it may attend to every "
    "position up to and including itself.": lambda T: np.eye(int(T), dtype=bool),
    "It looks like an additive mask (0 where allowed, −∞ where not) was returned: this one is "
    "boolean, True where a position may attend, as mg.softmax's mask= takes.":
        lambda T: np.where(np.tri(int(T), dtype=bool), 0.0, -np.inf),
}


def judge_mask(case, got):
    T = case["inputs"]["T"]
    return judge_boolean_mask(causal_mask(T), got, lambda verdict, value: diagnose(
        verdict, value, MASK_MISTAKES, lambda wrong: wrong(T)))


def layer_norm_vjp(g, ans, x, gamma, eps=EPS, *, through_mean=True, through_variance=True,
                    by_gamma=True, ddof=0, axis=-1, summed=True, keepdims=False, from_output=False,
                    x_hat_from_ans=False, centered_in_variance=0):
    """(grad_x, grad_gamma); the keywords switch on the typical mistakes (``centered_in_variance``:
    how many of the two x̂ of the variance's term are x − μ instead)."""
    x_hat, inv_std = normalized(x, eps, ddof, axis)
    if x_hat_from_ans:
        x_hat = ans / gamma
    h = g * gamma if by_gamma else g
    grad_x = h
    if through_mean:
        grad_x = grad_x - h.mean(axis=axis, keepdims=True)
    if through_variance:
        outer, inner = (x_hat / inv_std if centered_in_variance >= k else x_hat for k in (1, 2))
        grad_x = grad_x - outer * np.mean(h * inner, axis=axis, keepdims=True)
    per_row = g * (ans if from_output else x_hat)
    grad_gamma = per_row.reshape(-1, np.shape(gamma)[-1]).sum(axis=0) if summed else per_row
    # keepdims: the summed axes kept, each of length 1
    if keepdims:
        grad_gamma = grad_gamma.reshape((1,) * (per_row.ndim - 1) + grad_gamma.shape)
    return inv_std * grad_x, grad_gamma


LAYER_NORM_MISTAKES = {
    "the mean and the variance were treated as constants: both depend on every entry of the "
    "row, which adds a term for each": lambda *a, **k: layer_norm_vjp(
        *a, **k, through_mean=False, through_variance=False),
    "the path through the mean is missing: every entry moves the row's mean, so subtract the "
    "row's mean of g·gamma": lambda *a, **k: layer_norm_vjp(*a, **k, through_mean=False),
    "the path through the variance is missing: every entry moves the row's variance, which "
    "subtracts x̂ times the row's mean of g·gamma·x̂":
        lambda *a, **k: layer_norm_vjp(*a, **k, through_variance=False),
    **{f"x − μ took the place of {which} in the path through the variance: the path is there, but "
       f"x̂ = (x − μ) / σ, so its term lacks a factor {factor}":
           lambda *a, n=n, **k: layer_norm_vjp(*a, **k, centered_in_variance=n)
       for n, which, factor in ((1, "one x̂", "1/σ"), (2, "both x̂", "1/σ²"))},
    "gamma is missing from the gradient of x: the upstream gradient reaches x̂ as g·gamma":
        lambda *a, **k: layer_norm_vjp(*a, **k, by_gamma=False),
    "the variance divides by C − 1 (numpy's ddof=1, or torch.var's default): layer norm uses "
    "the population variance, divided by C": lambda *a, **k: layer_norm_vjp(*a, **k, ddof=1),
    "the means ran over axis 0: layer norm normalises each row, along the last axis":
        lambda *a, **k: layer_norm_vjp(*a, **k, axis=0),
    "the gradient of gamma was not summed over the rows: every row used gamma, so its gradient "
    "adds up the rows' contributions, with gamma's shape (C,)":
        lambda *a, **k: layer_norm_vjp(*a, **k, summed=False),
    "the gradient of gamma kept the axes it was summed over (keepdims=True, each of length 1): "
    "gamma's gradient has gamma's shape (C,)":
        lambda *a, **k: layer_norm_vjp(*a, **k, keepdims=True),
    "eps was left out of √(variance + eps): use the same eps as the forward (the rule's "
    "argument), which matters most where a row barely varies":
        lambda g, ans, x, gamma, eps=EPS: layer_norm_vjp(g, ans, x, gamma, 0.0),
    "x̂ was recovered as ans / gamma: that is 0 / 0 wherever gamma has a 0; compute x̂ from x, "
    "its mean and its variance": lambda *a, **k: layer_norm_vjp(*a, **k, x_hat_from_ans=True),
    "the gradient of gamma used the output (x̂·gamma): it is g times the normalised x̂":
        lambda *a, **k: layer_norm_vjp(*a, **k, from_output=True),
}
