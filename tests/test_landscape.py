"""Loss landscapes: surfaces as graphs, optimizer paths, momentum's rate, and the Race widget."""

import warnings

import numpy as np
import pytest

import minigraph as mg
from minigraph import landscape

RNG = np.random.default_rng(6)


def gradient_by_hand(name, x, y):
    if name == "banana":                                     # (1 - x)² + 10 (y - x²)²
        return -2 * (1 - x) - 40 * x * (y - x * x), 20 * (y - x * x)
    c, s = np.cos(np.radians(30.0 if name == "rotated valley" else 0.0)), np.sin(
        np.radians(30.0 if name == "rotated valley" else 0.0))
    u, v = c * x + s * y, c * y - s * x                      # (u² + 25 v²) / 2
    return c * u - 25 * s * v, s * u + 25 * c * v


@pytest.mark.parametrize("name", list(landscape.SURFACES))
def test_the_engine_gives_each_surface_its_gradient_and_the_grid_graph_the_same_values(name):
    surface = landscape.SURFACES[name]
    x_lo, x_hi, y_lo, y_hi = surface.extent
    for x, y in zip(RNG.uniform(x_lo, x_hi, 20), RNG.uniform(y_lo, y_hi, 20)):
        surface.x.value, surface.y.value = x, y
        loss = float(surface.graph.backward())
        np.testing.assert_allclose([surface.x.grad, surface.y.grad], gradient_by_hand(name, x, y), rtol=1e-10, atol=1e-10)
        assert surface.at(x, y) == pytest.approx(loss, rel=1e-12)
    X, Y, Z = surface.grid(7)
    assert X.shape == Y.shape == Z.shape == (7, 7)
    assert float(surface.at(*surface.minimum)) == pytest.approx(0.0, abs=1e-12)
    assert Z.min() >= 0


def test_gradient_descent_on_the_valley_follows_the_closed_form():
    """Along a direction of curvature lam, each step multiplies the distance by 1 - lr lam."""
    valley = landscape.SURFACES["valley"]
    lr, (x0, y0) = RNG.uniform(0.001, 0.079), RNG.uniform(-2, 2, size=2)
    points, losses = landscape.trajectory(valley, "gd", start=(x0, y0), steps=30, lr=lr)
    k = np.arange(31)
    np.testing.assert_allclose(points, np.stack([(1 - lr) ** k * x0, (1 - 25 * lr) ** k * y0], axis=1),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(losses, 0.5 * (points[:, 0] ** 2 + 25 * points[:, 1] ** 2), rtol=1e-9)


def test_each_optimizer_on_a_surface_is_the_one_from_mg_optim_with_its_settings():
    surface = landscape.SURFACES["banana"]
    settings = dict(lr=0.002, momentum=0.7, step=0.05, decay=0.8, beta1=0.8, beta2=0.99)
    built = {name: landscape.make_optimizer(name, surface.parameters, **settings) for name in landscape.COLOURS}
    assert (type(built["adam"]), built["adam"].lr, built["adam"].beta1, built["adam"].beta2) == (mg.optim.Adam, 0.05, 0.8, 0.99)
    assert built["nesterov"].nesterov and not built["momentum"].nesterov and built["momentum"].momentum == 0.7
    assert (built["rmsprop"].decay, built["gd"].lr, built["adagrad"].lr) == (0.8, 0.002, 0.05)
    for name, optimizer in built.items():              # the path is that optimizer stepping on the graph
        points, _ = landscape.trajectory(surface, name, start=(-1.0, 2.0), steps=5, **settings)
        surface.x.value, surface.y.value = -1.0, 2.0
        fresh = landscape.make_optimizer(name, surface.parameters, **settings)
        for k in range(5):
            surface.graph.backward()
            fresh.step()
            assert (float(surface.x.value), float(surface.y.value)) == tuple(points[k + 1])
    with pytest.raises(ValueError, match="no optimizer 'sgd'; choose one of gd, momentum"):
        landscape.make_optimizer("sgd", surface.parameters)


def test_a_diverging_path_stops_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        points, losses = landscape.trajectory(landscape.SURFACES["valley"], "gd", steps=500, lr=0.2)
    assert len(points) == len(losses) < 501 and losses[-1] > landscape.DIVERGED
    assert np.all(losses[:-1] <= landscape.DIVERGED)


def test_momentum_rate_is_the_spectral_radius_of_the_iteration_matrix():
    """An independent reference: numpy's eigenvalues of [[1 + b - lr lam, -b], [1, 0]]."""
    for _ in range(300):
        curvatures = tuple(RNG.uniform(0.1, 50, size=RNG.integers(1, 4)))
        lr, beta = RNG.uniform(0, 5 / max(curvatures)), RNG.choice([0.0, RNG.uniform(0, 1)])
        radius = max(np.abs(np.linalg.eigvals([[1 + beta - lr * lam, -beta], [1, 0]])).max() for lam in curvatures)
        assert landscape.momentum_rate(lr, beta, curvatures) == pytest.approx(radius, rel=1e-7, abs=1e-9)
    grid = landscape.momentum_rate(np.linspace(0.01, 0.1, 5)[None, :], np.linspace(0, 0.9, 4)[:, None], (1, 25))
    assert grid.shape == (4, 5)


def test_momentum_rate_is_what_the_engine_measures():
    valley = landscape.SURFACES["valley"]
    for lr, beta in [(0.02, 0.0), (0.05, 0.5), (0.03, 0.8)]:          # real roots, or complex ones
        points, _ = landscape.trajectory(valley, "momentum", start=(-2.0, 1.0), steps=400, lr=lr, momentum=beta)
        distance = np.linalg.norm(points, axis=1)
        measured = (distance[-1] / distance[-301]) ** (1 / 300)
        assert measured == pytest.approx(landscape.momentum_rate(lr, beta, valley.curvatures), abs=0.005)


def test_the_best_pair_is_the_fastest_and_its_rate_is_the_root_of_its_momentum():
    for curvatures in [(1.0, 25.0), (0.5, 3.0), (2.0, 2000.0)]:
        lr, beta = landscape.best_momentum(curvatures)
        best = landscape.momentum_rate(lr, beta, curvatures)
        assert best == pytest.approx(np.sqrt(beta), rel=1e-6)
        lrs, betas = np.meshgrid(np.linspace(0, 4 / max(curvatures), 300)[1:], np.linspace(0, 0.999, 300))
        assert landscape.momentum_rate(lrs, betas, curvatures).min() >= best - 1e-9


# -- the widget ---------------------------------------------------------------------------------

def test_moving_a_slider_reruns_the_paths_and_redraws_the_picture_and_readout():
    race = landscape.race("valley", optimizers=("gd", "adam"), steps=40)
    image, readout = race.image.value, race.readout.value
    race.controls["x0"].value = 1.5
    assert race.image.value != image and race.readout.value != readout
    points, losses = landscape.trajectory(landscape.SURFACES["valley"], "adam", start=(1.5, race.controls["y0"].value),
                                          steps=40, **race.settings)
    np.testing.assert_array_equal(race.paths["adam"][0], points)
    assert race.losses_after()["adam"] == losses[-1]
    assert f"{losses[-1]:.3g}" in race.readout.value and "loss after 40 steps" in race.readout.value


def test_optimizers_come_and_go_with_their_checkboxes_and_settings_reach_them():
    race = landscape.race("valley", optimizers=("gd",), steps=20)
    assert set(race.paths) == {"gd"} and "Nesterov" not in race.readout.value
    race.shown["nesterov"].value = True
    assert set(race.paths) == {"gd", "nesterov"} and "Nesterov" in race.readout.value
    race.controls["lr"].value = 0.5                               # far beyond 2 / 25: diverges
    assert "diverged at step" in race.readout.value and np.isnan(race.losses_after()["gd"])
    race.shown["gd"].value = False
    assert set(race.paths) == {"nesterov"}


def test_a_new_surface_moves_the_start_into_its_window_and_drops_the_rate_map():
    race = landscape.race("valley", steps=10)
    assert race.rate_dot is not None
    race.controls["surface"].value = "banana"
    banana = landscape.SURFACES["banana"]
    assert (race.controls["x0"].value, race.controls["y0"].value) == banana.start
    assert (race.controls["y0"].min, race.controls["y0"].max) == banana.extent[2:]
    assert race.rate_dot is None and race.paths["gd"][0][0].tolist() == list(banana.start)


def test_draw_state_shows_each_parameters_memory_next_to_it():
    w, b = mg.Parameter([1.0, -2.0], name="w"), mg.Parameter(0.5, name="b")
    graph = mg.Graph(mg.sum(w * w) + b * b)
    adam, nesterov = mg.optim.Adam([w, b], lr=0.1), mg.optim.Momentum([w, b], lr=0.1, nesterov=True)
    assert "state empty" in repr(landscape.draw_state(adam))          # before the first step
    for _ in range(2):
        graph.backward()
        adam.step()
    drawing = landscape.draw_state(adam)
    text = repr(drawing).splitlines()
    assert text[0] == "Adam: what it remembers per Parameter"
    fmt = mg.viz.format_value
    assert text[2] == (f"  b: value {fmt(b.value)}, grad {fmt(b.grad)}; state t 2, "
                       f"m {fmt(adam.state[b]['m'])}, s {fmt(adam.state[b]['s'])}")
    svg = drawing._repr_mimebundle_()["image/svg+xml"]
    assert svg.count("<g id=\"node") == 2 + 2 * 3 and "average of g²" in svg and landscape.COLOURS["adam"] in svg
    assert landscape.optimizer_key(nesterov) == "nesterov" and landscape.optimizer_key(mg.optim.GD([w])) == "gd"
    nesterov.step()
    assert landscape.COLOURS["nesterov"] in landscape.draw_state(nesterov).source
    assert "velocity" in landscape.draw_state(nesterov).source
