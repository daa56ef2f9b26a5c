"""Chapter 06, optimizers (``solutions/06_optimizers.ipynb``).

* ``06.adagrad``, ``06.rmsprop``, ``06.adam``: an optimizer's ``update`` rule, in a subclass
  of ``mg.optim.Optimizer``, checked as every optimizer exercise is (``toolkit/optimizer.py``):
  two Parameters that start alike and get the same gradients (they must move alike), and the
  values after each step worked out by hand, stored in the case
  (``tests/grading/test_content_ch06.py`` checks that ``mg.optim`` reproduces every one). When
  they differ, ``judge`` tries the exercise's typical wrong rules (``mistakes``) and, if one of
  them gives exactly the learner's numbers, names that mistake.
* ``06.cosine``: a cosine learning-rate schedule, checked against hand-worked rates on a list
  of steps, naming a typical mistake the same way.
* ``06.fastest_momentum``: ``fastest_momentum(mu, L)``, the (learning rate, momentum) that makes
  momentum converge fastest on the quadratic with curvatures mu and L. ``judge`` measures the
  rate of the learner's pair with ``landscape.momentum_rate`` and accepts it if it needs at most
  ``STEPS_TOLERANCE`` times as many steps as the best pair (steps to a given accuracy go as
  1 / -log(rate)). The engine's ``landscape.best_momentum`` refuses while the answer runs.
"""

import minigraph as mg

from ..toolkit.answers import answers_of, judges_of
from ..toolkit.engine import refused
from ..toolkit.exercise import Exercise
from ..toolkit.optimizer import optimizer_exercise, own_update, random_cases, twin_case
from ..toolkit.public import Public
from ..toolkit.values import encode

TITLE = "Optimizers"
answers = answers_of(__name__)    # answers/ch06.py: reference rules, hand-worked values, judges, mistakes
judges = judges_of(__name__)      # judges/ch06.py: the judges that hold no answer


# -- 06.adagrad, 06.rmsprop, 06.adam --------------------------------------------------------------

adagrad = optimizer_exercise(
    "06.adagrad", "MyAdaGrad", 2, engine=own_update(mg.optim.AdaGrad), reference=answers.adagrad_update,
    hidden=random_cases("MyAdaGrad", lr=(0.01, 1.0), eps=(0.01, 1.0)), cases=
    (
        twin_case("MyAdaGrad", {"lr": 1.0, "eps": 0.0}, [10.0, 10.0], [[3.0, 6.0], [4.0, 8.0], [12.0, 24.0]],
                        answers.ADAGRAD_TWINS[0],
                        hint="Each coordinate keeps its own sum of squared gradients (elementwise: no "
                             "np.sum), so a gradient twice as large gives the same step."),
        twin_case("MyAdaGrad", {"lr": 0.1, "eps": 0.0}, 2.0, [-1.0, 1.0, -1.0, 1.0],
                        answers.ADAGRAD_TWINS[1],
                        hint="Square the gradient before adding it up: the sum only grows."),
        twin_case("MyAdaGrad", {"lr": 0.5, "eps": 1.0}, 1.0, [3.0, 4.0], answers.ADAGRAD_TWINS[2],
                        hint="eps is added after taking the square root, not inside it."),
    ),
    mistakes=answers.ADAGRAD_MISTAKES,
    hint=("AdaGrad divides each coordinate's step by the root of that coordinate's sum of squared "
          "gradients so far; the sum is the memory it keeps in state between steps.",
          "First add this step's squared gradient to the sum kept in state (which starts at 0), "
          "then step downhill: lr times the gradient, divided by the sum's square root plus eps. "
          "numpy works elementwise, so every coordinate gets its own sum."))


rmsprop = optimizer_exercise(
    "06.rmsprop", "MyRMSProp", 2, engine=own_update(mg.optim.RMSProp), reference=answers.rmsprop_update,
    hidden=random_cases("MyRMSProp", lr=(0.01, 1.0), decay=(0.5, 0.99), eps=(0.01, 1.0)),
    cases=
    (
        twin_case("MyRMSProp", {"lr": 0.1, "decay": 0.5, "eps": 0.0}, 1.0, [2.0, 2.0],
                        answers.RMSPROP_TWINS[0],
                        hint="Start from s = 0: the first average is (1 - decay)·grad², not grad²."),
        twin_case("MyRMSProp", {"lr": 0.3, "decay": 0.25, "eps": 0.0}, [0.0, 1.0],
                        [[2.0, 2.0], [-1.0, -1.0], [0.0, 0.0]],
                        answers.RMSPROP_TWINS[1],
                        hint="decay multiplies the old average, (1 - decay) the new squared gradient."),
        twin_case("MyRMSProp", {"lr": 0.5, "decay": 0.9, "eps": 1.0}, 0.0, [3.0],
                        answers.RMSPROP_TWINS[2],
                        hint="eps is added after taking the square root, not inside it."),
    ),
    mistakes=answers.RMSPROP_MISTAKES,
    hint=("RMSProp is AdaGrad with a running average of the squared gradients in place of their "
          "sum, so old gradients fade and the steps do not die out.",
          "Blend the average kept in state (0 at first) with this step's squared gradient, "
          "weighted decay and 1 - decay; store it; then step downhill as AdaGrad does, dividing "
          "by its square root plus eps."))


adam = optimizer_exercise(
    "06.adam", "MyAdam", 3, engine=own_update(mg.optim.Adam), reference=answers.adam_update,
    hidden=random_cases("MyAdam", lr=(0.01, 1.0), beta1=(0.5, 0.95), beta2=(0.9, 0.999), eps=(0.01, 1.0)),
    cases=
    (
        twin_case("MyAdam", {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "eps": 0.0}, 0.0,
                        [1.0, 1.0, 1.0], answers.ADAM_TWINS[0],
                        hint="With bias correction, a constant gradient gives m̂ = grad and ŝ = grad² "
                             "from the very first step: each step is exactly lr."),
        twin_case("MyAdam", {"lr": 0.2, "beta1": 0.5, "beta2": 0.75, "eps": 0.0}, [1.0, -1.0],
                        [[2.0, -2.0], [-1.0, 1.0], [8.0, -8.0]],
                        answers.ADAM_TWINS[1],
                        hint="Count steps from t = 1 and divide m by 1 - beta1^t and s by 1 - beta2^t."),
        twin_case("MyAdam", {"lr": 0.5, "beta1": 0.9, "beta2": 0.999, "eps": 1.0}, 0.0, [3.0],
                        answers.ADAM_TWINS[2],
                        hint="eps is added to the square root of ŝ, the corrected s: not inside the "
                             "root, and not to √s before the correction."),
    ),
    mistakes=answers.ADAM_MISTAKES,
    hint=("Adam is momentum on the gradient and RMSProp on its square, plus a step counter that "
          "corrects both running averages for starting at 0.",
          "Three things live in state: the step count t (1 at the first step), the average m of "
          "the gradient and the average s of its square (both 0 at first). Correct both averages "
          "for their start at 0 before the step, which is lr · m̂ divided by (√ŝ + eps)."))


# -- 06.cosine ---------------------------------------------------------------------------------------

def _hidden_schedule(rng):
    """Random settings (lr_min > 0, below lr_max) and 2 to 5 steps t from 0 to total."""
    total, lr_max = int(rng.integers(10, 1001)), round(rng.uniform(0.01, 1.0), 4)
    settings = {"total": total, "lr_max": lr_max, "lr_min": round(rng.uniform(0.05, 0.5) * lr_max, 5)}
    steps = sorted(rng.integers(0, total + 1, int(rng.integers(2, 6))).tolist())
    return {"settings": settings, "inputs": {"steps": steps}}


def _run_schedule(answer, case):
    return [encode(answer(t, **case["settings"])) for t in case["inputs"]["steps"]]


def _schedule_case(settings, steps, expected, hint=""):
    c = {"settings": settings, "inputs": {"steps": steps}, "expected": expected}
    return {**c, "hint": hint} if hint else c


cosine = Exercise(
    "06.cosine", "cosine_lr", 2,
    (
        _schedule_case({"total": 100, "lr_max": 0.1, "lr_min": 0.0}, [0, 50, 100], answers.COSINE_RATES[0],
                       hint="At t = 0 the rate is lr_max, at t = total it is lr_min, halfway it is the middle."),
        _schedule_case({"total": 30, "lr_max": 0.1, "lr_min": 0.01}, [0, 10, 20, 30],
                       answers.COSINE_RATES[1],
                       hint="The rate goes from lr_max down to lr_min, not to 0."),
        _schedule_case({"total": 8, "lr_max": 1.0, "lr_min": 0.5}, [2, 6],
                       answers.COSINE_RATES[2]),
    ),
    _run_schedule,
    answers.judge_cosine,
    expected=lambda case: [float(rate) for rate in case["expected"]], public=Public(judges.judge_stored_cosine),
    title="cosine_lr(t, total, lr_max, lr_min)",
    engine=refused({"mg.optim.cosine_decay": "cosine schedule"}), hidden=_hidden_schedule,
    hint=("Half a cosine wave from lr_max (t = 0) down to lr_min (t = total): cos goes from 1 to -1 "
          "as its angle goes from 0 to pi.",
          "Turn t into an angle that runs from 0 (t = 0) to pi (t = total); shift and scale cos of "
          "that angle to run from lr_max to lr_min. Test t = 0, total / 2 and total against the "
          "statement's worked numbers."),
    describe=lambda case: (", ".join(f"{k}={v}" for k, v in case["settings"].items())
                           + f"; t = {', '.join(map(str, case['inputs']['steps']))}"))


# -- 06.fastest_momentum ----------------------------------------------------------------------------

CURVATURES = (1.0, 100.0)         # f(x, y) = (x² + 100 y²) / 2, the statement's quadratic
STEPS_TOLERANCE = 1.1             # the learner's pair may need 10 % more steps than the best one


def _run_pair(answer, case):
    return encode(answer(*case["inputs"].values()))


fastest_momentum = Exercise(
    "06.fastest_momentum", "fastest_momentum", 2,
    ({"inputs": {"mu": 1.0, "L": 100.0}}, {"inputs": {"mu": 1.0, "L": 25.0}},
     {"inputs": {"mu": 0.5, "L": 200.0}}),
    _run_pair, judges.judge_pair,
    public=Public(judges.judge_pair, fresh=True),
    title="fastest_momentum(mu, L) -> (lr, momentum) on (mu·x² + L·y²) / 2",
    hint=("The fastest pair depends only on the smallest and the largest curvature, mu and L: "
          "the chapter's section 3 works it out.",
          "The chapter's heatmap marks the fastest pair with a star and gives its formula in terms "
          "of mu and L (through the condition number L / mu); landscape.momentum_rate(lr, "
          "momentum, (mu, L)) measures any pair you try."),
    describe=lambda case: "mu = {mu:g}, L = {L:g}".format(**case["inputs"]),
    engine=refused({"mg.landscape.best_momentum": "fastest pair"},
                   advice="work the pair out from mu and L yourself"),
    hidden=lambda rng: {"inputs": {"mu": round(rng.uniform(0.1, 2.0), 3),
                                   "L": round(rng.uniform(10.0, 400.0), 2)}})

EXERCISES = [adagrad, rmsprop, adam, cosine, fastest_momentum]
