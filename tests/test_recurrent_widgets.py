"""Chapter 07's pictures and widgets, driven from Python as a learner would drive them."""

from minigraph import data, recurrent, viz
from minigraph import recurrent_widgets as rw


def small_model():
    return recurrent.SequenceModel(recurrent.RNNCell(7, 2, rng=0), n_out=7, rng=1)


def test_the_unrolled_view_redraws_for_each_T_and_counts_the_shared_uses():
    X, targets, _ = recurrent.reber_targets(["BTBTXSETE"])
    view = rw.unrolled_view(small_model(), X, targets, T=2)
    assert view.slider.max == 8
    two = view.view.value
    assert "<svg" in two and "W_hh by 2 ops" in view.readout.value
    view.slider.value = 4
    assert view.view.value != two and "W_hh by 4 ops" in view.readout.value
    assert view.readout.value.startswith(f"T = 4: <b>{len(view.model.unroll(4).graph.nodes)}</b> nodes")
    view.slider.value = 2
    assert view.view.value == two                      # each T is drawn once, then reused
    assert "t4.h" in repr(view.drawing(4)) and "t5.h" not in repr(view.drawing(4))


def test_the_gradient_flow_follows_the_spectral_radius():
    flow = rw.gradient_flow(radius=1.0, T=20, n_hidden=8, max_norm=0.1)
    png, ratio, norm = flow.image.value, flow.norms[0] / flow.norms[-1], flow.global_norm
    assert png[1:4] == b"PNG" and len(flow.norms) == len(flow.lstm_norms) == 20
    flow.slider.value = 0.5
    assert abs(recurrent.spectral_radius(flow.rnn.cell.W_hh.value) - 0.5) < 1e-9
    assert flow.norms[0] / flow.norms[-1] < ratio / 100 and flow.image.value != png
    flow.slider.value = 2.5
    assert flow.global_norm > norm
    factor = min(1.0, flow.max_norm / flow.global_norm)
    assert factor < 1 and f"every gradient × <b>{viz.format_number(factor, 3)}</b>" in flow.readout.value


def test_the_reber_automaton_drawing_lists_every_transition():
    plain, embedded = rw.draw_reber(), rw.draw_reber(embedded=True)
    text = repr(plain)
    for state, pairs in data.REBER_AUTOMATON.items():
        assert f"state {state}: " in text
        assert all(f"{symbol} -> {'end' if nxt is None else nxt}" in text for symbol, nxt in pairs)
    assert plain.source.count("->") == 1 + sum(len(p) for p in data.REBER_AUTOMATON.values())
    assert "same T or P" in repr(embedded) and 'label="T"' in embedded.source
    bundle = plain._repr_mimebundle_()
    assert bundle["text/plain"] == text and "<svg" in bundle["image/svg+xml"]
