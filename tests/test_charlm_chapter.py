"""Chapter 09's own tools: the step written by hand agrees with the engine, and the cells are
read and measured right (``minigraph.charlm.by_hand``, ``minigraph.charlm.widgets``)."""

import numpy as np
import pytest

from minigraph.charlm import by_hand, widgets
from minigraph.charlm.model import CharLSTM
from minigraph.training.text import Vocabulary


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


# -- the sampler widget --------------------------------------------------------------------------

def tiny_sampler(**options):
    text = "ab\nba: ab\n" * 4
    vocab = Vocabulary(text)
    return widgets.Sampler(CharLSTM(len(vocab), hidden=5, rng=0, dtype=np.float64), vocab,
                           prime="ab\n", length=40, background=False, **options), vocab


def test_the_sampler_shows_the_chart_and_the_sample_of_one_setting_together():
    from minigraph.training.sample import sample
    box, vocab = tiny_sampler()
    assert box.shown == ("ab\n", 0.8, 40, 0)
    assert box.written == sample(box.model, vocab, "ab\n", 40, 0, 0.8)
    page = box.page.value
    assert "at temperature 0.8</text>" in page and "<svg" in page and "style=\"max-width:100%" in page
    assert "sample 1: 40 characters at temperature 0.8" in page and "charlm-sample" in page
    box.temperature.value = 1.5
    assert box.shown == ("ab\n", 1.5, 40, 0) and "at temperature 1.5</text>" in box.page.value
    assert box.written == sample(box.model, vocab, "ab\n", 40, 0, 1.5)
    box.again()                                                   # the button: the next seed
    assert box.shown[3] == 1 and box.written == sample(box.model, vocab, "ab\n", 40, 1, 1.5)
    assert "temperature" in box.temperature.description and box.temperature.style.description_width == "initial"


def test_a_prime_with_a_newline_is_read_and_an_unknown_character_clears_the_picture():
    box, vocab = tiny_sampler()
    box.prime.value = "ba:\nab"                                   # a text area: newlines can be typed
    assert box.written.startswith("ba:\nab") and "<svg" in box.page.value
    box.prime.value = "abz"
    assert box.written is None and "'z'" in box.message
    assert "<svg" not in box.page.value and "charlm-sample" not in box.page.value  # nothing stale
    assert box.page.value.startswith("<pre class='mg-error'>")
    box.prime.value = "ab"                                        # and it recovers
    assert box.written.startswith("ab") and "<svg" in box.page.value


def test_requests_made_while_a_sample_is_written_keep_only_the_newest():
    import threading
    box, _ = tiny_sampler()
    started, release, made = threading.Event(), threading.Event(), []
    make = box._make

    def slow_make(*setting):
        made.append(setting)
        started.set()
        release.wait(10)
        return make(*setting)

    box._make, box.background = slow_make, True
    box.temperature.value = 1.0                                   # computed in a thread ...
    assert started.wait(10)
    for t in (1.1, 1.2, 1.3):                                     # ... while these arrive
        box.temperature.value = t
    release.set()
    for _ in range(500):
        if box.shown == ("ab\n", 1.3, 40, 0) and not box._busy:
            break
        threading.Event().wait(0.02)
    assert [s[1] for s in made] == [1.0, 1.3]                     # 1.1 and 1.2 were dropped
    assert box.shown == ("ab\n", 1.3, 40, 0) and "at temperature 1.3</text>" in box.page.value


def test_sampling_and_model_calls_run_on_one_blas_thread():
    from threadpoolctl import threadpool_info

    from minigraph.blas import one_thread
    from minigraph.charlm import model, sample
    from minigraph.gpt import model as gpt_model
    from minigraph.gpt import widgets as gpt_widgets
    from minigraph.translate.model import Translator

    def blas_threads():
        return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}

    box, vocab = tiny_sampler()
    seen, read = [], box.model.reader

    def reader():                                                 # what BLAS allows while it reads
        seen.append(blas_threads())
        return read()

    box.model.reader = reader
    sample.sample(box.model, vocab, "ab", 5, 0)
    assert seen and seen[0] <= {1}
    limited = one_thread(lambda: None).__code__                   # the wrapper one_thread makes
    for call in (sample.sample, model.mean_loss, gpt_model.mean_loss, Translator.translate,
                 widgets.next_logits, widgets.cell_activations, gpt_widgets.attention_weights):
        assert call.__code__ is limited, f"{call.__qualname__} does not run on one BLAS thread"
