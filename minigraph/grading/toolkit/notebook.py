"""``check`` and ``progress``: feedback while you work in a notebook.

``check("00.relu", relu)`` runs the exercise's cases on your function and shows a table. It
never raises: an unfinished stub shows "not done yet", a crash in your code shows up as the
case's error. The kernel remembers the latest check of each exercise, and ``progress()`` adds
them up for the chapter.

Where the reference answers are not installed (the student edition), each exercise is judged
by its public judge (``public.py``); one that needs no stored value also gets ``HIDDEN_CASES``
fresh random cases, drawn anew at each check.

These checks are for you, not the grade: the batch grader (``python -m minigraph.grading``)
re-runs your notebook in a fresh kernel and judges the answers in its own process.
"""

import html
import secrets

from . import answers, registry
from .exercise import grade, run_cases, with_hidden
from .report import Display, check_display, progress_display

_latest = {}          # exercise id -> ExerciseResult of its latest check in this kernel


def check(exercise_id, answer):
    """Run exercise ``exercise_id`` (``"00.relu"``) on ``answer`` and show the result table."""
    try:
        exercise = registry.find(exercise_id)
        cases = tuple(dict(each, fresh=True) if each.get("hidden") else each
                      for each in with_hidden(exercise, _fresh_seed(exercise)))
        result = grade(exercise, run_cases(exercise, answer, cases=cases), cases)
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


def _fresh_seed(exercise):
    """A random seed for fresh cases where the public judge can judge them, else None."""
    fresh = not answers.available() and exercise.public is not None and exercise.public.fresh
    return secrets.randbits(32) if fresh else None


def _message(text):
    return Display(text, f"<p>{html.escape(text, quote=False)}</p>")
