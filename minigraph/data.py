"""Small datasets for the chapters, made on the spot (no downloads).

Every 2-D task returns ``X`` of shape (n, 2) and ``Y`` of shape (n, 1) with labels 0.0 / 1.0.
Pass a seed (or a numpy Generator) to get the same points every time: ``np.random.default_rng``
makes a Generator from a seed and gives a Generator back as it is.
"""

import hashlib
import lzma

import numpy as np

from .errors import BadValueError


def xor():
    """The four corners of the unit square; label 1 where exactly one coordinate is 1."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    return X, np.array([[0.0], [1.0], [1.0], [0.0]])


def disk(n=400, seed=0, center=(0.5, 0.5), radius=0.5):
    """Points uniform in the square [-0.25, 1.25]²; label 1 inside the disk (about 35 % of them)."""
    X = np.random.default_rng(seed).uniform(-0.25, 1.25, size=(n, 2))
    inside = np.sum((X - np.asarray(center)) ** 2, axis=1) < radius ** 2
    return X, inside.astype(float).reshape(-1, 1)


def spirals(n=400, seed=0, noise=0.1, turns=1.5):
    """Two interleaved spirals (n/2 points each); label = which spiral. Hard for a straight line."""
    rng = np.random.default_rng(seed)
    half = n // 2
    t = np.sqrt(rng.uniform(0, 1, half)) * turns * 2 * np.pi
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (turns * 2 * np.pi)
    X = np.concatenate([arm, -arm]) + rng.normal(0, noise / 4, size=(2 * half, 2))
    return X, np.concatenate([np.zeros(half), np.ones(half)]).reshape(-1, 1)


def digits():
    """scikit-learn's bundled 8x8 handwritten digits: X (1797, 64) scaled to [0, 1], y int labels.

    Read from the file inside scikit-learn's wheel (no download), without importing scikit-learn,
    whose import takes seconds."""
    import importlib.util
    folder = importlib.util.find_spec("sklearn").submodule_search_locations[0]
    table = np.loadtxt(f"{folder}/datasets/data/digits.csv.gz", delimiter=",")
    return table[:, :-1] / 16.0, table[:, -1].astype(int)


def grid(X, steps=100, margin=0.25):
    """A steps x steps grid covering X's bounding box (plus a margin): for decision boundaries."""
    lo, hi = X.min(axis=0) - margin, X.max(axis=0) + margin
    xs, ys = np.linspace(lo[0], hi[0], steps), np.linspace(lo[1], hi[1], steps)
    gx, gy = np.meshgrid(xs, ys)
    return gx, gy, np.stack([gx.ravel(), gy.ravel()], axis=1)


# -- MNIST (chapter 05) ----------------------------------------------------------------------

def mnist():
    """5,000 real 28x28 MNIST digits shipped with minigraph (see minigraph/datasets/README.md).

    Returns ``(X_train, y_train, X_test, y_test)``: images as rows of 784 pixels scaled to
    [0, 1] (float64; ``X.reshape(-1, 28, 28)`` gives the pictures back) and int64 labels 0-9.
    4,000 training images and 1,000 held-out test images, 10 % of each set per digit; the split
    is fixed (made once with a seed), so every learner sees the same sets.
    """
    from importlib.resources import files
    with np.load(files(__package__) / "datasets" / "mnist_5k.npz") as saved:
        parts = [saved[k] for k in ("train_images", "train_labels", "test_images", "test_labels")]
    return tuple(p.reshape(len(p), -1) / 255.0 if p.ndim == 3 else p.astype(np.int64) for p in parts)



# -- Tiny Shakespeare (chapter 09) -----------------------------------------------------------

SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"


def shakespeare():
    """Tiny Shakespeare, shipped with minigraph: 1,115,394 characters of the plays, 65 distinct
    (Karpathy's char-rnn data set; see minigraph/datasets/README.md). Returns the text as a str.

    The file is stored xz-compressed; the text read back is checked against its sha256, so
    every learner trains on exactly the same characters. Nothing is downloaded.
    """
    from importlib.resources import files
    raw = lzma.decompress((files(__package__) / "datasets" / "tinyshakespeare.txt.xz").read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SHAKESPEARE_SHA256:
        raise BadValueError(f"minigraph/datasets/tinyshakespeare.txt.xz holds text whose sha256 is "
                            f"{digest}, not {SHAKESPEARE_SHA256}: the file was changed. Restore it "
                            f"with `git checkout minigraph/datasets/tinyshakespeare.txt.xz`.")
    return raw.decode("utf-8")


# -- the embedded Reber grammar (Hochreiter & Schmidhuber 1997, "Long short-term memory") ------
#
# A Reber string is a walk through a small automaton: it starts with B, each state offers two
# symbols (a fair coin picks one), and the walk ends with E. The *embedded* grammar wraps a
# Reber string as  B T <Reber string> T E  or  B P <Reber string> P E: the second-to-last
# symbol must repeat the second one, however long the string in between. Predicting the local
# symbols is easy; remembering T or P across the whole inner string is the test of memory.

REBER_SYMBOLS = "BTSXPVE"
REBER_AUTOMATON = {                # state -> the (symbol, next state) pairs it may emit
    0: (("T", 1), ("P", 2)),       # B has just been read
    1: (("S", 1), ("X", 3)),
    2: (("T", 2), ("V", 4)),
    3: (("X", 2), ("S", 5)),
    4: (("P", 3), ("V", 5)),
    5: (("E", None),),             # E ends the string
}


def reber_string(seed=None):
    """One Reber string, e.g. ``'BTSSXXTVVE'``: a walk from state 0, coin flips at every fork."""
    rng = np.random.default_rng(seed)
    symbols, state = ["B"], 0
    while state is not None:
        symbol, state = REBER_AUTOMATON[state][rng.integers(len(REBER_AUTOMATON[state]))]
        symbols.append(symbol)
    return "".join(symbols)


def embedded_reber_string(seed=None):
    """One embedded Reber string: ``B`` + T or P + a Reber string + the same T or P + ``E``."""
    rng = np.random.default_rng(seed)
    outer = "TP"[rng.integers(2)]
    return "B" + outer + reber_string(rng) + outer + "E"


def reber_strings(n, seed=0, embedded=True):
    """``n`` strings from one seeded generator (embedded Reber strings unless ``embedded=False``)."""
    rng = np.random.default_rng(seed)
    make = embedded_reber_string if embedded else reber_string
    return [make(rng) for _ in range(n)]


def _reber():
    """A Reber string as a coroutine: it yields the set of legal next symbols, and is sent the
    symbol that was read."""
    yield {"B"}
    state = 0
    while state is not None:
        options = dict(REBER_AUTOMATON[state])
        state = options[(yield set(options))]


def _embedded_reber():
    yield {"B"}
    outer = yield {"T", "P"}                              # the symbol to remember
    yield from _reber()
    yield {outer}                                         # ... repeated after the inner string
    yield {"E"}


def reber_walk(string, embedded=True):
    """The sets of legal next symbols after each prefix of ``string``, in one pass through the
    automaton: ``len(string) + 1`` sets, the first for the empty prefix. A complete string ends
    with the empty set; from an illegal symbol on, the sets are None.

    >>> reber_walk("BTBTXSETE")[7]                        # after BTBTXSE: the long-range symbol
    {'T'}
    """
    grammar = _embedded_reber() if embedded else _reber()
    sets = [next(grammar)]
    for symbol in string:
        if sets[-1] is None or symbol not in sets[-1]:
            sets.append(None)
            continue
        try:
            sets.append(grammar.send(symbol))
        except StopIteration:
            sets.append(set())
    return sets


def reber_next(prefix, embedded=True):
    """The set of symbols that may follow ``prefix`` (empty after the final E; None if illegal).

    >>> sorted(reber_next("BT"))                          # the inner string starts
    ['B']
    >>> reber_next("BTBTXSE")                             # the long-range symbol
    {'T'}
    """
    return reber_walk(prefix, embedded)[-1]


def is_reber(string, embedded=True):
    """Is ``string`` a complete, legal (embedded) Reber string?"""
    return reber_walk(string, embedded)[-1] == set()


def reber_arrays(strings, length=None, embedded=True):
    """One-hot inputs, multi-hot targets and a mask for a batch of strings, padded to one length.

    Step t reads symbol t of a string and must predict the *set* of legal next symbols.
    Returns ``X`` (n, T, 7) one-hot, ``Y`` (n, T, 7) with 1 for each legal next symbol, and
    ``mask`` (n, T) with 1 where the string has a step t (0 on the padding), where
    T = ``length`` or the longest string's length minus 1.
    """
    T = length or max(len(s) for s in strings) - 1
    X, Y, mask = np.zeros((len(strings), T, 7)), np.zeros((len(strings), T, 7)), np.zeros((len(strings), T))
    for row, string in enumerate(strings):
        legal = reber_walk(string, embedded)
        for t, symbol in enumerate(string[:-1]):
            X[row, t, REBER_SYMBOLS.index(symbol)] = 1
            Y[row, t, [REBER_SYMBOLS.index(s) for s in legal[t + 1]]] = 1
            mask[row, t] = 1
    return X, Y, mask
