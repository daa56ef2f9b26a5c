"""Datasets: the labels follow their rule, and a seed fixes the points; the embedded Reber
grammar: generated strings, the automaton walk, arrays."""

import numpy as np
import pytest

import minigraph as mg
from minigraph import data


def test_xor_truth_table():
    X, Y = mg.data.xor()
    assert np.array_equal(Y.ravel(), np.logical_xor(X[:, 0], X[:, 1]).astype(float))


def test_disk_labels_follow_the_radius_rule_and_seed():
    X, Y = mg.data.disk(500, seed=3)
    inside = np.hypot(X[:, 0] - 0.5, X[:, 1] - 0.5) < 0.5
    assert X.shape == (500, 2) and np.array_equal(Y.ravel(), inside)
    assert np.array_equal(mg.data.disk(500, seed=3)[0], X)
    assert not np.array_equal(mg.data.disk(500, seed=4)[0], X)


def test_spirals_are_two_balanced_interleaved_classes():
    X, Y = mg.data.spirals(300, seed=0)
    assert X.shape == (300, 2) and Y.mean() == 0.5
    radius = np.hypot(X[:, 0], X[:, 1])          # both arms sweep the same range of radii
    assert abs(np.median(radius[Y.ravel() == 0]) - np.median(radius[Y.ravel() == 1])) < 0.1


def test_digits_come_from_the_bundled_set():
    X, y = mg.data.digits()
    assert X.shape == (1797, 64) and 0 <= X.min() and X.max() <= 1
    assert set(np.unique(y)) == set(range(10))


def test_grid_covers_the_data():
    X = np.array([[0.0, 0.0], [1.0, 2.0]])
    gx, gy, points = mg.data.grid(X, steps=5, margin=0.5)
    assert points.shape == (25, 2) and gx.shape == (5, 5)
    assert points.min(axis=0).tolist() == [-0.5, -0.5] and points.max(axis=0).tolist() == [1.5, 2.5]


def test_mnist_is_the_shipped_stratified_split():
    X_train, y_train, X_test, y_test = mg.data.mnist()
    assert X_train.shape == (4000, 784) and X_test.shape == (1000, 784)
    assert X_train.dtype == np.float64 and 0 <= X_train.min() and X_train.max() == 1.0
    assert np.array_equal(np.bincount(y_train), [400] * 10) and np.array_equal(np.bincount(y_test), [100] * 10)
    assert not np.array_equal(y_train[:400], np.zeros(400))           # shuffled, not sorted by digit
    # no test image is also a training image (the split holds out whole images)
    train_rows = {row.tobytes() for row in X_train}
    assert not any(row.tobytes() in train_rows for row in X_test)
    # every image has ink, and the top row is blank (MNIST centres each digit in its 28x28 box)
    images = np.concatenate([X_train, X_test]).reshape(-1, 28, 28)
    assert images.sum(axis=(1, 2)).min() > 10 and images[:, 0, :].max() == 0
    again = mg.data.mnist()
    assert all(np.array_equal(a, b) for a, b in zip(again, (X_train, y_train, X_test, y_test)))


# -- the embedded Reber grammar ----------------------------------------------------------------

def legal_strings(max_length, embedded):
    """Every legal string up to ``max_length`` symbols, enumerated breadth-first from the
    automaton's table (a different algorithm from reber_walk's coroutine)."""
    inner, frontier = set(), [("B", 0)]
    while frontier:
        string, state = frontier.pop()
        for symbol, nxt in data.REBER_AUTOMATON[state]:
            longer = string + symbol
            if len(longer) + (4 if embedded else 0) > max_length:
                continue
            if nxt is None:
                inner.add(longer)
            else:
                frontier.append((longer, nxt))
    if not embedded:
        return inner
    return {f"B{o}{s}{o}E" for s in inner for o in "TP"}


LEGAL = legal_strings(14, embedded=True)
LEGAL_PLAIN = legal_strings(12, embedded=False)


def mutations(string):
    """Every string one substitution, deletion or insertion away from ``string``."""
    for i in range(len(string) + 1):
        yield string[:i] + string[i + 1:]
        for symbol in data.REBER_SYMBOLS:
            yield string[:i] + symbol + string[i:]
            yield string[:i] + symbol + string[i + 1:]


@pytest.mark.parametrize("embedded", [True, False])
def test_generated_strings_are_legal_and_seeded(embedded):
    for seed in range(5):
        strings = data.reber_strings(200, seed=seed, embedded=embedded)
        assert all(data.is_reber(s, embedded) for s in strings)
        assert strings == data.reber_strings(200, seed=seed, embedded=embedded)
    assert data.reber_strings(50, seed=1) != data.reber_strings(50, seed=2)


def test_every_short_legal_string_is_generated_and_the_two_outer_symbols_are_equally_likely():
    strings = data.reber_strings(20_000, seed=0)
    short = {s for s in strings if len(s) <= 11}
    assert short == {s for s in LEGAL if len(s) <= 11}           # every path of the automaton occurs
    assert abs(np.mean([s[1] == "T" for s in strings]) - 0.5) < 0.02
    assert all(s[1] == s[-2] and s[2] == "B" and s[-3] == "E" for s in strings)


@pytest.mark.parametrize("embedded, legal", [(True, LEGAL), (False, LEGAL_PLAIN)])
def test_is_reber_agrees_with_the_enumeration_on_every_near_miss(embedded, legal):
    limit = max(len(s) for s in legal)
    for string in sorted(legal)[::4]:
        for candidate in mutations(string):
            if len(candidate) <= limit:
                assert data.is_reber(candidate, embedded) == (candidate in legal), candidate


def test_walk_gives_the_legal_next_symbols_then_none_after_a_mistake():
    sets = data.reber_walk("BPBTSXXVVEPE")
    assert sets[0] == {"B"} and sets[1] == {"T", "P"} and sets[2] == {"B"} and sets[3] == {"T", "P"}
    assert sets[10] == {"P"}                                     # the long-range symbol
    assert sets[11] == {"E"} and sets[12] == set()
    bad = data.reber_walk("BPBTSXXVVETE")                         # T instead of the repeated P
    assert bad[10] == {"P"} and bad[11] is None and bad[12] is None
    assert data.reber_next("") == {"B"} and data.reber_next("BX") is None
    assert data.reber_next("BTSSX", embedded=False) == {"X", "S"}


def test_every_prefix_of_a_legal_string_allows_its_next_symbol():
    for string in data.reber_strings(300, seed=3):
        sets = data.reber_walk(string)
        assert all(symbol in sets[t] for t, symbol in enumerate(string))
        assert sets[len(string) - 2] == {string[1]}


def test_arrays_one_hot_inputs_multi_hot_targets_and_a_mask_over_the_padding():
    strings = ["BTBTXSETE", "BPBPVPXTTVVEPE"]
    X, Y, mask = data.reber_arrays(strings)
    assert X.shape == Y.shape == (2, 13, 7) and mask.shape == (2, 13)
    assert mask.sum(axis=1).tolist() == [8, 13]
    for row, string in enumerate(strings):
        sets = data.reber_walk(string)
        for t in range(13):
            if t < len(string) - 1:
                assert data.REBER_SYMBOLS[int(np.argmax(X[row, t]))] == string[t] and X[row, t].sum() == 1
                assert {data.REBER_SYMBOLS[k] for k in np.flatnonzero(Y[row, t])} == sets[t + 1]
            else:
                assert not X[row, t].any() and not Y[row, t].any() and mask[row, t] == 0
    assert data.reber_arrays(strings, length=20)[0].shape == (2, 20, 7)


def test_the_automaton_table_is_a_proper_reber_automaton():
    """Two choices in every state but the last; every state reachable; E only at the end."""
    reachable, frontier = {0}, [0]
    while frontier:
        for _, nxt in data.REBER_AUTOMATON[frontier.pop()]:
            if nxt is not None and nxt not in reachable:
                reachable.add(nxt)
                frontier.append(nxt)
    assert reachable == set(data.REBER_AUTOMATON)
    ends = [(s, sym) for s, pairs in data.REBER_AUTOMATON.items() for sym, nxt in pairs if nxt is None]
    assert ends == [(5, "E")]
    assert all(len(pairs) == 2 for s, pairs in data.REBER_AUTOMATON.items() if s != 5)
    symbols = {sym for pairs in data.REBER_AUTOMATON.values() for sym, _ in pairs}
    assert symbols | {"B"} == set(data.REBER_SYMBOLS)
