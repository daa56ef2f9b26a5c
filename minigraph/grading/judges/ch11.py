"""Chapter 11's judges that hold no answer (``content/ch11.py`` has the exercises): a mask
against given values, and whether it is boolean."""

from ..toolkit.exercise import Verdict, compare
from ..toolkit.public import stored
from ..toolkit.values import decode

FLOAT_MASK = ("the mask holds numbers (1 and 0), not booleans: added to the scores, a 0/1 mask "
              "only nudges them, and np.where(mask, ...) or mg.softmax's mask= read a boolean "
              "array; give it dtype=bool")


def judge_boolean_mask(expected, got, named=lambda verdict, value: verdict):
    """The mask sent against ``expected``, then its dtype; ``named(verdict, value)`` re-words a
    failing verdict that shows a typical mistake."""
    value = decode(got["value"])
    verdict = named(compare(expected, value), value)
    if verdict.passed and not got.get("boolean"):
        return Verdict(False, verdict.expected, verdict.got, FLOAT_MASK)
    return verdict


def judge_stored_mask(case, got):
    """The student edition's judge: the mask stored for the public case."""
    return judge_boolean_mask(decode(stored("11.causal_mask", case)), got)
