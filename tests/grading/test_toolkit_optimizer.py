"""The one optimizer-exercise type (``toolkit/optimizer.py``) of chapters 04 and 06: the same
slip gets the same message, whichever chapter's exercise it is made in."""

import pytest

import minigraph as mg
from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import grade, run_cases


def _forgets_return(self, value, grad, state):
    value - self.lr * grad


def _in_place(self, value, grad, state):
    value -= self.lr * grad
    return value


def _returns_text(self, value, grad, state):
    return "new value"


@pytest.mark.parametrize("update", [_forgets_return, _in_place, _returns_text])
def test_the_same_mistake_gets_the_same_message_in_chapters_04_and_06(update):
    messages = []
    for exercise_id in ("04.gd", "06.adagrad"):
        exercise = registry.find(exercise_id)
        settings = exercise.cases[0]["settings"]

        def __init__(self, params, **given):
            mg.optim.Optimizer.__init__(self, params, given.pop("lr"))
            vars(self).update(given)

        answer = type(exercise.name, (mg.optim.Optimizer,), {"__init__": __init__, "update": update})
        result = grade(exercise, run_cases(exercise, answer))
        assert result.status == "failed" and set(settings) >= {"lr"}
        messages.append({case.message for case in result.cases})
    assert len(messages[0]) == 1 and messages[0] == messages[1]
