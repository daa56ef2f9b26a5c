"""Chapter 07 in a real JupyterLab: the spectral-radius slider of ``gradient_flow`` moves the plot.

After Run All (no error output, as for every chapter), focus the slider of the first
``.mg-gradient-flow`` widget, press an arrow key once, and wait until the kernel has redrawn:
the slider's readout moved, the readout line (the ratio ||dL/dh_1|| / ||dL/dh_T||) changed, and
the plot's PNG bytes changed (read through the page, not only the image's URL, which
ipywidgets renews on every update).
"""

import pytest
from labdriver import require_browser
from test_browser_chapters import open_widget, press_and_watch, screenshot_on_failure

pytestmark = pytest.mark.browser

CHAPTER = "chapters/07_recurrent_networks.ipynb"
PNG_DIGEST = """async img => {
    const bytes = new Uint8Array(await (await fetch(img.src)).arrayBuffer());
    let h = 0;
    for (const b of bytes) h = (h * 31 + b) >>> 0;
    return [bytes.length, h, bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47];
}"""


def state(widget):
    """What the widget shows: slider readout, readout line, and the plot's PNG (size, hash, is PNG)."""
    return {"slider": widget.locator(".widget-readout").first.inner_text(),
            "readout": widget.locator(".mg-readout").first.inner_text(),
            "png": widget.locator("img").first.evaluate(PNG_DIGEST)}


def test_the_spectral_radius_slider_moves_the_gradient_plot(request, artifacts):
    require_browser()
    session = request.getfixturevalue("lab_session")
    with screenshot_on_failure(session, artifacts, "chapter-07-gradient-flow"):
        nb, widget = open_widget(session, CHAPTER, ".mg-gradient-flow")
        before, after = press_and_watch(widget, state, lambda before, after: (
            after["readout"] != before["readout"] and after["png"] != before["png"]))
        assert before["png"][2] and before["png"][0] > 1000, f"no plot in the widget: {before}"
        assert after["slider"] != before["slider"], f"ArrowRight did not move the slider: {before} -> {after}"
        assert after["readout"] != before["readout"], f"the readout did not change: {before['readout']!r}"
        assert after["png"] != before["png"] and after["png"][2], (
            f"the plot did not change within 30 s: {before['png']} -> {after['png']}")
        assert before["slider"] == "1.00" and after["slider"] == "1.05", (before["slider"], after["slider"])
    session.close(nb)
