"""Chapter 11's pictures and widgets: causal masking, attention patterns, and the GPT next to
chapter 09's LSTM.

    widgets.mask_pictures(scores, mask, weights, text)  # the mask, the scores, their softmax
    weights = widgets.attention_weights(gpt, vocab, text)   # (layers, heads, T, T)
    widgets.looking_back(weights)                       # where each head looks, on average
    widgets.attention_view(weights_of, "ROMEO:")        # layer, head, prime -> a heatmap
    widgets.loss_vs_time({"GPT": (minutes, losses)})    # held-out loss against training time
    widgets.side_by_side({"LSTM": text, "GPT": text})   # samples in columns

The attention view is driven by a function ``weights_of(text)`` that returns the attention
weights of every layer and head for a text, an array (layers, heads, T, T) whose row t is what
position t attends to (``attention_weights`` below makes one from a GPT). Like ``mg.widgets``,
its controls are plain attributes (``view.layer.value = 2``, ``view.prime.value = "KING"``), so
a test drives it as a learner would, and ``view.weights`` is the (T, T) matrix drawn.
"""

import html

import ipywidgets as ipw
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .. import BadValueError
from ..blas import one_thread
from ..widgets import WIDE, picture, png, show_png

SHOWN = {" ": "␣", "\n": "⏎"}                      # characters that would not show as a label


def shown(text):
    """The characters of ``text`` as tick labels: a space is ␣, a newline ⏎."""
    return [SHOWN.get(ch, ch) for ch in text]


def heatmap(ax, weights, rows, columns=None, title=None, limits=(0, 1)):
    """Draw ``weights`` (rows attend to columns) on ``ax``, each axis labelled by its characters;
    ``limits`` are the colour scale's ends (None: the data's)."""
    columns = rows if columns is None else columns
    low, high = limits or (None, None)
    ax.imshow(weights, cmap="Blues", vmin=low, vmax=high, interpolation="nearest")
    ax.set_xticks(range(len(columns)), shown(columns), fontsize=8)
    ax.set_yticks(range(len(rows)), shown(rows), fontsize=8)
    ax.set_xlabel("key: the position attended to", fontsize=9)
    ax.set_ylabel("query: the position reading", fontsize=9)
    ax.tick_params(length=0)
    if title:
        ax.set_title(title, fontsize=10)


def mask_pictures(scores, mask, weights, text):
    """Three panels over the characters of ``text``: the causal ``mask`` (True: may attend), the
    raw ``scores`` (each query with each key), and ``weights``, the softmax of the masked
    scores, zero above the diagonal."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 4))
    heatmap(axes[0], mask, text, title="the mask: who may look at whom")
    heatmap(axes[1], scores, text, title="scores q·k/√d, before the mask", limits=None)
    heatmap(axes[2], weights, text, title="softmax of the masked scores")
    for ax in axes[1:]:
        ax.set_ylabel("")
    fig.tight_layout()
    plt.show()


@one_thread
def attention_weights(model, vocab, text):
    """The attention weights of ``model`` (a GPT) reading ``text``: (layers, heads, T, T), row t
    of a head what position t attends to; read off the nodes ``h0.attn.weights``,
    ``h1.attn.weights``, ... after a forward pass. Only the last ``model.block_size``
    characters are read (a GPT sees no further back)."""
    if not text:
        raise BadValueError("attention_weights needs a text of at least one character to read.")
    ids = vocab.encode(text[-model.block_size:])
    window = model.window(len(ids))
    window.run(ids[None])
    return np.stack([window.scores.node(f"h{i}.attn.weights").value[0] for i in range(model.n_layer)])


def looking_back(weights):
    """Where each head looks, on average over the positions of ``weights`` (..., heads, T, T):
    a dict of arrays (..., heads), the mean weight a position gives to ``"itself"``, to the
    ``"previous"`` character, and the mean ``"distance"`` back it looks (sum of a_tj (t - j))."""
    T = weights.shape[-1]
    back = np.arange(T)[:, None] - np.arange(T)[None, :]          # t - j: how far back
    rows = np.arange(T)
    return {"itself": weights[..., rows, rows].mean(axis=-1),
            "previous": weights[..., rows[1:], rows[:-1]].mean(axis=-1),
            "distance": (weights * back).sum(axis=-1).mean(axis=-1)}


class AttentionView(ipw.VBox):
    """Choose a layer, a head and a priming text; see what each position attends to.

    ``weights_of(text)`` gives (layers, heads, T, T) for the last T characters of ``text`` (it
    raises ``BadValueError`` for a text the model cannot read: the message is shown instead of
    the heatmap). A text is read once; moving the layer or head only redraws. The prime box
    is a text area (Enter types a newline); the text is read when it loses focus. When
    ``weights_of`` reads only the last T characters of a longer text (a GPT sees no further
    back), the readout says so.
    """

    def __init__(self, weights_of, prime="ROMEO:", layer=0, head=0):
        self.weights_of = weights_of
        self.prime = ipw.Textarea(value=prime, description="prime", rows=3, continuous_update=False,
                                  layout=ipw.Layout(width="60%"))          # Enter types a newline
        self.layer = ipw.IntSlider(value=layer, min=0, max=layer, description="layer", style=WIDE,
                                   continuous_update=False)        # (its max: once a text is read)
        self.head = ipw.IntSlider(value=head, min=0, max=head, description="head", style=WIDE,
                                  continuous_update=False)
        self.readout = ipw.HTML().add_class("mg-readout")
        self.image = picture("the attention weights of one head: each character over the characters before it",
                             "mg-attention-heatmap")
        self.text, self.all_weights = None, None
        self.prime.observe(lambda _: self.update(), names="value")
        for slider in (self.layer, self.head):
            slider.observe(lambda _: self.redraw(), names="value")
        self.update()
        super().__init__([self.prime, ipw.HBox([self.layer, self.head]), self.readout, self.image])
        self.add_class("mg-attention-view")

    @property
    def weights(self):
        """The (T, T) weights drawn: those of the chosen layer and head (None after a text the
        model cannot read)."""
        if self.all_weights is None:
            return None
        return self.all_weights[self.layer.value, self.head.value]

    def update(self):
        """Read the priming text (if the model can) and redraw."""
        try:
            weights = np.asarray(self.weights_of(self.prime.value))
        except BadValueError as error:                 # a character the model never saw, ...
            self.text, self.all_weights = None, None
            self.readout.value = f"<pre>{html.escape(str(error), quote=False)}</pre>"
            show_png(self.image, b"")
            return
        layers, heads, T, _ = weights.shape
        self.text, self.all_weights = self.prime.value[-T:], weights
        with self.hold_trait_notifications():
            self.layer.max, self.head.max = layers - 1, heads - 1
        self.redraw()

    def redraw(self):
        """The heatmap of the chosen layer and head, and what the last position looks at."""
        if self.all_weights is None:                   # the message of the unread text stays
            return
        last = self.weights[-1]
        top = np.argsort(-last, kind="stable")[:3]
        looks = ", ".join(f"{html.escape(repr(self.text[k]), quote=False)} (position {k + 1}) {last[k]:.2f}"
                          for k in top)
        cut = len(self.prime.value) - len(self.text)
        shown = (f"the last {len(self.text)} of {len(self.prime.value)} characters (the model sees "
                 f"no further back)" if cut > 0 else f"{len(self.text)} characters")
        self.readout.value = (f"layer {self.layer.value}, head {self.head.value}, "
                              f"{shown}: the last one attends most to {looks}")
        show_png(self.image, self._plot())

    def _plot(self):
        size = min(9.0, 2.5 + 0.22 * len(self.text))
        fig = Figure(figsize=(size, size), dpi=80)
        ax = fig.subplots()
        heatmap(ax, self.weights, self.text,
                title=f"layer {self.layer.value}, head {self.head.value}: attention weights")
        fig.tight_layout()
        return png(fig)


def attention_view(weights_of, prime="ROMEO:", layer=0, head=0):
    """A widget: a priming text, a layer and a head (counted from 0, as the nodes ``h0``,
    ``h1``, ... are), and the heatmap of that head's attention weights over the text
    (``weights_of(text)``: (layers, heads, T, T), see ``AttentionView``)."""
    return AttentionView(weights_of, prime, layer, head)


def loss_vs_time(runs, ax=None):
    """Held-out loss against training time (minutes) of several runs: ``runs`` maps a name to
    ``(minutes, losses)``, two equally long sequences."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.5))
    for name, (minutes, losses) in runs.items():
        ax.plot(minutes, losses, "o-", markersize=3, label=name)
    ax.set_xlabel("training time (minutes, 2 shared cores)")
    ax.set_ylabel("held-out loss (nats per character)")
    ax.grid(alpha=0.3)
    ax.legend()
    plt.show()


def side_by_side(columns):
    """HTML of texts in columns, each under its name: ``columns`` maps a name to a text."""
    cells = "".join(f"<td style='vertical-align:top;text-align:left;padding-right:2em'><b>{html.escape(name)}</b>"
                    f"<pre>{html.escape(written)}</pre></td>" for name, written in columns.items())
    return f"<table class='mg-side-by-side'><tr>{cells}</tr></table>"
