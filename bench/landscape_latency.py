"""How long one change of chapter 06's Race widget takes, kernel side: set a control, until the
new picture (PNG) and readout are in the widget. Every change recomputes every path shown with
the engine (backward + optimizer step per point) and redraws the figure once.

Measured with all six optimizers shown, at 100 and at 300 steps, while a slider sweeps; and the
paths on their own: the engine's against the same paths from a hand-written numpy gradient of
the valley (same optimizers from mg.optim, so the ratio is the engine's cost). The rest of a
change is the drawing (a cached background plus the moving lines, encoded as PNG).
Budget: p95 well under a second (<= 500 ms).

    python bench/landscape_latency.py [changes]
"""

import sys
import time

import numpy as np

from minigraph import landscape


def numpy_path(name, start, steps, settings):
    """The valley's path with the gradient (x, 25 y) written by hand, same optimizer."""
    opt = landscape.make_optimizer(name, [], **settings)
    value, state, points = np.array(start, dtype=float), {}, [tuple(start)]
    for _ in range(steps):
        value = opt.update(value, value * np.array([1.0, 25.0]), state)
        points.append(tuple(value))
    return np.array(points)


def percentiles(times):
    p50, p95 = np.percentile(times, [50, 95])
    return f"p50 {p50:6.1f} ms, p95 {p95:6.1f} ms, max {max(times):6.1f} ms"


def main(changes=30):
    for steps in (100, 300):
        race = landscape.race("valley", optimizers=tuple(landscape.COLOURS), steps=steps)
        sweeps = {"start x": (race.controls["x0"], np.linspace(-2.9, 2.9, changes)),
                  "lr": (race.controls["lr"], np.geomspace(0.001, 0.07, changes)),
                  "Adam β1": (race.controls["beta1"], np.linspace(0.0, 0.98, changes))}
        for label, (control, values) in sweeps.items():
            times = []
            for value in values:
                before = race.image.value
                start = time.perf_counter()
                control.value = float(value)
                times.append(1000 * (time.perf_counter() - start))
                assert race.image.value != before
            print(f"{steps} steps x 6 optimizers, moving {label:<8}: {percentiles(times)}  (budget p95 <= 500 ms)")

        valley, settings, begin = landscape.SURFACES["valley"], landscape.SETTINGS, (-2.5, 1.0)
        engine, numpy_times = [], []
        for _ in range(changes):
            t0 = time.perf_counter()
            paths = {n: landscape.trajectory(valley, n, begin, steps, **settings)[0] for n in landscape.COLOURS}
            t1 = time.perf_counter()
            hand = {n: numpy_path(n, begin, steps, settings) for n in landscape.COLOURS}
            engine.append(1000 * (t1 - t0))
            numpy_times.append(1000 * (time.perf_counter() - t1))
        for n in landscape.COLOURS:                       # the same paths
            np.testing.assert_allclose(paths[n], hand[n], rtol=1e-12, atol=1e-12)
        ratio = np.median(engine) / np.median(numpy_times)
        print(f"  of which the six paths, engine: {percentiles(engine)}; hand-written numpy gradient: "
              f"{percentiles(numpy_times)}; ratio {ratio:.2f}x")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
