"""Fast path: when ``Graph.backward`` may run generated straight-line code instead of its loop.

``Graph.backward`` in ``graph.py`` is the reference: an interpreter that loops over a
``BackwardPlan``. ``codegen.backward_function(plan)`` writes the same plan out as one
straight-line function, which skips the loop's bookkeeping (on small layers that bookkeeping
costs as much as the numpy work). A graph keeps one ``FastPath``, which decides when that
function runs:

* not while hooks or ``detect_anomaly`` watch the graph (``Graph.backward`` asks first: they
  need the interpreter, which stops at every op);
* from the second call with the same ``wrt`` on: once the interpreter has run the plan through
  without error (a backward run once is not worth writing out, and that first run watches the
  VJPs closely);
* for graphs of at most ``MAX_OPS`` ops (writing costs about 0.2 ms per op).

Each plan's function is written once and kept. The fast path never raises: if writing the
function fails, the interpreter keeps that plan; if a run raises, the interpreter runs the call
again (so an op that fails runs twice), and its error message says what went wrong.
"""

from . import codegen

MAX_OPS = 1000                    # bigger graphs stay with the interpreter: writing them out is slow


class FastPath:
    """The generated backward of each plan of one graph (``ops``: how many ops the graph has)."""

    def __init__(self, ops):
        self.ops = ops
        self.interpreted = set()          # plans the interpreter has run through without error
        self.runs = {}                    # plan -> its generated function (None: could not write it)

    def run(self, plan, feed, seed):
        """``(True, the output's value)`` if the generated code did this backward; ``(False,
        None)`` if it is not written (yet) or it raised: then the interpreter does the call."""
        run = self._function(plan)
        if run is not None:
            try:
                return True, run(feed or {}, seed)
            except Exception:
                pass                      # the interpreter runs the call again and explains
        return False, None

    def _function(self, plan):
        if plan not in self.runs:
            if plan not in self.interpreted or self.ops > MAX_OPS:
                return None
            try:
                self.runs[plan] = codegen.backward_function(plan)
            except Exception:
                self.runs[plan] = None
        return self.runs[plan]
