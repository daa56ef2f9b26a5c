"""digits: the progress bar, the pictures, and the digit browser driven from Python as a learner drives it."""

import io
import re
import subprocess
import sys

import matplotlib
import numpy as np
import pytest

import minigraph as mg
from minigraph import digits

matplotlib.use("Agg")                               # pictures are drawn, never shown


def softmax_rows(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def by_hand(net, X):
    """The MLP's probabilities computed in plain numpy from its Parameters (not through the engine)."""
    h = X
    for layer in net.layers[:-1]:
        h = np.maximum(h @ layer.W.value + layer.b.value, 0)
    last = net.layers[-1]
    return softmax_rows(h @ last.W.value + last.b.value)


@pytest.fixture(scope="module")
def data():
    X_train, y_train, X_test, y_test = mg.data.mnist()
    return X_test[:40], y_test[:40]


def test_import_minigraph_does_not_import_digits_until_asked():
    code = ("import sys, minigraph as mg; assert 'minigraph.chapters.digits' not in sys.modules; "
            "mg.digits.browse; assert 'ipywidgets' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("done, total", [(0, 10), (3, 10), (10, 10), (1, 3), (59, 60)])
def test_text_bar_fills_in_proportion(done, total):
    bar = digits.text_bar(done, total)
    assert len(bar) == 20 and set(bar) <= {"█", "·"}
    assert bar.count("█") == round(20 * done / total) and "·█" not in bar


def test_probability_bars_show_every_digit_mark_the_label_and_colour_the_answer():
    p = np.array([0.05, 0.6, 0.05, 0.1, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0])
    svg = digits.probability_bars(p, label=6)
    assert re.findall(r'class="mg-p"[^>]*>([^<]*)<', svg) == [f"{100 * q:.1f} %" for q in p]
    rows = re.findall(r'<g class="mg-bar" data-digit="(\d)">(.*?)</g>', svg)
    assert [int(d) for d, _ in rows] == list(range(10))
    assert [("true digit" in row) for _, row in rows] == [d == 6 for d in range(10)]
    assert [mg.viz.HIGHLIGHT in row for _, row in rows] == [d == 1 for d in range(10)]


def test_the_browser_shows_the_engines_probabilities_for_each_digit(data):
    X, y = data
    net = mg.nn.MLP([784, 16, 10], activation="relu", rng=3, name="mlp")
    browser = digits.browse(net, X, y, index=5)
    expected = by_hand(net, X)
    assert browser.index == 5 and np.allclose(browser.probabilities, expected[5])
    browser.next()
    assert browser.index == 6 and np.allclose(browser.probabilities, expected[6])
    assert f"true digit <b>{y[6]}</b>" in browser.caption.value
    assert f"says <b>{expected[6].argmax()}</b>" in browser.caption.value
    svg = browser.view.value                            # the drawn last layer, with this image's numbers
    for k in range(10):
        assert mg.viz.format_value(expected[6][k]) in svg and f"p({k})" in svg and f"z({k})" in svg
    assert browser.bars.value == digits.probability_bars(browser.probabilities, y[6])
    assert browser.picture.value[:4] == b"\x89PNG"


def test_previous_and_next_stop_at_the_ends_and_next_mistake_finds_a_wrong_digit(data):
    X, y = data
    net = mg.nn.MLP([784, 8, 10], activation="relu", rng=0, name="mlp")      # untrained: many mistakes
    browser = digits.browse(net, X, y)
    browser.previous()
    assert browser.index == 0
    browser.slider.value = len(X) - 1
    browser.next()
    assert browser.index == len(X) - 1
    wrong = np.flatnonzero(by_hand(net, X).argmax(axis=1) != y)
    browser.slider.value = 0
    browser.next_mistake()
    assert browser.index == wrong[wrong > 0][0]
    browser.slider.value = int(wrong[-1])
    browser.next_mistake()                              # wraps around to the first mistake
    assert browser.index == wrong[0]
    assert "wrong" in browser.caption.value


def test_a_softmax_classifier_is_browsed_too_its_input_is_the_image(data):
    X, y = data
    linear = mg.nn.Linear(784, 10, rng=0, name="linear")
    browser = digits.browse(linear, X, y, index=2)
    expected = softmax_rows(X @ linear.W.value + linear.b.value)
    assert np.allclose(browser.probabilities, expected[2])
    assert [n.name for n in browser.graph.nodes if n.kind == "input"] == ["image"]


def test_pictures_draw_without_error(data, monkeypatch):
    import matplotlib.pyplot as plt
    shown = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(plt.gcf()))
    X, y = data
    digits.show_images(X[:13], titles=[str(d) for d in y[:13]], columns=5)
    digits.show_images(np.random.default_rng(0).normal(size=(3, 784)), cmap="PuOr_r", symmetric=True)
    digits.show_confusion(np.eye(10, dtype=int) * 9 + 1)
    assert len(shown) == 3 and [len(f.texts) + sum(len(a.texts) for a in f.axes) for f in shown][0] == 13
    plt.close("all")


def test_the_image_browser_tints_one_picture_row_and_the_same_pixels_of_the_long_row(data):
    """The picture and the row of 784 numbers are one image: the tinted row r of the picture is
    pixels 28r .. 28r + 27 of the strip, for every image and row a learner picks."""
    from matplotlib.image import imread
    X, y = data
    browser = digits.browse_images(X, y)

    def tinted(png_bytes):                       # violet pixels: red and blue above green
        rgb = imread(io.BytesIO(png_bytes))[..., :3]
        return (rgb[..., 2] - rgb[..., 1] > 0.2)

    for index, row in [(0, 14), (7, 0), (39, 27)]:
        browser.slider.value, browser.row.value = index, row
        picture, strip = tinted(browser.picture.value), tinted(browser.strip.value)
        assert picture.shape == (28 * digits.ZOOM, 28 * digits.ZOOM) and strip.shape == (12, 784)
        rows = np.flatnonzero(picture.any(axis=1)) // digits.ZOOM
        assert set(rows) == {row}
        assert list(np.flatnonzero(strip.all(axis=0))) == list(range(28 * row, 28 * row + 28))
        ink = imread(io.BytesIO(browser.strip.value))[0, :, 0] < 0.5
        assert np.array_equal(ink, X[index] > 0.5)          # the strip is the image's own row
        assert f"label <b>{y[index]}</b>" in browser.caption.value
        assert f"pixels {28 * row} to {28 * row + 27}" in browser.caption.value
