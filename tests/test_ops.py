"""Every op's backward against central differences, on random shapes with broadcasting."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigraph as mg
from minigraph.gradcheck import check_graph

# shapes that broadcast against each other: (), (3,), (1, 3), (2, 1), (2, 3)
BROADCAST_SHAPES = [(), (3,), (1, 3), (2, 1), (2, 3)]
seeds = st.integers(0, 2**32 - 1)


def projected(node, rng):
    """sum(node * R) for a random R: a scalar whose gradient probes every output entry."""
    weights = rng.normal(size=node.shape) if node.shape else rng.normal()
    return mg.sum(node * mg.Constant(weights))


def assert_gradients_agree(loss, feed=None):
    report = check_graph(mg.Graph(loss), feed)
    assert report.ok, report


def param(rng, shape, low=-2.0, high=2.0, name=None):
    return mg.Parameter(rng.uniform(low, high, size=shape), name=name)


def away_from_zero(rng, shape):
    """Values with |v| in [0.1, 2]: for kinks (relu at 0) central differences must not straddle."""
    return rng.uniform(0.1, 2, size=shape) * rng.choice([-1, 1], size=shape)


BINARY = {
    "add": (lambda a, b: a + b, (-2, 2), (-2, 2)),
    "sub": (lambda a, b: a - b, (-2, 2), (-2, 2)),
    "mul": (lambda a, b: a * b, (-2, 2), (-2, 2)),
    "div": (lambda a, b: a / b, (-2, 2), (0.5, 2)),
    "pow": (lambda a, b: a ** b, (0.5, 2), (-2, 2)),
}


@pytest.mark.parametrize("name", BINARY)
@settings(max_examples=40, deadline=None)
@given(seed=seeds, shape_a=st.sampled_from(BROADCAST_SHAPES), shape_b=st.sampled_from(BROADCAST_SHAPES))
def test_binary_ops_with_broadcasting(name, seed, shape_a, shape_b):
    fn, range_a, range_b = BINARY[name]
    rng = np.random.default_rng(seed)
    a, b = param(rng, shape_a, *range_a), param(rng, shape_b, *range_b)
    out = fn(a, b)
    assert out.op.name == name
    mg.Graph(out).forward()
    assert out.shape == np.broadcast_shapes(shape_a, shape_b)
    assert_gradients_agree(projected(out, rng))
    assert a.grad.shape == shape_a and b.grad.shape == shape_b


UNARY = {
    "neg": (lambda x: -x, lambda r, s: r.uniform(-2, 2, s)),
    "exp": (mg.exp, lambda r, s: r.uniform(-2, 2, s)),
    "log": (mg.log, lambda r, s: r.uniform(0.2, 3, s)),
    "tanh": (mg.tanh, lambda r, s: r.uniform(-3, 3, s)),
    "sigmoid": (mg.sigmoid, lambda r, s: r.uniform(-6, 6, s)),
    "relu": (mg.relu, away_from_zero),
    "leaky_relu": (lambda x: mg.leaky_relu(x, slope=0.1), away_from_zero),
    "softmax": (mg.softmax, lambda r, s: r.uniform(-3, 3, s)),
    "log_softmax": (mg.log_softmax, lambda r, s: r.uniform(-3, 3, s)),
    "transpose": (lambda x: x.T, lambda r, s: r.uniform(-2, 2, s)),
    "reshape": (lambda x: mg.reshape(x, (-1,)), lambda r, s: r.uniform(-2, 2, s)),
}


@pytest.mark.parametrize("name", UNARY)
@settings(max_examples=25, deadline=None)
@given(seed=seeds, shape=st.sampled_from([(3,), (2, 3), (4, 1), (1, 5)]))
def test_unary_ops(name, seed, shape):
    fn, values = UNARY[name]
    rng = np.random.default_rng(seed)
    x = mg.Parameter(values(rng, shape), name="x")
    out = fn(x)
    assert out.op.name == name
    assert_gradients_agree(projected(out, rng))
    assert x.grad.shape == shape


@pytest.mark.parametrize("reduce", [mg.sum, mg.mean, mg.max])
@settings(max_examples=30, deadline=None)
@given(seed=seeds, axis=st.sampled_from([None, 0, 1, -1, (0, 1)]), keepdims=st.booleans())
def test_reductions(reduce, seed, axis, keepdims):
    rng = np.random.default_rng(seed)
    x = param(rng, (3, 4), name="x")
    out = reduce(x, axis=axis, keepdims=keepdims)
    mg.Graph(out).forward()
    assert out.shape == np.shape(getattr(np, reduce.__name__)(x.value, axis=axis, keepdims=keepdims))
    assert_gradients_agree(projected(out, rng))


def test_max_splits_gradient_between_ties():
    x = mg.Parameter([1.0, 3.0, 3.0], name="x")
    mg.Graph(mg.max(x)).backward()
    assert np.allclose(x.grad, [0.0, 0.5, 0.5])


INDEXES = [0, -1, (slice(None), 1), (slice(0, 2), slice(1, None)), ([0, 2, 0],), (np.array([1, 1]), slice(None))]


@pytest.mark.parametrize("index", INDEXES, ids=[str(i) for i in range(len(INDEXES))])
def test_getitem_including_repeated_indices(index):
    rng = np.random.default_rng(1)
    x = param(rng, (3, 4), name="x")
    out = x[index]
    assert_gradients_agree(projected(out, rng))


MATMUL_SHAPES = [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)), ((1, 3), (3, 1))]


@pytest.mark.parametrize("shape_a,shape_b", MATMUL_SHAPES)
def test_matmul_vectors_and_matrices(shape_a, shape_b):
    rng = np.random.default_rng(2)
    a, b = param(rng, shape_a, name="a"), param(rng, shape_b, name="b")
    assert_gradients_agree(projected(a @ b, rng))


@settings(max_examples=20, deadline=None)
@given(seed=seeds, n=st.integers(1, 5), bias_shape=st.sampled_from([(4,), (1, 4)]))
def test_linear_is_matmul_plus_bias(seed, n, bias_shape):
    rng = np.random.default_rng(seed)
    x, W, b = param(rng, (n, 3), name="x"), param(rng, (3, 4), name="W"), param(rng, bias_shape, name="b")
    out = mg.linear(x, W, b)
    mg.Graph(out).forward()
    assert np.allclose(out.value, x.value @ W.value + b.value)
    assert_gradients_agree(projected(out, rng))


def test_linear_forward_is_exactly_x_at_w_plus_b_even_when_b_cannot_be_added_in_place():
    """The fused op adds b into the product in place; it must fall back when that cannot work."""
    x, W = np.arange(3), np.arange(12).reshape(3, 4)            # integers: the product is int
    for b in (np.full(4, 0.5), np.ones((2, 4)), np.ones(4)):     # float b; b stretching; plain
        out = mg.linear(x, W, b)
        mg.Graph(out).forward()
        assert out.value.dtype == (x @ W + b).dtype and np.array_equal(out.value, x @ W + b)


@pytest.mark.parametrize("axis", [0, 1])
def test_concatenate_and_split(axis):
    rng = np.random.default_rng(3)
    a, b = param(rng, (2, 3), name="a"), param(rng, (2, 3), name="b")
    joined = mg.concatenate([a, b, a], axis=axis)
    parts = mg.split(joined, 3, axis=axis)
    assert len(parts) == 3
    loss = projected(parts[0], rng) + projected(parts[2] * parts[1], rng)
    assert_gradients_agree(loss)
    mg.Graph(joined).forward()
    assert joined.shape == np.concatenate([a.value, b.value, a.value], axis=axis).shape


@settings(max_examples=30, deadline=None)
@given(seed=seeds, n=st.integers(1, 6))
def test_losses(seed, n):
    rng = np.random.default_rng(seed)
    pred, target = param(rng, (n, 1), name="pred"), param(rng, (n, 1), name="target")
    assert_gradients_agree(mg.mse(pred, target))
    logits, y = param(rng, (n, 1), -4, 4, name="logits"), param(rng, (n, 1), 0, 1, name="y")
    assert_gradients_agree(mg.bce_with_logits(logits, y))
    scores = param(rng, (n, 4), -3, 3, name="scores")
    labels = rng.integers(0, 4, size=n)
    assert_gradients_agree(mg.softmax_cross_entropy(scores, mg.Constant(labels)))
    onehot = param(rng, (n, 4), 0, 1, name="onehot")
    assert_gradients_agree(mg.softmax_cross_entropy(scores, onehot))


@pytest.mark.parametrize("axes", [None, (1, 0, 2), (-1, 0, 1), (2, -3, -2), (-1, -2, -3)])
def test_transpose_with_negative_axes(axes):
    rng = np.random.default_rng(4)
    x = param(rng, (2, 3, 4), name="x")
    out = mg.transpose(x, axes)
    mg.Graph(out).forward()
    assert np.array_equal(out.value, np.transpose(x.value, axes))
    assert_gradients_agree(projected(out, rng))


AXIS_OPS = [   # every op with an axis attribute, at a negative axis, against central differences
    lambda x: mg.sum(x, axis=-1), lambda x: mg.mean(x, axis=(-1, 0)), lambda x: mg.max(x, axis=-2),
    lambda x: mg.softmax(x, axis=-2), lambda x: mg.log_softmax(x, axis=-3),
    lambda x: mg.concatenate([x, mg.tanh(x)], axis=-1), lambda x: mg.split(x, 2, axis=-1)[1],
    lambda x: mg.sum(x, axis=-2, keepdims=True), lambda x: x[..., -1],
]


@pytest.mark.parametrize("op", AXIS_OPS)
def test_ops_with_negative_axes(op):
    rng = np.random.default_rng(5)
    x = param(rng, (2, 3, 4), name="x")
    assert_gradients_agree(projected(op(x), rng))


def test_softmax_cross_entropy_refuses_labels_that_are_not_classes():
    logits = mg.Parameter(np.zeros((2, 3)), name="logits")
    for labels in ([0, -1], [0, 3]):
        y = mg.Constant(np.array(labels), name="y")
        with pytest.raises(mg.BadValueError, match=f"'ce' = softmax_cross_entropy.*label {labels[1]} "
                                                   f"is not a class.*0 to 2"):
            mg.Graph(mg.softmax_cross_entropy(logits, y, name="ce")).forward()


def test_softmax_cross_entropy_of_one_example():
    """1-D logits are one example: the loss is -log p(class), not divided by the classes."""
    scores = np.array([1.0, 2.0, 0.5])
    logp = scores - np.log(np.exp(scores).sum())
    for labels in (np.array(1), np.array([0.0, 1.0, 0.0])):
        logits = mg.Parameter(scores, name="logits")
        loss = mg.softmax_cross_entropy(logits, mg.Constant(labels))
        assert mg.Graph(loss).forward() == pytest.approx(-logp[1])
        assert_gradients_agree(loss)
        assert np.allclose(logits.grad, np.exp(logp) - [0, 1, 0])
    rows = mg.softmax_cross_entropy(mg.Constant(scores[None]), mg.Constant([1]))
    assert mg.Graph(rows).forward() == pytest.approx(-logp[1])


def test_power_at_zero_has_the_gradients_pytorch_gives():
    """d(0 ** y)/dy is 0 (not 0 * log 0 = NaN); d(x ** 0)/dx is 0 even at x = 0."""
    x, y = mg.Parameter([0.0, 0.0, 2.0], name="x"), mg.Parameter([2.0, 0.0, 0.0], name="y")
    with mg.detect_anomaly():
        mg.Graph(mg.sum(x ** y)).backward()
    assert np.array_equal(y.grad, [0.0, 0.0, np.log(2.0)]) and np.array_equal(x.grad, [0.0, 0.0, 0.0])


def test_losses_match_their_textbook_formulas():
    z, y = np.array([[-2.0], [0.5], [3.0]]), np.array([[0.0], [1.0], [1.0]])
    p = 1 / (1 + np.exp(-z))
    bce = mg.bce_with_logits(mg.Constant(z), mg.Constant(y))
    assert np.isclose(mg.Graph(bce).forward(), np.mean(-y * np.log(p) - (1 - y) * np.log(1 - p)))
    scores, labels = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]]), np.array([1, 2])
    probs = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    ce = mg.softmax_cross_entropy(mg.Constant(scores), mg.Constant(labels))
    assert np.isclose(mg.Graph(ce).forward(), -np.mean(np.log(probs[[0, 1], labels])))
    mse = mg.mse(mg.Constant([1.0, 2.0]), mg.Constant([0.0, 4.0]))
    assert mg.Graph(mse).forward() == pytest.approx(2.5)


def test_stable_ops_do_not_overflow():
    big = mg.Constant([[-1000.0], [1000.0]])
    values = mg.Graph([mg.sigmoid(big), mg.bce_with_logits(big, mg.Constant([[0.0], [1.0]])),
                       mg.log_softmax(mg.reshape(big, (1, 2)))]).forward()
    assert np.allclose(values[0], [[0.0], [1.0]]) and values[1] == pytest.approx(0.0)
    assert np.all(np.isfinite(values[2]))


def test_hand_worked_sigmoid_neuron():
    """sigma(w x + b) at w=2, x=-1, b=3: z=1, s=0.7311, ds/dw = s(1-s) x = -0.1966."""
    w, b, x = mg.Parameter(2.0, name="w"), mg.Parameter(3.0, name="b"), mg.Input("x")
    s = mg.sigmoid(w * x + b)
    value = mg.Graph(s).backward({x: -1.0})
    assert value == pytest.approx(0.7310586)
    assert w.grad == pytest.approx(-0.1966119) and b.grad == pytest.approx(0.1966119)
    assert x.grad == pytest.approx(2 * 0.1966119)


def test_python_numbers_and_lists_become_constants():
    x = mg.Input("x")
    out = 2 * x + [1.0, 2.0] - np.array([0.5, 0.5])
    constants = [n for n in mg.Graph(out).nodes if n.kind == "constant"]
    assert len(constants) == 3
    assert np.allclose(mg.Graph(out).forward({x: [1.0, 1.0]}), [2.5, 3.5])


def test_unbroadcast_sums_stretched_axes():
    g = np.ones((4, 2, 3))
    assert mg.unbroadcast(g, (2, 3)).tolist() == (4 * np.ones((2, 3))).tolist()
    assert mg.unbroadcast(g, (2, 1)).tolist() == (12 * np.ones((2, 1))).tolist()
    assert mg.unbroadcast(g, ()) == 24


def test_custom_op_with_two_outputs_feeds_later_ops():
    """A cell returning two states, like an LSTM's (h, c), used by later ops."""
    cell = mg.defop("cell", lambda x, w: (np.tanh(x * w), x * w),
                    [lambda g, ans, x, w: g[0] * (1 - ans[0] ** 2) * w + g[1] * w,
                     lambda g, ans, x, w: g[0] * (1 - ans[0] ** 2) * x + g[1] * x], n_outputs=2)
    rng = np.random.default_rng(4)
    x, w = param(rng, (3,), name="x"), param(rng, (3,), name="w")
    h, c = cell(x, w)
    assert_gradients_agree(projected(h * c, rng) + projected(h, rng))
    only_c = mg.sum(cell(x, w)[1])          # an unused output gets a zero gradient
    mg.Graph(only_c).backward()
    assert np.allclose(w.grad, x.value)


def test_against_pytorch_when_available():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    W0, x0 = rng.normal(size=(3, 4)), rng.normal(size=(2, 3))
    W, x = mg.Parameter(W0, name="W"), mg.Parameter(x0, name="x")
    loss = mg.sum(mg.tanh(x @ W) * mg.sigmoid(x @ W))
    mg.Graph(loss).backward()
    tW, tx = (torch.tensor(a, requires_grad=True) for a in (W0, x0))
    (torch.tanh(tx @ tW) * torch.sigmoid(tx @ tW)).sum().backward()
    assert np.allclose(W.grad, tW.grad.numpy()) and np.allclose(x.grad, tx.grad.numpy())


def test_linear_when_the_bias_stretches_the_product():
    """x @ W of shape (1, 1) plus b of shape (1, 4): the product's gradient is summed back."""
    rng = np.random.default_rng(6)
    x, W, b = param(rng, (1, 2), name="x"), param(rng, (2, 1), name="W"), param(rng, (1, 4), name="b")
    assert_gradients_agree(projected(mg.linear(x, W, b), rng))


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 40), min_size=0, max_size=3), seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_mse_and_bce_are_the_very_numbers_of_np_mean(shape, seed, dtype):
    # the fused losses divide a sum by the count instead of calling np.mean (faster on small
    # arrays): the result must be np.mean's, bit for bit, in either dtype and at any size
    rng = np.random.default_rng(seed)
    p, t = (rng.normal(size=shape).astype(dtype) * 10 for _ in range(2))
    y = (rng.random(shape) < 0.5).astype(dtype)
    mse = mg.Graph(mg.mse(mg.Constant(p), mg.Constant(t))).forward()
    bce = mg.Graph(mg.bce_with_logits(mg.Constant(p), mg.Constant(y))).forward()
    assert mse == np.mean((p - t) ** 2) and mse.dtype == dtype
    assert bce == np.mean(np.maximum(p, 0) - p * y + np.log1p(np.exp(-np.abs(p)))) and bce.dtype == dtype


@pytest.mark.parametrize("seed", [3.0, 0.0, -0.5])
def test_softmax_ce_gradient_scales_with_the_gradient_it_receives(seed):
    # the loss's backward skips the multiply when it receives 1: any other number must count
    rng = np.random.default_rng(0)
    z, labels = mg.Parameter(rng.normal(size=(5, 3))), mg.Input("labels", dtype=int)
    g = mg.Graph(mg.softmax_cross_entropy(z, labels))
    feed = {labels: [0, 2, 1, 1, 0]}
    g.backward(feed)
    unit = z.grad.copy()
    for _ in range(2):                                # the interpreter, then the generated code
        g.backward(feed, seed=seed)
        assert np.array_equal(z.grad, unit * seed)


# -- the ops of attention and of a GPT (chapters 10 and 11) -----------------------------------

@given(seeds, st.sampled_from([((2, 3, 4), (2, 4, 3)), ((2, 1, 3, 4), (3, 4, 2)), ((3, 4), (2, 4, 1)),
                               ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((2, 3, 4), (4, 5))]))
@settings(max_examples=20, deadline=None)
def test_batched_matmul(seed, shapes):
    rng = np.random.default_rng(seed)
    a, b = (param(rng, s) for s in shapes)
    assert_gradients_agree(projected(a @ b, rng))


@given(seeds, st.sampled_from([(3, 5), (2, 4, 4), (2, 2, 3, 3)]))
@settings(max_examples=20, deadline=None)
def test_softmax_with_a_random_mask(seed, shape):
    rng = np.random.default_rng(seed)
    mask = rng.random(shape[-2:]) < 0.5
    mask[np.arange(shape[-2]), rng.integers(shape[-1], size=shape[-2])] = True   # one per row at least
    x = param(rng, shape, -3, 3)
    y = mg.softmax(x, mask=mask)
    assert_gradients_agree(projected(y, rng))
    assert np.all(y.value[..., ~mask] == 0) and np.allclose(np.sum(y.value, axis=-1), 1)


@given(seeds, st.sampled_from([(4,), (3, 5), (2, 3, 6)]), st.booleans())
@settings(max_examples=20, deadline=None)
def test_layer_norm_gelu_and_embedding(seed, shape, with_beta):
    rng = np.random.default_rng(seed)
    x, gamma = param(rng, shape), param(rng, shape[-1:])
    beta = param(rng, shape[-1:]) if with_beta else None
    ids = rng.integers(0, 3, size=shape[:-1] + (2,))           # repeated ids, surely
    table = param(rng, (3, shape[-1]))
    out = mg.gelu(mg.layer_norm(x, gamma, beta) + mg.embedding(table, ids)[..., 0, :])
    assert_gradients_agree(projected(out, rng))


def test_layer_norm_rows_have_mean_0_and_variance_1_before_gamma_and_beta():
    x = np.random.default_rng(0).normal(size=(3, 8)) * 5 + 2
    y = mg.Graph(mg.layer_norm(x, np.ones(8), np.zeros(8), eps=0.0)).forward()
    assert np.allclose(y.mean(axis=-1), 0, atol=1e-14) and np.allclose(y.var(axis=-1), 1, rtol=1e-12)


def test_causal_mask_is_true_on_and_below_the_diagonal():
    assert np.array_equal(mg.causal_mask(3), [[True, False, False], [True, True, False], [True, True, True]])
    assert mg.causal_mask(3).dtype == bool


@pytest.mark.parametrize("mask, words", [
    (np.array([[True, True], [False, False]]), "allows nothing in some row"),
    (np.array([[1, 0], [1, 1]]), "must be a boolean array"),
    (np.ones((3, 3), bool), "does not broadcast"),
])
def test_softmax_refuses_a_bad_mask_and_says_why(mask, words):
    with pytest.raises(mg.BadValueError, match=words):
        mg.Graph(mg.softmax(mg.Parameter(np.zeros((2, 2))), mask=mask)).forward()


@pytest.mark.parametrize("ids, words", [
    (np.array([0.0, 1.0]), "integer ids.*dtype float64"),
    (np.array([[0, 5]]), r"ids of shape \(1, 2\) range over \[0, 5\], but the table of shape \(5, 3\)"),
    (np.array([-1]), r"range over \[-1, -1\]"),
])
def test_embedding_refuses_ids_that_are_not_rows_of_the_table(ids, words):
    with pytest.raises(mg.BadValueError, match=words):
        mg.Graph(mg.embedding(mg.Parameter(np.zeros((5, 3))), ids)).forward()


def test_embedding_ids_may_be_an_integer_input_and_take_no_gradient():
    ids, table = mg.Input("ids", dtype=int), mg.Parameter(np.arange(6.0).reshape(3, 2), name="table")
    graph = mg.Graph(mg.sum(mg.embedding(table, ids)))
    graph.backward({ids: [2, 2, 0]})
    assert np.array_equal(table.grad, [[1, 1], [0, 0], [2, 2]]) and ids.grad is None
