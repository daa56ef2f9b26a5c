"""widgets, driven from Python as a learner drives them: sliders, Step/Back/Reset, training."""

import re
import subprocess
import sys

import numpy as np
import pytest

import minigraph as mg
from minigraph import viz, widgets

GEOMETRY = re.compile(r'(?:x|y|d|points|viewBox|width|height)="[^"]*"')


def node_texts(svg, name):
    """The texts inside the drawn box of node ``name``."""
    svg = svg.replace("&#45;", "-")                       # older graphviz escapes '-' in ids
    group = re.search(rf'<g id="mg-node-{re.escape(name)}" class="([^"]*)">(.*?)</g>', svg, re.S)
    return group.group(1), re.findall(r"<text[^>]*>([^<]*)</text>", group.group(2))


@pytest.fixture
def net():
    x = mg.Input("x")
    w = mg.Parameter(0.5, name="w")
    h = mg.tanh(mg.mul(w, x, name="wx"), name="h")
    loss = mg.mul(h - 1.0, h - 1.0, name="loss")
    return mg.Graph(loss), x, w, h, loss


def test_import_minigraph_stays_light_and_widgets_load_on_first_use():
    code = ("import sys, minigraph as mg; assert 'ipywidgets' not in sys.modules; "
            "assert 'matplotlib' not in sys.modules; mg.widgets.explore; assert 'ipywidgets' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("package, module, name", [("charlm", "charlm", "text"),
                                                   ("attention", "chapters.attention", "attention"),
                                                   ("translate", "translate", "data"),
                                                   ("gpt", "gpt", "model")])
def test_the_chapters_tools_are_imported_on_first_use(package, module, name):
    code = (f"import sys, minigraph as mg; assert 'minigraph.{module}' not in sys.modules; "
            f"mg.{package}.{name}; assert 'minigraph.{module}' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_moving_a_slider_recomputes_and_redraws_in_place(net):
    g, x, w, h, loss = net
    explorer = mg.widgets.explore(g, {x: (-3, 3)}, feed={x: 1.0})
    before = explorer.view.value
    explorer.sliders[x].value = 2.0
    assert h.value == pytest.approx(np.tanh(1.0))
    assert loss.value == pytest.approx((np.tanh(1.0) - 1) ** 2)
    assert w.grad == pytest.approx(2 * (np.tanh(1.0) - 1) * (1 - np.tanh(1.0) ** 2) * 2.0)
    after = explorer.view.value
    assert viz.format_number(h.value) in node_texts(after, "h")[1]
    assert viz.format_number(w.grad) in node_texts(after, "w")[1]
    assert viz.format_number(loss.value) in explorer.readout.value
    assert GEOMETRY.findall(before) == GEOMETRY.findall(after)          # nothing moved
    assert "mg-explore" in explorer._dom_classes


def test_parameter_slider_assigns_the_parameter(net):
    g, x, w, h, loss = net
    explorer = mg.widgets.explore(g, {"w": (-2, 2, 0.25)}, feed={x: 1.5})
    explorer.sliders["w"].value = -1.0
    assert float(w.value) == -1.0
    assert h.value == pytest.approx(np.tanh(-1.5))
    assert viz.format_number(np.tanh(-1.5)) in node_texts(explorer.view.value, "h")[1]


def test_element_sliders_move_one_entry_of_a_small_array():
    v = mg.Input("v")
    y = mg.sum(v * v, name="y")
    explorer = mg.widgets.explore(y, {(v, 1): (-3, 3)}, feed={v: [1.0, 2.0, 3.0]})
    explorer.sliders[v, 1].value = -1.0
    assert np.allclose(v.value, [1.0, -1.0, 3.0]) and y.value == pytest.approx(11.0)
    assert np.allclose(v.grad, [2.0, -2.0, 6.0])
    assert explorer.sliders[v, 1].description == "v[1]"


def test_non_scalar_output_is_run_forward_only():
    x = mg.Input("x")
    y = mg.tanh(x * mg.Constant([1.0, 2.0]), name="y")
    explorer = mg.widgets.explore(y, {x: (-1, 1)}, feed={x: 0.0})
    explorer.sliders[x].value = 0.5
    assert np.allclose(y.value, np.tanh([0.5, 1.0])) and y.grad is None
    assert "(2,) [0.4621, 0.7616]" in explorer.readout.value


def test_a_small_array_gets_one_slider_per_entry():
    W = mg.Parameter([[1.0, 2.0], [3.0, 4.0]], name="W")
    x = mg.Input("x")
    explorer = mg.widgets.explore(mg.sum(x @ W, name="y"), {x: (-3, 3), W: (-5, 5)}, feed={x: [1.0, 1.0]})
    assert [s.description for s in explorer.sliders.values()] == [
        "x[0]", "x[1]", "W[(0, 0)]", "W[(0, 1)]", "W[(1, 0)]", "W[(1, 1)]"]
    explorer.sliders[x, 1].value = 2.0
    assert np.allclose(x.value, [1.0, 2.0]) and explorer.graph.outputs[0].value == pytest.approx(17.0)
    explorer.sliders[W, (1, 0)].value = 0.0
    assert W.value[1, 0] == 0.0 and explorer.graph.outputs[0].value == pytest.approx(11.0)


def test_a_slider_for_a_large_array_is_refused_with_advice():
    v = mg.Input("v")
    with pytest.raises(ValueError, match=r"too many for a slider each; pick some, e.g. \{\('v', 0\)"):
        mg.widgets.explore(mg.sum(v), {v: (0, 1)}, feed={v: np.ones(9)})


def test_step_through_walks_forward_in_topological_order_then_backward(net):
    g, x, w, h, loss = net
    walk = mg.widgets.step_through(g, {x: 0.5})
    ops = [n for n in g.nodes if n.op is not None]
    assert walk.position == 0 and walk.current is None
    assert "mg-step-through" in walk._dom_classes
    seen = []
    for _ in ops:
        walk.step()
        seen.append(walk.current)
        cls, texts = node_texts(walk.view.value, walk.current.name)
        assert "mg-hl" in cls                                 # the current box is lit
    assert seen == ops
    others = [n for n in g.nodes if n is not walk.current]
    assert all("mg-hl" not in node_texts(walk.view.value, n.name)[0] for n in others)
    walk.buttons["Step"].click()
    assert walk.current is ops[-1] and walk.explanation.splitlines()[1].startswith("backward")
    backward = [walk.current]
    while walk.position < len(walk.steps):
        walk.step()
        backward.append(walk.current)
    assert backward == ops[::-1]
    walk.back()
    assert walk.position == len(walk.steps) - 1
    walk.buttons["Reset"].click()
    assert walk.position == 0 and walk.current is None


def test_step_through_explains_with_the_actual_numbers(net):
    g, x, w, h, loss = net
    walk = mg.widgets.step_through(g, {x: 0.5})
    walk.step()
    walk.step()
    assert walk.current is h
    assert walk.explanation.endswith(f"h = tanh(wx)\n         = tanh(0.25)\n         = {np.tanh(0.25):.4g}")
    # values appear only once computed: the loss box is still empty at this point
    assert "—" in node_texts(walk.view.value, "loss")[1]
    assert viz.format_number(np.tanh(0.25)) in node_texts(walk.view.value, "h")[1]


def test_step_through_shows_gradients_summing_where_edges_join():
    a = mg.Parameter(1.5, name="a")
    d = mg.add(mg.mul(a, 2.0, name="b"), mg.tanh(a, name="c"), name="d")
    walk = mg.widgets.step_through(d)
    for _ in walk.steps:
        walk.step()
    da = 2 + (1 - np.tanh(1.5) ** 2)
    assert walk.explanation.endswith(f"a.grad = {1 - np.tanh(1.5) ** 2:.4g} (from c) + 2 (from b) = {da:.4g}")
    assert "-> a: 1 × 2 = 2" in walk.explanation
    assert a.grad == pytest.approx(da)
    assert viz.format_number(da) in node_texts(walk.view.value, "a")[1]


def overwriting_backward(loss, values):
    """A backward with a typical slip: at fan-out the last share overwrites the others."""
    grads = {loss: np.ones_like(values[loss])}
    for node in reversed(mg.Graph(loss).nodes):
        if node.op is not None:
            args = [values[p] for p in node.inputs]
            for k, parent in enumerate(node.inputs):
                grads[parent] = node.op.vjps[k](grads[node], values[node], *args, **node.attrs)
    return grads


def test_step_through_can_replay_your_own_backward():
    a = mg.Parameter(1.5, name="a")
    d = mg.add(mg.mul(a, 2.0, name="b"), mg.tanh(a, name="c"), name="d")
    engine = mg.widgets.step_through(d)
    ops = {n: n.op for n in engine.graph.nodes}
    from minigraph.grading.answers.ch03 import backward
    yours = mg.widgets.step_through(d, backward=backward)
    assert [step[:2] for step in yours.steps] == [step[:2] for step in engine.steps]
    for walk in (engine, yours):
        for _ in walk.steps:
            walk.step()
    def explained(walk):        # a backward of your own sends the Constant 2 a gradient too
        return [line for line in walk.explanation.splitlines() if "const" not in line]

    assert explained(yours) == explained(engine)                # the same numbers, summed alike
    assert "-> const" in yours.explanation
    assert all(n.op is op for n, op in ops.items())             # the rules are given back


def test_step_through_shows_where_your_backward_forgot_to_add():
    a = mg.Parameter(0.5, name="a")
    h = mg.tanh(a, name="h")
    d = mg.add(mg.mul(h, 2.0, name="b"), mg.tanh(h, name="c"), name="d")
    walk = mg.widgets.step_through(d, backward=overwriting_backward)
    while walk.current is not h or walk.steps[walk.position - 1][0] != "backward":
        walk.step()
    yours = overwriting_backward(d, {n: n.value for n in walk.graph.nodes})[h]
    right = 2 + (1 - np.tanh(h.value) ** 2)
    # h's two shares are listed, and the total is the one your backward handed h's rule
    assert f"(from c) + 2 (from b) = {viz.format_number(float(yours))}" in walk.explanation
    assert float(yours) != pytest.approx(right)


def test_step_through_removes_its_hooks(net):
    g, x, w, h, loss = net
    walk = mg.widgets.step_through(g, {x: 0.5})
    n = len(walk.steps)
    g.invalidate()
    g.backward({x: 1.0})
    assert len(walk.steps) == n == 2 * 5          # 5 ops, forward and backward


def test_training_lowers_the_loss_and_redraws():
    dashboard = mg.widgets.train("xor")
    first_image = dashboard.image.value
    dashboard.step(50)
    assert len(dashboard.history) == 50
    assert dashboard.history[-1] < 0.5 * dashboard.history[0]
    assert dashboard.image.value != first_image and bytes(dashboard.image.value).startswith(b"\x89PNG")
    assert "step <b>50</b>" in dashboard.progress.value
    assert 0.0 <= dashboard.accuracy <= 1.0


def test_training_controls_and_reset():
    dashboard = mg.widgets.train("disk", hidden=3, optimizer="gd", lr=0.5)
    dashboard.play.value = 1                                 # one tick of Play
    assert len(dashboard.history) == dashboard.steps_per_tick
    dashboard.controls["lr"].value = 0.1
    assert dashboard.optimizer.lr == pytest.approx(0.1)
    dashboard.controls["optimizer"].value = "adam"
    assert isinstance(dashboard.optimizer, mg.optim.Adam)
    dashboard.controls["hidden"].value = 5
    assert dashboard.history == [] and dashboard.net.layers[0].W.shape == (2, 5)
    dashboard.step(3)
    dashboard.reset_button.click()
    assert dashboard.history == []


def test_training_leaves_no_pyplot_figures():
    import matplotlib.pyplot as plt
    before = plt.get_fignums()
    mg.widgets.train("xor").step(2)
    assert plt.get_fignums() == before


def test_formula_reads_like_maths():
    x, y = mg.Input("x"), mg.Input("y")
    assert widgets.formula(x @ y, ["x", "y"]) == "x @ y"
    assert widgets.formula(mg.sum(x, axis=0), ["x"]) == "Σ(x, axis=0)"
    assert widgets.formula(x[1], ["x"]) == "x[1]"


def test_sliders_use_round_steps_and_start_on_their_grid():
    """The browser snaps a slider to lo + k·step; a start value off that grid would be changed
    (and sent back to the kernel) the moment the widget appears."""
    x, w = mg.Input("x"), mg.Parameter(0.123, name="w")
    explorer = mg.widgets.explore(mg.sum(x * w, name="y"), {x: (-3, 3), w: (-1, 1)}, feed={x: 0.5})
    assert explorer.sliders[x].step == 0.01 and explorer.sliders[x].value == 0.5
    assert explorer.sliders[w].value == 0.12 and float(w.value) == 0.12
    assert mg.widgets.round_step(0.5) == 0.001 and mg.widgets.round_step(20) == 0.1


# -- fitting a 1,000 px output ----------------------------------------------------------------------

def chain(n):
    """x -> n ops in a row -> out: a graph that is wide when drawn left to right."""
    x = mg.Input("x")
    node = x
    for k in range(n):
        node = mg.tanh(node, name=f"t{k}")
    return mg.Graph(node), x


def test_a_graph_too_wide_for_the_screen_is_drawn_top_to_bottom():
    g, x = chain(12)
    assert viz.LiveDrawing(g).size[0] > widgets.FIT_WIDTH            # left to right: too wide
    for widget in (widgets.explore(g, {x: (-1, 1)}, feed={x: 0.5}), widgets.step_through(g, {x: 0.5})):
        assert widget.drawing.options["direction"] == "TB"
        assert widget.drawing.size[0] <= widgets.FIT_WIDTH
        assert widget.view.value.startswith(f'<div class="mg-graph"><svg style="{widgets.FIT_STYLE}" ')
    small_x = mg.Input("x")                                         # fits as it is: stays left to right
    small = mg.Graph(mg.tanh(mg.mul(mg.Parameter(0.5, name="w"), small_x, name="wx"), name="h"))
    assert viz.LiveDrawing(small).size[0] <= widgets.FIT_WIDTH
    assert widgets.explore(small, {small_x: (-1, 1)}).drawing.options["direction"] == "LR"
    chosen = widgets.explore(g, {x: (-1, 1)}, feed={x: 0.5}, direction="LR")
    assert chosen.drawing.options["direction"] == "LR"               # a direction given wins


def test_a_drawing_runs_left_to_right_or_top_to_bottom_and_nothing_else(net):
    g = net[0]
    assert "rankdir=LR" in mg.draw(g).source and "rankdir=TB" in mg.draw(g, direction="TB").source
    tall, wide = viz.LiveDrawing(g, direction="TB").size, viz.LiveDrawing(g).size
    assert tall[1] > wide[1] and tall[0] < wide[0]
    with pytest.raises(mg.DrawingError, match="left to right"):
        mg.draw(g, direction="RL")


def test_the_training_plot_goes_under_its_controls_rather_than_squeeze_them():
    """At 1280 x 800 with JupyterLab's file browser open the output is 848 px wide: the controls
    and the plot side by side did not fit, and the controls were cut off. Their row wraps."""
    from minigraph import snapshot
    dashboard = mg.widgets.train("xor")
    row = dashboard.children[1]
    assert row.children == (row.children[0], dashboard.image) and row.layout.flex_flow == "row wrap"
    assert "flex-direction:row;flex-wrap:wrap" in snapshot.html_of(row)      # the site's picture too
    assert repr(dashboard).startswith("Trainer(children=(HBox(children=(Play(value=0, description='Train'")
