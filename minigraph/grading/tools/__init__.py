"""What the chapters' notebooks import besides ``check`` and ``progress``: one module per
chapter that has tools (``from minigraph.grading.tools.ch04 import try_recipe``).

A learner may import anything here, and the batch grader does not flag it: these modules hold
no reference answers (those are in ``answers/``). ``content/`` and ``answers/`` import from
here, never the reverse.
"""
