"""Chapter 07's judges that hold no answer (``content/ch07.py`` has the exercises): clipped
arrays against given ones."""

from ..toolkit.exercise import Verdict, compare
from ..toolkit.public import stored
from ..toolkit.values import decode, show

EPSILON = 1e-6
"""How far each clipped entry may be from ``max_norm / norm`` times the gradient's: PyTorch's
``clip_grad_norm_``, which a learner following its documentation writes, scales by
``max_norm / (norm + 1e-6)`` (a guard against a zero norm) and clips once that is below 1. That
moves an entry by ``|g|·max_norm·(1/norm − 1/(norm + 1e-6))`` where both clip, and by at most
``|g|·1e-6/(norm + 1e-6)`` where only it does; as ``|g| <= norm`` and ``max_norm < norm + 1e-6``,
both are below 1e-6, whatever norm a case has. The typical mistakes change entries by a factor:
on the public and hidden cases, by far more than that."""


def judge_arrays(expected, got, named=lambda got: None):
    """The list of arrays sent against ``expected``; ``named(got)`` is the typical mistake the
    whole list shows, or None."""
    if not isinstance(got, list) or len(got) != len(expected):
        return Verdict(False, f"a list of {len(expected)} arrays", show(got if not isinstance(got, list)
                                                                      else f"{len(got)} arrays"),
                       f"return one clipped array per gradient ({len(expected)})")
    for k, (want, data) in enumerate(zip(expected, got)):
        verdict = compare(want, decode(data), atol=EPSILON)
        if not verdict.passed:
            mistake = named(got)
            looks_like = f". {mistake}" if mistake else ""
            return Verdict(False, verdict.expected, verdict.got, f"array {k}: {verdict.message}{looks_like}")
    return Verdict(True, f"{len(expected)} arrays", "all right")


def judge_stored_clip(case, got):
    """The student edition's judge: the arrays stored for the public case."""
    return judge_arrays([decode(each) for each in stored("07.clip_global_norm", case)], got)
