"""Every op at its edge points, first and second order (issue #29).

Random graphs rarely land exactly on 0, on a tie or on a saturated sigmoid, so this table puts
each op of the engine (and each helper op of ``mg.grad``) there on purpose. All its leaves are
float64 Parameters. For every row:

* first order: ``Graph.backward`` and ``mg.grad`` give the same gradient;
* second order: the Hessian, column by column as Hessian-vector products, is the same by
  ``mg.grad(mg.grad(...))`` and by ``Graph.backward`` run through the gradient graph;
* where the function is smooth at that point: the gradient equals central differences of the
  loss, and the Hessian central differences of ``Graph.backward``'s gradient;
* where it is not (a kink, a tie, a jump, a pole): the row states the convention, and the
  engine's numbers must be exactly those.

A non-scalar output is weighted by fixed numbers and summed; a linear op (a reshape, a slice)
is squared so that its graph VJP is differentiated a second time.
"""

from collections import namedtuple

import numpy as np
import pytest

import minigraph as mg
from minigraph import gradops, ops
from minigraph.gradcheck import numerical_grad
from minigraph.gradops import is_zero
from minigraph.opdef import GRAPH_VJPS

inf, nan = np.inf, np.nan
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")   # poles: numpy warns of 1/0


class Edge(namedtuple("Edge", "op point f at convention grad hessian")):
    """One row: ``op`` at ``point``; ``f`` builds the output from Parameters valued ``at``.
    ``convention`` is None where the function is smooth there; else it says what the engine
    answers, and ``grad`` (one entry per Parameter) and ``hessian`` (over all of their numbers,
    flattened in order) are those answers."""

    def __str__(self):
        return f"{self.op}: {self.point}"


def smooth(op, point, f, *at):
    return Edge(op, point, f, at, None, None, None)


def kink(op, point, f, *at, convention, grad, hessian):
    return Edge(op, point, f, at, convention, grad, hessian)


def sq(node):
    return node * node


def helper(name):
    """A helper op of mg.grad (gradops.py, or a fused gradient of ops.py), built by name (some
    are made per arity)."""
    return {"concat_part": ops.concat_part(2)}.get(name) or getattr(gradops, name, None) or getattr(ops, name)


M = [[0.0, 1.0, -1.0], [0.0, 0.0, 0.0]]               # 0 and ±1 in a (2, 3) matrix
TIE = [1.0, 1.0, 0.0]

EDGES = [
    # -- arithmetic ----------------------------------------------------------------------------
    smooth("add", "0 + 0, y broadcast over the rows", lambda x, y: sq(x + y), M, [0.0, -1.0, 1.0]),
    smooth("sub", "0 - 0, y a (2, 1) column", lambda x, y: sq(x - y), M, [[0.0], [1.0]]),
    smooth("mul", "x · y at 0 · 0", lambda x, y: x * y, 0.0, 0.0),
    smooth("mul", "x · x at 0 (one node twice)", lambda x: x * x, 0.0),
    smooth("neg", "-0", lambda x: sq(-x), [0.0, 1.0]),
    smooth("div", "0 / -1 and 1 / 1", lambda x, y: x / y, [0.0, 1.0], [-1.0, 1.0]),
    kink("div", "1 / 0, a pole", lambda x, y: x / y, 1.0, 0.0,
         convention="not defined: what IEEE arithmetic gives, 1/0 = inf, -1/0 = -inf; ∂²/∂y² is "
                    "+inf from the right and -inf from the left: NaN",
         grad=[inf, -inf], hessian=[[0.0, -inf], [-inf, nan]]),
    # -- pow: zero exponents, zero and negative bases -----------------------------------------
    smooth("pow", "x^y at y = 0, x = 1.5 (issue #29: ∂²/∂x∂y = 1/x)", lambda x, y: x ** y, 1.5, 0.0),
    smooth("pow", "x^y at y = 0, x = 0.5", lambda x, y: x ** y, 0.5, 0.0),
    smooth("pow", "x^y at x = 1, y = 0", lambda x, y: x ** y, 1.0, 0.0),
    smooth("pow", "x^y at x = 2, y = 1", lambda x, y: x ** y, 2.0, 1.0),
    smooth("pow", "1.5^y at y = 0", lambda y: mg.Constant(1.5) ** y, 0.0),
    smooth("pow", "x^3, x^2, x^1, x^0 at x = 0", lambda x: x ** mg.Constant([3.0, 2.0, 1.0, 0.0]),
           [0.0, 0.0, 0.0, 0.0]),
    smooth("pow", "x^3, x^2, x^1, x^0 at x = -1.5 (a negative base, integer exponents)",
           lambda x: x ** mg.Constant([3.0, 2.0, 1.0, 0.0]), [-1.5, -1.5, -1.5, -1.5]),
    smooth("pow", "0^y at y = 0.5 (0 for every y > 0)", lambda y: mg.Constant(0.0) ** y, 0.5),
    kink("pow", "0^y at y = 0 (0^0 = 1, 0^y = 0 for y > 0: a jump)", lambda y: mg.Constant(0.0) ** y, 0.0,
         convention="∂y 0^y = 0 (as torch), second order 0", grad=[0.0], hessian=[[0.0]]),
    kink("pow", "x^y at x = 0, y = 0 (both move)", lambda x, y: x ** y, 0.0, 0.0,
         convention="∂x = ∂y = 0 (as torch), second order 0", grad=[0.0, 0.0], hessian=[[0.0, 0.0], [0.0, 0.0]]),
    kink("pow", "x^y at x = 0, y = 2 (x < 0 has no real x^y)", lambda x, y: x ** y, 0.0, 2.0,
         convention="the limits from x > 0: ∂x = y·0^(y-1) = 0, ∂y = 0^y·ln 0 → 0; ∂²x = 2, the rest 0",
         grad=[0.0, 0.0], hessian=[[2.0, 0.0], [0.0, 0.0]]),
    kink("pow", "x^y at x = 0, y = 1", lambda x, y: x ** y, 0.0, 1.0,
         convention="∂x = 1, ∂y = 0; ∂²/∂x∂y = 1 + ln x → -inf is not defined: 1 through ∂x's "
                    "graph, 0 through ∂y's (as torch)",
         grad=[1.0, 0.0], hessian=[[0.0, 1.0], [0.0, 0.0]]),
    kink("pow", "x^y at x = 0, y = 0.5 (the slope of √x at 0)", lambda x, y: x ** y, 0.0, 0.5,
         convention="∂x = +inf, ∂y = 0; ∂²x = -inf, ∂²/∂x∂y = inf·0 = NaN, ∂²y = 0",
         grad=[inf, 0.0], hessian=[[-inf, nan], [nan, 0.0]]),
    kink("pow", "x^y at x = 0, y = -1, a pole", lambda x, y: x ** y, 0.0, -1.0,
         convention="not defined: ∂x = -1·0^-2 = -inf, ∂y = inf·ln 1 = NaN, second order inf or NaN",
         grad=[-inf, nan], hessian=[[inf, nan], [nan, nan]]),
    # -- elementwise functions ----------------------------------------------------------------
    smooth("exp", "at 0 and at -800 (exp underflows to 0)", lambda x: mg.exp(x), [0.0, -800.0]),
    smooth("log", "at 1 (log = 0)", lambda x: mg.log(x), 1.0),
    kink("log", "at 0, a pole", lambda x: mg.log(x), 0.0,
         convention="not defined: the limits from the right, log' = 1/0 = inf, log'' = -inf",
         grad=[inf], hessian=[[-inf]]),
    smooth("tanh", "at 0 and saturated at ±40 (tanh = ±1 exactly)", lambda x: mg.tanh(x), [0.0, 40.0, -40.0]),
    smooth("sigmoid", "at 0 and saturated at ±40 (σ(40) = 1 exactly)", lambda x: mg.sigmoid(x),
           [0.0, 40.0, -40.0]),
    kink("relu", "at 0", lambda x: mg.relu(x), 0.0,
         convention="relu'(0) = 0 (as torch), relu'' = 0 everywhere", grad=[0.0], hessian=[[0.0]]),
    kink("leaky_relu", "at 0, slope 0.1", lambda x: mg.leaky_relu(x, slope=0.1), 0.0,
         convention="the slope of x < 0 at 0 (as torch), second derivative 0", grad=[0.1], hessian=[[0.0]]),
    kink("leaky_relu", "at 0, the default slope", lambda x: mg.leaky_relu(x), 0.0,
         convention="0.01 at 0, second derivative 0", grad=[0.01], hessian=[[0.0]]),
    # -- reductions ----------------------------------------------------------------------------
    smooth("sum", "of 0 and ±1 along axis -1", lambda x: sq(mg.sum(x, axis=-1)), M),
    smooth("sum", "of everything, keepdims", lambda x: sq(mg.sum(x, keepdims=True)), M),
    smooth("mean", "along axis -2, keepdims", lambda x: sq(mg.mean(x, axis=-2, keepdims=True)), M),
    smooth("max", "a single maximum at 0", lambda x: sq(mg.max(x)), [0.0, -1.0, -2.0]),
    kink("max", "a tie of two", lambda x: mg.max(x), TIE,
         convention="the tied places share the gradient equally (as torch.amax), second order 0",
         grad=[[0.5, 0.5, 0.0]], hessian=np.zeros((3, 3))),
    kink("max", "a tie in one row, along axis -1", lambda x: mg.sum(mg.max(x, axis=-1)), [[1.0, 1.0], [0.0, 2.0]],
         convention="shared in the row that ties, whole in the other", grad=[[[0.5, 0.5], [0.0, 1.0]]],
         hessian=np.zeros((4, 4))),
    # -- shapes --------------------------------------------------------------------------------
    smooth("reshape", "to (-1, 1)", lambda x: sq(mg.reshape(x, (-1, 1))), M),
    smooth("transpose", "with negative axes", lambda x: sq(mg.transpose(x, (-1, 0))), M),
    smooth("getitem", "a repeated and a negative index", lambda x: sq(x[[0, -1, 0]]), [0.0, 1.0, -1.0]),
    smooth("concatenate", "one node twice", lambda x, y: sq(mg.concatenate([x, y, x], axis=-1)), M, M),
    smooth("split", "parts nobody uses", lambda x: sq(mg.split(x, 3, axis=-1)[2]), [0.0, 1.0, -1.0, 0.0, 0.0, 2.0]),
    smooth("output", "the first of two parts", lambda x: sq(mg.split(x, 2, axis=0)[0]), M),
    # -- matrix products -----------------------------------------------------------------------
    smooth("matmul", "vector @ vector at 0", lambda x, y: x @ y, [0.0, 0.0, 0.0], [1.0, -1.0, 0.0]),
    smooth("matmul", "(2, 3) @ (3,) and (3,) @ (3, 2)", lambda A, v: sq(A @ v) + sq(v @ mg.transpose(A)),
           M, [1.0, 0.0, -1.0]),
    smooth("linear", "rows at 0", lambda x, W, b: sq(mg.linear(x, W, b)),
           [[0.0, 0.0, 0.0], [0.0, 1.0, -1.0]], [[1.0, -1.0], [0.0, 0.0], [1.0, 1.0]], [0.0, 0.0]),
    smooth("linear", "a (1, 3) bias stretches a (1, 1) product", lambda x, W, b: sq(mg.linear(x, W, b)),
           [[0.0]], [[1.0]], [[0.0, -1.0, 1.0]]),
    smooth("matmul", "stacks that broadcast, at 0", lambda x, y: sq(x @ y),
           [[[[0.0, 1.0, -1.0]]], [[[0.0, 0.0, 0.0]]]], [[[1.0, 0.0], [0.0, -1.0], [0.0, 0.0]]] * 2),
    smooth("matmul", "a vector @ a stack, a stack @ a vector", lambda v, S, w: mg.sum(sq(v @ S)) + mg.sum(sq(S @ w)),
           [0.0, 1.0, -1.0], np.transpose([M, M[::-1]], (0, 2, 1)), [0.0, 1.0]),
    # -- the pieces of a transformer -------------------------------------------------------------
    smooth("gelu", "at 0 and saturated at ±40 (gelu(-40) = 0 exactly)", lambda x: mg.gelu(x), [0.0, 40.0, -40.0, -1.0]),
    smooth("layer_norm", "a constant row (variance 0: x̂ = 0), gamma 0", lambda x, g, b: mg.layer_norm(x, g, b, eps=0.1),
           [[1.0, 1.0, 1.0], [0.0, 1.0, -1.0]], [0.0, 1.0, -1.0], [0.0, 0.0, 0.0]),
    smooth("layer_norm", "without beta, a row of 0 and a row of ±40", lambda x, g: mg.layer_norm(x, g),
           [[0.0, 0.0, 0.0], [40.0, -40.0, 0.0]], [1.0, 0.0, -1.0]),
    smooth("embedding", "the first and last rows, one id three times",
           lambda t: sq(mg.embedding(t, mg.Constant([[0, 2, 0], [0, 1, 2]]))), M + [[1.0, 1.0, 1.0]]),
    # -- softmax and losses --------------------------------------------------------------------
    smooth("softmax", "a tie and a saturated row", lambda x: mg.softmax(x), [[0.0, 0.0, 0.0], [40.0, 0.0, -40.0]]),
    smooth("softmax", "along axis 0", lambda x: mg.softmax(x, axis=0), [[0.0, 40.0, 0.0], [0.0, -40.0, 1.0]]),
    smooth("softmax", "a causal mask: one place allowed (probability 1), a tie, a saturated row",
           lambda x: mg.softmax(x, mask=mg.causal_mask(3)), [[5.0, 0.0, 0.0], [0.0, 0.0, 7.0], [40.0, 0.0, -40.0]]),
    smooth("softmax", "a mask along axis 0 that broadcasts", lambda x: mg.softmax(x, axis=0, mask=np.array([[True], [False]])),
           [[0.0, 40.0, 0.0], [0.0, -40.0, 1.0]]),
    smooth("log_softmax", "a tie and a saturated row", lambda x: mg.log_softmax(x),
           [[0.0, 0.0, 0.0], [40.0, 0.0, -40.0]]),
    smooth("log_softmax", "along axis 0", lambda x: mg.log_softmax(x, axis=0), [[0.0, 40.0, 0.0], [0.0, -40.0, 1.0]]),
    smooth("mse", "at its minimum, p = t", lambda p, t: mg.mse(p, t), [0.0, 1.0, -1.0], [0.0, 1.0, -1.0]),
    smooth("bce_with_logits", "z = 0 and ±40, labels 0 and 1", lambda z, y: mg.bce_with_logits(z, y),
           [0.0, 0.0, 40.0, -40.0, 40.0, -40.0], [0.0, 1.0, 0.0, 1.0, 1.0, 0.0]),
    smooth("softmax_cross_entropy", "labels 0 and C-1 (the class bounds), tied logits",
           lambda z: mg.softmax_cross_entropy(z, mg.Constant([0, 2])), np.zeros((2, 3))),
    smooth("softmax_cross_entropy", "saturated logits, the wrong class and the right one",
           lambda z: mg.softmax_cross_entropy(z, mg.Constant([0, 2])), [[-40.0, 0.0, 40.0], [-40.0, 0.0, 40.0]]),
    smooth("softmax_cross_entropy", "one example (1-D logits), label C-1",
           lambda z: mg.softmax_cross_entropy(z, mg.Constant(np.array(2))), [0.0, 0.0, 0.0]),
    smooth("softmax_cross_entropy", "one-hot labels at the class bounds, as Parameters",
           lambda z, t: mg.softmax_cross_entropy(z, t), [[0.0, 0.0, 0.0], [40.0, 0.0, -40.0]],
           [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    # -- the helper ops of mg.grad (gradops.py) ------------------------------------------------
    smooth("ones_like", "at 0", lambda x: x * helper("ones_like")(x), [0.0, 1.0]),
    smooth("zeros_like", "at 0", lambda x: sq(x) + helper("zeros_like")(x), [0.0, 1.0]),
    smooth("size", "at 0", lambda x: x * helper("size")(x), [0.0, 1.0]),
    smooth("size_ratio", "at 0", lambda a, b: a * helper("size_ratio")(a, b), [0.0, 1.0], M),
    smooth("examples", "at 0", lambda x: x * helper("examples")(x), M),
    smooth("one_hot", "labels 0 and C-1", lambda z: z * helper("targets")(mg.Constant([0, 2]), z), np.zeros((2, 3))),
    kink("step", "at 0, its jump", lambda x: helper("step")(x), 0.0,
         convention="a mask: gradient 0, also at its jump", grad=[0.0], hessian=[[0.0]]),
    kink("is_zero", "at 0, its jump", lambda x: helper("is_zero")(x), 0.0,
         convention="a mask: gradient 0, also at its jump", grad=[0.0], hessian=[[0.0]]),
    kink("leaky_slope", "at 0, its jump", lambda x: helper("leaky_slope")(x, slope=0.1), 0.0,
         convention="a mask: gradient 0, also at its jump", grad=[0.0], hessian=[[0.0]]),
    kink("max_share", "at a tie, its jump", lambda x: helper("max_share")(x), TIE,
         convention="a mask: gradient 0, also at its jump", grad=[np.zeros(3)], hessian=np.zeros((3, 3))),
    smooth("sum_to", "(2, 3) summed to (3,)", lambda g, x: sq(helper("sum_to")(g, x)), M, [0.0, 0.0, 0.0]),
    smooth("broadcast_like", "(3,) spread to (2, 3)", lambda g, x: sq(helper("broadcast_like")(g, x)),
           [0.0, 1.0, -1.0], M),
    smooth("reshape_like", "(2, 3) as (3, 2)", lambda a, b: sq(helper("reshape_like")(a, b)), M, np.zeros((3, 2))),
    smooth("expand_dims", "axis 0", lambda g: sq(helper("expand_dims")(g, axis=0)), [0.0, 1.0, -1.0]),
    smooth("seed", "of a (3,) output", lambda s, y: sq(helper("seed_for")(s, y)), [0.0, 1.0, -1.0], [0.0, 0.0, 0.0]),
    smooth("as_matrix", "a vector as a column", lambda x: sq(helper("as_matrix")(x, side="right")), [0.0, 1.0, -1.0]),
    smooth("product_matrix", "(3,) @ (3, 2)", lambda g, x, y: sq(helper("product_matrix")(g, x, y)),
           [0.0, 1.0], [0.0, 0.0, 0.0], np.zeros((3, 2))),
    smooth("sum_to_product", "a (1, 4) x, a stretched (2, 3) gradient",
           lambda g, x, W: sq(helper("sum_to_product")(g, x, W)), M, [[0.0, 1.0, -1.0, 0.0]], np.zeros((4, 3))),
    smooth("concat_part", "the second of two", lambda g, a, b: sq(helper("concat_part")(g, a, b, axis=1, i=1)),
           M, [[0.0], [0.0]], [[0.0, 0.0], [0.0, 0.0]]),
    smooth("transpose", "mg.grad's matrix transpose of a stack", lambda x: sq(helper("matrix_transpose")(x)), [M, M]),
    smooth("to_operand", "a (2, 2, 3) stack summed to a (3,) vector viewed as a row",
           lambda a, x: sq(helper("to_operand")(a, x, side="left")), [M, M], [0.0, 0.0, 0.0]),
    smooth("to_operand", "a (4, 3) tall matrix as a (2, 2, 3) stack of rows",
           lambda a, x: sq(helper("to_operand")(a, x, side="left")), M + M, [M, M]),
    smooth("left_matrix", "a (2, 2, 3) stack of rows times a (3, 2) matrix, as one tall matrix",
           lambda x, y: sq(helper("left_matrix")(x, y)), [M, M], np.zeros((3, 2))),
    smooth("to_stack", "a (3,) vector's gradient spread over a (2, 2, 3) stack",
           lambda h, a: sq(helper("to_stack")(h, a, side="left")), [0.0, 1.0, -1.0], [M, M]),
    smooth("to_stack", "a (2, 2, 3) stack of rows as one (4, 3) tall matrix",
           lambda h, a: sq(helper("to_stack")(h, a, side="left")), [M, M], M + M),
    smooth("embedding_grad", "repeated ids", lambda g, t: sq(helper("embedding_grad")(g, t, mg.Constant([2, 0, 2]))),
           [[0.0, 1.0], [-1.0, 0.0], [1.0, 1.0]], np.zeros((3, 2))),
    smooth("scatter", "a repeated and a negative index",
           lambda g, x: sq(helper("scatter")(g, x, index=([0, -1, 0],))), [0.0, 1.0, -1.0], [0.0, 0.0, 0.0]),
    # -- the fused gradients of ops.py: their derivatives are their expansions' -----------------
    smooth("tanh_grad", "g and t at 0 and ±1", lambda g, t: helper("tanh_grad")(g, t), [0.0, 1.0, -1.0], [0.0, 1.0, -0.5]),
    smooth("sigmoid_grad", "g and s at 0 and 1", lambda g, s: helper("sigmoid_grad")(g, s),
           [0.0, 1.0, -1.0], [0.0, 1.0, 0.5]),
    smooth("relu_grad", "away from 0", lambda g, x: helper("relu_grad")(g, x), [0.0, 1.0, -1.0], [0.5, 2.0, -1.0]),
    kink("relu_grad", "at 0, the mask's jump", lambda g, x: helper("relu_grad")(g, x), 1.0, 0.0,
         convention="the mask x > 0 has gradient 0, also at its jump", grad=[0.0, 0.0], hessian=np.zeros((2, 2))),
    smooth("gelu_grad", "at 0 and ±1", lambda g, x: helper("gelu_grad")(g, x), [0.0, 1.0, -1.0], [0.0, 1.0, -1.0]),
    # GELU in two steps, and its gradient from the kept tanh (t an input of its own here)
    smooth("gelu_tanh", "at 0 and ±1", lambda x: helper("gelu_tanh")(x), [0.0, 1.0, -1.0]),
    smooth("gelu_of_tanh", "x and t at 0 and ±1", lambda x, t: helper("gelu_of_tanh")(x, t),
           [0.0, 1.0, -1.0], [0.0, 0.5, -0.5]),
    smooth("gelu_grad_of_tanh", "at 0 and ±1", lambda g, x, t: helper("gelu_grad_of_tanh")(g, x, t),
           [0.0, 1.0, -1.0], [0.0, 1.0, -1.0], [0.0, 0.5, -0.5]),
    smooth("softmax_grad", "of a row's softmax", lambda g, x: helper("softmax_grad")(g, mg.softmax(x)),
           [[0.0, 1.0, -1.0]], [[0.0, 1.0, -1.0]]),
    smooth("layer_norm_grad_x", "rows of three", lambda g, x, gamma: helper("layer_norm_grad_x")(g, x, gamma),
           M, [[0.0, 1.0, -1.0], [2.0, 0.5, -1.0]], [1.0, 0.5, 2.0]),
    smooth("layer_norm_grad_gamma", "rows of three",
           lambda g, x, gamma: sq(helper("layer_norm_grad_gamma")(g, x, gamma)),
           M, [[0.0, 1.0, -1.0], [2.0, 0.5, -1.0]], [1.0, 0.5, 2.0]),
    # layer norm's first steps, and its two gradients from them (c and s inputs of their own here)
    smooth("layer_norm_centered", "rows of three", lambda x: sq(helper("layer_norm_centered")(x)),
           [[0.0, 1.0, -1.0], [2.0, 0.5, -1.0]]),
    smooth("layer_norm_scale", "rows of three", lambda c: sq(helper("layer_norm_scale")(c)),
           [[0.0, 1.0, -1.0], [1.5, 0.0, -1.5]]),
    smooth("layer_norm_grad_x_from", "rows of three",
           lambda g, c, s, gamma: helper("layer_norm_grad_x_from")(g, c, s, gamma),
           M, [[0.0, 1.0, -1.0], [1.5, 0.0, -1.5]], [[1.2], [0.8]], [1.0, 0.5, 2.0]),
    smooth("layer_norm_grad_gamma_from", "rows of three",
           lambda g, c, s, gamma: sq(helper("layer_norm_grad_gamma_from")(g, c, s, gamma)),
           M, [[0.0, 1.0, -1.0], [1.5, 0.0, -1.5]], [[1.2], [0.8]], [1.0, 0.5, 2.0]),
    smooth("layer_norm_grad_beta", "rows of three", lambda g, x, b: sq(helper("layer_norm_grad_beta")(g, x, b)),
           M, [[0.0, 1.0, -1.0], [2.0, 0.5, -1.0]], [0.0, 0.0, 0.0]),
    smooth("softmax_ce_grad", "labels 0 and C-1", lambda z: helper("softmax_ce_grad")(z, mg.Constant([0, 2])),
           [[0.0, 1.0, -1.0], [0.5, 0.0, 0.0]]),
    smooth("matmul_add", "a + x @ y at 0", lambda a, x, y: sq(helper("matmul_add")(a, x, y)),
           np.zeros((2, 2)), M, [[0.0, 1.0], [-1.0, 0.0], [1.0, 1.0]]),
]


# -- checking one row ------------------------------------------------------------------------------

def build(row):
    """The row's Parameters and its output as one number (a non-scalar output weighted by fixed,
    different numbers, so that no direction is left out)."""
    params = [mg.Parameter(np.array(v, dtype=np.float64), name=f"p{i}") for i, v in enumerate(row.at)]
    out = row.f(*params)
    shape = np.shape(mg.Graph(out).forward())
    if shape:
        weights = np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)
        out = mg.sum(out * mg.Constant(weights, name="weights"))
    return params, out


def flat(values):
    return np.concatenate([np.ravel(v) for v in values]) if values else np.zeros(0)


def reached(output, params):
    """The Parameters the output's graph contains (mg.grad and backward refuse the others)."""
    nodes = mg.Graph(output).nodes
    return [p for p in params if p in nodes]


def backward_gradient(output, params):
    """Graph.backward's gradient of every Parameter, flattened (zeros for those not reached)."""
    wrt = reached(output, params)
    mg.Graph(output).backward(wrt=wrt)
    return flat([p.grad if p in wrt and p.grad is not None else np.zeros(np.shape(p.value)) for p in params])


def grad_gradient(output, params):
    """mg.grad's gradient of every Parameter, computed and flattened (zeros for those not reached)."""
    wrt = reached(output, params)
    values = mg.Graph(mg.grad(output, wrt)).forward() if wrt else []
    by_node = dict(zip(wrt, values if len(wrt) > 1 else [values]))
    return flat([by_node.get(p, np.zeros(np.shape(p.value))) for p in params])


def unit_feeds(params):
    """For each number of the Parameters, values for them that are 1 there, 0 elsewhere."""
    sizes = [np.size(p.value) for p in params]
    for e in np.eye(sum(sizes)):
        parts = np.split(e, np.cumsum(sizes)[:-1])
        yield {p: part.reshape(np.shape(p.value)) for p, part in zip(params, parts)}


def hessians(loss, params):
    """The Hessian, a row per number of the gradient: its own gradient, by mg.grad (so
    mg.grad(mg.grad(...))) and by Graph.backward run through the gradient graph. One number at a
    time, not along a direction: at a pole, 0 · inf would turn a whole row into NaN."""
    by_grad, by_backward = [], []
    for g, p in zip(mg.grad(loss, params), params):
        for index in np.ndindex(np.shape(p.value)):
            entry = g[index] if index else g
            by_grad.append(grad_gradient(entry, params))
            by_backward.append(backward_gradient(entry, params))
    return np.array(by_grad), np.array(by_backward)


def numeric_hessian(loss, params, eps=1e-5):
    """Central differences of Graph.backward's gradient, one number of the Parameters at a time."""
    base = [np.array(p.value) for p in params]
    columns = []
    for step in unit_feeds(params):
        moved = []
        for sign in (1, -1):
            for p, b in zip(params, base):
                p.value = b + sign * eps * step[p]
            moved.append(backward_gradient(loss, params))
        columns.append((moved[0] - moved[1]) / (2 * eps))
    for p, b in zip(params, base):
        p.value = b
    return np.array(columns).T


def same_numbers(a, b, rtol=1e-12, atol=1e-15):
    """Equal up to rounding; inf equals inf of its sign and NaN equals NaN."""
    return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def near(analytic, numeric, rtol, atol):
    scale = np.max(np.abs(numeric), initial=0.0)
    return np.shape(analytic) == np.shape(numeric) and np.all(np.abs(analytic - numeric) <= atol + rtol * scale)


def check(row):
    params, loss = build(row)
    by_backward = backward_gradient(loss, params)
    by_grad = grad_gradient(loss, params)
    assert same_numbers(by_grad, by_backward), f"mg.grad {by_grad} vs Graph.backward {by_backward}"
    hessian, hessian_by_backward = hessians(loss, params)
    # at a pole, Graph.backward sends a mask's zero gradient through 1/0 (0 · inf = NaN) where
    # mg.grad sends none: there the two are compared where both are finite
    finite = np.isfinite(hessian) & np.isfinite(hessian_by_backward) if row.convention else ...
    assert same_numbers(hessian[finite], hessian_by_backward[finite], rtol=1e-10), \
        f"Hessian by mg.grad twice\n{hessian}\nvs Graph.backward of the gradient graph\n{hessian_by_backward}"
    if row.convention is None:
        graph = mg.Graph(loss)
        numeric = flat([numerical_grad(graph, p) for p in params])
        assert near(by_backward, numeric, rtol=1e-5, atol=1e-6), f"gradient {by_backward} vs central differences {numeric}"
        numeric = numeric_hessian(loss, params)
        assert near(hessian, numeric, rtol=1e-4, atol=1e-5), f"Hessian\n{hessian}\nvs central differences\n{numeric}"
    else:
        grad = flat([np.asarray(g, dtype=float) for g in row.grad])
        assert same_numbers(by_backward, grad), f"gradient {by_backward}, by the convention {grad}"
        assert same_numbers(hessian, np.asarray(row.hessian, dtype=float)), \
            f"Hessian\n{hessian}\nby the convention\n{np.asarray(row.hessian)}"


@pytest.mark.parametrize("row", EDGES, ids=str)
def test_each_op_at_its_edge_points(row):
    check(row)


def test_the_table_covers_every_op():
    """Every op of the table, every multi-output piece and every helper op of mg.grad has a row,
    and each row's graph contains the op it names."""
    every_op = {value.opdef.name for module in (ops, gradops) for value in vars(module).values()
                if hasattr(value, "opdef")} | {"split", "output", "concatenate", "concat_part"}
    for row in EDGES:
        params, loss = build(row)
        assert row.op in {n.op.name for n in mg.Graph(loss).nodes if n.op is not None}, str(row)
    assert every_op - {row.op for row in EDGES} == set()


def test_the_mixed_derivative_of_x_to_the_y_at_y_0_is_1_over_x():
    """Issue #29's probe: d/dy of d(x^y)/dx at y = 0 is x^(y-1)·(1 + y ln x) = 1/x (it was x)."""
    x, y = mg.Parameter(1.5, name="x"), mg.Parameter(0.0, name="y")
    dx, = mg.grad(x ** y, [x])
    assert np.isclose(mg.Graph(mg.grad(dx, [y])[0]).forward(), 1 / 1.5, rtol=1e-15)


def _old_power_x(g, ans, x, y):
    return gradops.sum_to(g * y * x ** (y - 1 + 2 * is_zero(y)), x)


def _relu_slope_1_at_0(g, ans, x):
    return g * (1 - gradops.step(-x))


@pytest.mark.parametrize("op, vjp, point", [
    (ops.power, [_old_power_x, GRAPH_VJPS[ops.power.opdef][1]], "x^y at y = 0, x = 1.5"),
    (ops.relu, [_relu_slope_1_at_0], "at 0"),
    (ops.max, [lambda g, ans, x, axis=None, keepdims=False: gradops.broadcast_like(g, x) * gradops.step(x)],
     "a tie of two"),
], ids=["pow as before issue 29 (smooth)", "relu'(0) = 1 (a convention)", "max: ties not shared"])
def test_a_wrong_graph_vjp_fails_its_row(monkeypatch, op, vjp, point):
    """The table can fail: a graph VJP that is wrong only at an edge point is caught there."""
    monkeypatch.setitem(GRAPH_VJPS, op.opdef, vjp)
    row = next(row for row in EDGES if row.op == op.opdef.name and row.point.startswith(point))
    with pytest.raises(AssertionError):
        check(row)
