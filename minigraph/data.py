"""Small datasets for the chapters, made on the spot (no downloads).

Every 2-D task returns ``X`` of shape (n, 2) and ``Y`` of shape (n, 1) with labels 0.0 / 1.0.
Pass a seed (or a numpy Generator) to get the same points every time.
"""

import numpy as np


def _rng(seed):
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def xor():
    """The four corners of the unit square; label 1 where exactly one coordinate is 1."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    return X, np.array([[0.0], [1.0], [1.0], [0.0]])


def disk(n=400, seed=0, center=(0.5, 0.5), radius=0.5):
    """Points uniform in the square [-0.25, 1.25]²; label 1 inside the disk (about 35 % of them)."""
    X = _rng(seed).uniform(-0.25, 1.25, size=(n, 2))
    inside = np.sum((X - np.asarray(center)) ** 2, axis=1) < radius ** 2
    return X, inside.astype(float).reshape(-1, 1)


def spirals(n=400, seed=0, noise=0.1, turns=1.5):
    """Two interleaved spirals (n/2 points each); label = which spiral. Hard for a straight line."""
    rng = _rng(seed)
    half = n // 2
    t = np.sqrt(rng.uniform(0, 1, half)) * turns * 2 * np.pi
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (turns * 2 * np.pi)
    X = np.concatenate([arm, -arm]) + rng.normal(0, noise / 4, size=(2 * half, 2))
    return X, np.concatenate([np.zeros(half), np.ones(half)]).reshape(-1, 1)


def digits():
    """scikit-learn's bundled 8x8 handwritten digits: X (1797, 64) scaled to [0, 1], y int labels."""
    from sklearn.datasets import load_digits        # bundled with scikit-learn: no download
    bunch = load_digits()
    return bunch.data / 16.0, bunch.target


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
