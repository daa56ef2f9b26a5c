"""The grader's side inside a submission's kernel: run every answer's cases, write JSON.

The grader's kernel (``kernel.py``) imports this module, and the engine and the chapter's
exercises with it, before any code of the submission runs (``prepare``), then takes every
``minigraph`` module out of ``sys.modules``: the notebook's ``import minigraph`` makes a copy of
its own, which it may patch as it likes. Once the learner's cells have run, the runner sends the
grading request (``REQUEST``) on the kernel's shell channel; ``serve``'s handler puts the modules
imported at start back in ``sys.modules`` -- the notebook's copy goes aside -- and calls
``collect`` with the objects it imported then, never looked up again by name. Only JSON leaves
the kernel, and the grader judges it at home.

The learner's names (``mg``, ``Graph`` ...) still point at the notebook's copy of the engine;
``rebind`` points them at the grader's. The learner's functions look their globals up when they
are called, so from then on there is one engine in the kernel, and a node built by the learner's
code is a node to the checks (``isinstance`` works).

``rebind`` decides what a name refers to by identity (the very object found in an old module),
never by what the object says about itself (``__module__``, ``__name__`` can be set to
anything); it never touches the answers themselves, and never hands out anything of
``minigraph.grading``.

Each exercise runs on its public cases and on hidden ones drawn from ``seed``
(``exercise.with_hidden``): the grader draws the seed per submission and the runner sends it
only with the grading request, once the learner's cells have run, so no table made in them holds
the hidden cases' answers. Nothing here could compute those answers anyway: the reference answers
(``minigraph/grading/answers/``) are not in the sandbox, whose view of that folder is empty.
The grader draws the same cases and judges them at home.
"""

import importlib
import json
import os
import sys
import types

from ..toolkit import engine, registry
from ..toolkit.exercise import run_cases, with_hidden

GRADING = "minigraph.grading"
REQUEST, REPLY = "minigraph_grade_request", "minigraph_grade_reply"      # shell-channel messages


def prepare(chapter):
    """Import what grading ``chapter`` needs (its exercises, the engine), at the kernel's start."""
    registry.exercises(chapter)


def serve(kernel, grading_modules, watch):
    """Answer the runner's ``REQUEST`` (``{"chapter", "path", "seed"}``) on ``kernel``'s shell
    channel: collect the answers in the user's namespace with ``grading_modules`` (the
    ``minigraph`` modules imported at start) in ``sys.modules``, tell the watch (``watch.py``)
    that grading is over, and reply ``{"status": "ok"}`` or what went wrong."""
    shell = kernel.shell

    def handle(stream, ident, parent):
        content = parent.get("content", {})
        status = "ok"
        try:
            notebooks = {name: module for name, module in list(sys.modules.items())
                         if name.split(".")[0] == "minigraph"}
            for name in notebooks:
                del sys.modules[name]
            sys.modules.update(grading_modules)
            collect(content["chapter"], shell.user_ns, content["path"], notebooks, content["seed"])
        except BaseException as error:           # an interrupt included: the runner waits for a reply
            status = f"{type(error).__name__}: {error}"
        watch.done()
        kernel.session.send(stream, REPLY, {"status": status}, parent, ident)

    kernel.shell_handlers[REQUEST] = handle


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
