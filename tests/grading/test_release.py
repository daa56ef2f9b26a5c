"""The student edition (``make release``, ``minigraph/grading/release.py``): nothing in it gives an
answer away, and its exercise notebooks still run, with ``check()`` feedback that says what it can."""

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minigraph.grading import release
from minigraph.grading.toolkit import answers, registry

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    return release.build(tmp_path_factory.mktemp("release") / "course")


def python_in(edition, code):
    """Run ``code`` with the edition's package (not the course's) and return what it prints."""
    env = {**os.environ, "PYTHONPATH": str(edition)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=edition, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def function_bodies(source):
    """The code of every function and lambda in ``source``, as ``ast.dump`` strings."""
    return {ast.dump(node) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.Lambda))}


def test_the_edition_has_no_solution_no_reference_and_no_table_of_mistakes(edition):
    files = [p for p in edition.rglob("*") if p.is_file()]
    assert not (edition / "solutions").exists() and not (edition / release.ANSWERS).exists()
    assert {p.name for p in (edition / "exercises").glob("*.ipynb")} == {p.name for p in (ROOT / "exercises").glob("*.ipynb")}
    assert not [p for p in files if p.suffix == ".ipynb" and "### BEGIN SOLUTION" in p.read_text("utf-8")]
    references = set()
    for module in registry.CHAPTERS.values():
        references |= function_bodies(Path(importlib.import_module(module.replace(".content.", ".answers.")).__file__)
                                      .read_text("utf-8"))
    # the grading package's code (the engine has its own rules, which refuse while an answer runs)
    python = [p for p in (edition / "minigraph" / "grading").rglob("*.py")]
    assert len(python) > 20 and not [p for p in python if function_bodies(p.read_text("utf-8")) & references]
    assert not [p for p in python for node in ast.walk(ast.parse(p.read_text("utf-8")))
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id.endswith("MISTAKES")]


def test_the_edition_stores_the_references_values_on_public_cases_only(edition):
    stored = json.loads((edition / answers.STORED.relative_to(ROOT)).read_text("utf-8"))
    public = {answers.case_key(e.id, c) for chapter in registry.CHAPTERS for e in registry.exercises(chapter)
              if e.expected is not None for c in e.cases}
    assert set(stored) == public and len(public) > 25
    # of the function exercises only: a backward rule's reference is called like the learner's
    # rule too, but its check() never shows its values
    assert not {key.split()[0] for key in stored} & {e.id for chapter in registry.CHAPTERS
                                                     for e in registry.exercises(chapter)
                                                     if getattr(e.judge, "__qualname__", "").startswith("vjp_exercise")}


def test_the_editions_exercises_name_their_references_and_hold_none(edition):
    # Exercise.reference is a name (answers.Answer) of answers/, which the edition leaves out
    out = python_in(edition, """
from minigraph.grading.toolkit import answers, registry
named = 0
for chapter in registry.CHAPTERS:
    for e in registry.exercises(chapter):
        if e.reference is not None:
            assert isinstance(e.reference, answers.Answer), e.id
            try:
                e.reference.get()
                raise SystemExit(e.id + ": its reference is in the edition")
            except answers.Withheld:
                named += 1
print(named)
""")
    course = [e for chapter in registry.CHAPTERS for e in registry.exercises(chapter) if e.reference is not None]
    assert int(out) == len(course) > 15


def test_check_in_the_edition_judges_function_exercises_and_runs_the_others(edition):
    out = python_in(edition, """
import numpy as np
import minigraph.grading.toolkit.answers as a
from minigraph.grading import check
assert not a.available()
print(check("00.relu", lambda x: np.maximum(x, 0.0)).text.splitlines()[0])
print(check("00.relu", np.abs).text)
print(check("00.broadcast_shape", (3, 4)).text)
import minigraph as mg
print(check("00.sigmoid", lambda x: mg.sigmoid.opdef.forward(x)).text)
""")
    assert "00.relu  relu(x) — 4 of 4 cases passed  (1 of 1 point)" in out
    assert "2 of 5 values wrong; at index (0,): expected 0, got 2" in out          # judged on stored values
    assert "ran (not judged)" in out and "only the grader can judge this case" in out
    assert "calls the engine's own forward function of sigmoid" in out             # the rules still hold


def test_the_editions_exercise_notebook_runs_and_says_not_done_yet(edition):
    out = python_in(edition, """
import nbformat
from nbclient import NotebookClient
nb = nbformat.read("exercises/00_warmup.ipynb", as_version=4)
NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": "exercises"}}).execute()
outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
assert not [o for o in outputs if o.output_type == "error"]
print(sum("not done yet" in str(o) for o in outputs))
""")
    assert int(out) >= 4                      # each exercise's check says so, none raises
