"""check() and progress() in a notebook, and the exercise definitions behind them."""

import re
import sys
import textwrap

import numpy as np
import pytest

import minigraph as mg
import minigraph.grading as grading
from exercise_answers import ch01 as answers_01, ch02 as answers_02, ch03 as answers_03
from minigraph.grading import check, progress
from minigraph.grading.content import ch00
from minigraph.grading.toolkit import notebook, registry
from minigraph.grading.toolkit.exercise import grade, run_cases
from minigraph.grading.toolkit.values import decode, encode, show


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    """Every test starts as a fresh kernel would: no checks run yet."""
    monkeypatch.setattr(notebook, "_latest", {})


def stable_sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def not_done(*args):
    raise NotImplementedError("Replace this line with your solution.")


def rows(text):
    """The table rows of a check's text: case number -> the row's words."""
    return {int(line.split()[0]): line for line in text.splitlines()[2:] if re.match(r"  \d+ ", line)}


# -- what a learner sees --------------------------------------------------------------------

def test_a_passing_check_shows_every_case_passed_and_the_points():
    text = repr(check("00.relu", lambda x: np.maximum(x, 0)))
    assert text.splitlines()[0] == "00.relu  relu(x) — 4 of 4 cases passed  (1 of 1 point)"
    assert text.splitlines()[1].split() == ["case", "result", "input", "expected", "got"]
    assert all(" passed " in row for row in rows(text).values()) and len(rows(text)) == 4
    assert "hint" not in text


def test_a_failing_case_shows_its_input_expected_got_what_is_wrong_and_its_hint():
    text = repr(check("00.relu", lambda x: np.abs(x)))
    assert "0 of 4 cases passed  (0 of 1 point)" in text
    row = rows(text)[2]
    assert "FAILED" in row and "x=[[-1, 2, -3], [4, -5, 6]]" in row
    assert row.index("[[0, 2, 0], [4, 0, 6]]") < row.index("[[1, 2, 3], [4, 5, 6]]")  # expected, then got
    assert "3 of 6 values wrong; at index (0, 0): expected 0, got 1" in text
    assert "hint: relu works on arrays of any shape, entry by entry, and keeps the shape." in text


def test_only_the_failing_cases_count_as_failed():
    text = repr(check("00.relu", lambda x: np.maximum(x, 0) if np.ndim(x) else x))   # wrong for 0-d only
    assert "3 of 4 cases passed  (0.75 of 1 point)" in text
    assert "FAILED" in rows(text)[3] and "x=-7" in rows(text)[3]
    assert [("FAILED" in r) for r in rows(text).values()] == [False, False, True, False]
    assert "expected 0, got -7" in text and "hint: A single number (a 0-d array) is an array too." in text


def test_an_unfinished_stub_or_none_is_not_done_yet_and_shows_no_table():
    for answer in (not_done, None):
        text = repr(check("00.sigmoid", answer))
        assert text.startswith("00.sigmoid  sigmoid(x) — not done yet")
        assert "(0 of 2 points)" in text and "case" not in text


def test_check_never_raises_and_says_what_went_wrong():
    def crashes(x):
        return 1 / 0

    assert "ZeroDivisionError: division by zero" in repr(check("00.relu", crashes))
    assert "ERROR" in rows(repr(check("00.relu", crashes)))[1]
    assert "has shape (1, 5), expected shape (5,)" in repr(check("00.relu", lambda x: np.maximum(x, 0)[None]))
    assert "returned None: did you forget `return`?" in repr(check("00.relu", lambda x: None))
    assert "returned a str, expected an array" in repr(check("00.relu", lambda x: "relu"))
    assert repr(check("00.nope", None)) == (
        "check('00.nope') could not run: no exercise '00.nope'; chapter 00 has: "
        "00.relu, 00.sigmoid, 00.broadcast_shape, 00.sigmoid_vjp")
    assert "no chapter '42'" in repr(check("42.relu", None))


def test_an_answer_that_exits_fails_its_cases_and_the_run_goes_on():
    def exits(x):
        sys.exit("done")

    records = run_cases(ch00.relu, exits)        # in the grader's kernel: later exercises still run
    assert records == [{"status": "error", "message": "SystemExit: done"}] * len(ch00.relu.cases)
    text = repr(check("00.relu", exits))        # check() never raises
    assert text.count("ERROR") == len(ch00.relu.cases) and "SystemExit: done" in text


def test_an_endless_loop_times_out_and_the_other_cases_are_skipped():
    def loops(x):
        while True:
            pass

    text = repr(check("00.relu", loops))
    assert text.count("TIMED OUT") == 4 and "did not finish within 2 s" in text


def test_the_textbook_sigmoid_fails_only_the_overflow_cases_with_the_stability_hint():
    text = repr(check("00.sigmoid", lambda x: 1 / (1 + np.exp(-x))))
    assert "2 of 4 cases passed  (1 of 2 points)" in text
    assert "ERROR" in rows(text)[3] and "FloatingPointError: overflow encountered in exp" in text
    assert "np.where computes both branches" in text
    assert "passed" in repr(check("00.sigmoid", stable_sigmoid)).splitlines()[0]


def test_a_value_exercise_never_reveals_the_answer():
    text = repr(check("00.broadcast_shape", (4, 3)))
    assert "(hidden)" in text and "not the right value" in text and "(3, 4)" not in text
    assert "1 of 1 case passed" in repr(check("00.broadcast_shape", (3, 4)))


# -- gradient exercise ----------------------------------------------------------------------

def test_a_backward_rule_that_forgets_g_is_caught_in_the_graph_at_the_right_node():
    text = repr(check("00.sigmoid_vjp", lambda g, ans, x: ans * (1 - ans)))
    assert "passed" in rows(text)[1]                              # g = 1 hides the mistake ...
    graph_row = rows(text)[4]                                     # ... the graph does not
    assert "FAILED" in graph_row and "in the graph loss = sum(σ(σ(x·w)·v))" in graph_row
    # s2 receives g = 1 from the sum, so its input z2 is still right; s1 receives g != 1
    assert "node 'z1' has the wrong gradient, sent back by 's1'" in text


def test_a_rule_wrong_everywhere_is_reported_at_the_node_nearest_the_loss():
    text = repr(check("00.sigmoid_vjp", lambda g, ans, x: g * ans))
    assert "node 'z2' has the wrong gradient, sent back by 's2'" in text


def test_a_stubbed_rule_inside_the_engine_is_still_not_done():
    assert "not done yet" in repr(check("00.sigmoid_vjp", not_done)).splitlines()[0]


def test_the_right_rule_passes_and_the_judges_expected_gradients_agree_with_gradcheck():
    assert "4 of 4 cases passed  (3 of 3 points)" in repr(check("00.sigmoid_vjp", lambda g, ans, x: g * ans * (1 - ans)))
    graph = ch00.sigmoid_graph([lambda g, ans, x: g * ans * (1 - ans)])
    assert mg.gradcheck.check_graph(graph, {"x": [-1.5, 0.5, 2.0]}).ok


@pytest.mark.parametrize("exercise_id, engine_op", [
    ("00.sigmoid_vjp", mg.sigmoid), ("03.tanh_vjp", mg.tanh), ("03.mul_vjp", mg.mul),
    ("03.matmul_vjp", mg.matmul)])
def test_every_backward_rule_exercise_refuses_the_engines_rule_however_it_was_reached(exercise_id, engine_op):
    def rule_of(table):
        return lambda *args: table()[0](*args) if len(vjps) == 1 else tuple(vjp(*args) for vjp in table())

    vjps = engine_op.opdef.vjps
    codes = [vjp.__code__ for vjp in vjps]
    copied = rule_of(lambda: vjps)                 # the engine's rules, taken before the check
    for answer in (copied, rule_of(lambda: engine_op.opdef.vjps), vjps[0]):
        shown = repr(check(exercise_id, answer))
        assert "engine's own backward rule" in shown and f"mg.{engine_op.opdef.name}.opdef.vjps" in shown
        assert all(c.status != "pass" for c in notebook._latest[exercise_id].cases[:3])
        assert engine_op.opdef.vjps is vjps and [vjp.__code__ for vjp in vjps] == codes   # given back


def test_a_rule_that_forgets_to_unbroadcast_is_caught_in_the_graph_at_the_right_node():
    text = repr(check("03.mul_vjp", lambda g, ans, x, y: (g * y, g * x)))
    assert "FAILED" in rows(text)[5] and "the gradient for y: not summed back" in text
    assert "has shape (3, 2), expected shape (2,)" in text
    assert ("the backward of 'hk' (mul_exercise) returned a gradient (shape (3, 2)) for its input "
            "'k' (parameter, shape (3, 1))") in text
    graph_case = notebook._latest["03.mul_vjp"].cases[4]
    assert (graph_case.expected, graph_case.got) == ("shape (3, 1)", "shape (3, 2)")
    text = repr(check("03.mul_vjp", lambda g, ans, x, y: (g * y, mg.unbroadcast(g * y, np.shape(y)))))
    assert "node 'k' has the wrong gradient, sent back by 'hk' (grad_y of your mul_vjp)" in text


def test_a_patched_engine_in_the_kernel_cannot_make_a_wrong_rule_pass(monkeypatch):
    """The kernel sends only what the rule returned; the grader runs the backward pass itself."""
    real_defop = mg.defop
    with monkeypatch.context() as kernel:           # the engine ignores the learner's rule
        kernel.setattr(mg, "defop", lambda name, forward, vjps, **kw: real_defop(
            name, forward, [lambda g, ans, x: g * ans * (1 - ans)], **kw))
        records = run_cases(ch00.sigmoid_vjp, lambda g, ans, x: g)
    graph_case = grade(ch00.sigmoid_vjp, records).cases[3]
    assert graph_case.status == "fail" and "fewer results than the backward pass needs" in graph_case.message
    forged = [{"status": "ran", "got": {"grads": {}}}] * 4     # anything but the rule's values
    assert all(c.status == "fail" for c in grade(ch00.sigmoid_vjp, forged).cases)


# -- display and progress -------------------------------------------------------------------

def test_displays_are_deterministic_and_escape_html():
    first, second = check("00.relu", lambda x: x), check("00.relu", lambda x: x)
    assert repr(first) == repr(second) and first._repr_html_() == second._repr_html_()
    assert "0x" not in repr(first) + first._repr_html_()
    html = check("00.relu", lambda x: "<b>")._repr_html_()
    assert "&lt;b&gt;" in html and "<b>'" not in html


def test_every_cell_of_the_check_and_progress_tables_is_left_aligned():
    import re
    for shown in (check("00.relu", lambda x: x), progress()):    # a failed check: notes rows too
        filled = re.findall(r"<t[dh]\b[^>]*>(?!</t)", shown._repr_html_())   # not an empty cell
        assert len(filled) > 5 and all('style="text-align:left"' in c for c in filled), filled


def test_progress_adds_up_the_latest_check_of_each_exercise_of_the_chapter():
    assert repr(progress()) == "No checks run yet in this session: run the check(...) cells first."
    check("00.relu", lambda x: x)
    check("00.sigmoid", stable_sigmoid)
    check("00.relu", lambda x: np.maximum(x, 0))                    # the latest check counts
    assert repr(progress()).splitlines() == [
        "Progress in chapter 00 (Warm-up: numpy and one backward rule): 3 of 7 points",
        "  00.relu             1 of 1  passed",
        "  00.sigmoid          2 of 2  passed",
        "  00.broadcast_shape  0 of 1  not checked yet",
        "  00.sigmoid_vjp      0 of 3  not checked yet"]
    assert repr(progress("00")) == repr(progress())
    assert "no chapter '99'" in repr(progress("99"))


# -- definitions, values, robustness --------------------------------------------------------

def test_the_package_docstring_example_defines_a_working_exercise():
    code = grading.__doc__.split("``minigraph/grading/content/ch01.py``::")[1].split("\nthen add")[0]
    module = {}
    exec(textwrap.dedent(code).replace("from ..toolkit.exercise", "from minigraph.grading.toolkit.exercise"), module)
    (exercise,) = module["EXERCISES"]
    right = grade(exercise, run_cases(exercise, lambda x: x * x * x))
    wrong = grade(exercise, run_cases(exercise, lambda x: np.ravel(x) ** 3))     # loses x's shape
    assert (right.status, right.score) == ("passed", 2)
    assert (wrong.status, wrong.score) == ("failed", 1.0)
    assert wrong.cases[1].hint == "A 2-D x: the result keeps x's shape."


def test_every_chapter_in_the_table_loads_and_points_are_declared_with_the_checks():
    for chapter in registry.CHAPTERS:
        exercises = registry.exercises(chapter)
        assert exercises and all(e.points > 0 and e.cases for e in exercises)
    assert sum(e.points for e in registry.exercises("00")) == 7


def test_a_chapter_with_a_duplicate_id_is_refused():
    with pytest.raises(ValueError, match="must be unique"):
        registry._validate("00", [ch00.relu, ch00.relu])


def test_unreadable_results_are_failures_not_crashes():
    assert grade(ch00.relu, "garbage").status == "error"
    result = grade(ch00.relu, [{"status": "ran", "got": {"type": "array", "shape": [9], "data": [1]}},
                               {"status": "ran", "got": 12}, {"status": "??"}, None])
    assert result.status == "failed" and result.score == 0
    assert "could not be read" in result.cases[0].message and "could not be read" in result.cases[1].message
    assert result.cases[2].message == result.cases[3].message == "no readable result for this case"


def test_values_travel_as_json_and_show_the_same_way_every_time():
    array = np.array([[1.5, -0.0], [np.inf, 2e-9]])
    assert np.array_equal(decode(encode(array)), array)
    assert decode(encode(None)) is None and decode(encode(len)).type_name == "builtin_function_or_method"
    assert show(array) == "[[1.5, 0], [inf, 2e-09]]"
    assert show(np.arange(100.0)) == "[0, 1, 2, ..., 97, 98, 99]"
    assert show(np.float64(-0.0)) == "0" and show(3) == "3"
    with pytest.raises(ValueError):
        decode({"type": "array", "shape": [3], "data": [1, 2]})


def test_rebind_points_learner_names_at_the_fresh_engine():
    """After the collector re-imports minigraph, `mg`, `Graph`, `tanh` in the notebook must be
    the fresh objects, so nodes the learner's code builds are nodes to the checks."""
    import sys

    import minigraph as old
    from minigraph.grading.batch.collect import rebind
    namespace = {"mg": old, "Graph": old.Graph, "tanh": old.tanh, "opt": old.optim, "n": 3}
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] == "minigraph"}
    try:
        for name in saved:
            del sys.modules[name]
        import minigraph as fresh
        assert fresh is not old
        rebind(namespace, saved)                 # the old modules, as the collector cell passes them
        assert namespace["mg"] is fresh and namespace["Graph"] is fresh.Graph
        assert namespace["tanh"] is fresh.tanh and namespace["opt"] is fresh.optim
        assert namespace["n"] == 3
        node = namespace["tanh"](namespace["mg"].Input("x"))
        assert isinstance(node, fresh.Node) and not isinstance(node, old.Node)
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "minigraph"]:
            del sys.modules[name]
        sys.modules.update(saved)


# -- feedback that points at the mistake -----------------------------------------------------

def test_a_nearly_right_number_is_shown_with_enough_digits_to_see_the_difference():
    text = repr(check("03.central_difference", answers_03.one_sided))
    assert "expected 0.75, got 0.750002: off by 1.5e-06, more than the" in text


def test_a_hidden_answer_says_which_entries_are_right():
    text = repr(check("01.predict", [6, 8, 40]))
    assert "right: u, v; not right: out" in text and "46" not in text


def test_a_neuron_without_its_sigmoid_is_told_so():
    assert "goes through σ (mg.sigmoid)" in repr(check("01.neuron", answers_01.neuron_without_sigmoid))


def test_waves_that_count_a_twice_used_input_twice_are_told_why_they_stall():
    text = repr(check("02.waves", answers_02.waves_counting_twice))
    assert "c is done, yet e never became ready: e lists c twice in e.inputs" in text


def test_a_failed_disk_recipe_says_whether_the_rate_was_too_small_or_too_large():
    small = repr(check("04.disk_recipe", {"hidden": [3], "activation": "tanh", "optimizer": "gd", "lr": 0.01}))
    large = repr(check("04.disk_recipe", {"hidden": [3], "activation": "tanh", "optimizer": "gd", "lr": 50}))
    assert "raise the learning rate" in small and "still going down" in small
    assert "lower the learning rate" in large
