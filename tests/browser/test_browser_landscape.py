"""Chapter 06's Race widget in a real JupyterLab: a slider move redraws the trajectories.

Run All on a copy of chapters/06_optimizers.ipynb, with every check of a chapter
(test_browser_chapters.py's ``open_widget``); focus the "start x" slider of the first
``.mg-race`` widget, press an arrow key once, and wait until the picture (the PNG of paths,
loss curves and rate map) changes. Then the page must show what the kernel computed: a probe
cell finds the Race widget with ``gc`` and reports its start and readout, which must match the
slider the page shows and the table the page shows, and its paths must start at that point.
"""

import json
import re

import pytest

from labdriver import require_browser
from test_browser_chapters import open_widget, screenshot_on_failure

pytestmark = pytest.mark.browser

CHAPTER = "chapters/06_optimizers.ipynb"

PAGE_RACE = """(node => {
  const box = node.querySelector('.mg-race');
  if (!box) return null;
  const img = box.querySelector('.mg-landscape');
  const sliders = Array.from(box.querySelectorAll('.widget-slider')).map(s => ({
      description: (s.querySelector('.widget-label') || {}).textContent,
      readout: (s.querySelector('.widget-readout') || {}).textContent}));
  return {src: img ? img.getAttribute('src') : null,
          readout: (box.querySelector('.mg-readout') || {}).innerText || null, sliders};
})(node)"""

PROBE = """
import gc, json
from minigraph import landscape
races = [o for o in gc.get_objects() if isinstance(o, landscape.Race)]
print("MG-RACE " + json.dumps([{"x0": r.controls["x0"].value, "y0": r.controls["y0"].value,
                                "readout": r.readout.value,
                                "starts": {n: list(p[0][0]) for n, p in r.paths.items()}} for r in races]))
"""


def words(html_or_text):
    """The words of an HTML fragment or a DOM text, tags dropped, spaces normalised."""
    return " ".join(re.sub(r"<[^>]+>", " ", html_or_text).split())


def number(readout):
    return float(readout.replace("\u2212", "-"))             # d3-format writes U+2212 minus


def test_moving_the_start_slider_redraws_the_trajectories(request, artifacts):
    require_browser()
    session = request.getfixturevalue("lab_session")
    with screenshot_on_failure(session, artifacts, "chapter-06-race"):
        nb, _ = open_widget(session, CHAPTER, ".mg-race")
        nb.wait_widgets_rendered()
        nb.wait_page(f"(r => r && !!r.src)({PAGE_RACE})")
        before = nb.page_js(PAGE_RACE)
        index = [s["description"] for s in before["sliders"]].index("start x")
        handle = nb.panel_locator().locator(".mg-race .widget-slider .noUi-handle").nth(index)
        handle.focus()
        handle.press("ArrowRight")
        nb.wait_page(f"(r => r && r.src !== arg)({PAGE_RACE})", before["src"])
        nb.wait_page(f"(r => r && r.readout !== arg)({PAGE_RACE})", before["readout"])
        outputs = nb.append_and_run(PROBE)["outputs"]
        after = nb.page_js(PAGE_RACE)
        shown_x = number(after["sliders"][index]["readout"])
        assert shown_x == pytest.approx(number(before["sliders"][index]["readout"]) + 0.05)
        line = next(o["text"] for o in outputs if o["type"] == "stream" and "MG-RACE" in (o["text"] or ""))
        races = json.loads(line.split("MG-RACE ", 1)[1])
        mine = [r for r in races if r["x0"] == pytest.approx(shown_x)]
        assert mine, f"no Race in the kernel starts at x = {shown_x}: {races}"
        race = mine[0]
        assert words(after["readout"]) == words(race["readout"])
        assert all(start == pytest.approx([race["x0"], race["y0"]]) for start in race["starts"].values())
    session.close(nb)
