"""Chapter 10 in a real JupyterLab: the alignment explorer follows its controls.

After Run All (no error output, as for every chapter), in the ``.mg-translate-explorer``
widget: choose another example in its menu, then type a date in its text box and press Enter.
Each time, wait until the kernel has answered: the readout names the new source and its
translation, and the heatmap's PNG bytes changed (read through the page, not only the image's
URL, which ipywidgets renews on every update). The typed date is written in one of the task's
formats, so the model reads it and the readout shows its translation; the example menu then
says "(type below)", and typing an example's date selects it in the menu. The heatmap shows
at its natural size (the PNG's own pixels, not stretched to the output's width) inside the
output area. An empty date says so, with no broken-image icon: every image on the widget that
is displayed has loaded pixels.
"""

import time

import pytest
from labdriver import require_browser
from test_browser_ch07 import PNG_DIGEST
from test_browser_chapters import open_widget, screenshot_on_failure

pytestmark = pytest.mark.browser

CHAPTER = "chapters/10_attention.ipynb"
TYPED = "Fri 1 Jun 2001"


def state(widget):
    """What the explorer shows: the chosen example, the readout, and the heatmap's PNG."""
    return {"example": widget.locator("select").first.input_value(),
            "readout": widget.locator(".mg-readout").first.inner_text(),
            "png": widget.locator("img").first.evaluate(PNG_DIGEST)}


BROKEN_IMAGES = """w => [...w.querySelectorAll('img')].filter(i => getComputedStyle(i).display !== 'none'
                                                         && !(i.complete && i.naturalWidth > 0)).length"""
NATURAL = "i => [i.clientWidth, i.clientHeight, i.naturalWidth, i.naturalHeight]"


def check_natural_size(widget):
    """The heatmap is drawn with its own pixels (not stretched) inside the output area."""
    image = widget.locator("img").first
    shown_w, shown_h, natural_w, natural_h = image.evaluate(NATURAL)
    assert natural_w > 0 and abs(shown_w - natural_w) <= 1 and abs(shown_h - natural_h) <= 1, (
        f"the heatmap is stretched: {natural_w}x{natural_h} px shown as {shown_w}x{shown_h}")
    area = widget.locator("xpath=ancestor::div[contains(@class, 'jp-OutputArea-output')]").first.bounding_box()
    box = image.bounding_box()
    assert box["x"] + box["width"] <= area["x"] + area["width"] + 1, f"the heatmap {box} leaves the output {area}"


def wait_for(widget, before, seconds=30):
    """``state(widget)`` once both the readout and the heatmap differ from ``before``."""
    deadline = time.monotonic() + seconds
    after = state(widget)
    while time.monotonic() < deadline and not (after["readout"] != before["readout"]
                                               and after["png"] != before["png"]):
        time.sleep(0.2)
        after = state(widget)
    return after


def test_the_alignment_explorer_redraws_for_a_chosen_and_a_typed_date(request, artifacts):
    require_browser()
    session = request.getfixturevalue("lab_session")
    with screenshot_on_failure(session, artifacts, "chapter-10-alignment"):
        nb, widget = open_widget(session, CHAPTER, ".mg-translate-explorer", timeout_ms=180_000)
        first = state(widget)
        assert first["png"][2] and first["png"][0] > 1000, f"no heatmap in the widget: {first}"
        assert "→" in first["readout"], f"the readout shows no translation: {first['readout']!r}"
        check_natural_size(widget)

        menu = widget.locator("select").first
        options = menu.locator("option").all_inner_texts()
        other = options[2]                           # [0] is "(type below)", [1] the first shown
        menu.select_option(label=other)
        chosen = wait_for(widget, first)
        assert chosen["example"] == other, f"the menu did not take {other!r}: {chosen}"
        assert chosen["readout"].startswith(repr(other)), (
            f"the readout does not name the chosen example {other!r}: {chosen['readout']!r}")
        assert chosen["png"] != first["png"] and chosen["png"][2], (
            f"the heatmap did not change within 30 s: {first['png']} -> {chosen['png']}")

        box = widget.locator("input[type=text]").first
        box.fill(TYPED)
        box.press("Enter")
        typed = wait_for(widget, chosen)
        assert typed["readout"].startswith(f"{TYPED!r} → "), (
            f"the readout does not show the typed date's translation: {typed['readout']!r}")
        assert typed["png"] != chosen["png"] and typed["png"][2], (
            f"the heatmap did not change for the typed date within 30 s: {chosen['png']} -> {typed['png']}")
        assert typed["example"] == "(type below)", f"the menu still shows an old example: {typed}"
        check_natural_size(widget)

        example = options[3].replace("\xa0", " ")     # (the menu writes its spaces as nbsp)
        box.fill(example)                            # an example's date, typed
        box.press("Enter")
        again = wait_for(widget, typed)
        assert again["example"].replace("\xa0", " ") == example, f"typing an example's date did not select it: {again}"

        box.fill("")
        box.press("Enter")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "empty" not in state(widget)["readout"]:
            time.sleep(0.2)
        assert "empty" in state(widget)["readout"], f"no message for an empty date: {state(widget)}"
        assert widget.evaluate(BROKEN_IMAGES) == 0, "a broken-image icon shows for the empty date"
    session.close(nb)
