"""Tables for people: a check's result and a chapter's progress (the shell's tables are in
``cli.py``).

Everything here is a pure function of results, with no timings, addresses or dict-order
surprises, so the same result always prints the same way (nbval compares these outputs in the
solution notebooks).
"""

import html

STATUS_TEXT = {"passed": "passed", "failed": "failed", "not_done": "not done yet",
               "missing": "missing", "error": "error"}
CASE_WORDS = {"pass": "passed", "fail": "FAILED", "error": "ERROR", "timeout": "TIMED OUT",
              "not_done": "not done", "unjudged": "ran (not judged)"}
CASE_COLOURS = {"pass": "#1a7f37", "not_done": "#6e7781", "unjudged": "#6e7781"}   # anything else: red
RED = "#cf222e"
LEFT = ' style="text-align:left"'      # JupyterLab right-aligns table cells: messages read ragged


class Display:
    """What ``check()`` and ``progress()`` return: Jupyter shows the HTML, nbval and terminals
    the text."""

    def __init__(self, text, html_text):
        self.text, self.html = text, html_text

    def __repr__(self):
        return self.text

    def _repr_html_(self):
        return self.html


def points(x):
    """``1``, ``0.5``, ``0.67``: at most two decimals, no trailing zeros."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def score_text(score, total):
    return f"{points(score)} of {points(total)} point{'' if total == 1 else 's'}"


# -- one exercise (check) -------------------------------------------------------------------

def check_display(result):
    """The table ``check()`` shows for one ExerciseResult."""
    return Display(check_text(result), check_html(result))


def _headline(result):
    passed = sum(c.status == "pass" for c in result.cases)
    if result.status in ("passed", "failed"):
        what = f"{passed} of {len(result.cases)} case{'s' if len(result.cases) > 1 else ''} passed"
    elif result.status == "not_done":
        what = "not done yet: write your answer in place of the stub above, then run this cell again"
    else:
        what = result.message
    return f"{result.id}  {result.title} — {what}  ({score_text(result.score, result.points)})"


def _rows(result):
    """The table rows, or none when there is nothing per case to show."""
    if result.status not in ("passed", "failed"):
        return []
    return [(str(c.index), CASE_WORDS[c.status], c.input, c.expected, c.got) for c in result.cases]


REPEATED = 60           # a message that begins like an earlier case's for this long is shortened


def _head(message):
    """``(head, details)``: a message ``"mistake (details)"`` split before the parenthesis that
    closes it (a typical mistake, named, then what this case showed), or ``(message, "")``."""
    if message.endswith(")"):
        depth = 0
        for at in range(len(message) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(message[at], 0)
            if depth == 0:
                return message[:at].rstrip(), message[at:]
    return message, ""


def _messages(cases):
    """What went wrong in each case that did not pass, by case; a message that repeats an earlier
    case's (a typical mistake named in every case it spoils) says so instead of saying it again:
    its first words, "as in case N", and what differs (the node, the numbers)."""
    told, said = {}, {}
    for case in cases:
        message = case.message if case.status != "pass" else ""
        head, details = _head(message)
        if message in said:
            message = f"the same as case {said[message]}"
        elif details and len(head) >= REPEATED and head in said:
            name = head.split(":")[0]
            name = name if len(name) <= REPEATED else name[:REPEATED].rsplit(" ", 1)[0] + " …"
            message = f"{name} (as in case {said[head]}) {details}"
        elif message:
            said.setdefault(message, case.index)
            said.setdefault(head, case.index)
        told[case.index] = message
    return told


def _notes(case, told):
    """The lines under a case's row: what went wrong (unless it passed), and its first hint."""
    notes = [told[case.index]] if told.get(case.index) else []
    return notes + ([f"hint: {case.hint}"] if case.hint else [])


def _more_hints(case):
    """The sharper hints, shown on request: a <details> section in HTML, plain lines in text."""
    return [f"sharper hint: {more}" for more in case.more_hints]


def check_text(result):
    lines = [_headline(result)]
    rows = _rows(result)
    if rows:
        header = ("case", "result", "input", "expected", "got")
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
        indent = "  " + " " * (widths[0] + 2)              # notes start under "result"
        told = _messages(result.cases)
        for row, case in zip(rows, result.cases):
            lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
            lines += [indent + note for note in _notes(case, told) + _more_hints(case)]
    return "\n".join(lines)


def check_html(result):
    parts = [f"<div class=\"minigraph-check\"><p><b>{_e(_headline(result))}</b></p>"]
    rows = _rows(result)
    if rows:
        parts.append("<table><tr>" + "".join(f"<th{LEFT}>{h}</th>" for h in
                                             ("case", "result", "input", "expected", "got")) + "</tr>")
        told = _messages(result.cases)
        for row, case in zip(rows, result.cases):
            colour = CASE_COLOURS.get(case.status, RED)
            cells = [_e(row[0]), f"<span style=\"color:{colour}\">{_e(row[1])}</span>",
                     *(f"<code>{_e(v)}</code>" for v in row[2:])]
            parts.append("<tr>" + "".join(f"<td{LEFT}>{c}</td>" for c in cells) + "</tr>")
            notes, more = _notes(case, told), _more_hints(case)
            if notes or more:
                details = ("<details><summary>a sharper hint</summary>" + "<br>".join(map(_e, more))
                           + "</details>") if more else ""
                parts.append(f"<tr><td></td><td colspan=\"4\"{LEFT}>" + "<br>".join(map(_e, notes))
                             + details + "</td></tr>")
        parts.append("</table>")
    parts.append("</div>")
    return "".join(parts)


# -- a chapter (progress) -------------------------------------------------------------------

def progress_display(chapter, title, exercises, latest):
    """``progress()``: the points of one chapter, from the latest check of each exercise."""
    rows = []
    for exercise in exercises:
        result = latest.get(exercise.id)
        score = result.score if result else 0.0
        status = STATUS_TEXT[result.status] if result else "not checked yet"
        rows.append((exercise.id, f"{points(score)} of {points(exercise.points)}", status, score))
    earned = sum(r[3] for r in rows)
    total = sum(e.points for e in exercises)
    head = f"Progress in chapter {chapter} ({title}): {score_text(earned, total)}"
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    text = "\n".join([head] + [f"  {r[0].ljust(widths[0])}  {r[1].ljust(widths[1])}  {r[2]}"
                               for r in rows])
    table = "".join(f"<tr><td{LEFT}><code>{_e(r[0])}</code></td><td{LEFT}>{_e(r[1])}</td>"
                    f"<td{LEFT}>{_e(r[2])}</td></tr>" for r in rows)
    return Display(text, f"<div class=\"minigraph-progress\"><p><b>{_e(head)}</b></p>"
                         f"<table>{table}</table></div>")


def _e(text):
    return html.escape(str(text), quote=False)
