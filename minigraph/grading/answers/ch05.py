"""Chapter 05's reference answers and typical mistakes (``content/ch05.py`` has the exercises)."""

import numpy as np


def _softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _shifted_softmax(z, shift):
    e = np.exp(z - shift)
    return e / e.sum(axis=-1, keepdims=True)


def _one_hot(labels, k):
    return np.eye(k)[labels]


def softmax_ce_vjp(g, logits, labels):
    return g * (_softmax(logits) - _one_hot(labels, logits.shape[1])) / len(logits)


CE_MISTAKES = [
    ("not divided by the batch size: the loss is the MEAN over the rows, so each row's "
     "gradient carries a factor 1/n",
     lambda g, z, y: g * (_softmax(z) - _one_hot(y, z.shape[1]))),
    ("the upstream gradient g is missing: multiply the local gradient by g",
     lambda g, z, y: (_softmax(z) - _one_hot(y, z.shape[1])) / len(z)),
    ("the sign is flipped: the gradient is softmax minus one-hot, not one-hot minus softmax",
     lambda g, z, y: -softmax_ce_vjp(g, z, y)),
    ("the one-hot labels were not subtracted: that is the softmax alone",
     lambda g, z, y: g * _softmax(z) / len(z)),
    ("softmax over the wrong axis: each ROW (one example) must sum to 1, so normalise along axis 1",
     lambda g, z, y: g * (_softmax(z, axis=0) - _one_hot(y, z.shape[1])) / len(z)),
    ("divided by every entry (n rows x k classes) instead of by the n rows",
     lambda g, z, y: g * (_softmax(z) - _one_hot(y, z.shape[1])) / z.size),
    ("sigmoid instead of softmax: the ten probabilities of a row must share one normalisation",
     lambda g, z, y: g * (1 / (1 + np.exp(-z)) - _one_hot(y, z.shape[1])) / len(z)),
    ("one largest logit was subtracted for the whole batch: a row far below it has every exp "
     "underflow to 0, and 0/0 gives NaN; subtract EACH ROW's largest logit",
     lambda g, z, y: g * (_shifted_softmax(z, z.max()) - _one_hot(y, z.shape[1])) / len(z)),
    ("the logits were clipped: that changes the softmax of logits beyond the clip (1000 and 999 "
     "become equal); subtract each row's largest logit instead, which changes nothing",
     lambda g, z, y: softmax_ce_vjp(g, np.clip(z, -300, 300), y)),
    # where the labels stop short of the last class, this one is a broadcast error, which
    # content/ch05.py's _classes_from_labels names; here it broadcasts (all labels 0)
    ("the number of classes was taken from the labels (the largest label + 1): it is the "
     "logits' second axis, since a batch need not hold an example of every class",
     lambda g, z, y: g * (_softmax(z) - _one_hot(y, y.max() + 1)) / len(z)),
]

def accuracy(logits, labels):
    return np.mean(np.argmax(logits, axis=1) == labels)


ACCURACY_MISTAKES = [
    ("that is the NUMBER of right answers: divide by the number of examples to get a fraction",
     lambda z, y: np.sum(np.argmax(z, axis=1) == y)),
    ("divided by the number of logits (rows × classes): the accuracy is the number of right "
     "answers divided by the number of examples, one per row",
     lambda z, y: np.sum(np.argmax(z, axis=1) == y) / z.size),
    ("that is a percentage: return a fraction between 0 and 1",
     lambda z, y: 100 * accuracy(z, y)),
    ("that is the error rate, the fraction WRONG: count the rows that are right",
     lambda z, y: 1 - accuracy(z, y)),
    ("argmin picks the least likely class: the network's answer is the class with the LARGEST logit",
     lambda z, y: np.mean(np.argmin(z, axis=1) == y)),
    ("compared the largest logit's value with the label: the answer is its position (the class), "
     "not its value",
     lambda z, y: np.mean(np.max(z, axis=1) == y)),
    ("one True/False per row: the accuracy is one number, the mean of those",
     lambda z, y: np.argmax(z, axis=1) == y),
    ("integer division (//) rounds the fraction down to a whole number: divide with /",
     lambda z, y: np.sum(np.argmax(z, axis=1) == y) // len(y)),
    ("np.argmax without an axis gives ONE position in the whole flattened array: take the argmax "
     "of each row (axis=1)",
     lambda z, y: np.mean(np.argmax(z) == y)),
    ("a tie was counted as right for the label: when several logits of a row share the largest "
     "value, the network's answer is the first of them (np.argmax), one class per row",
     lambda z, y: np.mean(z[np.arange(len(y)), y] == np.max(z, axis=1))),
]

def confusion_matrix(labels, predictions, n_classes):
    matrix = np.zeros((n_classes, n_classes), dtype=int)
    np.add.at(matrix, (labels, predictions), 1)
    return matrix


def _fancy_plus_one(labels, predictions, n_classes):
    matrix = np.zeros((n_classes, n_classes))
    matrix[labels, predictions] += 1
    return matrix


CONFUSION_MISTAKES = [
    ("rows and columns are swapped: row = the TRUE class, column = the PREDICTED class",
     lambda y, p, k: confusion_matrix(y, p, k).T),
    ("a (true, predicted) pair that occurs several times was counted once: indexing with arrays "
     "and += adds 1 per distinct position, not per occurrence",
     _fancy_plus_one),
    ("fractions instead of counts: each entry is how MANY examples of that true class got that answer",
     lambda y, p, k: confusion_matrix(y, p, k) / len(y)),
    ("each row divided by its total: the check asks for counts",
     lambda y, p, k: confusion_matrix(y, p, k) / np.maximum(confusion_matrix(y, p, k).sum(axis=1, keepdims=True), 1)),
    ("only the right answers were counted (the diagonal): mistakes go off the diagonal",
     lambda y, p, k: np.diag(np.diag(confusion_matrix(y, p, k)))),
    ("the size must come from n_classes, not from the classes that happen to occur",
     lambda y, p, k: confusion_matrix(y, p, int(max(y.max(), p.max())) + 1)),
]
