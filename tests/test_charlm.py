"""Chapter 09's engine side: the corpus, streams and chunks, the char-LSTM graph, truncated
BPTT, sampling, checkpoints, training runs that repeat and resume, and the errors."""

import hashlib
import io
import re

import numpy as np
import pytest

import minigraph as mg
from minigraph.charlm import checkpoint, text as texts
from minigraph.charlm.evaluate import held_out_loss
from minigraph.charlm.model import CharLSTM, character_losses, mean_loss, one_hot
from minigraph.training.sample import next_character, sample
from minigraph.charlm.train import main as train_main, train
from minigraph.charlm.training import Config, Training
from minigraph.progress import LogLines, Progress, TerminalLine, duration, progress_line

SMALL = dict(layers=1, hidden=8, batch=4, steps=5, iterations=6, eval_every=3, eval_chars=200,
             eval_batch=2)


@pytest.fixture(scope="module")
def corpus():
    return mg.data.shakespeare()


@pytest.fixture(scope="module")
def small_text(corpus):
    return corpus[:3000] + "".join(sorted(set(corpus)))   # every character, so the vocab is the 65


# -- the corpus -------------------------------------------------------------------------------

def test_the_corpus_loads_offline_and_matches_its_sha256(corpus, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("mg.data.shakespeare() tried to use the network")
    monkeypatch.setattr("socket.socket.connect", no_network)
    assert mg.data.shakespeare() == corpus
    assert len(corpus) == 1_115_394
    assert len(set(corpus)) == 65
    assert hashlib.sha256(corpus.encode("utf-8")).hexdigest() == mg.data.SHAKESPEARE_SHA256
    assert corpus.startswith("First Citizen:\nBefore we proceed any further, hear me speak.")


def test_the_splits_are_the_first_90_and_last_10_percent(corpus):
    ids = texts.Vocabulary(corpus).encode(corpus)
    train, held_out = texts.split(ids)
    assert len(train) == 1_003_854 and len(held_out) == 111_540
    assert np.array_equal(np.concatenate([train, held_out]), ids)
    assert np.array_equal(texts.held_out_ids(ids), ids[len(train) - 1:])


def test_vocabulary_round_trips_and_names_an_unknown_character():
    vocab = texts.Vocabulary("hello world")
    assert vocab.chars == " dehlorw" and vocab.decode(vocab.encode("world")) == "world"
    with pytest.raises(mg.BadValueError, match=r"'Z' \(at position 2 .*not in this model's vocabulary"):
        vocab.encode("heZ")


def test_losses_in_other_units():
    assert texts.bits_per_character(np.log(2)) == pytest.approx(1.0)
    assert texts.perplexity(np.log(65)) == pytest.approx(65.0)


# -- streams and chunks -------------------------------------------------------------------------

def test_streams_and_chunks_cover_the_text_exactly_once_per_epoch():
    ids = np.arange(1000)
    batch, steps = 3, 7
    seen_inputs, seen_targets = [], []
    pieces = [[] for _ in range(batch)]
    for inputs, targets in texts.chunks(ids, batch, steps):
        assert inputs.shape == targets.shape == (batch, steps)
        assert np.array_equal(targets, inputs + 1)                       # the next character
        seen_inputs += list(inputs.ravel())
        seen_targets += list(targets.ravel())
        for j in range(batch):
            pieces[j] += list(inputs[j])
    used = batch * (999 // (batch * steps) * steps)
    assert sorted(seen_inputs) == list(range(used))                    # each id once
    assert len(set(seen_targets)) == len(seen_targets) == used
    assert 1000 - 1 - used < batch * steps                             # only a short tail dropped
    assert np.array_equal(np.concatenate(pieces), np.arange(used))     # stream j continues itself
    assert texts.chunks_per_epoch(ids, batch, steps) == used // (batch * steps)


def test_a_chunk_longer_than_a_stream_is_a_clear_error():
    with pytest.raises(mg.ShapeError, match="cannot fill 4 streams .* use fewer streams"):
        list(texts.chunks(np.arange(30), batch=4, steps=10))


# -- the model ------------------------------------------------------------------------------------

def test_model_is_float32_and_names_its_layers():
    model = CharLSTM(65, hidden=16, layers=2, rng=0)
    assert {p.dtype for p in model.parameters} == {np.dtype(np.float32)}
    assert [p.name for p in model.parameters] == ["L1.W_x", "L1.W_h", "L1.b", "L2.W_x", "L2.W_h",
                                                  "L2.b", "W_hy", "b_y"]
    assert mg.get_default_dtype() == np.float64                       # put back
    chunk = model.chunk(3)
    assert chunk.graph.node("t3.L2.h") is chunk.end[2]


def _random_chunk(rng, vocab=7, batch=3, steps=4):
    return rng.integers(vocab, size=(batch, steps)), rng.integers(vocab, size=(batch, steps))


def test_carried_state_gives_the_same_loss_as_one_long_sequence():
    model = CharLSTM(7, hidden=6, layers=2, rng=1, dtype=np.float64)
    inputs, targets = _random_chunk(np.random.default_rng(0), steps=8)
    whole = model.chunk(8)
    loss_whole = whole.graph.forward(whole.feed(inputs, targets, model.initial_state(3)))
    half = model.chunk(4)
    first = half.graph.forward(half.feed(inputs[:, :4], targets[:, :4], model.initial_state(3)))
    state = half.final_state()
    second = half.graph.forward(half.feed(inputs[:, 4:], targets[:, 4:], state))
    assert (first + second) / 2 == pytest.approx(float(loss_whole), rel=1e-12)
    for a, b in zip(half.final_state(), whole.final_state()):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_the_carried_state_has_no_gradient_path_to_the_chunk_before():
    model = CharLSTM(7, hidden=6, rng=1, dtype=np.float64)
    chunk = model.chunk(2)
    assert all(node.kind == "input" for node in chunk.start)
    inputs, targets = _random_chunk(np.random.default_rng(2), steps=2)
    chunk.graph.backward(chunk.feed(inputs, targets, model.initial_state(3)), wrt=model.parameters)
    assert all(node.grad is None for node in chunk.start)
    assert all(p.grad is not None for p in model.parameters)


def test_the_char_lstm_graph_passes_gradcheck_in_float64():
    model = CharLSTM(5, hidden=3, layers=2, rng=3, dtype=np.float64)
    rng = np.random.default_rng(4)
    inputs, targets = _random_chunk(rng, vocab=5, batch=2, steps=3)
    state = [rng.normal(size=(2, 3)) for _ in range(4)]
    chunk = model.chunk(3)
    report = mg.gradcheck.check_graph(chunk.graph, chunk.feed(inputs, targets, state))
    assert report.ok, report.summary
    assert {row["label"] for row in report.rows} >= {"L1.W_x", "L2.W_h", "W_hy", "L1.h0", "L2.c0"}


def test_a_chunk_fed_the_wrong_length_says_which_chunk_to_use():
    model = CharLSTM(7, hidden=4, rng=0)
    with pytest.raises(mg.ShapeError, match=r"reads 5 characters .* model.chunk\(3\)"):
        model.chunk(5).feed(np.zeros((2, 3), int), None, model.initial_state(2))


def test_mean_loss_scores_every_character_once():
    model = CharLSTM(7, hidden=5, rng=2, dtype=np.float64)
    ids = np.random.default_rng(5).integers(7, size=53)
    chunk = model.chunk(52)                         # one stream, one chunk: the reference
    logits, _ = chunk.run(ids[None, :-1], model.initial_state(1))
    assert mean_loss(model, ids, batch=1, steps=52) == pytest.approx(
        character_losses(logits, ids[1:]).mean(), rel=1e-12)
    # a readout that ignores the state scores each character alone: any batching must give the
    # mean over ids[1:], each counted once (a character scored twice, or missed, changes it)
    model.W_hy.value = np.zeros_like(model.W_hy.value)
    model.b_y.value = np.log([1, 2, 3, 4, 5, 6, 7.0])
    expected = np.mean(-np.log(np.arange(1, 8) / 28)[ids[1:]])
    for batch, steps in [(1, 52), (3, 4), (4, 5), (7, 1), (60, 2)]:
        assert mean_loss(model, ids, batch=batch, steps=steps) == pytest.approx(expected, rel=1e-12)
    assert mean_loss(model, ids[:2], batch=4, steps=3) == pytest.approx(-np.log(ids[1] + 1) + np.log(28))


def test_one_hot_rows():
    assert np.array_equal(one_hot(np.array([2, 0]), 3), [[0, 0, 1], [1, 0, 0]])


# -- sampling ---------------------------------------------------------------------------------

def test_sampling_with_a_seed_repeats_and_starts_with_the_prime(small_text):
    vocab = texts.Vocabulary(small_text)
    model = CharLSTM(len(vocab), hidden=8, rng=0)
    one = sample(model, vocab, "ROMEO:", 40, np.random.default_rng(7), temperature=0.8, top_k=10)
    two = sample(model, vocab, "ROMEO:", 40, np.random.default_rng(7), temperature=0.8, top_k=10)
    other = sample(model, vocab, "ROMEO:", 40, np.random.default_rng(8), temperature=0.8, top_k=10)
    assert one == two and one != other
    assert one.startswith("ROMEO:") and len(one) == 46 and set(one) <= set(vocab.chars)


def test_temperature_and_top_k():
    logits = np.array([0.0, 1.0, 3.0, 2.0])
    rng = np.random.default_rng(0)
    assert {next_character(logits, rng, top_k=1) for _ in range(20)} == {2}
    assert {next_character(logits, rng, top_k=2) for _ in range(200)} == {2, 3}
    cold = [next_character(logits, rng, temperature=0.05) for _ in range(100)]
    hot = [next_character(logits, rng, temperature=50.0) for _ in range(400)]
    assert set(cold) == {2} and set(hot) == {0, 1, 2, 3}
    with pytest.raises(mg.BadValueError, match="temperature must be a number > 0"):
        next_character(logits, rng, temperature=0)


def test_an_unknown_character_in_the_prime_is_a_clear_error(small_text):
    vocab = texts.Vocabulary(small_text)
    with pytest.raises(mg.BadValueError, match="'é' .*not in this model's vocabulary"):
        sample(CharLSTM(len(vocab), hidden=4, rng=0), vocab, "café", 5, 0)


# -- training, checkpoints, resuming ----------------------------------------------------------

def _losses(run, n):
    return [run.step() for _ in range(n)]


def test_a_short_training_run_repeats_its_losses_exactly_and_learns(small_text):
    one = _losses(Training(Config(**SMALL), small_text), 6)
    two = _losses(Training(Config(**SMALL), small_text), 6)
    assert one == two
    assert one != _losses(Training(Config(**{**SMALL, "seed": 1}), small_text), 6)
    run = Training(Config(**{**SMALL, "lr": 0.02, "iterations": 60}), small_text)
    losses = _losses(run, 60)
    assert np.mean(losses[-10:]) < np.mean(losses[:10]) - 0.5


def test_a_checkpoint_round_trips_bit_for_bit(small_text, tmp_path):
    run = Training(Config(**SMALL), small_text)
    _losses(run, 4)
    run.evaluate()
    checkpoint.save(run, tmp_path / "a.npz", command="python -m ...", commit="abc")
    back = checkpoint.load(tmp_path / "a.npz", small_text)
    checkpoint.save(back, tmp_path / "b.npz", command="python -m ...", commit="abc")
    meta_a, arrays_a = checkpoint.read(tmp_path / "a.npz")
    meta_b, arrays_b = checkpoint.read(tmp_path / "b.npz")
    assert meta_a == meta_b and meta_a["iteration"] == 4 and meta_a["commit"] == "abc"
    assert len(meta_a["history"]["train"]) == 4 and len(meta_a["history"]["held_out"]) == 1
    assert arrays_a.keys() == arrays_b.keys() and any(k.startswith("adam/m/") for k in arrays_a)
    for key in arrays_a:
        assert arrays_a[key].dtype == arrays_b[key].dtype and arrays_a[key].tobytes() == arrays_b[key].tobytes(), key
    for p, q in zip(run.model.parameters, back.model.parameters):
        assert p.value.dtype == q.value.dtype == np.float32 and p.value.tobytes() == q.value.tobytes()
    model, vocab, _ = checkpoint.load_model(tmp_path / "a.npz")
    assert vocab == run.vocab and all(p.value.tobytes() == q.value.tobytes()
                                      for p, q in zip(model.parameters, run.model.parameters))


def test_resuming_gives_the_same_run_as_not_stopping(small_text, tmp_path):
    config = Config(**SMALL)
    straight = Training(config, small_text)
    expected = _losses(straight, 3) + [straight.sample(length=30)] + _losses(straight, 3)
    expected_sample = straight.sample(length=30)
    first = Training(config, small_text)
    got = _losses(first, 3) + [first.sample(length=30)]      # the generator moves on
    checkpoint.save(first, tmp_path / "run.npz")
    resumed = checkpoint.load(tmp_path / "run.npz", small_text)
    got += _losses(resumed, 3)
    assert got == expected
    assert resumed.sample(length=30) == expected_sample
    for p, q in zip(straight.model.parameters, resumed.model.parameters):
        assert p.value.tobytes() == q.value.tobytes()


def test_a_checkpoint_of_another_vocabulary_is_a_clear_error(small_text, tmp_path):
    run = Training(Config(**SMALL), small_text)
    checkpoint.save(run, tmp_path / "run.npz")
    with pytest.raises(mg.BadValueError, match="65 distinct characters .* this text has 3 .* train a new one"):
        checkpoint.load(tmp_path / "run.npz", "abc" * 200)


def test_a_model_saved_alone_samples_the_same_but_cannot_resume(small_text, tmp_path):
    run = Training(Config(**SMALL), small_text)
    _losses(run, 2)
    checkpoint.save(run, tmp_path / "run.npz")
    checkpoint.save(run, tmp_path / "model.npz", resumable=False)
    meta, arrays = checkpoint.read(tmp_path / "model.npz")
    assert not any(key.startswith(("adam/", "state/")) for key in arrays) and "rng" not in meta
    model, vocab, _ = checkpoint.load_model(tmp_path / "model.npz")
    full, _, _ = checkpoint.load_model(tmp_path / "run.npz")
    assert sample(model, vocab, "A", 20, 3) == sample(full, vocab, "A", 20, 3)
    with pytest.raises(mg.BadValueError, match="holds a model alone .* cannot continue"):
        checkpoint.load(tmp_path / "model.npz", small_text)


def test_a_file_that_is_not_a_checkpoint_is_a_clear_error(tmp_path):
    np.savez(tmp_path / "other.npz", **{"meta.json": np.array('{"format": "x"}')})
    with pytest.raises(mg.BadValueError, match="not a character-model checkpoint"):
        checkpoint.read(tmp_path / "other.npz")


def test_the_train_and_evaluate_commands(tmp_path, capsys, monkeypatch):
    out = str(tmp_path / "tiny.npz")
    args = ["--out", out, "--hidden", "4", "--batch", "2", "--steps", "3", "--iterations", "2",
            "--eval-every", "2", "--eval-chars", "30", "--sample-length", "10",
            "--best", str(tmp_path / "best.npz")]
    assert train_main(args) == 0
    assert checkpoint.read(tmp_path / "best.npz")[0]["resumable"] is False
    meta, _ = checkpoint.read(out)
    assert meta["iteration"] == 2 and meta["command"] == "python -m minigraph.charlm.train " + " ".join(args)
    assert meta["config"]["hidden"] == 4 and len(meta["history"]["held_out"]) == 1
    printed = capsys.readouterr()
    assert "held-out loss" in printed.err and "CharLSTM(1 layer of 4" in printed.out
    assert train_main(["--out", out, "--resume", "--hidden", "8"]) == 2      # refused, in one line
    assert re.fullmatch(r"python -m minigraph\.charlm\.train: error: --resume continues with the settings "
                        r"saved .* drop --hidden\.\n", capsys.readouterr().err)
    monkeypatch.setattr("minigraph.charlm.evaluate.mean_loss",
                        lambda model, ids, batch, steps: float(len(ids)))    # the whole split, not its score
    loss, meta = held_out_loss(out)
    assert loss == 111_540 + 1 and meta["iteration"] == 2


def test_a_run_records_the_commit_it_started_from_even_as_the_tree_changes(tmp_path, monkeypatch, ctrl_c_at):
    """The commit is read once, when the run starts: the files the run writes (a tracked
    checkpoint among them) and commits made while it trains do not change its record; a resumed
    run records both."""
    commits = iter(["c1", "c2+changes", "c3", "c4"])
    monkeypatch.setattr("minigraph.training.command.git_commit", lambda: next(commits))
    out = str(tmp_path / "tiny.npz")
    args = ["--out", out, "--hidden", "4", "--batch", "2", "--steps", "3", "--iterations", "4",
            "--eval-every", "2", "--eval-chars", "30", "--sample-length", "0",
            "--best", str(tmp_path / "best.npz")]
    ctrl_c_at(Training, 2)                           # Ctrl-C once, as iteration 2 starts: saved after it
    assert train_main(args) == 130
    assert checkpoint.read(out)[0]["commit"] == checkpoint.read(tmp_path / "best.npz")[0]["commit"] == "c1"
    assert train_main(["--out", out, "--resume", "--sample-length", "0"]) == 0
    meta = checkpoint.read(out)[0]
    assert meta["iteration"] == 4 and meta["commit"] == "c1; then c2+changes"


def test_train_keeps_the_model_of_the_lowest_held_out_loss(small_text, tmp_path, monkeypatch):
    run = Training(Config(**{**SMALL, "iterations": 9}), small_text)
    estimates = iter([3.0, 2.0, 2.5])
    monkeypatch.setattr(run, "evaluate", lambda: run.history["held_out"].append(
        [run.iteration, next(estimates)]) or run.history["held_out"][-1][1])
    train(run, best=tmp_path / "best.npz", sample_length=0,
          progress=Progress(9, display=TerminalLine(io.StringIO())))
    assert checkpoint.read(tmp_path / "best.npz")[0]["iteration"] == 6


def test_train_writes_reports_above_the_bar(small_text):
    run = Training(Config(**SMALL), small_text)
    stream = io.StringIO()
    bar = Progress(6, display=TerminalLine(stream), every=0)
    train(run, progress=bar, sample_length=20)
    shown = stream.getvalue()
    assert run.iteration == 6 and shown.count("held-out loss") == 2
    assert "100% |" in shown and "6/6" in shown


# -- the progress bar ------------------------------------------------------------------------

def test_progress_line_counts_rate_and_time_left():
    line = progress_line(50, 200, 10.0, {"loss": "1.234"}, label="train", rate_unit="chars",
                         rate_per_step=100)
    assert line.startswith("train  25% |█████     ") and "50/200" in line and "loss 1.234" in line
    assert "500 chars/s" in line and line.endswith("0:10 elapsed  0:30 left")
    resumed = progress_line(150, 200, 10.0, start=100)
    assert "150/200" in resumed and "5 it/s" in resumed and resumed.endswith("0:10 elapsed  0:10 left")
    assert progress_line(200, 200, 40.0).endswith("5 it/s  0:40 in all")
    assert "0.25 notebooks/s  0:08 elapsed  0:04 left" in progress_line(2, 3, 8.0, rate_unit="notebooks")
    assert duration(3725) == "1:02:05" and duration(59.6) == "1:00"


def test_progress_draws_one_updating_line_in_a_terminal():
    stream, now = io.StringIO(), [0.0]
    bar = Progress(4, display=TerminalLine(stream), every=1.0, clock=lambda: now[0])
    for _ in range(4):
        now[0] += 0.6
        bar.update(loss="x")
    bar.write("a message")
    bar.close()
    shown = stream.getvalue()
    assert "\n" not in shown.split("a message")[0]              # one line, rewritten with \r
    assert shown.count("\r") >= 4 and "4/4" in shown and shown.endswith("\n")
    assert "1/4" not in shown and "2/4" in shown                 # drawn at most every second


def test_progress_in_a_log_writes_a_line_per_drawing_and_no_repeat():
    stream, now = io.StringIO(), [0.0]
    bar = Progress(2, display=LogLines(stream), every=0, clock=lambda: now[0])
    now[0] += 3
    bar.update(loss="x")
    bar.write("a message")
    now[0] += 3
    bar.update()
    bar.close()                                   # the last step is on show already: no repeat
    lines = stream.getvalue().splitlines()
    assert [line.split("|")[-1] for line in lines] == [
        " 0/2", " 1/2  loss x  0.33 it/s  0:03 elapsed  0:03 left", "a message",
        " 1/2  loss x  0.33 it/s  0:03 elapsed  0:03 left", " 2/2  loss x  0.33 it/s  0:06 in all"]


def test_progress_in_a_notebook_updates_a_widget(monkeypatch):
    pytest.importorskip("ipywidgets")
    from minigraph import progress
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *objs: shown.extend(objs))
    line = progress.NotebookLine()
    bar = Progress(2, display=line, every=0)
    bar.update(loss="<1>")
    bar.write("sample text")
    assert shown and "1/2" in line.line.value and "&lt;1&gt;" in line.line.value
    assert "sample text" in line.messages.outputs[0]["text"]
