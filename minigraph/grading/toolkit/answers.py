"""How a chapter's exercises name their reference answers without holding them.

Everything an exercise shows or runs in the learner's kernel -- texts, cases, hints, points,
``run`` -- is in ``content/chNN.py``. What only judging needs -- reference functions, expected
values, typical mistakes (which give the answer away), ``judge`` functions -- is in
``answers/chNN.py``, and ``content/chNN.py`` names it through ``answers_of(__name__)``::

    answers = answers_of(__name__)          # the names of answers/ch00.py, fetched when used
    relu = function_exercise("00.relu", "relu", answers.relu, ..., mistakes=answers.RELU_MISTAKES)

``answers.relu`` is an ``Answer``: a name, not the function. It imports ``answers/ch00.py`` the
first time it is called (or iterated, or read as an array), so building the exercises never
needs the answers. Where the answers are absent -- in the batch grader's sandbox, which mounts
an empty folder over ``answers/``, and in the student edition (``make release``) -- using one
raises ``Withheld``; ``run`` never uses one, so the learner's kernel runs every case all the same.
"""

import functools
import importlib
import json
from pathlib import Path

import numpy as np

ANSWERS = "minigraph.grading.answers"
JUDGES = "minigraph.grading.judges"          # judges that hold no answer: shipped everywhere


class Withheld(Exception):
    """A reference answer was needed where the answers are not installed."""


STORED = Path(__file__).resolve().parent.parent / "content" / "expected.json"   # student edition only


@functools.lru_cache(maxsize=None)
def available():
    """Whether the reference answers are installed here (not in the sandbox, not in the
    student edition)."""
    try:
        importlib.import_module(ANSWERS + ".ch00")
    except ModuleNotFoundError:
        return False
    return True


def case_key(exercise_id, case):
    """The key of a public case's stored expected value."""
    return f"{exercise_id} {json.dumps(case['inputs'], sort_keys=True)}"


def stored(exercise_id, case):
    """The reference's value on a public case of a ``function_exercise``, as the student
    edition stores it (``release.py`` writes ``content/expected.json``); raises ``Withheld``
    where there is none."""
    values = _stored_values()
    if case_key(exercise_id, case) not in values:
        raise Withheld(f"{exercise_id}: no stored value for this case")
    return values[case_key(exercise_id, case)]


@functools.lru_cache(maxsize=None)
def _stored_values():
    return json.loads(STORED.read_text(encoding="utf-8")) if STORED.exists() else {}


def answers_of(content_module):
    """The answers of the chapter whose content module is called ``content_module``."""
    return Answers(f"{ANSWERS}.{content_module.rsplit('.', 1)[-1]}")


def judges_of(content_module):
    """The judges that hold no answer (``judges/chNN.py``) of the chapter whose content module
    is called ``content_module``: named like its answers, fetched when first used."""
    return Answers(f"{JUDGES}.{content_module.rsplit('.', 1)[-1]}")


class Answers:
    """The names of one chapter's answers module, each an ``Answer`` (nothing is imported)."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Answer(self._module, name)


class Answer:
    """One name of a chapter's answers module, or an item of it (``answers.TWINS[2]``): its
    value is fetched when first used."""

    __slots__ = ("module", "name", "path")

    def __init__(self, module, name, path=()):
        self.module, self.name, self.path = module, name, path

    def get(self):
        """The value itself; raises ``Withheld`` where the answers are not installed."""
        try:
            module = importlib.import_module(self.module)
        except ModuleNotFoundError as error:
            if error.name is None or not error.name.startswith(ANSWERS):
                raise
            raise Withheld(f"{self.module}.{self.name} is a reference answer, which is not part of "
                           "this installation (the student edition, or the grader's sandbox)") from None
        value = getattr(module, self.name)
        for key in self.path:
            value = value[key]
        return value

    def __call__(self, *args, **kwargs):
        return self.get()(*args, **kwargs)

    def __iter__(self):
        return iter(self.get())

    def __len__(self):
        return len(self.get())

    def __bool__(self):
        return bool(self.get())

    def __getitem__(self, key):
        return Answer(self.module, self.name, self.path + (key,))

    def items(self):
        return self.get().items()

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.get(), dtype=dtype)

    def __repr__(self):
        return f"<answer {self.module}.{self.name}{''.join(f'[{k!r}]' for k in self.path)}>"
