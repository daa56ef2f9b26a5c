"""Scoring a language model: the loss of each character it predicts, and the lines that
report a held-out loss.

    losses = character_losses(logits, targets)     # -log p(target), one per row, in nats
    print(summary(path, losses.mean(), meta))      # which checkpoint, then nats, bits, perplexity

Chapter 09's LSTM and chapter 11's GPT score their held-out split with these (their
``mean_loss`` reads the text; their ``evaluate`` commands print the ``summary``).
"""

import numpy as np

from ..nn import log_probabilities
from . import text as texts
from .files import provenance


def character_losses(logits, targets):
    """-log p(target) for each row of ``logits`` (one row per character, in nats)."""
    return -log_probabilities(logits)[np.arange(len(targets)), targets]


def summary(path, loss, meta):
    """Three lines: which checkpoint (iteration, commit), how long it trained on which machine,
    and its loss in the three usual units."""
    return (f"{provenance(path, meta)}\n"
            f"held-out loss {loss:.4f} nats/char = {texts.bits_per_character(loss):.4f} bits/char, "
            f"perplexity {texts.perplexity(loss):.3f}")
