"""Chapter 03 (backpropagation): typical wrong answers and different right answers."""

import numpy as np

import minigraph as mg

from . import wrong
from .ch02 import topo_stack


# -- 03.mul_vjp ----------------------------------------------------------------------------------

def sum_to(gradient, shape):
    """Sum a gradient back to ``shape`` by hand: leading axes away, stretched axes kept as 1."""
    while gradient.ndim > len(shape):
        gradient = gradient.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and gradient.shape[axis] != 1:
            gradient = gradient.sum(axis=axis, keepdims=True)
    return gradient


def mul_vjp_by_hand(g, ans, x, y):
    return sum_to(g * y, np.shape(x)), sum_to(g * x, np.shape(y))


def mul_vjp_unbroadcast_y_only(g, ans, x, y):
    return g * y, mg.unbroadcast(g * x, np.shape(y))


# -- 03.matmul_vjp ----------------------------------------------------------------------------------

def matmul_vjp_loops(g, ans, x, W):
    grad_x, grad_W = np.zeros_like(x), np.zeros_like(W)
    for n in range(x.shape[0]):
        grad_x[n] = W @ g[n]
        grad_W += np.outer(x[n], g[n])
    return grad_x, grad_W


# -- 03.central_difference ----------------------------------------------------------------------------

def central(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def central_bump_and_restore(f, x, eps=1e-6):
    x = np.array(x, dtype=float)
    grad = np.empty_like(x)
    for i in np.ndindex(x.shape):
        keep = x[i]
        x[i] = keep + eps
        above = f(x)
        x[i] = keep - eps
        below = f(x)
        x[i] = keep
        grad[i] = (above - below) / (2 * eps)
    return grad


def central_with_an_identity(f, x, eps=1e-6):
    steps = np.eye(x.size).reshape(x.size, *x.shape) * eps
    return np.array([(f(x + step) - f(x - step)) / (2 * eps) for step in steps]).reshape(x.shape)


def one_sided(f, x, eps=1e-6):
    at_x = f(x)
    steps = np.eye(x.size).reshape(x.size, *x.shape) * eps
    return np.array([(f(x + step) - at_x) / eps for step in steps]).reshape(x.shape)


def divided_by_eps(f, x, eps=1e-6):
    return 2 * central(f, x, eps)          # the same differences, divided by eps only


def all_entries_at_once(f, x, eps=1e-6):
    return np.full(x.shape, (f(x + eps) - f(x - eps)) / (2 * eps))


def bumps_x_itself(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        x[i] += eps
        above = f(x)
        x[i] -= 2 * eps
        grad[i] = (above - f(x)) / (2 * eps)
    return grad


def flat_only(f, x, eps=1e-6):
    grad = np.zeros(x.size)
    flat = x.ravel()
    for i in range(x.size):
        up, down = flat.copy(), flat.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up.reshape(x.shape)) - f(down.reshape(x.shape))) / (2 * eps)
    return grad


def tanh_vjp_by_the_engine(g, ans, x):
    """The engine's backward pass through mg.tanh does the exercise."""
    p = mg.Parameter(x, name="p")
    mg.Graph(mg.sum(mg.tanh(p) * mg.Constant(g))).backward()
    return p.grad


HAND = {"L": 1.0, "c": -2.0, "a": -1.0, "b": -2.0, "w": -2.0, "x": 1.0}

# the engine's functions taken before any check runs (a reference kept, another module path)
TANH_VJP = mg.tanh.opdef.vjps[0]
KEPT_BACKWARD = mg.Graph.backward



# -- 03.backward: right answers, each written another way ---------------------------------------

def backward_graph_order(loss, values):
    grads = {loss: np.ones_like(values[loss])}
    for node in reversed(mg.Graph(loss).nodes):
        if node.op is None:
            continue
        args = [values[p] for p in node.inputs]
        for k, parent in enumerate(node.inputs):
            gk = mg.unbroadcast(node.op.vjps[k](grads[node], values[node], *args, **node.attrs),
                                np.shape(values[parent]))
            grads[parent] = grads[parent] + gk if parent in grads else gk
    for node in grads:
        if isinstance(node, mg.Parameter):
            node.grad = grads[node]
    return grads


def backward_iterative_defaultdict(loss, values):
    from collections import defaultdict
    grads = defaultdict(lambda: 0.0)
    grads[loss] = np.ones(np.shape(values[loss]))
    for node in topo_stack(loss)[::-1]:
        if node.op is not None:
            for k, parent in enumerate(node.inputs):
                rule = node.op.vjps[k]
                gk = rule(grads[node], values[node], *(values[p] for p in node.inputs), **node.attrs)
                grads[parent] = grads[parent] + mg.unbroadcast(gk, np.shape(values[parent]))
        elif node.kind == "parameter":
            node.grad = grads[node]
    return dict(grads)


def backward_recursive_order(loss, values):
    order, seen = [], set()

    def visit(node):
        if node not in seen:
            seen.add(node)
            for parent in node.inputs:
                visit(parent)
            order.append(node)

    visit(loss)
    grads = {node: np.zeros(np.shape(values[node])) for node in order}
    grads[loss] = grads[loss] + 1
    for node in reversed(order):
        for k, parent in enumerate(node.inputs):
            gk = node.op.vjps[k](grads[node], values[node], *[values[p] for p in node.inputs], **node.attrs)
            grads[parent] = grads[parent] + mg.unbroadcast(gk, np.shape(values[parent]))
    for node in order:
        if node.kind == "parameter":
            node.grad = grads[node]
    return grads


def backward_recursive_pull(loss, values):
    """Each node's gradient pulled from its consumers, recursively, with a memo."""
    consumers, todo, seen = {}, [loss], {loss}
    while todo:
        node = todo.pop()
        for k, parent in enumerate(node.inputs):
            consumers.setdefault(parent, []).append((node, k))
            if parent not in seen:
                seen.add(parent)
                todo.append(parent)
    grads = {}

    def grad(node):
        if node not in grads:
            total = np.ones_like(values[loss]) if node is loss else np.zeros(np.shape(values[node]))
            for consumer, k in consumers.get(node, []):
                args = [values[p] for p in consumer.inputs]
                share = consumer.op.vjps[k](grad(consumer), values[consumer], *args, **consumer.attrs)
                total = total + mg.unbroadcast(share, np.shape(values[node]))
            grads[node] = total
        return grads[node]

    for node in seen:
        grad(node)
        if node.kind == "parameter":
            node.grad = grads[node]
    return grads


def backward_seeded_with_one(loss, values):
    """The seed as the number 1 (a loss is one number), Constants given zeros, a comprehension."""
    order = mg.Graph(loss).nodes
    grads = {node: np.zeros(np.shape(values[node])) for node in order}
    grads[loss] = 1.0
    for node in order[::-1]:
        if node.op is None:
            continue
        shares = [rule(grads[node], values[node], *[values[p] for p in node.inputs], **node.attrs)
                  for rule in node.op.vjps]
        for parent, share in zip(node.inputs, shares):
            grads[parent] = grads[parent] + mg.unbroadcast(share, np.shape(values[parent]))
    for node in order:
        if node.kind == "constant":
            grads[node] = np.zeros(np.shape(values[node]))
        elif node.kind == "parameter":
            node.grad = grads[node]
    return grads


def backward_recursive_comprehension(loss, values):
    """A recursive walk written with a list comprehension (two Python calls per level), a
    gradient started from np.zeros and added to in place, the Constants left out."""
    seen = set()

    def visit(node):
        if node in seen:
            return []
        seen.add(node)
        return [n for parent in node.inputs for n in visit(parent)] + [node]

    grads = {loss: np.ones_like(values[loss], dtype=float)}
    for node in reversed(visit(loss)):
        if node.op is None:
            if node.kind == "parameter":
                node.grad = grads[node]
            continue
        for k, parent in enumerate(node.inputs):
            share = node.op.vjps[k](grads[node], values[node], *[values[p] for p in node.inputs], **node.attrs)
            if parent.kind != "constant":
                grads.setdefault(parent, np.zeros(np.shape(values[parent])))
                grads[parent] += mg.unbroadcast(share, np.shape(values[parent]))
    return grads


# -- 03.backward: typical wrong answers -----------------------------------------------------------

def walked(order, seed=np.ones_like, add=True, unbroadcast=True, attrs=True, ans_of_parent=False,
           set_grad=True, value_dtype=False):
    """A learner's backward, walking ``order(loss)``, with one slip or another."""

    def backward(loss, values):
        grads = {loss: seed(values[loss])}
        for node in order(loss):
            if node.op is None or node not in grads:
                continue
            args = [values[p] for p in node.inputs]
            for k, parent in enumerate(node.inputs):
                ans = values[parent] if ans_of_parent else values[node]
                gk = node.op.vjps[k](grads[node], ans, *args, **(node.attrs if attrs else {}))
                if unbroadcast:
                    gk = mg.unbroadcast(gk, np.shape(values[parent]))
                if value_dtype:                         # "a gradient has its value's type"
                    gk = np.asarray(gk, dtype=np.result_type(values[parent]))
                grads[parent] = grads[parent] + gk if add and parent in grads else gk
        return set_grads(grads) if set_grad else grads

    return backward


def reverse_order(loss):
    return reversed(mg.Graph(loss).nodes)


def breadth_first_order(loss):
    order, queue = [loss], [loss]
    while queue:
        node = queue.pop(0)
        for parent in node.inputs:
            if parent not in order:
                order.append(parent)
                queue.append(parent)
    return order


def backward_forward_order_keyerror(loss, values):
    grads = {loss: np.ones_like(values[loss])}
    for node in mg.Graph(loss).nodes:
        if node.op is not None:
            for k, parent in enumerate(node.inputs):
                gk = node.op.vjps[k](grads[node], values[node], *[values[p] for p in node.inputs], **node.attrs)
                grads[parent] = grads.get(parent, 0) + mg.unbroadcast(gk, np.shape(values[parent]))
    return grads


def send_shares(node, grads, values):
    """Each input of the op ``node`` gets its share of ``grads[node]``, summed back and added."""
    for k, parent in enumerate(node.inputs):
        gk = node.op.vjps[k](grads[node], values[node], *[values[p] for p in node.inputs], **node.attrs)
        gk = mg.unbroadcast(gk, np.shape(values[parent]))
        grads[parent] = grads[parent] + gk if parent in grads else gk


def set_grads(grads):
    for node in grads:
        if node.kind == "parameter":
            node.grad = grads[node]
    return grads


def backward_paths(loss, values):
    """A stack without a seen set: a shared node is pushed (and sends its gradient) once per consumer."""
    grads, stack = {loss: np.ones_like(values[loss])}, [loss]
    while stack:
        node = stack.pop()
        if node.op is not None:
            send_shares(node, grads, values)
            stack += node.inputs
    return set_grads(grads)


def backward_adds_onto_grad(loss, values):
    grads = walked(reverse_order, set_grad=False)(loss, values)
    for node in grads:
        if node.kind == "parameter":
            node.grad = grads[node] if node.grad is None else node.grad + grads[node]
    return grads


def backward_default_dict(loss, values, grads={}):
    grads[loss] = np.ones_like(values[loss])
    for node in reversed(mg.Graph(loss).nodes):
        if node.op is not None:
            send_shares(node, grads, values)
    return set_grads(grads)


def backward_by_the_engine(loss, values):
    graph = mg.Graph(loss)
    graph.backward({n: values[n] for n in graph.inputs})
    return {n: n.grad for n in graph.nodes}


def backward_by_a_kept_engine(loss, values):
    graph = mg.Graph(loss)
    KEPT_BACKWARD(graph, {n: values[n] for n in graph.inputs})
    return {n: n.grad for n in graph.nodes}


def backward_deletes_values(loss, values):
    """Frees each value once its node is done: the caller's dict loses its entries."""
    grads = {loss: np.ones_like(values[loss])}
    for node in reversed(mg.Graph(loss).nodes):
        if node.op is not None:
            send_shares(node, grads, values)
        del values[node]
    return set_grads(grads)


def backward_reads_node_value(loss, values):
    """Reads each node's .value (left by the last forward pass) instead of values[node]."""
    grads = {loss: np.ones_like(loss.value)}
    for node in reversed(mg.Graph(loss).nodes):
        if node.op is not None:
            args = [p.value for p in node.inputs]
            for k, parent in enumerate(node.inputs):
                gk = mg.unbroadcast(node.op.vjps[k](grads[node], node.value, *args, **node.attrs),
                                    np.shape(parent.value))
                grads[parent] = grads[parent] + gk if parent in grads else gk
    return set_grads(grads)


MEMO = {}


def backward_module_memo(loss, values):
    """Keeps the gradients of each loss in a dict at the top of the notebook."""
    if loss not in MEMO:
        MEMO[loss] = walked(reverse_order)(loss, values)
    return set_grads(MEMO[loss])


def summed_over_axis_0(share, shape):
    return share.sum(axis=0) if np.shape(share) != shape else share


def backward_sum_axis_0(loss, values):
    """Sums a stretched share over the rows only."""
    grads = {loss: np.ones_like(values[loss])}
    for node in reversed(mg.Graph(loss).nodes):
        if node.op is not None:
            for k, parent in enumerate(node.inputs):
                gk = node.op.vjps[k](grads[node], values[node], *[values[p] for p in node.inputs], **node.attrs)
                gk = summed_over_axis_0(gk, np.shape(values[parent]))
                grads[parent] = grads[parent] + gk if parent in grads else gk
    return set_grads(grads)


def backward_summed_late(loss, values):
    """Adds the shares as they come and sums a node's gradient back to its shape when it is used."""
    grads = {loss: np.ones_like(values[loss])}
    for node in reversed(mg.Graph(loss).nodes):
        grads[node] = mg.unbroadcast(grads[node], np.shape(values[node]))
        if node.op is not None:
            for k, parent in enumerate(node.inputs):
                gk = node.op.vjps[k](grads[node], values[node], *[values[p] for p in node.inputs], **node.attrs)
                grads[parent] = grads[parent] + gk if parent in grads else gk
    return set_grads(grads)


def backward_zeros_like(loss, values):
    """Starts every gradient as np.zeros_like(value) and adds the shares in place."""
    order = mg.Graph(loss).nodes
    grads = {node: np.zeros_like(values[node]) for node in order}
    grads[loss] += 1
    for node in reversed(order):
        if node.op is not None:
            for k, parent in enumerate(node.inputs):
                gk = node.op.vjps[k](grads[node], values[node], *[values[p] for p in node.inputs], **node.attrs)
                grads[parent] += mg.unbroadcast(gk, np.shape(values[parent]))
    return set_grads(grads)


def backward_aliasing(loss, values):
    """Keeps the first share it gets as the node's gradient, and adds later ones into it in place."""
    grads = {loss: np.ones_like(values[loss])}
    for node in reversed(mg.Graph(loss).nodes):
        if node.op is not None:
            for k, parent in enumerate(node.inputs):
                gk = mg.unbroadcast(node.op.vjps[k](grads[node], values[node], *[values[p] for p in node.inputs],
                                                    **node.attrs), np.shape(values[parent]))
                if parent in grads:
                    grads[parent] += gk
                else:
                    grads[parent] = gk
    return set_grads(grads)


def backward_by_names(loss, values):
    return {node.name: grad for node, grad in walked(reverse_order)(loss, values).items()}


WRONG = {
    "03.tanh_vjp": {
        "the engine's rule, kept before the check": wrong(lambda g, ans, x: TANH_VJP(g, ans, x), "engine's own backward rule", "mg.tanh.opdef.vjps"),
        "forgets g": wrong(lambda g, ans, x: 1 - ans ** 2, "upstream gradient g"),
        "wrong sign": wrong(lambda g, ans, x: -g * (1 - ans ** 2), "sign"),
        "tanh not squared": wrong(lambda g, ans, x: g * (1 - ans), "squared"),
        "x instead of tanh(x)": wrong(lambda g, ans, x: g * (1 - x ** 2), "with x where"),
        "sigmoid's derivative": wrong(lambda g, ans, x: g * ans * (1 - ans), "sigmoid"),
        "sums too much": wrong(lambda g, ans, x: np.sum(g * (1 - ans ** 2)), "summed into one number",
                               "fewer entries"),
        "the engine's own rule": wrong(mg.tanh.opdef.vjps[0], "engine's own backward rule"),
        "the engine's backward pass": wrong(tanh_vjp_by_the_engine, "engine's own backward rule"),
    },
    "03.mul_vjp": {
        "no unbroadcast": wrong(lambda g, ans, x, y: (g * y, g * x), "not summed back"),
        "unbroadcast only for y": wrong(mul_vjp_unbroadcast_y_only, "gradient for x", "not summed back"),
        "the gradients swapped": wrong(lambda g, ans, x, y: (g * x, g * y), "swapped", "other"),
        "forgets g": wrong(lambda g, ans, x, y: (y, x), "upstream gradient g"),
        "summed to numbers": wrong(lambda g, ans, x, y: (np.sum(g * y), np.sum(g * x)), "one number"),
        "addition's rule": wrong(lambda g, ans, x, y: (mg.unbroadcast(g, np.shape(x)), mg.unbroadcast(g, np.shape(y))),
                                 "rule of addition"),
        "a single gradient": wrong(lambda g, ans, x, y: g * y * x, "must return a pair"),
        "the engine's own rules": wrong(lambda g, ans, x, y: tuple(vjp(g, ans, x, y) for vjp in mg.mul.opdef.vjps),
                                        "engine's own backward rule"),
    },
    "03.matmul_vjp": {
        "grad W transposed": wrong(lambda g, ans, x, W: (g @ W.T, g.T @ x), "gradient for w is transposed",
                                   "shape reversed"),
        "grad x transposed": wrong(lambda g, ans, x, W: (W @ g.T, x.T @ g), "gradient for x is transposed"),
        "forgets g": wrong(lambda g, ans, x, W: (np.ones_like(g) @ W.T, x.T @ np.ones_like(g)),
                           "upstream gradient g"),
        "averages the batch": wrong(lambda g, ans, x, W: (g @ W.T, x.T @ g / len(x)), "averages", "sum"),
        "only the first row": wrong(lambda g, ans, x, W: (g @ W.T, x[:1].T @ g[:1]), "first row"),
        "wrong sign": wrong(lambda g, ans, x, W: (-(g @ W.T), -(x.T @ g)), "sign"),
        "elementwise products": wrong(lambda g, ans, x, W: (g * W.T, x.T * g), "shape"),
        "the engine's own rules": wrong(lambda g, ans, x, W: (mg.matmul.opdef.vjps[0](g, ans, x, W),
                                                              mg.matmul.opdef.vjps[1](g, ans, x, W)),
                                        "engine's own backward rule"),
    },
    "03.backward": {
        "forward order": wrong(walked(lambda loss: mg.Graph(loss).nodes), "forward (topological) order"),
        "forward order, a gradient looked up before it arrived": wrong(backward_forward_order_keyerror,
                                                                       "reverse topological order"),
        "breadth-first from the loss": wrong(walked(breadth_first_order), "breadth-first"),
        "overwrites at fan-out": wrong(walked(reverse_order, add=False), "overwritten at fan-out"),
        "no unbroadcast": wrong(walked(reverse_order, unbroadcast=False), "summed back", "mg.unbroadcast"),
        "seeded with 0": wrong(walked(reverse_order, seed=np.zeros_like), "seeded with 0"),
        "seeded with the loss": wrong(walked(reverse_order, seed=lambda v: v), "seeded with the loss's value"),
        "a walk over paths (no seen set)": wrong(backward_paths, "visited twice"),
        "attributes left out": wrong(walked(reverse_order, attrs=False), "without the node's attributes"),
        "the parent's value as ans": wrong(walked(reverse_order, ans_of_parent=True), "as ans"),
        ".grad added onto": wrong(backward_adds_onto_grad, "added onto"),
        "a default argument grads={}": wrong(backward_default_dict, "default argument"),
        ".grad never set": wrong(walked(reverse_order, set_grad=False), "still holds what it held"),
        "the engine's backward pass": wrong(backward_by_the_engine, "engine's own backward pass"),
        "the engine's backward pass, kept before the check": wrong(backward_by_a_kept_engine,
                                                                   "engine's own backward pass"),
        "keyed by names": wrong(backward_by_names, "keyed by names"),
        "forgot return": wrong(lambda loss, values: None, "forget `return`"),
        "deletes the entries of values": wrong(backward_deletes_values, "deleted the entry", "values belongs to the caller"),
        "reads node.value": wrong(backward_reads_node_value, "node.value", "from the dict values"),
        "a memo at the top of the notebook": wrong(backward_module_memo, "returned the first call's gradients"),
        "summed over axis 0": wrong(backward_sum_axis_0, "summed over axis 0 only"),
        "summed back after adding": wrong(backward_summed_late, "only after the shares were added up"),
        "zeros_like, then +=": wrong(backward_zeros_like, "integers", "np.zeros_like"),
        "each share cast to its value's dtype": wrong(walked(reverse_order, value_dtype=True), "integers"),
        "the first share kept, then +=": wrong(backward_aliasing, "in place", "not +="),
    },
    "03.hand_backprop": {
        "one path into a": wrong({**HAND, "a": 1.0, "w": 2.0, "x": -1.0}, "node 'a'", "two consumers"),
        "the other factor forgotten": wrong({**HAND, "c": 1.0}, "node 'c'", "other* factor"),
        "b's gradient not passed through": wrong({**HAND, "b": 1.0}, "node 'b'", "unchanged"),
        "x and w swapped": wrong({**HAND, "w": 1.0, "x": -2.0}, "node 'w'"),
        "a gradient missing": wrong({k: v for k, v in HAND.items() if k != "b"}, "no gradient for node 'b'"),
        "the seed as 0": wrong({**HAND, "L": 0.0}, "node 'l'", "seed"),
        "a list, not a dict": wrong(list(HAND.values()), "must be a dict"),
    },
    "03.central_difference": {
        "one-sided": wrong(one_sided, "one-sided"),
        "divided by eps": wrong(divided_by_eps, "twice the gradient", "2·eps"),
        "all entries at once": wrong(all_entries_at_once, "one entry at a time"),
        "changes x in place": wrong(bumps_x_itself, "changed x in place"),
        "a flat array": wrong(flat_only, "wrong shape"),
        "forgot return": wrong(lambda f, x, eps=1e-6: None, "forget `return`"),
    },
}

RIGHT = {
    "03.tanh_vjp": {
        "from ans": lambda g, ans, x: g * (1 - ans ** 2),
        "recomputed from x": lambda g, ans, x: g * (1 - np.tanh(x) ** 2),
        "one over cosh squared": lambda g, ans, x: g / np.cosh(x) ** 2,
    },
    "03.mul_vjp": {
        "mg.unbroadcast": lambda g, ans, x, y: (mg.unbroadcast(g * y, np.shape(x)), mg.unbroadcast(g * x, np.shape(y))),
        "summed by hand": mul_vjp_by_hand,
    },
    "03.matmul_vjp": {
        "transposes": lambda g, ans, x, W: (g @ W.T, x.T @ g),
        "einsum": lambda g, ans, x, W: (np.einsum("nm,km->nk", g, W), np.einsum("nk,nm->km", x, g)),
        "row by row": matmul_vjp_loops,
    },
    "03.backward": {
        "reverse of mg.Graph(loss).nodes": backward_graph_order,
        "iterative topo_sort and a defaultdict": backward_iterative_defaultdict,
        "recursive topological order": backward_recursive_order,
        "recursive pull from the consumers, with a memo": backward_recursive_pull,
        "seeded with the number 1, Constants given zeros": backward_seeded_with_one,
        "recursion in a list comprehension, np.zeros and +=": backward_recursive_comprehension,
    },
    "03.hand_backprop": {
        "floats": dict(HAND),
        "ints, in another order": {"x": 1, "w": -2, "b": -2, "a": -1, "c": -2, "L": 1},
    },
    "03.central_difference": {
        "copies up and down": central,
        "bump and restore": central_bump_and_restore,
        "steps from an identity matrix": central_with_an_identity,
    },
}

