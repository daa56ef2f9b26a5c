"""Grade notebooks from a shell or CI: ``python -m minigraph.grading PATH...``.

    python -m minigraph.grading submissions/                     # every .ipynb below it
    python -m minigraph.grading a/00_warmup.ipynb b/00_warmup.ipynb --jobs 2 \\
        --json grades.json --junit grades.xml

Each notebook runs in a fresh kernel on a copy in a temporary folder (the file itself is never
modified) and is graded against the chapter its name starts with (``00_warmup.ipynb`` ->
chapter 00) or ``--chapter``. A table per notebook goes to stdout.

Exit status:
    0  grading completed, whatever the scores (a notebook that is broken, loops or crashes
       is graded, with a message, and still gives 0)
    2  grading could not run: bad arguments, a path that does not exist, no notebooks found,
       an unknown chapter, no such Jupyter kernel, or a report file that cannot be written
"""

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET

from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

from . import registry
from .grader import Settings, find_notebooks, grade_all
from .report import points, score_text

EXIT_OK, EXIT_CANNOT_RUN = 0, 2


class CannotRun(Exception):
    """Grading cannot start (or its report cannot be written): exit status 2."""


def parse_args(argv):
    doc = __doc__.split("\n\n")
    parser = argparse.ArgumentParser(
        prog="python -m minigraph.grading", description=doc[0],
        epilog="\n\n".join(doc[1:]), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="notebooks, or folders to search for them")
    parser.add_argument("--cell-timeout", type=float, default=60.0, metavar="S",
                        help="seconds one cell may run before it is interrupted (default 60)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S",
                        help="seconds a whole notebook may run before it is stopped (default 600)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="grade N notebooks at the same time (default 1)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one test per exercise)")
    parser.add_argument("--chapter", metavar="NN", help="grade every notebook as chapter NN "
                        "(default: the NN_ prefix of each file name)")
    parser.add_argument("--kernel", default="python3", metavar="NAME",
                        help="Jupyter kernel to run the notebooks in (default python3)")
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.cell_timeout <= 0 or args.timeout <= 0:
        parser.error("--jobs, --cell-timeout and --timeout must be positive")
    return args


def main(argv=None):
    args = parse_args(argv)                     # a usage error exits with 2 (argparse)
    try:
        settings, notebooks = _prepare(args)
        results = grade_all(notebooks, settings, args.jobs)
        print("\n\n".join(submission_text(r) for r in results))
        print(f"\n{_summary(results)}")
        if args.json:
            _write(args.json, json.dumps(to_json(results, settings), indent=2) + "\n")
        if args.junit:
            _write(args.junit, to_junit(results))
    except CannotRun as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    return EXIT_OK


def _prepare(args):
    if args.chapter:
        try:
            registry.exercises(args.chapter)
        except registry.UnknownExercise as error:
            raise CannotRun(str(error)) from None
    try:
        KernelSpecManager().get_kernel_spec(args.kernel)
    except NoSuchKernel:
        raise CannotRun(f"no Jupyter kernel named '{args.kernel}' (is ipykernel installed?)") from None
    try:
        notebooks = find_notebooks(args.paths)
    except FileNotFoundError as error:
        raise CannotRun(str(error)) from None
    if not notebooks:
        raise CannotRun("no notebooks (.ipynb) found in " + ", ".join(args.paths))
    return Settings(args.cell_timeout, args.timeout, args.kernel, args.chapter), notebooks


def _write(path, text):
    try:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:
        raise CannotRun(f"cannot write {path}: {error}") from None


# -- reports --------------------------------------------------------------------------------

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
    return "\n".join(lines)


def _summary(results):
    failed = sum(r.status == "error" for r in results)
    return (f"graded {len(results)} notebook{'s' if len(results) != 1 else ''}"
            + (f" ({failed} could not be run)" if failed else ""))


def to_json(results, settings):
    """Plain data for learning platforms: settings, then one entry per submission."""
    return {"grader": "minigraph.grading", "format": 1,
            "settings": {"cell_timeout": settings.cell_timeout, "timeout": settings.timeout,
                         "kernel": settings.kernel, "chapter": settings.chapter},
            "submissions": [r.to_dict() for r in results]}


def to_junit(results):
    """JUnit XML: a test suite per notebook, a test case per exercise (failed unless passed)."""
    suites = ET.Element("testsuites", name="minigraph grading")
    for result in results:
        suite = ET.SubElement(suites, "testsuite", name=result.path)
        props = ET.SubElement(suite, "properties")
        for key in ("chapter", "score", "max_score"):
            ET.SubElement(props, "property", name=key, value=str(getattr(result, key)))
        counts = {"failures": 0, "errors": 0}
        if result.status == "error":
            case = ET.SubElement(suite, "testcase", classname=result.path, name="notebook")
            ET.SubElement(case, "error", message=_xml(result.message))
            counts["errors"] += 1
        for e in result.exercises if result.status == "graded" else []:
            case = ET.SubElement(suite, "testcase", classname=result.path, name=e.id)
            ET.SubElement(case, "system-out").text = _xml(f"{score_text(e.score, e.points)}: {e.message}")
            if e.status != "passed":
                kind = "error" if e.status == "error" else "failure"
                ET.SubElement(case, kind, message=_xml(e.message))
                counts["errors" if kind == "error" else "failures"] += 1
        if result.notes:
            ET.SubElement(suite, "system-out").text = _xml("\n".join(result.notes))
        suite.set("tests", str(len(suite.findall("testcase"))))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", str(counts["errors"]))
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _xml(text):
    """Drop the control characters XML 1.0 cannot hold (a submission's error may contain any)."""
    return re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", "", text)
