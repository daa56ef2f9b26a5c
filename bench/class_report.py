"""A class of synthetic students, graded and then reported: how long each part takes.

    .venv/bin/python bench/class_report.py [--students 300] [--chapter 00] [--jobs 2]
    .venv/bin/python bench/class_report.py --students 300 --report-only

Writes ``--students`` notebooks of chapter ``--chapter`` (``tests/grading/synthetic_class.py``:
each stub replaced by a right or a typical wrong answer from ``tests/grading/exercise_answers``,
mixed by a seed, one student in ten a disguised copier), grades them with the batch grader
(``--jobs``, in sandboxes, ``--json``), then makes the class report from the JSON alone
(``python -m minigraph.grading report``, with the CSV, the JSON numbers and the feedback
pages). Prints the seconds of each part and the load average of the machine before and after:
grading is a kernel per notebook, so it scales with the class; the report is seconds.

``--report-only`` skips the kernels: the JSON report is made in this process (each answer run
on its cases and judged here, ``synthetic_class.graded_here``, as the grader's report would
hold it), and only the report is timed -- the report's cost for a class too large to grade now.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "grading"))

import synthetic_class as synthetic  # noqa: E402  (shared with tests/grading/test_classreport.py)


def timed(argv, cwd):
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-P", "-m", "minigraph.grading", *map(str, argv)], cwd=cwd,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, argv))}\n{proc.stderr[-3000:]}")
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--chapter", default="00")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--report-only", action="store_true",
                        help="make the JSON report here, without kernels, and time only the report")
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="mg-class-") as folder:
        folder = Path(folder)
        students = synthetic.plan(args.chapter, args.students, args.seed, copiers=max(1, args.students // 10))
        if args.report_only:
            start = time.perf_counter()
            synthetic.write_report(folder / "grades.json", args.chapter, students)
            graded = time.perf_counter() - start
        else:
            synthetic.write_class(folder / "submissions", args.chapter, students)
            graded = timed([folder / "submissions", "--jobs", args.jobs, "--json", folder / "grades.json"], folder)
        reported = timed(["report", folder / "grades.json", "--out", folder / "class-report.html",
                          "--csv", folder / "exercises.csv", "--json", folder / "class.json",
                          "--feedback", folder / "feedback"], folder)
    n = args.students
    print(f"chapter {args.chapter}, {n} students, --jobs {args.jobs} "
          f"(load average {load[0]:.1f} before, {os.getloadavg()[0]:.1f} after, {os.cpu_count()} cores)")
    how = "judged in this process, no kernel" if args.report_only else "a notebook"
    print(f"  grading: {graded:7.1f} s  ({graded / n:.2f} s {how})")
    print(f"  report:  {reported:7.1f} s  (from the JSON: page, CSV, JSON, {n} feedback pages, similarity)")


if __name__ == "__main__":
    main()
