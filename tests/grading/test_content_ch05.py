"""Chapter 05's checks beyond the answer tables (``tests/grading/exercise_answers/ch05.py``, run by
``tests/grading/test_content_answers.py``): the hints' wording and the recipe's stated numbers."""

from exercise_answers.ch05 import LINEAR_RECIPE, RIGHT
from minigraph.grading.content import ch05
from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import hint_levels


def test_the_hints_do_not_contain_code():
    """Hints guide; they never hand over the answer's code (no numpy calls, no assignments)."""
    for exercise in registry.exercises("05"):
        for hint in [exercise.hint] + [c.get("hint", "") for c in exercise.cases]:
            for text in hint_levels(hint):
                assert "np." not in text and " = np" not in text and "return " not in text, (exercise.id, text)


def test_the_recipe_target_is_above_the_best_softmax_classifier_and_reachable():
    """The stated numbers: a 784-128-10 MLP passes, a softmax classifier tuned the same way does not."""
    train, test, losses = ch05.try_recipe(RIGHT["05.digits_recipe"]["ReLU + Adam"])
    assert test >= ch05.TARGET > ch05.LINEAR_BEST and losses[-1] < losses[0]
    _, linear, _ = ch05.try_recipe(LINEAR_RECIPE)
    assert abs(linear - ch05.LINEAR_BEST) < 0.01 and linear < ch05.TARGET
