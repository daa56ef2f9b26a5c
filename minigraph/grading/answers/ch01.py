"""Chapter 01's reference answers, judges and typical mistakes (``content/ch01.py`` has the exercises)."""

import numpy as np

from ..judges.ch01 import neuron_judge
from ..toolkit.exercise import arrays


def neuron(W, b, x):
    return 1 / (1 + np.exp(-(x @ W + b)))


judge_neuron = neuron_judge(lambda case: neuron(*arrays(case)))


PREDICTED = [6.0, 8.0, 46.0]
PREDICT_MISTAKES = {
    "out = u·v − x: the − x is missing": [6.0, 8.0, 48.0],
    "u = w·x is a product, not a sum": [5.0, 7.0, 33.0],
    "x is 2, and w is the Parameter's value 3: they are swapped or misread": [6.0, 8.0, 45.0],
}
