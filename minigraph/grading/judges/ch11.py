"""Chapter 11's judges that hold no answer (``content/ch11.py`` has the exercises): a mask
against given values, its size, and whether it is a boolean numpy array."""

import numpy as np

from ..toolkit.exercise import Verdict, compare
from ..toolkit.public import stored
from ..toolkit.values import decode

FLOAT_MASK = ("the mask holds numbers (1 and 0), not booleans: added to the scores, a 0/1 mask "
              "only nudges them, and np.where(mask, ...) or mg.softmax's mask= read a boolean "
              "array; give it dtype=bool")
LIST_MASK = ("the mask is a list of lists, not a numpy array: ~mask, mask.T and np.where read "
             "an array (~ on a list raises); return a numpy array of dtype bool")


def judge_boolean_mask(expected, got, named=lambda verdict, value: verdict):
    """The mask sent against ``expected``, then its size, dtype and type; ``named(verdict, value)``
    re-words a failing verdict that shows a typical mistake."""
    value = decode(got["value"])
    verdict = named(compare(expected, value), value)
    T = len(expected)
    if isinstance(value, np.ndarray) and value.shape != (T, T):
        return Verdict(False, verdict.expected, verdict.got,
                       f"has shape {value.shape}, expected ({T}, {T}): the mask has one row and "
                       f"one column per position, T of each (is a size off by one?)")
    if verdict.passed and not got.get("boolean"):
        return Verdict(False, verdict.expected, verdict.got, FLOAT_MASK)
    if verdict.passed and not got.get("array"):
        return Verdict(False, verdict.expected, verdict.got, LIST_MASK)
    return verdict


def judge_stored_mask(case, got):
    """The student edition's judge: the mask stored for the public case."""
    return judge_boolean_mask(decode(stored("11.causal_mask", case)), got)
