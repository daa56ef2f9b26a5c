"""The batch grader: real kernels in real sandboxes, faulty and hostile submissions, reports.

One grading run is shared by most tests: every fixture of tests/fixtures/submissions (faulty
notebooks, attacks on the grader, honest notebooks), the odd files ``plant_bad_files`` makes
(links, a FIFO, a folder called .ipynb, names with a newline or bytes that are not UTF-8), the
solution and the exercise notebook -- two at a time, with a fake secret in the grader's
environment and a listener on the host's loopback. Short time limits keep it to a few seconds
per notebook (on an idle machine).
"""

import hashlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from minigraph.grading.batch import cgroup, workspace
from minigraph.grading.batch.grader import Settings, grade_all
from minigraph.grading.batch.sandbox import unprivileged_reason

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "submissions"
SOLUTION = ROOT / "solutions" / "00_warmup.ipynb"
EXERCISE = ROOT / "exercises" / "00_warmup_exercises.ipynb"
PACKAGE = ROOT / "minigraph"
# a cell's limit and a case's are CPU time (a busy machine slows them, it does not cut them off);
# 10 s leaves the import of minigraph and numpy room on a slow machine
FAST = ["--cell-timeout", "10", "--timeout", "90"]
SECRET = "hunter2-do-not-leak-7f3a"


def load_fixture_script():
    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKE = load_fixture_script()


def grader(*args, cwd=None, env=None):
    """Run ``python -m minigraph.grading ARGS`` as CI would; minigraph importable from ROOT."""
    env = dict(env or os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "minigraph.grading", *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def snapshot(folder):
    """Every file below ``folder`` -> sha256 of its bytes."""
    return {p.relative_to(folder): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def survivors():
    """Processes whose command line carries the attacks' marker."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and MAKE.MARKER.encode() in (entry / "cmdline").read_bytes():
                found.append(entry.name)
        except OSError:
            pass
    return found


def outside_files():
    """What the attacks try to change outside their own folder (hashes, or existence)."""
    import sysconfig
    site = Path(sysconfig.get_paths()["purelib"])
    return {"fixtures": snapshot(FIXTURES), "package": snapshot(PACKAGE),
            "solution": SOLUTION.read_bytes(), "exercise": EXERCISE.read_bytes(),
            "planted": [p.name for p in [site / "sitecustomize.py", site / "evil.pth"] if p.exists()],
            "evil": [p for p in [ROOT / "evil.txt", Path("/etc/evil"), Path("/usr/evil"),
                                 Path(sys.prefix) / "evil.pth"] if p.exists()],
            # the files IPython runs at start-up: its own README, which any kernel started with
            # this HOME (another xdist worker's) writes the first time, is none of them
            "startup": sorted(str(p) for pattern in ("*.py", "*.ipy")
                              for p in Path.home().glob(f".ipython/profile_default/startup/{pattern}"))}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Grade everything at once (two at a time), attacks and honest notebooks together."""
    out = tmp_path_factory.mktemp("reports")
    planted = tmp_path_factory.mktemp("planted")
    honest_names = MAKE.plant_bad_files(planted, (FIXTURES / "00_honest_a.ipynb").read_text())
    listener = socket.socket()
    listener.bind(("127.0.0.1", MAKE.LISTEN_PORT))
    listener.listen(8)
    listener.setblocking(False)
    before = outside_files()
    scratch = tmp_path_factory.mktemp("grader-tmp")      # the grader's own temporary folders
    reports = {"json": out / "grades.json", "junit": out / "grades.xml", "csv": out / "grades.csv"}
    try:
        proc = grader(FIXTURES, planted, SOLUTION, EXERCISE, *FAST, "--jobs", "2",
                      *(arg for kind, path in reports.items() for arg in (f"--{kind}", path)),
                      cwd=out, env=dict(os.environ, TMPDIR=str(scratch), **{MAKE.SECRET_VARIABLE: SECRET}))
        alive = survivors()
        written = {kind: path.read_bytes() for kind, path in reports.items() if path.exists()}
        time.sleep(3)                              # a watcher would rewrite the reports now
        try:
            listener.accept()
            connected = True
        except BlockingIOError:
            connected = False
    finally:
        listener.close()
    return {"proc": proc, "json": json.loads(written["json"]) if "json" in written else None,
            "written": written, "reports": reports, "alive": alive, "alive_later": survivors(),
            "before": before, "after": outside_files(), "connected": connected,
            "planted": planted, "honest_names": honest_names, "left": sorted(os.listdir(scratch)),
            "mounts": [line for line in Path("/proc/mounts").read_text().splitlines() if str(scratch) in line]}


def submission(run, name):
    return by_path(run, FIXTURES / name)


def by_path(run, path):
    (found,) = [s for s in run["json"]["submissions"] if s["path"] == str(path)]
    return found


def exercises(sub):
    """exercise id -> (score, status, message)."""
    return {e["id"]: (e["score"], e["status"], e["message"]) for e in sub["exercises"]}


# -- the fixtures are what the script makes, and grading leaves every file alone ------------

def test_fixtures_are_up_to_date_with_their_script():
    for name, text in MAKE.build().items():
        assert MAKE.path_of(name).read_text(encoding="utf-8") == text, (
            f"{name} is stale: run python tests/fixtures/submissions/make_fixtures.py")


def test_grading_completes_with_status_0_and_a_complete_report(run):
    assert run["proc"].returncode == 0, run["proc"].stderr
    assert run["json"]["complete"] is True and run["json"]["settings"]["sandbox"] is True
    assert len(run["json"]["submissions"]) == 58
    summary = run["proc"].stdout.rstrip().splitlines()[-1]
    assert summary == "graded 58 notebooks (13 could not be run); 12 flagged for review" + (
        "" if cgroup.available() else "; limits per process only (no control group: run as root "
                                      "on Linux with cgroup v1 for limits on a submission's processes together)")
    bar = [line for line in run["proc"].stderr.splitlines() if line.startswith("grading ")]
    assert len(bar) == 59 and bar[0].endswith("| 0/58")          # the progress bar: a line per result
    assert all(" elapsed  " in line and line.endswith(" left") for line in bar[1:-1])
    assert bar[-1].startswith("grading 100% |") and "| 58/58  flagged 12  not run 13  " in bar[-1]
    assert bar[-1].endswith(" in all")


def test_no_file_outside_the_submissions_own_folders_changes(run):
    for key in run["before"]:
        assert run["after"][key] == run["before"][key], key
    assert run["after"]["evil"] == [] and run["after"]["planted"] == []


def test_nothing_a_submission_started_outlives_the_run_or_rewrites_the_reports(run):
    assert run["alive"] == [] and run["alive_later"] == []
    for kind, path in run["reports"].items():
        assert path.read_bytes() == run["written"][kind]


def test_no_secret_file_or_environment_variable_reaches_the_reports(run):
    texts = [run["proc"].stdout, run["proc"].stderr] + [b.decode("utf-8", "replace") for b in run["written"].values()]
    for text in texts:
        assert SECRET not in text
        assert "BEGIN SOLUTION" not in text and "root:" not in text      # solutions/, /etc/shadow
    sub = submission(run, "00_attack_reads_secrets.ipynb")
    assert sub["score"] == 6 and "no secret" in sub["notes"][0]          # it ran, and found nothing
    assert "No such file or directory" in sub["notes"][0] and "Permission denied" in sub["notes"][0]


def test_the_network_cannot_be_reached_and_the_limits_hold(run):
    assert not run["connected"]
    sub = submission(run, "00_attack_resources.ipynb")
    assert sub["score"] == 7
    (note,) = sub["notes"]
    got = dict(item.split(": ") for item in note.split("RuntimeError: ")[1].split(", "))
    assert got["memory"] == "refused" and got["127.0.0.1"] == got["1.1.1.1"] == "refused"
    assert got["file_mb"] == "64" and 100 < int(got["processes"]) < 256


HONEST = ["00_honest_a.ipynb", "00_honest_b.ipynb"]


def test_honest_notebooks_keep_full_marks(run):
    honest = [submission(run, name) for name in HONEST] + [by_path(run, SOLUTION)]
    honest += [by_path(run, run["planted"] / os.fsdecode(name).replace("\n", "\\n")
                       .replace("\udce9", "\\xe9")) for name in run["honest_names"]]
    for sub in honest:
        assert (sub["status"], sub["score"], sub["notes"], sub["flags"]) == ("graded", 7, [], []), sub["path"]


def test_a_full_disk_leaves_later_notebooks_intact_and_nothing_behind(run):
    sub = submission(run, "00_attack_fills_disk.ipynb")
    assert (sub["score"], sub["flags"]) == (7, [])                      # graded on what it ran
    if os.geteuid() == 0:
        assert sub["notes"] == ["the notebook filled its 256 MB of disk space; later writes failed"]
    assert run["left"] == [] and run["mounts"] == []


# honest oddities -> the exercise whose check() score they must get (the others: full marks)
ODDITIES = {"02_honest_recursive.ipynb": "02.topo_sort", "00_honest_slow.ipynb": "00.sigmoid",
            "00_honest_crlf.ipynb": None, "00_honest_cr.ipynb": None, "04_honest_crlf.ipynb": None,
            "00_honest_cell_ids_v4_2.ipynb": None, "00_honest_multiline_imports.ipynb": None,
            "00_honest_magics.ipynb": None, "04_honest_tools.ipynb": None, "00_honest_bom.ipynb": None, "00_honest_public_check.ipynb": None}


def check_score(name, exercise_id, seed):
    """What ``check()`` gives the answer that fixture ``name`` defines, run in this process on the
    cases the grader ran (the public ones, and the hidden ones it drew from ``seed``)."""
    import nbformat
    from minigraph.grading.toolkit import registry
    from minigraph.grading.toolkit.exercise import grade, run_cases, with_hidden
    (exercise,) = [e for e in registry.exercises(exercise_id[:2]) if e.id == exercise_id]
    namespace = {}
    for cell in nbformat.read(FIXTURES / name, as_version=4).cells:
        if cell.cell_type == "code" and ("import " in cell.source or f"def {exercise.name}(" in cell.source):
            exec(cell.source, namespace)
    cases = with_hidden(exercise, seed)
    return grade(exercise, run_cases(exercise, namespace[exercise.name], cases=cases), cases).score


@pytest.mark.parametrize("name", ODDITIES)
def test_an_honest_oddity_gets_its_check_score_and_no_flag(run, name):
    sub = submission(run, name)
    assert (sub["status"], sub["flags"], sub["notes"]) == ("graded", [], [])
    for exercise in sub["exercises"]:
        expected = (check_score(name, exercise["id"], sub["seed"]) if exercise["id"] == ODDITIES[name]
                    else exercise["points"])
        assert exercise["score"] == expected, exercise["id"]
    if ODDITIES[name]:
        assert sub["score"] < sub["max_score"]                           # the oddity costs what check() says


# name -> (score, status, text in the message or the first exercise message, flagged?)
ATTACKS = {
    "00_attack_kill_parent.ipynb": (0, "error", "the run ended early (exit status 137) while running cell 3", False),
    "00_attack_outlive.ipynb": (7, "graded", "", False),
    # "ch00.py" in a string is a name; the watch sees the .py files it tries to write
    "00_attack_writes_everywhere.ipynb": (7, "graded", "", True),
    "00_attack_rebind.ipynb": (4, "graded", "expected 0, got -2", False),
    "00_attack_reference_open.ipynb": (6, "graded", "FLAGGED, no points", True),
    # the reference answers are not in the sandbox: reaching for them gets nothing
    "00_attack_reference_hidden.ipynb": (6, "graded", "no `relu` defined in the notebook", True),
    "00_attack_reference_table.ipynb": (4, "graded", "returned None", False),
    "00_attack_reference_getattr.ipynb": (4, "graded", "is a reference answer, which is not part of "
                                          "this installation", False),
    # the kernel runs the submission's code: its results file is whatever that code wrote
    "00_attack_results_deep.ipynb": (0, "error", "results.json is nested too deeply", False),
    "00_attack_results_huge.ipynb": (0, "error", "results.json is too large (67.1 MB", False),
    "00_attack_results_fifo.ipynb": (0, "error", "results.json is not a regular file (a FIFO)", False),
    "00_attack_many_errors.ipynb": (7, "graded", "", False),
    "00_attack_unprintable.ipynb": (0, "graded", "\\x1b[1A\\x1b[2K\\x1b[G 00.relu", False),
    "00_attack_fills_disk.ipynb": (7, "graded", "", False),
    "00_attack_gradescope_score.ipynb": (0, "graded", "not done yet", False),
}


# a cell that ends its kernel or will not stop costs only itself: the run goes on without it
# (quit(), os._exit and a swallowed interrupt: test_batch_attack_slow.py, `make attack`)
KERNEL_ENDERS = {"00_honest_exit.ipynb": "cell 8 ended its kernel (exit() or quit())"}


@pytest.mark.parametrize("name", KERNEL_ENDERS)
def test_a_cell_that_ends_or_hangs_its_kernel_costs_only_itself(run, name):
    sub = submission(run, name)
    assert (sub["status"], sub["score"], sub["flags"]) == ("graded", 7, []), sub
    (note,) = sub["notes"]
    assert note.startswith(KERNEL_ENDERS[name]) and note.endswith("ran again, in a fresh kernel, without it")


# what switches off a rule the kernel checks: flagged, at the learner's cell and line (the
# score is whatever the answers earn: a flag changes none)
BYPASSES = {
    "00_bypass_code_object.ipynb": "cell 4, line 5: builds a function from a code object",
    "00_bypass_engine_copies.ipynb": "cell 4, line 4: calls another copy, in the engine, of the maths",
    "00_bypass_getsource.ipynb": "cell 4, line 4: compiles or runs source text",
    "00_bypass_input_transformer.ipynb": "cell 3, line 6: installs an IPython input transformer",
    "00_bypass_introspection.ipynb": "cell 3, line 2: looks into frames, the garbage collector",
    "00_bypass_errstate.ipynb": "cell 7, line 2: silences numpy's floating-point warnings in a cell that defines an answer",
    "00_bypass_view_loop.ipynb": "cell 4, line 2: unwraps the grader's array inside an answer",
}


@pytest.mark.parametrize("name", BYPASSES)
def test_a_bypass_of_a_kernel_side_rule_is_flagged_at_its_cell_and_line(run, name):
    sub = submission(run, name)
    assert sub["status"] == "graded" and any(f.startswith(BYPASSES[name]) for f in sub["flags"]), sub["flags"]


@pytest.mark.parametrize("name", ATTACKS)
def test_an_attack_gains_nothing(run, name):
    score, status, text, flagged = ATTACKS[name]
    sub = submission(run, name)
    assert (sub["score"], sub["status"], bool(sub["flags"])) == (score, status, flagged)
    assert text in sub["message"] + " " + sub["exercises"][0]["message"]


def test_no_escape_sequence_or_lone_surrogate_from_a_kernel_reaches_a_report(run):
    texts = [run["proc"].stdout] + [b.decode("utf-8") for b in run["written"].values()]
    assert all("\x1b" not in text for text in texts)
    forged = "\\x1b[1A\\x1b[2K\\x1b[G 00.relu 1 of 1 all 4 cases passed \\ud800"      # escaped, intact
    sub = submission(run, "00_attack_unprintable.ipynb")
    assert sub["exercises"][0]["cases"][0]["message"] == forged and forged in run["proc"].stdout


def test_a_fake_collector_is_never_imported_and_is_flagged_for_review(run):
    # the grading code was imported before the notebook's first cell: an import system of the
    # notebook's own that serves another collector serves it to no one (the notebook is unsolved)
    sub = submission(run, "00_attack_disguised_collector.ipynb")
    assert sub["score"] == 0 and all(e["status"] == "not_done" for e in sub["exercises"])
    assert sub["flags"] == ["cell 3: uses Python's import machinery ('importlib'), which no exercise needs"]


def test_answers_that_reach_for_the_reference_score_nothing_and_the_others_keep_theirs(run):
    for name in ("00_attack_reference_table.ipynb", "00_attack_reference_getattr.ipynb"):
        graded = exercises(submission(run, name))
        assert graded["00.relu"][0] == graded["00.sigmoid"][0] == 0, name
        assert graded["00.broadcast_shape"][:2] == (1, "passed") and graded["00.sigmoid_vjp"][:2] == (3, "passed")


def test_rebind_never_swaps_in_the_reference(run):
    graded = exercises(submission(run, "00_attack_rebind.ipynb"))
    assert graded["00.relu"][:2] == (0, "failed") and graded["00.sigmoid"][:2] == (0, "failed")


def test_kernel_messages_are_capped_in_number_and_size(run):
    notes = submission(run, "00_attack_many_errors.ipynb")["notes"]
    assert len(notes) == 21 and notes[-1] == "... and 40 more notes (not kept)"
    assert all(len(note) <= 200 for note in notes)


@pytest.mark.parametrize("name, message", [
    ("00_folder.ipynb", "not a notebook: the file is not a regular file (a folder)"),
    ("00_broken_link.ipynb", "not a notebook: the file is not a regular file (a symbolic link)"),
    ("00_dev_zero.ipynb", "not a notebook: the file is not a regular file (a symbolic link)"),
    ("00_shadow.ipynb", "not a notebook: the file is not a regular file (a symbolic link)"),
    ("00_fifo.ipynb", "not a notebook: the file is not a regular file (a FIFO)"),
    ("00_too_large.ipynb", "not a notebook: the file is too large (70.0 MB; at most 64 MB)"),
    ("00_deep.ipynb", "not a valid notebook: its JSON is nested too deeply"),
])
def test_a_bad_file_is_that_submissions_error(run, name, message):
    sub = by_path(run, run["planted"] / name)
    assert (sub["status"], sub["score"], sub["message"]) == ("error", 0, message)


def test_names_are_escaped_in_the_text_report_and_safe_in_junit(run):
    stdout = run["proc"].stdout
    assert "00_forged\\ngraded 0 notebooks: 7 of 7 points.ipynb (chapter 00): 7 of 7 points" in stdout
    assert "00_caf\\xe9_latin1.ipynb (chapter 00): 7 of 7 points" in stdout
    assert not any(line.startswith("graded 0 notebooks") for line in stdout.splitlines())
    names = [s.get("name") for s in ET.parse(run["reports"]["junit"]).getroot().iter("testsuite")]
    assert any(n.endswith("00_caf\\xe9_latin1.ipynb") for n in names)


def test_the_solution_scores_full_marks_and_the_exercise_zero(run):
    solution, exercise = by_path(run, SOLUTION), by_path(run, EXERCISE)
    assert (solution["status"], solution["score"], solution["max_score"]) == ("graded", 7, 7)
    assert all(e["status"] == "passed" for e in solution["exercises"]) and solution["notes"] == []
    assert (exercise["score"], exercise["max_score"]) == (0, 7)
    assert all(e["status"] == "not_done" for e in exercise["exercises"])
    assert f"{SOLUTION} (chapter 00): 7 of 7 points" in run["proc"].stdout
    assert f"{EXERCISE} (chapter 00): 0 of 7 points" in run["proc"].stdout   # NN_ names the chapter


def test_every_chapters_solution_scores_full_marks_and_is_not_flagged(tmp_path):
    # the solutions import try_recipe / softplus as the exercises do, and 04's and 06's answers
    # subclass mg.optim.Optimizer: an honest notebook must lose nothing to either
    proc = grader(ROOT / "solutions", "--jobs", "2", "--json", tmp_path / "grades.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    subs = json.loads((tmp_path / "grades.json").read_text())["submissions"]
    assert len(subs) == len(list((ROOT / "solutions").glob("*.ipynb")))
    for sub in subs:
        assert (sub["score"], sub["flags"]) == (sub["max_score"], []), (sub["path"], sub["message"], sub["flags"])


def test_a_submission_that_raises_keeps_the_points_it_earned(run):
    sub = submission(run, "00_raises.ipynb")
    assert sub["score"] == 4 and sub["notes"] == ["cell 3 raised ZeroDivisionError: division by zero"]
    graded = exercises(sub)
    assert graded["00.relu"][:2] == (1, "passed") and graded["00.sigmoid_vjp"][:2] == (3, "passed")
    assert graded["00.sigmoid"] == (0, "failed", "0 of 7 cases passed; case 1: ValueError: negative numbers are hard")
    assert graded["00.broadcast_shape"] == (0, "missing", "no `broadcast_shape` defined in the notebook")


def test_endless_loops_are_interrupted_in_cells_and_in_answers(run):
    sub = submission(run, "00_loops_forever.ipynb")
    assert sub["score"] == 6
    assert sub["notes"] == ["cell 3 used 10 s of CPU time without finishing and was interrupted"]
    score, status, message = exercises(sub)["00.relu"]
    assert (score, status) == (0, "failed") and "did not finish within 2 s" in message


def test_a_cell_limit_counts_cpu_time_and_a_wall_clock_ten_times_as_long_ends_a_wait(tmp_path):
    """A cell that waits longer than the limit without computing (what a loaded machine makes of
    an honest cell) runs on; one that computes for longer is interrupted; one that waits forever
    is stopped by the wall clock, after ten times the limit."""
    cells = ["import time\nstarted = time.time()", "time.sleep(3)",
             "while True:\n    pass", "time.sleep(10**6)", "print(round(time.time() - started))"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    (tmp_path / "00_waits.ipynb").write_text(nbformat.writes(notebook))
    started = time.monotonic()
    proc = grader(tmp_path / "00_waits.ipynb", "--cell-timeout", "1", "--timeout", "90",
                  "--json", tmp_path / "grades.json")
    assert proc.returncode == 0, proc.stderr
    (sub,) = json.loads((tmp_path / "grades.json").read_text())["submissions"]
    assert sub["notes"] == ["cell 3 used 1 s of CPU time without finishing and was interrupted",
                            "cell 4 did not finish within 10 s of waiting and was interrupted"]
    assert time.monotonic() - started >= 3 + 1 + 10


def test_a_waiting_cell_may_take_ten_times_its_cpu_limit_but_at_most_a_quarter_of_the_notebooks_time():
    """So that a cell that waits and swallows the interrupt (make attack's
    00_honest_swallows_interrupt) leaves the rest of the notebook the time to run again."""
    from minigraph.grading.batch.runner import wait_limit
    assert wait_limit({"cell_timeout": 1, "timeout": 90}) == 10
    assert wait_limit({"cell_timeout": 60, "timeout": 600}) == 150          # the defaults
    assert wait_limit({"cell_timeout": 10, "timeout": 90}) == 23            # whole seconds, for nbclient


def test_megabytes_of_output_are_counted_not_kept(run):
    sub = submission(run, "00_prints_megabytes.ipynb")
    assert sub["score"] == 7 and sub["notes"] == ["cell 3 printed 5.0 MB of output (not kept)"]
    assert len(json.dumps(sub)) < 10_000 and len(run["proc"].stdout) < 33 * 1000


def test_tampering_in_the_kernel_earns_nothing(run):
    sub = submission(run, "00_tampers.ipynb")
    assert sub["score"] == 0 and sub["notes"] == []
    assert sub["flags"] == ["cell 3: uses minigraph's grading internals ('minigraph.grading')"]
    assert [e["status"] for e in sub["exercises"]] == ["failed"] * 4
    relu_cases = sub["exercises"][0]["cases"]        # its run() was replaced by the right answer
    assert relu_cases[0]["got"] == "[-2, -0.5, 0, 1.5, 3]"
    graph_case = sub["exercises"][3]["cases"][3]     # its defop was patched to ignore the rule
    assert graph_case["status"] == "fail" and "node 'z2' has the wrong gradient" in graph_case["message"]


def test_a_submission_deleting_and_writing_files_is_graded_in_its_own_folder(run):
    assert submission(run, "00_writes_files.ipynb")["score"] == 7         # its forged results.json was replaced
    assert not (FIXTURES / "written_by_submission.txt").exists() and not (FIXTURES / "results.json").exists()


def test_an_unexecuted_reordered_notebook_is_graded_as_it_runs_top_to_bottom(run):
    sub = submission(run, "00_unexecuted_reordered.ipynb")
    assert sub["score"] == 7                          # stored outputs are ignored; answers exist at the end
    assert sub["notes"] == ["cell 4 raised NameError: name 'relu' is not defined"]


@pytest.mark.parametrize("name, problem", [
    ("00_not_json.ipynb", "not a valid notebook: the file is not JSON (Unterminated string"),
    ("00_not_a_notebook.ipynb", "not a valid notebook: JSON, but not in Jupyter's format"),
])
def test_a_broken_file_is_a_zero_with_a_message(run, name, problem):
    sub = submission(run, name)
    assert (sub["status"], sub["score"], sub["max_score"]) == ("error", 0, 7)
    assert sub["message"].startswith(problem)
    assert f"{name}: NOT GRADED, {problem}" in run["proc"].stdout


# -- reports --------------------------------------------------------------------------------

def test_json_report_is_complete_and_consistent(run):
    report = run["json"]
    assert report["grader"] == "minigraph.grading" and report["settings"]["cell_timeout"] == float(FAST[1])
    for sub in report["submissions"]:
        assert sub["score"] == round(sum(e["score"] for e in sub["exercises"]), 2)
        if sub["exercises"] and sub["chapter"] == "00":
            assert [e["id"] for e in sub["exercises"]] == ["00.relu", "00.sigmoid", "00.broadcast_shape", "00.sigmoid_vjp"]
        assert all(e["id"].startswith(sub["chapter"] + ".") for e in sub["exercises"])


def test_junit_report_has_a_suite_per_notebook_and_a_case_per_exercise(run):
    suites = {s.get("name"): s for s in ET.parse(run["reports"]["junit"]).getroot().iter("testsuite")}
    assert len(suites) == 58
    solution = suites[str(SOLUTION)]
    assert (solution.get("tests"), solution.get("failures"), solution.get("errors")) == ("4", "0", "0")
    assert solution.find("properties/property[@name='score']").get("value") == "7.0"
    tampers = suites[str(FIXTURES / "00_tampers.ipynb")]
    assert tampers.get("failures") == "4"
    assert [c.get("name") for c in tampers.iter("testcase")] == ["00.relu", "00.sigmoid", "00.broadcast_shape", "00.sigmoid_vjp"]
    broken = suites[str(FIXTURES / "00_not_json.ipynb")]
    assert broken.get("errors") == "1" and "not JSON" in broken.find("testcase/error").get("message")


def test_csv_gradebook_has_a_row_per_submission_and_a_column_per_exercise(run):
    import csv
    rows = list(csv.DictReader(run["reports"]["csv"].read_text(encoding="utf-8").splitlines()))
    assert len(rows) == 58
    columns = list(rows[0])
    assert columns[:6] == ["submission", "chapter", "00.relu", "00.sigmoid", "00.broadcast_shape", "00.sigmoid_vjp"]
    assert columns[-4:] == ["total", "max_score", "status", "flags"]
    assert {c[:3] for c in columns[2:-4]} == {"00.", "02.", "04."}           # a column per exercise graded
    by_name = {r["submission"]: r for r in rows}
    raises = by_name[str(FIXTURES / "00_raises.ipynb")]
    assert [raises[k] for k in ("00.relu", "00.sigmoid", "00.broadcast_shape", "00.sigmoid_vjp", "total")] == ["1", "0", "0", "3", "4"]
    for sub in run["json"]["submissions"]:
        assert float(by_name[sub["path"]]["total"]) == sub["score"]


def test_jobs_1_gives_the_same_results_as_jobs_2(run, tmp_path):
    paths = [FIXTURES / "00_raises.ipynb", SOLUTION, FIXTURES / "00_not_json.ipynb"]
    proc = grader(*paths, *FAST, "--jobs", "1", "--json", tmp_path / "one.json")
    assert proc.returncode == 0, proc.stderr
    one = json.loads((tmp_path / "one.json").read_text())["submissions"]
    assert [public(s) for s in one] == [public(by_path(run, p)) for p in paths]


def public(sub):
    """A submission's result without its seed and hidden cases (each grading draws its own)."""
    return {**sub, "seed": None, "exercises": [{**e, "cases": [c for c in e["cases"]
                                                               if not c["input"].startswith("hidden case")]}
                                               for e in sub["exercises"]]}


def hidden_inputs(sub):
    """exercise id -> the inputs of its hidden cases, as the report shows them."""
    return {e["id"]: [c["input"] for c in e["cases"] if c["input"].startswith("hidden case")]
            for e in sub["exercises"]}


def test_a_given_seed_draws_the_same_hidden_cases_every_time_and_another_seed_others(tmp_path):
    # the same notebook twice in one run with --seed 7, then once with --seed 8
    for copy in ("a", "b"):
        (tmp_path / copy).mkdir()
        shutil.copy(FIXTURES / "00_raises.ipynb", tmp_path / copy / "00_raises.ipynb")
    seven = grader("a", "b", *FAST, "--jobs", "2", "--seed", "7", "--json", "seven.json", cwd=tmp_path)
    eight = grader("a", *FAST, "--seed", "8", "--json", "eight.json", cwd=tmp_path)
    assert seven.returncode == eight.returncode == 0, seven.stderr + eight.stderr
    a, b = json.loads((tmp_path / "seven.json").read_text())["submissions"]
    (other,) = json.loads((tmp_path / "eight.json").read_text())["submissions"]
    assert (a["seed"], a["seed_given"], other["seed"], other["seed_given"]) == (7, True, 8, True)
    assert {**a, "path": None} == {**b, "path": None}                  # verdicts, messages, inputs
    assert sum(map(len, hidden_inputs(a).values())) == 3 * 3           # relu, sigmoid, sigmoid_vjp
    assert public(other) == {**public(a), "path": other["path"]}
    assert all(hidden_inputs(a)[i] != hidden_inputs(other)[i] for i, cases in hidden_inputs(a).items() if cases)
    assert seven.stdout.rstrip().endswith("graded 2 notebooks; 2 regraded: hidden cases from a given "
                                          "seed, not a fresh one")


def test_seeds_from_a_report_regrade_each_notebook_exactly_as_that_run_did(run, tmp_path):
    # the shared run drew a secret seed per notebook; regrading from its report gives back its
    # results (a file that never ran has no seed, and is what it was: not a notebook)
    paths = [FIXTURES / "00_raises.ipynb", FIXTURES / "00_attack_reference_table.ipynb", SOLUTION]
    proc = grader(*paths, FIXTURES / "00_not_json.ipynb", *FAST, "--jobs", "2",
                  "--seeds-from", run["reports"]["json"], "--json", tmp_path / "again.json")
    assert proc.returncode == 0, proc.stderr
    *again, not_json = json.loads((tmp_path / "again.json").read_text())["submissions"]
    first = [by_path(run, path) for path in paths]
    assert [s["seed_given"] for s in first] == [False] * 3 and len({s["seed"] for s in first}) == 3
    assert again == [{**s, "seed_given": True} for s in first]
    assert all(any(hidden_inputs(s).values()) for s in first)
    assert not_json == submission(run, "00_not_json.ipynb") and not_json["seed"] is None


def test_a_file_replaced_since_its_report_is_regraded_with_a_fresh_seed(tmp_path):
    """A report gave a notebook's hidden inputs back; a file put at the same path since (its
    answers a table of them) must not get those cases again."""
    path = tmp_path / "00_raises.ipynb"
    shutil.copy(FIXTURES / "00_raises.ipynb", path)
    first = grader(path, *FAST, "--json", tmp_path / "first.json")
    path.write_text(path.read_text().replace("negative numbers are hard", "now a table"))
    again = grader(path, *FAST, "--seeds-from", tmp_path / "first.json", "--json", tmp_path / "again.json")
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    (before,) = json.loads((tmp_path / "first.json").read_text())["submissions"]
    (after,) = json.loads((tmp_path / "again.json").read_text())["submissions"]
    assert after["sha256"] != before["sha256"] and after["seed"] != before["seed"]
    assert not after["seed_given"] and hidden_inputs(after) != hidden_inputs(before)
    assert "its content changed): its hidden cases were drawn from a fresh seed" in after["notes"][0]


@pytest.mark.parametrize("args, message", [
    (["--seed", "12x"], "argument --seed: '12x' is not a seed: give the whole number (0 or more)"),
    (["--seed", "-3"], "argument --seed: '-3' is not a seed"),
    (["--seed", "7", "--seeds-from", "grades.json"], "argument --seeds-from: not allowed with argument --seed"),
    (["--seed", "9" * 5000], "argument --seed: '" + "9" * 39 + "…' is not a seed"),
    (["--seeds-from", "missing.json"], "cannot read --seeds-from missing.json: it is cannot be opened (No such file"),
    (["--seeds-from", "/dev/zero"], "cannot read --seeds-from /dev/zero: it is not a regular file (a character device)"),
    (["--seeds-from", "fifo.json"], "cannot read --seeds-from fifo.json: it is not a regular file (a FIFO)"),
    (["--seeds-from", "broken.json"], "--seeds-from broken.json cannot be used: it is not JSON"),
    (["--seeds-from", "grades.csv"], "--seeds-from grades.csv cannot be used: it is not JSON"),
    (["--seeds-from", "other.json"], "--seeds-from other.json cannot be used: it is not a report of minigraph.grading"),
    (["--seeds-from", "grades.json"], f"--seeds-from grades.json has no seed for {SOLUTION}: regrade only "
                                      "notebooks it graded, named as that run named them, from the same "
                                      "folder (it names them like 00_warmup.ipynb)"),
])
def test_a_regrading_that_cannot_run_exits_with_2_and_grades_nothing(tmp_path, args, message):
    (tmp_path / "grades.json").write_text(json.dumps({"grader": "minigraph.grading", "submissions": [
        {"path": "00_warmup.ipynb", "seed": 5}]}))
    (tmp_path / "broken.json").write_text('{"grader": "minigraph.grading", "submissions": [')
    (tmp_path / "grades.csv").write_text("submission,chapter\n00_warmup.ipynb,00\n")
    (tmp_path / "other.json").write_text(json.dumps({"grader": "otter", "tests": []}))
    os.mkfifo(tmp_path / "fifo.json")               # nothing ever writes to it
    proc = grader(SOLUTION, *FAST, *args, "--json", "out.json", cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert proc.stdout == "" and not (tmp_path / "out.json").exists()


def test_the_gradescope_results_follow_its_specification(tmp_path):
    out = tmp_path / "results.json"
    proc = grader(FIXTURES / "00_raises.ipynb", *FAST, "--gradescope", out)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(out.read_text())
    assert set(results) == {"score", "output", "tests"} and results["score"] == 4
    assert [t["number"] for t in results["tests"]] == ["1", "2", "3", "4"]
    for test in results["tests"]:
        assert set(test) == {"name", "number", "score", "max_score", "status", "output"}
        assert test["status"] == ("passed" if test["score"] == test["max_score"] else "failed")
    assert sum(t["max_score"] for t in results["tests"]) == 7
    assert "note: cell 3 raised ZeroDivisionError" in results["output"]


def test_a_killed_grader_keeps_what_it_graded_and_leaves_no_process(tmp_path):
    """The JSON report is rewritten (atomically) as each result comes in; killing the grader
    ends every sandbox (--die-with-parent)."""
    report = tmp_path / "grades.json"
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT))
    grading = subprocess.Popen([sys.executable, "-m", "minigraph.grading", str(SOLUTION),
                                str(FIXTURES / "00_loops_forever.ipynb"), "--cell-timeout", "100",
                                "--timeout", "200", "--json", str(report)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not (report.exists() and json.loads(report.read_text())["submissions"]):
            time.sleep(0.5)
        while time.time() < deadline and not [copy for copy in tmp_path.glob("minigraph-grade-*/box/home/work/*")
                                              if "while True" in _text_of(copy)]:
            time.sleep(0.2)                      # the second notebook's space: made once its code is read
        time.sleep(3)                            # the second notebook is running now
        mounted = _mounts_under(tmp_path)        # as root: its space's quota and results
    finally:
        grading.kill()
        grading.wait()
    partial = json.loads(report.read_text())
    assert partial["complete"] is False
    assert [(s["path"], s["score"]) for s in partial["submissions"]] == [(str(SOLUTION), 7)]
    time.sleep(2)
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline_has(p, str(tmp_path))]
    assert left == []
    if os.geteuid() == 0:
        # A killed grader leaves its spaces mounted; the next grader run as root removes them.
        # Under xdist that may already be another test's grader, so sweep and wait: either way
        # they end up gone.
        assert len(mounted) == 2, mounted
        workspace.sweep()
        deadline = time.time() + 10
        while time.time() < deadline and (_mounts_under(tmp_path) or list(tmp_path.glob("minigraph-grade-*"))):
            time.sleep(0.2)
        assert not _mounts_under(tmp_path)
        assert not list(tmp_path.glob("minigraph-grade-*"))


def _mounts_under(folder):
    """The grader's spaces mounted below ``folder``, live or left behind."""
    with open("/proc/self/mounts") as mounts:
        return [line.split()[1] for line in mounts if line.startswith(workspace.MOUNT_NAME)
                and line.split()[1].startswith(str(folder))]


def _text_of(path):
    """What a file of a grader's space holds ("" once the grader removed it)."""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _cmdline_has(process, text):
    try:
        return text.encode() in (process / "cmdline").read_bytes()
    except OSError:
        return False


def test_without_bubblewrap_the_grader_refuses_unless_told_not_to_sandbox(tmp_path):
    tools = tmp_path / "bin"                                           # no bwrap on this PATH,
    tools.mkdir()                                                      # but setpriv (util-linux)
    if shutil.which("setpriv"):
        (tools / "setpriv").symlink_to(shutil.which("setpriv"))
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), str(tools)]))
    refused = grader(SOLUTION, *FAST, env=env)
    assert refused.returncode == 2 and "no sandbox for the submissions: bubblewrap is not installed" in refused.stderr
    assert "--no-sandbox" in refused.stderr
    report = tmp_path / "grades.json"
    allowed = grader(SOLUTION, *FAST, "--no-sandbox", "--json", report, env=env)
    if unprivileged_reason():             # as root, the run needs a Python anyone can read
        assert allowed.returncode == 2 and unprivileged_reason() in allowed.stderr
        return
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.rstrip().endswith("graded 1 notebook; WITHOUT a sandbox (--no-sandbox)")
    graded = json.loads(report.read_text())
    assert graded["settings"]["sandbox"] is False and graded["submissions"][0]["score"] == 7


def test_the_total_timeout_stops_a_notebook_that_never_finishes():
    (result,) = grade_all([FIXTURES / "00_loops_forever.ipynb"], Settings(cell_timeout=60, timeout=6))
    assert (result.status, result.score) == ("error", 0)
    assert result.message.startswith("no answers were collected: the notebook did not finish "
                                     "within 6 s (stopped at ")      # cell 3, unless the machine is slow
    assert all(e.status == "error" for e in result.exercises)


# -- exit statuses --------------------------------------------------------------------------

def test_help_documents_the_flags_and_exit_statuses():
    proc = grader("--help")
    assert proc.returncode == 0
    for text in ("--cell-timeout", "--timeout", "--jobs", "--json", "--junit", "--csv",
                 "--gradescope", "--no-sandbox", "--memory", "--seeds-from REPORT", "--seed N",
                 "never for a first grading", "computable in advance", "Exit status",
                 "0  grading completed", "2  grading could not run"):
        assert text in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["does/not/exist.ipynb"], "no such file or folder: does/not/exist.ipynb"),
    (["EMPTY"], "no notebooks (.ipynb) found in"),
    ([SOLUTION, "--kernel", "python3"], "unrecognized arguments: --kernel"),    # the grader's kernel only
    ([SOLUTION, "--chapter", "99"], "no chapter '99'"),
    ([SOLUTION, "--jobs", "0"], "must be positive"),
    ([FIXTURES / "00_not_json.ipynb", "--json", "no/such/folder/out.json"], "cannot write no/such/folder/out.json"),
    ([SOLUTION, EXERCISE, "--gradescope", "results.json"], "--gradescope grades exactly one notebook; found 2"),
    (["LINK"], "link is a link to a folder; to grade what is in that folder, name the folder itself: "),
])
def test_grading_that_cannot_run_exits_with_2(tmp_path, args, message):
    (tmp_path / "link").symlink_to(FIXTURES)
    args = [tmp_path if a == "EMPTY" else tmp_path / "link" if a == "LINK" else a for a in args]
    proc = grader(*args, cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr


def test_a_notebook_of_no_known_chapter_is_reported_not_fatal(tmp_path):
    (tmp_path / "homework.ipynb").write_bytes(SOLUTION.read_bytes())
    proc = grader(tmp_path / "homework.ipynb")
    assert proc.returncode == 0
    assert "cannot tell which chapter" in proc.stdout and "--chapter NN" in proc.stdout


def test_the_gradescope_autograder_zip_grades_a_submission(tmp_path):
    """`make autograder` builds the zip; its run_autograder, run as Gradescope would (here
    with this environment's Python instead of the one setup.sh installs), writes results.json."""
    import zipfile
    built = subprocess.run(["make", "-s", "autograder", "CHAPTER=00"], cwd=ROOT, capture_output=True,
                           text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    with zipfile.ZipFile(ROOT / "build" / "autograder.zip") as archive:
        names = archive.namelist()
        assert {"setup.sh", "run_autograder", "chapter", "course/pyproject.toml",
                "course/minigraph/grading/batch/grader.py"} <= set(names)
        assert not any(n.startswith(("course/solutions", "course/tests")) for n in names)
        archive.extractall(tmp_path / "autograder" / "source")
    run_autograder = tmp_path / "autograder" / "source" / "run_autograder"
    run_autograder.chmod(0o755)
    (tmp_path / "autograder" / "submission").mkdir()
    (tmp_path / "autograder" / "submission" / "my work.ipynb").write_bytes(
        (FIXTURES / "00_raises.ipynb").read_bytes())
    env = dict(os.environ, AUTOGRADER_ROOT=str(tmp_path / "autograder"), AUTOGRADER_PYTHON=sys.executable,
               PYTHONPATH=str(ROOT))
    proc = subprocess.run([str(run_autograder)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "autograder" / "results" / "results.json").read_text())
    assert results["score"] == 4 and len(results["tests"]) == 4


def in_a_container_like_machine(argv):
    """``argv`` as it would run in a container whose Python every user can read, as Gradescope's
    is. Where this Python lives under a folder closed to other users (``/root/.pyenv``), the
    command runs in a mount namespace of its own (``unshare``, as root) in which that folder is
    an open tmpfs holding only the folders the run needs, bound in from the real one; and the
    reference answers are a copy that is root's alone, as ``setup.sh`` leaves them (a grader
    without a sandbox refuses to run while they are readable by others); nothing changes
    outside it. ``None`` if neither way works here."""
    if unprivileged_reason() is None:
        return list(argv)
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return None
    needed = {Path(sys.executable).resolve(), Path(sys.executable).absolute(), ROOT}
    closed = {p for path in needed for p in path.parents if p != Path("/") and not p.stat().st_mode & 0o001}
    if len(closed) > 1:                      # one closed folder to open (/root), or give up
        return None
    script = ["set -e"]
    for folder in closed:
        children = sorted({path.relative_to(folder).parts[0] for path in needed if folder in path.parents})
        script += ['keep=$(mktemp -d)', f'mount --bind "{folder}" "$keep"',
                   f'mount -t tmpfs -o mode=0755 tmpfs "{folder}"']
        for child in children:
            script += [f'mkdir "{folder / child}"', f'mount --bind "$keep/{child}" "{folder / child}"']
    answers = ROOT / "minigraph" / "grading" / "answers"
    script += ['closed=$(mktemp -d)', f'cp -a "{answers}/." "$closed"', 'chmod -R go-rwx "$closed"',
               f'mount --bind "$closed" "{answers}"']
    wrapped = ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(script + ['exec "$@"']),
               "sh", *argv]
    probe = subprocess.run(wrapped[:-len(argv)] + [sys.executable, "-c",
                           "from minigraph.grading.batch.sandbox import unprivileged_reason as r; "
                           "raise SystemExit(r() is not None)"],
                           env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, timeout=120)
    return wrapped if probe.returncode == 0 else None


@pytest.mark.skipif(in_a_container_like_machine(["true"]) is None,
                    reason=f"no unprivileged run here: {unprivileged_reason()}, and no mount namespace to open it")
def test_gradescope_without_namespaces_keeps_the_score_a_forger_would_rewrite(tmp_path):
    """A container that cannot make namespaces (bwrap present, refusing): run_autograder grades
    with --no-sandbox; the notebook's double-forked forger runs as a user with no rights, is
    killed before the results are written, and could not write them anyway. (Where this
    Python is closed to other users, the run happens in a container-like mount namespace.)"""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    (root / "source" / "chapter").write_text("00\n")
    run_autograder = ROOT / "tools" / "gradescope" / "run_autograder"
    (root / "submission" / "00_warmup.ipynb").write_bytes((FIXTURES / "00_attack_gradescope_score.ipynb").read_bytes())
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable, PYTHONPATH=str(ROOT),
               PATH=f"{fake}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(in_a_container_like_machine(["bash", str(run_autograder)]), env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    results = root / "results" / "results.json"
    written = results.read_bytes()
    assert json.loads(written)["score"] == 0 and "WITHOUT a sandbox" in json.loads(written)["output"]
    time.sleep(3)                                  # a forger would rewrite it now
    assert results.read_bytes() == written and survivors() == []
