"""Chapter 09's pictures and widgets: the streams of truncated BPTT, the loss curve of a run,
temperature, a sampler to play with, and Karpathy's "what the cells do".

    widgets.draw_streams(batch=3, chunks=4)             # B streams x chunks, state and gradient
    widgets.loss_curve(meta["history"])                 # training vs held-out loss
    widgets.sampler(model, vocab, prime="ROMEO:\n")     # prime, temperature, length, a button
    acts = widgets.cell_activations(model, vocab, text) # (characters, hidden): each cell's c
    widgets.cell_view(text, acts, cell=17)              # the text coloured by one cell

The cells are read with forward hooks (``node.register_forward_hook``) on the cell-state nodes
``t1.L1.c``, ``t2.L1.c``, ... of the model's chunk graph: the model runs as it always does, and
the hooks copy what it computes on the way.
"""

import html
import io
import threading

import ipywidgets
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .. import BadValueError, viz
from ..blas import one_thread
from ..widgets import WIDE
from ..training.sample import probabilities, sample

STATE, CUT = viz.KIND_COLOURS["input"][1], viz.GRADIENT


def draw_streams(batch=3, chunks=4, steps=8):
    """A picture of truncated BPTT: ``batch`` streams (rows), each read ``chunks`` chunks of
    ``steps`` characters (boxes). The state goes on from a chunk to the next (solid arrows);
    the gradient stops at every chunk's edge (the red bars)."""
    fig, ax = plt.subplots(figsize=(1.9 * chunks + 1.5, 0.75 * batch + 0.9))
    for row in range(batch):
        y = batch - 1 - row
        for k in range(chunks):
            ax.add_patch(plt.Rectangle((2 * k, y + 0.15), 1.4, 0.7, facecolor="#eef3fb",
                                       edgecolor="#555"))
            ax.text(2 * k + 0.7, y + 0.5, f"chunk {k + 1}\n{steps} chars", ha="center",
                    va="center", fontsize=8)
            if k + 1 < chunks:
                ax.annotate("", xy=(2 * k + 2, y + 0.5), xytext=(2 * k + 1.4, y + 0.5),
                            arrowprops=dict(arrowstyle="->", color=STATE, lw=2))
                ax.plot([2 * k + 1.7] * 2, [y + 0.2, y + 0.8], color=CUT, lw=3)
        ax.text(-0.2, y + 0.5, f"stream {row + 1}", ha="right", va="center", fontsize=9)
    ax.plot([], [], color=STATE, lw=2, label="state (h, c) carried: numbers")
    ax.plot([], [], color=CUT, lw=3, label="gradient stops")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, frameon=False, fontsize=9)
    ax.set_xlim(-2.2, 2 * chunks - 0.4)
    ax.set_ylim(-0.1, batch)
    ax.axis("off")
    ax.set_title("one training step reads one column: a batch of B chunks, side by side", fontsize=10)
    plt.show()


def loss_curve(history, ax=None):
    """The training loss (each iteration, faint, and its running mean over 50) and the
    held-out loss (dots) of a run's history, in nats per character."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.5))
    train = np.asarray(history["train"], dtype=float)
    held = np.asarray(history["held_out"], dtype=float)
    if len(train):
        ax.plot(train[:, 0], train[:, 1], color=STATE, alpha=0.25, lw=0.8)
        window = min(50, len(train))
        mean = np.convolve(train[:, 1], np.ones(window) / window, mode="valid")
        ax.plot(train[window - 1:, 0], mean, color=STATE, label=f"training (mean of {window})")
    if len(held):
        ax.plot(held[:, 0], held[:, 1], "o-", color=CUT, label="held-out")
    ax.set_xlabel("iteration")
    ax.set_ylabel("loss (nats per character)")
    ax.legend()
    ax.grid(alpha=0.3)
    plt.show()


@one_thread
def next_logits(model, vocab, prime):
    """The model's scores for the character after ``prime``, read by ``model.reader()`` as
    ``sample`` reads it (an LSTM or a GPT)."""
    read = model.reader()
    for i in vocab.encode(prime):
        logits = read(i)
    return logits.ravel()


def draw_bars(ax, vocab, logits, temperature, top=12):
    """Bars on ``ax``: the probabilities of the ``top`` best-scored characters at ``temperature``."""
    order = np.argsort(-logits)[:top]
    labels = [{" ": "␣", "\n": "⏎"}.get(vocab.chars[i], vocab.chars[i]) for i in order]
    bars = ax.bar(range(len(order)), probabilities(logits, temperature)[order], color=STATE)
    for k, bar in enumerate(bars):
        bar.set_gid(f"mg-bar-{k}")                     # in an SVG: <g id="mg-bar-k">, the k-th bar
    ax.set_xticks(range(len(order)), labels, fontsize=9)
    ax.set_title(f"temperature {temperature:g}", fontsize=10)


def temperature_bars(model, vocab, prime, temperatures=(0.5, 1.0, 1.5), top=12, axes=None):
    """Bars of the next-character distribution after ``prime``, one panel per temperature:
    the ``top`` most likely characters (at temperature 1)."""
    logits = next_logits(model, vocab, prime)
    if axes is None:
        _, axes = plt.subplots(1, len(temperatures), figsize=(3.2 * len(temperatures), 2.6),
                               sharey=True, squeeze=False)
        axes = axes[0]
    for ax, temperature in zip(axes, temperatures):
        draw_bars(ax, vocab, logits, temperature, top)
    axes[0].set_ylabel(f"p(next | {prime[-12:]!r})")
    plt.show()


def svg_of(fig):
    """A matplotlib Figure as inline SVG with its text kept as text (so a page can read it),
    shown at its natural size or shrunk to the output's width."""
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "minigraph"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    return svg[svg.index("<svg"):].replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)


class Sampler(ipywidgets.VBox):
    """A priming text, a temperature, a length and a button for a new sample; under them, the
    next-character distribution after the prime at that temperature, and a sample.

    The chart and the sample are made together from one setting, ``(prime, temperature,
    length, n)``, and shown together in one HTML widget (``.page``), with a line naming that
    setting; the n-th sample of a session uses seed ``seed + n``, so a sample repeats when the
    settings do. A character the model never saw shows its message in place of both.

    In a notebook (``background=True``) the work runs in a thread, so the kernel goes on
    reading the controls while a sample is written; when it is done, the newest setting asked
    for in the meantime is computed next and the ones between are dropped: one sample per
    setting that stays, never a chart from one setting over a sample from another. The prime
    box is a text area: Enter types a newline, and the sample follows when the box loses
    focus (click elsewhere, or press Tab).

    State after each update: ``shown`` (the setting of what is shown), ``written`` (the
    sample, or None), ``message`` (the line over the sample, or the error).
    """

    def __init__(self, model, vocab, prime="ROMEO:\n", temperature=0.8, length=300, seed=0,
                 background=True):
        self.model, self.vocab, self.seed, self.background = model, vocab, seed, background
        self.prime = ipywidgets.Textarea(value=prime, description="prime", rows=2,
                                         continuous_update=False, layout=ipywidgets.Layout(width="60%"))
        self.temperature = ipywidgets.FloatSlider(value=temperature, min=0.1, max=2.0, step=0.05,
                                                  description="temperature", style=WIDE,
                                                  continuous_update=False)
        self.length = ipywidgets.IntSlider(value=length, min=20, max=1000, step=20,
                                           description="length", style=WIDE, continuous_update=False)
        self.button = ipywidgets.Button(description="new sample")
        self.page = ipywidgets.HTML().add_class("mg-charlm-page")
        self.count, self.shown, self.written, self.message = 0, None, None, ""
        self._lock, self._wanted, self._busy = threading.Lock(), None, False
        for control in (self.prime, self.temperature, self.length):
            control.observe(lambda _: self.request(), names="value")
        self.button.on_click(lambda _: self.again())
        self.request()
        super().__init__([ipywidgets.HBox([self.prime, self.button]),
                          ipywidgets.HBox([self.temperature, self.length]), self.page])
        self.add_class("mg-charlm-sampler")

    def setting(self):
        """What the controls ask for now: (prime, temperature, length, n)."""
        return self.prime.value or "\n", self.temperature.value, self.length.value, self.count

    def again(self):
        """The button: another sample with the same settings (the next seed)."""
        self.count += 1
        self.request()

    def request(self):
        """Ask for the current setting: computed now, or after the one being computed."""
        with self._lock:
            self._wanted = self.setting()
            if self._busy:
                return
            self._busy = True
        if self.background:
            threading.Thread(target=self._work, daemon=True).start()
        else:
            self._work()

    def _work(self):
        try:
            while True:
                with self._lock:
                    wanted = self._wanted
                made = self._make(*wanted)
                with self._lock:
                    if wanted == self._wanted:             # else a newer setting waits: drop this one
                        self.page.value, self.written, self.message = made
                        self.shown = wanted
                        return
        finally:
            with self._lock:
                self._busy = False

    def _make(self, prime, temperature, length, n):
        """(page, sample, message) for one setting: the chart and the sample, or what went wrong."""
        try:
            logits = next_logits(self.model, self.vocab, prime)
            written = sample(self.model, self.vocab, prime, length, self.seed + n, temperature)
        except BadValueError as error:                 # a character the model never saw, ...
            return f"<pre class='mg-error'>{html.escape(str(error))}</pre>", None, str(error)
        fig = Figure(figsize=(6.4, 2.4), dpi=80)
        ax = fig.subplots()
        draw_bars(ax, self.vocab, logits, temperature)
        ax.set_title(f"p(next character | {prime[-12:]!r}) at temperature {temperature:g}", fontsize=10)
        fig.tight_layout()
        message = f"sample {n + 1}: {length} characters at temperature {temperature:g}"
        page = (svg_of(fig) + f"<div class='mg-readout'>{html.escape(message)}</div>"
                f"<pre class='charlm-sample'><b>{html.escape(prime)}</b>"
                f"{html.escape(written[len(prime):])}</pre>")
        return page, written, message


def sampler(model, vocab, prime="ROMEO:\n", temperature=0.8, length=300, seed=0):
    """A widget: priming text, temperature, length and a button for a new sample; above the
    sample, the next-character distribution at that temperature (see ``Sampler``)."""
    return Sampler(model, vocab, prime, temperature, length, seed)


@one_thread
def cell_activations(model, vocab, text, layer=None, steps=100):
    """``(characters, hidden)``: the cell state c of every unit of ``layer`` (the top one by
    default) after each character of ``text``, read with forward hooks on the ``t.L.c`` nodes
    while the model reads the text (one stream, ``steps`` characters at a time). Only whole
    chunks are read: the rows are the first ``len(text) // steps * steps`` characters."""
    layer = model.layers if layer is None else layer
    ids = vocab.encode(text)
    chunk, state, rows = model.chunk(steps), model.initial_state(1), []
    seen = {}
    handles = [chunk.scores.node(f"t{t}.L{layer}.c").register_forward_hook(
        lambda node, inputs, output, t=t: seen.__setitem__(t, np.array(output[0])))
        for t in range(1, steps + 1)]
    try:
        for start in range(0, len(ids) - steps + 1, steps):
            seen.clear()
            _, state = chunk.run(ids[None, start:start + steps], state)
            rows += [seen[t] for t in range(1, steps + 1)]
    finally:
        for handle in handles:
            handle.remove()
    return np.array(rows)


def text_features(text):
    """A few simple facts about each character of ``text``, as float arrays (1 or 0, or a count):
    things a cell might learn to track, which the character itself does not show."""
    position, line_start, column = [], 0, 0
    name_line, in_name = [], False
    bracket, depth = [], 0
    for k, ch in enumerate(text):
        if k == line_start:
            line = text[k:text.find("\n", k) if "\n" in text[k:] else len(text)]
            in_name = line.endswith(":") and line[:1].isupper()
        position.append(column)
        name_line.append(in_name)
        if ch in "([":
            depth += 1
        bracket.append(depth > 0)
        if ch in ")]" and depth:
            depth -= 1
        column += 1
        if ch == "\n":
            line_start, column = k + 1, 0
    chars = np.array(list(text))
    upper = np.char.isupper(chars)
    in_capitals = upper & (np.r_[False, upper[:-1]] | np.r_[upper[1:], False])
    return {
        "position in the line": np.array(position, float),
        "in a speaker's name line": np.array(name_line, float),
        "just after a newline": np.r_[0.0, (chars[:-1] == "\n").astype(float)],
        "inside ( ) or [ ]": np.array(bracket, float),
        "in a word in capitals": in_capitals.astype(float),
    }


def correlations(activations, features):
    """For each feature, ``(cell, r)``: the cell whose activation has the largest |correlation|
    with it, and that correlation (Pearson's r over the characters). A feature the text never
    shows (no brackets at all) is left out."""
    a = activations - activations.mean(axis=0)
    a /= np.sqrt((a ** 2).sum(axis=0)) + 1e-12
    best = {}
    for name, feature in features.items():
        f = feature - feature.mean()
        if not f.any():                                # the text never shows it
            continue
        r = a.T @ (f / (np.sqrt((f ** 2).sum()) + 1e-12))
        cell = int(np.argmax(np.abs(r)))
        best[name] = (cell, float(r[cell]))
    return best


def coloured(text, values):
    """HTML: each character of ``text`` on a background from blue (value -1) to red (+1)."""
    spans = []
    for ch, v in zip(text, np.clip(values, -1, 1)):
        red, blue = (255, int(255 * (1 - v))) if v > 0 else (int(255 * (1 + v)), 255)
        colour = f"rgb({red},{min(red, blue)},{blue})"
        shown = "⏎<br>" if ch == "\n" else html.escape(ch)
        spans.append(f"<span style='background:{colour}'>{shown}</span>")
    return "<div style='font-family:monospace;line-height:1.5'>" + "".join(spans) + "</div>"


def cell_view(text, activations, cell=0, named=None):
    """A widget: ``text`` coloured by the activation of one cell (tanh of its c, from -1, blue,
    to +1, red); ``named`` maps labels (a feature) to cells for a drop-down of the found ones."""
    slider = ipywidgets.IntSlider(value=cell, min=0, max=activations.shape[1] - 1,
                                  description="cell", continuous_update=False)
    choices = [("(choose a feature)", -1)] + [(f"{name}: cell {c}", c) for name, c in (named or {}).items()]
    menu = ipywidgets.Dropdown(options=choices, value=-1, description="found")
    page = ipywidgets.HTML()

    def show(*_):
        page.value = coloured(text, np.tanh(activations[:, slider.value]))

    def pick(change):
        if change["new"] >= 0:
            slider.value = change["new"]

    slider.observe(show, names="value")
    menu.observe(pick, names="value")
    show()
    box = ipywidgets.VBox([ipywidgets.HBox([slider, menu]), page])
    box.add_class("mg-charlm-cells")
    return box
