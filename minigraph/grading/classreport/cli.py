"""``python -P -m minigraph.grading report REPORT.json... --out class-report.html``: the class
report, from the grader's JSON reports (``--json``) alone; several are merged (a notebook
graded again in a later report replaces its earlier entry: give them oldest first).

    python -P -m minigraph.grading report run1.json run2.json --out class-report.html \\
        --csv exercises.csv --json class.json --feedback feedback/

--csv writes a row per exercise (points, full marks, mean, named mistakes with counts),
--json every number of the page (per exercise, the gradebooks, the similarity flags), and
--feedback a page per student to send back (FOLDER/<student>.html). Progress goes to stderr.

Exit status: 0 the report was written; 2 it could not be (a report unreadable or not the
grader's, a file that cannot be written, copydetect missing without --no-similarity).
"""

import argparse
import csv
import io
import json
import sys
import time
from pathlib import Path

from ...progress import Progress, stream_display
from ..batch.files import display_name, write_atomically
from ..batch.gradebook import spreadsheet_cell
from ..toolkit.report import points
from . import feedback, page, similarity
from .load import BadReport, read_reports
from .tally import exercise_stats, gradebook

EXIT_OK, EXIT_CANNOT_RUN = 0, 2


def parse_args(argv):
    doc = __doc__.split("\n\n")
    parser = argparse.ArgumentParser(prog="python -P -m minigraph.grading report", description=doc[0],
                                     epilog="\n\n".join(doc[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="JSON reports written by --json")
    parser.add_argument("--out", default="class-report.html", metavar="FILE",
                        help="the HTML page (default class-report.html)")
    parser.add_argument("--csv", metavar="FILE", help="also write a row per exercise as CSV")
    parser.add_argument("--json", metavar="FILE", help="also write every number as JSON")
    parser.add_argument("--feedback", metavar="FOLDER", help="also write a page per student there")
    parser.add_argument("--no-similarity", action="store_true",
                        help="leave out the similarity flags (no copydetect needed)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        submissions = read_reports(args.reports)
        write(submissions, [display_name(r) for r in args.reports], args.out, csv_path=args.csv,
              json_path=args.json, feedback_dir=args.feedback, compare=not args.no_similarity)
    except (BadReport, ImportError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    except OSError as error:
        print(f"error: cannot write the report: {error}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    print(f"class report: {args.out} ({len({s.student for s in submissions})} students, "
          f"{len(submissions)} notebooks)")
    return EXIT_OK


def write(submissions, reports, out, csv_path=None, json_path=None, feedback_dir=None, compare=True,
          stream=None):
    """Make the class report of ``submissions`` (``load.Submission``) and write its files."""
    students = sorted({s.student for s in submissions})
    compared = {a for s in submissions for a in s.result.answers} if compare else set()
    bar = Progress(1 + len(compared) + (len(students) if feedback_dir else 0),
                   label="class report", rate_unit="steps", every=0.5,
                   display=stream_display(stream), clock=time.perf_counter)
    stats = exercise_stats(submissions)
    books = gradebook(submissions, stats)
    bar.update()
    found = []
    if compare:
        engine = similarity.Engine()
        found = similarity.flags(submissions, engine, on_exercise=lambda: bar.update(step="similarity"))
    write_atomically(out, page.class_page(submissions, stats, books, found, reports))
    if csv_path:
        write_atomically(csv_path, to_csv(stats))
    if json_path:
        write_atomically(json_path, json.dumps(to_json(stats, books, found), indent=1) + "\n")
    if feedback_dir:
        folder = Path(feedback_dir)
        folder.mkdir(parents=True, exist_ok=True)
        names = {}
        for student in students:
            name = feedback.file_name(student)
            names[name] = names.get(name, 0) + 1
            if names[name] > 1:                           # two students' names alike once made safe
                name = name[:-5] + f"-{names[name]}.html"
            own = [s for s in submissions if s.student == student]
            write_atomically(folder / name, feedback.student_page(student, own))
            bar.update(step="feedback")
    bar.close()
    return stats, books, found


def to_csv(stats):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["exercise", "chapter", "points", "students", "full_marks", "full_share",
                     "mean_share", "mistakes", "hidden_case_most_failed", "hidden_case_failed_by"])
    for s in stats.values():
        writer.writerow([s.id, s.chapter, points(s.points), len(s.scores),
                         sum(v >= s.points for v in s.scores.values()), f"{s.full_share:.4f}",
                         f"{s.mean_share:.4f}",
                         spreadsheet_cell("; ".join(f"{m}: {len(who)}" for m, who in s.mistakes.items())),
                         spreadsheet_cell(s.hidden_failed[0]) if s.hidden_failed else "",
                         len(s.hidden_failed[1]) if s.hidden_failed else ""])
    return out.getvalue()


def to_json(stats, books, found):
    return {"exercises": [s.to_dict() for s in stats.values()],
            "gradebooks": {chapter: {"exercises": book["exercises"],
                                     "rows": [{"student": r[0], "scores": r[1], "total": r[2],
                                               "max_score": r[3], "flags": r[4]} for r in book["rows"]]}
                           for chapter, book in books.items()},
            "similarity": {"thresholds": {"pair": similarity.PAIR_SIMILARITY,
                                          "engine": similarity.ENGINE_SIMILARITY,
                                          "min_tokens": similarity.MIN_TOKENS,
                                          "k": similarity.NOISE, "window": similarity.WINDOW},
                           "flags": [f.to_dict() for f in found]}}
