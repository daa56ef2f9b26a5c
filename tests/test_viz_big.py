"""Drawing big graphs: repeats folded, shared leaves drawn at each use, parts, refusals, dot's failures.

These tests do not time anything: a drawing of thousands of nodes must come back readable
(few boxes, a bounded size in inches, a caption naming what was folded). The time is
measured in bench/draw_big.py. Which nodes a layout folds (layout.py) is tested in test_layout.py,
whose graphs these tests draw too.
"""

import re
import stat

import numpy as np
import pytest

import minigraph as mg
from minigraph import layout, viz
from test_layout import is_copy, random_cell, rnn, tangle


# -- graphs ------------------------------------------------------------------------------------

def chain(n):
    """``tanh(tanh(... tanh(start)))``: n ops in a row."""
    h = mg.Parameter(0.5, name="start")
    for _ in range(n):
        h = mg.tanh(h)
    return mg.Graph(h)


def wide(n):
    """n branches ``tanh(x_i * w)`` side by side, one weight shared by all, joined by one op."""
    w = mg.Parameter(0.5, name="w")
    return mg.Graph(mg.concatenate([mg.reshape(mg.tanh(mg.Input(f"x{i}") * w), (1,)) for i in range(n)]))


def rnn_feed(steps, seed=1):
    rng = np.random.default_rng(seed)
    return {f"x_{t}": rng.normal(size=2) for t in range(1, steps + 1)}


# -- reading a drawing -------------------------------------------------------------------------

def inches(svg):
    """Width and height of an SVG drawing in inches (graphviz writes points: 72 to the inch)."""
    width, height = re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups()
    return float(width) / 72, float(height) / 72


BIG = [("chain", chain, 1000), ("chain", chain, 5000), ("wide", wide, 300), ("wide", wide, 2000),
       ("rnn", rnn, 170), ("rnn", rnn, 1000)]


@pytest.mark.parametrize("kind, build, n", BIG, ids=[f"{kind}-{n}" for kind, _, n in BIG])
def test_big_graphs_come_back_small_with_a_caption(kind, build, n):
    g = build(n)
    assert len(g.nodes) >= 1000
    drawing = mg.draw(g)
    plan = drawing.options["layout"]
    assert plan.boxes() <= 60
    hidden = sum(len(f.hidden) for f in plan.folds)
    assert hidden + len(plan.nodes) == len(g.nodes)
    assert len(g.nodes) - hidden <= 60
    width, height = inches(drawing.svg())
    assert width < 40 and height < 15, (width, height)
    text = repr(drawing)
    assert text.splitlines()[0] == f"Drawing of {len(plan.nodes)} of {len(g.nodes):,} nodes"
    assert f"{hidden:,} nodes folded into one box" in text
    assert f"{hidden:,} nodes folded into one box" in drawing.source          # the caption
    assert all(is_copy(layout.drawing_order(g), f) for f in plan.folds)


def test_a_chain_shows_its_first_repeats_and_its_last():
    g = chain(5000)
    drawing = mg.draw(g, keep=3)
    tanhs = [n for n in g.nodes if n.op is not None]
    drawn = [n.name for n in drawing.options["layout"].nodes]
    assert drawn == ["start"] + [n.name for n in tanhs[:3] + tanhs[-1:]]
    assert repr(drawing).splitlines()[-1] == (
        f"Repeats 4-4999 of 5000 (each 1 node: tanh), from '{tanhs[3].name}' to '{tanhs[-2].name}': "
        "4,996 nodes folded into one box.")
    assert "⋯ 4,996 more repeats ⋯" in drawing.source


def test_an_rnn_draws_steps_in_frames_and_its_weights_at_each_use():
    steps = 1000
    g = rnn(steps)
    g.backward(rnn_feed(steps))
    drawing = mg.draw(g, backward=True)
    source, plan = drawing.source, drawing.options["layout"]
    frames = re.findall(r'label="(repeat \d+ of \d+)"', source)
    assert frames == ["repeat 1 of 1000", "repeat 2 of 1000", "repeat 1000 of 1000"]
    assert [n.name for n in plan.refs] == ["W_hh", "W_xh", "b"]
    for weight in ("W_hh", "W_xh", "b"):                          # drawn once, with its numbers
        assert len(re.findall(rf'^\s*"{weight}" \[', source, re.MULTILINE)) == 1
        assert not re.search(rf'^\s*"{weight}" ->', source, re.MULTILINE)   # no long edges
        uses = sum(p.name == weight for n in plan.nodes for p in n.inputs)
        assert uses == 3 and len(re.findall(rf'class="mg-ref [^"]*" [^\]]*label="{weight}"', source)) == uses
    assert "drawn again (small, dashed) at each use: W_hh, W_xh, b." in repr(drawing)
    unconstrained = re.findall(r'^\s*"([^"]*)" -> "([^"]*)" .*constraint="false"', source, re.MULTILINE)
    into_repeat_2 = next(n.name for n in plan.nodes if g.node("h_1") in n.inputs)   # each repeat a row
    assert ("h_1", into_repeat_2) in unconstrained and ("h_2", plan.folds[0].box) in unconstrained
    inside_repeat_1 = g.node("h_1").inputs[0].name
    assert not any(tail == inside_repeat_1 for tail, _ in unconstrained)
    h_last = g.node(f"h_{steps}")
    assert f">{viz.format_value(h_last.grad)}</FONT>" in source   # few boxes: numbers shown
    assert "<svg" in drawing.svg()


def blocks(n):
    """n blocks in a row, each two layers added to the stream (as a transformer block's
    attention and MLP): ``b3.x_mix = h + tanh(h @ b3.mix.W)``, then
    ``b3.x_mlp = b3.x_mix + tanh(b3.x_mix @ b3.mlp.W1) @ b3.mlp.W2``."""
    h = mg.Input("x")
    for i in range(1, n + 1):
        mix = mg.tanh(h @ mg.Parameter(np.eye(2) * 0.5, name=f"b{i}.mix.W"), name=f"b{i}.mix.out")
        h = mg.add(h, mix, name=f"b{i}.x_mix")
        wide = mg.tanh(h @ mg.Parameter(np.ones((2, 4)), name=f"b{i}.mlp.W1"), name=f"b{i}.mlp.wide")
        mlp = mg.matmul(wide, mg.Parameter(np.ones((4, 2)), name=f"b{i}.mlp.W2"), name=f"b{i}.mlp.out")
        h = mg.add(h, mlp, name=f"b{i}.x_mlp")
    return mg.Graph(h)


def test_a_drawn_repeat_frames_each_of_its_layers_inside_its_own_frame():
    drawing = mg.draw(blocks(6), fold=True, keep=1)
    source = drawing.source
    frames = re.findall(r'subgraph "cluster_([^"]*)" \{', source)
    assert frames == ["fold1.repeat1", "fold1.repeat1.b1.mix", "fold1.repeat1.b1.mlp",
                      "fold1.repeat6", "fold1.repeat6.b6.mix", "fold1.repeat6.b6.mlp"]
    repeat_1 = source[source.index('"cluster_fold1.repeat1"'):source.index('"cluster_fold1.repeat6"')]
    start = repeat_1.index('"cluster_fold1.repeat1.b1.mix"')
    mix = repeat_1[start:repeat_1.index("\n    }", start)]                # to its closing brace
    assert '"b1.mix.W" [' in mix and '"b1.mix.out" [' in mix and '"b1.mlp.W1" [' not in mix
    assert '"b1.x_mix" [' in repeat_1 and '"b1.x_mix" [' not in mix     # the block's own: not framed again
    assert 'label="b1.mlp"' in repeat_1 and 'label="repeat 1 of 6"' in repeat_1
    assert "Repeats 2-5 of 6" in repr(drawing) and "<svg" in drawing.svg()


def test_a_repeat_of_one_layer_is_not_framed_twice():
    frames = re.findall(r'subgraph "cluster_([^"]*)" \{', mg.draw(rnn(1000)).source)
    assert frames == ["fold1.repeat1", "fold1.repeat2", "fold1.repeat1000"]


def test_fold_can_be_asked_for_or_switched_off():
    g = rnn(8)                                                   # 51 nodes: drawn in full
    assert repr(mg.draw(g)).splitlines()[0] == f"Drawing of {len(g.nodes)} nodes"
    folded = mg.draw(g, fold=True, keep=1).options["layout"]
    assert [len(f.units) for f in folded.folds] == [8] and len(folded.folds[0].drawn) == 2
    big = rnn(20)
    assert mg.draw(big).options["layout"].folds
    assert mg.draw(big, fold=False).options["layout"].complete()


@pytest.mark.parametrize("seed", range(10))
def test_every_way_of_drawing_a_random_cell_is_complete(seed):
    """Folded, kept, around a node, backward: every drawn node has its box and summary line, every
    fold its box, and every edge starts at a box that exists."""
    rng = np.random.default_rng(seed)
    g = random_cell(steps=int(rng.integers(3, 30)), seed=seed)
    with np.errstate(all="ignore"):
        g.backward({n: rng.normal(size=2) for n in g.inputs})
    for options in (dict(), dict(fold=True, keep=int(rng.integers(0, 4))), dict(backward=True, fold=True),
                    dict(around=g.nodes[int(rng.integers(len(g.nodes)))], depth=int(rng.integers(0, 4)))):
        drawing = mg.draw(g, **options)
        plan, source = drawing.options["layout"], drawing.source
        declared = set(re.findall(r'^\s*("[^"]*") \[', source, re.MULTILINE))
        assert {viz.quote(n.name) for n in plan.nodes} | {viz.quote(f.box) for f in plan.folds} <= declared
        tails = re.findall(r'^\s*("[^"]*")(?::\S+)? -> ("[^"]*")', source, re.MULTILINE)
        assert {end for edge in tails for end in edge} <= declared
        lines = repr(drawing).splitlines()
        assert len(lines) == 1 + len(plan.nodes) + len(plan.caption)
        assert lines[len(plan.nodes) + 1:] == plan.caption
        assert "<svg" in drawing.svg()


def test_a_part_around_a_node():
    g = rnn(1000)
    centre = g.node("h_500")
    drawing = mg.draw(g, around="h_500", depth=2)
    drawn = set(drawing.options["layout"].nodes)
    neighbours = set(centre.inputs) | {n for n in g.nodes if centre in n.inputs}
    assert centre in drawn and neighbours <= drawn and len(drawn) < 20
    distance = {centre: 0}                                      # every drawn node is near
    for d in (1, 2):
        for a in [n for n, far in distance.items() if far == d - 1]:
            for b in (*a.inputs, *(n for n in g.nodes if a in n.inputs)):
                distance.setdefault(b, d)
    assert all(distance.get(n, 99) <= 2 for n in drawn)
    caption = f"The {len(drawn)} nodes at most 2 edges from 'h_500' (of 6,006); the others are left out."
    assert caption in repr(drawing)
    assert repr(drawing).splitlines()[0] == f"Drawing of {len(drawn)} of 6,006 nodes"
    assert "<svg" in drawing.svg()


def test_too_big_to_draw_is_refused_with_a_way_out():
    g = tangle(2000)
    with pytest.raises(mg.DrawingError) as error:
        mg.draw(g)
    message = str(error.value)
    assert re.search(rf"for the {len(g.nodes):,} nodes of the graph \((even with its repeats folded|it has "
                     r"no repeats to fold)\)", message)
    assert f"more than the {viz.MAX_BOXES}" in message and "fold=True" not in message
    assert f"mg.draw(g, around='{g.outputs[0].name}', depth=2)" in message
    with pytest.raises(mg.DrawingError, match="5,001 nodes of the graph, more .* fold=True folds repeated"):
        mg.draw(chain(5000), fold=False)
    assert mg.draw(g, around=g.outputs[0], depth=2).options["layout"].boxes() < viz.MAX_BOXES


@pytest.mark.parametrize("options, message", [
    (dict(around=mg.Parameter(1.0, name="elsewhere")),
     "cannot draw around Parameter('elsewhere', scalar): it is not a node of this graph"),
    (dict(around="nowhere"), "no node named 'nowhere' in this graph"),
    (dict(around="h_1", depth=-1), "depth=-1: give a whole number"),
    (dict(keep=1.5), "keep=1.5: give a whole number"),
])
def test_bad_options_are_clear_errors(options, message):
    with pytest.raises(mg.GraphError, match=re.escape(message)):
        mg.draw(rnn(3), **options)


def fake_dot(tmp_path, monkeypatch, script):
    """Make drawings run ``script`` instead of Graphviz's dot."""
    program = tmp_path / "fake-dot"
    program.write_text("#!/bin/sh\n" + script + "\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(viz, "DOT_COMMAND", str(program))


def test_dot_crashing_is_a_clear_error(tmp_path, monkeypatch):
    fake_dot(tmp_path, monkeypatch, "kill -SEGV $$")
    with pytest.raises(mg.DrawingError, match=r"dot crashed \(SIGSEGV\) while laying out 2 boxes\. Draw"):
        mg.draw(mg.exp(mg.Parameter(1.0))).svg()


def test_dot_failing_is_a_clear_error(tmp_path, monkeypatch):
    fake_dot(tmp_path, monkeypatch, "echo 'Error: <stdin>: syntax error in line 1' >&2; exit 1")
    with pytest.raises(mg.DrawingError, match=r"dot failed \(exit status 1\) .* saying: Error: <stdin>"):
        mg.draw(mg.exp(mg.Parameter(1.0))).svg()


def test_dot_taking_too_long_is_stopped(tmp_path, monkeypatch):
    fake_dot(tmp_path, monkeypatch, "exec sleep 60")
    monkeypatch.setattr(viz, "DOT_SECONDS", 1)
    with pytest.raises(mg.DrawingError, match=r"did not finish laying out 2 boxes in 1 s and was stopped"):
        mg.draw(mg.exp(mg.Parameter(1.0))).svg()


def test_no_dot_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(viz, "DOT_COMMAND", "no-such-dot-program")
    with pytest.raises(mg.DrawingError, match="cannot find Graphviz's 'no-such-dot-program' program"):
        mg.draw(mg.exp(mg.Parameter(1.0))).svg()


def test_a_live_drawing_of_a_folded_rnn_lights_every_use_of_a_weight():
    g = rnn(200)
    g.backward(rnn_feed(200))
    live = viz.LiveDrawing(g)
    svg = live.render(highlight={g.node("W_hh")}).replace("&#45;", "-")
    assert "@@" not in svg and "⋯ 197 more repeats ⋯" in svg
    lit = re.findall(r'<g id="(mg-(?:node|ref)-[^"]*)" class="[^"]*mg-hl', svg)
    uses = [f"mg-ref-{n.name}-0" for n in live.options["layout"].nodes
            if n.inputs and n.inputs[0].name == "W_hh"]
    assert sorted(lit) == sorted(["mg-node-W_hh"] + uses) and len(uses) == 3
