"""Chapter 09's exercise checks, beyond what every chapter gets.

The typical wrong answers (each rejected naming its mistake) and the different right answers
(each accepted) live in ``tests/grading/exercise_answers/ch09.py``, and
``tests/grading/test_content_answers.py`` runs them through ``check()`` and the grader. Here:
``09.carry_state``'s reference against the engine's ``mean_loss``, and its cases against its
mistakes; ``09.temperature``'s floating-point errors, named by what was subtracted before exp.
"""

import numpy as np
import pytest

import minigraph as mg
from minigraph.grading.answers import ch09 as answers
from minigraph.grading.content import ch09
from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import ATOL, MAX_MESSAGE, RTOL, grade, run_cases, with_hidden


def test_the_chapter_is_worth_10_points():
    assert sum(e.points for e in registry.exercises("09")) == 10


@pytest.mark.parametrize("seed", range(20))
def test_the_held_out_loss_reference_is_the_engines_mean_loss_on_one_stream(seed):
    """Any text of 2 to 40 ids, any chunk length (shorter than the text, a divisor of it, longer)."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, ch09.CASE_MODEL["vocab_size"], int(rng.integers(2, 41)))
    steps = int(rng.integers(1, len(ids) + 3))
    model = ch09.case_model(seed)
    assert answers.held_out_loss(model, ids, steps) == pytest.approx(
        mg.charlm.model.mean_loss(model, ids, batch=1, steps=steps), rel=1e-12)


def inputs(case):
    given = case["inputs"]
    return ch09.case_model(given["seed"]), np.asarray(given["ids"]), given["steps"]


def test_the_loss_is_far_from_uniform_so_that_the_state_matters():
    """``case_model``'s weights are scaled up: an untrained model's loss is near ln 6 whatever
    it was given, and mistakes would differ from the answer by little more than the tolerance."""
    for each in ch09.carry_state.cases:
        right, forgetful = (answers.held_out_loss(*inputs(each), forget=forget) for forget in (False, True))
        assert abs(right - forgetful) > 0.01


def test_every_public_case_tells_the_carry_mistakes_apart():
    """On each case, each mistake's value is the answer's or its own: never another mistake's (so
    a failing case names it). Only what a case cannot show (a last chunk as long as the others:
    dropping it or averaging chunk means changes nothing) gives the answer's value."""
    for each in ch09.carry_state.cases:
        right = answers.held_out_loss(*inputs(each))
        values = [float(mistake(*inputs(each))) for mistake in answers.CARRY_MISTAKES.values()]
        wrong = [v for v in values if not np.isclose(v, right, rtol=RTOL, atol=ATOL)]
        assert all(np.sum(np.isclose(v, wrong, rtol=RTOL, atol=ATOL)) == 1 for v in wrong), each
        ids, steps = each["inputs"]["ids"], each["inputs"]["steps"]
        short_last = (len(ids) - 1) % steps != 0
        assert len(wrong) == len(values) - 2 * (not short_last), each


def subtracting(subtracted):
    """A learner's softmax at temperature T that takes ``subtracted`` from the scaled scores."""
    def answer(logits, T):
        e = np.exp(logits / T - subtracted(logits, T))
        return e / e.sum(axis=-1, keepdims=True)
    return answer


@pytest.mark.parametrize("listed, alone, subtracted", ch09.SUBTRACTED, ids=[s[0] for s in ch09.SUBTRACTED])
def test_a_float_error_names_what_was_subtracted_or_lists_it_never_another_alone(listed, alone, subtracted):
    """On the public cases and the hidden ones of 10 seeds, a case the answer fails with a
    floating-point error names its mistake alone, or lists it among others that meet the same
    error there; it never names another alone. Every one is named alone on some case, and the
    largest score before dividing by T on public case 4 (the first that catches it)."""
    exercise, named_alone = ch09.temperature, []
    for seed in range(10):
        cases = exercise.cases if seed == 0 else with_hidden(exercise, seed)[len(exercise.cases):]
        for row, each in zip(grade(exercise, run_cases(exercise, subtracting(subtracted), cases=cases), cases).cases,
                             cases):
            if row.status == "error":
                assert len(row.message) <= MAX_MESSAGE and (alone in row.message or listed in row.message), row.message
                assert not any(other in row.message for _, other, _ in ch09.SUBTRACTED if other != alone), row.message
                named_alone.append((seed, row.index) if alone in row.message else None)
    assert any(named_alone), listed
    if "before dividing by T" in listed:
        assert (0, 4) in named_alone
