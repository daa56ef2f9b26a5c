"""tools/notebook_times.py: each notebook's nbval time summed from JUnit XML, against its budget."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("notebook_times", ROOT / "tools" / "notebook_times.py")
notebook_times = importlib.util.module_from_spec(spec)
spec.loader.exec_module(notebook_times)


def junit(tmp_path, cells):
    """A JUnit XML file as nbval writes it: one testcase per cell, classname = the notebook."""
    rows = "".join(f'<testcase classname="{nb}" name="Cell {i}" time="{t}"/>'
                   for i, (nb, t) in enumerate(cells))
    path = tmp_path / "notebooks.xml"
    path.write_text(f'<testsuites><testsuite name="pytest">{rows}</testsuite></testsuites>')
    return str(path)


def test_cells_are_summed_per_notebook(tmp_path):
    path = junit(tmp_path, [("chapters.03_backpropagation.ipynb", 1.5),
                            ("chapters.03_backpropagation.ipynb", 2.25),
                            ("exercises.00_warmup.ipynb", 0.5),
                            ("tests.test_graph", 9.0)])           # not a notebook: left out
    assert notebook_times.notebook_times([path]) == {
        "chapters/03_backpropagation.ipynb": 3.75, "exercises/00_warmup.ipynb": 0.5}


def test_every_course_notebook_has_a_budget():
    for folder in ("chapters", "solutions", "exercises"):
        for notebook in (ROOT / folder).glob("*.ipynb"):
            assert notebook_times.budget_of(notebook) is not None, notebook


def test_within_budget_passes_over_twice_fails(tmp_path, capsys):
    budget = notebook_times.BUDGETS["05"]
    assert notebook_times.main([junit(tmp_path, [("chapters.05_handwritten_digits.ipynb", budget * 1.5)])]) == 0
    assert "over budget" in capsys.readouterr().out
    assert notebook_times.main([junit(tmp_path, [("chapters.05_handwritten_digits.ipynb", budget * 2.5)])]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_a_notebook_without_a_budget_fails(tmp_path, capsys):
    assert notebook_times.main([junit(tmp_path, [("chapters.99_new.ipynb", 1.0)])]) == 1
    assert "NO BUDGET" in capsys.readouterr().out
