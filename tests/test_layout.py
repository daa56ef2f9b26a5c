"""The layout of a big graph's drawing (minigraph/layout.py): which nodes get a box.

A graph that repeats itself (an RNN unrolled for many steps, a random recurrent cell) is folded
into its repeats, and only true copies are folded: each unit of a fold has the ops, kinds,
shapes and wiring of the one before it. A part drawn around a shared weight folds the weight's
uses. (How a layout is drawn, and how dot's failures are reported, is tested in test_viz_big.py.)
"""

import numpy as np
import pytest

import minigraph as mg
from minigraph import layout


# -- graphs ------------------------------------------------------------------------------------

def rnn(steps, size=3, seed=0, outputs=False):
    """An RNN unrolled for ``steps``: W_hh, W_xh and b are shared by every step. The loss is
    that of the last state, or with ``outputs`` the sum of one output per step."""
    rng = np.random.default_rng(seed)
    W_hh = mg.Parameter(rng.normal(size=(size, size)) * 0.5, name="W_hh")
    W_xh = mg.Parameter(rng.normal(size=(size, 2)), name="W_xh")
    b = mg.Parameter(np.zeros(size), name="b")
    w_out = mg.Parameter(rng.normal(size=size), name="w_out")
    h, ys = mg.Constant(np.zeros(size), name="h0"), []
    for t in range(1, steps + 1):
        h = mg.tanh(W_hh @ h + W_xh @ mg.Input(f"x_{t}") + b, name=f"h_{t}")
        ys.append(mg.reshape(mg.sum(h * w_out), (1,), name=f"y_{t}"))
    return mg.Graph(mg.sum(mg.concatenate(ys) if outputs else h * h, name="loss"))


def tangle(n, seed=0):
    """A graph with no repeats: each op adds, multiplies or subtracts two random earlier nodes."""
    rng = np.random.default_rng(seed)
    nodes = [mg.Parameter(rng.normal(), name=f"p{i}") for i in range(5)]
    while len(nodes) < n:
        a, b = rng.integers(0, len(nodes), 2)
        op = (mg.add, mg.mul, mg.sub)[rng.integers(3)]
        nodes.append(op(nodes[max(a, len(nodes) - 30)], nodes[b]))
    return mg.Graph(nodes[-20:])


def random_cell(steps, seed):
    """A random recurrent cell (random ops on the state, fresh inputs and shared weights),
    unrolled for ``steps``."""
    rng = np.random.default_rng(seed)
    shared = [mg.Parameter(rng.normal(size=2), name=f"shared{i}") for i in range(rng.integers(1, 4))]
    unary, binary = (mg.tanh, mg.sigmoid, mg.exp, mg.neg), (mg.add, mg.mul, mg.sub)
    recipe = [(rng.integers(2), rng.integers(4), rng.integers(100), rng.integers(100))
              for _ in range(rng.integers(1, 7))]
    h = mg.Parameter(np.zeros(2), name="h_start")
    for t in range(steps):
        made = [h]
        for is_binary, which, a, b in recipe:
            if is_binary:
                pool = made + shared + [mg.Input(f"x{t}_{len(made)}")]
                made.append(binary[which % 3](made[a % len(made)], pool[b % len(pool)]))
            else:
                made.append(unary[which](made[a % len(made)]))
        h = made[-1] if made[-1] is not h else mg.tanh(h)
    return mg.Graph(mg.sum(h))


# -- the layout --------------------------------------------------------------------------------

def is_copy(order, fold):
    """Every hidden or drawn unit of a fold is a true copy of the one before it.

    Unit k+1's j-th node has unit k's j-th node's op, kind and shape, and each of its inputs is
    the same node as there (shared) or that input moved on by one unit in the drawing order.
    """
    p = len(fold.units[0])
    place = {n: i for i, n in enumerate(order)}
    for before, after in zip(fold.units, fold.units[1:]):
        for a, b in zip(before, after):
            assert place[b] == place[a] + p
            assert (a.kind, a.op, a.attrs, a.shape) == (b.kind, b.op, b.attrs, b.shape)
            for pa, pb in zip(a.inputs, b.inputs, strict=True):
                assert pb is pa or place[pb] == place[pa] + p
    return True


@pytest.mark.parametrize("seed", range(40))
def test_only_true_copies_are_folded(seed):
    """Random recurrent cells are folded into their repeats; random tangles, where nothing
    repeats by construction, may fold only what really is a copy."""
    g = random_cell(steps=12, seed=seed)
    order = layout.drawing_order(g)
    plan = layout.Layout(g, fold=True)
    assert plan.folds and all(is_copy(order, f) for f in plan.folds)
    assert sum(len(f.hidden) for f in plan.folds) >= len(g.nodes) // 3
    tangled = tangle(150, seed=seed)
    plan = layout.Layout(tangled, fold=True)
    assert all(is_copy(layout.drawing_order(tangled), f) for f in plan.folds)


def test_an_output_at_every_step_is_folded_with_its_step():
    g = rnn(300, outputs=True)
    plan = mg.draw(g).options["layout"]
    assert len(plan.folds) == 1 and len(plan.folds[0].hidden) >= 0.95 * len(g.nodes)
    y_5 = g.node("y_5")
    unit = next(u for u in plan.folds[0].units if y_5 in u)
    assert {g.node("h_5"), g.node("h_6")} & set(unit)        # y_5 next to h_5, not 300 steps on


def test_a_part_around_a_shared_weight_folds_its_uses():
    g = rnn(1000)
    plan = mg.draw(g, around="W_hh", depth=1).options["layout"]
    assert plan.boxes() < 10 and [len(f.units) for f in plan.folds] == [1000]
