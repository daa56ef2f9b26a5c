"""The grader's defences one at a time, without a notebook: the sandbox, reading untrusted
files, names in reports, the collector's rebind, the static scan, the
gradebook writers and Gradescope's format. (tests/grading/test_batch_cli.py grades real attacks.)"""

import asyncio
import csv
import importlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import numpy as np
import pytest

# collect is imported here so that it is among the modules fresh_minigraph saves and restores
from minigraph.grading.batch import cgroup, collect, sandbox, workspace  # noqa: F401
from minigraph.grading.batch import grader as grader_module
from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import HIDDEN_CASES, ExerciseResult, grade, run_cases, with_hidden
from minigraph.grading.batch.files import Unreadable, display_name, read_untrusted, write_atomically
from minigraph.grading.batch.gradebook import (recorded_seeds, submission_text, summary, to_csv,
                                              to_gradescope, to_json, to_junit)
from minigraph.grading.batch.grader import RecordedSeed, Settings, SubmissionResult, find_notebooks, parse_notebook, stderr_tail
from minigraph.grading.batch.scan import reference_uses, review_flags
from minigraph.grading.batch.workspace import Workspace, remove_tree

ROOT = Path(__file__).resolve().parents[2]
needs_sandbox = pytest.mark.skipif(sandbox.sandbox_reason() is not None,
                                   reason=f"no sandbox here: {sandbox.sandbox_reason()}")


# -- the sandbox ----------------------------------------------------------------------------

PROBE = """
import json, os, socket, sys
seen = {"uid": os.getuid(), "pid": os.getpid(), "env": sorted(os.environ),
        "repo": sorted(os.listdir(sys.argv[1])), "tmp": sorted(os.listdir("/tmp"))}
try:
    socket.create_connection(("127.0.0.1", 22), timeout=2)
    seen["network"] = "connected"
except OSError as error:
    seen["network"] = type(error).__name__
for path in ["/etc/probe", sys.argv[1] + "/minigraph/probe", os.getcwd() + "/probe"]:
    try:
        open(path, "w").close()
        seen.setdefault("wrote", []).append(path)
    except OSError:
        pass
import minigraph
seen["package"] = minigraph.__file__
seen["space"] = {name: [os.statvfs(path).f_blocks * os.statvfs(path).f_frsize, os.statvfs(path).f_files]
                 for name, path in [("home", os.getcwd()), ("tmp", "/tmp")]}
print(json.dumps(seen))
"""


@needs_sandbox
def test_the_sandbox_shows_only_the_package_has_no_network_no_secrets_and_one_writable_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGRAPH_FAKE_SECRET", "do-not-leak")
    limits = sandbox.Limits(disk_mb=32, files=500)
    with Workspace(limits) as space:
        home = space.home
        argv, options = sandbox.sandboxed_command([sys.executable, "-c", PROBE, str(ROOT)], space,
                                                  sandbox.environment(home), slot=1)
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, **options)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["pid"] == 2                                  # its own PID namespace
    assert set(seen["repo"]) <= {"minigraph", Path(sys.prefix).name}   # not solutions/, tests/, .git ...
    # a private /tmp, but for the way to the sandbox's folder and to a checkout that lives in /tmp
    on_the_way = {path.parts[2] for path in (home, ROOT, Path(sys.prefix)) if path.parts[1] == "tmp"}
    assert set(seen["tmp"]) == on_the_way
    assert seen["network"] in ("ConnectionRefusedError", "OSError")
    assert seen["wrote"] == [str(home / "probe")]            # only its own folder
    assert set(seen["env"]) - {"PWD"} == set(sandbox.environment(home))   # nothing of ours (bwrap sets PWD)
    assert seen["package"] == str(ROOT / "minigraph" / "__init__.py")
    if os.geteuid() == 0:
        assert seen["uid"] == sandbox.sandbox_uid(1) > sandbox.FIRST_UID   # unprivileged, a user per slot
        # its folder and its /tmp share one quota: 32 MB and 500 files and folders
        assert seen["space"]["home"] == seen["space"]["tmp"] == [32 * 2**20, 500]
    assert not home.exists()                                   # gone with the workspace


@needs_sandbox
def test_a_package_installed_inside_the_venv_still_gets_a_sandbox(monkeypatch):
    """`pip install` (Gradescope's setup.sh) puts the package inside the venv, so the venv and the
    package are both shown read-only, one inside the other: the venv keeps its modes (bubblewrap
    cannot change those of a read-only folder, and refused every sandbox)."""
    inside = Path(sys.prefix) / "lib"                          # where site-packages would hold it
    monkeypatch.setattr(sandbox, "PACKAGE", inside)
    monkeypatch.setattr(sandbox, "ANSWERS", inside / "grading" / "answers")
    assert sandbox.sandbox_reason.__wrapped__() is None


def second_copy(folder):
    """A venv (``folder``) whose site-packages holds a second, non-editable copy of the course
    with its reference answers, readable by anyone."""
    site = folder / "lib" / "site-packages"
    answers = site / "minigraph" / "grading" / "answers"
    answers.mkdir(parents=True)
    (answers / "ch00.py").write_text("def relu(x):\n    return 'the reference'\n")
    for path in [folder, *folder.parents]:
        if path != Path("/"):
            path.chmod(path.stat().st_mode | 0o755)
    return site, answers


@needs_sandbox
def test_a_second_copy_of_the_references_in_the_venv_is_empty_in_the_sandbox(tmp_path, monkeypatch):
    site, answers = second_copy(tmp_path / "venv")
    shown = sandbox.python_folders() + [str(tmp_path / "venv")]      # shown to the sandbox, read-only
    monkeypatch.setattr(sandbox, "python_folders", lambda: shown)
    monkeypatch.setattr(sandbox, "site_folders", lambda: [str(site)])
    probe = "import os, sys; print(os.listdir(sys.argv[1]), os.path.isdir(sys.argv[1] + '/..'))"
    with Workspace(sandbox.Limits()) as space:
        argv, options = sandbox.sandboxed_command([sandbox.sys.executable, "-c", probe, str(answers)],
                                                  space, sandbox.environment(space.home))
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, **options)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]", "True"]               # the venv is there, its copy is empty
    assert str(answers) in sandbox.reference_copies() and str(sandbox.ANSWERS) in sandbox.reference_copies()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root grades without a sandbox as a user of its own")
def test_without_a_sandbox_root_refuses_while_any_copy_of_the_references_is_readable(monkeypatch):
    folder = Path(tempfile.mkdtemp(dir="/tmp"))                   # where any user may pass
    try:
        site, answers = second_copy(folder / "venv")
        monkeypatch.setattr(sandbox, "site_folders", lambda: [str(site)])
        assert str(answers) in sandbox.readable_references(sandbox.sandbox_uid(0))
        for path in [answers, *answers.iterdir()]:
            path.chmod(path.stat().st_mode & ~0o077)             # what setup.sh does
        assert str(answers) not in sandbox.readable_references(sandbox.sandbox_uid(0))
    finally:
        remove_tree(folder)


GROUP_PROBE = r"""
import json, os, subprocess, sys, time
spin = "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass"
hog = "b = bytearray(120 * 2**20)\nfor i in range(0, len(b), 4096): b[i] = 1\nimport time; time.sleep(2)"
got = {}
spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(4)]
for p in spinners:
    p.wait()
hogs = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(3)]
got["hogs_killed"] = sum(p.wait() != 0 for p in hogs)
children = []
try:
    for _ in range(40):
        children.append(subprocess.Popen(["sleep", "5"]))
except OSError:
    pass
got["processes"] = len(children)
for child in children:
    child.kill()
    child.wait()
print(json.dumps(got))
"""


@pytest.mark.skipif(not cgroup.available(), reason="no control groups here (root and cgroup v1 needed)")
def test_a_control_group_limits_cpu_memory_and_processes_of_all_a_submissions_processes():
    """Four spinners share one CPU; three processes of 120 MB do not all fit in 256 MB; no
    more than 20 processes in all -- though each process alone is within every limit."""
    limits = sandbox.Limits(memory_mb=256, processes=20)
    group = cgroup.Group.create(cgroup.name_of(99), limits)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)   # every child this process ever waited for
    try:
        proc = subprocess.run([sys.executable, "-c", GROUP_PROBE], preexec_fn=group.join,
                              capture_output=True, text=True, timeout=120)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        group.remove()
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["hogs_killed"] >= 1 and 10 <= got["processes"] < 20
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)   # the probe's alone
    assert used < 4 * 1.5 / 2       # four spinners, 1.5 s each: one CPU at most
    assert not any(folder.exists() for folder in group.folders.values())


@needs_sandbox
def test_without_a_quota_a_bubblewrap_that_cannot_size_a_tmpfs_gets_the_spaces_tmp_folder(monkeypatch):
    """A grader that cannot mount (not root) gives the sandbox a tmpfs of bounded size as /tmp;
    Ubuntu 22.04's bubblewrap (0.6) has no --size, so there /tmp is the space's own folder."""
    monkeypatch.setattr(workspace, "_mount_tmpfs", lambda *args: False)
    monkeypatch.setattr(sandbox, "bwrap_bounds_tmpfs", lambda: False)
    write = "open('/tmp/probe', 'w').write('x')"
    with Workspace(sandbox.Limits()) as space:
        assert not space.quota
        argv, options = sandbox.sandboxed_command([sys.executable, "-c", write], space,
                                                  sandbox.environment(space.home))
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, **options)
        assert proc.returncode == 0, proc.stderr
        assert "--size" not in argv
        assert (space.tmp / "probe").read_text() == "x"


def test_the_environment_holds_nothing_of_the_graders(monkeypatch, tmp_path):
    monkeypatch.setenv("MINIGRAPH_FAKE_SECRET", "do-not-leak")
    env = sandbox.environment(tmp_path)
    assert "do-not-leak" not in json.dumps(env)
    assert all(str(tmp_path) in value for key, value in env.items() if key.endswith("DIR") or key == "HOME")


def test_limits_are_applied_to_a_child():
    import functools
    import resource
    limits = sandbox.Limits(memory_mb=512, processes=50, cpu_seconds=30, file_mb=1)
    probe = [sys.executable, "-c", "import resource as r; print([r.getrlimit(k)[0] for k in "
             "(r.RLIMIT_AS, r.RLIMIT_NPROC, r.RLIMIT_CPU, r.RLIMIT_FSIZE)])"]
    out = subprocess.run(probe, capture_output=True, text=True, preexec_fn=limits.apply, timeout=60)
    assert json.loads(out.stdout) == [512 * 2**20, 50, 30, 2**20]
    ours = resource.getrlimit(resource.RLIMIT_NPROC)[0]            # without a sandbox: not counted
    out = subprocess.run(probe, capture_output=True, text=True, timeout=60,
                         preexec_fn=functools.partial(limits.apply, count_processes=False))
    assert json.loads(out.stdout) == [512 * 2**20, ours, 30, 2**20]


# -- reading untrusted files ----------------------------------------------------------------

def test_only_regular_files_of_bounded_size_are_read(tmp_path):
    (tmp_path / "ok").write_bytes(b"12345")
    assert read_untrusted(tmp_path / "ok", 5) == b"12345"
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    os.symlink("/dev/zero", tmp_path / "zero")
    os.symlink(tmp_path / "ok", tmp_path / "link_to_ok")
    os.symlink("/nowhere", tmp_path / "broken")
    cases = {"ok": (4, "too large (0.0 MB; at most 4e-06 MB)"),
             "folder": (10, "not a regular file (a folder)"), "fifo": (10, "not a regular file (a FIFO)"),
             "zero": (10, "not a regular file (a symbolic link)"),
             "link_to_ok": (10, "not a regular file (a symbolic link)"),
             "broken": (10, "not a regular file (a symbolic link)"),
             "missing": (10, "cannot be opened (No such file or directory)")}
    for name, (limit, message) in cases.items():
        with pytest.raises(Unreadable) as error:
            read_untrusted(tmp_path / name, limit)
        assert str(error.value) == message, name


def test_find_notebooks_lists_odd_entries_without_following_links(tmp_path):
    (tmp_path / "a.ipynb").mkdir()
    (tmp_path / "a.ipynb" / "inside.ipynb").write_text("{}")
    os.symlink("/", tmp_path / "root_link")                  # a link to a folder is not searched
    os.symlink("/nowhere", tmp_path / "b.ipynb")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.ipynb").write_text("{}")
    assert find_notebooks([tmp_path]) == [tmp_path / "a.ipynb", tmp_path / "b.ipynb", tmp_path / "sub" / "c.ipynb"]


def test_a_link_to_a_folder_is_refused_with_the_folder_to_name_instead(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "00_warmup.ipynb").write_text("{}")
    os.symlink(tmp_path / "real", tmp_path / "submissions")
    with pytest.raises(ValueError, match=f"submissions is a link to a folder; .* name the folder itself: {tmp_path}/real"):
        find_notebooks([tmp_path / "submissions"])


def test_what_a_run_wrote_to_stderr_is_quoted_as_one_printable_line(tmp_path):
    # without root, a kernel can reopen its runner's stderr (/proc/PPID/fd/2: same user) and
    # write there what the grader will quote in a note
    errors = tmp_path / "stderr"
    errors.write_bytes(b"Traceback ...\n\x1b[2K\x1b[G forged: 7 of 7 points\xed\xa0\x80\n")
    assert stderr_tail(errors) == "Traceback ... \\x1b[2K\\x1b[G forged: 7 of 7 points\ufffd\ufffd\ufffd"
    errors.write_bytes(b"")
    assert stderr_tail(errors) == "no message"


@pytest.mark.parametrize("name, shown", [
    ("plain.ipynb", "plain.ipynb"),
    ("two\nlines.ipynb", "two\\nlines.ipynb"),
    (os.fsdecode(b"caf\xe9.ipynb"), "caf\\xe9.ipynb"),
    ("tab\tand\\back.ipynb", "tab\\tand\\\\back.ipynb"),
    ("café.ipynb", "café.ipynb"),
])
def test_display_names_are_one_printable_line(name, shown):
    assert display_name(name) == shown
    assert display_name(name).isprintable()


def test_display_names_keep_different_names_different():
    names = ["a\nb", "a\\nb", "a\\\nb", os.fsdecode(b"a\xffb"), "a\\xffb", "a\x00b"]
    assert len({display_name(n) for n in names}) == len(names)


def test_reports_are_replaced_in_one_step(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    write_atomically(target, "new")
    assert target.read_text() == "new" and os.listdir(tmp_path) == ["report.json"]


def test_a_report_gets_the_permissions_of_any_new_file(tmp_path):
    old = os.umask(0o022)              # a temporary file is private (0600): a report must not be,
    try:                               # or a CI step that is not root cannot upload it
        write_atomically(tmp_path / "grades.csv", "a,b\n")
    finally:
        os.umask(old)
    assert (tmp_path / "grades.csv").stat().st_mode & 0o777 == 0o644


# -- the collector: rebind --------------------------------------------------------------------

@pytest.fixture
def fresh_minigraph():
    """Forget every minigraph module (as the collector cell does); put them back afterwards.
    Yields the old modules."""
    importlib.import_module("minigraph.grading.content.ch00")
    saved = {n: m for n, m in sys.modules.items() if n.split(".")[0] == "minigraph"}
    for name in saved:
        del sys.modules[name]
    importlib.import_module("minigraph.grading.batch.collect")
    yield saved
    for name in [n for n in sys.modules if n.split(".")[0] == "minigraph"]:
        del sys.modules[name]
    sys.modules.update(saved)


def test_rebind_ignores_what_an_object_says_about_itself(fresh_minigraph):
    fresh_collect = sys.modules["minigraph.grading.batch.collect"]
    old_mg, old_ch00 = fresh_minigraph["minigraph"], fresh_minigraph["minigraph.grading.content.ch00"]

    def relu(x):
        return x
    relu.__module__, relu.__name__ = "minigraph.grading.content.ch00", "_relu"

    def helper(x):
        return x
    helper.__module__, helper.__name__ = "minigraph.grading.content.ch00", "_relu"
    namespace = {"relu": relu, "helper": helper, "mg": old_mg, "ch00": old_ch00,
                 "run": old_ch00.relu.run}
    fresh_collect.rebind(namespace, fresh_minigraph, keep={"relu"})
    assert namespace["relu"] is relu and namespace["helper"] is helper     # not swapped
    assert namespace["mg"] is sys.modules["minigraph"] and namespace["mg"] is not old_mg
    assert namespace["ch00"] is old_ch00 and namespace["run"] is old_ch00.relu.run  # grading: never handed out


def test_rebind_finds_engine_objects_by_identity_only(fresh_minigraph):
    fresh_collect = sys.modules["minigraph.grading.batch.collect"]
    old_mg = fresh_minigraph["minigraph"]
    engine_class = next(v for v in vars(old_mg).values() if isinstance(v, type))
    impostor = type(engine_class.__name__, (), {"__module__": engine_class.__module__})
    namespace = {"real": engine_class, "impostor": impostor}
    fresh_collect.rebind(namespace, fresh_minigraph)
    assert namespace["impostor"] is impostor
    assert namespace["real"] is not engine_class and namespace["real"].__name__ == engine_class.__name__


def test_rebind_moves_a_learners_subclass_of_an_engine_class_onto_the_fresh_engine(fresh_minigraph):
    # 04.gd, 06.adam...: the answer subclasses mg.optim.Optimizer, whose checks must accept the
    # fresh engine's Parameters that the cases make
    fresh_collect = sys.modules["minigraph.grading.batch.collect"]
    old_mg = fresh_minigraph["minigraph"]

    class MyGD(old_mg.optim.Optimizer):
        def update(self, value, grad, state):
            return value - self.lr * grad

    class Faster(MyGD):
        pass

    namespace = {"MyGD": MyGD, "Faster": Faster}
    fresh_collect.rebind(namespace, fresh_minigraph, keep={"MyGD"})
    fresh_mg = sys.modules["minigraph"]
    assert namespace["MyGD"] is MyGD and MyGD.__bases__ == (fresh_mg.optim.Optimizer,)
    assert Faster.__bases__ == (MyGD,)
    MyGD([fresh_mg.Parameter(np.zeros(2), name="w")], lr=0.1)


# -- hidden cases -----------------------------------------------------------------------------

def test_hidden_cases_make_a_table_of_the_public_ones_worth_only_their_share():
    # where the reference is readable (check() at home, --no-sandbox), a table made from it in an
    # ordinary cell passes the public cases and nothing else; the grader and the kernel draw the
    # same hidden cases from one seed, and different ones from another
    relu, reference = registry.find("00.relu"), importlib.import_module("minigraph.grading.answers.ch00").relu
    table = {np.asarray(c["inputs"]["x"], dtype=float).tobytes(): reference(np.asarray(c["inputs"]["x"], dtype=float))
             for c in relu.cases}

    def looked_up(x):
        return table.get(np.asarray(x, dtype=float).tobytes())

    cases = with_hidden(relu, 12345)
    assert cases == with_hidden(relu, 12345) != with_hidden(relu, 12346)
    assert len(cases) == len(relu.cases) + HIDDEN_CASES and all(c["hidden"] for c in cases[len(relu.cases):])
    result = grade(relu, run_cases(relu, looked_up, cases=cases), cases)
    assert [c.status for c in result.cases] == ["pass"] * len(relu.cases) + ["fail"] * HIDDEN_CASES
    assert result.score == round(relu.points * len(relu.cases) / len(cases), 2)
    assert grade(relu, run_cases(relu, reference, cases=cases), cases).status == "passed"


def test_every_generator_makes_cases_the_reference_takes():
    for chapter in registry.CHAPTERS:
        for exercise in registry.exercises(chapter):
            cases = with_hidden(exercise, 7)
            if exercise.hidden is not None:
                assert len(cases) == len(exercise.cases) + HIDDEN_CASES, exercise.id
                if exercise.reference is None:   # test_hidden_cases.py runs a learner's right answer on them
                    continue
                for case in cases[len(exercise.cases):]:       # judged as the reference would be
                    assert exercise.judge(case, exercise.run(exercise.reference, case)).passed, exercise.id


def test_function_and_backward_rule_exercises_carry_their_reference_by_name():
    # content/ names each reference (answers.Answer) and imports answers/ only when it is used
    kinds = {}
    for chapter in registry.CHAPTERS:
        for exercise in registry.exercises(chapter):
            made_by = getattr(exercise.judge, "__qualname__", "answers").split(".")[0]
            kinds.setdefault(made_by, set()).add(exercise.reference is not None)
            if exercise.reference is not None:
                module = importlib.import_module(registry.CHAPTERS[chapter].replace(".content.", ".answers."))
                assert exercise.reference.get() is getattr(module, exercise.reference.name), exercise.id
    assert kinds["function_exercise"] == kinds["vjp_exercise"] == {True}
    assert {made_by for made_by, has in kinds.items() if True in has} == {"function_exercise", "vjp_exercise"}


def test_the_static_scan_flags_cells_using_grading_internals_and_their_answers():
    exercises = registry.exercises("00")
    cells = ["from minigraph.grading import check, progress",
             "from minigraph.grading import check  # feedback",
             "from minigraph.grading import ch00\ndef relu(x):\n    return ch00._relu(x)",
             "import minigraph.grading as g\nsigmoid = g.ch00.sigmoid",
             "x = EXERCISES",
             "def relu(x):  # as in ch01.relu\n    print('grading. done')\n    return x * (x > 0)",
             "from minigraph.grading.tools.ch04 import try_recipe\nrelu = {'hidden': [8]}",   # what 04 and 05 do
             "from minigraph.grading.tools.ch08 import softplus",
             "from minigraph.grading.content.ch04 import train_recipe\nrelu = {'hidden': [8]}",
             "from minigraph.grading.content.ch04 import try_recipe",
             # disguised: a name put together at run time, a fake collector, the watch turned off
             "import importlib\n_r = importlib.import_module('minigraph.gra' + 'ding.ch00')._relu\n"
             "def relu(x):\n    return _r(x)",
             "import sys\nsys.meta_path.insert(0, finder)",
             "m = sys.modules['minigraph.gra' 'ding.ch00']",
             "f = getattr(__builtins__, '__imp' 'ort__')",
             "exec('imp' 'ort minigraph.gra' 'ding')",
             "def relu(x):\n    evaluate = x * (x > 0)  # eval( in a comment, exec in a name\n    return evaluate"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    found = [(number, names) for number, _, names in reference_uses(notebook, exercises)]
    assert found == [(3, ["relu"]), (4, ["sigmoid"]), (5, []), (9, ["relu"]), (10, []),
                     (11, []), (12, []), (13, []), (14, []), (15, [])]


# -- reports --------------------------------------------------------------------------------

def _result(path, scores, status="graded", flags=()):
    exercises = [ExerciseResult(f"00.e{i}", f"e{i}", f"e{i}()", 1.0,
                                "passed" if s == 1 else "failed", s, "msg") for i, s in enumerate(scores)]
    return SubmissionResult(path, "00", status, "m", sum(scores), float(len(scores)), exercises, [], list(flags))


def test_the_csv_gradebook_defuses_formulas_and_names_every_exercise():
    results = [_result("=HYPERLINK(\"x\").ipynb", [1, 0.5]), _result("b.ipynb", [0, 1], flags=["-cell 3"])]
    rows = list(csv.reader(to_csv(results, ["00.e0", "00.e1"]).splitlines()))
    assert rows[0] == ["submission", "chapter", "00.e0", "00.e1", "total", "max_score", "status", "flags"]
    assert rows[1] == ["'=HYPERLINK(\"x\").ipynb", "00", "1", "0.5", "1.5", "2", "graded", ""]
    assert rows[2][-1] == "'-cell 3"


def test_gradescope_results_have_a_test_per_exercise():
    results = to_gradescope([_result("a.ipynb", [1, 0])], sandboxed=False)
    assert results["score"] == 1 and "WITHOUT a sandbox" in results["output"]
    assert [(t["score"], t["max_score"], t["status"]) for t in results["tests"]] == [(1, 1.0, "passed"), (0, 1.0, "failed")]
    assert to_gradescope([])["score"] == 0


def test_gradescope_shows_flags_to_the_instructors_only():
    results = to_gradescope([_result("a.ipynb", [1, 1], flags=["cell 3: uses exec"])])
    assert results["score"] == 2 and "exec" not in results["output"]       # the learner's view
    *exercises, flagged = results["tests"]
    assert len(exercises) == 2 and all("visibility" not in t for t in exercises)
    assert (flagged["visibility"], flagged["score"], flagged["max_score"]) == ("hidden", 0, 0)
    assert flagged["output"] == "cell 3: uses exec" and "FLAGGED" in flagged["name"]
    assert len(to_gradescope([_result("b.ipynb", [1])])["tests"]) == 1     # no flag, no entry


def test_a_json_report_gives_back_the_seed_of_each_submission_and_nothing_else_does():
    drawn, unrun = _result("a.ipynb", [1]), _result("b.ipynb", [0], status="error")
    drawn.seed, drawn.sha256, given = 2**62 - 1, "ab" * 32, _result("c.ipynb", [1])
    given.seed, given.seed_given = 7, True
    report = json.dumps(to_json([drawn, unrun, given], Settings()))
    assert recorded_seeds(report) == {"a.ipynb": RecordedSeed(2**62 - 1, "ab" * 32), "b.ipynb": None,
                                      "c.ipynb": RecordedSeed(7, None)}
    assert summary([drawn, given], True) == ("graded 2 notebooks; 1 regraded: hidden cases from a "
                                             "given seed, not a fresh one")
    def entries(*submissions):
        return json.dumps({"grader": "minigraph.grading", "submissions": list(submissions)})
    for text, problem in [("{", "it is not JSON"), ("[" * 100_000, "it is not JSON"),
                          ("[]", "not a report of minigraph.grading"),
                          (json.dumps({"grader": "otter", "submissions": []}), "not a report of minigraph.grading"),
                          (json.dumps({"grader": "minigraph.grading"}), "not a report of minigraph.grading"),
                          (entries("a.ipynb"), "its submission 1 has no path"),
                          (entries({"seed": 3}), "its submission 1 has no path"),
                          (entries({"path": "a", "seed": 1}, {"path": "b", "seed": "3"}), "its submission 2 has no path, or a seed that"),
                          (entries({"path": "a", "seed": -1}), "a seed that is not a whole number"),
                          (entries({"path": "a", "seed": 1.5}), "a seed that is not a whole number"),
                          (entries({"path": "a", "seed": True}), "a seed that is not a whole number"),
                          (entries({"path": "a", "seed": 1}, {"path": "a", "seed": 2}), "it gives a two different seeds")]:
        with pytest.raises(ValueError, match=problem):
            recorded_seeds(text)
    assert recorded_seeds(entries({"path": "a", "seed": 1}, {"path": "a", "seed": 1})) == {"a": RecordedSeed(1, None)}


def test_junit_and_text_survive_any_name():
    name = display_name(os.fsdecode(b"x\xff\n\x01.ipynb"))
    text = submission_text(_result(name, [1]))
    assert text.count("\n") == 1 and "\\xff\\n\\x01" in text
    suite = ET.fromstring(to_junit([_result(name, [1])]).encode("utf-8")).find("testsuite")
    assert suite.get("name") == name                          # the escaped name, intact
    raw = ET.fromstring(to_junit([_result(os.fsdecode(b"a\xff\x01b"), [1])]).encode("utf-8"))
    assert raw.find("testsuite").get("name") == "ab"          # raw by mistake: what XML cannot hold goes


# honest code the scan once took for a use of the internals or a trick: no flag, no lost point
HONEST_CELLS = [
    "import minigraph.grading\ndef relu(x):\n    return x * (x > 0)\nminigraph.grading.check('00.relu', relu)",
    "from minigraph import grading\ndef relu(x):\n    return x * (x > 0)\ngrading.check('00.relu', relu)",
    "from minigraph.grading import *\ndef relu(x):\n    return x * (x > 0)\ncheck('00.relu', relu)",
    "import minigraph as mg\ndef relu(x):\n    return x * (x > 0)\nmg.grading.check('00.relu', relu)",
    "def relu(x):\n    return x * (x > 0)\nprint('EXERCISES: relu done')",
    "def relu(x):\n    return x * (x > 0)\nnp.save('ch00.npy', relu(np.ones(3)))",
    "def sigmoid(x):\n    return 1 / (1 + np.exp(-x))\nplt.savefig('ch04.png')",
    "import importlib, numpy\nimportlib.reload(numpy)\ndef relu(x):\n    return x * (x > 0)",
    "from importlib import reload\ndef relu(x):\n    return x * (x > 0)",
    "net = torch.nn.Linear(2, 1)\nnet.eval()\ndef relu(x):\n    return x * (x > 0)",
    "class Net:\n    def eval(self):\n        return self\n    def compile(self):\n        return self",
    "pattern = re.compile('a+')\ndef relu(x):\n    return x * (x > 0)",
    "with np.errstate(all='ignore'):\n    table = np.exp(np.arange(800.0))   # a chapter's own cell",
    "def relu(x):\n    return np.where(x > 0, x, 0.0)\ny = relu(x).view(np.ndarray)",
    # the fourth review's: asking whether a package is installed or loaded; the course's tools
    # through the package's alias; f-strings whose fields are plain code
    "import importlib.util, sys\nHAVE_TORCH = importlib.util.find_spec('torch') is not None\n"
    "IN_COLAB = 'google.colab' in sys.modules\nif 'torch' not in sys.modules:\n    pass",
    "import minigraph as mg\nrelu = 1\nmg.grading.tools.ch04.try_recipe({'hidden': [8]})",
    "def relu(x):\n    print(f'{np.shape(x)} -> {np.maximum(x, 0)!r:>10}', f'{{literal}}')\n    return np.maximum(x, 0)",
]


def test_honest_cells_are_neither_flagged_nor_docked():
    exercises = registry.exercises("00")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in HONEST_CELLS])
    assert reference_uses(notebook, exercises) == []
    assert review_flags(notebook, exercises) == []


# what no learner writes by accident, and where the report says it is: a flag, no score change
BYPASS_CELLS = [
    ("import types\n_f = mg.relu\ndef relu(x):\n    return types.FunctionType(_f.__code__, {})(x)",
     "line 4: builds a function from a code object"),
    ("import inspect\nsrc = inspect.getsource(mg.ops)\nexec(compile(src, 'x', 'exec'))",
     "line 2: compiles or runs source text"),
    ("ip = get_ipython()\nip.input_transformers_post.append(lambda lines: lines)",
     "line 2: installs an IPython input transformer"),
    ("import sys\nseed = sys._getframe(1).f_globals", "line 2: looks into frames"),
    ("import gc\nfound = [o for o in gc.get_objects() if callable(o)]", "line 2: looks into frames, the garbage"),
    ("from minigraph.compiler.memory import _sigmoid_into\ndef sigmoid(x):\n    return x",
     "line 1: uses the engine's internals"),
    ("def relu(x):\n    return mg.leaky_relu(x, slope=0.0)", "line 2: calls another copy, in the engine, of the maths"),
    ("def sigmoid(x):\n    return mg.kernels.linear_vjp_x(x)", "line 2: uses the engine's internals"),
    ("def sigmoid(x):\n    with np.errstate(all='ignore'):\n        return 1 / (1 + np.exp(-x))",
     "line 2: silences numpy's floating-point warnings in a cell that defines an answer"),
    ("def relu(x):\n    return np.array([max(v, 0) for v in x.view(np.ndarray).ravel()])",
     "line 2: unwraps the grader's array inside an answer"),
    # the fourth review's: an f-string's fields are code; an alias names its module
    ("import types\n_made = f'{types.FunctionType(mg.relu.__code__, {})}'", "line 2: builds a function from a code object"),
    ("from minigraph import kernels as K\ndef relu(x):\n    return K.relu_into(x, x)", "line 3: uses the engine's internals"),
    ("import minigraph.kernels as fast\ndef sigmoid(x):\n    return fast.sigmoid_into(x, x)",
     "line 3: calls another copy, in the engine, of the maths"),
    ("import importlib.util\nspec = importlib.util.spec_from_file_location('m', 'm.py')", None),
]


@pytest.mark.parametrize("source, flag", BYPASS_CELLS)
def test_a_bypass_is_flagged_with_its_cell_and_line(source, flag):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 00"),
                                               nbformat.v4.new_code_cell(source)])
    if flag is None:                        # the import machinery beyond asking what is installed
        assert [why for _, why, _ in reference_uses(notebook, registry.exercises("00"))] == [
            "uses Python's import machinery ('importlib'), which no exercise needs"]
        return
    found = review_flags(notebook, registry.exercises("00"))
    assert any(f.startswith(f"cell 2, {flag}") for f in found), found


SILENCING = [   # the fifth review's: the "never overflow" rule switched off, however written
    'def sigmoid(x):\n    with np.errstate(over="ignore"):\n        return 1 / (1 + np.exp(-x))',
    'def sigmoid(x):\n    with np.errstate(**{"all": "ignore"}):\n        return 1 / (1 + np.exp(-x))',
    'def sigmoid(x):\n    old = np.seterr("ignore")\n    return 1 / (1 + np.exp(-x))',
    'def sigmoid(x):\n    with numpy.errstate(over="raise", invalid="warn"):\n        return 1 / (1 + np.exp(-x))',
    'def sigmoid(x):\n    np.seterrcall(print)\n    return 1 / (1 + np.exp(-x))',
    'def quiet(f):\n    with np.errstate(divide="log"):\n        return f()\ndef sigmoid(x):\n'
    '    return quiet(lambda: 1 / (1 + np.exp(-x)))',                            # a helper beside it
    'from numpy import errstate as calm\ndef sigmoid(x):\n    with calm(over="ignore"):\n        return 1',
    '%%time\ndef sigmoid(x):\n    with np.errstate(over="ignore"):\n        return 1 / (1 + np.exp(-x))',
]
NOT_SILENCING = [   # the rule itself, underflow, or a cell that defines no answer
    'def sigmoid(x):\n    with np.errstate(over="raise", invalid="raise", under="ignore"):\n        return 1 / (1 + np.exp(-x))',
    'with np.errstate(over="raise", invalid="raise"):\n    assert sigmoid(np.array(-1000.0)) == 0.0',
    'with np.errstate(all="ignore"):\n    curve = np.log(np.linspace(0, 1, 5))',
]


def test_numpy_told_not_to_raise_in_a_cell_that_defines_an_answer_is_flagged():
    exercises = registry.exercises("00")
    for cell in SILENCING:
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
        assert [f for f in review_flags(notebook, exercises) if "silences numpy's floating-point" in f], cell
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in NOT_SILENCING])
    assert review_flags(notebook, exercises) == []


def test_the_recipe_cell_may_call_the_course_tool_through_mg():
    """05's recipe, tried in its own cell by the course's tool reached through ``mg``: no use of
    the grading internals, and the recipe keeps its points."""
    cell = ("digits_recipe = {'hidden': [128], 'optimizer': 'adam'}\n"
            "train_acc, test_acc, losses = mg.grading.tools.ch05.try_recipe(digits_recipe)")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import minigraph as mg"),
                                               nbformat.v4.new_code_cell(cell)])
    assert reference_uses(notebook, registry.exercises("05")) == []
    assert review_flags(notebook, registry.exercises("05")) == []


def test_a_line_of_many_strings_is_read_in_time_or_left_to_a_person(monkeypatch):
    """The scan is linear in a line's length (120,000 strings: once quadratic, minutes in the
    grader's event loop), and runs in a process of its own with a time limit: a notebook it cannot
    read in time is not graded, with a message, and holds up no other."""
    line = "x = [" + ", ".join(['"ab"'] * 120_000) + "]"
    data = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(line)])).encode()
    assert len(line) > 700_000
    problem, notebook, uses, flags, answers = asyncio.run(grader_module.examine_apart(data, "00"))
    assert (problem, uses, flags, answers) == (None, [], [], ({}, [])) and notebook.cells[0].source == line
    monkeypatch.setattr(grader_module, "EXAMINE_TIMEOUT", 0.01)
    problem, notebook, _, _, _ = asyncio.run(grader_module.examine_apart(data, "00"))
    assert notebook is None and problem == ("not graded: its code could not be read within 0.01 s "
                                            "(look at it by hand)")


def test_the_static_scan_reads_imports_as_python_whatever_their_layout():
    exercises = registry.exercises("00")
    cells = ["from minigraph.grading import (check,\n    progress)\r\nrelu = 1\r\n",
             "import numpy as np\r\nfrom minigraph.grading import check, progress\r\nrelu = 1\r\n",
             "from minigraph.grading import check as c, progress as p\rrelu = 1",
             "from minigraph.grading.tools import ch04\nrelu = ch04.train_recipe({'hidden': [8]})",
             "import minigraph.grading.tools.ch04 as t4\nrelu = t4.try_recipe({})",
             "import minigraph.grading.tools.ch04\nrelu = minigraph.grading.tools.ch04.train_recipe({})",
             "from minigraph.grading import tools\nrelu = tools.ch04.train_recipe({})",
             "%time x = 1\r\nfrom minigraph.grading import check\r\nrelu = 1\r\n",          # not Python
             # still the internals, however written
             "from minigraph.grading import (check,\n    content)\nrelu = 1",
             "from minigraph.grading.tools import ch04\nrelu = ch04.mg.grading.content.ch00._relu",
             "import minigraph.grading.tools.ch04, minigraph.grading.content as c\nrelu = 1",
             "from minigraph.grading import check\nrelu = check.__globals__['registry']",
             "%time x = 1\r\nfrom minigraph.grading import content\r\nrelu = 1\r\n"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    found = [(number, names) for number, _, names in reference_uses(notebook, exercises)]
    assert found == [(9, ["relu"]), (10, ["relu"]), (11, ["relu"]), (13, ["relu"])]


# the fifth review's: cells with IPython's magics, honest (read as the Python they run), and what
# a magic could hide (still found: the Python it runs is read as Python, anything else as text)
HONEST_MAGIC_CELLS = [
    "%%time\ndef relu(x):\n    return np.maximum(x, 0.0)\n\nimport minigraph as mg\nmg.grading.check('00.relu', relu)",
    "%load_ext autoreload\n%autoreload 2\nimport numpy as np\nfrom minigraph.grading import (\n    check,\n"
    "    progress,  # as in ch01.relu\n)",
    "import minigraph.grading\n%matplotlib inline\nminigraph.grading.progress()",
    "%time mg.grading.check('00.relu', relu)\n%timeit -n 10 -r 3 relu(x)\ny = %time relu(x)\n!pip list",
    "\n%%capture out\nfrom minigraph.grading import check\ncheck('00.sigmoid', sigmoid)",
    "def sigmoid(x):\n    %time y = np.exp(-np.abs(x))\n    return np.where(x >= 0, 1 / (1 + y), y / (1 + y))",
]
HIDDEN_BY_MAGICS = [   # (cell, a use of the internals, the start of a flag)
    ("%%time\nfrom minigraph.grading import content\nrelu = content.ch00", "minigraph.grading", None),
    ("%%capture\nfrom minigraph.grading import answers", "minigraph.grading", None),
    ("%time from minigraph.grading.content import ch00", "minigraph.grading", None),
    ("%%time\n%time x = 1\nimport sys\nseed = sys._getframe(1).f_globals", None, "cell 1, line 4: looks into frames"),
    ("%%capture\nexec('x = 1')", "exec", "cell 1, line 2: compiles or runs source text"),
    ("%timeit -n 1 exec('x = 1')", "exec", "cell 1, line 1: compiles or runs source text"),
    ("%run -m minigraph.grading.answers.ch00", "minigraph.grading", None),
    ("%%bash\npython -c 'import minigraph.grading.content'", "minigraph.grading", None),
    ("%%writefile helper.py\nimport sys\nframe = sys._getframe(1)", None, "cell 1, line 3: looks into frames"),
    ("import numpy as np\ndef relu(x):\n    %time y = mg.leaky_relu(x, slope=0.0)\n    return y", None,
     "cell 1, line 3: calls another copy, in the engine, of the maths"),
]


def test_a_cell_with_ipython_magics_is_read_as_the_python_it_runs():
    exercises = registry.exercises("00")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in HONEST_MAGIC_CELLS])
    assert reference_uses(notebook, exercises) == []
    assert review_flags(notebook, exercises) == []
    for cell, use, flag in HIDDEN_BY_MAGICS:
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
        found = [why for _, why, _ in reference_uses(notebook, exercises)]
        assert (use is None and found == []) or (len(found) == 1 and f"('{use}')" in found[0]), (cell, found)
        flags = review_flags(notebook, exercises)
        assert (flag is None and flags == []) or any(f.startswith(flag) for f in flags), (cell, flags)


def test_an_answer_defined_in_a_cell_with_magics_is_the_reports_answer():
    from minigraph.grading.batch.sources import answer_sources
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(HONEST_MAGIC_CELLS[0])])
    assert answer_sources(notebook, registry.exercises("00")) == {
        "00.relu": "def relu(x):\n    return np.maximum(x, 0.0)"}


def test_a_notebook_of_any_4x_minor_with_cell_ids_is_read():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                               nbformat.v4.new_markdown_cell("# hi")])
    data = json.loads(nbformat.writes(notebook))
    for minor in (0, 2, 4):
        data["nbformat_minor"] = minor
        problem, read = parse_notebook(json.dumps(data).encode())
        assert problem is None and [c.source for c in read.cells] == ["x = 1", "# hi"]
        data["cells"][1].pop("id", None)                # some cells with ids, some without
        problem, read = parse_notebook(json.dumps(data).encode())
        assert problem is None


def test_a_tree_of_any_depth_width_and_modes_is_removed(tmp_path):
    top = tmp_path / "space"
    top.mkdir()
    folder = os.open(top, os.O_RDONLY)
    for depth in range(1500):                      # deeper than Python's recursion limit, and a
        os.mkdir("d" * 50, dir_fd=folder)          # path longer than the system allows
        os.close(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=folder))
        inner = os.open("d" * 50, os.O_RDONLY, dir_fd=folder)
        os.close(folder)
        folder = inner
    os.fchmod(folder, 0)
    os.close(folder)
    os.symlink("/etc", top / "link")              # removed, never followed
    for i in range(3000):
        (top / f"wide{i}").write_text("")
    (top / "closed").mkdir()
    (top / "closed" / "inside").write_text("x")
    os.chmod(top / "closed", 0)
    os.chmod(top, 0o500)
    remove_tree(top)
    assert not top.exists() and Path("/etc/passwd").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="the quota is a tmpfs the grader mounts as root")
def test_a_workspace_is_bounded_in_size_and_files_and_says_so_when_full():
    with Workspace(sandbox.Limits(disk_mb=4, files=100)) as space:
        assert space.quota and space.full() is None
        with pytest.raises(OSError, match="No space left"):
            (space.tmp / "big").write_bytes(bytes(5 * 2**20))
        assert "filled its 4 MB of disk space" in space.full()
        (space.tmp / "big").unlink()
        with pytest.raises(OSError, match="No space left"):
            for i in range(200):
                (space.home / f"f{i}").touch()
        assert "made 100 files and folders, its limit" in space.full()
        root = space.root
    assert not root.exists()


SWEEPER = """
import sys, time
from pathlib import Path
from minigraph.grading.batch import workspace
while not Path(sys.argv[1]).exists():
    time.sleep(0.001)
workspace.sweep()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="spaces are mounted (and so left behind) as root only")
def test_two_graders_sweeping_the_same_left_spaces_at_once_both_succeed_and_remove_them(tmp_path):
    """A killed grader's spaces stay mounted until a grader run as root sweeps them; two graders
    started together must not trip over each other deleting the same ones."""
    # its pid names the spaces: alive while they are made, so that no grader (the other xdist
    # worker's sweeps too) takes one before it is complete; ended before the sweepers go
    dead = subprocess.Popen(["sleep", "600"])
    try:
        for _ in range(30):
            root = Path(tempfile.mkdtemp(prefix=workspace.MOUNT_NAME, dir=tmp_path))
            (root / "box").mkdir()
            for name in "abcdefgh":
                (root / name).mkdir()
                (root / name / "stderr").write_text("x")
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", f"{workspace.MOUNT_NAME}{dead.pid}",
                            str(root / "box")], check=True)
            (root / "box" / "inside").write_text("x")
    finally:
        dead.kill()
        dead.wait()                               # now the spaces of a grader no longer alive
    go = tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    sweepers = [subprocess.Popen([sys.executable, "-c", SWEEPER, str(go)], env=env, stderr=subprocess.PIPE,
                                 text=True) for _ in range(2)]
    time.sleep(1)                                 # both imported and waiting
    go.touch()
    for sweeper in sweepers:
        assert sweeper.wait(timeout=60) == 0, sweeper.stderr.read()
    assert [m for m in workspace.stale_mounts() if m.startswith(str(tmp_path))] == []
    # Under xdist a grader started by a test in the other worker sweeps these spaces too (any
    # grader run as root does): a space it claimed may still be on its way out when ours are
    # done (``...-swept-by-PID``, that grader's). Wait for it; either way they all go.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and sorted(p.name for p in tmp_path.iterdir()) != ["go"]:
        time.sleep(0.1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["go"]


def test_the_progress_bar_shows_notebooks_done_flagged_not_run_elapsed_and_time_left():
    import io
    from minigraph.grading.batch.cli import progress_bar
    from minigraph.grading.batch.gradebook import tally
    now, out = [100.0], io.StringIO()                 # no terminal: a line per result, as in CI
    bar = progress_bar(4, stream=out, clock=lambda: now[0])
    results = []
    for seconds, result in [(30, _result("a.ipynb", [1])), (50, _result("b.ipynb", [0], flags=["cell 2"])),
                            (140, _result("c.ipynb", [0], status="error")), (0, _result("d.ipynb", [1]))]:
        now[0] += seconds
        results.append(result)
        bar.update(**tally(results))
    bar.close()
    assert out.getvalue().splitlines() == [
        "grading   0% |                    | 0/4",
        "grading  25% |█████               | 1/4  flagged 0  not run 0  0.033 notebooks/s  0:30 elapsed  1:30 left",
        "grading  50% |██████████          | 2/4  flagged 1  not run 0  0.025 notebooks/s  1:20 elapsed  1:20 left",
        "grading  75% |███████████████     | 3/4  flagged 1  not run 1  0.014 notebooks/s  3:40 elapsed  1:13 left",
        "grading 100% |████████████████████| 4/4  flagged 1  not run 1  0.018 notebooks/s  3:40 in all"]

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()                               # a terminal: one line, redrawn in place
    bar = progress_bar(2, stream=screen)
    for done in (1, 2):
        bar.update(**tally(results[:done]))
    bar.close()
    drawn = screen.getvalue()
    assert drawn.count("\r") == 3 and drawn.count("\n") == 1 and drawn.endswith("\n")
    assert drawn.split("\r")[-1].startswith("grading 100% |████████████████████| 2/2  flagged 1  not run 0")


def _judging_for(send, seconds):
    """A judge that takes ``seconds`` (a recipe training for minutes), then answers."""
    time.sleep(seconds)
    send.send([])


def test_answers_are_judged_apart_within_a_time_limit(monkeypatch):
    """Judging runs in a process of its own: what it gives back is what judging here gives, and
    a judge that takes too long (a recipe training for minutes) is stopped at the limit and
    ends with a message, not a hang."""
    from minigraph.grading.batch.grader import judge_apart, run_apart
    exercise = registry.exercises("00")[0]
    cases = with_hidden(exercise, 5)
    results = {exercise.id: {"status": "ran", "records": run_cases(exercise, lambda x: np.maximum(x, 0), cases=cases)}}
    graded = asyncio.run(judge_apart("00", results, 5, {}, 120))
    assert [r.status for r in graded] == ["passed", "error", "error", "error"]   # no results for 3
    assert graded[0] == grade(exercise, results[exercise.id]["records"], cases)
    started = time.monotonic()
    assert asyncio.run(run_apart(_judging_for, (60,), 0.5)) is None            # stopped, not awaited
    assert time.monotonic() - started < 30
    assert asyncio.run(run_apart(_judging_for, (0,), 60)) == []                 # (the judge can answer)
    monkeypatch.setattr(grader_module, "run_apart", lambda *args: asyncio.sleep(0))   # nothing in time
    late = asyncio.run(judge_apart("00", results, 5, {}, 7))
    assert {r.message for r in late} == {"its answers could not be judged within 7 s"}


def test_a_no_loop_answer_whose_own_source_loops_fails_its_cases_whatever_the_kernel_said():
    """The grader reads the answer's definition in the notebook (a ``%%time`` cell's too): a
    loop over a copy of the input fails every case that ran, with ``NoLoopArray``'s message,
    even where the kernel reported a pass; a vectorised answer, or a loop in another exercise's
    answer, is judged as it ran."""
    from minigraph.grading.batch.grader import judge_apart
    from minigraph.grading.batch.sources import looping_answers
    from minigraph.grading.toolkit.exercise import NO_LOOP
    exercises = registry.exercises("00")
    looping = ["def relu(x):\n    a = np.array(x, dtype=float)\n    return np.array([max(v, 0) for v in a.ravel()])",
               "%%time\ndef relu(x):\n    out = []\n    for v in x.ravel().tolist():\n        out.append(max(v, 0))\n"
               "    return np.array(out)",
               "relu = lambda x: np.array(list(map(abs, x.tolist())))",
               "def relu(x):\n    return np.vectorize(lambda v: max(v, 0))(x)"]
    honest = ["def relu(x):\n    return np.maximum(x, 0)",
              "def relu(x):\n    return x * (x > 0)\nsizes = [n for n in range(3)]",         # beside it: not its own
              "def relu(x):\n    return [v for v in x]\ndef relu(x):\n    return np.maximum(x, 0)",   # the last one
              "def sigmoid(x):\n    return np.array([1 / (1 + np.exp(-v)) for v in np.ravel(x)])",   # no rule there
              "def relu(x):\n    end = time.process_time() + 0.3\n    while time.process_time() < end:\n"
              "        pass\n    return np.maximum(x, 0)"]          # a wait, no entry taken (00_honest_slow)
    for cell in looping:
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
        assert looping_answers(notebook, exercises) == ["00.relu"], cell
    for cell in honest:
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
        assert looping_answers(notebook, exercises) == [], cell
    exercise = exercises[0]
    cases = with_hidden(exercise, 5)
    results = {exercise.id: {"status": "ran", "records": run_cases(exercise, lambda x: np.maximum(x, 0), cases=cases)}}
    (relu, *_) = asyncio.run(judge_apart("00", results, 5, {}, 120, ["00.relu"]))
    assert (relu.status, relu.score, {c.message for c in relu.cases}) == ("failed", 0, {NO_LOOP})
    (relu, *_) = asyncio.run(judge_apart("00", results, 5, {}, 120, []))
    assert (relu.status, relu.score) == ("passed", exercise.points)


def test_each_grader_draws_its_own_block_of_sandbox_users():
    """Two graders that are each PID 1 of a PID namespace of their own (two containers on one
    host) get different users: the block is drawn at random, not made from the process ID."""
    code = ("import os\nfrom minigraph.grading.batch import cgroup, sandbox\n"
            "print(os.getpid(), sandbox.sandbox_uid(0), sandbox.sandbox_uid(sandbox.SLOTS - 1), cgroup.name_of(0))")
    alone = ["unshare", "--pid", "--fork"] if os.geteuid() == 0 and shutil.which("unshare") else []
    runs = [subprocess.run([*alone, sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout.split() for _ in range(3)]
    if alone:
        assert [pid for pid, *_ in runs] == ["1", "1", "1"]
    assert len({first for _, first, _, _ in runs}) == len({group for *_, group in runs}) == 3
    for _, first, last, _ in runs:
        assert sandbox.FIRST_UID <= int(first) and int(last) == int(first) + sandbox.SLOTS - 1 < 2**32 - 2
