"""Chapter 09, the character-level language model (``solutions/09_char_rnn.ipynb``).

Four exercises on the pieces of ``minigraph.charlm`` a learner can write in a few lines: the
distribution a sample is drawn from at a temperature, the streams of truncated BPTT, the units
of a loss, and a held-out loss read in chunks with the state carried from chunk to chunk. Each knows its typical wrong answers (``answers/ch09.py``'s ``*_MISTAKES``: a text and the function
that makes that mistake). The engine has each of these functions, so while an answer runs the
engine's own version refuses to work (``engine=``, the toolkit's engine rule): the exercise is
to write it.
"""

import dataclasses
import functools

import numpy as np

import minigraph as mg

from ..toolkit.answers import answers_of
from ..toolkit.engine import forward_of, refused
from ..toolkit.exercise import Rule, case, float_errors_named, function_exercise, random_array
from ..toolkit.values import decode, show

TITLE = "The unreasonable effectiveness of recurrent networks"
answers = answers_of(__name__)    # answers/ch09.py: references and mistakes, used only to judge


# -- 09.temperature -----------------------------------------------------------------------------

def _hidden_temperature(rng):
    """Rows of scores at a random temperature, in one of three regimes (each shows other
    mistakes): ordinary scores; one row whose scaled scores spread over more than 709 (an
    ``exp`` that subtracts nothing, or the row's smallest score, overflows); such a row among
    rows far apart (one maximum subtracted for the whole batch leaves a row whose exponentials
    all underflow)."""
    T = round(float(rng.uniform(0.25, 3.0)), 3)
    rows, width = int(rng.integers(2, 5)), int(rng.integers(2, 7))
    logits = np.asarray(random_array(rng, shape=(rows, width)))
    regime = rng.choice(["ordinary", "spread", "far apart"])
    if regime != "ordinary":
        row = int(rng.integers(rows))
        top, bottom = rng.permutation(width)[:2]
        logits[row, top], logits[row, bottom] = rng.uniform(710, 2000) * T, -rng.uniform(100, 2000) * T
    if regime == "far apart":
        logits += (rng.permutation(rows) * rng.uniform(800, 3000) * T)[:, None]
    return case(logits=np.round(logits, 2).tolist(), temperature=T)


FAR_APART = [[2.0, 1.0, 0.0, -1.0], [1002.0, 1001.0, 1000.0, 999.0]]

_temperature = function_exercise(
    "09.temperature", "softmax_with_temperature", answers.temperature, points=2,
    cases=[
        case(logits=[2.0, 1.0, 0.0, -1.0], temperature=1.0),
        case(logits=[2.0, 1.0, 0.0, -1.0], temperature=0.5,
             hint="Below 1 the likely characters get likelier: the distribution sharpens."),
        case(logits=[[0.5, -0.5, 1.5], [3.0, 0.0, 0.0]], temperature=2.0,
             hint="Two rows, two distributions: each row sums to 1 on its own."),
        case(logits=[3000.0, 2998.0, 2990.0], temperature=2.0,
             hint="Scores in the thousands overflow exp even divided by T = 2: subtract the largest "
                  "before exp, as in chapter 05, the largest of the numbers exp actually receives."),
        case(logits=[-100.0, -400.0, -500.0], temperature=0.5,
             hint="Scaled scores from −1000 to −200: whatever is subtracted, every exponent must "
                  "stay at or below 0."),
        case(logits=FAR_APART, temperature=1.0,
             hint="Two rows a thousand apart: each row is a distribution of its own, shifted by "
                  "its own largest score."),
    ],
    hint=("Temperature scales the scores before the softmax; the result is a distribution over "
          "the last axis, computed the stable way of chapter 05.",
          "Which number you divide by, and which you subtract before exp, decide both the "
          "distribution and whether exp overflows: the subtracted number must make every "
          "exponent of its own row at most 0."),
    title="softmax_with_temperature(logits, temperature)", raise_on=("over", "invalid"),
    mistakes=answers.TEMPERATURE_MISTAKES,
    engine=refused({**forward_of(mg.softmax),
                    "mg.charlm.sample.next_character": "sampling with temperature",
                    "mg.charlm.sample.probabilities": "softmax with temperature"}),
    hidden=_hidden_temperature)


# What a learner subtracts from the scaled scores before exp (as listed, as named alone, the
# number), for the case whose answer met a floating-point error: an exponent above 709 overflows,
# a row of exponents all below −745 underflows to 0 (then 0 / 0). Each gives the right values
# wherever exp does neither (a softmax does not change when a row is shifted), so the error it
# meets on a case, found here in the learner's kernel, is all that tells it: no mistake table
# of answers/ sees it.
SUBTRACTED = (
    ("nothing", "nothing was subtracted", lambda z, T: 0.0),
    ("each row's smallest scaled score", "each row's smallest scaled score was subtracted",
     lambda z, T: np.min(z / T, axis=-1, keepdims=True)),
    ("each row's largest score before dividing by T",
     "each row's largest score was subtracted before dividing by T, not the largest scaled score",
     lambda z, T: np.max(z, axis=-1, keepdims=True)),
    ("one maximum for the whole batch", "one maximum was subtracted for the whole batch",
     lambda z, T: np.max(z / T)),
)
FLOAT_ERRORS = {"over": "exp overflowed (an exponent above 709)",
                "invalid": "a row's exponentials all underflowed to 0, and 0 / 0 is not a number"}


def _error_of(logits, T, subtracted):
    """The floating-point error (``over``, ``invalid`` or None) a softmax at temperature ``T``
    meets when ``subtracted`` is taken from the scaled scores before exp."""
    with np.errstate(over="raise", invalid="raise"):
        try:
            e = np.exp(logits / T - subtracted(logits, T))
            e / e.sum(axis=-1, keepdims=True)
        except FloatingPointError as error:
            return "over" if "overflow" in str(error) else "invalid"
    return None


def _float_error_named(kind):
    """The sentence for a case whose answer met the error ``kind``: what of ``SUBTRACTED``
    meets it on this case's inputs, named when only one does, listed when several do."""
    def said(case, error):
        logits = np.asarray(case["inputs"]["logits"], dtype=float)
        T = float(case["inputs"]["temperature"])
        meeting = [(listed, alone) for listed, alone, subtracted in SUBTRACTED
                   if _error_of(logits, T, subtracted) == kind]
        listed = [each for each, _ in meeting]
        why = (f"it looks like {meeting[0][1]}" if len(meeting) == 1 else
               f"subtracting {', '.join(listed[:-1])} or {listed[-1]} does that" if meeting else
               "the number subtracted before exp does that")
        return (f"{FLOAT_ERRORS[kind]}: {why}; subtract each row's own largest scaled score, "
                "after dividing by T, so that every exponent is at most 0")
    return said


temperature = dataclasses.replace(_temperature, run=float_errors_named(
    _temperature.run, over=_float_error_named("over"), invalid=_float_error_named("invalid")))


# -- 09.streams ---------------------------------------------------------------------------------

def _stream_inputs(case):
    """A case's ids as an int64 array, batch and steps as ints."""
    given = case["inputs"]
    return np.asarray(given["ids"], dtype=np.int64), int(given["batch"]), int(given["steps"])


def _hidden_streams(rng):
    """A random text of ids, long enough for at least one chunk per stream; half the time
    exactly a whole number of chunks per stream long, so that the last target is missing and
    one chunk per stream fewer fits (the edge an off-by-one misses)."""
    batch, steps = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    length = int(rng.integers(batch * steps + 1, 4 * batch * steps + 2))
    if rng.random() < 0.5:
        length = batch * steps * int(rng.integers(2, 5))
    return case(ids=rng.integers(0, 30, length).tolist(), batch=batch, steps=steps)


_IDS = [19, 7, 4, 0, 2, 7, 4, 18, 18, 11, 14, 19, 0, 19, 14, 15, 3, 4, 19, 21, 4, 4, 13, 9, 6]

def _integer_pair(out):
    """Raise ``Rule`` unless ``out`` is (inputs, targets), two numpy arrays of integers."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        return
    for which, part in zip(("inputs", "targets"), out):
        if not isinstance(part, np.ndarray):
            raise Rule(f"the {which} are a {type(part).__name__}, not a numpy array: the statement "
                       f"asks for integer arrays, which the model indexes its table with")
        if part.dtype.kind not in "iu":
            raise Rule(f"the {which} are an array of {part.dtype} where the statement asks for "
                       f"integer ids: indexing the embedding table with floats raises; keep the "
                       f"ids' integer dtype (cut the text's array, do not fill a new float one)")


def _judge_streams(judge):
    """``judge``, with the answer shown as a pair, as the expected value is."""

    @functools.wraps(judge)                  # still a function_exercise's judge, by its name
    def judged(case, got):
        verdict = judge(case, got)
        value = decode(got) if isinstance(got, dict) else None
        if isinstance(value, np.ndarray) and value.ndim == 3 and len(value) == 2:
            return dataclasses.replace(verdict, got=show((value[0], value[1])))
        return verdict

    return judged


_streams = function_exercise(
    "09.streams", "streams", answers.streams, points=3,
    cases=[
        case(ids=_IDS, batch=2, steps=4),
        case(ids=_IDS[:17], batch=2, steps=4,
             hint="17 ids: 16 inputs, and the targets need the 17th."),
        case(ids=_IDS[:16], batch=2, steps=4,
             hint="16 ids are one short of two whole chunks per stream: the targets run one "
                  "character ahead, so only one chunk per stream fits."),
        case(ids=_IDS, batch=3, steps=2,
             hint="Three streams of two-character chunks: each stream is a piece of the text, "
                  "one after the other."),
    ],
    hint=("Cut the text into B equal pieces, one per row, each a whole number of chunks long; "
          "the targets are the same cut, one character further on.",
          "Find the longest stream length that is a multiple of steps and still leaves, after "
          "the B streams' inputs, one more id for the last target. The targets start one id "
          "later than the inputs; both stay integer arrays."),
    title="streams(ids, batch, steps) -> (inputs, targets)", mistakes=answers.STREAM_MISTAKES,
    engine=refused({"mg.charlm.text.streams": "cutting a text into streams",
                    "mg.charlm.text.chunks": "cutting streams into chunks"}),
    hidden=_hidden_streams, inputs=_stream_inputs)


def _run_streams(answer, case):
    """The default run, with the answer's types checked first (``_integer_pair``)."""

    def typed(*args):
        out = answer(*args)
        _integer_pair(out)
        return out

    return _streams.run(typed, case)


streams = dataclasses.replace(_streams, run=_run_streams, judge=_judge_streams(_streams.judge))


# -- 09.loss_units ------------------------------------------------------------------------------

loss_units = function_exercise(
    "09.loss_units", "loss_units", answers.loss_units, points=2,
    cases=[
        case(nats=1.0),
        case(nats=np.log(65).item(), hint="ln 65 nats: the loss of a model that guesses uniformly "
                                          "among 65 characters."),
        case(nats=[0.5, 1.5, 2.5], hint="An array of losses: the same formulas, entry by entry."),
    ],
    hint=("Bits and nats are logarithms in base 2 and base e; perplexity undoes the logarithm.",
          "A logarithm in base e becomes one in base 2 by dividing by ln 2. The perplexity is "
          "the base raised to the loss, in the matching unit."),
    title="loss_units(nats) -> (bits per character, perplexity)", mistakes=answers.LOSS_MISTAKES,
    engine=refused({"mg.charlm.text.bits_per_character": "nats to bits per character",
                    "mg.charlm.text.perplexity": "perplexity"}),
    hidden=lambda rng: case(nats=random_array(rng, scale=5.0, low=0.0)))


# -- 09.carry_state -----------------------------------------------------------------------------

CASE_MODEL = dict(vocab_size=6, hidden=4, layers=2)
SHARPER = 4.0


def case_model(seed):
    """The small model a case is read with: ``CASE_MODEL``'s sizes, its weights drawn from
    ``seed`` and made ``SHARPER`` times larger (an untrained model predicts nearly uniformly,
    and its state barely matters: a larger one tells the mistakes apart), float64 (so that
    every right way of adding up the losses agrees to 1e-6)."""
    model = mg.charlm.model.CharLSTM(**CASE_MODEL, rng=int(seed), dtype=np.float64)
    for p in model.parameters:
        p.value = p.value * SHARPER
    return model


def _carry_inputs(case):
    """A case's model (``case_model`` of its seed), ids as an int64 array and steps as an int."""
    given = case["inputs"]
    return case_model(given["seed"]), np.asarray(given["ids"], dtype=np.int64), int(given["steps"])


def _describe_carry(case):
    given = case["inputs"]
    return (f"model=CharLSTM(seed {given['seed']}: {CASE_MODEL['layers']} layers of "
            f"{CASE_MODEL['hidden']}, {CASE_MODEL['vocab_size']} characters), ids={given['ids']} "
            f"({len(given['ids']) - 1} to score), steps={given['steps']}")


def _hidden_carry(rng):
    """A random short text on a model of a random seed, in chunks of 1 to 6 characters."""
    steps = int(rng.integers(1, 7))
    scored = int(rng.integers(steps + 1, 5 * steps + 2))
    ids = rng.integers(0, CASE_MODEL["vocab_size"], scored + 1).tolist()
    return case(seed=int(rng.integers(0, 1000)), ids=ids, steps=steps)


carry_state = dataclasses.replace(function_exercise(
    "09.carry_state", "held_out_loss", answers.held_out_loss, points=3,
    cases=[
        case(seed=0, ids=[3, 1, 4, 1, 5, 0, 2, 5, 3, 5, 2], steps=4,
             hint="10 characters to score in chunks of 4: 4, 4, then a last chunk of 2."),
        case(seed=1, ids=[2, 0, 5, 5, 1, 3, 4, 0, 0, 2, 1, 4, 3], steps=4,
             hint="12 characters to score: three whole chunks of 4, and nothing after them."),
        case(seed=2, ids=[5, 4, 0, 3, 3, 1, 2, 0], steps=1,
             hint="Chunks of one character: all the model knows of the text before is the "
                  "state it was given."),
        case(seed=3, ids=[1, 2, 3, 0, 4, 5, 1, 1, 0, 3], steps=6,
             hint="9 characters to score: a chunk of 6, then one of 3, which counts for 3 "
                  "characters, not for a whole chunk."),
    ],
    hint=("Truncated BPTT at evaluation time: each chunk starts from the state the previous "
          "chunk ended in, and the mean is over characters, not chunks.",
          "Chunk k reads the ids from k·steps (at most steps of them, fewer at the end) and is "
          "scored on the ids one place further on; run returns the logits and the state the "
          "next chunk starts from. Add up the characters' losses and divide by how many were "
          "scored."),
    title="held_out_loss(model, ids, steps)", mistakes=answers.CARRY_MISTAKES,
    engine=refused({"mg.charlm.model.mean_loss": "held-out loss read in chunks"}),
    hidden=_hidden_carry, inputs=_carry_inputs),
    describe=_describe_carry)


EXERCISES = [temperature, streams, loss_units, carry_state]
