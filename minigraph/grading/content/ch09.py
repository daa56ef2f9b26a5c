"""Chapter 09, the character-level language model (``solutions/09_char_rnn.ipynb``).

Three exercises on the pieces of ``minigraph.charlm`` a learner can write in a few lines: the
distribution a sample is drawn from at a temperature, the streams of truncated BPTT, and the
units of a loss. Each knows its typical wrong answers (``*_MISTAKES``: a text and the function
that makes that mistake). The engine has each of these functions, so while an answer runs the
engine's own version refuses to work (``engine=``, the toolkit's engine rule): the exercise is
to write it.
"""

import dataclasses

import numpy as np

import minigraph as mg

from ..toolkit.engine import forward_of, refused
from ..toolkit.exercise import case, function_exercise, unchanged
from ..toolkit.values import encode

TITLE = "The unreasonable effectiveness of recurrent networks"


# -- 09.temperature -----------------------------------------------------------------------------

def _softmax(scores):
    shifted = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def _temperature(logits, temperature):
    return _softmax(logits / temperature)


TEMPERATURE_MISTAKES = {
    "It looks like the scores were multiplied by the temperature: divide them by it, so that a "
    "temperature below 1 sharpens the distribution.": lambda z, T: _softmax(z * T),
    "It looks like the temperature was left out: this is the distribution at temperature 1.":
        lambda z, T: _softmax(z),
    "It looks like the probabilities (not the scores) were divided by the temperature: they no "
    "longer sum to 1.": lambda z, T: _softmax(z) / T,
    "It looks like the probabilities were raised to the power 1/T but not normalised again: "
    "they no longer sum to 1.": lambda z, T: _softmax(z) ** (1 / T),
    "It looks like the softmax ran over the wrong axis: each row (the last axis) is one "
    "distribution over the characters.":
        lambda z, T: np.exp(z / T - (z / T).max(axis=0)) / np.exp(z / T - (z / T).max(axis=0)).sum(axis=0),
    "It looks like the log-probabilities were returned: exponentiate them.":
        lambda z, T: np.log(_temperature(z, T)),
}

temperature = function_exercise(
    "09.temperature", "softmax_with_temperature", _temperature, points=2,
    cases=[
        case(logits=[2.0, 1.0, 0.0, -1.0], temperature=1.0),
        case(logits=[2.0, 1.0, 0.0, -1.0], temperature=0.5,
             hint="Below 1 the likely characters get likelier: the distribution sharpens."),
        case(logits=[[0.5, -0.5, 1.5], [3.0, 0.0, 0.0]], temperature=2.0,
             hint="Two rows, two distributions: each row sums to 1 on its own."),
        case(logits=[1000.0, 998.0, 990.0], temperature=0.5,
             hint="Scores this large overflow exp: subtract the largest score first (chapter 05)."),
    ],
    hint=("Temperature scales the scores before the softmax; the result is a distribution over "
          "the last axis.",
          "Divide the scores by the temperature, subtract each row's largest scaled score, "
          "exponentiate, and divide by each row's sum."),
    title="softmax_with_temperature(logits, temperature)", raise_on=("over", "invalid"),
    mistakes=TEMPERATURE_MISTAKES,
    engine=refused({**forward_of(mg.softmax),
                    "mg.charlm.sample.next_character": "sampling with temperature",
                    "mg.charlm.sample.probabilities": "softmax with temperature"}))


# -- 09.streams ---------------------------------------------------------------------------------

def _streams(ids, batch, steps, *, shift=1, interleaved=False, whole_chunks=True):
    """(inputs, targets) of ``batch`` streams; the keywords switch on the typical mistakes."""
    ids, batch, steps = np.asarray(ids).astype(np.int64), int(batch), int(steps)
    usable = len(ids) - 1                                  # the last target needs one more id
    length = usable // (batch * steps) * steps if whole_chunks else usable // batch
    inputs, targets = ids[:batch * length], ids[shift:batch * length + shift]
    if interleaved:
        return inputs.reshape(length, batch).T, targets.reshape(length, batch).T
    return inputs.reshape(batch, length), targets.reshape(batch, length)


STREAM_MISTAKES = {
    "It looks like the targets are the inputs themselves: each target is the character one "
    "place after its input.": lambda ids, b, s: _streams(ids, b, s, shift=0),
    "It looks like the streams are interleaved (character k of the text in stream k mod B): "
    "stream j is one long piece of the text, read left to right.":
        lambda ids, b, s: _streams(ids, b, s, interleaved=True),
    "It looks like a stream's length is not a whole number of chunks: round it down to a "
    "multiple of steps.": lambda ids, b, s: _streams(ids, b, s, whole_chunks=False),
    "It looks like the targets run one character behind the inputs: they run one ahead.":
        lambda ids, b, s: _streams(ids, b, s)[::-1],
}


def _run_streams(answer, case):
    """Call the answer with the ids as an int64 array and batch, steps as ints."""
    given = dict(case["inputs"])
    ids = np.asarray(given["ids"], dtype=np.int64)
    copy = ids.copy()
    out = answer(copy, int(given["batch"]), int(given["steps"]))
    unchanged("streams", ["ids"], [ids], [copy])
    return encode(out)


_IDS = [19, 7, 4, 0, 2, 7, 4, 18, 18, 11, 14, 19, 0, 19, 14, 15, 3, 4, 19, 21, 4, 4, 13, 9, 6]

streams = dataclasses.replace(function_exercise(
    "09.streams", "streams", _streams, points=3,
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
          "A stream holds L characters, L the largest multiple of steps with B·L + 1 ids "
          "available (the last target needs one more). The inputs are the first B·L ids in B "
          "rows; the targets start one id later."),
    title="streams(ids, batch, steps) -> (inputs, targets)", mistakes=STREAM_MISTAKES,
    engine=refused({"mg.charlm.text.streams": "cutting a text into streams",
                    "mg.charlm.text.chunks": "cutting streams into chunks"})),
    run=_run_streams)


# -- 09.loss_units ------------------------------------------------------------------------------

def _loss_units(nats):
    return nats / np.log(2), np.exp(nats)


LOSS_MISTAKES = {
    "It looks like the loss was multiplied by ln 2: bits are nats divided by ln 2 (a bit is a "
    "larger unit than a nat).": lambda L: (L * np.log(2), np.exp(L)),
    "It looks like the perplexity is 2 to the loss in nats: the base must match the unit, e to "
    "the nats (or 2 to the bits).": lambda L: (L / np.log(2), 2 ** L),
    "It looks like the perplexity is e to the bits: the base must match the unit, e to the nats "
    "(or 2 to the bits).": lambda L: (L / np.log(2), np.exp(L / np.log(2))),
    "It looks like the perplexity is the probability e^(-L): perplexity is its inverse, a number "
    "of choices (at least 1).": lambda L: (L / np.log(2), np.exp(-L)),
    "It looks like the two are swapped: return (bits per character, perplexity).":
        lambda L: (np.exp(L), L / np.log(2)),
    "It looks like the log base 2 of the loss was taken: the loss is already a logarithm; "
    "change its unit by dividing by ln 2.": lambda L: (np.log2(L), np.exp(L)),
}

loss_units = function_exercise(
    "09.loss_units", "loss_units", _loss_units, points=2,
    cases=[
        case(nats=1.0),
        case(nats=np.log(65).item(), hint="ln 65 nats: the loss of a model that guesses uniformly "
                                          "among 65 characters."),
        case(nats=[0.5, 1.5, 2.5], hint="An array of losses: the same formulas, entry by entry."),
    ],
    hint=("Bits and nats are logarithms in base 2 and base e; perplexity undoes the logarithm.",
          "A logarithm in base e becomes one in base 2 by dividing by ln 2. The perplexity is "
          "the base raised to the loss, in the matching unit."),
    title="loss_units(nats) -> (bits per character, perplexity)", mistakes=LOSS_MISTAKES,
    engine=refused({"mg.charlm.text.bits_per_character": "nats to bits per character",
                    "mg.charlm.text.perplexity": "perplexity"}))


EXERCISES = [temperature, streams, loss_units]
