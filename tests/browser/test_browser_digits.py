"""Chapter 05's digit browser in a real JupyterLab, in a real Chromium, as a learner uses it.

Open the chapter (a temporary copy), Run All, then:

1. press ArrowRight on the browser's slider: the caption must name the next test digit, and
   the ten probability bars and the drawn network's ``p(0)`` ... ``p(9)`` nodes must show the
   probabilities the ENGINE gives that digit. The expected numbers come from a probe cell run in
   the same kernel, which reads them from a separate forward pass over all test images at once
   (``DigitBrowser.all_probs``), not from the widget's own update path;
2. click "next mistake": the same checks, and the digit shown is one the network gets wrong.

The chapter's general checks (every cell ran, no error, widgets alive) are
test_browser_chapters.py's, run here first (``open_widget``) so that the chapter runs once; this
file adds what is particular to the digit browser.
"""

import json
import re

import pytest

from labdriver import require_browser
from test_browser_chapters import open_widget, screenshot_on_failure

pytestmark = pytest.mark.browser

CHAPTER = "chapters/05_handwritten_digits.ipynb"

READ = """(() => {
  const box = node.querySelector('.mg-digit-browser');
  if (!box) return null;
  const handle = box.querySelector('.noUi-handle');
  return {
    bars: Array.from(box.querySelectorAll('.mg-probabilities g.mg-bar .mg-p')).map(t => t.textContent.trim()),
    html: (box.querySelector('.mg-probabilities') || {}).innerHTML || '',
    caption: ((box.querySelector('.mg-caption') || {}).textContent || '').trim(),
    slider: handle ? parseFloat(handle.getAttribute('aria-valuenow')) : null,
    drawing: window.__mgPage.graphNumbers(box.querySelector('.mg-view')),
  };
})()"""

PROBE = """
import gc, json
from minigraph import viz
from minigraph.chapters.digits import DigitBrowser
for b in [o for o in gc.get_objects() if isinstance(o, DigitBrowser)]:
    p = b.all_probs[b.index]
    print("MG-DIGITS " + json.dumps({
        "index": b.index, "label": int(b.labels[b.index]), "guess": int(p.argmax()),
        "bars": [f"{100 * q:.1f} %" for q in p],
        "nodes": {f"p({k})": viz.format_value(q) for k, q in enumerate(p)}}))
"""


def read(nb):
    return nb.page_js(READ)


def probe(nb):
    outputs = nb.append_and_run(PROBE)["outputs"]
    reports = [json.loads(line[len("MG-DIGITS "):]) for o in outputs if o.get("name") == "stdout"
               for line in (o.get("text") or "").splitlines() if line.startswith("MG-DIGITS ")]
    assert reports, f"the probe found no DigitBrowser in the kernel: {outputs}"
    return reports


def wait_changed(nb, before, what):
    try:
        nb.wait_page("(s => s && s.html !== arg)(" + READ + ")", before["html"])
    except Exception as e:
        raise AssertionError(f"{what}: the probability bars did not change within 30 s "
                             f"(caption: {before['caption']!r})") from e


def check_shows(nb, shown, reports):
    """The page shows one of the kernel's digit browsers exactly: index, bars, drawn p(k)."""
    index = int(re.search(r"test digit (\d+)", shown["caption"]).group(1))
    report = next((r for r in reports if r["index"] == index), None)
    assert report, f"the page shows test digit {index}, the kernel's browsers are at {[r['index'] for r in reports]}"
    assert shown["slider"] == index, f"the slider shows {shown['slider']}, the caption digit {index}"
    assert shown["bars"] == report["bars"], f"bars {shown['bars']} but the engine gives {report['bars']}"
    assert f"true digit {report['label']}" in shown["caption"] and f"says {report['guess']}" in shown["caption"]
    drawn = {name: v["value"] for name, v in shown["drawing"]["nodes"].items() if name.startswith("p(")}
    assert drawn == report["nodes"], f"the drawing shows {drawn}, the engine {report['nodes']}"
    return report


def test_the_digit_browser_follows_its_slider_and_buttons(request, artifacts):
    require_browser()
    session = request.getfixturevalue("lab_session")
    with screenshot_on_failure(session, artifacts, "digit-browser"):
        nb, _ = open_widget(session, CHAPTER, ".mg-digit-browser")
        nb.wait_page("!!node.querySelector('.mg-digit-browser .mg-probabilities g.mg-bar')")
        first = read(nb)
        assert len(first["bars"]) == 10 and "test digit 0 " in first["caption"], first

        handle = nb.panel_locator().locator(".mg-digit-browser .noUi-handle").first
        handle.focus()
        handle.press("ArrowRight")
        wait_changed(nb, first, "after ArrowRight on the slider")
        moved = check_shows(nb, read(nb), probe(nb))
        assert moved["index"] == 1

        before = read(nb)
        nb.panel_locator().locator(".mg-digit-browser").get_by_role("button", name="next mistake").click()
        wait_changed(nb, before, "after clicking 'next mistake'")
        mistake = check_shows(nb, read(nb), probe(nb))
        assert mistake["index"] > 1 and mistake["guess"] != mistake["label"], mistake
    session.close(nb)
