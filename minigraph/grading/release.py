"""The student edition: the course as learners get it, without the reference answers.

    python -m minigraph.grading.release build/release      # `make release`

writes to the folder given (emptied first) the chapters, the exercise notebooks (never
``solutions/``), the project files a learner installs from, and the ``minigraph`` package
without ``grading/answers/`` -- no reference answer, no typical-mistake table, no judge that
knows an answer. What ``check()`` can still do there (``exercise.py`` says how):

* every case still runs in the learner's kernel, so an answer that raises, returns None, times
  out, loops in Python where the statement forbids it, changes an input in place or calls the
  engine's own version of what it should write gets the same message as in the full course;
* a case of a ``function_exercise`` is judged against the reference's value stored as data in
  ``content/expected.json``, written here: passed or failed, expected vs got, shape advice;
* any other case (a graph, an optimizer's steps, a recipe judged by training...) is shown as
  "ran (not judged)": only the grader, which has the answers, judges it.

The stored values are those of the *public* cases, which ``check()`` shows anyway; the grader
also draws hidden cases (``exercise.with_hidden``), so knowing them is worth no more than that.
"""

import json
import shutil
import sys
from pathlib import Path

from .toolkit import answers, registry

ROOT = Path(__file__).resolve().parents[2]           # the course repository
COPIED = ("chapters", "exercises", "minigraph", "pyproject.toml", "environment.yml", "README.md")
LEFT_OUT = ("__pycache__", "*.pyc", ".ipynb_checkpoints")
ANSWERS = Path("minigraph") / "grading" / "answers"


def expected_values():
    """``{case key: the reference's value}`` for every public case of every exercise that has
    one to store (``Exercise.expected``: the function exercises)."""
    values = {}
    for chapter in registry.CHAPTERS:
        for exercise in registry.exercises(chapter):
            if exercise.expected is not None:
                for case in exercise.cases:
                    values[answers.case_key(exercise.id, case)] = exercise.expected(case)
    return values


def build(folder):
    """Write the student edition into ``folder`` (emptied first); returns ``folder``."""
    folder = Path(folder)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns(*LEFT_OUT))
        elif source.exists():
            shutil.copy2(source, folder / name)
    shutil.rmtree(folder / ANSWERS)
    stored = folder / answers.STORED.relative_to(ROOT)
    lines = [f"{json.dumps(key)}: {json.dumps(value)}" for key, value in sorted(expected_values().items())]
    stored.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return folder


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m minigraph.grading.release FOLDER")
    print(f"wrote the student edition to {build(sys.argv[1])}")
