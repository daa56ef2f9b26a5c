"""Chapter 07's checks beyond the answer tables (``tests/grading/exercise_answers/ch07.py``, run by
``tests/grading/test_content_answers.py``): the chapter's points and the wording of its hints and
mistake messages."""

from minigraph.grading.answers import ch07 as answers
from minigraph.grading.content import ch07
from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import grade, hint_levels, run_cases


def test_the_chapter_is_worth_13_points():
    assert sum(e.points for e in registry.exercises("07")) == 13


def test_hints_and_mistake_messages_never_contain_the_answers_code():
    code_fragments = ["@ W_hh", "x @ W_xh", ".T @", "* (1 - s)", "max_norm / norm", "rng.integers",
                      "np.tanh(", "REBER_AUTOMATON["]
    for exercise in registry.exercises("07"):
        hints = [level for hint in [exercise.hint] + [c.get("hint", "") for c in exercise.cases]
                 for level in hint_levels(hint)]
        hints += [*answers.STEP_MISTAKES, *answers.TWO_STEP_MISTAKES, *answers.GATE_MISTAKES]
        hints += [text for text, _ in answers.CLIP_MISTAKES]
        leaks = [f for f in code_fragments for h in hints if f in h]
        assert not leaks, f"{exercise.id}: a hint shows code {leaks}"


def test_a_generator_gone_astray_gets_a_short_message_that_still_says_why():
    exercise = next(e for e in registry.exercises("07") if e.name == "reber_generator")
    endless = {"stops too early": lambda rng: "BTBT" + "S" * 100_000,
               "goes on after its final E": lambda rng: "BTBTXSETE" + "E" * 100_000,
               "the automaton allows only": lambda rng: "BTBT" + "S" * 100_000 + "P"}
    for why, generator in endless.items():
        result = grade(exercise, run_cases(exercise, generator))
        assert why in result.message and len(result.message) < 300, result.message[:300]
        assert all(len(c.got) <= 60 for c in result.cases)
        cases = [{"status": "ran", "got": [generator(None)] * ch07.N_STRINGS}] * 2
        assert len(grade(exercise, cases).cases[0].got) <= 60       # the same string each time
