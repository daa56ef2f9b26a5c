"""``check`` and ``progress``: feedback while you work in a notebook.

``check("00.relu", relu)`` runs the exercise's cases on your function and shows a table. It
never raises: an unfinished stub shows "not done yet", a crash in your code shows up as the
case's error. The kernel remembers the latest check of each exercise, and ``progress()`` adds
them up for the chapter.

These checks are for you, not the grade: the batch grader (``python -m minigraph.grading``)
re-runs your notebook in a fresh kernel and judges the answers in its own process.
"""

import html

from . import registry
from .exercise import grade, run_cases
from .report import Display, check_display, progress_display

_latest = {}          # exercise id -> ExerciseResult of its latest check in this kernel


def check(exercise_id, answer):
    """Run exercise ``exercise_id`` (``"00.relu"``) on ``answer`` and show the result table."""
    try:
        exercise = registry.find(exercise_id)
        result = grade(exercise, run_cases(exercise, answer))
    except Exception as error:               # an unknown id, a broken chapter module: say so
        return _message(f"check({exercise_id!r}) could not run: {error}")
    _latest.pop(exercise.id, None)           # re-insert: the latest check comes last
    _latest[exercise.id] = result
    return check_display(result)


def progress(chapter=None):
    """Points earned in ``chapter`` (by default: the chapter of the latest check) so far."""
    if chapter is None:
        if not _latest:
            return _message("No checks run yet in this session: run the check(...) cells first.")
        chapter = list(_latest)[-1].split(".")[0]
    try:
        exercises, title = registry.exercises(chapter), registry.chapter_title(chapter)
    except Exception as error:
        return _message(f"progress({chapter!r}) could not run: {error}")
    return progress_display(chapter, title, exercises, _latest)


def _message(text):
    return Display(text, f"<p>{html.escape(text, quote=False)}</p>")
