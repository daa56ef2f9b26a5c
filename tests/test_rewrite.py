"""The rewrites of mg.function (compiler/rewrites.py) and its memory plan (compiler/memory.py), pass by pass: a
graph where each one applies, and one where it must not. (tests/test_compiled.py fuzzes them all
together, bit for bit, on the engine's random graphs.)"""

import re

import numpy as np
import pytest

import minigraph as mg
from minigraph import gradops
from minigraph.compiler import memory as memoryplan, rewrites as rewrite
from test_random_graphs import same


def program(outputs, feed=None):
    """The Program of ``outputs`` and its values for ``feed`` ({Input: array})."""
    outputs = outputs if isinstance(outputs, list) else [outputs]
    p = rewrite.program_of(mg.Graph(outputs).nodes, outputs)
    feed = {node: np.asarray(v) for node, v in (feed or {}).items()}
    values = rewrite.evaluate(p, lambda t: feed[t.node] if t.kind == "input" else t.node._value)
    return p, values


def ops_of(p):
    return sorted(t.op.name for t in p.terms if t.kind == "op")


def results_of(p, values):
    return [values[t] for t in p.results]


def assert_same_results(before, after, values):
    assert all(map(same, results_of(before, values), results_of(after, values)))


# -- merge_common ---------------------------------------------------------------------------------

def test_merge_common_merges_an_op_built_twice_and_equal_constants():
    x = mg.Input("x")
    a, b = mg.tanh(x * 2.0), mg.tanh(x * 2.0)          # two Number 2.0 nodes, two muls, two tanhs
    p, values = program([a + b], {x: [1.0, 2.0]})
    merged = rewrite.merge_common(p, values)
    assert ops_of(p) == ["add", "mul", "mul", "tanh", "tanh"] and ops_of(merged) == ["add", "mul", "tanh"]
    add = merged.results[0]
    assert add.args[0] is add.args[1]
    assert_same_results(p, merged, values)


def test_merge_common_keeps_ops_that_differ_in_an_input_or_an_attribute():
    x, y = mg.Input("x"), mg.Input("y")
    graph = [mg.tanh(x), mg.tanh(y), mg.sum(x, axis=0), mg.sum(x, axis=-1), mg.sum(x, axis=(0,)),
             mg.leaky_relu(x, slope=0.0), mg.leaky_relu(x, slope=-0.0),      # -0.0 * x differs in sign
             mg.Constant(1.0) * x, mg.Constant(np.array(1)) * x]                # float 1 and integer 1
    p, _ = program(graph, {x: [[1.0, 2.0]], y: [[3.0, 4.0]]})
    assert rewrite.merge_common(p).n_ops == p.n_ops


# -- fold_constants -------------------------------------------------------------------------------

def test_fold_constants_computes_ops_of_constants_once():
    x = mg.Input("x")
    scale = mg.exp(mg.Constant(2.0)) * 3.0                  # exp and mul of constants only
    p, values = program(mg.sum(scale * x), {x: [1.0, 2.0]})
    folded = rewrite.fold_constants(p)
    assert ops_of(folded) == ["mul", "sum"]
    constant = folded.results[0].args[0].args[0]
    assert constant.kind == "constant" and constant.value == np.exp(2.0) * 3.0
    assert not constant.value.flags.writeable


def test_fold_constants_leaves_parameters_inputs_and_failing_ops():
    x, w = mg.Input("x"), mg.Parameter(2.0, name="w")
    bad = mg.matmul(mg.Constant([1.0, 2.0]), mg.Constant([1.0, 2.0, 3.0]))   # fails when it runs
    p = rewrite.program_of(mg.Graph([mg.exp(w) * 3.0 + mg.exp(x), bad]).nodes, [])
    assert ops_of(rewrite.fold_constants(p)) == ops_of(p)


# -- drop_dead ------------------------------------------------------------------------------------

def test_drop_dead_removes_what_no_result_needs_after_a_merge():
    x = mg.Input("x")
    p, values = program([mg.tanh(x) + mg.tanh(x)], {x: [1.0]})
    merged = rewrite.merge_common(p)
    assert len(merged.terms) == len(p.terms) - 1          # the second tanh: no longer in the order
    p2 = rewrite.Program(p.terms + [rewrite.Term("unused", "op", None, mg.ops.exp.opdef, [p.terms[0]])],
                         p.results)
    assert rewrite.drop_dead(p2).n_ops == p.n_ops
    assert rewrite.drop_dead(p).n_ops == p.n_ops           # everything is needed: nothing goes


# -- settle_numbers -------------------------------------------------------------------------------

def test_settle_numbers_converts_a_number_to_float32_once():
    x = mg.Input("x")
    y = 0.1 * x
    p = rewrite.program_of(mg.Graph(y).nodes, [y])
    x32 = np.array([1.0, 3.0], np.float32)
    values = rewrite.evaluate(p, lambda t: x32)
    settled = rewrite.settle_numbers(p, values)
    mul = settled.results[0]
    assert mul.op is mg.ops.mul.opdef                            # the table's own op, no WithNumbers
    assert mul.args[0].kind == "constant" and mul.args[0].value.dtype == np.float32
    assert same(mul.op.forward(*[values[a] for a in mul.args]), values[p.results[0]])
    values64 = rewrite.evaluate(p, lambda t: x32.astype(np.float64))
    same_dtype = rewrite.settle_numbers(p, values64).results[0]
    assert same_dtype.args[0] is p.results[0].args[0]        # float64 already: no new constant


# -- fold_shapes ----------------------------------------------------------------------------------

def test_fold_shapes_makes_the_seed_and_sizes_constants():
    x = mg.Input("x")
    loss = mg.mse(mg.tanh(x), mg.Constant([0.0, 1.0]))
    p, values = program(mg.grad(loss, x), {x: [0.5, 0.25]})
    folded = rewrite.fold_shapes(p, values)
    assert {"ones_like", "size"} <= set(ops_of(p)) and not {"ones_like", "size"} & set(ops_of(folded))
    assert_same_results(p, folded, values)


def test_fold_shapes_trusts_no_shape_below_a_learners_op():
    x = mg.Input("x")
    positive = mg.defop("positive", lambda v: v[v > 0], [lambda g, ans, v: np.zeros_like(v)])
    p, values = program(gradops.ones_like(positive(x)), {x: [1.0, -1.0]})
    assert ops_of(rewrite.fold_shapes(p, values)) == ["ones_like", "positive"]


# -- drop_identities ------------------------------------------------------------------------------

def test_drop_identities_removes_sum_to_of_the_right_shape_only():
    x, b = mg.Input("x"), mg.Parameter([1.0, 2.0], name="b")
    bias, same_shape = gradops.sum_to(x, b), gradops.sum_to(x * 2.0, x)
    p, values = program([bias, same_shape], {x: [[1.0, 2.0], [3.0, 4.0]]})
    dropped = rewrite.drop_identities(p, values)
    assert ops_of(dropped) == ["mul", "sum_to"]               # the bias's sum_to stays
    assert dropped.results[1].op.name == "mul"
    assert_same_results(p, dropped, values)


def test_drop_identities_removes_a_product_by_one_of_the_same_dtype_only():
    x = mg.Input("x")
    one64, one32 = mg.Constant(np.ones(2)), mg.Constant(np.ones((), np.float32))
    p, values = program([one64 * mg.exp(x), mg.exp(x) * one32, mg.exp(x) * mg.Constant(2.0)],
                        {x: np.array([1.0, -0.0])})
    dropped = rewrite.drop_identities(p, values)
    assert ops_of(dropped) == ["exp", "exp", "exp", "mul"]     # the products by 1 go, not by 2
    assert_same_results(p, dropped, values)
    x32 = {x: np.array([1.0, -0.0], np.float32)}
    p, values = program([mg.exp(x) * one64], x32)      # float64: the product is not exp(x) itself
    assert ops_of(rewrite.drop_identities(p, values)) == ["exp", "mul"]


def test_drop_identities_keeps_a_reshape_that_changes_the_shape_or_a_learners_output():
    x = mg.Input("x")
    copy = mg.defop("copy", lambda v: v.copy(), [lambda g, ans, v: g])
    p, values = program([mg.reshape(x, (-1,)), gradops.reshape_like(copy(x), x)], {x: [[1.0, 2.0]]})
    assert ops_of(rewrite.drop_identities(p, values)) == ops_of(p)


def test_the_cross_entropy_gradient_is_fused_for_class_labels_only():
    z, t, soft = mg.Input("z"), mg.Input("t", dtype=int), mg.Input("soft")
    logits, labels = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], np.float32), np.array([2, 0])
    p, values = program(mg.grad(mg.softmax_cross_entropy(z, t), z), {z: logits, t: labels})
    fused = rewrite.run_passes(p, rewrite.FOR_SHAPES, dict(values))
    assert "one_hot" in ops_of(p) and ops_of(fused) == ["softmax_ce_grad"]
    assert same(fused.results[0].op.forward(logits, labels), values[p.results[0]])    # bit for bit
    p, values = program(mg.grad(mg.softmax_cross_entropy(z, mg.softmax(soft)), z),
                        {z: logits, soft: np.ones((2, 3))})
    assert "softmax_ce_grad" not in ops_of(rewrite.run_passes(p, rewrite.FOR_SHAPES, values))


def test_the_passes_shrink_a_training_step_and_say_so():
    x, t = mg.Input("x"), mg.Input("t", dtype=int)
    net = mg.nn.MLP([3, 4, 2], activation="tanh", rng=0)
    loss = mg.softmax_cross_entropy(net(x), t)
    grads = mg.grad(loss, net.parameters)
    f = mg.function([x, t], loss, updates={p: p - 0.1 * g for p, g in zip(net.parameters, grads)})
    f(np.ones((5, 3)), np.arange(5) % 2)
    notes = {name: (int(before), int(after)) for name, before, after in
             re.findall(r"#\s+(\w+)\s+(\d+) -> (\d+)", f.source)}
    assert notes["drop_identities"][1] < notes["drop_identities"][0]
    assert notes["fold_shapes"][1] < notes["fold_shapes"][0]
    assert "memory plan" in f.source and "buffer 0:" in f.source


# -- the memory plan ------------------------------------------------------------------------------

def plan(outputs, feed, updated=()):
    p, values = program(outputs, feed)
    return p, memoryplan.plan_memory(p, values, len(outputs) - len(updated), list(updated))


def test_values_whose_lives_do_not_overlap_share_a_buffer():
    x = mg.Input("x")
    a = mg.exp(x)                               # a dies when summed ...
    b = mg.exp(mg.sum(a) * x)                   # ... so sum(a) * x may take its buffer
    squashed = mg.sigmoid(b)                    # (reads b again after writing: a buffer of its own)
    p, memory = plan([mg.sum(squashed)], {x: np.ones((3, 4))})
    buffer = {t.name: into[1] for t, into in memory.into.items()}
    assert buffer[a.name] == buffer[b.inputs[0].name] == buffer[b.name] != buffer[squashed.name]


def test_an_elementwise_op_overwrites_an_input_that_dies_there():
    """x*2, its tanh, exp of that, + 1: each dies when the next has read it, and each next is
    elementwise, so all four take turns in one buffer, each written where it was read."""
    x = mg.Input("x")
    a = mg.tanh(x * mg.Constant(2.0))
    b = mg.exp(a) + mg.Constant(1.0)
    p, memory = plan([mg.sum(b)], {x: np.ones((3, 4))})
    assert {into[1] for into in memory.into.values()} == {0} and len(memory.into) == 4
    f = mg.function([x], mg.sum(b))
    feed = np.random.default_rng(0).normal(size=(3, 4))
    assert f.run_compiled(feed)[0] == mg.Graph(mg.sum(b)).forward({x: feed})


def test_ops_that_read_their_input_after_writing_never_overwrite_it():
    """sigmoid's and GELU's out= forms read x again after they wrote into out, and a matrix
    product reads whole rows: each gets a buffer of its own, and the numbers stay exact."""
    x = mg.Input("x")
    W = mg.Parameter(np.eye(4) * 0.5, name="W")
    s = mg.sigmoid(x * mg.Constant(2.0))
    g = mg.gelu(s * mg.Constant(3.0))
    m = (g * mg.Constant(1.5)) @ W
    loss = mg.sum(m)
    p, memory = plan([loss], {x: np.ones((4, 4))})
    buffer = {t.name: into[1] for t, into in memory.into.items()}
    assert buffer[s.name] != buffer[s.inputs[0].name] and buffer[g.name] != buffer[g.inputs[0].name]
    assert buffer[m.name] != buffer[m.inputs[0].name]
    f = mg.function([x], loss)
    feed = np.random.default_rng(1).normal(size=(4, 4))
    assert f.run_compiled(feed)[0] == mg.Graph(loss).forward({x: feed})


def test_values_of_other_shapes_share_a_buffer_too():
    x = mg.Input("x")
    h = mg.exp(x * mg.Constant(2.0))                        # (3, 4): dies when summed
    e = mg.sigmoid(mg.sum(h, axis=0, keepdims=True))        # (1, 4): takes h's buffer
    p, memory = plan([mg.sum(e)], {x: np.ones((3, 4))})
    buffer = {t.name: into[1] for t, into in memory.into.items()}
    assert buffer[e.name] == buffer[h.name] and memory.buffers[buffer[h.name]] == 3 * 4 * 8
    f = mg.function([x], mg.sum(e))
    expected = 4 / (1 + np.exp(-3 * np.exp(2.0)))
    assert f(np.ones((3, 4))) == f.run_compiled(np.ones((3, 4)))[0] == pytest.approx(expected, rel=1e-15)


def test_a_view_keeps_its_buffer_alive():
    """``reshape`` of a buffered value is a view of its buffer: the buffer may not be reused
    while the view is read."""
    x = mg.Input("x")
    a = mg.tanh(x)
    view = mg.reshape(a, (-1,))
    c = mg.exp(mg.sum(x) * x)                # would take a's buffer, were the view not read later
    p, memory = plan([mg.sum(mg.reshape(c, (-1,)) * view)], {x: np.ones((2, 3))})
    buffer = {t.name: into[1] for t, into in memory.into.items()}
    assert buffer[a.name] != buffer[c.name]


def test_returned_values_are_copies_or_new_and_remembering_or_learners_ops_read_fresh_arrays():
    x, t = mg.Input("x"), mg.Input("t", dtype=int)
    logits = mg.tanh(x) * mg.Constant(2.0)
    mine = mg.defop("mine", lambda v: v + 0, [lambda g, ans, v: g])
    h = mg.exp(x)
    p, memory = plan([mg.softmax_cross_entropy(logits, t), h, mine(mg.tanh(h))],
                     {x: np.ones((2, 3)), t: np.array([0, 1])})
    buffered = {term.name for term in memory.into}
    assert logits.name not in buffered                   # softmax_cross_entropy remembers its logits
    assert h.name not in buffered and 1 not in memory.copied     # h: returned, so a new array
    assert {t.name for t in memory.returned_new} == {h.name}    # at each call, not a copy
    assert not any(n.startswith("tanh") and n != logits.inputs[0].name for n in buffered)   # mine's input


def test_a_parameter_updated_from_another_is_copied_before_the_writes():
    a, b = mg.Parameter([1.0], name="a"), mg.Parameter([2.0], name="b")
    p, memory = plan([a * b, b, a], {}, updated=[a, b])
    assert memory.copied == {1, 2} and memory.in_place == {a, b}     # a * b: a new array
    assert [t.op.name for t in memory.returned_new] == ["mul"]


def test_relus_gradient_is_fused_bit_for_bit_at_the_edges():
    """g * step(x) becomes g * (x > 0), one op: the same numbers for every g and x, NaN,
    infinities and both zeros included, in float32 and float64."""
    edges = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 2.5, -2.5, 3e38, -3e38])
    for dtype in (np.float32, np.float64):
        g, x = np.meshgrid(edges, edges)
        xin = mg.Input("x", dtype=dtype)
        loss = mg.sum(mg.relu(xin) * mg.Constant(g.astype(dtype)))
        p, values = program(mg.grad(loss, xin), {xin: x.astype(dtype)})     # each g * step(x)
        fused = rewrite.run_passes(p, rewrite.FOR_SHAPES, dict(values))
        assert "relu_grad" in ops_of(fused) and "step" not in ops_of(fused)
        got = rewrite.evaluate(fused, lambda t: x.astype(dtype) if t.kind == "input" else t.node._value)
        assert same(got[fused.results[0]], values[p.results[0]])                   # bit for bit


EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 0.5, 1.0, -2.5, 3e38, -3e38])


def fused_bit_for_bit(outputs, feed, op_name):
    """The program of ``outputs`` after the passes of a call: ``op_name`` computes its first
    result, which is, bit for bit, the unfused graph's, by the op and by its out= form."""
    p, values = program(outputs, feed)
    fused = rewrite.run_passes(p, rewrite.FOR_SHAPES, dict(values))
    term, expected = fused.results[0], values[p.results[0]]
    got = rewrite.evaluate(fused, lambda t: np.asarray(feed[t.node]) if t.kind == "input" else t.node._value)
    out = np.empty_like(expected)
    memoryplan.OUT_FORMS[term.op](*[got[a] for a in term.args], **term.attrs, out=out)
    assert term.op.name == op_name and same(got[term], expected) and same(out, expected)
    return fused


@pytest.mark.parametrize("name, squash, built", [
    ("sigmoid_grad", mg.sigmoid, lambda g, s: [g * s * (1.0 - s), (1.0 - s) * (s * g)]),
    ("tanh_grad", mg.tanh, lambda g, t: [g * (1.0 - t * t), (1.0 - t * t) * g])])
def test_the_squashing_gradients_are_one_op_bit_for_bit_at_the_edges(name, squash, built):
    """sigmoid's g * s * (1 - s) and tanh's g * (1 - t * t), their factors in either order, for
    every g and s (NaN, infinities, both zeros): one op, the same numbers, in float32 and
    float64; and so is the gradient mg.grad builds for the op itself."""
    for dtype in (np.float32, np.float64):
        g_values, s_values = (a.astype(dtype) for a in np.meshgrid(EDGES, EDGES))
        g, s = mg.Input("g", dtype=dtype), mg.Input("s", dtype=dtype)
        for graph in built(g, s):
            assert ops_of(fused_bit_for_bit([graph], {g: g_values, s: s_values}, name)) == [name]
        x = mg.Input("x", dtype=dtype)
        loss = mg.sum(squash(x) * mg.Constant(g_values))
        fused_bit_for_bit([mg.grad(loss, x)], {x: s_values}, name)


def test_the_squashing_gradients_are_not_fused_where_they_broadcast_or_differ():
    g, s = mg.Input("g"), mg.Input("s")
    feed = {g: np.ones((1, 3)), s: np.full((2, 3), 0.25)}                  # g broadcast
    for built in (g * s * (1.0 - s), g * (1.0 - s * s), g * s * (2.0 - s), g * (1.0 - s * g)):
        p, values = program([built], feed)
        assert not {"sigmoid_grad", "tanh_grad"} & set(ops_of(rewrite.run_passes(p, rewrite.FOR_SHAPES, values)))
    p, values = program([g * s * (1.0 - s)], {g: np.ones((2, 3)), s: np.ones((2, 3), np.float32)})
    assert "sigmoid_grad" not in ops_of(rewrite.run_passes(p, rewrite.FOR_SHAPES, values))  # two dtypes
    scaled, squared = g * s, 1.0 - s * s                  # read elsewhere too: computed anyway
    feed = {g: np.ones((2, 3)), s: np.full((2, 3), 0.25)}
    p, values = program([scaled * (1.0 - s), g * squared, scaled + squared], feed)
    assert not {"sigmoid_grad", "tanh_grad"} & set(ops_of(rewrite.run_passes(p, rewrite.FOR_SHAPES, values)))


def test_a_product_added_to_a_sum_is_one_op_bit_for_bit():
    """a + x @ y and x @ y + a, with NaN, infinities and both zeros among the numbers: one op,
    the same numbers; not where the product is also read elsewhere, or a broadcasts."""
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        a, x, y = (mg.Input(n, dtype=dtype) for n in "axy")
        feed = {a: rng.choice(EDGES, (4, 5)).astype(dtype), x: rng.choice(EDGES, (4, 3)).astype(dtype),
                y: rng.normal(size=(3, 5)).astype(dtype)}
        for built in (a + x @ y, x @ y + a):
            fused = fused_bit_for_bit([built], feed, "matmul_add")
            assert ops_of(fused) == ["matmul_add"]
        product = x @ y
        p, values = program([a + product, product * 2.0], feed)
        assert "matmul_add" not in ops_of(rewrite.run_passes(p, rewrite.FOR_SHAPES, values))
        p, values = program([a + x @ y], {**feed, a: feed[a][:1]})
        assert "matmul_add" not in ops_of(rewrite.run_passes(p, rewrite.FOR_SHAPES, values))


def test_gelus_tanh_is_computed_once_for_its_value_and_gradient_bit_for_bit_at_the_edges():
    """A step with gelu(x) and its gradient computes GELU's tanh once (gelu_tanh), and the value
    and gradient from it are, bit for bit, gelu's and gelu_grad's, for every g and x (NaN,
    infinities, both zeros, numbers where the tanh saturates), by the ops and their out= forms."""
    for dtype in (np.float32, np.float64):
        g_values, x_values = (a.astype(dtype) for a in np.meshgrid(EDGES, EDGES))
        x = mg.Input("x", dtype=dtype)
        y = mg.gelu(x)
        (dx,) = mg.grad(mg.sum(y * mg.Constant(g_values)), [x])
        p, values = program([y, dx], {x: x_values})
        kept = rewrite.run_passes(p, rewrite.FOR_SHAPES, dict(values))
        assert ops_of(kept).count("gelu_tanh") == 1 and not {"gelu", "gelu_grad"} & set(ops_of(kept))
        got = rewrite.evaluate(kept, lambda t: x_values if t.kind == "input" else t.node._value)
        for term, before in zip(kept.results, p.results):
            assert same(got[term], values[before])
            out = np.empty_like(got[term])
            memoryplan.OUT_FORMS[term.op](*[got[a] for a in term.args], **term.attrs, out=out)
            assert same(out, values[before]), term.op.name


def test_gelus_tanh_is_kept_only_for_an_x_with_both_a_value_and_a_gradient():
    """gelu alone (an evaluation) is left as it is; two gelus of two xs keep a tanh each."""
    x, z = mg.Input("x"), mg.Input("z")
    feed = {x: np.linspace(-3, 3, 6), z: np.linspace(-1, 2, 6)}
    p, values = program([mg.gelu(x)], feed)
    assert ops_of(rewrite.run_passes(p, rewrite.FOR_SHAPES, values)) == ["gelu"]
    loss = mg.sum(mg.gelu(x) * mg.gelu(z)) + mg.sum(mg.gelu(x * 2.0))
    p, values = program([loss] + mg.grad(loss, [x, z]), feed)
    kept = rewrite.run_passes(p, rewrite.FOR_SHAPES, dict(values))
    assert ops_of(kept).count("gelu_tanh") == 3 and ops_of(kept).count("gelu_grad_of_tanh") == 3
    got = rewrite.evaluate(kept, lambda t: feed[t.node] if t.kind == "input" else t.node._value)
    assert all(same(got[a], values[b]) for a, b in zip(kept.results, p.results))


def test_layer_norms_centering_is_computed_once_for_its_value_and_gradients_bit_for_bit_at_the_edges():
    """The value and the gradients of x and of γ of a layer norm share one centering and scale,
    and are, bit for bit, layer_norm's, layer_norm_grad_x's and layer_norm_grad_gamma's, with
    NaN, infinities, both zeros and huge numbers in the rows, by the ops and their out= forms;
    for each layer norm of a program (two here, one of them without β, with another eps)."""
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        x_values = rng.standard_normal((4, 3, len(EDGES))).astype(dtype)
        x_values[0, 0], x_values[1, 1, ::2] = EDGES, 0.0            # edge numbers, a row of zeros
        x = mg.Input("x", dtype=dtype)
        gamma, beta = (mg.Parameter(rng.standard_normal(len(EDGES)).astype(dtype)) for _ in range(2))
        y = mg.layer_norm(x, gamma, beta)
        z = mg.layer_norm(y * mg.Constant(dtype(2)), gamma, eps=1e-3)
        loss = mg.sum(z * mg.Constant(rng.standard_normal(x_values.shape).astype(dtype)))
        p, values = program([y, z] + mg.grad(loss, [x, gamma, beta]), {x: x_values})
        with np.errstate(all="ignore"):
            shared = rewrite.run_passes(p, rewrite.FOR_SHAPES, dict(values))
            got = rewrite.evaluate(shared, lambda t: x_values if t.kind == "input" else t.node._value)
        names = ops_of(shared)
        assert names.count("layer_norm_centered") == names.count("layer_norm_scale") == 2
        assert not {"layer_norm", "layer_norm_grad_x", "layer_norm_grad_gamma"} & set(names)
        assert all(same(got[a], values[b]) for a, b in zip(shared.results, p.results))
        for term in shared.terms:
            if term.kind == "op" and term.op.name == "layer_norm_grad_x_from":
                out = np.empty_like(got[term])
                memoryplan.OUT_FORMS[term.op](*[got[a] for a in term.args], **term.attrs, out=out)
                assert same(out, got[term])


def test_layer_norms_centering_is_shared_only_where_both_gradients_are_taken():
    """A layer norm whose γ is not trained (only x's gradient) keeps its own gradient op."""
    x = mg.Input("x")
    gamma = mg.Parameter(np.linspace(0.5, 2, 4))
    loss = mg.sum(mg.layer_norm(x, gamma) * mg.Constant(np.arange(12.0).reshape(3, 4)))
    p, values = program(mg.grad(loss, [x]), {x: np.linspace(-3, 3, 12).reshape(3, 4)})
    assert "layer_norm_centered" not in ops_of(rewrite.run_passes(p, rewrite.FOR_SHAPES, values))


def test_a_concatenations_parts_of_its_gradient_are_views_and_it_writes_into_a_buffer():
    """The gradients of concatenate's inputs, slices of its gradient, become views (no copy) along
    the first axis, with the same numbers; along another axis the view would be strided (another
    layout than the copy's, on which numpy's matmul may round the last bit otherwise), so the
    copy stays. The concatenation itself takes its out= form."""
    rng = np.random.default_rng(0)
    for axis in (0, 1, -1):
        a, b = mg.Input("a"), mg.Input("b")
        shapes = [(2, 3), (2, 2)] if axis else [(3, 2), (2, 2)]
        joined = mg.concatenate([a, b, a], axis=axis)
        weights = mg.Constant(rng.normal(size=np.shape(np.concatenate(
            [np.ones(shapes[0]), np.ones(shapes[1]), np.ones(shapes[0])], axis=axis))))
        feed = {a: rng.normal(size=shapes[0]), b: rng.normal(size=shapes[1])}
        p, values = program(mg.grad(mg.sum(joined * weights), [a, b]), feed)
        viewed = rewrite.run_passes(p, rewrite.FOR_SHAPES, dict(values))
        assert "concat_part" in ops_of(p)
        if axis == 0:
            assert "concat_part" not in ops_of(viewed) and "getitem" in ops_of(viewed)
        else:
            assert "getitem" not in ops_of(viewed)
        got = rewrite.evaluate(viewed, lambda t: feed[t.node] if t.kind == "input" else t.node._value)
        assert_same_results(p, viewed, {**values, **got})
        train = mg.function([a, b], joined * 2.0)
        assert same(train(*feed.values()), mg.Graph(joined * 2.0).forward(feed))
        assert "concatenate_into" in {form.__name__ for form, *_ in train.memory.into.values()}
