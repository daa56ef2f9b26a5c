"""Chapter 03's reference rules, judges and typical mistakes (``content/ch03.py`` has the exercises)."""

import numpy as np

import minigraph as mg

from ..content.ch03 import FUNCTIONS
from ..toolkit.exercise import arrays, compare, diagnose
from ..toolkit.values import decode


def tanh_vjp(g, ans, x):
    return g * (1 - np.tanh(x) ** 2)


TANH_MISTAKES = {
    "the upstream gradient g is missing: a VJP multiplies the local derivative by g":
        lambda g, ans, x: 1 - ans ** 2,
    "the sign is flipped": lambda g, ans, x: -g * (1 - ans ** 2),
    "tanh(x) must be squared in the derivative": lambda g, ans, x: g * (1 - ans),
    "the derivative is written with x where it needs tanh(x), which ans holds":
        lambda g, ans, x: g * (1 - x ** 2),
    "that is sigmoid's derivative, not tanh's": lambda g, ans, x: g * ans * (1 - ans),
    "all entries were summed into one number: a VJP keeps one gradient per entry of x":
        lambda g, ans, x: np.sum(g * (1 - ans ** 2)),
}


def mul_vjp(g, ans, x, y):
    return (mg.unbroadcast(g * y, np.shape(x)), mg.unbroadcast(g * x, np.shape(y)))


MUL_MISTAKES = {
    "not summed back: an input that broadcasting stretched gets the sum of its gradients, "
    "with its own shape": lambda g, ans, x, y: (g * y, g * x),
    "the two gradients are swapped: each input's gradient is g times the *other* input":
        lambda g, ans, x, y: mul_vjp(g, ans, y, x)[::-1] if np.shape(x) == np.shape(y)
        else (g * x, g * y),
    "the upstream gradient g is missing": lambda g, ans, x, y: (y, x),
    "the sign is flipped": lambda g, ans, x, y: tuple(-part for part in mul_vjp(g, ans, x, y)),
    "each gradient was summed into one number: a gradient has its input's shape":
        lambda g, ans, x, y: (np.sum(g * y), np.sum(g * x)),
    "that is the rule of addition (g passes through unchanged); a product's gradient also "
    "multiplies by the other input": lambda g, ans, x, y: (mg.unbroadcast(g, np.shape(x)),
                                                           mg.unbroadcast(g, np.shape(y))),
}


def matmul_vjp(g, ans, x, W):
    return g @ W.T, x.T @ g


MATMUL_MISTAKES = {
    "the gradient for W is transposed: it must have W's shape (k, m)":
        lambda g, ans, x, W: (g @ W.T, g.T @ x),
    "the gradient for x is transposed: it must have x's shape (n, k)":
        lambda g, ans, x, W: (W @ g.T, x.T @ g),
    "the upstream gradient g is missing: both gradients are products with g":
        lambda g, ans, x, W: (np.ones_like(g) @ W.T, x.T @ np.ones_like(g)),
    "the gradient for W averages over the batch; every row adds its contribution (a sum)":
        lambda g, ans, x, W: (g @ W.T, x.T @ g / len(x)),
    "the gradient for W uses only the first row of the batch; every row adds its "
    "contribution": lambda g, ans, x, W: (g @ W.T, x[:1].T @ g[:1]),
    "the sign is flipped": lambda g, ans, x, W: (-(g @ W.T), -(x.T @ g)),
}


DERIVATIVES = {
    "sum(x³)": lambda x: 3 * x ** 2,
    "sum(sin(x)·x)": lambda x: np.cos(x) * x + np.sin(x),
    "x[0]·x[1]": lambda x: np.array([x.flat[1], x.flat[0]] + [0.0] * (x.size - 2)).reshape(x.shape),
    "log(sum(exp(x)))": lambda x: np.exp(x) / np.sum(np.exp(x)),
}


def _one_sided(f, x, eps=1e-6):
    """The forward difference (f(x + eps e_i) - f(x)) / eps: a typical wrong answer."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        bumped = x.copy()
        bumped[i] += eps
        grad[i] = (f(bumped) - f(x)) / eps
    return grad


CENTRAL_MISTAKES = {
    "a one-sided difference: it is only accurate to about eps; the central one, a step on each "
    "side, is accurate to about eps²": lambda f, derivative, x: _one_sided(f, x),
    "twice the gradient: the two points are 2·eps apart, so divide by 2·eps":
        lambda f, derivative, x: 2 * derivative(x),
    "every entry holds the same number: bump one entry at a time, not all of x at once":
        lambda f, derivative, x: np.full(x.shape, np.sum(derivative(x))),
}


def judge_central(case, got):
    f, derivative = FUNCTIONS[case["f"]], DERIVATIVES[case["f"]]
    (x,) = arrays(case)
    got = decode(got)
    verdict = compare(derivative(x), got, rtol=1e-6, atol=1e-8)
    return diagnose(verdict, got, CENTRAL_MISTAKES, lambda wrong: wrong(f, derivative, x))
