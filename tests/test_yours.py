"""Your engine (``minigraph/yours.py``) and training on it side by side (``minigraph/chapters/sidebyside.py``).

The engine under test is made ONLY of the answers in the solution notebooks: each piece is the
code cell of ``solutions/`` that defines it, executed on its own.
"""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import minigraph as mg
from minigraph import sidebyside
from minigraph.yours import PIECES, Engine

sys.path.insert(0, str(Path(__file__).parent / "grading"))       # the exercises' answer tables
from exercise_answers.ch03 import backward_aliasing  # noqa: E402  (a share added into in place)

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
WHERE = {"topo_sort": "02_running_a_graph", "evaluate": "02_running_a_graph",
         "backward": "03_backpropagation", "tanh_vjp": "03_backpropagation", "mul_vjp": "03_backpropagation",
         "matmul_vjp": "03_backpropagation", "sigmoid_vjp": "00_warmup", "MyGD": "04_learning",
         "MyMomentum": "04_learning", "softmax_ce_vjp": "05_handwritten_digits"}


def from_solution(name):
    """``name`` as the solution notebook defines it: its defining cell, run alone."""
    cells = json.loads((SOLUTIONS / f"{WHERE[name]}.ipynb").read_text())["cells"]
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and (f"def {name}(" in source or f"class {name}(" in source):
            namespace = {"np": np, "mg": mg}
            exec(compile(source, f"{WHERE[name]}:{name}", "exec"), namespace)
            return namespace[name]
    raise LookupError(f"no cell defines {name} in solutions/{WHERE[name]}.ipynb")


@pytest.fixture(scope="module")
def solution():
    """The pieces of the solution notebooks, by the Engine's names."""
    pieces = {name: from_solution(name) for name in PIECES if name != "optimizer"}
    return {**pieces, "optimizer": from_solution("MyGD")}


@pytest.fixture(scope="module")
def engine(solution):
    return Engine(**solution)


def plain_minigraph(model):
    """The model trained by minigraph alone (Graph.backward and optim.GD): the loss before each step."""
    graph, optimizer, losses = mg.Graph(model.loss), mg.optim.GD(model.parameters, lr=model.lr), []
    for step in range(model.steps):
        losses.append(float(graph.backward(model.feeds(step))))
        optimizer.step()
    return losses


# -- the report of pieces -----------------------------------------------------------------------

def test_the_report_says_every_piece_of_the_solutions_is_yours(engine):
    text, html = repr(engine), engine._repr_html_()
    for name, (exercise, what) in PIECES.items():
        row = next(line for line in text.splitlines() if line.startswith(name + " "))
        assert exercise in row and what in row and row.endswith("yours")
        assert f"<code>{name}</code>" in html
    assert html.count("<b>yours</b>") == len(PIECES)


def test_pieces_left_out_stubs_and_minigraphs_own_are_reported_as_stand_ins(solution):
    def backward(loss, values):
        raise NotImplementedError("Replace this line with your solution.")

    class MyGD(mg.optim.Optimizer):
        def update(self, value, grad, state):
            raise NotImplementedError("Replace this line with your solution.")

    engine = Engine(topo_sort=solution["topo_sort"], backward=backward, optimizer=MyGD,
                    tanh_vjp=mg.tanh.opdef.vjps[0])
    assert set(engine.yours) == {"topo_sort"}
    whose = {row[0]: row[-1] for row in engine.rows()}
    assert whose.pop("topo_sort") == "yours"
    assert set(whose.values()) == {"minigraph's stand-in"}
    assert engine.pieces["backward"] is not backward and engine.pieces["optimizer"] is mg.optim.GD
    assert "<b>yours</b>" not in Engine()._repr_html_()


def test_an_unknown_piece_or_one_that_is_not_a_function_is_refused():
    with pytest.raises(mg.BadValueError, match="no piece called backprop.*topo_sort, evaluate, backward"):
        Engine(backprop=lambda loss, values: {})
    with pytest.raises(mg.BadValueError, match=r"piece tanh_vjp is your answer to 03.tanh_vjp, a function.*"
                                               r"given ndarray"):
        Engine(tanh_vjp=np.zeros(3))
    for optimizer in (mg.optim.GD([mg.Parameter(1.0)], lr=0.1), lambda value, grad: value - grad):
        with pytest.raises(mg.BadValueError, match=r"piece optimizer is your answer to 04.gd, a class such as "
                                                   r"MyGD \(the class itself, not MyGD\(...\)\); it was given"):
            Engine(optimizer=optimizer)


# -- training on the solutions' engine: the same losses as minigraph's ----------------------------

@pytest.mark.parametrize("build", [sidebyside.xor, sidebyside.disk, sidebyside.digits],
                         ids=["xor", "disk", "digits"])
def test_the_solutions_engine_trains_with_minigraphs_losses_to_1e_12(engine, build):
    comparison = sidebyside.compare(engine, build)
    assert comparison.divergence is None
    assert len(comparison.losses) == build().steps
    assert comparison.largest_difference <= 1e-12
    assert np.max(np.abs(np.subtract(comparison.reference, plain_minigraph(build())))) <= 1e-12
    assert comparison.losses[-1] < 0.6 * comparison.losses[0]            # it did learn
    assert "the same losses (to 1e-12)" in repr(comparison)


def test_the_digits_reach_90_percent_held_out_on_the_solutions_engine(engine):
    for seed in (0, 1, 2):
        model = sidebyside.digits(seed)
        engine.train(model)
        assert np.mean(engine.predictions(model) == model.test[1]) >= 0.9


# -- a wrong piece is named where the numbers part ----------------------------------------------

def overwriting_backward(loss, values):
    """Backpropagation that overwrites at fan-out instead of adding."""
    grads = {loss: np.ones_like(values[loss])}
    for node in reversed(mg.Graph(loss).nodes):
        if node.op is not None:
            for k, parent in enumerate(node.inputs):
                gk = node.op.vjps[k](grads[node], values[node], *[values[p] for p in node.inputs], **node.attrs)
                grads[parent] = mg.unbroadcast(gk, np.shape(values[parent]))
    for node in grads:
        if node.kind == "parameter":
            node.grad = grads[node]
    return grads


class Ascent(mg.optim.Optimizer):
    def update(self, value, grad, state):
        return value + self.lr * grad


WRONG = {
    "backward overwrites at fan-out": ("backward", overwriting_backward, sidebyside.digits,
                                       "gradient of 'digits.W", "your backward (03.backward)"),
    "tanh rule without the square": ("tanh_vjp", lambda g, ans, x: g * (1 - ans), sidebyside.disk,
                                     "gradient of 'disk.z1' (add)", "your tanh_vjp (03.tanh_vjp)"),
    "sigmoid rule without g": ("sigmoid_vjp", lambda g, ans, x: ans * (1 - ans), sidebyside.xor,
                               "gradient of 'xor.z1' (add)", "your sigmoid_vjp (00.sigmoid_vjp)"),
    "matmul rule transposed": ("matmul_vjp", lambda g, ans, x, W: (g @ W.T, (x.T @ g) * 0.5), sidebyside.xor,
                               "gradient of 'xor.W2' (parameter)", "your matmul_vjp (03.matmul_vjp)"),
    "mul rule sends x to x": ("mul_vjp", lambda g, ans, x, y: (g * x, g * y), sidebyside.digits,
                              "gradient of 'digits.penalty' (add)", "your mul_vjp (03.mul_vjp)"),
    "softmax rule not divided by n": ("softmax_ce_vjp", lambda g, ans, z, y: g * (np.exp(z) / np.exp(z).sum(
        1, keepdims=True) - np.eye(z.shape[1])[y]), sidebyside.digits, "gradient of 'digits.z2' (add)",
        "your softmax_ce_vjp (05.softmax_ce_vjp)"),
    "update climbs": ("optimizer", Ascent, sidebyside.xor, "new value of 'xor.W1'", "your optimizer (04.gd)"),
}


@pytest.mark.parametrize("mistake", list(WRONG))
def test_a_wrong_piece_is_named_at_the_first_step_and_node_where_the_numbers_part(solution, mistake):
    piece, wrong, build, where, who = WRONG[mistake]
    comparison = sidebyside.compare(Engine(**{**solution, piece: wrong}), build, steps=3)
    assert comparison.divergence.startswith(f"step 0: the {where}")
    assert comparison.divergence.endswith(f"the piece that made the difference: {who}.")
    assert comparison.divergence in " ".join(repr(comparison).split())
    assert all(len(line) <= sidebyside.WIDTH for line in repr(comparison).splitlines())


def test_a_wrong_evaluate_is_named_at_the_node_whose_value_differs(solution):
    def evaluate(output, feed):                          # forgets the attributes (mg.sum's axis)
        values = {}
        for node in mg.Graph(output).nodes:
            values[node] = (np.asarray(feed[node], dtype=float) if node.kind == "input" else node.value
                            if node.op is None else node.op.forward(*[values[p] for p in node.inputs]))
        return values[output]

    def build():
        x, W = mg.Input("x"), mg.Parameter(np.ones((2, 3)), name="W")
        loss = mg.sum(mg.sum(mg.tanh(x @ W), axis=0, name="columns") ** 2, name="loss")
        return sidebyside.Model("columns", loss, [W], 0.1, 2, lambda step: {x: np.eye(2)}, x, loss)
    comparison = sidebyside.compare(Engine(**{**solution, "evaluate": evaluate}), build)
    assert comparison.divergence.startswith("step 0: the value of 'columns' (sum)")
    assert comparison.divergence.endswith("your evaluate (02.evaluate).")


# -- bad pieces get minigraph's errors, naming the piece, the node and the op ----------------------

def digits_step(engine):
    model = sidebyside.digits()
    engine.step(model, engine.optimizer(model.parameters, model.lr), 0)


def test_an_evaluate_that_returns_nothing_is_named(solution):
    def evaluate(output, feed):
        solution["evaluate"](output, feed)
    with pytest.raises(mg.BadValueError, match=r"your evaluate \(02.evaluate\) returned None for 'digits.loss'"):
        digits_step(Engine(**{**solution, "evaluate": evaluate}))


def test_a_backward_that_returns_nothing_or_forgets_a_parameter_is_named(solution):
    with pytest.raises(mg.BadValueError, match=r"your backward \(03.backward\) returned NoneType"):
        digits_step(Engine(**{**solution, "backward": lambda loss, values: None}))

    def no_grad_set(loss, values):
        grads = solution["backward"](loss, values)
        for node in grads:
            node.grad = None
        return grads
    with pytest.raises(mg.GraphError, match=r"did not set .grad of Parameter 'digits.W1'"):
        digits_step(Engine(**{**solution, "backward": no_grad_set}))


def test_a_gradient_of_the_wrong_shape_names_the_node_its_shape_and_the_piece(solution):
    def transposed(loss, values):
        grads = solution["backward"](loss, values)
        for node in grads:
            if node.kind == "parameter":
                grads[node] = node.grad = grads[node].T
        return grads
    with pytest.raises(mg.ShapeError, match=r"your backward \(03.backward\) gave 'digits.W1' \(parameter, "
                                            r"shape \(64, 32\)\) a gradient of shape \(32, 64\)"):
        digits_step(Engine(**{**solution, "backward": transposed}))


def test_a_topological_order_that_misplaces_a_node_is_named(solution):
    with pytest.raises(mg.GraphError, match=r"your topo_sort \(02.topo_sort\) lists 'digits.xW1' before its "
                                            r"input 'digits.x'"):
        digits_step(Engine(**{**solution, "topo_sort": lambda output: [n for n in mg.Graph(output).nodes
                                                                          if n.name != "digits.x"]}))
    with pytest.raises(mg.GraphError, match=r"lists 'digits.x' twice"):
        digits_step(Engine(**{**solution, "topo_sort": lambda output: mg.Graph(output).nodes * 2}))


def test_a_rule_that_fails_or_returns_one_gradient_for_two_inputs_is_named(solution):
    with pytest.raises(mg.OpError, match=r"your tanh_vjp \(03.tanh_vjp\) failed at 'digits.h1' \(tanh of "
                                         r"shape \(50, 32\)\): ZeroDivisionError"):
        digits_step(Engine(**{**solution, "tanh_vjp": lambda g, ans, x: 1 / 0}))
    with pytest.raises(mg.BadValueError, match=r"your matmul_vjp \(03.matmul_vjp\) returned ndarray at "
                                               r"'digits.xW2' \(matmul\): it returns one gradient per input"):
        digits_step(Engine(**{**solution, "matmul_vjp": lambda g, ans, x, W: g @ W.T}))


# -- a wrong piece is named from step 0, whatever training does later ---------------------------

@pytest.mark.parametrize("piece, wrong, build, who", [
    ("tanh_vjp", lambda g, ans, x: g * (1 - x ** 2), sidebyside.disk, "your tanh_vjp (03.tanh_vjp)"),
    ("mul_vjp", lambda g, ans, x, y: (g * x, g * y), sidebyside.digits, "your mul_vjp (03.mul_vjp)"),
], ids=["tanh rule with x", "mul shares swapped"])
def test_a_piece_that_parts_at_step_0_is_named_even_if_training_fails_later(solution, piece, wrong, build, who):
    comparison = sidebyside.compare(Engine(**{**solution, piece: wrong}), build)
    assert comparison.divergence.startswith("step 0: ")
    assert comparison.divergence.endswith(f"the piece that made the difference: {who}.")
    shown = repr(comparison)
    assert "did not set .grad" not in shown and all(len(line) <= sidebyside.WIDTH for line in shown.splitlines())
    if comparison.stopped:                      # it overflowed later: said after the first difference
        assert len(comparison.losses) < build().steps and shown.index(comparison.stopped.split(":")[0]) > 0


def test_nan_on_both_sides_is_not_a_difference():
    assert sidebyside._same(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    comparison = sidebyside.Comparison("x", [1.0, np.nan], [1.0, np.nan])
    assert comparison.largest_difference == 0.0


# -- bad pieces and bad arguments: minigraph's errors naming the piece, the node and what is wrong ---

@pytest.mark.parametrize("piece, rule, error, words", [
    ("tanh_vjp", lambda g, ans, x: g * np.nan, mg.BadValueError,
     r"your tanh_vjp \(03.tanh_vjp\) returned shape \(50, 32\) \[nan.*for input 'digits.z1' at 'digits.h1' \(tanh\), "
     r"not finite numbers"),
    ("tanh_vjp", lambda g, ans, x: None, mg.BadValueError,
     r"your tanh_vjp \(03.tanh_vjp\) returned None for input 'digits.z1' at 'digits.h1' \(tanh\)"),
    ("matmul_vjp", lambda g, ans, x, W: (g @ W.T, (x.T @ g).T), mg.ShapeError,
     r"your matmul_vjp \(03.matmul_vjp\) returned, for input 'digits.W2' of 'digits.xW2' \(matmul\), a gradient "
     r"of shape \(10, 32\), but 'digits.W2' has shape \(32, 10\)"),
    ("softmax_ce_vjp", lambda g, ans, z, y: np.zeros(3), mg.ShapeError,
     r"your softmax_ce_vjp \(05.softmax_ce_vjp\) returned, for input 'digits.z2'"),
], ids=["NaN", "None", "transposed", "wrong shape"])
def test_a_rule_that_returns_nan_none_or_a_wrong_shape_is_named_not_the_backward(solution, piece, rule, error, words):
    with pytest.raises(error, match=words):
        digits_step(Engine(**{**solution, piece: rule}))


def test_an_evaluate_that_returns_another_value_than_it_computed_is_named(solution):
    def evaluate(output, feed):
        return solution["evaluate"](output, feed) * np.nan
    with pytest.raises(mg.BadValueError, match=r"your evaluate \(02.evaluate\) returned scalar \[nan\] for "
                                               r"'digits.loss', but the value it computed for 'digits.loss' is"):
        digits_step(Engine(**{**solution, "evaluate": evaluate}))


def test_a_backward_that_deletes_values_reads_node_value_or_writes_in_place_is_named(solution):
    def deletes(loss, values):
        grads = solution["backward"](loss, values)
        values.clear()
        return grads

    def reads_value(loss, values):
        return solution["backward"](loss, {node: node.value for node in values})


    def by_mg_grad(loss, values):
        return dict(zip(mg.Graph(loss).nodes, mg.grad(loss, mg.Graph(loss).nodes)))

    with pytest.raises(mg.GraphError, match=r"your backward \(03.backward\) deleted the entry of 'digits.x' from values"):
        digits_step(Engine(**{**solution, "backward": deletes}))
    with pytest.raises(mg.BadValueError, match=r"your backward \(03.backward\) called the rule of 'digits.loss' "
                                               r"\(add\) with None for ans: did it read node.value\?"):
        digits_step(Engine(**{**solution, "backward": reads_value}))
    with pytest.raises(mg.BadValueError, match=r"your backward \(03.backward\) added into an array in place \(\+=\)"):
        digits_step(Engine(**{**solution, "backward": backward_aliasing}))
    with pytest.raises(mg.OpError, match=r"mg.grad met 'digits.loss' \(add\), a node of your engine"):
        digits_step(Engine(**{**solution, "backward": by_mg_grad}))


def test_compare_refuses_a_model_for_a_function_no_steps_another_engine_and_two_networks(solution):
    engine = Engine(**solution)
    with pytest.raises(mg.BadValueError, match=r"the function that builds a model, such as mg.sidebyside.xor, "
                                               r"not a model it built \(xor\)"):
        sidebyside.compare(engine, sidebyside.xor())
    with pytest.raises(mg.BadValueError, match=r"it was given str"):
        sidebyside.compare(engine, "xor")
    with pytest.raises(mg.BadValueError, match=r"build\(\) must return a model.*it returned Graph"):
        sidebyside.compare(engine, lambda: mg.Graph(mg.Input("x")))
    for steps in (0, -1, 2.5, True):
        with pytest.raises(mg.BadValueError, match=r"steps is the number of training steps"):
            sidebyside.compare(engine, sidebyside.xor, steps=steps)
    with pytest.raises(mg.BadValueError, match=r"engine must be an mg.yours.Engine\(...\) of pieces; it was given dict"):
        sidebyside.compare(solution, sidebyside.xor)
    with pytest.raises(mg.BadValueError, match=r"reference must be an mg.yours.Engine"):
        sidebyside.compare(engine, sidebyside.xor, reference=mg.optim.GD)
    sizes = iter([[2, 4, 1], [2, 3, 1]])
    with pytest.raises(mg.BadValueError, match=r"build\(\) made two different networks for the two engines "
                                               r"\(from node 'xor.W1' on\)"):
        sidebyside.compare(engine, lambda: sidebyside._binary("xor", *mg.data.xor(), next(sizes),
                                                                   sidebyside.sigmoid, 2.0, 3, 0))


def test_a_topological_order_or_gradients_that_are_not_nodes_are_named(solution):
    with pytest.raises(mg.BadValueError, match=r"your topo_sort \(02.topo_sort\) returned NoneType for "
                                               r"'digits.loss', not a list of nodes"):
        digits_step(Engine(**{**solution, "topo_sort": lambda output: None}))
    with pytest.raises(mg.BadValueError, match=r"your topo_sort \(02.topo_sort\) listed str 'digits.x'"):
        digits_step(Engine(**{**solution, "topo_sort": lambda output: [n.name for n in mg.Graph(output).nodes]}))
    with pytest.raises(mg.BadValueError, match=r"your backward \(03.backward\) returned a dict keyed by str"):
        digits_step(Engine(**{**solution, "backward": lambda loss, values: {
            node.name: grad for node, grad in solution["backward"](loss, values).items()}}))
