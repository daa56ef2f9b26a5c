"""mg.function: Koehn's worked example (a 2-2-1 sigmoid network on XOR) and Theano's semantics."""

import numpy as np
import pytest

import minigraph as mg


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def koehn_network():
    """Koehn's weights, with his column convention: h = σ(W x + b), y = σ(W2 · h + b2)."""
    x, t = mg.Input("x"), mg.Input("t")
    W = mg.Parameter([[3.0, 4.0], [2.0, 3.0]], name="W")
    b = mg.Parameter([-2.0, -4.0], name="b")
    W2 = mg.Parameter([5.0, -5.0], name="W2")
    b2 = mg.Parameter([-2.0], name="b2")
    h = mg.sigmoid(x @ W.T + b)                    # a batch of rows: (1, 2) @ (2, 2)
    y = mg.sigmoid(h @ W2 + b2)
    error = mg.sum(0.5 * (t - y) ** mg.Constant(2.0))
    return (x, t), (W, b, W2, b2), h, y, error


def test_koehn_forward_and_one_training_step():
    (x, t), params, h, y, error = koehn_network()
    W, b, W2, b2 = params
    lr = 0.1
    grads = mg.grad(error, list(params))
    train = mg.function([x, t], [h, y, error],
                        updates={p: p - lr * g for p, g in zip(params, grads)})
    before = [np.array(p.value) for p in params]
    hidden, prediction, e = train([[1.0, 0.0]], [1.0])
    assert np.allclose(hidden, [[0.731, 0.119]], atol=5e-4)
    assert np.allclose(prediction, [0.7425526], atol=5e-8)
    assert np.isclose(e, 0.5 * (1 - 0.7425526) ** 2, atol=1e-7)

    # Koehn's hand-derived updates (delta rule), independent of the engine
    Wn, bn, W2n, b2n = before
    xv, tv = np.array([1.0, 0.0]), 1.0
    hv = sigmoid(Wn @ xv + bn)
    yv = sigmoid(W2n @ hv + b2n)
    delta2 = (tv - yv) * yv * (1 - yv)              # -d error / dz, at the output
    delta1 = delta2 * W2n * hv * (1 - hv)           # -d error / ds, at the hidden layer
    expected = [Wn + lr * np.outer(delta1, xv), bn + lr * delta1, W2n + lr * delta2 * hv, b2n + lr * delta2]
    for p, want in zip(params, expected):
        assert np.allclose(p.value, want, rtol=1e-12), p.name
    assert np.allclose(W2.value, [5.0 + 0.1 * 0.0492 * 0.731, -5.0 + 0.1 * 0.0492 * 0.119], atol=1e-4)  # Koehn: δ2 = 0.0492


def test_the_same_step_as_backward_and_an_update_by_hand():
    """Compiled and interpreted: ten steps each from the same start give the same Parameters."""
    (x, t), params, h, y, error = koehn_network()
    start = [np.array(p.value) for p in params]
    data = [([[0.0, 0.0]], [0.0]), ([[0.0, 1.0]], [1.0]), ([[1.0, 0.0]], [1.0]), ([[1.0, 1.0]], [0.0])]
    train = mg.function([x, t], error, updates={p: p - 0.5 * g for p, g in zip(params, mg.grad(error, list(params)))})
    compiled = [train(*data[i % 4]) for i in range(10)]
    after = [np.array(p.value) for p in params]
    for p, s in zip(params, start):
        p.value = s
    graph, interpreted = mg.Graph(error), []
    for i in range(10):
        interpreted.append(graph.backward({x: data[i % 4][0], t: data[i % 4][1]}, wrt=list(params)))
        for p in params:
            p.value = p.value - 0.5 * p.grad
    assert np.allclose(compiled, interpreted, rtol=1e-12)
    assert all(np.allclose(p.value, a, rtol=1e-12) for p, a in zip(params, after))
    assert not np.allclose(after[0], start[0])


def test_updates_see_the_old_values():
    a, b = mg.Parameter(1.0, name="a"), mg.Parameter(2.0, name="b")
    swap = mg.function([], [a, b], updates=[(a, b), (b, a)])
    assert [float(v) for v in swap()] == [1.0, 2.0]
    assert (float(a.value), float(b.value)) == (2.0, 1.0)


def test_mistakes_are_explained():
    x, W = mg.Input("x"), mg.Parameter([1.0, 2.0], name="W")
    y = mg.sum(W * x)
    with pytest.raises(mg.GraphError, match="Input.*x.*not among the function's inputs"):
        mg.function([], y)
    with pytest.raises(mg.BadValueError, match="not an Input"):
        mg.function([W], y)
    with pytest.raises(mg.BadValueError, match="not a Parameter"):
        mg.function([x], y, updates={x: x * 2})
    f = mg.function([x], y, updates={W: mg.sum(W)})
    with pytest.raises(mg.BadValueError, match="takes 1 value"):
        f()
    with pytest.raises(mg.ShapeError, match="keep the Parameter's shape"):
        f([1.0, 1.0])
    assert np.allclose(W.value, [1.0, 2.0])        # a refused update changes nothing
    with pytest.raises(mg.BadValueError, match="Graph takes the node.*float64"):
        mg.function([x], mg.Graph(y).forward({x: [1.0, 1.0]}))      # outputs=y.value
    with pytest.raises(mg.BadValueError, match="Input 'x' twice"):
        mg.function([x, x], y)                     # which of the two values would x get?
    with pytest.raises(mg.BadValueError, match="updates 'W' twice"):
        mg.function([x], y, updates=[(W, W * 2), (W, W * 3)])     # which one is the new value?


def random_step(seed):
    """A random graph's training step: its loss (one graph in three leaves it out: then what
    the loss computes in passing is computed by no one), the mg.grad nodes of a random ``wrt``
    as outputs, and updates ``p - 0.1 * dp`` of the Parameters among ``wrt`` (None if none)."""
    from test_random_graphs import draw_graph
    from test_symbolic import wrt_of
    loss, drawer = draw_graph(seed)
    wrt = wrt_of(loss, np.random.default_rng(seed))
    if not wrt:
        return None
    grads = mg.grad(loss, wrt)
    updates = {p: p - 0.1 * g for p, g in zip(wrt, grads) if p.kind == "parameter"}
    return drawer, mg.Graph(loss).inputs, [loss] * (seed % 3 != 0) + grads, updates


def bigger(feed):
    """The same feed with one more row in every Input of at least one axis (a new shape)."""
    return {n: np.concatenate([v, v[:1]]) if np.ndim(v) else v for n, v in feed.items()}


def one_call(way, outputs, updates, feed):
    """The outputs and the new Parameter values of one call made ``way``, from the Parameters'
    present values, which are then put back (so that the next way starts where this one did)."""
    before = {p: np.array(p.value) for p in updates}
    got = way(feed)
    after = [np.array(p.value) for p in updates]
    for p, value in before.items():
        p.value = value
    return list(got), after


def test_rewritten_and_planned_code_equals_the_interpreter_on_random_graphs():
    """The rewrites and the memory plan fuzzed against the reference: on the engine's random
    graphs, a training step (loss, mg.grad nodes, updates p - 0.1 dp; every other graph fed
    float32) compiled with them gives,
    bit for bit, what Graph.forward of the step graph gives and what the same function compiled
    without them gives: outputs and updated Parameters, over several calls with new feeds (the
    buffers reused), a reassigned Parameter, and a feed of a new shape (planned again); and no
    call overwrites what an earlier call returned."""
    from test_random_graphs import new_feed, same
    checked = replanned = refused = subtracted = overwrote = returned_new = 0
    fused = dict.fromkeys(["sigmoid_grad", "tanh_grad", "matmul_add", "concat_part as a view",
                           "concatenate into a buffer"], 0)      # graphs where each fusion fired
    for seed in range(300):
        step = random_step(seed)
        if step is None:
            continue
        drawer, inputs, outputs, updates = step
        optimized = mg.function(inputs, outputs, updates=updates)
        plain = mg.function(inputs, outputs, updates=updates, optimize=False)
        step_graph = mg.Graph(outputs + list(updates.values()))

        def interpreted(feed):
            step_graph.invalidate()
            values = step_graph.forward(feed)
            values = values if len(step_graph.outputs) > 1 else [values]    # (one output: its value)
            for p, new in zip(updates, values[len(outputs):]):
                p.value = new
            return values[:len(outputs)]

        dtype = np.float32 if seed % 2 else np.float64    # float32 Inputs meet float64 Parameters
        first = {n: drawer.feed[n] for n in inputs}
        feeds = [{n: v.astype(dtype) if v.dtype.kind == "f" else v for n, v in feed.items()} for feed in (
            first, new_feed(drawer, inputs), new_feed(drawer, inputs), bigger(first), first)]
        returned = []                   # what earlier calls returned, and a copy: never overwritten
        for number, feed in enumerate(feeds):
            start = {p: np.array(p.value) for p in updates}
            try:
                expected = one_call(interpreted, outputs, updates, feed)
            except mg.GraphError as error:
                if "NaN or infinity" not in str(error):
                    assert number == 3, f"seed {seed}"   # a graph that only takes its own shapes
                    continue
                for way in (optimized, plain):         # by every way
                    for p, value in start.items():
                        p.value = value
                    with pytest.raises(mg.BadValueError, match="NaN or infinity"):
                        way.run_compiled(*[feed[n] for n in inputs])
                refused += 1                           # an update to NaN or infinity: refused
                break                                  # (the Parameters have moved: the graph is done)
            for way in (lambda f: optimized.run_compiled(*[f[n] for n in inputs]),   # no fallback
                        lambda f: plain.run_compiled(*[f[n] for n in inputs])):
                got, after = one_call(way, outputs, updates, feed)
                assert len(got) == len(expected[0]) and all(map(same, got, expected[0])), f"seed {seed} call {number}"
                assert all(map(same, after, expected[1])), f"seed {seed} call {number}: updates"
                assert all(same(kept, copy) for kept, copy in returned), \
                    f"seed {seed} call {number}: what an earlier call returned was overwritten"
                returned += [(value, np.copy(value)) for value in got]
            interpreted(feed)                             # the step taken, then the next call
            if number == 2 and step_graph.parameters:
                p = step_graph.parameters[0]
                p.value = drawer.floats(np.shape(p.value))
        replanned += len(optimized.plans) > 1
        checked += 1
        terms = [t for t in optimized.written.terms if t.kind == "op"]
        names = {t.op.name for t in terms}
        fused["sigmoid_grad"] += "sigmoid_grad" in names
        fused["tanh_grad"] += "tanh_grad" in names
        fused["matmul_add"] += "matmul_add" in names
        fused["concat_part as a view"] += any(t.op.name == "getitem" and t.node.op.name == "concat_part"
                                              for t in terms)
        fused["concatenate into a buffer"] += any(t.op.name == "concatenate" for t in optimized.memory.into)
        memory = optimized.memory
        subtracted += bool(memory.subtracted)
        overwrote += any(into[1] == memory.into.get(a, (None, None))[1]
                         for t, into in memory.into.items() for a in t.args)
        returned_new += bool(memory.returned_new)
    assert checked >= 290 and replanned >= 30, (checked, replanned, refused)   # 297, 32, 1 today
    assert min(fused.values()) >= 5, fused                       # 12, 19, 20, 6, 26 today
    assert subtracted >= 40 and overwrote >= 100 and returned_new >= 150, (
        subtracted, overwrote, returned_new)                                      # 50, 120, 185 today


def test_a_returned_value_is_never_overwritten_by_the_next_call():
    x, W = mg.Input("x"), mg.Parameter([[1.0, 2.0], [3.0, 4.0]], name="W")
    h = mg.tanh(x @ W)
    f = mg.function([x], [h, W], updates={W: W - 0.5 * h[0]})
    first_h, first_W = f([[1.0, 0.0]])
    kept = first_h.copy(), first_W.copy()
    f([[0.0, 1.0]])
    assert np.array_equal(first_h, kept[0]) and np.array_equal(first_W, kept[1])
    assert "buffer" in f.source and "in place into: W" in f.source


def test_updates_are_written_into_the_parameters_own_arrays():
    """In place: the array of W.value changes (an old view of it sees the new numbers) and W is
    stamped, so an interpreter's graph recomputes what depends on it."""
    x, W = mg.Input("x"), mg.Parameter([1.0, 2.0], name="W")
    y = mg.sum(W * x)
    g = mg.Graph(y)
    assert g.forward({x: [1.0, 1.0]}) == 3.0
    old = W.value
    train = mg.function([x], y, updates={W: W - 0.5 * mg.grad(y, W)})
    train([1.0, 1.0])
    assert np.array_equal(old, [0.5, 1.5]) and old.base is W._value
    assert g.forward({x: [1.0, 1.0]}) == 2.0
    with pytest.raises(mg.GraphError, match="read-only"):
        W.value[0] = 3.0                            # still read-only after the write


def test_an_update_w_minus_change_is_subtracted_in_place_with_the_same_numbers():
    """W - lr * dW is written as W -= lr * dW into W's own array (no buffer for W - lr * dW, no
    copy): the numbers of backward + GD, bit for bit, call after call, in float32 and float64."""
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        x, t = mg.Input("x", dtype=dtype), mg.Input("t", dtype=int)
        start = [rng.normal(size=(5, 3)).astype(dtype), rng.normal(size=3).astype(dtype)]
        W, b = mg.Parameter(start[0], name="W"), mg.Parameter(start[1], name="b")
        loss = mg.softmax_cross_entropy(mg.linear(x, W, b), t)
        train = mg.function([x, t], loss, updates={p: p - 0.5 * g for p, g in zip([W, b], mg.grad(loss, [W, b]))})
        W2, b2 = mg.Parameter(start[0], name="W"), mg.Parameter(start[1], name="b")
        by_backward = mg.Graph(mg.softmax_cross_entropy(mg.linear(x, W2, b2), t))
        gd, held = mg.optim.GD([W2, b2], lr=0.5), W.value
        for _ in range(4):
            feed = {x: rng.normal(size=(8, 5)).astype(dtype), t: rng.integers(0, 3, 8)}
            assert train.run_compiled(feed[x], feed[t])[0] == by_backward.backward(feed, wrt=[W2, b2])
            gd.step()
            assert np.array_equal(W.value, W2.value) and np.array_equal(b.value, b2.value)
        assert "_subtract(W, " in train.source and "_subtract(b, " in train.source
        assert held.base is W._value and np.array_equal(held, W.value)        # followed W


def test_a_subtraction_that_could_overflow_is_refused_and_leaves_w_as_it_was():
    """W -= change goes in place only when the new numbers are sure to be finite: a change with
    NaN or infinity, or one that takes the dtype's largest number over the top, is refused as
    assigning infinity is, and W keeps its numbers. In float16, where a change of 16 can do
    that: W.value assigned between calls makes what the function knew of W's size stale, and a
    small change must not be trusted then."""
    x = mg.Input("x", dtype=np.float16)
    W = mg.Parameter(np.ones(3, np.float16), name="W")
    train = mg.function([x], mg.sum(W), updates={W: W - x * mg.Constant(np.float16(2.0))})
    train(np.full(3, 0.25, np.float16))
    train(np.full(3, 0.25, np.float16))            # planned, then the code written: in place
    assert "_subtract(W, " in train.source and np.array_equal(W.value, [0, 0, 0])
    for bad in (np.array([0, np.nan, 0], np.float16), np.array([np.inf, 0, 0], np.float16)):
        with pytest.raises(mg.BadValueError, match="NaN or infinity"):
            train.run_compiled(bad)
        assert np.array_equal(W.value, [0, 0, 0])
    top = np.finfo(np.float16).max                  # 65504, and a step of its numbers is 32
    W.value = np.full(3, top)
    with pytest.raises(mg.BadValueError, match="NaN or infinity"):
        train.run_compiled(np.full(3, -8, np.float16))         # 65504 + 16 rounds to infinity
    assert np.array_equal(W.value, np.full(3, top))
    train(np.full(3, 8, np.float16))               # finite: written
    assert np.array_equal(W.value, np.full(3, top - 16))


def test_a_cross_entropy_gradient_alone_sees_new_logits_at_each_call():
    """The fused gradient of softmax cross-entropy reads the loss's log-softmax, remembered for
    the logits array it last saw: without the loss in the function, its logits must still be
    a fresh array at each call, not a buffer whose numbers change."""
    z, t = mg.Input("z"), mg.Input("t", dtype=int)
    logits = z * mg.Constant(2.0)
    f = mg.function([z, t], mg.grad(mg.softmax_cross_entropy(logits, t), z))
    rng = np.random.default_rng(0)
    feeds = [{z: rng.normal(size=(4, 3)), t: rng.integers(0, 3, 4)} for _ in range(4)]
    expected = [mg.Graph(f.outputs[0]).forward(feed) for feed in feeds]   # (the loss computed:
    got = [f.run_compiled(feed[z], feed[t])[0] for feed in feeds]         # not between calls)
    assert all(map(np.array_equal, got, expected))
    assert "softmax_ce_grad" in f.source


def test_a_feed_of_a_new_shape_is_planned_again():
    x = mg.Input("x")
    W = mg.Parameter(np.ones((3, 2)), name="W")
    f = mg.function([x], mg.sum(mg.tanh(x @ W) * 2.0))
    assert "not called yet" in f.source
    small, big = np.ones((4, 3)), np.ones((7, 3))
    assert f(small) == pytest.approx(4 * 2 * 2 * np.tanh(3.0))
    assert "x (4, 3) float64" in f.source and "(4, 2) float64" in f.source
    assert f(big) == pytest.approx(7 * 2 * 2 * np.tanh(3.0))
    assert "x (7, 3) float64" in f.source and "planned again" in f.source and len(f.plans) == 2
    assert f(small) == pytest.approx(4 * 2 * 2 * np.tanh(3.0)) and len(f.plans) == 2


def test_a_non_finite_update_is_refused_as_an_assignment_is():
    """A Parameter holds finite numbers: an update to infinity raises and leaves that Parameter
    as it was (as assigning the updates one by one does: those before it have moved)."""
    x = mg.Input("x")
    a, b = mg.Parameter(1.0, name="a"), mg.Parameter(1.0, name="b")
    f = mg.function([x], a * b, updates={a: a + 1.0, b: b / x})
    f(1.0)
    for _ in range(2):                               # planned, then the code written
        with pytest.raises(mg.BadValueError, match="NaN or infinity"):
            f(0.0)
        assert float(b.value) == 1.0


def test_a_failing_line_is_explained_by_the_interpreter():
    x = mg.Input("x")
    f = mg.function([x], mg.sum(x @ mg.Parameter([[1.0, 2.0]], name="W")))
    with pytest.raises(mg.ShapeError, match="matmul"):
        f([[1.0, 2.0, 3.0]])
    assert "matmul" in f.source and "def _run" in f.source


def test_a_float32_training_step_stays_float32_and_matches_backward():
    """A 2-2-1 sigmoid network in float32 (the default left at float64, Python numbers in the
    formulas): the compiled step's loss and gradients are float32, equal to Graph.backward's
    within float32 rounding, and the Parameters it updates stay float32, step after step."""
    x, t = mg.Input("x"), mg.Input("t")
    W = mg.Parameter(np.array([[3.0, 4.0], [2.0, 3.0]], np.float32), name="W")
    b = mg.Parameter(np.array([-2.0, -4.0], np.float32), name="b")
    W2 = mg.Parameter(np.array([5.0, -5.0], np.float32), name="W2")
    params = [W, b, W2]
    y = mg.sigmoid(mg.sigmoid(x @ W.T + b) @ W2 - 2)
    loss = mg.sum(0.5 * (t - y) ** 2) + 1e-3 * mg.sum(W ** 2)
    grads = mg.grad(loss, params)
    step = mg.function([x, t], [loss] + grads, updates={p: p - 0.5 * g for p, g in zip(params, grads)})
    graph = mg.Graph(loss)
    data = [(np.array([[0.0, 1.0]], np.float32), np.array([1.0], np.float32)),
            (np.array([[1.0, 1.0]], np.float32), np.array([0.0], np.float32))]
    for i in range(4):
        X, T = data[i % 2]
        value = graph.backward({x: X, t: T}, wrt=params)
        expected = [value] + [p.grad for p in params]
        got = step.run_compiled(X, T)                 # no fallback hides a bug
        assert [np.asarray(v).dtype for v in got] == [np.float32] * len(got)
        for a, e in zip(got, expected):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
        assert all(p.value.dtype == np.float32 for p in params)


def test_the_rewritten_graph_computes_what_the_function_computes_with_fewer_ops():
    (x, t), params, h, y, error = koehn_network()
    new = [p - 0.1 * g for p, g in zip(params, mg.grad(error, list(params)))]
    train = mg.function([x, t], [h, error], updates=dict(zip(params, new)))
    original = mg.Graph([h, error] + new)
    n_ops = sum(n.kind == "op" for n in original.nodes)
    before = train.rewritten()                     # not called yet: the rewrites made at creation
    assert train.memory is None and sum(n.kind == "op" for n in before.nodes) <= n_ops
    feed = ([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0])
    want = original.forward({x: feed[0], t: feed[1]})
    got = train.rewritten().forward({x: feed[0], t: feed[1]})
    train(*feed)                                   # planned: the rewrites of these shapes
    rewritten = train.rewritten()
    after, want_after = (g.forward({x: feed[0], t: feed[1]}) for g in (rewritten, original))
    assert [n.name for n in rewritten.inputs] == ["x", "t"]
    assert {n for n in rewritten.nodes if n.kind == "parameter"} == set(params)   # the function's own
    assert sum(n.kind == "op" for n in rewritten.nodes) == train.written.n_ops < n_ops
    for computed, expected in ((got, want), (after, want_after)):   # (before and after the update)
        assert len(computed) == len(expected)
        for a, b in zip(computed, expected):
            assert np.array_equal(a, b)            # bit for bit
    assert len(train.memory.table()) == len(train.memory.buffers) > 0
    assert isinstance(mg.draw(rewritten), mg.viz.Drawing)


def test_few_calls_per_op_transposes_as_attributes_sigmoid_into_a_buffer():
    """Koehn's step, written with fewer calls: x @ W.T's transpose (and the backward's) as ``.T``,
    the sigmoids into buffers, the gradient's reshape of a matrix operand of @ (to_operand) gone
    (W2's stays: a vector, whose gradient is computed as a matrix)."""
    (x, t), params, h, y, error = koehn_network()
    train = mg.function([x, t], error, updates={p: p - 0.1 * g for p, g in zip(params, mg.grad(error, list(params)))})
    train([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0])
    code = train.source[train.source.index("def _run"):]
    assert "= W_.T" in code and "f_transpose" not in code and code.count("= to_operand(") == 1
    assert all("-> buffer" in line for line in code.splitlines() if "sigmoid(" in line)


def test_the_transformer_ops_write_into_buffers_bit_for_bit():
    """A tiny attention step: embedding, a stack of matmuls, a masked softmax and gelu take their
    out= forms and give the interpreter's numbers; ids out of range are refused as embedding does."""
    ids = mg.Input("ids", dtype=int)
    rng = np.random.default_rng(0)
    table = mg.Parameter(rng.normal(size=(7, 4)), name="table")
    h = mg.embedding(table, ids)                                        # (2, 3, 4)
    scores = h @ mg.transpose(h, (0, 2, 1))                             # (2, 3, 3): a stack
    mixed = mg.softmax(scores, axis=-1, mask=mg.causal_mask(3)) @ h
    loss = mg.sum(mg.gelu(mixed))
    train = mg.function([ids], loss, updates={table: table - 0.1 * mg.grad(loss, table)})
    step_graph = mg.Graph([loss, table - 0.1 * mg.grad(loss, table)])
    for feed in (np.array([[1, 2, 3], [4, 5, 6]]), np.array([[0, 0, 6], [3, 2, 1]])):
        want_loss, want_table = step_graph.forward({ids: feed})
        assert np.array_equal(train.run_compiled(feed)[0], want_loss)
        assert np.array_equal(table.value, want_table)
    forms = {form.__name__ for form, *_ in train.memory.into.values()}
    assert {"embedding_into", "matmul", "softmax", "gelu_tanh", "gelu_from_tanh"} <= forms  # (tanh kept)
    before = np.array(table.value)
    with pytest.raises(mg.BadValueError, match="range over"):
        train(np.array([[1, 2, 9], [4, 5, 6]]))
    assert np.array_equal(table.value, before)


def test_a_char_lstm_step_fuses_its_gradients_and_equals_backward_and_gd_bit_for_bit():
    """Chapter 09's model, small: the compiled step (the sigmoid and tanh gradients one op each,
    every product added to a sum in one op, into buffers) gives Graph.backward + GD's losses and
    weights, bit for bit, step after step."""
    from minigraph.charlm.model import CharLSTM
    rng = np.random.default_rng(0)
    ids, targets = rng.integers(0, 7, (3, 5)), rng.integers(0, 7, (3, 5))
    models = [CharLSTM(7, hidden=6, rng=0) for _ in range(2)]
    chunks = [model.chunk(5) for model in models]
    state = [rng.normal(size=(3, 6)).astype(np.float32) for _ in range(2)]
    feeds = [chunk.feed(ids, targets, state) for chunk in chunks]
    model, chunk = models[0], chunks[0]
    grads = mg.grad(chunk.loss, model.parameters)
    train = mg.function(chunk.xs + chunk.start + [chunk.targets], chunk.loss,
                        updates={p: p - 0.1 * g for p, g in zip(model.parameters, grads)})
    optimizer = mg.optim.GD(models[1].parameters, lr=0.1)
    for _ in range(3):
        loss = train.run_compiled(*[feeds[0][node] for node in train.inputs])[0]
        assert np.array_equal(loss, chunks[1].graph.backward(feeds[1], wrt=models[1].parameters))
        optimizer.step()
        assert all(np.array_equal(a.value, b.value) for a, b in zip(*(m.parameters for m in models)))
    forms = {form.__name__ for form, *_ in train.memory.into.values()}
    assert {"sigmoid_gradient_into", "tanh_gradient_into", "matmul_accumulate_into"} <= forms


def test_second_order_graphs_compiled_equal_the_interpreter_bit_for_bit_on_several_feeds():
    """Hessian graphs (``mg.grad`` twice: the gradient of the squared norm of the gradient, a
    Hessian-vector product) through ``mg.function``, on the engine's random graphs, fed three
    times (the second and third feeds are where layout-changing rewrites once showed: a
    ``broadcast_like`` copy of a transposed array dropped, a strided slice for a copy, a folded
    symmetric constant merged with its transpose): bit for bit what ``Graph.forward`` gives."""
    from test_random_graphs import draw_graph, new_feed, same
    from test_symbolic import wrt_of
    checked = 0
    for seed in range(160):
        loss, drawer = draw_graph(seed)
        wrt = wrt_of(loss, np.random.default_rng(seed))
        if not wrt:
            continue
        grads = mg.grad(loss, wrt)
        hessian = mg.grad(sum((mg.sum(g * g) for g in grads[1:]), mg.sum(grads[0] * grads[0])), wrt)
        outputs, inputs = grads + hessian, mg.Graph(loss).inputs
        compiled, graph = mg.function(inputs, outputs), mg.Graph(outputs)
        dtype = np.float32 if seed % 2 else np.float64
        first = {n: drawer.feed[n] for n in inputs}
        for number, feed in enumerate((first, new_feed(drawer, inputs), new_feed(drawer, inputs))):
            feed = {n: v.astype(dtype) if v.dtype.kind == "f" else v for n, v in feed.items()}
            graph.invalidate()
            try:
                expected = graph.forward(feed)
            except mg.GraphError:
                break                                       # a feed that overflows: refused both ways
            expected = expected if len(outputs) > 1 else [expected]
            got = compiled.run_compiled(*[feed[n] for n in inputs])
            assert all(map(same, got, expected)), f"seed {seed} call {number}"
        checked += 1
    assert checked >= 150, checked


def _compiled_equals_interpreted(inputs, outputs, feeds):
    """Is ``mg.function``'s every output, at every feed, bit for bit what ``Graph.forward`` gives?"""
    from test_random_graphs import same
    compiled, graph = mg.function(inputs, outputs), mg.Graph(outputs)
    for feed in feeds:
        graph.invalidate()
        expected = graph.forward(feed)
        got = compiled.run_compiled(*[feed[n] for n in inputs])
        if not all(map(same, got, expected if len(outputs) > 1 else [expected])):
            return False
    return True


@pytest.mark.parametrize("n", [8, 33, 64])
def test_rewrites_keep_the_layout_that_matmul_reads(n):
    """Matrices of 33 and more rows are where numpy's matmul adds in another order on another
    layout: a symmetric constant and its folded transpose (same bytes, another layout) must not
    be merged, nor the ``broadcast_like`` copy of a transposed Parameter in a Hessian graph be
    dropped; each differed in the last bit, from the second feed on, before the rewrites
    compared layouts."""
    rng = np.random.default_rng(n)
    S = rng.standard_normal((n, n))
    S = S + S.T
    x = mg.Input("x")
    feeds = [{x: rng.standard_normal((7, n))} for _ in range(3)]
    assert _compiled_equals_interpreted([x], [mg.matmul(x, mg.Constant(S)),
                                              mg.matmul(x, mg.transpose(mg.Constant(S)))], feeds)
    W = mg.Parameter(rng.standard_normal((n, n)), name="W")
    (gradient,) = mg.grad(mg.sum(mg.matmul(x, mg.transpose(W)) ** 2), [W])
    (hessian,) = mg.grad(mg.sum(gradient * gradient), [W])
    assert _compiled_equals_interpreted([x], [gradient, hessian], feeds)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_weight_gradient_of_3d_activations_is_the_interpreters_bit_for_bit(dtype):
    """(B, T, C) @ (C, D), as chapter 11 teaches it, and linear's: the gradient of W is one
    product of x's and g's rows as two tall matrices in both engines (Graph.backward's numeric
    VJP; mg.grad's graph, compiled or not), so they agree bit for bit. B products of (C, T) @
    (T, D) and then a sum, which the graph once computed, differ in the last bits here."""
    from test_random_graphs import same
    rng = np.random.default_rng(4)
    B, T, C, D = 4, 33, 32, 16
    X = rng.standard_normal((B, T, C)).astype(dtype)
    G = rng.standard_normal((B, T, D)).astype(dtype)
    tall = X.reshape(-1, C).T @ G.reshape(-1, D)
    assert not same(tall, np.sum(np.swapaxes(X, 1, 2) @ G, axis=0))    # the two ways differ
    x = mg.Input("x")
    W = mg.Parameter(rng.standard_normal((C, D)).astype(dtype), name="W")
    b = mg.Parameter(rng.standard_normal(D).astype(dtype), name="b")
    for y in (x @ W, mg.linear(x, W, b)):
        loss = mg.sum(y * mg.Constant(G))
        grads = mg.grad(loss, [x, W])
        compiled = mg.function([x], grads)
        graph = mg.Graph(loss)
        for feed in (X, X + 1):
            graph.backward({x: feed})
            symbolic = mg.Graph(grads).forward({x: feed})
            for got in (compiled.run_compiled(feed), symbolic):
                assert same(got[0], x.grad) and same(got[1], W.grad)
        assert same(W.grad, (X + 1).reshape(-1, C).T @ G.reshape(-1, D))


def test_layer_norm_with_gamma_and_beta_of_every_shape_compiled_equals_the_interpreter():
    """Layer norm's γ and β of each shape that broadcasts into x's (a row, 0-d, axes of 1, x's
    own shape: where β's gradient is g itself), their gradients through mg.function, three
    calls: bit for bit the interpreter's, and what a call returned never overwritten by the
    next (the plan once took β's gradient for a new array and reused its buffer)."""
    from test_op_claims import broadcastable_shapes
    from test_random_graphs import same
    rng = np.random.default_rng(5)
    shapes = sorted(broadcastable_shapes((3, 4)))
    pairs = [(s, (4,)) for s in shapes] + [((4,), s) for s in shapes] + [((3, 4), (3, 4))]
    for gamma_shape, beta_shape in pairs:
        x = mg.Input("x")
        gamma = mg.Parameter(rng.standard_normal(gamma_shape), name="gamma")
        beta = mg.Parameter(rng.standard_normal(beta_shape), name="beta")
        loss = mg.sum(mg.tanh(mg.layer_norm(x, gamma, beta)) * mg.Constant(rng.standard_normal((3, 4))))
        f = mg.function([x], mg.grad(loss, [x, gamma, beta]))
        returned = []
        for _ in range(3):
            feed = rng.standard_normal((3, 4))
            got = f.run_compiled(feed)
            mg.Graph(loss).backward({x: feed})
            assert all(map(same, got, [x.grad, gamma.grad, beta.grad])), (gamma_shape, beta_shape)
            assert all(same(kept, copy) for kept, copy in returned), (gamma_shape, beta_shape)
            returned += [(value, np.copy(value)) for value in got]
