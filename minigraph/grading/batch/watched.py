"""What the kernel's watch (``watch.py``) said, read by the grader: flags for review.

The grader holds the read end of a pipe whose write end every process of the run inherits
(``grader._execute``): the runner writes there which cell it is about to run, the kernel's audit
hook what the submission's code did. ``Channel`` drains it while the run goes on (the hook must
never wait for the grader), keeping the first ``MAX_BYTES``; ``flags`` turns its lines into
"cell N, line L: why (`code`)" flags, like those of the scan (``scan.py``). A flag changes no
score: the instructor decides.

Source text a tool ran for the submission (``run_cell``, ``timeit``, a magic) is read like a
cell: it is flagged if it is in no cell (made at run time, read from a file or a pickle), or if
the scan finds in it what it would flag in a cell. ``%timeit relu(x)`` is the cell's own text,
and clean: not flagged.

A kernel that ran the grading writes ``done`` last. A channel without it -- closed, or replaced
by something else on its file descriptor -- is flagged: whatever the hook would have said next
was not heard. A kernel whose watch found its descriptor replaced was ended by the watch
itself, and the runner says ``silenced``: flagged too, whatever ``done`` the submission wrote.
"""

import json
import os
import select
import threading
import timeit

from ..toolkit.values import shorten

MAX_BYTES = 1_000_000             # of the channel kept; the rest is read and thrown away
MAX_FLAGS = 10                    # flags from the channel per submission
# what timeit adds around the statement it is given (its template), and an empty setup; a
# callable statement or setup (``timeit.timeit(lambda: relu(x))``) is passed to the template as
# an argument, ``_stmt=_stmt``, and called there, ``_stmt()`` (CPython's ``timeit.Timer``)
TOOL_LINES = {line.strip() for stmt in (False, True) for setup in (False, True)
              for line in timeit.template.format(stmt="_stmt()" if stmt else "", setup="_setup()" if setup else "",
                                                 init=", _setup=_setup" * setup + ", _stmt=_stmt" * stmt).split("\n")
              } | {"pass"}
WHY = {
    "compile": "compiles or runs source text (the watch saw it run)",
    "exec": "runs a code object (the watch saw it run)",
    "code.__new__": "builds a code object (the watch saw it run)",
    "run-string": "runs source text that is in no cell, or that the scan flags, through a tool",
    "writes-code": "writes a Python file",
    "imports": "imports code from outside the installed packages",
    "pickle": "unpickles a global that is not data",
    "introspects": "looks into a function's code, frames or the garbage collector (the watch saw it run)",
    "patches": "changes a class of the engine",
    "ctypes": "uses ctypes, which can change the interpreter itself",
    "silenced": "ran with the watch's channel replaced (by this cell or an earlier one): the "
                "watch ended the kernel when it had something to report",
}


class Channel:
    """The read end ``fd`` of the watch's pipe, drained by a thread until ``close``."""

    def __init__(self, fd):
        self.fd, self.data, self.stop = fd, bytearray(), threading.Event()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self):
        while not self.stop.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return                              # every writer is gone
            if len(self.data) < MAX_BYTES:
                self.data += chunk[:MAX_BYTES - len(self.data)]

    def close(self, patience=2.0):
        """Stop reading (after ``patience`` seconds if a writer still holds it open); the lines."""
        self.thread.join(patience)
        self.stop.set()
        self.thread.join()
        os.close(self.fd)
        return lines_of(bytes(self.data))


def lines_of(data):
    """The JSON objects of ``data``, one a line; what is no JSON object is skipped."""
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def flags(records, cells, review, graded):
    """Flags for the watch's ``records``. ``cells``: {cell number: source} of the code cells;
    ``review(source)``: the scan's flags for one cell's text; ``graded``: whether the grading ran
    (then the kernel must have said ``done``)."""
    found, cell, done = [], None, False
    for record in records:
        event = record.get("event")
        if event == "cell":
            cell, done = record.get("cell"), False
        elif event == "done":
            done = True
        elif event in WHY:
            text = str(record.get("text", ""))
            if event == "run-string" and _own_clean_text(text, cells, review):
                continue
            detail = f" ({_detail(event, text)})" if text else ""
            found.append(f"{_where(record, cell, cells)}: {WHY[event]}{detail}")
    found = list(dict.fromkeys(found))
    if len(found) > MAX_FLAGS:
        found = found[:MAX_FLAGS] + [f"... and {len(found) - MAX_FLAGS} more reports of the watch"]
    if graded and not done:
        found.append("the kernel's watch went silent before grading ended (its channel was closed "
                     "or replaced): what the submission did after that was not seen")
    return found


def _own_clean_text(text, cells, review):
    """Whether every line of ``text`` (but the lines ``timeit`` adds) is in a cell, and the scan
    finds nothing in them."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n")]
    own = [line for line in lines if line and line not in TOOL_LINES]
    return all(any(line in source for source in cells.values()) for line in own) and not review("\n".join(own))


def _where(record, cell, cells):
    """"cell N, line L": the cell that ran (or, for a report made while grading, the cell whose
    line L is the reported line)."""
    code, line, file = str(record.get("code", "")), record.get("line"), str(record.get("file", ""))
    if not isinstance(line, int) or line < 1:
        line = None
    if code and line and _is_cell_file(file):
        holding = [n for n, source in cells.items() if _line(source, line) == code]
        if holding and cell not in holding:
            cell = holding[0]
    where = f"cell {cell}" if isinstance(cell, int) else "while grading"
    if line:
        where += f", line {line}"
    if file and not _is_cell_file(file):
        where += f" of {shorten(file, 60)}"
    return where


def _line(source, number):
    lines = source.replace("\r\n", "\n").split("\n")
    return lines[number - 1].strip() if number <= len(lines) else None


def _is_cell_file(file):
    return file.startswith("<ipython-input") or "ipykernel_" in file


def _detail(event, text):
    first = " ".join(text.split())
    return f"`{shorten(first, 60)}`"
