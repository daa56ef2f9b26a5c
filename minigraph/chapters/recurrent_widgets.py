"""Pictures and widgets of chapter 07: unrolled graphs, gradients through time, the Reber automaton.

    unrolled_view(model, X, targets)   a slider for T; the graph of T steps, drawn
    gradient_flow()                    a slider for W_hh's spectral radius; ||dL/dh_t|| against t
    draw_reber()                       the Reber grammar's automaton, drawn with graphviz

Like ``mg.widgets``, each widget is an ipywidgets box whose controls are plain attributes
(``.slider.value = 1.5``), so a test drives it as a learner would. This module imports
ipywidgets and matplotlib; ``import minigraph`` does not import it.
"""

import html

import ipywidgets as ipw
import numpy as np

from .. import data, viz
from .recurrent import (LSTMCell, RNNCell, SequenceModel, clip_by_global_norm, last_step_gradients,
                        set_spectral_radius)
from ..widgets import WIDE, SliderPlot, png, svg_view


# -- the unrolled graph, for a T you choose -----------------------------------------------------

class UnrolledView(ipw.VBox):
    """A slider for the number of steps T and the drawing of ``model`` unrolled for T steps.

    Each drawing shows the values and gradients of one backward pass on the first T steps of
    ``X`` (batch, T_max, n_in) with ``targets`` (batch, T_max, n_out).
    """

    def __init__(self, model, X, targets, T=2, **draw_options):
        self.model, self.X, self.targets, self.options = model, X, targets, draw_options
        self.slider = ipw.IntSlider(value=T, min=1, max=X.shape[1], description="time steps T", style=WIDE)
        self.readout = ipw.HTML().add_class("mg-readout")
        self.view = ipw.HTML().add_class("mg-view")
        self._drawings = {}
        self.slider.observe(lambda _: self._show(), names="value")
        self._show()
        super().__init__([self.slider, self.readout, self.view])
        self.add_class("mg-unrolled")

    def drawing(self, T):
        """The drawing of T steps (made once per T)."""
        if T not in self._drawings:
            net = self.model.unroll(T)
            net.graph.backward(net.feed(self.X[:, :T], self.targets[:, :T]))
            self._drawings[T] = viz.draw(net.graph, **self.options)
        return self._drawings[T]

    def _show(self):
        T = self.slider.value
        graph = self.model.unroll(T).graph
        shared = ", ".join(f"{p.name} by {sum(p in n.inputs for n in graph.nodes)} ops"
                           for p in self.model.cell.parameters)
        self.readout.value = (f"T = {T}: <b>{len(graph.nodes)}</b> nodes; each Parameter is one node, "
                              f"used at every step ({html.escape(shared)})")
        svg = self.drawing(T).svg()
        self.view.value = svg_view(svg[svg.index("<svg"):])


def unrolled_view(model, X, targets, T=2, **draw_options):
    """A slider for T and the drawing of ``model`` unrolled for T steps (values and gradients)."""
    return UnrolledView(model, X, targets, T, **draw_options)


# -- gradients through time ------------------------------------------------------------------------

class GradientFlow(SliderPlot):
    """How much gradient reaches each time step, as W_hh's spectral radius moves.

    A simple RNN and an LSTM (both ``n_hidden`` units) read the same ``T`` random inputs; only
    the last step has a loss. The plot shows ``||dL/dh_t||`` of the RNN against t (log scale)
    and, dashed, ``||dL/dc_t||`` of the LSTM's cell state. The readout gives the RNN's global
    gradient norm and the factor that clipping it to ``max_norm`` would multiply it by.
    """

    def __init__(self, radius=1.0, T=40, n_hidden=16, max_norm=1.0, seed=0):
        rng = np.random.default_rng(seed)
        self.X = rng.normal(0.0, 0.2, size=(1, T, 7))
        self.rnn = SequenceModel(RNNCell(7, n_hidden, rng), 7, rng)
        self.lstm = SequenceModel(LSTMCell(7, n_hidden, rng), 7, rng)
        _, self.lstm_norms = last_step_gradients(self.lstm, self.X)
        self.max_norm = max_norm
        super().__init__(ipw.FloatSlider(value=radius, min=0.5, max=2.5, step=0.05, readout_format=".2f",
                                         description="spectral radius of W_hh", style=WIDE,
                                         continuous_update=True), "mg-gradient-flow",
                         "the gradient's norm at each time step: the RNN's, and the LSTM's cell state dashed")

    def update(self):
        """Rescale W_hh to the slider's radius, backpropagate, redraw."""
        set_spectral_radius(self.rnn.cell.W_hh, self.slider.value)
        self.norms, _ = last_step_gradients(self.rnn, self.X)
        _, self.global_norm = clip_by_global_norm([p.grad for p in self.rnn.parameters], self.max_norm)
        factor = min(1.0, self.max_norm / self.global_norm)
        self.readout.value = (f"||dL/dh<sub>1</sub>|| / ||dL/dh<sub>T</sub>|| = "
                              f"<b>{viz.format_number(self.norms[0] / self.norms[-1], 3)}</b> · "
                              f"global gradient norm <b>{viz.format_number(self.global_norm, 3)}</b>, "
                              f"clipped to {viz.format_number(self.max_norm)}: every gradient × "
                              f"<b>{viz.format_number(factor, 3)}</b>")
        self.image.value = self._plot()

    def _plot(self):
        from matplotlib.figure import Figure
        fig = Figure(figsize=(7.5, 3.2), dpi=80)
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.16, top=0.9)
        ax = fig.subplots()
        steps = np.arange(1, len(self.norms) + 1)
        ax.semilogy(steps, self.norms, color=viz.GRADIENT, marker="o", markersize=3,
                    label=f"RNN  ||dL/dh_t||, radius {self.slider.value:.2f}")
        ax.semilogy(steps, self.lstm_norms, color=viz.KIND_COLOURS["input"][1], linestyle="--",
                    label="LSTM ||dL/dc_t|| (forget bias 1)")
        ax.set(xlabel="time step t (the loss is at the last step)", ylim=(1e-14, 1e3),
               title="gradient reaching each time step")
        ax.legend(loc="lower right", fontsize=9)
        return png(fig)


def gradient_flow(radius=1.0, T=40, n_hidden=16, max_norm=1.0, seed=0):
    """A slider for the RNN's spectral radius and the plot of ||dL/dh_t|| against t."""
    return GradientFlow(radius, T, n_hidden, max_norm, seed)


# -- the Reber automaton -------------------------------------------------------------------------

class AutomatonDrawing:
    """A Reber automaton: SVG in Jupyter, its transitions as text (stable for nbval).

    ``embedded=False`` draws the Reber grammar's automaton, state by state; ``embedded=True``
    draws the embedded grammar around it: B, then T or P, a whole Reber string (a box), the same
    T or P again, then E. Two boxes, because the automaton must *remember* which way it went.
    """

    def __init__(self, embedded=False):
        self.embedded = embedded
        fill, line = viz.KIND_COLOURS["input"]
        self.source = "\n".join([
            "digraph reber {", '  graph [rankdir=LR fontname="Helvetica"]',
            f'  node [shape=circle style=filled fillcolor="{fill}" color="{line}" fontname="Helvetica" label=""]',
            '  edge [fontname="Helvetica" fontsize=14]', '  start [shape=point]',
            '  end [shape=doublecircle width=0.25]', *(self._outer() if embedded else self._inner()), "}", ""])

    @staticmethod
    def _inner():
        edges = ['  start -> s0 [label="B"]']
        for state, pairs in data.REBER_AUTOMATON.items():
            edges += [f'  s{state} -> {"end" if nxt is None else f"s{nxt}"} [label="{symbol}"]'
                      for symbol, nxt in pairs]
        return [f'  s{state} [label="{state}"]' for state in data.REBER_AUTOMATON] + edges

    @staticmethod
    def _outer():
        box = 'shape=box style="rounded,dashed,filled" fillcolor="#ffffff" label="Reber string\\n(remembers {})"'
        return [f"  T [{box.format('T')}]", f"  P [{box.format('P')}]",
                '  start -> a [label="B"]', '  a -> T [label="T"]', '  a -> P [label="P"]',
                '  T -> z [label="T"]', '  P -> z [label="P"]', '  z -> end [label="E"]']

    def __repr__(self):
        if self.embedded:
            return ("Embedded Reber grammar: B, then T or P, then a Reber string, "
                    "then the same T or P, then E.")
        return "Reber automaton, B then from state 0 to E:\n" + "\n".join(
            f"  state {state}: " + ", ".join(f"{symbol} -> {'end' if nxt is None else nxt}" for symbol, nxt in pairs)
            for state, pairs in data.REBER_AUTOMATON.items())

    def svg(self):
        return viz.render_svg(self.source)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.svg(), "text/plain": repr(self)}


def draw_reber(embedded=False):
    """The automaton of the Reber grammar (``embedded=True``: the embedded grammar around it)."""
    return AutomatonDrawing(embedded)
