"""Grade submitted notebooks: execute each in a fresh kernel, judge its answers here.

For one submission the grader

1. reads the file (a broken file is a graded zero with a message, not a crash) and never
   writes to it: it works on a copy in a fresh temporary folder, which is also the kernel's
   working directory and is deleted afterwards;
2. runs every code cell top to bottom in a new kernel -- stored outputs and execution counts
   are ignored, errors do not stop the run, a cell that exceeds ``cell_timeout`` is
   interrupted, and the whole run is stopped after ``timeout``;
3. runs one more cell, the *collector* (``collect.py``), which finds each exercise's answer by
   name, runs its cases and writes the results as JSON to a file outside the working folder;
4. judges those results in this process (``exercise.grade``), against reference answers the
   submission never saw. Nothing the submission did in its kernel reaches this process except
   that JSON, so tampering with ``check``, the engine or expected values earns nothing.

What happened along the way (errors, time-outs, floods of output) becomes ``notes``.
"""

import asyncio
import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

from . import registry
from .exercise import CASE_TIME_LIMIT, failed_to_run, grade, missing
from .report import points
from .values import shorten

TIMED_OUT = "CellTimedOut"                 # the error name of a cell interrupted for time
BIG_OUTPUT = 1_000_000                     # characters of output worth a note
MAX_NOTE = 200


@dataclass(frozen=True)
class Settings:
    """How to grade: time limits (seconds), the Jupyter kernel, and the chapter (None: from
    the file name ``NN_topic.ipynb``)."""

    cell_timeout: float = 60.0
    timeout: float = 600.0
    kernel: str = "python3"
    chapter: str | None = None


@dataclass
class SubmissionResult:
    """The grade of one notebook."""

    path: str
    chapter: str | None
    status: str                  # "graded" | "error" (the notebook could not be run at all)
    message: str
    score: float
    max_score: float
    exercises: list = field(default_factory=list)       # of ExerciseResult
    notes: list = field(default_factory=list)           # of str

    def to_dict(self):
        return asdict(self)


# -- finding work ---------------------------------------------------------------------------

def find_notebooks(paths):
    """The notebooks named by ``paths`` (files, or folders searched recursively), in order.

    Raises FileNotFoundError for a path that does not exist.
    """
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        elif path.exists():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return list(dict.fromkeys(found))


def chapter_of(path, settings):
    """The chapter to grade ``path`` against: ``settings.chapter``, or the file's ``NN_`` prefix."""
    if settings.chapter:
        return settings.chapter
    match = re.match(r"(\d\d)_", Path(path).name)
    return match.group(1) if match and match.group(1) in registry.CHAPTERS else None


def grade_all(paths, settings, jobs=1):
    """Grade every notebook in ``paths``, ``jobs`` at a time; results in the order given."""
    async def main():
        slots = asyncio.Semaphore(jobs)

        async def one(path):
            async with slots:
                return await grade_notebook(path, settings)

        return await asyncio.gather(*(one(p) for p in paths))

    return asyncio.run(main())


# -- one notebook ---------------------------------------------------------------------------

async def grade_notebook(path, settings):
    """Grade one notebook file (see the module docstring). Never raises for a bad submission."""
    chapter = chapter_of(path, settings)
    if chapter is None:
        return SubmissionResult(str(path), None, "error", f"cannot tell which chapter '{path}' "
                                "belongs to: name it NN_topic.ipynb or pass --chapter NN", 0.0, 0.0)
    exercises = registry.exercises(chapter)
    problem, notebook = read_notebook(path)
    if problem:
        return _unrunnable(path, chapter, exercises, problem, [])
    # ignore_cleanup_errors: the submission may have deleted parts of the folder itself
    with tempfile.TemporaryDirectory(prefix="minigraph-grade-", ignore_cleanup_errors=True) as home:
        home = Path(home)
        results_file = home / f"results-{uuid.uuid4().hex}.json"
        work = home / "work"
        work.mkdir()
        shutil.copyfile(path, work / Path(path).name)
        notes = await _execute(notebook, chapter, exercises, work, results_file, settings)
        results = _read_results(results_file)
    if results is None:
        return _unrunnable(path, chapter, exercises, "no answers were collected: " +
                           (notes[-1] if notes else "the notebook did not finish"), notes)
    graded = [_grade_exercise(e, results.get(e.id)) for e in exercises]
    score = round(sum(r.score for r in graded), 2)
    total = sum(e.points for e in exercises)
    return SubmissionResult(str(path), chapter, "graded", f"{points(score)} of {points(total)} points",
                            score, total, graded, notes)


def read_notebook(path):
    """(None, notebook), or (what is wrong with the file, None)."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
        json.loads(text)
    except ValueError as error:              # also UnicodeDecodeError
        return f"not a valid notebook: the file is not JSON ({shorten(error, MAX_NOTE)})", None
    try:
        notebook = nbformat.reads(text, as_version=4)
        nbformat.validate(notebook)
    except Exception as error:               # nbformat raises many kinds for many problems
        return f"not a valid notebook: JSON, but not in Jupyter's format ({shorten(error, MAX_NOTE)})", None
    return None, notebook


def _unrunnable(path, chapter, exercises, message, notes):
    total = sum(e.points for e in exercises)
    return SubmissionResult(str(path), chapter, "error", message, 0.0, total,
                            [failed_to_run(e, "not graded: " + message) for e in exercises], notes)


def _grade_exercise(exercise, entry):
    status = entry.get("status") if isinstance(entry, dict) else None
    if status == "ran":
        return grade(exercise, entry.get("records"))
    if status == "missing":
        return missing(exercise)
    if status == "error":
        return failed_to_run(exercise, "its cases could not be run: "
                             + shorten(entry.get("message"), MAX_NOTE))
    return failed_to_run(exercise, "no results: the grading cell stopped before this exercise")


def _read_results(path):
    """The collector's JSON, or None if it never wrote a readable file."""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return results if isinstance(results, dict) else None


# -- executing ------------------------------------------------------------------------------

def collector_cell(chapter, results_file):
    """The cell the grader appends: forget the submission's minigraph modules, collect fresh."""
    return nbformat.v4.new_code_cell(
        "# Added by the minigraph grader: run every answer's cases, write the results as JSON.\n"
        "def _minigraph_grader_collect(namespace):\n"
        "    import sys\n"
        "    for name in [m for m in sys.modules if m.split('.')[0] == 'minigraph']:\n"
        "        del sys.modules[name]\n"
        "    from minigraph.grading.collect import collect\n"
        f"    collect({chapter!r}, namespace, {str(results_file)!r})\n"
        "_minigraph_grader_collect(globals())")


class _Client(NotebookClient):
    """nbclient that runs a submission's cells and writes down what went wrong, in ``notes``.

    It keeps no outputs (a notebook may print megabytes; the grade needs none of them) but
    counts how much each cell printed. ``numbers`` maps the cells it runs back to the cell
    numbers of the submission (markdown cells are not run); the last cell is the collector.
    """

    def __init__(self, notebook, km, settings, numbers, collector_timeout, work):
        super().__init__(notebook, km=km, timeout=settings.cell_timeout, allow_errors=True,
                         interrupt_on_timeout=True, record_timing=False,
                         error_on_timeout={"ename": TIMED_OUT, "evalue": "", "traceback": []},
                         timeout_func=self._timeout_of, on_cell_execute=self._on_execute,
                         on_cell_error=self._on_error, resources={"metadata": {"path": str(work)}})
        self.settings, self.numbers, self.collector_timeout = settings, numbers, collector_timeout
        self.notes, self.printed, self.current = [], {}, None

    def where(self, index):
        return f"cell {self.numbers[index]}" if index < len(self.numbers) else "the grading cell"

    def _timeout_of(self, cell):
        is_collector = cell is self.nb.cells[-1]
        return self.collector_timeout if is_collector else self.settings.cell_timeout

    def _on_execute(self, cell, cell_index):
        self.current = cell_index

    def _on_error(self, cell, cell_index, execute_reply):
        content = execute_reply["content"]
        if content.get("ename") == TIMED_OUT:
            self.notes.append(f"{self.where(cell_index)} did not finish within "
                              f"{points(self.settings.cell_timeout)} s and was interrupted")
        else:
            self.notes.append(shorten(f"{self.where(cell_index)} raised {content.get('ename')}: "
                                      f"{content.get('evalue')}", MAX_NOTE))

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        size = len(content.get("text", "")) if msg["msg_type"] == "stream" else len(str(content))
        self.printed[cell_index] = self.printed.get(cell_index, 0) + size
        return None

    def big_outputs(self):
        return [f"{self.where(index)} printed {size / 1e6:.1f} MB of output (not kept)"
                for index, size in sorted(self.printed.items()) if size > BIG_OUTPUT]


async def _execute(notebook, chapter, exercises, work, results_file, settings):
    """Run the submission's code cells, then the collector; return the notes."""
    cells = [nbformat.v4.new_code_cell(c.source) for c in notebook.cells if c.cell_type == "code"]
    numbers = [i for i, c in enumerate(notebook.cells, start=1) if c.cell_type == "code"]
    run = nbformat.v4.new_notebook(cells=cells + [collector_cell(chapter, results_file)])
    km = AsyncKernelManager(kernel_name=settings.kernel,
                            connection_file=str(results_file.with_name("kernel.json")))
    collector_timeout = settings.cell_timeout + CASE_TIME_LIMIT * len(exercises) + 10
    client = _Client(run, km, settings, numbers, collector_timeout, work)
    task = asyncio.ensure_future(client.async_execute(
        env=_kernel_env(results_file.parent), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        done, _ = await asyncio.wait([task], timeout=settings.timeout)
        if not done:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)      # let nbclient clean up
            stopped = client.where(client.current) if client.current is not None else "kernel start"
            client.notes.append(f"the notebook did not finish within {points(settings.timeout)} s "
                                f"(stopped at {stopped})")
        elif isinstance(task.exception(), DeadKernelError):
            client.notes.append(f"the kernel died while running {client.where(client.current)}")
        elif task.exception():
            client.notes.append(shorten(f"the notebook could not be run: {task.exception()}", MAX_NOTE))
    finally:
        await _shutdown(client, km)
    return client.notes + client.big_outputs()


def _kernel_env(home):
    """The kernel's environment: it must import the same minigraph as this process, and it
    gets its own IPython folder (no startup files of yours, nothing written to $HOME)."""
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in [package_root, env.get("PYTHONPATH")] if p)
    env["IPYTHONDIR"] = str(home / "ipython")
    return env


async def _shutdown(client, km):
    if client.kc is not None:
        client.kc.stop_channels()
    if km.has_kernel:
        await km.shutdown_kernel(now=True)          # also removes the connection file
