"""Pictures and a widget for handwritten digits (chapter 05): images, a classifier's view of them.

    mg.digits.show_images(images, titles)      # a grid of 28x28 images
    mg.digits.show_confusion(matrix)           # rows: true digit, columns: predicted digit
    mg.digits.browse_images(X, y)              # an image and the row of 784 numbers it is
    mg.digits.browse(net, X_test, y_test)      # step through test digits: image, ten bars, drawing
    mg.digits.text_bar(3, 10)                  # '██████··············': progress in plain text

An image is a row of 784 numbers in [0, 1] (28 rows of 28 pixels, 0 = paper, 1 = ink); the
pictures reshape rows back to 28x28. ``import minigraph`` does not import this module (ipywidgets
and matplotlib are slow to import); ``mg.digits`` loads it on first use.
"""

import html
import io

import ipywidgets as ipw
import numpy as np

from .. import viz
from ..graph import Graph, Input
from ..ops import getitem, softmax
from ..widgets import Picture, svg_view

SIDE = 28                      # MNIST images are 28 x 28 pixels
ZOOM = 5                       # the browser shows each pixel as a 5 x 5 square


def as_images(rows):
    """``(n, 784)`` rows (or ``(n, 28, 28)`` images) as ``(n, 28, 28)`` images."""
    rows = np.asarray(rows, dtype=float)
    return rows.reshape(len(rows), SIDE, SIDE)


def text_bar(done, total, width=20):
    """A progress bar as text, ``done`` of ``total`` filled: prints the same on every machine."""
    filled = round(width * done / total)
    return "█" * filled + "·" * (width - filled)


# -- static pictures (matplotlib) ---------------------------------------------------------------

def show_images(images, titles=None, columns=10, cmap="gray_r", symmetric=False, size=1.1):
    """Draw images in a grid, each with an optional title; ``symmetric`` scales each image to its
    own largest |value| and centres the colours on 0 (for weights: orange +, purple -).

    The grid is one picture (tiles on a blank canvas), which draws much faster than one
    matplotlib axes per image.
    """
    import matplotlib.pyplot as plt
    images = as_images(images)
    if symmetric:
        images = images / np.maximum(np.abs(images).max(axis=(1, 2), keepdims=True), 1e-12)
    rows, gap, top = -(-len(images) // columns), 4, 9 if titles is not None else 0
    tile_w, tile_h = SIDE + gap, SIDE + gap + top
    canvas = np.full((rows * tile_h, columns * tile_w), np.nan)      # NaN: blank, not an image
    fig, ax = plt.subplots(figsize=(columns * size, rows * size * tile_h / tile_w))
    for i, image in enumerate(images):
        r, c = divmod(i, columns)
        canvas[r * tile_h + top:r * tile_h + top + SIDE, c * tile_w:c * tile_w + SIDE] = image
        if titles is not None:
            ax.text(c * tile_w + SIDE / 2, r * tile_h + top - 1, titles[i], ha="center", va="bottom", fontsize=8)
    colours = plt.get_cmap(cmap).with_extremes(bad="white")
    ax.imshow(canvas, cmap=colours, vmin=-1 if symmetric else 0, vmax=1, interpolation="nearest")
    ax.set_axis_off()
    fig.subplots_adjust(0, 0, 1, 1)
    plt.show()


def show_confusion(matrix, title="confusion matrix"):
    """A 10 x 10 table of counts as a picture: row = true digit, column = the network's answer."""
    import matplotlib.pyplot as plt
    matrix = np.asarray(matrix)
    off_diagonal = matrix * (1 - np.eye(len(matrix)))
    fig, (ax_all, ax_off) = plt.subplots(1, 2, figsize=(11, 4.8))
    for ax, shown, what in ((ax_all, matrix, "all answers"), (ax_off, off_diagonal, "mistakes only")):
        ax.imshow(shown, cmap="Purples")
        for (t, p), count in np.ndenumerate(matrix):
            if count and (shown is matrix or t != p):
                ax.text(p, t, str(count), ha="center", va="center", fontsize=8,
                        color="white" if shown[t, p] > shown.max() / 2 else "black")
        ax.set(xticks=range(len(matrix)), yticks=range(len(matrix)), xlabel="the network says",
               ylabel="true digit", title=f"{title}: {what}")
    plt.tight_layout()
    plt.show()


# -- an image is a row: the image browser ------------------------------------------------------------

def png(image, zoom=(ZOOM, ZOOM), marked=None):
    """An image (0 = paper, 1 = ink) as PNG bytes, each pixel a ``zoom`` (height, width) block;
    ``marked`` (a boolean mask of the image's shape) tints those pixels violet."""
    from matplotlib.colors import to_rgb
    from matplotlib.image import imsave
    rgb = (1 - np.clip(image, 0, 1))[..., None] * np.ones(3)       # white paper, black ink
    if marked is not None:
        tint = np.array(to_rgb(viz.HIGHLIGHT))
        rgb = np.where(marked[..., None], 0.35 * rgb + 0.65 * tint, rgb)
    buffer = io.BytesIO()
    imsave(buffer, np.kron(rgb, np.ones(zoom + (1,))), format="png")
    return buffer.getvalue()


class ImageBrowser(ipw.VBox):
    """One image at a time, twice: as the 28x28 picture a person sees and as the row of 784
    numbers a layer ``xW + b`` reads (the 28 rows of the picture laid end to end). Choose an
    image and a row of the picture: that row is tinted in both, at pixels 28·row to 28·row + 27
    of the long row."""

    def __init__(self, images, labels, index=0, row=14):
        self.images = as_images(images)
        self.labels = np.asarray(labels)
        self.slider = ipw.IntSlider(value=index, min=0, max=len(self.images) - 1, description="image")
        self.row = ipw.IntSlider(value=row, min=0, max=SIDE - 1, description="picture row")
        self.caption = ipw.HTML().add_class("mg-caption")
        self.picture = Picture(format="png", tooltip="the image as a person sees it, its chosen row tinted",
                               layout=ipw.Layout(width=f"{SIDE * ZOOM}px"))
        self.strip = Picture(format="png", tooltip="the same image as one row of numbers, its rows end to end, "
                                                   "the chosen row tinted",
                             layout=ipw.Layout(width=f"{SIDE * SIDE}px"))
        for control in (self.slider, self.row):
            control.observe(lambda _: self._show(), names="value")
        self._show()
        super().__init__([ipw.HBox([self.slider, self.row]), self.caption, self.picture,
                          ipw.HTML("the same image as the row of 784 numbers the network reads:"),
                          self.strip])
        self.add_class("mg-image-browser")

    def _show(self):
        image, r = self.images[self.slider.value], self.row.value
        marked = np.zeros((SIDE, SIDE), dtype=bool)
        marked[r] = True
        self.picture.value = png(image, marked=marked)
        self.strip.value = png(image.reshape(1, -1), zoom=(12, 1), marked=marked.reshape(1, -1))
        ink = int(np.count_nonzero(image))
        self.caption.value = (f"image <b>{self.slider.value}</b> of {len(self.images)} · label "
                              f"<b>{self.labels[self.slider.value]}</b> · ink in {ink} of "
                              f"{SIDE * SIDE} pixels · picture row {r} is pixels {SIDE * r} to "
                              f"{SIDE * r + SIDE - 1} of the row")


def browse_images(images, labels, index=0):
    """A widget to step through ``images`` (rows of 784 pixels) with their ``labels``: each image
    as a picture and as the row of numbers a layer reads, one picture row tinted in both."""
    return ImageBrowser(images, labels, index)


# -- the digit browser -------------------------------------------------------------------------------


def probability_bars(probabilities, label):
    """Ten horizontal bars as inline SVG: the network's answer in violet, the true digit marked."""
    best = int(np.argmax(probabilities))
    rows = []
    for digit, p in enumerate(probabilities):
        y = 4 + 22 * digit
        colour = viz.HIGHLIGHT if digit == best else viz.MUTED
        mark = "◀ true digit" if digit == label else ""
        rows.append(f'<g class="mg-bar" data-digit="{digit}">'
                    f'<text x="0" y="{y + 13}" font-size="13" font-family="monospace">{digit}</text>'
                    f'<rect x="16" y="{y}" width="{max(200 * p, 0.5):.1f}" height="16" fill="{colour}"/>'
                    f'<text class="mg-p" x="222" y="{y + 13}" font-size="12" font-family="monospace">'
                    f'{100 * p:.1f} %</text>'
                    f'<text x="282" y="{y + 13}" font-size="12">{html.escape(mark)}</text></g>')
    return f'<svg class="mg-bars" width="360" height="228">{"".join(rows)}</svg>'


class DigitBrowser(ipw.VBox):
    """Step through digits (slider or buttons) and see what a trained network makes of each.

    Shows the image, the network's ten probabilities as bars and the network's last layer drawn
    as a graph with this image's numbers: what the layer reads (the hidden values ``h``, or the
    image itself for a softmax classifier) as an Input, its Parameters, the ten logits
    ``z(0)`` ... ``z(9)`` and the ten probabilities ``p(0)`` ... ``p(9)``. ``net`` is an
    ``mg.nn.MLP`` or an ``mg.nn.Linear``; its Parameters are shared, not copied.
    """

    def __init__(self, net, images, labels, index=0):
        self.images = np.asarray(images, dtype=float).reshape(len(images), -1)
        self.labels = np.asarray(labels)
        layers = getattr(net, "layers", [net])
        pixels = Input("pixels")
        h = pixels
        for layer in layers[:-1]:                      # everything before the last layer
            h = net.activation(layer(h))
        self.hidden = Graph(h)
        self.last_input = Input("h" if len(layers) > 1 else "image")
        logits = layers[-1](self.last_input)
        probs = softmax(logits, name="softmax")
        self.graph = Graph([getitem(logits, index=k, name=f"z({k})") for k in range(10)]
                           + [getitem(probs, index=k, name=f"p({k})") for k in range(10)])
        self.all_probs = Graph(softmax(layers[-1](h))).forward({pixels: self.images})
        self.drawing = viz.LiveDrawing(self.graph, values=True, grads=False)
        self.slider = ipw.IntSlider(value=index, min=0, max=len(self.images) - 1, description="test digit",
                                  continuous_update=True)
        actions = {"◀ previous": self.previous, "next ▶": self.next, "next mistake": self.next_mistake}
        self.buttons = {name: ipw.Button(description=name, layout=ipw.Layout(width="130px")) for name in actions}
        for name, action in actions.items():
            self.buttons[name].on_click(lambda _, action=action: action())
        self.caption = ipw.HTML().add_class("mg-caption")
        self.picture = Picture(format="png", tooltip="the test digit, enlarged",
                               layout=ipw.Layout(width=f"{SIDE * ZOOM}px"))
        self.bars = ipw.HTML().add_class("mg-probabilities")
        self.view = ipw.HTML().add_class("mg-view")
        self.slider.observe(lambda _: self._show(), names="value")
        self._show()
        super().__init__([ipw.HBox([self.slider, *self.buttons.values()]), self.caption,
                          ipw.HBox([self.picture, self.bars]), self.view])
        self.add_class("mg-digit-browser")

    @property
    def index(self):
        return self.slider.value

    def previous(self):
        self.slider.value = max(self.index - 1, 0)

    def next(self):
        self.slider.value = min(self.index + 1, len(self.images) - 1)

    def next_mistake(self):
        """Jump to the next digit (after the current one, wrapping around) the network gets wrong."""
        wrong = np.flatnonzero(self.all_probs.argmax(axis=1) != self.labels)
        if len(wrong):
            later = wrong[wrong > self.index]
            self.slider.value = int(later[0] if len(later) else wrong[0])

    def _show(self):
        i = self.index
        feed = {self.last_input: self.hidden.forward({"pixels": self.images[i]})}
        self.probabilities = np.array(self.graph.forward(feed)[10:])
        label, guess = int(self.labels[i]), int(np.argmax(self.probabilities))
        verdict = "right" if guess == label else "wrong"
        self.caption.value = (f"test digit <b>{i}</b> of {len(self.images)} · true digit <b>{label}</b> · "
                              f"the network says <b>{guess}</b> ({100 * self.probabilities[guess]:.1f} %): "
                              f"<b>{verdict}</b>")
        self.picture.value = png(self.images[i].reshape(SIDE, SIDE))
        self.bars.value = probability_bars(self.probabilities, label)
        self.view.value = svg_view(self.drawing.render())


def browse(net, images, labels, index=0):
    """A widget to step through ``images`` (rows of 784 pixels) with their ``labels``: the image,
    the ten probabilities ``net`` gives it, and ``net`` drawn with this image's numbers."""
    return DigitBrowser(net, images, labels, index)
