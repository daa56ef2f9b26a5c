"""Chapter 04's tools for the notebook: train a recipe for the disk as the check does.

``try_recipe(disk_recipe)`` in ``solutions/04_learning.ipynb`` shows what the check of
``04.disk_recipe`` will measure; the check itself (``content/ch04.py``) trains with
``train_recipe``, so the two always agree.
"""

import functools
from dataclasses import dataclass

import numpy as np

import minigraph as mg

STEPS = 1500                     # the step budget: full-batch steps on the training points
N_TRAIN, TRAIN_SEED = 400, 0
N_TEST, TEST_SEED = 2000, 2024   # fresh points, never seen in training
MAX_UNITS, MAX_LAYERS = 64, 3


def checked_recipe(answer):
    """Validate a recipe; returns a clean dict or raises ValueError with what is wrong."""
    if not isinstance(answer, dict):
        raise ValueError(f"disk_recipe must be a dict such as {{'hidden': [8], 'activation': 'tanh', "
                         f"'lr': 0.5, 'optimizer': 'gd'}}, not {type(answer).__name__}")
    unknown = set(answer) - {"hidden", "activation", "lr", "optimizer"}
    if unknown:
        raise ValueError(f"unknown key(s) {sorted(unknown)}; use hidden, activation, lr, optimizer")
    hidden = answer.get("hidden")
    if isinstance(hidden, int):
        hidden = [hidden]
    if (not isinstance(hidden, (list, tuple)) or not 1 <= len(hidden) <= MAX_LAYERS
            or not all(isinstance(h, (int, np.integer)) and h >= 1 for h in hidden)):
        raise ValueError(f"'hidden' must be a list of 1 to {MAX_LAYERS} layer sizes (positive "
                         f"integers), such as [8]; got {hidden!r}")
    if sum(hidden) > MAX_UNITS:
        raise ValueError(f"at most {MAX_UNITS} hidden units in all, please; got {sum(hidden)}")
    activation = answer.get("activation", "tanh")
    if activation not in mg.nn.ACTIVATIONS:
        raise ValueError(f"'activation' must be one of {sorted(mg.nn.ACTIVATIONS)}; got {activation!r}")
    optimizer = answer.get("optimizer", "gd")
    if optimizer not in mg.optim.OPTIMIZERS:
        raise ValueError(f"'optimizer' must be one of {sorted(mg.optim.OPTIMIZERS)}; got {optimizer!r}")
    lr = answer.get("lr")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr <= 100:
        raise ValueError(f"'lr' must be a number between 0 and 100; got {lr!r}")
    return {"hidden": [int(h) for h in hidden], "activation": activation, "lr": float(lr),
            "optimizer": optimizer}


@dataclass(frozen=True)
class Training:
    """What training a recipe measured: accuracies, the loss before every step, and the size
    (Euclidean norm) of the gradient of all parameters at the last step."""

    train: float
    test: float
    losses: tuple
    gradient: float = 0.0

    @property
    def loss(self):
        return self.losses[-1] if self.losses else np.inf


@functools.lru_cache(maxsize=64)
def _train(hidden, activation, optimizer, lr, steps):
    X, Y = mg.data.disk(N_TRAIN, seed=TRAIN_SEED)
    x, y = mg.Input("x"), mg.Input("y")
    net = mg.nn.MLP([2, *hidden, 1], activation=activation, rng=0, name="net")
    logits = net(x)
    graph = mg.Graph(mg.bce_with_logits(logits, y, name="loss"))
    step = mg.optim.OPTIMIZERS[optimizer](net.parameters, lr=lr)
    losses = []
    with np.errstate(all="ignore"):
        for _ in range(steps):
            losses.append(float(graph.backward({x: X, y: Y}, wrt=net.parameters)))
            if not np.isfinite(losses[-1]):
                break
            step.step()
        gradient = float(np.sqrt(sum(np.sum(p.grad ** 2) for p in net.parameters)))
        predict = mg.Graph(logits)
        train = mg.nn.binary_accuracy(predict.forward({x: X}), Y)
        X_test, Y_test = mg.data.disk(N_TEST, seed=TEST_SEED)
        test = mg.nn.binary_accuracy(predict.forward({x: X_test}), Y_test)
    return Training(float(train), float(test), tuple(losses), gradient)


def train_recipe(recipe, steps=STEPS):
    """Train a recipe exactly as the check does, and return what it measured (``Training``).

    The network is ``mg.nn.MLP([2, *hidden, 1], activation, rng=0)``, the loss
    ``mg.bce_with_logits``, ``steps`` full-batch steps of the chosen optimizer on
    ``mg.data.disk(400, seed=0)``; the test points are ``mg.data.disk(2000, seed=2024)``.
    Training is deterministic, so the same recipe is trained only once per process.
    """
    r = checked_recipe(recipe)
    return _train(tuple(r["hidden"]), r["activation"], r["optimizer"], r["lr"], steps)


def try_recipe(recipe, steps=STEPS):
    """Train a recipe exactly as the check does; returns (train accuracy, test accuracy, loss)."""
    training = train_recipe(recipe, steps)
    return training.train, training.test, training.loss
