"""Chapter 05 (classifying digits): typical wrong answers and different right answers."""

import numpy as np

import minigraph as mg

from minigraph.losses import softmax_ce_vjp_logits as engine_ce_vjp

from . import wrong
from .ch02 import evaluate_in_order, topo_kahn, topo_recursive, topo_stack
from .ch03 import (backward_deletes_values, backward_reads_node_value, backward_recursive_order,
                   backward_recursive_pull, mul_vjp_by_hand, reverse_order, walked)


def softmax_rows(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def one_hot(labels, k):
    out = np.zeros((len(labels), k))
    out[np.arange(len(labels)), labels] = 1
    return out


# -- 05.softmax_ce_vjp ------------------------------------------------------------------------------

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


def ce_shifts_in_place(g, ans, logits, labels):
    logits -= logits.max(axis=1, keepdims=True)          # changes the caller's array
    return ce_right_vectorised(g, ans, logits, labels)


def ce_by_the_engine(g, ans, logits, labels):
    z, y = mg.Parameter(logits, name="z"), mg.Input("y", dtype=int)
    mg.Graph(mg.softmax_cross_entropy(z, y)).backward({y: labels}, wrt=[z])
    return g * z.grad


def ce_naive_softmax(g, ans, logits, labels):
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return g * (p - one_hot(labels, logits.shape[1])) / len(logits)


def ce_global_max(g, ans, logits, labels):
    e = np.exp(logits - logits.max())                  # one max for the whole batch
    return g * (e / e.sum(axis=1, keepdims=True) - one_hot(labels, logits.shape[1])) / len(logits)


def ce_classes_from_labels(g, ans, logits, labels):
    """The number of classes counted from the labels: right while the batch holds the last class."""
    return g * (softmax_rows(logits) - np.eye(labels.max() + 1)[labels]) / len(logits)


def ce_clipped(g, ans, logits, labels):
    return ce_naive_softmax(g, ans, np.clip(logits, -300, 300), labels)


def batches_float_indices(n, batch_size, seed):
    order = np.random.default_rng(seed).permutation(np.arange(n, dtype=float))
    return [order[i:i + batch_size] for i in range(0, n, batch_size)]


# -- 05.minibatches -----------------------------------------------------------------------------------

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


def batches_shuffle_batch_order(n, batch_size, seed):
    batches = batches_unshuffled(n, batch_size, seed)
    return [batches[i] for i in np.random.default_rng(seed).permutation(len(batches))]


def batches_shuffle_within(n, batch_size, seed):
    rng = np.random.default_rng(seed)
    return [rng.permutation(batch) for batch in batches_unshuffled(n, batch_size, seed)]


def batches_array_split(n, batch_size, seed):
    order = np.random.default_rng(seed).permutation(n)
    return np.array_split(order, -(-n // batch_size))


def batches_float_positions(n, batch_size, seed):
    return [b / n for b in batches_right_slices(n, batch_size, seed)]


# -- 05.confusion_matrix ------------------------------------------------------------------------------

def confusion_loop(labels, predictions, n_classes):
    matrix = np.zeros((n_classes, n_classes), dtype=int)
    for t, p in zip(labels, predictions):
        matrix[t, p] += 1
    return matrix


def confusion_bincount(labels, predictions, n_classes):
    return np.bincount(labels * n_classes + predictions, minlength=n_classes ** 2).reshape(n_classes, n_classes)


def confusion_one_hot_product(labels, predictions, n_classes):
    return one_hot(labels, n_classes).T @ one_hot(predictions, n_classes)


def confusion_fancy(labels, predictions, n_classes):
    matrix = np.zeros((n_classes, n_classes))
    matrix[labels, predictions] += 1
    return matrix


def confusion_nested_lists(labels, predictions, n_classes):
    matrix = [[0] * n_classes for _ in range(n_classes)]
    for t, p in zip(labels, predictions):
        matrix[t][p] += 1
    return matrix


def confusion_codes_in_place(labels, predictions, n_classes):
    labels *= n_classes                       # reuses the caller's array for the pair codes
    labels += predictions
    return np.bincount(labels, minlength=n_classes ** 2).reshape(n_classes, n_classes)


def confusion_from_data(labels, predictions, n_classes):
    k = max(labels.max(), predictions.max()) + 1
    return confusion_loop(labels, predictions, k)


def confusion_rows_normalised(labels, predictions, n_classes):
    counts = confusion_loop(labels, predictions, n_classes)
    return counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)


# -- 05.digits_recipe ---------------------------------------------------------------------------------

def recipe(hidden, activation, optimizer_name, lr, epochs, batch_size):
    return {"hidden": hidden, "activation": activation, "optimizer": optimizer_name, "lr": lr,
            "epochs": epochs, "batch_size": batch_size}


LINEAR_RECIPE = {"hidden": [], "optimizer": "adam", "lr": 0.01, "epochs": 5, "batch_size": 64}


# -- 05.capstone: engines made of a learner's pieces (chapters 02 and 03's answers) ----------------

def tanh_rule(g, ans, x):
    return g * (1 - ans * ans)


def mul_rule(g, ans, x, y):
    return mg.unbroadcast(g * y, np.shape(x)), mg.unbroadcast(g * x, np.shape(y))


def matmul_rule(g, ans, x, W):
    return g @ W.T, x.T @ g


def ce_not_divided(g, ans, logits, labels):
    return g * (softmax_rows(logits) - one_hot(labels, logits.shape[1]))


class Descent(mg.optim.Optimizer):
    def update(self, value, grad, state):
        return value - self.lr * grad


def learners_engine(**changed):
    pieces = {"topo_sort": topo_stack, "evaluate": evaluate_in_order, "backward": walked(reverse_order),
              "tanh_vjp": tanh_rule, "mul_vjp": mul_rule, "matmul_vjp": matmul_rule,
              "softmax_ce_vjp": ce_right_vectorised, "optimizer": Descent}
    return mg.yours.Engine(**{**pieces, **changed})


class MomentumWithoutMomentum:
    """A class of one's own around minigraph's Momentum with momentum 0: GD's very numbers."""

    def __new__(cls, params, lr):
        return mg.optim.Momentum(params, lr=lr, momentum=0)


WRONG = {
    "05.softmax_ce_vjp": {
        "one max for the whole batch": wrong(ce_global_max, "whole batch", "each row"),
        "logits clipped at ±300": wrong(ce_clipped, "clipped"),
        "classes counted from the labels": wrong(ce_classes_from_labels, "logits' second axis",
                                                 "not the largest label + 1"),
        "the engine's rule, from its module": wrong(lambda g, ans, z, y: engine_ce_vjp(g, ans, z, y), "engine's own backward rule", "mg.softmax_cross_entropy.opdef.vjps"),
        "no division by the batch size": wrong(lambda g, ans, z, y: ce_right_vectorised(g, ans, z, y) * len(z),
                                               "batch size"),
        "forgets g": wrong(lambda g, ans, z, y: ce_right_vectorised(1.0, ans, z, y), "upstream gradient g"),
        "sign flipped": wrong(lambda g, ans, z, y: -ce_right_vectorised(g, ans, z, y), "sign"),
        "softmax alone": wrong(lambda g, ans, z, y: g * softmax_rows(z) / len(z), "one-hot"),
        "softmax over columns": wrong(lambda g, ans, z, y: g * (np.exp(z) / np.exp(z).sum(axis=0)
                                                                - one_hot(y, z.shape[1])) / len(z), "axis"),
        "mean over every entry": wrong(lambda g, ans, z, y: ce_right_vectorised(g, ans, z, y) * len(z) / z.size,
                                       "every entry"),
        "sigmoid": wrong(lambda g, ans, z, y: g * (1 / (1 + np.exp(-z)) - one_hot(y, z.shape[1])) / len(z),
                         "sigmoid"),
        "softmax without the max shift": wrong(ce_naive_softmax, "overflow"),
        "shifts the logits in place": wrong(ce_shifts_in_place, "changed its input logits in place"),
        "the engine's own rule": wrong(lambda g, ans, z, y: mg.softmax_cross_entropy.opdef.vjps[0](g, ans, z, y),
                                       "engine's own backward rule"),
        "the engine's backward pass": wrong(ce_by_the_engine, "engine's own backward rule"),
    },
    "05.accuracy": {
        "integer division": wrong(lambda z, y: np.sum(z.argmax(axis=1) == y) // len(y), "integer division"),
        "argmax of the flattened array": wrong(lambda z, y: np.mean(np.argmax(z) == y), "flattened"),
        "ties counted as right": wrong(lambda z, y: np.mean(z[np.arange(len(y)), y] == z.max(axis=1)), "tie", "first"),
        "the label's logit is a largest one": wrong(lambda z, y: np.mean([row[t] >= row.max() for row, t in zip(z, y)]), "tie"),
        "a count": wrong(lambda z, y: np.sum(z.argmax(axis=1) == y), "number of right answers"),
        "divided by the number of logits": wrong(lambda z, y: np.sum(np.argmax(z, 1) == y) / z.size,
                                                 "number of logits", "number of examples"),
        "a percentage": wrong(lambda z, y: 100 * np.mean(z.argmax(axis=1) == y), "percentage"),
        "the error rate": wrong(lambda z, y: np.mean(z.argmax(axis=1) != y), "error rate"),
        "argmin": wrong(lambda z, y: np.mean(z.argmin(axis=1) == y), "argmin"),
        "max instead of argmax": wrong(lambda z, y: np.mean(z.max(axis=1) == y), "position"),
        "one True/False per row": wrong(lambda z, y: z.argmax(axis=1) == y, "one true/false per row"),
    },
    "05.minibatches": {
        "float index arrays": wrong(batches_float_indices, "not integers", "x[batch]"),
        "with replacement": wrong(batches_with_replacement, "without replacement"),
        "drops the last batch": wrong(batches_drop_last, "last, smaller batch"),
        "not shuffled": wrong(batches_unshuffled, "original order"),
        "no seed": wrong(batches_unseeded, "two different orders"),
        "ignores the seed": wrong(batches_seed_ignored, "same order"),
        "equal-sized pieces": wrong(batches_array_split, "batch sizes"),
        "fractions, not indices": wrong(batches_float_positions, "not integers"),
        "only the batches' order shuffled": wrong(batches_shuffle_batch_order, "neighbouring examples"),
        "shuffled within each batch only": wrong(batches_shuffle_within, "neighbouring examples"),
    },
    "05.confusion_matrix": {
        "transposed": wrong(lambda y, p, k: confusion_loop(y, p, k).T, "swapped"),
        "fancy-index +=": wrong(confusion_fancy, "counted once"),
        "fractions": wrong(lambda y, p, k: confusion_loop(y, p, k) / len(y), "fractions"),
        "rows normalised": wrong(confusion_rows_normalised, "divided by its total"),
        "diagonal only": wrong(lambda y, p, k: np.diag(np.diag(confusion_loop(y, p, k))), "diagonal"),
        "size from the data": wrong(confusion_from_data, "n_classes"),
        "pair codes in the labels' array": wrong(confusion_codes_in_place, "changed its input labels in place"),
    },
    "05.digits_recipe": {
        "learning rate far too large": wrong(recipe([128], "relu", "gd", 5.0, 2, 64), "too large"),
        "learning rate far too small": wrong(recipe([32], "relu", "gd", 1e-4, 1, 100), "larger learning rate"),
        "no hidden layer": wrong(LINEAR_RECIPE, "hidden layer"),
        "too few steps": wrong(recipe([64], "sigmoid", "gd", 0.1, 1, 200), "not far enough"),
        "over the epoch budget": wrong(recipe([128], "relu", "adam", 0.001, 50, 64), "from 1 to 5"),
        "too many units": wrong(recipe([1000], "relu", "adam", 0.001, 5, 64), "at most 256"),
        "not a dict": wrong([128, "relu", 0.01], "must be a dict"),
    },
    "05.capstone": {
        "backward overwrites at fan-out": wrong({"engine": learners_engine(backward=walked(reverse_order, add=False)),
                                                 "lr": 0.5}, "parts from minigraph"),
        "softmax rule not divided by n": wrong({"engine": learners_engine(softmax_ce_vjp=ce_not_divided),
                                                "lr": 0.5}, "parts from minigraph"),
        "tanh rule without the square": wrong({"engine": learners_engine(tanh_vjp=lambda g, ans, x: g * (1 - ans)),
                                               "lr": 0.5}, "parts from minigraph"),
        "learning rate far too small": wrong({"engine": learners_engine(), "lr": 0.001}, "too small"),
        "learning rate far too large": wrong({"engine": learners_engine(), "lr": 20.0}, "too large"),
        "minigraph's backward": wrong({"engine": learners_engine(backward=None), "lr": 0.5},
                                      "backward pass (mg.Graph.backward)"),
        "minigraph's tanh rule": wrong({"engine": learners_engine(tanh_vjp=None), "lr": 0.5}, "backward rule of tanh"),
        "minigraph's gradient descent": wrong({"engine": learners_engine(optimizer=mg.optim.GD), "lr": 0.5},
                                              "gradient descent's update"),
        "the engine alone": wrong(learners_engine(), "must be a dict"),
        "tanh rule with x (overflows at about step 55)": wrong(
            {"engine": learners_engine(tanh_vjp=lambda g, ans, x: g * (1 - x ** 2)), "lr": 0.5},
            "parts from minigraph's at step 1"),
        "mul shares swapped (overflows later)": wrong(
            {"engine": learners_engine(mul_vjp=lambda g, ans, x, y: (g * x, g * y)), "lr": 0.5},
            "parts from minigraph's at step 1"),
        "learning rate too small": wrong({"engine": learners_engine(), "lr": 0.1}, "too small",
                                         "losses are minigraph's"),
        "learning rate too small, and a wrong piece": wrong(
            {"engine": learners_engine(softmax_ce_vjp=ce_not_divided), "lr": 0.05}, "too small",
            "parts from minigraph's at step 1"),
        "backward deletes the entries of values": wrong(
            {"engine": learners_engine(backward=backward_deletes_values), "lr": 0.5}, "stopped at step 0",
            "deleted the entry"),
        "backward reads node.value": wrong(
            {"engine": learners_engine(backward=backward_reads_node_value), "lr": 0.5}, "read node.value"),
        # what a piece may not be, however it is reached (the fourth review's)
        "Momentum with momentum 0 (GD's very numbers)": wrong(
            {"engine": learners_engine(optimizer=MomentumWithoutMomentum), "lr": 0.5},
            "Momentum's update (mg.optim.Momentum.update)"),
        "GD wrapped in a class of one's own": wrong(
            {"engine": learners_engine(optimizer=type("Mine", (mg.optim.GD,), {})), "lr": 0.5},
            "gradient descent's update"),
        "a backward that asks mg.grad": wrong(
            {"engine": learners_engine(backward=lambda loss, values: mg.grad(loss, [loss])), "lr": 0.5},
            "gradients (mg.grad)"),
        "topo_sort that is mg.Graph's order": wrong(
            {"engine": learners_engine(topo_sort=lambda output: mg.Graph(output).nodes), "lr": 0.5},
            "topological order (mg.Graph)"),
        "minigraph's evaluate": wrong({"engine": learners_engine(evaluate=None), "lr": 0.5},
                                      "forward pass (mg.Graph.forward)"),
    },
}

RIGHT = {
    "05.softmax_ce_vjp": {"a loop over rows": ce_right_loop, "vectorised": ce_right_vectorised,
                          "through log-softmax": ce_right_log_softmax},
    "05.accuracy": {"mean of a comparison": lambda z, y: np.mean(np.argmax(z, axis=1) == y),
                    "count over length": lambda z, y: (z.argmax(-1) == y).sum() / len(y),
                    "a Python loop": lambda z, y: sum(int(np.argmax(r) == t) for r, t in zip(z, y)) / len(y)},
    "05.minibatches": {"slices of a permutation": batches_right_slices,
                       "a generator over a shuffled range": batches_right_generator},
    "05.confusion_matrix": {"a loop": confusion_loop, "bincount": confusion_bincount,
                            "one-hot product": confusion_one_hot_product,
                            "nested Python lists": confusion_nested_lists},
    "05.digits_recipe": {
        "ReLU + Adam": recipe([128], "relu", "adam", 0.002, 4, 64),
        "ReLU + momentum, two layers": recipe([96, 32], "relu", "momentum", 0.05, 5, 64),
    },
    "05.capstone": {
        "depth-first pieces, lr 0.5": {"engine": learners_engine(), "lr": 0.5},
        "Kahn's order, a recursive backward that starts from zeros, lr 0.3": {
            "engine": learners_engine(topo_sort=topo_kahn, backward=backward_recursive_order,
                                      softmax_ce_vjp=ce_right_log_softmax), "lr": 0.3},
        "a backward that pulls from the consumers, lr 0.8": {
            "engine": learners_engine(backward=backward_recursive_pull,
                                      mul_vjp=mul_vjp_by_hand, topo_sort=topo_recursive), "lr": 0.8},
    },
}
