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

from ..toolkit.answers import answers_of, judges_of
from ..toolkit.engine import refused
from ..toolkit.exercise import Exercise, Rule, case, function_exercise, random_array, unchanged
from ..toolkit.public import Public
from ..toolkit.values import encode
from ..toolkit.vjp import graph_case, vjp_exercise

TITLE = "A tiny GPT"
answers = answers_of(__name__)    # answers/ch11.py: references, mistakes and a judge, used only to judge
judges = judges_of(__name__)      # judges/ch11.py: the judges that hold no answer


# -- 11.split_heads -------------------------------------------------------------------------------

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
    if isinstance(out, (list, tuple)):
        raise Rule(f"returned a {type(out).__name__} of {len(out)} arrays (np.split and "
                   f"np.array_split give one per head): the result is one array of shape "
                   f"(B, H, T, d), the heads along its second axis")
    unchanged("split_heads", ["x"], [x], [copy])
    _floats(out)
    return encode(out)


def _floats(out):
    """Raise ``Rule`` if the answer's array holds integers where x holds fractions."""
    if isinstance(out, np.ndarray) and out.dtype.kind in "biu":
        raise Rule(f"the result is an array of {out.dtype}, but x holds fractions: it was "
                   f"written into an integer array, where 0.5 becomes 0; keep x's float dtype "
                   f"(a reshape or a transpose keeps it; a new array needs it given)")


def _run_merge(answer, case):
    """The default run, with the answer's dtype checked (``_floats``)."""

    def typed(x):
        out = answer(x)
        _floats(out)
        return out

    return _merge_heads.run(typed, case)


def _hidden_split(rng):
    """x of a random (B, T, C), C a multiple of the random number of heads H; at least two
    positions and two heads (with one of either, a missing transpose changes nothing)."""
    B, T, H, d = (int(k) for k in rng.integers([1, 2, 2, 1], 4))
    return case(x=random_array(rng, shape=(B, T, H * d)), n_head=H)


def _numbered(*shape):
    """Distinct numbers 0.5, 1.5, 2.5, ... in ``shape``: any scrambling of the entries shows,
    and so does an integer array (which would hold 0, 1, 2, ...)."""
    return (np.arange(np.prod(shape), dtype=float) + 0.5).reshape(shape).tolist()


split_heads = dataclasses.replace(function_exercise(
    "11.split_heads", "split_heads", answers.split_heads, points=2,
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
    title="split_heads(x, n_head): (B, T, C) -> (B, H, T, C / H)", mistakes=answers.SPLIT_MISTAKES,
    hidden=_hidden_split),
    run=_run_split)


# -- 11.merge_heads -------------------------------------------------------------------------------

_merge_heads = function_exercise(
    "11.merge_heads", "merge_heads", answers.merge_heads, points=1,
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
    title="merge_heads(x): (B, H, T, d) -> (B, T, H·d)", mistakes=answers.MERGE_MISTAKES,
    hidden=lambda rng: case(x=random_array(rng, shape=tuple(rng.integers([1, 2, 2, 1], 4)))))
merge_heads = dataclasses.replace(_merge_heads, run=_run_merge)


# -- 11.causal_mask -------------------------------------------------------------------------------

def _run_mask(answer, case):
    """The mask the answer gives for T (an int), and whether it is boolean."""
    out = answer(int(case["inputs"]["T"]))
    try:
        boolean = np.asarray(out).dtype == bool
    except ValueError:                       # a ragged list: encode says what it is
        boolean = False
    return {"value": encode(out), "boolean": boolean, "array": isinstance(out, np.ndarray)}


causal_mask = Exercise(
    "11.causal_mask", "causal_mask", 1,
    (case(T=1), case(T=3), case(T=5, hint="Row i is what position i may see: True in columns "
                                          "0 .. i, False after.")),
    _run_mask, answers.judge_mask, "causal_mask(T) -> (T, T) booleans",
    ("Position i may attend to itself and to every position before it: row i of the mask "
          "is True up to and including column i.",
          "Write the 4 × 4 mask out by hand and look at where its True entries lie; numpy has "
          "functions that build such shapes, and comparing grids of row and column numbers "
          "gives booleans too. The result is a numpy array of dtype bool."),
    engine=refused({"mg.causal_mask": "causal mask"}),
    hidden=lambda rng: case(T=int(rng.choice([2, 4, *range(6, 17)]))),
    expected=lambda case: encode(answers.causal_mask(case["inputs"]["T"])), public=Public(judges.judge_stored_mask))


# -- 11.layer_norm_vjp ----------------------------------------------------------------------------

EPS = 1e-5           # the engine's layer_norm default, as torch.nn.LayerNorm's


def normalized(x, eps=EPS, ddof=0, axis=-1):
    """(x - mean) / sqrt(variance + eps) along ``axis``, and 1 / sqrt(variance + eps)."""
    centered = x - x.mean(axis=axis, keepdims=True)
    inv_std = 1 / np.sqrt(np.sum(centered ** 2, axis=axis, keepdims=True) / (x.shape[axis] - ddof) + eps)
    return centered * inv_std, inv_std


def layer_norm(x, gamma, eps=EPS):
    return normalized(x, eps)[0] * gamma


def layer_norm_graph(rules):
    """loss = sum(LN(tanh(LN(X·w, a))·v, b)·u): the rule twice, X (3, 4)."""
    layer_norm_op = mg.defop("layer_norm_exercise", layer_norm, rules, symbol="LN")
    X = mg.Input("X")
    w = mg.Parameter([0.5, -1.0, 2.0, 1.5], name="w")
    a = mg.Parameter([1.0, 0.5, -2.0, 1.5], name="a")
    b = mg.Parameter([-0.5, 1.0, 2.0, 0.8], name="b")
    v = mg.Parameter([[1.0, -0.5, 2.0, 0.3], [0.2, 1.5, -1.0, 0.7], [-1.2, 0.4, 0.9, 2.0]], name="v")
    u = mg.Parameter([[0.3, 2.0, -1.0, 1.0], [1.5, -0.5, 0.5, 2.5], [-1.0, 1.0, 0.2, 0.4]], name="u")
    first = mg.tanh(layer_norm_op(mg.mul(X, w, name="z1"), a, name="n1"), name="t1")
    second = layer_norm_op(mg.mul(first, v, name="z2"), b, name="n2")
    return mg.Graph(mg.sum(mg.mul(second, u, name="z3"), name="loss"))


def _rows(seed, *shape):
    return np.round(np.random.default_rng(seed).normal(size=shape), 1).tolist()


def _hidden_layer_norm(rng):
    """x and g of one random shape (1 to 3 axes, rows of 2 to 5 channels), gamma of the rows'
    length, in one of three regimes (each shows other mistakes): ordinary values; zeros in gamma
    (x̂ recovered as ans / gamma is 0 / 0 there); zeros in gamma and rows of x that barely vary
    (variance near eps, so that leaving eps out, or dividing by C − 1, changes the result well
    beyond the check's tolerance)."""
    shape = (*rng.integers(1, 4, size=int(rng.integers(0, 3))), int(rng.integers(2, 6)))
    regime = rng.choice(["ordinary", "zeros in gamma", "rows that barely vary"])
    gamma = np.asarray(random_array(rng, scale=1.5, shape=shape[-1:]))
    if regime != "ordinary":
        gamma[rng.permutation(shape[-1])[:int(rng.integers(1, shape[-1]))]] = 0.0
    x = np.asarray(random_array(rng, shape=shape))
    if regime == "rows that barely vary":
        x = np.round(rng.normal(0, 3) + x * 1e-3, 7)
    return case(g=random_array(rng, scale=2.0, shape=shape), x=x.tolist(), gamma=gamma.tolist())


layer_norm_vjp = vjp_exercise(
    "11.layer_norm_vjp", "layer_norm_vjp", 3,
    "layer_norm_vjp(g, ans, x, gamma, eps=1e-5) -> (grad_x, grad_gamma)", layer_norm,
    answers.layer_norm_vjp, layer_norm_graph, "loss = sum(LN(tanh(LN(X·w, a))·v, b)·u)",
    cases=[
        case(g=[[1.0, 1.0, 1.0]], x=[[1.0, 2.0, 4.0]], gamma=[1.0, 1.0, 1.0],
             hint="g the same everywhere, gamma all ones: shifting x̂ leaves its mean and its "
                  "scale unchanged, so the gradient of x is 0."),
        case(g=[[0.5, -1.0, 2.0, 1.0]], x=[[2.0, 0.0, -1.0, 3.0]], gamma=[1.0, 2.0, 0.5, -1.0]),
        case(g=[[0.5, -1.0, 2.0, 1.0]], x=[[2.0, 0.0, -1.0, 3.0]], gamma=[1.0, 0.0, 0.5, 0.0],
             hint="gamma has zeros: the output is 0 there, so it no longer tells what x̂ was."),
        case(g=[[1.0, -2.0, 0.5]], x=[[1.001, 1.0, 0.999]], gamma=[1.0, 1.0, 1.0],
             hint="A row that barely varies: its variance, 6.7e-07, is smaller than eps, which "
                  "now decides the scale."),
        case(g=_rows(20, 3, 4), x=_rows(21, 3, 4), gamma=[1.5, -0.5, 1.0, 2.0],
             hint="Three rows, each normalised on its own; gamma (4,) served all three."),
        case(g=_rows(22, 2, 2, 3), x=_rows(23, 2, 2, 3), gamma=[0.5, 1.0, -1.5],
             hint="A batch of sequences (B, T, C): rows along the last axis, and gamma's gradient "
                  "adds up over both B and T."),
        graph_case(X=_rows(24, 3, 4)),
    ],
    mistakes=answers.LAYER_NORM_MISTAKES,
    hint=("With x̂ the normalised x, the output is x̂·gamma: gamma's gradient is g·x̂ added up over "
          "the rows, and x's goes through x̂, whose mean and variance depend on the whole row.",
          "Follow the chapter's derivation: the gradient reaching x̂, then three paths from x̂ "
          "back to x (directly, through the row's mean, through its variance). Compute x̂ from x "
          "with the same eps as the forward; the output ans cannot give it back where gamma is 0."),
    engine=refused({"mg.ops.layer_norm_scaled.opdef.vjps": "backward rule of layer_norm"}),
    hidden=_hidden_layer_norm)


EXERCISES = [split_heads, merge_heads, causal_mask, layer_norm_vjp]
