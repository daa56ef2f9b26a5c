"""The course's exercises, one module per chapter: ``ch00.py`` ... ``ch08.py``.

Each module defines ``TITLE`` and ``EXERCISES``: the cases, points, hints, typical mistakes and
reference answers of its chapter, built with the exercise types of ``toolkit``. The reference
answers live here and nowhere else: a notebook never imports this package (the batch grader
flags a cell that does), and ``toolkit/registry.py`` imports a chapter only when it is asked for.
"""
