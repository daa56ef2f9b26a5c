"""Chapter 09 (the character-level language model): typical wrong answers and different right answers."""

import numpy as np
import scipy.special

import minigraph as mg
from minigraph.charlm import widgets

from . import wrong


# -- answers for 09.temperature -------------------------------------------------------------------

def temperature_shifted(logits, temperature):
    scaled = logits / temperature
    e = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def temperature_log_sum_exp(logits, temperature):
    scaled = logits / temperature
    top = scaled.max(axis=-1, keepdims=True)
    return np.exp(scaled - top - np.log(np.exp(scaled - top).sum(axis=-1, keepdims=True)))


def temperature_unshifted(logits, temperature):
    e = np.exp(logits / temperature)
    return e / e.sum(axis=-1, keepdims=True)


def temperature_min_subtracted(logits, temperature):
    scaled = logits / temperature
    e = np.exp(scaled - scaled.min(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def temperature_one_max(logits, temperature):
    """One maximum for the whole batch: the right values while the rows are close together."""
    scaled = logits / temperature
    e = np.exp(scaled - scaled.max())
    return e / e.sum(axis=-1, keepdims=True)


def temperature_max_before_scaling(logits, temperature):
    """Each row's largest score subtracted before dividing by T: right at T = 1 and while exp
    neither overflows (T < 1) nor underflows a whole row (T > 1)."""
    z = logits / temperature - logits.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def temperature_times(logits, temperature):
    return temperature_shifted(logits * temperature, 1.0)


def temperature_axis_0(logits, temperature):
    scaled = logits / temperature
    e = np.exp(scaled - scaled.max(axis=0))
    return e / e.sum(axis=0)


def temperature_power_unnormalised(logits, temperature):
    return temperature_shifted(logits, 1.0) ** (1 / temperature)


# -- answers for 09.streams --------------------------------------------------------------------------

def streams_reshape(ids, batch, steps):
    length = (len(ids) - 1) // (batch * steps) * steps
    return ids[:batch * length].reshape(batch, length), ids[1:batch * length + 1].reshape(batch, length)


def streams_loop(ids, batch, steps):
    """One stream at a time, in a Python loop."""
    chunks = (len(ids) - 1) // (batch * steps)
    length = chunks * steps
    inputs = np.array([ids[j * length:(j + 1) * length] for j in range(batch)])
    targets = np.array([ids[j * length + 1:(j + 1) * length + 1] for j in range(batch)])
    return inputs, targets


def streams_split(ids, batch, steps):
    length = (len(ids) - 1) // (batch * steps) * steps
    return (np.stack(np.split(ids[:batch * length], batch)),
            np.stack(np.split(ids[1:batch * length + 1], batch)))


def streams_float_ids(ids, batch, steps):
    """The streams filled into new arrays, made with np.zeros: float ids."""
    length = (len(ids) - 1) // (batch * steps) * steps
    inputs, targets = np.zeros((batch, length)), np.zeros((batch, length))
    for j in range(batch):
        inputs[j] = ids[j * length:(j + 1) * length]
        targets[j] = ids[j * length + 1:(j + 1) * length + 1]
    return inputs, targets


def streams_lists(ids, batch, steps):
    inputs, targets = streams_reshape(ids, batch, steps)
    return inputs.tolist(), targets.tolist()


def streams_no_shift(ids, batch, steps):
    inputs, _ = streams_reshape(ids, batch, steps)
    return inputs, inputs.copy()


def streams_interleaved(ids, batch, steps):
    length = (len(ids) - 1) // (batch * steps) * steps
    return ids[:batch * length].reshape(length, batch).T, ids[1:batch * length + 1].reshape(length, batch).T


def streams_any_length(ids, batch, steps):
    length = (len(ids) - 1) // batch
    return ids[:batch * length].reshape(batch, length), ids[1:batch * length + 1].reshape(batch, length)


def streams_targets_behind(ids, batch, steps):
    inputs, targets = streams_reshape(ids, batch, steps)
    return targets, inputs


def streams_last_id_counted(ids, batch, steps):
    length = len(ids) // (batch * steps) * steps
    return ids[:batch * length].reshape(batch, length), ids[1:batch * length + 1].reshape(batch, length)


def streams_by_chunks(ids, batch, steps):
    from minigraph.training.text import chunks          # another way to reach the engine's own
    pieces = list(chunks(np.asarray(ids), batch, steps))
    return (np.concatenate([x for x, _ in pieces], axis=1), np.concatenate([y for _, y in pieces], axis=1))


# -- answers for 09.carry_state ------------------------------------------------------------------

def carry_loop(model, ids, steps):
    """A loop over the chunks' starts; the last chunk is read by a graph of its own length."""
    n, state, total = len(ids) - 1, model.initial_state(1), 0.0
    for start in range(0, n, steps):
        inputs = ids[start:min(start + steps, n)]
        logits, state = model.chunk(len(inputs)).run(inputs[None], state)
        total += mg.charlm.model.character_losses(logits, ids[start + 1:start + 1 + len(inputs)]).sum()
    return total / n


def carry_while(model, ids, steps):
    n, start, state, losses = len(ids) - 1, 0, model.initial_state(1), []
    while start < n:
        end = min(start + steps, n)
        logits, state = model.chunk(end - start).run(ids[None, start:end], state)
        losses.extend(mg.charlm.model.character_losses(logits, ids[start + 1:end + 1]))
        start = end
    return np.mean(losses)


def carry_padded(model, ids, steps):
    """Every chunk `steps` long: the last one padded with zeros, which are read but not scored."""
    n = len(ids) - 1
    padded = np.concatenate([ids, np.zeros(-n % steps, ids.dtype)])
    chunk, state, total = model.chunk(steps), model.initial_state(1), 0.0
    for start in range(0, n, steps):
        logits, state = chunk.run(padded[None, start:start + steps], state)
        real = min(steps, n - start)
        total += mg.charlm.model.character_losses(logits[:real], ids[start + 1:start + 1 + real]).sum()
    return total / n


def carry_numpy(model, ids, steps):
    """The losses by hand from the logits: log-sum-exp minus the target's score."""
    state, total = model.initial_state(1), 0.0
    for start in range(0, len(ids) - 1, steps):
        x, y = ids[start:start + steps + 1][:-1], ids[start + 1:start + steps + 1]
        z, state = model.chunk(len(x)).run(x[None, :], state)
        top = z.max(axis=1, keepdims=True)
        log_p = z - top - np.log(np.exp(z - top).sum(axis=1, keepdims=True))
        total -= log_p[np.arange(len(y)), y].sum()
    return total / (len(ids) - 1)


def carry_from_zero(model, ids, steps):
    n, total = len(ids) - 1, 0.0
    for start in range(0, n, steps):
        inputs = ids[start:min(start + steps, n)]
        logits, _ = model.chunk(len(inputs)).run(inputs[None], model.initial_state(1))
        total += mg.charlm.model.character_losses(logits, ids[start + 1:start + 1 + len(inputs)]).sum()
    return total / n


def carry_whole_chunks(model, ids, steps):
    """Only whole chunks: the rest of the text after the last one is never read."""
    state, losses = model.initial_state(1), []
    for start in range(0, len(ids) - steps, steps):
        logits, state = model.chunk(steps).run(ids[None, start:start + steps], state)
        losses.append(mg.charlm.model.character_losses(logits, ids[start + 1:start + steps + 1]))
    return np.mean(losses)


def carry_chunk_means(model, ids, steps):
    n, state, means = len(ids) - 1, model.initial_state(1), []
    for start in range(0, n, steps):
        inputs = ids[start:min(start + steps, n)]
        logits, state = model.chunk(len(inputs)).run(inputs[None], state)
        means.append(mg.charlm.model.character_losses(logits, ids[start + 1:start + 1 + len(inputs)]).mean())
    return np.mean(means)


def carry_not_shifted(model, ids, steps):
    n, state, total = len(ids) - 1, model.initial_state(1), 0.0
    for start in range(0, n, steps):
        inputs = ids[start:min(start + steps, n)]
        logits, state = model.chunk(len(inputs)).run(inputs[None], state)
        total += mg.charlm.model.character_losses(logits, inputs).sum()
    return total / n


WRONG = {
    "09.temperature": {
        "multiplied by T": wrong(temperature_times, "multiplied by the temperature"),
        "temperature forgotten": wrong(lambda z, T: temperature_shifted(z, 1.0), "temperature was left out"),
        "probabilities divided by T": wrong(lambda z, T: temperature_shifted(z, 1.0) / T,
                                            "probabilities (not the scores) were divided"),
        "power 1/T, not normalised": wrong(temperature_power_unnormalised, "not normalised again"),
        "softmax over axis 0": wrong(temperature_axis_0, "wrong axis"),
        "log-probabilities": wrong(lambda z, T: np.log(temperature_shifted(z, T)), "log-probabilities"),
        "no max subtracted: overflows": wrong(temperature_unshifted, "overflow"),
        "each row's minimum subtracted: overflows": wrong(temperature_min_subtracted, "overflow",
                                                          "smallest"),
        "one maximum for the whole batch": wrong(temperature_one_max, "whole batch", "own largest"),
        "each row's largest score subtracted before dividing by T": wrong(
            temperature_max_before_scaling, "largest score was subtracted before dividing by T",
            "after dividing by T"),
        "the engine's softmax": wrong(lambda z, T: mg.softmax.opdef.forward(z / T, axis=-1), "engine"),
        "the chapter's widgets.probabilities": wrong(widgets.probabilities, "engine's own"),
    },
    "09.streams": {
        "targets not shifted": wrong(streams_no_shift, "targets are the inputs themselves"),
        "interleaved streams": wrong(streams_interleaved, "interleaved"),
        "not a whole number of chunks": wrong(streams_any_length, "whole number of chunks"),
        "targets one behind": wrong(streams_targets_behind, "one character behind"),
        "the last id counted twice": wrong(streams_last_id_counted, "reshape"),
        "float ids (filled into np.zeros)": wrong(streams_float_ids, "integer ids", "float64"),
        "lists, not arrays": wrong(streams_lists, "not a numpy array"),
        "the engine's streams": wrong(mg.charlm.text.streams, "engine's own"),
        "the engine's chunks, imported from their module": wrong(streams_by_chunks, "engine's own"),
        "the engine through the module": wrong(lambda ids, b, s: mg.charlm.text.streams(ids, b, s),
                                               "engine's own"),
    },
    "09.loss_units": {
        "multiplied by ln 2": wrong(lambda L: (L * np.log(2), np.exp(L)), "multiplied by ln 2"),
        "2 to the nats": wrong(lambda L: (L / np.log(2), 2 ** L), "2 to the loss in nats"),
        "e to the bits": wrong(lambda L: (L / np.log(2), np.exp(L / np.log(2))), "e to the bits"),
        "the probability": wrong(lambda L: (L / np.log(2), np.exp(-L)), "inverse"),
        "swapped": wrong(lambda L: (np.exp(L), L / np.log(2)), "swapped"),
        "log2 of the loss": wrong(lambda L: (np.log2(L), np.exp(L)), "already a logarithm"),
        "the engine's functions": wrong(lambda L: (mg.charlm.text.bits_per_character(L), np.exp(L)),
                                        "engine's own"),
        "the engine's function, kept before the check": wrong(
            lambda L, bits=mg.charlm.text.bits_per_character, ppl=mg.charlm.text.perplexity:
            (bits(L), ppl(L)), "engine's own"),
    },
    "09.carry_state": {
        "every chunk from the zero state": wrong(carry_from_zero, "state was not carried"),
        "the last short chunk dropped": wrong(carry_whole_chunks, "dropped"),
        "chunk means averaged": wrong(carry_chunk_means, "chunks' mean losses were averaged"),
        "targets not shifted": wrong(carry_not_shifted, "inputs themselves"),
        "in bits": wrong(lambda model, ids, steps: carry_loop(model, ids, steps) / np.log(2), "bits"),
        "summed": wrong(lambda model, ids, steps: carry_loop(model, ids, steps) * (len(ids) - 1),
                        "summed"),
        "the engine's mean_loss": wrong(
            lambda model, ids, steps: mg.charlm.model.mean_loss(model, ids, batch=1, steps=steps),
            "engine's own"),
        "the engine's mean_loss, kept before the check": wrong(
            lambda model, ids, steps, loss=mg.charlm.model.mean_loss: loss(model, ids, 1, steps),
            "engine's own"),
    },
}

RIGHT = {
    "09.temperature": {"max subtracted": temperature_shifted, "log-sum-exp": temperature_log_sum_exp,
                       "scipy.special.softmax": lambda z, T: scipy.special.softmax(z / T, axis=-1)},
    "09.streams": {"reshape": streams_reshape, "a loop over the streams": streams_loop,
                   "np.split": streams_split},
    "09.loss_units": {"divide by ln 2, exp": lambda L: (L / np.log(2), np.exp(L)),
                      "log2(e), 2 to the bits": lambda L: (L * np.log2(np.e), 2 ** (L * np.log2(np.e)))},
    "09.carry_state": {"a loop over the chunks' starts": carry_loop, "a while loop": carry_while,
                       "the last chunk padded": carry_padded, "the losses by hand": carry_numpy},
}
