"""Writing text with a trained model: one character at a time, each drawn from its predictions.

The model gives a score (logit) to every character; softmax turns the scores into
probabilities, and one character is drawn from them. It is then fed back in as the next
input, with the state the model reached, through the graph of a single step.

``temperature`` divides the scores before the softmax: below 1 it sharpens the distribution
(safer, more repetitive text), above 1 it flattens it (more surprising, more misspelt).
``top_k`` keeps only the k best-scored characters (and any tied with the k-th). A seeded
``np.random.Generator`` makes a sample repeat exactly.

Any language model with a ``reader()`` samples this way: chapter 09's LSTM (for which
``mg.charlm.sample`` is this module) and chapter 11's GPT.
"""

import numpy as np

from .. import nn
from ..blas import one_thread
from ..errors import BadValueError


def probabilities(logits, temperature=1.0, top_k=None):
    """softmax(logits / temperature) of a row of ``logits`` (one score per character), over the
    ``top_k`` best-scored characters if given: the distribution a character is drawn from."""
    if not temperature > 0:
        raise BadValueError(f"temperature must be a number > 0 (1 samples the model as it is, "
                            f"smaller is safer); got {temperature!r}.")
    scores = np.asarray(logits, np.float64).ravel() / temperature
    if top_k is not None:
        top_k = nn.whole_number(top_k, "top_k")
        scores = np.where(scores >= np.sort(scores)[-min(top_k, scores.size)], scores, -np.inf)
    p = np.exp(scores - scores.max())
    return p / p.sum()


def next_character(logits, rng, temperature=1.0, top_k=None):
    """Draw one character id from a row of ``logits`` (one score per character)."""
    p = probabilities(logits, temperature, top_k)
    return int(rng.choice(p.size, p=p))


@one_thread
def sample(model, vocab, prime, length, rng, temperature=1.0, top_k=None):
    """``prime`` followed by ``length`` characters the model writes.

    The priming text is read first, then each new character is drawn from the predictions
    after the last one and read in turn. ``model.reader()`` does the reading (the LSTM carries
    its state; a GPT rereads its last block_size characters). ``rng`` is a numpy Generator (or
    a seed).
    """
    if not prime:
        raise BadValueError("sample needs a priming text of at least one character, e.g. prime='\\n'.")
    rng, read = np.random.default_rng(rng), model.reader()
    ids = vocab.encode(prime)
    for i in ids[:-1]:
        read(i)
    written, current = [], ids[-1]
    for _ in range(length):
        logits = read(current)
        current = next_character(logits, rng, temperature, top_k)
        written.append(current)
    return prime + vocab.decode(written)
