"""Chapter 03's reference rules, judges and typical mistakes (``content/ch03.py`` has the exercises)."""

import functools
from collections import deque

import numpy as np

import minigraph as mg

from ..content.ch03 import FUNCTIONS, opdef_of
from ..judges import ch03 as judges
from ..toolkit.exercise import Verdict, arrays, compare, diagnose
from ..toolkit.graphs import build
from ..toolkit.values import Unreadable, decode


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


# -- 03.backward -----------------------------------------------------------------------------------

def backward(loss, values):
    """The reference, written as the statement asks (the solution notebook's)."""
    return _walk(loss, values, reverse_topological)


def reverse_topological(loss):
    return reversed(mg.Graph(loss).nodes)


def forward_order(loss):
    return mg.Graph(loss).nodes


def breadth_first(loss):
    """The nodes in the order a breadth-first walk from the loss meets them (each once)."""
    order, queue, seen = [], deque([loss]), {loss}
    while queue:
        node = queue.popleft()
        order.append(node)
        for parent in node.inputs:
            if parent not in seen:
                seen.add(parent)
                queue.append(parent)
    return order


def _walk(loss, values, order, seed=np.ones_like, overwrite=False, summed="back"):
    """Backpropagation visiting the nodes in ``order(loss)``; the other knobs are typical
    mistakes: another seed, a gradient that overwrites instead of adding, shares summed back
    (``summed``) not at all (None), over axis 0 only ("axis 0") or only once added up ("late")."""
    def back(grad, node):
        return mg.unbroadcast(grad, np.shape(values[node]))

    grads = {loss: seed(values[loss])}
    for node in order(loss):
        g = grads.get(node)
        if node.op is None or g is None:
            continue
        if summed == "late":
            g = grads[node] = back(g, node)
        args = [values[parent] for parent in node.inputs]
        for k, parent in enumerate(node.inputs):
            gk = node.op.vjps[k](g, values[node], *args, **node.attrs)
            if summed == "back":
                gk = back(gk, parent)
            elif summed == "axis 0" and np.shape(gk) != np.shape(values[parent]):
                gk = np.sum(gk, axis=0)
            grads[parent] = gk if overwrite or parent not in grads else grads[parent] + gk
    if summed == "late":
        grads = {node: back(g, node) for node, g in grads.items()}
    for node, g in grads.items():
        if isinstance(node, mg.Parameter):
            node.grad = g
    return grads


BACKWARD_MISTAKES = {
    "the nodes were visited in forward (topological) order: a node can pass its gradient on only "
    "once it has it, so visit them from the loss back (reverse topological order)":
        functools.partial(_walk, order=forward_order),
    "breadth-first order from the loss: a node passed its gradient on before every consumer had "
    "sent its share; reverse topological order waits for all of them":
        functools.partial(_walk, order=breadth_first),
    "overwritten at fan-out: where a node feeds several ops (or one op twice), its gradient is the "
    "sum of what each sends, so add each share to what it has":
        functools.partial(_walk, order=reverse_topological, overwrite=True),
    "not summed back: a rule may hand back a gradient of its output's shape where broadcasting "
    "stretched an input; sum it back to the input's shape (mg.unbroadcast)":
        functools.partial(_walk, order=reverse_topological, summed=None),
    "summed over axis 0 only: broadcasting may stretch any axis of size 1 and add leading ones (a "
    "number becomes a whole array), so sum each share back to its node's own shape (mg.unbroadcast)":
        functools.partial(_walk, order=reverse_topological, summed="axis 0"),
    "summed back only after the shares were added up: a share of the output's shape, added to one "
    "of the node's own shape, stretches that one too, and the sum back then counts it once per "
    "row; sum each share back to its node's shape before adding it":
        functools.partial(_walk, order=reverse_topological, summed="late"),
    "seeded with 0: the loss's gradient with respect to itself is 1 (np.ones_like), and every "
    "other gradient is a multiple of it":
        functools.partial(_walk, order=reverse_topological, seed=np.zeros_like),
    "seeded with the loss's value: the seed is d loss / d loss = 1, not the loss's value":
        functools.partial(_walk, order=reverse_topological, seed=np.array),
}


def _learners_op(name, what, inputs, attrs):
    """An op node as the learner's graph has it (bias_add with its rule that does not sum back)."""
    return mg.defop(what, opdef_of(what).forward, opdef_of(what).vjps)(*inputs, name=name, **attrs)


def mistakes_of(reference):
    """{message: the gradients (by name) that typical mistake gives on ``reference``'s graph, or
    None where it raises}, worked out once per case."""
    if reference.mistakes is None:
        nodes = build(reference.spec, _learners_op)
        graph = mg.Graph(nodes[reference.spec[-1][0]])
        graph.forward(reference.feed)
        values = {node: np.array(node.value) for node in graph.nodes}
        reference.mistakes = {}
        for message, wrong in BACKWARD_MISTAKES.items():
            try:
                with np.errstate(all="ignore"):
                    made = {n.name: g for n, g in wrong(graph.outputs[0], values).items()}
            except Exception:
                made = None
            reference.mistakes[message] = made
    return reference.mistakes


def named(reference, grads, verdict):
    """``verdict``, its message preceded by the typical mistake that gives ``grads``, if exactly
    one does."""
    found = [message for message, made in mistakes_of(reference).items()
             if made is not None and _same(reference, made, grads)]
    if len(found) != 1:
        return verdict
    return Verdict(False, verdict.expected, verdict.got, f"{found[0]} ({verdict.message})", found[0])


def _same(reference, made, grads):
    for name in reference.order:
        if reference.kinds[name] == "constant" and (name not in made or name not in grads
                                                    or judges.no_gradient(grads[name])):
            continue
        if (name in made) != (name in grads):
            return False
        if name in made:
            mine, theirs = np.asarray(made[name], dtype=float), grads[name]
            if (isinstance(theirs, Unreadable) or theirs is None or mine.shape != np.shape(theirs)
                    or not np.allclose(mine, theirs, rtol=1e-6, atol=1e-9)):
                return False
    return True


def judge_backward(case, got):
    """The student edition's judge (``judges/ch03.py``), with the typical mistakes named."""
    return judges.judge_backward(case, got, named=named)
