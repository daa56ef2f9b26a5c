"""A page of feedback per student, to send back as it is.

For each chapter the student submitted: each exercise's points and verdict, the message of the
grader in the learner's version (``gradebook.learner_exercise``: a hidden case is counted, its
inputs, expected value and result are not shown), the typical mistakes named, in ``check()``'s
words, and the hint. Built from that student's own submissions only: no flag, no seed, no
source, nothing of another student.
"""

import html

from ..batch.gradebook import learner_exercise
from ..toolkit.report import STATUS_TEXT, points, score_text

STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 46em; color: #1f2328; }
table { border-collapse: collapse; } td, th { padding: .3em .7em; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } .passed { color: #1a7f37; } .failed, .error, .missing { color: #cf222e; }
.note { color: #57606a; }
"""
POLICY = "default-src 'none'; style-src 'unsafe-inline'"


def e(text):
    return html.escape(str(text), quote=True)


def exercise_feedback(exercise):
    """(verdict, message, mistakes named, hint) of one exercise, as the learner may see them."""
    shown = learner_exercise(exercise)
    failing = [c for c in exercise.cases if c.status not in ("pass", "not_done")]
    mistakes = list(dict.fromkeys(c.mistake for c in failing if c.mistake))
    hint = next((c.hint for c in failing if c.hint), "")      # an exercise's or a public case's hint
    message = "" if shown.status == "passed" else shown.message
    return STATUS_TEXT.get(shown.status, shown.status), message, mistakes, hint


def student_page(student, submissions):
    """The HTML page for ``student`` from their own ``submissions`` (``load.Submission``)."""
    parts = [f"<h1>Feedback for {e(student)}</h1>"]
    for sub in sorted(submissions, key=lambda s: s.result.chapter or ""):
        r = sub.result
        parts.append(f"<h2>Chapter {e(r.chapter or '?')}: {e(score_text(r.score, r.max_score))}</h2>")
        if r.status == "error":
            parts.append(f"<p>Your notebook could not be graded: {e(r.message)}</p>")
        rows = []
        for exercise in r.exercises:
            verdict, message, mistakes, hint = exercise_feedback(exercise)
            what = [e(message)] if message else []
            what += [f"<b>Typical mistake:</b> {e(m)}" for m in mistakes]
            what += [f"<b>Hint:</b> {e(hint)}"] if hint else []
            rows.append(f"<tr><td><code>{e(exercise.id)}</code><br>{e(exercise.title)}</td>"
                        f"<td>{e(points(exercise.score))} of {e(points(exercise.points))}</td>"
                        f'<td class="{e(exercise.status)}">{e(verdict)}</td><td>{"<br>".join(what)}</td></tr>')
        parts.append("<table><thead><tr><th>exercise</th><th>points</th><th>verdict</th>"
                     f"<th>what to look at</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")
    parts.append('<p class="note">Hidden cases are inputs drawn at grading time: when one fails, '
                 "test your answer on inputs of your own (other shapes, signs, sizes).</p>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
            f"<title>Feedback for {e(student)}</title><style>{STYLE}</style></head><body>"
            + "".join(parts) + "</body></html>\n")


def file_name(student):
    """A file name for a student's page: letters, digits, ``-``, ``_`` and ``.`` kept."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in student).strip(".") or "student"
    return safe + ".html"
