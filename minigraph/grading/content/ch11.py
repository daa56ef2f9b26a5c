"""Chapter 11, the Transformer (``solutions/11_transformer.ipynb``).

Three exercises on the bookkeeping of multi-head causal self-attention, in numpy, and one on
the backward rule of its layer norm:

* ``11.split_heads``: ``(B, T, C) -> (B, H, T, C / H)``, head h taking the h-th block of
  C / H channels;
* ``11.merge_heads``: the way back, ``(B, H, T, d) -> (B, T, H·d)``;
* ``11.causal_mask``: the ``(T, T)`` boolean mask that lets position i attend to 0 .. i;
* ``11.layer_norm_vjp``: the backward rule of layer norm (no shift), for x and for gamma, built
  by ``vjp.vjp_exercise``; its graph case uses the rule twice.

Each knows its typical wrong answers (``*_MISTAKES``: a text and the function that makes that
mistake); the heads' cases hold distinct numbers, so every scrambling of the channels shows.
The engine has a causal mask and layer norm's backward rules, which refuse while an answer runs
(``engine=``, the toolkit's engine rule); it has no function that splits or merges heads (the
GPT does it with ``reshape`` and ``transpose``, the numpy the exercise asks for), so those
refuse nothing.
"""

import dataclasses

import numpy as np

import minigraph as mg

from ..toolkit.engine import refused
from ..toolkit.exercise import Exercise, Rule, Verdict, case, compare, diagnose, function_exercise, unchanged
from ..toolkit.values import decode, encode
from ..toolkit.vjp import graph_case, vjp_exercise

TITLE = "The Transformer"


# -- 11.split_heads -------------------------------------------------------------------------------

def _split_heads(x, n_head):
    B, T, C = x.shape
    H = int(n_head)
    return x.reshape(B, T, H, C // H).transpose(0, 2, 1, 3)


def _dealt(x, n_head):
    """Channel c to head c mod H: the heads' channels interleaved, not in blocks."""
    B, T, C = x.shape
    H = int(n_head)
    return x.reshape(B, T, C // H, H).transpose(0, 3, 1, 2)


SPLIT_MISTAKES = {
    "It looks like x was reshaped straight to (B, H, T, d): that cuts the numbers in memory "
    "order, so a head gets pieces of several positions; reshape to (B, T, H, d) first, then "
    "swap the T and H axes.": lambda x, H: x.reshape(x.shape[0], int(H), x.shape[1], -1),
    "It looks like the heads' axis was never moved: the result is (B, T, H, d); swap the T "
    "and H axes to get (B, H, T, d).": lambda x, H: x.reshape(*x.shape[:2], int(H), -1),
    "It looks like the channels were dealt out to the heads in turn (channel c to head c mod "
    "H): head h takes the h-th block of d consecutive channels.": _dealt,
    "It looks like the heads' axis came first, before the batch: the result is (B, H, T, d), "
    "the batch axis stays first.":
        lambda x, H: x.reshape(*x.shape[:2], int(H), -1).transpose(2, 0, 1, 3),
    "It looks like the wrong axes were swapped (the last two as well): the result is "
    "(B, H, T, d), each head's positions along the third axis and channels along the last.":
        lambda x, H: x.reshape(*x.shape[:2], int(H), -1).transpose(0, 2, 3, 1),
}


def _run_split(answer, case):
    """Call the answer with x as a float array and n_head as an int; a reshape to the wrong
    number of entries (d taken as C·H, say) is explained in the exercise's words."""
    x = np.asarray(case["inputs"]["x"], dtype=float)
    copy = x.copy()
    try:
        out = answer(copy, int(case["inputs"]["n_head"]))
    except ValueError as error:
        if "cannot reshape" not in str(error):
            raise
        raise Rule(f"a reshape asked for a shape that does not hold the B·T·C numbers of x: "
                   f"(B, T, H, d) holds them when d = C / H, the channels of one head "
                   f"({error})") from None
    unchanged("split_heads", ["x"], [x], [copy])
    return encode(out)


def _numbered(*shape):
    """Distinct numbers 0, 1, 2, ... in ``shape``: any scrambling of the entries shows."""
    return np.arange(np.prod(shape), dtype=float).reshape(shape).tolist()


split_heads = dataclasses.replace(function_exercise(
    "11.split_heads", "split_heads", _split_heads, points=2,
    cases=[
        case(x=_numbered(1, 3, 4), n_head=2),
        case(x=_numbered(2, 3, 4), n_head=2,
             hint="Two sequences of three positions, four channels, two heads of two channels: "
                  "head 0 holds channels 0 and 1 of every position, head 1 channels 2 and 3."),
        case(x=_numbered(2, 2, 6), n_head=3, hint="Three heads of two channels each."),
        case(x=_numbered(1, 3, 6), n_head=2, hint="Two heads of three channels each."),
    ],
    hint=("Head h of position t is the h-th block of d = C / H consecutive channels of x[b, t]; "
          "the result orders its axes as (batch, head, position, channel).",
          "A reshape only regroups the numbers in their memory order: it can cut the last axis "
          "C into (H, d), keeping (B, T) in front; moving the heads' axis before the positions "
          "is then a transpose, not another reshape."),
    title="split_heads(x, n_head): (B, T, C) -> (B, H, T, C / H)", mistakes=SPLIT_MISTAKES),
    run=_run_split)


# -- 11.merge_heads -------------------------------------------------------------------------------

def _merge_heads(x):
    B, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)


MERGE_MISTAKES = {
    "It looks like the heads were reshaped back without moving the heads' axis: (B, H, T, d) "
    "read in memory order mixes positions; bring the positions next to the batch first, "
    "(B, T, H, d), then join the last two axes.": lambda x: x.reshape(x.shape[0], x.shape[2], -1),
    "It looks like the heads' channels were interleaved (head h's channel j landing at j·H + h): "
    "head h's d channels form the h-th block of the result.":
        lambda x: x.transpose(0, 2, 3, 1).reshape(x.shape[0], x.shape[2], -1),
    "It looks like the heads were added up: merging concatenates them, C = H·d channels.":
        lambda x: x.sum(axis=1),
    "It looks like the heads were averaged: merging concatenates them, C = H·d channels.":
        lambda x: x.mean(axis=1),
    "It looks like the heads were joined along the positions: they are joined along the "
    "channels, giving (B, T, H·d).": lambda x: x.reshape(x.shape[0], -1, x.shape[3]),
    "It looks like the last two axes were never joined: the result is (B, T, H, d) and must "
    "be (B, T, H·d).": lambda x: x.transpose(0, 2, 1, 3),
}

merge_heads = function_exercise(
    "11.merge_heads", "merge_heads", _merge_heads, points=1,
    cases=[
        case(x=_numbered(1, 2, 2, 2)),
        case(x=_numbered(2, 2, 3, 2), hint="Two sequences, two heads, three positions: position t "
                                           "of the result is head 0's channels, then head 1's."),
        case(x=_numbered(2, 3, 2, 2), hint="Three heads of two channels: six channels per position."),
    ],
    hint=("Merging undoes split_heads: position t of the result holds head 0's d channels, then "
          "head 1's, and so on.",
          "Move the heads' axis back behind the positions (a transpose), then let a reshape "
          "join the last two axes into one of H·d channels."),
    title="merge_heads(x): (B, H, T, d) -> (B, T, H·d)", mistakes=MERGE_MISTAKES)


# -- 11.causal_mask -------------------------------------------------------------------------------

def _causal_mask(T):
    return np.tri(int(T), dtype=bool)


MASK_MISTAKES = {
    "It looks like the diagonal is masked too (a strict lower triangle): a position may attend "
    "to itself, so the first one has something to attend to.":
        lambda T: np.tri(int(T), k=-1, dtype=bool),
    "It looks like the mask lets each position see the future (the upper triangle): position i "
    "may attend to positions 0 .. i, on and below the diagonal.":
        lambda T: np.tri(int(T), dtype=bool).T,
    "It looks like the mask marks the forbidden places (True above the diagonal): True marks "
    "where a position MAY attend.": lambda T: ~np.tri(int(T), dtype=bool),
    "It looks like nothing is masked: position i must not see the positions after it.":
        lambda T: np.ones((int(T), int(T)), dtype=bool),
    "It looks like each position sees only itself (the diagonal): it may attend to every "
    "position up to and including itself.": lambda T: np.eye(int(T), dtype=bool),
    "It looks like an additive mask (0 where allowed, −∞ where not) was returned: this one is "
    "boolean, True where a position may attend, as mg.softmax's mask= takes.":
        lambda T: np.where(np.tri(int(T), dtype=bool), 0.0, -np.inf),
}

FLOAT_MASK = ("the mask holds numbers (1 and 0), not booleans: added to the scores, a 0/1 mask "
              "only nudges them, and np.where(mask, ...) or mg.softmax's mask= read a boolean "
              "array; give it dtype=bool")


def _run_mask(answer, case):
    """The mask the answer gives for T (an int), and whether it is boolean."""
    out = answer(int(case["inputs"]["T"]))
    try:
        boolean = np.asarray(out).dtype == bool
    except ValueError:                       # a ragged list: encode says what it is
        boolean = False
    return {"value": encode(out), "boolean": boolean}


def _judge_mask(case, got):
    T, value = case["inputs"]["T"], decode(got["value"])
    verdict = diagnose(compare(_causal_mask(T), value), value, MASK_MISTAKES,
                       lambda wrong: wrong(T))
    if verdict.passed and not got.get("boolean"):
        return Verdict(False, verdict.expected, verdict.got, FLOAT_MASK)
    return verdict


causal_mask = Exercise(
    "11.causal_mask", "causal_mask", 1,
    (case(T=1), case(T=3), case(T=5, hint="Row i is what position i may see: True in columns "
                                          "0 .. i, False after.")),
    _run_mask, _judge_mask, "causal_mask(T) -> (T, T) booleans",
    ("Position i may attend to itself and to every position before it: row i of the mask "
          "is True up to and including column i.",
          "That is a lower triangle with its diagonal, as booleans: numpy builds triangles "
          "(np.tri, np.tril), or compare a column of row numbers with a row of column numbers."),
    engine=refused({"mg.causal_mask": "causal mask"}))


# -- 11.layer_norm_vjp ----------------------------------------------------------------------------

EPS = 1e-5           # the engine's layer_norm default, as torch.nn.LayerNorm's


def _normalized(x, eps=EPS, ddof=0, axis=-1):
    """(x - mean) / sqrt(variance + eps) along ``axis``, and 1 / sqrt(variance + eps)."""
    centered = x - x.mean(axis=axis, keepdims=True)
    inv_std = 1 / np.sqrt(np.sum(centered ** 2, axis=axis, keepdims=True) / (x.shape[axis] - ddof) + eps)
    return centered * inv_std, inv_std


def _layer_norm(x, gamma, eps=EPS):
    return _normalized(x, eps)[0] * gamma


def _layer_norm_vjp(g, ans, x, gamma, eps=EPS, *, through_mean=True, through_variance=True,
                    by_gamma=True, ddof=0, axis=-1, summed=True, from_output=False):
    """(grad_x, grad_gamma); the keywords switch on the typical mistakes."""
    x_hat, inv_std = _normalized(x, eps, ddof, axis)
    h = g * gamma if by_gamma else g
    grad_x = h
    if through_mean:
        grad_x = grad_x - h.mean(axis=axis, keepdims=True)
    if through_variance:
        grad_x = grad_x - x_hat * np.mean(h * x_hat, axis=axis, keepdims=True)
    per_row = g * (ans if from_output else x_hat)
    return inv_std * grad_x, per_row.reshape(-1, np.shape(gamma)[-1]).sum(axis=0) if summed else per_row


LAYER_NORM_MISTAKES = {
    "the mean and the variance were treated as constants: both depend on every entry of the "
    "row, which adds a term for each": lambda *a, **k: _layer_norm_vjp(
        *a, **k, through_mean=False, through_variance=False),
    "the path through the mean is missing: every entry moves the row's mean, so subtract the "
    "row's mean of g·gamma": lambda *a, **k: _layer_norm_vjp(*a, **k, through_mean=False),
    "the path through the variance is missing: every entry moves the row's variance, which "
    "subtracts x̂ times the row's mean of g·gamma·x̂":
        lambda *a, **k: _layer_norm_vjp(*a, **k, through_variance=False),
    "gamma is missing from the gradient of x: the upstream gradient reaches x̂ as g·gamma":
        lambda *a, **k: _layer_norm_vjp(*a, **k, by_gamma=False),
    "the variance divides by C − 1 (numpy's ddof=1, or torch.var's default): layer norm uses "
    "the population variance, divided by C": lambda *a, **k: _layer_norm_vjp(*a, **k, ddof=1),
    "the means ran over axis 0: layer norm normalises each row, along the last axis":
        lambda *a, **k: _layer_norm_vjp(*a, **k, axis=0),
    "the gradient of gamma was not summed over the rows: every row used gamma, so its gradient "
    "adds up the rows' contributions, with gamma's shape (C,)":
        lambda *a, **k: _layer_norm_vjp(*a, **k, summed=False),
    "the gradient of gamma used the output (x̂·gamma): it is g times the normalised x̂":
        lambda *a, **k: _layer_norm_vjp(*a, **k, from_output=True),
}


def layer_norm_graph(rules):
    """loss = sum(LN(tanh(LN(X·w, a))·v, b)·u): the rule twice, X (3, 4)."""
    layer_norm = mg.defop("layer_norm_exercise", _layer_norm, rules, symbol="LN")
    X = mg.Input("X")
    w = mg.Parameter([0.5, -1.0, 2.0, 1.5], name="w")
    a = mg.Parameter([1.0, 0.5, -2.0, 1.5], name="a")
    b = mg.Parameter([-0.5, 1.0, 2.0, 0.8], name="b")
    v = mg.Parameter([[1.0, -0.5, 2.0, 0.3], [0.2, 1.5, -1.0, 0.7], [-1.2, 0.4, 0.9, 2.0]], name="v")
    u = mg.Parameter([[0.3, 2.0, -1.0, 1.0], [1.5, -0.5, 0.5, 2.5], [-1.0, 1.0, 0.2, 0.4]], name="u")
    first = mg.tanh(layer_norm(mg.mul(X, w, name="z1"), a, name="n1"), name="t1")
    second = layer_norm(mg.mul(first, v, name="z2"), b, name="n2")
    return mg.Graph(mg.sum(mg.mul(second, u, name="z3"), name="loss"))


def _rows(seed, *shape):
    return np.round(np.random.default_rng(seed).normal(size=shape), 1).tolist()


layer_norm_vjp = vjp_exercise(
    "11.layer_norm_vjp", "layer_norm_vjp", 3,
    "layer_norm_vjp(g, ans, x, gamma, eps=1e-5) -> (grad_x, grad_gamma)", _layer_norm,
    _layer_norm_vjp, layer_norm_graph, "loss = sum(LN(tanh(LN(X·w, a))·v, b)·u)",
    cases=[
        case(g=[[1.0, 1.0, 1.0]], x=[[1.0, 2.0, 4.0]], gamma=[1.0, 1.0, 1.0],
             hint="g the same everywhere, gamma all ones: shifting x̂ leaves its mean and its "
                  "scale unchanged, so the gradient of x is 0."),
        case(g=[[0.5, -1.0, 2.0, 1.0]], x=[[2.0, 0.0, -1.0, 3.0]], gamma=[1.0, 2.0, 0.5, -1.0]),
        case(g=_rows(20, 3, 4), x=_rows(21, 3, 4), gamma=[1.5, -0.5, 1.0, 2.0],
             hint="Three rows, each normalised on its own; gamma (4,) served all three."),
        case(g=_rows(22, 2, 2, 3), x=_rows(23, 2, 2, 3), gamma=[0.5, 1.0, -1.5],
             hint="A batch of sequences (B, T, C): rows along the last axis, and gamma's gradient "
                  "adds up over both B and T."),
        graph_case(X=_rows(24, 3, 4)),
    ],
    mistakes=LAYER_NORM_MISTAKES,
    hint=("With x̂ the normalised x, the output is x̂·gamma: gamma's gradient is g·x̂ added up over "
          "the rows, and x's goes through x̂, whose mean and variance depend on the whole row.",
          "Call h = g·gamma the gradient reaching x̂. Besides h itself, the gradient of x has a "
          "term for the path through the row's mean and one for the path through its variance, "
          "each a mean over the row; all of it is divided by √(variance + eps)."),
    engine=refused({"mg.ops.layer_norm_scaled.opdef.vjps": "backward rule of layer_norm"}))


EXERCISES = [split_heads, merge_heads, causal_mask, layer_norm_vjp]
