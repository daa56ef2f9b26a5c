"""The fault table of the three training commands (chapter 09's LSTM, chapter 10's translator,
chapter 11's GPT), each on a tiny configuration: whatever stops a run, no run is lost.

- a Ctrl-C (a real SIGINT) at each phase of a step (its start, the backward, the middle of the
  optimizer's update of the Parameters, the evaluation, the middle of a write): exit 130, and
  ``--resume`` ends with every array and the whole history equal, bit for bit, to a run that
  never stopped;
- a SIGKILL in the middle of a write (a real one, in a child process) and a full disk: the last
  good checkpoint intact, and ``--resume`` from it ends as a run that never stopped;
- damaged, edited, foreign and missing files: a ``CheckpointError`` naming the file and what
  is wrong;
- the folder of ``--out`` made before training, or the command stops before the first step;
- ``--best`` never replaces a shipped model or another run's, ``--out`` never another run's
  file, unless ``--force``.
"""

import errno
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import minigraph as mg
from minigraph import optim
from minigraph.charlm import checkpoint as lstm_files, train as lstm_train, training as lstm_training
from minigraph.charlm import evaluate as lstm_evaluate
from minigraph.gpt import checkpoint as gpt_files, evaluate as gpt_evaluate, train as gpt_train, \
    training as gpt_training
from minigraph.translate import evaluate as dates_evaluate, train as dates_train, training as dates_training
from minigraph.training import command as commands, files
from minigraph.training.step import Gradients

LM_TAIL = ["--sample-length", "0"]
COMMANDS = {
    "lstm": (lstm_train.main, lstm_files.read, lstm_training.Run, lstm_training.Training,
             ["--hidden", "6", "--batch", "3", "--steps", "4", "--iterations", "6", "--eval-every", "3",
              "--eval-chars", "40", "--eval-batch", "2", *LM_TAIL]),
    "gpt": (gpt_train.main, gpt_files.read, gpt_training.Training, gpt_training.Training,
            ["--n-layer", "1", "--n-head", "2", "--n-embd", "8", "--block-size", "8", "--batch", "3",
             "--iterations", "6", "--eval-every", "3", "--eval-chars", "40", "--warmup", "2", *LM_TAIL]),
    "dates": (dates_train.main, dates_training.read, dates_training.Training, dates_training.Training,
              ["--examples", "48", "--batch", "16", "--iterations", "6", "--eval-every", "3",
               "--eval-examples", "6", "--embedding", "3", "--hidden", "4", "--decoder", "5",
               "--attention", "3"]),
}
TEXT = mg.data.shakespeare()[:2000]


@pytest.fixture(params=sorted(COMMANDS))
def command(request, monkeypatch):
    """``(name, main, read, evaluating class, Training, settings)`` of one command, on a short text
    and a fixed commit."""
    monkeypatch.setattr("minigraph.data.shakespeare", lambda: TEXT)
    monkeypatch.setattr("minigraph.training.command.git_commit", lambda: "c1")
    return (request.param, *COMMANDS[request.param])


def refused(main, argv, capsys):
    """The one line a command refused before training prints on stderr (as argparse's refusals:
    ``prog: error: ...``, no traceback), its exit status 2 checked."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert re.match(r"python -m minigraph\.\w+\.(train|evaluate): error: ", err)
    return err.strip()


STRAIGHT = {}      # (meta, arrays) of each command's run never stopped, made once


def straight_run(command, tmp_path):
    """``(meta, arrays)`` of the command's run, never stopped."""
    name, main, read, _, _, settings = command
    if name not in STRAIGHT:
        out = str(tmp_path / "straight" / "run.npz")
        assert main(["--out", out, *settings]) == 0
        STRAIGHT[name] = read(out)
    return STRAIGHT[name]


def assert_same_run(path, straight, read):
    """The run saved at ``path`` is the straight one: every array, the iteration, the history."""
    meta, arrays = read(path)
    assert meta["iteration"] == straight[0]["iteration"]
    assert meta["history"] == straight[0]["history"]
    assert sorted(arrays) == sorted(straight[1])
    for name, value in straight[1].items():
        np.testing.assert_array_equal(arrays[name], value, err_msg=name)
        assert arrays[name].dtype == value.dtype, name


def ctrl_c():
    os.kill(os.getpid(), signal.SIGINT)


def once(calls, when, then):
    """A wrapper of ``then`` that sends Ctrl-C before its ``when``-th call (counting from 1)."""
    def wrapper(*args, **kwargs):
        calls.append(1)
        if len(calls) == when:
            ctrl_c()
        return then(*args, **kwargs)
    return wrapper


def interrupt_at(phase, monkeypatch, evaluating, training):
    """Make a Ctrl-C arrive once, in ``phase`` of the run."""
    calls = []
    if phase == "step start":
        monkeypatch.setattr(training, "step", once(calls, 2, training.step))
    elif phase == "backward":                       # the step's gradients, by either engine
        monkeypatch.setattr(Gradients, "__call__", once(calls, 2, Gradients.__call__))
    elif phase == "optimizer update":              # in the middle of the list of Parameters
        monkeypatch.setattr(optim.Adam, "_step", once(calls, 7, optim.Adam._step))   # (Adam's and AdamW's)
    elif phase == "evaluation":
        monkeypatch.setattr(evaluating, "evaluate", once(calls, 1, evaluating.evaluate))
    elif phase == "write":
        monkeypatch.setattr(np, "savez", once(calls, 1, np.savez))
    return calls


@pytest.mark.parametrize("phase", ["step start", "backward", "optimizer update", "evaluation", "write"])
def test_ctrl_c_at_any_phase_then_resume_is_the_run_never_stopped(command, phase, tmp_path, monkeypatch,
                                                                  capsys):
    name, main, read, evaluating, training, settings = command
    straight = straight_run(command, tmp_path)
    out = str(tmp_path / "run.npz")
    calls = interrupt_at(phase, monkeypatch, evaluating, training)
    assert main(["--out", out, *settings]) == 130
    assert calls, "the interrupt never came"
    stopped = read(out)[0]["iteration"]
    assert 0 < stopped < 6 and "stopped at iteration" in capsys.readouterr().err
    monkeypatch.undo()
    monkeypatch.setattr("minigraph.data.shakespeare", lambda: TEXT)
    assert main(["--out", out, "--resume", *LM_TAIL[:2 if name != "dates" else 0]]) == 0
    assert_same_run(out, straight, read)


KILLER = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    import minigraph as mg
    from minigraph.{module} import train
    text = open(sys.argv[1]).read()
    mg.data.shakespeare = lambda: text
    real, calls = np.savez, []

    def savez(file, **arrays):          # the second checkpoint: half written, then SIGKILL
        calls.append(1)
        if len(calls) == 2:
            file.write(b"PK\\x03\\x04" + bytes(1000))
            file.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        return real(file, **arrays)

    np.savez = savez
    train.main(sys.argv[2:])
""")


def test_sigkill_in_the_middle_of_a_write_keeps_the_last_checkpoint(command, tmp_path, monkeypatch, capsys):
    name, main, read, _, _, settings = command
    straight = straight_run(command, tmp_path)
    (tmp_path / "text.txt").write_text(TEXT)
    out = str(tmp_path / "run.npz")
    module = {"lstm": "charlm", "gpt": "gpt", "dates": "translate"}[name]
    child = subprocess.run([sys.executable, "-c", KILLER.format(module=module), str(tmp_path / "text.txt"),
                            "--out", out, *settings], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert read(out)[0]["iteration"] == 3              # the first checkpoint, whole
    (leftover,) = [f for f in os.listdir(tmp_path) if f.endswith(".partial")]   # the killed write's
    capsys.readouterr()
    assert main(["--out", out, "--resume", *LM_TAIL[:2 if name != "dates" else 0]]) == 0
    assert f"removed {tmp_path / leftover}: the temporary file of a write of {out}" in capsys.readouterr().out
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".partial")]
    assert_same_run(out, straight, read)


def full_disk_at(write_number, monkeypatch):
    """``np.savez`` writes some bytes, then fails as a full disk does, at its ``write_number``-th call."""
    real, calls = np.savez, []

    def savez(file, **arrays):
        calls.append(1)
        if len(calls) == write_number:
            file.write(b"PK\x03\x04" + bytes(100))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(file, **arrays)

    monkeypatch.setattr(np, "savez", savez)


def test_a_full_disk_is_reported_and_the_last_checkpoint_stays_whole(command, tmp_path, monkeypatch, capsys):
    name, main, read, _, _, settings = command
    straight = straight_run(command, tmp_path)
    out = str(tmp_path / "run.npz")
    full_disk_at(2, monkeypatch)
    assert main(["--out", out, *settings]) == 1
    err = capsys.readouterr().err
    assert f"cannot write {out}: the disk is full. The previous {out} is intact" in err and "--resume" in err
    assert "Traceback" not in err and re.search(r"\n.*train: error: cannot write [^\n]*\n$", err)   # one line
    assert read(out)[0]["iteration"] == 3 and "run.npz" in os.listdir(tmp_path)
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".partial")]     # no half file left
    monkeypatch.undo()
    monkeypatch.setattr("minigraph.data.shakespeare", lambda: TEXT)
    assert main(["--out", out, "--resume", *LM_TAIL[:2 if name != "dates" else 0]]) == 0
    assert_same_run(out, straight, read)


def test_a_full_disk_at_the_first_checkpoint_says_nothing_was_written(command, tmp_path, monkeypatch, capsys):
    _, main, _, _, _, settings = command
    out = str(tmp_path / "run.npz")
    full_disk_at(1, monkeypatch)
    assert main(["--out", out, *settings]) == 1
    err = capsys.readouterr().err
    assert f"cannot write {out}: the disk is full. Nothing was written to {out}" in err and "Traceback" not in err
    assert os.listdir(tmp_path) == []


def saved_run(command, tmp_path):
    """The path of a finished run of the command."""
    _, main, _, _, _, settings = command
    out = str(tmp_path / "run.npz")
    assert main(["--out", out, *settings]) == 0
    return out


def rewrite(path, change):
    """Write the checkpoint at ``path`` again with ``change(meta, arrays)`` applied, its checksum
    left as it was (what an edit by hand does)."""
    with np.load(path) as saved:
        arrays = {key: saved[key] for key in saved.files}
    meta = json.loads(str(arrays.pop("meta.json")))
    change(meta, arrays)
    np.savez(path, **arrays, **{"meta.json": np.array(json.dumps(meta))})


def halve_iteration(meta, arrays):
    meta["iteration"] //= 2


def lr_times_ten(meta, arrays):
    meta["config"]["lr"] *= 10


def nudge_a_parameter(meta, arrays):
    name = next(key for key in sorted(arrays) if key.startswith("param/"))
    arrays[name] = arrays[name] + np.asarray(1e-7, arrays[name].dtype)


def drop_the_checksum(meta, arrays):
    del meta["checksum"]


@pytest.mark.parametrize("change", [halve_iteration, lr_times_ten, nudge_a_parameter, drop_the_checksum])
def test_an_edited_checkpoint_is_refused(command, tmp_path, change, capsys):
    _, main, _, _, _, _ = command
    out = saved_run(command, tmp_path)
    rewrite(out, change)
    line = refused(main, ["--out", out, "--resume"], capsys)
    assert re.search(f"{out} was changed after it was written: its checksum", line), line


def truncate(path):
    data = open(path, "rb").read()
    open(path, "wb").write(data[:len(data) // 2])


def empty(path):
    open(path, "wb").close()


def text_file(path):
    open(path, "w").write("iteration 2000, lr 0.001\n")


def flip_bytes(path):
    data = bytearray(open(path, "rb").read())
    middle = len(data) // 3
    data[middle: middle + 16] = bytes(b ^ 0xFF for b in data[middle: middle + 16])
    open(path, "wb").write(bytes(data))


@pytest.mark.parametrize("damage, message", [
    (truncate, r"is damaged \(truncated or corrupt"), (empty, r"is empty \(0 bytes\)"),
    (text_file, r"is not a checkpoint: not an \.npz file"),
    (flip_bytes, "(is damaged|was changed after it was written)"),
    (os.remove, "does not exist")])
def test_a_damaged_or_missing_checkpoint_is_refused_naming_the_file(command, tmp_path, damage, message, capsys):
    _, main, _, _, _, _ = command
    out = saved_run(command, tmp_path)
    damage(out)
    line = refused(main, ["--out", out, "--resume"], capsys)
    assert re.search(f"{re.escape(out)} {message}", line), line


def test_another_commands_checkpoint_is_refused(command, tmp_path, monkeypatch, capsys):
    name, main, _, _, _, _ = command
    other = "gpt" if name != "gpt" else "lstm"
    out = str(tmp_path / "other.npz")
    assert COMMANDS[other][0](["--out", out, *COMMANDS[other][4]]) == 0
    kind = {"lstm": "character-model", "gpt": "GPT", "dates": "translator"}[name]
    line = refused(main, ["--out", out, "--resume"], capsys)
    assert re.search(f"{out} is not a {kind} checkpoint", line), line


def test_the_folder_of_out_is_made_or_the_command_stops_before_training(command, tmp_path, monkeypatch, capsys):
    _, main, read, _, training, settings = command
    out = tmp_path / "build" / "deep" / "run.npz"
    assert main(["--out", str(out), *settings]) == 0 and read(out)[0]["iteration"] == 6
    (tmp_path / "a_file").write_text("")
    monkeypatch.setattr(training, "step", lambda run: pytest.fail("trained before the folder was checked"))
    line = refused(main, ["--out", str(tmp_path / "a_file" / "run.npz"), *settings], capsys)
    assert re.search("cannot make the folder .*a_file.* Nothing was trained", line), line


def test_out_is_never_another_runs_file_unless_forced(command, tmp_path, capsys):
    _, main, read, _, _, settings = command
    out = saved_run(command, tmp_path)
    before = open(out, "rb").read()
    line = refused(main, ["--out", out, *settings], capsys)
    assert re.search(f"{out} exists already: .*--resume.*--force", line), line
    assert open(out, "rb").read() == before
    assert main(["--out", out, "--force", *settings]) == 0 and read(out)[0]["iteration"] == 6


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_best_never_replaces_a_shipped_or_another_runs_model_unless_forced(command, tmp_path, monkeypatch, capsys):
    _, main, read, _, _, settings = command
    shipped = tmp_path / "checkpoints"
    shipped.mkdir()
    monkeypatch.setattr(commands, "SHIPPED", str(shipped))
    best = shipped / "model.npz"
    assert main(["--out", str(tmp_path / "first.npz"), "--best", str(tmp_path / "best.npz"), *settings]) == 0
    os.replace(tmp_path / "best.npz", best)
    kept = sha(best)
    line = refused(main, ["--out", str(tmp_path / "a.npz"), "--best", str(best), *settings], capsys)
    assert re.search("is a model shipped with minigraph.*--force", line), line
    assert sha(best) == kept and not os.path.exists(tmp_path / "a.npz")
    other = tmp_path / "other_best.npz"
    os.replace(best, other)
    line = refused(main, ["--out", str(tmp_path / "b.npz"), "--best", str(other), *settings], capsys)
    assert re.search("holds another run's model .*--force", line), line
    assert sha(other) == kept
    assert main(["--out", str(tmp_path / "c.npz"), "--best", str(other), "--force", *settings]) == 0
    assert sha(other) != kept and read(other)[0]["resumable"] is False


def test_the_real_shipped_models_are_refused_as_best(command, tmp_path, capsys):
    name, main, _, _, _, settings = command
    shipped = os.path.join(commands.SHIPPED, {"lstm": "shakespeare_lstm.npz", "gpt": "shakespeare_gpt.npz",
                                             "dates": "dates_attention.npz"}[name])
    kept = sha(shipped)
    line = refused(main, ["--out", str(tmp_path / "run.npz"), "--best", shipped, *settings], capsys)
    assert re.search("shipped with minigraph", line), line
    assert sha(shipped) == kept


def test_a_resumed_run_keeps_writing_its_own_best(command, tmp_path, monkeypatch):
    name, main, read, _, training, settings = command
    out, best = str(tmp_path / "run.npz"), str(tmp_path / "best.npz")
    interrupt_at("step start", monkeypatch, None, training)
    assert main(["--out", out, "--best", best, *settings]) == 130
    monkeypatch.undo()
    monkeypatch.setattr("minigraph.data.shakespeare", lambda: TEXT)
    assert main(["--out", out, "--best", best, "--resume", *LM_TAIL[:2 if name != "dates" else 0]]) == 0
    assert read(best)[0]["run"] == read(out)[0]["run"] is not None


def test_the_log_has_a_line_per_update_and_the_file_the_wall_clock_and_machine(command, tmp_path, capsys):
    name, main, read, _, _, settings = command
    out = str(tmp_path / "run.npz")
    assert main(["--out", out, *settings]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and sum(line.startswith("train ") for line in err.splitlines()) >= 2
    meta = read(out)[0]
    assert meta["wall_clock"] > 0 and meta["machine"] == {"cores": os.cpu_count(), "blas_threads": 1}
    assert "trained for 0:00:0" in files.provenance(out, meta)


def test_evaluate_shows_the_wall_clock_and_the_machine(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("minigraph.data.shakespeare", lambda: TEXT)
    out = str(tmp_path / "run.npz")
    assert lstm_train.main(["--out", out, *COMMANDS["lstm"][4]]) == 0
    meta = lstm_files.read(out)[0]
    assert f"{os.cpu_count()} cores, 1 BLAS thread(s)" in lstm_evaluate.summary(out, 1.0, meta)
    shipped = os.path.join(commands.SHIPPED, "shakespeare_lstm.npz")
    assert "wall-clock time not recorded" in lstm_evaluate.summary(shipped, 1.0, lstm_files.read(shipped)[0])


BAD_FLAGS = {   # flag -> (the commands that have it, what the refusal says)
    ("--eval-every", "0"): ("lstm gpt dates", "the setting eval_every must be a whole number >= 1, got 0"),
    ("--seed", "-1"): ("lstm gpt dates", "the setting seed must be a whole number >= 0, got -1"),
    ("--dtype", "foo"): ("lstm gpt dates", "the setting dtype must name a float dtype .*got 'foo'"),
    ("--batch", "0"): ("lstm gpt dates", "the setting batch must be a whole number >= 1, got 0"),
    ("--steps", "0"): ("lstm", "the setting steps must be a whole number >= 1, got 0"),
    ("--eval-batch", "0"): ("lstm", "the setting eval_batch must be a whole number >= 1, got 0"),
    ("--block-size", "100000"): ("gpt", r"the setting block_size \(100000\) makes attention probabilities "
                                        r"of .* GiB .*more than this machine's memory"),
    ("--block-size", "5000"): ("gpt", r"the setting block_size \(5000\) asks for windows of 5001 "
                                      r"characters, and the training text has \d+"),
    ("--iterations", "-5"): ("lstm gpt dates", "the setting iterations must be a whole number >= 1, got -5"),
    ("--warmup", "-3"): ("gpt", "the setting warmup must be a whole number >= 0, got -3"),
    ("--lr-min", "0.5"): ("lstm gpt dates", r"the setting lr_min \(0\.5\) is above lr"),
    ("--lr", "-0.1"): ("lstm gpt dates", r"the setting lr must be a number > 0, got -0\.1"),
    ("--clip", "nan"): ("lstm gpt dates", "the setting clip must be a number > 0, got nan"),
}


@pytest.mark.parametrize("flag", sorted(BAD_FLAGS))
def test_a_setting_no_run_can_use_is_refused_in_one_line(command, tmp_path, flag, capsys):
    name, main, _, _, _, settings = command
    which, message = BAD_FLAGS[flag]
    if name not in which.split():
        pytest.skip(f"{name} has no {flag[0]}")
    out = tmp_path / "run.npz"
    line = refused(main, ["--out", str(out), *settings, *flag], capsys)
    assert re.search(message, line), line
    assert not out.exists()


def test_threads_below_one_is_refused_by_the_command_line(command, tmp_path, capsys):
    _, main, _, _, _, settings = command
    with pytest.raises(SystemExit) as stop:
        main(["--out", str(tmp_path / "run.npz"), *settings, "--threads", "-2"])
    assert stop.value.code == 2
    assert "argument --threads: must be a whole number >= 1, got '-2'" in capsys.readouterr().err


def test_a_file_that_says_version_1_is_read_only_if_it_is_a_shipped_model(tmp_path):
    """Version 1 files have no checksum: the only ones are the shipped models, read by their
    known checksums; a run edited to say version 1 (once a way round the checksum) is refused,
    and so is a shipped model edited after it was shipped."""
    shipped = os.path.join(commands.SHIPPED, "shakespeare_gpt.npz")
    meta, arrays = gpt_files.read(shipped)
    assert meta["format"] == "minigraph.gpt/1"
    edited = str(tmp_path / "edited.npz")
    arrays = dict(arrays)
    arrays[sorted(arrays)[0]] = arrays[sorted(arrays)[0]] * 2
    np.savez(edited, **arrays, **{"meta.json": np.array(json.dumps(meta))})
    with pytest.raises(mg.CheckpointError, match="says it is of format 'minigraph.gpt/1', written before "
                                                 "checkpoints had checksums, but .* not those of any of them"):
        gpt_files.read(edited)


def test_a_run_edited_to_say_version_1_does_not_skip_its_checksum(command, tmp_path, capsys):
    name, main, _, _, _, _ = command
    out = saved_run(command, tmp_path)
    family = {"lstm": "minigraph.charlm", "gpt": "minigraph.gpt", "dates": "minigraph.translate"}[name]

    def to_version_1(meta, arrays):
        meta["format"] = f"{family}/1"
        meta["iteration"] = 1

    rewrite(out, to_version_1)
    line = refused(main, ["--out", out, "--resume"], capsys)
    assert f"says it is of format '{family}/1'" in line, line


@pytest.mark.parametrize("evaluate", [lstm_evaluate, gpt_evaluate, dates_evaluate], ids=lambda m: m.__name__)
def test_the_evaluate_commands_refuse_in_one_line(evaluate, tmp_path, capsys):
    missing = str(tmp_path / "missing.npz")
    line = refused(evaluate.main, [missing], capsys)
    assert f"{missing} does not exist: give the file a training command wrote" in line
    (tmp_path / "notes.txt").write_text("iteration 2000\n")
    line = refused(evaluate.main, [str(tmp_path / "notes.txt")], capsys)
    assert "is not a checkpoint: not an .npz file" in line
    with pytest.raises(SystemExit) as stop:
        evaluate.main([missing, "--threads", "0"])
    assert stop.value.code == 2 and "must be a whole number >= 1, got '0'" in capsys.readouterr().err
