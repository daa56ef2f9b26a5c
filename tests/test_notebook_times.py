"""tools/notebook_times.py: each notebook's kernel CPU time summed from the JSON lines nbval's
runs write (tests/nbval_kernels.py), against its budget."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("notebook_times", ROOT / "tools" / "notebook_times.py")
notebook_times = importlib.util.module_from_spec(spec)
spec.loader.exec_module(notebook_times)


def cpu_file(tmp_path, rows, name="notebooks-cpu.jsonl"):
    """A file as ``--notebook-cpu-times`` writes it: one JSON line per notebook run."""
    path = tmp_path / name
    path.write_text("".join(json.dumps({"notebook": nb, "cpu": t}) + "\n" for nb, t in rows))
    return str(path)


def test_runs_are_summed_per_notebook_over_files(tmp_path):
    strict = cpu_file(tmp_path, [("chapters/03_backpropagation.ipynb", 1.5),
                                 ("exercises/00_warmup_exercises.ipynb", 0.5)])
    again = cpu_file(tmp_path, [("chapters/03_backpropagation.ipynb", 2.25)], "again.jsonl")
    assert notebook_times.notebook_times([strict, again, str(tmp_path / "missing.jsonl")]) == {
        "chapters/03_backpropagation.ipynb": 3.75, "exercises/00_warmup_exercises.ipynb": 0.5}


def test_every_course_notebook_has_a_budget():
    for folder in ("chapters", "solutions", "exercises"):
        for notebook in (ROOT / folder).glob("*.ipynb"):
            assert notebook_times.budget_of(notebook) is not None, notebook


def test_within_budget_passes_over_twice_fails(tmp_path, capsys):
    budget = notebook_times.BUDGETS["05"]
    assert notebook_times.main([cpu_file(tmp_path, [("chapters/05_handwritten_digits.ipynb", budget * 1.5)])]) == 0
    assert "over budget" in capsys.readouterr().out
    assert notebook_times.main([cpu_file(tmp_path, [("chapters/05_handwritten_digits.ipynb", budget * 2.5)])]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_a_notebook_without_a_budget_fails(tmp_path, capsys):
    assert notebook_times.main([cpu_file(tmp_path, [("chapters/99_new.ipynb", 1.0)])]) == 1
    assert "NO BUDGET" in capsys.readouterr().out
