"""Chapter 08's exercise checks, beyond what every chapter gets.

The typical wrong answers (each rejected naming its mistake) and the different right answers
(each accepted) live in ``tests/grading/exercise_answers/ch08.py``, and ``tests/grading/test_content_answers.py``
runs them through ``check()`` and the grader, scans hints and messages for reference code and
grades the solution and exercise notebooks. Here: the chapter's own, stricter rule on hints.
"""

from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import hint_levels


def test_the_hints_do_not_contain_code():
    """Hints guide; they never hand over the answer's code (no calls, no assignments)."""
    for exercise in registry.exercises("08"):
        for hint in [*hint_levels(exercise.hint), *(level for c in exercise.cases
                                                     for level in hint_levels(c.get("hint", "")))]:
            for code in ("mg.grad(", "mg.sigmoid(", "np.linalg", "solve(", "=", "return", "lambda"):
                assert code not in hint, f"{exercise.id}: {code!r} in hint {hint!r}"
