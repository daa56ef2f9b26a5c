"""What an exercise is, how its cases run, and how the results are judged.

An ``Exercise`` is plain data plus two functions, and the split between them is the whole
security story of the grader:

* ``run(answer, case)`` runs **inside the learner's kernel**: it calls the learner's answer on
  one case and returns what came out as JSON-able data (see ``values.encode``). It knows
  nothing about the right answer.
* ``judge(case, got)`` runs **in the grader's process**: it computes the reference answer there
  and compares. A notebook cannot reach into that process, so redefining ``check``, patching
  minigraph or editing expected values in the kernel cannot make a wrong answer pass.

In a notebook, ``check()`` does both steps in one process (for quick feedback); the batch grader
does ``run`` in the submission's kernel and ``judge`` at home.

Most exercises are "call a function on some arrays and compare with a reference function":
``function_exercise`` builds those from a reference and a list of ``case(...)``.
``value_exercise`` asks for a value rather than a function. Anything else (a backward rule that
must be plugged into the engine, say) writes its own ``run`` and ``judge`` -- see ``vjp.py``.

Feedback a learner can trust (``AUTHORING.md`` says how to write it):

* **hints come in levels**: a hint is a string, or a tuple ``(nudge, sharper, ...)``. The table
  shows the nudge; the sharper ones sit in an expandable section. No level shows the code.
* **known mistakes are named**: ``mistakes={"what went wrong": wrong_function}`` makes a failing
  case say which typical mistake its answer reproduces (``function_exercise``, ``vjp_exercise``;
  for ``value_exercise`` the keys map to wrong values).
* **rules are enforced**: a ``run`` raises ``Rule("...")`` when an answer breaks a rule the
  statement gives (a loop where none is allowed, an input changed in place, the engine doing
  the work); the case fails with exactly that sentence.
"""

import ast
import contextlib
import inspect
import json
import signal
import textwrap
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from . import answers
from .public import Public, hashed_value, hashes, stored_values
from .values import decode, encode, number, sentences, show
# judges and tests take these from here too: a verdict and the comparison behind most of them
from .verdict import ATOL, RTOL, Verdict, compare, shape_advice  # noqa: F401

CASE_TIME_LIMIT = 2.0        # seconds of CPU time one case may take before it counts as "timed out"
MAX_MESSAGE = 300            # characters of an error message kept in a result


def describe_inputs(case):
    """``x=[-1, 0, 2], g=1``: a case's inputs as a learner would write them."""
    inputs = case.get("inputs", {})
    return ", ".join(f"{name}={show(value)}" for name, value in inputs.items()) or "—"


@dataclass(frozen=True)
class Exercise:
    """One exercise: what the notebook must define, its cases, and how to run and judge them.

    id        ``"NN.short_name"``, NN being the chapter (``"00.relu"``)
    name      the name the answer has in the notebook (``relu``)
    points    what passing all cases is worth (each case earns an equal share)
    cases     plain JSON-able dicts, usually ``case(...)``; a case may carry its own ``"hint"``
    run       ``run(answer, case) -> JSON-able``; runs in the learner's kernel
    judge     ``judge(case, got) -> Verdict``; runs where the grading happens
    title     one line naming the task (``relu(x)``); the name by default
    hint      shown under a failing case that has no hint of its own: a string, or a tuple of
              levels ``(nudge, sharper, ...)`` (see ``hint_levels``)
    describe  ``describe(case) -> str``: the case's input as shown in the table
    engine    what of the engine the exercise asks for (``engine.refused({...})``): those
              functions refuse while the answer runs (``engine.py``); None refuses nothing
    hidden    ``hidden(rng) -> case``: makes one more case's inputs from a random generator
              (inputs only: no answer). The batch grader draws a seed per submission after the
              learner's cells ran and adds ``HIDDEN_CASES`` such cases (``with_hidden``), so
              a table of answers made beforehand is worth nothing. None: public cases only
    reference the reference answer, called like the learner's answer (``function_exercise``,
              ``vjp_exercise``); None for any other exercise. In content/ it is an ``Answer``
              (``answers.py``): a name, fetched from answers/ only when first called
    no_loops  the statement says "no Python loop": the answer gets ``NoLoopArray`` inputs, and
              an answer whose own source loops (``loops_in``) fails every case
    expected  ``expected(case)``: what the student edition stores (JSON-able) for a public case
              (``release.py``, in ``content/expected.json``) for its public judge: the
              reference's value, which ``check()`` shows anyway (``function_exercise``), or
              for a value exercise, whose expected value *is* its answer, only salted hashes
              (``public.hashes``). None: nothing stored
    public    how the student edition, which has no ``answers/``, judges a case: a
              ``public.Public`` (stored values, a salted hash, central differences or
              properties; ``public.py``). None: there the case shows "ran (not judged)"
    """

    id: str
    name: str
    points: float
    cases: tuple
    run: Callable[[Any, dict], Any]
    judge: Callable[[dict, Any], Verdict]
    title: str = ""
    hint: str = ""
    describe: Callable[[dict], str] = describe_inputs
    engine: Any = None
    hidden: Callable[[np.random.Generator], dict] | None = None
    reference: Any = None
    expected: Callable[[dict], Any] | None = None
    public: Public | None = None
    no_loops: bool = False


HIDDEN_CASES = 3             # cases the batch grader adds to an exercise that has a generator


def with_hidden(exercise, seed):
    """The exercise's cases: its public ones, then ``HIDDEN_CASES`` drawn from ``seed`` (marked
    ``"hidden": True``) if it has a generator. The kernel and the grader draw the same ones."""
    if exercise.hidden is None or seed is None:
        return exercise.cases
    rng = np.random.default_rng([int(seed), *exercise.id.encode()])
    drawn = [dict(exercise.hidden(rng), hidden=True) for _ in range(HIDDEN_CASES)]
    return exercise.cases + tuple(json.loads(json.dumps(drawn)))


def random_array(rng, scale=3.0, dims=(0, 1, 2), low=None, shape=None):
    """A random float array as nested lists (a hidden case's input): of ``shape``, or of
    ``dims`` axes (one of them, at random) of 1 to 5 entries each; normal with standard
    deviation ``scale`` (or uniform between ``low`` and ``scale``); rounded to 4 decimals."""
    shape = tuple(rng.integers(1, 6, size=rng.choice(dims))) if shape is None else shape
    values = rng.normal(0.0, scale, shape) if low is None else rng.uniform(low, scale, shape)
    return np.round(values, 4).tolist()


def case(hint="", **inputs):
    """One case: named inputs (numbers or nested lists) and, if you like, a hint of its own
    (a string, or a tuple of levels as for ``Exercise.hint``).

    The inputs are passed to the learner's function positionally, in the order written here.
    """
    return {"inputs": inputs, "hint": hint} if hint else {"inputs": inputs}


def hint_levels(hint):
    """A hint as a tuple of levels: ``"text"`` -> ``("text",)``; a tuple or list stays as it is.

    Level 1 is a nudge that names the concept; each later level is sharper, and shown only on
    request. No level contains the answer's code (a test holds every exercise to that).
    """
    if not hint:
        return ()
    return (hint,) if isinstance(hint, str) else tuple(hint)


class Rule(Exception):
    """Raised by a ``run`` when the answer breaks a rule the statement gives. The case fails
    with this sentence (no exception name in front): it *is* the feedback."""


def unchanged(name, params, before, after):
    """Raise ``Rule`` if a call changed one of its input arrays in place (``before`` are copies)."""
    for param, old, new in zip(params, before, after):
        if isinstance(new, np.ndarray) and (new.shape != old.shape or not np.array_equal(new, old, equal_nan=True)):
            raise Rule(f"{name} changed its input {param} in place: an input belongs to the caller "
                       f"(the engine keeps using it); compute a new array instead")


def float_errors_named(run, **meanings):
    """``run`` with numpy's floating-point errors said in the exercise's words: ``meanings`` maps
    an error (``over``, ``invalid``, ``divide``, as numpy's message names it: "overflow",
    "invalid value", "divide by zero") to the sentence the case fails with (a ``Rule``), or to
    a function ``(case, numpy's message) -> sentence`` where the case, or the operation numpy
    names ("... in divide"), tells apart the mistakes that lead there.
    For an exercise whose ``raise_on`` (or its own ``np.errstate``) makes such an error raise:
    "overflow encountered in exp" alone does not say which mistake leads there."""
    words = {"over": "overflow", "invalid": "invalid value", "divide": "divide by zero"}

    def named(answer, case):
        try:
            return run(answer, case)
        except FloatingPointError as error:
            said = [text for error_kind, text in meanings.items() if words[error_kind] in str(error)]
            if said:
                raise Rule(said[0](case, str(error)) if callable(said[0]) else said[0]) from None
            raise

    return named


NO_LOOP = ("your function loops over the array entry by entry in Python; the statement asks for "
           "whole-array numpy operations (no loop), which work for any shape")
# what loops in Python over what it is given, beside ``for``, ``while`` and comprehensions
LOOPING_CALLS = {"map", "filter", "vectorize", "frompyfunc", "apply_along_axis"}


class NoLoopArray(np.ndarray):
    """An input array that refuses a Python loop over its entries (``for v in x``, ``x[i]``
    with an integer i): for exercises whose statement says "no Python loop". A loop over a copy
    (``np.array(x).tolist()``) it cannot see: ``loops_in`` reads the answer's own source."""

    def __iter__(self):
        raise Rule(NO_LOOP)

    def __repr__(self):                  # printing an input is no loop: numpy's printing indexes
        return repr(self.view(np.ndarray))   # entry by entry, here on a plain view of the same data

    def __str__(self):
        return str(self.view(np.ndarray))

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)) or (
                isinstance(key, tuple) and key and all(isinstance(k, (int, np.integer)) for k in key)):
            self.__iter__()
        return super().__getitem__(key)


def loops_in(node):
    """Whether the syntax tree ``node`` (an answer's definition) holds a Python loop: ``for``,
    a comprehension, a call of ``LOOPING_CALLS`` (``map``, ``np.vectorize``...), or a ``while``
    that takes entries (an index ``a[i]``, ``next``, ``pop``, ``item``; a ``while`` that only
    waits, as the slow answers of the tests do, takes none)."""
    for inner in ast.walk(node):
        if isinstance(inner, (ast.For, ast.AsyncFor, ast.comprehension)):
            return True
        if isinstance(inner, ast.While) and any(
                isinstance(part, ast.Subscript) or (isinstance(part, ast.Call) and (
                    getattr(part.func, "id", None) == "next" or getattr(part.func, "attr", None) in ("pop", "item")))
                for part in ast.walk(inner)):
            return True
        if isinstance(inner, ast.Call) and (getattr(inner.func, "id", None) in LOOPING_CALLS
                                            or getattr(inner.func, "attr", None) in LOOPING_CALLS):
            return True
    return False


def refuse_own_loops(answer):
    """Raise ``Rule(NO_LOOP)`` if ``answer`` is a function whose source (as ``inspect`` finds
    it: a cell's, a file's) is one definition that loops; a source it cannot find or read as
    one ``def`` (a lambda among other code) is left to ``NoLoopArray`` and the batch grader,
    which reads the notebook."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(answer)))
    except Exception:
        return
    if (len(tree.body) == 1 and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef))
            and tree.body[0].name == getattr(answer, "__name__", None) and loops_in(tree.body[0])):
        raise Rule(NO_LOOP)


def arrays(case):
    """A case's inputs as float arrays, in order."""
    return [np.asarray(value, dtype=float) for value in case["inputs"].values()]


def diagnose(verdict, got, mistakes, wrong_outputs):
    """A failing verdict, re-worded when ``got`` is what a known mistake produces.

    ``mistakes`` maps a message to a typical wrong answer (a function, or for a value exercise
    a value); ``wrong_outputs(wrong)`` is what that answer gives on this case (an exception
    there means "not this mistake"). The message comes first, then the verdict's own. When
    ``got`` is what several mistakes give (one number often is), none is named: the case
    cannot tell which one was made.
    """
    if verdict.passed or not mistakes or not isinstance(got, np.ndarray):
        return verdict
    named = [message for message, function in mistakes.items() if _gives(wrong_outputs, function, got)]
    if len(named) != 1:
        return verdict
    return Verdict(False, verdict.expected, verdict.got, f"{named[0]} ({verdict.message})", named[0])


def _gives(wrong_outputs, mistake, got):
    """Does ``mistake`` give exactly ``got`` on this case?"""
    try:
        with np.errstate(all="ignore"):
            wrong = np.asarray(wrong_outputs(mistake), dtype=float)
    except Exception:
        return False
    return wrong.shape == got.shape and bool(np.allclose(wrong, got, rtol=RTOL, atol=ATOL, equal_nan=True))


def function_exercise(id, name, reference, cases, points, hint="", title=None,
                      rtol=RTOL, atol=ATOL, raise_on=(), mistakes=None, no_loops=False, engine=None,
                      hidden=None, inputs=arrays):
    """An exercise "write ``name(*inputs)``", checked against ``reference`` on each case.

    ``raise_on`` lists numpy floating-point errors (``"over"``, ``"invalid"``, ``"divide"``)
    that count as failures while the learner's function runs: use it to demand numerical
    stability (an ``exp`` that overflows fails the case instead of only warning).
    ``mistakes`` maps a message to a typical wrong function (called like ``reference``): a
    failing case whose answer matches one says that message. ``no_loops`` refuses a Python loop
    over an input's entries. Every case also fails if the answer changes an input in place.
    ``engine``: what of the engine the exercise asks for (``Exercise.engine``); ``hidden``: a
    generator of more cases' inputs (``Exercise.hidden``). ``inputs(case)``: what the answer,
    the reference and the mistakes are called with, made from the case's JSON (by default its
    inputs as float arrays, ``arrays``; ids as ints, or a model built from a seed, otherwise);
    the answer gets copies of the arrays among them.

    Where the reference answers are not installed (the student edition), a public case is
    judged against the reference's value stored with the edition (``public.stored_values``),
    naming only the mistakes its numbers show by themselves.
    """
    cases = tuple(cases)
    names = list(cases[0]["inputs"]) if cases else []
    params = ", ".join(names)

    def copy(x):
        """What the answer is given: a copy of an array (so that a change in place shows), the
        rest as it is."""
        if not isinstance(x, np.ndarray):
            return x
        return x.copy().view(NoLoopArray) if no_loops else x.copy()

    def run(answer, case):
        if no_loops:
            refuse_own_loops(answer)
        before = inputs(case)
        given = [copy(x) for x in before]
        errors = {error: "raise" for error in raise_on}
        with np.errstate(**errors):
            out = answer(*given)
        unchanged(name, names, before, given)
        return encode(out)

    def expected(case):
        return reference(*inputs(case))

    def judge(case, got):
        got = decode(got)
        verdict = compare(expected(case), got, rtol, atol)
        return diagnose(verdict, got, mistakes, lambda wrong: wrong(*inputs(case)))

    return Exercise(id, name, points, cases, run, judge, title or f"{name}({params})", hint,
                    engine=engine, hidden=hidden, reference=reference, no_loops=no_loops,
                    expected=lambda case: encode(expected(case)), public=stored_values(id, rtol, atol))


def value_exercise(id, name, expected, points, hint="", title=None, labels=None, mistakes=None):
    """An exercise "set ``name`` to the right value" (a number, a shape, an array).

    The expected value is never shown, since it *is* the answer. With ``labels`` (one name per
    entry of a 1-D answer) a wrong answer says which entries are right and which are not.
    ``mistakes`` maps a message to a typical wrong value: that answer gets that message.
    The student edition stores only salted hashes of the value and of each wrong one
    (``public.hashed_value``).
    """

    def run(answer, case):
        return encode(answer)

    def judge(case, got):
        want, value = np.asarray(expected, dtype=float), decode(got)
        verdict = compare(want, value, reveal=False)
        if (not verdict.passed and labels is not None and isinstance(value, np.ndarray)
                and value.shape == want.shape):
            right = np.isclose(value, want, rtol=RTOL, atol=ATOL)
            good = [label for label, ok in zip(labels, right) if ok]
            bad = [label for label, ok in zip(labels, right) if not ok]
            verdict = Verdict(False, verdict.expected, verdict.got,
                              f"right: {', '.join(good) or 'none'}; not right: {', '.join(bad)}")
        return diagnose(verdict, value, mistakes, lambda wrong: wrong)

    return Exercise(id, name, points, ({"inputs": {}},), run, judge, title or name, hint,
                    expected=lambda case: hashes(id, expected, mistakes), public=hashed_value(id))


# -- running cases (in the learner's kernel, or in-process for check()) ---------------------

class CaseTimeout(BaseException):
    """Raised inside a case that runs too long (a BaseException: ``except Exception`` in the
    learner's code must not swallow it)."""


WALL_CLOCK_FACTOR = 10          # a case's wall-clock backstop, in multiples of its CPU time limit


@contextlib.contextmanager
def time_limit(seconds):
    """Interrupt the block after ``seconds`` of this process's CPU time (on Unix, in the main
    thread; elsewhere no limit), or after ``WALL_CLOCK_FACTOR`` times as long on the clock on
    the wall (a block that waits rather than computes).

    CPU time, because a machine busy with other work (a classmate's notebook graded next to
    this one, spinning) slows the clock on the wall for everyone, not the time this process
    computes: an answer is judged by its own work.

    A wall-clock timer already running outside the block (a test runner's time limit, say) is
    put back afterwards with the time it had left, so the block never cancels it.
    """
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise CaseTimeout()

    previous = {kind: signal.signal(kind, on_alarm) for kind in (signal.SIGPROF, signal.SIGALRM)}
    signal.setitimer(signal.ITIMER_PROF, seconds)
    started = time.monotonic()
    outer_left, outer_interval = signal.setitimer(signal.ITIMER_REAL, seconds * WALL_CLOCK_FACTOR)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for kind, handler in previous.items():
            signal.signal(kind, handler)
        if outer_left > 0:              # its time may be up already: then it goes off at once
            left = max(outer_left - (time.monotonic() - started), 1e-6)
            signal.setitimer(signal.ITIMER_REAL, left, outer_interval)


def run_cases(exercise, answer, seconds=CASE_TIME_LIMIT, cases=None):
    """Run every case (``cases``, by default the exercise's public ones) on ``answer``; one
    JSON-able record per case, whatever happens.

    A record is ``{"status": "ran", "got": ...}``, ``{"status": "not_done"}`` (the stub's
    NotImplementedError, or ``None`` as the answer), ``{"status": "error", "message": ...}``
    or ``{"status": "timeout"}``. After one timeout the remaining cases are not run.
    """
    records = []
    # the engine's functions are looked up once, before any clock starts: the answer's time is its own
    found = None if exercise.engine is None or answer is None else exercise.engine.found()
    for each in exercise.cases if cases is None else cases:
        if answer is None:
            records.append({"status": "not_done"})
        elif records and records[-1]["status"] == "timeout":
            records.append({"status": "timeout"})
        else:
            records.append(_run_one(exercise, answer, each, seconds, found))
    return json.loads(json.dumps(records))        # exactly what a grader would receive


def _run_one(exercise, answer, case, seconds, found):
    given, refusing = ((answer, contextlib.nullcontext()) if exercise.engine is None
                       else exercise.engine.guarded(exercise.name, answer, found))
    try:
        with time_limit(seconds), refusing:
            return {"status": "ran", "got": exercise.run(given, case)}
    except NotImplementedError:
        return {"status": "not_done"}
    except CaseTimeout:
        return {"status": "timeout", "seconds": seconds}
    except (Exception, SystemExit) as error:     # sys.exit() in an answer fails its case, nothing more
        rule = _rule_behind(error)
        message = str(rule) if rule else _explained(error)
        return {"status": "error", "message": sentences(message, MAX_MESSAGE)}


NUMPY_PITFALLS = {              # a piece of numpy's error message -> what the learner did
    "truth value of an array": "Python's if, and, or, max or min was given a whole array, and "
                               "numpy cannot tell whether many entries at once are true: use "
                               "numpy functions, which work entry by entry",
    "matmul: Input operand": "a matrix product whose shapes do not fit: (n, k) @ (k, m) needs the "
                             "same k on both sides; is a matrix transposed, or the product taken "
                             "in the wrong order?",
    "could not be broadcast together": "two arrays whose shapes do not broadcast were combined "
                                       "entry by entry; check each one's shape (an axis reduced "
                                       "or indexed that should not be?)",
}


def _explained(error):
    """An error's message, with what it means in front when it is numpy's own error (a plain
    ValueError; minigraph's errors explain themselves) for a known pitfall."""
    message = f"{type(error).__name__}: {error}"
    meaning = next((text for piece, text in NUMPY_PITFALLS.items() if piece in message), None)
    return f"{meaning} ({message})" if meaning and type(error) is ValueError else message


def _rule_behind(error):
    """The ``Rule`` behind an error (itself, or one the engine caught and wrapped), or None."""
    while error is not None and not isinstance(error, Rule):
        error = error.__cause__ or error.__context__
    return error


# -- judging (where the reference lives) ----------------------------------------------------

UNJUDGED = ("ran without an error; only the grader can judge this case (this installation has "
            "no reference answers)")

@dataclass
class CaseResult:
    """One row of a check's table."""

    index: int
    status: str          # "pass" | "fail" | "error" | "timeout" | "not_done" | "unjudged"
    input: str
    expected: str = ""
    got: str = ""
    message: str = ""
    hint: str = ""                                    # the first level: a nudge
    more_hints: list = field(default_factory=list)    # sharper levels, shown on request
    mistake: str = ""    # the typical mistake the judge named ("" none), as the message says it


@dataclass
class ExerciseResult:
    """The verdict on one exercise: status, score and the table of cases."""

    id: str
    name: str
    title: str
    points: float
    status: str          # "passed" | "failed" | "not_done" | "missing" | "error"
    score: float
    message: str
    cases: list = field(default_factory=list)

    def to_dict(self):
        return asdict(self)


def grade(exercise, records, cases=None):
    """Judge the records of one exercise (a list from ``run_cases`` on ``cases``, by default
    the public ones) into an ExerciseResult. Every case earns an equal share, hidden or not.

    ``records`` comes from an untrusted kernel: anything malformed is a failure, never a crash.
    """
    given = exercise.cases if cases is None else cases
    if not isinstance(records, list) or len(records) != len(given):
        return _result(exercise, "error", [], "the results sent by the notebook were unreadable")
    cases = [_grade_case(exercise, i, each, record)
             for i, (each, record) in enumerate(zip(given, records), start=1)]
    if all(c.status == "pass" for c in cases):
        status = "passed"
    elif all(c.status == "not_done" for c in cases):
        status = "not_done"
    else:
        status = "failed"
    return _result(exercise, status, cases, _summary(status, cases))


def missing(exercise):
    """The result for an exercise whose answer the notebook never defined."""
    return _result(exercise, "missing", [], f"no `{exercise.name}` defined in the notebook")


def failed_to_run(exercise, message):
    """The result for an exercise whose cases could not be run at all."""
    return _result(exercise, "error", [], message)


def _result(exercise, status, cases, message):
    passed = sum(c.status == "pass" for c in cases)
    score = round(exercise.points * passed / len(cases), 2) if cases else 0.0
    return ExerciseResult(exercise.id, exercise.name, exercise.title or exercise.name,
                          exercise.points, status, score, message, cases)


def _grade_case(exercise, index, case, record):
    shown = _safe(exercise.describe, case)
    drawn = "fresh case: " if case.get("fresh") else "hidden case: " if case.get("hidden") else ""
    row = CaseResult(index, "fail", drawn + shown)
    status = record.get("status") if isinstance(record, dict) else None
    if status == "ran":
        judge = exercise.judge if answers.available() or exercise.public is None else exercise.public.judge
        try:
            verdict = judge(case, record.get("got"))
        except answers.Withheld:
            row.status, row.message = "unjudged", UNJUDGED
            return row
        except Exception as error:
            why = f"the result could not be read ({type(error).__name__}: {error})"
            verdict = Verdict(False, message=sentences(why, MAX_MESSAGE))
        row.status = "pass" if verdict.passed else "fail"
        row.expected, row.got, row.message = verdict.expected, verdict.got, verdict.message
        row.mistake = verdict.mistake
    elif status == "not_done":
        row.status, row.message = "not_done", "not done yet (NotImplementedError)"
    elif status == "timeout":
        row.status = "timeout"
        row.message = f"did not finish within {number(CASE_TIME_LIMIT)} s (an endless loop?)"
    elif status == "error":
        row.status, row.message = "error", sentences(record.get("message", "raised an error"), MAX_MESSAGE)
    else:
        row.message = "no readable result for this case"
    if row.status not in ("pass", "not_done"):
        levels = hint_levels(case.get("hint") or exercise.hint)
        row.hint, row.more_hints = (levels[0], list(levels[1:])) if levels else ("", [])
    return row


def _safe(describe, case):
    try:
        return describe(case)
    except Exception:
        return "?"


def _summary(status, cases):
    if status == "passed":
        return f"all {len(cases)} cases passed" if len(cases) > 1 else "passed"
    if status == "not_done":
        return "not done yet"
    first = next(c for c in cases if c.status != "pass")
    passed = sum(c.status == "pass" for c in cases)
    if len(cases) == 1:
        return first.message
    return f"{passed} of {len(cases)} cases passed; case {first.index}: {first.message}"
