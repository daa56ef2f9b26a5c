"""Chapter 01 (computational graphs): typical wrong answers and different right answers."""

import minigraph as mg

from minigraph.graph import topological_order

from . import wrong


# -- 01.neuron ---------------------------------------------------------------------------------

def neuron(W_value, b_value):
    x = mg.Input("x")
    W, b = mg.Parameter(W_value, name="W"), mg.Parameter(b_value, name="b")
    return mg.sigmoid(x @ W + b)


def neuron_by_hand(W_value, b_value):
    z = mg.add(mg.matmul(mg.Input("x"), mg.Parameter(W_value, name="W")), mg.Parameter(b_value, name="b"))
    return 1 / (1 + mg.exp(-z))


def neuron_without_sigmoid(W_value, b_value):
    return mg.Input("x") @ mg.Parameter(W_value, name="W") + mg.Parameter(b_value, name="b")


def neuron_tanh(W_value, b_value):
    return mg.tanh(mg.Input("x") @ mg.Parameter(W_value, name="W") + mg.Parameter(b_value, name="b"))


def neuron_constant_W(W_value, b_value):
    return mg.sigmoid(mg.Input("x") @ mg.Constant(W_value, name="W") + mg.Parameter(b_value, name="b"))


def neuron_x_parameter(W_value, b_value):
    x = mg.Parameter([[0.0] * len(W_value)], name="x")
    return mg.sigmoid(x @ mg.Parameter(W_value, name="W") + mg.Parameter(b_value, name="b"))


def neuron_no_bias(W_value, b_value):
    return mg.sigmoid(mg.Input("x") @ mg.Parameter(W_value, name="W"))


def neuron_W_times_x(W_value, b_value):
    return mg.sigmoid(mg.Parameter(W_value, name="W") @ mg.Input("x") + mg.Parameter(b_value, name="b"))


def neuron_input_named_inputs(W_value, b_value):
    x = mg.Input("inputs")
    return mg.sigmoid(x @ mg.Parameter(W_value, name="W") + mg.Parameter(b_value, name="b"))


# -- 01.consumers -------------------------------------------------------------------------------

def consumers_with_repeats(graph, node):
    return [other for other in graph.nodes for parent in other.inputs if parent is node]


def descendants(graph, node):
    found = []
    for other in graph.nodes:
        if any(parent is node or parent in found for parent in other.inputs):
            found.append(other)
    return found


def consumers_by_name(graph, node):
    names = []
    for other in graph.nodes:
        if node in other.inputs and other.name not in names:
            names.append(other.name)
    return names


def consumers_from_a_table(graph, node):
    table = {n: set() for n in graph.nodes}
    for n in graph.nodes:
        for parent in n.inputs:
            table[parent].add(n)
    return list(table[node])


# -- 01.find_inputs -------------------------------------------------------------------------------

def walk(output, keep, start=None):
    """The nodes ``keep`` picks among ``output``'s ancestors (a stack and a seen set), walking
    from ``start`` (by default the output itself)."""
    found, seen, todo = [], set(), [output] if start is None else list(start)
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            found += [node] if keep(node) else []
            todo.extend(node.inputs)
    return found


def find_inputs(output):
    return walk(output, lambda node: node.kind == "input")


def find_inputs_recursive(output, seen=None):
    seen = set() if seen is None else seen
    if output in seen:
        return []
    seen.add(output)
    found = [output] if output.kind == "input" else []
    for parent in output.inputs:
        found += find_inputs_recursive(parent, seen)
    return found


def find_leaves(output):
    return walk(output, lambda node: not node.inputs)


def find_inputs_without_seen(output):
    found, todo = [], [output]
    while todo:
        node = todo.pop()
        found += [node] if node.kind == "input" else []
        todo.extend(node.inputs)
    return found


def find_inputs_recursive_without_seen(output):
    """Recursion that merges the answers in a set: right, but it walks every path again."""
    if output.kind == "input":
        return [output]
    return list({found for parent in output.inputs for found in find_inputs_recursive_without_seen(parent)})


def find_inputs_of_the_inputs(output):
    return walk(output, lambda node: node.kind == "input", start=output.inputs)


WRONG = {
    "01.neuron": {
        "no activation": wrong(neuron_without_sigmoid, "before the activation"),
        "tanh instead of sigmoid": wrong(neuron_tanh, "tanh"),
        "W a Constant": wrong(neuron_constant_W, "is a constant", "must be a parameter"),
        "x a Parameter": wrong(neuron_x_parameter, "0 inputs", "an input, not a parameter"),
        "no bias": wrong(neuron_no_bias, "holds b_value", "missing"),
        "W @ x, the wrong order": wrong(neuron_W_times_x, "shape"),
        "the Input under another name": wrong(neuron_input_named_inputs, "named 'inputs'"),
    },
    "01.predict": {
        "forgot the - x": wrong([6.0, 8.0, 48.0], "the − x is missing"),
        "u as a sum": wrong([5.0, 7.0, 33.0], "product, not a sum"),
        "off by one in v": wrong([6.0, 7.0, 40.0], "right: u", "not right: v, out"),
        "only out": wrong(46.0, "shape (), expected shape (3,)"),
        "w and x swapped in out": wrong([6.0, 8.0, 45.0], "swapped or misread"),
    },
    "01.consumers": {
        "skips the last node of graph.nodes": wrong(lambda graph, node: [n for n in graph.nodes[:-1] if node in n.inputs], "missing", "out"),
        "the inputs instead": wrong(lambda graph, node: list(node.inputs), "inputs of", "not its consumers"),
        "a consumer listed twice": wrong(consumers_with_repeats, "listed 2 times", "once"),
        "every node downstream": wrong(descendants, "only through other nodes"),
        "the node itself too": wrong(lambda graph, node: [n for n in graph.nodes if node in n.inputs or n is node],
                                     "the node itself"),
        "forgot return": wrong(lambda graph, node: None, "none", "forget `return`"),
        "only the first consumer": wrong(lambda graph, node: next(n for n in graph.nodes if node in n.inputs),
                                         "single node"),
    },
    "01.find_inputs": {
        "the engine's walk, from its module": wrong(lambda output: [n for n in topological_order([output]) if isinstance(n, mg.Input)], "engine's own graph walk", "mg.graph.topological_order"),
        "the engine does it": wrong(lambda output: mg.Graph(output).inputs, "engine's own graph walk", "yourself"),
        "every leaf": wrong(find_leaves, "is a parameter, not an input"),
        "no seen set": wrong(find_inputs_without_seen, "listed 4 times", "once"),
        "forgets the output itself": wrong(find_inputs_of_the_inputs, "missing input: x"),
        "only the direct inputs": wrong(lambda output: [n for n in output.inputs], "is an op, not an input"),
        "forgot return": wrong(lambda output: None, "forget `return`"),
        "every path walked again (no seen set, duplicates merged)": wrong(find_inputs_recursive_without_seen,
                                                                          "did not finish"),
    },
}

RIGHT = {
    "01.neuron": {"mg.sigmoid of the affine map": neuron, "sigma from exp, by hand": neuron_by_hand},
    "01.predict": {"floats": [6.0, 8.0, 46.0], "ints in a tuple": (6, 8, 46)},
    "01.consumers": {
        "a list comprehension": lambda graph, node: [n for n in graph.nodes if node in n.inputs],
        "names, each once": consumers_by_name,
        "a consumer table": consumers_from_a_table,
    },
    "01.find_inputs": {"a stack and a seen set": find_inputs, "recursion with a seen set": find_inputs_recursive},
}
