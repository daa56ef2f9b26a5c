"""Grade submitted notebooks: execute each in its own sandbox, judge its answers here.

For one submission the grader

1. reads the file safely (``files.read_untrusted``: a regular file of bounded size, read with
   a time limit; anything else is a graded zero with a message) and never writes to it;
2. looks at its code for uses of minigraph's grading internals (``scan.py``, in a process of
   its own with a time limit: ``examine_apart``): an answer defined next to them is flagged for
   the instructor and earns nothing;
3. makes a fresh folder, ``home``, with a copy of the notebook in ``home/work`` and the job,
   and runs ``runner.py`` there in a sandbox (``sandbox.py``): the runner executes every code
   cell in a new kernel, then the *collector* (``collect.py``), which runs each answer's cases
   -- the public ones and hidden ones drawn from a seed this process draws now (or is given,
   to regrade: ``grade_all``'s ``seeds``) and hands over only once the learner's cells have
   run -- and writes what came out to
   ``home/results.json``. The whole run is stopped after ``timeout`` seconds, and nothing it
   started outlives it. Meanwhile the kernel's watch (``watch.py``) reports what the notebook's
   code does over a pipe this process reads (``watched.py``): flags for review;
4. reads the results as untrusted data (bounded size, bounded nesting) and judges them here
   (``exercise.grade``, in a process of its own with a time limit: ``judge_apart``), against
   reference answers the submission never saw (they are not in its sandbox). The kernel decides nothing but what its answers returned: tampering
   with ``check``, the engine or the expected values earns nothing.

Whatever goes wrong with one submission, including a bug of the grader's, becomes that
submission's error; the others are graded as usual.
"""

import asyncio
import functools
import hashlib
import json
import multiprocessing
import os
import re
import secrets
import signal
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import nbformat

from ..toolkit import registry
from ..toolkit.exercise import CASE_TIME_LIMIT, NO_LOOP, failed_to_run, grade, missing, with_hidden
from ..toolkit.report import points
from ..toolkit.values import shorten
from . import cgroup, runner, sandbox, watched
from .files import Unreadable, display_name, read_untrusted
from .scan import one_line_ending, reference_uses, review_flags
from .sources import answer_sources, looping_answers
from .sandbox import Limits
from .workspace import Workspace

MAX_NOTEBOOK = 64_000_000        # bytes of a submitted notebook, outputs included (they are not run)
MAX_CODE = 20_000_000            # characters of its code cells, which are
EXAMINE_TIMEOUT = 60.0           # seconds to parse and scan one notebook
MAX_RESULTS = 8_000_000          # bytes of the results a kernel hands back
MAX_NOTES_FILE = 200_000         # bytes of the runner's notes
MAX_NOTES, MAX_NOTE = 20, 200    # notes kept per submission, characters per note
READ_TIMEOUT = 30.0              # seconds to read one file


@dataclass(frozen=True)
class Settings:
    """How to grade: time limits (seconds), the chapter (None: from the file name's ``NN_``
    prefix, as in ``NN_topic_exercises.ipynb``), whether to use a sandbox, and the sandbox's
    limits. (The kernel is always the grader's own: ``kernel.py``.)"""

    cell_timeout: float = 60.0
    timeout: float = 600.0
    chapter: str | None = None
    sandbox: bool = True
    limits: Limits = Limits()


@dataclass
class SubmissionResult:
    """The grade of one notebook. ``path`` is printable (``files.display_name``)."""

    path: str
    chapter: str | None
    status: str                  # "graded" | "error" (the notebook could not be run at all)
    message: str
    score: float
    max_score: float
    exercises: list = field(default_factory=list)       # of ExerciseResult
    notes: list = field(default_factory=list)           # of str: what happened in the run
    flags: list = field(default_factory=list)           # of str: for the instructor to review
    seed: int | None = None      # the hidden cases' (``exercise.with_hidden(exercise, seed)`` draws them again)
    seed_given: bool = False     # True: ``seed`` was given (a regrading), not drawn here
    sha256: str | None = None    # of the file graded: a regrading uses ``seed`` only on these bytes
    answers: dict = field(default_factory=dict)         # exercise id -> its source (``sources.py``)

    def to_dict(self):
        return asdict(self)


@dataclass(frozen=True)
class RecordedSeed:
    """The seed a report recorded for a notebook, and the SHA-256 of the bytes it graded: to
    regrade, the seed is used only on those very bytes. A file replaced at the same path since
    (one whose answers table the hidden inputs that report showed) gets a fresh seed."""

    seed: int
    sha256: str | None


# -- finding work ---------------------------------------------------------------------------

def find_notebooks(paths):
    """The notebooks named by ``paths`` (files, or folders searched recursively without
    following links), in order. Whatever ends in ``.ipynb`` is listed -- a folder, a link, a
    FIFO -- and graded as an error if it is no readable file.

    Raises FileNotFoundError for a path that does not exist, and ValueError for a link to a
    folder: searching it would follow wherever the link leads (a student's link in a folder of
    submissions, given as ``submissions/*``, could lead to ``solutions/``); name the folder itself.
    """
    found = []
    for path in map(Path, paths):
        if path.is_symlink() and path.is_dir():
            raise ValueError(f"{display_name(path)} is a link to a folder; to grade what is in "
                             f"that folder, name the folder itself: {display_name(path.resolve())}")
        if path.is_dir() and not path.is_symlink():
            for folder, subfolders, names in os.walk(path):
                subfolders[:] = sorted(s for s in subfolders if s != ".ipynb_checkpoints"
                                       and not s.endswith(".ipynb"))
                entries = names + [s for s in os.listdir(folder) if s.endswith(".ipynb")
                                   and os.path.isdir(os.path.join(folder, s))]
                found += sorted(Path(folder, n) for n in set(entries) if n.endswith(".ipynb"))
        elif path.exists() or path.is_symlink():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {display_name(path)}")
    return list(dict.fromkeys(found))


def chapter_of(path, settings):
    """The chapter to grade ``path`` against: ``settings.chapter``, or the file's ``NN_`` prefix."""
    if settings.chapter:
        return settings.chapter
    match = re.match(r"(\d\d)_", Path(path).name)
    return match.group(1) if match and match.group(1) in registry.CHAPTERS else None


def grade_all(paths, settings, jobs=1, on_result=None, seeds=None):
    """Grade every notebook in ``paths``, ``jobs`` at a time; results in the order given.

    ``on_result(index, result)`` is called as soon as each result is known (to save it).
    ``seeds``, one per path, are the seeds of their hidden cases, to regrade exactly as a
    report recorded: a ``RecordedSeed`` (used only if the file is unchanged) or a number (used
    whatever the file holds); None, or a None in the list: a fresh secret seed. Never give seeds for a first grading: a seed learners could know before they submit
    makes the hidden cases computable in advance.
    """
    seeds = seeds or [None] * len(paths)
    async def main():
        slots = asyncio.Queue()
        for slot in range(jobs):
            slots.put_nowait(slot)

        async def one(index, path):
            slot = await slots.get()
            try:
                result = await grade_notebook(path, settings, slot, seeds[index])
            finally:
                slots.put_nowait(slot)
            if on_result:
                on_result(index, result)
            return result

        return await asyncio.gather(*(one(i, p) for i, p in enumerate(paths)))

    return asyncio.run(main())


# -- one notebook ---------------------------------------------------------------------------

async def grade_notebook(path, settings, slot=0, seed=None):
    """Grade one notebook file (see the module docstring) in sandbox ``slot`` (each notebook
    graded at the same time has its own), its hidden cases drawn from ``seed`` (None: a fresh
    secret one). Never raises."""
    chapter = None
    try:
        chapter = chapter_of(path, settings)
        return await _grade(path, chapter, settings, slot, seed)
    except Exception as error:                   # a grader bug must not end the run
        return SubmissionResult(display_name(path), chapter, "error", shorten(
            f"the grader failed on this submission ({type(error).__name__}: {error})", MAX_NOTE),
            0.0, 0.0)


async def _grade(path, chapter, settings, slot, seed):
    name = display_name(path)
    if chapter is None:
        return SubmissionResult(name, None, "error", f"cannot tell which chapter '{name}' "
                                "belongs to: start its name with the chapter's number, as in "
                                "NN_topic_exercises.ipynb, or pass --chapter NN", 0.0, 0.0)
    exercises = registry.exercises(chapter)
    try:
        data = await _read(path, MAX_NOTEBOOK)
    except Unreadable as error:
        return _unrunnable(name, chapter, exercises, f"not a notebook: the file is {error}", [])
    digest = hashlib.sha256(data).hexdigest()
    seed, changed = _regrading_seed(seed, digest)
    problem, notebook, uses, flags, (sources, looping) = await examine_apart(data, chapter)
    if problem:
        result = _unrunnable(name, chapter, exercises, problem, changed)
        result.sha256 = digest
        return result
    flagged = {answer: why for _, why, answers in uses for answer in answers}
    given = seed is not None
    if not given:
        seed = secrets.randbits(62)                # the hidden cases of this submission
    with Workspace(settings.limits) as space:
        notes, reports = await _execute(notebook, data, chapter, exercises, space, settings, slot, seed)
        notes = changed + notes
        results, problem = await _read_json(space.home / runner.RESULTS, MAX_RESULTS)
    flags += watch_flags(reports, notebook, exercises, graded=results is not None)
    if results is None:
        result = _unrunnable(name, chapter, exercises, "no answers were collected: " +
                             (notes[-1] if notes else problem), notes)
        result.flags, result.seed, result.seed_given = flags, seed, given     # it ran with it
        result.sha256 = digest
        return result
    graded = await judge_apart(chapter, results, seed, flagged, settings.timeout, looping)
    score = round(sum(r.score for r in graded), 2)
    total = sum(e.points for e in exercises)
    return SubmissionResult(name, chapter, "graded", f"{points(score)} of {points(total)} points",
                            score, total, graded, notes, flags, seed, given, digest, sources)


def watch_flags(reports, notebook, exercises, graded):
    """The flags of what the kernel's watch reported (``watched.flags``)."""
    numbered = enumerate(notebook.cells, start=1)
    cells = {n: one_line_ending(c.source) for n, c in numbered if c.cell_type == "code"}

    def review(text):
        return review_flags(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(text)]), exercises)
    return watched.flags(reports, cells, review, graded)


def _regrading_seed(seed, digest):
    """(the seed to grade a file of SHA-256 ``digest`` with, [a note]) for a seed given to
    regrade: a ``RecordedSeed`` of other bytes gives way to a fresh one (None)."""
    if not isinstance(seed, RecordedSeed):
        return seed, []
    if seed.sha256 == digest:
        return seed.seed, []
    why = ("its content changed" if seed.sha256 else "the report, an older one, recorded no SHA-256 of it")
    return None, [f"the file is not the one the report of its seed graded ({why}): its hidden "
                  "cases were drawn from a fresh seed"]


async def _read(path, limit):
    """``read_untrusted`` with a time limit (the thread of a hung read is abandoned)."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(read_untrusted, path, limit), READ_TIMEOUT)
    except asyncio.TimeoutError:
        raise Unreadable(f"not readable within {points(READ_TIMEOUT)} s") from None


async def run_apart(target, args, seconds):
    """What ``target(send, *args)`` sends back, run in a process of its own forked from a clean
    server process (``forkserver``: none of this one's threads is copied into it), or None when
    it sends nothing within ``seconds`` or dies (memory?). The process is killed either way."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=target, args=(send, *args), daemon=True)
    process.start()
    send.close()
    try:
        return receive.recv() if await asyncio.to_thread(receive.poll, seconds) else None
    except EOFError:
        return None
    finally:
        process.kill()
        await asyncio.to_thread(process.join)
        receive.close()


async def examine_apart(data, chapter):
    """``(problem, notebook, uses, flags, (sources, looping))`` of a submission's bytes:
    ``parse_notebook`` and the scan (``scan.py``), in a process of its own with a time limit
    (``EXAMINE_TIMEOUT``), so that no notebook -- a line of a million strings, JSON of 64 MB --
    holds up the others graded meanwhile. ``uses``: ``scan.reference_uses``; ``flags``: the
    flags they and ``scan.review_flags`` make; ``sources`` and ``looping``: ``answer_sources``
    and ``looping_answers``."""
    found = await run_apart(_examine, (data, chapter), EXAMINE_TIMEOUT)
    if found is None:
        return (f"not graded: its code could not be read within {points(EXAMINE_TIMEOUT)} s "
                "(look at it by hand)", None, [], [], ({}, []))
    return found


def _examine(send, data, chapter):
    """In the examining process: ``examine_apart``'s answer, sent back through ``send``."""
    problem, notebook = parse_notebook(data)
    uses, flags, answers = [], [], ({}, [])
    if notebook is not None:
        exercises = registry.exercises(chapter)
        uses = reference_uses(notebook, exercises)
        flags = [f"cell {number}: {why}" for number, why, _ in uses] + review_flags(notebook, exercises)
        answers = (answer_sources(notebook, exercises), looping_answers(notebook, exercises))
    send.send((problem, notebook, uses, flags, answers))
    send.close()


def parse_notebook(data):
    """(None, notebook), or (what is wrong with the bytes, None). The outputs it holds count
    for nothing (the grader runs the code again); its code may be ``MAX_CODE`` characters."""
    try:
        text = data.decode("utf-8-sig")         # a byte-order mark (some editors write one) is no content
        json.loads(text)
    except ValueError as error:              # also UnicodeDecodeError
        return f"not a valid notebook: the file is not JSON ({shorten(error, MAX_NOTE)})", None
    except RecursionError:
        return "not a valid notebook: its JSON is nested too deeply", None
    try:
        notebook = nbformat.reads(text, as_version=4, capture_validation_error={})   # judged below
        _accept_cell_ids(notebook)
        nbformat.validate(notebook)
    except Exception as error:               # nbformat raises many kinds for many problems
        return f"not a valid notebook: JSON, but not in Jupyter's format ({shorten(error, MAX_NOTE)})", None
    code = sum(len(cell.source) for cell in notebook.cells if cell.cell_type == "code")
    if code > MAX_CODE:
        return f"too much code: {code / 1e6:.1f} million characters in its code cells (at most {MAX_CODE / 1e6:g})", None
    return None, notebook


def _accept_cell_ids(notebook):
    """Read a 4.x notebook whose cells have ids as nbformat 4.5, where ids came in: editors
    (VS Code) write them into older minors too, and Jupyter opens those with a warning."""
    if notebook.nbformat_minor < 5 and any("id" in cell for cell in notebook.cells):
        notebook.nbformat_minor = 5
        for number, cell in enumerate(notebook.cells):
            cell.setdefault("id", f"cell-{number}")


def _unrunnable(name, chapter, exercises, message, notes):
    total = sum(e.points for e in exercises)
    return SubmissionResult(name, chapter, "error", message, 0.0, total,
                            [failed_to_run(e, "not graded: " + message) for e in exercises], notes)


async def judge_apart(chapter, results, seed, flagged, seconds, looping=()):
    """The ExerciseResults of a submission's ``results``, judged in a process of its own that
    may take ``seconds``: a judge that trains (a recipe) must neither hold up the submissions
    graded meanwhile (this event loop) nor go on for ever (``run_apart``). The cases that ran
    of an exercise in ``looping`` (ids: ``sources.looping_answers``) fail with ``NO_LOOP``."""
    graded = await run_apart(_judge, (chapter, results, seed, flagged, looping), seconds)
    if graded is None:
        return [failed_to_run(e, f"its answers could not be judged within {points(seconds)} s")
                for e in registry.exercises(chapter)]
    return graded


def _judge(send, chapter, results, seed, flagged, looping=()):
    """In the judging process: every exercise's result, sent back through ``send``."""
    graded = []
    for exercise in registry.exercises(chapter):
        why = flagged.get(exercise.name)
        entry = results.get(exercise.id)
        if exercise.id in looping:
            entry = _loops_refused(entry)
        graded.append(replace(failed_to_run(exercise, "FLAGGED, no points: " + why), status="flagged")
                      if why else _grade_exercise(exercise, entry, seed))
    send.send(graded)
    send.close()


def _loops_refused(entry):
    """``entry`` (an exercise's results) with each case that ran failing as ``NoLoopArray``
    fails a loop: the answer's own source loops (``sources.looping_answers``)."""
    if not (isinstance(entry, dict) and isinstance(entry.get("records"), list)):
        return entry
    return {**entry, "records": [{"status": "error", "message": NO_LOOP}
                                 if isinstance(r, dict) and r.get("status") == "ran" else r
                                 for r in entry["records"]]}


def _grade_exercise(exercise, entry, seed):
    status = entry.get("status") if isinstance(entry, dict) else None
    if status == "ran":
        return grade(exercise, entry.get("records"), with_hidden(exercise, seed))
    if status == "missing":
        return missing(exercise)
    if status == "error":
        return failed_to_run(exercise, "its cases could not be run: "
                             + shorten(entry.get("message"), MAX_NOTE))
    return failed_to_run(exercise, "no results: the grading cell stopped before this exercise")


async def _read_json(path, limit):
    """(the JSON object in ``path``, read as untrusted, its strings made printable, None), or
    (None, what is wrong)."""
    if not os.path.lexists(path):
        return None, f"the kernel wrote no {path.name}"
    try:
        value = _printable(json.loads(await _read(path, limit)))
    except Unreadable as error:
        return None, f"{path.name} is {error}"
    except ValueError:
        return None, f"{path.name} is not JSON"
    except RecursionError:
        return None, f"{path.name} is nested too deeply"
    return (value, None) if isinstance(value, dict) else (None, f"{path.name} is not a JSON object")


def _printable(value):
    """``value`` (parsed JSON) with every string made one printable line (``display_name``): a
    kernel can send neither an escape sequence to the instructor's terminal (to overwrite a line
    of the report) nor a lone surrogate, which no UTF-8 report can hold."""
    if isinstance(value, str):
        return display_name(value)
    if isinstance(value, list):
        return [_printable(item) for item in value]
    if isinstance(value, dict):
        return {display_name(key): _printable(item) for key, item in value.items()}
    return value


async def _read_notes(home):
    """The runner's notes, capped in number and size; and the cell it was running."""
    found = (await _read_json(home / runner.NOTES, MAX_NOTES_FILE))[0] or {}
    notes = found.get("notes")
    notes = [shorten(n, MAX_NOTE) for n in notes[:MAX_NOTES]] if isinstance(notes, list) else []
    if isinstance(found.get("notes"), list) and len(found["notes"]) > MAX_NOTES:
        notes.append(f"... and {len(found['notes']) - MAX_NOTES} more notes (not kept)")
    return notes, shorten(found.get("current", "kernel start"), 40)


# -- executing ------------------------------------------------------------------------------

async def _execute(notebook, data, chapter, exercises, space, settings, slot, seed):
    """Run the submission in ``space`` (in a sandbox unless told not to), handing the runner
    ``seed`` on its standard input; return the notes and the records of the watch channel
    (``watched.py``), whose write end the run inherits."""
    home = space.home
    work = home / runner.WORK
    work.mkdir()
    sandbox.make_config(home)
    watch_read, watch_write = os.pipe()
    (work / "submission.ipynb").write_bytes(data)      # the learner's own name may be unprintable
    code = [c for c in notebook.cells if c.cell_type == "code"]
    job = {"cells": [c.source for c in code],
           "numbers": [i for i, c in enumerate(notebook.cells, start=1) if c.cell_type == "code"],
           "chapter": chapter, "watch_fd": watch_write, "cell_timeout": settings.cell_timeout,
           "timeout": settings.timeout, "collector_timeout": settings.cell_timeout + CASE_TIME_LIMIT * len(exercises) + 10}
    (home / runner.JOB).write_text(json.dumps(job), encoding="utf-8")
    # -P: the runner's folder, which the kernel can write, is no place to import from
    argv = [sys.executable, "-P", "-m", "minigraph.grading.batch.runner", str(home)]
    env = sandbox.environment(home)
    if settings.sandbox:
        argv, options = sandbox.sandboxed_command(argv, space, env, slot)
    else:                                       # the real /tmp is no one's: use the space's
        env["TMPDIR"] = str(space.tmp)
        argv, options = sandbox.unsandboxed_command(argv, space, env, slot)
    group = cgroup.Group.create(cgroup.name_of(slot), settings.limits)    # None: limits per process only
    try:
        with open(space.stderr, "wb") as stderr:           # outside the sandbox's view; size-capped by Limits
            process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL, stderr=stderr,
                preexec_fn=functools.partial(_start_child, settings.limits,
                                             sandbox.counts_processes(settings.sandbox), group),
                pass_fds=(watch_write,), **options)
    except BaseException:
        os.close(watch_read)
        raise
    finally:
        os.close(watch_write)                           # the run holds it now: its end is the run's end
    channel = watched.Channel(watch_read)
    process.stdin.write(f"{seed}\n".encode())       # a pipe's buffer holds it until the runner reads
    process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), settings.timeout)
        stopped = None
    except asyncio.TimeoutError:
        stopped = f"the notebook did not finish within {points(settings.timeout)} s"
    finally:
        _end(process, settings.sandbox)
        await process.wait()
        await asyncio.to_thread(sandbox.end_user, slot)     # whatever left the session, too
        if group:
            await asyncio.to_thread(group.remove)
    reports = await asyncio.to_thread(channel.close)
    notes, current = await _read_notes(home)
    if stopped:
        notes.append(f"{stopped} (stopped at {current})")
    elif process.returncode != 0 and not (home / runner.RESULTS).exists():
        notes.append(shorten(f"the run ended early (exit status {process.returncode}) while "
                             f"running {current}: {stderr_tail(space.stderr)}", MAX_NOTE))
    full = space.full()
    return notes + ([full] if full else []), reports


def _start_child(limits, count_processes, group):
    """In the run's first process, before it starts: join the submission's control group (limits
    on all its processes together), then set the limits of each process."""
    if group:
        group.join()
    limits.apply(count_processes)


def stderr_tail(path, size=300):
    """The last ``size`` bytes a run wrote to stderr (where it says why it failed), as one
    printable line: a kernel may have written there (``/proc/PPID/fd/2``) to forge a report line."""
    with open(path, "rb") as file:
        file.seek(max(0, os.fstat(file.fileno()).st_size - size))
        return display_name(" ".join(file.read().decode("utf-8", "replace").split())) or "no message"


def _end(process, sandboxed):
    """Stop a run: the sandbox's first process (its PID namespace ends with it), or without
    a sandbox the run's process group."""
    try:
        if sandboxed:
            process.kill()
        else:
            os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
