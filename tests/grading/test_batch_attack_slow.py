"""The slow part of the attack run: ``make attack`` (skipped unless MINIGRAPH_ATTACK=1).

Fixtures that cost a minute or more of grading (tests/fixtures/submissions-slow/: a notebook run
twice because a cell ended or hung its kernel, 24 processes spinning for 20 s) are graded here,
two at a time, next to honest notebooks; test_batch_cli.py grades the rest, in CI.
"""

import json
import os

import pytest

from tests.grading.test_batch_cli import FAST, FIXTURES, MAKE, grader, survivors

pytestmark = pytest.mark.skipif(os.environ.get("MINIGRAPH_ATTACK") != "1",
                                reason="the long attack run: make attack (MINIGRAPH_ATTACK=1)")
HONEST = ["00_honest_a.ipynb", "00_honest_b.ipynb", "00_honest_slow.ipynb"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    proc = grader(MAKE.SLOW_HERE, *(FIXTURES / name for name in HONEST), *FAST, "--jobs", "2",
                  "--json", out / "grades.json", cwd=out)
    assert proc.returncode == 0, proc.stderr
    return {"json": json.loads((out / "grades.json").read_text()), "alive": survivors()}


def submission(run, name):
    (found,) = [s for s in run["json"]["submissions"] if os.path.basename(s["path"]) == name]
    return found


@pytest.mark.parametrize("name, note", [
    ("00_honest_quit.ipynb", "cell 8 ended its kernel (exit() or quit())"),
    ("00_honest_os_exit.ipynb", "cell 8 ended its kernel (os._exit, a crash, or out of memory)"),
    ("00_honest_swallows_interrupt.ipynb", "cell 8 did not stop when interrupted"),
])
def test_a_cell_that_ends_or_hangs_its_kernel_costs_only_itself(run, name, note):
    sub = submission(run, name)
    assert (sub["status"], sub["score"], sub["flags"]) == ("graded", 7, []), sub
    (only,) = sub["notes"]
    assert only.startswith(note) and only.endswith("ran again, in a fresh kernel, without it")


def test_a_cpu_hog_slows_no_neighbour_and_leaves_nothing_behind(run):
    """24 spinners in sessions of their own: one CPU for the whole submission (a control group,
    as root) and cases timed by CPU time, so the honest notebooks graded next to it -- the slow
    one's relu takes 0.3 s of CPU time a call -- keep what check() gives them."""
    hog = submission(run, "00_attack_cpu_hog.ipynb")
    assert (hog["score"], hog["flags"]) == (7, [])
    for name in HONEST[:2]:
        assert (submission(run, name)["score"], submission(run, name)["notes"]) == (7, []), name
    slow = {e["id"]: e["score"] for e in submission(run, "00_honest_slow.ipynb")["exercises"]}
    assert slow["00.relu"] == 1                       # 0.3 s of CPU a call, within its limit
    assert run["alive"] == []
