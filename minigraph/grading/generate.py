"""Make exercise notebooks from solution notebooks.

    python -m minigraph.grading.generate solutions exercises          # (re)write exercises/
    python -m minigraph.grading.generate solutions exercises --check  # exit 1 if out of date

``solutions/NN_topic.ipynb`` is the source of truth; ``exercises/NN_topic_exercises.ipynb`` is
what learners get (``exercise_name``). Lines that are exactly these markers (spaces around
them allowed) delimit regions:

    ### BEGIN SOLUTION       ... ### END SOLUTION       the worked answer
    ### BEGIN HIDDEN TESTS   ... ### END HIDDEN TESTS   the author's own asserts

Every exercise notebook must run top to bottom without an error, so a solution region becomes
a stub that does not fail when its cell runs:

* inside a function body: ``raise NotImplementedError("...")`` at the region's indentation
  (it raises only when the function is called, and ``check`` reports "not done yet");
* at the top level of a cell: the region may only assign answers (``answer = ...``), and each
  assignment becomes ``answer = None  # YOUR ANSWER HERE`` (``check`` treats None as not done).
  Any other top-level code is an error: put it inside a function;
* in a markdown cell: the line ``_Write your answer here._``.

Hidden-test regions disappear (with their cell, if nothing else is left in it). Outputs and
execution counts are stripped. Regions cannot nest, every BEGIN needs its END, and a line that
looks like a marker but is not exactly one is an error (a typo must never leak a solution);
each error names the notebook, the cell (counting from 1) and the line.
"""

import argparse
import ast
import copy
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

MARKERS = {
    "### BEGIN SOLUTION": ("begin", "SOLUTION"),
    "### END SOLUTION": ("end", "SOLUTION"),
    "### BEGIN HIDDEN TESTS": ("begin", "HIDDEN TESTS"),
    "### END HIDDEN TESTS": ("end", "HIDDEN TESTS"),
}
CODE_STUB = 'raise NotImplementedError("Replace this line with your solution.")'
ANSWER_STUB = "{} = None  # YOUR ANSWER HERE"
MARKDOWN_STUB = "_Write your answer here._"


class MarkerError(ValueError):
    """A solution notebook whose markers cannot be turned into an exercise."""


@dataclass
class Region:
    kind: str        # "SOLUTION" or "HIDDEN TESTS"
    begin: int       # line index of the BEGIN marker
    end: int         # line index of the END marker
    indent: str      # the BEGIN marker's indentation


# -- finding regions ------------------------------------------------------------------------

def find_regions(lines, where):
    """The regions of one cell, in order; ``where`` ("nb.ipynb, cell 3") prefixes errors."""
    regions, opened = [], None
    for i, line in enumerate(lines):
        marker = _marker(line, f"{where}, line {i + 1}")
        if marker is None:
            continue
        action, kind = marker
        text = line.strip()
        if action == "begin":
            if opened:
                raise MarkerError(f"{where}, line {i + 1}: '{text}' inside the {opened.kind} region "
                                  f"opened on line {opened.begin + 1}; regions cannot be nested")
            opened = Region(kind, i, -1, line[:len(line) - len(line.lstrip())])
        elif opened is None:
            raise MarkerError(f"{where}, line {i + 1}: '{text}' has no '### BEGIN {kind}' before it")
        elif opened.kind != kind:
            raise MarkerError(f"{where}, line {i + 1}: '{text}' cannot close the {opened.kind} region "
                              f"opened on line {opened.begin + 1}; expected '### END {opened.kind}'")
        else:
            opened.end = i
            regions.append(opened)
            opened = None
    if opened:
        raise MarkerError(f"{where}, line {opened.begin + 1}: '### BEGIN {opened.kind}' is never "
                          f"closed; add '### END {opened.kind}' in the same cell")
    return regions


def _marker(line, where):
    """("begin" | "end", kind) for a marker line, None for other lines; error for near-misses."""
    text = line.strip()
    if text in MARKERS:
        return MARKERS[text]
    if text.startswith("#") and any(phrase in text.upper() for phrase in
                                    ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN", "END HIDDEN")):
        raise MarkerError(f"{where}: '{text}' looks like a marker but is not exactly one of: "
                          + ", ".join(f"'{m}'" for m in MARKERS))
    return None


# -- stubs ----------------------------------------------------------------------------------

def code_stub(lines, region, where):
    """The lines that replace a solution region in a code cell (see the module docstring)."""
    if region.indent:
        _require_function_body(lines, region, where)
        return [region.indent + CODE_STUB]
    body = "\n".join(lines[region.begin + 1:region.end])
    try:
        statements = ast.parse(body).body
    except SyntaxError as error:
        raise MarkerError(f"{where}: the solution region is not valid Python ({error.msg})") from None
    names = []
    for statement in statements:
        targets = (statement.targets if isinstance(statement, ast.Assign)
                   else [statement.target] if isinstance(statement, ast.AnnAssign) else [])
        if not targets or not all(isinstance(t, ast.Name) for t in targets):
            line = region.begin + 1 + statement.lineno
            raise MarkerError(
                f"{where}, line {line}: a solution region outside a function may only assign "
                f"answers (`answer = ...`), which become `answer = None`; found "
                f"`{ast.unparse(statement).splitlines()[0]}`. Put this code inside a function.")
        names += [t.id for t in targets if t.id not in names]
    return [ANSWER_STUB.format(name) for name in names]


def _require_function_body(lines, region, where):
    """An indented region must sit in a function body, where a ``raise`` waits for a call."""
    source = "\n".join(_without_magics(lines))
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise MarkerError(f"{where}: the cell is not valid Python ({error.msg}, line {error.lineno})") from None
    line = region.begin + 1
    if not any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and node.lineno < line <= node.end_lineno for node in ast.walk(tree)):
        raise MarkerError(f"{where}, line {line}: an indented solution region must be inside a "
                          f"function body (elsewhere its `raise NotImplementedError` would run "
                          f"with the cell)")


def _without_magics(lines):
    """IPython's ``%magic`` and ``!shell`` lines as ``pass``, so ``ast`` can parse the cell."""
    return [line[:len(line) - len(line.lstrip())] + "pass" if line.lstrip()[:1] in ("%", "!")
            else line for line in lines]


# -- cells and notebooks --------------------------------------------------------------------

def exercise_source(source, cell_type, where):
    """A cell's source with every region replaced (solutions) or removed (hidden tests)."""
    lines = source.split("\n")
    out, start = [], 0
    for region in find_regions(lines, where):
        out += lines[start:region.begin]
        if region.kind == "SOLUTION":
            out += code_stub(lines, region, where) if cell_type == "code" else [MARKDOWN_STUB]
        start = region.end + 1
    return "\n".join(out + lines[start:])


# The kernelspec JupyterLab writes when it saves a notebook run by ipykernel's default kernel.
# Stored as it is, a notebook opens unmodified; any other display name ("Python 3") makes
# JupyterLab rewrite it on open and mark the notebook as changed.
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def exercise_notebook(solution, name):
    """The exercise version of a solution notebook (a new notebook; ``solution`` is untouched),
    with the kernelspec JupyterLab writes."""
    exercise = copy.deepcopy(solution)
    exercise.metadata["kernelspec"] = dict(KERNELSPEC)
    cells = []
    for number, cell in enumerate(exercise.cells, start=1):
        if cell.cell_type in ("code", "markdown"):
            source = exercise_source(cell.source, cell.cell_type, f"{name}, cell {number}")
            if not source.strip() and cell.source.strip():
                continue                       # the cell held nothing but hidden tests
            cell.source = source
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
        cells.append(cell)
    exercise.cells = cells
    return exercise


def render(solution_path):
    """The exact text of the exercise notebook made from ``solution_path``."""
    solution = nbformat.read(solution_path, as_version=4)
    text = nbformat.writes(exercise_notebook(solution, str(solution_path)))
    return text if text.endswith("\n") else text + "\n"


def solution_notebooks(folder):
    return sorted(p for p in Path(folder).glob("*.ipynb"))


def exercise_name(solution_name):
    """The file name of the exercise notebook made from ``solution_name``:
    ``03_backpropagation.ipynb`` -> ``03_backpropagation_exercises.ipynb``. The suffix keeps a
    chapter (``chapters/03_backpropagation.ipynb``) and its exercises from showing as two tabs
    of one name in JupyterLab."""
    path = Path(solution_name)
    return f"{path.stem}_exercises{path.suffix}"


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m minigraph.grading.generate",
        description="Make exercise notebooks from solution notebooks (see the module docstring).")
    parser.add_argument("solutions", type=Path, help="folder of solution notebooks")
    parser.add_argument("exercises", type=Path, help="folder to write the exercise notebooks to")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if an exercise notebook is missing or out of date")
    args = parser.parse_args(argv)
    stale = []
    try:
        for path in solution_notebooks(args.solutions):
            target, text = args.exercises / exercise_name(path.name), render(path)
            if target.exists() and target.read_text(encoding="utf-8") == text:
                continue
            stale.append(target)
            if not args.check:
                args.exercises.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                print(f"wrote {target}")
    except MarkerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.check and stale:
        print("out of date (run `make exercises`): " + ", ".join(map(str, stale)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
