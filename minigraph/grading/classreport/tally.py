"""The class's numbers, from the merged submissions (``load.read_reports``): plain data that
the page, the CSV and the JSON all lay out.

* ``exercise_stats``: per exercise, each student's points, the share with full marks, each
  named mistake with the students who made it, and the hidden case most often failed;
* ``gradebook``: per chapter, a row per student (points per exercise, the total);
* ``hardest``: the exercises ordered by the share of their points the class earned.

A mistake is *named* when the grader recognised it (the case's ``mistake``: a typical mistake
from the exercise's table, a tell-tale sign, ...), in the words ``check()`` uses. A student who
makes it on several cases of one exercise counts once.
"""

import ast
import re
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from ..batch.gradebook import HIDDEN


@dataclass
class ExerciseStats:
    id: str
    title: str
    chapter: str
    points: float
    scores: dict = field(default_factory=dict)          # student -> points earned
    mistakes: dict = field(default_factory=dict)        # mistake -> [students], most made first
    hidden_failed: tuple | None = None                  # (described in words, [students])

    @property
    def full_share(self):
        return sum(s >= self.points for s in self.scores.values()) / len(self.scores) if self.scores else 0.0

    @property
    def mean_share(self):
        return float(np.mean(list(self.scores.values()))) / self.points if self.scores and self.points else 0.0

    def to_dict(self):
        return {"id": self.id, "title": self.title, "chapter": self.chapter, "points": self.points,
                "students": len(self.scores), "full_share": round(self.full_share, 4),
                "mean_share": round(self.mean_share, 4), "scores": self.scores,
                "mistakes": [{"mistake": m, "count": len(s), "students": s} for m, s in self.mistakes.items()],
                "hidden_case_most_failed": None if self.hidden_failed is None else
                {"case": self.hidden_failed[0], "count": len(self.hidden_failed[1]),
                 "students": self.hidden_failed[1]}}


def exercise_stats(submissions):
    """``{exercise id: ExerciseStats}``, by chapter, each chapter's in the grader's order."""
    stats = {}
    mistakes = defaultdict(lambda: defaultdict(set))
    hidden = defaultdict(lambda: defaultdict(set))
    for sub in submissions:
        for e in sub.result.exercises:
            s = stats.setdefault(e.id, ExerciseStats(e.id, e.title, sub.result.chapter or "", e.points))
            s.scores[sub.student] = e.score
            for case in e.cases:
                if case.mistake:
                    mistakes[e.id][case.mistake].add(sub.student)
                if case.input.startswith(HIDDEN) and case.status not in ("pass", "not_done"):
                    hidden[e.id][hidden_kind(case.input)].add(sub.student)
    for exercise_id, s in stats.items():
        s.mistakes = {m: sorted(who) for m, who in sorted(mistakes[exercise_id].items(),
                                                          key=lambda item: (-len(item[1]), item[0]))}
        if hidden[exercise_id]:
            kind, who = min(hidden[exercise_id].items(), key=lambda item: (-len(item[1]), item[0]))
            s.hidden_failed = (kind, sorted(who))
    return dict(sorted(stats.items(), key=lambda item: item[1].chapter))     # stable: the grader's order


def gradebook(submissions, stats):
    """``{chapter: {"exercises": [ids], "rows": [(student, {id: points}, total, max, flags)]}}``."""
    books = {}
    for sub in sorted(submissions, key=lambda s: (s.result.chapter or "", s.student)):
        r = sub.result
        book = books.setdefault(r.chapter or "", {"exercises": [i for i, s in stats.items()
                                                                 if s.chapter == (r.chapter or "")],
                                                  "rows": []})
        book["rows"].append((sub.student, {e.id: e.score for e in r.exercises}, r.score,
                             r.max_score, list(r.flags)))
    return books


def hardest(stats):
    """``stats`` (``ExerciseStats``), hardest first: least share of their points earned."""
    return sorted(stats, key=lambda s: (s.mean_share, s.id))


# -- a hidden case, in words ----------------------------------------------------------------

NEXT_INPUT = re.compile(r",\s*\w+=")
NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d+)?(e-?\d+)?(?![\w.])")


def hidden_kind(text):
    """A hidden case's input with its numbers left out: what the cases of all students that
    share it have in common (``x=[[0.3, -1.2]]`` -> ``x=an array of shape (1, 2)``)."""
    text = text[len(HIDDEN):].lstrip(": ") if text.startswith(HIDDEN) else text
    out, start, i = [], 0, 0
    while i < len(text):
        if text[i] != "[":
            i += 1
            continue
        end = _closing(text, i)
        if end is None:               # cut short in the report ("…"): an array, up to the next input
            following = NEXT_INPUT.search(text, i)
            end = (following.start() if following else len(text)) - 1
            words = "an array"
        else:
            words = _array_words(text[i:end + 1])
        out += [NUMBER.sub("a number", text[start:i]), words]
        start = i = end + 1
    return "hidden case with " + "".join(out) + NUMBER.sub("a number", text[start:])


def _closing(text, start):
    depth = 0
    for i in range(start, len(text)):
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return None


def _array_words(literal):
    try:
        shape = np.shape(ast.literal_eval(literal))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return "an array"
    return f"an array of shape {shape}"
