"""``mg.function``: a graph turned into a callable, in the spirit of Theano's ``function``.

    x, t = mg.Input("x"), mg.Input("t")
    loss = ...                                             # built from x, t and Parameters W, b
    dW, db = mg.grad(loss, [W, b])                         # the backward pass, as nodes
    train = mg.function([x, t], loss, updates={W: W - 0.1 * dW, b: b - 0.1 * db})
    train(x_values, t_values)                              # one step: returns the loss

All the work of a training step (forward, backward, the update) is one graph, fixed once and
watched by no hook, so ``mg.function`` may do what the interpreter may not. It compiles the
graph in three steps, each of which ``print(train.source)`` shows (``mg.draw(train.rewritten())``
draws the graph the rewrites leave, ``train.memory.table()`` lists the memory plan's buffers):

1. **rewrites** (``rewrites.py``): identical subexpressions merged, ops of constants computed
   once, then, at the first call, what shapes decide (the seed 1, ``sum_to`` and reshapes that
   change nothing, the dtype of the formulas' numbers) and what no result needs removed. The
   numbers stay exactly the same.
2. **a memory plan** (``memory.py``): values live in buffers allocated once and reused at
   every call, two values whose lives do not overlap sharing one.
3. **code** (``stepcode.py``): one line of straight-line Python per op.

Steps 1 and 2 depend on the shapes and dtypes of the Inputs fed and of the Parameters: the first
call with new ones computes the program op by op (``rewrites.evaluate``), which tells its shapes,
and writes the code for them, which the next calls with those shapes run (each set of shapes
keeps its code; ``source`` shows the last one written). ``mg.function(..., optimize=False)``
skips steps 1 and 2: the graph's ops, one line each, each allocating its result.

A call takes the arrays it is given as they are (the Inputs are not fed: ``node.value`` of an
Input, and of an op, is what the interpreter, ``Graph.forward``, last computed) and runs the
code. Each update sees the old values of all Parameters: it is written into the Parameter's own
array, in place (an array you took from ``W.value`` before the call changes with it), once
nothing reads the old value any more (the memory plan says when: at the end, or earlier), or
with ``optimize=False`` by assignment (``W.value = new``) after the code. An update to NaN or
infinity is refused as its assignment would be (those written before it have moved). What a
call returns is the caller's, never overwritten by the next call. If a line fails, the
interpreter runs the same graph again and explains the error.
"""

import functools
import math

import numpy as np

from .. import codegen
from . import rewrites, stepcode
from .memory import plan_memory
from ..dtypes import float_dtype
from ..errors import BadValueError, GraphError, ShapeError, describe
from ..graph import Graph, Node, as_node, first_repeat, value_of
from ..values import as_numbers, parameter_array


class Function:
    """A compiled graph: ``f(*values)`` feeds ``inputs`` in order and returns ``outputs``' values."""

    def __init__(self, inputs, outputs, updates=None, optimize=True):
        self.inputs = [inputs] if isinstance(inputs, Node) else list(inputs)
        self.single = not isinstance(outputs, (list, tuple))     # one node (or a mistake: Graph says)
        self.outputs = [outputs] if self.single else list(outputs)
        pairs = list((updates or {}).items() if hasattr(updates or {}, "items") else updates)
        for parameter, _ in pairs:
            if getattr(parameter, "kind", None) != "parameter":
                raise BadValueError(f"updates maps Parameters to the node of their new value; "
                                    f"{parameter!r} is not a Parameter.")
        self.updated = [p for p, _ in pairs]
        twice = first_repeat(self.updated)
        if twice is not None:
            raise BadValueError(f"mg.function updates '{twice.name}' twice; give each Parameter one "
                                f"new value (both would be computed, and the last one kept).")
        self.graph = Graph(self.outputs + [as_node(new) for _, new in pairs])
        strangers = [n for n in self.inputs if getattr(n, "kind", None) != "input"]
        if strangers:
            raise BadValueError(f"mg.function's inputs are Input nodes, in the order of the call's "
                                f"arguments; {strangers[0]!r} is not an Input.")
        twice = first_repeat(self.inputs)
        if twice is not None:
            raise BadValueError(f"mg.function's inputs name the Input '{twice.name}' twice; give each "
                                f"Input once (one value per Input in each call).")
        missing = [n.name for n in self.graph.inputs if n not in self.inputs]
        if missing:
            raise GraphError(f"the outputs and updates need the Input(s) {', '.join(missing)}, which "
                             f"are not among the function's inputs: add them to the list of inputs.")
        self.optimize = optimize
        program = rewrites.program_of(self.graph.nodes, self.graph.outputs)
        self.program = rewrites.run_passes(program, rewrites.AT_CREATION) if optimize else program
        self.parameters = [t.node for t in self.program.terms if t.kind == "parameter"]
        self.plans = {}                   # shapes and dtypes of a call -> its CodeForShapes
        self._subtract = functools.partial(subtract_from, bounds={})   # bounds: see subtract_from
        self.written, self.memory = self.program, None    # what the last code written runs
        self.source = self._written(self.program, None, ["not called yet: no shapes known, "
                                                         "no memory plan"])[0]

    def __call__(self, *values):
        if len(values) != len(self.inputs):
            raise BadValueError(f"this function takes {len(self.inputs)} value(s), one per input "
                                f"({', '.join(n.name for n in self.inputs)}); it was given {len(values)}.")
        try:
            results, in_place = self._compiled(values)
        except Exception:                # the interpreter runs the call again and explains
            return self._interpret(values)
        return self._returned(results, in_place)

    def run_compiled(self, *values):
        """A call without the interpreter to fall back on: the generated code's error, if any
        (for tests: no fallback can hide a bug of the code). Returns the list of outputs."""
        return list(self._returned(*self._compiled(values), single=False))

    def _compiled(self, values):
        """The generated code's results for ``values`` (planned first, for new shapes), and the
        Parameters its updates write in place."""
        arrays = [_as_fed(node, value) for node, value in zip(self.inputs, values)]
        key = tuple((a.shape, a.dtype) for a in arrays) + tuple(
            (p._value.shape, p._value.strides) for p in self.parameters)   # (a layout: see _plan)
        code = self.plans.get(key)
        if code is None:
            code, values = self._plan(arrays, key)
            return _own_arrays([values[t] for t in self.program.results], arrays), code.in_place
        return code.run(arrays), code.in_place

    def _returned(self, results, in_place, single=None):
        """Write the updates, return the outputs."""
        n = len(self.outputs)
        _write(self.updated, results[n:], in_place)
        return results[0] if (self.single if single is None else single) else results[:n]

    def _plan(self, arrays, key):
        """Rewrite the program for the shapes of this call, plan its memory and write its code;
        returns its ``CodeForShapes`` and the values of this call, computed op by op to learn
        their shapes. What it decides holds for every call with the same ``key``: the shapes
        and dtypes of the Inputs (fed in C order) and the shapes and layouts of the Parameters
        (a value's layout decides its ops' results' layouts, and the order in which a sum adds
        numbers)."""
        leaf = dict(zip(self.inputs, arrays))
        values = rewrites.evaluate(self.program,
                                  lambda t: leaf[t.node] if t.kind == "input" else t.node._value)
        n = len(self.outputs)
        for parameter, t in zip(self.updated, self.program.results[n:]):
            if np.shape(values[t]) != parameter.shape:
                raise ShapeError(f"the update of {describe(parameter)} computes {np.shape(values[t])}")
        program, memory = self.program, None
        if self.optimize:
            program = rewrites.run_passes(rewrites.Program(program.terms, program.results, program.notes,
                                                          program.stands_for),
                                         rewrites.FOR_SHAPES, values)
            memory = plan_memory(program, values, n, self.updated)
        shapes = ", ".join(f"{node.name} {a.shape} {a.dtype}" for node, a in zip(self.inputs, arrays))
        again = f" (plan {len(self.plans) + 1}: new shapes, planned again)" if self.plans else ""
        self.source, run = self._written(program, memory, [f"for {shapes or 'no inputs'}{again}"])
        self.written, self.memory = program, memory
        in_place = memory.in_place if memory else set()
        self.plans[key] = code = CodeForShapes(run, self.source, in_place)
        return code, values

    def rewritten(self):
        """The graph the last code written computes (after the rewrites of its shapes; before
        the first call, of the rewrites made at creation), as a new ``Graph`` to draw or count
        (``mg.draw(train.rewritten())``): its Inputs and Parameters are the function's own, its
        outputs the function's outputs, then the updates' new values. ``train.memory`` is that
        code's memory plan (``memory.table()``: its buffers), None before the first call."""
        return rewrites.graph_of(self.written)

    def _written(self, program, memory, about):
        """The source of ``program`` with ``memory``, its header saying what the passes did, and
        the compiled function."""
        header = [f"mg.function, {about[0]}"]
        if program.notes:
            header += ["rewrites (ops before -> after):"] + [
                f"  {name:<28} {before:>4} -> {after:<4} {what}"
                for name, before, after, what in program.notes]
        if memory:
            allocated = program.n_ops - len(memory.into) - len(memory.subtracted)
            header += [f"memory plan: {len(memory.into)} values in {len(memory.buffers)} buffers "
                       f"({memory.nbytes:,} bytes) allocated once; {allocated} values "
                       f"allocated at each call; updates written in place into: "
                       f"{', '.join(sorted(p.name for p in memory.in_place)) or 'none'}"
                       f" ({len(memory.subtracted)} of them subtracted: W -= change)"]
            header += [f"  {line}" for line in memory.table()]
        text, env = stepcode.step_source(program, self.inputs, value_of, memory, header, write_into,
                                        self._subtract)
        return text, codegen.compile_function(text, env, "mg.function")

    def _interpret(self, values):
        """The call, by the interpreter: its result, or its explanation of what went wrong."""
        feed = dict(zip(self.inputs, values))
        results = self.graph.forward(feed)
        results = results if len(self.graph.outputs) > 1 else [results]
        n = len(self.outputs)
        for parameter, new in zip(self.updated, results[n:]):
            if new.shape != parameter.shape:
                raise ShapeError(f"the update of {describe(parameter)} computes {new.shape}: an "
                                 f"update must keep the Parameter's shape.")
        for parameter, new in zip(self.updated, results[n:]):
            parameter.value = new
        return results[0] if self.single else results[:n]


def _own_arrays(results, fed):
    """The first call's results, each an array of the caller's own: a result that is a Parameter's
    or a fed array, a view of another array, or a result already returned is copied; a new
    array that the call computed is returned as it is."""
    own, seen = [], set()
    for v in results:
        mine = type(v) is not np.ndarray or (v.flags.owndata and v.flags.writeable and id(v) not in seen
                                              and not any(v is a for a in fed))
        seen.add(id(v))
        own.append(v if mine else v.copy())
    return own


class CodeForShapes:
    """The code written for one set of shapes: ``run(arrays)``, its ``source``, and the
    Parameters its updates write ``in_place``."""

    def __init__(self, run, source, in_place):
        self.run, self.source, self.in_place = run, source, in_place


def _as_fed(node, value):
    """``value`` as the array an Input holds when fed it (``Input.feed``), copied only if it is
    not one already: of the Input's dtype, its numbers in C order (the order of a fed copy,
    in which numpy's sums add them up)."""
    dtype = float_dtype(value, node.dtype)
    if not (type(value) is np.ndarray and value.dtype == dtype):
        value = as_numbers(value, f"the value fed to Input '{node.name}'", dtype)
    return value if value.flags.c_contiguous else np.ascontiguousarray(value)


def _write(parameters, news, in_place):
    """Give each Parameter its new value (None: the code wrote it already): into its own array
    for those ``in_place``, by assignment for the others."""
    for parameter, new in zip(parameters, news):
        if new is None:
            continue
        if parameter in in_place:
            write_into(parameter, new)
        else:
            parameter.value = new


def subtract_from(parameter, change, bounds):
    """``W <- W - change`` (the memory plan's ``subtracted`` updates), written into the
    Parameter's own array in one pass, ``np.subtract(W, change, out=W)``: the numbers of
    ``W - change``, without a buffer for them, a check of them or a copy. Only if they are sure
    to be finite, for a refused update must leave ``W`` as it was; else as ``write_into``.

    Sure, without a look at them: ``change`` is finite with a norm ``||change||`` if its
    squared norm (one pass, no array made) is finite, and ``|W - change| <= max|W| + ||change||``
    elementwise. ``bounds`` keeps, for each Parameter, a bound on ``max|W|`` and the stamp it
    holds for (``||W||`` at first; then each subtraction adds ``||change||``; a value
    assigned in between has a new stamp, and its bound is computed again). While the bound
    stays far below the dtype's largest number, ``W - change`` cannot overflow."""
    own = parameter._value
    stamp, bound = bounds.get(parameter, (None, 0.0))
    if stamp != parameter.stamp:
        bound = math.sqrt(np.vdot(own, own))
    bound += math.sqrt(np.vdot(change, change))     # NaN (or inf) if a number of change is
    if bound < _FAR_BELOW_OVERFLOW.get(own.dtype.char, 0.0) and own.flags.owndata:   # (False for NaN)
        own.setflags(write=True)
        np.subtract(own, change, out=own)
        parameter._set(own)                         # read-only again, with a new stamp
        bounds[parameter] = (parameter.stamp, bound)
    else:
        write_into(parameter, np.subtract(own, change))


# A quarter of each float dtype's largest number: room enough for the rounding of the norms
# (a rounded sum of squares is never below its largest square, whatever the order of the sum).
# Other dtypes (longdouble) take write_into's path.
_FAR_BELOW_OVERFLOW = {np.dtype(t).char: float(np.finfo(t).max) / 4 for t in (np.float16, np.float32, np.float64)}


def write_into(parameter, new):
    """Write ``new`` into the Parameter's own array (stamped, so what depends on it recomputes),
    if its numbers are finite, as a Parameter's are; else the error of an assignment of them."""
    # new.sum() without its wrapper: a sum is finite only if every number is (or it overflows)
    if not math.isfinite(np.add.reduce(new, axis=None)):
        parameter_array(new, f"the new value of Parameter '{parameter.name}'")
    own = parameter._value
    if not own.flags.owndata:                   # (a Parameter's array is its own, unless
        parameter.value = new                   # someone gave it another)
        return
    own.setflags(write=True)
    np.copyto(own, new)
    parameter._set(own)                         # read-only again, with a new stamp


def function(inputs, outputs, updates=None, optimize=True):
    """Compile ``outputs`` (a node or a list) into a callable taking one value per node of
    ``inputs``; ``updates`` ({Parameter: node}, or a list of pairs) are written after each call.
    ``optimize=False``: the graph's ops as they are, no rewrites, no memory plan."""
    return Function(inputs, outputs, updates, optimize)
