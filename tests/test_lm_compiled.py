"""The three trainers step through the compiled step (``mg.function``) and the interpreter
(``Graph.backward``) to the same numbers, bit for bit: the loss, every gradient (clipped) and
every Parameter at every iteration, and the carried state of the LSTM; and a compiled run
saved and resumed equals one never stopped."""

import numpy as np
import pytest

import minigraph as mg
from minigraph.charlm import checkpoint as lstm_checkpoint, training as lstm
from minigraph.gpt import checkpoint as gpt_checkpoint, training as gpt
from minigraph.translate import training as translate


@pytest.fixture(scope="module")
def text():
    corpus = mg.data.shakespeare()
    return corpus[:3000] + "".join(sorted(set(corpus)))       # every character: the vocab is the 65


def lstm_run(text, **settings):
    config = dict(layers=2, hidden=6, batch=3, steps=4, iterations=8, eval_every=4, eval_chars=100,
                  eval_batch=2)
    return lstm.Training(lstm.Config(**{**config, **settings}), text)


def gpt_run(text, **settings):
    config = dict(n_layer=2, n_head=2, n_embd=8, block_size=6, batch=3, iterations=8, warmup=2,
                  eval_every=4, eval_chars=100)
    return gpt.Training(gpt.Config(**{**config, **settings}), text)


def translate_run(text, **settings):
    config = dict(examples=48, embedding=4, hidden=5, decoder=6, attention=4, batch=16,
                  iterations=8, eval_every=4, eval_examples=8)
    return translate.Training(translate.Config(**{**config, **settings}))


RUNS = {"lstm": lstm_run, "gpt": gpt_run, "translate": translate_run}
FILES = {"lstm": lstm_checkpoint, "gpt": gpt_checkpoint}


def same_parameters(a, b, what):
    for p, q in zip(a.model.parameters, b.model.parameters, strict=True):
        assert p.value.dtype == q.value.dtype and np.array_equal(p.value, q.value), f"{what}: {p.name}"


@pytest.mark.parametrize("model", RUNS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_run_trained_by_the_compiled_step_equals_the_interpreters_bit_for_bit(text, model, dtype):
    """Both engines from the same seed, iteration after iteration (the clip is active: the
    tiny models' gradients are far above ``clip`` at the start)."""
    compiled, interpreted = (RUNS[model](text, dtype=dtype, clip=0.5) for _ in range(2))
    interpreted.engine = "interpreter"
    assert compiled.engine == "compiled"
    for iteration in range(1, compiled.config.iterations + 1):
        losses = compiled.step(), interpreted.step()
        assert losses[0] == losses[1], f"iteration {iteration}: loss {losses}"
        for p, q in zip(compiled.model.parameters, interpreted.model.parameters, strict=True):
            assert p.grad.dtype == q.grad.dtype == np.dtype(dtype)
            assert np.array_equal(p.grad, q.grad), f"iteration {iteration}: gradient of {p.name}"
        same_parameters(compiled, interpreted, f"iteration {iteration}")
        if model == "lstm":
            assert all(np.array_equal(a, b) for a, b in zip(compiled.state, interpreted.state, strict=True))
    assert compiled.gradients.compiled is not None and interpreted.gradients.compiled is None
    assert len(compiled.gradients.compiled.plans) == 1          # planned once, for one shape


@pytest.mark.parametrize("model", RUNS)
def test_a_compiled_run_saved_and_resumed_equals_one_never_stopped(text, model, tmp_path):
    straight, stopped = RUNS[model](text), RUNS[model](text)
    for _ in range(straight.config.iterations):
        straight.step()
    for _ in range(3):
        stopped.step()
    path = tmp_path / "run.npz"
    if model == "translate":
        translate.save(stopped, path)
        resumed = translate.load(path)
    else:
        FILES[model].save(stopped, path)
        resumed = FILES[model].load(path, text)
    assert resumed.engine == "compiled"
    while resumed.iteration < resumed.config.iterations:
        resumed.step()
    assert resumed.history["train"] == straight.history["train"]
    same_parameters(resumed, straight, "resumed")


def test_an_unknown_engine_is_refused_naming_the_engines(text):
    run = gpt_run(text)
    run.engine = "jit"
    with pytest.raises(mg.BadValueError, match="unknown engine 'jit'.*compiled, interpreter"):
        run.step()
    assert run.iteration == 0


def test_the_commands_engine_flag_chooses_the_engine_and_both_write_the_same_numbers(tmp_path):
    """``--engine`` on the translator's command (all three share it): the same file's numbers."""
    from minigraph.translate import train
    tiny = ["--examples", "32", "--batch", "8", "--iterations", "3", "--eval-every", "3",
            "--eval-examples", "4", "--hidden", "4", "--decoder", "5", "--attention", "3"]
    arrays = {}
    for engine in ("compiled", "interpreter"):
        out = tmp_path / f"{engine}.npz"
        assert train.main(["--out", str(out), "--engine", engine] + tiny) == 0
        meta, arrays[engine] = translate.read(out)
        assert f"--engine {engine}" in meta["command"]
    assert arrays["compiled"].keys() == arrays["interpreter"].keys()
    for name, value in arrays["compiled"].items():
        assert np.array_equal(value, arrays["interpreter"][name]), name
    with pytest.raises(SystemExit):
        train.main(["--out", str(tmp_path / "x.npz"), "--engine", "jit"] + tiny)
