"""The batch grader's reports: a text table, JSON, JUnit XML, a CSV gradebook, Gradescope.

Each writer is a pure function of the results (``grader.SubmissionResult``). A submission's
path is already printable (``files.display_name``: no newline, no byte that is not UTF-8), and
every text that came from a kernel is already capped in size; these writers only lay it out.

* ``submission_text``: the table printed for one notebook.
* ``to_json``: everything, for learning platforms and scripts; ``recorded_seeds`` reads back
  the seed of each submission's hidden cases from it, to regrade (``--seeds-from``).
* ``to_junit``: JUnit XML for CI (a suite per notebook, a test case per exercise).
* ``to_csv``: a gradebook to import into a spreadsheet or an LMS -- one row per submission,
  one column per exercise, then the total and the flags.
* ``for_learners``: a result as the learner may see it (``--learners``; Gradescope's view):
  scores and messages, never the seed, a hidden case's inputs or expected values, or a flag.
* ``to_gradescope``: Gradescope's ``results.json`` for one submission (its "Autograder
  Specifications": a top-level ``score`` and ``output``, and one entry per exercise in
  ``tests`` with ``name``, ``number``, ``score``, ``max_score``, ``status`` and ``output``;
  a flagged submission gets one more, worth 0 of 0, with ``"visibility": "hidden"``: its
  flags, which Gradescope shows to the course staff and not to the learner).
"""

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

from ..toolkit.report import points, score_text
from . import cgroup
from .grader import RecordedSeed

SPREADSHEET_FORMULA = ("=", "+", "-", "@", "\t", "\r")     # first characters a spreadsheet runs


def submission_text(result):
    """The table for one graded notebook."""
    if result.status == "error":
        lines = [f"{result.path}: NOT GRADED, {result.message}"]
    else:
        lines = [f"{result.path} (chapter {result.chapter}): {score_text(result.score, result.max_score)}"]
        width = max(len(e.id) for e in result.exercises)
        for e in result.exercises:
            earned = f"{points(e.score)} of {points(e.points)}"
            lines.append(f"  {e.id.ljust(width)}  {earned.ljust(9)}  {e.message}")
    lines += [f"  note: {note}" for note in result.notes]
    lines += [f"  FLAGGED for review: {flag}" for flag in result.flags]
    return "\n".join(lines)


def tally(results):
    """The counts of the results so far: flagged for review, and could not be run (the
    progress bar's fields, and the summary's)."""
    results = list(results)
    return {"flagged": sum(bool(r.flags) for r in results),
            "not run": sum(r.status == "error" for r in results)}


def summary(results, sandboxed, grouped=True):
    counts = tally(results)
    failed, flagged = counts["not run"], counts["flagged"]
    regraded = sum(r.seed_given for r in results)
    return (f"graded {len(results)} notebook{'s' if len(results) != 1 else ''}"
            + (f" ({failed} could not be run)" if failed else "")
            + (f"; {flagged} flagged for review" if flagged else "")
            + (f"; {regraded} regraded: hidden cases from a given seed, not a fresh one"
               if regraded else "")
            + ("" if sandboxed else "; WITHOUT a sandbox (--no-sandbox)")
            + ("" if grouped else "; limits per process only (no control group: run as root on "
                                  "Linux with cgroup v1 for limits on a submission's processes together)"))


def to_json(results, settings, complete=True):
    """Plain data: settings, then one entry per submission. ``complete`` is False while a run
    is still going (the report is rewritten as each result comes in)."""
    limits = settings.limits
    return {"grader": "minigraph.grading", "format": 4, "complete": complete,
            "settings": {"cell_timeout": settings.cell_timeout, "timeout": settings.timeout,
                         "kernel": "minigraph.grading.batch.kernel", "chapter": settings.chapter,
                         "sandbox": settings.sandbox, "memory_mb": limits.memory_mb,
                         "processes": limits.processes, "file_mb": limits.file_mb,
                         "control_groups": cgroup.available()},
            "submissions": [r.to_dict() for r in results]}


def recorded_seeds(text):
    """``{path: RecordedSeed}``: the seed of each submission's hidden cases and the SHA-256 of
    the file it graded, read from the text of a ``to_json`` report (None for a notebook that
    never ran, so drew none). Raises ValueError, saying what is wrong, for anything else."""
    try:
        report = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"it is not JSON ({error})") from None
    if (not isinstance(report, dict) or report.get("grader") != "minigraph.grading"
            or not isinstance(report.get("submissions"), list)):
        raise ValueError("it is not a report of minigraph.grading (one written with --json)")
    seeds = {}
    for number, entry in enumerate(report["submissions"], start=1):
        path, seed, digest = ((entry.get("path"), entry.get("seed"), entry.get("sha256"))
                              if isinstance(entry, dict) else (None, None, None))
        if not isinstance(path, str) or not (seed is None or type(seed) is int and seed >= 0):
            raise ValueError(f"its submission {number} has no path, or a seed that is not a "
                             "whole number (0 or more)")
        recorded = None if seed is None else RecordedSeed(seed, digest if isinstance(digest, str) else None)
        if seeds.setdefault(path, recorded) != recorded:
            raise ValueError(f"it gives {path} two different seeds")
    return seeds


def to_junit(results):
    """JUnit XML: a test suite per notebook, a test case per exercise (failed unless passed)."""
    suites = ET.Element("testsuites", name="minigraph grading")
    for result in results:
        suite = ET.SubElement(suites, "testsuite", name=_xml(result.path))
        props = ET.SubElement(suite, "properties")
        for key in ("chapter", "score", "max_score"):
            ET.SubElement(props, "property", name=key, value=str(getattr(result, key)))
        counts = {"failures": 0, "errors": 0}
        if result.status == "error":
            case = ET.SubElement(suite, "testcase", classname=_xml(result.path), name="notebook")
            ET.SubElement(case, "error", message=_xml(result.message))
            counts["errors"] += 1
        for e in result.exercises if result.status == "graded" else []:
            case = ET.SubElement(suite, "testcase", classname=_xml(result.path), name=e.id)
            ET.SubElement(case, "system-out").text = _xml(f"{score_text(e.score, e.points)}: {e.message}")
            if e.status != "passed":
                kind = "error" if e.status == "error" else "failure"
                ET.SubElement(case, kind, message=_xml(e.message))
                counts["errors" if kind == "error" else "failures"] += 1
        if result.notes or result.flags:
            ET.SubElement(suite, "system-out").text = _xml("\n".join(
                result.notes + [f"FLAGGED for review: {f}" for f in result.flags]))
        suite.set("tests", str(len(suite.findall("testcase"))))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", str(counts["errors"]))
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _xml(text):
    """Drop what XML 1.0 cannot hold: control characters and lone surrogates."""
    return re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]", "", str(text))


def to_csv(results, exercise_ids):
    """A gradebook: ``submission, chapter, <one column per exercise>, total, max, status, flags``.

    An exercise a submission does not have (another chapter) is left empty. A cell that a
    spreadsheet would run as a formula (``=...``) is prefixed with ``'``.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["submission", "chapter", *exercise_ids, "total", "max_score", "status", "flags"])
    for r in results:
        scores = {e.id: points(e.score) for e in r.exercises}
        writer.writerow([spreadsheet_cell(r.path), r.chapter or "", *(scores.get(i, "") for i in exercise_ids),
                         points(r.score), points(r.max_score), r.status,
                         spreadsheet_cell("; ".join(r.flags))])
    return out.getvalue()


def spreadsheet_cell(text):
    """``text`` made inert for a spreadsheet: a leading ``'`` where it would run as a formula."""
    return "'" + text if text.startswith(SPREADSHEET_FORMULA) else text


def for_learners(result):
    """``result`` (a ``grader.SubmissionResult``) with only what its learner may see: no seed
    (with it and the grader's code, the hidden cases could be drawn again), no flags (they are
    for the instructor), and each hidden case counted but not shown -- its inputs, expected
    value and message stay with the instructor's report; and no copy of the answers' sources
    (the class report's, for the instructor)."""
    return replace(result, seed=None, seed_given=False, flags=[], answers={},
                   exercises=[learner_exercise(e) for e in result.exercises])


def learner_exercise(exercise):
    """An ``ExerciseResult`` with its hidden cases' rows reduced to their verdicts."""
    cases = [c if not c.input.startswith(HIDDEN) else
             replace(c, input=HIDDEN, expected="", got="", message="" if c.status == "pass" else
                     "failed: this case's inputs are kept for the grader", hint="", more_hints=[])
             for c in exercise.cases]
    first = next((c for c in exercise.cases if c.status not in ("pass", "not_done")), None)
    message = exercise.message
    if first is not None and first.input.startswith(HIDDEN):
        passed = sum(c.status == "pass" for c in cases)
        message = (f"{passed} of {len(cases)} cases passed; case {first.index}, a hidden one, "
                   f"failed ({first.status}): test your answer on inputs of your own")
    return replace(exercise, cases=cases, message=message)


HIDDEN = "hidden case"            # how a hidden case's row begins (``exercise._grade_case``)


def to_gradescope(results, sandboxed=True):
    """Gradescope's ``results.json`` (a dict) for the one submission in ``results``."""
    if len(results) != 1:
        return {"score": 0, "output": f"Expected exactly one notebook (.ipynb) in the submission, "
                                      f"found {len(results)}: upload one notebook.", "tests": []}
    (result,) = results
    flags = result.flags
    result = for_learners(result)
    head = f"{result.path}: " + (f"NOT GRADED, {result.message}" if result.status == "error"
                                 else score_text(result.score, result.max_score))
    tests = [{"name": f"{e.id}  {e.title}", "number": str(number), "score": e.score,
              "max_score": e.points, "status": "passed" if e.status == "passed" else "failed",
              "output": e.message}
             for number, e in enumerate(result.exercises, start=1)]
    if flags:                        # for the instructor: Gradescope shows a hidden test to staff only
        tests.append({"name": "FLAGGED for review (shown to instructors only)", "score": 0, "max_score": 0,
                      "status": "failed", "visibility": "hidden", "output": "\n".join(flags)})
    lines = [head] + [f"note: {n}" for n in result.notes]
    if not sandboxed:
        lines.append("graded WITHOUT a sandbox (--no-sandbox)")
    return {"score": result.score, "output": "\n".join(lines), "tests": tests}
