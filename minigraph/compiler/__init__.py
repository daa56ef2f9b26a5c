"""The compiler: ``mg.function`` turns a step graph into straight-line Python that runs fast.

Read it in the order a step is compiled:

* ``function`` -- ``mg.function(inputs, outputs, updates)``: the callable, its cache of code
  per set of shapes, and how updates are written into the Parameters;
* ``rewrites`` -- the passes that make the graph smaller without changing a single bit of the
  numbers (merge, fold, drop, fuse);
* ``memory`` -- the memory plan: which values write into buffers allocated once, and which
  buffer each gets;
* ``stepcode`` -- the code writer: one line of Python per op of the rewritten program.

The interpreter (``graph.py``) stays the reference: a compiled step gives its numbers, bit for
bit, and the tests hold it to that.
"""

from .function import Function, function

__all__ = ["Function", "function"]
