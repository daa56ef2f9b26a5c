"""Text as numbers: a vocabulary, the two splits, and the batches of truncated BPTT.

A character model reads integers: each distinct character gets an id (``Vocabulary``). The
corpus is cut once into a training split (the first 90 % of its characters) and a held-out
split (the last 10 %), the convention of nanoGPT's shakespeare_char, so losses compare with
published ones.

Training reads the training split as B parallel *streams*: the text cut into B long pieces
that are read side by side, one row of a batch each. Each stream is consumed in *chunks* of S
characters; the input of a chunk is S characters and its target the S characters one place
further on (the next character of each). Chunk k of every stream continues where chunk k - 1
ended, which is why the model may carry its state from one chunk to the next.

    text = mg.data.shakespeare()
    vocab = Vocabulary(text)                       # 65 characters
    train, held_out = split(vocab.encode(text))
    for inputs, targets in chunks(train, batch=32, steps=64):   # (32, 64) ints each
        ...

Losses are in nats per character (natural log); ``bits_per_character`` and ``perplexity``
give the same number in the other two units people quote. ``check_vocabulary`` refuses to
use a saved model with a text of other characters.

Chapter 09 teaches this module (``mg.charlm.text`` is this module); chapter 10's translator
and chapter 11's GPT read their text through it too.
"""

import numpy as np

from ..errors import BadValueError, ShapeError

HELD_OUT_FRACTION = 0.1


class Vocabulary:
    """The distinct characters of a text, sorted, each with an id: its place in that order."""

    def __init__(self, text):
        self.chars = "".join(sorted(set(text)))
        self.ids = {ch: i for i, ch in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def __eq__(self, other):
        return isinstance(other, Vocabulary) and self.chars == other.chars

    def encode(self, text):
        """The ids of the characters of ``text``: an int64 array as long as the text."""
        try:
            return np.fromiter((self.ids[ch] for ch in text), dtype=np.int64, count=len(text))
        except KeyError as error:
            raise BadValueError(
                f"the character {error.args[0]!r} (at position {text.index(error.args[0])} of the "
                f"text) is not in this model's vocabulary of {len(self)} characters "
                f"({self.chars!r}): use only those characters.") from None

    def decode(self, ids):
        """The text whose characters have these ids."""
        return "".join(self.chars[i] for i in np.asarray(ids).ravel())

    def __repr__(self):
        return f"Vocabulary({len(self)} characters)"


def check_vocabulary(meta, vocab, path):
    """A BadValueError unless ``vocab`` is the vocabulary the checkpoint at ``path`` (its record
    ``meta``) was trained with."""
    if vocab.chars != meta["vocabulary"]:
        raise BadValueError(
            f"{path} was trained on a text of {len(meta['vocabulary'])} distinct characters "
            f"({meta['vocabulary']!r}); this text has {len(vocab)} ({vocab.chars!r}). A model reads "
            f"only its own vocabulary: use it with the text it was trained on, or train a new one.")


def split_point(n, held_out=HELD_OUT_FRACTION):
    """Where a text of ``n`` characters is cut: the training split is the characters before."""
    return int(n * (1 - held_out))


def split(ids, held_out=HELD_OUT_FRACTION):
    """``(train, held_out)``: the first ``1 - held_out`` of the ids and the rest."""
    cut = split_point(len(ids), held_out)
    return ids[:cut], ids[cut:]


def held_out_ids(ids, held_out=HELD_OUT_FRACTION):
    """The held-out split with the last training character in front of it: ``mean_loss`` scores
    every character after the first, so this way every held-out character is scored once."""
    return ids[split_point(len(ids), held_out) - 1:]


def streams(ids, batch, steps):
    """Cut ``ids`` into ``batch`` streams of equal length: a (batch, L) array whose row j is the
    j-th piece of the text, L the largest multiple of ``steps`` that fits (``L + 1`` ids must fit,
    since the targets run one character ahead). The last few ids, fewer than ``batch·steps + 1``,
    are dropped, as char-rnn drops them."""
    length = (len(ids) - 1) // (batch * steps) * steps
    if length == 0:
        raise ShapeError(f"a text of {len(ids)} characters cannot fill {batch} streams with even one "
                         f"chunk of {steps} characters each (it needs at least {batch * steps + 1}): "
                         f"use fewer streams (batch) or shorter chunks (steps).")
    return ids[:batch * length].reshape(batch, length), ids[1:batch * length + 1].reshape(batch, length)


def chunks(ids, batch, steps):
    """Yield ``(inputs, targets)``, each (batch, steps), through the whole text once (an epoch).

    Row j of every chunk continues row j of the chunk before it: stream j, read ``steps``
    characters at a time. ``targets[j, t]`` is the character after ``inputs[j, t]``.
    """
    inputs, targets = streams(ids, batch, steps)
    for start in range(0, inputs.shape[1], steps):
        yield inputs[:, start:start + steps], targets[:, start:start + steps]


def chunks_per_epoch(ids, batch, steps):
    """How many chunks ``chunks(ids, batch, steps)`` yields."""
    return streams(ids, batch, steps)[0].shape[1] // steps


def scored_rows(ids, rows, length):
    """``(inputs, targets, scored)``, each (rows, length): ``ids`` laid out row after row to
    score every id after the first once, ``targets`` one place ahead of ``inputs``. The ids end
    where ``scored`` turns False: the rest is padding (zeros), read but not scored. The chapter
    09 model reads the rows as streams; the GPT reads each row as a window of its own."""
    n = len(ids) - 1
    if not 0 < n <= rows * length:
        raise ShapeError(f"{rows} rows of {length} hold 1 to {rows * length} scored characters; "
                         f"{n} are to be scored: pass at least two ids and enough rows.")
    padded = np.zeros(rows * length + 1, np.int64)
    padded[:n + 1] = ids
    scored = (np.arange(rows * length) < n).reshape(rows, length)
    return padded[:-1].reshape(rows, length), padded[1:].reshape(rows, length), scored


def bits_per_character(nats):
    """A loss in nats per character (natural log) in bits per character (log base 2)."""
    return nats / np.log(2)


def perplexity(nats):
    """e ** loss: the number of equally likely characters the model is as unsure as."""
    return float(np.exp(nats))
