"""What ``test_hidden_cases.py`` and ``test_hidden_seeds.py`` share: the exercises that draw
hidden cases, their tables of answers, and how the grader judges an answer on some cases."""

import importlib
import json

from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import grade, run_cases, with_hidden

SECONDS = 6             # CPU seconds per case, 3x check()'s 2 s: a busy machine slows the wall clock, not this


def with_generator():
    """The ids of the exercises that draw hidden cases."""
    return [exercise.id for chapter in registry.CHAPTERS for exercise in registry.exercises(chapter)
            if exercise.hidden is not None]


def tables(exercise_id):
    """``(WRONG, RIGHT)``: the exercise's typical wrong answers and right ones (``exercise_answers``)."""
    module = importlib.import_module(f"exercise_answers.ch{exercise_id.split('.')[0]}")
    return module.WRONG[exercise_id], module.RIGHT[exercise_id]


def hidden(exercise, seed):
    """The hidden cases drawn from ``seed`` (and only those)."""
    return with_hidden(exercise, seed)[len(exercise.cases):]


def statuses(exercise, answer, cases, seconds=SECONDS):
    """The statuses of ``cases``, as the grader judges them (the records cross JSON, as they
    cross from the kernel)."""
    records = json.loads(json.dumps(run_cases(exercise, answer, seconds=seconds, cases=cases)))
    return [c.status for c in grade(exercise, records, cases).cases]
