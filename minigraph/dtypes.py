"""Which floating-point type the numbers of a graph have: float64 unless you ask for float32.

Every value is a numpy array, and every array has a dtype. float64 (numpy's default) is exact
enough that rounding never gets in the way of learning, so the chapters use it. float32 is what
training usually uses (PyTorch's default): half the memory, and matrix products about twice as
fast. The rules:

* A Parameter, Constant or Input keeps the floating dtype of the numpy array it is given
  (float32 stays float32), or takes the one you ask for with ``dtype=``.
* Python numbers and lists given as values (``Parameter([1., 2.])``, ``Constant(2.0)``) take
  the *default* dtype: float64, until ``mg.set_default_dtype(np.float32)``. Lists of whole
  numbers stay integers (class labels).
* A Python number written into a formula (the ``2`` of ``2 * x``, ``1 - y``, ``x / 3``) is
  *weak*, as numpy 2 treats Python numbers: it takes the floating dtype of what it meets, so
  ``2 * x`` has ``x``'s dtype (float32 stays float32), just as ``2 * np.ones(3, np.float32)``
  does in numpy. Next to integers only (``2 * labels``) it is a value of the default dtype:
  formulas compute in floating point (numpy would keep ``2 * labels`` integer). An op of
  numbers alone (``mg.exp(2.0)``) is a number too. An ``mg.Constant`` or a numpy array or
  scalar is not weak: numpy's promotion decides, as for any two values. ``WithNumbers`` says
  how this works.
* Ops, gradients, the backward seed and optimizer updates keep the dtype of what they are given;
  when two dtypes meet in one op, numpy's promotion decides (float32 with float64 gives float64).
"""

import numpy as np

from .errors import BadValueError

_default = [np.dtype(np.float64)]


def set_default_dtype(dtype):
    """Make ``dtype`` (``np.float32`` or ``np.float64``) the dtype of new values made from Python
    numbers. Returns the previous default, so you can put it back."""
    previous, _default[0] = _default[0], as_dtype(dtype, "the default dtype", floating=True)
    return previous


def as_dtype(dtype, what, floating=False):
    """The numpy dtype ``dtype`` names (``np.float32``, ``int``, ``"float64"``), if it is one of
    numbers (only floats if ``floating``); anything else is a BadValueError naming ``what``."""
    try:
        kind = np.dtype(dtype).kind
    except TypeError:                          # not a dtype at all: "banana"
        kind = None
    if kind not in (("f",) if floating else ("b", "i", "u", "f")):
        raise BadValueError(
            f"{what}: dtype={dtype!r} is not a "
            + ("floating dtype; use np.float32 or np.float64 (values that training moves by small "
               "steps are floats; fixed integers are a Constant)." if floating else
               "numeric dtype; use int (class labels) or a float (np.float32, np.float64)."))
    return np.dtype(dtype)


def get_default_dtype():
    """The dtype given to values made from Python numbers (float64 unless set)."""
    return _default[0]


def float_dtype(value, dtype=None):
    """The floating dtype a leaf made from ``value`` gets: ``dtype`` if given; ``value``'s own
    if it is a numpy float array or number; otherwise the default."""
    if dtype is not None:
        return np.dtype(dtype)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f":
        return value.dtype
    return _default[0]


def constant_array(value, dtype=None):
    """The array a Constant holds. A lone Python number is arithmetic: it takes the default dtype,
    as ``float_dtype`` says (in a formula, ``2 * x``, its op converts it again: ``WithNumbers``).
    Anything else keeps numpy's reading of it, except that a list of Python floats takes the
    default dtype: integer arrays and lists of whole numbers stay integers (class labels),
    booleans stay booleans."""
    if dtype is None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        array = np.array(value)
        if array.dtype.kind != "f" or isinstance(value, (np.ndarray, np.generic)):
            return array
    return np.array(value, dtype=float_dtype(value, dtype))


def is_python_number(value):
    """Is ``value`` a plain Python number (``2``, ``0.5``)? Not a bool, not a numpy scalar (numpy's
    ``float64`` is a subclass of Python's ``float``, but numpy does not treat it as weak)."""
    return isinstance(value, (int, float)) and not isinstance(value, (bool, np.generic))


def number_dtype(values):
    """The dtype a weak number takes next to ``values`` (the other inputs of its op): numpy's
    promotion of their floating dtypes; None if none of them is floating."""
    dtype = None
    for value in values:
        own = getattr(value, "dtype", None)
        if own is not None and own.kind == "f":
            dtype = own if dtype is None or own == dtype else np.promote_types(dtype, own)
    return dtype


def row_of(op):
    """The op of the table (its ``OpDef``) behind ``op``: ``op`` itself, or the op a
    ``WithNumbers`` wraps."""
    return getattr(op, "plain", op)


class WithNumbers:
    """An op of the table (``mul``, ``sub``, ...) used with weak numbers among its inputs, at the
    positions ``numbers``: ``2 * x`` is ``mul`` with a number at position 0.

    When is the number's dtype decided? When the op *runs*, not when the formula is written:
    ``x`` may be an Input that is fed float32 only later, or an op whose dtype nobody knows
    before it is computed. So each call of the forward or of a VJP first converts the numbers
    to the dtype of the other inputs (``number_dtype``), then calls the plain op. That costs one
    tiny conversion per call, and only ops that have a number as input pay it: graphs without
    numbers in their formulas run exactly as before. The number node itself keeps showing the
    number (in the default dtype) in drawings and in ``.value``.

    It has everything the engine reads of an op (``name``, ``symbol``, ``n_outputs``,
    ``forward``, ``vjps``), so the interpreter, the generated code and ``mg.function`` run it
    like any other op; ``plain`` is the op of the table.
    """

    def __init__(self, op, numbers):
        self.plain, self.numbers = op, tuple(numbers)
        self.others = [k for k in range(len(op.vjps)) if k not in self.numbers]
        self.name, self.symbol, self.n_outputs = op.name, op.symbol, op.n_outputs
        # the usual cases, x * 2 and 2 * x, written out: a third of the cost of ``adapt``
        if self.numbers == (1,) and self.others == [0]:
            self.forward = lambda x, n, **attrs: op.forward(x, number_like(n, x), **attrs)
            self.vjps = tuple(_number_second(vjp) for vjp in op.vjps)
        elif self.numbers == (0,) and self.others == [1]:
            self.forward = lambda n, x, **attrs: op.forward(number_like(n, x), x, **attrs)
            self.vjps = tuple(_number_first(vjp) for vjp in op.vjps)
        else:
            self.forward = lambda *args, **attrs: op.forward(*self.adapt(args), **attrs)
            self.vjps = tuple(self._adapted_vjp(vjp) for vjp in op.vjps)

    def _adapted_vjp(self, vjp):
        return lambda g, ans, *args, **attrs: vjp(g, ans, *self.adapt(args), **attrs)

    def adapt(self, args):
        """The op's input values, with the numbers in the dtype of the other inputs."""
        dtype = number_dtype([args[k] for k in self.others])
        if dtype is None:                     # next to integers only: the default dtype stays
            return args
        args = list(args)
        for k in self.numbers:
            if args[k].dtype != dtype:        # (in the default dtype already: nothing to do)
                args[k] = args[k].astype(dtype)
        return args

    def __repr__(self):
        return f"WithNumbers({self.plain!r}, numbers at {list(self.numbers)})"


def number_like(number, other):
    """``number`` (a 0-d array) in ``other``'s floating dtype; as it is next to integers, or if
    it has that dtype already: ``WithNumbers.adapt`` for an op of two inputs, one a number."""
    dtype = getattr(other, "dtype", None)
    if dtype is None or dtype.kind != "f" or dtype == number.dtype:
        return number
    return number.astype(dtype)


def _number_second(vjp):
    return lambda g, ans, x, n, **attrs: vjp(g, ans, x, number_like(n, x), **attrs)


def _number_first(vjp):
    return lambda g, ans, n, x, **attrs: vjp(g, ans, number_like(n, x), x, **attrs)
