"""The grader's side inside a submission's kernel: run every answer's cases, write JSON.

The runner appends one cell to the submission (``runner.collector_cell``). That cell first
forgets every ``minigraph`` module the submission imported -- so a monkey-patched engine or
grading module is thrown away -- imports this module fresh, and calls ``collect`` with the old
modules. Only JSON leaves the kernel, and the grader judges it at home.

After the fresh import, the learner's names (``mg``, ``Graph`` ...) still point at the old
copy of the engine; ``rebind`` points them at the fresh one. The learner's functions look their
globals up when they are called, so from then on there is one engine in the kernel, and a node
built by the learner's code is a node to the checks (``isinstance`` works).

``rebind`` decides what a name refers to by identity (the very object found in an old module),
never by what the object says about itself (``__module__``, ``__name__`` can be set to
anything); it never touches the answers themselves, and never hands out anything of
``minigraph.grading``.

Each exercise runs on its public cases and on hidden ones drawn from ``seed``
(``exercise.with_hidden``): the grader draws the seed per submission and the runner writes it
into this cell only once the learner's cells have run, so no table made in them holds the
hidden cases' answers. Nothing here could compute those answers anyway: the reference answers
(``minigraph/grading/answers/``) are not in the sandbox, whose view of that folder is empty.
The grader draws the same cases and judges them at home.
"""

import importlib
import json
import os
import types

from ..toolkit import engine, registry
from ..toolkit.exercise import run_cases, with_hidden

GRADING = "minigraph.grading"


def rebind(namespace, old_modules, keep=()):
    """Point every name in ``namespace`` (except ``keep``) that refers to an engine module,
    class or function found in ``old_modules`` at its twin in the fresh modules; and move
    every class of the learner's (answers included) that subclasses an old engine class onto
    the fresh twin (an optimizer written as a subclass of ``mg.optim.Optimizer`` must accept
    the fresh engine's Parameters)."""
    twins = {}
    for name, module in old_modules.items():
        if _is_grading(name) or not isinstance(module, types.ModuleType):
            continue
        twins.setdefault(id(module), (module, name, None))
        for attribute, value in list(vars(module).items()):
            if isinstance(value, (type, types.FunctionType, types.ModuleType)):
                twins.setdefault(id(value), (value, name, attribute))

    def twin_of(value):
        """The fresh twin of an old engine object, or None."""
        found = twins.get(id(value))
        if found is None or found[0] is not value:
            return None
        _, module, attribute = found
        fresh = importlib.import_module(module)
        twin = fresh if attribute is None else getattr(fresh, attribute, None)
        return None if _is_grading(getattr(twin, "__name__", "")) else twin

    for key, value in list(namespace.items()):
        twin = twin_of(value)
        if twin is not None and key not in keep:
            namespace[key] = twin
        elif twin is None and isinstance(value, type):
            bases = tuple(twin_of(base) or base for base in value.__bases__)
            if bases != value.__bases__:
                try:
                    value.__bases__ = bases
                except TypeError:            # a layout Python cannot move: leave it as it is
                    pass


def _is_grading(name):
    return isinstance(name, str) and (name == GRADING or name.startswith(GRADING + "."))


def collect(chapter, namespace, path, old_modules, seed=None):
    """Run the cases of every exercise of ``chapter`` (public, and hidden ones drawn from
    ``seed``) on the answers found in ``namespace``.

    The results file is rewritten after each exercise, so a later time-out loses only what
    had not run yet.
    """
    exercises = registry.exercises(chapter)
    rebind(namespace, old_modules, keep={e.name for e in exercises})
    engine.also_in(old_modules)            # an answer may hold the old copy's functions: refuse those too
    results = {}
    for exercise in exercises:
        if exercise.name not in namespace:
            results[exercise.id] = {"status": "missing"}
        else:
            try:
                records = run_cases(exercise, namespace[exercise.name], cases=with_hidden(exercise, seed))
                results[exercise.id] = {"status": "ran", "records": records}
            except Exception as error:              # an exercise whose run() is broken
                results[exercise.id] = {"status": "error", "message": f"{type(error).__name__}: {error}"}
        _write(path, results)


def _write(path, results):
    """Write atomically: the grader never sees half a file."""
    part = f"{path}.part"
    with open(part, "w", encoding="utf-8") as file:
        json.dump(results, file)
    os.replace(part, path)
