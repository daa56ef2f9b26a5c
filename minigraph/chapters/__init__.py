"""The chapters' own tools: what a chapter needs that is not the engine.

Each module serves a chapter (or two), and each is reached as ``mg.<name>``, imported on first
use:

* ``sidebyside`` (04, 05): a network trained on the learner's own engine next to minigraph's;
* ``digits`` (05): the 8x8 digits browser and the network that reads them;
* ``landscape`` (06): loss surfaces and the optimizers' paths across them;
* ``recurrent`` (07): RNN and LSTM cells unrolled, the embedded Reber grammar, clipping;
  ``recurrent_widgets`` (07): its pictures;
* ``attention`` (10, 11): scaled dot-product attention as a graph, and the √d experiment.

The language models of chapters 09–11 are packages of their own (``charlm``, ``translate``,
``gpt``). These modules use only the engine's public names (``minigraph``'s, plus ``viz`` and
``widgets`` for pictures).
"""
