"""Hidden cases (``Exercise.hidden``): every generator stays within its statement, in-process.

For each exercise that draws hidden cases (``exercise.with_hidden``):

(a) every right answer (``exercise_answers``' RIGHT tables, written as a learner would) passes
    every hidden case: the first of each table on the cases of ``SEEDS`` seeds, the others
    (written differently, the same maths) on the first ``FEW`` seeds (all of them, for an
    exercise of ``TRAINING``);
(b) a look-up table of the public cases' answers, made by running a right answer on them,
    passes the public cases and fails every hidden case: knowing the public cases (``check()``
    shows them) is worth only their share of the points.

What the typical wrong answers meet in the same draws is ``test_hidden_seeds.py``'s. The list of
exercises without a generator, and why, is ``content/__init__.py``'s docstring; the last test
keeps it in step with the registry.
"""

import re

import numpy as np
import pytest
from hidden_draws import SECONDS, hidden, statuses, tables, with_generator

import minigraph as mg
from minigraph.grading import content
from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import HIDDEN_CASES, grade, run_cases, with_hidden

SEEDS = range(50)
FEW = 10                # seeds for the second and later right answers of a table
TABLE_SEEDS = range(2)  # seeds on which a table of the public answers is graded
# Exercises whose every case trains a network twice (the learner's engine and minigraph's): all
# their right answers get FEW seeds. A right capstone engine gives minigraph's own losses step for
# step, so more seeds would only measure minigraph's accuracy, which the judge holds to the
# public seed (test_content_ch05.py: an unlucky hidden seed).
TRAINING = {"05.capstone"}
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


@pytest.mark.parametrize("exercise_id", with_generator())
def test_every_right_answer_passes_every_hidden_case_of_many_seeds(exercise_id):
    exercise = registry.find(exercise_id)
    for k, (name, answer) in enumerate(tables(exercise_id)[1].items()):
        seeds = SEEDS if k == 0 and exercise_id not in TRAINING else SEEDS[:FEW]
        drawn = [(seed, case) for seed in seeds for case in hidden(exercise, seed)]
        assert len(drawn) == len(seeds) * HIDDEN_CASES
        got = statuses(exercise, answer, [case for _, case in drawn])
        failed = [(seed, status) for (seed, _), status in zip(drawn, got) if status != "pass"]
        assert not failed, f"{name} fails hidden cases (seed, status): {failed[:5]}"


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
    for seed in TABLE_SEEDS:
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
