"""What the chapters' exercises are made of, and how a notebook checks them.

* ``exercise.py``: what an exercise is (cases, ``run`` in the learner's kernel, ``judge`` at
  home), ``function_exercise`` and ``value_exercise``, grading a run into a result;
* ``engine.py``: the engine's own functions an exercise asks for, refused while the answer runs;
* ``vjp.py``: backward-rule exercises; ``optimizer.py``: optimizer-``update`` exercises;
  ``graphs.py``: small graphs written down as specs (chapters 01 and 02);
* ``values.py``: numbers to JSON and back, and to short text;
* ``registry.py``: the table of chapters; ``notebook.py``: ``check`` and ``progress``;
  ``report.py``: the tables they show;
* ``verdict.py``: a judge's decision on one case, and the comparison most judges make;
* ``public.py``: how the student edition judges an exercise without its reference answer;
* ``answers.py``: how a chapter's content names its reference answers without holding them.

Nothing here holds an answer: the chapters' content is in ``content/``, their answers in
``answers/``.
"""
