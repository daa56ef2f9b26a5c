"""How long mg.draw takes on big graphs: from the graph to the SVG (folding, DOT text, dot).

Three graphs of about 5,000 nodes -- a chain of 5,000 tanh, 1,250 branches sharing one weight,
an RNN unrolled for 833 steps (its three weights shared by every step) -- are drawn several
times each; then graphs with no repeats (random tangles, nothing to fold) as big as mg.draw
draws in full, near ``viz.MAX_BOXES`` boxes. The graphs are the ones tests/test_viz_big.py draws.

    python bench/draw_big.py [runs]
"""

import statistics
import sys
import time
from pathlib import Path

import minigraph as mg
from minigraph import viz

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_viz_big import chain, rnn, tangle, wide  # noqa: E402  (the graphs the tests draw)


def seconds_to_draw(graph, **options):
    """Seconds from the graph to its SVG, and the drawing."""
    start = time.perf_counter()
    drawing = mg.draw(graph, **options)
    drawing.svg()
    return time.perf_counter() - start, drawing


def main(runs=5):
    print(f"{'graph':<24}{'nodes':>7}{'boxes':>7}   seconds: median (min-max) of {runs} runs")
    for name, graph in [("chain of 5,000 tanh", chain(5000)), ("1,250 branches", wide(1250)),
                        ("RNN, 833 steps", rnn(833))]:
        times, drawing = zip(*(seconds_to_draw(graph) for _ in range(runs)))
        print(f"{name:<24}{len(graph.nodes):>7,}{drawing[0].options['layout'].boxes():>7}   "
              f"{statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f})")
    for n in (300, 450, 500):
        graph = tangle(n)
        try:
            times, drawing = zip(*(seconds_to_draw(graph) for _ in range(runs)))
        except mg.DrawingError as error:
            print(f"tangle {n:<17}{len(graph.nodes):>7,}   refused: {str(error)[:60]}...")
            continue
        print(f"tangle {n:<17}{len(graph.nodes):>7,}{drawing[0].options['layout'].boxes():>7}   "
              f"{statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f})")
    print(f"(mg.draw refuses drawings of more than {viz.MAX_BOXES} boxes)")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
