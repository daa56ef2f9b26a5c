"""The class report as one HTML page: self-contained (plots inline as SVG, a few lines of
script to sort the tables, no file beside it, nothing fetched: a Content-Security-Policy
forbids it), so it opens offline, from a file, and can be mailed or archived as it is.

Every text that came from a report (a path, a student's code, a message) is escaped.
"""

import hashlib
import html

from ..toolkit.report import points
from . import plots, similarity
from .tally import hardest

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 70em; color: #1f2328; }
h1, h2, h3 { line-height: 1.2; } h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; } td, th { padding: .2em .6em; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } table.sortable th { cursor: pointer; user-select: none; }
table.sortable th::after { content: " \\2195"; color: #8c959f; }
th[data-dir=asc]::after { content: " \\25B2"; } th[data-dir=desc]::after { content: " \\25BC"; }
td.num, th.num { text-align: right; } .full { color: #1a7f37; } .flag { color: #cf222e; }
.exercise { display: grid; grid-template-columns: 24em 1fr; gap: 1em; margin: 1em 0 2em; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
pre { background: #f6f8fa; padding: .6em; overflow-x: auto; font-size: 12px; } mark { background: #ffd8b5; }
.note { color: #57606a; }
"""

SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(th => th.addEventListener("click", () => {
  const table = th.closest("table"), body = table.tBodies[0], col = th.cellIndex;
  const dir = th.dataset.dir === "asc" ? -1 : 1;
  table.querySelectorAll("th").forEach(h => delete h.dataset.dir);
  th.dataset.dir = dir === 1 ? "asc" : "desc";
  const key = row => { const cell = row.cells[col]; const text = cell.dataset.sort ?? cell.textContent.trim();
                       const n = Number(text); return text !== "" && !isNaN(n) ? n : text; };
  [...body.rows].sort((a, b) => { const x = key(a), y = key(b);
      return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * dir; })
    .forEach(row => body.appendChild(row));
}));
"""

POLICY = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'")


def e(text):
    return html.escape(str(text), quote=True)


def table(header, rows, numeric=(), id=None):
    """An HTML table that sorts by the column whose title is clicked; ``numeric`` are the
    columns aligned right. A cell is text, or a pair (shown HTML, sort key)."""
    head = "".join(f'<th{" class=num" if i in numeric else ""}>{e(h)}</th>' for i, h in enumerate(header))
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            shown, key = cell if isinstance(cell, tuple) else (e(cell), None)
            attrs = (' class="num"' if i in numeric else "") + (f' data-sort="{e(key)}"' if key is not None else "")
            cells.append(f"<td{attrs}>{shown}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    attrs = ' class="sortable"' + (f' id="{e(id)}"' if id else "")
    return (f'<table{attrs}><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def percent(share):
    return f"{100 * share:.0f} %"


def class_page(submissions, stats, books, found, reports):
    """The whole page."""
    students = sorted({s.student for s in submissions})
    chapters = sorted(books)
    parts = [f"<h1>Class report</h1><p>{len(students)} students, {len(submissions)} graded notebooks "
             f"from {len(reports)} report{'s' if len(reports) != 1 else ''} "
             f"({', '.join(e(r) for r in reports)}); chapter{'s' if len(chapters) != 1 else ''} "
             f"{', '.join(e(c) for c in chapters)}. {len(found)} similarity flag{'s' if len(found) != 1 else ''} "
             f"to review. Click a column's title to sort.</p>"]
    parts.append(_course(students, chapters, books, stats))
    for chapter in chapters:
        parts.append(_chapter(chapter, books[chapter], stats, submissions, found))
    parts.append(_similarity(found))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
            f"<title>Class report</title><style>{STYLE}</style></head><body>"
            + "".join(parts) + f"<script>{SCRIPT}</script></body></html>\n")


def _course(students, chapters, books, stats):
    totals = {c: {row[0]: (row[2], row[3]) for row in books[c]["rows"]} for c in chapters}
    maxima = {c: max((row[3] for row in books[c]["rows"]), default=0) for c in chapters}
    rows = []
    for student in students:
        earned = [totals[c].get(student) for c in chapters]
        total = sum(x[0] for x in earned if x)
        rows.append([student, *[(e(points(x[0])) if x else "—", x[0] if x else -1) for x in earned],
                     (e(points(total)), total)])
    numeric = range(1, len(chapters) + 2)
    header = ["student", *[f"ch {c} (of {points(maxima[c])})" for c in chapters],
              f"total (of {points(sum(maxima.values()))})"]
    return ('<h2 id="course">The course</h2><h3>Gradebook</h3>' + table(header, rows, numeric, id="course-gradebook")
            + "<h3>Hardest exercises</h3>" + plots.hardest(hardest(stats.values()), "all chapters graded"))


def _chapter(chapter, book, stats, submissions, found):
    ids = book["exercises"]
    rows = []
    for student, scores, total, maximum, flags in book["rows"]:
        rows.append([student, *[(e(points(scores[i])), scores[i]) if i in scores else "—" for i in ids],
                     (e(points(total)), total),
                     (f'<span class="flag">{len(flags)}</span>' if flags else "", len(flags))])
    header = ["student", *ids, f"total (of {points(sum(stats[i].points for i in ids))})", "flags"]
    parts = [f'<h2 id="chapter-{e(chapter)}">Chapter {e(chapter)}</h2><h3>Gradebook</h3>',
             table(header, rows, range(1, len(ids) + 3)),
             plots.hardest(hardest([stats[i] for i in ids]), f"chapter {chapter}")]
    flagged = [(sub.student, flag) for sub in submissions if sub.result.chapter == chapter
               for flag in sub.result.flags]
    if flagged:
        parts.append("<h3>Flagged by the grader for review</h3>"
                     + table(["student", "flag"], flagged))
    for exercise_id in ids:
        parts.append(_exercise(stats[exercise_id], [f for f in found if f.exercise == exercise_id]))
    return "".join(parts)


def _exercise(s, found):
    full = sum(v >= s.points for v in s.scores.values())
    side = [f"<p>{len(s.scores)} students; full marks: <b>{full}</b> ({percent(s.full_share)}); "
            f"mean {percent(s.mean_share)} of the points.</p>", plots.histogram(s)]
    main = []
    if s.mistakes:
        main.append(table(["mistake (as check() names it)", "students", "who"],
                          [[m, (str(len(who)), len(who)), ", ".join(who)] for m, who in s.mistakes.items()],
                          numeric=(1,)))
    else:
        main.append('<p class="note">No typical mistake named.</p>')
    if s.hidden_failed:
        kind, who = s.hidden_failed
        main.append(f"<p>Hidden case most often failed: <b>{e(kind)}</b>, by {len(who)} "
                    f"student{'s' if len(who) != 1 else ''} ({e(', '.join(who))}).</p>")
    links = [f'<a href="#{_anchor(g.shown)}" class="flag">{e(" ~ ".join(g.students))}</a>'
             for g in similarity.groups(found)]
    links += [f'<a href="#{_anchor(f)}" class="flag">{e(f.student)} ~ minigraph\'s {e(f.other)}</a>'
              for f in found if f.kind == "engine"]
    if links:
        main.append("<p>Similarity flags (to review, not a verdict): " + ", ".join(links) + "</p>")
    return (f'<h3 id="exercise-{e(s.id)}">{e(s.id)} <small>{e(s.title)}, {points(s.points)} '
            f'point{"" if s.points == 1 else "s"}</small></h3>'
            f'<div class="exercise"><div>{"".join(side)}</div><div>{"".join(main)}</div></div>')


def _anchor(flag):
    """The id of a flag's side-by-side view (the same every time the page is made)."""
    key = "\0".join((flag.kind, flag.exercise, flag.student, flag.other)).encode()
    return "similar-" + hashlib.sha256(key).hexdigest()[:12]


def _similarity(found):
    parts = [f'<h2 id="similarity">Similar answers, to review</h2><p class="note">Each answer is '
             f"compared without the exercise's stub, names, comments and layout (copydetect, "
             f"MOSS's winnowing). Flagged: two students' answers sharing at least "
             f"{percent(similarity.PAIR_SIMILARITY)} of each one's tokens, or an answer of which at least "
             f"{percent(similarity.ENGINE_SIMILARITY)} is in one function or class of minigraph; answers "
             f"shorter than {similarity.MIN_TOKENS} tokens are never flagged. Students linked by "
             f"such pairs form a group, shown by its most alike pair. A flag is a reason to look, "
             f"not evidence of copying: short or standard answers are alike by nature. Passages "
             f"found in both are <mark>marked</mark>.</p>"]
    if not found:
        parts.append("<p>None.</p>")
    for g in similarity.groups(found):
        f = g.shown
        who = (f"{e(f.student)} and {e(f.other)}" if len(g.students) == 2 else
               f"{len(g.students)} students ({e(', '.join(g.students))}; {g.pairs} pairs flagged)")
        parts.append(_side_by_side(f, f"{e(f.exercise)}: {who}",
                                   f"{e(f.student)} (left) and {e(f.other)} (right)"))
    for f in found:
        if f.kind == "engine":
            parts.append(_side_by_side(f, f"{e(f.exercise)}: {e(f.student)} and minigraph's code",
                                       f"{e(f.student)} (left) and minigraph's {e(f.other)} (right)"))
    return "".join(parts)


def _side_by_side(f, title, which):
    return (f'<h3 id="{_anchor(f)}">{title}</h3><p>{which}: {percent(f.similarity[0])} of the left '
            f"answer, {percent(f.similarity[1])} of the right one.</p>"
            f'<div class="pair"><pre>{f.marked[0]}</pre><pre>{f.marked[1]}</pre></div>')
