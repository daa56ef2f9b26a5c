"""Chapter 09's pictures and widgets: the streams of truncated BPTT, the loss curve of a run,
temperature, a sampler to play with, and Karpathy's "what the cells do".

    widgets.draw_streams(batch=3, chunks=4)             # B streams x chunks, state and gradient
    widgets.loss_curve(meta["history"])                 # training vs held-out loss
    widgets.sampler(model, vocab, prime="ROMEO:")       # prime, temperature, length, a button
    acts = widgets.cell_activations(model, vocab, text) # (characters, hidden): each cell's c
    widgets.cell_view(text, acts, cell=17)              # the text coloured by one cell

The cells are read with forward hooks (``node.register_forward_hook``) on the cell-state nodes
``t1.L1.c``, ``t2.L1.c``, ... of the model's chunk graph: the model runs as it always does, and
the hooks copy what it computes on the way.
"""

import html

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np

from .. import BadValueError, viz
from .sample import probabilities, sample

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


def next_logits(model, vocab, prime):
    """The model's scores for the character after ``prime``, read by ``model.reader()`` as
    ``sample`` reads it (an LSTM or a GPT)."""
    read = model.reader()
    for i in vocab.encode(prime):
        logits = read(i)
    return logits.ravel()


def temperature_bars(model, vocab, prime, temperatures=(0.5, 1.0, 1.5), top=12, axes=None):
    """Bars of the next-character distribution after ``prime``, one panel per temperature:
    the ``top`` most likely characters (at temperature 1)."""
    logits = next_logits(model, vocab, prime)
    order = np.argsort(-logits)[:top]
    labels = [{" ": "␣", "\n": "⏎"}.get(vocab.chars[i], vocab.chars[i]) for i in order]
    if axes is None:
        _, axes = plt.subplots(1, len(temperatures), figsize=(3.2 * len(temperatures), 2.6),
                               sharey=True, squeeze=False)
        axes = axes[0]
    for ax, temperature in zip(axes, temperatures):
        ax.bar(range(top), probabilities(logits, temperature)[order], color=STATE)
        ax.set_xticks(range(top), labels, fontsize=9)
        ax.set_title(f"temperature {temperature:g}", fontsize=10)
    axes[0].set_ylabel(f"p(next | {prime[-12:]!r})")
    plt.show()


def sampler(model, vocab, prime="ROMEO:", temperature=0.8, length=300, seed=0):
    """A widget: priming text, temperature, length and a button for a new sample; above the
    sample, the next-character distribution at that temperature. The n-th sample of a session
    uses seed ``seed + n``, so a sample repeats when the settings do."""
    prime_box = ipywidgets.Text(value=prime, description="prime")
    temperature_slider = ipywidgets.FloatSlider(value=temperature, min=0.1, max=2.0, step=0.05,
                                                description="temperature", continuous_update=False)
    length_slider = ipywidgets.IntSlider(value=length, min=20, max=1000, step=20,
                                         description="length", continuous_update=False)
    button = ipywidgets.Button(description="new sample")
    bars, text = ipywidgets.Output(), ipywidgets.HTML()
    count = [0]

    def redraw(*_):
        prime_text = prime_box.value or "\n"
        try:
            vocab.encode(prime_text)
        except BadValueError as error:                 # a character the model never saw
            text.value = f"<pre>{html.escape(str(error))}</pre>"
            return
        bars.clear_output(wait=True)
        with bars:
            temperature_bars(model, vocab, prime_text, (temperature_slider.value,))
        written = sample(model, vocab, prime_text, length_slider.value, seed + count[0],
                         temperature_slider.value)
        text.value = (f"<pre class='charlm-sample'><b>{html.escape(prime_text)}</b>"
                      f"{html.escape(written[len(prime_text):])}</pre>")

    def again(_):
        count[0] += 1
        redraw()

    for control in (prime_box, temperature_slider, length_slider):
        control.observe(redraw, names="value")
    button.on_click(again)
    redraw()
    box = ipywidgets.VBox([ipywidgets.HBox([prime_box, button]),
                           ipywidgets.HBox([temperature_slider, length_slider]), bars, text])
    box.add_class("mg-charlm-sampler")
    return box


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
