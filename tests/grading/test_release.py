"""The student edition (``make release``, ``minigraph/grading/release.py``): nothing in it gives an
answer away, it installs into a fresh virtual environment, and there its ``check()`` judges every
exercise -- every right answer of ``tests/grading/exercise_answers/`` passes, no typical wrong
answer gets full marks."""

import ast
import functools
import importlib
import json
import os
import re
import subprocess
import sys
import sysconfig
import tokenize
from pathlib import Path

import pytest

from minigraph.grading import release
from minigraph.grading.toolkit import answers, registry

ROOT = Path(__file__).resolve().parents[2]
ALL = [e for chapter in registry.CHAPTERS for e in registry.exercises(chapter)]


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    return release.build(tmp_path_factory.mktemp("release") / "course")


@pytest.fixture(scope="module")
def venv(edition, tmp_path_factory):
    """A fresh virtual environment with the edition installed (``pip install -e``, as its README
    says); the dependencies come from this interpreter's site-packages through a ``.pth`` file
    (offline, and seconds instead of minutes). Returns its python."""
    folder = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, env=clean_env()).stdout.strip()
    (Path(site) / "course_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-deps", "--no-build-isolation", "--no-index", "-e", str(edition)],
                   check=True, timeout=300, env=clean_env(), cwd=edition, capture_output=True)
    return python


def clean_env():
    """This environment without what would make a subprocess import the course's own package."""
    return {key: value for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}


def python_in(edition, code, python=sys.executable, cwd=None):
    """Run ``code`` with the edition's package (not the course's) and return what it prints: in
    ``python``'s environment, or, with the course's interpreter, through ``PYTHONPATH``."""
    env = clean_env() if python != sys.executable else {**os.environ, "PYTHONPATH": str(edition)}
    proc = subprocess.run([str(python), "-c", code], cwd=cwd or edition, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def function_bodies(source):
    """The code of every function and lambda in ``source``, as ``ast.dump`` strings."""
    return {ast.dump(node) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.Lambda))}


def answer_modules():
    return [importlib.import_module(module.replace(".content.", ".answers."))
            for module in registry.CHAPTERS.values()]


# -- nothing in it gives an answer away ---------------------------------------------------------

def test_the_edition_has_no_solution_no_reference_and_no_table_of_mistakes(edition):
    files = [p for p in edition.rglob("*") if p.is_file()]
    assert not (edition / "solutions").exists() and not (edition / release.ANSWERS).exists()
    assert not (edition / "minigraph" / "grading" / "AUTHORING.md").exists()
    assert {p.name for p in (edition / "exercises").glob("*.ipynb")} == {p.name for p in (ROOT / "exercises").glob("*.ipynb")}
    assert not [p for p in files if p.suffix == ".ipynb" and "### BEGIN SOLUTION" in p.read_text("utf-8")]
    references = set()
    for module in answer_modules():
        references |= function_bodies(Path(module.__file__).read_text("utf-8"))
    python = [p for p in (edition / "minigraph" / "grading").rglob("*.py")]
    assert len(python) > 20 and not [p for p in python if function_bodies(p.read_text("utf-8")) & references]
    assert not [p for p in python for node in ast.walk(ast.parse(p.read_text("utf-8")))
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id.endswith("MISTAKES")]


def squeezed(text):
    return re.sub(r"\s+", "", text)


SEARCHED = ("minigraph/grading", "exercises", "README.md", "pyproject.toml", "environment.yml")


def edition_text(edition):
    """Every text of the edition's exercise side -- the grading package, the exercise notebooks
    (their cells' sources), the project files -- without blanks, so a reformatted copy is found
    too. (The engine and the chapters teach the engine's own rules, such as sigmoid's VJP, which
    the engine rule refuses inside an answer.)"""
    texts = []
    for path in (p for name in SEARCHED for p in [edition / name, *(edition / name).rglob("*")]):
        if path.is_file() and path.suffix in (".py", ".md", ".json", ".toml", ".yml", ".ipynb", ".txt"):
            text = path.read_text("utf-8")
            texts.append(json.dumps(json.loads(text), ensure_ascii=False) if path.suffix == ".ipynb" else text)
    return squeezed("\n".join(texts))


SHORTEST = 12          # characters without blanks: ``lambda x: x`` (a mistake's "no square root") says nothing


def reference_sources():
    """The source of every reference answer (the body of each function of ``answers/`` that is
    not a judge, without its docstring) and of every typical mistake (each lambda), but the
    shortest."""
    found = {}
    for module in answer_modules():
        source = Path(module.__file__).read_text("utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Lambda):
                found[squeezed(ast.get_source_segment(source, node))] = module.__name__
            elif isinstance(node, ast.FunctionDef) and not node.name.startswith("judge"):
                body = node.body[1:] if isinstance(node.body[0], ast.Expr) else node.body
                found["".join(squeezed(ast.get_source_segment(source, each)) for each in body)] = module.__name__
    return {text: where for text, where in found.items() if len(text) >= SHORTEST}


def test_the_edition_holds_no_reference_answers_source_and_no_typical_mistakes(edition):
    sources = reference_sources()
    assert len(sources) > 150
    text = edition_text(edition)
    assert len(text) > 300_000
    assert [(where, source) for source, where in sources.items() if source in text] == []
    # the search finds each where it is: in the full course's answers/ (comments aside)
    assert all(source in squeezed(without_comments(Path(importlib.import_module(where).__file__)))
               for source, where in sources.items())


@functools.lru_cache(maxsize=None)
def without_comments(path):
    with path.open("rb") as stream:
        return tokenize.untokenize(token for token in tokenize.tokenize(stream.readline)
                                   if token.type != tokenize.COMMENT).decode("utf-8")


def test_the_edition_stores_the_public_cases_values_and_only_hashes_of_a_value(edition):
    stored = json.loads((edition / answers.STORED.relative_to(ROOT)).read_text("utf-8"))
    public = {answers.case_key(e.id, c) for e in ALL if e.expected is not None for c in e.cases}
    assert set(stored) == public and len(public) > 60
    # a backward rule is judged by central differences: nothing stored
    assert not {key.split()[0] for key in stored} & {e.id for e in ALL if e.public and e.public.fresh}
    values = {e.id for e in ALL if getattr(e.judge, "__qualname__", "").startswith("value_exercise")}
    hashed = [value for key, value in stored.items() if key.split()[0] in values]
    assert len(hashed) == len(values) >= 2 and all(set(value) == {"hash", "mistakes"} for value in hashed)


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
    assert int(out) == len([e for e in ALL if e.reference is not None]) > 15


def test_every_exercise_declares_how_the_edition_judges_it():
    assert [e.id for e in ALL if e.public is None] == []


# -- what check() says there --------------------------------------------------------------------

def test_check_in_the_edition_judges_each_kind_and_names_what_the_numbers_show(edition):
    out = python_in(edition, """
import numpy as np
import minigraph as mg
import minigraph.grading.toolkit.answers as a
from minigraph.grading import check
assert not a.available()
print(check("00.relu", lambda x: np.maximum(x, 0.0)).text.splitlines()[0])
print(check("00.relu", np.abs).text)
print(check("00.broadcast_shape", (4, 3)).text)
print(check("00.broadcast_shape", (5, 5)).text)
print(check("01.predict", [6.0, 8.0, 48.0]).text)
print(check("00.sigmoid_vjp", lambda g, ans, x: -g * ans * (1 - ans)).text)
print(check("03.tanh_vjp", lambda g, ans, x: g * (1 - ans ** 2)).text.splitlines()[0])
print(check("00.sigmoid", lambda x: mg.sigmoid.opdef.forward(x)).text)
""")
    assert "00.relu  relu(x) — 4 of 4 cases passed  (1 of 1 point)" in out
    assert "2 of 5 values wrong; at index (0,): expected 0, got 2" in out          # judged on stored values
    assert "not the right value" in out and "[3, 4]" not in out                   # a hash: never the value
    assert "the shape reversed" in out and "out = u·v − x: the − x is missing" in out   # wrong values' hashes
    assert "the sign is flipped" in out                                            # told by the numbers
    assert "7 of 7 cases passed" in out             # 4 public cases and 3 fresh random ones
    assert "calls the engine's own forward function of sigmoid" in out             # the rules still hold
    assert "ran (not judged)" not in out


def test_the_editions_exercise_notebook_runs_and_says_not_done_yet(edition):
    out = python_in(edition, """
import nbformat
from nbclient import NotebookClient
nb = nbformat.read("exercises/00_warmup_exercises.ipynb", as_version=4)
NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": "exercises"}}).execute()
outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
assert not [o for o in outputs if o.output_type == "error"]
print(sum("not done yet" in str(o) for o in outputs))
""")
    assert int(out) >= 4                      # each exercise's check says so, none raises


# -- installed in a fresh virtual environment -------------------------------------------------------

JUDGE_EVERY_ANSWER = """
import importlib, json, sys
sys.path.insert(0, {tables!r})
import minigraph
from minigraph.grading import check, progress
from minigraph.grading.toolkit import answers, notebook, registry
assert not answers.available()
counts = {{"exercises": 0, "passed": 0, "right": 0, "right_passed": 0, "wrong": 0, "wrong_full": 0,
          "progress_passed": 0, "failures": []}}
for chapter in registry.CHAPTERS:
    tables = importlib.import_module(f"exercise_answers.ch{{chapter}}")
    exercises = registry.exercises(chapter)
    for e in exercises:
        counts["exercises"] += 1
        right = []
        for name, answer in tables.WRONG[e.id].items():
            counts["wrong"] += 1
            check(e.id, answer[0])
            if notebook._latest[e.id].score >= e.points:
                counts["wrong_full"] += 1
                counts["failures"].append(f"{{e.id}}: the wrong answer '{{name}}' got full marks")
        for name, answer in tables.RIGHT[e.id].items():
            counts["right"] += 1
            check(e.id, answer)
            result = notebook._latest[e.id]
            right.append(result.status == "passed" and result.score == e.points)
            if not right[-1]:
                counts["failures"].append(f"{{e.id}}: the right answer '{{name}}': {{result.message}}")
        counts["right_passed"] += sum(right)
        counts["passed"] += all(right)
    # the last check of each exercise was a right answer: progress() says "passed" for each
    shown = progress(chapter).text
    rows = [line.split() for line in shown.splitlines()[1:]]
    counts["progress_passed"] += sum(row[0] == e.id and row[-1] == "passed" for e in exercises for row in rows)
print(json.dumps({{"file": minigraph.__file__, **counts}}))
"""


def test_installed_in_a_fresh_venv_the_edition_judges_every_exercise(edition, venv):
    out = python_in(edition, JUDGE_EVERY_ANSWER.format(tables=str(ROOT / "tests" / "grading")),
                    python=venv, cwd=edition / "exercises")
    counts = json.loads(out.splitlines()[-1])
    assert Path(counts["file"]).resolve().is_relative_to(edition.resolve())
    assert counts["failures"] == []
    assert counts["exercises"] == counts["passed"] == counts["progress_passed"] == len(ALL) >= 50
    assert counts["right_passed"] == counts["right"] >= 2 * len(ALL)
    assert counts["wrong_full"] == 0 and counts["wrong"] >= 5 * len(ALL)


def test_installed_in_a_fresh_venv_chapter_00s_setup_check_passes(edition, venv):
    out = python_in(edition, """
import nbformat
from nbclient import NotebookClient
nb = nbformat.read("00_setup_check.ipynb", as_version=4)
NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": "."}}).execute()
outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
assert not [o for o in outputs if o.output_type == "error"], outputs
print("\\n".join(o.get("text", "") for o in outputs if o.output_type == "stream"))
""", python=venv, cwd=edition / "chapters")
    assert all(f"{what} OK" in out for what in ("Python", "numpy", "graphviz", "ipywidgets", "matplotlib"))
    assert "minigraph OK (the course's own copy, in minigraph/)" in out
    assert "x * x at x = 3 is 9.0" in out


def test_the_edition_carries_the_licence_its_readme_names(edition):
    readme = (edition / "README.md").read_text(encoding="utf-8")
    assert "`LICENSE`" in readme and "MIT" in readme
    assert (edition / "LICENSE").read_text(encoding="utf-8") == (ROOT / "LICENSE").read_text(encoding="utf-8")


def test_the_edition_readme_has_what_chapter_00_points_to_and_the_trust_command():
    """Chapter 00 sends a learner whose check failed to *Troubleshooting* in the README; without
    `jupyter trust` the edition's stored drawings show as text tables."""
    readme = release.README.read_text(encoding="utf-8")
    chapter00 = (ROOT / "chapters" / "00_setup_check.ipynb").read_text(encoding="utf-8")
    assert "*Troubleshooting*" in chapter00
    assert "\n## Troubleshooting\n" in readme
    assert "jupyter trust chapters/*.ipynb exercises/*.ipynb" in readme
    assert "jupyter lab chapters/00_setup_check.ipynb" in readme
