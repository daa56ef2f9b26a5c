"""Chapter 05's tools for the notebook: train a recipe for the digits as the check does.

``try_recipe(digits_recipe)`` in ``solutions/05_handwritten_digits.ipynb`` shows what the check
of ``05.digits_recipe`` will measure; the check itself (``content/ch05.py``) calls it too.
"""

import numpy as np

import minigraph as mg

MAX_EPOCHS, MAX_UNITS, MAX_LAYERS = 5, 256, 2
RECIPE_KEYS = ("hidden", "activation", "optimizer", "lr", "epochs", "batch_size")
EXAMPLE = "{'hidden': [64], 'activation': 'tanh', 'optimizer': 'gd', 'lr': 0.1, 'epochs': 2, 'batch_size': 100}"


NAMED = {"activation": mg.nn.ACTIVATIONS, "optimizer": mg.optim.OPTIMIZERS}
DEFAULTS = {"hidden": [], "activation": "relu", "optimizer": "gd"}
NUMBERS = {"lr": (float, 0, 100, "a number between 0 and 100"),             # type, above, at most
           "epochs": (int, 0, MAX_EPOCHS, f"a whole number from 1 to {MAX_EPOCHS} (the budget)"),
           "batch_size": (int, 0, 4000, "a whole number from 1 to 4000")}


def checked_recipe(answer):
    """Validate a recipe; returns a clean dict or raises ValueError saying what is wrong."""
    if not isinstance(answer, dict):
        raise ValueError(f"digits_recipe must be a dict such as {EXAMPLE}, not {type(answer).__name__}")
    unknown, missing = set(answer) - set(RECIPE_KEYS), set(NUMBERS) - set(answer)
    if unknown or missing:
        problem = f"unknown key(s) {sorted(unknown)}" if unknown else f"missing key(s) {sorted(missing)}"
        raise ValueError(f"{problem}; a recipe has the keys {', '.join(RECIPE_KEYS)}")
    recipe = {**DEFAULTS, **answer}
    hidden = recipe["hidden"] = [recipe["hidden"]] if isinstance(recipe["hidden"], int) else recipe["hidden"]
    if (not isinstance(hidden, (list, tuple)) or len(hidden) > MAX_LAYERS
            or not all(isinstance(h, (int, np.integer)) and h >= 1 for h in hidden)):
        raise ValueError(f"'hidden' must be a list of at most {MAX_LAYERS} layer sizes (positive integers), "
                         f"such as [64], or [] for no hidden layer; got {hidden!r}")
    if sum(hidden) > MAX_UNITS:
        raise ValueError(f"at most {MAX_UNITS} hidden units in all, please; got {sum(hidden)}")
    for key, table in NAMED.items():
        if recipe[key] not in table:
            raise ValueError(f"'{key}' must be one of {sorted(table)}; got {recipe[key]!r}")
    for key, (kind, above, at_most, what) in NUMBERS.items():
        value = recipe[key]
        allowed = (int, np.integer) if kind is int else (int, float, np.integer, np.floating)
        if isinstance(value, bool) or not isinstance(value, allowed) or not above < value <= at_most:
            raise ValueError(f"'{key}' must be {what}; got {value!r}")
        recipe[key] = kind(value)
    recipe["hidden"] = [int(h) for h in hidden]
    return recipe


def try_recipe(recipe):
    """Train a recipe exactly as the check does; returns (train accuracy, held-out accuracy, losses).

    The network is ``mg.nn.MLP([784, *hidden, 10], activation, rng=0)``, the loss
    ``mg.softmax_cross_entropy``; each epoch visits the 4,000 training images of
    ``mg.data.mnist()`` once in minibatches (shuffled with ``np.random.default_rng(epoch)``);
    ``losses`` holds the loss of every step. The held-out accuracy is measured on the 1,000
    test images, which training never sees.
    """
    from threadpoolctl import threadpool_limits
    recipe = checked_recipe(recipe)
    X, y, X_test, y_test = mg.data.mnist()
    x, labels = mg.Input("x"), mg.Input("labels", dtype=int)
    net = mg.nn.MLP([784, *recipe["hidden"], 10], activation=recipe["activation"], rng=0, name="net")
    logits = net(x)
    graph = mg.Graph(mg.softmax_cross_entropy(logits, labels, name="loss"))
    optimizer = mg.optim.OPTIMIZERS[recipe["optimizer"]](net.parameters, lr=recipe["lr"])
    losses, size = [], recipe["batch_size"]
    # numpy's BLAS would start a thread per core for every small product: slower, here
    with threadpool_limits(1, user_api="blas"), np.errstate(all="ignore"):
        for epoch in range(recipe["epochs"]):
            order = np.random.default_rng(epoch).permutation(len(X))
            for start in range(0, len(X), size):
                batch = order[start:start + size]
                losses.append(float(graph.backward({x: X[batch], labels: y[batch]}, wrt=net.parameters)))
                if not np.isfinite(losses[-1]):
                    break
                optimizer.step()
            if not np.isfinite(losses[-1]):
                break
        scores = mg.Graph(logits)
        train = float(np.mean(scores.forward({x: X}).argmax(axis=1) == y))
        test = float(np.mean(scores.forward({x: X_test}).argmax(axis=1) == y_test))
    return train, test, losses
