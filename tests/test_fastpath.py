"""The fast path (fastpath.py) when an op fails in the generated backward: the op runs once, and
the error is the one the interpreter raises for the same failure, word for word."""

import re

import numpy as np
import pytest

import minigraph as mg
from minigraph.graph import Callbacks


def flaky(fail_on, calls):
    """An op y = x * w whose forward or VJP (``fail_on``: "forward", "vjp_x", "vjp_w") fails on
    its second call (raises, returns None, or a gradient of the wrong shape); ``calls`` counts
    the calls of each."""
    def counted(part, result, failure):
        def call(*args):
            calls[part] = calls.get(part, 0) + 1
            if part == fail_on[0] and calls[part] == 2:
                return failure(*args)
            return result(*args)
        return call

    def raises(*args):
        raise fail_on[1]("a learner's bug")

    failures = {"raise": raises, "none": lambda *args: None,
                "shape": lambda *args: np.ones(7)}
    failure = failures[fail_on[2]]
    return mg.defop("flaky", counted("forward", lambda x, w: x * w, failure),
                    [counted("vjp_x", lambda g, ans, x, w: g * w, failure),
                     counted("vjp_w", lambda g, ans, x, w: g * x, failure)])


def second_backward(fail_on, interpreted):
    """Two backwards of sum(tanh(flaky(x, w))), the second fed a new x; the interpreter does
    both if ``interpreted`` (a hook watches), else the generated code does the second. Returns
    the calls of each part of the op in the second backward, and the error it raised."""
    calls = {}
    x, w = mg.Input("x"), mg.Parameter([0.5, -1.0, 2.0], name="w")
    y = flaky(fail_on, calls)(x, w, name="y")
    graph = mg.Graph(mg.sum(mg.tanh(y, name="t"), name="loss"))
    if interpreted:
        graph.register_forward_hook(lambda node, inputs, out: None)
    graph.backward({x: [1.0, 2.0, 3.0]})
    first = dict(calls)
    with pytest.raises(mg.GraphError) as raised:
        graph.backward({x: [3.0, 2.0, 1.0]})
    assert bool(graph._fast_path.runs) != interpreted      # which one ran the second backward
    return {part: n - first.get(part, 0) for part, n in calls.items()}, raised.value


FAILURES = [("forward", RuntimeError, "raise"), ("forward", ValueError, "raise"),
            ("forward", mg.BadValueError, "raise"), ("forward", None, "none"),
            ("vjp_x", RuntimeError, "raise"), ("vjp_w", ZeroDivisionError, "raise"),
            ("vjp_w", None, "none"), ("vjp_x", None, "shape")]


@pytest.mark.parametrize("fail_on", FAILURES, ids=[f"{a}-{b.__name__ if b else c}" for a, b, c in FAILURES])
def test_an_op_that_fails_in_generated_code_runs_once_and_is_explained_as_by_the_interpreter(fail_on):
    fast_calls, fast_error = second_backward(fail_on, interpreted=False)
    slow_calls, slow_error = second_backward(fail_on, interpreted=True)
    assert fast_calls[fail_on[0]] == 1 and fast_calls == slow_calls
    assert type(fast_error) is type(slow_error) and str(fast_error) == str(slow_error)
    assert "'y'" in str(fast_error) and "flaky" in str(fast_error)
    if fail_on[2] == "raise":                    # the op's own error, explained: phase and input named
        phase = "forward" if fail_on[0] == "forward" else \
            f"backward (the gradient for input '{fail_on[0][-1]}')"
        assert str(fast_error).startswith(f"{phase} of 'y' = flaky(x (input) shape (3,), w (parameter)")
        assert fast_error.__suppress_context__       # raised `from None`, as the interpreter does


def test_generated_code_that_fails_outside_any_op_leaves_the_call_to_the_interpreter(monkeypatch):
    """A bug of the code writer (here: a function that raises at once) is no learner's error: the
    interpreter does the call."""
    def broken(plan):
        def run(feed, seed):
            raise NameError("a bug of the code writer")
        run.op_lines = {}
        return run
    monkeypatch.setattr(mg.codegen, "backward_function", broken)
    w = mg.Parameter([1.0, 2.0], name="w")
    g = mg.Graph(mg.sum(w * w))
    assert [g.backward() for _ in range(3)] == [5.0] * 3 and np.array_equal(w.grad, [2.0, 4.0])
    assert g._fast_path.runs                     # the generated function was there, and failed


def test_failed_op_names_the_line_of_the_op_that_raised():
    x = mg.Input("x")
    boom = mg.defop("boom", lambda a: a + 1, [lambda g, ans, a: 1 / np.zeros(0)[0]])
    g = mg.Graph(mg.sum(boom(mg.exp(x, name="e"), name="b"), name="s"))
    run = mg.codegen.backward_function(g.plan())
    with pytest.raises(IndexError) as raised:
        run({x: [1.0]}, None)
    node, k = mg.codegen.failed_op(run, raised.value)
    assert (node.name, k) == ("b", 0)
    assert mg.codegen.failed_op(run, ValueError("raised elsewhere")) is None


def test_the_generated_code_calls_back_only_the_plans_callbacks():
    """Both ends name the same helpers: every ``_name(...)`` the generated backward calls is a
    field of ``graph.Callbacks`` (or the builtin ``type``), and a graph with every kind of step
    (a multi-output op, a node used twice, a gradient to check) calls each of them."""
    a, b, unused = mg.split(mg.Parameter([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], name="v"), 3)
    x = mg.Input("x")
    g = mg.Graph(mg.sum(a * b * a + x, name="loss"))
    called = set(re.findall(r"\b(_[a-z]+)\(", mg.codegen.source(g))) - {"_run"}    # (its own def)
    assert called == {f"_{name}" for name in Callbacks._fields} | {"_type"}
    assert {"_store", "_checked", "_fill", "_give"} <= called
