"""Hidden cases: what a typical wrong answer can hope for from the draw.

For every exercise that draws hidden cases (``exercise.with_hidden``, ``HIDDEN_CASES`` per
seed), the typical wrong answers (the WRONG tables of ``exercise_answers``), as the grader
judges them:

* fail at least one hidden case for most of ``FEW_SEEDS`` seeds: a learner is graded on the
  draw of one seed, so the generator's inputs must show the mistakes, not only the public
  cases do;
* none passes every hidden case of ``SEEDS`` seeds: a mistake that only an edge regime shows (an
  overflow, rows far apart, a dominant masked key, a zero in gamma, a deep graph) must meet that
  regime among the drawn cases, not only among the public ones.

A wrong answer is run case after case until one fails, with the grader's own time limit (a walk
along every path of stacked diamonds costs seconds, not minutes), so most cost a single case;
each answer's verdict on a seed is computed once for both tests. That right answers pass the
same draws is ``test_hidden_cases.py``'s. The seven exercises without a generator are judged
otherwise (``content/__init__.py`` lists them and why); their public cases hold their wrong
answers, which ``test_content_answers.py`` checks.
"""

import functools

import pytest
from hidden_draws import hidden, statuses, tables, with_generator

from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import CASE_TIME_LIMIT

SEEDS = range(50)
FEW_SEEDS = SEEDS[:3]
MOST = 0.6              # a wrong answer that fails a hidden case for most seeds: this share of them


@functools.lru_cache(maxsize=None)
def fails_a_hidden_case(exercise_id, name, seed):
    """Does the wrong answer ``name`` fail a hidden case of ``seed``? Case after case, with the
    grader's own time limit (a capstone's case trains for a second)."""
    exercise, (answer, _) = registry.find(exercise_id), tables(exercise_id)[0][name]
    return any(statuses(exercise, answer, [case], CASE_TIME_LIMIT) != ["pass"] for case in hidden(exercise, seed))


@pytest.mark.parametrize("exercise_id", with_generator())
def test_typical_wrong_answers_fail_a_hidden_case_for_most_seeds(exercise_id):
    caught = {name: sum(fails_a_hidden_case(exercise_id, name, seed) for seed in FEW_SEEDS) / len(FEW_SEEDS)
              for name in tables(exercise_id)[0]}
    missed = {name: share for name, share in caught.items() if share < MOST}
    # a mistake that only an edge case of the statement shows (an overflow, a zero) may slip by
    # random inputs; most of them must not
    assert len(missed) <= len(caught) // 3, missed


@pytest.mark.parametrize("exercise_id", with_generator())
def test_no_typical_wrong_answer_passes_every_hidden_case_of_many_seeds(exercise_id):
    passing = [name for name in tables(exercise_id)[0]
               if not any(fails_a_hidden_case(exercise_id, name, seed) for seed in SEEDS)]
    assert not passing, f"pass every hidden case of {len(SEEDS)} seeds: {passing}"
