"""The batch grader: real kernels, faulty submissions, reports, exit statuses.

One grading run of every fixture (plus the solution and the exercise notebook) is shared by
most tests; short time limits keep it to a few seconds per notebook.
"""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from minigraph.grading.grader import Settings, grade_all

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "submissions"
SOLUTION = ROOT / "solutions" / "00_warmup.ipynb"
EXERCISE = ROOT / "exercises" / "00_warmup.ipynb"
FAST = ["--cell-timeout", "5", "--timeout", "60"]


def grader(*args, cwd=None):
    """Run ``python -m minigraph.grading ARGS`` as CI would; minigraph importable from ROOT."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "minigraph.grading", *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def snapshot(folder):
    """Every file below ``folder`` -> sha256 of its bytes."""
    return {p.relative_to(folder): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Grade all fixtures, the solution and the exercise at once (two at a time)."""
    out = tmp_path_factory.mktemp("reports")
    before = snapshot(FIXTURES), SOLUTION.read_bytes(), EXERCISE.read_bytes()
    proc = grader(FIXTURES, SOLUTION, EXERCISE, *FAST, "--jobs", "2",
                  "--json", out / "grades.json", "--junit", out / "grades.xml", cwd=out)
    after = snapshot(FIXTURES), SOLUTION.read_bytes(), EXERCISE.read_bytes()
    report = json.loads((out / "grades.json").read_text()) if proc.returncode == 0 else None
    return {"proc": proc, "json": report, "xml": out / "grades.xml", "before": before, "after": after}


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
    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, text in module.build().items():
        assert (FIXTURES / name).read_text(encoding="utf-8") == text, (
            f"{name} is stale: run python tests/fixtures/submissions/make_fixtures.py")


def test_grading_completes_with_status_0_and_modifies_no_submission(run):
    assert run["proc"].returncode == 0, run["proc"].stderr
    assert run["after"] == run["before"]           # same files, same bytes: nothing deleted or added
    assert "graded 10 notebooks (2 could not be run)" in run["proc"].stdout


def test_the_solution_scores_full_marks_and_the_exercise_zero(run):
    solution, exercise = by_path(run, SOLUTION), by_path(run, EXERCISE)
    assert (solution["status"], solution["score"], solution["max_score"]) == ("graded", 7, 7)
    assert all(e["status"] == "passed" for e in solution["exercises"]) and solution["notes"] == []
    assert (exercise["score"], exercise["max_score"]) == (0, 7)
    assert all(e["status"] == "not_done" for e in exercise["exercises"])
    assert f"{SOLUTION} (chapter 00): 7 of 7 points" in run["proc"].stdout


def test_a_submission_that_raises_keeps_the_points_it_earned(run):
    sub = submission(run, "00_raises.ipynb")
    assert sub["score"] == 4 and sub["notes"] == ["cell 3 raised ZeroDivisionError: division by zero"]
    graded = exercises(sub)
    assert graded["00.relu"][:2] == (1, "passed") and graded["00.sigmoid_vjp"][:2] == (3, "passed")
    assert graded["00.sigmoid"] == (0, "failed", "0 of 4 cases passed; case 1: ValueError: negative numbers are hard")
    assert graded["00.broadcast_shape"] == (0, "missing", "no `broadcast_shape` defined in the notebook")


def test_endless_loops_are_interrupted_in_cells_and_in_answers(run):
    sub = submission(run, "00_loops_forever.ipynb")
    assert sub["score"] == 6
    assert sub["notes"] == ["cell 3 did not finish within 5 s and was interrupted"]
    score, status, message = exercises(sub)["00.relu"]
    assert (score, status) == (0, "failed") and "did not finish within 2 s" in message


def test_megabytes_of_output_are_counted_not_kept(run):
    sub = submission(run, "00_prints_megabytes.ipynb")
    assert sub["score"] == 7 and sub["notes"] == ["cell 3 printed 5.0 MB of output (not kept)"]
    assert len(run["json"]) < 10_000_000 and len(run["proc"].stdout) < 10_000


def test_tampering_in_the_kernel_earns_nothing(run):
    sub = submission(run, "00_tampers.ipynb")
    assert sub["score"] == 0 and sub["notes"] == []
    assert [e["status"] for e in sub["exercises"]] == ["failed"] * 4
    relu_cases = sub["exercises"][0]["cases"]        # its run() was replaced by the right answer
    assert relu_cases[0]["got"] == "[-2, -0.5, 0, 1.5, 3]"
    graph_case = sub["exercises"][3]["cases"][3]     # its defop was patched to ignore the rule
    assert graph_case["status"] == "fail" and "node 'z2' has the wrong gradient" in graph_case["message"]


def test_a_submission_deleting_and_writing_files_is_graded_in_its_own_folder(run):
    assert submission(run, "00_writes_files.ipynb")["score"] == 7
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
    assert report["grader"] == "minigraph.grading" and report["settings"]["cell_timeout"] == 5
    assert len(report["submissions"]) == 10
    for sub in report["submissions"]:
        assert sub["score"] == round(sum(e["score"] for e in sub["exercises"]), 2)
        assert [e["id"] for e in sub["exercises"]] == ["00.relu", "00.sigmoid", "00.broadcast_shape", "00.sigmoid_vjp"]


def test_junit_report_has_a_suite_per_notebook_and_a_case_per_exercise(run):
    suites = {Path(s.get("name")).name + ("@sol" if "solutions" in s.get("name") else ""): s
              for s in ET.parse(run["xml"]).getroot().iter("testsuite")}
    assert len(suites) == 10
    solution = suites["00_warmup.ipynb@sol"]
    assert (solution.get("tests"), solution.get("failures"), solution.get("errors")) == ("4", "0", "0")
    assert solution.find("properties/property[@name='score']").get("value") == "7.0"
    tampers = suites["00_tampers.ipynb"]
    assert tampers.get("failures") == "4"
    assert [c.get("name") for c in tampers.iter("testcase")] == ["00.relu", "00.sigmoid", "00.broadcast_shape", "00.sigmoid_vjp"]
    broken = suites["00_not_json.ipynb"]
    assert broken.get("errors") == "1" and "not JSON" in broken.find("testcase/error").get("message")


def test_jobs_1_gives_the_same_results_as_jobs_2(run, tmp_path):
    paths = [FIXTURES / "00_raises.ipynb", SOLUTION, FIXTURES / "00_not_json.ipynb"]
    proc = grader(*paths, *FAST, "--jobs", "1", "--json", tmp_path / "one.json")
    assert proc.returncode == 0, proc.stderr
    one = json.loads((tmp_path / "one.json").read_text())["submissions"]
    assert one == [by_path(run, p) for p in paths]


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
    for text in ("--cell-timeout", "--timeout", "--jobs", "--json", "--junit", "Exit status",
                 "0  grading completed", "2  grading could not run"):
        assert text in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["does/not/exist.ipynb"], "no such file or folder: does/not/exist.ipynb"),
    (["EMPTY"], "no notebooks (.ipynb) found in"),
    ([SOLUTION, "--kernel", "no-such-kernel"], "no Jupyter kernel named 'no-such-kernel'"),
    ([SOLUTION, "--chapter", "99"], "no chapter '99'"),
    ([SOLUTION, "--jobs", "0"], "must be positive"),
    ([FIXTURES / "00_not_json.ipynb", "--json", "no/such/folder/out.json"], "cannot write no/such/folder/out.json"),
])
def test_grading_that_cannot_run_exits_with_2(tmp_path, args, message):
    args = [tmp_path if a == "EMPTY" else a for a in args]
    proc = grader(*args, cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr


def test_a_notebook_of_no_known_chapter_is_reported_not_fatal(tmp_path):
    (tmp_path / "homework.ipynb").write_bytes(SOLUTION.read_bytes())
    proc = grader(tmp_path / "homework.ipynb")
    assert proc.returncode == 0
    assert "cannot tell which chapter" in proc.stdout and "--chapter NN" in proc.stdout
