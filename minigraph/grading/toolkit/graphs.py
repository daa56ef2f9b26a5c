"""Graphs written down as *specs*, shared by chapters 01 and 02.

A spec is a list of ``(name, what, *args)`` rows, where ``what`` is ``"input"`` (args: nothing, or
``"int"`` for an Input of integers, such as class labels), ``"parameter"``
(args: its value), ``"constant"`` (args: its value) or an op name (args: the names of its
inputs, then perhaps a dict of the op's attributes, such as ``{"axis": 0}``). ``build(spec)``
makes the nodes, with exactly these names, both in the learner's kernel (an exercise's ``run``)
and in the grader (its ``judge``), so the two sides talk about nodes by name and only names
travel as JSON.
"""

import minigraph as mg

from .engine import refused
from .exercise import Verdict

SYMBOLS = {"add": "+", "sub": "−", "mul": "·"}
LEAVES = ("input", "parameter", "constant")


# -- graphs written down as specs -------------------------------------------------------------

# The graph of chapter 01's consumer exercise (and of several chapter 02 cases):
#   a = x·w,  b = a + y,  c = tanh(a),  d = b·c,  e = c·c,  f = d + e,  out = f·two
SHARED = (
    ("x", "input"), ("w", "parameter", 0.5), ("y", "input"), ("two", "constant", 2.0),
    ("a", "mul", "x", "w"), ("b", "add", "a", "y"), ("c", "tanh", "a"),
    ("d", "mul", "b", "c"), ("e", "mul", "c", "c"), ("f", "add", "d", "e"),
    ("out", "mul", "f", "two"),
)

# Two branches that meet late: p = tanh(x), r = p·w, q = exp(y), s = q + r, t = σ(q), out = s + t
BRANCHES = (
    ("x", "input"), ("y", "input"), ("w", "parameter", -1.5),
    ("p", "tanh", "x"), ("q", "exp", "y"), ("r", "mul", "p", "w"), ("s", "add", "q", "r"),
    ("t", "sigmoid", "q"), ("out", "add", "s", "t"),
)


def op_args(args):
    """An op row's arguments as (input names, attributes): a row may end with a dict of the
    op's attributes, ``("s", "sum", "a", {"axis": 0})``."""
    if args and isinstance(args[-1], dict):
        return tuple(args[:-1]), args[-1]
    return tuple(args), {}


def stacked_diamonds(n):
    """h0 = x; p_k = tanh(h_{k-1}), q_k = σ(h_{k-1}), h_k = p_k + q_k; out = h_n · x.

    A walk that does not remember the nodes it has seen reaches h0 along 2ⁿ paths."""
    spec = [("x", "input"), ("h0", "mul", "x", "x")]
    for k in range(1, n + 1):
        spec += [(f"p{k}", "tanh", f"h{k - 1}"), (f"q{k}", "sigmoid", f"h{k - 1}"),
                 (f"h{k}", "add", f"p{k}", f"q{k}")]
    return tuple(spec + [("out", "mul", f"h{n}", "x")])


def random_spec(rng):
    """A random small graph (a hidden case's): Inputs x and y, a Parameter w, then 4 to 9 ops
    n1, n2, ... (no exp, whose towers overflow), each on earlier nodes, mostly recent ones, so
    that nodes are shared and some lie off the last op's ancestors."""
    spec = [["x", "input"], ["y", "input"], ["w", "parameter", round(float(rng.normal()), 3)]]
    for k in range(1, int(rng.integers(5, 11))):
        op = str(rng.choice(["add", "sub", "mul", "tanh", "sigmoid"]))
        earlier = [row[0] for row in spec]
        picks = [earlier[-1 - min(int(rng.geometric(0.4)) - 1, len(earlier) - 1)]
                 for _ in range(1 if op in ("tanh", "sigmoid") else 2)]
        spec.append([f"n{k}", op, *picks])
    return spec


def build(spec, make_op=None):
    """The nodes of ``spec`` as a dict name -> node (in spec order).

    ``make_op(name, op_name, input_nodes, attrs)`` builds each op node if given (chapter 02
    counts evaluations with it); by default the engine's own ops are used.
    """
    nodes = {}
    for name, what, *args in spec:
        if what == "input":
            nodes[name] = mg.Input(name, dtype=int) if args == ["int"] else mg.Input(name)
        elif what == "parameter":
            nodes[name] = mg.Parameter(args[0], name=name)
        elif what == "constant":
            nodes[name] = mg.Constant(args[0], name=name)
        else:
            names, attrs = op_args(args)
            inputs = [nodes[a] for a in names]
            nodes[name] = (make_op(name, what, inputs, attrs) if make_op
                           else getattr(mg, what)(*inputs, name=name, **attrs))
    return nodes


def ancestors(spec, output):
    """Names of ``output`` and everything it depends on (in spec order)."""
    parents = {name: op_args(args)[0] for name, what, *args in spec if what not in LEAVES}
    seen, todo = set(), [output]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += parents.get(name, [])
    return [name for name, *_ in spec if name in seen]


def inputs_of(spec):
    """name -> tuple of input names (empty for leaves)."""
    return {name: (() if what in LEAVES else op_args(args)[0]) for name, what, *args in spec}


def kinds_of(spec):
    """name -> "input" | "parameter" | "constant" | "op"."""
    return {name: (what if what in LEAVES else "op") for name, what, *_ in spec}


def a_kind(kind):
    """``an Input``, ``a Parameter``, ``a Constant``, ``an op``: a kind of node in a sentence."""
    return {"input": "an Input", "parameter": "a Parameter", "constant": "a Constant"}.get(kind, "an op")


# for exercises that ask the learner to walk the graph: the engine's walk refuses meanwhile
WALKING_YOURSELF = refused({"mg.graph.topological_order": "graph walk"},
                           advice="walk the graph yourself, following .inputs (mg.Graph walks it "
                                  "with this function, so building one does the exercise for you)")


def formula(spec, output):
    """``out = f·two, f = d + e, ...``: the graph as equations, output first (for tables)."""
    parts, above = [], set(ancestors(spec, output))
    for name, what, *args in reversed(spec):
        if what in LEAVES or name not in above:
            continue
        names, attrs = op_args(args)
        if what in SYMBOLS:
            parts.append(f"{name}={names[0]}{SYMBOLS[what]}{names[1]}")
        else:
            settings = [f"{k}={v}" for k, v in attrs.items()]
            parts.append(f"{name}={what}({', '.join([*names, *settings])})")
    return ", ".join(parts)


def names_of(result):
    """The names in a learner's answer (nodes or names, any iterable), or an error text."""
    if result is None:
        return None, "None (did you forget `return`?)"
    if isinstance(result, mg.Node):
        return None, f"the single node '{result.name}', not a list of nodes"
    if isinstance(result, str) or getattr(type(result), "__iter__", None) is None:
        return None, f"a {type(result).__name__}, not a list of nodes"
    names = []
    for item in result:
        if isinstance(item, mg.Node):
            names.append(item.name)
        elif isinstance(item, str):
            names.append(item)
        else:
            return None, f"a list holding a {type(item).__name__} (expected nodes)"
    return names, None


def compare_sets(expected, got, what, extra_reason):
    """Verdict for an answer that should hold exactly the names ``expected`` (any order, each once)."""
    shown = ", ".join(expected) or "(none)"
    got_text = ", ".join(got) or "(none)"
    repeated = sorted({n for n in got if got.count(n) > 1})
    if repeated:
        return Verdict(False, shown, got_text,
                       f"'{repeated[0]}' is listed {got.count(repeated[0])} times; list each {what} once")
    missing = [n for n in expected if n not in got]
    extra = [n for n in got if n not in expected]
    if extra:
        return Verdict(False, shown, got_text, f"'{extra[0]}' {extra_reason(extra[0])}")
    if missing:
        return Verdict(False, shown, got_text,
                       f"missing {what}{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
    return Verdict(True, shown, got_text)
