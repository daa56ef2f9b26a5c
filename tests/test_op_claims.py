"""What the compiler believes of each op's result, checked on every shape the op accepts.

``mg.function``'s memory plan (``compiler/memory.py``) and rewrites (``compiler/rewrites.py``)
keep tables of what an op's result is, and a wrong entry makes the compiled step silently
wrong. ``layer_norm_grad_beta`` was once listed as always making a new array, while its kernel
returns the incoming gradient itself when β has the output's shape: the plan reused that
buffer while β's gradient was still to be read, and the next call overwrote what the previous
one had returned. So each claim is checked here, for each row it names, on each *shape
family* the row accepts: each operand in turn given each shape that broadcasts into the
others (every suffix of the full shape, with any of its axes 1: 0-d, a row, a column, the full
shape), a stack of two of it, and all operands 0-d, full-shaped or stacked together (a shape
the row refuses is skipped). The claims:

* **fresh** (``NEW_ARRAYS``): the result shares no memory with any input
  (``np.shares_memory``) and may be written into;
* **writable in place** (``ELEMENTWISE``): the out= form, given as ``out`` the array of an input
  of the result's shape and dtype, gives the forward's numbers bit for bit;
* **a view** (``AS_ATTRIBUTE_T``): where the plan writes the op as ``x.T``, its result is
  exactly ``x.T``: the same memory, shape and strides;
* **an identity** (``IDENTITY_WHEN_SAME_SHAPE``): where the result has its first input's
  shape and dtype, it is that input's numbers;
* **no error on numbers** (``FAIL_ON_SHAPES_ONLY``): NaN, infinities, zeros and negative
  numbers raise nothing;
* **exact** (``EXACT``, whose out= forms the plan takes untried): the out= form gives the
  forward's bits, into a new array and into each input's own array of the result's shape, on
  the family's numbers and again with NaN, infinities, signed zeros, subnormal and the largest
  numbers strewn among them;
* **dtype-keeping** (``dtypes.py``, for every row): float32 operands give float32 results.

Each check is also shown rejecting a wrong entry (the old ``layer_norm_grad_beta`` among them).
"""

import itertools
import warnings

import numpy as np
import pytest

import minigraph as mg
from minigraph import gradops, ops
from minigraph.compiler import memory, rewrites
from minigraph.opdef import OpDef
from test_op_rows import SAMPLES, floats, rows
from test_random_graphs import same

# rows with a claim but no sample in test_op_rows (which checks their other pieces)
MORE_SAMPLES = {
    "leaky_relu": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "mean": lambda r, d: ((floats(r, d, 3, 4),), {"axis": -1}),
    "max": lambda r, d: ((floats(r, d, 3, 4),), {"axis": 0}),
    "log_softmax": lambda r, d: ((floats(r, d, 2, 3, 4),), {"axis": -1}),
    "mse": lambda r, d: ((floats(r, d, 3, 4), floats(r, d, 3, 4)), {}),
    "bce_with_logits": lambda r, d: ((floats(r, d, 3, 4), floats(r, d, 3, 4)), {}),
    "layer_norm_grad_gamma": lambda r, d: ((floats(r, d, 2, 3, 5), floats(r, d, 2, 3, 5), floats(r, d, 5)),
                                           {"eps": 1e-5}),
    "layer_norm_grad_beta": lambda r, d: ((floats(r, d, 2, 3, 5), floats(r, d, 2, 3, 5), floats(r, d, 5)), {}),
    "embedding_grad": lambda r, d: ((floats(r, d, 2, 4, 3), floats(r, d, 5, 3), r.integers(0, 5, (2, 4))), {}),
    "reshape": lambda r, d: ((floats(r, d, 3, 4),), {"shape": (-1,)}),
    "transpose": lambda r, d: ((floats(r, d, 3, 4),), {}),       # (the table's and the matrices' row)
    "reshape_like": lambda r, d: ((floats(r, d, 3, 4), floats(r, d, 4, 3)), {}),
    "as_matrix": lambda r, d: ((floats(r, d, 4),), {"side": "left"}),
    "product_matrix": lambda r, d: ((floats(r, d, 2, 3, 5), floats(r, d, 2, 3, 4), floats(r, d, 4, 5)), {}),
    "expand_dims": lambda r, d: ((floats(r, d, 3),), {"axis": 0}),
    "is_zero": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "sum_to_product": lambda r, d: ((floats(r, d, 2, 3, 5), floats(r, d, 2, 3, 4), floats(r, d, 4, 5)), {}),
    "left_matrix": lambda r, d: ((floats(r, d, 2, 3, 4), floats(r, d, 4, 5)), {}),
    "to_operand": lambda r, d: ((floats(r, d, 2, 3, 4), floats(r, d, 3, 4)), {"side": "left"}),
    "concatenate": lambda r, d: ((floats(r, d, 2, 4), floats(r, d, 3, 4), floats(r, d, 1, 4)), {"axis": 0}),
    "to_stack": lambda r, d: ((floats(r, d, 3), floats(r, d, 2, 2, 3)), {"side": "left"}),
    "concat_part": lambda r, d: ((floats(r, d, 6, 4), floats(r, d, 2, 4), floats(r, d, 3, 4), floats(r, d, 1, 4)),
                                 {"axis": 0, "i": 1}),
    "examples": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "getitem": lambda r, d: ((floats(r, d, 3, 4),), {"index": (slice(1, None),)}),
    "leaky_slope": lambda r, d: ((floats(r, d, 3, 4),), {"slope": 0.1}),
    "max_share": lambda r, d: ((floats(r, d, 3, 4),), {"axis": -1}),
    "one_hot": lambda r, d: ((r.integers(0, 4, 6), floats(r, d, 6, 4)), {}),
    "ones_like": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "zeros_like": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "scatter": lambda r, d: ((floats(r, d, 3), floats(r, d, 3)), {"index": ([0, -1, 0],)}),
    "seed": lambda r, d: ((floats(r, d, 3), floats(r, d, 3)), {}),
    "size": lambda r, d: ((floats(r, d, 3, 4),), {}),
    "size_ratio": lambda r, d: ((floats(r, d, 3), floats(r, d, 3, 4)), {}),
    "softmax_ce_grad": lambda r, d: ((floats(r, d, 6, 4), r.integers(0, 4, 6)), {}),
    "split": lambda r, d: ((floats(r, d, 3, 6),), {"n": 2, "axis": -1}),
}
NOT_ARRAY_OPS = {"output"}          # picks one array of a multi-output op's tuple: no array in
ALL_SAMPLES = {**SAMPLES, **MORE_SAMPLES}


def claims():
    """claim -> the rows (OpDefs) it names."""
    return {"fresh": memory.NEW_ARRAYS, "in place": memory.ELEMENTWISE,
            "x.T": set(memory.AS_ATTRIBUTE_T), "identity": rewrites.IDENTITY_WHEN_SAME_SHAPE,
            "no error on numbers": memory.FAIL_ON_SHAPES_ONLY, "exact": memory.EXACT}


def claimed_rows():
    """Every row of the engine that some claim names (the rows made per size included)."""
    named = set().union(*claims().values())
    return [row for row in rows() if row in named]


# -- shape families -------------------------------------------------------------------------------

def broadcastable_shapes(shape):
    """Every shape that broadcasts into ``shape`` without growing it: each suffix of it (0-d
    included) with any of its axes set to 1."""
    found = set()
    for start in range(len(shape) + 1):
        suffix = shape[start:]
        for ones in itertools.product((False, True), repeat=len(suffix)):
            found.add(tuple(1 if one else n for one, n in zip(ones, suffix)))
    return found


def like(rng, value, shape, dtype):
    """A new operand of ``shape`` of the kind of ``value``: integers in its range (ids, labels),
    else floats of ``dtype`` away from 0."""
    if np.asarray(value).dtype.kind in "iub":
        return rng.integers(0, int(np.max(value)) + 1, shape)
    return rng.uniform(0.5, 2.0, shape).astype(dtype)


def shape_families(row, rng, dtype):
    """(what the family is, inputs, attributes) for each shape family the row accepts (its
    forward raises nothing); see the module's docstring."""
    args, attrs = ALL_SAMPLES[row.name](rng, dtype)
    args = list(args[:len(row.vjps)])
    shapes = [np.shape(a) for a in args]
    try:
        full = np.broadcast_shapes(*shapes)
    except ValueError:                     # operands that do not broadcast (matmul, embedding)
        full = max(shapes, key=len)
    tried = {("sample",): args}
    for k, a in enumerate(args):
        for shape in sorted(broadcastable_shapes(full) | broadcastable_shapes(shapes[k])
                            | {(2,) + shapes[k]}):
            tried[(f"input {k}", shape)] = args[:k] + [like(rng, a, shape, dtype)] + args[k + 1:]
    for name, shape_of in (("all 0-d", lambda s: ()), ("all full-shaped", lambda s: full),
                           ("all stacked", lambda s: (2,) + s)):
        tried[(name,)] = [like(rng, a, shape_of(s), dtype) for a, s in zip(args, shapes)]
    for family, inputs in tried.items():
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                row.forward(*inputs, **attrs)
        except Exception:
            continue
        yield family, inputs, attrs


def results(value):
    return value if isinstance(value, tuple) else (value,)


# -- the checks: each returns the families where its claim fails -----------------------------------

def not_fresh(row, family, inputs, attrs):
    answer = row.forward(*inputs, **attrs)
    for r in results(answer):
        if type(r) is not np.ndarray:
            continue                                    # a numpy scalar: new, and nobody's
        if any(type(a) is np.ndarray and np.shares_memory(r, a) for a in inputs):
            yield f"{row.name} {family}: its result shares memory with an input"
        elif not r.flags.writeable:
            yield f"{row.name} {family}: its result is read-only"


def not_in_place(row, family, inputs, attrs):
    expected = row.forward(*inputs, **attrs)
    for k, a in enumerate(inputs):
        if type(a) is np.ndarray and (a.shape, a.dtype) == (np.shape(expected), np.result_type(expected)):
            written = [np.array(b) for b in inputs]
            try:
                got = row.out(*written, **attrs, out=written[k])
            except Exception as error:
                yield f"{row.name} {family}: written into input {k}, raises {type(error).__name__}"
                continue
            if got is not written[k] or not same(got, expected):
                yield f"{row.name} {family}: written into input {k}, its numbers differ"


def not_x_T(row, family, inputs, attrs):
    x = inputs[0]
    if memory.AS_ATTRIBUTE_T[row](x, **attrs):
        got = row.forward(*inputs, **attrs)
        if not (np.shares_memory(got, x) and got.shape == x.T.shape and got.strides == x.T.strides):
            yield f"{row.name} {family}: its result is not x.T"


def not_identity(row, family, inputs, attrs):
    got = row.forward(*inputs, **attrs)
    x = inputs[0]
    if (np.shape(got), np.result_type(got)) == (np.shape(x), np.result_type(x)) and not same(got, x):
        yield f"{row.name} {family}: the result has its first input's shape, not its numbers"


def fails_on_numbers(row, family, inputs, attrs):
    for number in (np.nan, np.inf, -np.inf, 0.0, -1.0):
        edged = [np.full(np.shape(a), number, a.dtype) if np.asarray(a).dtype.kind == "f" else a
                 for a in inputs]
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                row.forward(*edged, **attrs)
        except Exception as error:
            yield f"{row.name} {family}: raises {type(error).__name__} on {number}"


def with_edges(a, rng):
    """A copy of a float operand with NaN, infinities, signed zeros, subnormal numbers and the
    largest ones at about a third of its places (other operands as they are)."""
    if np.asarray(a).dtype.kind != "f":
        return a
    edged = np.array(a)
    flat, info = edged.reshape(-1), np.finfo(edged.dtype)
    edges = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, info.smallest_subnormal,
                      -info.smallest_subnormal, info.tiny, info.max, -info.max], edged.dtype)
    places = rng.random(flat.size) < 0.35
    flat[places] = rng.choice(edges, int(places.sum()))
    return edged


def same_bits(a, b):
    """The same dtype, shape and bits (the sign of a zero and a NaN's bits included)."""
    a, b = np.asarray(a), np.asarray(b)
    kind = np.dtype(f"u{a.itemsize}")
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(kind), b.view(kind))


def not_exact(row, family, inputs, attrs):
    rng = np.random.default_rng(len(str(family)))
    for numbers, operands in (("", inputs), (" with edge numbers", [with_edges(a, rng) for a in inputs])):
        expected = row.forward(*operands, **attrs)
        shape, dtype = np.shape(expected), np.result_type(expected)
        places = [None] + [k for k, a in enumerate(operands)
                           if type(a) is np.ndarray and (a.shape, a.dtype) == (shape, dtype)]
        for k in places:
            written = [np.array(b) for b in operands]
            out = np.empty(shape, dtype) if k is None else written[k]
            got = row.out(*written, **attrs, out=out)
            if got is not out or not same_bits(got, expected):
                where = "a new array" if k is None else f"input {k}"
                yield f"{row.name} {family}{numbers}: written into {where}, its bits differ"


def changes_dtype(row, family, inputs, attrs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        answer = row.forward(*inputs, **attrs)
    for r in results(answer):
        kind = np.result_type(r)
        if kind.kind == "f" and kind != np.float32:
            yield f"{row.name} {family}: float32 operands give {kind}"


CHECKS = {"fresh": not_fresh, "in place": not_in_place, "x.T": not_x_T, "identity": not_identity,
          "no error on numbers": fails_on_numbers, "exact": not_exact}


def violations(claim, named):
    """Where ``claim`` fails for the rows ``named`` (OpDefs), over both float dtypes; and how
    many families were checked."""
    rng, found, checked = np.random.default_rng(0), [], 0
    for row in [r for r in rows() if r in named]:
        for dtype in (np.float32, np.float64):
            for family, inputs, attrs in shape_families(row, rng, dtype):
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    found += list(CHECKS[claim](row, family, inputs, attrs))
                checked += 1
    return found, checked


def test_every_claimed_row_has_samples_to_check_it_on():
    assert [row.name for row in claimed_rows() if row.name not in ALL_SAMPLES] == []


@pytest.mark.parametrize("claim", sorted(CHECKS))
def test_each_claim_holds_on_every_shape_family_its_rows_accept(claim):
    found, checked = violations(claim, claims()[claim])
    assert found == []
    assert checked >= 10 * len(claims()[claim] & set(rows()))      # many families per row


def test_every_row_keeps_float32_on_every_shape_family():
    rng, found, checked = np.random.default_rng(1), [], 0
    for row in rows():
        if row.name in NOT_ARRAY_OPS:
            continue
        for family, inputs, attrs in shape_families(row, rng, np.float32):
            found += list(changes_dtype(row, family, inputs, attrs))
            checked += 1
    assert found == []
    assert checked >= 10 * len(rows())


def test_the_families_include_each_broadcastable_shape_and_stacks():
    families = {family for family, *_ in shape_families(ops.layer_norm_grad_beta.opdef,
                                                      np.random.default_rng(2), np.float64)}
    for shape in [(), (5,), (1, 5), (3, 1), (2, 3, 5), (1, 1, 1), (2, 5)]:
        assert ("input 2", shape) in families, shape
    assert {("all 0-d",), ("all stacked",), ("all full-shaped",)} & families
    assert ("input 2", (4,)) not in families          # not broadcastable: refused, so not kept


# -- each check rejects a wrong entry ----------------------------------------------------------------

def test_the_fresh_check_rejects_the_old_entry_of_layer_norm_grad_beta():
    found, _ = violations("fresh", {ops.layer_norm_grad_beta.opdef, ops.reshape.opdef})
    assert any(f.startswith("layer_norm_grad_beta ('input 2', (2, 3, 5))") for f in found), found
    assert any(f.startswith("reshape") for f in found)


def test_the_other_checks_reject_wrong_entries(monkeypatch):
    # sigmoid's out= form reads x again after writing out (memory.py says so): not elementwise
    found, _ = violations("in place", {ops.sigmoid.opdef})
    assert found and all(f.startswith("sigmoid") for f in found)
    # sigmoid's out= form computes its numbers by another formula: not exact
    found, _ = violations("exact", {ops.sigmoid.opdef})
    assert found and all(f.startswith("sigmoid") for f in found)
    # a transpose with axes is not x.T (were it claimed to be); neg is not an identity
    x = np.ones((2, 3, 4))
    monkeypatch.setitem(memory.AS_ATTRIBUTE_T, ops.transpose.opdef, lambda x, axes=None: True)
    assert list(not_x_T(ops.transpose.opdef, "axes", [x], {"axes": (1, 0, 2)}))
    assert not list(not_x_T(ops.transpose.opdef, "no axes", [x], {}))
    assert violations("identity", {ops.neg.opdef})[0]
    # a row that raises on NaN; a row that computes in float64 whatever it is given
    strict = OpDef("strict", lambda x: x if np.all(np.isfinite(x)) else 1 / 0, [None])
    assert list(fails_on_numbers(strict, "sample", [x], {}))
    float64 = OpDef("float64", lambda x: (x == 0).astype(float), [None])
    assert list(changes_dtype(float64, "sample", [np.ones(3, np.float32)], {}))
    assert not list(changes_dtype(gradops.is_zero.opdef, "sample", [np.ones(3, np.float32)], {}))


def test_the_plan_checks_a_claim_of_a_new_array_on_its_values(monkeypatch):
    """The old table's wrong entry put back: the plan sees, on the values of the call it is
    made from, that layer_norm_grad_beta's result is its input g, and treats it as a view of
    it (``memory._new_array``): what a call returned is not overwritten by the next one."""
    monkeypatch.setattr(memory, "NEW_ARRAYS", memory.NEW_ARRAYS | {ops.layer_norm_grad_beta.opdef})
    rng = np.random.default_rng(3)
    x = mg.Input("x")
    gamma, beta = mg.Parameter(rng.standard_normal(4), name="g"), mg.Parameter(rng.standard_normal((3, 4)), name="b")
    loss = mg.sum(mg.layer_norm(x, gamma, beta) ** 2)
    f = mg.function([x], mg.grad(loss, [gamma, beta]))
    feeds = [rng.standard_normal((3, 4)) for _ in range(3)]
    returned = [f.run_compiled(feed) for feed in feeds]           # (the first call is planned)
    for feed, got in zip(feeds, returned):
        graph = mg.Graph(loss)
        graph.backward({x: feed})
        assert same(got[0], gamma.grad) and same(got[1], beta.grad)


def test_the_plan_takes_the_exact_forms_untried_and_tries_the_others(monkeypatch):
    """The out= forms of ``EXACT`` rows are taken without a trial (the claim above is what makes
    that safe); tanh's form is still tried on the call's values, and so is an exact row's
    when an operand has another dtype than its result."""
    tried = []
    real = memory._same_bits
    monkeypatch.setattr(memory, "_same_bits", lambda a, b: tried.append(a.shape) or real(a, b))
    x, n = mg.Input("x"), mg.Input("n", dtype=int)
    f = mg.function([x, n], [mg.tanh(x * 2.0 + 1.0), x * n])
    f(np.ones((3, 4)), np.ones((3, 4), int))
    assert sorted(tried) == [(3, 4), (3, 4)], tried   # tanh's, and x * n (an int operand)
    assert f.source.count(", out=") == 4                # all four ops write into memory given
