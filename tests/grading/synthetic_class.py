"""A synthetic class: notebooks written from the answer fixtures (``exercise_answers/``), mixed
by a seed, for the class report's tests and benchmark.

Each student's notebook is the chapter's exercise notebook with each stub replaced by one
answer from the fixtures: a right one, or a typical wrong one, written out as source the way a
learner would (a ``def`` named as the exercise asks, or ``name = value``). Only answers whose
code needs nothing but numpy and ``math`` can be written out (no fixture helper, no engine
object kept in a variable); the others are left out of the draw.

Some students are *copiers*: they take another student's answers and disguise them (names of
arguments and variables changed, a comment added, the layout redone by ``ast.unparse``). The
plan records who copied whom, so a test can hold the report to it.
"""

import ast
import builtins
import copy
import importlib
import inspect
import json
import random
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np

from minigraph.grading.batch.sources import answer_sources
from minigraph.grading.toolkit import registry

ROOT = Path(__file__).resolve().parents[2]
if str(Path(__file__).parent) not in sys.path:          # exercise_answers, as the tests import it
    sys.path.insert(0, str(Path(__file__).parent))
ALLOWED = {"np", "math"} | set(dir(builtins))


@dataclass
class Student:
    name: str
    answers: dict = field(default_factory=dict)       # exercise id -> (label, right?, source)
    copied_from: str | None = None


def fixtures(chapter):
    """``{exercise id: [(label, right?, source)]}``: every fixture answer that can be written out."""
    module = importlib.import_module(f"exercise_answers.ch{chapter}")
    names = {e.id: e.name for e in registry.exercises(chapter)}
    found = {}
    for right, table in ((True, module.RIGHT), (False, module.WRONG)):
        for exercise_id, answers in table.items():
            for label, answer in answers.items():
                answer = answer if right else answer[0]
                source = answer_source(answer, names[exercise_id])
                if source is not None:
                    found.setdefault(exercise_id, []).append((label, right, source))
    return found


def answer_source(answer, name):
    """``answer`` as notebook source defining ``name``, or None when it cannot be written out."""
    if isinstance(answer, (tuple, list, int, float)):
        return f"{name} = {answer!r}\n"
    if not inspect.isfunction(answer):
        return None
    try:
        lines, first = inspect.getsourcelines(answer)
    except (OSError, TypeError):
        return None
    if answer.__name__ == "<lambda>":
        node = _lambda_at(inspect.getsourcefile(answer), answer)
        if node is None:
            return None
        params = ast.unparse(node.args)
        source = f"def {name}({params}):\n    return {ast.unparse(node.body)}\n"
    else:
        tree = ast.parse(textwrap.dedent("".join(lines)))
        tree.body[0].name = name
        source = ast.unparse(tree) + "\n"
    used = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    bound = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for a in ast.walk(ast.parse(source)) if isinstance(a, ast.arg)} | {name}
    if not used - bound <= ALLOWED:
        return None
    return ("import math\n" if "math" in used else "") + source       # numpy: the notebook's first cell


def _lambda_at(path, function):
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    arguments = list(function.__code__.co_varnames[:function.__code__.co_argcount])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Lambda) and node.lineno == function.__code__.co_firstlineno
                and [a.arg for a in node.args.args] == arguments):
            return node
    return None


class _Rename(ast.NodeTransformer):
    """Every argument and local variable of a function renamed (``x`` -> ``x_in``)."""

    def __init__(self, keep):
        self.keep = keep

    def visit_arg(self, node):
        node.arg += "_in"
        return node

    def visit_Name(self, node):
        if node.id not in self.keep:
            node.id += "_in"
        return node


def disguise(source, name):
    """A copy made to look different: names changed, a comment added, the layout redone."""
    tree = ast.parse(source)
    keep = ALLOWED | {name, "self", "cls"}
    tree = _Rename(keep).visit(tree)
    return "# my own solution, written from the lecture notes\n" + ast.unparse(tree) + "\n"


def plan(chapter, n, seed, copiers=1):
    """``[Student]``: ``n`` students, each exercise's answer drawn at random from the fixtures;
    the last ``copiers`` students copy (disguised) the answers of the first ones, who wrote the
    longest answer of each exercise (a copy of a one-liner is no evidence of anything)."""
    rng = random.Random(seed)
    table = fixtures(chapter)
    names = {e.id: e.name for e in registry.exercises(chapter)}
    students = [Student(f"student{i:03d}") for i in range(n)]
    for i, student in enumerate(students[:n - copiers]):
        for exercise_id, answers in table.items():
            student.answers[exercise_id] = (max(answers, key=lambda a: len(a[2])) if i < copiers
                                            else rng.choice(answers))
    for i, student in enumerate(students[n - copiers:]):
        original = students[i]
        student.copied_from = original.name
        student.answers = {e: (label, right, disguise(source, names[e]))
                           for e, (label, right, source) in original.answers.items()}
    return students


def write_class(folder, chapter, students):
    """Write ``folder/<student>/<chapter notebook>`` for every student; the paths."""
    template = nbformat.read(next((ROOT / "exercises").glob(f"{chapter}_*.ipynb")), as_version=4)
    exercises = registry.exercises(chapter)
    paths = []
    for student in students:
        notebook = copy.deepcopy(template)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                defined = answer_sources(nbformat.v4.new_notebook(cells=[cell]), exercises)
                for exercise_id in defined:
                    if exercise_id in student.answers:
                        cell.source = student.answers[exercise_id][2]
        path = Path(folder) / student.name / next((ROOT / "exercises").glob(f"{chapter}_*.ipynb")).name
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, path)
        paths.append(path)
    return paths


def answer_object(source, name):
    """The answer ``source`` defines, run here (the fixtures' own code, trusted)."""
    import math
    namespace = {"np": np, "math": math}
    exec(compile(source, "<answer>", "exec"), namespace)
    return namespace[name]


def dumps(students):
    return json.dumps([{"name": s.name, "copied_from": s.copied_from,
                        "answers": {e: [label, right] for e, (label, right, _) in s.answers.items()}}
                       for s in students], indent=1)


def graded_here(student, chapter, seed, path=None):
    """What the grader should report for ``student``'s notebook, worked out in this process:
    each answer run on its exercise's cases (the hidden ones drawn from ``seed``) and judged,
    as ``check()`` does. The oracle the batch grader's report is held to, and a quick way to
    make reports without kernels."""
    from minigraph.grading.batch.grader import SubmissionResult
    from minigraph.grading.toolkit.exercise import grade, missing, run_cases, with_hidden
    from minigraph.grading.toolkit.report import points

    results = []
    for exercise in registry.exercises(chapter):
        if exercise.id not in student.answers:
            results.append(missing(exercise))
            continue
        cases = with_hidden(exercise, seed)
        with np.errstate(all="ignore"):
            answer = answer_object(student.answers[exercise.id][2], exercise.name)
            results.append(grade(exercise, run_cases(exercise, answer, cases=cases), cases))
    score = round(sum(r.score for r in results), 2)
    total = sum(e.points for e in registry.exercises(chapter))
    return SubmissionResult(path or f"{student.name}/{chapter}_synthetic.ipynb", chapter, "graded",
                            f"{points(score)} of {points(total)} points", score, total, results,
                            seed=seed, answers={e: a[2] for e, a in student.answers.items()})


def write_report(path, chapter, students):
    """A JSON report as the grader writes it (``--json``) for ``students``, judged here
    (``graded_here``, each with a seed of its own), without kernels."""
    from minigraph.grading.batch.gradebook import to_json
    from minigraph.grading.batch.grader import Settings
    results = [graded_here(s, chapter, seed=10_000 + i, path=f"{s.name}/{chapter}_synthetic.ipynb")
               for i, s in enumerate(students)]
    Path(path).write_text(json.dumps(to_json(results, Settings()), indent=1))
