"""dtypes end to end: float32 stays float32 through every op, gradient, seed and update.

Every op of the table is run forward and backward on float32 inputs (by the interpreter and by
the generated code), mixed dtypes are checked against numpy's own promotion, and a float32 MLP is
trained next to the same network written in numpy float32.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minigraph as mg
from minigraph import dtypes, ops

FLOATS = [np.float32, np.float64]


@pytest.fixture
def default_float32():
    previous = mg.set_default_dtype(np.float32)
    yield
    mg.set_default_dtype(previous)


def test_the_default_is_float64_and_can_be_set_and_put_back():
    assert mg.get_default_dtype() == np.float64
    previous = mg.set_default_dtype(np.float32)
    try:
        assert previous == np.float64 and mg.get_default_dtype() == np.float32
        assert mg.Parameter([1.0, 2.0]).value.dtype == np.float32
    finally:
        mg.set_default_dtype(previous)
    assert mg.Parameter([1.0, 2.0]).value.dtype == np.float64


@pytest.mark.parametrize("dtype", [int, np.int32, bool, "U3", "banana"])
def test_the_default_must_be_a_floating_type(dtype):
    with pytest.raises(mg.BadValueError, match=f"the default dtype: dtype={dtype!r} is not a floating"):
        mg.set_default_dtype(dtype)
    assert mg.get_default_dtype() == np.float64


@pytest.mark.parametrize("dtype", ["banana", str, object, complex])
def test_a_dtype_that_is_not_one_of_numbers_is_refused_where_it_is_given(dtype):
    with pytest.raises(mg.BadValueError, match=f"Parameter 'W': dtype={dtype!r} is not a floating"):
        mg.Parameter(1.0, name="W", dtype=dtype)
    with pytest.raises(mg.BadValueError, match=f"Constant 'c': dtype={dtype!r} is not a numeric"):
        mg.Constant(1.0, name="c", dtype=dtype)
    with pytest.raises(mg.BadValueError, match=f"Input 'x': dtype={dtype!r} is not a numeric"):
        mg.Input("x", dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS + [np.float16])
def test_a_parameter_keeps_the_floating_dtype_of_its_array(dtype):
    assert mg.Parameter(np.ones((2, 3), dtype)).value.dtype == dtype
    assert mg.Parameter(dtype(1.5)).value.dtype == dtype


@pytest.mark.parametrize("dtype", FLOATS)
def test_dtype_argument_wins_over_the_array(dtype):
    for value in [np.ones(3, np.float32), np.ones(3), [1, 2, 3], 2.0]:
        assert mg.Parameter(value, dtype=dtype).value.dtype == dtype
        assert mg.Constant(value, dtype=dtype).value.dtype == dtype


def test_python_numbers_and_integer_arrays_make_default_dtype_parameters(default_float32):
    for value in [1.0, 2, [1.0, 2.0], [[1, 2]], np.arange(3)]:
        assert mg.Parameter(value).value.dtype == np.float32, value


def test_assigning_a_parameter_keeps_its_dtype():
    w = mg.Parameter(np.zeros(3, np.float32))
    w.value = np.array([1.0, 2.0, 3.0])                  # float64 in, float32 kept
    assert w.value.dtype == np.float32 and w.value.tolist() == [1.0, 2.0, 3.0]


def test_constants_python_numbers_take_the_default_labels_stay_integers(default_float32):
    assert mg.Constant(2).value.dtype == np.float32        # a number in a formula: 2 * x
    assert mg.Constant(0.5).value.dtype == np.float32
    assert mg.Constant([0.5, 1.0]).value.dtype == np.float32
    assert mg.Constant([0, 2, 1]).value.dtype.kind == "i"  # class labels
    assert mg.Constant(np.array([0, 2])).value.dtype.kind == "i"
    assert mg.Constant(np.ones(2)).value.dtype == np.float64   # a numpy array keeps its dtype
    assert mg.Constant(True).value.dtype == bool


@pytest.mark.parametrize("dtype", FLOATS)
def test_inputs_keep_the_floating_dtype_they_are_fed(dtype):
    x = mg.Input("x")
    g = mg.Graph(mg.tanh(x))
    assert g.forward({x: np.ones(2, dtype)}).dtype == dtype
    assert g.forward({x: [1, 2]}).dtype == np.float64              # Python data: the default
    labels = mg.Input("labels", dtype=int)
    assert mg.Graph(labels * 1).forward({labels: np.array([1.0, 2.0], dtype)}).dtype.kind == "f"
    labels.feed(np.array([1.0, 2.0], dtype))
    assert labels.value.dtype.kind == "i"


def _every_op(x, w, b, labels, onehot):
    """One graph that uses every op of the table (all of them on float32 leaves)."""
    h = ops.linear(x, w, b)                                    # (4, 3)
    parts = mg.split(h, 3, axis=1)
    terms = [mg.tanh(h), mg.sigmoid(h), mg.relu(h), mg.leaky_relu(h), mg.exp(mg.neg(h) * 0.5),
             mg.log(mg.sigmoid(h)), h ** 2, 2.0 ** h, h - 1, h / (h * h + 1), 1 / (mg.exp(h) + 1),
             mg.softmax(h), mg.log_softmax(h), mg.max(h, axis=1, keepdims=True) + h,
             mg.reshape(mg.transpose(h), (4, 3)), mg.concatenate(list(parts), axis=1),
             mg.matmul(h, mg.transpose(w)) @ w, mg.mean(h, axis=0) + h, mg.getitem(h, 1) + h,
             mg.reshape(mg.reshape(h, (2, 2, 3)) @ w, (4, 3)), mg.gelu(h), mg.layer_norm(h, b, b),
             mg.layer_norm(h, b), mg.softmax(mg.reshape(h, (4, 3, 1)) * b, mask=mg.causal_mask(3))[:, 1],
             mg.embedding(w, labels) * h]
    total = mg.sum(terms[0], axis=1)
    for t in terms[1:]:
        total = total + mg.sum(t, axis=1)
    return (mg.mean(total) + mg.softmax_cross_entropy(h, labels) + mg.softmax_cross_entropy(h, onehot)
            + mg.bce_with_logits(h, onehot) + mg.mse(h, onehot))


def _float32_leaves(rng):
    x, onehot = mg.Input("x"), mg.Input("onehot")
    labels = mg.Input("labels", dtype=int)
    w = mg.Parameter(rng.normal(size=(3, 3)).astype(np.float32), name="w")
    b = mg.Parameter(rng.normal(size=3).astype(np.float32), name="b")
    feed = {x: rng.normal(size=(4, 3)).astype(np.float32), labels: rng.integers(0, 3, size=4),
            onehot: np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=4)]}
    return mg.Graph(_every_op(x, w, b, labels, onehot)), feed


def test_float32_graph_with_float32_default_is_float32_everywhere(default_float32):
    graph, feed = _float32_leaves(np.random.default_rng(1))
    for call in range(2):                                  # interpreter, then generated
        graph.backward(feed)
        for node in graph.nodes:
            if node.name == "labels":
                continue
            for v in (node.value if isinstance(node.value, tuple) else (node.value,)):
                assert np.asarray(v).dtype == np.float32, (call, node.name, "value")
            for g in (node.grad if isinstance(node.grad, tuple) else (node.grad,)):
                if g is not None:
                    assert np.asarray(g).dtype == np.float32, (call, node.name, "gradient")


def test_the_generated_code_gives_the_interpreters_float32_numbers_bit_for_bit(default_float32):
    rng = np.random.default_rng(2)
    graph, feed = _float32_leaves(rng)
    graph.backward(feed)                                   # the interpreter
    first = {n: (n.value, n.grad) for n in graph.nodes}
    graph.invalidate()
    graph.backward(feed)                                   # the generated code (second call)
    graph.backward(feed)
    for node, (value, grad) in first.items():
        if node.op is not None and node.op.n_outputs > 1:
            continue
        assert np.asarray(node.value).tobytes() == np.asarray(value).tobytes(), node.name
        assert np.asarray(node.value).dtype == np.asarray(value).dtype, node.name
        if grad is not None and not isinstance(grad, tuple):
            assert np.asarray(node.grad).dtype == np.asarray(grad).dtype, node.name
            assert np.asarray(node.grad).tobytes() == np.asarray(grad).tobytes(), node.name


def test_generated_code_runs_on_a_float32_graph(default_float32):
    x = mg.Input("x")
    w = mg.Parameter(np.ones((2, 2), np.float32), name="w")
    g = mg.Graph(mg.sum(mg.tanh(x @ w) * 3))
    feed = {x: np.ones((1, 2), np.float32)}
    for _ in range(3):
        g.backward(feed)
        assert w.grad.dtype == np.float32
    assert g._fast_path.runs                               # the fast path did run


_SIGNATURES = {np.float32: "f", np.float64: "d"}


@pytest.mark.parametrize("a", FLOATS)
@pytest.mark.parametrize("b", FLOATS)
@pytest.mark.parametrize("op", [mg.add, mg.sub, mg.mul, mg.div, mg.matmul, mg.linear])
def test_mixed_dtypes_follow_numpys_promotion(op, a, b):
    """float32 with float32 gives float32; float32 with float64 gives float64, as in numpy. Each
    input's gradient has the dtype of the op's output gradient (so float64 for a float32 input
    of a mixed op), and an optimizer step turns it back into the parameter's dtype."""
    rng = np.random.default_rng(3)
    x = mg.Parameter(rng.normal(size=(2, 2)).astype(a), name="x")
    y = mg.Parameter(rng.normal(size=(2, 2)).astype(b), name="y")
    args = (x, y, mg.Parameter(np.ones(2, a), name="c")) if op is mg.linear else (x, y)
    graph = mg.Graph(mg.sum(op(*args)))
    expected = np.result_type(a, b)
    for _ in range(2):
        assert graph.backward().dtype == expected
        assert x.grad.dtype == y.grad.dtype == expected
    mg.optim.GD(graph.parameters, lr=0.1).step()
    assert x.value.dtype == a and y.value.dtype == b


# -- Python numbers in formulas are weak, as in numpy 2 (NEP 50) -----------------------------------

TWO_INPUT_OPS = sorted((f for f in vars(ops).values() if hasattr(f, "opdef") and len(f.opdef.vjps) == 2),
                       key=lambda f: f.opdef.name)
NUMBERS = [3, 0.5]                                  # a Python int and a Python float


SAME_SHAPES = ("mse", "bce_with_logits")             # they need inputs of one shape: 0-d here


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", TWO_INPUT_OPS, ids=lambda f: f.opdef.name)
def test_a_python_number_in_a_formula_takes_the_dtype_numpy_gives(op, dtype, number, side):
    """Every two-input op of the table, with a Python int or float on either side of a float32 or
    float64 Input: the interpreter, the generated code (second call on), mg.grad and mg.function
    all give numpy's dtype (``np.result_type`` of the array and the Python number itself) and
    numpy's value. Ops that take no 0-d value there (matmul wants vectors or matrices,
    cross-entropy integer labels) refuse the number as they refuse a 0-d array."""
    array = np.linspace(0.5, 2.0, 3).astype(dtype)
    array = np.asarray(array[1]) if op.opdef.name in SAME_SHAPES else array
    expected = np.result_type(array, number)               # numpy's rule: a Python number is weak
    order = (lambda a, b: (a, b)) if side == "left" else (lambda a, b: (b, a))
    x = mg.Input("x")
    out = op(*order(number, x))
    feed = {x: array}
    try:
        want = op.opdef.forward(*order(np.asarray(number, expected), array))
    except (ValueError, mg.GraphError):                    # numpy, or the op, refuses a 0-d value
        with pytest.raises(mg.GraphError):
            mg.Graph(out).forward(feed)
        return
    if isinstance(op.opdef.forward, np.ufunc):             # numpy's own arithmetic on the number
        assert op.opdef.forward(*order(number, array)).tobytes() == np.asarray(want).tobytes()
    loss = mg.sum(out)
    graph = mg.Graph(loss)
    runs = []
    for _ in range(3):                                     # the interpreter, then the generated code
        graph.backward(feed)
        runs.append((np.asarray(out.value), x.grad))
    assert any(graph._fast_path.runs.values())             # the fast path did run
    for value, grad in runs:
        assert value.dtype == grad.dtype == expected, (value.dtype, grad.dtype)
        assert value.tobytes() == runs[0][0].tobytes() and grad.tobytes() == runs[0][1].tobytes()
    assert runs[0][0].tobytes() == np.asarray(want).tobytes()
    (dx,) = mg.grad(loss, [x])
    assert mg.Graph(dx).forward(feed).dtype == expected
    np.testing.assert_allclose(dx.value, runs[0][1], rtol=4 * np.finfo(expected).eps)
    compiled = mg.function([x], [out, dx])(array)
    assert [v.dtype for v in compiled] == [expected, expected]
    assert compiled[0].tobytes() == runs[0][0].tobytes()


@pytest.mark.parametrize("number", NUMBERS)
def test_an_input_fed_later_decides_the_numbers_dtype_at_each_call(number):
    """The graph is built before anything is fed; the same graph then follows whatever dtype the
    Input is fed, call after call, in the interpreter and in the generated code."""
    x = mg.Input("x")
    y = mg.tanh(x) * number + (1 - x) / 3
    graph = mg.Graph(mg.sum(y ** 2))
    for dtype in [np.float32, np.float32, np.float64, np.float64, np.float32, np.float64]:
        array = np.linspace(-1, 1, 4).astype(dtype)
        expected = (np.tanh(array) * number + (1 - array) / 3).dtype
        assert expected == dtype                           # numpy keeps the dtype: weak numbers
        assert graph.backward({x: array}).dtype == y.value.dtype == x.grad.dtype == expected
    assert any(graph._fast_path.runs.values())


@pytest.mark.parametrize("dtype", FLOATS)
def test_numbers_are_weak_next_to_parameters_and_ops_of_any_default(dtype, default_float32):
    w = mg.Parameter(np.array([0.5, -1.0], dtype), name="w")
    array = np.array([0.5, -1.0], dtype)
    for formula, numpy in [(lambda v: 2 * v, lambda a: 2 * a),
                           (lambda v: v ** 2 - 1.5, lambda a: a ** 2 - 1.5),
                           (lambda v: 1 / (mg.exp(v) + 1), lambda a: 1 / (np.exp(a) + 1))]:
        out = formula(w)
        graph = mg.Graph(mg.sum(out))
        graph.backward()
        assert out.value.dtype == w.grad.dtype == numpy(array).dtype == dtype


@pytest.mark.parametrize("default", FLOATS)
def test_numbers_next_to_integers_only_are_values_of_the_default_dtype(default):
    """Next to integer labels there is no floating dtype to take: the number is a value of the
    default dtype and numpy's promotion decides. ``labels * 0.5`` is then what numpy gives for
    the Python number (float64); ``labels * 2`` is floating too, where numpy would keep integers:
    formulas compute in floating point."""
    previous = mg.set_default_dtype(default)
    try:
        labels = mg.Input("labels", dtype=int)
        ints = np.array([1, 2, 3])
        assert mg.Graph(labels * 0.5).forward({labels: ints}).dtype == (ints * 0.5).dtype
        for number in NUMBERS:
            assert mg.Graph(number * labels).forward({labels: ints}).dtype == (
                np.asarray(number, default) * ints).dtype
    finally:
        mg.set_default_dtype(previous)


@pytest.mark.parametrize("strong", [lambda: mg.Constant(2.0), lambda: np.float64(2.0),
                                    lambda: np.array(2.0), lambda: np.float32(2.0),
                                    lambda: mg.Constant(2.0, dtype=np.float32)],
                         ids=["Constant", "np.float64", "0-d array", "np.float32", "Constant float32"])
def test_a_constant_or_a_numpy_value_is_not_weak(strong):
    """An mg.Constant, a numpy scalar or array keeps its own dtype: numpy's promotion decides."""
    x = mg.Parameter(np.ones(2, np.float32), name="x")
    value = strong()
    as_numpy = value.value if isinstance(value, mg.Node) else value
    expected = (as_numpy * np.ones(2, np.float32)).dtype
    graph = mg.Graph(mg.sum(value * x))
    for _ in range(2):
        graph.backward()
        assert x.grad.dtype == expected
    assert mg.Graph(value * x).forward().dtype == expected


def test_a_formula_of_numbers_alone_is_a_number_too():
    """``mg.exp(2.0)`` or ``2.0 ** 3`` written with ops is still a number: it meets float32 as float32."""
    x = mg.Parameter(np.ones(2, np.float32), name="x")
    for number in [mg.exp(2.0), mg.add(1, 2.5), -mg.log(0.5)]:
        assert number.weak and not mg.Constant(2.0).weak
        assert mg.Graph(number * x).forward().dtype == np.float32
        assert mg.Graph(number).forward().dtype == mg.get_default_dtype()


def test_a_number_is_drawn_and_shown_as_the_number():
    x = mg.Input("x")
    out = mg.mul(x, 2.5, name="y")
    graph = mg.Graph(out)
    graph.forward({x: np.ones(2, np.float32)})
    number = out.inputs[1]
    assert number.kind == "constant" and number.value == 2.5
    assert out.value.dtype == np.float32 and out.op.name == "mul" and out.op.symbol == "×"
    assert "2.5" in mg.draw(graph).source


# Random formulas: every kind of leaf (float32/float64 Inputs and Parameters, Python ints and
# floats, mg.Constant, numpy scalars of both dtypes) under every op of a formula, nested.
LEAVES = st.one_of(
    st.tuples(st.sampled_from(["input", "parameter"]), st.sampled_from(FLOATS)),
    st.tuples(st.just("python"), st.sampled_from([2, 3, 0.5, 1.25])),
    st.tuples(st.just("constant"), st.sampled_from([0.5, 2.0])),
    st.tuples(st.just("numpy scalar"), st.sampled_from([np.float32(1.5), np.float64(0.75)])))
FORMULA_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
               "pow": np.power, "tanh": np.tanh, "exp": np.exp, "neg": np.negative}
FORMULAS = st.recursive(LEAVES, lambda inner: st.one_of(
    st.tuples(st.sampled_from(["add", "sub", "mul", "div", "pow"]), inner, inner),
    st.tuples(st.sampled_from(["tanh", "exp", "neg"]), inner)), max_leaves=6)


def _build(formula, feed, rng):
    """The formula as minigraph nodes, and as numpy computes it: arrays, and Python numbers kept
    as Python numbers (a result of numbers alone, too: numpy's float64 turned into a Python float,
    which is what ``WithNumbers`` does with a number-only op's value)."""
    kind, *rest = formula
    if kind in ("input", "parameter"):
        array = rng.uniform(0.5, 1.5, size=3).astype(rest[0])
        node = mg.Input() if kind == "input" else mg.Parameter(array)
        feed.update({node: array} if kind == "input" else {})
        return node, array
    if kind == "python":
        return rest[0], rest[0]
    if kind == "constant":
        return mg.Constant(rest[0]), np.asarray(rest[0], mg.get_default_dtype())
    if kind == "numpy scalar":
        return rest[0], rest[0]
    built = [_build(child, feed, rng) for child in rest]
    nodes, values = [b[0] for b in built], [b[1] for b in built]
    if all(dtypes.is_python_number(v) for v in values):
        return getattr(mg, kind if kind != "pow" else "power")(*nodes), float(
            FORMULA_OPS[kind](*map(np.float64, values)))
    return getattr(mg, kind if kind != "pow" else "power")(*nodes), FORMULA_OPS[kind](*values)


@settings(max_examples=150, deadline=None)
@given(formula=FORMULAS, seed=st.integers(0, 2 ** 16))
def test_random_formulas_give_numpys_dtype_and_numbers_in_interpreter_and_generated_code(formula, seed):
    """The value has numpy's dtype and numbers; the generated code repeats the interpreter bit for
    bit, mg.function too, and mg.grad's gradients have backward's dtypes."""
    feed = {}
    with np.errstate(all="ignore"):                       # 0 ** -1, exp(exp(3)): inf, in both
        out, expected = _build(formula, feed, np.random.default_rng(seed))
        leaves = [n for n in mg.Graph(out).nodes if n.kind in ("input", "parameter")] \
            if isinstance(out, mg.Node) else []
        assume(leaves)                                    # a formula of an Input or Parameter
        graph = mg.Graph(mg.sum(out))
        runs = []
        for _ in range(3):                                # the interpreter, then the generated code
            graph.backward(feed)
            runs.append([out.value] + [n.grad for n in leaves])
    assert out.value.dtype == np.asarray(expected).dtype
    assert np.array_equal(out.value, expected, equal_nan=True)
    for run in runs[1:]:                                  # the generated code, bit for bit
        assert all(a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True) for a, b in zip(run, runs[0]))
    inputs = [n for n in leaves if n.kind == "input"]
    with np.errstate(all="ignore"):
        compiled = mg.function(inputs, out)(*[feed[n] for n in inputs])
        grads = mg.Graph(mg.grad(mg.sum(out), leaves)).forward(feed)
    assert compiled.dtype == out.value.dtype and np.array_equal(compiled, out.value, equal_nan=True)
    assert [g.dtype for g in (grads if len(leaves) > 1 else [grads])] == [g.dtype for g in runs[0][1:]]


@pytest.mark.parametrize("dtype", FLOATS)
def test_the_seed_has_the_outputs_dtype(dtype):
    x = mg.Parameter(np.ones(3, dtype), name="x")
    g = mg.Graph(mg.tanh(x))
    g.backward(seed=np.array([1.0, 2.0, 3.0]))             # a float64 seed
    assert x.grad.dtype == dtype
    g2 = mg.Graph(mg.sum(mg.tanh(x)))
    g2.backward()
    assert x.grad.dtype == dtype


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 3), max_size=3), added=st.integers(0, 2), data=st.data())
def test_unbroadcast_keeps_the_dtype(shape, added, data):
    stretched = [data.draw(st.sampled_from([n, 1])) for n in shape]
    dtype = data.draw(st.sampled_from(FLOATS))
    g = np.ones([2] * added + shape, dtype)
    out = mg.unbroadcast(g, tuple(stretched))
    assert out.shape == tuple(stretched) and out.dtype == dtype


@pytest.mark.parametrize("name", sorted(mg.optim.OPTIMIZERS))
def test_every_optimizer_keeps_float32_parameters_and_state_float32(name, default_float32):
    w = mg.Parameter(np.array([0.5, -1.0], np.float32), name="w")
    g = mg.Graph(mg.sum((w - 3.0) ** 2))
    opt = mg.optim.OPTIMIZERS[name](g.parameters)
    for _ in range(3):
        g.backward()
        opt.step()
    assert w.value.dtype == np.float32
    for key, state in opt.state[w].items():
        assert np.asarray(state).dtype.kind != "f" or np.asarray(state).dtype == np.float32, key


def test_subtract_into_gives_value_minus_change_and_writes_only_into_change():
    value = np.arange(4.0, dtype=np.float32)
    value.setflags(write=False)
    for change in [np.full(4, 0.25, np.float32), np.full(4, 0.25), np.float32(0.25), np.full(1, 0.25)]:
        expected = value - change
        out = mg.optim.subtract_into(value, np.copy(change))
        assert out.dtype == expected.dtype and out.tolist() == expected.tolist()
    assert value.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_gradcheck_compares_a_float32_graph_in_float64_and_leaves_it_float32(default_float32):
    x = mg.Input("x")
    w = mg.Parameter(np.array([[0.3, -0.2], [0.1, 0.4]], np.float32), name="w")
    graph = mg.Graph(mg.sum(mg.tanh(x @ w) ** 2))
    report = mg.gradcheck.check_graph(graph, {x: np.array([[1.0, 2.0]], np.float32)})
    assert report.ok, report
    assert w.value.dtype == np.float32
    assert mg.gradcheck.check_ops(graph, {x: np.array([[1.0, 2.0]], np.float32)}).ok
    # a wrong backward is still caught on a float32 graph
    bad = mg.defop("bad_square", lambda v: v * v, [lambda g, ans, v: g * v])
    report = mg.gradcheck.check_graph(mg.Graph(mg.sum(bad(w))))
    assert not report.ok and report.bad_node is w


def _numpy_mlp_loss(params, X, labels, steps, lr):
    """The 64-16-10 ReLU MLP + softmax-CE, trained by hand in numpy (in the params' dtype)."""
    W1, b1, W2, b2 = [p.copy() for p in params]
    losses = []
    for _ in range(steps):
        z1 = X @ W1 + b1
        h = np.maximum(z1, 0)
        z = h @ W2 + b2
        shifted = z - z.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        rows = np.arange(len(z))
        losses.append(-logp[rows, labels].sum() / len(z))
        dz = np.exp(logp)
        dz[rows, labels] -= 1
        dz /= len(z)
        dW2, db2 = h.T @ dz, dz.sum(axis=0)
        dz1 = (dz @ W2.T) * (z1 > 0)
        dW1, db1 = X.T @ dz1, dz1.sum(axis=0)
        W1, b1, W2, b2 = W1 - lr * dW1, b1 - lr * db1, W2 - lr * dW2, b2 - lr * db2
    return losses


@pytest.mark.parametrize("dtype", FLOATS)
def test_training_an_mlp_gives_numpys_losses_in_the_same_dtype(dtype):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(32, 64)).astype(dtype)
    labels = rng.integers(0, 10, size=32)
    net = mg.nn.MLP([64, 16, 10], "relu", rng=5, dtype=dtype)
    params = [p.value for p in net.parameters]
    assert all(p.dtype == dtype for p in params)
    x, y = mg.Input("x"), mg.Input("y", dtype=int)
    graph = mg.Graph(mg.softmax_cross_entropy(net(x), y))
    opt = mg.optim.GD(graph.parameters, lr=0.5)
    losses = []
    for _ in range(20):
        losses.append(graph.backward({x: X, y: labels}, wrt=graph.parameters))
        opt.step()
    expected = _numpy_mlp_loss(params, X, labels, 20, 0.5)
    assert all(np.asarray(loss).dtype == dtype for loss in losses + expected)
    assert losses[-1] < 0.5 * losses[0]                    # it did learn
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(losses, expected, rtol=64 * eps, atol=0)
    # float32 really is float32: it does differ from the float64 run by more than float64 rounding
    if dtype == np.float32:
        in_float64 = _numpy_mlp_loss([p.astype(np.float64) for p in params], X.astype(np.float64),
                                     labels, 20, 0.5)
        assert np.max(np.abs(np.array(losses) - in_float64)) > 1e-9


@pytest.mark.parametrize("dtype", FLOATS)
def test_a_number_among_three_inputs_takes_the_others_dtype(dtype):
    # x * 2 and 2 * x have their own short path; an op of three inputs, one a number, goes
    # through WithNumbers.adapt: the same rule, in the interpreter and in the generated code
    rng = np.random.default_rng(0)
    x, W = mg.Input("x"), mg.Parameter(rng.normal(size=(3, 2)).astype(dtype), name="W")
    h = mg.linear(x, W, 0.5)
    g = mg.Graph(mg.sum(h * h))
    X = rng.normal(size=(4, 3)).astype(dtype)
    expected = X @ W.value + 0.5                                 # numpy: the Python 0.5 is weak
    for _ in range(3):                                           # the interpreter, then generated
        g.backward({x: X})
        assert h.value.dtype == expected.dtype == dtype and np.allclose(h.value, expected)
        assert W.grad.dtype == dtype
        assert np.allclose(W.grad, X.T @ (2 * expected), rtol=1e-5)
