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
    view = widgets.attention_view(fake_weights, prime="ab:cd")
    assert (view.layer.value, view.head.value, view.layer.max, view.head.max) == (0, 0, 1, 2)
    np.testing.assert_array_equal(view.weights, fake_weights("ab:cd")[0, 0])
    first = view.image.value
    assert first[1:4] == b"PNG" and "layer 0, head 0, 5 characters" in view.readout.value
    view.layer.value = 1
    np.testing.assert_array_equal(view.weights, fake_weights("ab:cd")[1, 0])
    assert view.image.value != first and "layer 1, head 0" in view.readout.value
    view.head.value = 2
    np.testing.assert_array_equal(view.weights, fake_weights("ab:cd")[1, 2])
    assert "layer 1, head 2" in view.readout.value


def test_the_readout_names_what_the_last_position_attends_to_most():
    view = widgets.attention_view(fake_weights, prime="hagbe", layer=1, head=1)
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
    assert view.image.value != small and "the last 8 of 16 characters" in view.readout.value
    view.prime.value = "a bad"                        # within the block: no "last"
    assert "5 characters" in view.readout.value and "last 5" not in view.readout.value


def test_a_prime_the_model_cannot_read_says_why_and_clears_the_last_picture():
    view = widgets.attention_view(fake_weights, prime="abc")
    assert view.image.value[1:4] == b"PNG" and view.image.layout.display is None
    for bad in ("XYZ", ""):
        view.prime.value = bad
        assert "cannot read" in view.readout.value and repr(bad) in view.readout.value
        assert view.image.value == b"" and view.image.layout.display == "none"   # no stale heatmap
        assert view.text is None and view.weights is None
        view.layer.value = 1 - view.layer.value          # moving a slider keeps the message
        assert "cannot read" in view.readout.value and view.image.value == b""
    view.prime.value = "abcd"                          # and it recovers
    assert view.text == "abcd" and "4 characters" in view.readout.value
    assert view.image.value[1:4] == b"PNG" and view.image.layout.display is None


def test_fewer_layers_after_a_new_model_keep_the_sliders_in_range():
    layers = [3]
    view = widgets.attention_view(lambda text: fake_weights(text, layers=layers[0]), prime="abc", layer=2)
    assert view.layer.value == 2
    layers[0] = 1
    view.prime.value = "abcd"
    assert view.layer.max == 0 and view.layer.value == 0
    np.testing.assert_array_equal(view.weights, fake_weights("abcd", layers=1)[0, 0])


@pytest.mark.parametrize("text", ["a", "ab cd", "\n:a\n"])
def test_tick_labels_show_spaces_and_newlines(text):
    labels = widgets.shown(text)
    assert len(labels) == len(text) and " " not in labels and "\n" not in labels
    assert [{"␣": " ", "⏎": "\n"}.get(label, label) for label in labels] == list(text)


def tiny_gpt():
    from minigraph.training.text import Vocabulary
    from minigraph.gpt.model import GPT
    vocab = Vocabulary(ALPHABET)
    return GPT(len(vocab), n_layer=2, n_head=2, n_embd=8, block_size=6, rng=0, dtype=np.float64), vocab


def test_attention_weights_are_each_heads_causal_softmax_and_a_prefix_sees_the_same():
    model, vocab = tiny_gpt()
    weights = widgets.attention_weights(model, vocab, "bad:\nfe")    # 7 characters: the last 6 read
    assert weights.shape == (2, 2, 6, 6)
    np.testing.assert_allclose(weights.sum(axis=-1), 1, rtol=1e-12)
    below = np.tril(np.ones((6, 6), bool))
    assert np.all(weights[..., ~below] == 0) and np.all(weights[..., below] > 0)
    assert not np.allclose(weights[0, 0], weights[1, 1])               # layers and heads differ
    prefix = widgets.attention_weights(model, vocab, "ad:")            # position t sees 0 .. t only
    np.testing.assert_allclose(prefix, weights[:, :, :3, :3], rtol=1e-12)


def test_attention_weights_of_a_text_the_model_cannot_read_are_a_clear_error():
    model, vocab = tiny_gpt()
    with pytest.raises(BadValueError, match="at least one character"):
        widgets.attention_weights(model, vocab, "")
    with pytest.raises(BadValueError):
        widgets.attention_weights(model, vocab, "xyz")


def test_the_view_of_a_gpt_shows_its_layers_and_heads():
    model, vocab = tiny_gpt()
    view = widgets.attention_view(lambda text: widgets.attention_weights(model, vocab, text), prime="abc")
    assert (view.layer.max, view.head.max) == (1, 1)
    view.prime.value = "X"
    assert "X" in view.readout.value and view.text is None
    view.prime.value = "ab\nc"                         # a newline in the prime box is read
    assert view.text == "ab\nc" and view.weights.shape == (4, 4)


def test_looking_back_measures_itself_the_previous_character_and_the_distance():
    T = 5
    itself, previous = np.eye(T), np.eye(T, k=-1)
    previous[0, 0] = 1                                      # the first position has no previous one
    first = np.zeros((T, T))
    first[:, 0] = 1                                         # every position looks at the first
    found = widgets.looking_back(np.stack([itself, previous, first])[None])   # (1 layer, 3 heads)
    assert found["itself"].shape == (1, 3)
    np.testing.assert_allclose(found["itself"][0], [1, 1 / T, 1 / T])
    np.testing.assert_allclose(found["previous"][0], [0, 1, 1 / (T - 1)])
    np.testing.assert_allclose(found["distance"][0], [0, (T - 1) / T, np.arange(T).mean()])


def test_side_by_side_puts_each_text_in_its_column_escaped():
    page = widgets.side_by_side({"LSTM": "ROMEO:\n<b>", "GPT": "JULIET & co"})
    assert page.count("<td") == 2 and page.index("LSTM") < page.index("GPT")
    assert "ROMEO:\n&lt;b&gt;" in page and "JULIET &amp; co" in page
    assert page.count("text-align:left") == 2          # JupyterLab would right-align the texts
