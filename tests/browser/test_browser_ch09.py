"""Chapter 09 in a real JupyterLab: the sampler's chart and sample follow its controls together.

After Run All (no error output, as for every chapter), in the ``.mg-charlm-sampler`` widget:

1. the chart for the default prime is worth looking at: its second bar is at least a fifth as
   tall as its first (after "ROMEO:" alone one bar, the newline, held almost everything);
2. the "temperature" label shows in full (not cut to "temperat…");
3. two quick arrow presses on the temperature slider (0.80 -> 0.90): once the page settles,
   the chart's title, the line over the sample and the slider's readout name the same
   temperature, and the sample still starts with the prime;
4. a prime with a newline typed in the text area (Tab leaves the box) is what the sample
   starts with;
5. a character the model never saw shows its message, and neither the old chart nor the old
   sample stays on the page.
"""

import re
import time

import pytest
from labdriver import require_browser
from test_browser_chapters import open_widget, screenshot_on_failure

pytestmark = pytest.mark.browser

CHAPTER = "chapters/09_char_rnn.ipynb"
TYPED = "JULIET:\nO"

BARS = """w => [...w.querySelectorAll('svg g[id^="mg-bar-"]')].map(g => g.getBBox().height)"""


def state(widget):
    """What the sampler shows: the temperature readout, the chart's title, the line over the
    sample, the sample, the bars' heights and any error message."""
    page = widget.locator(".mg-charlm-page").first

    def first(texts):                  # the all_* reads never wait: the page may change between
        return texts[0] if texts else None      # a count and a read (a chart an error replaced)

    return {"temperature": widget.locator(".widget-readout").first.inner_text(),
            "title": first(page.locator("svg text", has_text="at temperature").all_text_contents()),
            "line": first(page.locator(".mg-readout").all_inner_texts()),
            "sample": first(page.locator("pre.charlm-sample").all_text_contents()),
            "bars": widget.evaluate(BARS),
            "error": first(page.locator(".mg-error").all_inner_texts())}


def temperatures(shown):
    """The temperatures named by the readout, the chart's title and the line over the sample."""
    found = [re.search(r"temperature ([\d.]+)", shown[k] or "") for k in ("title", "line")]
    return [float(shown["temperature"])] + [float(m.group(1)) if m else None for m in found]


def wait_for(widget, done, seconds=60):
    """``state(widget)`` once ``done(state)`` holds and the page stayed the same for 2 s."""
    deadline, last, since = time.monotonic() + seconds, None, time.monotonic()
    while time.monotonic() < deadline:
        now = state(widget)
        if now != last:
            last, since = now, time.monotonic()
        elif done(now) and time.monotonic() - since >= 2:
            break
        time.sleep(0.2)
    return last


def test_the_sampler_shows_chart_and_sample_of_one_setting_and_clears_on_an_error(request, artifacts):
    require_browser()
    session = request.getfixturevalue("lab_session")
    with screenshot_on_failure(session, artifacts, "chapter-09-sampler"):
        nb, widget = open_widget(session, CHAPTER, ".mg-charlm-sampler", timeout_ms=180_000)
        first = wait_for(widget, lambda s: s["sample"] is not None)
        assert first["sample"].startswith("ROMEO:\n") and len(first["sample"]) > 100, first
        bars = sorted(first["bars"], reverse=True)
        assert len(bars) == 12 and bars[1] >= 0.2 * bars[0], f"one bar holds almost everything: {bars}"
        assert temperatures(first) == [0.8] * 3, first

        label = widget.locator(".widget-hslider .widget-label").first
        assert label.inner_text() == "temperature" and label.evaluate("e => e.scrollWidth <= e.clientWidth"), (
            "the temperature label is cut")

        handle = widget.locator(".noUi-handle").first
        handle.focus()
        handle.press("ArrowRight")
        handle.press("ArrowRight")
        moved = wait_for(widget, lambda s: s["temperature"] == "0.90" and temperatures(s) == [0.9] * 3)
        assert temperatures(moved) == [0.9] * 3, f"chart, sample and slider disagree: {moved}"
        assert moved["sample"].startswith("ROMEO:\n") and moved["sample"] != first["sample"], moved

        box = widget.locator("textarea").first
        box.fill(TYPED)
        box.press("Tab")                               # leaving the box sends it
        typed = wait_for(widget, lambda s: (s["sample"] or "").startswith(TYPED))
        assert typed["sample"].startswith(TYPED), f"the sample does not start with the typed prime: {typed}"
        assert "JULIET" in typed["title"] and temperatures(typed) == [0.9] * 3, typed

        box.fill("ROMEO€")
        box.press("Tab")
        wrong = wait_for(widget, lambda s: s["error"] is not None)
        assert wrong["error"] and "'€'" in wrong["error"], f"no message for an unknown character: {wrong}"
        assert (wrong["title"], wrong["sample"], wrong["bars"]) == (None, None, []), (
            f"the old chart or sample stayed on the page: {wrong}")
    session.close(nb)
