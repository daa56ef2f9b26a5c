"""Which floating-point type the numbers of a graph have: float64 unless you ask for float32.

Every value is a numpy array, and every array has a dtype. float64 (numpy's default) is exact
enough that rounding never gets in the way of learning, so the chapters use it. float32 is what
training usually uses (PyTorch's default): half the memory, and matrix products about twice as
fast. The rules:

* A Parameter, Constant or Input keeps the floating dtype of the numpy array it is given
  (float32 stays float32), or takes the one you ask for with ``dtype=``.
* Python numbers and lists (``2 * x``, ``Parameter([1., 2.])``) take the *default* dtype:
  float64, until ``mg.set_default_dtype(np.float32)``. Lists of whole numbers stay integers
  (class labels), but a lone Python number in a formula is arithmetic: ``x ** 2`` keeps
  float32 float32.
* Ops, gradients, the backward seed and optimizer updates keep the dtype of what they are given;
  when two dtypes meet in one op, numpy's promotion decides (float32 with float64 gives float64).
"""

import numpy as np

_default = [np.dtype(np.float64)]


def set_default_dtype(dtype):
    """Make ``dtype`` (``np.float32`` or ``np.float64``) the dtype of new values made from Python
    numbers. Returns the previous default, so you can put it back."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"the default dtype must be a floating type such as np.float32 or "
                        f"np.float64, not {dtype}")
    previous, _default[0] = _default[0], dtype
    return previous


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
    """The array a Constant holds. A lone Python number is arithmetic (``2 * x``): it takes the
    default dtype, as ``float_dtype`` says. Anything else keeps numpy's reading of it, except that
    a list of Python floats takes the default dtype: integer arrays and lists of whole numbers
    stay integers (class labels), booleans stay booleans."""
    if dtype is None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        array = np.array(value)
        if array.dtype.kind != "f" or isinstance(value, (np.ndarray, np.generic)):
            return array
    return np.array(value, dtype=float_dtype(value, dtype))
