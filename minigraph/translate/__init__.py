"""Chapter 10: translation with attention, on a task the course makes: dates to ISO dates.

Bahdanau, Cho & Bengio's "Neural Machine Translation by Jointly Learning to Align and
Translate" (2015) on this engine, one module per idea, in reading order:

    data       the task: dates written many ways -> YYYY-MM-DD; the vocabularies; splits
               that never share a date
    model      Translator: a bidirectional LSTM encoder, additive attention, an LSTM decoder;
               the teacher-forced training graph; greedy decoding and its alignments
    training   a run (Adam, a cosine schedule, clipping, exact match on held-out examples);
               a trained model in one .npz file
    train      the command:    python -m minigraph.translate.train --out dates.npz
    evaluate   the command:    python -m minigraph.translate.evaluate dates.npz
    widgets    the alignment as a heatmap, and a widget to translate and see where the model
               looked (imported on its own: it needs ipywidgets)

``import minigraph as mg`` then ``mg.translate.data.dates(...)``: the package is imported on
first use, with the modules a chapter reads (all but the commands and the widgets).
"""

from . import data, model, training
