"""mg.grad: the backward pass built as a graph, checked against the interpreter and numerically.

On random graphs from the engine's generator (tests/test_random_graphs.py, the whole space):
first order, mg.grad's values equal Graph.backward's numbers; second order, the gradient of
(grad · v) (a Hessian-vector product) equals central differences of Graph.backward's gradient
along v.
"""

import numpy as np
import pytest

import minigraph as mg
from minigraph.symbolic import GRAPH_VJPS
from test_random_graphs import N_SEEDED, at_a_kink, draw_graph, is_float_leaf, starts_at_edges

N_FIRST = 600          # graphs checked at first order (all but integer-leaf graphs)
N_SECOND = 800         # graphs drawn for second order (those with a Parameter are checked)
EPS = 1e-5


def close(a, b, rtol=1e-9, atol=1e-12):
    return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def wrt_of(loss, rng):
    """A random non-empty subset of the graph's float leaves and single-output ops."""
    nodes = [n for n in mg.Graph(loss).nodes if (is_float_leaf(n) or n.op is not None and not
             isinstance(n.value, tuple)) and not n.name.startswith("fixed")]
    chosen = [n for n in nodes if rng.random() < 0.5]
    return chosen or nodes[-1:]


@pytest.mark.parametrize("block", range(4))
def test_first_order_equals_backward(block):
    """Each graph's mg.grad nodes, computed, equal the interpreter's gradients (a tight allclose:
    the same VJPs in the same order, written with ops)."""
    per_block, checked = N_FIRST // 4, 0
    for seed in range(block * per_block, (block + 1) * per_block):
        loss, drawer = draw_graph(seed)
        wrt = wrt_of(loss, np.random.default_rng(seed))
        if not wrt:                                   # an integer leaf as the whole graph
            continue
        checked += 1
        grads = mg.grad(loss, wrt)
        feed = {n: v for n, v in drawer.feed.items() if n in mg.Graph(loss).inputs}
        mg.Graph(loss).backward(feed, wrt=wrt)
        expected = [w.grad for w in wrt]
        values = mg.Graph(grads).forward(feed)
        values = values if len(grads) > 1 else [values]
        for w, got, want in zip(wrt, values, expected):
            want = np.zeros(np.shape(w.value)) if want is None else want
            assert close(got, want), f"seed {seed}: d{loss.name}/d{w.name}: {got} vs {want}"
    assert checked >= per_block * 0.9


def hessian_vector_check(loss, drawer, rng):
    """For the graph's Parameters w: grad(sum(grad(loss, w) · v), w) = H v, against central
    differences of Graph.backward's gradient along v (unless an op sits at a kink: see
    ``at_a_kink``), and against Graph.backward run on the gradient graph itself. Says which
    were done: "numeric", "at a kink", or None if there is no Parameter."""
    graph = mg.Graph(loss)
    wrt = graph.parameters
    if not wrt:
        return None
    feed = {n: drawer.feed[n] for n in graph.inputs}
    v = [rng.normal(size=np.shape(w.value)) for w in wrt]
    first = mg.grad(loss, wrt)
    dot = first[0] * mg.Constant(v[0])
    total = mg.sum(dot)
    for g, vi in zip(first[1:], v[1:]):
        total = total + mg.sum(g * mg.Constant(vi))
    hvp = mg.grad(total, wrt)
    hvp_graph = mg.Graph(hvp)
    got = hvp_graph.forward({n: v for n, v in feed.items() if n in hvp_graph.inputs})
    got = got if len(hvp) > 1 else [got]
    # the interpreter differentiates the gradient graph too (the helper ops' numeric VJPs)
    mg.Graph(total).backward({n: v for n, v in feed.items() if n in mg.Graph(total).inputs}, wrt=wrt)
    for w, h in zip(wrt, got):
        assert close(np.zeros(np.shape(h)) if w.grad is None else w.grad, h, rtol=1e-8, atol=1e-10), \
            f"backward of the gradient graph, for {w.name}: {w.grad} vs {h}"

    graph.forward(feed)
    if at_a_kink(graph):
        return "at a kink"
    base = [np.array(w.value) for w in wrt]

    def gradient_at(t):
        for w, b, vi in zip(wrt, base, v):
            w.value = b + t * vi
        graph.backward(feed, wrt=wrt)
        return [np.zeros(np.shape(w.value)) if w.grad is None else np.array(w.grad) for w in wrt]

    plus, minus = gradient_at(EPS), gradient_at(-EPS)
    gradient_at(0.0)
    for w, h, p, m in zip(wrt, got, plus, minus):
        numeric = (p - m) / (2 * EPS)
        scale = np.max(np.abs(numeric), initial=0.0)
        assert np.shape(h) == np.shape(numeric) and np.all(np.abs(h - numeric) <= 1e-5 + 1e-4 * scale), \
            f"Hv for {w.name}: {h} vs {numeric}"
    return "numeric"


@pytest.mark.parametrize("block", range(4))
def test_second_order_hessian_vector_products(block):
    """Hessian-vector products on random graphs; some of their Parameters start at edge values
    (0, ±1, -1.5, ±40), and most of those graphs are still compared with central differences."""
    per_block = N_SECOND // 4
    checked = numeric_at_edges = 0
    for seed in range(N_SEEDED + block * per_block, N_SEEDED + (block + 1) * per_block):
        loss, drawer = draw_graph(seed)
        try:
            done = hessian_vector_check(loss, drawer, np.random.default_rng(seed))
        except AssertionError as error:
            raise AssertionError(f"seed {seed}: {error}") from None
        checked += done is not None
        numeric_at_edges += done == "numeric" and starts_at_edges(loss)
    assert checked >= per_block // 3      # about 40% of the graphs have a Parameter
    assert numeric_at_edges >= per_block // 20


def test_every_op_of_the_table_has_a_graph_vjp():
    missing = [name for name in ["add", "sub", "mul", "div", "pow", "neg", "matmul", "exp", "log",
                                 "tanh", "sigmoid", "relu", "leaky_relu", "sum", "mean", "max",
                                 "reshape", "transpose", "getitem", "softmax", "log_softmax", "linear",
                                 "mse", "bce_with_logits", "softmax_cross_entropy", "split", "output",
                                 "gelu", "embedding", "layer_norm"]
               if name not in {getattr(op, "name", op) for op in GRAPH_VJPS}]
    assert missing == []


# -- the ops of attention and of a GPT: Hessian-vector products against central differences ---------

MASK = mg.causal_mask(4)
NEW_OPS = {
    "stack @ matrix": (lambda x, y: x @ y, [(2, 3, 4), (4, 5)]),
    "stacks that broadcast": (lambda x, y: x @ y, [(2, 1, 3, 4), (3, 4, 2)]),
    "vector @ stack": (lambda x, y: x @ y, [(4,), (2, 4, 3)]),
    "stack @ vector": (lambda x, y: x @ y, [(2, 3, 4), (4,)]),
    "masked softmax": (lambda x: mg.softmax(x, mask=MASK), [(2, 4, 4)]),
    "layer_norm": (lambda x, g, b: mg.layer_norm(x, g, b), [(3, 5), (5,), (5,)]),
    "layer_norm without beta": (lambda x, g: mg.layer_norm(x, g), [(2, 3, 5), (5,)]),
    "gelu": (mg.gelu, [(3, 4)]),
    "embedding, repeated ids": (lambda t: mg.tanh(mg.embedding(t, np.array([[0, 1, 0], [2, 2, 1]]))), [(3, 4)]),
}


@pytest.mark.parametrize("name", NEW_OPS)
def test_hessian_vector_products_of_the_transformer_ops(name):
    """mg.grad's first order equals Graph.backward; mg.grad twice (a Hessian-vector product)
    equals central differences of Graph.backward's gradient along v."""
    build, shapes = NEW_OPS[name]
    rng = np.random.default_rng(3)
    params = [mg.Parameter(rng.normal(size=s) * 1.5, name=f"p{i}") for i, s in enumerate(shapes)]
    out = build(*params)
    loss = mg.sum(out * mg.Constant(rng.normal(size=mg.Graph(out).forward().shape)))
    grads = mg.grad(loss, params)
    graph = mg.Graph(loss)
    graph.backward()
    for p, g in zip(params, mg.Graph(grads).forward() if len(params) > 1 else [mg.Graph(grads).forward()]):
        assert close(g, p.grad)
    v = [rng.normal(size=s) for s in shapes]
    along_v = mg.sum(grads[0] * mg.Constant(v[0]))
    for g, vi in zip(grads[1:], v[1:]):
        along_v = along_v + mg.sum(g * mg.Constant(vi))
    hvp = mg.grad(along_v, params)
    got = mg.Graph(hvp).forward()
    base = [np.array(p.value) for p in params]

    def gradient_at(t):
        for p, b, vi in zip(params, base, v):
            p.value = b + t * vi
        graph.backward()
        return [np.array(p.grad) for p in params]

    numerics = [(plus - minus) / (2 * EPS) for plus, minus in zip(gradient_at(EPS), gradient_at(-EPS))]
    for h, numeric in zip(got if len(params) > 1 else [got], numerics):
        assert np.abs(h - numeric).max() <= 1e-6 + 1e-5 * np.abs(numeric).max()
    assert max(np.abs(n).max() for n in numerics) > 1e-3    # the second derivative is not 0 here


def test_second_derivative_of_a_scalar_function():
    x = mg.Parameter(0.7, name="x")
    f = mg.tanh(x) * x
    d1 = mg.grad(f, x)
    d2 = mg.grad(d1, x)
    t = np.tanh(0.7)
    assert np.isclose(mg.Graph(d1).forward(), t + 0.7 * (1 - t * t))
    assert np.isclose(mg.Graph(d2).forward(), 2 * (1 - t * t) - 2 * 0.7 * t * (1 - t * t))


def test_third_derivative_and_grad_names():
    x = mg.Parameter(0.3, name="x")
    f = x ** mg.Constant(4.0)
    d3 = mg.grad(mg.grad(mg.grad(f, x), x), x)
    assert np.isclose(mg.Graph(d3).forward(), 24 * 0.3)
    assert mg.grad(f, [x])[0].name.startswith(f"d{f.name}/dx")


def test_an_op_without_graph_vjp_is_named():
    cube = mg.defop("cube_no_graph", lambda x: x ** 3, [lambda g, ans, x: 3 * x * x * g])
    x = mg.Parameter(2.0, name="x")
    with pytest.raises(mg.OpError, match="'cube_no_graph'.*mg.defvjp"):
        mg.grad(cube(x), x)
    mg.defvjp(cube, lambda g, ans, x: 3 * x * x * g)
    assert np.isclose(mg.Graph(mg.grad(mg.grad(cube(x), x), x)).forward(), 12.0)


def test_a_node_the_output_does_not_reach_gets_zeros():
    x, y = mg.Parameter([1.0, 2.0], name="x"), mg.Parameter(3.0, name="y")
    loss = mg.sum(x * 2.0) + y * 0.0 + mg.relu(mg.neg(mg.Constant(1.0)) * y)
    assert close(mg.Graph(mg.grad(loss, y)).forward(), 0.0)


def test_the_gradient_graph_follows_new_feeds_and_shapes():
    """Built once, the gradient node is right for any feed, even of another shape (broadcasting)."""
    x, b = mg.Input("x"), mg.Parameter([0.5, -1.0, 2.0], name="b")
    loss = mg.sum(mg.tanh(x + b) ** mg.Constant(2.0))
    db = mg.grad(loss, b)
    graph = mg.Graph(loss)
    for feed in ([1.0, 2.0, 3.0], [[1.0, 2.0, 3.0], [0.0, 0.1, 0.2]]):
        graph.backward({x: feed}, wrt=[b])
        assert close(mg.Graph(db).forward({x: feed}), b.grad)


def test_wrt_by_name_and_mistakes_are_explained():
    x = mg.Parameter([1.0, 2.0], name="x")
    loss = mg.sum(x * x)
    assert close(mg.Graph(mg.grad(loss, "x")).forward(), [2.0, 4.0])
    with pytest.raises(mg.BadValueError, match="not its value"):
        mg.grad(loss, [x.value])
    with pytest.raises(mg.GraphError, match="no node named 'y'"):
        mg.grad(loss, ["y"])
    with pytest.raises(mg.GraphError, match="not part of this graph"):
        mg.grad(loss, [mg.Parameter(1.0, name="stranger")])
    with pytest.raises(mg.BadValueError, match="Graph takes the node"):
        mg.grad(loss.value, [x])
    with pytest.raises(mg.BadValueError, match="expected a node of this graph or its name, got int"):
        mg.grad(loss, 3)
    seeded = mg.grad(x * 2.0, [x], seed=mg.Input("s"))
    assert close(mg.Graph(seeded).forward({"s": [1.0, 10.0]}), [2.0, 20.0])
    with pytest.raises(mg.ShapeError, match=r"seed.*shape \(3,\).*the output.*shape \(2,\)"):
        mg.Graph(seeded).forward({"s": [1.0, 2.0, 3.0]})     # was a gradient of shape (3,) for x


# -- dtypes: float32 graphs get float32 gradient graphs ---------------------------------------------

def _helpers(dtype):
    """Each helper op of mg.grad with arguments of ``dtype`` (labels are integers)."""
    from minigraph import gradops as s, ops
    x = np.array([[0.5, -1.0, 0.0], [2.0, 2.0, -3.0]], dtype)
    row, labels = x[0], np.array([2, 0])
    return [(s.ones_like, (x,), {}), (s.zeros_like, (x,), {}), (s.step, (x,), {}),
            (s.is_zero, (x,), {}), (s.leaky_slope, (x,), {"slope": 0.1}), (s.size, (x,), {}),
            (s.size_ratio, (row, x), {}), (s.examples, (x,), {}), (s.max_share, (x,), {"axis": 1}),
            (s.targets, (labels, x), {}), (s.targets, (np.eye(3, dtype=dtype)[labels], x), {}),
            (s.sum_to, (x, row), {}), (s.broadcast_like, (row, x), {}), (s.reshape_like, (x, x.T), {}),
            (s.expand_dims, (row,), {"axis": 0}), (s.as_matrix, (row,), {"side": "left"}),
            (s.product_matrix, (row, row[:2], x), {}), (s.sum_to_product, (x, x[:, :2], x), {}),
            (s.scatter, (row[:2], x), {"index": (np.array([0, 1]), np.array([1, 1]))}),
            (ops.concat_part(2), (x, x[:, :2], x[:, :1]), {"axis": 1, "i": 1}),
            (s.matrix_transpose, (x,), {}), (s.to_operand, (np.stack([x, x]), x), {"side": "left"}),
            (ops.embedding_grad, (x, np.zeros((3, 3), dtype), labels), {})]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_helper_of_grad_keeps_the_dtype_it_is_given(dtype):
    """Forward and numeric VJPs of every helper op: ``dtype`` in, ``dtype`` out, whether the input
    is floating or integer labels (which take the dtype of the values they meet)."""
    for op, args, attrs in _helpers(dtype):
        out = op.opdef.forward(*args, **attrs)
        assert np.asarray(out).dtype == dtype, op.opdef.name
        h = np.ones(np.shape(out), dtype)
        for k, vjp in enumerate(op.opdef.vjps):
            gi = vjp(h, out, *args, **attrs)
            assert gi is None or np.asarray(gi).dtype == dtype, (op.opdef.name, k)


def _float32_graph():
    """A float32 graph with every op of the table and Python numbers in its formulas, under the
    float64 default (from tests/test_dtypes.py)."""
    from test_dtypes import _every_op
    rng = np.random.default_rng(7)
    x, onehot, labels = mg.Input("x"), mg.Input("onehot"), mg.Input("labels", dtype=int)
    w = mg.Parameter(rng.normal(size=(3, 3)).astype(np.float32), name="w")
    b = mg.Parameter(rng.normal(size=3).astype(np.float32), name="b")
    feed = {x: rng.normal(size=(4, 3)).astype(np.float32), labels: rng.integers(0, 3, size=4),
            onehot: np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=4)]}
    return _every_op(x, w, b, labels, onehot), (w, b, x), feed


def _float_values_are_float32(nodes, feed):
    """Every floating value computed by the graph of ``nodes`` is float32 (numbers written into
    formulas keep showing the default dtype: they are converted where they are used)."""
    graph = mg.Graph(nodes)
    graph.forward(feed)
    wrong = [n.name for n in graph.nodes if not n.weak and n.op is not None and not isinstance(n.value, tuple)
             and np.asarray(n.value).dtype.kind == "f" and np.asarray(n.value).dtype != np.float32]
    assert wrong == []


def test_grad_of_a_float32_graph_is_float32_and_equals_backward():
    loss, wrt, feed = _float32_graph()
    grads = mg.grad(loss, list(wrt))
    _float_values_are_float32(grads, feed)
    mg.Graph(loss).backward(feed, wrt=list(wrt))
    for w, g in zip(wrt, grads):
        assert g.value.dtype == w.grad.dtype == np.float32
        np.testing.assert_allclose(g.value, w.grad, rtol=1e-4, atol=1e-5)


def test_second_order_grad_of_a_float32_graph_is_float32_and_equals_backward():
    """A Hessian-vector product, twice: mg.grad of (grad · v), and Graph.backward run through the
    first gradient graph (the helpers' numeric VJPs); both float32 and equal within rounding."""
    loss, (w, b, x), feed = _float32_graph()
    v = mg.Constant(np.random.default_rng(8).normal(size=(3, 3)).astype(np.float32), name="v")
    (dw,) = mg.grad(loss, [w])
    along_v = mg.sum(dw * v)
    (hv,) = mg.grad(along_v, [w])
    _float_values_are_float32([hv], feed)
    graph = mg.Graph(along_v)
    for _ in range(2):                                    # the interpreter, then the generated code
        graph.backward(feed, wrt=[w])
        assert w.grad.dtype == hv.value.dtype == np.float32
        np.testing.assert_allclose(hv.value, w.grad, rtol=1e-4, atol=1e-4)


def test_grad_of_a_multi_output_op_itself_is_refused_and_of_its_parts_given():
    """mg.split's op has a tuple of arrays for value: mg.grad refuses it, naming the op and the
    nodes to ask for instead (it once raised AttributeError: 'tuple' object ...); the gradient
    of each part is what Graph.backward gives it."""
    x = mg.Parameter(np.arange(6.0).reshape(2, 3), name="x")
    parts = mg.split(x, 3, axis=-1)
    loss = mg.sum(parts[0] * parts[1])
    with pytest.raises(mg.BadValueError, match=r"'split_\d+' is the split op itself, whose value is a "
                                               r"tuple of 3 arrays.*split_\d+\[0\], split_\d+\[1\], split_\d+\[2\]"):
        mg.grad(loss, [parts[0].inputs[0]])
    graph = mg.Graph(loss)
    graph.backward(wrt=[parts[0].inputs[0]])
    expected = parts[0].inputs[0].grad
    got = mg.Graph(mg.grad(loss, list(parts[:2]))).forward()
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
