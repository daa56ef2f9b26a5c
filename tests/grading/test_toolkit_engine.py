"""The engine rule (``toolkit/engine.py``): the engine's own functions refuse while an answer
runs, however they were reached, and are given back whole afterwards, whatever the answer did."""

import gc
import importlib
import sys
import time
import types

import numpy as np
import pytest

import minigraph as mg
from minigraph.grading.toolkit import engine
from minigraph.grading.toolkit.exercise import Exercise, Rule, Verdict, function_exercise, grade, run_cases

RELU = engine.refused(engine.forward_of(mg.relu))


def relu_exercise(**settings):
    return function_exercise("99.relu", "relu", lambda x: np.maximum(x, 0), [{"inputs": {"x": [-1.0, 2.0]}}],
                             points=1, engine=RELU, **settings)


def statuses(exercise, answer, seconds=2.0):
    records = run_cases(exercise, answer, seconds)
    return [r["status"] for r in records], " ".join(r.get("message", "") for r in records)


def test_a_function_kept_before_the_check_refuses_and_is_given_back_afterwards():
    kept, code = mg.relu.opdef.forward, mg.relu.opdef.forward.__code__
    status, message = statuses(relu_exercise(), lambda x: kept(x))
    assert status == ["error"]
    assert message.startswith("relu calls the engine's own forward function of relu (mg.relu.opdef.forward), "
                              "which is what this exercise asks you to write")
    assert kept.__code__ is code and list(kept(np.array([-1.0, 2.0]))) == [0.0, 2.0]


@pytest.mark.parametrize("hidden", [False, True], ids=["kept", "set aside by gc.freeze"])
def test_a_function_made_from_the_engines_code_before_the_check_refuses_too(hidden):
    original = mg.relu.opdef.forward
    copy = types.FunctionType(original.__code__, original.__globals__, "mine", None, original.__closure__)
    if hidden:                          # the permanent generation, which gc.get_referrers does not search
        gc.freeze()
    status, message = statuses(relu_exercise(), lambda x: copy(x))
    assert status == ["error"] and "the engine's own forward function of relu" in message
    assert copy.__code__ is original.__code__ and list(copy(np.array([-1.0, 2.0]))) == [0.0, 2.0]
    assert statuses(relu_exercise(), lambda x: np.maximum(x, 0.0))[0] == ["ran"]     # numpy is fine


def test_another_module_path_refuses_too():
    from minigraph.graph import topological_order
    walk = Exercise("99.walk", "walk", 1, ({"inputs": {}},), lambda answer, case: len(answer()),
                    lambda case, got: Verdict(True), engine=engine.refused(
                        {"mg.graph.topological_order": "graph walk"}, advice="walk it yourself"))
    x = mg.Input("x")
    status, message = statuses(walk, lambda: topological_order([mg.tanh(x)]))
    assert status == ["error"] and "(mg.graph.topological_order)" in message
    status, message = statuses(walk, lambda: mg.Graph(mg.tanh(x)).nodes)     # the engine's entry point
    assert status == ["error"] and message.endswith("walk it yourself")
    assert len(mg.Graph(mg.tanh(x)).nodes) == 2                               # given back


def test_the_checks_own_use_of_the_engine_around_the_answer_is_not_refused():
    def run(answer, case):
        before = mg.relu.opdef.forward(np.array([-1.0]))      # the check itself, outside the answer
        return [float(v) for v in answer(np.array([-2.0]))] + [float(before[0])]

    exercise = Exercise("99.own", "relu", 1, ({"inputs": {}},), run, lambda case, got: Verdict(True), engine=RELU)
    assert statuses(exercise, lambda x: np.maximum(x, 0))[0] == ["ran"]


@pytest.mark.parametrize("ending", ["raises", "exits", "times out"])
def test_everything_is_given_back_however_the_answer_ends(ending):
    code = mg.relu.opdef.forward.__code__

    def answer(x):
        with pytest.raises(Rule):
            mg.relu.opdef.forward(x)
        if ending == "raises":
            raise ValueError("mine")
        if ending == "exits":
            sys.exit(3)
        time.sleep(5)

    status, _ = statuses(relu_exercise(), answer, seconds=0.3)
    assert status == ["timeout" if ending == "times out" else "error"]
    assert mg.relu.opdef.forward.__code__ is code


def test_a_class_answer_refuses_during_the_whole_case():
    class Mine(mg.optim.Adam):
        pass

    from minigraph.grading.toolkit.optimizer import optimizer_exercise, own_update, twin_case
    exercise = optimizer_exercise("99.adam", "Mine", 1, [twin_case("Mine", {"lr": 0.1}, 0.0, [1.0], [-0.1])],
                                  mistakes={}, hint="", engine=own_update(mg.optim.Adam))
    result = grade(exercise, run_cases(exercise, Mine))
    assert result.status == "failed"
    assert "Mine calls the engine's own Adam update rule (mg.optim.Adam.update)" in result.cases[0].message


def test_a_function_with_free_variables_refuses_and_keeps_its_closure():
    vjp = mg.sigmoid.opdef.vjps[0]
    rule = engine.refused(engine.vjps_of(mg.sigmoid))
    closure, code = vjp.__closure__, vjp.__code__
    with rule.refusing("sigmoid_vjp"), pytest.raises(Rule, match="backward rule of sigmoid"):
        vjp(np.ones(1), np.ones(1) / 2, np.zeros(1))
    assert vjp.__code__ is code and vjp.__closure__ is closure


def test_the_old_copy_of_the_engine_the_batch_grader_replaced_refuses_too(monkeypatch):
    old = {name: module for name, module in sys.modules.items() if name == "minigraph" or name.startswith("minigraph.")}
    kept_old = old["minigraph.ops"].relu.opdef.forward
    for name in old:
        monkeypatch.delitem(sys.modules, name)
    fresh = importlib.import_module("minigraph")
    fresh_engine = importlib.import_module("minigraph.grading.toolkit.engine")
    fresh_rule_class = importlib.import_module("minigraph.grading.toolkit.exercise").Rule
    try:
        fresh_engine.also_in(old)
        assert fresh.relu.opdef.forward is not kept_old
        with fresh_engine.refused(fresh_engine.forward_of(fresh.relu)).refusing("relu"):
            with pytest.raises(fresh_rule_class):
                kept_old(np.ones(1))
            with pytest.raises(fresh_rule_class):
                fresh.relu.opdef.forward(np.ones(1))
        assert list(kept_old(np.array([-1.0]))) == [0.0]
    finally:
        for name in [n for n in sys.modules if n == "minigraph" or n.startswith("minigraph.")]:
            del sys.modules[name]
        sys.modules.update(old)
