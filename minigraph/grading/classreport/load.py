"""Read and merge the grader's JSON reports (``--json``): the class report's only input.

Reports from several runs -- machines, GitHub Classroom artifacts, a regrading -- are merged by
the submission's path: a path graded again in a later report replaces the earlier entry (give
the reports oldest first). Each submission belongs to a *student*: the name of the folder the
notebook lies in (``submissions/alice/00_warmup_exercises.ipynb`` -> ``alice``, as GitHub
Classroom and Gradescope exports lay them out), or the notebook's own name (``student_of``).

A report is untrusted data as much as a notebook is: it is read with the grader's bounded
reader, and an entry that is not what the grader writes is an error naming the report and the
entry, never a crash further down.
"""

import json
import re
from dataclasses import dataclass, fields
from pathlib import PurePosixPath

from ..batch.files import Unreadable, display_name, read_untrusted
from ..batch.grader import SubmissionResult
from ..toolkit.exercise import CaseResult, ExerciseResult

MAX_REPORT = 200_000_000        # bytes of one JSON report (a class of thousands, with sources)


class BadReport(Exception):
    """A report that cannot be used: the message names it and says what is wrong."""


@dataclass
class Submission:
    """One graded notebook of one student: the grader's result, rebuilt from the JSON."""

    student: str
    result: SubmissionResult


def student_of(path):
    """The student a submission's path belongs to: the folder of a notebook named by its chapter
    (``alice/00_warmup_exercises.ipynb`` -> ``alice``), else the notebook's name (``alice.ipynb``,
    graded with ``--chapter``, -> ``alice``)."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    name = parts[-1] if parts else path
    if len(parts) >= 2 and re.match(r"\d\d_", name):
        return parts[-2]
    return name[:-len(".ipynb")] if name.endswith(".ipynb") else name


def read_reports(paths, on_report=None):
    """The submissions of every report in ``paths``, merged (a later one wins for a path),
    in the order of first appearance. ``on_report(path, count)`` after each report is read."""
    merged = {}
    for path in paths:
        entries = _entries(path)
        for number, entry in enumerate(entries, start=1):
            try:
                result = _result(entry)
            except (TypeError, ValueError, KeyError) as error:
                raise BadReport(f"{display_name(path)}: submission {number} is not what the grader "
                                f"writes ({type(error).__name__}: {error})") from None
            merged[result.path] = Submission(student_of(result.path), result)
        if on_report:
            on_report(path, len(entries))
    return list(merged.values())


def _entries(path):
    try:
        report = json.loads(read_untrusted(path, MAX_REPORT).decode("utf-8"))
    except Unreadable as error:
        raise BadReport(f"cannot read {display_name(path)}: {error}") from None
    except (ValueError, RecursionError) as error:     # also UnicodeDecodeError
        raise BadReport(f"{display_name(path)} is not JSON ({error})") from None
    if (not isinstance(report, dict) or report.get("grader") != "minigraph.grading"
            or not isinstance(report.get("submissions"), list)):
        raise BadReport(f"{display_name(path)} is not a report of minigraph.grading "
                        "(write one with --json when grading)")
    return report["submissions"]


def _known(cls, data):
    """``cls(**data)`` with only the fields ``cls`` has (an older report lacks newer ones)."""
    if not isinstance(data, dict):
        raise TypeError(f"expected an object, found {type(data).__name__}")
    names = {f.name for f in fields(cls)}
    return cls(**{key: value for key, value in data.items() if key in names})


def _result(entry):
    result = _known(SubmissionResult, entry)
    if not isinstance(result.path, str) or not isinstance(result.exercises, list):
        raise ValueError("no path, or no list of exercises")
    result.exercises = [_known(ExerciseResult, e) for e in result.exercises]
    for exercise in result.exercises:
        exercise.cases = [_known(CaseResult, c) for c in exercise.cases]
        float(exercise.score), float(exercise.points)                # numbers, or ValueError
    result.answers = {k: v for k, v in (result.answers or {}).items() if isinstance(v, str)}
    result.flags = [str(f) for f in result.flags or []]
    return result
