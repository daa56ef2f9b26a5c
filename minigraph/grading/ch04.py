"""Chapter 04, learning (``solutions/04_learning.ipynb``).

* ``04.gd`` and ``04.momentum``: an optimizer as a strategy, a subclass of
  ``mg.optim.Optimizer`` with one method, ``update(self, value, grad, state)``. ``run`` makes an
  instance of the learner's class, feeds its ``update`` a fixed sequence of gradients for two
  parameters (each with its own ``state`` dict, its value read-only like a real Parameter's) and
  sends back every value; ``judge`` computes the same sequence by hand.
* ``04.bce``: the stable binary cross-entropy from logits, in plain numpy.
* ``04.disk_recipe``: the learner picks a network and a learning rate. ``run`` only sends the
  recipe back; ``judge`` trains it here (fixed seed, fixed step budget) and measures the
  accuracy on fresh points, so nothing computed in the learner's kernel decides the grade.
  ``try_recipe`` runs the same training for a learner who wants to experiment.
"""

import numpy as np

import minigraph as mg

from .exercise import Exercise, Verdict, compare, function_exercise, case
from .values import decode, encode

TITLE = "Learning"


# -- optimizers -------------------------------------------------------------------------------

def _frozen(value):
    array = np.array(value, dtype=float)
    array.flags.writeable = False
    return array


def _optimizer_run(answer, case):
    """Make the learner's optimizer, call its update step by step for two parameters."""
    if not isinstance(answer, type) or not any(c.__name__ == "Optimizer" for c in answer.__mro__):
        raise TypeError(f"{case['cls']} must be a class that subclasses mg.optim.Optimizer, "
                        f"not {type(answer).__name__}")
    params = [mg.Parameter(v, name=f"p{i}") for i, v in enumerate(case["inputs"]["values"])]
    optimizer = answer(params, **case["settings"])
    values = [_frozen(v) for v in case["inputs"]["values"]]
    states = [{} for _ in params]
    history = []
    for step in case["inputs"]["grads"]:                  # one gradient per parameter per step
        for i, grad in enumerate(step):
            out = optimizer.update(values[i], _frozen(grad), states[i])
            values[i] = _frozen(out)
        history.append([encode(v) for v in values])
    return history


def _optimizer_judge(reference):
    def judge(case, got):
        if not isinstance(got, list) or len(got) != len(case["inputs"]["grads"]):
            return Verdict(False, message="the notebook sent no readable results")
        values = [np.array(v, dtype=float) for v in case["inputs"]["values"]]
        states = [{} for _ in values]
        for step, (grads, sent) in enumerate(zip(case["inputs"]["grads"], got), start=1):
            for i, grad in enumerate(grads):
                values[i] = reference(values[i], np.array(grad, dtype=float), states[i], **case["settings"])
                verdict = compare(values[i], decode(sent[i]))
                if not verdict.passed:
                    return Verdict(False, verdict.expected, verdict.got,
                                   f"parameter p{i} after step {step}: {verdict.message}")
        return Verdict(True, f"{len(got)} step{'' if len(got) == 1 else 's'}", "all values right")
    return judge


def _describe_optimizer(case):
    settings = ", ".join(f"{k}={v}" for k, v in case["settings"].items())
    values = ", ".join(f"p{i}={np.array(v).tolist()}" for i, v in enumerate(case["inputs"]["values"]))
    n = len(case["inputs"]["grads"])
    return f"{settings}; start {values}; {n} step{'' if n == 1 else 's'}"


def _gd_reference(value, grad, state, lr):
    return value - lr * grad


def _momentum_reference(value, grad, state, lr, momentum=0.9):
    state["v"] = momentum * state.get("v", 0.0) - lr * grad
    return value + state["v"]


def _optimizer_exercise(id, cls, points, cases, reference, hint):
    """An exercise asking for an optimizer class ``cls`` whose ``update`` follows ``reference``."""
    return Exercise(id, cls, points, cases, _optimizer_run, _optimizer_judge(reference),
                    title=f"{cls}.update(value, grad, state)", hint=hint, describe=_describe_optimizer)


def _optimizer_case(cls, settings, values, grads, hint=""):
    c = {"cls": cls, "settings": settings, "inputs": {"values": values, "grads": grads}}
    if hint:
        c["hint"] = hint
    return c


gd = _optimizer_exercise(
    "04.gd", "MyGD", 2,
    (
        _optimizer_case("MyGD", {"lr": 0.1}, [[1.0, -2.0], 3.0], [[[0.5, 1.0], 2.0]]),
        _optimizer_case("MyGD", {"lr": 0.5}, [[[1.0, 2.0], [3.0, 4.0]], [0.0]],
                        [[[[1.0, 0.0], [0.0, -2.0]], [1.0]], [[[0.5, 0.5], [2.0, 2.0]], [-4.0]]],
                        hint="Each step starts from the value the previous step returned."),
        _optimizer_case("MyGD", {"lr": 0.01}, [5.0, [1.0, 1.0, 1.0]],
                        [[2.0, [1.0, -1.0, 0.0]], [-3.0, [0.0, 2.0, 4.0]], [4.0, [1.0, 1.0, 1.0]]],
                        hint="Use self.lr, the learning rate the optimizer was made with."),
    ),
    _gd_reference,
    hint="Gradient descent steps against the gradient: return value - self.lr * grad (a new "
         "array: a Parameter's value is read-only, so `value -= ...` fails).")

momentum = _optimizer_exercise(
    "04.momentum", "MyMomentum", 3,
    (
        _optimizer_case("MyMomentum", {"lr": 0.1, "momentum": 0.9}, [[1.0, -1.0], 0.0],
                        [[[1.0, 1.0], 1.0]],
                        hint="On the first step there is no velocity yet: v starts at 0, so "
                             "the first step is plain gradient descent."),
        _optimizer_case("MyMomentum", {"lr": 0.1, "momentum": 0.9}, [[0.0, 0.0], 2.0],
                        [[[1.0, -1.0], 1.0]] * 4,
                        hint="Keep the velocity in state (state['v'] = v): each parameter has its "
                             "own state dict, which the optimizer hands back at the next step."),
        _optimizer_case("MyMomentum", {"lr": 0.05, "momentum": 0.5}, [[[1.0, 2.0]], 3.0],
                        [[[[1.0, 0.0]], 2.0], [[[-1.0, 2.0]], -2.0], [[[0.5, 0.5]], 0.0]],
                        hint="Use self.momentum and self.lr, the values the optimizer was made with."),
    ),
    _momentum_reference,
    hint="v = self.momentum * v_previous - self.lr * grad (v_previous = 0 at first); remember v "
         "in state; return value + v.")


# -- 04.bce -----------------------------------------------------------------------------------

bce = function_exercise(
    "04.bce", "bce_with_logits", mg.bce_with_logits.opdef.forward,      # the engine's stable BCE
    points=2, raise_on=("over", "invalid", "divide"),
    cases=[
        case(z=[0.0, 2.0, -1.0], y=[1.0, 1.0, 0.0]),
        case(z=[[3.0], [-0.5], [0.25], [-4.0]], y=[[0.0], [0.0], [1.0], [1.0]],
             hint="The mean is over all entries: np.mean does it for any shape."),
        case(z=[40.0, -40.0], y=[0.0, 1.0],
             hint="σ(40) rounds to exactly 1.0 in float64, so log(1 − σ(40)) = log(0). Do not "
                  "compute σ at all: use max(z, 0) − z·y + log(1 + exp(−|z|))."),
        case(z=[1000.0, -1000.0, 800.0], y=[1.0, 1.0, 0.0],
             hint="exp(1000) overflows: only ever take exp of −|z|, and np.log1p(t) for log(1 + t)."),
    ],
    hint="loss = mean(max(z, 0) − z·y + log(1 + exp(−|z|))): the same number as "
         "mean(−y·log σ(z) − (1 − y)·log(1 − σ(z))), but no exp can overflow and no log sees 0.")


# -- 04.disk_recipe -----------------------------------------------------------------------------

STEPS = 1500                     # the step budget: full-batch steps on the training points
N_TRAIN, TRAIN_SEED = 400, 0
N_TEST, TEST_SEED = 2000, 2024   # fresh points, never seen in training
TARGET = 0.95
MAX_UNITS, MAX_LAYERS = 64, 3


def _recipe(answer):
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


def try_recipe(recipe, steps=STEPS):
    """Train a recipe exactly as the check does; returns (train accuracy, test accuracy, loss).

    The network is ``mg.nn.MLP([2, *hidden, 1], activation, rng=0)``, the loss
    ``mg.bce_with_logits``, ``steps`` full-batch steps of the chosen optimizer on
    ``mg.data.disk(400, seed=0)``; the test points are ``mg.data.disk(2000, seed=2024)``.
    """
    recipe = _recipe(recipe)
    X, Y = mg.data.disk(N_TRAIN, seed=TRAIN_SEED)
    x, y = mg.Input("x"), mg.Input("y")
    net = mg.nn.MLP([2, *recipe["hidden"], 1], activation=recipe["activation"], rng=0, name="net")
    logits = net(x)
    graph = mg.Graph(mg.bce_with_logits(logits, y, name="loss"))
    optimizer = mg.optim.OPTIMIZERS[recipe["optimizer"]](net.parameters, lr=recipe["lr"])
    loss = np.inf
    with np.errstate(all="ignore"):
        for _ in range(steps):
            loss = float(graph.backward({x: X, y: Y}, wrt=net.parameters))
            if not np.isfinite(loss):
                break
            optimizer.step()
        predict = mg.Graph(logits)
        train = mg.nn.binary_accuracy(predict.forward({x: X}), Y)
        X_test, Y_test = mg.data.disk(N_TEST, seed=TEST_SEED)
        test = mg.nn.binary_accuracy(predict.forward({x: X_test}), Y_test)
    return train, test, loss


def _run_recipe(answer, case):
    return _recipe(answer)                 # only the choices travel; the judge trains


def _judge_recipe(case, got):
    try:
        recipe = _recipe(got)
    except ValueError as error:
        return Verdict(False, message=str(error))
    train, test, loss = try_recipe(recipe)
    got_text = f"test accuracy {test:.1%} (train {train:.1%}), final loss {loss:.3g}"
    if not np.isfinite(loss):
        return Verdict(False, f">= {TARGET:.0%}", "loss NaN/inf",
                       "the loss blew up during training: the learning rate is too large")
    if test >= TARGET:
        return Verdict(True, f">= {TARGET:.0%}", got_text)
    message = f"after {STEPS} steps the network is right on only {test:.1%} of fresh points"
    if test < 0.70:
        message += ("; about 64% of the points lie outside the disk, so answering 'no' everywhere "
                    "already scores that much: the network has not found the disk at all")
    if loss > 0.75:
        message += (f". The final loss {loss:.3g} is higher than at the start (about 0.69, log 2): "
                    "the steps overshoot, so the learning rate is too large")
    elif loss > 0.5:
        message += (f". The final loss {loss:.3g} is still close to where training starts "
                    "(about 0.69, log 2): learning crawls, so try a larger learning rate")
    elif train - test > 0.05:
        message += (f". Train accuracy {train:.1%} is much higher than test: the network fits "
                    "the 400 training points but not the disk; try fewer units")
    else:
        message += ". The loss went down but not far enough: more hidden units, or a larger rate"
    return Verdict(False, f">= {TARGET:.0%}", got_text, message)


disk_recipe = Exercise(
    "04.disk_recipe", "disk_recipe", 3, ({"inputs": {}},), _run_recipe, _judge_recipe,
    title=f"disk_recipe: >= {TARGET:.0%} test accuracy on the disk in {STEPS} steps",
    hint="A circle needs several hidden units (one line each: a polygon around the disk); with "
         "too small a learning rate 1500 steps are not enough, with too large a one the loss "
         "jumps around. try_recipe(disk_recipe) shows what the check will see.",
    describe=lambda case: f"MLP([2, *hidden, 1]), seed 0, {STEPS} full-batch steps on 400 points")


EXERCISES = [gd, momentum, bce, disk_recipe]
