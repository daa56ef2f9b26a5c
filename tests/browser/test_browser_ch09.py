"""Chapter 09 in a real JupyterLab: the temperature slider of the sampler writes a new sample.

After Run All (no error output, as for every chapter), focus the first slider (temperature) of
the ``.mg-charlm-sampler`` widget, press an arrow key once, and wait until the kernel has
written again: the slider's readout moved by one step (0.80 -> 0.85) and the sample's text
changed (same seed, another temperature: another draw), still starting with the priming text.
"""

import pytest
from labdriver import require_browser
from test_browser_chapters import open_widget, press_and_watch, screenshot_on_failure

pytestmark = pytest.mark.browser

CHAPTER = "chapters/09_char_rnn.ipynb"


def state(widget):
    """What the sampler shows: the temperature readout and the sample's text."""
    return {"temperature": widget.locator(".widget-readout").first.inner_text(),
            "sample": widget.locator("pre.charlm-sample").first.inner_text()}


def test_the_temperature_slider_writes_a_new_sample(request, artifacts):
    require_browser()
    session = request.getfixturevalue("lab_session")
    with screenshot_on_failure(session, artifacts, "chapter-09-sampler"):
        nb, widget = open_widget(session, CHAPTER, ".mg-charlm-sampler", timeout_ms=180_000)
        before, after = press_and_watch(widget, state, lambda before, after: after["sample"] != before["sample"])
        assert before["sample"].startswith("ROMEO:") and len(before["sample"]) > 100, before
        assert (before["temperature"], after["temperature"]) == ("0.80", "0.85"), (before, after)
        assert after["sample"] != before["sample"], f"the sample did not change within 30 s: {before}"
        assert after["sample"].startswith("ROMEO:"), f"the new sample lost its priming text: {after}"
    session.close(nb)
