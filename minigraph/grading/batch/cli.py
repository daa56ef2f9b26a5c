"""Grade notebooks from a shell or CI: ``python -P -m minigraph.grading PATH...``.

    python -P -m minigraph.grading submissions/                  # every .ipynb below it
    python -P -m minigraph.grading a/00_warmup_exercises.ipynb b/00_warmup_exercises.ipynb \\
        --jobs 2 --json grades.json --junit grades.xml --csv gradebook.csv

``--class-report FILE`` also writes the instructor's view of the class at the end (points,
typical mistakes, similarity flags: ``python -m minigraph.grading report --help``).

``-P`` keeps the working folder off Python's module path: started inside a folder a student
controls, a ``minigraph/`` there would otherwise be the grader. The grader refuses to run when
a folder it imports from lies in what it grades.

Each notebook runs in a fresh kernel of the grader's own (kernel.py: one fixed command line,
no configuration the notebook can write, an audit hook watching what runs: watch.py), in a
sandbox of its own (bubblewrap: no network, no
other files, no secrets, limited memory, processes and time; see sandbox.py), on a copy of
the file (the file itself is never modified). It is graded against the chapter its name
starts with (``00_warmup_exercises.ipynb`` -> chapter 00) or ``--chapter``. A table per
notebook goes to stdout; the reports are rewritten as each result comes in (JSON "complete":
false until the end), each in one atomic step. A progress bar goes to stderr: notebooks done,
how many were flagged for review or could not be run, the time elapsed and left (one line per
result where stderr is no terminal, as in CI).

Regrading. Each submission's hidden cases are drawn from a secret seed, drawn afresh for it
and recorded in the JSON report ("seed"). To answer "my grade is wrong", run that grading
again: --seeds-from grades.json gives each notebook the seed recorded for it (matched by
path: name the notebooks as that run did, from the same folder; a notebook the report does
not hold stops everything before anything runs, one it holds without a seed never ran and
draws a fresh one; a file whose content is not what the report graded -- its SHA-256 is
recorded -- gets a fresh seed, and its report says so), and --seed N gives every notebook N. The verdicts are then those of the
first run, hidden case for hidden case, and the report says the seeds were given. Use them
only to regrade, never for a first grading: a seed learners could know before they submit
makes the hidden cases computable in advance, and then they are worth no more than the
public ones.

Without bubblewrap (or where it cannot create namespaces) the grader refuses to run, unless
``--no-sandbox`` is given: then the submissions' code runs as you, with your files, and the
report says so. Only do that for code you trust, or inside a container per submission. As
root (a container per submission, as on Gradescope), ``--no-sandbox`` still runs each notebook
as a user of its own with no rights, and kills all of that user's processes before writing
any report.

Exit status:
    0  grading completed, whatever the scores (a notebook that is broken, loops, crashes or
       attacks the grader is graded, with a message, and still gives 0)
    2  grading could not run: bad arguments, a path that does not exist or is a link to a
       folder, no notebooks found, an unknown chapter, no sandbox
       (and no --no-sandbox), a report file that cannot be written, or a --seeds-from
       report that cannot be read or holds no seed for a notebook
"""

import argparse
import json
import os
import sys
import time


from ...progress import Progress, stream_display
from ..toolkit import registry
from ..toolkit.values import shorten
from . import cgroup, sandbox
from .files import Unreadable, display_name, read_untrusted, write_atomically
from .gradebook import (for_learners, recorded_seeds, submission_text, summary, tally, to_csv,
                        to_gradescope, to_json, to_junit)
from .grader import Settings, find_notebooks, grade_all

EXIT_OK, EXIT_CANNOT_RUN = 0, 2
MAX_SEED_DIGITS = 20            # a seed is drawn below 2**62
MAX_REPORT = 50_000_000         # bytes of a --seeds-from report


class CannotRun(Exception):
    """Grading cannot start (or its report cannot be written): exit status 2."""


def seed_number(text):
    """The value of ``--seed``: a whole number, 0 or more, as a report's "seed" holds."""
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_SEED_DIGITS:
        raise argparse.ArgumentTypeError(f"'{shorten(display_name(text), 40)}' is not a seed: give the whole number (0 or "
                                         "more) a JSON report recorded as a submission's \"seed\"")
    return int(text)


def parse_args(argv):
    doc = __doc__.split("\n\n")
    parser = argparse.ArgumentParser(
        prog="python -P -m minigraph.grading", description=doc[0],
        epilog="\n\n".join(doc[1:]), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="notebooks, or folders to search for them")
    parser.add_argument("--cell-timeout", type=float, default=60.0, metavar="S",
                        help="seconds of CPU time one cell may use before it is interrupted (default 60; "
                             "a cell that waits without computing is stopped after ten times as long, "
                             "or a quarter of --timeout if that comes first)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S",
                        help="seconds a whole notebook may run before it is stopped (default 600)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="grade N notebooks at the same time (default 1)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one test per exercise)")
    parser.add_argument("--csv", metavar="FILE", help="also write a CSV gradebook (a row per "
                        "submission, a column per exercise, then the total)")
    parser.add_argument("--gradescope", metavar="FILE", help="also write Gradescope's results.json "
                        "(for exactly one notebook)")
    parser.add_argument("--class-report", metavar="FILE",
                        help="also write the class report (HTML) at the end: what `python -m "
                             "minigraph.grading report` makes from the JSON report (see there)")
    parser.add_argument("--learners", action="store_true",
                        help="print and write only what learners may see (for a run whose output "
                             "they can read, as in GitHub Classroom): scores and messages, no seeds, "
                             "no flags, no hidden case's inputs or expected values")
    parser.add_argument("--chapter", metavar="NN", help="grade every notebook as chapter NN "
                        "(default: the NN_ prefix of each file name)")
    parser.add_argument("--memory", type=int, default=sandbox.Limits.memory_mb, metavar="MB",
                        help=f"memory (address space) of each process of a submission, and as root "
                             f"of all its processes together (default {sandbox.Limits.memory_mb})")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run submissions without a sandbox (only for code you trust)")
    regrade = parser.add_mutually_exclusive_group()
    regrade.add_argument("--seeds-from", metavar="REPORT",
                         help="regrade: draw each notebook's hidden cases from the seed the JSON "
                              "report REPORT of an earlier run recorded for it (matched by path)")
    regrade.add_argument("--seed", type=seed_number, metavar="N",
                         help="regrade: draw every notebook's hidden cases from N, a seed a "
                              "report recorded. Only to regrade, never for a first grading: a "
                              "seed learners could know makes the hidden cases computable in advance")
    args = parser.parse_args(argv)
    if min(args.jobs, args.cell_timeout, args.timeout, args.memory) <= 0:
        parser.error("--jobs, --cell-timeout, --timeout and --memory must be positive")
    return args


def main(argv=None):
    args = parse_args(argv)                     # a usage error exits with 2 (argparse)
    try:
        settings, notebooks, seeds = _prepare(args)
        results = [None] * len(notebooks)
        bar = progress_bar(len(notebooks))

        shown = for_learners if args.learners else (lambda result: result)

        def save(index, result):                # as each result comes in: nothing is lost
            results[index] = shown(result)
            bar.update(**tally(r for r in results if r is not None))
            try:
                _write_reports(args, settings, [r for r in results if r is not None], complete=False)
            except CannotRun as error:          # the final write will say it again
                print(f"warning: {error}", file=sys.stderr)

        results = [shown(r) for r in grade_all(notebooks, settings, args.jobs, on_result=save, seeds=seeds)]
        bar.close()
        print("\n\n".join(submission_text(r) for r in results))
        print(f"\n{summary(results, settings.sandbox, cgroup.available())}")
        _write_reports(args, settings, results, complete=True)
        if args.class_report:
            _class_report(args, results)
    except CannotRun as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    return EXIT_OK


def progress_bar(total, stream=None, clock=time.perf_counter):
    """The bar of a grading run, on ``stream`` (stderr): redrawn in place on a terminal, a line
    per result anywhere else (a CI log). ``update(**tally(results))`` after each result."""
    return Progress(total, label="grading", rate_unit="notebooks", every=0,
                    display=stream_display(stream), clock=clock)


def _prepare(args):
    if args.chapter:
        try:
            registry.exercises(args.chapter)
        except registry.UnknownExercise as error:
            raise CannotRun(str(error)) from None
    try:
        notebooks = find_notebooks(args.paths)
    except (FileNotFoundError, ValueError) as error:
        raise CannotRun(str(error)) from None
    if not notebooks:
        raise CannotRun("no notebooks (.ipynb) found in " + ", ".join(map(display_name, args.paths)))
    if args.gradescope and len(notebooks) != 1:
        raise CannotRun(f"--gradescope grades exactly one notebook; found {len(notebooks)}")
    _own_code_only(args.paths)
    seeds = _seeds(args, notebooks)
    if not args.no_sandbox and sandbox.sandbox_reason():
        raise CannotRun(f"no sandbox for the submissions: {sandbox.sandbox_reason()}. "
                        "Install bubblewrap, or pass --no-sandbox to run them without one "
                        + ("(as root, each notebook then runs as a user of its own with no rights)"
                           if os.geteuid() == 0 else
                           "(only for code you trust: it runs as you, with your files)"))
    if args.no_sandbox and sandbox.unprivileged_reason():
        raise CannotRun(f"cannot grade without a sandbox as root: {sandbox.unprivileged_reason()}")
    limits = sandbox.Limits(memory_mb=args.memory,
                            cpu_seconds=int(args.timeout) + 60)
    settings = Settings(args.cell_timeout, args.timeout, args.chapter,
                        sandbox=not args.no_sandbox, limits=limits)
    _write_reports(args, settings, [], complete=False)        # fail now if a report cannot be written
    return settings, notebooks, seeds


def _own_code_only(paths):
    """Refuse to grade where a submission's files could be the grader's own code (a notebook
    named alone stands for its folder).

    ``python -m`` puts the working folder first on ``sys.path``: started inside a student's
    repository, a ``minigraph/`` (or ``numpy/``) folder there *is* the grader, with its rights.
    So no folder Python imports from (nor the package itself) may lie in what is graded; start
    the grader from another folder, with ``python -P`` (or ``-I``), which leaves it off.
    """
    graded = [os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path) or os.curdir)
              for path in paths]                    # a notebook's folder is the learner's too
    def inside(folder):
        return any(folder == g or folder.startswith(g.rstrip(os.sep) + os.sep) for g in graded)
    imported = [os.path.realpath(entry or os.curdir) for entry in sys.path]
    found = [p for p in [str(sandbox.PACKAGE), *imported] if os.path.isdir(p) and inside(p)]
    if found:
        raise CannotRun(f"Python imports code from {display_name(found[0])}, which is inside what "
                        "is being graded: a submission's minigraph/ there would be the grader. "
                        "Start it with python -P -m minigraph.grading (-P: the working folder is not "
                        "searched for modules), from a folder outside the submissions")


def _seeds(args, notebooks):
    """The seed of each notebook's hidden cases when regrading (``--seed``, ``--seeds-from``);
    None to draw fresh ones."""
    if args.seed is not None:
        return [args.seed] * len(notebooks)
    if not args.seeds_from:
        return None
    try:           # a regular file of bounded size: not /dev/zero, not a FIFO that never answers
        recorded = recorded_seeds(read_untrusted(args.seeds_from, MAX_REPORT).decode("utf-8"))
    except Unreadable as error:
        raise CannotRun(f"cannot read --seeds-from {display_name(args.seeds_from)}: it is {error}") from None
    except UnicodeDecodeError as error:
        raise CannotRun(f"cannot read --seeds-from {display_name(args.seeds_from)}: {error}") from None
    except ValueError as error:
        raise CannotRun(f"--seeds-from {display_name(args.seeds_from)} cannot be used: {error}") from None
    names = [display_name(path) for path in notebooks]
    unknown = [name for name in names if name not in recorded]
    if unknown:
        shown = ", ".join(unknown[:3]) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
        example = f" (it names them like {next(iter(recorded))})" if recorded else ""
        raise CannotRun(f"--seeds-from {display_name(args.seeds_from)} has no seed for {shown}: "
                        f"regrade only notebooks it graded, named as that run named them, from "
                        f"the same folder{example}")
    return [recorded[name] for name in names]


def _class_report(args, results):
    """The class report of this run (``classreport``), from its results as the JSON has them."""
    from ..classreport.cli import write
    from ..classreport.load import Submission, student_of
    try:
        write([Submission(student_of(r.path), r) for r in results], [args.json or "this run"],
              args.class_report)
    except (ImportError, OSError) as error:
        raise CannotRun(f"cannot write the class report {args.class_report}: {error}") from None


def _write_reports(args, settings, results, complete):
    exercise_ids = list(dict.fromkeys(e.id for r in results for e in r.exercises))
    reports = [(args.json, lambda: json.dumps(to_json(results, settings, complete), indent=2) + "\n"),
               (args.junit, lambda: to_junit(results)),
               (args.csv, lambda: to_csv(results, exercise_ids)),
               (args.gradescope, lambda: json.dumps(to_gradescope(results, settings.sandbox), indent=2) + "\n")]
    for path, text in reports:
        if path and (complete or path != args.gradescope):
            try:
                write_atomically(path, text())
            except OSError as error:
                raise CannotRun(f"cannot write {path}: {error}") from None
