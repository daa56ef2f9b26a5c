"""The grader's side inside a submission's kernel: run every answer's cases, write JSON.

The batch grader appends one cell to the copy of the submission it executes (see
``grader.collector_cell``). That cell first forgets every ``minigraph`` module the submission
imported -- so a monkey-patched engine or grading module is thrown away -- imports this module
fresh, and calls ``collect``. Only JSON leaves the kernel, and the grader judges it at home.

After the fresh import, the learner's names (``mg``, ``Graph``, ``tanh`` ...) still point at the
old copy; ``rebind`` points them at the fresh one. The learner's functions look their globals
up when they are called, so from then on there is one engine in the kernel, and a node built
by the learner's code is a node to the checks (``isinstance`` works).
"""

import importlib
import json
import os
import types

from . import registry
from .exercise import run_cases


def rebind(namespace):
    """Point every name in ``namespace`` that refers to a minigraph module, class or function
    at its twin in the freshly imported modules."""
    for key, value in list(namespace.items()):
        twin = _fresh_twin(value)
        if twin is not None:
            namespace[key] = twin


def _fresh_twin(value):
    """The fresh module/attribute with the same name as ``value``, if ``value`` is minigraph's."""
    if isinstance(value, types.ModuleType):
        module, attribute = value.__name__, None
    elif isinstance(value, (type, types.FunctionType)):
        module, attribute = getattr(value, "__module__", None), value.__name__
    else:
        return None
    if not isinstance(module, str) or module.split(".")[0] != "minigraph":
        return None
    fresh = importlib.import_module(module)
    return fresh if attribute is None else getattr(fresh, attribute, None)


def collect(chapter, namespace, path):
    """Run the cases of every exercise of ``chapter`` on the answers found in ``namespace``.

    The results file is rewritten after each exercise, so a later time-out loses only what
    had not run yet.
    """
    rebind(namespace)
    results = {}
    for exercise in registry.exercises(chapter):
        if exercise.name not in namespace:
            results[exercise.id] = {"status": "missing"}
        else:
            try:
                records = run_cases(exercise, namespace[exercise.name])
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
