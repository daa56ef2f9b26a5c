"""Chapter 07's checks beyond the answer tables (``tests/grading/exercise_answers/ch07.py``, run by
``tests/grading/test_content_answers.py``): the chapter's points, the wording of its hints and
mistake messages, and where 07.clip_global_norm's rules and tolerance draw the line."""

import numpy as np

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


def _clip_exercise_on(grads, max_norm):
    """07.clip_global_norm's verdict on one case of its own."""
    return registry.find("07.clip_global_norm"), [{"inputs": {"grads": grads, "max_norm": max_norm}}]


def test_a_clip_that_shares_memory_with_a_gradient_is_refused_and_a_number_read_out_is_not():
    def views(grads, max_norm):                  # g[...] of a 0-d array is a 0-d view
        return [g[...] for g in grads]

    def numbers(grads, max_norm):                # g[()] of a 0-d array is a number: a copy
        return [g[()] if g.ndim == 0 else g.copy() for g in grads]

    exercise, cases = _clip_exercise_on([2.0, [1.0, -1.0]], 10.0)
    refused = grade(exercise, run_cases(exercise, views, cases=cases), cases)
    assert refused.status == "failed" and "or a view of one" in refused.cases[0].message
    assert grade(exercise, run_cases(exercise, numbers, cases=cases), cases).status == "passed"


def test_slicing_a_0d_gradient_to_copy_it_is_told_as_the_view_mistake_not_a_bare_index_error():
    def slices(grads, max_norm):
        return [g[:] for g in grads]

    exercise, cases = _clip_exercise_on([2.0, [1.0, -1.0]], 10.0)
    message = grade(exercise, run_cases(exercise, slices, cases=cases), cases).cases[0].message
    assert "0-d" in message and "view that shares the caller's memory" in message, message
    assert "IndexError" not in message and len(message) <= 300


def test_pytorchs_epsilon_passes_where_the_norm_is_tiny_and_ten_times_it_does_not():
    def guarded(epsilon):
        def clip(grads, max_norm):
            norm = np.sqrt(sum(np.sum(g * g) for g in grads))
            return [g * min(1.0, max_norm / (norm + epsilon)) for g in grads]
        return clip

    exercise, cases = _clip_exercise_on([[0.0003, -0.0004]], 0.0004)     # norm 0.0005
    assert grade(exercise, run_cases(exercise, guarded(1e-6), cases=cases), cases).status == "passed"
    assert grade(exercise, run_cases(exercise, guarded(1e-5), cases=cases), cases).status == "failed"
