"""Chapter 07, recurrent networks (``solutions/07_recurrent_networks.ipynb``).

Every exercise here knows the typical wrong answers: when a wrong answer gives exactly what a
known slip would give (the tanh forgotten, the gradient of one time step only, each array
clipped by its own norm, ...), the failing case says which slip it looks like. The mistakes
are data (``MISTAKES``: a text and the function that makes that mistake), and the tests feed
each of them in as a learner's answer.
"""

from collections import Counter

import numpy as np

import minigraph as mg

from ..toolkit.answers import answers_of, judges_of
from ..toolkit.engine import refused
from ..toolkit.exercise import Exercise, Rule, Verdict, case, function_exercise, random_array
from ..toolkit.public import Public
from ..toolkit.values import encode, show
from ..toolkit.vjp import graph_case, vjp_exercise

TITLE = "Recurrent networks"
answers = answers_of(__name__)    # answers/ch07.py: reference answers, judges and mistakes
judges = judges_of(__name__)      # judges/ch07.py: the judges that hold no answer


sigmoid = mg.sigmoid.opdef.forward        # the engine's own, stable for large |x|


# -- 07.rnn_step ---------------------------------------------------------------------------------

def _hidden_step(rng):
    """A batch of n rows, d inputs and h hidden units, each from 1 to 3."""
    n, d, h = (int(k) for k in rng.integers(1, 4, 3))
    return case(**{name: random_array(rng, scale=1.0, shape=shape) for name, shape in
                   (("x", (n, d)), ("h", (n, h)), ("W_xh", (d, h)), ("W_hh", (h, h)), ("b", (h,)))})


rnn_step = function_exercise(
    "07.rnn_step", "rnn_step", answers.rnn_step, points=2,
    cases=[
        case(x=[[1.0, 0.0, 0.0]], h=[[0.5, -0.5]], W_xh=[[0.2, -0.4], [0.7, 0.1], [-0.3, 0.9]],
             W_hh=[[0.6, -0.2], [0.3, 0.8]], b=[0.1, -0.1]),
        case(x=[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], h=[[0.9, 0.1], [-0.4, 0.6]],
             W_xh=[[0.2, -0.4], [0.7, 0.1], [-0.3, 0.9]], W_hh=[[0.6, -0.2], [0.3, 0.8]], b=[0.1, -0.1],
             hint="A batch of two rows: every row steps on its own, with the same weights."),
        case(x=[[0.5, -1.0]], h=[[0.2, -0.3, 0.4]], W_xh=[[1.0, -0.5, 0.3], [0.2, 0.8, -1.1]],
             W_hh=[[0.1, 0.9, -0.4], [-0.7, 0.2, 0.5], [0.3, -0.6, 0.8]], b=[0.0, 0.2, -0.3],
             hint="Three hidden units: W_hh is (3, 3), and the new state has the shape of h."),
    ],
    hint=("One step is an affine map of the input and of the previous state, squashed by tanh.",
          "A step adds three parts, the input times W_xh, the previous state times W_hh and the "
          "bias b, and squashes the sum with tanh. Rows are batch entries, so each weight "
          "matrix stands on the right of its product."),
    title="rnn_step(x, h, W_xh, W_hh, b)", mistakes=answers.STEP_MISTAKES, hidden=_hidden_step)


# -- 07.bptt_two_steps -------------------------------------------------------------------------------

_TWO = dict(x1=[[1.0, 0.0]], x2=[[0.0, 1.0]], h0=[[0.3, -0.6]], W_xh=[[0.5, -0.2], [0.1, 0.4]],
            W_hh=[[0.7, -0.3], [0.2, 0.9]], b=[0.05, -0.1], u=[[1.0, -2.0]])

def _hidden_two_steps(rng):
    """Two steps of a batch of n rows, d inputs and h hidden units, each from 1 to 3."""
    n, d, h = (int(k) for k in rng.integers(1, 4, 3))
    return case(**{name: random_array(rng, scale=scale, shape=shape) for name, shape, scale in
                   (("x1", (n, d), 1.0), ("x2", (n, d), 1.0), ("h0", (n, h), 0.5), ("W_xh", (d, h), 0.5),
                    ("W_hh", (h, h), 0.5), ("b", (h,), 0.2), ("u", (n, h), 1.0))})


bptt_two_steps = function_exercise(
    "07.bptt_two_steps", "bptt_two_steps", answers.bptt_two_steps, points=3,
    cases=[
        case(**_TWO),
        case(**{**_TWO, "h0": [[0.0, 0.0]]},
             hint="With h0 = 0, step 1's share is zero: this case checks step 2's share alone."),
        case(x1=[[0.5, -1.0, 0.2], [1.0, 0.0, -0.5]], x2=[[0.0, 0.3, 1.0], [-0.2, 0.8, 0.1]],
             h0=[[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]],
             W_xh=[[0.3, -0.1, 0.2], [0.5, 0.4, -0.3], [-0.2, 0.1, 0.6]],
             W_hh=[[0.6, 0.2, -0.1], [-0.3, 0.5, 0.4], [0.2, -0.4, 0.7]], b=[0.0, 0.1, -0.2],
             u=[[1.0, 0.5, -1.0], [0.0, -1.5, 2.0]],
             hint="A batch of two sequences: each share sums over the batch rows as well, which "
                  "the matrix product of the right shapes does for you."),
    ],
    hint=("W_hh is used at both steps, so its gradient is the sum of one share per step; go "
          "backward from h2, as the engine does, following the statement's four steps.",
          "Run the two steps forward first: the backward pass needs h1 and h2. Each share is "
          "chapter 03's matmul rule for the weight of a product, with the state that entered "
          "that step on the left; the gradient reaches h1 through the same product (with W_hh "
          "transposed) and then through step 1's tanh, whose slope is 1 − h1²."),
    title="bptt_two_steps(x1, x2, h0, W_xh, W_hh, b, u) -> dL/dW_hh",
    mistakes=answers.TWO_STEP_MISTAKES, hidden=_hidden_two_steps)


# -- 07.gate_vjp: the VJP of  ans = σ(z) · c  (the forget gate keeping the cell state) ----------

def gate_forward(z, c):
    return sigmoid(z) * c


def gate_graph(rules):
    """Two LSTM-like steps along the cell state: c1 = σ(x·w)·c0, c2 = σ(x·v)·tanh(c1) + ..."""
    gate = mg.defop("gate_exercise", gate_forward, rules, symbol="σ(z)·c")
    x = mg.Input("x")
    w, v = mg.Parameter([0.8, -1.2, 0.5], name="w"), mg.Parameter([-0.6, 0.9, 1.4], name="v")
    c0 = mg.Parameter([1.5, -0.7, 0.3], name="c0")
    c1 = mg.add(gate(mg.mul(x, w, name="z1"), c0, name="f1·c0"), mg.Constant(0.2, name="0.2"), name="c1")
    c2 = gate(mg.mul(x, v, name="z2"), mg.tanh(c1, name="tanh(c1)"), name="f2·c1")
    return mg.Graph(mg.sum(mg.mul(c2, c2, name="c2²"), name="loss"))


def _hidden_gate(rng):
    """g, z and c of one random shape (1 or 2 axes); half the time some entries of c are 0
    (σ(z) recovered as ans / c is 0 / 0 there)."""
    shape = np.shape(random_array(rng, dims=(1, 2)))
    c = np.asarray(random_array(rng, scale=1.5, shape=shape))
    if rng.random() < 0.5:
        c[rng.random(shape) < 0.5] = 0.0
        c.flat[int(rng.integers(c.size))] = 0.0
    return case(g=random_array(rng, scale=2.0, shape=shape), z=random_array(rng, shape=shape),
                c=c.tolist())


gate_vjp = vjp_exercise(
    "07.gate_vjp", "gate_vjp", 3, "gate_vjp(g, ans, z, c) -> (grad_z, grad_c)", gate_forward,
    answers.gate_vjp, gate_graph, "c1 = σ(x·w)·c0 + 0.2, loss = sum((σ(x·v)·tanh(c1))²)",
    cases=[
        case(g=[1.0, 1.0, 1.0], z=[0.0, 2.0, -1.0], c=[1.0, -0.5, 2.0]),
        case(g=[2.0, -1.0, 0.5], z=[1.0, -2.0, 0.5], c=[0.3, 1.5, -1.0],
             hint="Multiply both gradients by the upstream gradient g."),
        case(g=[[1.0, -0.5], [0.2, 2.0]], z=[[0.5, -0.5], [3.0, -3.0]], c=[[2.0, 1.0], [-1.0, 0.5]]),
        case(g=[1.0, -2.0, 0.5], z=[0.5, -1.0, 2.0], c=[0.0, 1.5, 0.0],
             hint="c may be 0 (an LSTM's first cell state often is): then ans is 0 whatever z is."),
        graph_case(x=[0.7, -1.1, 1.8]),
    ],
    hint=("The product rule: each input's gradient is g times the derivative of σ(z)·c with "
          "respect to that input, the other factor held fixed.",
          "The slope of σ is σ·(1 − σ). Compute σ(z) from z yourself: ans is σ(z)·c, not "
          "σ(z), and c may be 0, so dividing ans by c fails."),
    mistakes=answers.GATE_MISTAKES, hidden=_hidden_gate)


# -- 07.clip_by_global_norm -------------------------------------------------------------------

def clip_inputs(case):
    grads = [np.asarray(g, dtype=float) for g in case["inputs"]["grads"]]
    return grads, float(case["inputs"]["max_norm"])


def _run_clip(answer, case):
    """The answer's arrays, encoded. Refused: gradients changed in place, and a result that
    shares memory with a gradient (the array itself, or a view such as ``g[:]``), since
    changing that result later changes the caller's gradient too. ``np.shares_memory`` asks
    whether an entry is shared, exactly: a 0-d view counts, a number read out of an array
    (``g[()]``, a copy) does not."""
    grads, max_norm = clip_inputs(case)
    originals = [g.copy() for g in grads]
    try:
        out = answer(grads, max_norm)
    except IndexError as error:
        if not ("0-dimensional" in str(error) and any(g.ndim == 0 for g in grads)):
            raise
        raise Rule("a gradient here is 0-d (one number, shape ()): it has no axis, so indexing it "
                   "with [:] or [0] fails. And [:] does not copy a numpy array anyway: it makes a "
                   "view that shares the caller's memory; the copy method copies an array of any "
                   "shape") from error
    if any(not np.array_equal(g, o) for g, o in zip(grads, originals)):
        raise ValueError("clip_by_global_norm changed the gradients in place; return new arrays")
    if not isinstance(out, (list, tuple)):
        raise TypeError(f"clip_by_global_norm must return a list of arrays, not {type(out).__name__}")
    if any(isinstance(o, np.ndarray) and np.shares_memory(o, g) for o in out for g in grads):
        raise Rule("clip_by_global_norm returned one of the arrays it was given, or a view of one (g[:] "
                   "is not a copy for numpy arrays): return new arrays, even when nothing needs "
                   "clipping, so that changing them later cannot change the caller's gradients")
    return [encode(g) for g in out]


def _hidden_clip(rng):
    """One to three arrays of random shapes, and a max_norm above or below their global norm."""
    grads = [random_array(rng) for _ in range(int(rng.integers(1, 4)))]
    norm = np.sqrt(sum(np.sum(np.square(g)) for g in grads))
    return case(grads=grads, max_norm=round(float(norm * rng.uniform(0.2, 1.5)) + 0.01, 4))


clip_global_norm = Exercise(
    "07.clip_global_norm", "clip_by_global_norm", 2,
    ({"inputs": {"grads": [[3.0, 0.0], [[0.0, 4.0]]], "max_norm": 1.0}},
     {"inputs": {"grads": [[0.3, -0.4], [[0.1, 0.2], [0.0, -0.2]]], "max_norm": 5.0},
      "hint": "The norm here is below max_norm: the gradients come back unchanged."},
     {"inputs": {"grads": [[[1.0, -2.0], [2.0, 1.0]], [6.0, -2.0, 3.0], [0.5]], "max_norm": 2.0}},
     {"inputs": {"grads": [[10.0, -0.5], [0.2]], "max_norm": 3.0},
      "hint": "One big entry must not be cut on its own: every entry shrinks by the same factor."}),
    _run_clip, answers.judge_clip, title="clip_by_global_norm(grads, max_norm) -> list of arrays",
    expected=lambda case: [encode(each) for each in answers.clip_by_global_norm(*clip_inputs(case))],
    public=Public(judges.judge_stored_clip),
    engine=refused({"mg.recurrent.clip_by_global_norm": "clip by the global norm"}),
    hint=("One norm for all the arrays together, and one factor for all of them: clipping keeps "
          "the direction of the whole step.",
          "The global norm is the square root of the sum of every squared entry of every array; "
          "if it is above max_norm, scale every array by the one factor that brings that norm "
          "down to max_norm, and return new arrays."),
    describe=lambda case: f"grads={show(tuple(np.asarray(g) for g in case['inputs']['grads']))}, "
                          f"max_norm={case['inputs']['max_norm']}",
    hidden=_hidden_clip)


# -- 07.reber_generator ------------------------------------------------------------------------

N_STRINGS = 300
FAIR = 4.5           # a fork's two counts may differ by this many standard deviations of a fair coin


def _run_reber(answer, case):
    """N_STRINGS strings drawn with a generator made from the case's seed, twice: every random
    choice must come from ``rng``, so the second draw repeats the first."""
    strings, again = ([answer(rng) for _ in range(N_STRINGS)]
                      for rng in (np.random.default_rng(case["seed"]), np.random.default_rng(case["seed"])))
    bad = next((s for s in strings if not isinstance(s, str)), None)
    if bad is not None:
        raise TypeError(f"reber_generator must return a string such as 'BTBTXSETE', not {type(bad).__name__}")
    if strings != again:
        raise Rule("two generators made from the same seed gave different strings: make every random "
                   "choice with the rng you are given (rng.integers, rng.choice), not with random or "
                   "np.random")
    return strings


def _why_illegal(string):
    """Why ``string`` is not an embedded Reber string, in words (long strings cut short)."""
    sets = mg.data.reber_walk(string)
    k = next(i for i, s in enumerate(sets) if s is None) - 1 if None in sets else len(string)
    if k == len(string):
        return f"'{_cut(string)}' stops too early: after it the automaton expects one of {sorted(sets[-1])}"
    legal, prefix = sets[k], string[:k]
    if len(prefix) >= 4 and prefix.endswith("E") and legal == {string[1]}:
        return (f"in '{_cut(string)}' the second-to-last symbol must repeat the second one "
                f"('{string[1]}'): that is the long-range part of the grammar")
    if k == 2 and string[2:3] != "B":
        return f"'{_cut(string)}' is not embedded: after B and T or P comes a whole Reber string, starting with B"
    if not legal:
        return f"'{_cut(string)}' goes on after its final E"
    return (f"in '{_cut(string)}', after '{_cut(prefix)}' the automaton allows only {sorted(legal)}, "
            f"not '{string[k]}'")


def _cut(string, limit=40):
    """``string``, or its two ends when it is longer than ``limit`` (a generator gone astray
    can make strings of megabytes, and a message must stay one short line)."""
    return string if len(string) <= limit else f"{string[:limit // 2]}…{string[1 - limit // 2:]}"


def _choices(string):
    """The transitions of the inner automaton a string walks through, in order: (state, symbol)."""
    inner, state, made = string[3:-2], 0, []
    for symbol in inner:
        made.append((state, symbol))
        state = dict(mg.data.REBER_AUTOMATON[state])[symbol]
        if state is None:
            break
    return made


def _judge_reber(case, got):
    if not isinstance(got, list) or not all(isinstance(s, str) for s in got) or len(got) != N_STRINGS:
        return Verdict(False, f"{N_STRINGS} strings", "something else", "the generator's results were unreadable")
    illegal = next((s for s in got if not mg.data.is_reber(s)), None)
    if illegal is not None:
        return Verdict(False, "legal strings", _cut(illegal), _why_illegal(illegal))
    if len(set(got)) == 1:
        return Verdict(False, "random strings", _cut(got[0]), f"all {N_STRINGS} strings are the same: choose "
                       "at random (with the rng) at every fork")
    share = sum(s[1] == "T" for s in got) / len(got)
    if not 0.35 <= share <= 0.65:
        return Verdict(False, "T and P about half the time each", f"T {share:.0%} of the time",
                       "the second symbol should be T or P with equal chances")
    edges = {(state, symbol) for state, pairs in mg.data.REBER_AUTOMATON.items() for symbol, _ in pairs}
    counts = Counter(choice for string in got for choice in _choices(string))
    unused = sorted(edges - set(counts))
    if unused:
        state, symbol = unused[0]
        return Verdict(False, "every transition used", f"{len(unused)} never used",
                       f"in {N_STRINGS} strings, state {state} never emitted '{symbol}': choose between "
                       f"all of a state's transitions at random, loops included")
    for state, ((a, _), (b, _)) in ((s, p) for s, p in mg.data.REBER_AUTOMATON.items() if len(p) == 2):
        times_a, times_b = counts[state, a], counts[state, b]
        if abs(times_a - times_b) > FAIR * np.sqrt(times_a + times_b):
            return Verdict(False, "equal chances at every fork", f"{times_a} '{a}', {times_b} '{b}'",
                           f"state {state} emitted '{a}' {times_a} times and '{b}' {times_b} times: "
                           f"choose between a state's transitions with equal chances")
    return Verdict(True, f"{N_STRINGS} legal, varied strings", "all legal")


reber_generator = Exercise(
    "07.reber_generator", "reber_generator", 3, ({"seed": 1}, {"seed": 2}),
    _run_reber, _judge_reber, title="reber_generator(rng) -> an embedded Reber string",
    engine=refused({f"mg.data.{name}": "Reber generator" for name in
                    ("reber_strings", "embedded_reber_string", "reber_string")},
                   advice="walk the automaton yourself, with the rng you are given"),
    hint=("A walk on the automaton: from state 0, draw one of the current state's (symbol, next "
          "state) pairs with rng, write its symbol and move on, until the next state is None.",
          "The walk gives the inner Reber string (with its own B in front). The embedded string "
          "wraps it: B, then T or P drawn once with rng, the inner string, the same T or P again, "
          "and a final E. Make every choice with rng, never with another random source."),
    describe=lambda case: f"{N_STRINGS} strings from np.random.default_rng({case['seed']})",
    public=Public(_judge_reber))


EXERCISES = [rnn_step, bptt_two_steps, gate_vjp, clip_global_norm, reber_generator]
