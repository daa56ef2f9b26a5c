"""The source of each answer in a notebook, as the learner wrote it, for the class report.

The class report (``minigraph.grading.classreport``) compares answers with each other and with
minigraph's own code, from the JSON reports alone: so the grader records, per exercise, the
text of the last top-level definition of the answer's name (``def relu``, ``class Adam``,
``broadcast_shape = ...``) -- what the kernel ended up holding, in the usual top-to-bottom
notebook. Only the definition: the check cells, imports and the learner's experiments around
it are not part of the answer. It is kept as Python's ``ast.unparse`` writes it: comments and
layout are no part of what is compared, and no comment of a notebook (``### BEGIN SOLUTION``
of a solution graded by mistake) reaches the report. A cell with IPython's syntax is read as
the Python it runs (``scan.pieces``: the body of a ``%%time`` cell is Python). Nothing here
runs the code.

The same definition tells whether the answer of a "no loop" exercise loops (``looping_answers``).
"""

import ast

from ..toolkit.exercise import loops_in
from .scan import one_line_ending, pieces

MAX_SOURCE = 20_000            # characters of one answer kept in the report


def answer_sources(notebook, exercises):
    """``{exercise id: source}`` for every exercise whose name the notebook defines at top level."""
    return {id: ast.unparse(node)[:MAX_SOURCE] for id, node in definitions(notebook, exercises).items()}


def looping_answers(notebook, exercises):
    """The ids of the "no loop" exercises (``Exercise.no_loops``) whose answer, the last
    top-level definition of its name, holds a Python loop (``loops_in``): its cases fail with
    ``NO_LOOP``, whatever copy of the input the loop ran over."""
    found = definitions(notebook, exercises)
    return sorted(e.id for e in exercises if e.no_loops and e.id in found and loops_in(found[e.id]))


def definitions(notebook, exercises):
    """``{exercise id: syntax tree}``: the last top-level statement defining each exercise's name."""
    names = {exercise.name: exercise.id for exercise in exercises}
    found = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for _, _, tree in pieces(one_line_ending(cell.source)):
            for node in tree.body if tree is not None else ():
                for name in _defined(node):
                    if name in names:
                        found[names[name]] = node
    return found


def _defined(node):
    """The names a top-level statement binds (``def f``, ``class C``, ``x = ...``, ``x: T = ...``)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else (
        [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else [])
    return [t.id for t in targets if isinstance(t, ast.Name)]
