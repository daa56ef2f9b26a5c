"""The exercise generator: solution regions become stubs, hidden tests vanish, bad markers fail."""

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from minigraph.grading import generate
from minigraph.grading.generate import CODE_STUB, MarkerError, exercise_notebook

ROOT = Path(__file__).resolve().parents[2]


def notebook(*sources):
    """A notebook of code cells (a source starting with "md:" is a markdown cell)."""
    return new_notebook(cells=[new_markdown_cell(s[3:]) if s.startswith("md:") else new_code_cell(s)
                               for s in sources])


def exercise_sources(*sources):
    return [c.source for c in exercise_notebook(notebook(*sources), "sol.ipynb").cells]


def error_of(*sources):
    with pytest.raises(MarkerError) as info:
        exercise_notebook(notebook(*sources), "sol.ipynb")
    return str(info.value)


# -- solution regions -----------------------------------------------------------------------

def test_a_region_in_a_function_becomes_a_raise_at_its_indentation():
    source = ("def f(x):\n    \"\"\"Doc.\"\"\"\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n"
              "    ### END SOLUTION")
    assert exercise_sources(source) == [f"def f(x):\n    \"\"\"Doc.\"\"\"\n    y = 1\n    {CODE_STUB}"]


def test_a_region_in_a_method_keeps_the_deeper_indentation_and_the_code_around_it():
    source = ("class A:\n    def f(self):\n        if True:\n            ### BEGIN SOLUTION\n"
              "            return 1\n            ### END SOLUTION\n        return 2\n\nA()")
    assert exercise_sources(source) == [
        f"class A:\n    def f(self):\n        if True:\n            {CODE_STUB}\n        return 2\n\nA()"]


def test_the_stub_only_raises_when_the_function_is_called():
    (source,) = exercise_sources("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION")
    namespace = {}
    exec(source, namespace)                              # defining f does not raise
    with pytest.raises(NotImplementedError, match="Replace this line"):
        namespace["f"]()


def test_a_top_level_region_becomes_none_answers_one_per_assigned_name():
    source = "x = 1\n### BEGIN SOLUTION\na = 2\nb: int = 3\nc = d = a\n### END SOLUTION\nprint(x)"
    assert exercise_sources(source) == [
        "x = 1\na = None  # YOUR ANSWER HERE\nb = None  # YOUR ANSWER HERE\n"
        "c = None  # YOUR ANSWER HERE\nd = None  # YOUR ANSWER HERE\nprint(x)"]


def test_a_top_level_region_with_other_code_is_an_error_naming_cell_and_line():
    message = error_of("import numpy", "### BEGIN SOLUTION\nfor i in range(3):\n    print(i)\n### END SOLUTION")
    assert "sol.ipynb, cell 2, line 2" in message
    assert "for i in range(3):" in message and "inside a function" in message


def test_an_indented_region_outside_any_function_is_an_error():
    message = error_of("if True:\n    ### BEGIN SOLUTION\n    a = 1\n    ### END SOLUTION")
    assert "sol.ipynb, cell 1, line 2" in message and "must be inside a function body" in message


def test_magics_do_not_stop_the_function_check():
    assert exercise_sources("%matplotlib inline\ndef f():\n    ### BEGIN SOLUTION\n    return 1\n"
                            "    ### END SOLUTION") == [f"%matplotlib inline\ndef f():\n    {CODE_STUB}"]


def test_a_markdown_region_becomes_a_line_to_write_in():
    assert exercise_sources("md:**Why?**\n\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION") == [
        "**Why?**\n\n_Write your answer here._"]


# -- hidden tests, outputs ------------------------------------------------------------------

def test_hidden_tests_are_removed_and_a_cell_of_only_hidden_tests_disappears():
    sources = exercise_sources("a = 1\n### BEGIN HIDDEN TESTS\nassert a == 1\n### END HIDDEN TESTS\nb = 2",
                               "### BEGIN HIDDEN TESTS\nassert True\n### END HIDDEN TESTS",
                               "c = 3")
    assert sources == ["a = 1\nb = 2", "c = 3"]


def test_outputs_execution_counts_and_timing_are_stripped_but_tags_kept():
    nb = notebook("1 + 1")
    cell = nb.cells[0]
    cell.execution_count = 4
    cell.outputs = [new_output("execute_result", {"text/plain": "2"}, execution_count=4)]
    cell.metadata = {"tags": ["nbval-ignore-output"], "execution": {"iopub.status.busy": "2024"}}
    (out,) = exercise_notebook(nb, "sol.ipynb").cells
    assert out.outputs == [] and out.execution_count is None
    assert out.metadata == {"tags": ["nbval-ignore-output"]}
    assert nb.cells[0].outputs and nb.cells[0].execution_count == 4        # the input is untouched


def test_the_exercise_stores_the_kernelspec_jupyterlab_writes():
    nb = notebook("1 + 1")
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    exercise = exercise_notebook(nb, "sol.ipynb")
    assert exercise.metadata["kernelspec"] == generate.KERNELSPEC
    assert generate.KERNELSPEC["display_name"] == "Python 3 (ipykernel)"
    assert nb.metadata["kernelspec"]["display_name"] == "Python 3"          # the input is untouched


# -- malformed markers ----------------------------------------------------------------------

@pytest.mark.parametrize("source, expected", [
    ("def f():\n    ### BEGIN SOLUTION\n    return 1",
     "cell 2, line 2: '### BEGIN SOLUTION' is never closed"),
    ("def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
     "cell 2, line 3: '### BEGIN SOLUTION' inside the SOLUTION region opened on line 2; regions cannot be nested"),
    ("### BEGIN SOLUTION\na = 1\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS\n### END SOLUTION",
     "cell 2, line 3: '### BEGIN HIDDEN TESTS' inside the SOLUTION region opened on line 1"),
    ("a = 1\n### END SOLUTION",
     "cell 2, line 2: '### END SOLUTION' has no '### BEGIN SOLUTION' before it"),
    ("### BEGIN HIDDEN TESTS\nassert 1\n### END SOLUTION",
     "cell 2, line 3: '### END SOLUTION' cannot close the HIDDEN TESTS region opened on line 1"),
    ("def f():\n    ### BEGIN SOLUTIONS\n    return 1\n    ### END SOLUTION",
     "cell 2, line 2: '### BEGIN SOLUTIONS' looks like a marker but is not exactly one"),
    ("## begin solution\na = 1",
     "cell 2, line 1: '## begin solution' looks like a marker"),
])
def test_malformed_markers_name_the_notebook_cell_and_line(source, expected):
    message = error_of("import numpy", source)
    assert message.startswith("sol.ipynb, ")
    assert expected in message


# -- the command and the committed exercises ------------------------------------------------

def test_committed_exercises_are_exactly_what_the_generator_makes():
    solutions = generate.solution_notebooks(ROOT / "solutions")
    assert solutions, "no solution notebooks found"
    names = [generate.exercise_name(p.name) for p in solutions]
    assert sorted(p.name for p in (ROOT / "exercises").glob("*.ipynb")) == names
    for path, name in zip(solutions, names):
        assert (ROOT / "exercises" / name).read_text(encoding="utf-8") == generate.render(path), (
            f"exercises/{name} is out of date: run `make exercises`")


def test_the_command_writes_then_reports_up_to_date(tmp_path, capsys):
    solutions, exercises = tmp_path / "solutions", tmp_path / "exercises"
    solutions.mkdir()
    nbformat.write(notebook("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION"),
                   solutions / "01_demo.ipynb")
    assert generate.main([str(solutions), str(exercises), "--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    assert generate.main([str(solutions), str(exercises)]) == 0
    assert [p.name for p in exercises.iterdir()] == ["01_demo_exercises.ipynb"]
    written = nbformat.read(exercises / "01_demo_exercises.ipynb", as_version=4)
    assert written.cells[0].source == f"def f():\n    {CODE_STUB}"
    assert generate.main([str(solutions), str(exercises), "--check"]) == 0


def test_the_check_wants_the_exercise_under_its_own_name(tmp_path, capsys):
    """An exercise notebook named as its solution (and its chapter) is not the exercise: a
    chapter and its exercises would show as two tabs of one name in JupyterLab."""
    solutions, exercises = tmp_path / "solutions", tmp_path / "exercises"
    solutions.mkdir()
    exercises.mkdir()
    nbformat.write(notebook("x = 1"), solutions / "03_demo.ipynb")
    (exercises / "03_demo.ipynb").write_text(generate.render(solutions / "03_demo.ipynb"), encoding="utf-8")
    assert generate.exercise_name("03_demo.ipynb") == "03_demo_exercises.ipynb"
    assert generate.main([str(solutions), str(exercises), "--check"]) == 1
    assert str(exercises / "03_demo_exercises.ipynb") in capsys.readouterr().err


def test_the_command_reports_a_marker_error_and_fails(tmp_path, capsys):
    nbformat.write(notebook("x = 1", "### END SOLUTION"), tmp_path / "02_bad.ipynb")
    assert generate.main([str(tmp_path), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "02_bad.ipynb, cell 2, line 1" in err and "has no '### BEGIN SOLUTION'" in err
    assert not (tmp_path / "out").exists()
