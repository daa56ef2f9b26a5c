"""Chapter 06's judges that hold no answer (``content/ch06.py`` has the exercises): a schedule's
rates against given ones, and a pair (lr, momentum) by the convergence rate it reaches, which
``landscape`` measures."""

import numpy as np

from ..content.ch06 import STEPS_TOLERANCE
from ..toolkit.exercise import Verdict, compare
from ..toolkit.public import stored
from ..toolkit.values import decode


def judge_rates(expected, case, got, diagnosed=lambda case, values: None):
    """The rates sent against ``expected``, one by one; ``diagnosed(case, values)`` names a
    typical mistake whose rates are the learner's (None: none is named)."""
    if not isinstance(got, list) or len(got) != len(expected):
        return Verdict(False, message="the notebook sent no readable results")
    values = [decode(v) for v in got]
    for k, (want, value) in enumerate(zip(expected, values)):
        verdict = compare(want, value)
        if not verdict.passed:
            named = diagnosed(case, [v if isinstance(v, np.ndarray) else np.nan for v in values])
            message = (f"at t = {case['inputs']['steps'][k]}: {verdict.message}"
                       + (f". Looks like: {named}" if named else ""))
            return Verdict(False, verdict.expected, verdict.got, message, named or "")
    return Verdict(True, f"{len(values)} value{'s' if len(values) > 1 else ''}", "all right")


def judge_stored_cosine(case, got):
    """The student edition's judge: the rates stored for the public case."""
    return judge_rates(stored("06.cosine", case), case, got)


def _landscape():
    from ...chapters import landscape        # imports matplotlib and ipywidgets: only when needed
    return landscape


def judge_pair(case, got):
    pair = decode(got)
    if not isinstance(pair, np.ndarray) or pair.shape != (2,) or not np.all(np.isfinite(pair)):
        return Verdict(False, "(lr, momentum)", "?", "return two numbers: (lr, momentum)")
    landscape = _landscape()
    mu, L = (float(v) for v in case["inputs"].values())
    lr, beta = (float(v) for v in pair)
    rate = float(landscape.momentum_rate(lr, beta, (mu, L)))
    best_lr, best_beta = landscape.best_momentum((mu, L))
    best = float(np.sqrt(best_beta))          # the rate at the best pair
    enough = best ** (1 / STEPS_TOLERANCE)
    got_text = f"({lr:.4g}, {beta:.4g}): rate {rate:.4g} per step"
    expected = f"rate <= {enough:.4g}"
    if lr > 0 and 0 <= beta < 1 and rate <= enough:
        return Verdict(True, expected, got_text)
    k, rk = L / mu, np.sqrt(L / mu)
    named = [message for (a, b), message in (
        ((2 / (L + mu), 0.0), "momentum 0 is plain gradient descent (its best lr is 2 / (L + mu)): "
                              "momentum can do much better"),
        ((best_lr, (rk - 1) / (rk + 1)), "the momentum is not squared: ((sqrt(kappa) - 1) / (sqrt(kappa) + 1))²"),
        ((np.sqrt(best_lr), best_beta), "the learning rate is not squared: (2 / (sqrt(L) + sqrt(mu)))²"),
        (((2 / (L + mu)) ** 2, ((k - 1) / (k + 1)) ** 2), "kappa without its square root: the formulas "
                                                          "use sqrt(L), sqrt(mu) and sqrt(kappa)"),
        ((best_beta, best_lr), "learning rate and momentum are swapped: the pair is (lr, momentum)"),
    ) if np.isclose(lr, a, rtol=0.02) and np.isclose(beta, b, rtol=0.02)]
    if len(named) == 1:
        return Verdict(False, expected, got_text, named[0])
    if lr <= 0 or not 0 <= beta < 1:
        return Verdict(False, expected, got_text, "lr must be positive and momentum between 0 and 1")
    if rate >= 1:
        return Verdict(False, expected, got_text, "it diverges (rate >= 1): the learning rate is "
                                                  "too large for the steep direction")
    return Verdict(False, expected, got_text,
                   f"it converges, but needs about {np.log(best) / np.log(rate):.2g} times as many steps as "
                   "the best pair: the slowest direction decides the rate, balance the two directions")
