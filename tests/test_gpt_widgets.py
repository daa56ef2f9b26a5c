"""Chapter 11's widgets, driven from Python as a learner would drive them (``minigraph.gpt.widgets``)."""

import numpy as np
import pytest

from minigraph import BadValueError
from minigraph.gpt import widgets

ALPHABET = "abcdefgh :\n"


def fake_weights(text, layers=2, heads=3, block_size=8):
    """Causal attention weights that depend on the layer, the head and every character read:
    (layers, heads, T, T) for the last ``block_size`` characters of ``text``."""
    if not text or set(text) - set(ALPHABET):
        raise BadValueError(f"cannot read {text!r}: give characters of {ALPHABET!r}")
    text = text[-block_size:]
    T = len(text)
    codes = np.array([ALPHABET.index(ch) for ch in text], float)
    scores = (np.arange(1, layers + 1)[:, None, None, None] * codes[None, None, :, None]
              + np.arange(heads)[None, :, None, None] * codes[None, None, None, :]) % 5
    scores = np.where(np.tril(np.ones((T, T), bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


def test_the_view_shows_the_chosen_layer_and_head():
    view = widgets.attention_view(fake_weights, prime="ab:cd", layer=1, head=1)
    assert (view.layer.max, view.head.max) == (2, 3)
    np.testing.assert_array_equal(view.weights, fake_weights("ab:cd")[0, 0])
    first = view.image.value
    assert first[1:4] == b"PNG" and "layer 1, head 1, 5 characters" in view.readout.value
    view.layer.value = 2
    np.testing.assert_array_equal(view.weights, fake_weights("ab:cd")[1, 0])
    assert view.image.value != first and "layer 2, head 1" in view.readout.value
    view.head.value = 3
    np.testing.assert_array_equal(view.weights, fake_weights("ab:cd")[1, 2])
    assert "layer 2, head 3" in view.readout.value


def test_the_readout_names_what_the_last_position_attends_to_most():
    view = widgets.attention_view(fake_weights, prime="hagbe", layer=2, head=2)
    last = view.weights[-1]
    best = int(np.argmax(last))
    assert f"{'hagbe'[best]!r} (position {best + 1}) {last[best]:.2f}" in view.readout.value


def test_a_new_prime_is_read_and_drawn_causally():
    view = widgets.attention_view(fake_weights, prime="ab")
    small = view.image.value
    view.prime.value = "head: a bad feed"             # longer than the block: its last 8 characters
    assert view.text == "bad feed" and view.weights.shape == (8, 8)
    np.testing.assert_array_equal(view.all_weights, fake_weights("head: a bad feed"))
    assert np.all(np.triu(view.weights, k=1) == 0) and np.allclose(view.weights.sum(axis=1), 1)
    assert view.image.value != small and "8 characters" in view.readout.value


def test_a_prime_the_model_cannot_read_says_why_and_keeps_the_last_picture():
    view = widgets.attention_view(fake_weights, prime="abc")
    picture, weights = view.image.value, view.weights.copy()
    for bad in ("XYZ", ""):
        view.prime.value = bad
        assert "cannot read" in view.readout.value and repr(bad) in view.readout.value
        assert view.image.value == picture and view.text == "abc"
        np.testing.assert_array_equal(view.weights, weights)
    view.prime.value = "abcd"                          # and it recovers
    assert view.text == "abcd" and "4 characters" in view.readout.value


def test_fewer_layers_after_a_new_model_keep_the_sliders_in_range():
    layers = [3]
    view = widgets.attention_view(lambda text: fake_weights(text, layers=layers[0]), prime="abc", layer=3)
    assert view.layer.value == 3
    layers[0] = 1
    view.prime.value = "abcd"
    assert view.layer.max == 1 and view.layer.value == 1
    np.testing.assert_array_equal(view.weights, fake_weights("abcd", layers=1)[0, 0])


@pytest.mark.parametrize("text", ["a", "ab cd", "\n:a\n"])
def test_tick_labels_show_spaces_and_newlines(text):
    labels = widgets.shown(text)
    assert len(labels) == len(text) and " " not in labels and "\n" not in labels
    assert [{"␣": " ", "⏎": "\n"}.get(label, label) for label in labels] == list(text)
