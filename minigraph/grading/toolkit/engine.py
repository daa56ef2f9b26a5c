"""The engine's own functions, refused while an answer runs.

Some exercises ask the learner to write something the engine already has: relu's forward,
tanh's backward rule, a topological order, AdaGrad's ``update``, a clip by the global norm. An
answer that calls the engine's version does not do the exercise, so such an exercise declares
what it asks for::

    engine=refused({"mg.recurrent.clip_by_global_norm": "clip by the global norm"})

and while the answer runs, each of those functions raises ``Rule`` with a sentence naming it:
"clip_by_global_norm calls the engine's own clip by the global norm
(mg.recurrent.clip_by_global_norm), which is what this exercise asks you to write: ...".
``run_cases`` (``exercise.py``) applies it to every exercise that declares it: a function
answer refuses during each of its calls (the check's own use of the engine, around the call,
is not refused), a class or a value during the whole case.

**Refused at the function.** While the answer runs, the ``__code__`` of each of those Python
function objects is swapped for a code object that raises, and swapped back afterwards (in
``finally``: also when the answer raises, runs out of time or calls ``sys.exit``). Every
reference to the function object is the same object, so it refuses however it was reached: an
attribute captured at the top of the notebook (``f = mg.sigmoid.opdef.forward``), the module
path ``minigraph.graph.topological_order`` instead of ``mg.Graph``, an optimizer that inherits
the engine's ``update``. A function made from the same code object before the answer ran
(``types.FunctionType(f.__code__, f.__globals__)``) is found (``gc``; also one ``gc.freeze()``
set aside, where ``gc`` does not look: it is put back first) and refuses too. The
engine's normal calls pay nothing: outside an answer the functions are untouched.

What escapes: only Python functions can be refused. An op whose forward is a numpy ufunc
(``mg.tanh``'s is ``np.tanh`` itself) cannot be: refusing it would refuse numpy, which answers
are meant to use; no exercise asks for such a forward (those ops are refused through their
VJPs). And a copy with *other* code (the source copied, or the code object rebuilt with
``code.replace``) is the learner's own code: no rule on functions can tell it from an answer.

The batch grader imports the engine afresh before it runs the answers (``batch/collect.py``);
an answer may still hold functions of the old copy, which ``also_in(old_modules)`` refuses too.
"""

import contextlib
import functools
import gc
import importlib
import sys
import types
from dataclasses import dataclass


NUMPY = "compute it yourself, with numpy"
_RULE_MODULE = __name__.rsplit(".", 1)[0] + ".exercise"      # where Rule lives
_COPIES = []               # the ``minigraph`` packages of older engine copies an answer may hold


@dataclass(frozen=True)
class EngineRule:
    """What of the engine an exercise asks the learner to write: ``functions`` pairs a path
    from ``mg`` (``"mg.relu.opdef.forward"``; a tuple such as ``opdef.vjps`` stands for each of
    its functions) with what it is, in words; ``advice`` ends the refusal's sentence."""

    functions: tuple
    advice: str = NUMPY
    shown: tuple = ()          # (path, how a learner knows it): the path a refusal names instead

    def found(self):
        """``[(path, what, the functions there)]``, copies included: looked up once before an
        answer's cases run. That is enough: a copy made while the answer runs is made from the
        refusing code, so it refuses too."""
        functions = [(path, what, _functions(path)) for path, what in self.functions]
        engine = [f for _, _, found in functions for f in found]
        gc.unfreeze()           # what gc.freeze() set aside is no referrer to gc: searched again
        copies = [f for f in gc.get_referrers(*(f.__code__ for f in engine))     # one pass over memory
                  if type(f) is types.FunctionType and all(f is not g for g in engine)]
        return [(path, what, found + [f for f in copies if any(f.__code__ is g.__code__ for g in found)])
                for path, what, found in functions]

    @contextlib.contextmanager
    def refusing(self, name, found=None):
        """While the block runs, each function raises ``Rule``, naming ``name`` (the answer)."""
        swapped = {}
        try:
            for path, what, functions in found or self.found():
                message = (f"{name} calls the engine's own {what} ({dict(self.shown).get(path, path)}), which is what this "
                           f"exercise asks you to write: {self.advice}")
                for function in functions:
                    if id(function) not in swapped:
                        swapped[id(function)] = function, function.__code__
                        function.__code__ = _raising(function.__code__.co_freevars, message)
            yield
        finally:
            for function, code in swapped.values():
                function.__code__ = code

    def guarded(self, name, answer, found=None):
        """``(answer as run() gets it, the context run() goes in)``: a function answer refuses
        during each of its calls; a class or a value during the whole case. ``found``: what
        ``found()`` gave (by default, looked up now)."""
        found = self.found() if found is None else found
        if isinstance(answer, type) or not callable(answer):
            return answer, self.refusing(name, found)

        @functools.wraps(answer)
        def refusing_while_it_runs(*args, **kwargs):
            with self.refusing(name, found):
                return answer(*args, **kwargs)
        return refusing_while_it_runs, contextlib.nullcontext()


def refused(functions, advice=NUMPY, shown=None):
    """An ``EngineRule``: ``functions`` maps a path from ``mg`` to what it is, in words; ``shown``
    maps a path a learner never saw to the one the chapters show, for the refusal to name."""
    return EngineRule(tuple(functions.items()), advice, tuple((shown or {}).items()))


def forward_of(op):
    """``{path: what}`` for the forward function of ``op`` (``mg.relu``)."""
    return {f"mg.{op.opdef.name}.opdef.forward": f"forward function of {op.opdef.name}"}


def vjps_of(op):
    """``{path: what}`` for the backward rules (VJPs) of ``op`` (``mg.tanh``)."""
    return {f"mg.{op.opdef.name}.opdef.vjps": f"backward rule of {op.opdef.name}"}


def also_in(modules):
    """Refuse the functions in the engine copy ``modules`` (``{name: module}``) too."""
    package = modules.get("minigraph")
    if package is not None and package is not sys.modules.get("minigraph") \
            and all(package is not copy for copy in _COPIES):
        _COPIES.append(package)


def _functions(path):
    """The Python functions at ``path`` in the engine and in every older copy of it (``found``
    adds every function made from one of their code objects: ``types.FunctionType(f.__code__)``)."""
    found = []
    for root, fresh in ((importlib.import_module("minigraph"), True), *((copy, False) for copy in _COPIES)):
        target = _resolve(root, path.split(".")[1:], fresh)
        targets = target if isinstance(target, (tuple, list)) else (target,)
        found += [f for f in targets if isinstance(f, types.FunctionType)]
    return found


def _resolve(root, parts, fresh):
    """``root.a.b.c``; a submodule not imported yet is imported (in the current engine only).
    None where there is no such thing (the reference answers, absent in the grader's sandbox)."""
    target = root
    for part in parts:
        try:
            target = getattr(target, part)
        except AttributeError:
            if not (fresh and isinstance(target, types.ModuleType)):
                return None
            try:
                target = importlib.import_module(f"{target.__name__}.{part}")
            except ModuleNotFoundError:
                return None
    return target


@functools.lru_cache(maxsize=None)
def _raising(freevars, message):
    """A code object that raises ``Rule(message)``, with as many free variables as ``freevars``
    (``raising_code`` below writes it)."""
    return raising_code(len(freevars), _RULE_MODULE, "Rule", message)


def raising_code(n_free, module, error, message):
    """The code of a function that takes any arguments and raises ``module.error(message)``, with
    ``n_free`` free variables: a function's ``__code__`` may be swapped only for code with as
    many, and a swapped function keeps its own globals, so the code imports what it raises."""
    free = [f"_free{i}" for i in range(n_free)]
    text = "\n".join(["def outer():",
                      *([f"    {', '.join(free)} = {', '.join(['None'] * n_free)}"] if free else []),
                      "    def refused(*_args, **_kwargs):",
                      f"        from {module} import {error}",
                      f"        raise {error}({message!r})",
                      *([f"        {', '.join(free)}"] if free else []),     # makes them free
                      "    return refused", ""])
    space = {}
    exec(compile(text, f"<minigraph: refused, {error}>", "exec"), space)
    return space["outer"]().__code__
