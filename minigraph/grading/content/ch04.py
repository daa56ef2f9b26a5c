"""Chapter 04, learning (``solutions/04_learning.ipynb``).

* ``04.gd`` and ``04.momentum``: an optimizer as a strategy, a subclass of
  ``mg.optim.Optimizer`` with one method, ``update(self, value, grad, state)``, checked as every
  optimizer exercise is (``toolkit/optimizer.py``): two parameters with their own start values
  and gradients, judged against the reference rule replayed here.
* ``04.bce``: the stable binary cross-entropy from logits, in plain numpy.
* ``04.disk_recipe``: the learner picks a network and a learning rate. ``run`` only sends the
  recipe back; ``judge`` trains it here (fixed seed, fixed step budget) and measures the
  accuracy on fresh points, so nothing computed in the learner's kernel decides the grade.
  A failed recipe is told what its training measured (``diagnosis``): a loss that climbs back
  up, a loss still falling steeply when the steps run out, training points fitted but fresh
  ones not, or a loss that settled with the training points not fitted.
  The training itself (``train_recipe``) is in ``tools/ch04.py``, whose ``try_recipe`` runs it
  for a learner who wants to experiment.
"""

import numpy as np

import minigraph as mg

from ..toolkit.answers import answers_of
from ..toolkit.engine import forward_of, refused
from ..toolkit.exercise import Exercise, Verdict, case, function_exercise, random_array
from ..toolkit.optimizer import optimizer_case, optimizer_exercise, own_update, random_cases
from ..toolkit.public import Public
from ..tools.ch04 import STEPS, checked_recipe, train_recipe

TITLE = "Learning"
answers = answers_of(__name__)    # answers/ch04.py: reference rules and mistakes


# -- optimizers -------------------------------------------------------------------------------

gd = optimizer_exercise(
    "04.gd", "MyGD", 2,
    (
        optimizer_case("MyGD", {"lr": 0.1}, [[1.0, -2.0], 3.0], [[[0.5, 1.0], 2.0]]),
        optimizer_case("MyGD", {"lr": 0.5}, [[[1.0, 2.0], [3.0, 4.0]], [0.0]],
                        [[[[1.0, 0.0], [0.0, -2.0]], [1.0]], [[[0.5, 0.5], [2.0, 2.0]], [-4.0]]],
                        hint="Each step starts from the value the previous step returned."),
        optimizer_case("MyGD", {"lr": 0.01}, [5.0, [1.0, 1.0, 1.0]],
                        [[2.0, [1.0, -1.0, 0.0]], [-3.0, [0.0, 2.0, 4.0]], [4.0, [1.0, 1.0, 1.0]]],
                        hint="Use the learning rate the optimizer was made with."),
    ),
    reference=answers.gd_update, engine=own_update(mg.optim.GD),
    hidden=random_cases("MyGD", lr=(0.01, 1.0)),
    mistakes=answers.GD_MISTAKES,
    hint=("Gradient descent takes a small step against the gradient, scaled by the learning rate.",
          "The learning rate is an attribute of the optimizer; return a new array (a Parameter's "
          "value is read-only, so changing it in place fails)."))

momentum = optimizer_exercise(
    "04.momentum", "MyMomentum", 3,
    (
        optimizer_case("MyMomentum", {"lr": 0.1, "momentum": 0.9}, [[1.0, -1.0], 0.0],
                        [[[1.0, 1.0], 1.0]],
                        hint="On the first step there is no velocity yet: v starts at 0, so "
                             "the first step is plain gradient descent."),
        optimizer_case("MyMomentum", {"lr": 0.1, "momentum": 0.9}, [[0.0, 0.0], 2.0],
                        [[[1.0, -1.0], 1.0]] * 4,
                        hint="Keep the velocity in state: each parameter has its own state dict, "
                             "which the optimizer hands back at the next step."),
        optimizer_case("MyMomentum", {"lr": 0.05, "momentum": 0.5}, [[[1.0, 2.0]], 3.0],
                        [[[[1.0, 0.0]], 2.0], [[[-1.0, 2.0]], -2.0], [[[0.5, 0.5]], 0.0]],
                        hint="Use the momentum and learning rate the optimizer was made with."),
    ),
    reference=answers.momentum_update, engine=own_update(mg.optim.Momentum),
    hidden=random_cases("MyMomentum", lr=(0.01, 1.0), momentum=(0.1, 0.99)),
    mistakes=answers.MOMENTUM_MISTAKES,
    hint=("Momentum keeps a velocity per parameter, from one step to the next.",
          "The new velocity is the old one (0 at first) scaled by the momentum, plus a step "
          "against the gradient scaled by the learning rate; the value moves by the velocity."))


# -- 04.bce -----------------------------------------------------------------------------------

def _hidden_bce(rng):
    """Logits of any size (some far from 0) and labels 0 or 1."""
    z = np.asarray(random_array(rng, scale=30.0, dims=(1, 2)))
    return case(z=z.tolist(), y=rng.integers(0, 2, z.shape).astype(float).tolist())


bce = function_exercise(
    "04.bce", "bce_with_logits", answers.bce,
    points=2, raise_on=("over", "invalid", "divide"),
    cases=[
        case(z=[0.0, 2.0, -1.0], y=[1.0, 1.0, 0.0]),
        case(z=[[3.0, -0.5], [0.25, -4.0]], y=[[0.0, 0.0], [1.0, 1.0]],
             hint="The mean is over all entries, whatever the shape."),
        case(z=[40.0, -40.0], y=[0.0, 1.0],
             hint=("σ(40) rounds to exactly 1.0 in float64, so log(1 − σ(40)) is log(0).",
                   "Do not compute σ at all: the statement's stable form has no log of σ.")),
        case(z=[1000.0, -1000.0, 800.0], y=[1.0, 1.0, 0.0],
             hint=("exp(1000) overflows: only ever take exp of a number that is never positive.",
                   "Use −|z| inside the exp; log1p(t) computes log(1 + t).")),
    ],
    mistakes=answers.BCE_MISTAKES,
    engine=refused(forward_of(mg.bce_with_logits)), hidden=_hidden_bce,
    hint=("Never compute σ(z) itself: a stable form has no exp of a large positive number and "
          "no log of 0.",
          "Three terms, all safe for any z: max(z, 0), the product z·y, and log(1 + exp(−|z|)); "
          "then the mean over all entries."))


# -- 04.disk_recipe -----------------------------------------------------------------------------

TARGET = 0.95                    # the test accuracy to reach
TAIL = STEPS // 10               # the last steps, where a diagnosis looks at how the loss moves
STILL_STEEP = 5e-3               # a final gradient norm above this: training had not settled


def diagnosis(training):
    """What went wrong in a training run, read off what it measured, with what to change.

    In this order: the loss blew up or climbed back up (the steps overshoot: lower the learning
    rate); the training points are fitted but fresh ones are not (overfitting: a smaller
    network); the loss was still going down steadily, with a gradient far from 0, when the
    budget ran out (too slow: raise the learning rate); otherwise training settled with the
    training points not fitted (the network cannot draw the disk: more hidden units).
    """
    losses = np.array(training.losses)
    if not np.all(np.isfinite(losses)):
        return "The loss became NaN or infinite during training: lower the learning rate"
    start, best, end = losses[0], losses.min(), losses[-1]
    if end > start or (end > 1.5 * best and end - best > 0.05):
        return (f"The loss got down to {best:.3g} but ended at {end:.3g} (it started at "
                f"{start:.3g}): the steps overshoot and the loss jumps around; lower the learning rate")
    if training.train >= TARGET:
        return (f"The network is right on {training.train:.1%} of its training points but only "
                f"{training.test:.1%} of fresh ones: it learned the points, not the disk "
                "(overfitting); use a smaller network")
    tail = losses[-TAIL:]
    steady = tail[0] - tail[-1] > 5e-4 * tail[0] and np.mean(np.diff(tail) > 0) < 0.1
    if steady and training.gradient > STILL_STEEP:
        return (f"The loss was still going down steadily when the {STEPS} steps ran out "
                f"({tail[0]:.4g} to {tail[-1]:.4g} over the last {TAIL}), and the gradient was "
                f"still large ({training.gradient:.2g}): learning is too slow; raise the learning "
                "rate (or take an optimizer that builds up speed, such as momentum)")
    return (f"The loss settled at {end:.3g} with only {training.train:.1%} of the training points "
            "right: training converged, but this network cannot draw the disk; give it more "
            "hidden units")


def _run_recipe(answer, case):
    return checked_recipe(answer)          # only the choices travel; the judge trains


def _judge_recipe(case, got):
    try:
        recipe = checked_recipe(got)
    except ValueError as error:
        return Verdict(False, message=str(error))
    training = train_recipe(recipe)
    expected = f">= {TARGET:.0%}"
    if training.test >= TARGET and np.isfinite(training.loss):
        return Verdict(True, expected, f"test accuracy {training.test:.1%} (train "
                                       f"{training.train:.1%}), final loss {training.loss:.3g}")
    message = f"after {len(training.losses)} steps the network is right on only {training.test:.1%} of fresh points"
    if training.test < 0.70:
        message += ("; about 64% of the points lie outside the disk, so answering 'no' everywhere "
                    "already scores that much")
    message += ". " + diagnosis(training)
    if len(recipe["hidden"]) == 1 and recipe["hidden"][0] < 3:
        message += (f". Also, one layer of {recipe['hidden'][0]} unit{'s' if recipe['hidden'][0] > 1 else ''} "
                    "draws at most that many lines, and it takes at least 3 to enclose a disk")
    got_text = (f"test accuracy {training.test:.1%}, final loss {training.loss:.3g}"
                if np.isfinite(training.loss) else "loss NaN/inf")
    return Verdict(False, expected, got_text, message)


disk_recipe = Exercise(
    "04.disk_recipe", "disk_recipe", 3, ({"inputs": {}},), _run_recipe, _judge_recipe,
    title=f"disk_recipe: >= {TARGET:.0%} test accuracy on the disk in {STEPS} steps",
    hint=("A disk needs several hidden units (one line each: a polygon around the disk) and a "
          "learning rate that is neither too small for 1500 steps nor so large the loss jumps "
          "around.",
          "try_recipe(disk_recipe) shows what the check will see; the message above says what "
          "the training measured, and which way to change the recipe."),
    describe=lambda case: f"MLP([2, *hidden, 1]), seed 0, {STEPS} full-batch steps on 400 points",
    public=Public(_judge_recipe))          # training needs no answer: judged alike everywhere


EXERCISES = [gd, momentum, bce, disk_recipe]
