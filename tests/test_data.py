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
