"""Exercises, checks and grading for the minigraph course.

In a notebook::

    from minigraph.grading import check, progress
    check("00.relu", relu)       # a table: each case passed or failed, expected vs got, a hint
    progress()                   # points so far in this chapter (from this session's checks)

From a shell (see ``batch/cli.py`` for every flag)::

    python -P -m minigraph.grading submissions/ --jobs 2 --json grades.json --junit grades.xml
    # exit status 0: grading completed (whatever the scores); 2: grading could not run

    python -m minigraph.grading.generate solutions exercises   # `make exercises`

How it fits together: ``solutions/NN_topic.ipynb`` holds the worked notebook; ``generate.py``
turns its ``### BEGIN SOLUTION`` regions into stubs in ``exercises/NN_topic_exercises.ipynb``.
The package has five parts, and what a notebook may import besides ``check`` and ``progress``:

* ``content/``: the exercises themselves -- cases, points, hints -- one module per chapter
  (``content/ch04.py``), and never in a notebook; ``answers/``: their reference answers, typical
  mistakes and judges, which the grader's sandbox and the student edition do not have
  (``content/__init__.py`` says how a chapter is split); ``judges/``: the judges that hold no
  answer (an order's properties, the engine's own forward and backward), which ship;
* ``toolkit/``: what exercises are made of (``exercise.py`` says what an exercise is,
  ``public.py`` how the student edition judges it without the answers,
  ``vjp.py`` makes the backward-rule exercises, ``optimizer.py`` the optimizer exercises,
  ``graphs.py`` the small graphs of chapters 01 and 02), ``registry.py`` lists the chapters,
  ``notebook.py`` is ``check``/``progress``;
* ``batch/``: the batch grader (``grader.py``, with ``collect.py`` in the submission's kernel);
* ``release.py``: the student edition (``make release``);
* ``tools/``: what a chapter's notebook imports to experiment (``tools/ch04.py``'s
  ``try_recipe``); it holds no reference answers.

Adding an exercise
------------------
Say chapter 01 asks for ``cube(x)``, which returns ``x`` to the third power. In
``minigraph/grading/content/ch01.py``::

    from ..toolkit.exercise import case, function_exercise

    TITLE = "Powers"

    cube = function_exercise(
        "01.cube",                           # id: chapter, dot, short name
        "cube",                              # the name the answer has in the notebook
        lambda x: x ** 3,                    # the reference answer (never shown to the kernel)
        points=2,
        cases=[                              # inputs as plain numbers/lists, in call order
            case(x=[0.0, 2.0, -1.0]),
            case(x=[[1.5, -0.5]], hint="A 2-D x: the result keeps x's shape."),  # a case's own hint
        ],
        hint="Multiply x by itself, entry by entry.")          # for any failing case

    EXERCISES = [cube]

then add ``"01": "minigraph.grading.content.ch01"`` to ``CHAPTERS`` in ``toolkit/registry.py``
(in the course, the reference then moves to ``answers/ch01.py``, which the learner never gets:
``content/__init__.py`` says how), and in ``solutions/01_*.ipynb`` write the function with its
body between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, followed by a cell
``check("01.cube", cube)``. The student edition, which has no ``answers/``, judges it against
the reference's values on the public cases (``toolkit/public.py``; ``AUTHORING.md`` says how
an exercise of another kind declares that).

A hint may also come in levels, ``hint=("a nudge naming the concept", "a sharper one")``:
the table shows the nudge and keeps the rest behind "a sharper hint". ``mistakes={message:
wrong_function}`` names a typical mistake when an answer makes it. Then give the exercise at
least 5 typical wrong answers and 2 right ones in ``tests/grading/exercise_answers/chNN.py``: see
``AUTHORING.md``, "how to write an exercise and its wrong answers".

``value_exercise`` asks for a value instead of a function. For anything else write an
``Exercise`` with your own ``run(answer, case)`` (runs in the learner's kernel, returns JSON-able
data) and ``judge(case, got)`` (runs in the grader, returns a ``Verdict``):
``toolkit.vjp.vjp_exercise`` does it that way for a backward rule (``00.sigmoid_vjp``, chapter 03): it
plugs the learner's rule into the engine and names the node whose gradient is wrong.
"""

from .toolkit.exercise import Exercise, Verdict, case, function_exercise, value_exercise
from .toolkit.notebook import check, progress

__all__ = ["check", "progress", "Exercise", "Verdict", "case", "function_exercise", "value_exercise"]
