"""Chapter 11: a tiny GPT on Tiny Shakespeare, nanoGPT's CPU run on this engine.

One module per idea, in reading order (the text, the splits, sampling, the run's loop, its
command line and the checkpoint file are every language model's, ``minigraph.training``):

    model        GPT: embeddings -> pre-norm transformer blocks -> the tied LM head; the graph
                 of a window of positions, built once
    training     a run: random windows of the training split, AdamW, warm-up and cosine, clipping
    checkpoint   a run in one .npz file (no pickle), resumable
    evaluate     the held-out loss over the whole split; the command
                 python -m minigraph.gpt.evaluate shakespeare_gpt.npz
    train        the command:    python -m minigraph.gpt.train --out shakespeare_gpt.npz
    reference    the same model in PyTorch (nanoGPT's code), for the tests and bench/gpt_step.py
    widgets      chapter 11's pictures: the causal mask, attention heatmaps, where each head
                 looks, the attention-pattern widget (imported on its own: it needs ipywidgets)
"""

from . import model
