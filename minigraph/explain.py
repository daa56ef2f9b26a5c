"""Explain: turn a failure inside the engine into an error a learner can act on.

When an op's forward or VJP raises, returns None, text or a gradient of the wrong shape, when a
hook fails or a feed is wrong, numpy's own complaint (``operands could not be broadcast...``)
says little about *which* node went wrong. The functions here write the engine's errors
instead (the classes of ``errors.py``): the node, its op and its inputs' shapes first, then
what went wrong and what to do; numpy's words, if any, last.

``graph.py`` (and ``hooks.py``, for the hooks) calls them where something can go wrong; each
either returns the error for the caller to raise, or checks a value and raises. An op that
fails in the fast path's generated code gets the same error (``graph.op_failed``).
"""

import numpy as np

from .errors import (BadValueError, GraphError, MissingFeedError, NonFiniteError, OpError, ShapeError,
                     describe, shape_text)
from .values import as_value, same_shape


# -- an op that raised ----------------------------------------------------------------------

def op_failure(node, args, error, phase):
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


# -- an op that returned something that is not a value or a gradient ------------------------

def check_value(node, value):
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
    return _not_text(node, as_value(value), "the forward", "as its value")


def check_gradient(node, k, gi, args):
    """The gradient ``node``'s VJP returned for its input ``k`` (whose value is ``args[k]``), as a
    numpy value; None, text or a wrong shape is an error that says what to do."""
    if gi is None:
        raise OpError(
            f"the backward of '{node.name}' ({node.op.name}) returned None for its input "
            f"{describe(node.inputs[k])}. Did its VJP forget `return`? It must return the gradient "
            f"of that input (zeros if the output does not depend on it).")
    gi = _not_text(node, as_value(gi), "the backward", f"for its input {describe(node.inputs[k])}")
    if not same_shape(gi, args[k]):
        raise ShapeError(
            f"the backward of '{node.name}' ({node.op.name}) returned a gradient ({shape_text(gi)}) "
            f"for its input {describe(node.inputs[k])}: a gradient must have its input's shape. "
            + _shape_advice(gi, args[k]))
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


def check_finite(node, value, verb, args=()):
    """Inside ``detect_anomaly``: a NonFiniteError if ``value`` holds NaN or infinity, naming the
    node (``'{node}' {verb} NaN``) and the range of each of its inputs ``args``."""
    values = [v for v in (value if isinstance(value, tuple) else (value,)) if v is not None]
    if all(np.all(np.isfinite(v)) for v in values if np.asarray(v).dtype.kind == "f"):
        return
    where = "".join(f"\n  input {p.name}: {shape_text(a)}, min {np.min(a):.4g}, max {np.max(a):.4g}"
                    for p, a in zip(node.inputs, args) if np.size(a))
    op = f" ({node.op.name})" if node.op else ""
    raise NonFiniteError(f"'{node.name}'{op} {verb} NaN or infinity.{where}\n  Look for log of 0, "
                         f"division by 0 or overflowing exp; a smaller learning rate or a stable "
                         f"form (bce_with_logits, log_softmax) usually fixes it.")


# -- hooks ----------------------------------------------------------------------------------

def hook_failure(node, phase, error):
    """An OpError naming the node whose ``phase`` ("forward"/"backward") hook raised ``error``
    (the hook's own error and line follow it in the traceback)."""
    advice = ("It writes in place into an array it was given, which other nodes share: return "
              "the new value (or gradients) instead." if "read-only" in str(error) else
              f"The hook is your code: fix it, or remove it with the handle "
              f"register_{phase}_hook returned (handle.remove()).")
    return OpError(f"a {phase} hook on '{node.name}' ({node.op.name}) raised "
                   f"{type(error).__name__}: {error}. {advice}")


def check_hooked_value(node, replaced, out):
    """What a forward hook returned instead of ``out``, checked: it must keep ``out``'s shape."""
    if not same_shape(replaced, out):
        raise ShapeError(f"a forward hook on '{node.name}' ({node.op.name}) returned "
                         f"{shape_text(as_value(replaced))} for a value of {shape_text(out)}: "
                         f"a hook that replaces a value must keep its shape.")
    return replaced


def check_hooked_gradients(node, replaced, args):
    """What a backward hook returned instead of the input gradients, checked: a tuple (or list)
    of one gradient (or None) per input, each of its input's shape."""
    n = len(node.inputs)
    if not isinstance(replaced, (tuple, list)) or len(replaced) != n:
        got = f"{len(replaced)} values" if isinstance(replaced, (tuple, list)) else shape_text(as_value(replaced))
        raise GraphError(f"a backward hook on '{node.name}' ({node.op.name}) returned {got}; it must "
                         f"return a tuple of {n} gradient{'s' if n > 1 else ''}, one per input (None "
                         f"for no gradient), or None to keep the gradients as they are.")
    replaced = tuple(gi if gi is None else as_value(gi) for gi in replaced)
    for k, gi in enumerate(replaced):
        if gi is not None and not same_shape(gi, args[k]):
            raise ShapeError(f"a backward hook on '{node.name}' ({node.op.name}) returned a gradient "
                             f"({shape_text(gi)}) for its input {describe(node.inputs[k])}: a "
                             f"gradient must have its input's shape.")
    return replaced


# -- feeds and names --------------------------------------------------------------------------

def not_a_feed(feed, inputs):
    """The error for a feed that is not a dict."""
    return BadValueError(f"the feed must be a dict {{Input: value}}, e.g. "
                         f"{{{', '.join(n.name + ': ...' for n in inputs) or 'x: ...'}}}; "
                         f"got {type(feed).__name__} {str(feed)[:40]!r}.")


def not_feedable(node, inputs):
    """The error for a feed that gives a value to ``node``, which is not one of ``inputs``."""
    what = "not part of this graph" if node.kind == "input" else f"a {node.kind}, not an Input"
    return GraphError(f"the feed has a value for {describe(node)}, which is {what}. "
                      f"Feed only this graph's Inputs: {listed(n.name for n in inputs)}")


def missing_feed(node, inputs):
    """The error for an Input ``node`` that was never fed (``inputs``: the graph's Inputs)."""
    return MissingFeedError(
        f"Input '{node.name}' has no value. Give it one in the feed, e.g. "
        f"graph.forward({{{node.name}: ...}}); this graph's Inputs are: "
        f"{listed(n.name for n in inputs)}.")


def listed(names, most=12):
    """``a, b, c`` for an error message; a long list is cut: ``a, b, ... (500 in all)``."""
    names = list(names)
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[:most])}, ... ({len(names)} in all)"
