"""Datasets: the labels follow their rule, and a seed fixes the points."""

import numpy as np

import minigraph as mg


def test_xor_truth_table():
    X, Y = mg.data.xor()
    assert np.array_equal(Y.ravel(), np.logical_xor(X[:, 0], X[:, 1]).astype(float))


def test_disk_labels_follow_the_radius_rule_and_seed():
    X, Y = mg.data.disk(500, seed=3)
    inside = np.hypot(X[:, 0] - 0.5, X[:, 1] - 0.5) < 0.5
    assert X.shape == (500, 2) and np.array_equal(Y.ravel(), inside)
    assert np.array_equal(mg.data.disk(500, seed=3)[0], X)
    assert not np.array_equal(mg.data.disk(500, seed=4)[0], X)


def test_spirals_are_two_balanced_interleaved_classes():
    X, Y = mg.data.spirals(300, seed=0)
    assert X.shape == (300, 2) and Y.mean() == 0.5
    radius = np.hypot(X[:, 0], X[:, 1])          # both arms sweep the same range of radii
    assert abs(np.median(radius[Y.ravel() == 0]) - np.median(radius[Y.ravel() == 1])) < 0.1


def test_digits_come_from_the_bundled_set():
    X, y = mg.data.digits()
    assert X.shape == (1797, 64) and 0 <= X.min() and X.max() <= 1
    assert set(np.unique(y)) == set(range(10))


def test_grid_covers_the_data():
    X = np.array([[0.0, 0.0], [1.0, 2.0]])
    gx, gy, points = mg.data.grid(X, steps=5, margin=0.5)
    assert points.shape == (25, 2) and gx.shape == (5, 5)
    assert points.min(axis=0).tolist() == [-0.5, -0.5] and points.max(axis=0).tolist() == [1.5, 2.5]


def test_mnist_is_the_shipped_stratified_split():
    X_train, y_train, X_test, y_test = mg.data.mnist()
    assert X_train.shape == (4000, 784) and X_test.shape == (1000, 784)
    assert X_train.dtype == np.float64 and 0 <= X_train.min() and X_train.max() == 1.0
    assert np.array_equal(np.bincount(y_train), [400] * 10) and np.array_equal(np.bincount(y_test), [100] * 10)
    assert not np.array_equal(y_train[:400], np.zeros(400))           # shuffled, not sorted by digit
    # no test image is also a training image (the split holds out whole images)
    train_rows = {row.tobytes() for row in X_train}
    assert not any(row.tobytes() in train_rows for row in X_test)
    # every image has ink, and the top row is blank (MNIST centres each digit in its 28x28 box)
    images = np.concatenate([X_train, X_test]).reshape(-1, 28, 28)
    assert images.sum(axis=(1, 2)).min() > 10 and images[:, 0, :].max() == 0
    again = mg.data.mnist()
    assert all(np.array_equal(a, b) for a, b in zip(again, (X_train, y_train, X_test, y_test)))
