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


import contextlib

import numpy as np

import minigraph as mg

from ..toolkit.answers import answers_of, judges_of
from ..toolkit.answers import available as answers_available
from ..toolkit.engine import refused
from ..toolkit.exercise import Exercise, case, random_array, unchanged
from ..toolkit.public import Public, stored_values
from ..toolkit.values import encode
from ..tools.ch08 import softplus

TITLE = "Gradients as graphs"
answers = answers_of(__name__)    # answers/ch08.py: reference answers, judges and mistakes
judges = judges_of(__name__)      # judges/ch08.py: the judges that hold no answer


# -- 08.softplus_graph_vjp ------------------------------------------------------------------------

mg.defvjp(softplus, answers.softplus_graph_vjp)       # so that mg.grad goes through it
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
    with _through_ans(answer):
        again = mg.Graph(mg.grad(mg.sum(out), x)).forward(feed)
    return {"value": encode(value), "again": encode(again)}


@contextlib.contextmanager
def _through_ans(answer):
    """mg.grad goes through ``ans = softplus(x)`` by softplus' graph VJP: the reference's, or
    where the answers are not installed (the student edition) the learner's own rule, whose
    values were just compared (the gradient of a right rule's node is right either way)."""
    if answers_available():
        yield
        return
    mg.defvjp(softplus, answer)
    try:
        yield
    finally:
        mg.defvjp(softplus, answers.softplus_graph_vjp)


def _hidden_softplus(rng):
    """g and x of one random shape; x of either sign and up to a few hundred, and half the time
    one entry above 709 (where exp overflows)."""
    x = np.asarray(random_array(rng, scale=60.0, dims=(1, 2)))
    if rng.random() < 0.5:
        x.flat[int(rng.integers(x.size))] = round(float(rng.uniform(710.0, 1000.0)), 2)
    return case(g=random_array(rng, scale=2.0, shape=x.shape), x=x.tolist())


softplus_graph_vjp = Exercise(
    "08.softplus_graph_vjp", "softplus_graph_vjp", 3,
    (case(g=1.0, x=[-2.0, 0.0, 3.0]), case(g=[2.0, -1.0], x=[0.5, -0.5]),
     case(g=[[1.5, 1.0]], x=[[4.0, -3.0]], hint="A 2-D case: ops work element by element."),
     case(g=[1.0, 2.0, 1.0], x=[-30.0, 800.0, 30.0],
          hint="A large x: exp(800) overflows, as in chapter 05, and inf / inf is NaN.")),
    _vjp_run, answers.judge_softplus_vjp, "softplus_graph_vjp(g, ans, x) -> node of the gradient of x",
    ("Chain rule: the gradient of x is g times the slope of softplus at x, built as a node: "
     "combine the nodes you are given with minigraph ops (their .value numbers would not follow "
     "a new feed).",
     "Differentiate log(1 + eˣ) by the chain rule (the derivative of log u is u′ / u): the "
     "result is a function you have met since chapter 00, and minigraph has an op for it."),
    engine=refused({"mg.grading.answers.ch08.softplus_graph_vjp": "graph VJP of softplus"},
                   advice="mg.grad back through ans reaches it; build the gradient of x from the "
                          "nodes g, x (or ans) with ops"),
    hidden=_hidden_softplus,
    expected=answers.softplus_expected, public=Public(judges.judge_stored_graph_vjp))


# -- 08.second_derivative ---------------------------------------------------------------------------

FUNCTIONS = {                     # name -> f built with ops (in numpy, with f' and f'': answers/ch08.py)
    "tanh": mg.tanh,
    "cubic": lambda x: x * x * x - 2 * x,
    "gauss": lambda x: mg.exp(-(x * x)),
}
POINTS = [-1.0, 0.5, 2.0]


def points_of(case):
    """Where f'' is evaluated: POINTS, or a hidden case's own points."""
    return case.get("points", POINTS)


def _hidden_second(rng):
    """One of the functions, at 2 to 4 random points."""
    points = np.round(rng.uniform(-2.5, 2.5, int(rng.integers(2, 5))), 3).tolist()
    return {"inputs": {"f": str(rng.choice(list(FUNCTIONS)))}, "points": points}


def _second_run(answer, case):
    x = mg.Parameter(0.0, name="x")
    out = answer(FUNCTIONS[case["inputs"]["f"]], x)
    if not isinstance(out, mg.Node):
        return {"value": encode(out)}
    graph, values = mg.Graph(out), []
    by_grad = any(node.op is not None and node.op.name == "ones_like" for node in graph.nodes)
    for point in points_of(case):
        x.value = point
        values.append(float(np.sum(graph.forward())))
    return {"value": encode(values), "by_grad": by_grad}


second_derivative = Exercise(
    "08.second_derivative", "second_derivative", 2,
    tuple(case(f=name) for name in FUNCTIONS), _second_run, answers.judge_second,
    "second_derivative(f, x) -> node of f''(x)",
    ("A second derivative is the derivative of the first derivative, and in minigraph a "
     "derivative is a node like any other.",
     "f(x) is a node; mg.grad of a node with respect to x is a node too, and mg.grad accepts any "
     "node, including a gradient."),
    describe=lambda case: f"f = {case['inputs']['f']}, x at {points_of(case)}", hidden=_hidden_second,
    expected=answers.second_expected, public=Public(judges.judge_stored_second))


# -- 08.framework_words ------------------------------------------------------------------------------
#
# A word is judged by what it means, not by how it is spelled. Each answer is read as a few
# *meanings* ("a plain tensor", "calling the model", ...): case, backticks, a module path or the
# object a method belongs to (``torch.nn.Parameter``, ``W.register_hook``), arguments
# (``torch.autograd.grad(loss, [W])``), articles and remarks in parentheses do not matter, and
# alternatives separated by commas, slashes or "or" must all mean a right word. So the chapter's
# table copied cell by cell passes, and ``tensor(x)`` still does not mean calling the model.

WORDS = ("Input", "Parameter", "Graph.forward", "backward(wrt=...)", "register_backward_hook")


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


framework_words = Exercise(
    "08.framework_words", "torch_words", 1, tuple(case(word=w) for w in WORDS),
    _words_run, answers.judge_words, "torch_words = {minigraph word: PyTorch word}",
    ("Look at the chapter's table of words (section 6), and ask of each word: is it fed, trained, "
     "computed, differentiated or watched?",
     "Answer with a dict: its keys are the five minigraph words of the statement, written as "
     "there, and each value is a string naming the PyTorch word of the table's PyTorch column. "
     "A module path, arguments or a remark in parentheses may stay."),
    describe=lambda case: case["inputs"]["word"],
    expected=answers.words_expected, public=Public(judges.judge_hashed_meanings))


# -- 08.newton_step ------------------------------------------------------------------------------------

def _newton_inputs(case):
    return [np.asarray(case["inputs"][k], dtype=float) for k in ("g", "H", "x")]


def _newton_run(answer, case):
    inputs = _newton_inputs(case)
    given = [a.copy() for a in inputs]
    out = answer(*given)
    unchanged("newton_step", ["g", "H", "x"], inputs, given)
    return encode(out)


def _hidden_newton(rng):
    """g, x and a positive definite H (A Aᵀ plus a diagonal) in 1 to 4 dimensions."""
    n = int(rng.integers(1, 5))
    A = rng.normal(size=(n, n))
    H = np.round(A @ A.T + np.diag(rng.uniform(0.5, 2.0, n)), 4)
    return case(g=random_array(rng, shape=(n,)), H=H.tolist(), x=random_array(rng, shape=(n,)))


newton_step = Exercise(
    "08.newton_step", "newton_step", 2,
    (case(g=[1.0, -2.0], H=[[2.0, 0.5], [0.5, 1.0]], x=[0.5, 0.5]),
     case(g=[3.0], H=[[4.0]], x=[1.0], hint="One dimension: the step is g divided by the curvature."),
     case(g=[1.0, 0.0, -1.0], H=[[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]], x=[0.0, 1.0, 2.0])),
    _newton_run, answers.judge_newton, "newton_step(g, H, x) -> the next x",
    ("Newton's method jumps to the minimum of the quadratic that has, at x, the gradient g and "
     "the Hessian H.",
     "That minimum is where the quadratic's gradient, g plus H times the step, vanishes: the "
     "step comes from a linear system in H, and solving it beats inverting H."),
    hidden=_hidden_newton,
    expected=lambda case: encode(answers.newton_step(*_newton_inputs(case))),
    public=stored_values("08.newton_step"))

EXERCISES = [softplus_graph_vjp, second_derivative, framework_words, newton_step]
