"""Widgets for watching a graph work: move a slider, step through a pass, train a network.

    mg.widgets.explore(g, {x: (-3, 3)})     # sliders for leaves; the drawing follows live
    mg.widgets.step_through(g, feed)        # forward one op at a time, then backward
    mg.widgets.train("spirals")             # a live loss curve and decision boundary

Each one is an ipywidgets box; display it (last line of a cell) and play with it. Everything
you can click is also a Python method (``.step()``, ``.reset()``, a slider's ``.value = ...``),
so a test or a notebook cell can drive the widget exactly as a learner would.

The drawings are ``viz.LiveDrawing``s: laid out by ``dot`` once, then only their numbers
change, so the boxes stay put while you drag. ``import minigraph`` does not import this module
(ipywidgets and matplotlib are slow to import); ``mg.widgets`` loads it on first use.
"""

import copy
import html
import io

import ipywidgets as ipw
import numpy as np
import traitlets

from . import data, nn, optim, viz
from .graph import Graph, Input
from .ops import bce_with_logits, unbroadcast

WIDE = {"description_width": "initial"}                    # let a slider's name show in full
MAX_ELEMENT_SLIDERS = 8        # a small array gets one slider per element; a larger one is refused
FIT_WIDTH = 1000               # px: the output area of a notebook on a learner's screen
FIT_STYLE = "max-width:100%;max-height:75vh;width:auto;height:auto"


def round_step(span):
    """A round slider step, about a hundredth to a thousandth of the range: 0.01 for (-3, 3)."""
    return float(10 ** np.floor(np.log10(span / 100)))


def on_grid(x, lo, step):
    """``x`` moved to the slider's grid lo + k·step, as the browser would move it (so the kernel
    and the page agree on the value from the start)."""
    decimals = max(0, -int(np.floor(np.log10(step))))
    return round(lo + round((x - lo) / step) * step, decimals)


def has_scalar_output(graph, out):
    """One output holding one number (``out``, its value): a backward pass can start there."""
    return len(graph.outputs) == 1 and np.size(out) == 1


def fitting_drawing(graph, **draw_options):
    """A ``viz.LiveDrawing`` that reads in an output ``FIT_WIDTH`` pixels wide: left to right
    when that fits, else top to bottom if that is narrower (a ``direction=`` given wins)."""
    if "direction" in draw_options:
        return viz.LiveDrawing(graph, **draw_options)
    wide = viz.LiveDrawing(graph, **draw_options)
    if wide.size[0] <= FIT_WIDTH:
        return wide
    tall = viz.LiveDrawing(graph, direction="TB", **draw_options)
    return tall if tall.size[0] < wide.size[0] else wide


def svg_view(svg, fit=False):
    """HTML for a drawing inside a widget: scrolls sideways when the graph is wide; with
    ``fit``, shrunk instead (never enlarged) to the output's width and to most of the screen's
    height, so the whole graph shows under the controls above it."""
    if fit:
        return '<div class="mg-graph">' + svg.replace("<svg ", f'<svg style="{FIT_STYLE}" ', 1) + "</div>"
    return f'<div class="mg-graph" style="overflow-x:auto">{svg}</div>'


def png(fig):
    """The PNG bytes of a matplotlib Figure: what an ``ipw.Image`` shows."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


class Picture(ipw.Image):
    """An ``ipw.Image`` whose ``tooltip`` is its text alternative: the image's ``title``, which a
    screen reader reads and a mouse shows. (ipywidgets 8 sets a widget's title from its tooltip
    only when the widget's description is empty, and an Image has no description at all: its
    view then fails to draw. This one has an empty one.)"""

    description = traitlets.Unicode("").tag(sync=True)


def picture(title, css_class=None):
    """An ``ipw.Image`` for a PNG shown at its natural size (a box would stretch it to its
    width, blurred), shrunk only when the output is narrower; hidden while it is empty.
    ``title`` says what it shows: its text alternative (a screen reader reads it) and tooltip."""
    image = Picture(format="png", tooltip=title,
                    layout=ipw.Layout(align_self="flex-start", max_width="100%", height="auto",
                                      display="none"))
    return image.add_class(css_class) if css_class else image


def show_png(image, data):
    """Show the PNG bytes ``data`` in a ``picture()``, or hide it when ``data`` is empty (no
    broken-image icon, no stale picture left behind)."""
    image.value = data
    image.layout.display = None if data else "none"


class SliderPlot(ipw.VBox):
    """A slider, a readout line and a plot, redrawn whenever the slider moves.

    A subclass sets up its numbers, then calls ``super().__init__(slider, css_class, title)``
    (``title``: what the plot shows, its text alternative), and
    defines ``update()``, which fills ``self.readout.value`` (HTML) and ``self.image.value``
    (PNG bytes, see ``png``). Tests set ``.slider.value`` as a learner moves it.
    """

    def __init__(self, slider, css_class, title):
        self.slider = slider
        self.readout = ipw.HTML().add_class("mg-readout")
        self.image = Picture(format="png", tooltip=title)
        self.slider.observe(lambda _: self.update(), names="value")
        self.update()
        super().__init__([self.slider, self.readout, self.image])
        self.add_class(css_class)

    def update(self):
        raise NotImplementedError(f"{type(self).__name__} defines update(): fill self.readout "
                                  f"and self.image for the slider's value")


# -- explore ---------------------------------------------------------------------------------------

class Explorer(ipw.VBox):
    """Sliders for leaves of a graph, a readout of its output, and its drawing, kept in sync.

    Moving a slider sets that one leaf (feeds an Input or assigns a Parameter), runs the
    engine's incremental ``backward`` (``forward`` if the output is not a scalar), and swaps
    the new numbers into the drawing.
    """

    def __init__(self, graph, sliders, feed=None, **draw_options):
        self.graph = viz.as_graph(graph)
        self.feed = {self.graph.node(k): v for k, v in (feed or {}).items()}
        self.sliders = {key: self._slider(key, spec) for key, spec in self._per_element(sliders).items()}
        self.backward = has_scalar_output(self.graph, self.graph.forward(self.feed))
        self._run()
        self.drawing = fitting_drawing(self.graph, **draw_options)
        self.readout = ipw.HTML().add_class("mg-readout")
        self.view = ipw.HTML().add_class("mg-view")
        self._redraw()
        super().__init__([ipw.VBox(list(self.sliders.values())), self.readout, self.view])
        self.add_class("mg-explore")

    def _per_element(self, sliders):
        """``{x: range}`` for a small array x becomes one slider per element: ``(x, 0)``, ``(x, 1)``..."""
        expanded = {}
        for key, spec in sliders.items():
            node = None if isinstance(key, tuple) else self.graph.node(key)
            current = None if node is None else self.feed.get(node, node.value)
            if current is None or np.size(current) == 1:
                expanded[key] = spec
            elif np.size(current) <= MAX_ELEMENT_SLIDERS:
                shape = np.shape(current)
                expanded.update({(key, i[0] if len(shape) == 1 else i): spec for i in np.ndindex(shape)})
            else:
                raise ValueError(f"'{node.name}' has {np.size(current)} entries, too many for a slider "
                                 f"each; pick some, e.g. {{('{node.name}', 0): {spec}}}")
        return expanded

    def _slider(self, key, spec):
        """A slider for ``node`` or ``(node, index)``; it starts at the leaf's current value."""
        node, index = (key if isinstance(key, tuple) else (key, None))
        node = self.graph.node(node)
        if node.kind not in ("input", "parameter"):
            raise TypeError(f"'{node.name}' is a {node.kind}; sliders move Inputs and Parameters only")
        current = self.feed.get(node, node.value)
        if index is not None and current is None:
            raise ValueError(f"'{node.name}' needs a full value in feed= before one element gets a slider")
        lo, hi, step = (*spec, round_step(spec[1] - spec[0]))[:3]
        start = 0.0 if current is None else float(np.asarray(current)[() if index is None else index])
        slider = ipw.FloatSlider(value=on_grid(min(max(start, lo), hi), lo, step), min=lo, max=hi,
                               step=step, style=WIDE,
                               description=node.name if index is None else f"{node.name}[{index}]",
                               readout_format=".3g", continuous_update=True)
        self._set(node, index, slider.value)
        slider.observe(lambda change: self._changed(node, index, change["new"]), names="value")
        return slider

    def _set(self, node, index, x):
        """Give one leaf (or one element of it) a new value."""
        if index is not None:
            new = np.array(self.feed.get(node, node.value), dtype=float)
            new[index] = x
            x = new
        if node.kind == "input":
            self.feed[node] = x
        else:
            node.value = x

    def _changed(self, node, index, x):
        self._set(node, index, x)
        self._run()
        self._redraw()

    def _run(self):
        (self.graph.backward if self.backward else self.graph.forward)(self.feed)

    def _redraw(self):
        out = self.graph.outputs
        self.readout.value = "&nbsp;&nbsp;".join(
            f"<b>{html.escape(n.name)}</b> = <code>{html.escape(viz.format_value(n.value))}</code>" for n in out)
        self.view.value = svg_view(self.drawing.render(), fit=True)


def explore(graph, sliders, feed=None, **draw_options):
    """Sliders that move leaves of ``graph`` while its drawing shows values and gradients.

    sliders  ``{node_or_name: (lo, hi)}`` or ``(lo, hi, step)``; a small array (up to 8 entries)
             gets one slider per entry; for chosen entries only, key ``(node_or_name, index)``
    feed     values for the Inputs without a slider (and starting values for those with one)
    draw_options  as for ``mg.draw`` (``backward=True``, ``grads=False``, ...)
    """
    return Explorer(graph, sliders, feed, **draw_options)


# -- step through ------------------------------------------------------------------------------------

INFIX = {"add", "sub", "mul", "div", "pow", "matmul"}          # ops written ``a + b``, not f(a, b)


def formula(node, args):
    """How an op reads with its inputs written as ``args``: ``w × x``, ``tanh(z)``, ``v[0]``."""
    name = node.op.name
    if name in INFIX:
        return f"{args[0]} {node.op.symbol} {args[1]}"
    if name in ("output", "getitem"):
        return f"{args[0]}[{node.attrs['index']}]"
    extra = [f"{k}={v!r}" for k, v in node.attrs.items()]
    return f"{node.op.symbol}({', '.join(list(args) + extra)})"


def record(graph, feed, backward=None):
    """Run ``graph`` once, every op from scratch, and return what each op did, in order.

    This is what hooks are for: a forward hook sees each op compute (its inputs and output),
    a backward hook sees each op's backward (the gradient arriving, the gradients it sends).
    With ``backward`` (your own ``backward(loss, values)``), the backward steps are its calls
    of the ops' rules instead (``recorded_backward``).
    """
    steps = []
    graph.invalidate()                                     # so every op computes (and is seen)
    hooks = [graph.register_forward_hook(lambda node, inputs, out: steps.append(("forward", node, inputs, out))),
             graph.register_backward_hook(lambda node, g, sent: steps.append(("backward", node, g, sent)))]
    try:
        if has_scalar_output(graph, graph.forward(feed)):
            if backward is None:
                graph.backward(feed)
            else:
                steps += recorded_backward(graph, backward)
    finally:
        for hook in hooks:
            hook.remove()
    return steps


def recorded_backward(graph, backward):
    """The backward steps of your own ``backward(loss, values)`` on ``graph``, as ``record``
    lists them: ``("backward", node, g, sent)`` for each op whose rules it called, in the order
    of its first call, with the gradient ``g`` it handed them and what each sent (summed back
    to its input's shape). While it runs, each op node's rules are wrapped to take notes."""
    calls, ops = {}, [n for n in graph.nodes if n.op is not None]

    def noting(node, k, rule):
        def vjp(g, ans, *args, **attrs):
            sent = rule(g, ans, *args, **attrs)
            g_and_sent = calls.setdefault(node, (g, [None] * len(node.inputs)))
            g_and_sent[1][k] = unbroadcast(sent, np.shape(node.inputs[k].value))
            return sent
        return vjp

    originals = {node: node.op for node in ops}
    try:
        for node in ops:
            node.op = copy.copy(node.op)
            node.op.vjps = tuple(noting(node, k, rule) for k, rule in enumerate(node.op.vjps))
        backward(graph.outputs[0], {node: node.value for node in graph.nodes})
    finally:
        for node, op in originals.items():
            node.op = op
    return [("backward", node, g, tuple(sent)) for node, (g, sent) in calls.items()]


class Snapshot:
    """The numbers after the first ``position`` steps: what the drawing shows at that moment."""

    def __init__(self, graph, steps, position):
        self.values = {n: n.value for n in graph.nodes if n.op is None}
        self.grads, self.edges, self.received = {}, {}, {}
        for phase, node, a, b in steps[:position]:
            if phase == "forward":
                self.values[node] = b
                continue
            self.grads[node] = a                           # complete once its backward runs
            for k, (parent, sent) in enumerate(zip(node.inputs, b)):
                if sent is None:
                    continue
                sent = viz.own_slot(node, sent)
                self.edges[node, k] = sent
                self.received.setdefault(parent, []).append((node, sent))
                if not isinstance(parent.value, tuple):    # a multi-output op takes its gradient whole
                    self.grads[parent] = sum(s for _, s in self.received[parent])

    def value(self, node):
        return self.values.get(node)

    def grad(self, node):
        return self.grads.get(node)

    def edge(self, node, k):
        return self.edges.get((node, k))


def names(node):
    """How a step names an op's inputs: by name, except constants, which show their value."""
    return [viz.format_value(p.value) if p.kind == "constant" else p.name for p in node.inputs]


def explain_forward(node, inputs, out):
    numbers = [viz.format_value(v) for v in inputs]
    return (f"forward  {node.name} = {formula(node, names(node))}\n"
            f"         = {formula(node, numbers)}\n"
            f"         = {viz.format_value(out)}")


def sum_text(node, received, total):
    """``x.grad = 0.3 (from a) + 1.2 (from b) = 1.5``: where edges join, gradients add."""
    fmt = viz.format_value
    return f"{node.name}.grad = " + " + ".join(f"{fmt(s)} (from {c.name})" for c, s in received) + f" = {fmt(total)}"


def explain_backward(node, g, sent, before, final):
    """Upstream gradient × local derivative -> what each input receives, and sums where edges join.

    ``before`` is the Snapshot just before this step (who sent what so far), ``final`` the one
    after every step (to know when a leaf has received all its gradients).
    """
    fmt = viz.format_value
    received = before.received.get(node)
    if received is None:
        arriving = f"{node.name}.grad = {fmt(g)}   (the seed: d {node.name} / d {node.name} = 1)"
    elif len(received) == 1:
        arriving = f"{node.name}.grad = {fmt(g)}   (from {received[0][0].name})"
    else:
        arriving = sum_text(node, received, g)
    lines = [f"backward {node.name} = {formula(node, names(node))}", f"  {arriving}"]
    args = [before.value(p) for p in node.inputs]
    for k, (parent, gi) in enumerate(zip(node.inputs, sent)):
        if gi is None:
            continue
        gi = viz.own_slot(node, gi)
        if np.size(g) == 1 and np.size(gi) == 1 and not isinstance(g, tuple):
            local = node.op.vjps[k](np.ones_like(g), before.value(node), *args, **node.attrs)
            lines.append(f"  -> {parent.name}: {fmt(g)} × {fmt(local)} = {fmt(gi)}"
                         f"   (upstream × d {node.name} / d {parent.name})")
        else:
            lines.append(f"  -> {parent.name}: {fmt(gi)}   (the VJP of {node.op.name} for input {k})")
    lines += [f"  {sum_text(leaf, final.received[leaf], final.grad(leaf))}" for leaf in completed_leaves(node, before, final)]
    return "\n".join(lines)


def completed_leaves(node, before, final):
    """The leaves that receive their last gradient at ``node``'s step, when they receive several."""
    leaves = dict.fromkeys(p for p in node.inputs if p.op is None and len(final.received.get(p, ())) > 1)
    return [p for p in leaves
            if len(before.received.get(p, ())) + sum(q is p for q in node.inputs) == len(final.received[p])]


class StepThrough(ipw.VBox):
    """Forward through a graph one op at a time, then backward, explaining each step's numbers.

    ``position`` counts the steps done (0 = only the leaves hold values); the Play widget's
    value is that position, so Play, Step, Back and Reset all just move it.
    """

    def __init__(self, graph, feed=None, interval=1200, backward=None, **draw_options):
        self.graph = viz.as_graph(graph)
        self.steps = record(self.graph, feed or {}, backward)
        self.final = Snapshot(self.graph, self.steps, len(self.steps))
        self.drawing = fitting_drawing(self.graph, **draw_options)
        self.play = ipw.Play(value=0, min=0, max=len(self.steps), interval=interval, description="Play")
        self.buttons = {name: ipw.Button(description=name, layout=ipw.Layout(width="80px"))
                        for name in ("Back", "Step", "Reset")}
        self.buttons["Back"].on_click(lambda _: self.back())
        self.buttons["Step"].on_click(lambda _: self.step())
        self.buttons["Reset"].on_click(lambda _: self.reset())
        self.text = ipw.HTML().add_class("mg-explanation")
        self.view = ipw.HTML().add_class("mg-view")
        self.play.observe(lambda _: self._show(), names="value")
        self._show()
        super().__init__([ipw.HBox([self.play, *self.buttons.values()]), self.text, self.view])
        self.add_class("mg-step-through")

    @property
    def position(self):
        return self.play.value

    @property
    def current(self):
        """The node of the last step done (None before the first)."""
        return self.steps[self.position - 1][1] if self.position else None

    def step(self):
        self.play.value = min(self.position + 1, len(self.steps))

    def back(self):
        self.play.value = max(self.position - 1, 0)

    def reset(self):
        self.play.playing = False
        self.play.value = 0

    def _explain(self):
        n_forward = sum(1 for s in self.steps if s[0] == "forward")
        if self.position == 0:
            return (f"Start: the leaves hold their values. Step {n_forward} times to compute every op "
                    f"in topological order, then {len(self.steps) - n_forward} times backward.")
        phase, node, a, b = self.steps[self.position - 1]
        where = f"step {self.position} of {len(self.steps)}\n"
        if phase == "forward":
            return where + explain_forward(node, a, b)
        return where + explain_backward(node, a, b, Snapshot(self.graph, self.steps, self.position - 1),
                                        self.final)

    def _show(self):
        self.explanation = self._explain()
        self.text.value = f"<pre>{html.escape(self.explanation)}</pre>"
        node = self.current
        lit = {node, *((node, k) for k in range(len(node.inputs)))} if node else set()
        numbers = Snapshot(self.graph, self.steps, self.position)
        self.view.value = svg_view(self.drawing.render(numbers, highlight=lit), fit=True)


def step_through(graph, feed=None, backward=None, **draw_options):
    """Walk through ``graph``'s forward pass op by op, then its backward pass, with the numbers.

    Buttons: Play, Step, Back, Reset (or call ``.step()``, ``.back()``, ``.reset()``). With
    ``backward=my_backward`` (a function ``backward(loss, values)``, chapter 03's exercise) the
    backward steps are those of your own backward: you watch your gradients flow.
    """
    return StepThrough(graph, feed, backward=backward, **draw_options)


# -- train ---------------------------------------------------------------------------------------------

TASKS = {"xor": (data.xor, (4,)), "disk": (data.disk, (8,)), "spirals": (data.spirals, (16, 16))}


class Trainer(ipw.VBox):
    """Train an MLP on a 2-D task while its loss curve and decision boundary redraw.

    Each tick of the Play widget runs ``steps_per_tick`` optimizer steps and redraws once, so
    the kernel stays free between ticks. Learning rate and optimizer change the run in place;
    hidden size and activation build a fresh network (Reset does too).
    """

    def __init__(self, task="xor", hidden=None, activation="tanh", optimizer="adam", lr=0.03,
                 seed=0, steps_per_tick=10, interval=200):
        make_data, default_hidden = TASKS[task]
        self.X, self.Y = make_data()
        self.hidden = tuple(np.atleast_1d(hidden or default_hidden))
        self.seed, self.steps_per_tick = seed, steps_per_tick
        self.controls = dict(
            lr=ipw.FloatLogSlider(value=lr, base=10, min=-4, max=0, step=0.1, description="learning rate",
                                readout_format=".2g", style=WIDE),
            hidden=ipw.IntSlider(value=self.hidden[0], min=1, max=64, description="hidden units", style=WIDE),
            activation=ipw.Dropdown(options=list(nn.ACTIVATIONS), value=activation, description="activation"),
            optimizer=ipw.Dropdown(options=list(optim.OPTIMIZERS), value=optimizer, description="optimizer"))
        self.play = ipw.Play(value=0, min=0, max=10 ** 9, interval=interval, description="Train")
        self.reset_button = ipw.Button(description="Reset")
        self.progress = ipw.HTML().add_class("mg-progress")
        self.image = Picture(format="png", tooltip="the loss so far and the network's decision boundary")
        self.controls["lr"].observe(lambda c: setattr(self.optimizer, "lr", c["new"]), names="value")
        self.controls["optimizer"].observe(lambda _: self._new_optimizer(), names="value")
        for name in ("hidden", "activation"):
            self.controls[name].observe(lambda _: self.reset(), names="value")
        self.play.observe(self._tick, names="value")
        self.reset_button.on_click(lambda _: self.reset())
        self.reset()
        # the plot goes under the controls when both do not fit side by side (an output 848 px
        # wide, with JupyterLab's file browser open): the controls are never squeezed or cut
        side_by_side = ipw.Layout(flex_flow="row wrap", align_items="flex-start")
        super().__init__([ipw.HBox([self.play, self.reset_button, self.progress]),
                          ipw.HBox([ipw.VBox(list(self.controls.values())), self.image], layout=side_by_side)])
        self.add_class("mg-train")

    def reset(self):
        """A fresh network (same seed: the same start), empty history."""
        c = self.controls
        self.hidden = (c["hidden"].value,) * len(self.hidden)
        self.x, self.y, grid_x = Input("x"), Input("y"), Input("grid")
        self.net = nn.MLP([2, *self.hidden, 1], activation=c["activation"].value, rng=self.seed)
        self.logits = self.net(self.x)
        self.graph = Graph(bce_with_logits(self.logits, self.y))
        self.feed = {self.x: self.X, self.y: self.Y}
        self.gx, self.gy, grid = data.grid(self.X, steps=60)
        self.boundary = Graph(self.net(grid_x))
        self.grid_feed = {grid_x: grid}
        self.history = []
        self._new_optimizer()
        self.play.value = 0
        self._refresh()

    def _tick(self, change):
        if change["new"] > 0:                              # Reset rewinds Play to 0: no step then
            self.step(self.steps_per_tick)

    def _new_optimizer(self):
        c = self.controls
        self.optimizer = optim.OPTIMIZERS[c["optimizer"].value](self.graph.parameters, lr=c["lr"].value)

    def step(self, n=1):
        """``n`` optimizer steps (each: backward, then update), then one redraw."""
        for _ in range(n):
            self.history.append(float(self.graph.backward(self.feed, wrt=self.graph.parameters)))
            self.optimizer.step()
        self._refresh()

    @property
    def accuracy(self):
        """Fraction of training points on the right side of the boundary, for the current weights."""
        self.graph.forward(self.feed)
        return nn.binary_accuracy(self.logits.value, self.Y)

    def _refresh(self):
        loss = viz.format_number(self.history[-1]) if self.history else "—"
        self.progress.value = (f"step <b>{len(self.history)}</b> · loss <b>{loss}</b> · "
                               f"accuracy <b>{100 * self.accuracy:.1f} %</b>")
        self.image.value = self._plot()

    def _plot(self):
        """Loss curve and decision boundary as PNG bytes (a Figure without pyplot: nothing leaks)."""
        from matplotlib.figure import Figure
        from matplotlib.ticker import LogLocator
        fig = Figure(figsize=(8.4, 3.4), dpi=80)
        fig.subplots_adjust(left=0.08, right=0.98, bottom=0.14, top=0.9, wspace=0.15)
        curve, field = fig.subplots(1, 2, width_ratios=[1.2, 1])
        curve.plot(self.history or [np.nan], color=viz.GRADIENT)
        curve.set(xlabel="step", title="loss (log scale)", yscale="log" if self.history else "linear")
        if self.history:                                   # plain numbers at 1, 2, 5 x 10^k
            curve.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
            curve.yaxis.set_major_formatter("{x:.2g}")
            curve.yaxis.set_minor_formatter("")
        p = 1 / (1 + np.exp(-self.boundary.forward(self.grid_feed).reshape(self.gx.shape)))
        extent = (self.gx.min(), self.gx.max(), self.gy.min(), self.gy.max())
        field.imshow(p, extent=extent, origin="lower", cmap="PuOr_r", vmin=-0.3, vmax=1.3, aspect="auto",
                     interpolation="bilinear")
        field.contour(self.gx, self.gy, p, levels=[0.5], colors="black", linewidths=1)
        field.scatter(*self.X.T, c=self.Y.ravel(), cmap="PuOr_r", vmin=0, vmax=1, s=60 if len(self.X) < 50 else 14, edgecolors="black", linewidths=0.5)
        field.set(title="decision boundary (p = 0.5)", xticks=[], yticks=[])
        return png(fig)


def train(task="xor", hidden=None, activation="tanh", optimizer="adam", lr=0.03, seed=0,
          steps_per_tick=10, interval=200):
    """A training dashboard for a 2-D classification task: ``"xor"``, ``"disk"`` or ``"spirals"``.

    hidden          hidden layer sizes (int or tuple; default by task: 4 / 8 / 16, 16)
    activation      a key of ``mg.nn.ACTIVATIONS``; optimizer: a key of ``mg.optim.OPTIMIZERS``
    steps_per_tick  optimizer steps per tick of Play (every ``interval`` ms)
    """
    return Trainer(task, hidden, activation, optimizer, lr, seed, steps_per_tick, interval)
