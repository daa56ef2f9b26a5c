"""Chapter 09's reference answers and typical mistakes (``content/ch09.py`` has the exercises)."""

import numpy as np

from ...charlm.model import character_losses


def softmax(scores):
    shifted = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def temperature(logits, temperature):
    return softmax(logits / temperature)


TEMPERATURE_MISTAKES = {
    "It looks like the scores were multiplied by the temperature: divide them by it, so that a "
    "temperature below 1 sharpens the distribution.": lambda z, T: softmax(z * T),
    "It looks like the temperature was left out: this is the distribution at temperature 1.":
        lambda z, T: softmax(z),
    "It looks like the probabilities (not the scores) were divided by the temperature: they no "
    "longer sum to 1.": lambda z, T: softmax(z) / T,
    "It looks like the probabilities were raised to the power 1/T but not normalised again: "
    "they no longer sum to 1.": lambda z, T: softmax(z) ** (1 / T),
    "It looks like the softmax ran over the wrong axis: each row (the last axis) is one "
    "distribution over the characters.":
        lambda z, T: np.exp(z / T - (z / T).max(axis=0)) / np.exp(z / T - (z / T).max(axis=0)).sum(axis=0),
    "It looks like the log-probabilities were returned: exponentiate them.":
        lambda z, T: np.log(temperature(z, T)),
}

def streams(ids, batch, steps, *, shift=1, interleaved=False, whole_chunks=True):
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
    "place after its input.": lambda ids, b, s: streams(ids, b, s, shift=0),
    "It looks like the streams are interleaved (character k of the text in stream k mod B): "
    "stream j is one long piece of the text, read left to right.":
        lambda ids, b, s: streams(ids, b, s, interleaved=True),
    "It looks like a stream's length is not a whole number of chunks: round it down to a "
    "multiple of steps.": lambda ids, b, s: streams(ids, b, s, whole_chunks=False),
    "It looks like the targets run one character behind the inputs: they run one ahead.":
        lambda ids, b, s: streams(ids, b, s)[::-1],
}


def loss_units(nats):
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


def held_out_loss(model, ids, steps, *, forget=False, last=True, per_chunk=False, shift=1,
                  unit=1.0, mean=True):
    """The mean loss in nats per character of ``ids[1:]``, one stream read ``steps`` at a time
    with the state carried; the keywords switch on the typical mistakes."""
    ids, steps = np.asarray(ids).astype(np.int64), int(steps)
    n = len(ids) - 1
    state, losses = model.initial_state(1), []
    for start in range(0, n if last else n - n % steps, steps):
        inputs = ids[start:min(start + steps, n)]
        logits, state = model.chunk(len(inputs)).run(inputs[None], state)
        if forget:
            state = model.initial_state(1)
        losses.append(character_losses(logits.astype(np.float64),
                                       ids[start + shift:start + shift + len(inputs)]) / unit)
    if per_chunk:
        return np.mean([each.mean() for each in losses])
    everything = np.concatenate(losses)
    return everything.mean() if mean else everything.sum()


CARRY_MISTAKES = {
    "It looks like the state was not carried: every chunk started from the zero state, so the "
    "model forgot the text before each chunk. Start each chunk from the state the one before "
    "ended in.": lambda model, ids, s: held_out_loss(model, ids, s, forget=True),
    "It looks like the last, shorter chunk was dropped: every character from the second on is "
    "scored, so read the rest of the text as a chunk of its own length.":
        lambda model, ids, s: held_out_loss(model, ids, s, last=False),
    "It looks like the chunks' mean losses were averaged: a shorter last chunk then weighs as "
    "much as a whole one. Average over the characters (the total loss divided by their number).":
        lambda model, ids, s: held_out_loss(model, ids, s, per_chunk=True),
    "It looks like the targets are the inputs themselves: each character is scored on "
    "predicting the character one place after it.":
        lambda model, ids, s: held_out_loss(model, ids, s, shift=0),
    "It looks like the loss is in bits: the statement asks for nats (the natural logarithm, "
    "as character_losses gives it).":
        lambda model, ids, s: held_out_loss(model, ids, s, unit=np.log(2)),
    "It looks like the losses were summed: the statement asks for the mean per character.":
        lambda model, ids, s: held_out_loss(model, ids, s, mean=False),
}
