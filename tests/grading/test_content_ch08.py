"""Chapter 08's exercise checks, beyond what every chapter gets.

The typical wrong answers (each rejected naming its mistake) and the different right answers
(each accepted) live in ``tests/grading/exercise_answers/ch08.py``, and ``tests/grading/test_content_answers.py``
runs them through ``check()`` and the grader, scans hints and messages for reference code and
grades the solution and exercise notebooks. Here: the chapter's own, stricter rule on hints.
"""

from minigraph.grading.toolkit import registry
from minigraph.grading.toolkit.exercise import hint_levels


def test_the_hints_do_not_contain_code():
    """Hints guide; they never hand over the answer's code (no calls, no assignments)."""
    for exercise in registry.exercises("08"):
        for hint in [*hint_levels(exercise.hint), *(level for c in exercise.cases
                                                     for level in hint_levels(c.get("hint", "")))]:
            for code in ("mg.grad(", "mg.sigmoid(", "np.linalg", "solve(", "=", "return", "lambda"):
                assert code not in hint, f"{exercise.id}: {code!r} in hint {hint!r}"


WORDINGS = {    # minigraph word -> (ways of writing its PyTorch word, near misses that stay wrong)
    "Input": (["torch.tensor", "Tensor", "a plain tensor you pass in", "torch.as_tensor(data)"],
              ["nn.Parameter", "model(x)", "tensor with requires_grad=True", "placeholder"]),
    "Parameter": (["nn.Parameter", "torch.nn.parameter.Parameter", "PARAMETER(w)", "a tensor that requires_grad"],
                  ["torch.tensor", "tensor", "a plain tensor", "tf.Variable"]),
    "Graph.forward": (["model(x)", "mlp(batch)", "model.forward(x)", "forward", "calling the model"],
                      ["tensor(x)", "torch.sigmoid(x)", "model", "loss.backward()", "the model"]),
    "backward(wrt=...)": (["torch.autograd.grad", "autograd.grad(loss, W)", "grad(loss, [W])"],
                          ["loss.backward()", "W.grad", "grad", "tf.gradients", "backward"]),
    "register_backward_hook": (["register_hook", "W.register_hook(fn)", "a backward hook on the tensor",
                                "module.register_full_backward_hook"],
                               ["register_forward_hook", "hook", "optimizer.step()", "a forward hook"]),
}


def test_framework_words_reads_meanings_not_spellings():
    """Every right wording of a word passes its case; every near miss fails it."""
    from minigraph.grading.content.ch08 import framework_words
    from minigraph.grading.toolkit.exercise import grade, run_cases

    cases = [c["inputs"]["word"] for c in framework_words.cases]
    for word, (right, wrong) in WORDINGS.items():
        for given, passes in [(w, True) for w in right] + [(w, False) for w in wrong]:
            result = grade(framework_words, run_cases(framework_words, {word: given}))
            assert (result.cases[cases.index(word)].status == "pass") == passes, (word, given)


def test_framework_words_accepts_the_pytorch_objects_themselves():
    """A learner with PyTorch at hand may put the objects in the dict: they are read by their full
    names (``torch.nn.parameter.Parameter``), and a wrong object stays wrong."""
    import pytest
    torch = pytest.importorskip("torch")
    from minigraph.grading.content.ch08 import framework_words
    from minigraph.grading.toolkit.exercise import grade, run_cases

    objects = {"Input": torch.tensor, "Parameter": torch.nn.Parameter, "Graph.forward": "model(x)",
               "backward(wrt=...)": torch.autograd.grad, "register_backward_hook": torch.Tensor.register_hook}
    assert grade(framework_words, run_cases(framework_words, objects)).status == "passed"
    swapped = {**objects, "Input": torch.nn.Parameter, "Parameter": torch.tensor}
    assert [c.status for c in grade(framework_words, run_cases(framework_words, swapped)).cases][:2] == ["fail"] * 2
