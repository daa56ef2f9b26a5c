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
internals (``GRADING_INTERNALS``) is a use of them. A cell with IPython's syntax is read as
the Python it runs (``pieces``): IPython's own transformer turns its ``%magic`` and ``!command``
lines into calls, and the Python a magic runs (``%time relu(x)``, the body of a ``%%time``
cell: ``PYTHON_MAGICS``) is read as Python too; what is not Python (a shell command, another
magic's text, a ``%%bash`` or ``%%writefile`` cell) is read line by line with the same patterns.

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
TOOLS_ATTRIBUTE = re.compile(r"(\w+\.)?grading\.tools(\.\w+){1,2}")   # mg.grading.tools.ch04.try_recipe
LEARNER_MODULE = re.compile(r"minigraph\.grading(\.tools(\.\w+)?)?")
_NAMES = r"\w+([ \t]*,[ \t]*\w+)*"
LEARNER_IMPORT = re.compile(rf"^[ \t]*from[ \t]+(?P<module>[\w.]+)[ \t]+import[ \t]+"
                            rf"(\((?P<grouped>[ \t]*{_NAMES}[ \t]*,?)\)|(?P<names>{_NAMES}))"
                            r"[ \t]*(#.*)?$", re.MULTILINE)
GRADING_INTERNALS = re.compile(r"minigraph\s*\.\s*grading\b|\bgrading\.\w|\b_?ch\d\d\.\w"
                               r"|\bEXERCISES\b|\b_minigraph_grader")
# The same, in a string: only a module path of the internals ("minigraph.grading.answers"); a
# file name ("ch00.npy", "ch04.png") or a printed word ("EXERCISES: 4") is the learner's own.
INTERNALS_IN_TEXT = re.compile(r"minigraph\s*\.\s*grading(?=\s*\.\s*(?!tools\b)\w)|\b_minigraph_grader")
# What disguises a use of them (a module name put together at run time, an import system of
# one's own that serves a fake collector, the watch switched off). No exercise needs any of it,
# so a cell using it is flagged for review (its answers keep their points: it may be innocent).
# (``importlib.reload``, which reloads a module of one's own, and a method called ``eval``, as
# a torch module's ``net.eval()``, are no disguise.)
IMPORT_TRICKS = re.compile(r"\b(__import__|__builtins__|builtins|meta_path|path_hooks|setprofile"
                           r"|settrace)\b|\bimportlib\s*\.\s*(?!reload\b)\w"
                           r"|\bfrom\s+importlib\b(?!\s+import\s+reload\s*$)|\bimport[ \t]+importlib\s*\."
                           r"|\bsys\s*\.\s*modules\b|(?<![.\w])(?<!def )(exec|eval)\s*\(", re.MULTILINE)


# numpy's switches of its floating-point errors, the errors the "never overflow" rule makes raise
SILENCERS = {"errstate", "seterr", "seterrcall"}
FLOAT_ERRORS = {"all", "over", "invalid", "divide"}
SILENCES = ("silences numpy's floating-point warnings in a cell that defines an answer (the 'never "
            "overflow' rule listens to them)")


# What a learner does not write by accident, and what switches off a rule that the learner's
# kernel checks (the engine rule, "never overflow", "no loop"): Python has no wall inside one
# process, so such code is flagged for the instructor's review, with the learner's cell and
# line. A flag changes no score. ``(pattern, why, only inside an answer's own def)``.
BYPASSES = [
    (r"\b__code__\b|\bCodeType\b|\bFunctionType\s*\(|\bco_code\b",
     "builds a function from a code object", False),
    (r"(?<![.\w])(?<!def )(compile|exec|eval)\s*\(|\bgetsource(lines)?\b",
     "compiles or runs source text (compile, exec, eval, inspect.getsource)", False),
    (r"\b(input_transformers_cleanup|input_transformers_post|input_transformer_manager"
     r"|ast_transformers)\b|\bevents\s*\.\s*register\b",
     "installs an IPython input transformer or event hook, which rewrites or runs before the "
     "cells that follow, the grader's too", False),
    (r"\b_getframe\b|\bcurrentframe\b|\bf_(back|globals|locals|code)\b|\btb_frame\b"
     r"|\bgc\s*\.\s*get_(objects|referrers|referents)\b|\b__globals__\b|\b__closure__\b",
     "looks into frames, the garbage collector or a function's globals", False),
    (r"\b(mg|minigraph)\s*\.\s*(\w+\s*\.\s*)*_[a-z]\w*|\bfrom\s+minigraph[\w.]*\s+import\b.*\b_[a-z]\w*"
     r"|\b(memoryplan|rewrites?|stepcode|compiler)\s*\.\s*\w|\bkernels\s*\.\s*(?!sigmoid\b)\w",
     "uses the engine's internals, which are not its public API", False),
    (r"\.\s*(leaky_relu|sigmoid_into|sigmoid_grad|linear_vjp_\w+|causal_mask|layer_norm_vjp\w*"
     r"|cosine_decay|best_momentum|clip_by_global_norm|embedded_reber_string|opdef)\b",
     "calls another copy, in the engine, of the maths the exercise asks for (the engine rule "
     "refuses the engine's own function only)", True),
    (r"\b(errstate|seterr|seterrcall)\s*\((?!\s*\))",     # in text only: Python is read by ``_silencers``
     SILENCES, True),
    (r"\.\s*view\s*\(\s*((np|numpy)\s*\.\s*)?ndarray\s*\)",
     "unwraps the grader's array inside an answer (the 'no loop' rule watches it)", True),
]


def review_flags(notebook, exercises):
    """What to review, ``["cell N, line L: why (`the line`)"]``, one per pattern of
    ``BYPASSES`` found in the code (comments and strings left out)."""
    names = {e.name for e in exercises}
    cells = [(n, one_line_ending(c.source)) for n, c in enumerate(notebook.cells, start=1) if c.cell_type == "code"]
    cells = [(number, source, pieces(source)) for number, source in cells]
    aliases = {}
    for _, _, parts in cells:
        for _, text, tree in parts:
            aliases.update(_module_aliases(tree))
    silencers = {alias: name for _, _, parts in cells for _, _, tree in parts for alias, name in _silencer_aliases(tree)}
    flags = []
    for number, source, parts in cells:
        inside = {first + row - 1 for first, _, tree in parts if tree is not None
                  for row in _answer_lines(tree, names)}
        answers = any(_defines(tree, names) for _, _, tree in parts if tree is not None)
        rows = {}
        for first, text, tree in parts:
            code = _without_strings(_without_comments(_aliases_spelled_out(text, tree, aliases))).split("\n")
            for pattern, why, in_answer in BYPASSES:
                row = next((first + i - 1 for i, line in enumerate(code, start=1) if re.search(pattern, line)
                            and (not in_answer or tree is None or first + i - 1 in inside)
                            and (why != SILENCES or tree is None)), None)
                if row is not None and row < rows.get(why, row + 1):
                    rows[why] = row
            if answers and tree is not None:
                row = min(_silencers(tree, silencers), default=None)
                if row is not None and first + row - 1 < rows.get(SILENCES, first + row):
                    rows[SILENCES] = first + row - 1
        for pattern, why, _ in BYPASSES:
            if why in rows:
                line = shorten(_line_of(source, rows[why]), 60)
                flags.append(f"cell {number}, line {rows[why]}: {why} (`{line}`)")
    return flags


def _silencers(tree, aliases):
    """The lines of ``tree`` that call numpy's ``errstate``, ``seterr`` or ``seterrcall`` (by
    any name ``aliases`` gives them) to make a floating-point error other than raise: any of
    ``FLOAT_ERRORS`` set to anything but ``"raise"``, ``**`` settings or positional ones
    (``errstate(over="raise")`` is the rule itself: no)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else (
            aliases.get(node.func.id, node.func.id) if isinstance(node.func, ast.Name) else None)
        if name in SILENCERS and (node.args or any(
                keyword.arg is None or (keyword.arg in FLOAT_ERRORS and not (
                    isinstance(keyword.value, ast.Constant) and keyword.value.value == "raise"))
                for keyword in node.keywords)):
            yield node.lineno


def _silencer_aliases(tree):
    """``(alias, name)`` for each of numpy's ``SILENCERS`` imported under another name."""
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numpy":
            yield from ((a.asname, a.name) for a in node.names if a.asname and a.name in SILENCERS)


def _defines(tree, names):
    """Whether ``tree`` defines or assigns one of ``names`` (a graded answer)."""
    return any((isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in names)
               or (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in names)
               for node in ast.walk(tree))


def _line_of(source, row):
    lines = source.split("\n")
    return lines[row - 1].strip() if row <= len(lines) else ""


# IPython's magics whose argument (``%time relu(x)``, ``%timeit -n 10 relu(x)``) or cell body
# (``%%time``, ``%%capture``) is Python the kernel runs: read as Python
PYTHON_MAGICS = {"time", "timeit", "prun", "capture", "debug"}
_MAGIC_CALLS = {"run_line_magic", "run_cell_magic", "system", "getoutput"}


def pieces(source):
    """The code of a cell as ``[(first line, text, syntax tree or None)]``: the cell itself if it
    is Python. A cell with IPython's syntax is the Python IPython runs for it (its own
    ``TransformerManager``, whose ``%magic`` and ``!command`` lines become calls: those calls,
    read apart, are ``None`` there), then each magic's Python (``PYTHON_MAGICS``) as Python, and
    the text of every other magic or shell command, and any cell IPython cannot read either,
    with no tree: read with the patterns, line by line. Lines keep their numbers in the cell
    (but after a magic continued over lines with ``\\``)."""
    try:
        return [(1, source, ast.parse(source))]
    except (SyntaxError, ValueError):
        pass
    return _ipython_pieces(source, 1)


def _ipython_pieces(source, first):
    lines = source.split("\n")
    blank = next((i for i, line in enumerate(lines) if line.strip()), 0)   # IPython drops leading blank lines
    first, source = first + blank, "\n".join(lines[blank:])
    head, _, body = source.partition("\n")
    magic = re.match(r"%%(\w+)(.*)", head)
    if magic:                                     # a cell magic: its body is Python, or text
        if magic[1] not in PYTHON_MAGICS:
            return [(first, source, None)]
        return _magic_argument(first, magic[2]) + [(first + row, text, tree) for row, text, tree in pieces(body)]
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        view = TransformerManager().transform_cell(source)
        tree = ast.parse(view)
    except Exception:                             # IPython cannot read it either
        return [(first, source, None)]
    calls, found = [], []
    for node in ast.walk(tree):
        if _magic_call(node):
            calls.append(node)
            kind, *words = [arg.value for arg in node.args]
            row = first + node.lineno - 1
            if node.func.attr == "run_line_magic" and kind in PYTHON_MAGICS:
                found += _magic_argument(row, " " + words[0])
            elif node.func.attr == "run_line_magic":
                found.append((row, f"%{kind} {words[0]}", None))
            elif node.func.attr == "run_cell_magic":  # not made here: a cell magic is the head line
                found.append((row, f"%%{kind} {words[0]}\n{words[1]}", None))
            else:
                found.append((row, f"!{kind}", None))
    view = _replaced(view, calls, "None")
    return [(first, view, ast.parse(view))] + found


def _magic_call(node):
    """Whether ``node`` is a call IPython's transformer made of a magic or a shell command:
    ``get_ipython().run_line_magic('time', 'relu(x)')``, ``get_ipython().system('ls')``."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MAGIC_CALLS and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name) and node.func.value.func.id == "get_ipython"
            and not node.keywords and node.args
            and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
            and len(node.args) == {"run_line_magic": 2, "run_cell_magic": 3}.get(node.func.attr, 1))


def _magic_argument(row, text):
    """The pieces of a Python magic's argument on line ``row``: the Python after its options
    (``-n 10``; the first ending of the text that is Python) and those options as text."""
    rest, options = text.strip(), ""
    for _ in range(8):
        try:
            tree = ast.parse(rest)
        except (SyntaxError, ValueError):
            word = re.match(r"\S+\s*", rest)
            options, rest = options + word.group(0), rest[word.end():]
            continue
        return ([(row, options, None)] if options.strip() else []) + ([(row, rest, tree)] if rest.strip() else [])
    return [(row, text, None)]


def _module_aliases(tree):
    """``{name: what it stands for}`` for each name an import in ``tree`` (a piece's; None for
    text) binds to a module of minigraph under another name (``from minigraph import kernels as
    K``: ``{"K": "kernels"}``; ``import minigraph as m``: ``{"m": "minigraph"}``), so that a rule
    that names a module finds its aliases too."""
    if tree is None:
        return {}
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update({a.asname: a.name.rsplit(".", 1)[-1] for a in node.names
                          if a.asname and a.name.split(".")[0] == "minigraph"})
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "minigraph":
            found.update({a.asname: a.name for a in node.names if a.asname})
    return {alias: name for alias, name in found.items() if alias != name}


def _aliases_spelled_out(source, tree, aliases):
    """``source`` (of syntax ``tree``; None for text) with every name of ``aliases`` used as a
    value written as what it stands for (``K.relu_into`` reads ``kernels.relu_into``); lines
    keep their numbers."""
    if not aliases or tree is None:
        return source
    spots = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in aliases:
            spots.setdefault(node.lineno - 1, []).append((node.col_offset, node.end_col_offset, aliases[node.id]))
    lines = [line.encode("utf-8") for line in source.split("\n")]
    for row, found in spots.items():
        pieces, end = [], 0
        for start, stop, name in sorted(found):
            pieces += [lines[row][end:start], name.encode()]
            end = stop
        lines[row] = b"".join(pieces + [lines[row][end:]])
    return "\n".join(line.decode("utf-8") for line in lines)


def _answer_lines(tree, names):
    """The line numbers inside the ``def`` of an answer (one of ``names``) in ``tree``."""
    return {row for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name in names
            for row in range(node.lineno, node.end_lineno + 1)}


def reference_uses(notebook, exercises):
    """The code cells that reach into minigraph's grading internals (where the reference
    answers live): ``[(cell number, what was found, names of the answers it defines)]``."""
    found = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        source = one_line_ending(cell.source)
        use = trick = None
        for _, text, tree in pieces(source):
            text = _without_learner_code(_without_comments(text), tree)
            code = _without_strings(text)
            use = use or GRADING_INTERNALS.search(code) or INTERNALS_IN_TEXT.search(text)
            trick = trick or IMPORT_TRICKS.search(code)
        if use is None:
            if trick:
                found.append((number, f"uses Python's import machinery ('{_trick_name(trick.group(0))}'), "
                              "which no exercise needs", []))
            continue
        why = f"uses minigraph's grading internals ('{shorten(use.group(0), 40)}')"
        names = [e.name for e in exercises if re.search(
            rf"^[ \t]*(def[ \t]+{e.name}\b|{e.name}[ \t]*=)", source, re.MULTILINE)]
        found.append((number, why, names))
    return found


def _trick_name(text):
    """The name of the tool in a match of ``IMPORT_TRICKS`` (``importlib`` for ``importlib.u``)."""
    text = re.sub(r"^(from|import)\s+", "", text).rstrip("( \t")
    return text if text.startswith("sys") else text.split(".")[0].strip()


def one_line_ending(source):
    """``source`` with ``\\n`` ending every line (Windows' ``\\r\\n``, old Macs' ``\\r``)."""
    return source.replace("\r\n", "\n").replace("\r", "\n")


def _without_learner_code(source, tree):
    """``source`` (of syntax ``tree``) with what a notebook may use of ``minigraph.grading``
    blanked out: the imports of its public API and of its tools, and the tools' names used
    through a module (``ch04.train_recipe``, ``minigraph.grading.tools.ch04.train_recipe``).
    Text that is not Python (``tree`` None: a shell command...) loses its import lines only."""
    if tree is None:
        return LEARNER_IMPORT.sub(_learner_import_line, source)
    allowed, tools_names = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _may_import_from(node):
            allowed.append(node)
            tools_names |= {a.asname or a.name for a in node.names
                            if node.module != GRADING or a.name == "tools"}
        elif isinstance(node, ast.Import) and all(TOOLS.fullmatch(a.name) or a.name == GRADING
                                                  for a in node.names):
            allowed.append(node)
            tools_names |= {a.asname for a in node.names if a.asname and a.name != GRADING}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (
                (isinstance(node.value, ast.Name) and node.value.id in tools_names)
                or TOOLS_ATTRIBUTE.fullmatch(_dotted(node) or "") or _public_call(node)):
            allowed.append(node)
        allowed += _looks_not_imports(node)
    return _blanked(source, allowed)


def _looks_not_imports(node):
    """The parts of ``node`` that look at Python's import system without importing anything:
    ``import importlib.util`` and ``importlib.util.find_spec`` (is a package installed?),
    ``sys.modules`` on the right of ``in`` (is a module loaded: ``"google.colab" in sys.modules``)."""
    if isinstance(node, ast.Import):
        return [a for a in node.names if a.name in ("importlib", "importlib.util") and not a.asname]
    if isinstance(node, ast.Attribute) and _dotted(node) == "importlib.util.find_spec":
        return [node]
    if isinstance(node, ast.Compare) and all(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
        return [c for c in node.comparators if _dotted(c) == "sys.modules"]
    return []


def _may_import_from(node):
    """Whether ``from M import names`` imports only what a notebook may (a star import from
    the package takes its ``__all__``: the public API)."""
    if node.module == GRADING:
        return all(a.name in PUBLIC_API or a.name in ("tools", "*") for a in node.names)
    return bool(TOOLS.fullmatch(node.module or ""))


def _public_call(node):
    """Whether ``node`` names the public API through the package: ``grading.check``,
    ``minigraph.grading.check``, ``mg.grading.progress``."""
    dotted = _dotted(node) or ""
    return node.attr in PUBLIC_API and re.fullmatch(r"(\w+\.)?grading\.\w+", dotted) is not None


def _dotted(node):
    """``a.b.c`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _replaced(source, nodes, word):
    """``source`` with the text of each of ``nodes`` (on one line each) replaced by ``word``
    padded with spaces (``ast`` positions count bytes of UTF-8 within a line)."""
    lines = [line.encode("utf-8") for line in source.split("\n")]
    for node in sorted(nodes, key=lambda n: (n.lineno, -n.col_offset)):
        row, start, end = node.lineno - 1, node.col_offset, node.end_col_offset
        lines[row] = lines[row][:start] + word.encode().ljust(end - start) + lines[row][end:]
    return "\n".join(line.decode("utf-8") for line in lines)


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


def _without_strings(source):
    """``source`` with its strings blanked out (quotes and text). An f-string's
    replacement fields are code, not text: they stay (``f"{relu.__code__}"``). Linear in the
    length of the source, however many strings a line holds."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):       # IPython syntax (%magic) and the like
        return re.sub(r"(['\"])[^'\"\n]*\1", r"\1\1", source)
    lines = source.splitlines(keepends=True)
    spans = {}                                       # line -> [(start, end, replacement)]
    for token in tokens:
        if token.type == tokenize.STRING:
            (row, start), (end_row, end) = token.start, token.end
            text = _string_blanked(token.string)
            offset = 0
            for number in range(row - 1, end_row):
                line = lines[number]
                left = start if number == row - 1 else 0
                right = end if number == end_row - 1 else len(line.rstrip("\n"))
                spans.setdefault(number, []).append((left, right, text[offset:offset + right - left]))
                offset += right - left + (len(line) - len(line.rstrip("\n")) if number != end_row - 1 else 0)
    for number, found in spans.items():
        line, pieces, end = lines[number], [], 0
        for left, right, text in sorted(found):
            pieces += [line[end:left], text.ljust(right - left)[:right - left]]
            end = right
        lines[number] = "".join(pieces) + line[end:]
    return "".join(lines)


def _string_blanked(literal):
    """A string literal's text with spaces for its characters (line breaks kept), except an
    f-string's replacement fields, which are code."""
    prefix = re.match(r"[A-Za-z]*", literal).group(0)
    blank = [c if c == "\n" else " " for c in literal]
    if "f" in prefix.lower():
        depth, i = 0, len(prefix)
        while i < len(literal):
            char = literal[i]
            if depth == 0 and literal.startswith(("{{", "}}"), i):
                i += 2
                continue
            if char == "{":
                depth += 1
            elif char == "}" and depth:
                depth -= 1
            elif depth:
                blank[i] = char
            i += 1
    return "".join(blank)


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
