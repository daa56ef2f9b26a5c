"""The reference answers: what only judging needs, one module per chapter (``ch00.py`` ...).

Each ``answers/chNN.py`` holds its chapter's reference functions, expected values, typical
mistakes (which give the answer away) and ``judge`` functions; ``content/chNN.py`` names them
through ``toolkit.answers.answers_of`` and never imports this package itself. This package is
what the learner's side must not read: the batch grader's sandbox mounts an empty folder over
it, and the student edition (``make release``) leaves it out. ``content/__init__.py`` says how a
chapter is split between the two; a judge that holds no answer lives in ``judges/``, which ships.
"""
