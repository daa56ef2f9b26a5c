"""The memory plan of ``mg.function``: values in buffers allocated once, reused at every call.

A numpy expression such as ``np.tanh(z)`` allocates its result; in a training step that is a
fresh array for every value, at every call, and for large layers the allocation (and the page
faults of touching new memory) costs as much as the arithmetic. Most numpy functions can write
into an array they are given instead: ``np.tanh(z, out=buffer)``. ``mg.function`` knows its
whole step, so it can plan, once for each set of shapes:

* which ops write into a buffer: those whose row declares an ``out=`` form (``OUT_FORMS``: the
  same computation writing into an array it is given, written beside the op in ``ops.py`` and
  ``kernels.py``), when the form gives exactly the value, in the same layout, that the op
  computed at the call the plan was made from (tried on that call's values, but for matmul's
  and linear's forms, which make the op's own product into the array, ``_same_calls``, and
  for the correctly rounded arithmetic of ``EXACT``, the same bits in any memory). Every
  other op allocates its result, as before;
* which buffer each one gets: a value *lives* from the op that computes it to its last reader
  (in the straight-line order of the program), and two values whose lives do not overlap may
  share a buffer, whatever their shapes (a value is a view of the start of its buffer). An
  elementwise op (``ELEMENTWISE``) writes into the buffer of an input of its shape that dies
  there, ``np.tanh(z, out=z)``: one stretch of memory read and written, where writing
  elsewhere would touch two. A value that an op without an ``out=`` form turns into something
  else may still be inside it (``reshape`` and ``x.T`` return views), so such a result keeps
  the buffers it may come from alive (``roots``);
* when each update is written into its Parameter's own array: as soon as nothing reads the
  old value any more and no op that may fail on the numbers follows (``_early_writes``), so
  that its buffer is free for the rest of the step; else at the end;
* which transposes are written as the attribute ``x.T`` (``AS_ATTRIBUTE_T``: the same view,
  without a call of ``np.transpose``);
* what must be copied: a value returned to the caller lives in a buffer the next call
  overwrites (or in a Parameter's array that the update writes into), so it is returned as a
  copy; but an output computed by an out= form (a training step's gradients) is written into a
  new array at each call instead of a buffer, and returned as it is (``returned_new``: one
  pass over it fewer); an update whose new value comes from a Parameter updated in place (``a <- b, b <- a``)
  is copied before any Parameter is written.

An update ``W - change`` whose new value nothing else reads (``change``, e.g. ``lr * dW``, in a
buffer, of ``W``'s shape and dtype) is written as ``W -= change``, ``np.subtract(W, change,
out=W)`` (``_subtractions``): the same numbers, with no buffer for ``W - change``. A refused
update must leave ``W`` as it was, so it goes in place only when the new numbers are sure to
be finite (``function.subtract_from`` says how it knows, from one more pass over ``change``);
else it is computed apart, checked and copied in, as every other update is
(``function.write_into``). Three passes over the weights, where a hand-written
``W -= lr * dW`` makes two and a checked copy four. Taking the new array instead of copying
it (the Parameter's old array becoming the next call's buffer) would break a promise: an
array taken from ``W.value`` would stop following ``W`` and show numbers the next call is
computing.

Only values read by minigraph's own ops get buffers: a learner's op (``mg.defop``) might keep
the array it was given, and would see it change. ``softmax_cross_entropy`` remembers its
logits by identity (``losses._LastResult``: the same read-only array means the same numbers),
so what it reads is a fresh array at each call (``REMEMBERS_INPUTS``), and so does its
gradient's fused op.
"""

import numpy as np

from .. import gradops, kernels, ops
from ..dtypes import row_of
from .rewrites import own_op

# op of the table -> the same computation writing into ``out=``: each row's own ``out`` (the
# plan reads it from the row, so also for a row made later, as a concatenation of a new number
# of inputs)
OUT_FORMS = {f.opdef: f.opdef.out for module in (ops, gradops) for f in vars(module).values()
             if getattr(getattr(f, "opdef", None), "out", None) is not None}
# ops whose out= form may write into the array of an input of the same shape and dtype: each
# number of the result depends on the numbers at its own place only, read before it is written
# (not sigmoid's, gelu's: they read x again after writing out)
ELEMENTWISE = {op.opdef for op in (ops.add, ops.sub, ops.mul, ops.div, ops.power, ops.neg, ops.exp,
                                   ops.log, ops.tanh, ops.relu, gradops.step, ops.relu_grad)}
# ops whose result is ``x.T`` (a view: an attribute, no call) when ``written_as_T(x, **attrs)``
AS_ATTRIBUTE_T = {ops.transpose.opdef: lambda x, axes=None: axes is None,
                  gradops.matrix_transpose.opdef: lambda x: x.ndim == 2}
REMEMBERS_INPUTS = {ops.softmax_cross_entropy.opdef, ops.softmax_ce_grad.opdef}   # (and its VJP)
# ops whose out= form computes each number by the op's own correctly rounded IEEE operation (+,
# −, ×, ÷, a negation, a maximum, a product by 0 or 1): the same bits on every call, into any
# memory, so the plan takes the form without trying it first (when the operands have the
# result's dtype). tests/test_op_claims.py checks each entry on each shape family, with NaN,
# infinities, signed zeros and subnormal numbers, into a new array and into each input's own.
EXACT = {op.opdef for op in (ops.add, ops.sub, ops.mul, ops.div, ops.neg, ops.relu, ops.relu_grad)}
# ops whose result is always a new array (never a view of an input, nor an input itself), with
# or without out=, on every shape they accept: tests/test_op_claims.py checks each entry on each
# shape family, and the plan checks it again on the values of its call (``_roots``). Not
# layer_norm_grad_beta: for a beta of the output's shape, its gradient is g itself.
NEW_ARRAYS = set(OUT_FORMS) - {gradops.sum_to.opdef} | {op.opdef for op in (
    ops.sigmoid, ops.leaky_relu, ops.mean, ops.max, ops.softmax, ops.log_softmax, ops.mse,
    ops.bce_with_logits, ops.softmax_cross_entropy, ops.softmax_grad, ops.gelu_grad,
    ops.layer_norm_grad_x, ops.layer_norm_grad_gamma, ops.embedding_grad)}
# ops that raise on wrong shapes only, never on the numbers (unlike class labels out of range,
# or integers to a negative integer power):
# with the shapes of a plan, they do not fail
FAIL_ON_SHAPES_ONLY = NEW_ARRAYS - {ops.softmax_cross_entropy.opdef, ops.power.opdef, ops.embedding.opdef} | {op.opdef for op in (
    ops.reshape, ops.transpose, gradops.sum_to, gradops.sum_to_product, gradops.reshape_like,
    gradops.as_matrix, gradops.left_matrix, gradops.product_matrix, gradops.expand_dims, gradops.step,
    gradops.is_zero)}


class Buffers:
    """The memory plan of one set of shapes: which buffers there are and which value lives in
    which. ``into``: term -> (its out= form, its buffer's number, its shape, its dtype); ``buffers``:
    the size in bytes of each buffer (a value is a view of the start of its buffer, so values of
    any shapes may take turns in one); ``copied``: the results returned (or written) as copies;
    ``fresh``: Input terms copied at each call; ``in_place``: the Parameters whose new values are
    written into their own arrays (all of them, unless an op that may keep arrays reads them);
    ``writes``: step -> the (Parameter's term, result number) pairs written right after it (the
    others: at the end); ``transposed``: the transposes written ``x.T`` (``AS_ATTRIBUTE_T``);
    ``subtracted``: result number -> the term ``change`` of the updates ``W - change`` written
    as ``W -= change`` (their result is not computed apart); ``returned_new``: term -> (its
    out= form, shape, dtype) of the outputs written by their form into a new array at each
    call, which is returned as it is (a buffer would have to be copied)."""

    def __init__(self, into, buffers, copied, fresh, in_place, writes, transposed, subtracted,
                 returned_new):
        self.into, self.buffers, self.copied, self.fresh = into, buffers, copied, fresh
        self.in_place, self.writes, self.transposed = in_place, writes, transposed
        self.subtracted, self.returned_new = subtracted, returned_new

    @property
    def nbytes(self):
        return sum(self.buffers)

    def table(self):
        """One line per buffer: its size and the values that take turns in it."""
        holders = {b: [] for b in range(len(self.buffers))}
        for term, (_, b, shape, dtype) in self.into.items():
            holders[b].append(f"{term.name} {shape} {dtype.name}")
        return [f"buffer {b}: {size:>9,} bytes, holds {', '.join(holders[b])}"
                for b, size in enumerate(self.buffers)]


def plan_memory(program, values, n_outputs, updated):
    """The ``Buffers`` of ``program`` (a ``rewrites.Program``) for the ``values`` of one call:
    its first ``n_outputs`` results are returned, the others are the new values of the
    Parameters ``updated`` (nodes, in order), written into their arrays."""
    terms, end = program.terms, len(program.terms)
    position = {t: i for i, t in enumerate(terms)}
    last = {t: i for i, t in enumerate(terms)}              # the last step that reads each value
    readers = {t: [] for t in terms}
    for t in terms:
        for a in t.args:
            last[a] = position[t]
            readers[a].append(t)
    for t in program.results:
        last[t] = end
    forms = {t: _out_form(t, values) for t in terms if t.kind == "op"}
    forms = {t: form for t, form in forms.items() if form is not None}
    while True:                       # no array an op may keep (or remember) is ever reused
        roots = _roots(terms, forms, values)
        kept = set().union(*(roots[t] for t in terms if not all(map(reads_only_during_call, readers[t]))))
        if not kept & forms.keys():
            break
        forms = {t: form for t, form in forms.items() if t not in kept}
    in_place = {t for t in terms if t.kind == "parameter" and t.node in updated} - kept
    early = _early_writes(program, n_outputs, updated, in_place, forms, roots, last)
    subtracted = _subtractions(program, early, forms, readers, values)
    for k, t in enumerate(program.results):
        last[t] = end if k not in early else max(position[r] for r in [t] + readers[t])
    for k, step in early.items():
        change = subtracted.get(k, program.results[k])   # (read when it is written)
        last[change] = max(last[change], step)
    not_computed = {program.results[k] for k in subtracted}         # the subtraction does them
    forms = {t: form for t, form in forms.items() if t not in not_computed}
    life = {t: last[t] for t in forms}
    for t in terms:
        for root in roots[t] & forms.keys():
            life[root] = max(life[root], last[t])

    results = program.results
    returned_new = {t: (forms[t], values[t].shape, values[t].dtype) for t in results[:n_outputs]
                    if t in forms and results.count(t) == 1
                    and not any(t in roots[r] for r in results if r is not t)}
    into, buffers, free, dying = {}, [], [], {}
    for i, t in enumerate(terms):
        if t in forms and t not in returned_new:
            b = _overwritten(t, i, into, dying, values)
            b = _buffer_for(values[t].nbytes, buffers, free) if b is None else b
            into[t] = (forms[t], b, values[t].shape, values[t].dtype)
            dying.setdefault(life[t], []).append(b)
        free += dying.pop(i, [])                       # after step i: its buffers are free again

    copied = {k for k, t in enumerate(results) if k not in early and t not in returned_new
              and (roots[t] if k < n_outputs else roots[t] & in_place)}
    fresh = {t for t in kept if t.kind == "input"}
    parameter, writes = {t.node: t for t in in_place}, {}
    for k, step in early.items():
        writes.setdefault(step, []).append((parameter[updated[k - n_outputs]], k))
    transposed = {t for t in terms if t.kind == "op" and _written_as_T(t, values)}
    return Buffers(into, buffers, copied, fresh, {t.node for t in in_place}, writes, transposed,
                   subtracted, returned_new)


def _overwritten(t, i, into, dying, values):
    """The buffer of an input of ``t`` (step ``i``) that ``t`` may overwrite, or None: ``t`` is
    elementwise (``ELEMENTWISE``), the input has ``t``'s shape and dtype (the same bytes, element
    for element) and its life ends at ``t``. Taken from the buffers that die at step ``i``.
    An op that writes where it reads touches half the memory of one writing elsewhere."""
    if row_of(t.op) not in ELEMENTWISE:
        return None
    for a in t.args:
        if a in into and into[a][1] in dying.get(i, ()) and into[a][2:] == (values[t].shape, values[t].dtype):
            dying[i].remove(into[a][1])
            return into[a][1]
    return None


def _buffer_for(nbytes, buffers, free):
    """A free buffer for ``nbytes`` (``buffers``: the size of each; ``free``: those free now):
    the smallest that is big enough, else the biggest, made bigger, else a new one."""
    if not free:
        buffers.append(nbytes)
        return len(buffers) - 1
    fits = [b for b in free if buffers[b] >= nbytes]
    b = min(fits, key=buffers.__getitem__) if fits else max(free, key=buffers.__getitem__)
    buffers[b] = max(buffers[b], nbytes)
    free.remove(b)
    return b


def _early_writes(program, n_outputs, updated, in_place, forms, roots, last):
    """{result number: step after which it is written into its Parameter}, for the updates that
    need not wait for the end: once nothing reads the Parameter's old value any more (nor a
    view of it), and no op that may fail on the numbers follows (after a write, an error could
    no longer be explained by running the call again: ``FAIL_ON_SHAPES_ONLY``). Its buffer is then free for
    the rest of the step: a step holds no second copy of all its weights."""
    terms, end = program.terms, len(program.terms)
    parameter = {t.node: t for t in in_place}
    may_fail = max((i for i, t in enumerate(terms) if t.kind == "op" and t not in forms and
                    row_of(t.op) not in FAIL_ON_SHAPES_ONLY), default=-1)
    early = {}
    for k, new in enumerate(program.results[n_outputs:], n_outputs):
        old = parameter.get(updated[k - n_outputs])
        if old is None or roots[new] & in_place:
            continue
        step = max([terms.index(new), may_fail] + [last[t] for t in terms if old in roots[t]])
        if step < end:
            early[k] = step
    return early


def _subtractions(program, early, forms, readers, values):
    """{result number: the term ``change``} of the early updates ``W - change`` that are written
    as ``W -= change``, into ``W``'s own array, with no buffer for ``W - change``: those whose
    ``change`` is a value of its own buffer, of ``W``'s shape and dtype, and whose new value
    nothing else reads (not an output, not an input of another op). The same numbers:
    ``np.subtract(W, change, out=W)`` is ``np.subtract(W, change)``, written in place."""
    subtracted = {}
    for k in early:
        new = program.results[k]
        if not (new.kind == "op" and row_of(new.op) is ops.sub.opdef and not new.attrs):
            continue
        old, change = new.args
        if (old.kind == "parameter" and change in forms and not readers[new]
                and program.results.count(new) == 1
                and values[change].shape == values[old].shape and values[change].dtype == values[old].dtype):
            subtracted[k] = change
    return subtracted


def _roots(terms, forms, values):
    """The buffers (and the leaves' arrays) each value may be inside: its own buffer, none for a
    new array, else those of the values it was made from (it may be a view of them)."""
    roots = {}
    for t in terms:
        if t in forms or t.kind in ("input", "parameter"):
            roots[t] = {t}
        elif t.kind == "constant" or _new_array(t, values):
            roots[t] = set()
        else:
            roots[t] = set().union(*(roots[a] for a in t.args))
    return roots


def _new_array(t, values):
    """Is ``t``'s value a new array: its op is listed in ``NEW_ARRAYS``, and, checked rather than
    trusted, on this call's values (whose shapes every call of the plan has) it lies outside
    the memory of each of its inputs (``np.may_share_memory``: a comparison of bounds)?"""
    if row_of(t.op) not in NEW_ARRAYS:
        return False
    value = values[t]
    return not any(np.may_share_memory(value, values[a]) for a in t.args
                   if type(values[a]) is np.ndarray and type(value) is np.ndarray)


def reads_only_during_call(term):
    """Does this op read its inputs only while it runs (minigraph's or numpy's own op, and not
    one that remembers them)?"""
    return own_op(term.op) and row_of(term.op) not in REMEMBERS_INPUTS


def _out_form(t, values):
    """The out= form of ``t``'s op, if it gives exactly the value the op computed, in the same
    layout."""
    form = getattr(t.op, "out", None) if own_op(t.op) else None     # (a WithNumbers op: none)
    value = values[t]
    if form is None or type(value) is not np.ndarray or not value.flags.c_contiguous:
        return None                   # (a buffer is in C order: a sum of it adds in that order)
    args = [values[a] for a in t.args]
    if form is kernels.matmul_into and not kernels.stacked_rows(*args):
        form = np.matmul                        # (its product, with no call in between)
    if _same_calls(form, args, value) or _exact(t, args, value):
        return form
    trial = np.empty(value.shape, value.dtype)
    try:
        got = form(*args, **t.attrs, out=trial)
    except Exception:
        return None
    return form if got is trial and _same_bits(trial, value) else None


def _same_calls(form, args, value):
    """Does ``form`` make its op's own calls, into ``out``, on these arrays? matmul's
    (``np.matmul``, or ``kernels.matmul_into`` for a stack of rows) and linear's (its product,
    then ``+= b``, as ``kernels.linear`` when b does not stretch the product) do, when every
    array has the value's dtype."""
    if not all(type(a) is np.ndarray and a.dtype == value.dtype for a in args):
        return False
    return form in (np.matmul, kernels.matmul_into) or (
        form is kernels.linear_into and value.shape == args[0].shape[:-1] + args[1].shape[1:])


def _exact(t, args, value):
    """Is ``t``'s op one of ``EXACT``, with operands of the result's dtype (no operand is
    converted first, which the form could do otherwise than the op)?"""
    return row_of(t.op) in EXACT and all(isinstance(a, (np.ndarray, np.generic)) and a.dtype == value.dtype
                                         for a in args)


def _same_bits(a, b):
    """Do two C-ordered arrays of one shape and dtype hold the same bits (NaNs, and the sign of
    a zero, included)? One pass, where ``np.array_equal(..., equal_nan=True)`` makes five."""
    kind = np.dtype(f"u{a.itemsize}") if a.itemsize in (1, 2, 4, 8) else np.uint8
    return np.array_equal(a.reshape(-1).view(kind), b.reshape(-1).view(kind))


def _written_as_T(t, values):
    """Is ``t`` a transpose whose value is its input's ``.T`` (an ndarray's attribute: no call)?"""
    test, x = AS_ATTRIBUTE_T.get(row_of(t.op)), values[t.args[0]] if t.args else None
    return test is not None and type(x) is np.ndarray and test(x, **t.attrs)
