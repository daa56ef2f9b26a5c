"""The one table of chapters, and lookups into it.

Each chapter's exercises live in their own module (``content/ch00.py``, ``content/ch01.py``,
...), which defines ``TITLE`` and ``EXERCISES``. Add a chapter by adding one line to ``CHAPTERS``.
Modules are imported only when asked for, so grading chapter 00 never imports chapter 03.
"""

import importlib

CHAPTERS = {
    "00": "minigraph.grading.content.ch00",
    "01": "minigraph.grading.content.ch01", "02": "minigraph.grading.content.ch02",
    "03": "minigraph.grading.content.ch03",
    "04": "minigraph.grading.content.ch04",
    "05": "minigraph.grading.content.ch05",
    "06": "minigraph.grading.content.ch06",
    "07": "minigraph.grading.content.ch07",
    "08": "minigraph.grading.content.ch08",
    "09": "minigraph.grading.content.ch09",
    "10": "minigraph.grading.content.ch10",
    "11": "minigraph.grading.content.ch11",
}


class UnknownExercise(KeyError):
    """An exercise id or chapter that is not in the table."""

    def __str__(self):
        return self.args[0]


def chapter_title(chapter):
    """The title of a chapter (``"Warm-up: numpy and one backward rule"``)."""
    return _module(chapter).TITLE


def exercises(chapter):
    """The exercises of a chapter, in the order the notebook asks them."""
    module = _module(chapter)
    _validate(chapter, module.EXERCISES)
    return list(module.EXERCISES)


def find(exercise_id):
    """The exercise called ``exercise_id`` (``"00.relu"``)."""
    chapter = str(exercise_id).split(".")[0]
    for exercise in exercises(chapter):
        if exercise.id == exercise_id:
            return exercise
    known = ", ".join(e.id for e in exercises(chapter))
    raise UnknownExercise(f"no exercise '{exercise_id}'; chapter {chapter} has: {known}")


def _module(chapter):
    if chapter not in CHAPTERS:
        raise UnknownExercise(f"no chapter '{chapter}'; chapters with exercises: {', '.join(CHAPTERS)}")
    return importlib.import_module(CHAPTERS[chapter])


def _validate(chapter, exercise_list):
    """Catch a chapter author's slip early: ids must be unique, start with the chapter, and
    every name must be a Python identifier the notebook can define."""
    seen = set()
    for exercise in exercise_list:
        if not exercise.id.startswith(chapter + ".") or exercise.id in seen:
            raise ValueError(f"exercise id '{exercise.id}' in chapter {chapter} must be unique "
                             f"and start with '{chapter}.'")
        if not exercise.name.isidentifier():
            raise ValueError(f"exercise '{exercise.id}': name '{exercise.name}' is not a Python name")
        seen.add(exercise.id)
