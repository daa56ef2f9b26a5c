"""Loss landscapes you can steer: optimizers racing on a 2-D loss, and how fast momentum converges.

    valley = landscape.SURFACES["valley"]             # an ill-conditioned quadratic, as a graph
    path, losses = landscape.trajectory(valley, "adam", start=(-2.5, 1.5), steps=100)
    landscape.momentum_rate(lr=0.1, momentum=0.5, curvatures=valley.curvatures)
    landscape.race()                                  # the widget: pick optimizers, move sliders

A ``Surface`` is a loss f(x, y) written with minigraph ops over two scalar Parameters ``x`` and
``y``; the gradients that move every optimizer come from the engine's backward pass, exactly as
for a network. The same formula over two grid Inputs gives the contour lines.

``momentum_rate`` is the theory of momentum on a quadratic (the figure at the end of distill.pub's
"Why Momentum Really Works"): how much the distance to the minimum shrinks per step, at worst.
Like ``widgets``, this module imports ipywidgets and matplotlib, so ``import minigraph`` does not
import it; ``from minigraph import landscape`` does.
"""

import html
import io

import ipywidgets as ipw
import numpy as np

from .. import optim, viz
from ..graph import Graph, Input, Parameter
from ..widgets import WIDE, Picture

# One colour per optimizer, the same in every figure of chapter 06.
COLOURS = {"gd": "#495057", "momentum": "#1971c2", "nesterov": "#7048e8",
           "adagrad": "#2f9e44", "rmsprop": "#e8590c", "adam": "#c2255c"}
LABELS = {"gd": "gradient descent", "momentum": "momentum", "nesterov": "Nesterov",
          "adagrad": "AdaGrad", "rmsprop": "RMSProp", "adam": "Adam"}
DIVERGED = 1e6          # a loss above this (or NaN) counts as diverged: the path stops there
LOSS_RANGE = (1e-16, 1e4)   # the widget's loss plot, relative to the loss at the start


# -- surfaces ------------------------------------------------------------------------------------

class Surface:
    """A loss f(x, y) built by ``formula(x, y)`` from minigraph ops, twice: over the Parameters
    ``x``, ``y`` (``graph``: what optimizers train) and over grid Inputs (``at``: for contours).

    extent      (x_lo, x_hi, y_lo, y_hi), the window the pictures show
    start       a default start point; minimum: where f is smallest
    curvatures  for a quadratic, the eigenvalues of its Hessian (None otherwise)
    """

    def __init__(self, name, formula, extent, start, minimum, curvatures=None):
        self.name, self.extent, self.start, self.minimum = name, extent, start, minimum
        self.curvatures = curvatures
        self.x, self.y = Parameter(0.0, name="x"), Parameter(0.0, name="y")
        self.loss = formula(self.x, self.y)
        self.graph = Graph(self.loss)
        self._gx, self._gy = Input("grid_x"), Input("grid_y")
        self._grid_graph = Graph(formula(self._gx, self._gy))

    @property
    def parameters(self):
        return [self.x, self.y]

    def at(self, x, y):
        """f at the points (x, y) (arrays of one shape), computed by the graph over grid Inputs."""
        return self._grid_graph.forward({self._gx: np.asarray(x, float), self._gy: np.asarray(y, float)})

    def grid(self, steps=120):
        """``X, Y, f(X, Y)`` on a steps x steps grid over the extent."""
        x_lo, x_hi, y_lo, y_hi = self.extent
        X, Y = np.meshgrid(np.linspace(x_lo, x_hi, steps), np.linspace(y_lo, y_hi, steps))
        return X, Y, self.at(X, Y)

    def __repr__(self):
        return f"Surface('{self.name}')"


def quadratic(mu=1.0, L=25.0, angle=0.0, name="valley"):
    """f = (mu u² + L v²) / 2 with (u, v) = (x, y) turned by ``angle`` degrees: a valley whose
    floor has curvature ``mu`` and whose walls have curvature ``L`` (condition number L / mu)."""
    c, s = np.cos(np.radians(angle)), np.sin(np.radians(angle))

    def formula(x, y):
        u, v = (x, y) if angle == 0 else (c * x + s * y, c * y - s * x)
        return 0.5 * (mu * u ** 2 + L * v ** 2)

    return Surface(name, formula, extent=(-3.0, 3.0, -2.0, 2.0), start=(-2.5, 1.0),
                   minimum=(0.0, 0.0), curvatures=(mu, L))


def banana(a=1.0, b=10.0, name="banana"):
    """Rosenbrock's banana, f = (a - x)² + b (y - x²)²: a curved valley, minimum 0 at (a, a²)."""

    def formula(x, y):
        return (a - x) ** 2 + b * (y - x ** 2) ** 2

    return Surface(name, formula, extent=(-2.0, 2.0, -1.0, 3.0), start=(-1.5, 2.5), minimum=(a, a * a))


SURFACES = {"valley": quadratic(), "rotated valley": quadratic(angle=30.0, name="rotated valley"),
            "banana": banana()}


# -- optimizers on a surface --------------------------------------------------------------------

SETTINGS = {"lr": 0.03, "momentum": 0.9, "step": 0.1, "decay": 0.9, "beta1": 0.9, "beta2": 0.999}
"""Defaults: ``lr`` moves gradient descent, momentum and Nesterov (a step is lr x gradient);
``step`` moves AdaGrad, RMSProp and Adam (a step is about ``step`` long, whatever the gradient)."""


def make_optimizer(name, params, lr=0.03, momentum=0.9, step=0.1, decay=0.9, beta1=0.9, beta2=0.999):
    """One of ``COLOURS``' optimizers from ``mg.optim``, with the settings it uses."""
    makers = {
        "gd": lambda: optim.GD(params, lr=lr),
        "momentum": lambda: optim.Momentum(params, lr=lr, momentum=momentum),
        "nesterov": lambda: optim.Momentum(params, lr=lr, momentum=momentum, nesterov=True),
        "adagrad": lambda: optim.AdaGrad(params, lr=step),
        "rmsprop": lambda: optim.RMSProp(params, lr=step, decay=decay),
        "adam": lambda: optim.Adam(params, lr=step, beta1=beta1, beta2=beta2),
    }
    if name not in makers:
        raise ValueError(f"no optimizer '{name}'; choose one of {', '.join(makers)}")
    return makers[name]()


def trajectory(surface, name, start=None, steps=100, **settings):
    """Where optimizer ``name`` goes on ``surface`` from ``start`` in ``steps`` steps.

    Returns ``(points, losses)``: arrays of shape (k + 1, 2) and (k + 1,), the start included,
    with k = ``steps``, or fewer if the loss exceeded ``DIVERGED`` (the path stops there).
    Each step is the engine's ``backward`` then the optimizer's ``step``.
    """
    start = surface.start if start is None else start
    surface.x.value, surface.y.value = start
    optimizer = make_optimizer(name, surface.parameters, **settings)
    points, losses = [tuple(map(float, start))], []
    with np.errstate(all="ignore"):
        for _ in range(steps):
            loss = float(surface.graph.backward(wrt=surface.parameters))
            losses.append(loss)
            if not loss < DIVERGED:
                return np.array(points), np.array(losses)
            optimizer.step()
            points.append((float(surface.x.value), float(surface.y.value)))
        losses.append(float(surface.graph.forward()))
    return np.array(points), np.array(losses)


# -- momentum on a quadratic: the theory --------------------------------------------------------

def momentum_rate(lr, momentum, curvatures):
    """How fast momentum converges on a quadratic: the factor by which the distance to the
    minimum shrinks per step in the long run (below 1 converges; smaller is faster).

    Along a direction of curvature lam, momentum's iterates obey
    x_{k+1} = (1 + momentum - lr lam) x_k - momentum x_{k-1}; the rate is the larger root of
    z² - (1 + momentum - lr lam) z + momentum = 0 in absolute value, and the slowest direction
    decides. ``lr`` and ``momentum`` may be arrays (a grid); the result has their shape.
    """
    lr, beta = np.broadcast_arrays(np.asarray(lr, float), np.asarray(momentum, float))
    rate = np.zeros(lr.shape)
    for lam in curvatures:
        b = 1 + beta - lr * lam
        root = np.sqrt((b * b - 4 * beta).astype(complex))
        rate = np.maximum(rate, np.maximum(np.abs(b + root), np.abs(b - root)) / 2)
    return rate


def best_momentum(curvatures):
    """The fastest (lr, momentum) on a quadratic with these curvatures (Polyak's heavy ball):
    lr* = (2 / (sqrt(L) + sqrt(mu)))², momentum* = ((sqrt(kappa) - 1) / (sqrt(kappa) + 1))²."""
    mu, L = min(curvatures), max(curvatures)
    root_kappa = np.sqrt(L / mu)
    return (2 / (np.sqrt(L) + np.sqrt(mu))) ** 2, ((root_kappa - 1) / (root_kappa + 1)) ** 2


def plot_rates(ax, curvatures, lr=None, momentum=None, steps=160):
    """A heatmap of ``momentum_rate`` over (lr, momentum): bright is fast, dark is slow, grey
    diverges; the fastest pair is a star, and (lr, momentum) a dot if given. Returns the image
    (for a colour bar)."""
    from matplotlib import colormaps
    L = max(curvatures)
    lrs, betas = np.linspace(0, 4 / L, steps + 1)[1:], np.linspace(0, 1, steps)   # diverges beyond 4 / L
    rates = momentum_rate(lrs[None, :], betas[:, None], curvatures)
    cmap = colormaps["magma_r"].with_extremes(bad="#dee2e6")
    image = ax.imshow(np.ma.masked_where(rates >= 1, rates), origin="lower", aspect="auto", cmap=cmap,
                      vmin=np.floor(rates.min() * 10) / 10, vmax=1.0, extent=(0, lrs[-1], 0, 1))
    best_lr, best_beta = best_momentum(curvatures)
    ax.plot(best_lr, best_beta, "*", color="white", markeredgecolor="black", markersize=14)
    if lr is not None:
        ax.plot(lr, momentum, "o", color=COLOURS["momentum"], markeredgecolor="white", markersize=8)
    ax.set(xlabel="learning rate", ylabel="momentum", xlim=(0, lrs[-1]), ylim=(0, 1))
    return image


# -- pictures ------------------------------------------------------------------------------------

def plot_surface(ax, surface, steps=100):
    """Contour lines of ``surface`` (spaced evenly in log(loss), so the valley floor shows too),
    shaded light to dark blue from high to low, and its minimum as a black star."""
    X, Y, Z = surface.grid(steps)
    low = Z.min()
    levels = low + np.geomspace(max(np.percentile(Z - low, 0.5), 1e-3), (Z - low).max(), 14)
    ax.contourf(X, Y, Z, levels=np.concatenate([[low], levels]), cmap="Blues_r", alpha=0.55)
    ax.contour(X, Y, Z, levels=levels, colors="white", linewidths=0.6)
    ax.plot(*surface.minimum, "*", color="black", markersize=12)
    ax.set(xlim=surface.extent[:2], ylim=surface.extent[2:], xlabel="x", ylabel="y")


def plot_path(ax, points, name, label=None, ls="-"):
    """An optimizer's path (``trajectory``'s points) in its colour, the start as a white dot."""
    ax.plot(points[:, 0], points[:, 1], marker=".", ls=ls, color=COLOURS[name], lw=1.5, markersize=3,
            label=LABELS[name] if label is None else label)
    ax.plot(*points[0], "o", color="black", markerfacecolor="white", markersize=7)


# -- an optimizer's memory, drawn ----------------------------------------------------------------

STATE_WORDS = {"v": "velocity", "s": "average of g²", "m": "average of g", "t": "step count"}


def optimizer_key(optimizer):
    """The key of ``COLOURS`` for an optimizer from ``mg.optim`` (``"nesterov"`` for Nesterov's)."""
    if getattr(optimizer, "nesterov", False):
        return "nesterov"
    return {"GD": "gd"}.get(type(optimizer).__name__, type(optimizer).__name__.lower())


class StateDrawing:
    """An optimizer's memory next to the Parameters it belongs to: each Parameter (orange, with
    its value and gradient) joined by dashed edges to the entries of its ``state`` dict (a
    velocity, running averages, a step count), framed in the optimizer's colour. In Jupyter it
    shows as SVG; its ``repr`` is one line per Parameter (stable text for notebook tests)."""

    def __init__(self, optimizer):
        key = optimizer_key(optimizer)
        colour, (fill, line) = COLOURS.get(key, viz.MUTED), viz.KIND_COLOURS["parameter"]
        fmt = viz.format_value
        statements, self.rows = [], []
        for i, p in enumerate(optimizer.params):
            state = optimizer.state[p]
            label = "\n".join([p.name, f"value {fmt(p.value)}", f"grad {fmt(p.grad)}"])
            statements.append(f"p{i} [label={viz.quote(label)}, fillcolor={viz.quote(fill)}, color={viz.quote(line)}];")
            for name, value in state.items():
                label = "\n".join([f"{name}: {fmt(value)}"] + ([f"({STATE_WORDS[name]})"] if name in STATE_WORDS else []))
                statements.append(f"p{i}_{name} [label={viz.quote(label)}, fillcolor=white, color={viz.quote(colour)}];")
                statements.append(f"p{i} -> p{i}_{name} [style=dashed, color={viz.quote(colour)}, arrowhead=none];")
            self.rows.append(f"  {p.name}: value {fmt(p.value)}, grad {fmt(p.grad)}; state "
                             + (", ".join(f"{k} {fmt(v)}" for k, v in state.items()) or "empty"))
        label = LABELS.get(key, type(optimizer).__name__)
        self.title = f"{label[:1].upper() + label[1:]}: what it remembers per Parameter"
        self.source = ("digraph {\nrankdir=LR; labelloc=t; fontname=Helvetica; fontsize=12;\n"
                       f"label={viz.quote(self.title)};\n"
                       "node [shape=box, style=\"rounded,filled\", fontname=Helvetica, fontsize=11];\n"
                       + "\n".join(statements) + "\n}")

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": viz.render_svg(self.source), "text/plain": repr(self)}

    def __repr__(self):
        return "\n".join([self.title] + self.rows)


def draw_state(optimizer):
    """Draw ``optimizer``'s state next to its Parameters (see ``StateDrawing``)."""
    return StateDrawing(optimizer)


# -- the widget ----------------------------------------------------------------------------------

def _format_loss(loss, steps):
    if len(loss) <= steps or not np.isfinite(loss[-1]):
        return f"diverged at step {len(loss) - 1}"
    return f"{loss[-1]:.3g}"


class Race(ipw.VBox):
    """Optimizers racing on a surface: contour lines with one coloured path per optimizer, the
    loss per step, and (on a quadratic) where momentum's (lr, momentum) sits on the rate map.

    Every control is a widget you can also set from Python (``race.controls["lr"].value = 0.1``);
    each change recomputes every path with the engine and redraws once. ``paths`` holds the
    latest ``(points, losses)`` per optimizer shown.
    """

    def __init__(self, surface="valley", optimizers=("gd", "momentum", "adam"), steps=100, **settings):
        settings = {**SETTINGS, **settings}
        self.surface = SURFACES[surface]
        log_slider = dict(base=10, step=0.05, readout_format=".3g", style=WIDE)
        slider = dict(readout_format=".3g", style=WIDE)
        self.controls = dict(
            surface=ipw.Dropdown(options=list(SURFACES), value=surface, description="surface"),
            x0=ipw.FloatSlider(description="start x", step=0.05, **slider),
            y0=ipw.FloatSlider(description="start y", step=0.05, **slider),
            steps=ipw.IntSlider(value=steps, min=1, max=300, description="steps", style=WIDE),
            lr=ipw.FloatLogSlider(value=settings["lr"], min=-3, max=0, description="lr (GD, momentum)", **log_slider),
            momentum=ipw.FloatSlider(value=settings["momentum"], min=0, max=0.99, step=0.01,
                                   description="momentum", **slider),
            step=ipw.FloatLogSlider(value=settings["step"], min=-3, max=0, description="lr (adaptive)", **log_slider),
            decay=ipw.FloatSlider(value=settings["decay"], min=0.5, max=0.999, step=0.001,
                                description="RMSProp decay", **slider),
            beta1=ipw.FloatSlider(value=settings["beta1"], min=0, max=0.99, step=0.01,
                                description="Adam β1", **slider),
            beta2=ipw.FloatSlider(value=settings["beta2"], min=0.5, max=0.999, step=0.001,
                                description="Adam β2", **slider))
        self.shown = {name: ipw.Checkbox(value=name in optimizers, indent=False, description_allow_html=True,
                                       description=f'<b style="color:{COLOURS[name]}">■</b> {LABELS[name]}',
                                       layout=ipw.Layout(width="150px"))
                      for name in COLOURS}
        self.readout = ipw.HTML().add_class("mg-readout")
        self.image = Picture(format="png", tooltip="each optimizer's path on the loss surface, and its loss "
                                                   "step by step").add_class("mg-landscape")
        self._place_start()
        self.controls["surface"].observe(lambda _: self._new_surface(), names="value")
        for name, control in self.controls.items():
            if name != "surface":
                control.observe(lambda _: self.redraw(), names="value")
        for box in self.shown.values():
            box.observe(lambda _: self.redraw(), names="value")
        self._figure()
        self.redraw()
        super().__init__([ipw.HBox(list(self.shown.values())),
                          ipw.HBox([ipw.VBox([self.controls[k] for k in ("surface", "x0", "y0", "steps", "lr")]),
                                  ipw.VBox([self.controls[k] for k in ("momentum", "step", "decay", "beta1", "beta2")])]),
                          self.readout, self.image])
        self.add_class("mg-race")

    @property
    def settings(self):
        return {k: self.controls[k].value for k in SETTINGS}

    def _place_start(self):
        """Give the start sliders the surface's window and put them at its start (one redraw
        at most: none while the two sliders move)."""
        self._quiet = True
        for key, (lo, hi), start in zip(("x0", "y0"), (self.surface.extent[:2], self.surface.extent[2:]),
                                        self.surface.start):
            slider = self.controls[key]
            slider.min, slider.max = min(lo, slider.max), max(hi, slider.min)   # min stays below max
            slider.min, slider.max, slider.value = lo, hi, start
        self._quiet = False

    def _new_surface(self):
        self.surface = SURFACES[self.controls["surface"].value]
        self._place_start()
        self._figure()
        self.redraw()

    def _figure(self):
        """The parts of the picture that stay while sliders move (contours, axes, rate map) are
        drawn once, into ``background``; a redraw pastes it and draws only the moving artists
        (paths, loss curves, dots) over it. Text is what costs most to draw, and none moves."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        self.fig = Figure(figsize=(12, 3.9), dpi=72)
        self.canvas = FigureCanvasAgg(self.fig)
        self.fig.subplots_adjust(left=0.05, right=0.98, bottom=0.14, top=0.9, wspace=0.28)
        self.ax_map, self.ax_loss, self.ax_rate = self.fig.subplots(1, 3, width_ratios=[1.35, 1, 1])
        plot_surface(self.ax_map, self.surface)
        self.ax_map.set_title(f"{self.surface.name}: paths from the start (○)")
        moving = dict(animated=True)                    # left out of the background
        self.start_marker, = self.ax_map.plot([], [], "o", color="black", markerfacecolor="white",
                                              markersize=8, **moving)
        self.lines = {name: self.ax_map.plot([], [], ".-", color=COLOURS[name], lw=1.5, markersize=3, **moving)[0]
                      for name in COLOURS}
        self.curves = {name: self.ax_loss.plot([], [], color=COLOURS[name], lw=1.5, **moving)[0] for name in COLOURS}
        self.ax_loss.set(yscale="log", ylim=LOSS_RANGE, xlabel="step", title="loss / loss at the start (log scale)")
        if self.surface.curvatures is None:
            self.ax_rate.text(0.5, 0.5, "no rate map:\nnot a quadratic", ha="center", va="center")
            self.ax_rate.set(xticks=[], yticks=[])
            self.rate_dot = None
        else:
            plot_rates(self.ax_rate, self.surface.curvatures, steps=100)
            self.rate_dot, = self.ax_rate.plot([], [], "o", color=COLOURS["momentum"],
                                               markeredgecolor="white", markersize=8, **moving)
            self.ax_rate.set_title("momentum's rate per step (★ fastest)")
        self.background_steps = None

    def _background(self, steps):
        """The static picture for a loss axis of ``steps`` steps (drawn again when that changes)."""
        if self.background_steps != steps:
            self.ax_loss.set_xlim(0, steps)
            self.canvas.draw()
            self.background, self.background_steps = self.canvas.copy_from_bbox(self.fig.bbox), steps
        return self.background

    def _png(self, steps):
        """The background with the moving artists drawn over it, as PNG bytes."""
        from PIL import Image
        self.canvas.restore_region(self._background(steps))
        moving = [self.start_marker, *self.lines.values(), *self.curves.values()]
        for artist in moving + ([self.rate_dot] if self.rate_dot is not None else []):
            artist.axes.draw_artist(artist)
        width, height = self.canvas.get_width_height()
        buffer = io.BytesIO()
        Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1).save(
            buffer, format="png", compress_level=1)
        return buffer.getvalue()

    def redraw(self):
        """Recompute the paths of the optimizers shown and redraw the picture and the readout."""
        if self._quiet:
            return
        c = self.controls
        start, steps = (c["x0"].value, c["y0"].value), c["steps"].value
        self.paths = {name: trajectory(self.surface, name, start, steps, **self.settings)
                      for name, box in self.shown.items() if box.value}
        self.start_marker.set_data([start[0]], [start[1]])
        for name in COLOURS:
            points, losses = self.paths.get(name, (np.empty((0, 2)), np.ones(1)))
            self.lines[name].set_data(points[:, 0], points[:, 1])
            relative = np.clip(losses / losses[0], *LOSS_RANGE) if losses[0] > 0 else np.full(len(losses), 1.0)
            self.curves[name].set_data(np.arange(len(losses)), relative if len(points) else [])
        if self.rate_dot is not None:
            self.rate_dot.set_data([c["lr"].value], [c["momentum"].value])
        rows = "".join(f'<tr><td><b style="color:{COLOURS[n]}">■</b> {LABELS[n]}</td>'
                       f'<td style="text-align:right">{html.escape(_format_loss(loss, steps))}</td></tr>'
                       for n, (_, loss) in self.paths.items())
        self.readout.value = (f"<table><tr><th>optimizer</th><th>loss after {steps} steps</th></tr>"
                              f"{rows}</table>")
        self.image.value = self._png(steps)

    def losses_after(self):
        """The loss each optimizer shown reached at the last step (NaN if it diverged)."""
        steps = self.controls["steps"].value
        return {n: (float(loss[-1]) if len(loss) > steps else float("nan")) for n, (_, loss) in self.paths.items()}


def race(surface="valley", optimizers=("gd", "momentum", "adam"), steps=100, **settings):
    """Optimizers racing on a 2-D loss, with sliders for the start, the step count and every
    optimizer setting (``SETTINGS``). surface: a key of ``SURFACES``; optimizers: keys of ``COLOURS``."""
    return Race(surface, optimizers, steps, **settings)
