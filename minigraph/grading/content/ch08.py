"""Chapter 08, gradients as graphs (``solutions/08_gradients_as_graphs.ipynb``).

* ``08.softplus_graph_vjp``: the VJP of softplus(x) = log(1 + eᕽ) written with ops, so that it
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
    ("that is eᕽ·g: the derivative of log(1 + eᕽ) also divides by 1 + eᕽ",
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
    ("eᕽ / (1 + eᕽ) overflows for large x (inf / inf is NaN from x ≈ 710 on): use a form that "
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
    "The derivative of log(1 + eᕽ) is eᕽ / (1 + eᕽ), which is σ(x); the chain rule multiplies it by "
    "g. Combine the nodes you are given with minigraph ops; their .value is not what you want.",
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
    "f(x) is a node; mg.grad of a node with respect to x is a node too, and mg.grad accepts any "
    "node, including a gradient.",
    describe=lambda case: f"f = {case['inputs']['f']}, x at {POINTS}")


# -- 08.framework_words ------------------------------------------------------------------------------

WORDS = {                         # minigraph word -> PyTorch words accepted (lower case, no spaces)
    "Input": {"tensor", "torch.tensor", "torch.tensor(data)"},
    "Parameter": {"nn.parameter", "torch.nn.parameter", "parameter"},
    "Graph.forward": {"model(x)", "forward", "module.forward", "model.forward", "calling the model"},
    "backward(wrt=...)": {"torch.autograd.grad", "autograd.grad"},
    "register_backward_hook": {"register_hook", "tensor.register_hook",
                               "register_full_backward_hook", "module.register_full_backward_hook"},
}
WORD_MISTAKES = {
    "Input": {"nn.parameter": "an Input is data you feed, not something training changes: a plain "
                              "tensor (TensorFlow 1: a placeholder)"},
    "Parameter": dict.fromkeys(["tensor", "torch.tensor"], "a plain tensor takes no gradient: a "
                               "Parameter is an nn.Parameter (a tensor with requires_grad=True "
                               "that the model owns)"),
    "Graph.forward": {"loss.backward()": "Graph.forward only computes values: calling the model"},
    "backward(wrt=...)": {"loss.backward()": "loss.backward() ADDS into .grad (you must zero it); "
                                             "minigraph's backward(wrt=...) returns fresh gradients "
                                             "of the nodes asked for, like torch.autograd.grad"},
    "register_backward_hook": {"optimizer.step": "optimizer.step() updates the parameters; a hook "
                                                 "watches gradients as they flow: register_hook"},
}


def _normal(word):
    return str(word).strip().lower().replace(" ", "").rstrip("()") if word is not None else ""


def _calls_the_model(word):
    """``net(x)``, ``mlp(batch)``: a model called on its input, whatever the learner named it
    (but not a torch function written without ``torch.``, such as ``tensor(x)``)."""
    call = re.fullmatch(r"([a-z_]\w*)\(\w+\)", str(word).strip().lower().replace(" ", ""))
    return call is not None and call.group(1) not in {"tensor", "parameter", "grad", "backward"}


def _words_run(answer, case):
    if not isinstance(answer, dict):
        return {"type": type(answer).__name__}
    return {"words": {str(k): str(v) for k, v in answer.items()}}


def _words_judge(case, got):
    if "words" not in got:
        return Verdict(False, "a dict", got.get("type", "?"), "answer with a dict {minigraph word: "
                       "PyTorch word}, one entry per word of the table")
    key = case["inputs"]["word"]
    given = got["words"].get(key)
    if given is None:
        return Verdict(False, "", "—", f"no entry for '{key}'")
    word = _normal(given)
    if word in {_normal(w) for w in WORDS[key]} or key == "Graph.forward" and _calls_the_model(given):
        return Verdict(True, "", given)
    for wrong, message in WORD_MISTAKES[key].items():
        if word == _normal(wrong):
            return Verdict(False, "", given, message)
    return Verdict(False, "", given, f"'{given}' is not the PyTorch word for {key}")


framework_words = Exercise(
    "08.framework_words", "torch_words", 1, tuple(case(word=w) for w in WORDS),
    _words_run, _words_judge, "torch_words = {minigraph word: PyTorch word}",
    "Look at the chapter's table of words, and ask of each word: is it fed, trained, computed, "
    "differentiated or watched?", describe=lambda case: case["inputs"]["word"])


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
    "Near x, f is a quadratic with gradient g and Hessian H; its minimum is where the gradient of "
    "that quadratic is zero. Solving a linear system beats inverting a matrix.")

EXERCISES = [softplus_graph_vjp, second_derivative, framework_words, newton_step]
