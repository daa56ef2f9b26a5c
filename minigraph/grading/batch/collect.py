"""The grader's side inside a submission's kernel: run every answer's cases, write JSON.

The runner appends one cell to the submission (``runner.collector_cell``). That cell first
forgets every ``minigraph`` module the submission imported -- so a monkey-patched engine or
grading module is thrown away -- imports this module fresh, and calls ``collect`` with the old
modules. Only JSON leaves the kernel, and the grader judges it at home.

After the fresh import, the learner's names (``mg``, ``Graph`` ...) still point at the old
copy of the engine; ``rebind`` points them at the fresh one. The learner's functions look their
globals up when they are called, so from then on there is one engine in the kernel, and a node
built by the learner's code is a node to the checks (``isinstance`` works).

Two rules keep a learner from borrowing the reference answers this way:

* ``rebind`` decides what a name refers to by identity (the very object found in an old
  module), never by what the object says about itself (``__module__``, ``__name__`` can be set
  to anything); it never touches the answers themselves, and never hands out anything of
  ``minigraph.grading`` (where the reference answers live);
* while an answer runs, a profiler watches for calls into ``minigraph.grading`` code that is
  not the fresh collector's own (a reference kept from before, a copy of its code): such a
  call is reported, and the grader gives that exercise no points. The chapters' ``tools``
  are not watched: they hold no reference answers, and notebooks import them.

The watch is Python's C profiler (``cProfile``), not a profiling function written in Python:
Python switches such a function off for good when anything goes wrong inside it -- the
recursion limit reached by a recursive answer, a case's time limit striking while it runs --
and that would read as a learner turning the watch off. The C profiler runs no Python code,
so only a learner who replaces it (``sys.setprofile``) turns it off.
"""

import cProfile
import gc
import importlib
import json
import os
import sys
import threading
import types
from pathlib import Path

from ..toolkit import engine, registry
from ..toolkit.exercise import run_cases

GRADING = "minigraph.grading"
GRADING_FILES = str(Path(__file__).resolve().parent.parent) + os.sep   # all of minigraph/grading/
TOOLS_FILES = GRADING_FILES + "tools" + os.sep                          # what notebooks may call


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


class ReferenceWatch:
    """Notes calls into ``minigraph.grading`` code (``_watched``) other than the code of the
    modules loaded when the watch was made (the fresh ones), while an answer runs."""

    def __init__(self):
        fresh = {id(vars(m)) for name, m in list(sys.modules.items()) if _is_grading(name)}
        self.fresh_code = {}            # id -> code: by identity (equal code compares equal)
        for function in gc.get_objects():
            if isinstance(function, types.FunctionType) and id(function.__globals__) in fresh:
                self.fresh_code.update((id(c), c) for c in _code_within(function.__code__))
        self.calls = set()

    def _note(self, code):
        if (isinstance(code, types.CodeType) and code.co_filename.startswith(GRADING_FILES)
                and not code.co_filename.startswith(TOOLS_FILES) and self.fresh_code.get(id(code)) is not code):
            self.calls.add(f"{Path(code.co_filename).name}: {code.co_name}")

    def hook(self, frame, event, arg):
        """The watch in threads an answer starts (the C profiler sees only its own thread)."""
        if event == "call":
            self._note(frame.f_code)

    def run(self, function, *args):
        """``function(*args)`` under the watch; what it called (or that it stopped the watch)."""
        self.calls = set()
        profiler = cProfile.Profile()
        threading.setprofile(self.hook)
        profiler.enable()
        try:
            value = function(*args)
        finally:
            stopped = sys.getprofile() is not profiler
            profiler.disable()
            threading.setprofile(None)
        for entry in profiler.getstats():
            self._note(entry.code)
        if stopped:
            self.calls.add("it turned off the grader's watch")
        return value, ", ".join(sorted(self.calls)[:5])


def _code_within(code):
    """``code`` and every code object nested in it (its lambdas, comprehensions, inner defs)."""
    found, todo = [], [code]
    while todo:
        each = todo.pop()
        found.append(each)
        todo += [c for c in each.co_consts if isinstance(c, types.CodeType)]
    return found


def collect(chapter, namespace, path, old_modules):
    """Run the cases of every exercise of ``chapter`` on the answers found in ``namespace``.

    The results file is rewritten after each exercise, so a later time-out loses only what
    had not run yet.
    """
    exercises = registry.exercises(chapter)
    rebind(namespace, old_modules, keep={e.name for e in exercises})
    engine.also_in(old_modules)            # an answer may hold the old copy's functions: refuse those too
    watch = ReferenceWatch()
    results = {}
    for exercise in exercises:
        if exercise.name not in namespace:
            results[exercise.id] = {"status": "missing"}
        else:
            try:
                records, called = watch.run(run_cases, exercise, namespace[exercise.name])
                results[exercise.id] = {"status": "ran", "records": records}
                if called:
                    results[exercise.id]["reference"] = called
            except Exception as error:              # an exercise whose run() is broken
                results[exercise.id] = {"status": "error", "message": f"{type(error).__name__}: {error}"}
        _write(path, results)


def _write(path, results):
    """Write atomically: the grader never sees half a file."""
    part = f"{path}.part"
    with open(part, "w", encoding="utf-8") as file:
        json.dump(results, file)
    os.replace(part, path)
