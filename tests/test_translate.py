"""Chapter 10's translator: the dates task, the model's gradient and attention, greedy decoding,
the shipped model, the train and evaluate commands, and the explorer widget."""

import datetime
import json
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph.translate import data, evaluate, train, training
from minigraph.nn import one_hot
from minigraph.translate.model import Translator, source_mask

SHIPPED = Path(mg.__file__).parent / "checkpoints" / "dates_attention.npz"
FLOOR = 0.99            # the shipped model scores 100% on the first 300 held-out examples
                        # (99.99% on 10,000: python -m minigraph.translate.evaluate --examples 10000)


# -- the task ------------------------------------------------------------------------------------

def test_the_formats_write_the_examples_of_the_chapter():
    day = datetime.date(1997, 3, 3)
    written = {data.write(day, form) for form in data.FORMATS}
    assert {"3rd of March 1997", "Mar 3, 1997", "03/03/97", "Monday, March 3 1997",
            "3 mar 1997"} <= written
    assert len(written) == len(data.FORMATS)
    assert data.iso(day) == "1997-03-03"
    assert [data.ordinal(d) for d in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 30, 31)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "30th", "31st"]


def test_every_date_in_every_format_fits_the_vocabulary_and_names_one_date():
    written = {}
    for day in data.all_dates():
        for form in data.FORMATS:
            text = data.write(day, form)
            assert written.setdefault(text, day) == day, f"{text!r} could be two dates"
    assert max(map(len, written)) == data.MAX_SOURCE_LENGTH
    assert set("".join(written)) == set(data.SOURCE.chars)
    assert len(data.all_dates()) == 36_525


def test_the_task_is_deterministic_and_its_splits_share_no_date():
    a, b = data.dates(3000, 500, seed=7), data.dates(3000, 500, seed=7)
    assert a.train == b.train and a.held_out == b.held_out
    assert data.dates(3000, 500, seed=8).train != a.train
    train_sources, train_targets = map(set, zip(*a.train))
    held_sources, held_targets = map(set, zip(*a.held_out))
    assert not train_targets & held_targets and not train_sources & held_sources
    every_form = {(source, target) for source, target in a.train + a.held_out}
    assert all(target == data.iso(datetime.date.fromisoformat(target)) for _, target in every_form)
    assert len(train_targets) > 2000            # many dates, not a few repeated


def test_a_smaller_task_is_the_start_of_a_bigger_one():
    big, small = data.dates(2000, 300, seed=1), data.dates(50, 100, seed=1)
    assert small.train == big.train[:50] and small.held_out == big.held_out[:100]


def test_the_held_out_dates_are_a_tenth_of_all_dates():
    held = {t for _, t in data.dates(1, 20_000, seed=0).held_out}
    assert 3000 < len(held) <= int(0.1 * 36_525)


def test_sources_are_padded_and_bad_sources_say_why():
    ids, lengths = data.encode_sources(["3 mar 1997", "03/03/97"])
    assert ids.shape == (2, data.MAX_SOURCE_LENGTH) and list(lengths) == [10, 8]
    assert data.SOURCE.decode(ids[0, :10]) == "3 mar 1997" and (ids[0, 10:] == -1).all()
    with pytest.raises(mg.BadValueError, match="'ä'.*not in this model's vocabulary"):
        data.encode_sources(["3 mär 1997"])
    with pytest.raises(mg.BadValueError, match="at most 28"):
        data.encode_sources(["3" * 29])
    with pytest.raises(mg.BadValueError, match="empty"):
        data.encode_sources([""])
    assert data.TARGET.chars == "-0123456789"
    assert data.encode_targets(["1997-03-03"]).tolist() == [[2, 10, 10, 8, 0, 1, 4, 0, 1, 4]]


def test_one_hot_of_minus_one_is_a_row_of_zeros_and_padding_is_masked():
    assert one_hot([2, -1, 0], 3).tolist() == [[0, 0, 1], [0, 0, 0], [1, 0, 0]]
    assert source_mask([[4, -1]]).tolist() == [[0.0, -1e9]]


# -- the model -----------------------------------------------------------------------------------

def tiny(rng=0, dtype=np.float64):
    """A translator small enough for gradcheck: 5 source and 4 target characters, sources of
    at most 4, targets of 3."""
    return Translator(source_size=5, target_size=4, source_length=4, target_length=3,
                      embedding=3, hidden=2, decoder=3, attention=2, rng=rng, dtype=dtype)


TINY_SOURCES = np.array([[0, 3, 1, -1], [4, 2, 2, 1], [1, -1, -1, -1]])
TINY_TARGETS = np.array([[3, 0, 1], [2, 2, 0], [1, 3, 3]])


def test_the_translators_gradient_passes_gradcheck():
    model = tiny()
    net = model.teacher_forced()
    report = mg.gradcheck.check_graph(net.graph, net.feed(TINY_SOURCES, TINY_TARGETS))
    assert report.ok, report


def test_attention_rows_sum_to_one_and_give_padding_nothing():
    model = tiny()
    net = model.teacher_forced()
    net.graph.forward(net.feed(TINY_SOURCES, TINY_TARGETS))
    padding = TINY_SOURCES < 0
    for alpha in net.alphas:
        assert alpha.value.shape == TINY_SOURCES.shape
        np.testing.assert_allclose(alpha.value.sum(axis=1), 1.0, rtol=1e-12)
        assert (alpha.value[padding] == 0).all() and (alpha.value[~padding] > 0).all()


@pytest.mark.parametrize("seed", range(5))
def test_greedy_decoding_is_the_training_graph_fed_its_own_choices(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 5, size=20)                           # every length, 1 to 4
    sources = np.where(np.arange(4) < lengths[:, None], rng.integers(0, 5, size=(20, 4)), -1)
    model = tiny(rng=seed)
    outputs, alignments = model.greedy(sources)
    assert outputs.shape == (20, 3) and alignments.shape == (20, 3, 4)
    net = model.teacher_forced()
    net.graph.forward(net.feed(sources, outputs))
    logits = net.logits.value.reshape(3, 20, -1)                     # (step, batch, characters)
    np.testing.assert_array_equal(np.argmax(logits, axis=-1).T, outputs)
    np.testing.assert_allclose(np.stack([a.value for a in net.alphas], axis=1), alignments, rtol=1e-12)
    assert (alignments[np.broadcast_to((sources < 0)[:, None], alignments.shape)] == 0).all()


def test_the_translator_explains_bad_shapes():
    net = tiny().teacher_forced()
    with pytest.raises(mg.ShapeError, match=r"padded to 4 characters.*encode_sources"):
        net.feed(np.zeros((2, 5), int), np.zeros((2, 3), int))
    with pytest.raises(mg.ShapeError, match=r"ids of shape \(2, 3\).*encode_targets"):
        net.feed(np.zeros((2, 4), int), np.zeros((2, 2), int))
    with pytest.raises(mg.BadValueError, match=r"source ids are whole numbers from -1 to 4 \(.*-1 is "
                                               r"padding\); got int64 ids from -1 to 5"):
        net.feed([[0, 5, -1, -1]], [[0, 0, 0]])
    with pytest.raises(mg.BadValueError, match=r"target ids are whole numbers from 0 to 3 .* from -1 to 2"):
        net.feed([[0, 1, -1, -1]], [[0, 2, -1]])
    with pytest.raises(mg.BadValueError, match="source ids are whole numbers"):
        net.feed(np.zeros((1, 4)), [[0, 2, 1]])
    with pytest.raises(mg.BadValueError, match="hidden must be a whole number"):
        Translator(hidden=0)


def test_translate_returns_one_alignment_per_source_trimmed_to_its_length():
    model = Translator(rng=0)
    texts = ["3 mar 1997", "Monday, March 3 1997"]
    outputs, alignments = model.translate(texts, batch=1)
    assert [len(o) for o in outputs] == [10, 10]
    assert [a.shape for a in alignments] == [(10, 10), (10, 20)]
    for a in alignments:
        np.testing.assert_allclose(a.sum(axis=1), 1.0, rtol=1e-5)


# -- the shipped model and the commands -----------------------------------------------------------

def test_the_shipped_model_translates_held_out_dates():
    model, meta = training.load_model(SHIPPED)
    sources, targets = zip(*data.dates(1, 300, seed=meta["config"]["seed"]).held_out)
    translations, _ = model.translate(list(sources))
    assert training.exact_match(translations, targets) >= FLOOR
    assert meta["commit"] and "+changes" not in meta["commit"]
    assert meta["command"].startswith("python -m minigraph.translate.train --out")
    assert model.translate(["3rd of March 1997"])[0] == ["1997-03-03"]


TINY_RUN = ["--examples", "64", "--batch", "16", "--iterations", "4", "--eval-every", "2",
            "--eval-examples", "8", "--embedding", "3", "--hidden", "4", "--decoder", "5",
            "--attention", "3"]


def test_the_train_command_trains_saves_and_repeats_itself(tmp_path, capsys):
    first, second = tmp_path / "a.npz", tmp_path / "b.npz"
    assert train.main(["--out", str(first)] + TINY_RUN) == 0
    assert "exact match" in capsys.readouterr().err
    train.main(["--out", str(second)] + TINY_RUN)
    model, meta = training.load_model(first)
    assert meta["iteration"] == 4 and meta["config"]["hidden"] == 4
    assert [i for i, _ in meta["history"]["train"]] == [1, 2, 3, 4]
    assert [i for i, _ in meta["history"]["held_out"]] == [2, 4]
    assert meta["command"] == "python -m minigraph.translate.train --out " + f"{first} " + " ".join(TINY_RUN)
    with np.load(first) as a, np.load(second) as b:
        assert set(a.files) == set(b.files)
        for key in a.files:
            if key != "meta.json":
                np.testing.assert_array_equal(a[key], b[key])
    untrained = training.Config(**meta["config"]).model()
    assert any(not np.array_equal(p.value, q.value) for p, q in zip(model.parameters, untrained.parameters))
    assert json.loads(str(np.load(first)["meta.json"]))["format"] == training.FORMAT


def test_the_train_command_refuses_settings_it_cannot_run(tmp_path, capsys):
    assert train.main(["--out", str(tmp_path / "x.npz"), "--batch", "0"]) == 2
    assert capsys.readouterr().err == ("python -m minigraph.translate.train: error: the setting batch must "
                                       "be a whole number >= 1, got 0.\n")
    with pytest.raises(mg.BadValueError, match="the setting hidden must be a whole number >= 1, got -1"):
        training.Config(hidden=-1)
    assert not (tmp_path / "x.npz").exists()


def test_evaluate_prints_the_exact_match_and_the_mistakes(tmp_path, capsys):
    path = tmp_path / "tiny.npz"
    train.main(["--out", str(path)] + TINY_RUN)
    capsys.readouterr()
    assert evaluate.main([str(path), "--examples", "20"]) == 0
    out = capsys.readouterr().out
    assert "on 20 held-out examples" in out and "(should be '" in out      # untrained: mistakes
    with pytest.raises(mg.BadValueError, match="not a translator"):
        training.load_model(Path(mg.__file__).parent / "checkpoints" / "shakespeare_lstm.npz")


# -- the widget ---------------------------------------------------------------------------------

def test_the_explorer_translates_what_is_picked_or_typed_and_explains_bad_input():
    pytest.importorskip("ipywidgets")
    from minigraph.translate import widgets
    model, _ = training.load_model(SHIPPED)
    examples = data.dates(1, 5, seed=0).held_out
    box = widgets.explorer(model, examples)
    assert box.text.value == examples[0][0] and box.translation == examples[0][1]
    assert "✓ right" in box.message and bytes(box.image.value).startswith(b"\x89PNG")
    assert box.image.layout.display is None
    box.menu.value = examples[2][0]
    assert box.text.value == examples[2][0] and box.translation == examples[2][1]
    assert box.alignment.shape == (10, len(examples[2][0]))
    box.text.value = "3rd of March 1997"
    assert box.translation == "1997-03-03" and "✓" not in box.message and "✗" not in box.message
    assert box.menu.value == "(type below)"              # the menu no longer shows the old example
    box.text.value = examples[4][0]                      # typing an example's date picks it
    assert box.menu.value == examples[4][0] and "✓ right" in box.message
    box.text.value = "3rd of March 1997"
    box.step.value = 3                                   # the fourth output character: the 7
    assert "step 4 wrote '7' looking at: '7' (position 17)" in box.message
    drawn = box.image.value
    box.step.value = -1
    assert bytes(box.image.value) != bytes(drawn)       # the outline is gone
    box.text.value = "3 mär 1997"
    assert box.translation is None and box.alignment is None and bytes(box.image.value) == b""
    assert box.image.layout.display == "none"            # no broken-image icon
    assert box.message.startswith("cannot translate this: the character 'ä'")
    assert box.step.options == (("(none)", -1),)
    box.text.value = ""
    assert "empty" in box.message and box.image.layout.display == "none"
    box.text.value = "   "
    assert "empty" in box.message and box.translation is None
    box.text.value = "Mar 3, 1997"
    assert box.translation == "1997-03-03" and box.step.value == -1
    assert box.image.layout.display is None and bytes(box.image.value).startswith(b"\x89PNG")
    typed = widgets.explorer(model, [], value="1 jan 2000")
    assert typed.translation == "2000-01-01" and typed.menu.options == ("(type below)",)
    with pytest.raises(mg.BadValueError, match="needs a date to show first"):
        widgets.explorer(model, [])


def test_the_heatmap_checks_its_shape():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from minigraph.translate import widgets
    ax = Figure().subplots()
    image = widgets.draw_alignment(ax, "3 mar", "1997", np.full((4, 5), 0.2), step=1)
    assert image.get_array().shape == (4, 5) and len(ax.patches) == 1
    assert [t.get_text() for t in ax.get_xticklabels()] == ["3", "␣", "m", "a", "r"]
    with pytest.raises(mg.BadValueError, match=r"\(4, 5\) for '1997' from '3 mar'; got shape \(5, 4\)"):
        widgets.draw_alignment(ax, "3 mar", "1997", np.zeros((5, 4)))


# -- what the model does with dates that do not exist ---------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("1997-03-03", True), ("2049-12-31", True), ("1950-01-01", True), ("1996-02-29", True),
    ("1997-02-29", False), ("1997-02-31", False), ("1997-13-13", False), ("2000-00-00", False),
    ("1949-12-31", False), ("2050-01-01", False), ("2003-17-19", False), ("19970303", False),
    ("1997-3-3", False), ("", False)])
def test_is_date_knows_which_outputs_are_dates_that_exist(text, expected):
    assert data.is_date(text) is expected


def test_the_confidence_is_the_probability_the_training_graph_gives_the_greedy_output():
    model = tiny()
    outputs, alignments, confidences = model.decode(TINY_SOURCES)
    greedy = model.greedy(TINY_SOURCES)
    np.testing.assert_array_equal(greedy[0], outputs)
    np.testing.assert_array_equal(greedy[1], alignments)
    net = model.teacher_forced()                 # the training graph, fed the greedy output
    net.graph.forward(net.feed(TINY_SOURCES, outputs))
    B, T = outputs.shape
    logits = np.asarray(net.logits.value).reshape(T, B, -1).transpose(1, 0, 2)
    chosen = np.take_along_axis(mg.kernels.log_softmax(logits), outputs[..., None], axis=2)[..., 0]
    np.testing.assert_allclose(confidences, np.exp(chosen.sum(axis=1)), rtol=1e-10)
    assert np.all((0 < confidences) & (confidences <= 1))


def test_the_shipped_model_is_sure_of_dates_that_do_not_exist_and_the_explorer_says_so():
    pytest.importorskip("ipywidgets")
    from minigraph.translate import widgets
    model, _ = training.load_model(SHIPPED)
    translations, _, confidences = model.translate_with_confidence(["31 February 1997", "3 mar 1997"])
    assert translations == ["1997-02-31", "1997-03-03"] and min(confidences) > 0.99
    box = widgets.explorer(model, [], value="31 February 1997")
    assert box.translation == "1997-02-31" and "⚠ not a date that exists" in box.message
    assert f"the model's probability {box.confidence:.3f}" in box.message
    box.text.value = "3 mar 1997"
    assert "⚠" not in box.message and "the model's probability 0.99" in box.message
