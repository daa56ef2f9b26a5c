"""Values: what the engine accepts as numbers, and how it keeps a node's numbers unchanged.

Every value a learner hands the engine (a feed, a Parameter's start, a seed gradient, the ``2``
of ``2 * x``) passes through ``as_numbers``, which turns it into a numpy array or says, in
words, why it cannot: ``None``, text, a ragged list, a node where numbers were meant.

A node's value changes only by assignment or feeding, each of which gives it a new stamp (see
``graph.py``). So the engine ``freeze``s every array it stores, and ``node.value`` hands it out
as a ``ReadOnlyValue``: ``W.value -= lr * W.grad`` is refused with an error that says to
assign instead.
"""

import numpy as np

from . import dtypes
from .errors import BadValueError, GraphError, shape_text


def as_numbers(value, what, dtype=None):
    """``value`` (a number, a list, an array) as a numpy array of numbers, converted to ``dtype``
    if one is given; anything else is a BadValueError that says what ``what`` was given."""
    if value is None:
        raise BadValueError(f"{what} is None; give it numbers (a number, a list or a numpy array).")
    if _is_node(value):
        raise BadValueError(f"{what} is the node '{value.name}', not numbers. A node's numbers are "
                            f"its .value; to compute with the node itself, use it in an op.")
    try:
        array = np.asarray(value)
    except ValueError:                              # ragged: [[1, 2], [3]]
        raise BadValueError(f"{what} is a ragged list (rows of different lengths); numbers must "
                            f"form a rectangular array.") from None
    if array.dtype.kind not in "biuf":
        if array.dtype == object and any(_is_node(v) for v in array.flat):
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


def _is_node(value):
    """Is ``value`` a graph node? (Recognised by what every node has: this module comes before
    ``graph.py``, which defines ``Node``.)"""
    return hasattr(value, "inputs") and hasattr(value, "kind")


def parameter_array(value, what, dtype=None):
    """A Parameter's value: a fresh floating array (``dtype``, or as ``dtypes.float_dtype`` says)
    with no NaN or infinity in it."""
    array = np.array(as_numbers(value, what), dtype=dtypes.float_dtype(value, dtype))
    if not np.all(np.isfinite(array)):
        raise BadValueError(f"{what} contains NaN or infinity; a Parameter starts from finite numbers.")
    return array


def as_value(x):
    """Values and gradients are numpy arrays or scalars (or tuples, for multi-output ops): a plain
    Python number from a learner's op becomes a 0-d array, so every value has ``.shape``."""
    return x if isinstance(x, (np.ndarray, np.generic, tuple)) else np.asarray(x)


def same_shape(grad, value):
    """Does a gradient fit its value? (Element by element for a multi-output op's tuple.)"""
    if isinstance(value, tuple):
        return isinstance(grad, tuple) and all(
            g is None or np.shape(g) == np.shape(v) for g, v in zip(grad, value))
    return np.shape(grad) == np.shape(value)


def freeze(array):
    """Mark an array read-only and return it: a stored value changes only by assignment (which
    updates its stamp), never in place behind the engine's back."""
    array.setflags(False)             # write=False, given by position: the faster call
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
