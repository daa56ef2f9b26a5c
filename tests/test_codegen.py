"""The code writer (codegen.py) and the fast path (fastpath.py): the generated backward must be
the interpreter, only faster; mg.function's and the backward's generated lines show in tracebacks."""

import gc
import linecache
import re
import traceback

import numpy as np
import pytest

import minigraph as mg
from test_random_graphs import same


# -- the generated backward (the fast path) must be the interpreter, only faster ----------------

def assert_generated_is_the_interpreter(g, wrt=None):
    """Run the generated backward, then the interpreter, and compare value and every .grad bit
    for bit."""
    value = mg.codegen.backward_function(g.plan(wrt))({}, None)   # called directly: no fallback hides a bug
    generated = {n: n.grad for n in g.nodes}
    g.register_backward_hook(lambda node, grad_output, grad_inputs: None)   # any hook: interpreter
    g.invalidate()
    assert g.backward(wrt=wrt) == value
    for n in g.nodes:
        assert same(n.grad, generated[n]), n.name


def test_a_graph_that_is_just_a_leaf_has_gradient_one_every_time():
    w = mg.Parameter(2.0, name="w")
    g = mg.Graph(w)
    assert [(g.backward(), float(w.grad)) for _ in range(3)] == [(2.0, 1.0)] * 3


def test_ops_whose_inputs_all_have_no_gradient_survive_a_second_backward():
    """exp(Constant), 1 - y with y a Constant or an integer Input: no input of these ops takes a
    gradient, and the generated code (from the second call on) once crashed on them."""
    w = mg.Parameter(2.0, name="w")
    g = mg.Graph(w * mg.exp(mg.Constant(3.0)))
    assert [g.backward() for _ in range(3)] == [2.0 * np.exp(3.0)] * 3
    assert w.grad == np.exp(3.0)
    y, labels = mg.Constant([1.0, 0.0]), mg.Input("labels", dtype=int)
    h = mg.Graph(mg.sum(w * (1 - y) + w * (labels * 2)))
    grads = [(h.backward({labels: [3, 1]}), float(w.grad)) for _ in range(3)]
    assert grads == [(1.0 * 2.0 + 8.0 * 2.0, 9.0)] * 3
    assert_generated_is_the_interpreter(h)


def test_explore_survives_slider_moves_on_a_graph_with_a_constant_only_op():
    """Issue 11's learner case: a hand-written BCE's 1 - y, with y a Constant, under a slider."""
    w = mg.Parameter(0.5, name="w")
    y = mg.Constant(1.0, name="y")
    p = mg.sigmoid(w, name="p")
    bce = mg.neg(y * mg.log(p) + (1 - y) * mg.log(1 - p), name="bce")
    explorer = mg.widgets.explore(mg.Graph(bce), {"w": (-2, 2)})
    for value in (1.0, -1.0, 0.25):
        explorer.sliders["w"].value = value
        assert bce.value == pytest.approx(-np.log(1 / (1 + np.exp(-value))))
        assert float(w.grad) == pytest.approx(1 / (1 + np.exp(-value)) - 1)


def test_generated_backward_recomputes_only_what_changed():
    calls = []
    double = mg.defop("double", lambda x: calls.append(x) or 2 * x, [lambda g, ans, x: 2 * g])
    x, w = mg.Input("x"), mg.Parameter(3.0, name="w")
    g = mg.Graph(mg.sum(double(x) * w))
    assert mg.codegen.backward_function(g.plan()) is not None
    g.backward({x: [1.0, 2.0]})
    g.backward({x: [1.0, 2.0]})                       # nothing changed
    assert list(g._fast_path.runs.values()) != [None]  # the second call was the generated code
    w.value = 4.0                                     # double(x) does not depend on w
    assert g.backward({x: [1.0, 2.0]}) == 24.0 and len(calls) == 1
    g.backward({x: [1.0, 3.0]})
    assert len(calls) == 2 and np.allclose(x.grad, 8.0) and w.grad == 8.0


def test_hooks_registered_after_a_fast_backward_still_fire():
    x = mg.Parameter([1.0, -2.0], name="x")
    t = mg.tanh(x, name="t")
    g = mg.Graph(mg.sum(t))
    g.backward()
    seen = []
    handle = t.register_backward_hook(lambda node, grad_output, grad_inputs: seen.append(node.name))
    t.register_forward_hook(lambda node, inputs, out: seen.append("forward"))
    x.value = [0.5, 0.5]
    g.backward()
    assert seen == ["forward", "t"]
    handle.remove()
    g.backward()
    assert seen == ["forward", "t"]                   # the forward hook: nothing was stale


def test_removing_a_hook_twice_does_not_silence_the_others():
    # the engine skips looking for hooks while none is registered anywhere: that count must not
    # drop below the hooks that are still there (a handle removed twice counts once)
    x = mg.Parameter([1.0, -2.0], name="x")
    t = mg.tanh(x, name="t")
    g = mg.Graph(mg.sum(t, name="total"))
    g.backward(), g.backward()                        # the fast path exists
    seen = []
    first = t.register_backward_hook(lambda node, grad_output, grad_inputs: seen.append("first"))
    g.register_backward_hook(lambda node, grad_output, grad_inputs: seen.append(node.name))
    first.remove()
    first.remove()
    g.backward()
    assert seen == ["total", "t"]


def test_generated_source_is_one_call_per_op_and_per_gradient():
    x, y = mg.Input("x"), mg.Input("y", dtype=int)
    net = mg.nn.MLP([3, 4, 2], "relu", rng=0)
    g = mg.Graph(mg.softmax_cross_entropy(net(x), y, name="loss"))
    relu = next(n.name for n in g.nodes if n.op is not None and n.op.name == "relu")  # relu_<k>
    text = mg.codegen.source(g, wrt=g.parameters)
    assert [line.split("(")[1].split(", ")[1] for line in text.splitlines() if "= _store(" in line] == \
        ["f_mlp_fc1", f"f_{relu}", "f_mlp_fc2", "f_loss"]
    vjps = [line.split("(")[0].split("= ")[1] for line in text.splitlines() if "= vjp_" in line]
    assert vjps == ["vjp_loss_0", "vjp_mlp_fc2_0", "vjp_mlp_fc2_1", "vjp_mlp_fc2_2", f"vjp_{relu}_0",
                    "vjp_mlp_fc1_1", "vjp_mlp_fc1_2"]   # none for the labels, none for the data


@pytest.mark.parametrize("names", [("feed", "type", "next"), ("w", "g_w", "f_w"), ("a.b", "a_b", "if")])
def test_generated_code_works_whatever_the_nodes_are_called(names):
    first, second, third = names
    a = mg.Parameter([0.5, -1.0], name=first)
    b = mg.Parameter([2.0, 3.0], name=second)
    assert_generated_is_the_interpreter(mg.Graph(mg.sum(mg.tanh(a * b, name=third) * a)))


def test_errors_on_the_fast_path_are_the_interpreters():
    x, W = mg.Input("x"), mg.Parameter(np.ones((3, 2)), name="W")
    g = mg.Graph(mg.sum(mg.matmul(x, W, name="xW")))
    g.backward({x: np.ones((4, 3))})
    g.backward({x: np.ones((4, 3))})                  # from now on, the generated code runs
    with pytest.raises(mg.ShapeError, match="(?s)forward of 'xW' = matmul.*x \\(input\\) shape \\(4, 5\\)"):
        g.backward({x: np.ones((4, 5))})
    seed = np.full((4, 2), 0.5)
    out = g.outputs[0].inputs[0]
    h = mg.Graph(out)
    h.backward({x: np.ones((4, 3))}, seed=seed)
    h.backward({x: np.ones((4, 3))}, seed=seed)
    assert np.allclose(W.grad, 2.0)
    with pytest.raises(mg.GraphError, match="not one"):
        h.backward({x: np.ones((4, 3))})


def test_when_the_backward_cannot_be_written_the_interpreter_runs(monkeypatch):
    def broken(plan):
        raise SyntaxError("a bug of the code writer")
    monkeypatch.setattr(mg.codegen, "backward_function", broken)
    w = mg.Parameter([1.0, 2.0], name="w")
    g = mg.Graph(mg.sum(w * w))
    assert [g.backward() for _ in range(3)] == [5.0] * 3 and np.array_equal(w.grad, [2.0, 4.0])


def test_the_code_writer_sees_only_the_plan():
    """codegen.py imports nothing of graph.py: everything it writes comes from a BackwardPlan
    (and, for mg.function, from what compiler/function.py hands it)."""
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(mg.codegen))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module for node in ast.walk(tree)
                                            if isinstance(node, ast.ImportFrom)}
    assert imported == {"itertools", "keyword", "linecache", "re", "unicodedata", "weakref", "numpy"}


def test_multi_output_graphs_are_written_out_too():
    a, b, unused = mg.split(mg.Parameter([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], name="v"), 3)
    g = mg.Graph(mg.sum(a * b))
    assert g.backward() == 11.0
    assert "_fill(" in mg.codegen.source(g)       # the unused output's gradient: zeros
    assert_generated_is_the_interpreter(g)
    assert np.array_equal(g.nodes[0].grad, [3.0, 4.0, 1.0, 2.0, 0.0, 0.0])


# -- generated code in tracebacks: its lines show, as a file's do -----------------------------

def spy_op(stacks):
    """An op (y = 2x) whose forward records the stack it was called from."""
    def forward(x):
        stacks.append("".join(traceback.format_stack()))
        return 2 * x
    return mg.defop("spy", forward, [lambda g, ans, x: 2 * g])


def test_a_traceback_through_the_generated_backward_shows_its_lines():
    stacks = []
    x = mg.Input("x")
    g = mg.Graph(mg.sum(spy_op(stacks)(x, name="doubled"), name="total"))
    g.backward({x: [1.0]})                            # the interpreter
    g.backward({x: [2.0]})                            # the generated code: doubled is stale
    assert len(stacks) == 2 and "_store(" not in stacks[0]
    assert re.search(r"File \"<minigraph \d+: backward of 'total'>\", line \d+, in _run\n"
                     r" +doubled_ = _store\(doubled, f_doubled\(x_\)\)\n", stacks[1]), stacks[1]

    def wrong_vjp(g, ans, x):
        raise RuntimeError("a broken VJP")
    broken = mg.Graph(mg.sum(mg.defop("broken", lambda x: 2 * x, [wrong_vjp])(x, name="twice")))
    with pytest.raises(RuntimeError) as raised:       # called directly: no interpreter to explain
        mg.codegen.backward_function(broken.plan())({x: [1.0]}, None)
    assert "_gi = vjp_twice_0(g_twice, twice_, x_)" in "".join(traceback.format_tb(raised.tb))


def test_a_traceback_through_mg_function_shows_its_lines():
    stacks = []
    x = mg.Input("x")
    f = mg.function([x], spy_op(stacks)(x, name="doubled"))
    assert float(f(3.0)) == 6.0
    line = next(line for line in f.source.splitlines() if "# doubled = spy(x)" in line)
    f(3.0)                                            # the second call runs the code written
    assert re.search(r"File \"<minigraph \d+: mg.function>\", line \d+, in _run\n", stacks[-1]), stacks[-1]
    assert line.strip() in stacks[-1]


def test_generated_source_leaves_linecache_with_its_function():
    w = mg.Parameter([1.0, 2.0], name="w")
    run = mg.codegen.backward_function(mg.Graph(mg.sum(w * w)).plan())
    filename = run.__code__.co_filename
    assert linecache.getline(filename, 1) == "def _run(_feed_values, _seed_value):\n"
    del run
    gc.collect()
    assert filename not in linecache.cache


def test_mg_functions_code_names_its_variables_after_the_nodes():
    """Both writers name a value after its node (``h_`` is the value of ``h``); names that are
    no identifiers, or that would clash once made into one, fall back to numbered names."""
    x = mg.Input("x")
    W = mg.Parameter([[1.0, 2.0]], name="W")
    h = mg.tanh(x @ W, name="h")
    f = mg.function([x], mg.sum(h * h, name="loss"))
    assert "h_ = f_h(" in f.source and "return [loss_]" in f.source
    assert f([[1.0], [2.0]]) == mg.Graph(f.outputs[0]).forward({x: [[1.0], [2.0]]})
    a, b = mg.Parameter(1.0, name="a.b"), mg.Parameter(2.0, name="a_b")     # both become a_b
    clash = mg.function([], a * b)
    assert "a_b_" not in clash.source and "n0_" in clash.source
    assert clash() == 2.0


def test_names_python_reads_in_another_form_are_written_in_that_form():
    """Python reads identifiers in their NFKC form (``kᵀ`` is ``kT``): nodes named so (as chapter
    11's GPT's ``h0.attn.kᵀ``) get names that the generated code and the dict of its names spell
    alike, so both writers' code runs (it does not fall back)."""
    x = mg.Input("x")
    W = mg.Parameter([[1.0, -2.0]], name="W")
    loss = mg.sum(mg.tanh(x @ mg.transpose(W, name="Wᵀ"), name="h") ** 2.0, name="loss")
    feed = {x: np.array([[1.0, 0.5]])}
    graph = mg.Graph(loss)
    expected = graph.backward(feed, wrt=[W])
    run = mg.codegen.backward_function(graph.plan([W]))
    assert "f_WT(W_" in mg.codegen.source(graph, [W]) and same(run(feed, None), expected)
    f = mg.function([x], [loss, mg.grad(loss, W)])
    for _ in range(2):                                # the second call runs the written code
        got = f.run_compiled(feed[x])
    assert same(got[0], expected) and same(got[1], W.grad)
