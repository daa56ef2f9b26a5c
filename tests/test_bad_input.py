"""Bad input, as learners write it: each kind gets minigraph's own error naming the node, the op
and the shapes and saying what to do, or, where it has a sensible meaning, the right result.

One row per kind: ``(what the learner did, a function doing it, expected)``, where ``expected``
is ``(ErrorClass, [words the message must contain])`` or ``RIGHT`` and the function asserts the
result itself.
"""

import numpy as np
import pytest

import minigraph as mg

RIGHT = "the right result"


def scalar_graph():
    """x (Input), W, b (Parameters): loss = sum(tanh(x * W + b))."""
    x = mg.Input("x")
    W, b = mg.Parameter([1.0, 2.0], name="W"), mg.Parameter(0.5, name="b")
    return mg.Graph(mg.sum(mg.tanh(x * W + b), name="loss")), x, W, b


def computed_loss():
    g, x, W, b = scalar_graph()
    g.forward({x: [1.0, 2.0]})
    return g.outputs[0]


def feed(value, dtype=float):
    x = mg.Input("x", dtype=dtype)
    return mg.Graph(x * 2.0).forward({x: value})


def backward_wrt(wrt_of):
    g, x, W, b = scalar_graph()
    g.backward({x: [1.0, 1.0]})                     # every node has a gradient now
    g.backward({x: [1.0, -1.0]}, wrt=wrt_of(W, b))
    return g, W, b


def wrt_one_node():
    g, W, b = backward_wrt(lambda W, b: W)
    assert W.grad is not None and b.grad is None    # wrt=W means wrt=[W]


def wrt_names():
    g, W, b = backward_wrt(lambda W, b: ["W", "b"])
    assert W.grad is not None and b.grad is not None


def wrt_stranger():
    stranger = mg.Parameter(1.0, name="stranger")
    backward_wrt(lambda W, b: [W, stranger])


def wrt_empty():
    g, W, b = backward_wrt(lambda W, b: [])
    assert W.grad is None and b.grad is None        # fresh gradients: none asked for


def in_place_clip():
    a, b = mg.Parameter([3.0, -4.0], name="a"), mg.Parameter([1.0, 2.0], name="b")
    mg.Graph(mg.sum(a + b)).backward()
    np.clip(a.grad, -0.5, 0.5, out=a.grad)
    assert np.array_equal(b.grad, [1.0, 1.0])


def vjp_returns_a_list():
    twice = mg.defop("twice", lambda x: 2 * x, [lambda g, ans, x: list(2 * g)])
    x = mg.Parameter([1.0, 2.0], name="x")
    mg.Graph(mg.sum(twice(x))).backward()
    assert np.array_equal(x.grad, [2.0, 2.0])


def forward_returns_a_list():
    listy = mg.defop("listy", lambda x: list(x * 3), [lambda g, ans, x: 3 * g])
    x = mg.Parameter([1.0, 2.0], name="x")
    assert mg.Graph(mg.sum(listy(x))).backward() == 9.0 and np.array_equal(x.grad, [3.0, 3.0])


def whole_floats_to_an_integer_input():
    assert np.array_equal(feed([2.0, 0.0], dtype=int), [4, 0])


def booleans_to_a_float_input():
    assert np.array_equal(feed([True, False]), [2.0, 0.0])


def one_parameter_to_an_optimizer():
    w = mg.Parameter(1.0, name="w")
    mg.Graph(w * w).backward()
    mg.optim.GD(w, lr=0.25).step()
    assert w.value == 0.5


def reassigning_a_new_shape():
    w = mg.Parameter([1.0, 2.0], name="w")
    g = mg.Graph(mg.sum(w * w))
    w.value = [[1.0], [2.0], [3.0]]
    assert g.backward() == 14.0 and w.grad.shape == (3, 1)


def minus_equals():
    W = mg.Parameter([1.0, 2.0], name="W")
    mg.Graph(mg.sum(W * W)).backward()
    W.value -= 0.1 * W.grad


def integer_one_hot_cross_entropy():
    z = mg.Parameter([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], name="z")
    one_hot = mg.Graph(mg.softmax_cross_entropy(z, mg.Constant([[0, 1, 0], [0, 0, 1]])))
    classes = mg.Graph(mg.softmax_cross_entropy(z, mg.Constant([1, 2])))
    loss = one_hot.backward()
    grad = z.grad
    assert loss == classes.backward() and np.array_equal(grad, z.grad)


def optimizer_update(update):
    w = mg.Parameter([1.0, 2.0], name="w")
    mg.Graph(mg.sum(w * w)).backward()
    opt = mg.optim.GD([w])
    opt.update = update
    opt.step()


def multi_output_op_returning_one_array():
    halves = mg.defop("halves", lambda x: x / 2, [lambda g, ans, x: g[0] / 2], n_outputs=2)
    first, _ = halves(mg.Parameter([1.0, 2.0], name="v"), name="h")
    mg.Graph(first).forward()


def op_of(forward, vjp=lambda g, ans, x: g, name="mine"):
    """A learner's one-input op applied to a Parameter p, its output named 'o'."""
    return mg.defop(name, forward, [vjp])(mg.Parameter([1.0, 2.0], name="p"), name="o")


def anomaly(fn):
    with mg.detect_anomaly(), np.errstate(invalid="ignore"):
        fn()


ROWS = [
    # -- feeds ------------------------------------------------------------------------------
    ("feed given as a list", lambda: scalar_graph()[0].forward([1.0, 2.0]),
     (mg.BadValueError, ["feed must be a dict", "x: ..."])),
    ("feed {x: None}", lambda: feed(None), (mg.BadValueError, ["Input 'x'", "None"])),
    ("feed a word", lambda: feed("hello"), (mg.BadValueError, ["Input 'x'", "is text", "hello"])),
    ("feed a number written as a string", lambda: feed("1.5"), (mg.BadValueError, ["Input 'x'", "is text"])),
    ("feed a ragged list", lambda: feed([[1.0, 2.0], [3.0]]), (mg.BadValueError, ["Input 'x'", "ragged"])),
    ("feed a Node as the value", lambda: feed(mg.Parameter(1.0, name="W")),
     (mg.BadValueError, ["Input 'x'", "the node 'W'", ".value"])),
    ("feed complex numbers", lambda: feed([1j]), (mg.BadValueError, ["Input 'x'", "complex numbers"])),
    ("integer Input fed 1.7", lambda: feed([1.7, 2.0], dtype=int),
     (mg.BadValueError, ["Input 'x'", "fractions (1.7)", "whole numbers"])),
    ("integer Input fed infinity", lambda: feed([np.inf, 2.0], dtype=int),
     (mg.BadValueError, ["Input 'x'", "NaN or infinity (inf)", "whole numbers"])),
    ("integer Input fed NaN", lambda: feed([1.0, np.nan], dtype=int),
     (mg.BadValueError, ["Input 'x'", "NaN or infinity (nan)", "whole numbers"])),
    ("integer Input fed 2.0 (whole)", whole_floats_to_an_integer_input, RIGHT),
    ("float Input fed booleans", booleans_to_a_float_input, RIGHT),
    ("an Input not fed", lambda: scalar_graph()[0].forward({}), (mg.MissingFeedError, ["Input 'x'", "feed"])),
    ("feeding a Parameter", lambda: scalar_graph()[0].forward({"W": 1.0}),
     (mg.GraphError, ["'W' (parameter", "not an Input", "x"])),
    ("feeding a name that is not in the graph", lambda: scalar_graph()[0].forward({"y": 1.0}),
     (mg.GraphError, ["no node named 'y'", "x, W"])),
    ("NaN fed inside detect_anomaly", lambda: anomaly(lambda: feed([np.nan])),
     (mg.NonFiniteError, ["'x'", "NaN"])),
    # -- leaves ------------------------------------------------------------------------------
    ("Parameter(None)", lambda: mg.Parameter(None, name="W"), (mg.BadValueError, ["Parameter 'W'", "None"])),
    ("Parameter from a list of Nodes", lambda: mg.Parameter([mg.Parameter(1.0), mg.Parameter(2.0)], name="W"),
     (mg.BadValueError, ["Parameter 'W'", "list of nodes", "mg.concatenate"])),
    ("Parameter from a string", lambda: mg.Parameter("0.5", name="W"), (mg.BadValueError, ["Parameter 'W'", "is text"])),
    ("Parameter from a ragged list", lambda: mg.Parameter([[1.0], [2.0, 3.0]], name="W"),
     (mg.BadValueError, ["Parameter 'W'", "ragged"])),
    ("Parameter starting at NaN", lambda: mg.Parameter([1.0, np.nan], name="W"),
     (mg.BadValueError, ["Parameter 'W'", "NaN or infinity"])),
    ("Parameter of integers", lambda: mg.Parameter([1, 2], name="W", dtype=int),
     (mg.BadValueError, ["Parameter 'W'", "dtype=<class 'int'> is not a floating", "Constant"])),
    ("W.value = None", lambda: setattr(mg.Parameter(1.0, name="W"), "value", None),
     (mg.BadValueError, ["new value of Parameter 'W'", "None"])),
    ("W.value = a new shape", reassigning_a_new_shape, RIGHT),
    ("W.value -= lr * W.grad", lambda: minus_equals(),
     (mg.GraphError, ["'W' is read-only", "W.value = W.value - lr * W.grad"])),
    ("assigning an Input's value", lambda: setattr(mg.Input("x"), "value", 1.0),
     (mg.GraphError, ["cannot assign", "'x' (input", "feed it"])),
    ("assigning an op's value", lambda: setattr(mg.tanh(mg.Parameter(1.0), name="t"), "value", 1.0),
     (mg.GraphError, ["cannot assign", "'t' (op", "assign a Parameter"])),
    ("Constant(None)", lambda: mg.Constant(None), (mg.BadValueError, ["Constant", "None"])),
    ("Input with a dtype that is not one", lambda: feed([1.0], dtype="banana"), (mg.BadValueError, ["dtype"])),
    # -- building ops ----------------------------------------------------------------------
    ("mg.sum([a, b]) on a Python list", lambda: mg.sum([mg.Parameter(1.0), mg.Parameter(2.0)]),
     (mg.BadValueError, ["input 1 of mg.sum is a list of nodes", "a + b"])),
    ("an op on a string", lambda: mg.tanh("x"), (mg.BadValueError, ["input 1 of mg.tanh is text"])),
    ("an op on None", lambda: mg.exp(None), (mg.BadValueError, ["input 1 of mg.exp is None"])),
    ("an attribute the op does not have", lambda: mg.sum(mg.Parameter([1.0]), axes=0),
     (mg.BadValueError, ["mg.sum has no attribute 'axes'", "axis"])),
    ("an index that is a node", lambda: mg.Parameter([1.0, 2.0], name="v")[mg.Input("i", dtype=int)],
     (mg.BadValueError, ["mg.getitem's attribute index is the node 'i'", "fixed", "x[0]"])),
    ("a node as an attribute", lambda: mg.leaky_relu(mg.Parameter([1.0]), mg.Parameter(0.1, name="a")),
     (mg.BadValueError, ["mg.leaky_relu's attribute slope is the node 'a'", "fixed", "inputs"])),
    ("too many positional arguments", lambda: mg.add(mg.Input("x"), 1.0, 2.0),
     (TypeError, ["add takes 2 input(s)", "given 3"])),
    ("mg.concatenate(a) without a list", lambda: mg.concatenate(mg.Parameter([1.0])),
     (mg.BadValueError, ["takes a non-empty list of nodes", "[a, b]"])),
    ("defop with one VJP not in a list", lambda: mg.defop("sq", lambda x: x * x, lambda g, ans, x: 2 * x * g),
     (mg.BadValueError, ["defop('sq'", "list of functions", "[vjp]"])),
    ("Graph(loss.value)", lambda: mg.Graph(computed_loss().value),
     (mg.BadValueError, ["Graph takes the node", "float64", "Graph(loss.value)"])),
    ("Graph([])", lambda: mg.Graph([]), (mg.BadValueError, ["Graph takes the node", "an empty list"])),
    ("Graph('loss')", lambda: mg.Graph("loss"), (mg.BadValueError, ["Graph takes the node", "'loss'"])),
    # -- running ops -------------------------------------------------------------------------
    ("matmul of shapes that do not fit",
     lambda: mg.Graph(mg.matmul(mg.Parameter(np.ones((2, 3)), name="A"), mg.Parameter(np.ones(2), name="v"), name="Av")).forward(),
     (mg.ShapeError, ["'Av' = matmul(A (parameter) shape (2, 3), v (parameter) shape (2,))", "Check the shapes"])),
    ("adding shapes that do not broadcast",
     lambda: mg.Graph(mg.add(mg.Parameter(np.ones(3), name="a"), mg.Parameter(np.ones(2), name="b"), name="s")).forward(),
     (mg.ShapeError, ["'s' = add(a (parameter) shape (3,), b (parameter) shape (2,))"])),
    ("sum over an axis that is not there", lambda: mg.Graph(mg.sum(mg.Parameter(np.ones((2, 3)), name="a"), axis=2, name="s")).forward(),
     (mg.ShapeError, ["'s' = sum(a (parameter) shape (2, 3))", "axis 2"])),
    ("indexing past the end", lambda: mg.Graph(mg.Parameter([1.0, 2.0], name="a")[5]).forward(),
     (mg.ShapeError, ["getitem(a (parameter) shape (2,))", "index 5"])),
    ("split into parts that do not divide", lambda: mg.Graph(mg.split(mg.Parameter(np.ones(5), name="a"), 2)[0]).forward(),
     (mg.ShapeError, ["split(a (parameter) shape (5,))", "equal division"])),
    ("reshape to a size that does not fit", lambda: mg.Graph(mg.reshape(mg.Parameter(np.ones(6), name="a"), (4,))).forward(),
     (mg.ShapeError, ["reshape(a (parameter) shape (6,))", "size 6"])),
    ("mse of (n, 1) against (n,)",
     lambda: mg.Graph(mg.mse(mg.Parameter(np.ones((3, 1)), name="p"), mg.Constant(np.ones(3)), name="L")).forward(),
     (mg.ShapeError, ["'L' = mse(p (parameter) shape (3, 1)", "(n, n)"])),
    ("labels out of range", lambda: mg.Graph(mg.softmax_cross_entropy(mg.Parameter(np.zeros((2, 3)), name="z"), mg.Constant([0, 3]), name="ce")).forward(),
     (mg.BadValueError, ["'ce' = softmax_cross_entropy(z (parameter) shape (2, 3)", "label 3 is not a class", "0 to 2"])),
    ("label -1", lambda: mg.Graph(mg.softmax_cross_entropy(mg.Parameter(np.zeros((2, 3)), name="z"), mg.Constant([0, -1]), name="ce")).forward(),
     (mg.BadValueError, ["'ce' = softmax_cross_entropy", "label -1 is not a class"])),
    ("class numbers next to one example's 1-D logits", lambda: mg.Graph(mg.softmax_cross_entropy(
        mg.Parameter(np.zeros(3), name="z"), mg.Constant([2, 0, 1]), name="ce")).forward(),
     (mg.ShapeError, ["'ce' = softmax_cross_entropy", "must be one-hot", "hold 2", "(n, C) logits"])),
    ("integer one-hot labels of the logits' shape", integer_one_hot_cross_entropy, RIGHT),
    ("float class labels", lambda: mg.Graph(mg.softmax_cross_entropy(mg.Parameter(np.zeros((2, 3)), name="z"), mg.Constant([0.0, 1.0]), name="ce")).forward(),
     (mg.ShapeError, ["'ce' = softmax_cross_entropy", "integer classes of shape (2,)", "float64"])),
    ("n_outputs=2, forward returns one array", multi_output_op_returning_one_array,
     (mg.OpError, ["'h' (halves)", "n_outputs=2", "tuple of 2 arrays"])),
    ("n_outputs=2, VJP takes g for one array", lambda: mg.Graph(mg.sum(mg.defop(
        "halves", lambda x: (x / 2, x / 2), [lambda g, ans, x: g * 0.5], n_outputs=2)(
        mg.Parameter([1.0, 2.0], name="v"), name="h")[0])).backward(),
     (mg.OpError, ["of 'h' = halves(v (parameter) shape (2,))", "tuple of 2 gradients", "g[0]"])),
    ("a forward that forgets return", lambda: mg.Graph(mg.defop("noisy", lambda x: None, [lambda g, ans, x: g])(mg.Parameter(1.0), name="n")).forward(),
     (mg.OpError, ["'n' (noisy) returned None", "forget `return`"])),
    ("a forward that returns a list", forward_returns_a_list, RIGHT),
    ("a forward that returns text", lambda: mg.Graph(mg.sum(op_of(lambda x: "done"))).forward(),
     (mg.OpError, ["'o' (mine) returned text", "numbers"])),
    ("n_outputs=1, forward returns a tuple", lambda: mg.Graph(mg.sum(op_of(lambda x: (x, x)))).forward(),
     (mg.OpError, ["'o' (mine) returned a tuple of 2 values", "n_outputs=1", "one array"])),
    ("a VJP that returns text", lambda: mg.Graph(mg.sum(op_of(lambda x: 2 * x, lambda g, ans, x: "2 * g"))).backward(),
     (mg.OpError, ["'o' (mine) returned text", "input 'p'"])),
    ("a VJP that returns a tuple of one gradient", lambda: mg.Graph(mg.sum(op_of(lambda x: 2 * x, lambda g, ans, x: (2 * g,)))).backward(),
     (mg.ShapeError, ["'o' (mine) returned a gradient", "tuple of 1", "return the gradient itself"])),
    ("mse of a batch of 0 examples", lambda: mg.Graph(mg.mse(
        mg.Parameter(np.zeros((0, 1)), name="p"), mg.Constant(np.zeros((0, 1))), name="L")).backward(),
     (mg.ShapeError, ["'L' = mse(p (parameter) shape (0, 1)", "empty", "0 examples"])),
    ("bce of a batch of 0 examples", lambda: mg.Graph(mg.bce_with_logits(
        mg.Parameter(np.zeros(0), name="z"), mg.Constant(np.zeros(0)), name="L")).backward(),
     (mg.ShapeError, ["'L' = bce_with_logits(z (parameter) shape (0,)", "empty", "0 examples"])),
    ("one-hot cross-entropy of 0 examples", lambda: mg.Graph(mg.softmax_cross_entropy(
        mg.Parameter(np.zeros((0, 3)), name="z"), mg.Constant(np.zeros((0, 3))), name="ce")).backward(),
     (mg.ShapeError, ["'ce' = softmax_cross_entropy(z (parameter) shape (0, 3)", "empty", "0 examples"])),
    ("a batch of 0 examples", lambda: mg.Graph(mg.softmax_cross_entropy(
        mg.Parameter(np.zeros((0, 3)), name="z"), mg.Constant(np.zeros(0, int)), name="ce")).forward(),
     (mg.ShapeError, ["'ce' = softmax_cross_entropy(z (parameter) shape (0, 3)", "empty", "0 examples"])),
    ("a VJP that forgets return", lambda: mg.Graph(mg.sum(mg.defop("lazy", lambda x: x, [lambda g, ans, x: None])(mg.Parameter([1.0], name="p"), name="l"))).backward(),
     (mg.OpError, ["'l' (lazy) returned None for its input 'p'", "forget `return`"])),
    ("a VJP that returns a list", vjp_returns_a_list, RIGHT),
    ("a VJP that sums too much", lambda: mg.Graph(mg.sum(mg.defop("sq", lambda x: x * x, [lambda g, ans, x: np.sum(2 * x * g)])(mg.Parameter([1.0, 2.0], name="p"), name="s"))).backward(),
     (mg.ShapeError, ["'s' (sq)", "'p' (parameter, shape (2,))", "summed too much"])),
    ("NaN produced inside detect_anomaly", lambda: anomaly(lambda: mg.Graph(mg.log(mg.Parameter(-1.0, name="p"), name="lg")).forward()),
     (mg.NonFiniteError, ["'lg' (log) produced NaN", "input p"])),
    # -- backward --------------------------------------------------------------------------
    ("backward(wrt=W), not a list", wrt_one_node, RIGHT),
    ("backward(wrt=['W', 'b']), names", wrt_names, RIGHT),
    ("backward(wrt=[]), nothing", wrt_empty, RIGHT),
    ("backward(wrt=[P]), P not in the graph", wrt_stranger,
     (mg.GraphError, ["stranger", "not part of this graph", "graph.parameters"])),
    ("backward(wrt=[W.value])", lambda: backward_wrt(lambda W, b: [W.value]),
     (mg.BadValueError, ["got an array", "not its value (W.value)"])),
    ("backward(wrt=3)", lambda: backward_wrt(lambda W, b: 3),
     (mg.BadValueError, ["expected a node of this graph or its name", "int"])),
    ("a seed that is text", lambda: mg.Graph(mg.tanh(mg.Parameter([1.0, 2.0]), name="t")).backward(seed="one"),
     (mg.BadValueError, ["seed", "is text"])),
    ("a seed that is a node", lambda: mg.Graph(mg.tanh(mg.Parameter([1.0, 2.0]), name="t")).backward(
        seed=mg.Parameter([1.0, 1.0], name="s")), (mg.BadValueError, ["seed", "the node 's'"])),
    ("backward of a vector without a seed", lambda: mg.Graph(mg.tanh(mg.Parameter([1.0, 2.0]), name="t")).backward(),
     (mg.GraphError, ["output 't' (op, shape (2,)) is not one", "mg.sum", "seed="])),
    ("a seed of the wrong shape", lambda: mg.Graph(mg.tanh(mg.Parameter([1.0, 2.0]), name="t")).backward(seed=[1.0]),
     (mg.ShapeError, ["seed gradient has shape (1,)", "'t' (op, shape (2,))"])),
    ("backward of a graph with two outputs", lambda: mg.Graph([mg.Parameter(1.0), mg.Parameter(2.0)]).backward(),
     (mg.GraphError, ["one output", "Graph(loss)"])),
    ("clipping a gradient in place", in_place_clip, RIGHT),
    # -- optimizers and layers ---------------------------------------------------------------
    ("optimizer given a model object", lambda: mg.optim.GD(mg.nn.MLP([2, 3, 1], rng=0), lr=0.1),
     (mg.BadValueError, ["GD takes a list of Parameters", "MLP", "model.parameters"])),
    ("optimizer given a layer", lambda: mg.optim.Adam(mg.nn.Linear(2, 3, rng=0)),
     (mg.BadValueError, ["Adam takes a list of Parameters", "Linear", "model.parameters"])),
    ("optimizer given a graph", lambda: mg.optim.GD(scalar_graph()[0]),
     (mg.BadValueError, ["GD takes a list of Parameters", "Graph", "graph.parameters"])),
    ("optimizer given an op node in the list", lambda: mg.optim.GD([mg.tanh(mg.Parameter(1.0), name="t")]),
     (mg.BadValueError, ["moves Parameters only", "'t' (op"])),
    ("optimizer given a layer inside the list", lambda: mg.optim.GD([mg.nn.Linear(2, 3, rng=0), mg.Parameter(1.0)]),
     (mg.BadValueError, ["moves Parameters only", "Linear", "layer.parameters"])),
    ("optimizer given a number in the list", lambda: mg.optim.GD([0.5]),
     (mg.BadValueError, ["moves Parameters only", "float 0.5"])),
    ("optimizer given one Parameter", one_parameter_to_an_optimizer, RIGHT),
    ("optimizer given a Parameter twice", lambda: mg.optim.Adam(scalar_graph()[0].parameters * 2),
     (mg.BadValueError, ["'W' is in the list twice", "move it twice", "once"])),
    ("a string learning rate", lambda: mg.optim.GD([mg.Parameter(1.0)], lr="0.1"),
     (mg.BadValueError, ["learning rate lr must be a finite number", "str '0.1'"])),
    ("a negative learning rate", lambda: mg.optim.Momentum([mg.Parameter(1.0)], lr=-0.1),
     (mg.BadValueError, ["Momentum's learning rate", "-0.1"])),
    ("an update that forgets return", lambda: optimizer_update(lambda value, grad, state: None),
     (mg.BadValueError, ["GD.update returned None", "Parameter 'w'", "forget `return`"])),
    ("an update of the wrong shape", lambda: optimizer_update(lambda value, grad, state: np.sum(value - grad)),
     (mg.ShapeError, ["GD.update returned scalar", "Parameter 'w' (shape (2,))"])),
    ("step before backward", lambda: mg.optim.GD([mg.Parameter(1.0, name="w")]).step(),
     (mg.GraphError, ["'w' has no gradient", "backward"])),
    ("an unknown activation", lambda: mg.nn.MLP([2, 3, 1], "relux"),
     (mg.BadValueError, ["unknown activation 'relux'", "tanh, sigmoid, relu"])),
    ("layer sizes that are not whole numbers", lambda: mg.nn.Linear(2.5, 3),
     (mg.BadValueError, ["n_in must be a whole number", "2.5"])),
    ("an MLP of one size", lambda: mg.nn.MLP([4]), (mg.BadValueError, ["MLP([2, 4, 1])", "[4]"])),
    ("two nodes with one name", lambda: mg.Graph(mg.Parameter(1.0, name="a") + mg.Parameter(2.0, name="a")),
     (mg.GraphError, ["two different nodes are named 'a'", "re-run"])),
]


@pytest.mark.parametrize("what, action, expected", ROWS, ids=[row[0] for row in ROWS])
def test_bad_input(what, action, expected):
    if expected == RIGHT:
        action()                                    # the row's function asserts the result
        return
    error_class, words = expected
    with pytest.raises(error_class) as caught:
        action()
    message = str(caught.value)
    for word in words:
        assert word in message, f"{what}: {word!r} not in {message!r}"
    if error_class is not TypeError:
        first = message.split(". ")[0]
        assert len(first) < 300, f"{what}: the key facts must come first, in a short sentence"


def test_the_table_is_long_enough():
    assert len(ROWS) >= 40 and len({row[0] for row in ROWS}) == len(ROWS)
