"""The class report (``minigraph.grading.classreport``): a synthetic class of notebooks, written
from the answer fixtures and mixed by a seed, is graded by the batch grader; the report made
from its JSON must count exactly what was put in (each student's points, each named mistake),
flag the planted copies and nothing written independently, and give each student feedback that
shows no hidden input, expected value or other student's anything."""

import csv
import importlib
import inspect
import io
import itertools
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from minigraph.grading.batch.sources import answer_sources
from minigraph.grading.classreport import feedback, similarity
from minigraph.grading.classreport.cli import write
from minigraph.grading.classreport.load import BadReport, read_reports, student_of
from minigraph.grading.classreport.tally import hidden_kind
from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import grade, run_cases

import synthetic_class as synthetic

ROOT = Path(__file__).resolve().parents[2]
CHAPTER, STUDENTS, SEED = "00", 5, 2026
FAST = ["--cell-timeout", "10", "--timeout", "90"]


def python_m(*args, cwd):
    return subprocess.run([sys.executable, "-P", "-m", "minigraph.grading", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(cwd)})


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The synthetic class, graded (two at a time) with the class report written at the end,
    then reported again from the JSON with the CSV, the JSON numbers and the feedback pages."""
    folder = tmp_path_factory.mktemp("class")
    students = synthetic.plan(CHAPTER, STUDENTS, SEED, copiers=1)
    synthetic.write_class(folder / "submissions", CHAPTER, students)
    grading = python_m(folder / "submissions", *FAST, "--jobs", "2", "--json", folder / "grades.json",
                       "--class-report", folder / "during.html", cwd=folder)
    assert grading.returncode == 0, grading.stderr
    report = python_m("report", folder / "grades.json", "--out", folder / "class.html", "--csv",
                      folder / "exercises.csv", "--json", folder / "class.json", "--feedback",
                      folder / "feedback", cwd=folder)
    assert report.returncode == 0, report.stderr
    grades = json.loads((folder / "grades.json").read_text())
    return {"folder": folder, "students": students, "grades": grades, "report": report,
            "numbers": json.loads((folder / "class.json").read_text()),
            "seeds": {student_of(s["path"]): s["seed"] for s in grades["submissions"]}}


def oracle(graded):
    """{student: the result worked out in this process with the seed the grader drew}."""
    return {s.name: synthetic.graded_here(s, CHAPTER, graded["seeds"][s.name]) for s in graded["students"]}


def test_each_students_points_are_what_their_answers_earn(graded):
    expected = {name: {e.id: e.score for e in r.exercises} for name, r in oracle(graded).items()}
    (book,) = graded["numbers"]["gradebooks"].values()
    got = {row["student"]: row["scores"] for row in book["rows"]}
    assert got == expected
    assert {row["student"]: row["total"] for row in book["rows"]} == {
        name: round(sum(s.values()), 2) for name, s in expected.items()}


def test_each_mistakes_count_and_students_are_what_was_put_in(graded):
    expected = Counter()
    who = {}
    for name, result in oracle(graded).items():
        for e in result.exercises:
            for mistake in {c.mistake for c in e.cases if c.mistake}:
                expected[e.id, mistake] += 1
                who.setdefault((e.id, mistake), []).append(name)
    cases = [c for s in graded["grades"]["submissions"] for e in s["exercises"] for c in e["cases"]]
    assert all(c["mistake"] in c["message"] for c in cases)          # named in check()'s words
    got = {(x["id"], m["mistake"]): m["count"] for x in graded["numbers"]["exercises"] for m in x["mistakes"]}
    assert got == dict(expected) and expected, "a class with no named mistake tests nothing"
    students = {(x["id"], m["mistake"]): m["students"] for x in graded["numbers"]["exercises"] for m in x["mistakes"]}
    assert students == {k: sorted(v) for k, v in who.items()}
    # each wrong answer put in that its own check names a mistake for is among them
    for student in graded["students"]:
        for exercise_id, (label, right, source) in student.answers.items():
            if not right:
                named = public_mistakes(exercise_id, source)
                assert named <= {m for (e, m) in got if e == exercise_id}, (exercise_id, label)


def public_mistakes(exercise_id, source):
    exercise = registry.find(exercise_id)
    answer = synthetic.answer_object(source, exercise.name)
    return {c.mistake for c in grade(exercise, run_cases(exercise, answer)).cases if c.mistake}


def test_the_csv_has_a_row_per_exercise_with_the_counts(graded):
    rows = list(csv.DictReader(io.StringIO((graded["folder"] / "exercises.csv").read_text())))
    assert [r["exercise"] for r in rows] == [e.id for e in registry.exercises(CHAPTER)]
    for row, numbers in zip(rows, graded["numbers"]["exercises"]):
        assert int(row["students"]) == STUDENTS
        assert float(row["full_share"]) == pytest.approx(numbers["full_share"])


def test_the_planted_copy_is_flagged_and_nothing_else(graded):
    """Flagged: exactly the pairs whose answers come from the same fixture (a disguised copy, or
    the same answer drawn for two students), where the answer is long enough to be compared."""
    flags = graded["numbers"]["similarity"]["flags"]
    pairs = {(f["exercise"], *sorted((f["student"], f["other"]))) for f in flags if f["kind"] == "pair"}
    students = graded["students"]
    expected = {(e, a.name, b.name) for a, b in itertools.combinations(students, 2) for e in a.answers
                if a.answers[e][:2] == b.answers[e][:2] and min(
                    similarity.fingerprint(x.answers[e][2]).token_coverage for x in (a, b)) >= similarity.MIN_TOKENS}
    copier = students[-1]
    assert any(copier.name in pair and copier.copied_from in pair for pair in expected), \
        "the copier copied nothing long enough to be compared"
    assert pairs == expected
    assert all(min(f["similarity"]) >= similarity.PAIR_SIMILARITY for f in flags if f["kind"] == "pair")


def test_the_class_page_says_what_was_counted(graded):
    page = (graded["folder"] / "class.html").read_text()
    during = (graded["folder"] / "during.html").read_text()
    assert page.count("<svg") >= len(registry.exercises(CHAPTER)) + 2
    for student in graded["students"]:
        assert student.name in page and student.name in during
    for x in graded["numbers"]["exercises"]:
        for m in x["mistakes"]:
            assert feedback.e(m["mistake"]) in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)|<link\b|<script\s+src""", page)
    assert "class report" in graded["report"].stderr        # the progress bar


def test_feedback_shows_points_mistakes_and_hints_but_no_hidden_case_or_other_student(graded):
    folder = graded["folder"]
    planted = json.loads((folder / "grades.json").read_text())
    markers = ["PLANTED-INPUT-7431", "PLANTED-EXPECTED-7431", "PLANTED-GOT-7431", "PLANTED-MESSAGE-7431"]
    for sub in planted["submissions"]:
        sub["flags"].append("PLANTED-FLAG-7431")
        for e in sub["exercises"]:
            for c in e["cases"]:
                if c["input"].startswith("hidden case"):
                    c.update(input=f"hidden case: x={markers[0]}", expected=markers[1], got=markers[2],
                             message=markers[3], status="fail")
    (folder / "planted.json").write_text(json.dumps(planted))
    out = folder / "planted-feedback"
    write(read_reports([folder / "planted.json"]), ["planted.json"], folder / "planted.html",
          feedback_dir=out, compare=False, stream=io.StringIO())
    pages = {p.stem: p.read_text() for p in out.glob("*.html")}
    assert sorted(pages) == sorted(s.name for s in graded["students"])
    results = oracle(graded)
    for name, text in pages.items():
        for marker in markers + ["PLANTED-FLAG-7431", str(graded["seeds"][name])]:
            assert marker not in text, (name, marker)
        others = [s.name for s in graded["students"] if s.name != name]
        assert not any(other in text for other in others)
        for e in results[name].exercises:
            assert f"{e.id}" in text
            for mistake in {c.mistake for c in e.cases if c.mistake}:
                assert feedback.e(mistake) in text
            hints = [c.hint for c in e.cases if c.hint and c.status not in ("pass", "not_done")]
            assert not hints or feedback.e(hints[0]) in text
    # the hidden inputs the grader really drew are in the instructor's report, not in the feedback
    real = [c["input"][len("hidden case: "):] for s in graded["grades"]["submissions"]
            for e in s["exercises"] for c in e["cases"] if c["input"].startswith("hidden case")]
    assert real
    for name in pages:
        own = (folder / "feedback" / f"{name}.html").read_text()
        assert not any(value in own for value in real if len(value) > 6)


# -- the thresholds, against the course's independently written right answers ----------------

def right_answer_sources():
    """{exercise id: [source]}: every right answer of the fixtures written with ``def`` or
    ``class`` in its chapter's module (the lambdas are one-liners, below MIN_TOKENS anyway); for
    a class a fixture makes around a function (chapter 06's optimizers), that function."""
    found = {}
    for chapter in registry.CHAPTERS:
        module = importlib.import_module(f"exercise_answers.ch{chapter}")
        for exercise_id, answers in module.RIGHT.items():
            for answer in answers.values():
                for part in _written(answer, module):
                    found.setdefault(exercise_id, []).append(inspect.getsource(part))
    return found


def _written(answer, module):
    """The functions and classes of ``module`` that make up ``answer``."""
    if not (inspect.isfunction(answer) or inspect.isclass(answer)) or answer.__name__ == "<lambda>":
        return []
    try:
        inspect.getsource(answer)
        return [answer] if inspect.getmodule(answer) is module else []
    except OSError:                        # a class made inside a fixture's helper
        methods = [m for m in vars(answer).values() if inspect.isfunction(m)]
        return [v for m in methods for v in inspect.getclosurevars(m).nonlocals.values()
                if inspect.isfunction(v) and v.__name__ != "<lambda>" and inspect.getmodule(v) is module]


def test_independent_right_answers_are_not_flagged_against_each_other():
    sources = right_answer_sources()
    compared = 0
    for exercise_id, answers in sources.items():
        prints = [similarity.fingerprint(s) for s in dict.fromkeys(answers)]
        for a, b in itertools.combinations(prints, 2):
            if min(a.token_coverage, b.token_coverage) < similarity.MIN_TOKENS:
                continue
            sa, sb, _ = similarity.compare(a, b)
            compared += 1
            assert min(sa, sb) < similarity.PAIR_SIMILARITY, (exercise_id, sa, sb, a.raw_code, b.raw_code)
    assert compared >= 10


@pytest.fixture(scope="module")
def engine():
    return similarity.Engine()


def test_independent_right_answers_are_not_flagged_against_minigraphs_code(engine):
    compared = 0
    for exercise_id, answers in right_answer_sources().items():
        for source in answers:
            fp = similarity.fingerprint(source)
            closest = engine.closest(fp)
            if closest is None or fp.token_coverage < similarity.MIN_TOKENS:
                continue
            share, _, _ = similarity.compare(fp, closest[1])
            compared += 1
            assert share < similarity.ENGINE_SIMILARITY, (exercise_id, closest[0], share, source)
    assert compared >= 10


def test_a_disguised_copy_of_minigraphs_code_is_flagged(engine):
    import minigraph.optim
    source = synthetic.disguise(inspect.getsource(minigraph.optim.Adam), "Adam")
    name, unit = engine.closest(similarity.fingerprint(source))
    assert name.startswith("minigraph/optim.py: Adam")
    sa, _, (marked, _) = similarity.compare(similarity.fingerprint(source), unit)
    assert sa >= similarity.ENGINE_SIMILARITY and "<mark>" in marked


# -- the pieces ------------------------------------------------------------------------------

def test_answer_sources_take_the_last_top_level_definition_and_skip_magics():
    cells = ["%timeit 1 + 1\ndef relu(x):\n    return x", "def relu(x):\n    '''first'''\n    return x",
             "import numpy as np\nrelu = lambda x: np.maximum(x, 0)\nprint(relu)",
             "def helper():\n    def sigmoid(x):\n        return x\n", "broadcast_shape: tuple = (3, 4)"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    found = answer_sources(notebook, registry.exercises("00"))
    assert found == {"00.relu": "relu = lambda x: np.maximum(x, 0)",
                     "00.broadcast_shape": "broadcast_shape: tuple = (3, 4)"}
    cell = nbformat.v4.new_code_cell("def relu(x):\n    ### BEGIN SOLUTION\n    return np.maximum(x, 0)  # max")
    assert answer_sources(nbformat.v4.new_notebook(cells=[cell]), registry.exercises("00")) == {
        "00.relu": "def relu(x):\n    return np.maximum(x, 0)"}


def test_a_hidden_case_is_described_without_its_numbers():
    assert hidden_kind("hidden case: x=[[0.3, -1.2], [2, 4]], axis=1") == \
        "hidden case with x=an array of shape (2, 2), axis=a number"
    assert hidden_kind("hidden case: g=[[0.5, 1.5, 2], [3, 4…, x=[1, 2]") == \
        "hidden case with g=an array, x=an array of shape (2,)"


@pytest.mark.parametrize("path, student", [("subs/alice/00_warmup_exercises.ipynb", "alice"),
                                           ("subs/alice/00_warmup.ipynb", "alice"),
                                           ("00_warmup.ipynb", "00_warmup"),
                                           ("subs/bob.ipynb", "bob")])
def test_a_submission_belongs_to_its_folder_or_its_name(path, student):
    assert student_of(path) == student


def test_a_report_that_is_not_the_graders_is_refused_with_its_name(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"grader": "minigraph.grading", "submissions": [{"path": "a", "exercises": 3}]}')
    with pytest.raises(BadReport, match="bad.json: submission 1"):
        read_reports([bad])
    bad.write_text("[1, 2]")
    with pytest.raises(BadReport, match="not a report of minigraph.grading"):
        read_reports([bad])


def test_later_reports_replace_a_path_graded_again(tmp_path):
    def report(score):
        return {"grader": "minigraph.grading", "submissions": [
            {"path": "alice/00_warmup.ipynb", "chapter": "00", "status": "graded", "message": "",
             "score": score, "max_score": 7, "exercises": []}]}
    (tmp_path / "a.json").write_text(json.dumps(report(1)))
    (tmp_path / "b.json").write_text(json.dumps(report(5)))
    (sub,) = read_reports([tmp_path / "a.json", tmp_path / "b.json"])
    assert (sub.student, sub.result.score) == ("alice", 5)
