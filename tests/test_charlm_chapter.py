"""Chapter 09's own tools: the step written by hand agrees with the engine, and the cells are
read and measured right (``minigraph.charlm.by_hand``, ``minigraph.charlm.widgets``)."""

import numpy as np
import pytest

from minigraph.charlm import by_hand, widgets
from minigraph.charlm.model import CharLSTM
from minigraph.charlm.text import Vocabulary


def test_the_step_by_hand_gives_the_engines_loss_gradients_and_state():
    model = CharLSTM(11, hidden=6, rng=0, dtype=np.float64)
    rng = np.random.default_rng(1)
    inputs, targets = rng.integers(0, 11, (3, 5)), rng.integers(0, 11, (3, 5))
    state = [rng.normal(size=(3, 6)) * 0.5 for _ in range(2)]      # a carried state, not zeros
    chunk = model.chunk(5)
    loss = chunk.graph.backward(chunk.feed(inputs, targets, state), wrt=model.parameters)
    values = {p.name: p.value for p in model.parameters}
    hand_loss, grads, end = by_hand.lstm_step(values, inputs, targets, state)
    assert hand_loss == pytest.approx(float(loss), rel=1e-12)
    for p in model.parameters:
        np.testing.assert_allclose(grads[p.name], p.grad, rtol=1e-9, atol=1e-12, err_msg=p.name)
    for mine, engine in zip(end, chunk.final_state()):
        np.testing.assert_allclose(mine, engine, rtol=1e-12)


def test_torch_step_agrees_with_the_step_by_hand():
    pytest.importorskip("torch")
    model = CharLSTM(7, hidden=4, rng=2, dtype=np.float64)
    rng = np.random.default_rng(3)
    inputs, targets = rng.integers(0, 7, (2, 4)), rng.integers(0, 7, (2, 4))
    state = model.initial_state(2)
    values = {p.name: p.value for p in model.parameters}
    loss, grads, _ = by_hand.lstm_step(values, inputs, targets, state)
    torch_loss, torch_grads, _ = by_hand.torch_step(values, inputs, targets, state)
    assert torch_loss == pytest.approx(loss, rel=1e-12)
    for name, grad in grads.items():
        np.testing.assert_allclose(torch_grads[name], grad, rtol=1e-9, atol=1e-12, err_msg=name)


def test_cell_activations_are_the_cell_states_the_model_computes():
    text = "ab\nba: ab\n" * 4
    vocab = Vocabulary(text)
    model = CharLSTM(len(vocab), hidden=5, rng=0, dtype=np.float64)
    acts = widgets.cell_activations(model, vocab, text, steps=10)
    assert acts.shape == (len(text), 5)
    state, step = model.initial_state(1), model.chunk(1)           # one character at a time
    for k, i in enumerate(vocab.encode(text)):
        _, state = step.run([[i]], state)
        np.testing.assert_allclose(acts[k], state[1][0], rtol=1e-10, err_msg=f"character {k}")


def test_features_and_correlations_find_a_cell_that_is_the_feature():
    text = "ALL:\nwe (go) home\nBOTH:\nto me\n"
    features = widgets.text_features(text)
    assert features["position in the line"][:6].tolist() == [0, 1, 2, 3, 4, 0]
    assert features["in a speaker's name line"][:6].tolist() == [1, 1, 1, 1, 1, 0]
    inside = features["inside ( ) or [ ]"]
    assert inside[text.index("(")] == 1 and inside[text.index(")")] == 1 and inside[text.index("h")] == 0
    assert features["in a word in capitals"][:5].tolist() == [1, 1, 1, 0, 0]
    assert features["in a word in capitals"][text.index("we") - 1:text.index("we") + 1].tolist() == [0, 0]
    rng = np.random.default_rng(0)
    acts = rng.normal(size=(len(text), 4))
    acts[:, 2] = -3 * features["position in the line"] + 1            # cell 2 counts, negatively
    found = widgets.correlations(acts, features)
    assert found["position in the line"][0] == 2
    assert found["position in the line"][1] == pytest.approx(-1.0)


def test_a_feature_the_text_never_shows_is_left_out():
    text = "no brackets here\n"
    found = widgets.correlations(np.random.default_rng(0).normal(size=(len(text), 3)),
                                 widgets.text_features(text))
    assert "inside ( ) or [ ]" not in found and "position in the line" in found


def test_probabilities_sharpen_below_temperature_one():
    logits = np.array([2.0, 1.0, 0.0])
    cold, warm = widgets.probabilities(logits, 0.5), widgets.probabilities(logits, 2.0)
    assert cold.sum() == pytest.approx(1) and warm.sum() == pytest.approx(1)
    assert cold[0] > widgets.probabilities(logits, 1.0)[0] > warm[0]
