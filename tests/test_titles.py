"""Each exercise notebook is titled after its chapter: ``# Exercises NN · <the chapter's title>``,
the chapter's own heading being ``# NN · <title>``, and the grader's table says the same title.
The site and JupyterLab show these headings, so a learner sees one name per chapter."""

import re
from pathlib import Path

import nbformat
import pytest

from minigraph.grading.toolkit import registry

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))


def heading(path):
    first = nbformat.read(path, as_version=4).cells[0]
    assert first.cell_type == "markdown", f"{path.name}: the first cell is not its title"
    return first.source.splitlines()[0]


def chapter_title(number):
    (path,) = (ROOT / "chapters").glob(f"{number}_*.ipynb")
    found = re.fullmatch(rf"# {number} · (.+)", heading(path))
    assert found, f"{path.name}: its heading {heading(path)!r} is not '# {number} · Title'"
    return found.group(1)


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
@pytest.mark.parametrize("number", [p.name[:2] for p in CHAPTERS if p.name[:2] != "00"])
def test_an_exercise_is_titled_after_its_chapter(folder, number):
    (path,) = (ROOT / folder).glob(f"{number}_*.ipynb")
    assert heading(path) == f"# Exercises {number} · {chapter_title(number)}"
    assert registry.chapter_title(number) == chapter_title(number)
