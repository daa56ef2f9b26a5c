"""Chapter 08's exercise checks, tested by answers: typical WRONG answers must be rejected with a
message naming the mistake, different RIGHT answers must be accepted.

``WRONG[id]`` lists ``(what the mistake is, answer, words the message must contain)``,
``RIGHT[id]`` lists ``(how it is written, answer)``. The words are looked for, case-insensitive,
in the messages of the failing cases.
"""

import numpy as np
import pytest

import minigraph as mg
from minigraph.grading import registry
from minigraph.grading.exercise import grade, run_cases


# -- 08.softplus_graph_vjp ----------------------------------------------------------------------

def vjp_sigmoid(g, ans, x):
    return g * mg.sigmoid(x)


def vjp_exp_ratio(g, ans, x):
    return g * mg.exp(x) / (1 + mg.exp(x))


def vjp_from_the_output(g, ans, x):
    return g * (1 - mg.exp(-ans))                 # e^ans = 1 + e^x, so 1 - e^-ans = σ(x)


def vjp_numbers(g, ans, x):
    return np.asarray(g.value) / (1 + np.exp(-np.asarray(x.value)))


def vjp_built_from_values(g, ans, x):
    return mg.Constant(np.asarray(g.value) / (1 + np.exp(-np.asarray(x.value)))) + 0 * x


# -- 08.second_derivative -------------------------------------------------------------------------

def second_twice(f, x):
    return mg.grad(mg.grad(f(x), x), x)


def second_with_lists(f, x):
    y = f(x)
    [dy] = mg.grad(y, [x])
    [d2y] = mg.grad(dy, [x])
    return d2y


def second_first_only(f, x):
    return mg.grad(f(x), x)


def second_squared(f, x):
    d = mg.grad(f(x), x)
    return d * d


def second_f_itself(f, x):
    return f(x)


def second_negated(f, x):
    return -second_twice(f, x)


def second_numbers(f, x):
    return mg.Graph(second_twice(f, x)).forward()


# -- 08.framework_words ----------------------------------------------------------------------------

RIGHT_WORDS = {"Input": "torch.tensor", "Parameter": "nn.Parameter", "Graph.forward": "model(x)",
               "backward(wrt=...)": "torch.autograd.grad", "register_backward_hook": "register_hook"}
OTHER_RIGHT_WORDS = {"Input": "Tensor", "Parameter": "torch.nn.Parameter", "Graph.forward": "model.forward",
                     "backward(wrt=...)": "autograd.grad()", "register_backward_hook":
                     "register_full_backward_hook"}


def words(**changes):
    return {**RIGHT_WORDS, **{k.replace("_", "."): v for k, v in changes.items()}}


# -- 08.newton_step ----------------------------------------------------------------------------------

WRONG = {
    "08.softplus_graph_vjp": [
        ("no g", lambda g, ans, x: mg.sigmoid(x), ["upstream gradient"]),
        ("e^x", lambda g, ans, x: g * mg.exp(x), ["divides by 1 + e"]),
        ("sign", lambda g, ans, x: -g * mg.sigmoid(x), ["sign"]),
        ("σ of the output", lambda g, ans, x: g * mg.sigmoid(ans), ["output"]),
        ("g times the output", lambda g, ans, x: g * ans, ["times the output"]),
        ("numbers, not a node", vjp_numbers, ["not a node"]),
        ("built from .value", vjp_built_from_values, [".value"]),
    ],
    "08.second_derivative": [
        ("grad once", second_first_only, ["first derivative"]),
        ("the square of the first derivative", second_squared, ["squared"]),
        ("f itself", second_f_itself, ["f itself"]),
        ("sign", second_negated, ["sign"]),
        ("numbers, not a node", second_numbers, ["not a node"]),
    ],
    "08.framework_words": [
        ("Input as a Parameter", words(Input="nn.Parameter"), ["placeholder"]),
        ("Parameter as a plain tensor", words(Parameter="torch.tensor"), ["requires_grad"]),
        ("backward(wrt) as loss.backward()", {**RIGHT_WORDS, "backward(wrt=...)": "loss.backward()"},
         ["adds into .grad"]),
        ("forward as backward", words(Graph_forward="loss.backward()"), ["only computes values"]),
        ("a hook as the optimizer", {**RIGHT_WORDS, "register_backward_hook": "optimizer.step"},
         ["watches gradients"]),
        ("an entry missing", {k: v for k, v in RIGHT_WORDS.items() if k != "Parameter"}, ["no entry"]),
        ("not a dict", list(RIGHT_WORDS.values()), ["a dict"]),
    ],
    "08.newton_step": [
        ("uphill", lambda g, H, x: x + np.linalg.solve(H, g), ["uphill"]),
        ("gradient step", lambda g, H, x: x - g, ["gradient step"]),
        ("times H", lambda g, H, x: x - H @ g, ["instead of by its inverse"]),
        ("diagonal only", lambda g, H, x: x - g / np.diag(H), ["diagonal"]),
        ("half a step", lambda g, H, x: x - 0.5 * np.linalg.solve(H, g), ["half a step"]),
    ],
}

RIGHT = {
    "08.softplus_graph_vjp": [("g·σ(x)", vjp_sigmoid), ("g·eᕽ/(1 + eᕽ)", vjp_exp_ratio),
                              ("from the output", vjp_from_the_output)],
    "08.second_derivative": [("mg.grad twice", second_twice), ("with lists", second_with_lists)],
    "08.framework_words": [("short words", RIGHT_WORDS), ("other spellings", OTHER_RIGHT_WORDS)],
    "08.newton_step": [("solve", lambda g, H, x: x - np.linalg.solve(H, g)),
                       ("inverse", lambda g, H, x: x - np.linalg.inv(H) @ g)],
}


def failing_messages(exercise_id, answer):
    exercise = registry.find(exercise_id)
    result = grade(exercise, run_cases(exercise, answer))
    return result, " | ".join(c.message for c in result.cases if c.status != "pass")


def params(table):
    return [pytest.param(exercise_id, *row, id=f"{exercise_id}:{row[0]}")
            for exercise_id, rows in table.items() for row in rows]


@pytest.mark.parametrize("exercise_id, mistake, answer, words", params(WRONG))
def test_a_wrong_answer_is_rejected_and_the_message_names_the_mistake(exercise_id, mistake, answer, words):
    result, messages = failing_messages(exercise_id, answer)
    assert result.status == "failed" and result.score < result.points, f"{mistake}: {result.status}"
    for word in words:
        assert word.lower() in messages.lower(), f"{mistake}: {word!r} not in {messages!r}"


@pytest.mark.parametrize("exercise_id, how, answer", params(RIGHT))
def test_a_right_answer_is_accepted(exercise_id, how, answer):
    result, messages = failing_messages(exercise_id, answer)
    assert result.status == "passed" and result.score == result.points, f"{how}: {messages}"


def test_every_exercise_of_the_chapter_has_five_wrong_and_two_right_answers_here():
    ids = [e.id for e in registry.exercises("08")]
    assert ids == list(WRONG) == list(RIGHT)
    assert all(len(WRONG[i]) >= 5 and len(RIGHT[i]) >= 2 for i in ids)


def test_the_hints_do_not_contain_code():
    """Hints guide; they never hand over the answer's code (no calls, no assignments)."""
    for exercise in registry.exercises("08"):
        for hint in [exercise.hint] + [c.get("hint", "") for c in exercise.cases]:
            for code in ("mg.grad(", "mg.sigmoid(", "np.linalg", "solve(", "=", "return", "lambda"):
                assert code not in hint, f"{exercise.id}: {code!r} in hint {hint!r}"


def test_an_unfinished_stub_is_not_done_yet():
    def stub(*args):
        raise NotImplementedError("your code here")

    for exercise in registry.exercises("08"):
        result = grade(exercise, run_cases(exercise, stub))
        assert result.status != "passed" and result.score == 0
