"""Nodes and graphs: the data structure every chapter builds, runs, draws and differentiates.

A computational graph has four kinds of node:

* ``Input``     -- a placeholder: its value is *fed* each time the graph runs (data, labels).
* ``Parameter`` -- a value the graph owns and training changes (weights, biases).
* ``Constant``  -- a value that never changes (the ``2`` in ``2 * x`` is a ``Number``, a
                   Constant that takes the dtype of what it meets, see ``dtypes.py``).
* ``Op``        -- the result of an operation on other nodes (``W @ x``, ``tanh(z)``).

Building a graph computes nothing: ``z = W @ x + b`` only records nodes and edges. A ``Graph``
puts the nodes in topological order (every node after its inputs) and then

* ``forward(feed)`` computes values, skipping every op whose inputs did not change since it was
  last computed (each node carries a *stamp*: the tick of a global clock when its value last
  changed; an op is stale when one of its inputs is newer than it);
* ``backward(feed)`` runs forward, then walks the order in reverse and applies each op's
  vector-Jacobian product (VJP), *summing* the gradients a node receives from its consumers.
  Both work from one ``BackwardPlan`` (``graph.plan(wrt)``): what to compute, in which order.
  From the second call on, a graph runs the same plan written out as straight-line code
  (``unrolled.py``), which skips this loop's bookkeeping; this file is the reference. The
  first call looks closer: it hands each VJP a read-only ``g``, since the array may be another
  node's gradient too, so a VJP that writes into it (``g *= ...``) is an error, not a wrong number.

Gradients are **fresh for each backward call** (they do not accumulate as in PyTorch): after
``g.backward(...)``, ``node.grad`` is d(output)/d(node) for that call alone.

Hooks let you watch (or change) what flows: forward hooks ``fn(node, inputs, output)`` and
backward hooks ``fn(node, grad_output, grad_inputs)``; a hook that returns something other
than ``None`` replaces the output (forward) or the input gradients (backward), as in PyTorch.
"""

import contextlib
import itertools
from collections.abc import Mapping

import numpy as np

from . import dtypes, unrolled
from .errors import (BadValueError, CycleError, GraphError, MissingFeedError, NonFiniteError,
                     OpError, ShapeError, describe, shape_text)

_clock = itertools.count(1)           # stamps: a value changed at tick t has stamp t
_name_counters = {}                   # "matmul" -> how many automatic names were handed out
_hook_ids = itertools.count()
_live_hooks = [0]                     # hooks registered anywhere; while 0, nobody looks for them
_anomaly = [False]                    # detect_anomaly() switches this on


def auto_name(prefix):
    """A fresh readable name: ``matmul_1``, ``matmul_2``, ..."""
    _name_counters[prefix] = _name_counters.get(prefix, 0) + 1
    return f"{prefix}_{_name_counters[prefix]}"


def _frozen(array):
    """Mark an array read-only: a value changes only by assignment (which updates its stamp),
    never in place behind the engine's back."""
    array.setflags(False)             # write=False (by position: three times faster, and it's hot)
    return array


def numbers(value, what, dtype=None):
    """``value`` (a number, a list, an array) as a numpy array of numbers, converted to ``dtype``
    if one is given; anything else is a BadValueError that says what ``what`` was given."""
    if value is None:
        raise BadValueError(f"{what} is None; give it numbers (a number, a list or a numpy array).")
    if isinstance(value, Node):
        raise BadValueError(f"{what} is the node '{value.name}', not numbers. A node's numbers are "
                            f"its .value; to compute with the node itself, use it in an op.")
    try:
        array = np.asarray(value)
    except ValueError:                              # ragged: [[1, 2], [3]]
        raise BadValueError(f"{what} is a ragged list (rows of different lengths); numbers must "
                            f"form a rectangular array.") from None
    if array.dtype.kind not in "biuf":
        if array.dtype == object and any(isinstance(v, Node) for v in array.flat):
            raise BadValueError(f"{what} is a list of nodes, not numbers. To combine nodes, use "
                                f"ops: a + b, or mg.concatenate([a, b]).")
        data = {"U": "text", "S": "bytes", "c": "complex numbers"}.get(array.dtype.kind, array.dtype.name)
        raise BadValueError(f"{what} is {data} ({shape_text(array)}), not real numbers "
                            f"(got {str(value)[:40]!r}).")
    if dtype is not None and array.dtype != dtype:
        if np.dtype(dtype).kind in "iu" and array.dtype.kind == "f":
            whole = np.isfinite(array) & (array == np.round(array))
            if not np.all(whole):
                wrong = array.flat[np.argmin(whole)]
                kind = "fractions" if np.isfinite(wrong) else "NaN or infinity"
                raise BadValueError(f"{what} has {kind} ({wrong:g}), but it holds integers "
                                    f"(class labels, counts): feed whole numbers.")
        array = array.astype(dtype)
    return array


class ReadOnlyValue(np.ndarray):
    """What ``node.value`` hands out: the node's own array, read-only. An in-place edit such as
    ``W.value -= lr * W.grad`` raises an error saying to assign instead; anything computed from
    it (``W.value - lr * W.grad``, a copy) is a plain, writable numpy array."""

    def __array_finalize__(self, obj):
        self.node = getattr(obj, "node", None)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        array = array.view(np.ndarray)
        return array[()] if return_scalar else array

    def __repr__(self):
        return repr(self.view(np.ndarray))

    def copy(self, order="C"):
        return self.view(np.ndarray).copy(order)

    def _refuse(self):
        name = getattr(self.node, "name", "W")
        how = (f"assign a new array instead: {name}.value = {name}.value - lr * {name}.grad"
               if getattr(self.node, "kind", None) == "parameter" else
               "compute a new array from it instead (values change only by assignment or feeding)")
        raise GraphError(f"the value of '{name}' is read-only, so it cannot be changed in place; {how}.")

    def _in_place(name):
        """numpy's in-place ``name``, refused on the node's own (read-only) array. A fresh array
        numpy makes in this one's likeness (``v = np.zeros_like(W.value)``) is writable and
        behaves as a plain array."""
        def method(self, *args, **kwargs):
            if not self.flags.writeable:
                self._refuse()
            return getattr(np.ndarray, name)(self, *args, **kwargs)
        return method

    __setitem__ = _in_place("__setitem__")
    __iadd__, __isub__, __imul__, __itruediv__ = map(
        _in_place, ("__iadd__", "__isub__", "__imul__", "__itruediv__"))
    __ipow__, __imatmul__, __ifloordiv__, __imod__ = map(
        _in_place, ("__ipow__", "__imatmul__", "__ifloordiv__", "__imod__"))
    fill, sort, put = map(_in_place, ("fill", "sort", "put"))
    del _in_place


class HookHandle:
    """Returned by ``register_*_hook``; call ``remove()`` to unregister the hook."""

    def __init__(self, table, fn):
        self._table, self._key = table, next(_hook_ids)
        table[self._key] = fn
        _live_hooks[0] += 1

    def remove(self):
        if self._key in self._table:
            del self._table[self._key]
            _live_hooks[0] -= 1


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
        value.setflags(False)                     # _frozen, inlined: optimizers call this a lot
        self._value, self.stamp = value, next(_clock)

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
        new = value if type(value) is np.ndarray and value.dtype == dtype else numbers(
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
        super().__init__(name, value=_frozen(_finite(value, f"the value of Parameter '{name}'", dtype)))

    @property
    def dtype(self):
        return self._value.dtype

    @Node.value.setter
    def value(self, new):
        self._set(_finite(new, f"the new value of Parameter '{self.name}'", self.dtype))


class Constant(Node):
    """A fixed value, such as the ``2`` in ``2 * x``."""

    kind = "constant"

    def __init__(self, value, name=None, dtype=None):
        numbers(value, "a Constant's value")              # None, a node, text: BadValueError
        name = name or auto_name("const")
        dtype = None if dtype is None else dtypes.as_dtype(dtype, f"Constant '{name}'")
        value = dtypes.constant_array(value, dtype)       # integers (class labels) stay integers
        super().__init__(name, value=_frozen(value))


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
        numbers = [k for k, parent in enumerate(self.inputs) if parent.weak]
        self.weak = len(numbers) == len(self.inputs) > 0     # computed from numbers alone: a number
        if numbers and not self.weak:
            op = dtypes.WithNumbers(op, numbers)             # the numbers take the others' dtype
        self.op, self.attrs = op, dict(attrs or {})

    def __repr__(self):
        args = ", ".join(i.name for i in self.inputs)
        return f"Op('{self.name}' = {self.op.name}({args}), {shape_text(self._value)})"


def _finite(value, what, dtype=None):
    """A Parameter's value: a fresh floating array (``dtype``, or as ``dtypes.float_dtype`` says)
    with no NaN or infinity in it."""
    array = np.array(numbers(value, what), dtype=dtypes.float_dtype(value, dtype))
    if not np.all(np.isfinite(array)):
        raise BadValueError(f"{what} contains NaN or infinity; a Parameter starts from finite numbers.")
    return array


def first_repeat(nodes):
    """The first node that ``nodes`` lists a second time, or None if each is there once."""
    seen = set()
    for node in nodes:
        if node in seen:
            return node
        seen.add(node)
    return None


def as_node(value, what="a Constant's value"):
    """Nodes stay nodes; a Python number becomes a (weak) ``Number``; lists and arrays become
    Constants (``what`` names the value in the error if it is none of these)."""
    if isinstance(value, Node):
        return value
    numbers(value, what)                  # not numbers: a BadValueError that names ``what``
    return Number(value) if dtypes.is_python_number(value) else Constant(value)


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


@contextlib.contextmanager
def detect_anomaly():
    """Inside this block, a NaN or infinity raises NonFiniteError at the node that produced it
    (and every backward hands VJPs a read-only ``g``, as the first one does)."""
    previous, _anomaly[0] = _anomaly[0], True
    try:
        yield
    finally:
        _anomaly[0] = previous


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
        self._by_name, self._plans, self._unrolled_runs = {}, {}, {}
        self._interpreted = set()                 # plans the interpreter has run through once
        self._feedable = {key: n for n in self.inputs for key in (n, n.name)}   # node or its name
        for n in self.nodes:
            if self._by_name.setdefault(n.name, n) is not n:
                raise GraphError(f"two different nodes are named '{n.name}' in this graph. Names must "
                                 "be unique; did you re-run the cell that creates it but not the cells "
                                 "that use it?")
        self._forward_hooks, self._backward_hooks = {}, {}

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
                             f"{_listed(self._by_name)}")
        return self._by_name[name]

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

    # -- forward ---------------------------------------------------------------------------

    def forward(self, feed=None):
        """Feed the Inputs, compute every stale op, return the output value(s) (read-only, as
        ``node.value``: an in-place edit of them is explained, not numpy's bare complaint)."""
        self._compute(feed)
        values = [n.value for n in self.outputs]
        return values[0] if len(values) == 1 else values

    def _compute(self, feed):
        """``forward`` without the return value (``backward`` needs only the values stored)."""
        self._feed(feed or {})
        watched = self._forward_hooks or _anomaly[0]
        for node in self._ops:
            stamp = node.stamp
            for parent in node.inputs:
                if parent.stamp > stamp:
                    break
            else:
                if node._value is not None:
                    continue                              # nothing it depends on changed
            args = [parent._value for parent in node.inputs]
            try:
                out = node.op.forward(*args, **node.attrs)
            except Exception as error:                    # turn numpy's complaint into ours
                raise _op_failure(node, args, error, "forward") from None
            if watched or node._forward_hooks:
                out = self._watch(node, args, out)
            store_value(node, out)

    def _feed(self, feed):
        if type(feed) is not dict and not isinstance(feed, Mapping):
            raise BadValueError(f"the feed must be a dict {{Input: value}}, e.g. "
                                f"{{{', '.join(n.name + ': ...' for n in self.inputs) or 'x: ...'}}}; "
                                f"got {type(feed).__name__} {str(feed)[:40]!r}.")
        for key, value in feed.items():
            node = self._feedable.get(key) or self._not_feedable(key)
            node.feed(value)
            if _anomaly[0]:
                _check_finite(node, node._value, "was fed")
        for node in self.inputs:
            if node._value is None:
                raise MissingFeedError(
                    f"Input '{node.name}' has no value. Give it one in the feed, e.g. "
                    f"graph.forward({{{node.name}: ...}}); this graph's Inputs are: "
                    f"{_listed(n.name for n in self.inputs)}.")

    def _not_feedable(self, key):
        node = self.node(key)                             # raises if there is no such name
        what = "not part of this graph" if node.kind == "input" else f"a {node.kind}, not an Input"
        raise GraphError(f"the feed has a value for {describe(node)}, which is {what}. "
                         f"Feed only this graph's Inputs: {_listed(n.name for n in self.inputs)}")

    def _watch(self, node, args, out):
        """Run the forward hooks on a freshly computed op (one may replace ``out``), then, inside
        detect_anomaly, check it for NaN/inf."""
        for hook in [*node._forward_hooks.values(), *self._forward_hooks.values()]:
            replaced = _call_hook(hook, node, "forward", tuple(args), out)
            if replaced is not None and not same_shape(replaced, out):
                raise ShapeError(f"a forward hook on '{node.name}' ({node.op.name}) returned "
                                 f"{shape_text(_as_value(replaced))} for a value of {shape_text(out)}: "
                                 f"a hook that replaces a value must keep its shape.")
            out = out if replaced is None else replaced
        if _anomaly[0]:
            _check_finite(node, out, "produced", args)
        return out

    # -- backward --------------------------------------------------------------------------

    def backward(self, feed=None, seed=None, wrt=None):
        """d(output)/d(node) for every node, or only for the ``wrt`` nodes; returns the output value.

        ``seed`` is the gradient of whatever you differentiate with respect to the output: 1 for
        a scalar loss (the default); pass an array of the output's shape for a non-scalar one.
        ``wrt`` is a list of nodes (or of their names); a single node means ``[node]``.
        """
        plan = self.plan(wrt)
        run = self._unrolled(plan) if self._plain() else None
        if run is not None:
            try:
                return run(feed or {}, seed)
            except Exception:
                pass                      # the interpreter below runs the call again and explains
        self._compute(feed)
        value = plan.output._value                    # the array itself, as the unrolled code returns
        for node in self.nodes:                       # fresh gradients: forget the last call's
            node.grad = None
        grads = {plan.output: plan.seed(value, seed)}
        careful = _anomaly[0] or plan not in self._interpreted    # the first run: watch the VJPs
        for node, wanted in plan.steps:
            g = grads.get(node)
            if g is None:                             # no gradient reached this op
                continue
            if node.op.n_outputs > 1:
                g = fill_unused_outputs(g, node._value)
            elif careful and type(g) is np.ndarray:   # g may be another node's gradient too:
                g = g.view()                          # a VJP writing into it (g *= ...) raises
                g.setflags(False)
            args = [parent._value for parent in node.inputs]
            vjps, ans, attrs = node.op.vjps, node._value, node.attrs
            sent = []
            for k in wanted:
                try:
                    gi = vjps[k](g, ans, *args, **attrs)
                except Exception as error:
                    raise _op_failure(node, args, error, f"backward (the gradient for input "
                                      f"'{node.inputs[k].name}')") from None
                fits = type(gi) is type(args[k]) is np.ndarray and gi.shape == args[k].shape
                if not fits or _anomaly[0]:               # None, numbers, tuples, a wrong shape
                    gi = checked_gradient(node, k, gi, args)
                sent.append((k, gi))
            if node._backward_hooks or self._backward_hooks:
                sent = self._apply_backward_hooks(node, g, sent, args)
            for k, gi in sent:
                if gi is not None:                    # sum what each consumer sends back
                    parent = node.inputs[k]
                    old = grads.get(parent)
                    grads[parent] = gi if old is None else add_gradients(old, gi)
        give_gradients(plan.graded, [grads.get(node) for node in plan.graded])
        self._interpreted.add(plan)
        return value

    def _plain(self):
        """No hooks on this graph or its ops, not inside detect_anomaly: the unrolled code may run."""
        if _anomaly[0]:
            return False
        if not _live_hooks[0]:                # no hooks anywhere: nothing to look for
            return True
        if self._forward_hooks or self._backward_hooks:
            return False
        for n in self._ops:                   # a loop, not any(...): this runs at every backward
            if n._forward_hooks or n._backward_hooks:
                return False
        return True

    def _unrolled(self, plan):
        """The straight-line form of this plan (see ``unrolled.py``), or None. It is written once
        the interpreter has run the plan through without error (a backward run once is not worth
        writing out, and that first run watches the VJPs closely), for graphs of up to
        ``unrolled.MAX_OPS`` ops (writing costs about 0.2 ms per op). If writing it fails, the
        interpreter keeps this plan: the fast path never raises."""
        if plan not in self._unrolled_runs:
            if plan not in self._interpreted or len(self._ops) > unrolled.MAX_OPS:
                return None
            try:
                self._unrolled_runs[plan] = unrolled.build(plan)
            except Exception:
                self._unrolled_runs[plan] = None
        return self._unrolled_runs[plan]

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

    def _apply_backward_hooks(self, node, g, sent, args):
        """Show each hook ``(node, g, grad_inputs)``, one entry per input (None if not wanted);
        a hook that returns something replaces grad_inputs (checked against ``args``, the
        inputs' values: one gradient per input, each of its input's shape)."""
        grad_inputs = [None] * len(node.inputs)
        for k, gi in sent:
            grad_inputs[k] = gi
        for hook in [*node._backward_hooks.values(), *self._backward_hooks.values()]:
            replaced = _call_hook(hook, node, "backward", g, tuple(grad_inputs))
            if replaced is not None:
                grad_inputs = _hooked_gradients(node, replaced, args)
        return list(enumerate(grad_inputs))


def _call_hook(hook, node, phase, *args):
    """``hook(node, *args)``; if the hook raises, an OpError naming the node (the hook's own
    error and line follow it in the traceback)."""
    try:
        return hook(node, *args)
    except Exception as error:
        advice = ("It writes in place into an array it was given, which other nodes share: return "
                  "the new value (or gradients) instead." if "read-only" in str(error) else
                  f"The hook is your code: fix it, or remove it with the handle "
                  f"register_{phase}_hook returned (handle.remove()).")
        raise OpError(f"a {phase} hook on '{node.name}' ({node.op.name}) raised "
                      f"{type(error).__name__}: {error}. {advice}") from error


def _hooked_gradients(node, replaced, args):
    """What a backward hook returned instead of the input gradients, checked: a tuple (or list)
    of one gradient (or None) per input, each of its input's shape."""
    n = len(node.inputs)
    if not isinstance(replaced, (tuple, list)) or len(replaced) != n:
        got = f"{len(replaced)} values" if isinstance(replaced, (tuple, list)) else shape_text(_as_value(replaced))
        raise GraphError(f"a backward hook on '{node.name}' ({node.op.name}) returned {got}; it must "
                         f"return a tuple of {n} gradient{'s' if n > 1 else ''}, one per input (None "
                         f"for no gradient), or None to keep the gradients as they are.")
    replaced = tuple(gi if gi is None else _as_value(gi) for gi in replaced)
    for k, gi in enumerate(replaced):
        if gi is not None and not same_shape(gi, args[k]):
            raise ShapeError(f"a backward hook on '{node.name}' ({node.op.name}) returned a gradient "
                             f"({shape_text(gi)}) for its input {describe(node.inputs[k])}: a "
                             f"gradient must have its input's shape.")
    return replaced


def _listed(names, most=12):
    """``a, b, c`` for an error message; a long list is cut: ``a, b, ... (500 in all)``."""
    names = list(names)
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[:most])}, ... ({len(names)} in all)"


def _as_tuple(wrt):
    """A ``wrt`` list as a tuple (a key of the plan cache); something that is not a list (``3``)
    as a tuple of itself, so that ``Graph.node`` says what it is."""
    try:
        return tuple(wrt)
    except TypeError:
        return (wrt,)


def value_of(node):
    """The node's own array, as ops compute with it (``node.value`` hands out a read-only view)."""
    return node._value


def store_value(node, value):
    """Store what an op computed as its (read-only) value, stamp it, and return it."""
    if type(value) is np.ndarray and node.op.n_outputs == 1:
        value.setflags(False)                     # _frozen, inlined: this runs for every op
    elif not (isinstance(value, np.generic) and node.op.n_outputs == 1):   # a numpy number is fine
        value = _checked_value(node, value)
    node._value, node.stamp = value, next(_clock)
    return value


def _checked_value(node, value):
    """An op's value that is not simply one array: one per output for a multi-output op, a
    numpy number, or a Python number (made a numpy value); None is an error."""
    n_outputs = node.op.n_outputs
    if n_outputs > 1 and not (isinstance(value, tuple) and len(value) == n_outputs):
        raise OpError(f"the forward of '{node.name}' ({node.op.name}) returned "
                      f"{shape_text(value) if not isinstance(value, tuple) else f'{len(value)} values'}, "
                      f"but the op has n_outputs={n_outputs}: return a tuple of {n_outputs} "
                      f"arrays, one per output.")
    if value is None:
        raise OpError(f"the forward of '{node.name}' ({node.op.name}) returned None. Did it forget "
                      f"`return`? It must return the op's value.")
    if n_outputs == 1 and isinstance(value, tuple):
        raise OpError(f"the forward of '{node.name}' ({node.op.name}) returned a tuple of "
                      f"{len(value)} values, but the op has n_outputs=1: return one array (or "
                      f"define the op with n_outputs={len(value)}).")
    return _not_text(node, _as_value(value), "the forward", "as its value")


def checked_gradient(node, k, gi, args):
    """A gradient from ``node``'s VJP for its input ``k``, checked: it has the input's shape (and,
    inside detect_anomaly, no NaN/inf). A plain Python number becomes a numpy value."""
    if isinstance(gi, np.generic) and not _anomaly[0] and getattr(args[k], "shape", None) == ():
        return gi                                 # a numpy number for a number: numpy's way with 0-d
    if gi is None:
        raise OpError(
            f"the backward of '{node.name}' ({node.op.name}) returned None for its input "
            f"{describe(node.inputs[k])}. Did its VJP forget `return`? It must return the gradient "
            f"of that input (zeros if the output does not depend on it).")
    gi = _not_text(node, _as_value(gi), "the backward", f"for its input {describe(node.inputs[k])}")
    if not same_shape(gi, args[k]):
        raise ShapeError(
            f"the backward of '{node.name}' ({node.op.name}) returned a gradient ({shape_text(gi)}) "
            f"for its input {describe(node.inputs[k])}: a gradient must have its input's shape. "
            + _shape_advice(gi, args[k]))
    if _anomaly[0]:
        _check_finite(node, gi, f"sent a gradient to '{node.inputs[k].name}' that is", args)
    return gi


def _not_text(node, value, phase, what):
    """``value``, unless it is not made of numbers (text, objects): then an OpError naming the op."""
    if isinstance(value, np.ndarray) and value.dtype.kind not in "biuf":
        raise OpError(f"{phase} of '{node.name}' ({node.op.name}) returned "
                      f"{'text' if value.dtype.kind in 'US' else value.dtype.name} {what} "
                      f"({str(value)[:40]!r}), not numbers: it must return a numpy array.")
    return value


def _shape_advice(grad, value):
    """What a gradient of the wrong shape usually means, and what to do about it."""
    got, want = np.shape(grad), np.shape(value)
    if isinstance(grad, tuple) and not isinstance(value, tuple):
        return f"It is a tuple of {len(grad)}: return the gradient itself, one array of the input's shape."
    if isinstance(value, tuple):
        return "An op with several outputs gets and returns one gradient per output, in a tuple."
    if len(got) > 1 and got == want[::-1]:
        return ("It is the input's shape reversed: a transposed gradient? For x @ W, x's gradient is "
                "g @ W.T and W's is x.T @ g: transpose it, or swap the operands.")
    if np.prod(got) < np.prod(want):
        return ("It has fewer entries than the input: it was summed too much (np.sum without an axis "
                "gives one number). Each entry of the input needs its own gradient: do not reduce.")
    if np.prod(got) > np.prod(want):
        return ("The input was broadcast in the forward pass: sum the gradient over the broadcast "
                "axes (mg.unbroadcast(g, x.shape) does this).")
    return "It has as many entries as the input: reshape it to the input's shape."


def _as_value(x):
    """Values and gradients are numpy arrays or scalars (or tuples, for multi-output ops): a plain
    Python number from a learner's op becomes a 0-d array, so every value has ``.shape``."""
    return x if isinstance(x, (np.ndarray, np.generic, tuple)) else np.asarray(x)


def same_shape(grad, value):
    """Does a gradient fit its value? (Element by element for a multi-output op's tuple.)"""
    if isinstance(value, tuple):
        return isinstance(grad, tuple) and all(
            g is None or np.shape(g) == np.shape(v) for g, v in zip(grad, value))
    return np.shape(grad) == np.shape(value)


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
    if type(g) is not np.ndarray:
        return tuple(_own(x, held) for x in g) if isinstance(g, tuple) else g
    if g.base is not None or id(g) in held or not g.flags.writeable:
        g = g.copy()                              # a copy owns its memory: nobody else holds it
    held.add(id(g))
    return g


class BackwardPlan:
    """What ``graph.backward(feed, seed, wrt)`` does, worked out once per ``wrt``.

    It is the whole contract between the interpreter (``Graph.backward``, the reference) and the
    code writer (``unrolled.py``, the fast path): the writer reads nothing else, so the code it
    writes can only do what the interpreter does. A backward

    1. feeds the Inputs (``feed``), then computes each op of ``ops`` whose inputs are newer than
       it, from its inputs' ``value_of``, storing what it computes with ``store_value``;
    2. starts from the gradient of ``output`` (``seed``), and for each ``(op, wanted)`` of ``steps``
       (outputs first) that received a gradient, calls the op's VJP for each input position in
       ``wanted`` (a multi-output op gets one gradient per output: ``fill_unused_outputs``),
       checks the result (``checked_gradient``) and sums what an input receives
       (``add_gradients``);
    3. hands the gradients of ``graded`` out with ``give_gradients``.

    By default every node that can have a gradient (not Constants, not integer Inputs) needs one
    and gets it. With ``wrt``, the ``wrt`` nodes and the ops downstream of one need one, and only
    the ``wrt`` nodes get it.
    """

    value_of = staticmethod(value_of)
    store_value = staticmethod(store_value)
    checked_gradient = staticmethod(checked_gradient)
    add_gradients = staticmethod(add_gradients)
    fill_unused_outputs = staticmethod(fill_unused_outputs)
    give_gradients = staticmethod(give_gradients)

    def __init__(self, graph, wrt):
        self.nodes, self.ops, self.output = graph.nodes, graph._ops, graph.outputs[0]
        self.leaves = [n for n in self.nodes if n.op is None]
        self.feed = graph._feed
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
        seed = np.array(numbers(seed, "the seed gradient"),     # a copy: the caller's stays theirs
                        dtype=dtypes.float_dtype(value))
        if seed.shape != np.shape(value):
            raise ShapeError(f"the seed gradient has shape {seed.shape}, but the output "
                             f"{describe(self.output)} has shape {np.shape(value)}; they must match.")
        return seed


def _op_failure(node, args, error, phase):
    """A learner-readable error for an op whose forward or backward raised: the node, the op and
    its inputs' shapes first, then what went wrong and what to do."""
    inputs = ", ".join(f"{p.name} ({p.kind}) {shape_text(a)}" for p, a in zip(node.inputs, args))
    where = f"{phase} of '{node.name}' = {node.op.name}({inputs}) failed"
    if isinstance(error, GraphError):             # an op that explains itself (e.g. a bad label)
        return type(error)(f"{where}: {error}.")
    is_shape = isinstance(error, IndexError) or isinstance(error, ValueError) and any(
        w in str(error) for w in ("shape", "broadcast", "dimension", "align", "size", "division"))
    if "read-only" in str(error):                 # values and gradients are shared: never edited
        return OpError(f"{where}: the code of op '{node.op.name}' writes in place into an array it "
                       f"was given (x *= ..., g += ..., out=...). Other nodes share that array: "
                       f"compute a new one instead (g = g * ..., not g *= ...).\n  error: "
                       f"{type(error).__name__}: {error}")
    empty = [f"{p.name} ({shape_text(a)})" for p, a in zip(node.inputs, args)
             if type(a) is np.ndarray and a.size == 0]
    if is_shape:
        advice = (f"The input {empty[0]} is empty: a batch of 0 examples? Check the slice that "
                  f"made it." if empty else "Check the shapes you feed and the shapes of the parameters.")
    else:
        advice = (f"The code of op '{node.op.name}' raised this; if you wrote that op, fix its "
                  f"{phase.split()[0]}.")
        n = node.op.n_outputs
        if n > 1 and phase.startswith("backward"):
            advice += (f" It has {n} outputs, so its VJPs get g as a tuple of {n} gradients, one "
                       f"per output (g[0], g[1], ...).")
    kind = ShapeError if is_shape else OpError
    return kind(f"{where}. {advice}\n  error: {type(error).__name__}: {error}")  # numpy's words last


def _check_finite(node, value, verb, args=()):
    values = [v for v in (value if isinstance(value, tuple) else (value,)) if v is not None]
    if all(np.all(np.isfinite(v)) for v in values if np.asarray(v).dtype.kind == "f"):
        return
    where = "".join(f"\n  input {p.name}: {shape_text(a)}, min {np.min(a):.4g}, max {np.max(a):.4g}"
                    for p, a in zip(node.inputs, args) if np.size(a))
    op = f" ({node.op.name})" if node.op else ""
    raise NonFiniteError(f"'{node.name}'{op} {verb} NaN or infinity.{where}\n  Look for log of 0, "
                         f"division by 0 or overflowing exp; a smaller learning rate or a stable "
                         f"form (bce_with_logits, log_softmax) usually fixes it.")
