"""03.backward: the right answers pass 50 seeds of hidden random graphs, the typical wrong ones
fail them (the mistakes every random graph can show, on every seed), and the random graphs reach
what the statement promises (diamonds, a node used twice by one op, a shared Parameter,
broadcasting with a rule that does not sum back, attributes, Constants, an Input of integers,
repeated calls with other values). The tables of answers are ``exercise_answers/ch03.py``."""

import json
from collections import Counter

import numpy as np
import pytest

from minigraph.grading.content.ch03 import backward as exercise
from minigraph.grading.content.ch03 import random_backward_case
from minigraph.grading.toolkit.exercise import grade, run_cases, with_hidden
from minigraph.grading.toolkit.graphs import ancestors

from exercise_answers.ch03 import RIGHT, WRONG

SEEDS = range(50)
SECONDS = 6             # CPU seconds per case, 3x check()'s 2 s: a busy machine slows the wall clock, not this


def hidden(seed):
    return with_hidden(exercise, seed)[len(exercise.cases):]


def graded(answer, cases):
    records = json.loads(json.dumps(run_cases(exercise, answer, seconds=SECONDS, cases=cases)))
    return grade(exercise, records, cases)


@pytest.mark.parametrize("name", RIGHT["03.backward"])
def test_every_right_answer_passes_50_seeds_of_hidden_graphs(name):
    cases = [case for seed in SEEDS for case in hidden(seed)]
    result = graded(RIGHT["03.backward"][name], cases)
    failed = [(c.input, c.message) for c in result.cases if c.status != "pass"]
    assert not failed, failed[:2]


# what every hidden graph shows: each has an Input of integers, a number stretched by bias_add that
# also feeds a product, and two calls with other values; values and .value are always there
EVERY_SEED = ("deletes the entries of values", "reads node.value", "a memo at the top of the notebook",
              "summed over axis 0", "summed back after adding", "zeros_like, then +=", "no unbroadcast",
              "seeded with 0", "seeded with the loss", "forward order", ".grad never set", "keyed by names")


@pytest.mark.parametrize("name", WRONG["03.backward"])
def test_every_typical_wrong_answer_fails_most_seeds_of_hidden_graphs(name):
    answer, words = WRONG["03.backward"][name]
    results = [graded(answer, hidden(seed)) for seed in SEEDS[:10]]
    caught = [result.status != "passed" for result in results]
    assert np.mean(caught) >= (1.0 if name in EVERY_SEED else 0.6), \
        f"{name}: caught on {sum(caught)} of {len(caught)} seeds"
    if name in EVERY_SEED:             # and named there, as in the public cases
        said = " ".join(c.message for result in results for c in result.cases if c.status != "pass").lower()
        assert all(word.lower() in said for word in words), f"{name}: {words} not in {said[:300]}"


def test_the_random_graphs_reach_every_promise_of_the_statement():
    rng, seen = np.random.default_rng(0), Counter()
    for _ in range(200):
        case = random_backward_case(rng)
        spec, used = case["spec"], set(ancestors(case["spec"], "loss"))
        rows = [row for row in spec if row[0] in used and row[1] not in ("input", "parameter", "constant")]
        consumers = Counter(name for row in rows for name in row[2:] if isinstance(name, str))
        seen["diamond"] += any(times > 1 for name, times in consumers.items() if name not in ("W", "b", "c"))
        seen["one op uses a node twice"] += any(len(row) == 4 and row[2] == row[3] for row in rows)
        seen["W in two matmuls"] += sum(row[1] == "matmul" for row in rows) > 1
        seen["bias_add"] += any(row[1] == "bias_add" for row in rows)
        seen["sum with attributes"] += any(isinstance(row[-1], dict) for row in rows)
        seen["a Constant"] += "c" in used
        seen["b of (1, m)"] += any(row[0] == "b" and np.ndim(row[2]) == 2 for row in spec) and "b" in used
        seen["n = 1"] += np.shape(case["feed"]["X"])[0] == 1 if "X" in case["feed"] else 0
    every = [random_backward_case(rng) for _ in range(50)]
    assert all(case["again"] and case["spec"][0] == ["X", "input", "int"] for case in every)
    assert all(["h2", "bias_add", "h1", "s"] in case["spec"] and ["ss", "mul", "s", "s"] in case["spec"]
               for case in every)
    assert all(seen[what] >= 20 for what in ("diamond", "one op uses a node twice", "W in two matmuls",
                                             "bias_add", "sum with attributes", "a Constant",
                                             "b of (1, m)", "n = 1")), seen


def test_a_right_answer_is_judged_on_every_node_and_on_both_calls():
    result = graded(RIGHT["03.backward"]["reverse of mg.Graph(loss).nodes"], exercise.cases)
    assert result.status == "passed"
    again = next(c for c in result.cases if "called twice" in c.input)
    assert again.expected == "7 gradients, on both calls"
    deep = next(c for c in result.cases if "chain of 300" in c.input)
    assert deep.expected == "302 gradients"


def test_a_mistake_that_spoils_several_cases_is_explained_once_in_the_table():
    from minigraph.grading import check
    shown = check("03.backward", WRONG["03.backward"]["overwrites at fan-out"][0])
    paragraph = "where a node feeds several ops (or one op twice), its gradient is the sum"
    for text in (shown.text, shown.html):
        assert text.count(paragraph) == 1
        assert text.count("overwritten at fan-out (as in case 2) (node '") >= 5
    none = check("03.backward", WRONG["03.backward"]["forgot return"][0]).text
    assert none.count("did you forget `return`?") == 1 and "the same as case 1" in none
