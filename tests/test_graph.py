"""Graph: order, forward/backward exactness on any DAG, incremental recompute, hooks, errors."""

import re

import numpy as np
import pytest

import minigraph as mg
from minigraph.gradcheck import numerical_grad


# -- exact gradients where toy engines go wrong -----------------------------------------------

def test_node_used_twice_by_one_op():
    x = mg.Parameter(3.0, name="x")
    mg.Graph(x * x).backward()
    assert x.grad == pytest.approx(6.0)          # not 3: both inputs' gradients are summed
    A = mg.Parameter([[1.0, 2.0], [3.0, 4.0]], name="A")
    mg.Graph(mg.sum(A @ A)).backward()
    ones = np.ones((2, 2))
    assert np.allclose(A.grad, ones @ A.value.T + A.value.T @ ones)


def test_x_plus_x_does_not_alias_gradients():
    x = mg.Parameter([1.0, 2.0], name="x")
    mg.Graph(mg.sum((x + x) * 3)).backward()
    assert np.allclose(x.grad, [6.0, 6.0])


def test_paths_of_different_lengths():
    """y = x * tanh(tanh(x)): x reaches y directly and through two tanh nodes."""
    x = mg.Parameter(0.7, name="x")
    y = x * mg.tanh(mg.tanh(x))
    mg.Graph(y).backward()
    t1, t2 = np.tanh(0.7), np.tanh(np.tanh(0.7))
    assert x.grad == pytest.approx(t2 + 0.7 * (1 - t2 ** 2) * (1 - t1 ** 2))


def test_diamond_gradients_sum():
    """a -> (b, c) -> d: d = b*c with b = 2a, c = a²: dd/da = 2*a² + 2a*2a = 6a²."""
    a = mg.Parameter(1.5, name="a")
    d = (2 * a) * (a ** 2)
    mg.Graph(d).backward()
    assert a.grad == pytest.approx(6 * 1.5 ** 2)


def test_gradients_are_fresh_for_each_backward_call():
    w = mg.Parameter(2.0, name="w")
    g = mg.Graph(w * w * w)
    g.backward()
    first = w.grad
    g.backward()
    assert w.grad == first == pytest.approx(12.0)   # not 24: nothing accumulates


# Random graphs of every kind, on both paths: tests/test_random_graphs.py


# -- order, depth, names ----------------------------------------------------------------------

def test_topological_order_puts_every_node_after_its_inputs():
    x = mg.Input("x")
    a = mg.tanh(x)
    out = a * mg.sigmoid(a) + x
    order = mg.Graph(out).nodes
    position = {n: i for i, n in enumerate(order)}
    assert all(position[p] < position[n] for n in order for p in n.inputs)
    assert len(order) == len(set(order)) == 5


def test_chain_100000_deep_forward_and_backward():
    x = mg.Parameter(0.0, name="x")
    node = x
    for _ in range(100_000):
        node = node + 1.0
    g = mg.Graph(node)
    assert g.backward() == pytest.approx(100_000.0)
    assert x.grad == pytest.approx(1.0)


def test_cycle_is_refused_with_the_nodes_named():
    x = mg.Parameter(1.0, name="x")
    a = mg.tanh(x, name="a")
    b = mg.sigmoid(a, name="b")
    a.inputs = (b,)                                  # rewire by hand into a loop
    with pytest.raises(mg.CycleError, match="a -> b -> a|b -> a -> b"):
        mg.Graph(b)


def test_automatic_names_are_readable_and_unique():
    x = mg.Input("x")
    ops = [mg.tanh(x), mg.tanh(x), x @ x]
    names = [n.name for n in ops]
    assert len(set(names)) == 3
    assert names[0].startswith("tanh_") and names[2].startswith("matmul_")


def test_two_nodes_with_one_name_in_a_graph_are_refused():
    with pytest.raises(mg.GraphError, match="two different nodes are named 'x'"):
        mg.Graph(mg.Input("x") + mg.Input("x"))


def test_feed_by_name_and_lookup():
    x = mg.Input("x")
    g = mg.Graph(2 * x)
    assert g.forward({"x": 3.0}) == 6.0
    assert g.node("x") is x and g.node(x) is x


# -- incremental recompute --------------------------------------------------------------------

def counting(graph):
    computed = []
    graph.register_forward_hook(lambda node, inputs, out: computed.append(node.name))
    return computed


def test_only_nodes_downstream_of_a_change_recompute():
    x, y = mg.Input("x"), mg.Input("y")
    w = mg.Parameter(2.0, name="w")
    left = mg.tanh(x * w, name="left")
    right = mg.sigmoid(y, name="right")
    g = mg.Graph(left + right)
    computed = counting(g)
    g.forward({x: 1.0, y: 2.0})
    assert len(computed) == 4                     # mul, left, right, add
    computed.clear()
    g.forward({x: 1.0, y: 3.0})                   # only y changed
    assert computed == ["right", g.outputs[0].name]
    computed.clear()
    g.forward({x: 1.0, y: 3.0})                   # nothing changed
    assert computed == []
    w.value = 5.0                                 # a parameter changed by hand
    g.forward()
    assert computed[:2] == [left.inputs[0].name, "left"] and "right" not in computed


def test_invalidate_makes_every_op_recompute():
    x = mg.Input("x")
    g = mg.Graph(mg.tanh(2 * x))
    computed = counting(g)
    g.forward({x: 1.0})
    g.invalidate()
    g.forward({x: 1.0})
    assert len(computed) == 4 and computed[:2] == computed[2:]


def test_optimizer_step_marks_parameters_changed():
    w = mg.Parameter(1.0, name="w")
    x = mg.Input("x")
    g = mg.Graph((w * x - 3.0) ** 2)
    opt = mg.optim.GD(g.parameters, lr=0.1)
    before = g.backward({x: 1.0})
    opt.step()
    assert g.forward({x: 1.0}) < before


def test_values_cannot_be_changed_in_place():
    W = mg.Parameter(np.zeros(2), name="W")
    with pytest.raises(mg.GraphError, match="'W' is read-only.*assign a new array instead"):
        W.value[0] = 1.0
    with pytest.raises(mg.GraphError, match="W.value = W.value - lr \\* W.grad"):
        W.value -= 0.1
    for method, args in [("fill", (0.0,)), ("sort", ()), ("put", ([0], [1.0]))]:
        with pytest.raises(mg.GraphError, match="'W' is read-only"):     # not numpy's bare error
            getattr(W.value, method)(*args)
    doubled = W * 2
    predictions = mg.Graph(doubled).forward()          # what forward returns is the value too
    with pytest.raises(mg.GraphError, match="read-only"):
        doubled.value[0] = 1.0
    with pytest.raises(mg.GraphError, match="value of 'mul_.*' is read-only.*compute a new array"):
        predictions[predictions > 0] = 1.0             # was numpy's bare "destination is read-only"
    copy = W.value.copy()                             # a copy, or anything computed, is yours
    copy -= 1.0
    assert type(copy) is type(W.value - 1.0) is np.ndarray and repr(W.value) == "array([0., 0.])"


def test_a_fresh_array_made_like_a_value_is_writable():
    """A learner's optimizer state starts as np.zeros_like(value): it is theirs to change."""
    W = mg.Parameter(np.ones(3), name="W")
    for make in (np.zeros_like, np.ones_like, np.empty_like, lambda v: np.full_like(v, 2.0)):
        v = make(W.value)
        v[0] = 5.0
        v += 1.0
        v *= 2.0
        v.sort(axis=0)                                # keywords pass through to numpy
        assert 12.0 in v                              # (v[0], moved by the sort)
    assert np.array_equal(W.value, np.ones(3))
    with pytest.raises(mg.GraphError, match="read-only"):
        W.value[1:] += 1.0                            # a view of the value stays the value's


def test_feeding_then_mutating_the_callers_array_does_not_leak_in():
    x = mg.Input("x")
    g = mg.Graph(x * 2)
    data = np.array([1.0, 2.0])
    g.forward({x: data})
    data[0] = 100.0
    assert np.allclose(g.forward({x: data}), [200.0, 4.0])


def test_a_feed_counts_as_changed_exactly_when_its_values_or_shape_change():
    x = mg.Input("x")
    g = mg.Graph(mg.sum(x * 2))
    computed = counting(g)
    g.forward({x: [1.0, 2.0, 3.0, 4.0]})
    g.forward({x: np.array([1.0, 2.0, 3.0, 4.0])})        # a new object, equal values
    assert len(computed) == 2                                 # mul and sum, once
    g.forward({x: [[1.0, 2.0], [3.0, 4.0]]})                  # same numbers, another shape
    assert len(computed) == 4 and x.value.shape == (2, 2)
    assert not x.value.flags.writeable


def test_wrt_plans_do_not_leak_into_each_other():
    x, W = mg.Input("x"), mg.Parameter(np.ones((3, 2)), name="W")
    b = mg.Parameter(np.zeros(2), name="b")
    g = mg.Graph(mg.sum(mg.tanh(x @ W + b)))
    feed = {x: np.arange(12.0).reshape(4, 3) / 10}
    g.backward(feed)
    everything = {n: n.grad for n in g.nodes}
    g.backward(feed, wrt=[b])
    assert W.grad is None and x.grad is None and np.allclose(b.grad, everything[b])
    g.backward(feed)
    assert all(np.allclose(n.grad, everything[n]) for n in g.nodes if everything[n] is not None)


def test_plain_python_numbers_from_a_learners_op_become_numpy_values():
    total = mg.defop("total", lambda x: float(np.sum(x)), [lambda g, ans, x: g * np.ones(x.shape)])
    halve = mg.defop("halve", lambda s: s / 2, [lambda g, ans, s: float(g) / 2])
    x = mg.Parameter([1.0, 2.0, 3.0], name="x")
    t = total(x)
    g = mg.Graph(halve(t) * 4)
    assert g.backward() == 12.0
    assert isinstance(t.value, np.ndarray) and t.value.shape == ()
    assert np.allclose(x.grad, 2.0) and isinstance(t.grad, np.ndarray)


# -- hooks ---------------------------------------------------------------------------------------

def test_forward_hooks_fire_in_order_with_inputs_and_output():
    x = mg.Input("x")
    a = mg.tanh(x, name="a")
    b = mg.mul(a, 3.0, name="b")
    g = mg.Graph(b)
    seen = []
    handle = g.register_forward_hook(lambda node, inputs, out: seen.append((node.name, inputs, out)))
    g.forward({x: 0.5})
    assert [s[0] for s in seen] == ["a", "b"]
    assert seen[0][1][0] == 0.5 and seen[0][2] == pytest.approx(np.tanh(0.5))
    assert seen[1][1][0] == pytest.approx(np.tanh(0.5)) and seen[1][2] == pytest.approx(3 * np.tanh(0.5))
    handle.remove()
    g.forward({x: 0.7})
    assert len(seen) == 2


def test_backward_hooks_see_upstream_and_input_gradients():
    x = mg.Parameter(2.0, name="x")
    y = mg.mul(x, x, name="y")
    out = mg.mul(y, 3.0, name="out")
    seen = []
    handle = y.register_backward_hook(lambda node, g_out, g_in: seen.append((g_out, g_in)))
    g = mg.Graph(out)
    g.backward()
    (g_out, (g0, g1)), = seen
    assert g_out == 3.0 and g0 == pytest.approx(6.0) and g1 == pytest.approx(6.0)
    handle.remove()
    g.backward()
    assert len(seen) == 1


def test_hooks_may_replace_values_and_gradients():
    x = mg.Parameter(2.0, name="x")
    y = mg.mul(x, 3.0, name="y")
    g = mg.Graph(y)
    h1 = y.register_forward_hook(lambda node, inputs, out: out * 10)
    assert g.forward() == 60.0
    h2 = y.register_backward_hook(lambda node, g_out, g_in: (g_in[0] * 0, g_in[1]))
    g.backward()
    assert x.grad == 0.0
    h1.remove(), h2.remove()
    x.value = 2.0                                # stamp it so y recomputes without the hook
    assert g.forward() == 6.0


HOOK_MISTAKES = [     # (a hook on t = tanh(x), x of shape (2,); what the error must say)
    ("forward", lambda node, inputs, out: np.ones(3),
     mg.ShapeError, "forward hook on 't' \\(tanh\\) returned shape \\(3,\\) for a value of shape \\(2,\\)"),
    ("forward", lambda node, inputs, out: 1 / 0,
     mg.OpError, "forward hook on 't' \\(tanh\\) raised ZeroDivisionError"),
    ("backward", lambda node, g, grads: (np.ones(3),),
     mg.ShapeError, "backward hook on 't' \\(tanh\\) returned a gradient \\(shape \\(3,\\)\\) for its input 'x'"),
    ("backward", lambda node, g, grads: np.ones(2),
     mg.GraphError, "backward hook on 't' \\(tanh\\) returned shape \\(2,\\).*a tuple of 1 gradient"),
    ("backward", lambda node, g, grads: (grads[0], grads[0]),
     mg.GraphError, "backward hook on 't' \\(tanh\\) returned 2 values.*a tuple of 1 gradient"),
    ("backward", lambda node, g, grads: 1 / 0,
     mg.OpError, "backward hook on 't' \\(tanh\\) raised ZeroDivisionError.*handle.remove"),
    ("backward", lambda node, g, grads: np.clip(g, -1, 1, out=g),
     mg.OpError, "backward hook on 't' \\(tanh\\) raised ValueError.*in place.*return the new"),
]


@pytest.mark.parametrize("kind, hook, error, message", HOOK_MISTAKES)
def test_a_hook_that_breaks_the_rules_is_named(kind, hook, error, message):
    x = mg.Parameter([1.0, 2.0], name="x")
    t = mg.tanh(x, name="t")
    getattr(t, f"register_{kind}_hook")(hook)
    with pytest.raises(error, match=message):
        mg.Graph(mg.sum(t * t)).backward()


def test_wrt_skips_gradients_nobody_asked_for():
    x, W = mg.Input("x"), mg.Parameter(np.ones((3, 2)), name="W")
    loss = mg.sum(x @ W)
    g = mg.Graph(loss)
    g.backward({x: np.ones((4, 3))}, wrt=[W])
    assert x.grad is None and np.allclose(W.grad, 4.0)
    assert loss.grad is None and loss.inputs[0].grad is None      # only the wrt nodes get one
    g.backward({x: np.ones((4, 3))})
    assert np.allclose(x.grad, 2.0)


def test_seed_gives_a_vector_jacobian_product():
    x = mg.Parameter([1.0, 2.0], name="x")
    g = mg.Graph(x * x)
    g.backward(seed=[1.0, 10.0])
    assert np.allclose(x.grad, [2.0, 40.0])
    assert np.allclose(numerical_grad(g, x, seed=[1.0, 10.0]), [2.0, 40.0], atol=1e-5)


# -- errors a learner understands -----------------------------------------------------------------

def test_missing_feed_names_the_input():
    x, y = mg.Input("x"), mg.Input("labels")
    with pytest.raises(mg.MissingFeedError, match="Input 'labels' has no value"):
        mg.Graph(x * y).forward({x: 1.0})


def test_shape_mismatch_names_op_inputs_and_shapes():
    x = mg.Input("x")
    W = mg.Parameter(np.ones((2, 2)), name="W")
    z = mg.matmul(W, x, name="z")
    with pytest.raises(mg.ShapeError) as info:
        mg.Graph(z).forward({x: [1.0, 2.0, 3.0]})
    message = str(info.value)
    for part in ["'z'", "matmul", "W (parameter) shape (2, 2)", "x (input) shape (3,)"]:
        assert part in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_backward_of_non_scalar_asks_for_a_seed():
    x = mg.Parameter([1.0, 2.0], name="x")
    with pytest.raises(mg.GraphError, match=r"not one.*seed=np.ones\(\(2,\)\)"):
        mg.Graph(mg.tanh(x)).backward()


def test_anomaly_mode_names_the_node_that_made_nan():
    x = mg.Input("x")
    out = mg.sum(mg.log(x, name="logx") * 0.0)
    g = mg.Graph(out)
    with np.errstate(divide="ignore", invalid="ignore"):
        g.forward({x: [0.0, 1.0]})                 # outside: inf flows silently (numpy's way)
        with mg.detect_anomaly(), pytest.raises(mg.NonFiniteError, match="'logx' \\(log\\) produced"):
            g.forward({x: [0.0, 2.0]})
        g.backward({x: [1.0, 2.0]})
        g.backward({x: [1.0, 3.0]})                  # a second backward: the generated code
        with mg.detect_anomaly(), pytest.raises(mg.NonFiniteError, match="'logx' \\(log\\) produced"):
            g.backward({x: [0.0, 3.0]})


def test_backward_before_any_forward_just_works():
    x = mg.Input("x")
    w = mg.Parameter(3.0, name="w")
    assert mg.Graph(w * x).backward({x: 2.0}) == 6.0 and w.grad == 2.0


def test_a_broken_backward_is_named():
    bad = mg.defop("bad_square", lambda x: x * x, [lambda g, ans, x: np.sum(2 * x * g)])
    x = mg.Parameter([1.0, 2.0], name="x")
    with pytest.raises(mg.ShapeError, match="backward of 'sq' \\(bad_square\\) returned a gradient \\(scalar\\)"):
        mg.Graph(mg.sum(bad(x, name="sq"))).backward()
    crash = mg.defop("crash", lambda x: x, [lambda g, ans, x: undefined_name])  # noqa: F821
    with pytest.raises(mg.OpError, match="(?s)backward \\(the gradient for input 'x'\\) of 'c'.*fix its backward.*NameError"):
        mg.Graph(mg.sum(crash(x, name="c"))).backward()


WRONG_GRADIENTS = [   # a learner's matmul VJP for W, and what its wrong shape must be called
    ("transposed", lambda g, x, W: g.T @ x, "shape reversed: a transposed gradient.*swap the operands"),
    ("summed too much", lambda g, x, W: np.sum(x.T @ g), "fewer entries than the input.*do not reduce"),
    ("not unbroadcast", lambda g, x, W: np.broadcast_to(x.T @ g, (5, 3, 2)) + 0,
     "broadcast in the forward pass.*mg.unbroadcast"),
    ("flattened", lambda g, x, W: (x.T @ g).ravel(), "as many entries as the input: reshape"),
]


@pytest.mark.parametrize("mistake, vjp, advice", WRONG_GRADIENTS, ids=[w[0] for w in WRONG_GRADIENTS])
def test_a_wrong_gradient_shape_is_told_apart_by_what_it_looks_like(mistake, vjp, advice):
    my_matmul = mg.defop("my_matmul", lambda x, W: x @ W,
                         [lambda g, ans, x, W: g @ W.T, lambda g, ans, x, W: vjp(g, x, W)])
    x, W = mg.Constant(np.ones((4, 3))), mg.Parameter(np.ones((3, 2)), name="W")
    g = mg.Graph(mg.sum(my_matmul(x, W, name="xW")))
    with pytest.raises(mg.ShapeError) as caught:
        g.backward()
    message = str(caught.value)
    first = message.split(". ")[0]             # the key facts come first
    assert "'xW' (my_matmul)" in first and "'W' (parameter, shape (3, 2))" in first
    assert re.search(advice, message), message
    assert sum(phrase in message for phrase in ("transposed", "summed too much", "unbroadcast",
                                                "reshape it")) == 1   # one diagnosis, not all


def test_a_vjp_that_forgets_return_is_named():
    forgetful = mg.defop("forgetful", lambda x: 2 * x, [lambda g, ans, x: None if True else 2 * g])
    x = mg.Parameter([1.0, 2.0], name="x")
    g = mg.Graph(mg.sum(forgetful(x, name="twice")))
    for _ in range(3):                         # the interpreter, then the generated code: the same
        with pytest.raises(mg.OpError, match="'twice' \\(forgetful\\) returned None for its input 'x'.*forget `return`"):
            g.backward()


def test_an_op_that_writes_into_what_it_is_given_is_named():
    """``g *= 2 * x`` in a VJP would change the gradient add hands to a as well (silently wrong
    numbers); ``x *= 2`` in a forward would change x's value. Both are refused at the first call."""
    x = mg.Parameter([1.0, 2.0], name="x")
    a = x + 0.0                                # add hands its g to a and to the square, below
    square = mg.defop("my_square", lambda x: x * x, [lambda g, ans, x: np.multiply(g, 2 * x, out=g)])
    g = mg.Graph(mg.sum((square(a, name="sq") + a) * 3.0))
    for _ in range(2):                         # the generated code waits for a first run without error
        with pytest.raises(mg.OpError, match="(?s)backward.*of 'sq' = my_square.*in place.*g = g \\*"):
            g.backward()
    double = mg.defop("my_double", lambda x: x.__imul__(2), [lambda g, ans, x: 2 * g])
    with pytest.raises(mg.OpError, match="(?s)forward of 'd' = my_double.*in place"):
        mg.Graph(double(x, name="d")).forward()
    with mg.detect_anomaly(), pytest.raises(mg.OpError, match="in place"):
        g.backward()                            # inside detect_anomaly, at every call


def test_each_node_owns_its_gradient_array():
    """add hands the same g to both inputs: clipping a.grad in place must not change b.grad."""
    a, b = mg.Parameter([3.0, -4.0], name="a"), mg.Parameter([1.0, 1.0], name="b")
    s = mg.add(a, b, name="s")
    g = mg.Graph(mg.sum(s * mg.Constant([5.0, 5.0])))
    for _ in range(3):                         # the interpreter, then the generated code
        g.backward()
        grads = [n.grad for n in g.nodes if n.grad is not None and n.grad.ndim]
        assert len({id(x) for x in grads}) == len(grads) and all(x.flags.writeable for x in grads)
        np.clip(a.grad, -1, 1, out=a.grad)
        assert np.array_equal(a.grad, [1.0, 1.0]) and np.array_equal(b.grad, [5.0, 5.0])
        assert np.array_equal(s.grad, [5.0, 5.0])
    seed = np.array([1.0, 2.0])
    h = mg.Graph(s)
    h.backward(seed=seed)
    a.grad[0] = 100.0
    assert np.array_equal(seed, [1.0, 2.0]) and np.array_equal(b.grad, [1.0, 2.0])


def test_errors_about_a_big_graph_list_a_few_of_its_names_not_all():
    xs = [mg.Input(f"x{t}") for t in range(500)]
    g = mg.Graph(mg.concatenate(xs, name="all"))
    for action in (lambda: g.node("nope"), lambda: g.forward({}), lambda: g.forward({"all": 1.0})):
        with pytest.raises(mg.GraphError, match=r"x0, x1, .*, \.\.\. \((500|501) in all\)") as caught:
            action()
        assert len(str(caught.value)) < 400


def test_feeding_something_that_is_not_an_input_of_the_graph():
    x, stranger = mg.Input("x"), mg.Input("stranger")
    W = mg.Parameter(1.0, name="W")
    g = mg.Graph(W * x)
    with pytest.raises(mg.GraphError, match="'stranger'.*not part of this graph"):
        g.forward({x: 1.0, stranger: 2.0})
    with pytest.raises(mg.GraphError, match="a parameter, not an Input"):
        g.forward({x: 1.0, W: 2.0})
    with pytest.raises(mg.GraphError, match="no node named 'y'"):
        g.forward({"y": 1.0})


def test_step_before_backward_says_what_to_do():
    w = mg.Parameter(1.0, name="w")
    with pytest.raises(mg.GraphError, match="Run graph.backward"):
        mg.optim.GD([w]).step()


def test_reprs_are_stable_text():
    x = mg.Input("x")
    y = mg.tanh(x, name="y")
    mg.Graph(y).forward({x: [1.0, 2.0]})
    assert repr(x) == "Input('x', shape (2,))"
    assert repr(y) == "Op('y' = tanh(x), shape (2,))"
