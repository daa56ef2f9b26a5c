"""Every exercise is tested like a test suite: by the wrong answers it must reject, naming the
mistake, and by the different right answers it must accept (``tests/grading/exercise_answers/``).

The tables are found through ``registry.CHAPTERS``, so a chapter that adds exercises without
adding ``tests/grading/exercise_answers/chNN.py`` (at least 5 wrong and 2 right answers for each of its
exercises) fails here. Each answer goes through both paths a learner's answer takes:
``check()`` in the notebook, and the grader's split -- ``run`` on every case, the records sent
as JSON, ``judge`` on the other side (``run_cases`` then ``grade``).

A second part keeps the answers out of the feedback: no hint, and no message any of these
answers provokes, may contain the code of a reference solution (the ``### BEGIN SOLUTION``
regions of ``solutions/``, the reference functions of ``minigraph/grading/content/chNN.py``, and a few
known snippets).
"""

import ast
import functools
import importlib
import inspect
import json
import re
import textwrap
from pathlib import Path

import nbformat
import pytest

from minigraph.grading import check, generate
from minigraph.grading.toolkit import notebook, registry
from minigraph.grading.toolkit.exercise import CASE_TIME_LIMIT, grade, hint_levels, run_cases
from minigraph.grading.toolkit.report import score_text

ROOT = Path(__file__).resolve().parents[2]
MIN_WRONG, MIN_RIGHT = 5, 2
SECONDS = 6             # CPU seconds per case, 3x check()'s 2 s: a busy machine slows the wall clock, not this


def tables(chapter):
    """The chapter's (WRONG, RIGHT) tables; a missing module fails the chapter's test."""
    module = importlib.import_module(f"exercise_answers.ch{chapter}")
    return module.WRONG, module.RIGHT


def all_answers(kind):
    """(exercise id, answer name) for every answer of every chapter's table of ``kind``."""
    found = []
    for chapter in registry.CHAPTERS:
        try:
            table = tables(chapter)[0 if kind == "wrong" else 1]
        except ModuleNotFoundError:
            continue                     # reported by test_every_exercise_has_its_answers
        found += [(exercise_id, name) for exercise_id, answers in table.items() for name in answers]
    return found


def answer_of(kind, exercise_id, name):
    wrong, right = tables(exercise_id.split(".")[0])
    return wrong[exercise_id][name] if kind == "wrong" else (right[exercise_id][name], ())


@functools.lru_cache(maxsize=None)
def graded(kind, exercise_id, name):
    """The grader's path: run in the "kernel", JSON in between, judge "at home". A wrong answer
    gets the grader's own time limit: one that never finishes costs seconds, not SECONDS each."""
    answer, _ = answer_of(kind, exercise_id, name)
    exercise = registry.find(exercise_id)
    seconds = SECONDS if kind == "right" else CASE_TIME_LIMIT
    records = json.loads(json.dumps(run_cases(exercise, answer, seconds=seconds)))
    return grade(exercise, records)


def timed_out(exercise_id):
    """Did a case of the latest check() run out of time? (Then its table says so instead.)"""
    return any(c.status == "timeout" for c in notebook._latest[exercise_id].cases)


def feedback(result):
    """What the learner reads about the cases that did not pass: each message."""
    return " ".join(c.message for c in result.cases if c.status != "pass") or result.message


# -- the tables are complete ------------------------------------------------------------------

@pytest.mark.parametrize("chapter", list(registry.CHAPTERS))
def test_every_exercise_has_its_answers(chapter):
    try:
        wrong, right = tables(chapter)
    except ModuleNotFoundError:
        pytest.fail(f"chapter {chapter} has exercises but no tests/grading/exercise_answers/ch{chapter}.py "
                    f"with WRONG and RIGHT answers for them")
    ids = [e.id for e in registry.exercises(chapter)]
    assert set(wrong) == set(ids) and set(right) == set(ids), "one entry per exercise, no other"
    for exercise_id in ids:
        assert len(wrong[exercise_id]) >= MIN_WRONG, f"{exercise_id}: fewer than {MIN_WRONG} wrong answers"
        assert len(right[exercise_id]) >= MIN_RIGHT, f"{exercise_id}: fewer than {MIN_RIGHT} right answers"
        for name, entry in wrong[exercise_id].items():
            assert isinstance(entry, tuple) and entry[1], f"{exercise_id} / {name}: no words to look for"


# -- wrong answers fail, naming the mistake; right answers pass ---------------------------------

@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    monkeypatch.setattr(notebook, "_latest", {})


@pytest.mark.parametrize("exercise_id, name", all_answers("wrong"))
def test_a_wrong_answer_fails_with_a_message_naming_the_mistake(exercise_id, name):
    answer, words = answer_of("wrong", exercise_id, name)
    result = graded("wrong", exercise_id, name)
    assert result.status != "passed" and result.score < result.points
    said = feedback(result).lower()
    for word in words:
        assert word.lower() in said, f"{name!r}: {word!r} not in: {feedback(result)}"
    shown = repr(check(exercise_id, answer))
    assert f"({score_text(result.points, result.points)})" not in shown.splitlines()[0]
    if not timed_out(exercise_id):          # check()'s 2 s per case, on a loaded machine
        assert all(word.lower() in shown.lower() for word in words)


@pytest.mark.parametrize("exercise_id, name", all_answers("right"))
def test_a_right_answer_passes(exercise_id, name):
    result = graded("right", exercise_id, name)
    assert result.status == "passed", feedback(result)
    assert result.score == result.points
    answer, _ = answer_of("right", exercise_id, name)
    shown = repr(check(exercise_id, answer)).splitlines()[0]
    assert f"({score_text(result.points, result.points)})" in shown or timed_out(exercise_id)


# -- no hint or message gives the answer's code away ---------------------------------------------

def normal(code):
    """Code compared loosely: no whitespace, one kind of quote."""
    return re.sub(r"\s+", "", code).replace("'", '"')


KNOWN_SNIPPETS = ("g * ans * (1 - ans)", "g * (1 - ans ** 2)", "g*(1-ans**2)", "value - self.lr * grad",
                  "g @ W.T", "x.T @ g", "np.maximum(x, 0)", "mg.unbroadcast(g * y", "mg.unbroadcast(g * x",
                  "node.op.forward(*", "mg.sigmoid(x @ W + b)", "(f(up) - f(down))", "state['v'] = ")
MIN_FRAGMENT = 10           # shorter expressions (``x.T``, ``g * y``) are words, not an answer


def solution_regions():
    """The code between ### BEGIN SOLUTION and ### END SOLUTION in every solution notebook."""
    regions = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            regions += re.findall(r"### BEGIN SOLUTION\n(.*?)\n\s*### END SOLUTION", cell.source, re.S)
    return [textwrap.dedent(region) for region in regions]


def dotted(node):
    """``np.ndindex``, ``graph.nodes``: a name the statement uses too, not code."""
    return isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and dotted(node.value))


def fragments(source, keep=lambda node, parents: True):
    """Every expression of ``source`` (unparsed, normalised) at least MIN_FRAGMENT long."""
    found, tree = set(), ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and not isinstance(node, ast.Constant) and not dotted(node) \
                and keep(node, parents):
            text = normal(ast.unparse(node))
            if len(text) >= MIN_FRAGMENT:
                found.add(text)
    return found


def in_reference(node, parents):
    """Inside a lambda, or inside a function that is not a judge (``answers/chNN.py`` holds
    reference answers, typical mistakes and judges)."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Lambda) or (isinstance(node, ast.FunctionDef) and "judge" not in node.name):
            return True
    return False


@functools.lru_cache(maxsize=None)
def forbidden():
    found = {normal(snippet) for snippet in KNOWN_SNIPPETS}
    for region in solution_regions():
        found |= fragments(region)
    for chapter in registry.CHAPTERS:
        answers = registry.CHAPTERS[chapter].replace(".content.", ".answers.")
        found |= fragments(inspect.getsource(importlib.import_module(answers)), in_reference)
    return frozenset(found)


def leaks(text):
    said = normal(text)
    return sorted(fragment for fragment in forbidden() if fragment in said)


def every_hint():
    for chapter in registry.CHAPTERS:
        for exercise in registry.exercises(chapter):
            for level in hint_levels(exercise.hint):
                yield exercise.id, level
            for each in exercise.cases:
                for level in hint_levels(each.get("hint", "")):
                    yield exercise.id, level


def test_the_reference_code_is_found_and_would_be_caught():
    """The scanner is not empty-handed: it knows the solutions' code and flags the old hints."""
    assert normal("np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))") in forbidden()
    assert normal("g * ans * (1 - ans)") in forbidden() and normal("(g @ W.T, x.T @ g)") in forbidden()
    old_hints = ["σ'(x) = σ(x)·(1 − σ(x)), and ans already holds σ(x): return g * ans * (1 - ans).",
                 "Gradient descent steps against the gradient: return value - self.lr * grad",
                 "an op's from node.op.forward(*[values[p] for p in node.inputs], **node.attrs)."]
    assert all(leaks(hint) for hint in old_hints)
    assert not leaks("A VJP multiplies the local derivative by the upstream gradient g.")


def test_no_hint_contains_reference_code():
    hints = list(every_hint())
    assert len(hints) > 40
    assert [(exercise_id, hint, leaks(hint)) for exercise_id, hint in hints if leaks(hint)] == []


def test_every_exercise_has_a_hint_in_two_different_levels_that_give_no_code():
    """The README's promise: a hint naming the concept, and a sharper one behind "a sharper hint"."""
    exercises = [exercise for chapter in registry.CHAPTERS for exercise in registry.exercises(chapter)]
    assert len(exercises) >= 40
    short = [(exercise.id, levels) for exercise in exercises
             for levels in [hint_levels(exercise.hint)]
             if len(levels) < 2 or len(set(levels)) < len(levels) or not all(map(str.strip, levels))
             or any(leaks(level) for level in levels)]
    assert short == []


def test_no_message_contains_reference_code():
    said = []
    for kind in ("wrong", "right"):
        for exercise_id, name in all_answers(kind):
            result = graded(kind, exercise_id, name)
            # a message may quote what the answer gave (c.got): the learner's own code, not a leak
            said += [(exercise_id, name, c.message.replace(c.got, "") if c.got else c.message)
                     for c in result.cases if c.message]
    assert len(said) > 100
    assert [(exercise_id, name, leaks(message)) for exercise_id, name, message in said
            if leaks(message)] == []


# -- the notebooks: solutions earn every point, the generated exercises none ----------------------

def answers_of(path):
    """What a notebook defines when its code cells run top to bottom (in this process, without
    IPython: magic lines are skipped, and a cell that needs a display and fails is passed over,
    as strict nbval runs every notebook for real)."""
    namespace = {"__name__": "__main__"}
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            code = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
            try:
                exec(compile(code, path.name, "exec"), namespace)
            except Exception:
                pass
    return namespace


@pytest.mark.parametrize("chapter", list(registry.CHAPTERS))
def test_solutions_score_full_marks_and_exercises_zero_on_every_exercise(chapter):
    (solution,) = (ROOT / "solutions").glob(f"{chapter}_*.ipynb")
    solved, stubbed = answers_of(solution), answers_of(ROOT / "exercises" / generate.exercise_name(solution.name))
    for exercise in registry.exercises(chapter):
        right = grade(exercise, run_cases(exercise, solved[exercise.name], seconds=SECONDS))
        assert (right.status, right.score) == ("passed", exercise.points), feedback(right)
        stub = grade(exercise, run_cases(exercise, stubbed[exercise.name]))
        assert (stub.status, stub.score) == ("not_done", 0), feedback(stub)
