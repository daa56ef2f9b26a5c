"""Rewrites: what ``mg.function`` does to a step graph before ``stepcode.py`` writes it out.

A training step built with ``mg.grad`` is a graph of a few dozen ops, and many of them are
there only because the gradient rules are written for every case: ``sum_to(g, b)`` undoes a
broadcast that, in this network, never happened; ``ones_like(loss)`` is the seed 1; the same
``softmax(z)`` may be built twice. ``mg.function`` owns its whole graph (no hook watches it, no
one reads its intermediate values), so it may rewrite it, as Theano did, provided that the
numbers stay *exactly* the same: each pass below replaces a value by one that is equal bit for
bit (the tests check this on random graphs).

The rewritten graph is a ``Program``: a list of ``Term``s in topological order, each a leaf
(an Input or a Parameter, read at each call), a constant (an array fixed when the program was
written) or an op applied to earlier terms; ``results`` are the terms whose values a call
returns (the outputs, then the updates' new values). The user's nodes are never changed.

Two groups of passes, each a function ``Program -> Program``, run by ``run_passes`` which
notes how many ops each one removed (``f.source`` prints the notes):

* when ``mg.function`` is made (no value known yet): ``merge_common``, ``fold_constants``,
  ``drop_dead``;
* at the first call with new shapes (the values of that call known, see ``evaluate``):
  ``settle_numbers``, ``fold_shapes``, ``drop_identities``, ``fuse_declared``,
  ``fuse_sigmoid_gradient``, ``fuse_tanh_gradient``, ``fuse_matmul_accumulate``,
  ``keep_gelu_tanh``, ``share_layer_norm_centering``, ``view_concat_parts``, then
  ``merge_common`` and ``drop_dead`` again.
  What these decide from shapes holds for every call with the same shapes and dtypes of Inputs
  and Parameters; a call with others writes the program again.

The fused ops are the op modules' own (this module defines no op and no formula): a fusion is
found by what an op's row declares (``fusions``, noted by ``mg.grad`` on the nodes it builds),
or, for a formula written by hand, by the formula the fused op computes (``fuse_sigmoid_gradient``,
``fuse_tanh_gradient``; matmul's ``"accumulate"``, gelu's tanh and layer norm's centering are
declared too).
A fused step is named by what it computes (``tanh_grad_4``), not by the node it replaces.

Shapes decide the value of a term only if every op above it computes shapes from shapes
(``shapes_follow``): the ops of minigraph's table do; a learner's own op (``mg.defop``) might
return, say, ``x[x > 0]``, so nothing below one is rewritten by shape.
"""

import numpy as np

from .. import gradops, ops
from ..dtypes import number_dtype, row_of
from ..graph import Constant, Graph, Op, auto_name
from ..values import freeze


class Term:
    """One value of a ``Program``: ``kind`` is "input", "parameter", "constant" or "op". ``node``
    is the user's node it stands for (None for a constant a pass made); a constant holds its
    ``value``; an op term has ``op``, ``args`` (terms) and ``attrs``."""

    __slots__ = ("name", "kind", "node", "op", "args", "attrs", "value")

    def __init__(self, name, kind, node=None, op=None, args=(), attrs=None, value=None):
        self.name, self.kind, self.node, self.op = name, kind, node, op
        self.args, self.attrs, self.value = tuple(args), dict(attrs or {}), value

    @property
    def inputs(self):                     # what codegen.identifiers reads of a node
        return self.args

    def but(self, **changes):
        """A copy of this term with some fields changed."""
        fields = {k: getattr(self, k) for k in self.__slots__}
        return Term(**{**fields, **changes})

    def __repr__(self):
        what = f"{self.op.name}({', '.join(a.name for a in self.args)})" if self.op else self.kind
        return f"Term('{self.name}' = {what})"


class Program:
    """Terms in topological order, the ``results`` a call returns, and the passes' ``notes``;
    ``stands_for``: the user's node -> the term whose value is its value now (after a pass
    replaced its own term by an equal one, that one)."""

    def __init__(self, terms, results, notes=(), stands_for=None):
        self.terms, self.results, self.notes = list(terms), list(results), list(notes)
        self.stands_for = dict(stands_for if stands_for is not None else
                               ((t.node, t) for t in self.terms if t.node is not None))

    @property
    def n_ops(self):
        return sum(t.kind == "op" for t in self.terms)


def program_of(nodes, results):
    """The ``Program`` of a graph's ``nodes`` (topological order) computing ``results``."""
    term = {}
    for node in nodes:
        if node.op is None:
            value = node._value if node.kind == "constant" else None
            term[node] = Term(node.name, node.kind, node, value=value)
        else:
            term[node] = Term(node.name, "op", node, node.op, [term[p] for p in node.inputs], node.attrs)
    return Program(term.values(), [term[n] for n in results], stands_for=term)


def graph_of(program):
    """The ``program`` as a ``Graph`` to draw or run (``mg.draw(graph_of(p))``): a new node for
    each op and constant term, named as the term; the Inputs and Parameters are the program's
    own. Its outputs are the ``results``, in order."""
    node = {}
    for t in program.terms:
        if t.kind == "op":
            node[t] = Op(t.op, [node[a] for a in t.args], t.attrs, name=t.name)
        else:
            node[t] = Constant(t.value, name=t.name) if t.kind == "constant" else t.node
    return Graph(list(dict.fromkeys(node[t] for t in program.results)))


def evaluate(program, leaf_value):
    """Every term's value, computed in order (``leaf_value(term)`` for Inputs and Parameters):
    the values the shape passes and the memory plan look at."""
    values = {}
    for t in program.terms:
        if t.kind == "op":
            values[t] = t.op.forward(*[values[a] for a in t.args], **t.attrs)
        else:
            values[t] = t.value if t.kind == "constant" else leaf_value(t)
    return values


def run_passes(program, passes, values=None):
    """Run ``passes`` in order, each noting ``(name, ops before, ops after, what it does)``."""
    for rewrite in passes:
        before = program.n_ops
        program = rewrite(program, values)
        program.notes.append((rewrite.__name__, before, program.n_ops, rewrite.__doc__.split("\n")[0]))
    return program


def _rewrite(program, values, visit):
    """The program with each term replaced by ``visit(term, old)``, which sees the term with its
    arguments already replaced (``old``: as it was) and returns it, a new term or an earlier
    one. ``values`` (if known) follow: a new term has its old term's value."""
    new, terms = {}, {}
    for t in program.terms:
        args = tuple(new[a] for a in t.args)
        current = t if all(a is b for a, b in zip(args, t.args)) else t.but(args=args)
        if values is not None and current is not t:
            values[current] = values[t]
        replaced = visit(current, t)
        for a in replaced.args:               # what the pass made comes before the op reading it
            _place(a, terms)
        if values is not None and replaced not in values:
            values[replaced] = values[t]
        new[t] = terms[replaced] = replaced
    stands_for = {n: new[t] for n, t in program.stands_for.items() if t in new}
    return Program(terms, [new[t] for t in program.results], program.notes, stands_for)


def _made(op, args, values, **attrs):
    """A new term computing ``op(*args, **attrs)``, a step a pass adds, with its value."""
    term = Term(auto_name(op.name), "op", None, op, args, attrs)
    values[term] = op.forward(*[values[a] for a in args], **attrs)
    return term


def _place(term, terms):
    """Put ``term`` into ``terms`` (the program being written) after the terms it reads that a
    pass made (a constant, or a step of a formula) and that are not there yet."""
    if term not in terms:
        for a in term.args:
            _place(a, terms)
        terms[term] = term


# -- passes when the function is made ----------------------------------------------------------

def merge_common(program, values=None):
    """identical subexpressions (same op, same inputs, equal attributes) computed once

    Two ``softmax(z)``, or the ``2`` of ``2 * x`` and of ``2 * y`` (equal constants), become
    one term: the second is replaced by the first wherever it is used."""
    seen = {}

    def visit(t, old):
        key = _key(t)
        return t if key is None else seen.setdefault(key, t)
    return _rewrite(program, values, visit)


def _key(t):
    """What makes two terms equal: a constant's dtype, shape, layout (strides) and bytes; an op's
    op, arguments and attributes. Inputs and Parameters are themselves (None: never merged).
    The layout counts: a symmetric matrix and its transpose hold the same numbers, but numpy's
    matmul adds in another order on each, and may round the last bit differently."""
    if t.kind == "constant":
        v = t.value
        return ("constant", v.dtype.str, v.shape, v.strides, v.tobytes()) if hasattr(v, "tobytes") else None
    if t.kind != "op":
        return None
    return (row_of(t.op), getattr(t.op, "numbers", None), t.args, _frozen(t.attrs))


def _frozen(v):
    """An attribute as something hashable that equal attributes share (1 and 1.0 and True do
    not: their types differ; nor do 0.0 and -0.0: their reprs differ)."""
    if isinstance(v, dict):
        return ("dict", tuple(sorted((k, _frozen(x)) for k, x in v.items())))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_frozen(x) for x in v))
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, slice):
        return ("slice", _frozen(v.start), _frozen(v.stop), _frozen(v.step))
    return (type(v).__name__, repr(v))


def fold_constants(program, values=None):
    """ops of constants alone computed once, when the function is made

    ``2 * Constant(3.0)`` becomes the constant 6.0. Only Constants count: a Parameter changes
    between calls (its updates), an Input at each call. An op that fails is left to fail when
    the function runs, where the interpreter explains it."""
    def visit(t, old):
        if t.kind != "op" or not all(a.kind == "constant" for a in t.args):
            return t
        try:
            value = t.op.forward(*[a.value for a in t.args], **t.attrs)
        except Exception:
            return t
        return Term(t.name, "constant", t.node, value=_frozen_value(value))
    return _rewrite(program, values, visit)


def _frozen_value(value):
    return freeze(value) if type(value) is np.ndarray else value


def drop_dead(program, values=None):
    """what no output or update needs removed

    After the other passes, a term may be used by no one (the second of two merged terms, the
    ``x`` of a ``sum_to(g, x)`` that became ``g``)."""
    needed = set(program.results)
    for t in reversed(program.terms):
        if t in needed:
            needed.update(t.args)
    return Program([t for t in program.terms if t in needed], program.results, program.notes,
                   {n: t for n, t in program.stands_for.items() if t in needed})


AT_CREATION = [merge_common, fold_constants, drop_dead]


# -- passes at the first call with new shapes --------------------------------------------------

def shapes_follow(program):
    """The terms whose shape and dtype follow from the shapes and dtypes of the leaves: all of
    them, but those below an op that is not minigraph's or numpy's own."""
    fixed = set()
    for t in program.terms:
        if t.kind != "op" or (own_op(t.op) and all(a in fixed for a in t.args)):
            fixed.add(t)
    return fixed


def own_op(op):
    """Is this op minigraph's or numpy's own (not a learner's ``mg.defop``)?"""
    forward = row_of(op).forward
    return isinstance(forward, np.ufunc) or getattr(forward, "__module__", "").split(".")[0] in (
        "minigraph", "numpy")


def settle_numbers(program, values):
    """the Python numbers of formulas converted to their dtype once

    ``0.1 * g`` with a float32 ``g`` converts the number 0.1 to float32 at every call
    (``dtypes.WithNumbers``); with the dtypes known, the converted number becomes a constant
    and the op is the table's own ``mul``."""
    fixed = shapes_follow(program)

    def visit(t, old):
        if t.kind != "op" or not hasattr(t.op, "plain") or old not in fixed:
            return t
        dtype = number_dtype([values[t.args[k]] for k in t.op.others])
        args = list(t.args)
        for k in t.op.numbers:
            number = values[args[k]]
            if dtype is not None and number.dtype != dtype:
                args[k] = Term(f"{args[k].name}_{dtype}", "constant", value=freeze(number.astype(dtype)))
                values[args[k]] = args[k].value
        return t.but(op=t.op.plain, args=args)
    return _rewrite(program, values, visit)


SHAPE_DECIDED = {gradops.ones_like.opdef, gradops.zeros_like.opdef, gradops.size.opdef,
                 gradops.size_ratio.opdef, gradops.examples.opdef}


def fold_shapes(program, values):
    """ops whose value only shapes decide computed once

    The seed ``ones_like(loss)``, ``size(p)``, ``examples(logits)``: with the shapes known,
    their values are constants."""
    fixed = shapes_follow(program)

    def visit(t, old):
        if t.kind == "op" and t.op in SHAPE_DECIDED and old in fixed:
            return Term(t.name, "constant", t.node, value=_frozen_value(values[t]))
        return t
    return _rewrite(program, values, visit)


# ops whose value is their first input's when it has the value's shape and dtype
IDENTITY_WHEN_SAME_SHAPE = {gradops.sum_to.opdef, gradops.sum_to_product.opdef,
                            gradops.broadcast_like.opdef, gradops.reshape_like.opdef,
                            gradops.as_matrix.opdef, gradops.left_matrix.opdef,
                            gradops.product_matrix.opdef, gradops.to_operand.opdef,
                            ops.reshape.opdef}


def drop_identities(program, values):
    """sum_to, broadcast_like, reshapes and products by 1 that shapes prove to be identities removed

    ``sum_to(g, b)`` sums ``g`` back to ``b``'s shape: if ``g`` has that shape already, the
    value is ``g`` itself, and every use of the term becomes a use of ``g``. So is ``1 * g``
    (the seed 1 of a backward times the first gradient) if ``g`` has the product's shape and
    dtype: x * 1 is x for every float, NaN, infinity and -0.0 included. Only if the layout is
    the same too (the strides): ``broadcast_like`` of a transposed array makes a C-ordered copy,
    and a matmul that reads the transposed array instead may round the last bit differently."""
    fixed = shapes_follow(program)

    def visit(t, old):
        if t.kind != "op" or old not in fixed:
            return t
        if t.op in IDENTITY_WHEN_SAME_SHAPE:
            kept = t.args[0]
        elif t.op is ops.mul.opdef and any(_all_ones(a) for a in t.args):
            kept = t.args[1] if _all_ones(t.args[0]) else t.args[0]
        else:
            return t
        before, after = values[kept], values[t]
        same = type(before) is type(after) is np.ndarray and (
            before.shape, before.dtype, before.strides) == (after.shape, after.dtype, after.strides)
        return kept if same else t
    return _rewrite(program, values, visit)


def _all_ones(t):
    return t is not None and t.kind == "constant" and isinstance(t.value, np.ndarray) and bool(np.all(t.value == 1))


def fuse_declared(program, values):
    """gradients replaced by the fused gradient their op's row declares (the same numbers)

    Where a row declares that one op computes the graph its VJP builds (``fusions``: tanh's
    g * (1 - t * t) as ``tanh_grad``, three ops and three arrays of the layer's size as one;
    cross-entropy's gradient for class labels, seven ops, one of them the log-softmax the loss
    has computed already), ``mg.grad`` notes it on the node it returns (``node.fusable``: the
    fusion and the nodes it reads). The term of that node becomes the fused op, if the terms of
    what it reads are still in the program and the values of this call are those the row
    says it gives the same numbers for (``Fusion.when``, and g the constant 1 for a fused
    gradient of g = 1), with the same dtype and shape; its old graph is then dropped. (The
    term of the node: the one that stands for it now, ``Program.stands_for``; the seed 1 times
    the gradient, say, was dropped as an identity.)"""
    fixed, now, stands_for = shapes_follow(program), {}, program.stands_for
    noted = {t: node.fusable for node, t in stands_for.items() if hasattr(node, "fusable")}

    def visit(t, old):
        if old in noted and t.kind == "op" and old in fixed:
            fusion, g, reads = noted[old]
            args = [_now(stands_for.get(n), now) for n in reads]
            unit = not fusion.unit_gradient or _all_ones(_now(stands_for.get(g), now))
            if None not in args and unit and (fusion.when is None or fusion.when(*[values[a] for a in args])):
                fused = _fused_term(t, fusion.op.opdef, args)
                values[fused] = fused.op.forward(*[values[a] for a in args])
                t = fused if _alike(values, t, fused) else t
        now[old] = t
        return t
    return _rewrite(program, values, visit)


def _now(term, now):
    """What ``term`` became in this pass, if it came already (a constant may come later: it is
    then moved before the op that reads it); None if it is not in the program."""
    return now.get(term, term if term is not None and term.kind == "constant" else None)


def _fused_term(t, op, args):
    """The term ``t`` computed by the fused ``op`` of ``args``, named by what it computes."""
    return Term(auto_name(op.name), "op", t.node, op, args)


def fuse_sigmoid_gradient(program, values):
    """sigmoid's gradient written as a formula, g * s * (1 - s), computed by one op, sigmoid_grad

    (``mg.grad``'s own graph of it is fused by declaration, ``fuse_declared``; this finds the
    formula wherever it is written.) ``mul(mul(g, s), sub(1, s))`` writes three arrays of the
    layer's size (an LSTM has three sigmoid gates per step). The fused op
    makes the same three roundings in the same order, g·s, 1 - s and their product (whose two
    factors may come in either order: a product of two numbers does not depend on it), with
    one buffer instead of three. Only where g·s and 1 - s are read by nothing else (else they
    are computed anyway) and g, s and the result have one shape and dtype (no broadcasting)."""
    def match(t, old, alone):
        for k in (0, 1) if _factors(t, ops.mul) else ():
            scaled, one_minus = t.args[k], t.args[1 - k]
            if (_factors(one_minus, ops.sub) and _all_ones(one_minus.args[0])
                    and _factors(scaled, ops.mul) and one_minus.args[1] in scaled.args
                    and alone(old.args[k]) and alone(old.args[1 - k])):
                s = one_minus.args[1]
                g = scaled.args[1] if scaled.args[0] is s else scaled.args[0]
                return (g, s) if _alike(values, t, g, s) else None
        return None
    return _fused(program, values, match, ops.sigmoid_grad.opdef)


def fuse_tanh_gradient(program, values):
    """tanh's gradient written as a formula, g * (1 - t * t), computed by one op, tanh_grad

    (``mg.grad``'s own graph of it is fused by declaration, ``fuse_declared``.)
    ``mul(g, sub(1, mul(t, t)))`` is three ops, three arrays of the layer's size. The fused op
    makes the same three roundings in the same order, t·t, 1 minus that, times g (or that times
    g: the same number), in one buffer. Only where t·t and 1 - t·t are read by nothing else and
    g, t and the result have one shape and dtype."""
    def match(t, old, alone):
        for k in (0, 1) if _factors(t, ops.mul) else ():
            g, one_minus = t.args[k], t.args[1 - k]
            if (_factors(one_minus, ops.sub) and _all_ones(one_minus.args[0])
                    and _factors(one_minus.args[1], ops.mul)
                    and one_minus.args[1].args[0] is one_minus.args[1].args[1]
                    and alone(old.args[1 - k]) and alone(old.args[1 - k].args[1])):
                s = one_minus.args[1].args[0]
                return (g, s) if _alike(values, t, g, s) else None
        return None
    return _fused(program, values, match, ops.tanh_grad.opdef)


def fuse_matmul_accumulate(program, values):
    """a sum a + x @ y computed by one op, matmul_add (matmul's row declares it)

    A weight used at every step of a recurrent network (an LSTM's W_h) gets one gradient per
    step, and ``mg.grad`` adds them up one by one: ``add(sum so far, matmul(h_t.T, dz_t))``, the
    product a weight-sized array of its own, then read again. One op writes the product into
    the sum's buffer and adds a to it there: the same two roundings (the product, then the sum,
    whose two terms may be added in either order), one weight-sized array fewer to write and
    read. The same holds in the forward pass (x W_x + b, plus h W_h). Only where the product is
    read by nothing else and a, the product and the sum have one shape and dtype."""
    def match(t, old, alone):
        if not _factors(t, ops.add):
            return None
        for k in (1, 0):
            product, a = t.args[k], t.args[1 - k]
            if _factors(product, ops.matmul) and alone(old.args[k]) and _alike(values, t, a, product):
                return (a, *product.args)
        return None
    return _fused(program, values, match, ops.matmul.opdef.fusions["accumulate"].opdef)


def keep_gelu_tanh(program, values):
    """GELU's tanh computed once, by the forward pass, and read again by its gradient

    ``gelu_grad(g, x)`` computes tanh(√(2/π) (x + 0.044715 x³)) again, as ``gelu(x)`` did: six
    passes over an array of the layer's size (a GPT's MLP is 4C wide). Where a program has
    both for one x, the ops its row declares take their place: t = ``gelu_tanh(x)``, then
    ``gelu_of_tanh(x, t)`` and ``gelu_grad_of_tanh(g, x, t)``, the kernels' same roundings in
    the same order (gelu and gelu_grad are those two steps), the tanh once. t lives from the
    forward pass to the backward one: one array of the layer's size more in the memory plan."""
    fusions = ops.gelu.opdef.fusions
    tanh_op, forward_op, gradient_op = (fusions[k].opdef for k in ("tanh", "from_tanh", "grad_from_tanh"))
    fixed = shapes_follow(program)
    forwards = {t.args[0] for t in program.terms if _factors(t, ops.gelu) and t in fixed}
    gradients = {t.args[1] for t in program.terms if _factors(t, ops.gelu_grad) and t in fixed}
    kept = {}

    def tanh_of(x_old, x):
        if x_old not in kept:
            kept[x_old] = _made(tanh_op, (x,), values)
        return kept[x_old]

    def visit(t, old):
        if _factors(old, ops.gelu) and old.args[0] in gradients:
            return Term(t.name, "op", t.node, forward_op, (t.args[0], tanh_of(old.args[0], t.args[0])))
        if _factors(old, ops.gelu_grad) and old.args[1] in forwards:
            return Term(t.name, "op", t.node, gradient_op, (*t.args, tanh_of(old.args[1], t.args[1])))
        return t
    return _rewrite(program, values, visit)


def share_layer_norm_centering(program, values):
    """layer norm's centering and scale computed once for its value and its gradients

    ``layer_norm(x, γ, β)``, ``layer_norm_grad_x(g, x, γ)`` and ``layer_norm_grad_gamma(g, x, γ)``
    each compute x minus its rows' means, and 1 / sqrt(variance + eps): three passes over the
    activations and a new array each. Where a program has both gradients for one x and eps,
    the ops that ``layer_norm_grad_x``'s row declares compute them once: c =
    ``layer_norm_centered(x)``, s = ``layer_norm_scale(c)``; the value is then c · s · γ + β
    (the table's own × and +) and the gradients ``layer_norm_grad_x_from(g, c, s, γ)`` and
    ``layer_norm_grad_gamma_from(g, c, s, γ)``: the kernels' same roundings in the same order
    (the three ops are those steps, each with its own centering). c lives from the forward
    pass to the backward one: one array of the activations' size more in the memory plan."""
    grad_x, grad_gamma = ops.layer_norm_grad_x.opdef, ops.layer_norm_grad_gamma.opdef
    forwards = (ops.layer_norm_shifted.opdef, ops.layer_norm_scaled.opdef)
    declared = grad_x.fusions
    centered_op, scale_op, x_op, gamma_op = (declared[k].opdef for k in (
        "centered", "scale", "x_from_centered", "gamma_from_centered"))
    fixed = shapes_follow(program)

    def key(t):                                   # (x, eps) of a layer norm's term
        return t.args[0 if t.op in forwards else 1], t.attrs.get("eps", 1e-5)

    def found(op):
        return {key(t) for t in program.terms if t.kind == "op" and t.op is op and t in fixed}
    both, shared = found(grad_x) & found(grad_gamma), {}

    def centering(old_key, x):
        if old_key not in shared:
            c = _made(centered_op, (x,), values)
            shared[old_key] = c, _made(scale_op, (c,), values, eps=old_key[1])
        return shared[old_key]

    def visit(t, old):
        if old.kind != "op" or old.op not in (grad_x, grad_gamma, *forwards) or key(old) not in both:
            return t
        if old.op in forwards:                    # c · s · γ (+ β)
            x, gamma, *beta = t.args
            x_hat = _made(ops.mul.opdef, centering(key(old), x), values)
            if not beta:
                return Term(t.name, "op", t.node, ops.mul.opdef, (x_hat, gamma))
            return Term(t.name, "op", t.node, ops.add.opdef, (_made(ops.mul.opdef, (x_hat, gamma), values), *beta))
        g, x, gamma = t.args
        op = x_op if old.op is grad_x else gamma_op
        return Term(t.name, "op", t.node, op, (g, *centering(key(old), x), gamma))
    return _rewrite(program, values, visit)


def view_concat_parts(program, values):
    """a concatenation's part of a gradient read as a view of it, not copied

    ``concatenate``'s VJP gives each input its slice of the output's gradient, and the op
    table's ``concat_part`` copies it (``np.take``: an array of its own, as a gradient handed to
    a learner must be). No line of the program changes a value a later line reads, so the slice
    ``g[a:b]``, a view, holds the same numbers without the copy (chapter 09's LSTM takes one per
    step from the gradient of all its h); the memory plan keeps g's buffer as long as the view
    is read (``memory._roots``). Only where the view has the copy's layout (a slice along
    the first axis): numpy's matmul may round the last bit otherwise on a strided view."""
    fixed = shapes_follow(program)

    def visit(t, old):
        if not (t.kind == "op" and t.op.name == "concat_part" and own_op(t.op) and old in fixed
                and type(values[t.args[0]]) is np.ndarray):
            return t
        (g, *parts), i = t.args, t.attrs.get("i", 0)
        axis = t.attrs.get("axis", 0) % values[g].ndim
        start = sum(values[x].shape[axis] for x in parts[:i])
        index = (slice(None),) * axis + (slice(start, start + values[parts[i]].shape[axis]),)
        if values[g][index].strides != values[t].strides:      # a strided view: matmul may round
            return t                                            # otherwise than on the copy
        return Term(t.name, "op", t.node, ops.getitem.opdef, (g,), {"index": index})
    return _rewrite(program, values, visit)


def _fused(program, values, match, op):
    """The program with each term whose shape follows from the leaves' and that ``match(term,
    old, alone)`` takes apart (it returns the arguments of ``op``, else None) computed by ``op``.
    ``old`` is the term as it was before the pass (its arguments too), ``alone(old term)`` says
    whether one op reads it and no result is it: a term fused away that others read would be
    computed twice."""
    fixed, readers = shapes_follow(program), {t: 0 for t in program.terms}
    for t in program.terms:
        for a in t.args:
            readers[a] += 1
    for t in program.results:
        readers[t] += 1

    def visit(t, old):
        args = match(t, old, lambda term: readers[term] == 1) if old in fixed else None
        return t if args is None else _fused_term(t, op, args)
    return _rewrite(program, values, visit)


def _factors(t, table_op):
    """Is ``t`` an op term of ``table_op``, without attributes?"""
    return t.kind == "op" and t.op is table_op.opdef and not t.attrs


def _alike(values, *terms):
    """Are the values of ``terms`` arrays of one shape and one dtype?"""
    arrays = [values[t] for t in terms]
    return all(type(a) is np.ndarray and (a.shape, a.dtype) == (arrays[0].shape, arrays[0].dtype)
               for a in arrays)


FOR_SHAPES = [settle_numbers, fold_shapes, drop_identities, fuse_declared, fuse_sigmoid_gradient,
              fuse_tanh_gradient, fuse_matmul_accumulate, keep_gelu_tanh, share_layer_norm_centering,
              view_concat_parts, merge_common, drop_dead]
