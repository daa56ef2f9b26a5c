"""Fast path: when ``Graph.backward`` may run generated straight-line code instead of its loop.

``Graph.backward`` in ``graph.py`` is the reference: an interpreter that loops over a
``BackwardPlan``. ``codegen.backward_function(plan)`` writes the same plan out as one
straight-line function, which skips the loop's bookkeeping (on small layers that bookkeeping
costs as much as the numpy work; ``bench/`` measures it). That function calls back into
``graph.py`` only through the plan's ``callbacks``. A graph keeps one ``FastPath``, which
decides when that function runs:

* not while hooks or ``detect_anomaly`` watch the graph (``Graph.backward`` asks first: they
  need the interpreter, which stops at every op);
* from the second call with the same ``wrt`` on: once the interpreter has run the plan through
  without error (a backward run once is not worth writing out, and that first run watches the
  VJPs closely);
* for graphs of at most ``MAX_OPS`` ops (bigger ones take long to write out).

Each plan's function is written once and kept; if writing it fails, the interpreter keeps that
plan. When an op (its forward or a VJP) raises in the generated code, the fast path raises the
error the interpreter raises for it (``plan.op_failed``: the node, its op, its inputs' shapes),
so the op runs once, as it would in the interpreter. An error of one of the plan's helpers
(a gradient of the wrong shape, a missing feed) is the interpreter's already and passes
through. Anything else would be a bug of the code writer: the interpreter then does the call.
"""

from . import codegen
from .errors import GraphError

MAX_OPS = 1000                    # bigger graphs stay with the interpreter: writing them out is slow


class FastPath:
    """The generated backward of each plan of one graph (``ops``: how many ops the graph has)."""

    def __init__(self, ops):
        self.ops = ops
        self.interpreted = set()          # plans the interpreter has run through without error
        self.runs = {}                    # plan -> its generated function (None: could not write it)

    def run(self, plan, feed, seed):
        """``(True, the output's value)`` if the generated code did this backward; ``(False,
        None)`` if it is not written (yet), or it failed other than in an op or a helper: then
        the interpreter does the call. An op that fails raises the interpreter's error."""
        run = self._function(plan)
        if run is None:
            return False, None
        try:
            return True, run(feed or {}, seed)
        except Exception as error:
            failed = codegen.failed_op(run, error)
            if failed is not None:
                node, k = failed
                raise plan.op_failed(node, error, k) from None
            if isinstance(error, GraphError):
                raise                         # a helper's: the interpreter's own error
        return False, None                    # a bug of the code writer: the interpreter runs

    def _function(self, plan):
        if plan not in self.runs:
            if plan not in self.interpreted or self.ops > MAX_OPS:
                return None
            try:
                self.runs[plan] = codegen.backward_function(plan)
            except Exception:
                self.runs[plan] = None
        return self.runs[plan]
