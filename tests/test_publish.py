"""Publishing is one setting (course.toml's repository, tools/publish.py): until it is set,
nothing links a host that does not exist and what needs one refuses to build; `publish`
writes it once into every file that names it."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import publish  # noqa: E402

NAMED = ("course.toml", "README.md", ".github/workflows/classroom.yml")


@pytest.fixture
def course(tmp_path):
    """A copy of the files that name the course's home."""
    for name in NAMED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def markdown_links(text):
    return re.findall(r"\]\(([^)\s]+)\)|<(https?://[^>]+)>", text)


def test_the_working_copy_is_unpublished_and_links_nothing_dead():
    assert publish.repository() == publish.PLACEHOLDER and not publish.published()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "YOUR-ORG" not in readme and "YOUR-ORG" not in (ROOT / "site" / "index.md").read_text()
    assert readme == publish.rewrite_readme(readme, None), "README's publish blocks are not the unpublished text"
    for target, bare in markdown_links(readme):
        link = target or bare
        assert not re.search(r"github\.io|mybinder\.org", link), f"README links a host: {link}"
        if not link.startswith(("http://", "https://", "#")):
            assert (ROOT / link.split("#")[0]).exists(), f"README links {link}, which is not in the repository"
    assert "make preview" in readme and "(chapters/00_setup_check.ipynb)" in readme


def test_publish_writes_the_one_setting_into_every_file_that_names_it(course):
    changed = publish.publish("alice/deep-course", root=course)
    assert sorted(changed) == sorted(NAMED)
    assert publish.repository(course) == "alice/deep-course"
    readme = (course / "README.md").read_text()
    assert "YOUR-ORG" not in readme
    assert "(https://mybinder.org/v2/gh/alice/deep-course/main?labpath=chapters%2F00_setup_check.ipynb)" in readme
    assert "<https://alice.github.io/deep-course/>" in readme and "make preview" not in readme
    workflow = yaml.safe_load((course / NAMED[2]).read_text())
    assert workflow["env"]["COURSE"] == "alice/deep-course"
    # once more: nothing changes; under a new owner: everything follows
    assert publish.publish("alice/deep-course", root=course) == []
    publish.publish("Bob-Lab/minigraph", root=course)
    text = "".join((course / name).read_text() for name in NAMED)
    assert "alice" not in text and "https://bob-lab.github.io/minigraph/" in text
    assert "mybinder.org/v2/gh/Bob-Lab/minigraph/main" in text


@pytest.mark.parametrize("bad", ["alice", "alice/", "/x", "a b/c", "alice/x/y", "-alice/x",
                                 publish.PLACEHOLDER, "alice/x\nrepository = \"evil/y\""])
def test_publish_refuses_what_is_not_an_owner_and_name(course, bad):
    before = [(course / name).read_text() for name in NAMED]
    with pytest.raises(SystemExit, match="is not a GitHub repository's owner/name"):
        publish.publish(bad, root=course)
    assert [(course / name).read_text() for name in NAMED] == before


def test_require_published_names_what_refused_and_the_command_to_run(course):
    with pytest.raises(SystemExit) as refused:
        publish.require_published("make site", root=course)
    message = str(refused.value)
    assert message.startswith("make site: the course has no home yet") and "\n" not in message
    assert "make publish REPOSITORY=owner/name" in message
    publish.publish("alice/minigraph", root=course)
    assert publish.require_published("make site", root=course) == "alice/minigraph"


@pytest.mark.parametrize("target", ["site", "release"])
def test_make_site_and_make_release_refuse_with_the_placeholder(target):
    proc = subprocess.run(["make", "-s", f"published-{target}"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0
    assert proc.stderr.splitlines()[0] == (
        f"make {target}: the course has no home yet (course.toml's repository is the placeholder "
        "YOUR-ORG/minigraph); run `make publish REPOSITORY=owner/name` first")
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(rf"(?m)^{target}: published-{target} ", makefile)


def test_build_site_refuses_with_the_placeholder_before_building(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "build_site.py"), str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "make site: the course has no home yet" in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("course_name, refused", [(publish.PLACEHOLDER, True), ("alice/minigraph", False)])
def test_the_classroom_workflow_refuses_to_install_from_the_placeholder(course_name, refused):
    workflow = yaml.safe_load((ROOT / NAMED[2]).read_text())
    steps = workflow["jobs"]["grade"]["steps"]
    assert workflow["env"]["COURSE"] == publish.PLACEHOLDER
    first = steps[0]
    assert first["name"] == "The course is published"
    install = next(s["run"] for s in steps if "pip install" in s.get("run", ""))
    assert "github.com/$COURSE" in install
    proc = subprocess.run(["bash", "-c", first["run"]], env=dict(os.environ, COURSE=course_name),
                          capture_output=True, text=True)
    assert (proc.returncode != 0) == refused
    assert ("make publish REPOSITORY=owner/name" in proc.stdout) == refused
