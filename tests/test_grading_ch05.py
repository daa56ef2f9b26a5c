"""Chapter 05's exercise checks, tested by answers: typical WRONG answers must be rejected with a
message naming the mistake, different RIGHT answers must be accepted.

The tables are data (exercise id -> answers), so a general wrong-answer mechanism can take them
over: ``WRONG[id]`` lists ``(what the mistake is, answer, words the message must contain)``,
``RIGHT[id]`` lists ``(how it is written, answer)``. The words are looked for, case-insensitive, in
the messages of the failing cases (not in the hints, which are the same for every answer).
"""

import numpy as np
import pytest

from minigraph.grading import ch05, registry
from minigraph.grading.exercise import grade, run_cases


# -- answers as learners write them -------------------------------------------------------------

def softmax_rows(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def one_hot(labels, k):
    out = np.zeros((len(labels), k))
    out[np.arange(len(labels)), labels] = 1
    return out


def ce_right_loop(g, ans, logits, labels):
    grad = np.empty_like(logits)
    for i, (row, label) in enumerate(zip(logits, labels)):
        p = np.exp(row - row.max())
        p /= p.sum()
        p[label] -= 1
        grad[i] = p
    return g * grad / len(logits)


def ce_right_vectorised(g, ans, logits, labels):
    p = softmax_rows(logits)
    p[np.arange(len(labels)), labels] -= 1
    return g * p / logits.shape[0]


def ce_right_log_softmax(g, ans, logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return g / len(labels) * (np.exp(log_p) - np.eye(logits.shape[1])[labels])


def ce_naive_softmax(g, ans, logits, labels):
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return g * (p - one_hot(labels, logits.shape[1])) / len(logits)


def batches_right_slices(n, batch_size, seed):
    order = np.random.default_rng(seed).permutation(n)
    return [order[i:i + batch_size] for i in range(0, n, batch_size)]


def batches_right_generator(n, batch_size, seed):
    rng = np.random.RandomState(seed)             # another generator: any shuffle is right
    indices = np.arange(n)
    rng.shuffle(indices)
    while len(indices):
        yield indices[:batch_size]
        indices = indices[batch_size:]


def batches_with_replacement(n, batch_size, seed):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, n, size=min(batch_size, n - i)) for i in range(0, n, batch_size)]


def batches_drop_last(n, batch_size, seed):
    order = np.random.default_rng(seed).permutation(n)
    return [order[i:i + batch_size] for i in range(0, n - batch_size + 1, batch_size)]


def batches_unshuffled(n, batch_size, seed):
    return [np.arange(i, min(i + batch_size, n)) for i in range(0, n, batch_size)]


def batches_unseeded(n, batch_size, seed, _calls=[0]):
    _calls[0] += 1                                # like np.random.permutation without a seed
    return batches_right_slices(n, batch_size, 1000 + _calls[0])


def batches_seed_ignored(n, batch_size, seed):
    return batches_right_slices(n, batch_size, 42)


def batches_array_split(n, batch_size, seed):
    order = np.random.default_rng(seed).permutation(n)
    return np.array_split(order, -(-n // batch_size))


def batches_float_positions(n, batch_size, seed):
    return [b / n for b in batches_right_slices(n, batch_size, seed)]


def confusion_loop(labels, predictions, n_classes):
    matrix = np.zeros((n_classes, n_classes), dtype=int)
    for t, p in zip(labels, predictions):
        matrix[t, p] += 1
    return matrix


def confusion_bincount(labels, predictions, n_classes):
    return np.bincount(labels * n_classes + predictions, minlength=n_classes ** 2).reshape(n_classes, n_classes)


def confusion_fancy(labels, predictions, n_classes):
    matrix = np.zeros((n_classes, n_classes))
    matrix[labels, predictions] += 1
    return matrix


def confusion_from_data(labels, predictions, n_classes):
    k = max(labels.max(), predictions.max()) + 1
    return confusion_loop(labels, predictions, k)


WRONG = {
    "05.softmax_ce_vjp": [
        ("no division by the batch size", lambda g, ans, z, y: ce_right_vectorised(g, ans, z, y) * len(z),
         ["batch size"]),
        ("forgets g", lambda g, ans, z, y: ce_right_vectorised(1.0, ans, z, y), ["upstream gradient g"]),
        ("sign flipped", lambda g, ans, z, y: -ce_right_vectorised(g, ans, z, y), ["sign"]),
        ("softmax alone", lambda g, ans, z, y: g * softmax_rows(z) / len(z), ["one-hot"]),
        ("softmax over columns", lambda g, ans, z, y: g * (np.exp(z) / np.exp(z).sum(axis=0)
                                                           - one_hot(y, z.shape[1])) / len(z), ["axis"]),
        ("mean over every entry", lambda g, ans, z, y: ce_right_vectorised(g, ans, z, y) * len(z) / z.size,
         ["every entry"]),
        ("sigmoid", lambda g, ans, z, y: g * (1 / (1 + np.exp(-z)) - one_hot(y, z.shape[1])) / len(z),
         ["sigmoid"]),
        ("softmax without the max shift", ce_naive_softmax, ["overflow"]),
    ],
    "05.accuracy": [
        ("a count", lambda z, y: np.sum(z.argmax(axis=1) == y), ["number of right answers"]),
        ("a percentage", lambda z, y: 100 * np.mean(z.argmax(axis=1) == y), ["percentage"]),
        ("the error rate", lambda z, y: np.mean(z.argmax(axis=1) != y), ["error rate"]),
        ("argmin", lambda z, y: np.mean(z.argmin(axis=1) == y), ["argmin"]),
        ("max instead of argmax", lambda z, y: np.mean(z.max(axis=1) == y), ["position"]),
    ],
    "05.minibatches": [
        ("with replacement", batches_with_replacement, ["without replacement"]),
        ("drops the last batch", batches_drop_last, ["last, smaller batch"]),
        ("not shuffled", batches_unshuffled, ["original order"]),
        ("no seed", batches_unseeded, ["two different orders"]),
        ("ignores the seed", batches_seed_ignored, ["same order"]),
        ("equal-sized pieces", batches_array_split, ["batch sizes"]),
        ("fractions, not indices", batches_float_positions, ["non-integer"]),
    ],
    "05.confusion_matrix": [
        ("transposed", lambda y, p, k: confusion_loop(y, p, k).T, ["swapped"]),
        ("fancy-index +=", confusion_fancy, ["counted once"]),
        ("fractions", lambda y, p, k: confusion_loop(y, p, k) / len(y), ["fractions"]),
        ("rows normalised", lambda y, p, k: confusion_loop(y, p, k) / np.maximum(
            confusion_loop(y, p, k).sum(axis=1, keepdims=True), 1), ["divided by its total"]),
        ("diagonal only", lambda y, p, k: np.diag(np.diag(confusion_loop(y, p, k))), ["diagonal"]),
        ("size from the data", confusion_from_data, ["n_classes"]),
    ],
    "05.digits_recipe": [
        ("learning rate far too large", {"hidden": [128], "activation": "relu", "optimizer": "gd", "lr": 5.0,
                                         "epochs": 2, "batch_size": 64}, ["too large"]),
        ("learning rate far too small", {"hidden": [32], "activation": "relu", "optimizer": "gd", "lr": 1e-4,
                                         "epochs": 1, "batch_size": 100}, ["larger learning rate"]),
        ("no hidden layer", {"hidden": [], "optimizer": "adam", "lr": 0.01, "epochs": 5, "batch_size": 64},
         ["hidden layer"]),
        ("too few steps", {"hidden": [64], "activation": "sigmoid", "optimizer": "gd", "lr": 0.1,
                           "epochs": 1, "batch_size": 200}, ["not far enough"]),
        ("over the epoch budget", {"hidden": [128], "activation": "relu", "optimizer": "adam", "lr": 0.001,
                                   "epochs": 50, "batch_size": 64}, ["from 1 to 5"]),
        ("too many units", {"hidden": [1000], "activation": "relu", "optimizer": "adam", "lr": 0.001,
                            "epochs": 5, "batch_size": 64}, ["at most 256"]),
        ("not a dict", [128, "relu", 0.01], ["must be a dict"]),
    ],
}

RIGHT = {
    "05.softmax_ce_vjp": [("a loop over rows", ce_right_loop), ("vectorised", ce_right_vectorised),
                          ("through log-softmax", ce_right_log_softmax)],
    "05.accuracy": [("mean of a comparison", lambda z, y: np.mean(np.argmax(z, axis=1) == y)),
                    ("count over length", lambda z, y: (z.argmax(-1) == y).sum() / len(y)),
                    ("a Python loop", lambda z, y: sum(int(np.argmax(r) == t) for r, t in zip(z, y)) / len(y))],
    "05.minibatches": [("slices of a permutation", batches_right_slices),
                       ("a generator over a shuffled range", batches_right_generator)],
    "05.confusion_matrix": [("a loop", confusion_loop), ("bincount", confusion_bincount),
                            ("np.add.at", lambda y, p, k: ch05._confusion(y, p, k))],
    "05.digits_recipe": [
        ("ReLU + Adam", {"hidden": [128], "activation": "relu", "optimizer": "adam", "lr": 0.002,
                         "epochs": 4, "batch_size": 64}),
        ("ReLU + momentum, two layers", {"hidden": [96, 32], "activation": "relu", "optimizer": "momentum",
                                         "lr": 0.05, "epochs": 5, "batch_size": 64}),
    ],
}


def failing_messages(exercise_id, answer):
    exercise = registry.find(exercise_id)
    result = grade(exercise, run_cases(exercise, answer))
    return result, " | ".join(c.message for c in result.cases if c.status != "pass")


def params(table):
    return [pytest.param(exercise_id, *row, id=f"{exercise_id}:{row[0]}")
            for exercise_id, rows in table.items() for row in rows]


SLOW = {"05.digits_recipe"}          # trains a network per answer (about a second or two each)


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
    ids = [e.id for e in registry.exercises("05")]
    assert ids == list(WRONG) == list(RIGHT)
    assert all(len(WRONG[i]) >= 5 and len(RIGHT[i]) >= 2 for i in ids)


def test_the_hints_do_not_contain_code():
    """Hints guide; they never hand over the answer's code (no numpy calls, no assignments)."""
    for exercise in registry.exercises("05"):
        for text in [exercise.hint] + [c.get("hint", "") for c in exercise.cases]:
            assert "np." not in text and " = np" not in text and "return " not in text, (exercise.id, text)


def test_the_recipe_target_is_above_the_best_softmax_classifier_and_reachable():
    """The stated numbers: a 784-128-10 MLP passes, a softmax classifier tuned the same way does not."""
    train, test, losses = ch05.try_recipe(RIGHT["05.digits_recipe"][0][1])
    assert test >= ch05.TARGET > ch05.LINEAR_BEST and losses[-1] < losses[0]
    _, linear, _ = ch05.try_recipe({"hidden": [], "optimizer": "adam", "lr": 0.01, "epochs": 5, "batch_size": 64})
    assert abs(linear - ch05.LINEAR_BEST) < 0.01 and linear < ch05.TARGET


def test_an_unfinished_stub_is_not_done_yet():
    def stub(*args):
        raise NotImplementedError
    for exercise in registry.exercises("05")[:4]:
        assert grade(exercise, run_cases(exercise, stub)).status == "not_done"
