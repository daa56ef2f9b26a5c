"""Chapter 09: a character-level LSTM language model on Tiny Shakespeare.

Karpathy's "The Unreasonable Effectiveness of Recurrent Neural Networks" on this engine, in
one module per idea, in reading order (``text`` and ``sample`` are ``minigraph.training``'s,
shared with chapters 10 and 11, and read here as this chapter's):

    text         characters as ids, the train / held-out split, B streams read S at a time
    model        CharLSTM: one-hot -> LSTM layers (chapter 07's cell) -> softmax; the graph of
                 a chunk, with the carried state as Inputs; the loss over a whole text
    sample       writing text: temperature, top-k, one character at a time
    training     a run: truncated BPTT, clipping, Adam with a cosine schedule, the history
                 (what every run shares is minigraph.training.run)
    checkpoint   a run in one .npz file (no pickle), bit for bit, resumable
                 (written and checked by minigraph.training.files)
    train        the command:    python -m minigraph.charlm.train --out build/lstm/run.npz
    evaluate     the command:    python -m minigraph.charlm.evaluate shakespeare.npz
    by_hand      the same training step without the engine: numpy (BPTT by hand), PyTorch
    widgets      the chapter's pictures and widgets (imported on its own: it needs ipywidgets)

``import minigraph as mg`` then ``mg.charlm.text.Vocabulary(...)``: the package is imported on
first use, with the modules a chapter reads (all but the commands and widgets).
"""

from ..training import sample, text
from . import by_hand, checkpoint, model, training
