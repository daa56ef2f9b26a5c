"""Hidden cases over many seeds: what a typical wrong answer can hope for from the draw.

``test_hidden_cases.py`` holds every generator to its promises on a few seeds; this file draws
``SEEDS`` seeds' worth of hidden cases (``exercise.with_hidden``, ``HIDDEN_CASES`` per seed) for
every exercise that has a generator, and asks two things of them, as the grader judges:

* no typical wrong answer (the WRONG tables of ``exercise_answers``) passes every one of them:
  a mistake that only an edge regime shows (an overflow, rows far apart, a dominant masked key,
  a zero in gamma, a deep graph) must meet that regime among the drawn cases, not only among
  the public ones;
* every right answer (the RIGHT tables) passes every one of them: the first of each table on
  all the seeds, the others (written differently, the same maths) on the first ``FEW`` seeds
  (all of them, for an exercise of ``TRAINING``).

A wrong answer is run case after case until one fails, so most cost a single case; a right
answer runs every case it is given. The seven exercises without a generator are judged otherwise
(``content/__init__.py`` lists them and why: one fixed value, a training recipe judged by
training it, a sampler judged by its statistics, a fixed vocabulary); their public cases hold
their wrong answers, which ``test_content_answers.py`` checks.
"""

import functools
import importlib

import pytest

from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import CASE_TIME_LIMIT, grade, run_cases, with_hidden

SEEDS = range(50)
FEW = 10                # seeds for the second and later right answers of a table
SECONDS = 6             # CPU seconds per case, 3x check()'s 2 s: a busy machine slows the wall clock, not this
# Exercises whose every case trains a network twice (the learner's engine and minigraph's): all
# their right answers get FEW seeds. A right capstone engine gives minigraph's own losses step for
# step, so more seeds would only measure minigraph's accuracy, which the judge holds to the
# public seed (test_content_ch05.py: an unlucky hidden seed).
TRAINING = {"05.capstone"}


def with_generator():
    return [exercise.id for chapter in registry.CHAPTERS for exercise in registry.exercises(chapter)
            if exercise.hidden is not None]


@functools.lru_cache(maxsize=None)
def drawn(exercise_id):
    """The hidden cases of every seed, in one list (the exercise's public cases left out)."""
    exercise = registry.find(exercise_id)
    return [case for seed in SEEDS for case in with_hidden(exercise, seed)[len(exercise.cases):]]


def tables(exercise_id):
    module = importlib.import_module(f"exercise_answers.ch{exercise_id.split('.')[0]}")
    return module.WRONG[exercise_id], module.RIGHT[exercise_id]


def statuses(exercise, answer, cases, seconds=SECONDS):
    return [c.status for c in grade(exercise, run_cases(exercise, answer, seconds, cases), cases).cases]


def first_failure(exercise, answer, cases):
    """The index of the first case the answer does not pass, or None if it passes them all.
    A wrong answer gets the grader's own time limit: one that never finishes (a walk along
    every path of stacked diamonds) costs seconds, not minutes."""
    for index, case in enumerate(cases):
        if statuses(exercise, answer, [case], CASE_TIME_LIMIT) != ["pass"]:
            return index
    return None


@pytest.mark.parametrize("exercise_id", with_generator())
def test_no_typical_wrong_answer_passes_every_hidden_case_of_many_seeds(exercise_id):
    exercise, cases = registry.find(exercise_id), drawn(exercise_id)
    passing = [name for name, (answer, _) in tables(exercise_id)[0].items()
               if first_failure(exercise, answer, cases) is None]
    assert not passing, f"pass all {len(cases)} hidden cases of {len(SEEDS)} seeds: {passing}"


@pytest.mark.parametrize("exercise_id", with_generator())
def test_every_right_answer_passes_every_hidden_case_of_many_seeds(exercise_id):
    exercise, cases = registry.find(exercise_id), drawn(exercise_id)
    per_seed = len(cases) // len(SEEDS)
    for k, (name, answer) in enumerate(tables(exercise_id)[1].items()):
        given = cases if k == 0 and exercise_id not in TRAINING else cases[:FEW * per_seed]
        failed = [(SEEDS[index // per_seed], status)
                  for index, status in enumerate(statuses(exercise, answer, given)) if status != "pass"]
        assert not failed, f"{name} fails hidden cases (seed, status): {failed[:5]}"
