"""Scaled dot-product attention built from the engine's ops, and why its scores are divided by √d.

A query asks, keys offer, values answer. For queries ``q`` (n, d), keys ``k`` (m, d) and values
``v`` (m, d_v):

    scores  = q kᵀ / √d            how well each query matches each key, (n, m)
    weights = softmax(scores)      along the keys: each row is a distribution over the m keys
    output  = weights v            each query's weighted average of the values, (n, d_v)

``attention`` adds these nodes to a graph (so ``mg.draw`` shows them with their values and
gradients); ``saturation`` measures what happens to the softmax when the scores are *not*
divided by √d, and ``saturation_plot`` draws it.

    att = attention(q, k, v)                     # att.scores, att.weights, att.output: nodes
    att = attention(q, k, v, mask=allowed)       # keys where ``allowed`` is False get weight 0
    saturation_plot(dims=(1, 4, 16, 64, 256))    # the largest weight and the softmax's slope
"""

from collections import namedtuple

import matplotlib.pyplot as plt
import numpy as np

from .errors import BadValueError
from .graph import Constant
from .kernels import log_softmax
from .ops import div, matmul, softmax, transpose

Attention = namedtuple("Attention", "scores weights output")
Attention.__doc__ = "The nodes of one attention: the scaled scores, the weights and the output."


def attention(q, k, v, d=None, mask=None, scaled=True):
    """Scaled dot-product attention of queries ``q`` over keys ``k`` and values ``v`` (nodes).

    q  (d,) one query or (n, d) queries          d     the size of a key (default: read from
    k  (m, d) keys                                     ``k``'s value, so give it when ``k`` is
    v  (m, d_v) values, one row per key                an Input not yet fed)
    mask    a boolean array broadcastable to the scores, True where a query may look at a key
            (``mg.softmax``'s ``mask``): the other keys get weight exactly 0
    scaled  divide the scores by √d (True), or not (to see why one does)

    Returns ``Attention(scores, weights, output)``, the nodes named ``scores``, ``weights`` and
    ``output`` (and ``q·k``, ``√d`` for the parts of the scores).
    """
    if d is None:
        if k.value is None:
            raise BadValueError(f"attention needs the size d of a key to scale the scores by √d; "
                                f"the keys '{k.name}' have no value yet. Pass d=, e.g. "
                                f"attention(q, k, v, d=64).")
        d = np.shape(k.value)[-1]
    products = matmul(q, transpose(k, name="kᵀ"), name="q·k")
    scores = div(products, Constant(np.sqrt(d), name="√d"), name="scores") if scaled else products
    weights = (softmax(scores, axis=-1, name="weights") if mask is None
               else softmax(scores, axis=-1, mask=np.asarray(mask, dtype=bool), name="weights"))
    return Attention(scores, weights, matmul(weights, v, name="output"))


def saturation(dims, keys=8, trials=400, rng=0):
    """How peaked the softmax of dot-product scores gets as the size d of the vectors grows.

    For each d in ``dims``: ``trials`` draws of one query and ``keys`` keys with independent
    standard normal entries, so each score q·k has mean 0 and variance d (standard deviation
    √d). Returns a dict of arrays, one entry per d, each the mean over the draws:

        largest, largest_scaled   the largest attention weight, of softmax(q·k) and of
                                  softmax(q·k / √d); 1/keys is an even spread, 1 all on one key
        slope, slope_scaled       the size of the softmax's Jacobian, ‖diag(p) − p pᵀ‖ (Frobenius
                                  norm): how much gradient the scores can get back. It is 0 when
                                  the softmax is saturated (all weight on one key)
    """
    rng = np.random.default_rng(rng)
    out = {name: [] for name in ("largest", "largest_scaled", "slope", "slope_scaled")}
    for d in dims:
        q = rng.standard_normal((trials, 1, d))
        k = rng.standard_normal((trials, keys, d))
        products = (q @ np.swapaxes(k, 1, 2))[:, 0]                 # (trials, keys)
        for suffix, scores in (("", products), ("_scaled", products / np.sqrt(d))):
            p = np.exp(log_softmax(scores))
            jacobian = p[:, :, None] * np.eye(keys) - p[:, :, None] * p[:, None, :]
            out["largest" + suffix].append(p.max(axis=1).mean())
            out["slope" + suffix].append(np.linalg.norm(jacobian, axis=(1, 2)).mean())
    return {name: np.array(values) for name, values in out.items()}


def saturation_plot(dims=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512), keys=8, trials=400, rng=0):
    """Two panels from ``saturation``: the largest weight, and the softmax's slope, against d,
    for scores divided by √d and not. Returns the measurements."""
    found = saturation(dims, keys, trials, rng)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3))
    for ax, name, label in ((axes[0], "largest", "largest weight (mean)"),
                            (axes[1], "slope", "softmax slope ‖diag(p) − ppᵀ‖ (mean)")):
        ax.plot(dims, found[name], "o-", color="#c0392b", label="q·k")
        ax.plot(dims, found[name + "_scaled"], "o-", color="#2e6fb7", label="q·k / √d")
        ax.set(xscale="log", xlabel="d, the size of a query and a key", ylabel=label)
        ax.set_xticks(dims, [str(d) for d in dims], fontsize=7)
    axes[0].axhline(1 / keys, color="gray", lw=0.5)
    axes[0].legend()
    fig.tight_layout()
    plt.show()
    return found
