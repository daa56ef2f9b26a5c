"""Chapter 11 in a real JupyterLab: the attention widget's layer, head and priming text redraw its heatmap.

After Run All (no error output, as for every chapter), in the ``.mg-attention-view`` widget:
press an arrow key on the layer slider, then on the head slider, and wait each time until the
kernel has redrawn (the slider's readout moved by one, the readout line names the new layer or
head, and the heatmap's PNG bytes changed); then type a new priming text and press Enter: the
readout counts its characters and the heatmap changes again.
"""

import time

import pytest
from labdriver import require_browser
from test_browser_ch07 import PNG_DIGEST
from test_browser_chapters import open_widget, press_and_watch, screenshot_on_failure

pytestmark = pytest.mark.browser

CHAPTER = "chapters/11_transformer.ipynb"
PRIME = "JULIET: O Romeo, Romeo"


def state(widget):
    """What the widget shows: the two sliders' readouts, the readout line, and the heatmap's
    PNG (size, hash, is PNG)."""
    readouts = widget.locator(".widget-readout")
    return {"layer": readouts.nth(0).inner_text(), "head": readouts.nth(1).inner_text(),
            "readout": widget.locator(".mg-readout").first.inner_text(),
            "png": widget.locator("img").first.evaluate(PNG_DIGEST)}


def move(widget, slider, name):
    """Press an arrow key on a slider (left if it is at its maximum) and check the redraw."""
    handle = widget.locator(".noUi-handle").nth(slider)
    at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
    key = "ArrowLeft" if at_max else "ArrowRight"
    before, after = press_and_watch(widget, state, lambda before, after: (
        after["png"] != before["png"] and after["readout"] != before["readout"]), key=key, slider=slider)
    step = -1 if at_max else 1
    assert int(after[name]) == int(before[name]) + step, f"{key} did not move the {name} slider: {before} -> {after}"
    assert f"{name} {after[name]}" in after["readout"], f"the readout does not name the new {name}: {after}"
    assert after["png"] != before["png"] and after["png"][2], f"the heatmap did not change within 30 s: {before} -> {after}"
    return after


def test_the_layer_head_and_prime_of_the_attention_widget_redraw_its_heatmap(request, artifacts):
    require_browser()
    session = request.getfixturevalue("lab_session")
    with screenshot_on_failure(session, artifacts, "chapter-11-attention"):
        nb, widget = open_widget(session, CHAPTER, ".mg-attention-view", timeout_ms=180_000)
        first = state(widget)
        assert first["png"][2] and first["png"][0] > 1000, f"no heatmap in the widget: {first}"
        assert "characters: the last one attends most to" in first["readout"], first
        move(widget, 0, "layer")
        moved = move(widget, 1, "head")
        box = widget.locator("input[type='text']").first
        box.fill(PRIME)
        box.press("Enter")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            after = state(widget)
            if f"{len(PRIME)} characters" in after["readout"] and after["png"] != moved["png"]:
                break
            time.sleep(0.2)
        assert f"{len(PRIME)} characters" in after["readout"], f"the new prime was not read: {after}"
        assert after["png"] != moved["png"] and after["png"][2], f"the heatmap did not change: {after}"
    session.close(nb)
