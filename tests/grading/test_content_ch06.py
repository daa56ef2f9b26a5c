"""Chapter 06's checks beyond the answer tables (``tests/grading/exercise_answers/ch06.py``, run by
``tests/grading/test_content_answers.py``): the hand-worked expected values agree with the engine, the
accepted momentum pair is really the fastest, and the messages for an update that returns
nothing or edits its input."""

import numpy as np
import pytest

import minigraph as mg
from exercise_answers.ch06 import WRONG
from minigraph import landscape
from minigraph.grading.content import ch06
from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import grade, run_cases


def test_the_hand_worked_sequences_are_what_the_engines_optimizers_do():
    """The expected values in the cases were worked out by hand; mg.optim must agree with every
    one (so neither the hand arithmetic nor the engine is wrong)."""
    engine = {"06.adagrad": mg.optim.AdaGrad, "06.rmsprop": mg.optim.RMSProp, "06.adam": mg.optim.Adam}
    for exercise_id, cls in engine.items():
        for case in registry.find(exercise_id).cases:
            p = mg.Parameter(case["inputs"]["value"], name="p")
            opt = cls([p], **case["settings"])
            for grad, want in zip(case["inputs"]["grads"], case["expected"]):
                p.grad = np.array(grad, dtype=float)
                opt.step()
                np.testing.assert_allclose(p.value, want, rtol=1e-12, atol=1e-15)
    for case in ch06.cosine.cases:
        s = case["settings"]
        got = [mg.optim.cosine_decay(t, s["total"], s["lr_max"], s["lr_min"]) for t in case["inputs"]["steps"]]
        np.testing.assert_allclose(got, case["expected"], rtol=1e-12, atol=1e-15)


def test_the_best_momentum_pair_is_the_fastest_on_a_fine_grid():
    """The accepted optimum is really optimal: no pair of a fine grid converges faster."""
    lrs, betas = np.meshgrid(np.linspace(1e-4, 0.04, 401), np.linspace(0, 0.99, 400))
    rates = landscape.momentum_rate(lrs, betas, ch06.CURVATURES)
    best = landscape.momentum_rate(*landscape.best_momentum(ch06.CURVATURES), ch06.CURVATURES)
    assert best <= rates.min() + 1e-9
    assert rates.min() < best + 0.001                              # the grid gets close to it


@pytest.mark.parametrize("mistake", ["forgot return", "in place"])
def test_an_update_that_returns_nothing_or_changes_its_input_is_told_so_in_every_case(mistake):
    answer, words = WRONG["06.adagrad"][mistake]
    exercise = registry.find("06.adagrad")
    result = grade(exercise, run_cases(exercise, answer))
    assert result.status == "failed" and all(word in c.message for c in result.cases for word in words)
