"""Chapter 10, attention (``solutions/10_attention.ipynb``).

Two exercises on the heart of the chapter:

* ``10.attention``: scaled dot-product attention ``softmax(Q Kᵀ / √d) V`` in numpy, batched over
  leading axes, with an optional boolean mask (True: the query may attend to that key). Cases
  include a causal mask, a padding mask, scores large enough to overflow an unshifted
  softmax and queries whose scores lie far apart (stability is a case, not a sentence).
* ``10.softmax_vjp``: the backward rule of softmax along an axis, built by ``vjp.vjp_exercise``;
  its graph case uses the rule twice, along axis 0 and along the last axis.

Each knows its typical wrong answers (``*_MISTAKES``: a text and the function that makes that
mistake). The engine has a softmax and a matrix product, so while an answer runs their forward
functions (or, for the VJP, softmax's own backward rules) refuse to work (``engine=``, the
toolkit's engine rule): the exercise is to write them.
"""

import dataclasses

import numpy as np

import minigraph as mg

from ..toolkit.answers import answers_of
from ..toolkit.engine import forward_of, refused, vjps_of
from ..toolkit.exercise import case, float_errors_named, function_exercise, random_array, unchanged
from ..toolkit.values import encode
from ..toolkit.vjp import graph_case, vjp_exercise

TITLE = "Attention"
answers = answers_of(__name__)    # answers/ch10.py: references and mistakes, used only to judge


def softmax(scores, axis=-1):
    shifted = scores - scores.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


# -- 10.attention -------------------------------------------------------------------------------

def _run_attention(answer, case):
    """Call the answer with Q, K, V as float arrays and the mask, if the case has one, as booleans."""
    given = case["inputs"]
    inputs = [np.asarray(given[name], dtype=float) for name in ("Q", "K", "V")]
    copies = [x.copy() for x in inputs]
    masks = [np.asarray(given["mask"], dtype=bool)] if "mask" in given else []
    with np.errstate(over="raise", invalid="raise"):
        out = answer(*copies, *[m.copy() for m in masks])
    unchanged("attention", ["Q", "K", "V"], inputs, copies)
    return encode(out)


def _rounded(rng, *shape):
    return np.round(rng.normal(size=shape), 1).tolist()


def _hidden_attention(rng):
    """Q (…, n, d), K and V (…, m, d) and (…, m, dv) of random small sizes, d ≠ dv, with or
    without a batch axis, in one of three regimes (each shows other mistakes; the masked one
    half the time, as most mask mistakes show only there):

    * ordinary scores, with no mask, a causal mask (n = m) or a padding mask (each sequence's
      first keys kept), so every query may attend to at least one key;
    * a dominant masked key: the last key, masked for some queries, has scores near 1000
      (a mask applied after the softmax leaves those queries nothing: 0 / 0);
    * large scores, no mask: every key shares one large component, which adds the same 800 or
      more to all of a query's scores (an unshifted exp overflows; the softmax, and so the
      scaling of the differences between keys, is unchanged by it)."""
    batch = () if rng.random() < 0.5 else (int(rng.integers(1, 4)),)
    n, m = (int(k) for k in rng.integers(1, 5, size=2))
    d, dv = (int(k) for k in rng.choice(np.arange(1, 6), size=2, replace=False))
    regime = rng.choice(["ordinary", "dominant masked key", "large scores"], p=[0.25, 0.5, 0.25])
    kind = rng.choice(["none", "causal", "padding"]) if regime == "ordinary" else \
        "none" if regime == "large scores" else rng.choice(["causal", "padding"])
    n = m = max(n, 2) if regime == "dominant masked key" and kind == "causal" else n
    m = n if kind == "causal" else max(m, 2) if regime == "dominant masked key" else m
    arrays = {name: np.asarray(random_array(rng, scale=2.0, shape=batch + shape))
              for name, shape in (("Q", (n, d)), ("K", (m, d)), ("V", (m, dv)))}
    if regime != "ordinary":
        arrays["Q"][..., 0] = np.abs(arrays["Q"][..., 0]) + 1.0
    if regime == "large scores":
        arrays["K"][..., 0] += 800.0 * np.sqrt(d)
    if regime == "dominant masked key":
        arrays["K"][..., -1, 0] = 1000.0 * np.sqrt(d)
    inputs = {name: np.round(value, 4).tolist() for name, value in arrays.items()}
    if kind == "causal":
        inputs["mask"] = np.tri(n, dtype=bool).tolist()
    elif kind == "padding":
        kept = rng.integers(1, m, size=batch or (1,)) if regime == "dominant masked key" else \
            rng.integers(1, m + 1, size=batch or (1,))
        inputs["mask"] = (np.arange(m) < kept[:, None, None]).reshape(batch + (1, m)).tolist()
    return case(**inputs)


def _not_a_number(case, error):
    """What a weight that is not a number says of the answer: numpy names the operation (0 · ∞
    in a product, 0 / 0 in the softmax's division), and a case without a mask rules out the
    mask's mistakes."""
    if "multiply" in error:
        return ("a score came out 0 · (−∞), not a number: multiplying the mask by −∞ gives that for "
                "every allowed key; choose the masked scores with np.where instead")
    if "mask" not in case["inputs"]:
        return ("a query's weights came out 0 / 0 (not a number): every exp underflowed to 0, so "
                "the score subtracted was far above that query's own scores (one maximum for the "
                "whole batch?); subtract each query's own largest score")
    return ("a query's weights came out 0 / 0 (not a number): its allowed keys all got weight 0, "
            "because a masked key with a much larger score took all the weight: the mask was "
            "applied after the softmax, or the largest score was taken before masking (or over "
            "the whole batch); mask the scores before the softmax, then subtract each query's "
            "largest allowed score")


_rng = np.random.default_rng(10)
_BATCHED = dict(Q=_rounded(_rng, 2, 3, 4), K=_rounded(_rng, 2, 3, 4), V=_rounded(_rng, 2, 3, 4))
_SMALL = dict(Q=_rounded(_rng, 2, 3, 2), K=_rounded(_rng, 2, 3, 2), V=_rounded(_rng, 2, 3, 2))
_WIDE_VALUES = dict(Q=_rounded(_rng, 2, 3), K=_rounded(_rng, 5, 3), V=_rounded(_rng, 5, 2))
_CAUSAL = [[True, False, False], [True, True, False], [True, True, True]]
_PADDING = [[[True, True, False]], [[True, False, False]]]       # (batch, 1, keys): the last keys are padding

attention = dataclasses.replace(function_exercise(
    "10.attention", "attention", answers.attention, points=4,
    cases=[
        case(Q=[[1.0, 0.0], [0.0, 2.0]], K=[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
             V=[[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]),
        case(**_BATCHED, hint="A batch of 2 sequences of 3 tokens, d = 4: the same formula for "
                              "each sequence, along the last two axes."),
        case(**_SMALL, mask=_CAUSAL,
             hint=("A causal mask: query i may attend to keys 0..i only.",
                   "A masked key must get weight exactly 0 and the allowed weights still sum to "
                   "1: change the scores before the softmax, not the weights after it.")),
        case(**_SMALL, mask=_PADDING,
             hint="A padding mask of shape (2, 1, 3): it broadcasts over the queries; in each "
                  "sequence the last keys are padding that no query may attend to."),
        case(Q=[[40.0, 0.0], [0.0, 40.0]], K=[[40.0, 0.0], [0.0, 40.0], [39.0, 1.0]],
             V=[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
             hint="Scores above 709 overflow exp: subtract each row's largest score first "
                  "(chapter 05)."),
        case(**_WIDE_VALUES, hint="Queries and keys of length d = 3, values of length 2, five "
                                  "keys: which of these lengths scales the scores?"),
        case(Q=[[1.0, 0.0]], K=[[1.0, 0.0], [2000.0, 0.0]], V=[[1.0, 2.0], [3.0, -1.0]],
             mask=[[True, False]],
             hint=("The masked key has by far the largest score: a masked key must get weight 0 "
                   "however large its score.",
                   "Where the mask enters decides what the masked key's score can still do: "
                   "after the softmax, it has already taken all the weight.")),
        case(Q=[[40.0, 0.0], [-40.0, 0.0]], K=[[40.0, 0.0], [0.0, 1.0]], V=[[1.0, 0.0], [0.0, 1.0]],
             hint="Two queries whose largest scores lie more than 1,000 apart: one query's "
                  "weights must not depend on another query's scores."),
    ],
    hint=("Attention weights are a softmax over the keys of each query's scaled scores; the "
          "output mixes the values with those weights.",
          "Check three choices against the chapter's formula: which length scales the scores "
          "(queries and keys share it, values need not), where the mask enters so that a masked "
          "key gets exactly 0 whatever its score, and over which axis the weights sum to 1. The "
          "batch axes come along if every step works on the last two axes."),
    title="attention(Q, K, V, mask=None)",
    mistakes=answers.ATTENTION_MISTAKES,
    engine=refused({**forward_of(mg.softmax), **forward_of(mg.log_softmax), **forward_of(mg.matmul)}),
    hidden=_hidden_attention),
    run=float_errors_named(
        _run_attention,
        over=("exp overflowed (a score above 709): subtract each query's largest score from its "
              "row of scores before exp, as a stable softmax does (chapter 05)"),
        invalid=_not_a_number))


# -- 10.softmax_vjp -------------------------------------------------------------------------------

def softmax_graph(rules):
    """loss = sum(softmax(softmax(X·w, axis=0)·v, axis=-1)·u): the rule along both axes."""
    softmax_op = mg.defop("softmax_exercise", softmax, rules, symbol="softmax")
    X = mg.Input("X")
    w = mg.Parameter([[0.5, -1.0], [1.5, 0.3], [-0.7, 1.1]], name="w")
    v = mg.Parameter([[2.0, -1.0], [0.5, 1.5], [-1.0, 3.0]], name="v")
    u = mg.Parameter([[1.0, -2.0], [3.0, 0.5], [-1.5, 2.0]], name="u")
    columns = softmax_op(mg.mul(X, w, name="z1"), axis=0, name="s1")
    rows = softmax_op(mg.mul(columns, v, name="z2"), axis=-1, name="s2")
    return mg.Graph(mg.sum(mg.mul(rows, u, name="z3"), name="loss"))


def _hidden_softmax_vjp(rng):
    """g and x of one random (rows, columns), 2 to 5 of each, and an axis (0, 1, -1 or -2)."""
    shape = tuple(int(k) for k in rng.integers(2, 6, size=2))
    return case(g=random_array(rng, scale=2.0, shape=shape), x=random_array(rng, shape=shape),
                axis=int(rng.integers(-2, 2)))


_G = np.round(np.random.default_rng(11).normal(size=(3, 3)), 1).tolist()
_X = np.round(np.random.default_rng(12).normal(size=(3, 3)), 1).tolist()

softmax_vjp = vjp_exercise(
    "10.softmax_vjp", "softmax_vjp", 3, "softmax_vjp(g, ans, x, axis=-1)", softmax, answers.softmax_vjp,
    softmax_graph, "loss = sum(softmax(softmax(X·w, axis=0)·v, axis=-1)·u)",
    cases=[
        case(g=[1.0, 0.0, 0.0], x=[0.0, 1.0, 2.0],
             hint="g picks the first output: the answer is how y₀ changes with each input."),
        case(g=[0.5, -1.0, 2.0], x=[1.0, -1.0, 0.5]),
        case(g=_G, x=_X, hint="Three rows, three softmaxes (axis -1): each row subtracts its own sum."),
        case(g=[[1.0, 2.0, 0.0, -1.0], [0.5, 0.5, 0.5, 0.5]], x=[[0.0, 1.0, -1.0, 2.0], [3.0, 0.0, 1.0, 2.0]],
             hint="The second row's g is the same everywhere: a softmax's outputs always sum to "
                  "1, so its gradient there is 0."),
        graph_case(X=[[1.0, -0.5], [0.2, 2.0], [-1.0, 0.4]]),
    ],
    mistakes=answers.SOFTMAX_VJP_MISTAKES,
    hint=("Each output of a softmax depends on every input along the axis: the Jacobian is "
          "diag(y) − y yᵀ, and the VJP is g times it, without building the matrix.",
          "gᵀ(diag(y) − y yᵀ) is y·g minus y times one number per slice: the sum along the axis "
          "of g·y. Keep that axis so the number broadcasts back over its slice."),
    engine=refused({**vjps_of(mg.softmax), **vjps_of(mg.log_softmax)}), hidden=_hidden_softmax_vjp)


EXERCISES = [attention, softmax_vjp]
