"""Random graphs from the whole space a learner can write, run as a learner runs them.

The generator draws every node kind in every position: Parameters, float and integer Inputs,
float and integer Constants as leaves, as operands of any op and as the output itself; each
operand of any shape its op accepts (a broadcast operand, a bias, layer norm's γ and β: a row,
0-d, with axes of 1, the full shape); ops whose inputs are all Constants or integer Inputs; a node used twice by one op; every op of the
table, with attributes at negative axes; multi-output ops with outputs nobody uses. Each graph
is then called several times: new feeds, reassigned Parameters, ``wrt`` subsets.

At each call the generated code (called directly, so no fallback can hide a bug) and the
interpreter (a fresh ``Graph``, every value recomputed) must agree bit for bit on every value
and every gradient, and the gradients must agree with central differences.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigraph as mg
from minigraph.gradcheck import numerical_grad

SHAPES = [(), (3,), (2, 3), (2, 1), (1, 3), (4,)]
EDGE_VALUES = [0.0, 1.0, -1.0, -1.5, 40.0, -40.0]   # 0, ±1, a negative base, saturated σ and tanh
P_EDGE = 0.3                     # how often a Parameter starts at edge values (tests/test_edges.py)
N_SEEDED = 2000                  # graphs drawn from fixed seeds, every run
TOO_BIG = 1e4                    # a graph whose values leave [-TOO_BIG, TOO_BIG] is drawn again


class Rejected(Exception):
    """The graph drawn so far overflows (exp of exp ...): draw another one."""


class Drawer:
    """Builds one random graph, node by node, computing each node's value as it goes."""

    def __init__(self, rng):
        self.rng, self.pool, self.feed, self.classes = rng, [], {}, {}   # classes: int leaf -> C
        self.counter = 0

    # -- leaves -------------------------------------------------------------------------------

    def name(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def floats(self, shape, low=-1.0, high=1.0):
        return self.rng.uniform(low, high, size=shape)

    def parameter_values(self, shape):
        """Mostly floats in [-1, 1]; now and then the edge values where ops have kinks, ties,
        zero exponents or saturate, so that gradients (first and second order) are checked
        there too, without a relu in front to make the point."""
        if self.rng.random() < P_EDGE:
            return self.rng.choice(EDGE_VALUES, size=shape)
        return self.floats(shape)

    def integers(self, shape, high):
        return self.rng.integers(0, high, size=shape)

    def leaf(self, kind=None, shape=None, high=3):
        kind = kind or self.rng.choice(["parameter", "parameter", "input", "int_input",
                                        "constant", "int_constant"])
        shape = SHAPES[self.rng.integers(len(SHAPES))] if shape is None else shape
        if kind == "parameter":
            node = mg.Parameter(self.parameter_values(shape), name=self.name("p"))
        elif kind == "constant":
            node = mg.Constant(self.floats(shape, -2, 2), name=self.name("c"))
        elif kind == "int_constant":
            node = mg.Constant(self.integers(shape, high), name=self.name("k"))
        else:
            integer = kind == "int_input"
            node = mg.Input(self.name("i" if integer else "x"), dtype=int if integer else float)
            self.feed[node] = self.integers(shape, high) if integer else self.floats(shape)
        if kind in ("int_input", "int_constant"):
            self.classes[node] = high
        return self.keep(node)

    def keep(self, node):
        """Compute the new node (only it: the others hold their values) and add it to the pool."""
        graph = mg.Graph(node)
        value = graph.forward({n: self.feed[n] for n in graph.inputs})
        values = value if isinstance(value, tuple) else (value,)
        if not all(np.all(np.abs(v) < TOO_BIG) for v in values):
            raise Rejected
        self.pool.append(node)
        return node

    # -- picking operands ---------------------------------------------------------------------

    def pick(self, fits=lambda shape: True, no_gradient=False):
        """A node of the pool whose shape fits; with ``no_gradient``, only Constants, integer
        Inputs and ops of those (so that no input of the new op takes a gradient)."""
        nodes = [n for n in self.pool if not isinstance(n.value, tuple) and fits(np.shape(n.value))
                 and (not no_gradient or takes_no_gradient(n))]
        return nodes[self.rng.integers(len(nodes))] if nodes else None

    def partner(self, a, no_gradient):
        """A second operand broadcastable with ``a``: often ``a`` itself (a node used twice)."""
        if self.rng.random() < 0.2:
            return a
        fits = lambda shape: broadcastable(shape, np.shape(a.value))   # noqa: E731
        return self.pick(fits, no_gradient) or self.leaf(shape=self.fitting_shape(np.shape(a.value)))

    def fitting_shape(self, shape):
        """Any shape that broadcasts into ``shape`` without growing it: a suffix of it (0-d
        included) with some of its axes 1; for (2, 3): (), (3,), (1,), (1, 3), (2, 1), (2, 3) ..."""
        start = self.rng.integers(len(shape) + 1)
        return tuple(1 if self.rng.random() < 0.3 else n for n in shape[start:])

    # -- ops ------------------------------------------------------------------------------------

    def op(self):
        """Add one random op (sometimes with helper ops around it) to the pool."""
        only_constants = self.rng.random() < 0.15
        a = self.pick(no_gradient=only_constants) or self.pick()
        shape = np.shape(a.value)
        choice = self.rng.integers(20)
        r = self.rng
        if choice == 0:
            unary = [mg.tanh, mg.sigmoid, mg.neg, mg.relu, lambda x: mg.exp(mg.tanh(x)),
                     lambda x: mg.leaky_relu(x, slope=0.1), lambda x: mg.log(mg.exp(mg.tanh(x)) + 1),
                     mg.gelu]
            return self.keep(unary[r.integers(len(unary))](a))
        if choice in (1, 2):
            b = self.partner(a, only_constants)
            binary = [mg.add, mg.sub, mg.mul, lambda x, y: x * 0.5 - y, lambda x, y: 2 + x * y]
            return self.keep(binary[r.integers(len(binary))](a, b))
        if choice == 3:                                   # division, by something away from 0
            b = self.partner(a, only_constants)
            denominator = 1.5 + mg.tanh(b) if r.random() < 0.7 else mg.Constant(
                r.uniform(0.5, 2, np.shape(b.value)) * r.choice([-1, 1]))
            return self.keep(a / denominator if r.random() < 0.8 else denominator / (a * a + 1))
        if choice == 4:                                   # powers, including 0 ** y and x ** 0
            b = self.partner(a, only_constants)
            fixed = lambda value: mg.Constant(value, name=self.name("fixed"))   # noqa: E731
            exponent = lambda: self.leaf("parameter", np.shape(a.value))   # noqa: E731  (maybe 0)
            forms = [lambda: (mg.sigmoid(a) + 0.5) ** b, lambda: (mg.sigmoid(a) + 0.5) ** exponent(),
                     lambda: a ** fixed(2), lambda: a ** fixed(3.0),
                     lambda: fixed(0.0) ** (mg.sigmoid(b) + 0.5), lambda: a ** fixed(0.0),
                     lambda: mg.Constant(1.5) ** mg.tanh(b)]
            return self.keep(forms[r.integers(len(forms))]())
        if choice == 5:                                   # reductions, at any axis
            reduce = [mg.sum, mg.mean, mg.max][r.integers(3)]
            axis = None if not shape or r.random() < 0.3 else int(r.integers(-len(shape), len(shape)))
            return self.keep(reduce(a, axis=axis, keepdims=bool(r.integers(2))))
        if choice == 6 and shape:
            soft = [mg.softmax, mg.log_softmax][r.integers(2)]
            return self.keep(soft(a, axis=int(r.integers(-len(shape), len(shape)))))
        if choice == 7 and len(shape) == 2:
            axes = [None, (-1, 0), (1, -2), (-1, -2)][r.integers(4)]
            return self.keep(mg.transpose(a, axes) if axes else a.T)
        if choice == 8 and shape:                         # matmul, with something that fits
            b = self.pick(lambda s: 1 <= len(s) <= 2 and s[0] == shape[-1] and len(shape) <= 2,
                          only_constants)
            b = b if b is not None and len(shape) <= 2 else (a.T if len(shape) == 2 else a)
            return self.keep(a @ b) if len(shape) <= 2 else None
        if choice == 9 and shape:                         # indexing, from the end
            index = [-1, (Ellipsis, -1), ([0, -1, 0],), slice(-2, None)][r.integers(4)]
            return self.keep(a[index])
        if choice == 10 and shape:
            return self.keep(mg.reshape(a, (-1, 1) if r.random() < 0.5 else (-1,)))
        if choice == 11 and shape:                        # concatenate, a node twice
            axis = int(r.integers(-len(shape), len(shape)))
            b = self.pick(lambda s: s == shape, only_constants) or a
            return self.keep(mg.concatenate([a, b, a], axis=axis))
        if choice == 12 and shape and shape[-1] % 2 == 0 or choice == 12 and shape[-1:] == (3,):
            n = 2 if shape[-1] % 2 == 0 else 3
            parts = mg.split(a, n, axis=-1)
            used = [p for p in parts if r.random() < 0.5] or [parts[-1]]   # others stay unused
            return [self.keep(p) for p in used][-1]
        if choice == 13:                                  # losses of two same-shaped nodes
            b = self.pick(lambda s: s == shape, only_constants) or a
            loss = [mg.mse, mg.bce_with_logits][r.integers(2)]
            return self.keep(loss(a, mg.sigmoid(b) if loss is mg.bce_with_logits else b))
        if choice == 14 and 1 <= len(shape) <= 2:         # softmax cross-entropy, labels or soft
            if r.random() < 0.6:
                kind = ["int_input", "int_constant"][r.integers(2)]
                labels = self.leaf(kind, shape[:-1], high=shape[-1])
            else:
                labels = mg.softmax(self.pick(lambda s: s == shape, only_constants) or a)
            return self.keep(mg.softmax_cross_entropy(a, labels))
        if choice == 15 and len(shape) == 2:              # linear: x @ W + b
            W = self.pick(lambda s: len(s) == 2 and s[0] == shape[1], only_constants) or a.T
            W_shape = np.shape(self.keep(W).value)
            b = self.pick(lambda s: broadcastable(s, (shape[0], W_shape[1])), only_constants)
            b = b if b is not None else self.leaf(shape=self.fitting_shape((shape[0], W_shape[1])))
            return self.keep(mg.linear(a, W, b))
        if choice == 16 and shape:                        # matmul with a stack of matrices
            return self.keep(self.stacked_product(a, shape, only_constants))
        if choice == 17 and len(shape) >= 2:              # softmax with a mask, along either axis
            axis = [-1, -2][r.integers(2)]
            return self.keep(mg.softmax(a, axis=axis, mask=self.mask(shape[-2:], axis)))
        if choice == 18 and shape:      # layer norm, with or without beta, each of any shape that fits
            gamma, beta = (self.scale_or_shift(shape, only_constants) for _ in range(2))
            eps = [0.1, 1.0][r.integers(2)]   # 1e-5 on a constant row: too steep for central differences
            return self.keep(mg.layer_norm(a, gamma, beta if r.random() < 0.5 else None, eps=eps))
        if choice == 19 and len(shape) == 2:              # embedding: a's rows at integer ids
            kind = ["int_input", "int_constant"][r.integers(2)]
            ids = self.leaf(kind, SHAPES[r.integers(len(SHAPES))], high=shape[0])   # ids repeat
            return self.keep(mg.embedding(a, ids))
        return None

    def scale_or_shift(self, shape, no_gradient):
        """Layer norm's γ or β for an input of ``shape``: half the time one number per feature
        (C,), else any shape that broadcasts into ``shape`` (0-d, (1, C), the full shape, ...)."""
        wanted = shape[-1:] if self.rng.random() < 0.5 else self.fitting_shape(shape)
        return self.pick(lambda s: s == wanted, no_gradient) or self.leaf(shape=wanted)

    def stacked_product(self, a, shape, no_gradient):
        """``a @ stack`` (or ``stack @ a`` for a vector ``a``), the stack a 3-D node whose leading
        axis broadcasts against a's (a stack of one, or of two)."""
        k, r = shape[-1], self.rng
        if len(shape) == 1 and r.random() < 0.5:
            stack = self.pick(lambda s: len(s) == 3 and s[-1] == k, no_gradient) or self.leaf(shape=(2, 2, k))
            return stack @ a
        stack = self.pick(lambda s: len(s) == 3 and s[-2] == k and broadcastable(s[:-2], shape[:-2]),
                          no_gradient)
        if stack is None:
            depth = [1, 2][r.integers(2)]               # a stack of two only where a's own
            if not broadcastable((depth,), shape[:-2]):   # leading axis lets it broadcast
                depth = 1
            stack = self.leaf(shape=(depth, k, 2))
        return a @ stack

    def mask(self, shape, axis):
        """A random boolean mask of ``shape`` with at least one True in each row along ``axis``
        (else softmax refuses it); now and then the causal mask."""
        if shape[0] == shape[1] and self.rng.random() < 0.3:
            return mg.causal_mask(shape[0])
        mask = self.rng.random(shape) < 0.5
        rows = np.moveaxis(mask, axis, -1)                  # a view: setting it sets mask
        rows[np.arange(len(rows)), self.rng.integers(rows.shape[-1], size=len(rows))] = True
        return mask

    def loss(self, n_ops):
        """A scalar that depends on the last op and on a few other nodes (so nodes reach it by
        paths of different lengths); now and then a graph that is a single scalar leaf."""
        if self.rng.random() < 0.03:
            return self.leaf(shape=())
        for _ in range(self.rng.integers(1, 3)):
            self.leaf()
        while n_ops > 0:
            n_ops -= self.op() is not None
        chosen = [self.pool[-1]] + [self.pick() for _ in range(self.rng.integers(0, 3))]
        terms = [mg.sum(n * mg.Constant(self.floats(np.shape(n.value)))) for n in chosen]
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return self.keep(total)


def takes_no_gradient(node):
    if node.op is not None:
        return all(takes_no_gradient(p) for p in node.inputs)
    return node.kind == "constant" or (node.kind == "input" and np.dtype(node.dtype).kind in "iu")


def at_a_kink(graph):
    """Does an op of the computed graph sit exactly where it has no derivative: relu or
    leaky_relu at 0, max at a tie? There central differences measure the mean of two slopes
    while the engine takes its convention (tests/test_edges.py states and checks each one), so
    the numeric comparison is left out; the others (unrolled vs interpreter, mg.grad vs
    backward) still run."""
    for node in graph.nodes:
        name = node.op.name if node.op is not None else None
        x = node.inputs[0].value if name in ("relu", "leaky_relu", "max") else None
        if name in ("relu", "leaky_relu") and np.any(x == 0):
            return True
        if name == "max":
            axis = node.attrs.get("axis")
            if np.any(np.sum(x == np.max(x, axis=axis, keepdims=True), axis=axis) > 1):
                return True
    return False


def starts_at_edges(loss):
    """Does a Parameter of the graph hold one of the EDGE_VALUES?"""
    return any(np.isin(p.value, EDGE_VALUES).any() for p in mg.Graph(loss).parameters)


def broadcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def draw_graph(seed):
    """(loss, feed, drawer) for a seed; a graph that overflows is drawn again from the next seed."""
    for attempt in range(100):
        drawer = Drawer(np.random.default_rng([seed, attempt]))
        try:
            return drawer.loss(int(drawer.rng.integers(1, 9))), drawer
        except Rejected:
            continue
    raise AssertionError(f"seed {seed}: every graph drawn overflowed")


# -- checking one graph ------------------------------------------------------------------------

def same(a, b):
    """Bit for bit: same kind of value, dtype, shape and numbers (tuples element by element)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(
            same(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def is_float_leaf(node):
    return node.op is None and np.asarray(node.value).dtype.kind == "f"


def new_feed(drawer, inputs):
    """New values for the Inputs, same shapes (integers stay valid classes)."""
    return {node: (drawer.integers(node.shape, drawer.classes[node]) if node in drawer.classes
                   else drawer.floats(node.shape)) for node in inputs}


def check_calls(loss, drawer, numeric=True):
    """Call the graph as a learner does and compare both paths (and central differences)."""
    rng, g = drawer.rng, mg.Graph(loss)
    nodes = g.nodes
    subset = [n for n in nodes if rng.random() < 0.4 and not n.name.startswith("fixed") and not (
        n.op is None and np.asarray(n.value).dtype.kind != "f")] or None   # no d(x ** y)/dy at x <= 0
    parameters = g.parameters
    first = {node: drawer.feed[node] for node in g.inputs}
    calls = [(first, None, False), (first, None, False), (new_feed(drawer, g.inputs), None, True),
             (first, subset, False), (new_feed(drawer, g.inputs), subset, True)]
    runs = {}
    for number, (feed, wrt, reassign) in enumerate(calls):
        if reassign and parameters:
            p = parameters[rng.integers(len(parameters))]
            p.value = drawer.floats(np.shape(p.value))
        key = None if wrt is None else tuple(wrt)
        if key not in runs:
            runs[key] = mg.codegen.backward_function(g.plan(wrt))
        run = runs[key]
        # the generated code, recomputing only what changed since the last call ...
        value = run(feed, None)
        fast_values = {n: n.value for n in nodes}
        fast_grads = {n: n.grad for n in nodes}
        # ... against the reference: a fresh graph's interpreter, recomputing every value
        reference = mg.Graph(loss)
        reference.invalidate()
        assert same(reference.backward(feed, wrt=wrt), value), f"call {number}: output value"
        for n in nodes:
            assert same(n.value, fast_values[n]), f"call {number}: value of {n.name}"
            assert same(n.grad, fast_grads[n]), f"call {number}: gradient of {n.name}"
        if numeric and number in (0, 4) and not at_a_kink(reference):
            graded = g.plan(wrt).graded
            for n in [n for n in graded if is_float_leaf(n)]:
                expected = numerical_grad(reference, n, feed)
                assert n.grad is not None, f"call {number}: no gradient for {n.name}"
                error = np.max(np.abs(n.grad - expected), initial=0.0)
                assert error <= 1e-6 + 1e-4 * np.max(np.abs(expected), initial=0.0), \
                    f"call {number}: gradient of {n.name}: {n.grad} vs {expected}"


def describe_graph(loss):
    return "\n".join(repr(n) for n in mg.Graph(loss).nodes)


@pytest.mark.parametrize("block", range(10))
def test_seeded_random_graphs(block):
    """N_SEEDED graphs from fixed seeds, in ten blocks (so a failure names a smaller range)."""
    per_block = N_SEEDED // 10
    for seed in range(block * per_block, (block + 1) * per_block):
        loss, drawer = draw_graph(seed)
        try:
            check_calls(loss, drawer)
        except AssertionError as error:
            raise AssertionError(f"seed {seed}: {error}\n{describe_graph(loss)}") from None


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(N_SEEDED, 2**32 - 1))
def test_random_graphs_from_fresh_seeds(seed):
    loss, drawer = draw_graph(seed)
    check_calls(loss, drawer)


def test_the_generator_covers_the_whole_space():
    """What the seeded graphs contain: every op, every leaf kind in every position, and the
    cases that once went wrong (constant-only ops, a node used twice, negative axes, ...)."""
    seen = set()
    for seed in range(N_SEEDED // 4):              # a quarter of them already has everything
        loss, drawer = draw_graph(seed)
        g = mg.Graph(loss)
        if loss.op is None:
            seen.add(("output", loss.kind))
        for node in g.nodes:
            if node.op is None:
                continue
            seen.add(("op", node.op.name))
            for k, parent in enumerate(node.inputs):
                seen.add(("operand", k, kind_of(parent)))
            if len(set(node.inputs)) < len(node.inputs):
                seen.add("a node used twice by one op")
            if all(takes_no_gradient(p) for p in node.inputs):
                seen.add("an op whose inputs take no gradient")
            if any(negative(v) for v in node.attrs.values()):
                seen.add(("a negative axis", node.op.name))
            if node.op.n_outputs > 1 and len([n for n in g.nodes if node in n.inputs]) < node.op.n_outputs:
                seen.add("an unused output")
            if node.attrs.get("mask") is not None:
                seen.add(("a mask along", node.attrs["axis"]))
            if node.op.name == "matmul" and max(np.ndim(p.value) for p in node.inputs) == 3:
                seen.add(("a stack of matrices", tuple(np.ndim(p.value) for p in node.inputs)))
            if node.op.name == "layer_norm":
                seen.add(("layer_norm with inputs", len(node.inputs)))
                x_shape = np.shape(node.inputs[0].value)
                for name, p in zip(("gamma", "beta"), node.inputs[1:]):
                    s = np.shape(p.value)
                    seen.add((f"layer_norm's {name}", "(C,)" if s == x_shape[-1:] else "the output's shape"
                              if s == x_shape else "0-d" if s == () else "other"))
    kinds = ["parameter", "input", "int input", "constant", "int constant", "op"]
    ops = {"add", "sub", "mul", "div", "pow", "neg", "matmul", "exp", "log", "tanh", "sigmoid",
           "relu", "leaky_relu", "sum", "mean", "max", "reshape", "transpose", "getitem", "softmax",
           "log_softmax", "linear", "mse", "bce_with_logits", "softmax_cross_entropy", "split",
           "output", "concatenate", "gelu", "layer_norm", "embedding"}
    wanted = ({("op", name) for name in ops} | {("operand", k, kind) for k in (0, 1) for kind in kinds}
              | {("output", kind) for kind in ("parameter", "input", "constant")}
              | {"a node used twice by one op", "an op whose inputs take no gradient",
                 "an unused output", ("a mask along", -1), ("a mask along", -2),
                 ("layer_norm with inputs", 2), ("layer_norm with inputs", 3)}
              | {(f"layer_norm's {name}", kind) for name in ("gamma", "beta")
                 for kind in ("(C,)", "the output's shape", "0-d", "other")}
              | {("a stack of matrices", ndims) for ndims in [(1, 3), (2, 3), (3, 3), (3, 1)]}
              | {("a negative axis", name) for name in ("sum", "mean", "max", "softmax", "log_softmax",
                                                         "transpose", "getitem", "concatenate", "split")})
    assert wanted <= seen, sorted(map(str, wanted - seen))


def negative(attribute):
    """Is there a negative number in this attribute (an axis, axes, an index)?"""
    if isinstance(attribute, (tuple, list)):
        return any(negative(a) for a in attribute)
    return isinstance(attribute, int) and attribute < 0


def kind_of(node):
    if node.op is not None:
        return "op"
    integer = np.asarray(node.value).dtype.kind in "iu"
    return ("int " if integer else "") + node.kind
