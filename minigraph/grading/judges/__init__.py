"""Judges that hold no answer, one module per chapter that has any (``ch01.py`` ...).

A judge here decides by properties (an order is topological, every ancestor appears once), by
minigraph's own engine, which ships anyway (the values ``Graph.forward`` computes, the
gradients ``Graph.backward`` computes), or by measuring (a convergence rate). Nothing here is an
answer the grader would accept, so unlike ``answers/`` this package is in the grader's sandbox
and in the student edition, where these judges decide as they do in the full course.

``content/chNN.py`` names them through ``toolkit.answers.judges_of`` (fetched when first used,
so a judge may import the specs and helpers of its content module), and declares
``public=Public(judges.judge_x, fresh=True)`` (``toolkit/public.py``).
"""
