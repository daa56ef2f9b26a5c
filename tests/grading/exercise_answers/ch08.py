"""Chapter 08 (gradients as graphs): typical wrong answers and different right answers."""

import numpy as np

import minigraph as mg

import minigraph.grading.content.ch08  # registers softplus' graph VJP, which an answer below keeps
from minigraph.grading.tools.ch08 import softplus

from . import wrong


# -- 08.softplus_graph_vjp ----------------------------------------------------------------------

def vjp_sigmoid(g, ans, x):
    return g * mg.sigmoid(x)


def vjp_exp_ratio(g, ans, x):
    return g * mg.exp(x) / (1 + mg.exp(x))


def vjp_exp_of_difference(g, ans, x):
    return g * mg.exp(x - ans)                     # ans = log(1 + e^x), so e^(x - ans) = σ(x)


def vjp_from_the_output(g, ans, x):
    return g * (1 - mg.exp(-ans))                 # e^ans = 1 + e^x, so 1 - e^-ans = σ(x)


def vjp_engine_through_ans(g, ans, x):
    return g * mg.grad(mg.sum(ans), x)          # softplus' own graph VJP does the exercise


def vjp_one_over(g, ans, x):
    return g / (1 + mg.exp(-x))


def vjp_numbers(g, ans, x):
    return np.asarray(g.value) / (1 + np.exp(-np.asarray(x.value)))


def vjp_built_from_values(g, ans, x):
    return mg.Constant(np.asarray(g.value) / (1 + np.exp(-np.asarray(x.value)))) + 0 * x


# -- 08.second_derivative -------------------------------------------------------------------------

def second_by_differences(f, x, h=1e-4):
    return (f(x + h) - 2 * f(x) + f(x - h)) / (h * h)     # a node, but no gradient graph


def second_by_differences_of_values(f, x, h=1e-3):
    return (f(x + h) + f(x - h) - f(x) * 2) * (1 / h ** 2)


def second_twice(f, x):
    return mg.grad(mg.grad(f(x), x), x)


def second_with_lists(f, x):
    y = f(x)
    [dy] = mg.grad(y, [x])
    [d2y] = mg.grad(dy, [x])
    return d2y


def second_first_only(f, x):
    return mg.grad(f(x), x)


def second_squared(f, x):
    d = mg.grad(f(x), x)
    return d * d


def second_f_itself(f, x):
    return f(x)


def second_negated(f, x):
    return -second_twice(f, x)


def second_numbers(f, x):
    return mg.Graph(second_twice(f, x)).forward()


# -- 08.framework_words ----------------------------------------------------------------------------

TORCH_WORDS = {"Input": "torch.tensor", "Parameter": "nn.Parameter", "Graph.forward": "model(x)",
               "backward(wrt=...)": "torch.autograd.grad", "register_backward_hook": "register_hook"}
OTHER_TORCH_WORDS = {"Input": "Tensor", "Parameter": "torch.nn.Parameter", "Graph.forward": "model.forward",
                     "backward(wrt=...)": "autograd.grad()",
                     "register_backward_hook": "register_full_backward_hook"}


TABLE_CELLS = {                  # the PyTorch column of the chapter's table, copied word for word
    "Input": "a plain tensor you pass in, `torch.tensor(data)`",
    "Parameter": "`nn.Parameter` (a tensor with `requires_grad=True`)",
    "Graph.forward": "calling the model, `model(x)`",
    "backward(wrt=...)": "`torch.autograd.grad(loss, [W])` (`loss.backward()` *adds* into `.grad`)",
    "register_backward_hook": "`Tensor.register_hook` / `register_full_backward_hook`",
}
FULL_PATHS_AND_CALLS = {"Input": "torch.Tensor(data)", "Parameter": "torch.nn.parameter.Parameter",
                        "Graph.forward": "model.forward(x)",
                        "backward(wrt=...)": "torch.autograd.grad(loss, [W], create_graph=True)",
                        "register_backward_hook": "W.register_hook(print_gradient)"}
IN_WORDS = {"Input": "The tensor of data", "Parameter": "a tensor with requires_grad=True",
            "Graph.forward": "call the model on the batch", "backward(wrt=...)": "autograd.grad or torch.autograd.grad",
            "register_backward_hook": "a backward hook on the tensor"}
SHORT_KEYS = {"input": "tensor", "parameter": "Parameter", "forward": "net(batch)",
              "backward": "grad(loss, W)", "register_backward_hook": "tensor.register_hook"}


class Parameter:
    """A stand-in for ``torch.nn.Parameter`` itself (PyTorch is not a dependency): a learner may
    put the class in the dict instead of its name."""


Parameter.__module__ = "torch.nn.parameter"


def words_with(word, torch_word):
    """The right table of words, except that ``word`` is translated as ``torch_word``."""
    return {**TORCH_WORDS, word: torch_word}


# -- 08.newton_step -----------------------------------------------------------------------------------

def newton_in_place(g, H, x):
    x -= np.linalg.solve(H, g)                   # the caller's x moves too
    return x


# -- the tables ------------------------------------------------------------------------------------

# the engine's functions taken before any check runs (a reference kept, another module path)
SOFTPLUS_GRAPH_VJP = mg.symbolic.GRAPH_VJPS[softplus.opdef][0]


WRONG = {
    "08.softplus_graph_vjp": {
        "g·eˣ/(1 + eˣ): NaN for large x": wrong(vjp_exp_ratio, "overflows", "nan"),
        "softplus' graph VJP, kept before the check": wrong(lambda g, ans, x: SOFTPLUS_GRAPH_VJP(g, ans, x), "graph vjp of softplus"),
        "the upstream gradient g forgotten": wrong(lambda g, ans, x: mg.sigmoid(x), "upstream gradient"),
        "eˣ·g: the division by 1 + eˣ forgotten": wrong(lambda g, ans, x: g * mg.exp(x), "divides by 1 + e"),
        "the sign flipped": wrong(lambda g, ans, x: -g * mg.sigmoid(x), "sign"),
        "σ of the output instead of the input": wrong(lambda g, ans, x: g * mg.sigmoid(ans), "output"),
        "g times the output, as for exp": wrong(lambda g, ans, x: g * ans, "times the output"),
        "numbers computed from .value, not a node": wrong(vjp_numbers, "not a node"),
        "a node built from the numbers in .value": wrong(vjp_built_from_values, ".value"),
        "mg.grad back through ans": wrong(vjp_engine_through_ans, "graph VJP of softplus", "mg.grad back through ans"),
    },
    "08.second_derivative": {
        "finite differences of f": wrong(second_by_differences, "not built by mg.grad"),
        "finite differences, another step": wrong(second_by_differences_of_values, "not built by mg.grad", "mg.grad of mg.grad"),
        "mg.grad once: the first derivative": wrong(second_first_only, "first derivative"),
        "the first derivative squared": wrong(second_squared, "squared"),
        "f itself": wrong(second_f_itself, "f itself"),
        "the sign flipped": wrong(second_negated, "sign"),
        "numbers from a forward pass, not a node": wrong(second_numbers, "not a node"),
    },
    "08.framework_words": {
        "an Input as an nn.Parameter": wrong(words_with("Input", "nn.Parameter"), "placeholder"),
        "a Parameter as a plain tensor": wrong(words_with("Parameter", "torch.tensor"), "requires_grad"),
        "backward(wrt=...) as loss.backward()": wrong(words_with("backward(wrt=...)", "loss.backward()"),
                                                      "adds into .grad"),
        "forward as loss.backward()": wrong(words_with("Graph.forward", "loss.backward()"),
                                            "only computes values"),
        "forward as making a tensor": wrong(words_with("Graph.forward", "tensor(x)"), "not the PyTorch word"),
        "a hook as the optimizer's step": wrong(words_with("register_backward_hook", "optimizer.step"),
                                                "watches gradients"),
        "an entry missing": wrong({k: v for k, v in TORCH_WORDS.items() if k != "Parameter"}, "no entry"),
        "a list of words, not a dict": wrong(list(TORCH_WORDS.values()), "a dict"),
        "the whole hook row, forward hook included": wrong(
            words_with("register_backward_hook", "`register_forward_hook`, `Tensor.register_hook`"),
            "forward pass"),
        "an Input as a tensor or a Parameter": wrong(words_with("Input", "torch.tensor / nn.Parameter"),
                                                     "placeholder"),
        "backward(wrt=...) as the .grad attribute": wrong(words_with("backward(wrt=...)", "W.grad"),
                                                          "not the PyTorch word"),
        "TensorFlow's words": wrong(words_with("Input", "tf.placeholder"), "TensorFlow 1's word"),
        "forward as a torch function called": wrong(words_with("Graph.forward", "torch.sigmoid(x)"),
                                                    "not the PyTorch word"),
    },
    "08.newton_step": {
        "uphill: the step added": wrong(lambda g, H, x: x + np.linalg.solve(H, g), "uphill"),
        "a gradient step": wrong(lambda g, H, x: x - g, "gradient step"),
        "multiplied by H, not by its inverse": wrong(lambda g, H, x: x - H @ g, "instead of by its inverse"),
        "divided by the diagonal of H only": wrong(lambda g, H, x: x - g / np.diag(H), "diagonal"),
        "half a step": wrong(lambda g, H, x: x - 0.5 * np.linalg.solve(H, g), "half a step"),
        "x moved in place": wrong(newton_in_place, "changed its input x in place"),
    },
}

RIGHT = {
    "08.softplus_graph_vjp": {"g·σ(x)": vjp_sigmoid, "g·e^(x − ans)": vjp_exp_of_difference,
                              "from the output ans": vjp_from_the_output, "g / (1 + e⁻ˣ)": vjp_one_over},
    "08.second_derivative": {"mg.grad twice": second_twice, "mg.grad on lists": second_with_lists},
    "08.framework_words": {"short words": TORCH_WORDS, "other spellings": OTHER_TORCH_WORDS,
                           "the model under another name": words_with("Graph.forward", "net(x)"),
                           "a module called on a batch": words_with("Graph.forward", "Module(batch)"),
                           "the chapter's table copied word for word": TABLE_CELLS,
                           "full module paths and calls": FULL_PATHS_AND_CALLS,
                           "in words": IN_WORDS, "short keys": SHORT_KEYS,
                           "the PyTorch class itself": words_with("Parameter", Parameter)},
    "08.newton_step": {"solve H d = g": lambda g, H, x: x - np.linalg.solve(H, g),
                       "the inverse of H": lambda g, H, x: x - np.linalg.inv(H) @ g},
}
