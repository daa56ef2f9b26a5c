"""Chapter 08, gradients as graphs (``solutions/08_gradients_as_graphs.ipynb``).

* ``08.softplus_graph_vjp``: the VJP of softplus(x) = log(1 + eˣ) written with ops, so that it
  is a graph. ``run`` builds the learner's VJP on Inputs ``g`` and ``x`` fed with *decoy*
  values, then runs it at the case's values (a VJP built from ``.value`` numbers keeps the
  decoy's numbers), and runs ``mg.grad`` of it too (a graph VJP can be differentiated again).
  While the answer builds its node, softplus' own graph VJP refuses, so ``mg.grad`` through
  ``ans`` cannot do the exercise.
* ``08.second_derivative``: ``second_derivative(f, x)`` returns the node of f''(x), with
  ``mg.grad`` twice; ``run`` evaluates it at three points for each function of the cases.
* ``08.framework_words``: the PyTorch word for each minigraph word of a small model.
* ``08.newton_step``: one Newton step x - H⁻¹ g, in numpy.

``judge`` recomputes the typical mistakes of an exercise on the case's inputs; when the
learner's answer equals one of them, the message says which mistake it is.
"""

import re

import numpy as np

import minigraph as mg

from ..toolkit.engine import refused
from ..toolkit.exercise import Exercise, Verdict, case, compare, diagnose, unchanged
from ..toolkit.values import Unreadable, decode, encode
from ..tools.ch08 import softplus, softplus_numbers

TITLE = "Gradients as graphs"


def _not_a_node(got):
    """The verdict for an answer that returned numbers (or anything) instead of a node."""
    return Verdict(False, "a node", got.text if isinstance(got, Unreadable) else "numbers",
                   f"returned {got.type_name if isinstance(got, Unreadable) else 'numbers'}, not a "
                   f"node: build the result from the nodes you are given with minigraph ops "
                   f"(mg.sigmoid, *, +, mg.grad ...), so that it is part of the graph")


# -- 08.softplus_graph_vjp ------------------------------------------------------------------------

_sigmoid = mg.sigmoid.opdef.forward        # the engine's own, stable for large |x|


def _softplus_graph_vjp(g, ans, x):
    return g * mg.sigmoid(x)


mg.defvjp(softplus, _softplus_graph_vjp)       # so that mg.grad goes through it
DECOY = 0.25                     # g and x hold this before the case's values are fed


def _vjp_run(answer, case):
    g, x = mg.Input("g"), mg.Input("x")
    values = {g: case["inputs"]["g"], x: case["inputs"]["x"]}
    decoy = {node: np.full(np.shape(value), DECOY) for node, value in values.items()}
    ans = softplus(x, name="ans")
    mg.Graph([ans, g]).forward(decoy)
    out = answer(g, ans, x)
    if not isinstance(out, mg.Node):
        return {"value": encode(out)}
    graph = mg.Graph(out)
    feed = {n: v for n, v in values.items() if n in graph.inputs}
    value = graph.forward(feed)
    if x not in graph.nodes:
        return {"value": encode(value), "again": encode(np.zeros(np.shape(value)))}
    again = mg.Graph(mg.grad(mg.sum(out), x)).forward(feed)
    return {"value": encode(value), "again": encode(again)}


SOFTPLUS_MISTAKES = [
    ("the upstream gradient g is missing: multiply the local derivative by g",
     lambda g, x: _sigmoid(x) + 0 * g),
    ("that is eˣ·g: the derivative of log(1 + eˣ) also divides by 1 + eˣ",
     lambda g, x: g * np.exp(x)),
    ("the sign is flipped: softplus grows with x, so its derivative is positive",
     lambda g, x: -g * _sigmoid(x)),
    ("σ of the output instead of σ of the input: the derivative is σ(x), x being the op's input",
     lambda g, x: g * _sigmoid(softplus_numbers(x))),
    ("that is g times the output (as for exp): softplus' derivative is σ(x), not softplus(x)",
     lambda g, x: g * softplus_numbers(x)),
    ("it keeps the numbers g and x had when the graph was built (.value): use the nodes g, ans, x "
     "themselves, so the result follows every new feed",
     lambda g, x: np.full(np.shape(x), DECOY * _sigmoid(DECOY))),
    ("eˣ / (1 + eˣ) overflows for large x (inf / inf is NaN from x ≈ 710 on): use a form that "
     "never takes exp of a large positive number, such as mg.sigmoid",
     lambda g, x: g * np.exp(x) / (1 + np.exp(x))),
]


def _vjp_judge(case, got):
    g, x = (np.asarray(case["inputs"][k], dtype=float) for k in ("g", "x"))
    value = decode(got["value"])
    if "again" not in got:
        return _not_a_node(value)
    verdict = diagnose(compare(g * _sigmoid(x), value), value, dict(SOFTPLUS_MISTAKES),
                       lambda wrong: wrong(g, x))
    if not verdict.passed:
        return verdict
    again = decode(got["again"])
    slope = _sigmoid(x) * (1 - _sigmoid(x))
    if not compare(g * slope, again).passed:
        return Verdict(False, "", "", "the values are right, but mg.grad of your VJP is not σ'(x)·g: "
                                      "build it from ops that have a graph VJP of their own")
    return verdict


softplus_graph_vjp = Exercise(
    "08.softplus_graph_vjp", "softplus_graph_vjp", 3,
    (case(g=1.0, x=[-2.0, 0.0, 3.0]), case(g=[2.0, -1.0], x=[0.5, -0.5]),
     case(g=[[1.5, 1.0]], x=[[4.0, -3.0]], hint="A 2-D case: ops work element by element."),
     case(g=[1.0, 2.0, 1.0], x=[-30.0, 800.0, 30.0],
          hint="A large x: exp(800) overflows, as in chapter 05, and inf / inf is NaN.")),
    _vjp_run, _vjp_judge, "softplus_graph_vjp(g, ans, x) -> node of the gradient of x",
    ("Chain rule: the gradient of x is g times the slope of softplus at x, built as a node: "
     "combine the nodes you are given with minigraph ops (their .value numbers would not follow "
     "a new feed).",
     "Differentiate log(1 + eˣ) by the chain rule (the derivative of log u is u′ / u): the "
     "result is a function you have met since chapter 00, and minigraph has an op for it."),
    engine=refused({"mg.grading.content.ch08._softplus_graph_vjp": "graph VJP of softplus"},
                   advice="mg.grad back through ans reaches it; build the gradient of x from the "
                          "nodes g, x (or ans) with ops"))


# -- 08.second_derivative ---------------------------------------------------------------------------

FUNCTIONS = {                     # name -> (f built with ops, f, f', f'' in numpy)
    "tanh": (mg.tanh, np.tanh, lambda x: 1 - np.tanh(x) ** 2,
             lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    "cubic": (lambda x: x * x * x - 2 * x, lambda x: x ** 3 - 2 * x, lambda x: 3 * x ** 2 - 2,
              lambda x: 6 * x),
    "gauss": (lambda x: mg.exp(-(x * x)), lambda x: np.exp(-x ** 2), lambda x: -2 * x * np.exp(-x ** 2),
              lambda x: (4 * x ** 2 - 2) * np.exp(-x ** 2)),
}
POINTS = [-1.0, 0.5, 2.0]


def _second_run(answer, case):
    x = mg.Parameter(0.0, name="x")
    out = answer(FUNCTIONS[case["inputs"]["f"]][0], x)
    if not isinstance(out, mg.Node):
        return {"value": encode(out)}
    graph, values = mg.Graph(out), []
    by_grad = any(node.op is not None and node.op.name == "ones_like" for node in graph.nodes)
    for point in POINTS:
        x.value = point
        values.append(float(np.sum(graph.forward())))
    return {"value": encode(values), "by_grad": by_grad}


NOT_BY_GRAD = ("second_derivative's node was not built by mg.grad (mg.grad starts every gradient it "
               "builds from ones_like(output), and the node has none): differences of f at nearby "
               "points only approximate f''; the exercise asks for the gradient graph, mg.grad of "
               "mg.grad")


def _second_judge(case, got):
    f, f1, f2 = FUNCTIONS[case["inputs"]["f"]][1:]
    value, x = decode(got["value"]), np.array(POINTS)
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


second_derivative = Exercise(
    "08.second_derivative", "second_derivative", 2,
    tuple(case(f=name) for name in FUNCTIONS), _second_run, _second_judge,
    "second_derivative(f, x) -> node of f''(x)",
    ("A second derivative is the derivative of the first derivative, and in minigraph a "
     "derivative is a node like any other.",
     "f(x) is a node; mg.grad of a node with respect to x is a node too, and mg.grad accepts any "
     "node, including a gradient."),
    describe=lambda case: f"f = {case['inputs']['f']}, x at {POINTS}")


# -- 08.framework_words ------------------------------------------------------------------------------
#
# A word is judged by what it means, not by how it is spelled. Each answer is read as a few
# *meanings* ("a plain tensor", "calling the model", ...): case, backticks, a module path or the
# object a method belongs to (``torch.nn.Parameter``, ``W.register_hook``), arguments
# (``torch.autograd.grad(loss, [W])``), articles and remarks in parentheses do not matter, and
# alternatives separated by commas, slashes or "or" must all mean a right word. So the chapter's
# table copied cell by cell passes, and ``tensor(x)`` still does not mean calling the model.

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


def _spelled(word):
    """What the learner wrote, as text; a PyTorch object itself (``torch.nn.Parameter``) by its
    full name, ``torch.nn.parameter.Parameter``."""
    if isinstance(word, str) or not hasattr(word, "__qualname__"):
        return str(word)
    return ".".join(filter(None, [getattr(word, "__module__", None), word.__qualname__]))


def _words_run(answer, case):
    if not isinstance(answer, dict):
        return {"type": type(answer).__name__}
    return {"words": {str(k): _spelled(v) for k, v in answer.items()}}


def _words_judge(case, got):
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


framework_words = Exercise(
    "08.framework_words", "torch_words", 1, tuple(case(word=w) for w in RIGHT_MEANINGS),
    _words_run, _words_judge, "torch_words = {minigraph word: PyTorch word}",
    ("Look at the chapter's table of words (section 6), and ask of each word: is it fed, trained, "
     "computed, differentiated or watched?",
     "Answer with a dict: its keys are the five minigraph words of the statement, written as "
     "there, and each value is a string naming the PyTorch word of the table's PyTorch column. "
     "A module path, arguments or a remark in parentheses may stay."),
    describe=lambda case: case["inputs"]["word"])


# -- 08.newton_step ------------------------------------------------------------------------------------

def _newton(g, H, x):
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


def _newton_run(answer, case):
    inputs = [np.asarray(case["inputs"][k], dtype=float) for k in ("g", "H", "x")]
    given = [a.copy() for a in inputs]
    out = answer(*given)
    unchanged("newton_step", ["g", "H", "x"], inputs, given)
    return encode(out)


def _newton_judge(case, got):
    g, H, x = (np.asarray(case["inputs"][k], dtype=float) for k in ("g", "H", "x"))
    value = decode(got)
    return diagnose(compare(_newton(g, H, x), value), value, dict(NEWTON_MISTAKES),
                    lambda wrong: wrong(g, H, x))


newton_step = Exercise(
    "08.newton_step", "newton_step", 2,
    (case(g=[1.0, -2.0], H=[[2.0, 0.5], [0.5, 1.0]], x=[0.5, 0.5]),
     case(g=[3.0], H=[[4.0]], x=[1.0], hint="One dimension: the step is g divided by the curvature."),
     case(g=[1.0, 0.0, -1.0], H=[[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]], x=[0.0, 1.0, 2.0])),
    _newton_run, _newton_judge, "newton_step(g, H, x) -> the next x",
    ("Newton's method jumps to the minimum of the quadratic that has, at x, the gradient g and "
     "the Hessian H.",
     "That minimum is where the quadratic's gradient, g plus H times the step, vanishes: the "
     "step comes from a linear system in H, and solving it beats inverting H."))

EXERCISES = [softplus_graph_vjp, second_derivative, framework_words, newton_step]
