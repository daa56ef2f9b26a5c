"""Draw the picture at the top of README.md: a sigmoid neuron with its values and gradients.

    python tools/docs/draw_readme_picture.py        # writes docs/images/neuron.svg

The drawing is committed, so README shows it on GitHub, on PyPI and offline; run this again
when mg.draw's look changes."""

from pathlib import Path

import minigraph as mg

OUT = Path(__file__).resolve().parents[2] / "docs" / "images" / "neuron.svg"


def neuron_drawing():
    """Chapter 01's neuron, loss = sum(sigmoid(x @ W + b) ** 2), after one backward pass."""
    x = mg.Input("x")
    W = mg.Parameter([[0.5, -1.0], [1.5, 0.25]], name="W")
    b = mg.Parameter([0.1, -0.2], name="b")
    loss = mg.sum(mg.sigmoid(x @ W + b) ** 2)
    graph = mg.Graph(loss)
    graph.backward({x: [1.0, 2.0]})
    return mg.draw(graph)


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(neuron_drawing().svg(), encoding="utf-8")
    print(f"wrote {OUT.relative_to(OUT.parents[2])}")
