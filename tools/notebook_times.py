"""Each course notebook's CPU time in `make test`, against its budget.

    python tools/notebook_times.py build/test-reports/notebooks-cpu.jsonl build/test-reports/exercises-cpu.jsonl

nbval's runs record, as each notebook ends, the CPU time its kernel used (``tests/nbval_kernels.py``,
``--notebook-cpu-times``: a JSON line per notebook). This adds them up per notebook and prints a
table, slowest first, with the notebook's budget: the CPU seconds "Run All" may take. CPU time,
not the time on the wall, so that a machine busy with other programs does not fail the run; and
with one BLAS thread (the strict notebooks' second run, the exercises' only one), since with two
OpenBLAS's threads spin while they wait, and a busy machine doubled a chapter's CPU time
(chapter 09: 17.8 s, then 32.2 s beside a heavier neighbour; 11.3–14.5 s in three runs with one).
The budgets keep the whole of `make test` under CI's 15 minutes; a chapter that needs longer
work (training a model) moves it to a command that writes a checkpoint, which the chapter loads.

A notebook over its budget is reported; one over twice its budget fails (exit 1), since that
is a change of the notebook, not a busy machine. A notebook with no budget fails too: give it one.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

# CPU seconds of a notebook's kernel under nbval (chapters and solutions strict, exercises lax).
BUDGETS = {   # about twice what each chapter used on a 2-core AMD EPYC (numpy's OpenBLAS, one thread)
    "00": 5, "01": 5, "02": 5, "03": 5, "04": 10, "05": 10,
    "06": 20, "07": 30, "08": 10, "09": 30, "10": 10, "11": 20,
}
HARD_LIMIT = 2            # a notebook over HARD_LIMIT x its budget fails the run


def notebook_times(paths):
    """{notebook path: CPU seconds} from the JSON lines nbval's pytest runs wrote."""
    times = defaultdict(float)
    for path in paths:
        if not Path(path).exists():
            continue
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                times[record["notebook"]] += float(record["cpu"])
    return dict(times)


def budget_of(notebook):
    return BUDGETS.get(Path(notebook).name[:2])


def main(argv):
    times = notebook_times(argv)
    if not times:
        print("notebook times: no notebook ran")
        return 0
    failed = False
    print(f"{'notebook':50} {'CPU s':>8} {'budget':>7}")
    for notebook, seconds in sorted(times.items(), key=lambda item: -item[1]):
        budget = budget_of(notebook)
        if budget is None:
            verdict, failed = "  NO BUDGET: add one to tools/notebook_times.py", True
        elif seconds > HARD_LIMIT * budget:
            verdict, failed = f"  FAILED: over {HARD_LIMIT}x its budget", True
        elif seconds > budget:
            verdict = "  over budget"
        else:
            verdict = ""
        print(f"{notebook:50} {seconds:8.1f} {budget or '-':>7}{verdict}")
    print(f"notebooks: {sum(times.values()):.0f} s of CPU time in all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
