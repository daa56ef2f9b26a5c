"""Chapter 10's pictures and widget: the alignment matrix, and a translator to play with.

    widgets.show_alignment(source, output, weights)     # the heatmap, in a notebook cell
    box = widgets.explorer(model, examples)             # pick or type a date; see where it looked
    box.text.value = "3 mar 1997"                       # what a learner's typing does
    box.translation, box.alignment, box.message         # the state after the update

The alignment of a translation is the matrix of its attention weights: one row per output
character, one column per source character, each row summing to 1. The heatmap shows it with
the source along the top and the output down the side; the explorer redraws it for the date
you choose, and highlights the row of one output step if you pick one. Like ``mg.widgets``,
the explorer's controls are plain attributes, so a test drives it as a learner would. This
module imports ipywidgets and matplotlib; ``import minigraph.translate`` does not.
"""

import html

import ipywidgets as ipw
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from .. import BadValueError, viz
from ..widgets import WIDE, picture, png, show_png
from . import data

HIGHLIGHT = viz.GRADIENT


def draw_alignment(ax, source, output, weights, step=None):
    """Draw the heatmap of ``weights`` (len(output), len(source)) on the matplotlib Axes ``ax``:
    source characters along the top, output characters down the left; ``step`` (0-based), if
    given, is the output row outlined."""
    weights = np.asarray(weights)
    if weights.shape != (len(output), len(source)):
        raise BadValueError(f"an alignment has one row per output character and one column per "
                            f"source character: ({len(output)}, {len(source)}) for {output!r} from "
                            f"{source!r}; got shape {weights.shape}.")
    image = ax.imshow(weights, cmap="Blues", vmin=0, vmax=1, aspect="equal")
    ax.set_xticks(range(len(source)), [{" ": "␣"}.get(ch, ch) for ch in source], fontsize=9)
    ax.set_yticks(range(len(output)), list(output), fontsize=9)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("source", fontsize=9)
    ax.set_ylabel("output", fontsize=9)
    if step is not None:
        ax.add_patch(plt.Rectangle((-0.5, step - 0.5), len(source), 1, fill=False,
                                   edgecolor=HIGHLIGHT, lw=2.5))
    return image


def show_alignment(source, output, weights, step=None):
    """The alignment heatmap of one translation, shown in the notebook (``draw_alignment``)."""
    fig, ax = plt.subplots(figsize=(0.32 * len(source) + 1.5, 0.32 * len(output) + 1.2))
    fig.colorbar(draw_alignment(ax, source, output, weights, step), ax=ax, shrink=0.8,
                 label="attention weight")
    plt.show()


class Explorer(ipw.VBox):
    """Pick an example (a dropdown) or type a date (a text box); see the translation and its
    alignment. A dropdown of output steps outlines one row and lists where that step looked.

    State after each update: ``translation`` (a string, or None), ``alignment`` (the weights,
    or None), ``confidence`` (the model's probability of that translation), ``message`` (the
    readout's text: the translation, marked if it is no date that exists, with the model's
    confidence; it explains bad input instead of raising).
    """

    def __init__(self, model, examples, value=None):
        self.model = model
        self.targets = dict(examples)                    # source -> its true ISO date
        sources = list(self.targets)
        if not (sources or value):
            raise BadValueError("the explorer needs a date to show first: give it examples for its "
                                "dropdown (e.g. data.dates(1, 20).held_out) or value='3 mar 1997'.")
        self.menu = ipw.Dropdown(options=["(type below)"] + sources, description="example",
                                 style=WIDE)
        self.text = ipw.Text(value=value or sources[0], description="date", style=WIDE,
                             continuous_update=False)
        self.step = ipw.Dropdown(options=[("(none)", -1)], value=-1, description="output step",
                                 style=WIDE)
        self.readout = ipw.HTML().add_class("mg-readout")
        self.image = picture("the alignment: how much each output character attends to each input character",
                             "mg-alignment")
        self.translation = self.alignment = self.confidence = None
        self.message = ""
        self.menu.observe(self._pick, names="value")
        self.text.observe(lambda _: self.update(), names="value")
        self.step.observe(lambda _: self._show(), names="value")
        self.update()
        super().__init__([ipw.HBox([self.menu, self.text]), self.step, self.readout, self.image])
        self.add_class("mg-translate-explorer")

    def _pick(self, change):
        if change["new"] in self.targets:
            self.text.value = change["new"]

    def update(self):
        """Translate the text box's date and redraw (or explain why it cannot be read)."""
        source = self.text.value
        self.menu.value = source if source in self.targets else self.menu.options[0]
        if not source.strip():
            self._clear("the date box is empty: type a date (e.g. 3 mar 1997) or pick an example.")
            return
        try:
            (self.translation,), (self.alignment,), (self.confidence,) = \
                self.model.translate_with_confidence([source])
        except BadValueError as error:                   # a character the model never saw, ...
            self._clear(f"cannot translate this: {error}")
            return
        previous = self.step.value
        self.step.options = [("(none)", -1)] + [(f"{i + 1}: {ch}", i)
                                                for i, ch in enumerate(self.translation)]
        self.step.value = previous if previous < len(self.translation) else -1
        self._show()

    def _show(self):
        if self.translation is None:
            return
        source, output, weights = self.text.value, self.translation, self.alignment
        target = self.targets.get(source)
        verdict = "" if target is None else (" ✓ right" if output == target else f" ✗ should be {target}")
        validity = "" if data.is_date(output) else " ⚠ not a date that exists"
        message = f"{source!r} → {output}{verdict}{validity} (the model's probability {self.confidence:.3f})"
        step = self.step.value if self.step.value >= 0 else None
        if step is not None:
            top = np.argsort(-weights[step])[:3]
            looked = ", ".join(f"{source[j]!r} (position {j + 1}) {weights[step, j]:.2f}" for j in top)
            message += f"\nstep {step + 1} wrote {output[step]!r} looking at: {looked}"
        self._say(message)
        show_png(self.image, self._plot(source, output, weights, step))

    def _clear(self, message):
        """No translation to show: the message instead of the heatmap."""
        self.translation = self.alignment = self.confidence = None
        self.step.options, self.step.value = [("(none)", -1)], -1
        show_png(self.image, b"")
        self._say(message)

    def _say(self, message):
        self.message = message
        self.readout.value = f"<pre style='margin:0'>{html.escape(message)}</pre>"

    @staticmethod
    def _plot(source, output, weights, step):
        fig = Figure(figsize=(0.3 * len(source) + 1.6, 0.3 * len(output) + 1.3), dpi=80)
        ax = fig.subplots()
        fig.colorbar(draw_alignment(ax, source, output, weights, step), ax=ax, shrink=0.8)
        fig.tight_layout()
        return png(fig)


def explorer(model, examples, value=None):
    """The translation explorer: ``examples`` are (source, target) pairs for the dropdown;
    ``value`` is the date shown first (the first example's if None)."""
    return Explorer(model, examples, value)
