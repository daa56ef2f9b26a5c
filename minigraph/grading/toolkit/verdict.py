"""A judge's decision on one case (``Verdict``) and the comparison most judges make
(``compare``): shape first, then values, in words a learner can act on."""

from dataclasses import dataclass, replace

import numpy as np

from .values import Unreadable, number, shape_text, show

RTOL, ATOL = 1e-6, 1e-9      # how close an answer must be to the reference (np.isclose)


@dataclass(frozen=True)
class Verdict:
    """The judge's decision on one case, with the texts a learner sees when it failed.

    ``mistake`` is the typical mistake the answer was recognised to make, in the words the
    message starts with ("" when none was named): the class report counts these.
    """

    passed: bool
    expected: str = ""
    got: str = ""
    message: str = ""
    mistake: str = ""

    def reworded(self, message):
        """This verdict with another message (the mistake it names, if any, kept)."""
        return replace(self, message=message)


def compare(expected, got, rtol=RTOL, atol=ATOL, reveal=True):
    """Verdict for an array answer: shape first, then values (naming the first wrong entry)."""
    shown = show(expected) if reveal else "(hidden)"
    if got is None:
        return Verdict(False, shown, "None", "returned None: did you forget `return`?")
    if isinstance(got, Unreadable):
        return Verdict(False, shown, show(got),
                       f"returned {shape_text(got)}, expected an array of {shape_text(expected)}")
    expected = np.asarray(expected, dtype=float)
    if got.shape != expected.shape:
        return Verdict(False, shown, show(got),
                       f"has {shape_text(got)}, expected {shape_text(expected)}"
                       + shape_advice(expected.shape, got.shape))
    wrong = ~np.isclose(got, expected, rtol=rtol, atol=atol)
    if not wrong.any():
        return Verdict(True, shown, show(got))
    if not reveal:
        return Verdict(False, shown, show(got), "not the right value")
    index = tuple(int(i) for i in np.argwhere(wrong)[0])
    first = _expected_got(float(expected[index]), float(got[index]), rtol, atol)
    if wrong.size == 1:
        return Verdict(False, shown, show(got), first)
    return Verdict(False, shown, show(got),
                   f"{int(wrong.sum())} of {wrong.size} values wrong; at index {index}: {first}")


def shape_advice(expected, got):
    """What a wrong shape suggests, in words (``""`` when it suggests nothing in particular).

    Three cases are told apart: the shape reversed (a transposed product), fewer entries than
    expected (summed or reduced over too many axes), and a shape the expected one broadcasts to
    (stretched by broadcasting, never summed back); and an array where one number belongs, and
    the expected shape with axes of length 1 added (a sum that kept its axis, keepdims=True).
    """
    expected, got = tuple(expected), tuple(got)
    if not expected and got:
        return ": one number was expected; were the entries never added up (or averaged) into one?"
    if len(got) > len(expected) and [d for d in got if d != 1] == [d for d in expected if d != 1]:
        extra = len(got) - len(expected)
        return (f": the right number of entries in the wrong shape, with {extra} "
                f"ax{'is' if extra == 1 else 'es'} of length 1 too many; is a summed axis kept "
                f"(keepdims=True), or one never summed away?")
    if len(got) >= 2 and got == expected[::-1]:
        return (": the expected shape reversed; is a matrix transposed, or a product taken in "
                "the wrong order?")
    if int(np.prod(got)) == int(np.prod(expected)):
        return (": the right number of entries in the wrong shape; are axes in another order, or "
                "regrouped by a reshape?")
    if int(np.prod(got)) < int(np.prod(expected)):
        return ": fewer entries than expected; was something summed (or reduced) over an axis that should stay?"
    try:
        stretched = np.broadcast_shapes(expected, got) == got
    except ValueError:
        stretched = False
    if stretched:
        return ": the expected shape stretched by broadcasting, and not summed back (mg.unbroadcast)"
    return ""


def _expected_got(expected, got, rtol, atol):
    """``expected 0.75, got 1`` -- with more digits, and the size of the error, when the two
    numbers look the same at 4 significant digits (a close but not close enough answer)."""
    if number(expected) != number(got):
        return f"expected {number(expected)}, got {number(got)}"
    digits = 5
    while digits < 17 and f"{expected:.{digits}g}" == f"{got:.{digits}g}":
        digits += 1
    allowed = atol + rtol * abs(expected)
    return (f"expected {expected:.{digits}g}, got {got:.{digits}g}: off by {abs(got - expected):.2g}, "
            f"more than the {allowed:.2g} the check allows")
