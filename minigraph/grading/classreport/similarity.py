"""Answers to review for copying: pairs of students whose answers to one exercise are
near-identical, and answers near-identical to minigraph's own code. Flagged, never zeroed.

The comparison is copydetect's (``pip install minigraph[grading]``), which implements MOSS's
winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003): each answer is tokenized (pygments),
every name becomes ``V``, every string ``S``, comments and layout vanish; the k-grams of what
is left are hashed, and a window keeps the smallest hash of every ``WINDOW`` consecutive ones.
Two answers' *similarity* is the share of each one's tokens covered by fingerprints the other
has too. Before that, each answer is laid out as ``ast.unparse`` writes it (``canonical``), so
that parentheses, quotes, line breaks and number formats change nothing either; the side-by-side
view shows the answers so laid out. docs/GRADING.md ("After grading") says why copydetect, and what a flag does not mean.

What is compared is the answer only (``batch/sources.py``: the definition of the exercise's
name), less the exercise's stub (its signature, docstring and ``raise NotImplementedError``,
from ``exercises/``): what every submission shares is no evidence. The thresholds:

* ``MIN_TOKENS``: an answer of fewer tokens (after the stub is removed) is never flagged: a
  one-line ``np.maximum(x, 0)`` is what everyone writes;
* ``PAIR_SIMILARITY``: two students' answers are flagged when *each* has at least this share
  of its tokens in common with the other;
* ``ENGINE_SIMILARITY``: an answer is flagged when at least this share of its tokens is in one
  function or class of minigraph's own code.

``tests/grading/test_classreport.py`` holds them to the course's independently written right
answers (``tests/grading/exercise_answers/``): none of those is flagged against another.
"""

import ast
import io
from dataclasses import dataclass
from pathlib import Path

import nbformat

from ..toolkit import registry

NOISE = 25                 # k: characters of the filtered code in one fingerprinted k-gram
WINDOW = 4                 # winnowing window: any match of NOISE + WINDOW - 1 characters is found
MIN_TOKENS = 60            # characters of filtered code (a token is one to a few characters)
PAIR_SIMILARITY = 0.8
# Pairs sharing less than this share of the smaller one's fingerprints are not compared in full
# (speed: a class of 300 has 45,000 pairs per exercise). Over the fixtures' right answers and
# disguised copies of them, every pair 80 % alike shared at least 79 % of its fingerprints.
PREFILTER = 0.3
ENGINE_SIMILARITY = 0.9

PACKAGE = Path(__file__).resolve().parents[2]               # minigraph/
EXERCISES = PACKAGE.parent / "exercises"


def _copydetect():
    try:
        import copydetect
    except ImportError:
        raise ImportError("the similarity flags need copydetect: pip install 'minigraph[grading]' "
                          "(or pass --no-similarity)") from None
    return copydetect


@dataclass
class Flag:
    """Answers to review: two students' (``kind == "pair"``) or one student's and minigraph's
    own code (``kind == "engine"``; ``other`` is then where in minigraph)."""

    kind: str
    exercise: str
    student: str
    other: str
    similarity: tuple          # (share of the student's answer, share of the other)
    marked: tuple              # the two sources as HTML, matching passages in <mark>

    def to_dict(self):
        return {"kind": self.kind, "exercise": self.exercise, "student": self.student,
                "other": self.other, "similarity": [round(float(s), 4) for s in self.similarity]}


def fingerprint(source, boilerplate=()):
    """copydetect's fingerprint of Python ``source`` laid out anew (``canonical``), without the
    hashes in ``boilerplate``."""
    cd = _copydetect()
    return cd.CodeFingerprint("answer.py", NOISE, WINDOW, boilerplate=list(boilerplate),
                              language="python", fp=io.StringIO(canonical(source)))


def canonical(source):
    """``source`` as Python's own ``ast.unparse`` writes it: comments gone, and one layout
    for what can be written many ways (parentheses, quotes, line breaks, ``1e-8``/``1e-08``),
    which copydetect's tokens would otherwise tell apart. Unparsable code stays as it is."""
    try:
        return ast.unparse(ast.parse(source)) + "\n"
    except (SyntaxError, ValueError, RecursionError):
        return source


def stubs(chapter):
    """``{exercise id: the stub's source}`` from the chapter's exercise notebook (none found:
    an empty dict)."""
    from ..batch.sources import answer_sources
    found = sorted(EXERCISES.glob(f"{chapter}_*.ipynb")) if EXERCISES.is_dir() else []
    if not found:
        return {}
    notebook = nbformat.read(found[0], as_version=4)
    return answer_sources(notebook, registry.exercises(chapter))


def compare(a, b):
    """(similarity of a, similarity of b, (a's source marked, b's source marked))."""
    cd = _copydetect()
    _, (sa, sb), (slices_a, slices_b) = cd.compare_files(a, b)
    return sa, sb, (_marked(a.raw_code, slices_a), _marked(b.raw_code, slices_b))


def _marked(code, slices):
    from copydetect.utils import highlight_overlap
    import html
    if not len(slices) or not len(slices[0]):
        return html.escape(code)
    marked, _ = highlight_overlap(code, slices, "<mark>", "</mark>", escape_html=True)
    return marked


def engine_units(root=PACKAGE):
    """``[(name, source)]``: every top-level function and class of minigraph's own code (not the
    grader's). A pasted method is found in its class: what is measured is the share of the
    *answer* found in the unit."""
    units = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root.parent).as_posix()
        if relative.startswith("minigraph/grading/"):
            continue
        source = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        lines = source.splitlines(keepends=True)          # a top-level unit is whole lines
        units += [(f"{relative}: {node.name}", "".join(lines[node.lineno - 1:node.end_lineno]))
                  for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    return units


class Engine:
    """minigraph's own code, fingerprinted once, with an index from hash to unit."""

    def __init__(self, units=None):
        self.units = [(name, fingerprint(source)) for name, source in (units or engine_units())]
        self.index = {}
        for number, (_, fp) in enumerate(self.units):
            for h in fp.hashes:
                self.index.setdefault(h, []).append(number)

    def closest(self, fp):
        """(unit name, its fingerprint) sharing the most hashes with ``fp``, or None."""
        counts = {}
        for h in fp.hashes:
            for number in self.index.get(h, ()):
                counts[number] = counts.get(number, 0) + 1
        if not counts:
            return None
        return self.units[max(counts, key=lambda n: (counts[n], -n))]


def flags(submissions, engine=None, on_exercise=None):
    """Every ``Flag`` of the class: near-identical pairs per exercise, and answers near-identical
    to minigraph's code (``engine``: an ``Engine``; None leaves that comparison out).
    ``on_exercise()`` after each exercise."""
    by_exercise = {}
    for sub in submissions:
        for exercise_id, source in sub.result.answers.items():
            by_exercise.setdefault(exercise_id, {})[sub.student] = source
    found = []
    stub_cache = {}
    for exercise_id, answers in sorted(by_exercise.items()):
        chapter = exercise_id.split(".")[0]
        if chapter not in stub_cache:
            stub_cache[chapter] = stubs(chapter) if chapter in registry.CHAPTERS else {}
        stub = stub_cache[chapter].get(exercise_id)
        boilerplate = fingerprint(stub).hashes if stub else ()
        made = {}                                   # one fingerprint per distinct answer
        prints = {student: made.get(source) or made.setdefault(source, fingerprint(source, boilerplate))
                  for student, source in answers.items()}
        prints = {s: fp for s, fp in prints.items() if fp.token_coverage >= MIN_TOKENS}
        found += _pairs(exercise_id, prints)
        if engine is not None:
            found += _engine(exercise_id, prints, engine)
        if on_exercise:
            on_exercise()
    return found


def _pairs(exercise_id, prints):
    students = sorted(prints)
    found = []
    for i, a in enumerate(students):
        for b in students[i + 1:]:
            ha, hb = prints[a].hashes, prints[b].hashes
            shared = len(ha & hb)
            if shared < PREFILTER * min(len(ha), len(hb)):     # far from alike: skip the full comparison
                continue
            sa, sb, marked = compare(prints[a], prints[b])
            if min(sa, sb) >= PAIR_SIMILARITY:
                found.append(Flag("pair", exercise_id, a, b, (sa, sb), marked))
    return found


def _engine(exercise_id, prints, engine):
    found = []
    for student, fp in sorted(prints.items()):
        closest = engine.closest(fp)
        if closest is None:
            continue
        name, unit = closest
        sa, su, marked = compare(fp, unit)
        if sa >= ENGINE_SIMILARITY:
            found.append(Flag("engine", exercise_id, student, name, (sa, su), marked))
    return found


@dataclass
class Group:
    """Students of one exercise linked by pair flags (A ~ B and B ~ C: one group of three), and
    the pair most alike among them, to show side by side."""

    exercise: str
    students: list
    shown: Flag
    pairs: int


def groups(found):
    """The pair flags of ``found`` gathered into ``Group``s (a class passing one answer around
    gives one group, not every pair of it), largest first."""
    parent = {}

    def root(key):
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    pairs = [f for f in found if f.kind == "pair"]
    for f in pairs:
        parent[root((f.exercise, f.student))] = root((f.exercise, f.other))
    gathered = {}
    for f in pairs:
        gathered.setdefault(root((f.exercise, f.student)), []).append(f)
    made = []
    for flags in gathered.values():
        students = sorted({s for f in flags for s in (f.student, f.other)})
        # the most alike pair, preferring two texts that differ (a disguise shows what was changed)
        shown = max(flags, key=lambda f: (round(min(f.similarity), 2), f.marked[0] != f.marked[1],
                                          f.student, f.other))
        made.append(Group(flags[0].exercise, students, shown, len(flags)))
    return sorted(made, key=lambda g: (g.exercise, -len(g.students), g.students))
