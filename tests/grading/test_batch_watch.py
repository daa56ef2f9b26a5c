"""The grader's own kernel and its watch: the fourth review's attacks and honest look-alikes.

One grading run of tests/fixtures/submissions-watch (two at a time), plus a notebook saved with
22 MB of outputs made at test time:

* a notebook that reconfigures its kernel (a minigraph or a numpy of its own on the import
  path, a kernelspec, an IPython startup file, an ``ipython_kernel_config.py``, then ``exit()``)
  gains nothing: each is the unsolved exercise notebook, and scores 0;
* code kept where a reading of the cells does not look (a ``.py`` file, ``run_cell``, ``timeit``,
  a pickle, an f-string's fields, a name put together at run time, a module's alias) is flagged,
  by the kernel's watch (``watch.py``) or the scan, at its cell and line;
* honest notebooks that look like machinery keep full marks with no flag.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.grading.test_batch_cli import FAST, MAKE, ROOT, grader

WATCH = ROOT / "tests" / "fixtures" / "submissions-watch"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    planted = tmp_path_factory.mktemp("planted")
    big = planted / MAKE.plant_big_outputs(planted, (ROOT / "tests" / "fixtures" / "submissions" /
                                                     "00_honest_a.ipynb").read_text())
    proc = grader(WATCH, big, *FAST, "--jobs", "2", "--json", out / "grades.json", cwd=out)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "grades.json").read_text())
    return {"proc": proc, "subs": {Path(s["path"]).name: s for s in report["submissions"]}, "big": big}


def test_the_fixtures_are_all_graded(run):
    assert set(run["subs"]) == {p.name for p in WATCH.glob("*.ipynb")} | {run["big"].name}


# each is the unsolved exercise notebook plus a cell that rewires the kernel (and ends it)
RECONFIGURES = ["00_attack_shadow_package.ipynb", "00_attack_shadow_numpy.ipynb", "00_attack_kernelspec.ipynb",
                "00_attack_startup_file.ipynb", "00_attack_kernel_config.ipynb"]


@pytest.mark.parametrize("name", RECONFIGURES)
def test_a_notebook_that_reconfigures_its_kernel_gains_nothing(run, name):
    sub = run["subs"][name]
    assert (sub["status"], sub["score"]) == ("graded", 0), sub
    assert all(e["status"] == "not_done" for e in sub["exercises"])
    assert any("writes a Python file" in flag for flag in sub["flags"]), sub["flags"]


def test_a_cell_that_rewired_the_kernel_then_ended_it_costs_only_itself(run):
    for name in RECONFIGURES[1:]:
        (note,) = run["subs"][name]["notes"]
        assert note == "cell 3 ended its kernel (exit() or quit()): the notebook ran again, in a fresh kernel, without it"


# code the scan cannot read in a cell's text: the flag that names it
HIDDEN = {
    "00_watch_py_file.ipynb": ["cell 4, line 5: writes a Python file (`helpers.py`)",
                               "cell 4, line 11: imports code from outside the installed packages"],
    "00_watch_run_cell.ipynb": ["cell 4, line 1: runs source text that is in no cell, or that the scan flags, "
                                "through a tool (`def relu(x): from minigraph import kernels"],
    "00_watch_timeit.ipynb": ["cell 4, line 2: runs source text that is in no cell, or that the scan flags, "
                              "through a tool (`"],
    "00_watch_pickle.ipynb": ["cell 4, line 5: unpickles a global that is not data (`builtins.exec`)"],
    "00_watch_fstring.ipynb": ["cell 4, line 4: builds a function from a code object",
                               "cell 4, line 4: looks into a function's code, frames or the garbage collector "
                               "(the watch saw it run) (`__code__`)"],
    "00_watch_getattr.ipynb": ["cell 4, line 4: looks into a function's code, frames or the garbage collector "
                               "(the watch saw it run) (`__code__`)"],
    "00_watch_kernels_alias.ipynb": ["cell 4, line 4: uses the engine's internals, which are not its public API"],
    "00_watch_silenced.ipynb": ["cell 4: ran with the watch's channel replaced (by this cell or an earlier one): "
                                "the watch ended the kernel when it had something to report"],
}


def test_a_notebook_that_replaced_the_watchs_channel_loses_what_the_watch_would_have_reported(run):
    sub = run["subs"]["00_watch_silenced.ipynb"]
    assert [e["id"] for e in sub["exercises"] if e["status"] != "passed"] == ["00.relu"]
    assert sub["notes"][0] == ("cell 4 ran with the grader's watch channel replaced (by it or an earlier cell): "
                               "the watch ended its kernel when it had something to report: the notebook ran "
                               "again, in a fresh kernel, without it")


@pytest.mark.parametrize("name", HIDDEN)
def test_code_hidden_from_the_scan_is_flagged_at_its_cell_and_line(run, name):
    sub = run["subs"][name]
    assert sub["status"] == "graded"
    for flag in HIDDEN[name]:
        assert any(f.startswith(flag) for f in sub["flags"]), (flag, sub["flags"])


HONEST = ["00_honest_optional_parts.ipynb", "00_honest_big_outputs.ipynb"]


@pytest.mark.parametrize("name", HONEST)
def test_an_honest_look_alike_keeps_full_marks_and_no_flag(run, name):
    sub = run["subs"][name]
    assert (sub["status"], sub["score"], sub["flags"], sub["notes"]) == ("graded", 7, [], []), sub


def test_the_size_limit_counts_code_not_outputs(run):
    assert os.path.getsize(run["big"]) > 20_000_000          # over the limit the file once had


def test_the_kernel_cannot_be_configured_by_what_the_notebook_writes(tmp_path):
    """The kernel's command line is the grader's: a kernelspec on the machine is not read."""
    from minigraph.grading.batch import runner
    argv = runner.kernel_argv({"chapter": "00", "watch_fd": 7})
    assert argv[:3] == [sys.executable, "-I", runner.kernel_module.__file__] and argv[-2:] == ["-f", "{connection_file}"]
    probe = subprocess.run([sys.executable, "-I", "-c", "import sys; print(sys.flags.safe_path, sys.flags.ignore_environment)"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert probe.stdout.split() == ["True", "1"]


# -- what the watch's reports become (no kernel) ---------------------------------------------

def flags_of(records, cells, graded=True):
    from minigraph.grading.batch import watched
    return watched.flags(records, cells, review=lambda text: ["flag"] if "kernels" in text else [], graded=graded)


CELLS = {3: "import timeit\ntimeit.timeit('relu(x)', globals=globals())", 4: "%timeit relu(x)"}


def test_source_text_a_tool_runs_is_read_like_a_cell():
    import timeit
    template = timeit.template.format(stmt="relu(x)", setup="pass", init="")
    clean = [{"event": "cell", "cell": 3}, {"event": "run-string", "text": template, "line": 2},
             {"event": "cell", "cell": 4}, {"event": "run-string", "text": "relu(x)", "line": 1}, {"event": "done"}]
    assert flags_of(clean, CELLS) == []
    made = [{"event": "cell", "cell": 3}, {"event": "run-string", "text": "relu = fast(x)", "line": 2}, {"event": "done"}]
    assert flags_of(made, CELLS) == ["cell 3, line 2: runs source text that is in no cell, or that the scan "
                                     "flags, through a tool (`relu = fast(x)`)"]
    scanned = [{"event": "cell", "cell": 4}, {"event": "run-string", "text": "kernels.relu", "line": 1}, {"event": "done"}]
    assert len(flags_of(scanned, {4: "kernels.relu"})) == 1


@pytest.mark.parametrize("cell, timer", [
    ("timeit.timeit('relu(x)', globals=globals())", lambda timeit: timeit.Timer("relu(x)")),
    ("timeit.timeit(lambda: relu(x), number=100)", lambda timeit: timeit.Timer(lambda: None)),
    ("timeit.timeit(lambda: relu(x), setup=lambda: None)", lambda timeit: timeit.Timer(lambda: None, lambda: None)),
    ("timeit.timeit('relu(x)', setup=lambda: None)", lambda timeit: timeit.Timer("relu(x)", lambda: None)),
])
def test_both_forms_of_timeits_template_are_the_tools_own_text(cell, timer):
    """``timeit`` compiles its template around a string statement (``{stmt}`` in the loop) or a
    callable (``init=", _stmt=_stmt"``, ``_stmt()``; a callable setup likewise): the text it
    runs (``Timer.src``, as CPython makes it) is the tool's but for the cell's own statement."""
    import timeit
    src = timer(timeit).src
    records = [{"event": "cell", "cell": 3}, {"event": "run-string", "text": src, "line": 2}, {"event": "done"}]
    assert flags_of(records, {3: "import timeit\n" + cell}) == []
    sneaked = src.replace("_t0 = _timer()", "_t0 = _timer(); relu = fast")        # text in no cell
    assert len(flags_of(records[:1] + [dict(records[1], text=sneaked)] + records[2:], {3: cell})) == 1


def test_a_report_made_while_grading_names_the_cell_whose_line_it_is():
    records = [{"event": "cell", "cell": 3}, {"event": "cell", "cell": "grading"},
               {"event": "introspects", "text": "__code__", "file": "/tmp/ipykernel_3/123.py", "line": 2,
                "code": "return f.__code__"}, {"event": "done"}]
    cells = {3: "x = 1", 5: "def relu(x):\n    return f.__code__"}
    assert flags_of(records, cells) == ["cell 5, line 2: looks into a function's code, frames or the garbage "
                                        "collector (the watch saw it run) (`__code__`)"]


def test_a_channel_that_ends_before_done_is_flagged_and_reports_are_capped():
    silent = [{"event": "hello"}, {"event": "cell", "cell": 3}]
    assert flags_of(silent, CELLS) == ["the kernel's watch went silent before grading ended (its channel was "
                                       "closed or replaced): what the submission did after that was not seen"]
    assert flags_of(silent, CELLS, graded=False) == []              # no grading ran: nothing to expect
    many = [{"event": "cell", "cell": 3}] + [{"event": "pickle", "text": f"os.f{i}", "line": 1} for i in range(30)]
    found = flags_of(many + [{"event": "done"}], CELLS)
    assert len(found) == 11 and found[-1] == "... and 20 more reports of the watch"


def test_the_hook_reports_only_the_submissions_own_requests(tmp_path):
    """A Python whose audit hook is the watch's: a cell-like file's compile, __code__,
    sys._getframe and a .py file written (through pathlib) are reported; the standard library's
    own (dataclasses' exec, a traceback's frames) are not."""
    status, records = watched(tmp_path, "import dataclasses, os, sys, traceback\n"
                                        "@dataclasses.dataclass\nclass Point:\n    x: int = 0\n"
                                        "traceback.format_stack()\n"
                                        "f = lambda: 1\n"
                                        "getattr(f, '__co' + 'de__')\n"
                                        "sys._getframe()\n"
                                        "exec('y = 2')\n"
                                        "import pathlib; pathlib.Path(os.path.dirname(__file__), 'made.py').write_text('')\n")
    assert status == 0
    assert [(r["event"], r.get("text"), r.get("line")) for r in records] == [
        ("hello", None, None), ("introspects", "__code__", 10), ("introspects", "sys._getframe", 11),
        ("compile", "y = 2", 12), ("exec", "<string>", 12), ("writes-code", str(tmp_path / "made.py"), 13)]


REPLACE_CHANNEL = """\
import os, sys
kept = os.dup(int(sys.argv[1]))
os.dup2(os.open(os.devnull, os.O_WRONLY), int(sys.argv[1]))       # the watch now writes nowhere
os.write(kept, b'{"event": "done"}\\n')                            # and a done of the submission's own
"""


@pytest.mark.parametrize("replace", [REPLACE_CHANNEL, "import os, sys\nos.close(int(sys.argv[1]))\n"])
def test_a_watch_whose_channel_was_replaced_ends_its_kernel_at_its_next_report(tmp_path, replace):
    status, records = watched(tmp_path, replace + "x = 1\nexec('y = 2')\nprint('not reached')\n")
    assert status == watch_module().EXIT_SILENCED
    assert [r["event"] for r in records] in (["hello", "done"], ["hello"])   # nothing of the exec


def test_a_line_of_the_watch_is_json_whatever_its_text():
    record = {"event": "compile", "text": "é \ud800 \"\n\\", "line": 3}
    assert json.loads(watch_module().line_of(record)) == record


def test_a_cell_that_replaces_json_dumps_does_not_blind_the_watch(tmp_path):
    status, records = watched(tmp_path, "import json\njson.dumps = lambda *a, **k: ''\nexec('y = 2')\n")
    assert status == 0 and [r["event"] for r in records] == ["hello", "compile", "exec"]


def watch_module():
    from minigraph.grading.batch import watch
    return watch


def watched(tmp_path, body):
    """Run ``body`` as a cell-like file in a Python whose audit hook is the watch's, on a pipe
    whose descriptor is ``sys.argv[1]``: (its exit status, the records the pipe received)."""
    script = tmp_path / "cell.py"
    script.write_text("import sys\nfrom minigraph.grading.batch import watch\n"
                      "watch.Watch(int(sys.argv[1])).install()\n" + body)
    read, write = os.pipe()
    proc = subprocess.run([sys.executable, str(script), str(write)], pass_fds=(write,), capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    os.close(write)
    with os.fdopen(read) as pipe:
        records = [json.loads(line) for line in pipe.read().splitlines()]
    assert proc.returncode in (0, watch_module().EXIT_SILENCED), proc.stderr
    return proc.returncode, records
