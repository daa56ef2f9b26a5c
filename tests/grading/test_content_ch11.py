"""Chapter 11's exercise checks, beyond what every chapter gets.

The typical wrong answers (each rejected naming its mistake) and the different right answers
(each accepted) live in ``tests/grading/exercise_answers/ch11.py``, and
``tests/grading/test_content_answers.py`` runs them through ``check()`` and the grader. Here:
what ``11.layer_norm_vjp`` tells two mistakes that a case of one row cannot tell apart, and
the path through the variance with x − μ where x̂ belongs; and the student edition's judge on a
row that barely varies.
"""

import numpy as np

from exercise_answers.ch11 import (layer_norm_centered_in_variance, layer_norm_centered_twice_in_variance,
                                   layer_norm_gamma_keepdims, layer_norm_gamma_not_summed)
from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import grade, run_cases

LAYER_NORM = registry.find("11.layer_norm_vjp")


def one_row(case):
    """Does the case's x hold one row (then a gradient of gamma summed over the rows with their
    axis kept, and one not summed at all, are the same (1, C) array)?"""
    return not case.get("graph") and np.size(case["inputs"]["x"]) == len(case["inputs"]["gamma"])


def messages(answer):
    """(message, one row?) for each public case of 11.layer_norm_vjp."""
    results = grade(LAYER_NORM, run_cases(LAYER_NORM, answer)).cases
    return [(result.message, one_row(case)) for result, case in zip(results, LAYER_NORM.cases)]


def test_a_gradient_of_gamma_summed_with_keepdims_is_told_its_shape_not_that_it_was_not_summed():
    """Several rows: the kept axes are named; one row: the shape's advice, which fits both."""
    said = messages(layer_norm_gamma_keepdims)
    assert all("not summed" not in message for message, _ in said), said
    assert all("kept the axes it was summed over" in message for message, single in said if not single), said
    assert all("axis of length 1 too many" in message and "keepdims=True" in message
               for message, single in said if single), said
    assert sum(single for _, single in said) >= 1 and sum(not single for _, single in said) >= 1


def test_a_gradient_of_gamma_not_summed_is_named_where_it_has_several_rows():
    said = messages(layer_norm_gamma_not_summed)
    assert all(("not summed over the rows" in message) != single for message, single in said), said


def test_x_minus_its_mean_in_the_variance_path_is_never_told_the_path_is_missing():
    """The path is there, σ or σ² times too large: named on every case it fails, but the row
    that barely varies (σ² about 1e-5), where σ² times the term is as good as no term and
    neither mistake is named."""
    for answer, which in ((layer_norm_centered_in_variance, "one x̂"),
                          (layer_norm_centered_twice_in_variance, "both x̂")):
        said = [message for message, _ in messages(answer)]
        assert all("variance is missing" not in message for message in said), said
        named = [f"took the place of {which}" in message for message in said]
        assert sum(named) >= len(said) - 2, said


def test_the_student_editions_judge_accepts_the_right_rule_on_a_row_that_barely_varies():
    """The edition judges a rule against central differences of the forward; a row whose
    spread (0.004) is near √eps bends on the scale of the step, and a step of 1e-4 was off by
    6e-6 (a right answer told it was wrong; once in about 50 fresh draws)."""
    case = {"inputs": {"g": [1.1855, -1.1063, -0.4072, -3.3743], "x": [0.067348, 0.0694455, 0.0749549, 0.0768325],
                       "gamma": [0.0, -0.8821, 0.0, -1.5765]}}
    verdict = LAYER_NORM.public.judge(case, LAYER_NORM.run(LAYER_NORM.reference, case))
    assert verdict.passed, verdict.message
