"""viz: colours per kind, numbers on the boxes, highlight, backward edges, big graphs, stable output."""

import re

import numpy as np
import pytest

import minigraph as mg
from minigraph import viz


def statement(source, name):
    """The DOT line that declares node ``name``."""
    return next(line for line in source.splitlines() if line.strip().startswith(f'"{name}" ['))


def edge_labels_into(source, name):
    """Labels of the edges whose tail is ``name`` (in the backward view: gradients sent to it)."""
    return [float(m) for m in re.findall(rf'^\s*"{re.escape(name)}"(?::\S+)? -> .*label="([^"]*)"',
                                          source, flags=re.MULTILINE)]


@pytest.fixture
def small():
    """x feeds three ops (fan-out), with every kind of node."""
    x = mg.Input("x")
    w = mg.Parameter(0.5, name="w")
    h = mg.tanh(mg.mul(w, x, name="wx"), name="h")
    loss = mg.add(mg.mul(h, x, name="hx"), mg.sigmoid(x, name="s"), name="y") ** 2
    g = mg.Graph(loss)
    g.backward({x: 2.0})
    return g


def test_each_kind_has_its_own_colour_from_the_one_table(small):
    source = mg.draw(small).source
    fills = {kind: fill for kind, (fill, _) in viz.KIND_COLOURS.items()}
    assert len(set(fills.values())) == 4
    for node in small.nodes:
        assert f'fillcolor="{fills[node.kind]}"' in statement(source, node.name)


def test_legend_lists_every_kind_in_its_colour(small):
    source = mg.draw(small, legend=True).source
    legend = statement(source, "mg-legend")
    for kind, (fill, _) in viz.KIND_COLOURS.items():
        assert f'BGCOLOR="{fill}" COLOR="{viz.KIND_COLOURS[kind][1]}" BORDER="1">{kind}<' in legend
    assert "mg-legend" not in mg.draw(small).source


def test_boxes_show_symbol_name_value_and_grad(small):
    source = mg.draw(small).source
    h = small.node("h")
    line = statement(source, "h")
    assert "<B>tanh</B>" in line and ">h</FONT>" in line
    assert f">{viz.format_number(h.value)}</FONT>" in line
    assert f">{viz.format_number(h.grad)}</FONT>" in line
    assert ">value</FONT>" in line and ">grad&#160;</FONT>" in line


def test_values_and_grads_can_be_switched_off(small):
    no_values = mg.draw(small, values=False).source
    no_grads = mg.draw(small, grads=False).source
    assert ">value</FONT>" not in no_values and ">grad&#160;</FONT>" in no_values
    assert ">grad&#160;</FONT>" not in no_grads and ">value</FONT>" in no_grads
    assert "grad" not in repr(mg.draw(small, grads=False))


def test_grads_are_left_out_before_any_backward():
    x = mg.Parameter(1.0, name="x")
    g = mg.Graph(mg.exp(x, name="e"))
    g.forward()
    assert ">grad&#160;</FONT>" not in mg.draw(g).source
    assert ">2.718</FONT>" in statement(mg.draw(g).source, "e")


def test_numbers_have_four_significant_digits_and_no_negative_zero():
    assert viz.format_number(-0.0) == "0"
    assert viz.format_number(-1e-17) == "0"
    assert viz.format_number(np.pi) == "3.142"
    assert viz.format_number(-123456.0) == "-1.235e+05"
    assert viz.format_value(np.array([[0.123, -1.3, 2.0], [4, 5, 6]])) == "(2, 3) [0.123, -1.3, 2, …]"
    assert viz.format_value(None) == "—"


def test_text_summary_is_one_stable_line_per_node(small):
    text = repr(mg.draw(small))
    lines = text.splitlines()
    assert lines[0] == f"Drawing of {len(small.nodes)} nodes"
    assert [line.split()[0] for line in lines[1:]] == [n.name for n in small.nodes]
    x = small.node("x")
    assert re.search(rf"^  x +input +2 +grad {re.escape(viz.format_number(x.grad))}$", text, re.MULTILINE)
    assert "0x" not in text and " at " not in text


def test_drawing_is_a_snapshot(small):
    drawing = mg.draw(small)
    before = (drawing.source, repr(drawing))
    small.backward({"x": -1.0})
    assert (drawing.source, repr(drawing)) == before
    assert repr(mg.draw(small)) != before[1]


def test_highlight_outlines_nodes_and_the_path_between_them(small):
    source = mg.draw(small, highlight=["x", small.node("h")]).source
    assert f'color="{viz.HIGHLIGHT}" penwidth="3"' in statement(source, "x")
    assert f'color="{viz.HIGHLIGHT}"' in statement(source, "h")
    assert viz.HIGHLIGHT not in statement(source, "w")
    edges = [line for line in source.splitlines() if viz.HIGHLIGHT in line and "->" in line]
    assert edges == []                      # x and h are not adjacent: no edge lit
    path = mg.draw(small, highlight=["x", "wx", "h"]).source
    lit = [line.split(" [")[0].strip() for line in path.splitlines() if "->" in line and viz.HIGHLIGHT in line]
    assert lit == ['"x" -> "wx"', '"wx" -> "h"']


def test_backward_edge_labels_are_the_gradients_sent_and_sum_to_the_grad(small):
    source = mg.draw(small, backward=True).source
    x = small.node("x")
    labels = edge_labels_into(source, "x")
    assert len(labels) == 3                                   # x feeds three ops
    assert sum(labels) == pytest.approx(x.grad, rel=1e-3)
    assert 'dir="back"' in source and 'style="dashed"' in source


def test_draw_shows_the_gradients_of_a_dict_given_instead_of_the_nodes(small):
    grads = {n: np.full(np.shape(n.value), 7.0 + k) for k, n in enumerate(small.nodes)}
    drawn = mg.draw(small, grads=grads, backward=True)
    for k, n in enumerate(small.nodes):
        assert f"grad {viz.format_value(grads[n])}" in repr(drawn).splitlines()[k + 1]
    h, x = small.node("h"), small.node("x")
    hx = next(n for n in small.nodes if n.name == "hx")
    # the edge from hx back to x carries hx's VJP for x applied to the dict's gradient of hx
    sent = float(grads[hx] * h.value)
    assert any(label == pytest.approx(sent, rel=1e-3) for label in edge_labels_into(drawn.source, "x"))
    # the same dict as the engine's gradients draws exactly the engine's drawing
    engine = {n: n.grad for n in small.nodes}
    assert mg.draw(small, grads=engine, backward=True).source == mg.draw(small, backward=True).source
    assert repr(mg.draw(small, grads=engine)) == repr(mg.draw(small))


def test_a_dict_of_gradients_leaves_out_the_nodes_it_has_no_gradient_for(small):
    x = small.node("x")
    drawn = mg.draw(small, grads={x: np.array(3.0)}, backward=True)
    lines = {line.split()[0]: line for line in repr(drawn).splitlines()[1:]}
    assert lines["x"].endswith("grad 3") and "grad" not in lines["h"]
    edges_from_x = [line for line in drawn.source.splitlines() if line.strip().startswith('"x" ->')]
    assert len(edges_from_x) == 3
    assert all('label="—"' in line for line in edges_from_x)    # no op holds a gradient to send


def test_backward_view_draws_constants_without_gradient():
    x = mg.Parameter(3.0, name="x")
    g = mg.Graph(mg.mul(x, 2.0, name="y"))
    g.backward()
    source = mg.draw(g, backward=True).source
    const = next(line for line in source.splitlines() if "-> \"y\"" in line and "const" in line)
    assert 'style="dotted"' in const and "label" not in const
    assert edge_labels_into(source, "x") == [2.0]


def test_multi_output_op_has_one_port_per_output():
    x = mg.Parameter([1.0, -2.0, 3.0, 0.5], name="v")
    a, b = mg.split(x, 2, name="halves")
    g = mg.Graph(mg.sum(a * b))
    g.backward()
    source = mg.draw(g, backward=True).source
    assert 'PORT="out0"' in statement(source, "halves") and 'PORT="out1"' in statement(source, "halves")
    assert '"halves":out0:e -> "halves[0]"' in source
    assert '"halves":out1:e -> "halves[1]"' in source
    assert "<B>[1]</B>" in statement(source, "halves[1]")
    assert "halves[0]  output" in repr(mg.draw(g))


def scalar_mlp(sizes, seed=0):
    """A micrograd-style MLP: every weight a scalar Parameter, every neuron made of * and +."""
    rng = np.random.default_rng(seed)
    h = [mg.Input(f"x{i}") for i in range(sizes[0])]
    for layer, n in enumerate(sizes[1:], start=1):
        out = []
        for j in range(n):
            acc = mg.Parameter(0.0, name=f"mlp.fc{layer}.b{j}")
            for i, v in enumerate(h):
                acc = acc + v * mg.Parameter(rng.normal(), name=f"mlp.fc{layer}.w{j}_{i}")
            out.append(mg.tanh(acc))
        h = out
    graph = mg.Graph((h[0] - mg.Input("target")) ** 2)
    graph.backward({"x0": 1.0, "x1": -1.0, "target": 1.0})
    return graph


def test_a_big_graph_is_grouped_by_layer_and_hides_its_numbers():
    g = scalar_mlp([2, 7, 7, 1])
    assert len(g.nodes) >= 200
    drawing = mg.draw(g, fold=False)                         # (its neurons repeat: folded by default)
    source = drawing.source
    assert ">value</FONT>" not in source and ">grad&#160;</FONT>" not in source
    clusters = re.findall(r'subgraph "cluster_([^"]*)" \{', source)
    assert sorted(clusters) == ["mlp.fc1", "mlp.fc2", "mlp.fc3"]
    group = viz.layer_groups(g)
    tanh_1 = next(n for n in g.nodes if n.op is not None and n.op.name == "tanh")
    assert group[g.node("mlp.fc2.w3_1")] == "mlp.fc2" and group[tanh_1] == "mlp.fc1"
    assert group[g.outputs[0]] is None                       # the loss joins no layer
    assert len(repr(drawing).splitlines()) == len(g.nodes) + 1 and "grad" in repr(drawing)
    assert "<svg" in drawing.svg()


def test_svg_is_the_same_for_the_same_graph_and_shows_in_jupyter(small):
    first, second = mg.draw(small).svg(), mg.draw(small).svg()
    assert first == second
    bundle = mg.draw(small)._repr_mimebundle_()
    assert set(bundle) == {"image/svg+xml", "text/plain"}
    svg = bundle["image/svg+xml"].replace("&#45;", "-")        # older graphviz escapes '-' in ids
    assert '<g id="mg-node-h" class="node mg-node mg-op' in svg


def test_draw_takes_a_node_and_names():
    x = mg.Parameter(2.0, name="p")
    y = mg.exp(x, name="q")
    mg.Graph(y).forward()
    drawing = mg.draw(y, highlight=["p"])
    assert [line.split()[0] for line in repr(drawing).splitlines()[1:]] == ["p", "q"]


def test_live_drawing_swaps_numbers_without_moving_anything(small):
    live = viz.LiveDrawing(small)
    first = live.render()
    small.backward({"x": -0.3})
    second = live.render()
    geometry = re.compile(r'(?:x|y|d|points)="[^"]*"')
    assert geometry.findall(first) == geometry.findall(second)
    assert f">{viz.format_number(small.node('h').value)}<" in second
    assert "@@" not in second and second.startswith("<svg")
    lit = live.render(highlight={small.node("h")})
    assert re.search(r'id="mg-node-h" class="[^"]*mg-hl', lit.replace("&#45;", "-"))
    assert not re.search(r'class="[^"]*mg-hl', first)


def test_live_drawing_reserves_room_for_the_longest_number():
    """A live drawing's boxes are laid out once, so each placeholder must be as wide as any
    number of that shape can print (a tiny number prints as 0: it cannot be the widest)."""
    for shape in ((), (3,), (2, 3)):
        room = len(viz.widest_text(np.zeros(shape)))
        for x in (-1.2345e-11, -1.2345e+100, -0.12345, 12345678.0):
            assert len(viz.format_value(np.full(shape, x))) <= room, (shape, x)


# -- fitting a notebook's output, and a text alternative ------------------------------------------

def tanh_chain(n, x=None, prefix="t"):
    node = x = x if x is not None else mg.Input("x")
    for k in range(n):
        node = mg.tanh(node, name=f"{prefix}{k}")
    return node


def test_a_drawing_too_wide_for_the_output_is_laid_out_top_to_bottom_unless_told():
    g = mg.Graph(tanh_chain(14))
    wide = mg.draw(g, direction="LR")
    assert viz.svg_size(render_plain(wide))[0] > viz.FIT_WIDTH       # left to right does not fit
    chosen = mg.draw(g)
    chosen.svg()
    assert chosen.options["direction"] == "TB" and "rankdir=TB" in chosen.source
    assert viz.svg_size(chosen.svg())[0] <= viz.FIT_WIDTH
    assert repr(chosen) == repr(wide)                                # the same summary either way
    assert wide.options["direction"] == "LR" and "rankdir=LR" in wide.source   # a direction given wins
    small = mg.draw(mg.Graph(tanh_chain(2)))
    small.svg()
    assert small.options["direction"] == "LR"                        # fits as it is: left to right


def render_plain(drawing):
    """dot's own SVG of a drawing's source, before fitting."""
    return viz.render_svg(drawing.source)


def test_a_wide_drawing_shrinks_to_the_output_but_never_below_readable():
    x = mg.Input("x")
    # eight chains of six: about as wide either way
    branches = [tanh_chain(6, x, prefix=f"b{i}_") for i in range(8)]
    total = branches[0]
    for k, b in enumerate(branches[1:]):
        total = mg.add(total, b, name=f"sum{k}")
    for direction in ("LR", "TB"):
        drawing = mg.draw(mg.Graph(total), direction=direction)
        natural = viz.svg_size(render_plain(drawing))
        shown = viz.svg_size(drawing.svg())
        scale = max(viz.READABLE, min(1, viz.FIT_WIDTH / natural[0]))
        assert shown == pytest.approx((natural[0] * scale, natural[1] * scale), abs=0.02)
        assert re.search(r'viewBox="0\.00 0\.00 ', drawing.svg())        # the content scales with it
    tall = mg.draw(mg.Graph(tanh_chain(3)), direction="TB")
    assert viz.svg_size(tall.svg()) == viz.svg_size(render_plain(tall))   # never enlarged


def test_every_drawing_carries_a_title_naming_what_it_shows(small):
    for svg in (mg.draw(small).svg(), mg.draw(small, backward=True).svg(), viz.LiveDrawing(small).render()):
        root = re.search(r"<svg\b[^>]*>\s*<title>([^<]*)</title>", svg)
        assert root, svg[:300]
        names = ", ".join(n.name for n in small.nodes)              # (const_N, pow_N: numbered per process)
        assert re.fullmatch(rf"Drawing of 9 nodes(, backward view)?: {re.escape(names)}", root.group(1))
    assert ", backward view" in re.search(r"<title>([^<]*)</title>", mg.draw(small, backward=True).svg()).group(1)
    long = mg.draw(mg.Graph(tanh_chain(20)))
    title = re.search(r"<svg\b[^>]*>\s*<title>([^<]*)</title>", long.svg()).group(1)
    assert title == "Drawing of 21 nodes: x, t0, t1, t2, t3, t4, t5, t6, t7, …, t19"


def test_the_legend_is_a_row_left_to_right_and_a_column_top_to_bottom(small):
    wide = statement(mg.draw(small, legend=True, direction="LR").source, "mg-legend")
    tall = statement(mg.draw(small, legend=True, direction="TB").source, "mg-legend")
    assert wide.count("<TR>") == 1 and tall.count("<TR>") == len(viz.KIND_COLOURS)
    assert sorted(re.findall(r">(\w+)</TD>", wide)) == sorted(re.findall(r">(\w+)</TD>", tall)) == sorted(viz.KIND_COLOURS)
