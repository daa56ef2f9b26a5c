"""What the sandbox costs: grading 20 honest notebooks with --jobs 2, with and without it.

    .venv/bin/python bench/grading_overhead.py [--notebooks 20] [--rounds 3]

Each round grades the same 20 copies of solutions/00_warmup.ipynb twice -- once in
bubblewrap sandboxes, once with --no-sandbox -- in alternating order (so that a machine
busy with other work slows both alike), and prints the wall-clock times and their ratio.
The target is a ratio of at most 1.3: a sandbox per notebook adds a few namespaces and
mounts to a run dominated by starting Python, a kernel and numpy.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "00_warmup.ipynb"


def grade(folder, sandboxed, count):
    """Seconds to grade the ``count`` notebooks in ``folder`` (two at a time)."""
    argv = [sys.executable, "-m", "minigraph.grading", str(folder), "--jobs", "2"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    proc = subprocess.run(argv + ([] if sandboxed else ["--no-sandbox"]), capture_output=True,
                          text=True, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode != 0 or proc.stdout.count("(chapter 00): 7 of 7 points") != count:
        raise SystemExit(f"grading failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for i in range(args.notebooks):
            shutil.copyfile(SOLUTION, Path(folder) / f"00_honest_{i:02d}.ipynb")
        times = {True: [], False: []}
        for round_ in range(args.rounds):
            order = (True, False) if round_ % 2 == 0 else (False, True)
            for sandboxed in order:
                times[sandboxed].append(grade(folder, sandboxed, args.notebooks))
            print(f"round {round_ + 1}: sandbox {times[True][-1]:.1f} s, "
                  f"no sandbox {times[False][-1]:.1f} s, ratio {times[True][-1] / times[False][-1]:.2f}")
    ratios = [s / n for s, n in zip(times[True], times[False])]
    print(f"{args.notebooks} notebooks, --jobs 2, {args.rounds} rounds: median sandbox "
          f"{statistics.median(times[True]):.1f} s, no sandbox {statistics.median(times[False]):.1f} s; "
          f"ratio median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f}); "
          f"target <= 1.3")


if __name__ == "__main__":
    main()
