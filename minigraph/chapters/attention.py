"""Scaled dot-product attention built from the engine's ops, and why its scores are divided by √d.

A query asks, keys offer, values answer. For queries ``q`` (n, d), keys ``k`` (m, d) and values
``v`` (m, d_v):

    scores  = q kᵀ / √d            how well each query matches each key, (n, m)
    weights = softmax(scores)      along the keys: each row is a distribution over the m keys
    output  = weights v            each query's weighted average of the values, (n, d_v)

``attention`` adds these nodes to a graph (so ``mg.draw`` shows them with their values and
gradients); ``saturation`` measures what happens to the softmax when the scores are *not*
divided by √d, ``saturation_plot`` draws it, and ``scale_view`` is a slider for d.

    att = attention(q, k, v)                     # att.scores, att.weights, att.output: nodes
    att = attention(q, k, v, mask=allowed)       # keys where ``allowed`` is False get weight 0
    saturation_plot(dims=(1, 4, 16, 64, 256))    # the largest weight and the softmax's slope
    scale_view(d=64)                             # a slider for d; one query's weights, both ways

The widget is an ipywidgets box whose slider is a plain attribute (``view.slider.value = 256``),
so a test drives it as a learner would.
"""

import math
from collections import namedtuple

import ipywidgets as ipw
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from ..errors import BadValueError
from ..graph import Number
from ..nn import log_probabilities
from ..ops import div, matmul, softmax, transpose
from ..viz import format_number
from ..widgets import WIDE, SliderPlot, png

DIMS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)       # the sizes d the experiment and the slider try
UNSCALED, SCALED = "#c0392b", "#2e6fb7"              # the colours of q·k and of q·k / √d

Attention = namedtuple("Attention", "scores weights output")
Attention.__doc__ = "The nodes of one attention: the scaled scores, the weights and the output."


def attention(q, k, v, d=None, mask=None, scaled=True, name=""):
    """Scaled dot-product attention of queries ``q`` over keys ``k`` and values ``v`` (nodes).

    q  (d,) one query or (n, d) queries          d     the size of a key (default: read from
    k  (m, d) keys (2-D: ``kᵀ`` swaps its axes)        ``k``'s value, so give it when ``k`` is
    v  (m, d_v) values, one row per key                an Input not yet fed)
    mask    a boolean array broadcastable to the scores, True where a query may look at a key
            (``mg.softmax``'s ``mask``): the other keys get weight exactly 0
    scaled  divide the scores by √d (True), or not (to see why one does)
    name    put in front of the nodes' names (``name.scores``, ...): for several attentions in
            one graph, whose node names must differ (and ``mg.draw`` frames each)

    Returns ``Attention(scores, weights, output)``, the nodes named ``scores``, ``weights`` and
    ``output`` (and ``kᵀ``, ``q·k``, ``√d`` for the parts of the scores).
    """
    prefix = f"{name}." if name else ""
    if d is None:
        if k.value is None:
            raise BadValueError(f"attention needs the size d of a key to scale the scores by √d; "
                                f"the keys '{k.name}' have no value yet. Pass d=, e.g. "
                                f"attention(q, k, v, d=64).")
        d = np.shape(k.value)[-1]
    products = matmul(q, transpose(k, name=prefix + "kᵀ"), name=prefix + "q·k")
    # √d is a Python number (a weak Number): it takes the dtype of q·k, so float32 stays float32
    scores = (div(products, Number(math.sqrt(d), name=prefix + "√d"), name=prefix + "scores")
              if scaled else products)
    weights = (softmax(scores, axis=-1, name=prefix + "weights") if mask is None
               else softmax(scores, axis=-1, mask=np.asarray(mask, dtype=bool), name=prefix + "weights"))
    return Attention(scores, weights, matmul(weights, v, name=prefix + "output"))


def softmax_slope(p):
    """‖diag(p) − p pᵀ‖ (Frobenius norm) for each row p of weights: the size of the softmax's
    Jacobian, how much of a gradient it passes back to the scores (0 when saturated)."""
    jacobian = p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]
    return np.linalg.norm(jacobian, axis=(-2, -1))


def saturation(dims, keys=8, trials=400, rng=0):
    """How peaked the softmax of dot-product scores gets as the size d of the vectors grows.

    For each d in ``dims``: ``trials`` draws of one query and ``keys`` keys with independent
    standard normal entries, so each score q·k has mean 0 and variance d (standard deviation
    √d). Returns a dict of arrays, one entry per d, each the mean over the draws:

        largest, largest_scaled   the largest attention weight, of softmax(q·k) and of
                                  softmax(q·k / √d); 1/keys is an even spread, 1 all on one key
        slope, slope_scaled       ``softmax_slope``: how much gradient the scores can get back,
                                  0 when the softmax is saturated (all weight on one key)
    """
    rng = np.random.default_rng(rng)
    out = {name: [] for name in ("largest", "largest_scaled", "slope", "slope_scaled")}
    for d in dims:
        q = rng.standard_normal((trials, 1, d))
        k = rng.standard_normal((trials, keys, d))
        products = (q @ np.swapaxes(k, 1, 2))[:, 0]                 # (trials, keys)
        for suffix, scores in (("", products), ("_scaled", products / np.sqrt(d))):
            p = np.exp(log_probabilities(scores))
            out["largest" + suffix].append(p.max(axis=1).mean())
            out["slope" + suffix].append(softmax_slope(p).mean())
    return {name: np.array(values) for name, values in out.items()}


def saturation_plot(dims=DIMS, keys=8, trials=400, rng=0):
    """Two panels from ``saturation``: the largest weight, and the softmax's slope, against d,
    for scores divided by √d and not. Returns the measurements."""
    found = saturation(dims, keys, trials, rng)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3))
    for ax, name, label in ((axes[0], "largest", "largest weight (mean)"),
                            (axes[1], "slope", "softmax slope ‖diag(p) − ppᵀ‖ (mean)")):
        ax.plot(dims, found[name], "o-", color=UNSCALED, label="q·k")
        ax.plot(dims, found[name + "_scaled"], "o-", color=SCALED, label="q·k / √d")
        ax.set(xscale="log", xlabel="d, the size of a query and a key", ylabel=label)
        ax.set_xticks(dims, [str(d) for d in dims], fontsize=7)
    axes[0].axhline(1 / keys, color="gray", lw=0.5)
    axes[0].set_ylim(0, 1)
    axes[1].set_ylim(bottom=0)
    axes[0].legend()
    fig.tight_layout()
    plt.show()
    return found


class ScaleView(SliderPlot):
    """A slider for d, and the weights one query gives ``keys`` keys, with scores q·k and q·k/√d.

    The query and the keys are the first d entries of fixed random vectors (standard normal), so
    moving the slider adds entries to the same vectors. The readout gives the spread of the
    scores and, both ways, the largest weight and the softmax's slope (``softmax_slope``).
    """

    def __init__(self, d=64, keys=8, seed=0):
        rng = np.random.default_rng(seed)
        self.q, self.k = rng.standard_normal(max(DIMS)), rng.standard_normal((keys, max(DIMS)))
        super().__init__(ipw.SelectionSlider(options=DIMS, value=d, description="d", style=WIDE,
                                             continuous_update=True), "mg-attention-scale",
                         "the weights one query gives each key, from the scores q·k and q·k/√d")

    def update(self):
        """Score the keys for the slider's d, both ways; redraw the bars and the readout."""
        d = self.slider.value
        products = self.k[:, :d] @ self.q[:d]
        self.weights = {"q·k": np.exp(log_probabilities(products)),
                        "q·k / √d": np.exp(log_probabilities(products / np.sqrt(d)))}
        parts = [f"{name}: largest weight <b>{format_number(p.max(), 3)}</b>, slope "
                 f"<b>{format_number(softmax_slope(p), 3)}</b>" for name, p in self.weights.items()]
        self.readout.value = (f"d = {d}: the scores q·k spread with standard deviation "
                              f"<b>{format_number(products.std(), 3)}</b> · " + " · ".join(parts))
        self.image.value = self._plot()

    def _plot(self):
        fig = Figure(figsize=(7.5, 2.4), dpi=80)
        fig.subplots_adjust(left=0.08, right=0.98, bottom=0.2, top=0.86, wspace=0.25)
        for ax, (name, p), colour in zip(fig.subplots(1, 2), self.weights.items(), (UNSCALED, SCALED)):
            ax.bar(range(1, len(p) + 1), p, color=colour)
            ax.set(ylim=(0, 1), title=f"softmax({name})", xlabel="key")
            ax.set_xticks(range(1, len(p) + 1))
        return png(fig)


def scale_view(d=64, keys=8, seed=0):
    """A slider for d (1 to 512) and one query's weights over ``keys`` keys, unscaled and scaled."""
    return ScaleView(d, keys, seed)
