"""Chapter 07's checks beyond the answer tables (``tests/exercise_answers/ch07.py``, run by
``tests/test_exercise_answers.py``): the chapter's points and the wording of its hints and
mistake messages."""

from minigraph.grading import ch07, registry
from minigraph.grading.exercise import hint_levels


def test_the_chapter_is_worth_13_points():
    assert sum(e.points for e in registry.exercises("07")) == 13


def test_hints_and_mistake_messages_never_contain_the_answers_code():
    code_fragments = ["@ W_hh", "x @ W_xh", ".T @", "* (1 - s)", "max_norm / norm", "rng.integers",
                      "np.tanh(", "REBER_AUTOMATON["]
    for exercise in registry.exercises("07"):
        hints = [level for hint in [exercise.hint] + [c.get("hint", "") for c in exercise.cases]
                 for level in hint_levels(hint)]
        hints += [text for text, _ in ch07.STEP_MISTAKES + ch07.TWO_STEP_MISTAKES + ch07.GATE_MISTAKES
                  + ch07.CLIP_MISTAKES]
        leaks = [f for f in code_fragments for h in hints if f in h]
        assert not leaks, f"{exercise.id}: a hint shows code {leaks}"
