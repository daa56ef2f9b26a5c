"""Chapter 11 in a real JupyterLab: the attention widget's layer, head and priming text redraw its heatmap.

After Run All (no error output, as for every chapter), in the ``.mg-attention-view`` widget:
press an arrow key on the layer slider, then on the head slider, and wait each time until the
kernel has redrawn (the slider's readout moved by one, the readout line names the new layer or
head, and the heatmap's PNG bytes changed); then type a new priming text in the prime box (a
text area at least 400 px wide; Tab leaves it and sends the text): the readout counts its
characters and the heatmap changes again, drawn at its natural size. A text of 150 characters
with newlines: the readout says it shows only the last 64. A character the model cannot read:
its message, and the previous heatmap is gone (no broken-image icon either). The LSTM-vs-GPT
samples' table has its text left-aligned.
"""

import time

import pytest
from labdriver import require_browser
from test_browser_ch07 import PNG_DIGEST
from test_browser_ch10 import BROKEN_IMAGES, check_natural_size
from test_browser_chapters import open_widget, press_and_watch, screenshot_on_failure

pytestmark = pytest.mark.browser

CHAPTER = "chapters/11_transformer.ipynb"
PRIME = "JULIET: O Romeo, Romeo"
LONG = ("KING RICHARD:\nA horse! a horse! my kingdom for a horse!\n\nCATESBY:\nWithdraw, my lord; "
        "I'll help you to a horse.\n\nKING RICHARD:\nSlave, I have set my life upon a cast")[:150]


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


def send(widget, text, done, seconds=30):
    """Type ``text`` in the prime box, leave it (Tab), and wait until ``done(state)``."""
    box = widget.locator("textarea").first
    box.fill(text)
    box.press("Tab")
    deadline = time.monotonic() + seconds
    after = state(widget)
    while time.monotonic() < deadline and not done(after):
        time.sleep(0.2)
        after = state(widget)
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
        width = widget.locator("textarea").first.bounding_box()["width"]
        assert width >= 400, f"the prime box is {width:.0f} px wide"
        after = send(widget, PRIME, lambda s: f"{len(PRIME)} characters" in s["readout"] and s["png"] != moved["png"])
        assert f"{len(PRIME)} characters" in after["readout"], f"the new prime was not read: {after}"
        assert after["png"] != moved["png"] and after["png"][2], f"the heatmap did not change: {after}"
        check_natural_size(widget)

        long = send(widget, LONG, lambda s: "of 150 characters" in s["readout"])
        assert "the last 64 of 150 characters" in long["readout"], f"no word that only 64 are shown: {long}"

        wrong = send(widget, "ROMEO€", lambda s: "€" in s["readout"])
        assert "€" in wrong["readout"] and "attends most" not in wrong["readout"], wrong
        assert widget.locator("img").first.evaluate("i => getComputedStyle(i).display") == "none", (
            "the previous heatmap stayed under the message")
        assert widget.evaluate(BROKEN_IMAGES) == 0, "a broken-image icon shows"

        cells = nb.panel_locator().locator(".mg-side-by-side td")
        assert cells.count() == 2, "no LSTM-vs-GPT table"
        aligns = [cells.nth(k).evaluate("e => getComputedStyle(e).textAlign") for k in range(2)]
        assert aligns == ["left", "left"], f"the samples' table is aligned {aligns}"
    session.close(nb)
