"""A training step's loss and gradients, by the compiled step or by the interpreter.

    gradients = Gradients(chunk.graph, model.parameters, carried=chunk.end)
    loss, final_state = gradients(feed, engine="compiled")     # every Parameter's .grad is set

The three trainers (chapter 09's LSTM, chapter 10's translator, chapter 11's GPT) compute
their steps' gradients here, then clip them and take the optimizer's step on ``p.grad`` as
before. Two engines give the same numbers, bit for bit:

- ``"compiled"`` (the trainers' default): ``mg.function(inputs, [loss, *mg.grad(loss, params),
  *carried])``, built at the first call. Its first call with a shape of the feed plans that
  shape (rewrites, a memory plan, the step's code: ``compiled.source`` shows it); every later
  call runs that code.
- ``"interpreter"`` (the reference): ``graph.backward(feed, wrt=params)``, op by op; the
  carried nodes' values are read from the graph afterwards.

The training commands choose with ``--engine``; a run's ``engine`` attribute holds the choice.
``carried`` are nodes whose values the next step needs as numbers (the LSTM's final h and c).
"""

from ..compiler import function
from ..errors import BadValueError
from ..symbolic import grad

ENGINES = ("compiled", "interpreter")


class Gradients:
    """The loss of ``graph`` (a one-output ``Graph``) and the gradients of ``params``, for a
    feed; also the values of the ``carried`` nodes. ``compiled`` is the ``mg.function``, None
    until the first compiled call."""

    def __init__(self, graph, params, carried=()):
        self.graph, self.params, self.carried = graph, list(params), list(carried)
        self.inputs = list(graph.inputs)
        self.compiled = None

    def __call__(self, feed, engine="compiled"):
        """``(loss as a float, [value of each carried node])``; each Parameter's ``grad`` is set."""
        if engine not in ENGINES:
            raise BadValueError(f"unknown engine {engine!r}: a step is computed by one of "
                                f"{', '.join(ENGINES)} (the compiled step is the default).")
        if engine == "interpreter":
            loss = self.graph.backward(feed, wrt=self.params)
            return float(loss), [node.value for node in self.carried]
        if self.compiled is None:
            loss = self.graph.outputs[0]
            self.compiled = function(self.inputs, [loss, *grad(loss, self.params), *self.carried])
        loss, *rest = self.compiled(*[feed[node] for node in self.inputs])
        for p, g in zip(self.params, rest):
            p.grad = g
        return float(loss), rest[len(self.params):]
