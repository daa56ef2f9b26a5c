"""Chapter 08's reference answers, judges and typical mistakes (``content/ch08.py`` has the exercises)."""

import numpy as np

import minigraph as mg

from ..content.ch08 import DECOY, points_of
from ..judges.ch08 import judge_graph_vjp, judge_meanings, judge_second_values
from ..toolkit.exercise import compare, diagnose
from ..toolkit.public import hashes
from ..toolkit.values import decode, encode
from ..tools.ch08 import softplus_numbers


sigmoid = mg.sigmoid.opdef.forward        # the engine's own, stable for large |x|


def softplus_graph_vjp(g, ans, x):
    return g * mg.sigmoid(x)


SOFTPLUS_MISTAKES = [
    ("the upstream gradient g is missing: multiply the local derivative by g",
     lambda g, x: sigmoid(x) + 0 * g),
    ("that is eˣ·g: the derivative of log(1 + eˣ) also divides by 1 + eˣ",
     lambda g, x: g * np.exp(x)),
    ("the sign is flipped: softplus grows with x, so its derivative is positive",
     lambda g, x: -g * sigmoid(x)),
    ("σ of the output instead of σ of the input: the derivative is σ(x), x being the op's input",
     lambda g, x: g * sigmoid(softplus_numbers(x))),
    ("that is g times the output (as for exp): softplus' derivative is σ(x), not softplus(x)",
     lambda g, x: g * softplus_numbers(x)),
    ("it keeps the numbers g and x had when the graph was built (.value): use the nodes g, ans, x "
     "themselves, so the result follows every new feed",
     lambda g, x: np.full(np.shape(x), DECOY * sigmoid(DECOY))),
    ("eˣ / (1 + eˣ) overflows for large x (inf / inf is NaN from x ≈ 710 on): use a form that "
     "never takes exp of a large positive number, such as mg.sigmoid",
     lambda g, x: g * np.exp(x) / (1 + np.exp(x))),
]


def softplus_expected(case):
    """What the student edition stores for a public case: the values, and their gradient."""
    g, x = (np.asarray(case["inputs"][k], dtype=float) for k in ("g", "x"))
    return {"value": encode(g * sigmoid(x)), "again": encode(g * sigmoid(x) * (1 - sigmoid(x)))}


def judge_softplus_vjp(case, got):
    g, x = (np.asarray(case["inputs"][k], dtype=float) for k in ("g", "x"))
    return judge_graph_vjp(g * sigmoid(x), g * sigmoid(x) * (1 - sigmoid(x)), got,
                           lambda verdict, value: diagnose(verdict, value, dict(SOFTPLUS_MISTAKES),
                                                           lambda wrong: wrong(g, x)))


NUMPY_FUNCTIONS = {               # name -> (f, f', f'') in numpy
    "tanh": (np.tanh, lambda x: 1 - np.tanh(x) ** 2, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    "cubic": (lambda x: x ** 3 - 2 * x, lambda x: 3 * x ** 2 - 2, lambda x: 6 * x),
    "gauss": (lambda x: np.exp(-x ** 2), lambda x: -2 * x * np.exp(-x ** 2),
              lambda x: (4 * x ** 2 - 2) * np.exp(-x ** 2)),
}


def second_expected(case):
    """What the student edition stores for a public case: f'' at the case's points."""
    return encode(NUMPY_FUNCTIONS[case["inputs"]["f"]][2](np.array(points_of(case))))


def judge_second(case, got):
    f, f1, f2 = NUMPY_FUNCTIONS[case["inputs"]["f"]]
    mistakes = [("that is the first derivative: apply mg.grad a second time, to the first "
                 "derivative's node", f1),
                ("that is f itself: mg.grad(y, x) is a new node; differentiate that node again", f),
                ("that is the first derivative squared: the second derivative differentiates the "
                 "first derivative's node, it does not multiply it by itself", lambda x: f1(x) ** 2),
                ("the sign is flipped", lambda x: -f2(x))]
    x = np.array(points_of(case))
    return judge_second_values(f2(x), got, lambda verdict, value: diagnose(
        verdict, value, dict(mistakes), lambda wrong: wrong(x)))


RIGHT_MEANINGS = {                # minigraph word -> what its PyTorch word means
    "Input": "a plain tensor",
    "Parameter": "an nn.Parameter",
    "Graph.forward": "calling the model",
    "backward(wrt=...)": "autograd.grad",
    "register_backward_hook": "a tensor's backward hook",
}
WORD_MISTAKES = {                 # (minigraph word, what the answer means) -> what is wrong
    ("Input", "an nn.Parameter"): "an Input is data you feed, not something training changes: a "
                                  "plain tensor (TensorFlow 1: a placeholder)",
    ("Parameter", "a plain tensor"): "a plain tensor takes no gradient: a Parameter is an "
                                     "nn.Parameter (a tensor with requires_grad=True that the "
                                     "model owns)",
    ("Graph.forward", "loss.backward()"): "Graph.forward only computes values: calling the model",
    ("backward(wrt=...)", "loss.backward()"): "loss.backward() ADDS into .grad (you must zero it); "
                                              "minigraph's backward(wrt=...) returns fresh gradients "
                                              "of the nodes asked for, like torch.autograd.grad",
    ("register_backward_hook", "optimizer.step()"): "optimizer.step() updates the parameters; a "
                                                    "hook watches gradients as they flow: "
                                                    "register_hook",
    ("register_backward_hook", "a forward hook"): "register_forward_hook watches values of the "
                                                  "forward pass; a backward hook watches "
                                                  "gradients as they flow back",
}


def words_expected(case):
    """What the student edition stores for a word: hashes of the right meaning and of the
    typical wrong ones (``public.hashes``)."""
    key = case["inputs"]["word"]
    return hashes("08.framework_words", RIGHT_MEANINGS[key],
                  {message: meaning for (word, meaning), message in WORD_MISTAKES.items() if word == key})


def judge_words(case, got):
    key = case["inputs"]["word"]
    return judge_meanings(case, got, lambda meaning: meaning == RIGHT_MEANINGS[key],
                          lambda meaning: WORD_MISTAKES.get((key, meaning)))


def newton_step(g, H, x):
    return x - np.linalg.solve(H, g)


NEWTON_MISTAKES = [
    ("the step goes uphill: subtract H⁻¹ g from x, do not add it", lambda g, H, x: x + np.linalg.solve(H, g)),
    ("that is a gradient step (x - g): Newton's step divides the gradient by the curvature, H⁻¹ g",
     lambda g, H, x: x - g),
    ("multiplied by H instead of by its inverse: solve H d = g for the step d",
     lambda g, H, x: x - H @ g),
    ("divided by the diagonal of H only: the off-diagonal curvature matters too, solve H d = g",
     lambda g, H, x: x - g / np.diag(H)),
    ("half a step: on a quadratic, one full Newton step lands on the minimum",
     lambda g, H, x: x - 0.5 * np.linalg.solve(H, g)),
]


def judge_newton(case, got):
    g, H, x = (np.asarray(case["inputs"][k], dtype=float) for k in ("g", "H", "x"))
    value = decode(got)
    return diagnose(compare(newton_step(g, H, x), value), value, dict(NEWTON_MISTAKES),
                    lambda wrong: wrong(g, H, x))
