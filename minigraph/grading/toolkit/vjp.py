"""Backward-rule (VJP) exercises: "write ``name_vjp(g, ans, *inputs)``", checked two ways.

``vjp_exercise`` builds them (``00.sigmoid_vjp``, ``03.tanh_vjp``, ``03.mul_vjp``,
``03.matmul_vjp``). An exercise has two kinds of case:

* a **plain** case, ``case(g=..., x=...)``, calls the learner's rule on given arrays (``ans`` is
  the op's forward of the inputs) and compares what it returns with the reference rule;
* a **graph** case, ``graph_case(x=...)``, plugs the rule into the engine as a custom op
  (``mg.defop``) inside a small network, runs the backward pass and compares the gradient of
  every node with the right one. Walking back from the loss, the first node whose gradient is
  wrong is named, with the op that sent it that gradient, and expected vs got.

How a graph case keeps the grader's split (``exercise.py``) -- record in the kernel, replay at
home:

1. ``run`` (in the learner's kernel) builds the graph with the learner's rule wrapped so that
   every value it returns is recorded, call by call, as JSON (``values.encode``), and runs
   ``backward``. Only that list of returned values is sent: ``{"calls": [...]}``. If the rule
   itself raised, its own exception is re-raised (a stub's NotImplementedError stays "not done
   yet"); if the engine refused a returned value (a gradient of the wrong shape, say), the calls
   so far are sent anyway and the grader meets the same refusal when it replays them.
2. ``judge`` (in the grader's process) builds the same graph twice: once with the reference
   rule, for the expected gradients (the leaves' from central differences, as a referee
   independent of any backward code), and once with a rule that *replays* the recorded values
   in order. It runs ``backward`` on the second one itself, so the forward values, the
   accumulation of gradients and the comparison all happen here. The backward pass calls the
   rules in the same order every time, so call ``i`` at home is call ``i`` in the kernel.

Nothing the kernel computes with the engine is trusted: a patched engine, ``check`` or grading
module in the kernel can change only the values sent, and those are judged here as answers of
the learner's rule. (The batch grader also forgets every minigraph module the submission
imported before it runs the cases, see ``batch/collect.py``.)

Typical wrong rules (``mistakes``) are named where they show: a plain case whose values are what
a wrong rule gives, or, in a graph case, the first call whose value differs from the right
rule's. Every call before it returned the right value, so it received the right ``g``, and the
wrong rule is called in the grader with exactly the arguments the replay received.

In the student edition, which has no reference rule, ``public`` judges the same records: a
plain case against the op's ``forward`` differentiated numerically (``numeric_vjp``), a graph
case call by call (each value the rule returned, against the forward differentiated at that
call's inputs and ``g``), then every leaf's gradient against central differences of the whole
graph; it judges fresh random cases too (``public.Public(fresh=True)``).

A builder ``build(rules) -> Graph`` makes the graph: it must call
``mg.defop(name, forward, rules, ...)`` once, name every node, and name its Inputs after the
graph case's inputs. ``chained`` builds the graph of a one-input elementwise op, and
``elementwise_cases`` gives its cases.
"""

import numpy as np

import minigraph as mg

from .exercise import (MAX_MESSAGE, Exercise, Verdict, case, compare, describe_inputs,
                       diagnose, random_array, unchanged)
from .public import Public, telltale
from .values import Unreadable, decode, encode, sentences, shape_text

RTOL, ATOL = 1e-5, 1e-7          # node gradients vs the expected ones (central differences at leaves)
_END = object()                  # no more recorded calls


def graph_case(**inputs):
    """The case that plugs the rule into the exercise's graph, fed with ``inputs`` (by Input name)."""
    return {"graph": True, "inputs": inputs}


def elementwise_cases(g_hint):
    """The cases of a one-input elementwise rule (``sigmoid_vjp``, ``tanh_vjp``).

    The first has g = 1, which hides a rule that forgets g; the second does not, and carries
    ``g_hint``; the third is 2-D; the last is the graph, fed x.
    """
    return [case(g=[1.0, 1.0, 1.0], x=[-1.0, 0.0, 2.0]),
            case(g=[2.0, -1.0, 0.5], x=[0.5, -0.5, 1.0], hint=g_hint),
            case(g=[[1.0, -2.0], [0.5, 3.0]], x=[[0.0, 1.0], [-1.0, 4.0]]),
            graph_case(x=[-1.5, 0.5, 2.0])]


def elementwise_hidden(rng):
    """A hidden case of a one-input elementwise rule (``Exercise.hidden``): g and x of one
    random shape."""
    x = np.asarray(random_array(rng, dims=(1, 2)))
    return case(g=np.round(rng.normal(0.0, 2.0, x.shape), 4).tolist(), x=x.tolist())


def chained(op, w, v, letter):
    """loss = sum(op(op(x·w)·v)), nodes z1, {letter}1, z2, {letter}2, loss, leaves x, w, v.

    The first use of ``op`` receives an upstream gradient that is not all ones (it went
    through the second), so a rule that forgets to multiply by ``g`` fails there.
    """
    x = mg.Input("x")
    w, v = mg.Parameter(w, name="w"), mg.Parameter(v, name="v")
    first = op(mg.mul(x, w, name="z1"), name=f"{letter}1")
    return mg.Graph(mg.sum(op(mg.mul(first, v, name="z2"), name=f"{letter}2"), name="loss"))


def vjp_exercise(id, name, points, title, forward, reference, build, graph_text, cases, hint,
                 mistakes=None, engine=None, hidden=None):
    """A backward-rule exercise: plain cases, then graph cases (see the module docstring).

    forward     the op's forward, ``forward(*inputs, **attrs)``: gives ``ans`` in plain cases;
                a case's inputs beyond the first case's (``g``, the op's inputs) are the op's
                attributes, ints passed by keyword (``axis``: a hidden case may draw one)
    reference   the right rule, called like the learner's ``name(g, ans, *inputs)``; for an op
                with two inputs it returns the pair (grad for the first, grad for the second)
    build       ``build(rules) -> mg.Graph``, ``rules`` being one VJP per input of the op
    graph_text  the graph in words, for the table (``loss = sum(σ(σ(x·w)·v))``)
    mistakes    ``{message: wrong_rule}``, typical wrong rules called like ``reference``: a
                failing case (plain, or the first wrong call of a graph case) whose values are
                what a wrong rule gives says that message
    engine      what of the engine the exercise asks for (``engine.refused(engine.vjps_of(mg.tanh))``):
                it refuses while the answer runs, in plain and graph cases (``Exercise.engine``)
    """
    cases = tuple(cases)
    inputs = list(cases[0]["inputs"])[1:]            # the op's inputs, after g: ["x"], ["x", "y"]
    pair = len(inputs) == 2

    def rules_of(function):
        """One VJP per input of the op, from a function written like the exercise asks."""
        if not pair:
            return [function]
        return [lambda g, ans, *args, k=k: _split(function(g, ans, *args), name)[k] for k in (0, 1)]

    def run(answer, case):
        if case.get("graph"):
            return _record(build, rules_of(answer), case)
        given, attrs = _operands(case, inputs)
        g, *values = copies = [x.copy() for x in given]
        ans = forward(*values, **attrs)
        out = answer(g, ans, *values, **attrs)
        unchanged(name, ["g", *inputs], given, copies)
        return [encode(part) for part in _split(out, name)] if pair else encode(out)

    def judge(case, got):
        if case.get("graph"):
            wrong_rules = {message: rules_of(rule) for message, rule in (mistakes or {}).items()}
            return _judge_graph(build, rules_of(reference), case, got, _naming(name, inputs),
                                wrong_rules)
        (g, *values), attrs = _operands(case, inputs)
        ans = forward(*values, **attrs)
        expected = parts(reference(g, ans, *values, **attrs))
        return _judge_parts(expected, got, inputs, lambda k, verdict, part: diagnose(
            verdict, part, mistakes, lambda wrong: parts(wrong(g, ans, *values, **attrs))[k]))

    def public(case, got):
        """The student edition's judge: the op's forward differentiated numerically."""
        if case.get("graph"):
            return _public_graph(build, forward, len(inputs), case, got, _naming(name, inputs))
        (g, *values), attrs = _operands(case, inputs)
        expected = [numeric_vjp(forward, g, values, k, attrs) for k in range(len(values))]
        return _judge_parts(expected, got, inputs, lambda k, verdict, part: _told(
            verdict, part, forward, g, values, k, attrs))

    def parts(out):
        return _split(out, name) if pair else [out]

    def describe(case):
        where = f"in the graph {graph_text}, " if case.get("graph") else ""
        return where + describe_inputs(case)

    return Exercise(id, name, points, cases, run, judge, title, hint, describe, engine, hidden,
                    reference=reference, public=Public(public, fresh=True))


def _judge_parts(expected, got, inputs, named):
    """The verdict on a plain case: ``expected`` holds one gradient per input of the op, ``got``
    the answer as sent (a pair of gradients for a two-input op); ``named(k, verdict, part)``
    re-words a failing verdict on gradient ``k`` when it shows a known mistake."""
    if len(inputs) == 1:
        part = decode(got)
        return named(0, compare(expected[0], part), part)
    if not isinstance(got, list) or len(got) != 2:
        return Verdict(False, message="did not return a pair")
    for k in range(2):
        part = decode(got[k])
        verdict = compare(expected[k], part)
        if not verdict.passed:
            verdict = named(k, verdict, part)
            which = f"the gradient for {inputs[k]}"
            return verdict.reworded(verdict.message if which in verdict.message
                                    else f"{which}: {verdict.message}")
    return Verdict(True, "both gradients", "both right")


# -- in the student edition: central differences against the op's forward ---------------------

STENCIL = ((2, -1.0), (1, 8.0), (-1, -8.0), (-2, 1.0))     # five-point central difference, / 12h


def numeric_vjp(forward, g, values, k, attrs, step=1e-4):
    """The gradient of ``sum(g * forward(*values, **attrs))`` with respect to ``values[k]``, by
    central differences (five points: an error of order step⁴, so that the rounding error,
    of order 1e-16 / step, stays near 1e-12): what a VJP of the op must return for input ``k``.

    A forward that bends on a scale near the step -- layer norm of a row that barely varies,
    whose scale is √eps ≈ 0.003 -- makes the step⁴ error show: so the same is measured with a
    tenth of the step, and where the two disagree the finer one is kept."""
    coarse = _central(forward, g, values, k, attrs, step)
    fine = _central(forward, g, values, k, attrs, step / 10)
    return coarse if np.allclose(coarse, fine, rtol=RTOL / 10, atol=ATOL / 10) else fine


def _central(forward, g, values, k, attrs, step):
    x = np.array(values[k], dtype=float)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        total = 0.0
        for steps, weight in STENCIL:
            bumped = [np.array(v, dtype=float) for v in values]
            bumped[k][i] += steps * step
            total += weight * float(np.sum(g * forward(*bumped, **attrs)))
        grad[i] = total / (12 * step)
    return grad


def _told(verdict, got, forward, g, values, k, attrs):
    """A failing verdict on a rule's gradient, with the mistake its numbers show by themselves
    (``public.telltale``, or the upstream gradient g left out) named where there is one."""
    if verdict.passed or not isinstance(got, np.ndarray):
        return verdict
    expected = numeric_vjp(forward, g, values, k, attrs)
    told = telltale(expected, got, RTOL, ATOL)
    if told is None and not np.allclose(g, 1.0):
        without_g = numeric_vjp(forward, np.ones_like(g), values, k, attrs)
        if without_g.shape == got.shape and np.allclose(without_g, got, rtol=RTOL, atol=ATOL):
            told = "the upstream gradient g is missing: a VJP multiplies the local derivative by g"
    return verdict if told is None else Verdict(False, verdict.expected, verdict.got,
                                                f"{told} ({verdict.message})", told)


def _public_graph(build, forward, n_rules, case, got, naming):
    """A graph case judged without the reference rule: every value the learner's rule returned
    during the backward pass (replayed here) against the op's forward differentiated
    numerically at that call, then every leaf's gradient against central differences of the
    whole graph."""
    calls = got.get("calls") if isinstance(got, dict) else None
    if not isinstance(calls, list):
        return Verdict(False, message="the notebook sent no readable results")
    feed = _feed(case)
    rules, pending, replayed = _replaying(calls, n_rules)
    yours = build(rules)
    try:
        yours.backward(feed)
    except mg.GraphError as error:
        return _stopped(error, replayed)
    if next(pending, _END) is not _END:
        return Verdict(False, message="the notebook sent more results than the backward pass needs")
    for i, (k, value, g, ans, args, attrs) in enumerate(replayed, start=1):
        verdict = compare(numeric_vjp(forward, g, args, k, attrs), value, rtol=RTOL, atol=ATOL)
        if not verdict.passed:
            verdict = _told(verdict, value, forward, g, args, k, attrs)
            return verdict.reworded(f"call {i} of {naming[k]} in the backward pass returned a "
                                    f"wrong gradient: {verdict.message}")
    leaves = [n for n in yours.nodes if n.op is None and n.grad is not None]
    grads = {leaf.name: np.array(leaf.grad) for leaf in leaves}
    for leaf in leaves:
        verdict = compare(mg.gradcheck.numerical_grad(yours, leaf, feed), grads[leaf.name], rtol=RTOL, atol=ATOL)
        if not verdict.passed:
            return Verdict(False, verdict.expected, verdict.got,
                           f"node '{leaf.name}' has the wrong gradient: {verdict.message}")
    return Verdict(True, f"{len(replayed)} rule calls and {len(leaves)} leaf gradients", "all agree")


def _operands(case, inputs):
    """A plain case's arrays (``g``, then the op's ``inputs``, as floats) and its attributes:
    any other input is an int the op and the rule take by keyword (``axis=0``), as the engine
    passes an op's attributes to its VJPs."""
    given = case["inputs"]
    names = ["g", *inputs]
    return ([np.asarray(given[each], dtype=float) for each in names],
            {key: int(value) for key, value in given.items() if key not in names})


def _split(out, name):
    """The two gradients a two-input rule returns, or a TypeError saying what it returned."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{name} must return a pair (gradient for the first input, gradient "
                        f"for the second); it returned {type(out).__name__}")
    return out


def _naming(name, inputs):
    """rule index -> how a message names it: ``your sigmoid_vjp``, ``grad_y of your mul_vjp``."""
    if len(inputs) == 1:
        return [f"your {name}"]
    return [f"grad_{each} of your {name}" for each in inputs]


def _feed(case):
    return {key: np.asarray(value, dtype=float) for key, value in case["inputs"].items()}


# -- in the learner's kernel: run backward with the learner's rule, record what it returns ----

def _record(build, rules, case):
    calls, raised = [], []

    def recording(rule):
        def vjp(g, ans, *args, **attrs):
            try:
                out = rule(g, ans, *args, **attrs)
            except Exception as error:
                raised.append(error)
                raise
            calls.append(encode(out))
            return out
        return vjp

    try:
        build([recording(rule) for rule in rules]).backward(_feed(case))
    except mg.GraphError:
        if raised:                       # the engine wraps the rule's error: unwrap it
            raise raised[0] from None
        # otherwise the engine refused a returned value; the replay at home meets it too
    return {"calls": calls}


# -- in the grader: replay those values in a graph of its own, compare node by node -----------

def _replaying(calls, n_rules):
    """One VJP per input of the op, returning, call after call, what the learner's rule returned.

    Also returns the iterator of calls not replayed yet, and the list of calls replayed so far,
    each ``(k, value, g, ans, args, attrs)`` (to compare a call with the right rule, and to say
    "expected shape ..., got shape ...").
    """
    pending, replayed = iter(calls), []

    def rule(k):
        def vjp(g, ans, *args, **attrs):
            data = next(pending, _END)
            if data is _END:
                raise RuntimeError("the notebook sent fewer results than the backward pass needs")
            value = decode(data)
            if isinstance(value, Unreadable):
                raise TypeError(f"the rule returned {shape_text(value)}, not an array")
            replayed.append((k, value, g, ans, args, attrs))
            return value
        return vjp

    return [rule(k) for k in range(n_rules)], pending, replayed


def _first_wrong_call(replayed, right_rules):
    """The first replayed call whose value is not what the right rule gives, or None.

    Every call before it returned the right value, so it received the right ``g``: a wrong rule
    called with the same arguments must return the same value.
    """
    for call in replayed:
        k, value, g, ans, args, attrs = call
        right = np.asarray(right_rules[k](g, ans, *args, **attrs), dtype=float)
        if right.shape != np.shape(value) or not np.allclose(right, value, rtol=RTOL, atol=ATOL):
            return call
    return None


def _judge_graph(build, right_rules, case, got, naming, wrong_rules=None):
    verdict, replayed = _judge_replay(build, right_rules, case, got, naming)
    first = None if verdict.passed or not wrong_rules else _first_wrong_call(replayed or [], right_rules)
    if first is None:
        return verdict
    k, value, g, ans, args, attrs = first
    return diagnose(verdict, value, {message: rules[k] for message, rules in wrong_rules.items()},
                    lambda rule: rule(g, ans, *args, **attrs))


def _judge_replay(build, right_rules, case, got, naming):
    """(Verdict, the calls replayed to reach it, or None if the results were unreadable)."""
    calls = got.get("calls") if isinstance(got, dict) else None
    if not isinstance(calls, list):
        return Verdict(False, message="the notebook sent no readable results"), None
    feed = _feed(case)
    right = build(right_rules)
    right.backward(feed)
    expected = {n.name: n.grad for n in right.nodes if n.grad is not None}
    for leaf in [n for n in right.nodes if n.op is None and n.name in expected]:
        expected[leaf.name] = mg.gradcheck.numerical_grad(right, leaf, feed)

    rules, pending, replayed = _replaying(calls, len(right_rules))
    yours = build(rules)
    try:
        yours.backward(feed)
    except mg.GraphError as error:
        return _stopped(error, replayed), replayed
    if next(pending, _END) is not _END:
        return Verdict(False, message="the notebook sent more results than the backward pass needs"), None

    grads = {n.name: n.grad for n in yours.nodes}
    for node in reversed(right.nodes):                  # from the loss back to the leaves
        if node.name not in expected:
            continue
        senders = _senders(right, node, right_rules, naming)
        if grads.get(node.name) is None:
            return Verdict(False, "a gradient", "none",
                           f"no gradient reached node '{node.name}' from {senders}: does "
                           f"the rule return its gradient?"), replayed
        verdict = compare(expected[node.name], grads[node.name], rtol=RTOL, atol=ATOL)
        if not verdict.passed:
            return Verdict(False, verdict.expected, verdict.got,
                           f"node '{node.name}' has the wrong gradient, sent back by "
                           f"{senders}: {verdict.message}"), replayed
    return Verdict(True, f"{len(expected)} node gradients", "all agree"), replayed


def _stopped(error, replayed):
    """The verdict when the engine refused a value the rule returned (a wrong shape, say)."""
    k, value, *_, args, _ = replayed[-1] if replayed else (0, None, None, None, (None,), {})
    wrong_shape = value is not None and np.shape(value) != np.shape(args[k])
    shown = ((shape_text(args[k]), shape_text(value)) if wrong_shape else
             ("a gradient for every node", "the backward pass stopped"))
    return Verdict(False, *shown, sentences(f"the engine stopped the backward pass: {error}", MAX_MESSAGE))


def _senders(graph, node, rules, naming):
    """``'s1' (your sigmoid_vjp)``: the ops that send ``node`` its gradient, and which rule."""
    texts = []
    for op in (n for n in graph.nodes if node in n.inputs):
        vjp = op.op.vjps[op.inputs.index(node)]
        which = naming[rules.index(vjp)] if vjp in rules else op.op.name
        texts.append(f"'{op.name}' ({which})")
    return " and ".join(texts)
