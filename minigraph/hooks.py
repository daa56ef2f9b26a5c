"""Hooks and anomaly mode: watching what flows through a graph.

Forward hooks ``fn(node, inputs, output)`` and backward hooks ``fn(node, grad_output,
grad_inputs)`` are registered on a node or on a whole ``Graph`` (``register_forward_hook``,
``register_backward_hook``, in ``graph.py``); a hook that returns something other than
``None`` replaces the output (forward) or the input gradients (backward), as in PyTorch.
``detect_anomaly()`` stops at the first NaN or infinity. While either watches a graph, its
``backward`` runs the interpreter, which stops at every op (``watched``), not the fast path.
"""

import contextlib
import itertools

from . import explain

_hook_ids = itertools.count()
_live_hooks = [0]                     # hooks registered anywhere; while 0, nobody looks for them
anomaly = [False]                     # detect_anomaly() switches this on: graph.py reads anomaly[0]


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


@contextlib.contextmanager
def detect_anomaly():
    """Inside this block, a NaN or infinity raises NonFiniteError at the node that produced it
    (and every backward hands VJPs a read-only ``g``, as the first one does)."""
    previous, anomaly[0] = anomaly[0], True
    try:
        yield
    finally:
        anomaly[0] = previous


def watched(graph):
    """Do hooks or detect_anomaly watch this graph (or one of its ops)? Then ``backward`` runs
    the interpreter, which stops at every op, and not the fast path."""
    if anomaly[0]:
        return True
    if not _live_hooks[0]:                # no hooks anywhere: nothing to look for
        return False
    return bool(graph._forward_hooks or graph._backward_hooks) or any(
        n._forward_hooks or n._backward_hooks for n in graph._ops)


def run_forward_hooks(graph, node, args, out):
    """Run the forward hooks on a freshly computed op (one may replace ``out``), then, inside
    detect_anomaly, check it for NaN/inf."""
    for hook in [*node._forward_hooks.values(), *graph._forward_hooks.values()]:
        replaced = _call_hook(hook, node, "forward", tuple(args), out)
        if replaced is not None:
            out = explain.check_hooked_value(node, replaced, out)
    if anomaly[0]:
        explain.check_finite(node, out, "produced", args)
    return out


def run_backward_hooks(graph, node, g, sent, args):
    """Show each hook ``(node, g, grad_inputs)``, one entry per input (None if not wanted);
    a hook that returns something replaces grad_inputs (checked against ``args``, the
    inputs' values: one gradient per input, each of its input's shape)."""
    grad_inputs = [None] * len(node.inputs)
    for k, gi in sent:
        grad_inputs[k] = gi
    for hook in [*node._backward_hooks.values(), *graph._backward_hooks.values()]:
        replaced = _call_hook(hook, node, "backward", g, tuple(grad_inputs))
        if replaced is not None:
            grad_inputs = explain.check_hooked_gradients(node, replaced, args)
    return list(enumerate(grad_inputs))


def _call_hook(hook, node, phase, *args):
    """``hook(node, *args)``; if the hook raises, an OpError naming the node (the hook's own
    error and line follow it in the traceback)."""
    try:
        return hook(node, *args)
    except Exception as error:
        raise explain.hook_failure(node, phase, error) from error
