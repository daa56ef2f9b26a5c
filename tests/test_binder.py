"""Binder: the files repo2docker reads (environment.yml, apt.txt, postBuild), checked by asking
repo2docker itself for the Dockerfile it would build (`--no-build`: no docker needed, about a
second), and the README's Binder badge (once the course is published) opening chapter 00."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def dockerfile():
    if importlib.util.find_spec("repo2docker") is None:
        pytest.fail("jupyter-repo2docker is missing: pip install -e '.[dev]'", pytrace=False)
    proc = subprocess.run([sys.executable, "-m", "repo2docker", "--no-build", "--debug",
                           "--user-id", "1000", "--user-name", "jovyan", str(ROOT)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    text = proc.stdout + proc.stderr
    assert "FROM " in text, text[-2000:]
    return text


def test_repo2docker_installs_environment_yml_after_copying_the_repository(dockerfile):
    """environment.yml installs minigraph editable (`-e .`): the repository must be in the
    image before the environment is built."""
    copy = dockerfile.index("COPY --chown=1000:1000 src/ ${REPO_DIR}/")
    update = dockerfile.index('env update -p ${NB_PYTHON_PREFIX} --file "environment.yml"')
    assert copy < update


def test_repo2docker_installs_graphviz_from_apt_txt(dockerfile):
    assert (ROOT / "apt.txt").read_text().split() == ["graphviz"]
    assert re.search(r"apt-get install --yes --no-install-recommends graphviz", dockerfile)


def test_repo2docker_runs_postbuild_which_trusts_the_notebooks(dockerfile):
    post_build = ROOT / "postBuild"
    assert os.access(post_build, os.X_OK)
    assert "RUN ./postBuild" in dockerfile
    text = post_build.read_text()
    assert text.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in text
    assert "jupyter trust chapters/*.ipynb exercises/*.ipynb" in text


def test_the_readme_badge_opens_chapter_00_on_binder():
    sys.path.insert(0, str(ROOT / "tools"))
    import publish                                   # the badge is there once the course is published
    readme = publish.rewrite_readme((ROOT / "README.md").read_text(encoding="utf-8"), "alice/minigraph")
    badge = re.search(r"\]\((https://mybinder\.org/v2/gh/[^)]+)\)", readme)
    assert badge, "README has no Binder badge"
    assert badge.group(1).endswith("?labpath=chapters%2F00_setup_check.ipynb")
    assert (ROOT / "chapters" / "00_setup_check.ipynb").exists()
