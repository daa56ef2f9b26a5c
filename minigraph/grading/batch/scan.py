"""Read a submission's code, before it runs, for uses of minigraph's grading internals.

What a notebook may import from ``minigraph.grading`` is judged by module: the package's public
API (``from minigraph.grading import check, progress``) and its ``tools`` (``from
minigraph.grading.tools.ch04 import try_recipe``, ``from minigraph.grading.tools import ch04``
then ``ch04.train_recipe(...)``), which hold no reference answers. Any other module there
(``content``, ``answers``, where the reference answers live, the toolkit, the grader) is
grading internals.

A cell is read as Python (``ast``), so an import may be written as the learner likes: over
several lines, in parentheses, with aliases (``check as c``), with Windows line endings. What
the learner may use is taken out of the cell's text; whatever of the text still names the
internals (``GRADING_INTERNALS``) is a use of them. A cell that is not plain Python (an
IPython ``%magic``) is read line by line instead, with the same patterns.

A reading of the source cannot be fooled by the kernel, only by disguise; a disguise gains
nothing, though: the reference answers are not in the sandbox (``sandbox.py``), and hidden
cases are drawn after the learner's cells ran. A cell using the usual tools of disguise
(``IMPORT_TRICKS``) is listed too, with no answers, for the instructor to look at.
"""

import ast
import io
import re
import tokenize

from .. import __all__ as PUBLIC_API          # what ``from minigraph.grading import`` may name
from ..toolkit.values import shorten

GRADING = "minigraph.grading"
TOOLS = re.compile(r"minigraph\.grading\.tools(\.\w+)?")           # modules a notebook may import
TOOLS_ATTRIBUTE = re.compile(r"minigraph\.grading\.tools(\.\w+){1,2}")   # ...tools.ch04.try_recipe
LEARNER_MODULE = re.compile(r"minigraph\.grading(\.tools(\.\w+)?)?")
_NAMES = r"\w+([ \t]*,[ \t]*\w+)*"
LEARNER_IMPORT = re.compile(rf"^[ \t]*from[ \t]+(?P<module>[\w.]+)[ \t]+import[ \t]+"
                            rf"(\((?P<grouped>[ \t]*{_NAMES}[ \t]*,?)\)|(?P<names>{_NAMES}))"
                            r"[ \t]*(#.*)?$", re.MULTILINE)
GRADING_INTERNALS = re.compile(r"minigraph\s*\.\s*grading\b|\bgrading\.\w|\b_?ch\d\d\.\w"
                               r"|\bEXERCISES\b|\b_minigraph_grader")
# What disguises a use of them (a module name put together at run time, an import system of
# one's own that serves a fake collector, the watch switched off). No exercise needs any of it,
# so a cell using it is flagged for review (its answers keep their points: it may be innocent).
IMPORT_TRICKS = re.compile(r"\b(importlib|__import__|__builtins__|builtins|meta_path|path_hooks"
                           r"|setprofile|settrace)\b|\bsys\s*\.\s*modules\b|\b(exec|eval)\s*\(")


def reference_uses(notebook, exercises):
    """The code cells that reach into minigraph's grading internals (where the reference
    answers live): ``[(cell number, what was found, names of the answers it defines)]``."""
    found = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        source = one_line_ending(cell.source)
        code = _without_learner_code(_without_comments(source))
        use, trick = GRADING_INTERNALS.search(code), IMPORT_TRICKS.search(code)
        if use is None:
            if trick:
                found.append((number, f"uses Python's import machinery ('{trick.group(0)}'), "
                              "which no exercise needs", []))
            continue
        why = f"uses minigraph's grading internals ('{shorten(use.group(0), 40)}')"
        names = [e.name for e in exercises if re.search(
            rf"^[ \t]*(def[ \t]+{e.name}\b|{e.name}[ \t]*=)", source, re.MULTILINE)]
        found.append((number, why, names))
    return found


def one_line_ending(source):
    """``source`` with ``\\n`` ending every line (Windows' ``\\r\\n``, old Macs' ``\\r``)."""
    return source.replace("\r\n", "\n").replace("\r", "\n")


def _without_learner_code(source):
    """``source`` with what a notebook may use of ``minigraph.grading`` blanked out: the
    imports of its public API and of its tools, and the tools' names used through a module
    (``ch04.train_recipe``, ``minigraph.grading.tools.ch04.train_recipe``)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):              # IPython syntax, a null byte...
        return LEARNER_IMPORT.sub(_learner_import_line, source)
    allowed, tools_names = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _may_import_from(node):
            allowed.append(node)
            tools_names |= {a.asname or a.name for a in node.names
                            if node.module != GRADING or a.name == "tools"}
        elif isinstance(node, ast.Import) and all(TOOLS.fullmatch(a.name) for a in node.names):
            allowed.append(node)
            tools_names |= {a.asname for a in node.names if a.asname}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (
                (isinstance(node.value, ast.Name) and node.value.id in tools_names)
                or TOOLS_ATTRIBUTE.fullmatch(_dotted(node) or "")):
            allowed.append(node)
    return _blanked(source, allowed)


def _may_import_from(node):
    """Whether ``from M import names`` imports only what a notebook may."""
    if node.module == GRADING:
        return all(a.name in PUBLIC_API or a.name == "tools" for a in node.names)
    return bool(TOOLS.fullmatch(node.module or ""))


def _dotted(node):
    """``a.b.c`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _blanked(source, nodes):
    """``source`` with the text of ``nodes`` replaced by spaces (``ast`` positions count
    bytes of UTF-8 within a line)."""
    lines = [line.encode("utf-8") for line in source.split("\n")]
    for node in nodes:
        for row in range(node.lineno - 1, node.end_lineno):
            line = lines[row]
            start = node.col_offset if row == node.lineno - 1 else 0
            end = node.end_col_offset if row == node.end_lineno - 1 else len(line)
            lines[row] = line[:start] + b" " * (end - start) + line[end:]
    return "\n".join(line.decode("utf-8") for line in lines)


def _learner_import_line(match):
    """For a cell that is not Python: ``match`` (a ``from M import names`` line) blanked out
    if it imports only what a notebook may."""
    module = match["module"]
    names = {n.strip() for n in (match["grouped"] or match["names"]).split(",")} - {""}
    if not LEARNER_MODULE.fullmatch(module) or (module == GRADING and not names <= {*PUBLIC_API, "tools"}):
        return match.group(0)
    return ""


def _without_comments(source):
    """``source`` with its comments blanked out ("# as in ch01" is no use of ch01)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):       # IPython syntax (%magic) and the like
        return source
    lines = source.splitlines(keepends=True)
    for token in reversed(tokens):
        if token.type == tokenize.COMMENT:
            (row, start), (_, end) = token.start, token.end
            lines[row - 1] = lines[row - 1][:start] + lines[row - 1][end:]
    return "".join(lines)
