"""Hidden cases (``Exercise.hidden``): every generator is held to three promises, in-process.

For each exercise that draws hidden cases, over a few seeds (``exercise.with_hidden``):

(a) a right answer (``exercise_answers``' RIGHT tables, written as a learner would) passes
    every hidden case: the generator stays within the statement;
(b) the typical wrong answers (the WRONG tables) fail at least one hidden case for most seeds:
    the generator's inputs show the mistakes, not only the public cases do;
(c) a look-up table of the public cases' answers, made by running a right answer on them,
    passes the public cases and fails every hidden case: knowing the public cases (``check()``
    shows them) is worth only their share of the points.

The list of exercises without a generator, and why, is ``content/__init__.py``'s docstring;
the last test keeps it in step with the registry.
"""

import importlib
import json
import re

import numpy as np
import pytest

import minigraph as mg
from minigraph.grading import content
from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import CASE_TIME_LIMIT, HIDDEN_CASES, grade, run_cases, with_hidden

SEEDS = range(3)
SECONDS = 6             # CPU seconds per case, 3x check()'s 2 s: a busy machine slows the wall clock, not this
MOST = 0.6              # a wrong answer that fails a hidden case for most seeds: this share of them
NO_TABLE = {                 # exercises whose public cases a table of answers cannot pass either
    "08.softplus_graph_vjp": "the answer gets nodes holding decoys, never the case's values",
    "02.evaluate": "the judge counts the op evaluations the answer makes, and a table makes none",
    "03.backward": "the answer's gradients are keyed by the nodes of a graph built for the case, "
                   "and a table holds the nodes of the graph it was made on",
    "08.second_derivative": "the answer's node is evaluated after the call, at points given to a "
                            "fresh x: a stored node holds another x",
}

NOT_A_FUNCTION = {           # exercises whose answer is not called on a case's inputs: no table to make
    "05.capstone": "the answer is an engine and a learning rate; the case trains a network on them",
}


def with_generator():
    return [exercise.id for chapter in registry.CHAPTERS for exercise in registry.exercises(chapter)
            if exercise.hidden is not None]


def tables(exercise_id):
    module = importlib.import_module(f"exercise_answers.ch{exercise_id.split('.')[0]}")
    return module.WRONG[exercise_id], module.RIGHT[exercise_id]


def hidden(exercise, seed):
    """The hidden cases drawn from ``seed`` (and only those)."""
    return with_hidden(exercise, seed)[len(exercise.cases):]


def statuses(exercise, answer, cases, seconds=SECONDS):
    """The statuses of ``cases``, as the grader judges them."""
    records = json.loads(json.dumps(run_cases(exercise, answer, seconds=seconds, cases=cases)))
    return [c.status for c in grade(exercise, records, cases).cases]


def hidden_statuses(exercise, answer, seed):
    return statuses(exercise, answer, hidden(exercise, seed))


def fails_a_hidden_case(exercise, answer, seed):
    """Does the answer fail a hidden case of ``seed``? Case after case, with the grader's own
    time limit: a wrong walk that never finishes costs seconds, and a wrong answer most often
    a single case (a capstone's case trains for a second)."""
    return any(statuses(exercise, answer, [case], CASE_TIME_LIMIT) != ["pass"] for case in hidden(exercise, seed))


@pytest.mark.parametrize("exercise_id", with_generator())
def test_a_right_answer_passes_every_hidden_case(exercise_id):
    exercise, (name, right) = registry.find(exercise_id), next(iter(tables(exercise_id)[1].items()))
    for seed in SEEDS:
        got = hidden_statuses(exercise, right, seed)
        assert got == ["pass"] * HIDDEN_CASES, f"{name}, seed {seed}: {got}"


@pytest.mark.parametrize("exercise_id", with_generator())
def test_typical_wrong_answers_fail_a_hidden_case_for_most_seeds(exercise_id):
    exercise, wrong = registry.find(exercise_id), tables(exercise_id)[0]
    caught = {name: np.mean([fails_a_hidden_case(exercise, answer, seed) for seed in SEEDS])
              for name, (answer, _) in wrong.items()}
    missed = {name: share for name, share in caught.items() if share < MOST}
    # a mistake that only an edge case of the statement shows (an overflow, a zero) may slip by
    # random inputs; most of them must not
    assert len(missed) <= len(caught) // 3, missed


def looked_up(exercise, right):
    """An answer that returns, for the public cases' inputs, what ``right`` returned on them
    (recorded by running it on them), and None for any other input."""
    table = {}

    def plain(value):
        """Something comparable: arrays as lists, a node as the names below it (a graph
        exercise's answer gets a node of a fresh graph, whose values may not be set yet)."""
        if isinstance(value, (list, tuple)):
            return [plain(each) for each in value]
        if isinstance(value, dict):
            return sorted((repr(plain(k)), plain(v)) for k, v in value.items())
        if isinstance(value, mg.Graph):
            return [node.name for node in value.nodes]
        if isinstance(value, mg.Node):
            seen, todo = set(), [value]
            while todo:
                node = todo.pop()
                if node.name not in seen:
                    seen.add(node.name)
                    todo += node.inputs
            return sorted(seen)
        return np.asarray(value).tolist()

    def key(args, kwargs):
        return repr(plain([*args, *sorted(kwargs.items())]))

    if isinstance(right, type):                 # an optimizer: its update, keyed by the step too
        class Recording(right):
            def update(self, value, grad, state):
                state["step"] = state.get("step", 0) + 1
                out = table[key((value, grad, state["step"]), {})] = super().update(value, grad, state)
                return out

        class LookedUp(right):
            def update(self, value, grad, state):
                state["step"] = state.get("step", 0) + 1
                return table.get(key((value, grad, state["step"]), {}))

        run_cases(exercise, Recording, seconds=SECONDS)
        return LookedUp, len(table)

    def recording(*args, **kwargs):
        out = table[key(args, kwargs)] = right(*args, **kwargs)
        return out

    run_cases(exercise, recording, seconds=SECONDS)
    return lambda *args, **kwargs: table.get(key(args, kwargs)), len(table)


@pytest.mark.parametrize("exercise_id", with_generator())
def test_a_table_of_the_public_answers_passes_them_and_fails_every_hidden_case(exercise_id):
    if exercise_id in NOT_A_FUNCTION:
        pytest.skip(NOT_A_FUNCTION[exercise_id])
    exercise, right = registry.find(exercise_id), next(iter(tables(exercise_id)[1].values()))
    lookup, size = looked_up(exercise, right)
    assert size > 0
    for seed in SEEDS[:2]:
        cases = with_hidden(exercise, seed)
        result = grade(exercise, run_cases(exercise, lookup, seconds=SECONDS, cases=cases), cases)
        public = [c.status for c in result.cases[:len(exercise.cases)]]
        assert public == ["pass"] * len(exercise.cases) or exercise_id in NO_TABLE
        assert "pass" not in [c.status for c in result.cases[len(exercise.cases):]]
        assert result.score < exercise.points


def test_the_exercises_without_hidden_cases_are_listed_with_their_reason():
    without = {exercise.id for chapter in registry.CHAPTERS for exercise in registry.exercises(chapter)
               if exercise.hidden is None}
    listed = set(re.findall(r"``(\d\d\.\w+)``", content.__doc__.split("No hidden cases")[1]))
    assert listed == without
