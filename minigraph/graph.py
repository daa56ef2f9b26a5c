"""Nodes and graphs: the data structure every chapter builds, runs, draws and differentiates.

This module tells the engine's story in the order you would explain it:

1. **Nodes.** A computational graph has four kinds of node:

   * ``Input``     -- a placeholder: its value is *fed* each time the graph runs (data, labels).
   * ``Parameter`` -- a value the graph owns and training changes (weights, biases).
   * ``Constant``  -- a value that never changes (the ``2`` in ``2 * x`` is a ``Number``, a
                      Constant that takes the dtype of what it meets, see ``dtypes.py``).
   * ``Op``        -- the result of an operation on other nodes (``W @ x``, ``tanh(z)``).

   Building a graph computes nothing: ``z = W @ x + b`` only records nodes and edges.
2. **Topological order.** A ``Graph`` puts the nodes in an order where every node comes after
   its inputs.
3. **Forward.** ``forward(feed)`` computes values in that order, skipping every op whose inputs
   did not change since it was last computed (each node carries a *stamp*: the tick of a global
   clock when its value last changed; an op is stale when one of its inputs is newer than it).
4. **Backward.** ``backward(feed)`` runs forward, then walks the order in reverse and applies
   each op's vector-Jacobian product (VJP), *summing* the gradients a node receives from its
   consumers. Gradients are **fresh for each backward call** (they do not accumulate as in
   PyTorch): after ``g.backward(...)``, ``node.grad`` is d(output)/d(node) for that call alone.
5. **BackwardPlan.** What a backward computes, in which order, worked out once per ``wrt``
   (``graph.plan(wrt)``). ``Graph.backward`` interprets it; from the second call on it runs
   the same plan written out as straight-line code instead (``codegen.py`` writes it,
   ``fastpath.py`` says when), so this file is the reference. That code calls back into this
   file: the plan hands it the interpreter's own helpers, a ``Callbacks`` (``store_value``,
   ``checked_gradient``, ...), and when an op fails in it, ``op_failed`` explains the failure
   as the interpreter does. The first call looks closer: it hands each VJP a read-only ``g``,
   since the array may be another node's gradient too, so a VJP that writes into it
   (``g *= ...``) is an error, not a wrong number.
6. **Hooks** let you watch (or change) what flows: forward hooks ``fn(node, inputs, output)``
   and backward hooks ``fn(node, grad_output, grad_inputs)``; a hook that returns something
   other than ``None`` replaces the output (forward) or the input gradients (backward), as in
   PyTorch. ``detect_anomaly()`` stops at the first NaN or infinity. Both live in
   ``hooks.py``; this file calls them where values and gradients flow.

What the engine accepts as numbers, and the read-only arrays ``node.value`` hands out, are in
``values.py``; the error messages (which node, which op, which shapes, what to do) in
``explain.py``.
"""

import itertools
from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np

from . import dtypes, explain
from .errors import BadValueError, CycleError, GraphError, ShapeError, describe, shape_text
from .fastpath import FastPath
from .hooks import HookHandle, anomaly, run_backward_hooks, run_forward_hooks, watched
from .values import ReadOnlyValue, as_numbers, freeze, parameter_array

_clock = itertools.count(1)           # stamps: a value changed at tick t has stamp t
_name_counters = {}                   # "matmul" -> how many automatic names were handed out


def auto_name(prefix):
    """A fresh readable name: ``matmul_1``, ``matmul_2``, ..."""
    _name_counters[prefix] = _name_counters.get(prefix, 0) + 1
    return f"{prefix}_{_name_counters[prefix]}"


# -- 1. nodes ---------------------------------------------------------------------------------

class Node:
    """A vertex of the graph. See the module docstring for the four kinds."""

    kind = "node"
    weak = False                      # a Python number of a formula (or an op of such numbers only)
    __array_ufunc__ = None            # ``ndarray + node`` defers to ``node.__radd__``
    __iter__ = None                   # a node is not a sequence (even though it has [ ])

    def __init__(self, name, inputs=(), value=None):
        self.name = name
        self.inputs = tuple(inputs)
        self.op, self.attrs = None, {}
        self._value = value
        self.stamp = next(_clock) if value is not None else 0
        self.grad = None
        self._forward_hooks, self._backward_hooks = {}, {}

    @property
    def value(self):
        """This node's value: a read-only array (see ``ReadOnlyValue``), or None before it has one."""
        value = self._value
        if type(value) is not np.ndarray:
            return value
        view = value.view(ReadOnlyValue)
        view.node = self
        return view

    @value.setter
    def value(self, new):
        how = {"input": "feed it: graph.forward({%s: ...})" % self.name,
               "op": "it is computed from its inputs: assign a Parameter or feed an Input",
               "constant": "it never changes: use a Parameter for a value you change"}
        raise GraphError(f"cannot assign the value of {describe(self)}: {how.get(self.kind, '')}.")

    @property
    def shape(self):
        return None if self._value is None else np.shape(self._value)

    def _set(self, value):
        """Store a new value for a leaf and stamp it, so ops that depend on it recompute."""
        self._value, self.stamp = freeze(value), next(_clock)

    def register_forward_hook(self, fn):
        """Call ``fn(node, inputs, output)`` each time this op is computed."""
        return HookHandle(self._forward_hooks, fn)

    def register_backward_hook(self, fn):
        """Call ``fn(node, grad_output, grad_inputs)`` each time this op's backward runs."""
        return HookHandle(self._backward_hooks, fn)

    def __repr__(self):
        return f"{type(self).__name__}('{self.name}', {shape_text(self._value)})"


class Input(Node):
    """A placeholder for data: give it a value in the feed each time you run the graph."""

    kind = "input"

    def __init__(self, name=None, dtype=None):
        super().__init__(name or auto_name("input"))
        self.dtype = None if dtype is None else dtypes.as_dtype(dtype, f"Input '{self.name}'")
        self._fed = None                           # (dtype, shape, bytes) of the value fed last

    def feed(self, value):
        """Take a fed value; the stamp changes only if the value really differs from the last one.

        The bytes of the value are both the Input's private copy (later edits by the caller
        can't leak in) and what the next feed is compared with.
        """
        dtype = dtypes.float_dtype(value, self.dtype)
        new = value if type(value) is np.ndarray and value.dtype == dtype else as_numbers(
            value, f"the value fed to Input '{self.name}'", dtype)
        fed = (new.dtype, new.shape, new.tobytes())
        if fed != self._fed:
            self._fed = fed
            self._value = np.ndarray(new.shape, new.dtype, fed[2])   # read-only, as bytes are
            self.stamp = next(_clock)


class Parameter(Node):
    """A trainable value. Change it by assignment (``W.value = ...``); its array is read-only.

    Its dtype is chosen once (see ``dtypes.py``), and an assigned value is converted to it.
    """

    kind = "parameter"

    def __init__(self, value, name=None, dtype=None):
        name = name or auto_name("param")
        dtype = None if dtype is None else dtypes.as_dtype(dtype, f"Parameter '{name}'", floating=True)
        value = parameter_array(value, f"the value of Parameter '{name}'", dtype)
        super().__init__(name, value=freeze(value))

    @property
    def dtype(self):
        return self._value.dtype

    @Node.value.setter
    def value(self, new):
        self._set(parameter_array(new, f"the new value of Parameter '{self.name}'", self.dtype))


class Constant(Node):
    """A fixed value, such as the ``2`` in ``2 * x``."""

    kind = "constant"

    def __init__(self, value, name=None, dtype=None):
        as_numbers(value, "a Constant's value")           # None, a node, text: BadValueError
        name = name or auto_name("const")
        dtype = None if dtype is None else dtypes.as_dtype(dtype, f"Constant '{name}'")
        value = dtypes.constant_array(value, dtype)       # integers (class labels) stay integers
        super().__init__(name, value=freeze(value))


class Number(Constant):
    """A Python number written into a formula: the ``2`` of ``2 * x`` (``as_node`` makes it).

    It is *weak*, as numpy 2 treats Python numbers: the op that uses it converts it to the dtype
    of its other inputs each time it runs (see ``dtypes.WithNumbers``), so ``2 * x`` keeps
    ``x``'s float32. Its own value shows the number, in the default dtype.
    """

    weak = True


class Op(Node):
    """The result of applying an op (an entry of the op table in ``ops.py``) to input nodes."""

    kind = "op"

    def __init__(self, op, inputs, attrs=None, name=None):
        super().__init__(name or auto_name(op.name), inputs)
        number_positions = [k for k, parent in enumerate(self.inputs) if parent.weak]
        self.weak = len(number_positions) == len(self.inputs) > 0   # computed from numbers alone
        if number_positions and not self.weak:
            op = dtypes.WithNumbers(op, number_positions)   # the numbers take the others' dtype
        self.op, self.attrs = op, dict(attrs or {})

    def __repr__(self):
        args = ", ".join(i.name for i in self.inputs)
        return f"Op('{self.name}' = {self.op.name}({args}), {shape_text(self._value)})"


def as_node(value, what="a Constant's value"):
    """Nodes stay nodes; a Python number becomes a (weak) ``Number``; lists and arrays become
    Constants (``what`` names the value in the error if it is none of these)."""
    if isinstance(value, Node):
        return value
    as_numbers(value, what)               # not numbers: a BadValueError that names ``what``
    return Number(value) if dtypes.is_python_number(value) else Constant(value)


def value_of(node):
    """The node's own array, as ops compute with it (``node.value`` hands out a read-only view)."""
    return node._value


def first_repeat(nodes):
    """The first node that ``nodes`` lists a second time, or None if each is there once."""
    seen = set()
    for node in nodes:
        if node in seen:
            return node
        seen.add(node)
    return None


# -- 2. the graph: its nodes in topological order -------------------------------------------------

def topological_order(outputs):
    """Every ancestor of ``outputs``, each after all of its inputs (depth-first post-order).

    Iterative, with an explicit stack, so a chain 100,000 nodes deep needs no recursion.
    A node met again while it is still on the stack closes a cycle: refused.
    """
    order, state = [], {}                     # state: "open" while on the stack, "done" after
    for root in outputs:
        if root in state:
            continue
        state[root] = "open"
        stack = [(root, iter(root.inputs))]
        while stack:
            node, pending = stack[-1]
            for child in pending:
                if child not in state:
                    state[child] = "open"
                    stack.append((child, iter(child.inputs)))
                    break
                if state[child] == "open":
                    path = [n.name for n, _ in stack[[n for n, _ in stack].index(child):]]
                    raise CycleError(f"the nodes {' -> '.join(path + [child.name])} form a cycle "
                                     "(each needs the next as input); a graph must be acyclic.")
            else:
                stack.pop()
                state[node] = "done"
                order.append(node)
    return order


class Graph:
    """The outputs and all their ancestors, in a cached topological order."""

    def __init__(self, outputs):
        self.outputs = [outputs] if isinstance(outputs, Node) else list(
            outputs if isinstance(outputs, (list, tuple)) else [outputs])
        if not self.outputs or not all(isinstance(n, Node) for n in self.outputs):
            wrong = [f"{type(n).__name__} {str(n)[:40]!r}" for n in self.outputs if not isinstance(n, Node)]
            raise BadValueError(
                f"Graph takes the node(s) to compute, e.g. Graph(loss); it was given "
                f"{wrong[0] if wrong else 'an empty list'}. A node's .value is only numbers "
                f"(did you write Graph(loss.value)?).")
        self.nodes = topological_order(self.outputs)
        self._ops = [n for n in self.nodes if n.op is not None]
        self.inputs = [n for n in self.nodes if n.kind == "input"]
        self.parameters = [n for n in self.nodes if n.kind == "parameter"]
        self._by_name, self._plans = {}, {}
        self._feedable = {key: n for n in self.inputs for key in (n, n.name)}   # node or its name
        for n in self.nodes:
            if self._by_name.setdefault(n.name, n) is not n:
                raise GraphError(f"two different nodes are named '{n.name}' in this graph. Names must "
                                 "be unique; did you re-run the cell that creates it but not the cells "
                                 "that use it?")
        self._forward_hooks, self._backward_hooks = {}, {}
        self._fast_path = FastPath(len(self._ops))

    def node(self, name):
        """The node called ``name`` (given a node, that node: so callers may pass either)."""
        if isinstance(name, Node):
            return name
        if not isinstance(name, str):
            what = "an array" if isinstance(name, np.ndarray) else type(name).__name__
            raise BadValueError(f"expected a node of this graph or its name, got {what} "
                                f"{str(name)[:40]!r}: pass the node itself (W), not its value (W.value).")
        if name not in self._by_name:
            raise GraphError(f"no node named '{name}' in this graph; its nodes are: "
                             f"{explain.listed(self._by_name)}")
        return self._by_name[name]

    def plan(self, wrt=None):
        """The ``BackwardPlan`` of ``backward(wrt=wrt)``: worked out once per ``wrt``, then cached."""
        key = wrt if wrt is None or isinstance(wrt, (Node, str)) else _as_tuple(wrt)
        try:
            return self._plans[key]
        except (KeyError, TypeError):                 # TypeError: an unhashable entry (an array?)
            plan = BackwardPlan(self, self._wrt_nodes(key))
        self._plans[key] = plan
        return plan

    def _wrt_nodes(self, wrt):
        """``wrt`` as a list of this graph's nodes (None stays None: every node)."""
        if len(self.outputs) != 1:
            raise GraphError(f"backward needs one output to differentiate; this graph has "
                             f"{len(self.outputs)}. Build Graph(loss) for the one you mean.")
        if wrt is None:
            return None
        if isinstance(wrt, (Node, str)):
            wrt = [wrt]
        nodes = [self.node(w) for w in wrt]
        strangers = [n.name for n in nodes if self._by_name.get(n.name) is not n]
        if strangers:
            raise GraphError(f"backward(wrt=...) names {', '.join(strangers)}, not part of this "
                             f"graph (the output '{self.outputs[0].name}' does not depend on it). "
                             f"Differentiate with respect to nodes of this graph, e.g. graph.parameters.")
        return nodes

    def register_forward_hook(self, fn):
        """Call ``fn(node, inputs, output)`` whenever any op of this graph is computed."""
        return HookHandle(self._forward_hooks, fn)

    def register_backward_hook(self, fn):
        """Call ``fn(node, grad_output, grad_inputs)`` whenever any op's backward runs."""
        return HookHandle(self._backward_hooks, fn)

    def invalidate(self):
        """Forget every op's value, so the next forward recomputes (and hooks see) every op."""
        for node in self._ops:
            node._value, node.stamp = None, 0

    # -- 3. forward ---------------------------------------------------------------------------

    def forward(self, feed=None):
        """Feed the Inputs, compute every stale op, return the output value(s) (read-only, as
        ``node.value``: an in-place edit of them is explained, not numpy's bare complaint)."""
        self._compute(feed)
        values = [n.value for n in self.outputs]
        return values[0] if len(values) == 1 else values

    def _compute(self, feed):
        """``forward`` without the return value (``backward`` needs only the values stored)."""
        self._feed(feed or {})
        looking = self._forward_hooks or anomaly[0]
        for node in self._ops:
            if node._value is not None and all(parent.stamp <= node.stamp for parent in node.inputs):
                continue                                  # nothing it depends on changed
            args = [parent._value for parent in node.inputs]
            try:
                out = node.op.forward(*args, **node.attrs)
            except Exception as error:                    # turn numpy's complaint into ours
                raise op_failed(node, error) from None
            if looking or node._forward_hooks:
                out = run_forward_hooks(self, node, args, out)
            store_value(node, out)

    def _feed(self, feed):
        """Give each Input its value from ``feed`` ({Input or its name: value}); each needs one."""
        if not isinstance(feed, Mapping):
            raise explain.not_a_feed(feed, self.inputs)
        for key, value in feed.items():
            node = self._feedable.get(key)
            if node is None:                              # self.node raises if there is no such name
                raise explain.not_feedable(self.node(key), self.inputs)
            node.feed(value)
            if anomaly[0]:
                explain.check_finite(node, node._value, "was fed")
        for node in self.inputs:
            if node._value is None:
                raise explain.missing_feed(node, self.inputs)

    # -- 4. backward --------------------------------------------------------------------------

    def backward(self, feed=None, seed=None, wrt=None):
        """d(output)/d(node) for every node, or only for the ``wrt`` nodes; returns the output value.

        ``seed`` is the gradient of whatever you differentiate with respect to the output: 1 for
        a scalar loss (the default); pass an array of the output's shape for a non-scalar one.
        ``wrt`` is a list of nodes (or of their names); a single node means ``[node]``.
        """
        plan = self.plan(wrt)
        if not watched(self):                        # hooks and anomaly mode need this loop
            done, value = self._fast_path.run(plan, feed, seed)
            if done:
                return value
        self._compute(feed)
        value = plan.output._value                    # the array itself, as the fast path returns
        for node in self.nodes:                       # fresh gradients: forget the last call's
            node.grad = None
        grads = {plan.output: plan.seed(value, seed)}
        first = anomaly[0] or plan not in self._fast_path.interpreted   # watch the VJPs closely
        for node, wanted in plan.steps:
            g = grads.get(node)
            if g is None:                             # no gradient reached this op
                continue
            if node.op.n_outputs > 1:
                g = fill_unused_outputs(g, node._value)
            elif first and type(g) is np.ndarray:     # g may be another node's gradient too:
                g = freeze(g.view())                  # a VJP writing into it (g *= ...) raises
            args = [parent._value for parent in node.inputs]
            sent = []
            for k in wanted:
                try:
                    gi = node.op.vjps[k](g, node._value, *args, **node.attrs)
                except Exception as error:
                    raise op_failed(node, error, k) from None
                sent.append((k, checked_gradient(node, k, gi, args)))
            if node._backward_hooks or self._backward_hooks:
                sent = run_backward_hooks(self, node, g, sent, args)
            for k, gi in sent:
                if gi is not None:                    # sum what each consumer sends back
                    parent = node.inputs[k]
                    old = grads.get(parent)
                    grads[parent] = gi if old is None else add_gradients(old, gi)
        give_gradients(plan.graded, [grads.get(node) for node in plan.graded])
        self._fast_path.interpreted.add(plan)
        return value


def store_value(node, value):
    """Store what an op computed as its (read-only) value, stamp it, and return it."""
    if type(value) is np.ndarray and node.op.n_outputs == 1:
        freeze(value)
    elif not (isinstance(value, np.generic) and node.op.n_outputs == 1):   # a numpy number is fine
        value = explain.check_value(node, value)  # a tuple, a Python number; None is an error
    node._value, node.stamp = value, next(_clock)
    return value


def op_failed(node, error, k=None):
    """The error to raise when ``node``'s forward (``k`` None) or its VJP for input ``k`` raised
    ``error``: which node, which op, its inputs' shapes, what to do (``explain.op_failure``). The
    interpreter raises it, and so does the fast path when an op fails in the generated code."""
    args = [parent._value for parent in node.inputs]
    phase = "forward" if k is None else f"backward (the gradient for input '{node.inputs[k].name}')"
    return explain.op_failure(node, args, error, phase)


def checked_gradient(node, k, gi, args):
    """A gradient from ``node``'s VJP for its input ``k``, checked: it has the input's shape (and,
    inside detect_anomaly, no NaN/inf). A plain Python number becomes a numpy value."""
    if not anomaly[0] and (type(gi) is type(args[k]) is np.ndarray and gi.shape == args[k].shape
                            or isinstance(gi, np.generic) and getattr(args[k], "shape", None) == ()):
        return gi                                 # an array of its input's shape (or a number's)
    gi = explain.check_gradient(node, k, gi, args)
    if anomaly[0]:
        explain.check_finite(node, gi, f"sent a gradient to '{node.inputs[k].name}' that is", args)
    return gi


def add_gradients(a, b):
    """Sum two gradients (tuples element by element for multi-output ops; None means zero)."""
    if isinstance(a, tuple):
        return tuple(y if x is None else x if y is None else x + y for x, y in zip(a, b))
    return a + b                      # never in place: ``a`` may be another node's gradient


def fill_unused_outputs(g, value):
    """A multi-output op's gradient, one per output: zeros for an output nobody used."""
    return tuple(np.zeros_like(v) if gi is None else gi for gi, v in zip(g, value))


def give_gradients(nodes, grads):
    """Set ``node.grad`` for each node, each its own writable array: one VJP may hand the same
    array to several inputs (``add`` sends ``g`` to both), a view of another gradient (``reshape``)
    or a read-only one, so such an array is copied. Clipping ``a.grad`` in place then never
    changes ``b.grad``."""
    held = set()                                  # ids of the arrays handed out so far
    for node, g in zip(nodes, grads):
        node.grad = _own(g, held)


def _own(g, held):
    """``g`` as arrays that no other gradient holds (``held``: the ids handed out so far)."""
    if type(g) is not np.ndarray:
        return tuple(_own(x, held) for x in g) if isinstance(g, tuple) else g
    if g.base is not None or id(g) in held or not g.flags.writeable:
        g = g.copy()                              # a copy owns its memory: nobody else holds it
    held.add(id(g))
    return g


# -- 5. the backward plan -------------------------------------------------------------------------

def _as_tuple(wrt):
    """A ``wrt`` list as a tuple (a key of the plan cache); something that is not a list (``3``)
    as a tuple of itself, so that ``Graph.node`` says what it is."""
    try:
        return tuple(wrt)
    except TypeError:
        return (wrt,)


class Callbacks(NamedTuple):
    """The helpers of this module that the generated backward calls back, as the interpreter
    calls them: the code ``codegen.py`` writes for a ``BackwardPlan`` gets each under its name
    with a ``_`` in front (``_store(node, f_node(...))``, ``_checked(...)``). Nothing else of
    this module reaches generated code, so it can only do what ``Graph.backward`` does."""

    feed: Callable            # give the Inputs their values (``Graph._feed``)
    seed: Callable            # the gradient backward starts from (``BackwardPlan.seed``)
    value: Callable           # a leaf's own array (``value_of``)
    store: Callable           # keep what an op computed as its value (``store_value``)
    checked: Callable         # a VJP's result checked, as the interpreter checks it (``checked_gradient``)
    add: Callable             # two gradients summed (``add_gradients``)
    fill: Callable            # zeros for a multi-output op's unused outputs (``fill_unused_outputs``)
    give: Callable            # ``node.grad`` for the graded nodes (``give_gradients``)


class BackwardPlan:
    """What ``graph.backward(feed, seed, wrt)`` does, worked out once per ``wrt``.

    It is the whole contract between the interpreter (``Graph.backward``, the reference) and the
    code writer (``codegen.py``, for the fast path): the writer reads nothing else, so the code
    it writes can only do what the interpreter does. A backward

    1. feeds the Inputs, then computes each op of ``ops`` whose inputs are newer than it, from
       its inputs' values (``leaves``: the nodes that are no op), storing what it computes;
    2. starts from the gradient of ``output`` (``seed``), and for each ``(op, wanted)`` of ``steps``
       (outputs first) that received a gradient, calls the op's VJP for each input position in
       ``wanted`` (a multi-output op gets one gradient per output, zeros for an unused one),
       checks the result and sums what an input receives;
    3. hands the gradients of ``graded`` out.

    ``callbacks`` (a ``Callbacks``) holds the helpers that do the feeding, storing, checking,
    summing and handing out, for the generated code to call; ``op_failed`` is the error the
    fast path raises when an op fails in that code, the interpreter's own.

    By default every node that can have a gradient (not Constants, not integer Inputs) needs one
    and gets it. With ``wrt``, the ``wrt`` nodes and the ops downstream of one need one, and only
    the ``wrt`` nodes get it.
    """

    op_failed = staticmethod(op_failed)

    def __init__(self, graph, wrt):
        self.nodes, self.ops, self.output = graph.nodes, graph._ops, graph.outputs[0]
        self.leaves = [n for n in self.nodes if n.op is None]
        self.callbacks = Callbacks(feed=graph._feed, seed=self.seed, value=value_of, store=store_value,
                                   checked=checked_gradient, add=add_gradients,
                                   fill=fill_unused_outputs, give=give_gradients)
        if wrt is None:
            needs = {n for n in self.nodes if n.kind != "constant"
                     and not (n.kind == "input" and np.dtype(n.dtype).kind in "biu")}
        else:
            needs = set(wrt)
            for n in self.ops:
                if any(parent in needs for parent in n.inputs):
                    needs.add(n)
        self.steps = [(n, [k for k, parent in enumerate(n.inputs) if parent in needs])
                      for n in reversed(self.ops) if n in needs]
        graded = needs if wrt is None else set(wrt)
        self.graded = [n for n in self.nodes if n in graded]

    def seed(self, value, seed):
        """The gradient backward starts from: 1 for a scalar output, else the ``seed`` given."""
        if seed is None:
            if getattr(value, "size", None) != 1:
                raise GraphError(
                    f"backward starts from a scalar, but the output {describe(self.output)} is not "
                    f"one. Reduce it to a scalar first (e.g. mg.sum(...) or a loss), or pass "
                    f"seed=np.ones({np.shape(value)}) to get a vector-Jacobian product.")
            dtype = dtypes.float_dtype(value)
            return np.ones(value.shape, dtype) if value.shape else np.array(1.0, dtype)
        seed = np.array(as_numbers(seed, "the seed gradient"),   # a copy: the caller's stays theirs
                        dtype=dtypes.float_dtype(value))
        if seed.shape != np.shape(value):
            raise ShapeError(f"the seed gradient has shape {seed.shape}, but the output "
                             f"{describe(self.output)} has shape {np.shape(value)}; they must match.")
        return seed
