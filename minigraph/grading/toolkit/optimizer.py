"""Optimizer exercises (chapters 04 and 06): an ``update(self, value, grad, state)`` rule, in a
subclass of ``mg.optim.Optimizer``.

``run`` makes the learner's optimizer for two Parameters and calls its ``update`` for each of
them once per step, as ``step()`` does: the value and the gradient are read-only numpy arrays,
and each Parameter has its own ``state`` dict. The values are kept here, not in the Parameters,
so that a rule that makes NaN or infinity (which a Parameter refuses) still sends its numbers.
``judge`` compares every value after every step with the right one; when one differs, it names
the typical mistake (``mistakes``: a message and a wrong rule, called like the reference) whose
values are exactly the learner's. The same slip -- a forgotten ``return``, a value changed in
place -- gets the same message in every optimizer exercise.

Two kinds of case:

* ``optimizer_case``: two Parameters, each with its own start value and gradients; the right
  values are the reference rule's, replayed here;
* ``twin_case``: two Parameters that start alike and get the same gradients, so they must move
  alike (a rule that keeps on ``self`` what belongs in ``state`` moves them apart, and is told
  so); the right value after each step was worked out by hand and is stored in the case.

A hidden case (``random_cases``) is an ``optimizer_case`` of random start values, gradients and
settings, judged against the reference rule.

The student edition stores the right values of each public case (``public.py``) and judges
against them.
"""

import numpy as np

import minigraph as mg

from .engine import refused
from .exercise import Exercise, Rule, Verdict, compare, diagnose, random_array
from .public import Public, stored
from .values import decode, encode


def optimizer_exercise(id, cls, points, cases, mistakes, hint, reference=None, engine=None, hidden=None):
    """An exercise asking for an optimizer class ``cls`` whose ``update`` follows ``reference``
    (``reference(value, grad, state, **settings)``; not needed when every case is a twin case);
    ``mistakes`` maps a message to a wrong rule called like ``reference``; ``engine``: the
    engine's optimizer it asks for (``Exercise.engine``), e.g. ``engine=own_update(mg.optim.Adam)``;
    ``hidden``: a generator of more cases (``random_cases``), which need ``reference``."""
    def right_values(case):
        return _right_values(reference, case)

    def stored_values(case):
        return [[decode(v) for v in step] for step in stored(id, case)]

    return Exercise(id, cls, points, tuple(cases), _run, _judge(right_values, mistakes),
                    title=f"{cls}.update(value, grad, state)", hint=hint, describe=_describe,
                    engine=engine, hidden=hidden,
                    expected=lambda case: [[encode(v) for v in step] for step in right_values(case)],
                    public=Public(_judge(stored_values, {})))


def own_update(optimizer):
    """The rule that refuses the engine's ``optimizer.update`` (``mg.optim.Adam``)."""
    return refused({f"mg.optim.{optimizer.__name__}.update": f"{optimizer.__name__} update rule"},
                   advice="write the update rule yourself, with numpy, in your own class")


def optimizer_case(cls, settings, values, grads, hint=""):
    """Two Parameters starting at ``values`` (one each); ``grads`` holds, for each step, one
    gradient per Parameter."""
    c = {"cls": cls, "settings": settings, "inputs": {"values": values, "grads": grads}}
    return {**c, "hint": hint} if hint else c


def random_cases(cls, **ranges):
    """A hidden-case generator (``Exercise.hidden``): two Parameters of random shapes, 1 to 4
    steps of random gradients, and each setting drawn uniformly from its range
    (``random_cases("MyGD", lr=(0.01, 1.0))``)."""
    def hidden(rng):
        starts = [random_array(rng) for _ in range(2)]
        grads = [[random_array(rng, shape=np.shape(start)) for start in starts]
                 for _ in range(int(rng.integers(1, 5)))]
        settings = {name: round(rng.uniform(low, high), 4) for name, (low, high) in ranges.items()}
        return optimizer_case(cls, settings, starts, grads)
    return hidden


def twin_case(cls, settings, value, grads, expected, hint=""):
    """Two Parameters that both start at ``value`` and get the same gradient ``grads[k]`` at
    step k; ``expected[k]`` is the value of each after step k, worked out by hand."""
    c = {"cls": cls, "settings": settings, "inputs": {"value": value, "grads": grads}, "expected": expected}
    return {**c, "hint": hint} if hint else c


def shared_state(rule):
    """``rule`` as a wrong rule that keeps one state for all parameters (a typical mistake: the
    velocity kept on ``self`` instead of in each parameter's ``state``)."""
    def shared(*args, **settings):
        return rule(*args, **settings)
    shared.shared_state = True
    return shared


def _twins(case):
    return "value" in case["inputs"]


def _starts_and_grads(case):
    """The start value of each Parameter, and for each step the gradient of each."""
    inputs = case["inputs"]
    if _twins(case):
        return [inputs["value"]] * 2, [[grad, grad] for grad in inputs["grads"]]
    return inputs["values"], inputs["grads"]


def _run(answer, case):
    """Make the learner's optimizer, call its update step by step for the two Parameters."""
    if not (isinstance(answer, type) and "Optimizer" in {c.__name__ for c in answer.__mro__}):
        raise TypeError(f"{case['cls']} must be a class that subclasses mg.optim.Optimizer, "
                        f"not {type(answer).__name__}")
    starts, grads = _starts_and_grads(case)
    optimizer = answer([mg.Parameter(v, name=f"p{i}") for i, v in enumerate(starts)], **case["settings"])
    values, states, history = [_read_only(v) for v in starts], [{} for _ in starts], []
    for step, step_grads in enumerate(grads, start=1):
        values = [_updated(optimizer, value, grad, state)
                  for value, grad, state in zip(values, step_grads, states)]
        if _twins(case) and not np.array_equal(*values, equal_nan=True):
            raise Rule(f"two Parameters that start alike and get the same gradients moved apart at "
                       f"step {step}: update keeps something on self, which every Parameter shares; "
                       f"keep it in state, the dict of the Parameter being updated")
        history.append([encode(v) for v in values])
    return history


def _updated(optimizer, value, grad, state):
    """What the learner's ``update`` makes of one value and gradient, as a read-only array."""
    try:
        new = optimizer.update(value, _read_only(grad), state)
    except ValueError as error:
        if "read-only" not in str(error):
            raise
        raise Rule("update changed an array it was given (value or grad) in place; they are "
                   "read-only, like a Parameter's value: return a new array (value - ..., "
                   "not value -= ...)") from None
    if new is None:
        raise Rule("update returned None: did you forget `return`? It returns the parameter's "
                   "new value")
    try:
        return _read_only(new)
    except (TypeError, ValueError):
        raise Rule(f"update returned {type(new).__name__} {str(new)[:40]!r}, not numbers: it "
                   f"must return the new value, an array like value") from None


def _read_only(numbers):
    """``numbers`` as a new float array that cannot be changed in place."""
    array = np.array(numbers, dtype=float)
    array.setflags(write=False)
    return array


def _replay(rule, case):
    """The values ``rule`` gives, step by step, for the case's Parameters (as the judge sees them)."""
    starts, grads = _starts_and_grads(case)
    values = [np.array(v, dtype=float) for v in starts]
    shared = {}
    states = [shared if getattr(rule, "shared_state", False) else {} for _ in values]
    history = []
    for step_grads in grads:
        values = [np.asarray(rule(value, np.array(grad, dtype=float), state, **case["settings"]), dtype=float)
                  for value, grad, state in zip(values, step_grads, states)]
        history.append(values)
    return history


def _right_values(reference, case):
    if _twins(case):
        return [[np.array(v, dtype=float)] * 2 for v in case["expected"]]
    return _replay(reference, case)


def _judge(right_values, mistakes):
    """A judge comparing each value after each step with ``right_values(case)``, naming a
    typical mistake (``mistakes``) whose values are the learner's."""
    def judge(case, got):
        steps = len(case["inputs"]["grads"])
        if not isinstance(got, list) or len(got) != steps or not all(isinstance(s, list) for s in got):
            return Verdict(False, message="the notebook sent no readable results")
        sent = [[decode(v) for v in step] for step in got]
        for step, (right, yours) in enumerate(zip(right_values(case), sent), start=1):
            for i, (want, value) in enumerate(zip(right, yours)):
                verdict = compare(want, value)
                if not verdict.passed:
                    verdict = Verdict(False, verdict.expected, verdict.got,
                                      f"parameter p{i} after step {step}: {verdict.message}")
                    with np.errstate(all="ignore"):
                        return diagnose(verdict, _flat(sent), mistakes,
                                        lambda rule: _flat(_replay(rule, case)))
        if _twins(case):
            return Verdict(True, f"{steps} value{'' if steps == 1 else 's'}", "all right")
        return Verdict(True, f"{steps} step{'' if steps == 1 else 's'}", "all values right")
    return judge


def _flat(history):
    """Every value of a history, one after the other (None if one is not an array)."""
    values = [v for step in history for v in step]
    if not all(isinstance(v, np.ndarray) for v in values):
        return None
    return np.concatenate([np.ravel(v) for v in values])


def _describe(case):
    settings = ", ".join(f"{k}={v}" for k, v in case["settings"].items())
    inputs = case["inputs"]
    if _twins(case):
        return f"{settings}; value {inputs['value']}; gradients {', '.join(str(g) for g in inputs['grads'])}"
    values = ", ".join(f"p{i}={np.array(v).tolist()}" for i, v in enumerate(inputs["values"]))
    n = len(inputs["grads"])
    return f"{settings}; start {values}; {n} step{'' if n == 1 else 's'}"
