"""Each op's maths in one place: its row (``ops.py``, ``gradops.py``, with the longer numerics in
``kernels.py`` and ``losses.py``). These tests fail when an op has maths elsewhere, or when the
pieces of a row disagree: a fused gradient that is not, bit for bit, the VJP it replaces; an
out= form that is not the forward; an expansion that drifted from the fused op it expands."""

import ast
import inspect
import pathlib

import numpy as np
import pytest

import minigraph as mg
from minigraph import gradops, kernels, ops
from minigraph.dtypes import row_of
from minigraph.opdef import GRAPH_VJPS, OUTPUT, OpDef
from test_random_graphs import same

PACKAGE = pathlib.Path(mg.__file__).parent
OP_MODULES = {"minigraph.ops", "minigraph.gradops", "minigraph.kernels", "minigraph.losses",
              "minigraph.opdef", "numpy"}
FLOATS = [np.float32, np.float64]


def rows():
    """Every row the engine has: the table's, the gradient ops', a few of the rows made per size
    (split, concatenate, a concatenation's part) and the fused gradients."""
    found = {OUTPUT: "opdef.OUTPUT"}
    for module in (ops, gradops):
        for name, f in vars(module).items():
            if isinstance(getattr(f, "opdef", None), OpDef):
                found.setdefault(f.opdef, f"{module.__name__}.{name}")
    for k in (2, 3):
        for made in (ops._split_op(k), ops._concat_op(k), ops.concat_part(k)):
            found.setdefault(made.opdef, f"{made.opdef.name}({k})")
    return found


def home(function):
    """The module a function (or numpy ufunc) is written in."""
    if isinstance(function, np.ufunc):
        return "numpy"
    module = getattr(inspect.unwrap(function), "__module__", None) or ""
    return "numpy" if module.split(".")[0] == "numpy" else module


def test_every_row_has_its_maths_in_the_op_modules():
    wrong = []
    for row, where in rows().items():
        pieces = {"forward": row.forward, "out": row.out, "expansion": row.expansion}
        pieces.update({f"vjp {k}": vjp for k, vjp in enumerate(row.vjps)})
        vjps = GRAPH_VJPS.get(row) or GRAPH_VJPS.get(row.name) or []
        pieces.update({f"graph vjp {k}": vjp for k, vjp in enumerate(vjps)})
        pieces.update({f"fusion {k}": getattr(f, "op", f).opdef.forward for k, f in row.fusions.items()})
        wrong += [f"{where}: {piece} in {home(f)}" for piece, f in pieces.items()
                  if f is not None and home(f) not in OP_MODULES]
    assert wrong == []
    assert len(rows()) > 60


def test_every_differentiable_row_has_a_graph_vjp():
    missing = [where for row, where in rows().items()
               if not (GRAPH_VJPS.get(row) or GRAPH_VJPS.get(row.name) or row.expansion)]
    assert missing == []


# -- the compiler and symbolic define no op and no formula ------------------------------------------

# numpy calls these modules may make: bookkeeping, no op's maths
ALLOWED = {
    "shape": "shapes", "ndim": "shapes", "dtype": "dtypes", "finfo": "dtypes", "prod": "a buffer's size",
    "empty": "a buffer", "array_equal": "checking an out= form against the forward",
    "all": "an all-ones constant", "copyto": "writing an update into a Parameter",
    "ascontiguousarray": "a returned copy in C order",
    "vdot": "a bound on an update's size, before writing it in place",
    "add.reduce": "checking an update is finite",
    "subtract": "an update W - change written in place, np.subtract(W, change, out=W)",
    "may_share_memory": "checking that a value said to be new lies outside its inputs",
}


def numpy_calls_and_rows(path):
    """(numpy calls, OpDef/defop calls) of a module's source, as (line, name) pairs."""
    tree = ast.parse(path.read_text())
    calls, made = [], []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        parts, f = [], node.func
        while isinstance(f, ast.Attribute):
            parts.insert(0, f.attr)
            f = f.value
        if isinstance(f, ast.Name):
            if f.id in ("np", "numpy") and parts:
                calls.append((node.lineno, ".".join(parts)))
            if (parts[-1] if parts else f.id) in ("OpDef", "defop"):
                made.append((node.lineno, parts[-1] if parts else f.id))
    return calls, made


GRAPH_SIDE = sorted((PACKAGE / "compiler").glob("*.py")) + [PACKAGE / "symbolic.py"]


@pytest.mark.parametrize("path", GRAPH_SIDE, ids=lambda p: p.name)
def test_the_compiler_and_symbolic_define_no_op_and_no_formula(path):
    calls, made = numpy_calls_and_rows(path)
    assert made == []
    assert [(line, name) for line, name in calls if name not in ALLOWED] == []


def test_the_scan_finds_an_op_and_a_formula(tmp_path):
    """The scan above sees what it looks for (it would have failed on the old rewrites.py)."""
    source = tmp_path / "m.py"
    source.write_text("import numpy as np\nTANH = OpDef('tanh_grad', lambda g, s: g * (1 - s * s), [])\n"
                      "def f(x, out):\n    return np.maximum(x, 0, out=out), np.shape(x)\n"
                      "mine = ops.defop('mine', lambda x: np.exp(x), [])\n")
    calls, made = numpy_calls_and_rows(source)
    assert made == [(2, "OpDef"), (5, "defop")]
    assert [name for _, name in calls if name not in ALLOWED] == ["maximum", "exp"]


# -- the pieces of a row agree, bit for bit ----------------------------------------------------------

def floats(rng, dtype, *shape):
    return (rng.standard_normal(shape) * 1.5).astype(dtype)


# row -> its inputs and attributes for random values of one dtype (broadcasting where it may)
SAMPLES = {
    "add": lambda r, d: ((floats(r, d, 3, 4), floats(r, d, 4)), {}),
    "sub": lambda r, d: ((floats(r, d, 3, 1), floats(r, d, 3, 4)), {}),
    "mul": lambda r, d: ((floats(r, d, 2, 3, 4), floats(r, d, 3, 1)), {}),
    "div": lambda r, d: ((floats(r, d, 3, 4), floats(r, d, 4) + d(4)), {}),
    "pow": lambda r, d: ((np.abs(floats(r, d, 3, 4)), floats(r, d, 4)), {}),
    "neg": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "exp": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "log": lambda r, d: ((np.abs(floats(r, d, 3, 4)) + d(0.1),), {}),
    "tanh": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "sigmoid": lambda r, d: ((floats(r, d, 3, 4) * 10,), {}),
    "relu": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "matmul": lambda r, d: ((floats(r, d, 2, 3, 4), floats(r, d, 4, 5)), {}),
    "linear": lambda r, d: ((floats(r, d, 6, 4), floats(r, d, 4, 5), floats(r, d, 5)), {}),
    "sum": lambda r, d: ((floats(r, d, 3, 4),), {"axis": 0}),
    "softmax": lambda r, d: ((floats(r, d, 2, 4, 4),), {"axis": -1, "mask": np.tri(4, dtype=bool)}),
    "gelu": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "embedding": lambda r, d: ((floats(r, d, 5, 3), r.integers(0, 5, (2, 4))), {}),
    "layer_norm": lambda r, d: ((floats(r, d, 2, 3, 5), floats(r, d, 5), floats(r, d, 5)), {"eps": 1e-5}),
    "softmax_cross_entropy": lambda r, d: ((floats(r, d, 6, 4), r.integers(0, 4, 6)), {}),
    "step": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "sum_to": lambda r, d: ((floats(r, d, 2, 3, 4), floats(r, d, 4)), {}),
    "broadcast_like": lambda r, d: ((floats(r, d, 4), floats(r, d, 3, 4)), {}),
    "relu_grad": lambda r, d: ((floats(r, d, 3, 4), floats(r, d, 3, 4)), {}),
    "sigmoid_grad": lambda r, d: ((floats(r, d, 3, 4), floats(r, d, 3, 4)), {}),
    "tanh_grad": lambda r, d: ((floats(r, d, 3, 4), floats(r, d, 3, 4)), {}),
    "matmul_add": lambda r, d: ((floats(r, d, 3, 5), floats(r, d, 3, 4), floats(r, d, 4, 5)), {}),
    "concatenate": lambda r, d: ((floats(r, d, 2, 4), floats(r, d, 3, 4)), {"axis": 0}),
    "gelu_grad": lambda r, d: ((floats(r, d, 3, 4), floats(r, d, 3, 4)), {}),
    "gelu_tanh": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "layer_norm_centered": lambda r, d: ((floats(r, d, 2, 3, 5),), {}),
    "layer_norm_scale": lambda r, d: ((floats(r, d, 2, 3, 5),), {"eps": 1e-5}),
    "layer_norm_grad_x_from": lambda r, d: ((floats(r, d, 2, 3, 5), floats(r, d, 2, 3, 5),
                                             np.abs(floats(r, d, 2, 3, 1)) + d(0.5), floats(r, d, 5)), {}),
    "layer_norm_grad_gamma_from": lambda r, d: ((floats(r, d, 2, 3, 5), floats(r, d, 2, 3, 5),
                                                 np.abs(floats(r, d, 2, 3, 1)) + d(0.5), floats(r, d, 5)), {}),
    "gelu_of_tanh": lambda r, d: ((floats(r, d, 3, 4), np.tanh(floats(r, d, 3, 4))), {}),
    "gelu_grad_of_tanh": lambda r, d: ((floats(r, d, 3, 4), floats(r, d, 3, 4), np.tanh(floats(r, d, 3, 4))), {}),
    "softmax_grad": lambda r, d: ((floats(r, d, 2, 3, 4), softmax_rows(r, d, 2, 3, 4)), {"axis": -1}),
    "layer_norm_grad_x": lambda r, d: ((floats(r, d, 2, 3, 5), floats(r, d, 2, 3, 5), floats(r, d, 5)),
                                       {"eps": 1e-5}),
}


def softmax_rows(rng, dtype, *shape):
    """Random probabilities, each row (the last axis) summing to 1, as softmax's answers."""
    e = np.exp(floats(rng, dtype, *shape))
    return e / e.sum(axis=-1, keepdims=True)


def sample(row, rng, dtype):
    """Inputs (as many as the row takes: layer norm without beta takes two) and attributes."""
    args, attrs = SAMPLES[row.name](rng, dtype)
    return args[:len(row.vjps)], attrs


@pytest.mark.parametrize("dtype", FLOATS)
def test_every_out_form_is_its_forward_bit_for_bit(dtype):
    rng, checked = np.random.default_rng(0), set()
    for row in list(rows()):
        if row.out is None:
            continue
        args, attrs = sample(row, rng, dtype)
        expected = row.forward(*args, **attrs)
        out = np.empty(np.shape(expected), np.result_type(expected))
        assert row.out(*args, **attrs, out=out) is out, row.name
        assert same(out, expected), row.name
        checked.add(row.name)
    assert checked == {"add", "sub", "mul", "div", "pow", "neg", "exp", "log", "tanh", "sigmoid", "relu",
                       "matmul", "linear", "sum", "softmax", "gelu", "embedding", "step", "sum_to",
                       "broadcast_like", "relu_grad", "sigmoid_grad", "tanh_grad", "matmul_add",
                       "concatenate", "gelu_grad", "softmax_grad", "layer_norm_grad_x", "gelu_tanh",
                       "gelu_of_tanh", "gelu_grad_of_tanh", "layer_norm_centered", "layer_norm_grad_x_from"}


def fused_gradients_of(row, args, attrs, ans, g):
    """For each input k whose graph VJP is one fused gradient op: (k, its value, the row's VJP)."""
    vjps = GRAPH_VJPS.get(row) or GRAPH_VJPS.get(row.name)
    nodes = [mg.Constant(a) for a in args]
    for k, vjp in enumerate(vjps):
        node = vjp(mg.Constant(g), mg.Constant(ans), *nodes, **attrs)
        if node is not None and node.op is not None and row_of(node.op).expansion is not None:
            yield k, node, mg.Graph(node).forward(), row.vjps[k](g, ans, *args, **attrs)


@pytest.mark.parametrize("dtype", FLOATS)
def test_each_fused_graph_vjp_is_the_vjp_it_replaces_bit_for_bit(dtype):
    """mg.grad's gradient of relu, tanh, sigmoid, softmax, gelu and layer norm is one fused op,
    whose value is the interpreter's numeric VJP, bit for bit; and its expansion, the same
    maths written with ops (what mg.grad differentiates again), is close to it."""
    rng, fused = np.random.default_rng(1), set()
    for row in rows():
        if row.name not in SAMPLES or row.expansion is not None:
            continue
        for _ in range(3):
            args, attrs = sample(row, rng, dtype)
            ans = row.forward(*args, **attrs)
            g = floats(rng, dtype, *np.shape(ans))
            for k, node, got, expected in fused_gradients_of(row, args, attrs, ans, g):
                assert same(got, expected), (row.name, k)
                op = row_of(node.op)
                expanded = mg.Graph(op.expansion(*node.inputs, **node.attrs)).forward()
                assert np.allclose(expanded, got, rtol=1e-4 if dtype == np.float32 else 1e-10,
                                   atol=1e-5 if dtype == np.float32 else 1e-12), op.name
                fused.add(op.name)
    assert fused == {"softmax_grad", "gelu_grad", "layer_norm_grad_x", "layer_norm_grad_gamma",
                     "layer_norm_grad_beta"}


def declared_fusions(row, args, attrs, ans, g):
    """For each input k whose row declares a fused gradient: (k, the fused op's value, the value
    of the graph its graph VJP builds, the row's VJP), where the fusion says it applies."""
    vjps = GRAPH_VJPS.get(row) or GRAPH_VJPS.get(row.name)
    for k, fusion in row.fusions.items():
        if not isinstance(k, int):
            continue
        g = np.ones_like(g) if fusion.unit_gradient else g
        read = [{"g": g, "ans": ans}[r] if isinstance(r, str) else args[r] for r in fusion.reads]
        if fusion.when is not None and not fusion.when(*read):
            continue
        node = vjps[k](mg.Constant(g), mg.Constant(ans), *[mg.Constant(a) for a in args], **attrs)
        yield (k, fusion.op.opdef.forward(*read), mg.Graph(node).forward(),
               row.vjps[k](g, ans, *args, **attrs))


@pytest.mark.parametrize("dtype", FLOATS)
def test_each_declared_fusion_is_the_graph_it_replaces_bit_for_bit(dtype):
    """tanh's, sigmoid's, relu's and cross-entropy's (class labels) fused gradients: their value
    is that of the graph mg.grad builds, which they replace in mg.function, and the row's VJP;
    and matmul's a + x @ y is the graph of add and matmul."""
    rng, fused = np.random.default_rng(2), set()
    for row in rows():
        if row.name not in SAMPLES or not row.fusions:
            continue
        for _ in range(3):
            args, attrs = sample(row, rng, dtype)
            ans = row.forward(*args, **attrs)
            for k, got, graph, numeric in declared_fusions(row, args, attrs, ans,
                                                           floats(rng, dtype, *np.shape(ans))):
                assert same(got, graph) and same(got, numeric), (row.name, k)
                fused.add(row.fusions[k].op.opdef.name)
    assert fused == {"tanh_grad", "sigmoid_grad", "relu_grad", "softmax_ce_grad"}
    (a, x, w), _ = SAMPLES["matmul_add"](rng, dtype)
    accumulate = ops.matmul.opdef.fusions["accumulate"].opdef
    assert same(accumulate.forward(a, x, w), mg.Graph(mg.Constant(a) + mg.Constant(x) @ mg.Constant(w)).forward())


def test_mg_grad_notes_the_declared_fusion_on_the_node_it_returns():
    z, y = mg.Input("z"), mg.Input("y", dtype=int)
    loss = mg.softmax_cross_entropy(mg.tanh(z), y)
    (dz,) = mg.grad(loss, [z])
    fusion, g, reads = dz.fusable
    assert fusion is ops.tanh.opdef.fusions[0] and reads[1] is loss.inputs[0]
    fusion, g, reads = g.fusable
    assert fusion is ops.softmax_cross_entropy.opdef.fusions[0] and reads == list(loss.inputs)


def test_a_fused_gradient_that_differs_is_caught(monkeypatch):
    """The checks above fail for a fused gradient that rounds otherwise: g·s·(1-s) as
    g·(s - s²), gelu's g·gelu'(x) as gelu'(x)·g·1.0001."""
    rng = np.random.default_rng(3)
    args, attrs = SAMPLES["sigmoid"](rng, np.float32)
    ans = ops.sigmoid.opdef.forward(*args)
    g = floats(rng, np.float32, *ans.shape)
    monkeypatch.setattr(ops.sigmoid_grad.opdef, "forward", lambda g, s: g * (s - s * s))
    assert not all(same(got, graph) for _, got, graph, _ in
                   declared_fusions(ops.sigmoid.opdef, args, attrs, ans, g))
    monkeypatch.setattr(ops.gelu_grad.opdef, "forward", lambda g, x: g * kernels.gelu_slope(x) * 1.0001)
    assert not all(same(got, expected) for _, _, got, expected in
                   fused_gradients_of(ops.gelu.opdef, args, attrs, ans, g))
