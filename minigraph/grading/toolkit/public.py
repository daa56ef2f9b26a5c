"""Public judges: how the student edition judges an exercise without its reference answer.

The student edition (``release.py``) ships without ``answers/``. Each exercise declares how it
is judged there in its ``public`` field, a ``Public(judge)``: a judge ``judge(case, got) ->
Verdict`` that holds nothing the grader would accept as an answer. There are four kinds,
and a new exercise picks one in one line (``AUTHORING.md``, "the student edition"):

* **stored values** (``stored_values()``): the reference's value on each *public* case, which
  ``check()`` shows in its table anyway, is written into the edition as data
  (``Exercise.expected``; ``release.py`` stores it in ``content/expected.json``) and compared;
* **a salted hash** (``hashed_value``): for a value exercise, whose expected value *is* the
  answer, only a hash of the rounded value is stored (``fingerprint``), and of each typical
  wrong value, so a known mistake is still named;
* **central differences** (``vjp.py``'s ``public_vjp``): a backward rule is compared with the
  derivative of the op's forward, measured numerically -- the forward is not the answer;
* **properties** (any judge that needs no answer: a valid topological order, a training run
  that reaches its threshold, a gradient equal to the one minigraph's own ``Graph.backward``
  computes, which ships anyway): ``Public(judge)``.

Judges that need no stored value can also judge freshly drawn cases: ``Public(judge,
fresh=True)`` makes ``check()`` in the edition add ``HIDDEN_CASES`` random cases
(``Exercise.hidden``) to the public ones.

Where a wrong answer's mistake can be told from its numbers alone -- the sign flipped, a
factor of 2, a gradient never summed back to its input's shape -- ``telltale`` says so; the
rest of a mistake table needs the reference and stays with the grader.
"""

import hashlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import minigraph as mg

from . import answers
from .verdict import ATOL, RTOL, Verdict, compare
from .values import decode, show


@dataclass(frozen=True)
class Public:
    """How the student edition judges an exercise (``Exercise.public``).

    judge   ``judge(case, got) -> Verdict``, like ``Exercise.judge``, holding no answer
    fresh   whether it can judge a case drawn at random (it needs no stored value): then
            ``check()`` in the edition adds fresh random cases to the public ones
    """

    judge: Callable[[dict, Any], Verdict]
    fresh: bool = False


# -- stored values -------------------------------------------------------------------------

def stored(exercise_id, case):
    """What ``release.py`` stored for a public case (``Exercise.expected``), decoded where it
    is an encoded value; raises ``answers.Withheld`` for a case with none (a hidden one)."""
    return answers.stored(exercise_id, case)


def stored_values(exercise_id, rtol=RTOL, atol=ATOL):
    """A public judge: the learner's value against the stored one, naming a telltale mistake."""
    def judge(case, got):
        return judged_against(decode(stored(exercise_id, case)), decode(got), rtol, atol)
    return Public(judge)


def judged_against(expected, got, rtol=RTOL, atol=ATOL, reveal=True):
    """``compare``, with a telltale mistake (``telltale``) named when there is one."""
    verdict = compare(expected, got, rtol, atol, reveal)
    if verdict.passed or not isinstance(got, np.ndarray):
        return verdict
    told = telltale(np.asarray(expected, dtype=float), got, rtol, atol)
    return verdict if told is None else Verdict(False, verdict.expected, verdict.got,
                                                f"{told} ({verdict.message})", told)


def telltale(expected, got, rtol=RTOL, atol=ATOL):
    """A typical mistake that ``got`` shows by itself next to ``expected``, or None."""
    def close(a):
        return np.shape(a) == got.shape and bool(np.allclose(a, got, rtol=rtol, atol=atol))

    if not np.any(np.abs(expected) > atol):
        return None
    if close(-expected):
        return "the sign is flipped"
    if close(2 * expected) or close(expected / 2):
        return "off by a factor of 2"
    if expected.ndim == 2 and expected.shape[0] != expected.shape[1] and close(expected.T):
        return "transposed: the result must have the shape shown"
    if got.shape != expected.shape and got.size > expected.size:
        try:
            summed = mg.unbroadcast(got, expected.shape)
        except Exception:
            return None
        if np.allclose(summed, expected, rtol=rtol, atol=atol):
            return ("not summed back: where broadcasting stretched an input, its gradient is the "
                    "sum over the stretched axes, with the input's own shape")
    return None


# -- a salted hash of a rounded value --------------------------------------------------------

SIGNIFICANT = 6              # digits a value is rounded to before it is hashed


def fingerprint(exercise_id, value):
    """A salted hash (the salt: the exercise's id) of a text, or of an array of numbers rounded
    to ``SIGNIFICANT`` digits, with its shape; None for anything else."""
    if isinstance(value, str):
        text = f"minigraph {exercise_id} text {value}"
    else:
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return None
        digits = [f"{v + 0.0:.{SIGNIFICANT - 1}e}" for v in np.round(array.ravel(), 12)]
        text = f"minigraph {exercise_id} {array.shape} {' '.join(digits)}"
    return hashlib.sha256(text.encode()).hexdigest()


def hashes(exercise_id, expected, mistakes=None):
    """What the edition stores for a value exercise: the hash of the expected value, and of
    each typical wrong value with its message (``release.py`` writes it)."""
    return {"hash": fingerprint(exercise_id, expected),
            "mistakes": {fingerprint(exercise_id, wrong): message
                         for message, wrong in (mistakes or {}).items()}}


def hashed_value(exercise_id):
    """A public judge for a value exercise: the learner's value, hashed, against the stored hash."""
    def judge(case, got):
        value = decode(got)
        if value is None:
            return Verdict(False, "(hidden)", "None", "the value is None: set it to your answer")
        known = stored(exercise_id, case)
        mine = fingerprint(exercise_id, value)
        if mine is not None and mine == known["hash"]:
            return Verdict(True, "(hidden)", show(value))
        return Verdict(False, "(hidden)", show(value), known["mistakes"].get(mine, "not the right value"))
    return Public(judge)
