"""Chapter 08's reference answers, judges and typical mistakes (``content/ch08.py`` has the exercises)."""

import re

import numpy as np

import minigraph as mg

from ..content.ch08 import DECOY, points_of
from ..toolkit.exercise import Verdict, compare, diagnose
from ..toolkit.values import Unreadable, decode
from ..tools.ch08 import softplus_numbers


def _not_a_node(got):
    """The verdict for an answer that returned numbers (or anything) instead of a node."""
    return Verdict(False, "a node", got.text if isinstance(got, Unreadable) else "numbers",
                   f"returned {got.type_name if isinstance(got, Unreadable) else 'numbers'}, not a "
                   f"node: build the result from the nodes you are given with minigraph ops "
                   f"(mg.sigmoid, *, +, mg.grad ...), so that it is part of the graph")


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


def judge_softplus_vjp(case, got):
    g, x = (np.asarray(case["inputs"][k], dtype=float) for k in ("g", "x"))
    value = decode(got["value"])
    if "again" not in got:
        return _not_a_node(value)
    verdict = diagnose(compare(g * sigmoid(x), value), value, dict(SOFTPLUS_MISTAKES),
                       lambda wrong: wrong(g, x))
    if not verdict.passed:
        return verdict
    again = decode(got["again"])
    slope = sigmoid(x) * (1 - sigmoid(x))
    if not compare(g * slope, again).passed:
        return Verdict(False, "", "", "the values are right, but mg.grad of your VJP is not σ'(x)·g: "
                                      "build it from ops that have a graph VJP of their own")
    return verdict


NUMPY_FUNCTIONS = {               # name -> (f, f', f'') in numpy
    "tanh": (np.tanh, lambda x: 1 - np.tanh(x) ** 2, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    "cubic": (lambda x: x ** 3 - 2 * x, lambda x: 3 * x ** 2 - 2, lambda x: 6 * x),
    "gauss": (lambda x: np.exp(-x ** 2), lambda x: -2 * x * np.exp(-x ** 2),
              lambda x: (4 * x ** 2 - 2) * np.exp(-x ** 2)),
}


NOT_BY_GRAD = ("second_derivative's node was not built by mg.grad (mg.grad starts every gradient it "
               "builds from ones_like(output), and the node has none): differences of f at nearby "
               "points only approximate f''; the exercise asks for the gradient graph, mg.grad of "
               "mg.grad")


def judge_second(case, got):
    f, f1, f2 = NUMPY_FUNCTIONS[case["inputs"]["f"]]
    value, x = decode(got["value"]), np.array(points_of(case))
    if not isinstance(value, np.ndarray) or value.shape != x.shape:
        return _not_a_node(value)
    mistakes = [("that is the first derivative: apply mg.grad a second time, to the first "
                 "derivative's node", f1),
                ("that is f itself: mg.grad(y, x) is a new node; differentiate that node again", f),
                ("that is the first derivative squared: the second derivative differentiates the "
                 "first derivative's node, it does not multiply it by itself", lambda x: f1(x) ** 2),
                ("the sign is flipped", lambda x: -f2(x))]
    plain = compare(f2(x), value)
    verdict = diagnose(plain, value, dict(mistakes), lambda wrong: wrong(x))
    if got.get("by_grad") is False and verdict.message == plain.message:    # no mistake named
        return Verdict(False, plain.expected, plain.got, NOT_BY_GRAD)
    return verdict


RIGHT_MEANINGS = {                # minigraph word -> what its PyTorch word means
    "Input": "a plain tensor",
    "Parameter": "an nn.Parameter",
    "Graph.forward": "calling the model",
    "backward(wrt=...)": "autograd.grad",
    "register_backward_hook": "a tensor's backward hook",
}
NAMES = {                         # the last part of a dotted PyTorch name -> what it means
    "tensor": "a plain tensor", "as_tensor": "a plain tensor", "from_numpy": "a plain tensor",
    "parameter": "an nn.Parameter",
    "forward": "calling the model", "__call__": "calling the model",
    "register_hook": "a tensor's backward hook", "register_full_backward_hook": "a tensor's backward hook",
    "register_backward_hook": "a tensor's backward hook",    # PyTorch's older name for the latter
    "register_forward_hook": "a forward hook",
    "backward": "loss.backward()",
    "step": "optimizer.step()",
    "placeholder": "TensorFlow", "gradients": "TensorFlow",
}
NOT_A_MODEL = {"torch", "nn", "f", "functional", "tf", "tensorflow", "np", "numpy", "mg", "minigraph"}
ARTICLES = {"a", "an", "the"}
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


def _key(word):
    """A minigraph word as a key: ``"Graph.forward"``, ``"forward"`` -> ``"forward"``;
    ``"backward(wrt=...)"`` -> ``"backward"``."""
    return _without_brackets(str(word).strip().lower()).removesuffix("()").split(".")[-1]


def _without_brackets(text):
    """Arguments become ``()`` and remarks in parentheses go:
    ``"torch.autograd.grad(loss, [W]) (adds into .grad)"`` -> ``"torch.autograd.grad() "``."""
    kept, depth = [], 0
    for char in text:
        if char == "(":
            if depth == 0 and kept and (kept[-1].isalnum() or kept[-1] == "_"):
                kept.append("()")                  # a call: the name before it is called
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif depth == 0:
            kept.append(char)
    return "".join(kept)


def _meaning_of_name(name, called):
    """``torch.nn.Parameter``, ``W.register_hook``, ``model(x)``: a dotted name, maybe called."""
    parts = name.strip(".").split(".")
    if parts[0] in {"tf", "tensorflow"}:
        return "TensorFlow"
    if parts[-1] == "grad" and (parts[-2:-1] == ["autograd"] or called and len(parts) == 1):
        return "autograd.grad"                     # not ``W.grad``, the attribute
    if parts[-1] in NAMES:
        return NAMES[parts[-1]]
    if called and parts[0] not in NOT_A_MODEL:
        return "calling the model"                 # ``net(x)``, ``mlp(batch)``: a model by any name
    return None


def _meaning_of_phrase(words):
    """``calling the model``, ``a tensor with requires_grad=True``, ``a plain tensor you pass in``."""
    if words & {"call", "calls", "calling", "called"} and words & {"model", "module", "network", "net"}:
        return "calling the model"
    if words & {"requires_grad", "parameter", "parameters"}:
        return "an nn.Parameter"
    if "hook" in words:
        return "a forward hook" if "forward" in words else "a tensor's backward hook"
    named = {_meaning_of_name(word, False) for word in words} - {None}
    return named.pop() if len(named) == 1 else None


def _meanings(answer):
    """What each alternative of a written answer means (None: not understood)."""
    text = _without_brackets(re.sub(r"[`*\"']", "", str(answer).lower()))
    found = []
    for alternative in filter(str.strip, re.split(r",|/|;|\bor\b", text)):
        words = [w for w in re.findall(r"[\w.]+", alternative.replace("()", " ")) if w not in ARTICLES]
        called = alternative.strip().endswith("()")
        found.append(_meaning_of_name(words[0], called) if len(words) == 1
                     else _meaning_of_phrase(set(words)) if words else None)
    return found


def judge_words(case, got):
    if "words" not in got:
        return Verdict(False, "a dict", got.get("type", "?"), "answer with a dict {minigraph word: "
                       "PyTorch word}, one entry per word of the table")
    key = case["inputs"]["word"]
    given = got["words"].get(key, next((v for k, v in got["words"].items() if _key(k) == _key(key)), None))
    if given is None:
        return Verdict(False, "", "—", f"no entry for '{key}'")
    meanings = _meanings(given)
    if meanings and all(meaning == RIGHT_MEANINGS[key] for meaning in meanings):
        return Verdict(True, "", given)
    if "TensorFlow" in meanings:
        return Verdict(False, "", given, f"'{given}' is TensorFlow 1's word: the exercise asks for PyTorch's")
    for meaning in meanings:
        if (key, meaning) in WORD_MISTAKES:
            return Verdict(False, "", given, WORD_MISTAKES[key, meaning])
    return Verdict(False, "", given, f"'{given}' is not the PyTorch word for {key}")


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
