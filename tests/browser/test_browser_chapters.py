"""Every chapter, run in a real JupyterLab in a real Chromium, as a learner runs it.

For each chapters/*.ipynb (found at collection time: a new chapter is tested as soon as it
lands), on a temporary copy, here or, for a chapter with a widget of its own to drive, in that
widget's test (``WIDGET_TESTS``, through ``open_widget``):

1. open it (workspace reset), wait until its real kernel is idle, Run All (JupyterLab's own
   command), wait until the run ended and the kernel is idle again;
2. every non-empty code cell ran, and no output is an ERROR. How an error is recognised: by
   the notebook model's ``output_type == "error"`` (what would be saved in the .ipynb and what
   nbval calls an error; only a cell tagged ``raises-exception``, which nbval and Run All
   both let fail, may show one), not by the DOM: in JupyterLab 4 an error output and a plain
   stderr stream render identically (``.jp-OutputArea-output[data-mime-type=
   "application/vnd.jupyter.stderr"]``, class ``jp-RenderedText``, no error class), so the
   DOM cannot tell a warning from a traceback. Stderr streams are allowed (a warning is not a
   failure here; nbval compares stored streams) unless they carry a traceback;
3. no disconnected or broken widget ("Error displaying widget", "model not found",
   ``.jupyter-widgets-error-widget``), and every widget output shows a live widget;
4. at least one graphviz SVG shows (an ``<img>`` whose SVG source is graphviz's, loaded, or an
   inline ``svg g.graph`` inside a widget) and at least one widget;
5. in chapters with an explore widget (``.mg-explore``): focus its first slider's
   ``.noUi-handle``, press an arrow key once, wait for the drawing to change, and check that
   every number in the drawing is what the ENGINE computes for the new slider value
   (computed in the same kernel by a probe cell appended to the page's notebook, which sets
   the slider's leaf and recomputes every op from scratch -- see kernel_probe.py);
6. in chapters with a step_through widget (``.mg-step-through``): click Step (once more
   first if nothing is highlighted yet) and check the highlight moved from one node to the
   node the widget's kernel side says is current, and the explanation advanced one step;
   for both kinds, every drawing and every control of the widget lies inside its output area
   (the page is as wide as a learner's screen: an output about 1,000 px wide), and a drawing
   with the controls above it fits in the window's height (see ``check_fits``);
7. the kernel is pytest's own Python and imports minigraph from the repo;
8. in the chapters of ``DRAWINGS_FIT`` (chapter 03's two-layer network was 2,133 and 2,599 px
   wide), every static ``mg.draw`` drawing is at most ``viz.FIT_WIDTH`` (840) px wide, so it
   fits an output 848 px wide (1280 x 800 with the file browser open), and carries a title;
9. every slider's handle (the element a keyboard moves, ``role="slider"``) has its slider's
   description as its accessible name (``aria-label``), set by minigraph's JupyterLab
   extension (``jupyter/widget-labels``: ipywidgets gives it none, nor the Play widget's icon
   buttons a name), and axe-core finds nothing critical or serious in the live widgets.

On failure a full-page screenshot is saved and its path is in the assertion message.
"""

import json
import os
import re
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

import kernel_probe
from labdriver import REPO, axe_source, require_browser

pytestmark = pytest.mark.browser

CHAPTERS = sorted(p.name for p in (REPO / "chapters").glob("*.ipynb"))
RUN_TIMEOUT_MS = 150_000            # Run All of one chapter (chapter 04 trains networks)
# Chapters whose widget has a test of its own: that test runs the chapter with every check
# below (``open_widget``), then drives the widget; each chapter runs once.
WIDGET_TESTS = {"05_handwritten_digits.ipynb": "test_browser_digits.py",
                "06_optimizers.ipynb": "test_browser_landscape.py",
                "07_recurrent_networks.ipynb": "test_browser_ch07.py",
                "09_char_rnn.ipynb": "test_browser_ch09.py",
                "10_attention.ipynb": "test_browser_ch10.py",
                "11_transformer.ipynb": "test_browser_ch11.py"}


def code_sources(chapter):
    nb = json.loads((REPO / "chapters" / chapter).read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def summary_of(cells):
    lines = []
    for c in cells:
        if c["type"] != "code":
            continue
        outs = ", ".join(o["type"] + (f"[{o['name']}]" if o["name"] else "") for o in c["outputs"])
        lines.append(f"  cell {c['index']}: [{c['count'] if c['count'] is not None else ' '}] {outs}")
    return "\n".join(lines)


@contextmanager
def screenshot_on_failure(session, artifacts, name):
    """Turn any failure inside into an AssertionError naming a full-page screenshot.

    Checks set ``session.focus`` (a CSS selector) to what they look at; it is scrolled into
    view first."""
    session.focus = None
    try:
        yield
    except Exception as e:   # noqa: BLE001 -- AssertionError, playwright timeouts, JS errors
        path = artifacts / f"{name}.png"
        page = session.page
        try:
            if page is None or page.is_closed():
                raise RuntimeError("no page open")
            artifacts.mkdir(parents=True, exist_ok=True)
            if session.focus:
                try:
                    page.locator(session.focus).first.scroll_into_view_if_needed(timeout=5_000)
                except Exception:   # noqa: BLE001 -- the screenshot matters more
                    pass
            page.screenshot(path=str(path), full_page=True, timeout=15_000)
            where = f"screenshot: {path}"
        except Exception as shot_error:   # noqa: BLE001
            where = f"(no screenshot: {shot_error})"
        console = "\n".join(session.console[-15:])
        log = session.lab.log_tail(15) if isinstance(e, TimeoutError) else ""
        session.discard()                 # the next chapter starts from a fresh page
        raise AssertionError(f"{type(e).__name__}: {e}\n{where}"
                             + (f"\nbrowser console:\n{console}" if console else "")
                             + (f"\n{log}" if log else "")) from e


def check_run(nb, run):
    nb.session.focus = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
    cells = nb.cells()
    not_run = [c["index"] for c in cells
               if c["type"] == "code" and c["source"].strip() and c["count"] is None]
    expected = {c["index"] for c in cells if "raises-exception" in (c.get("tags") or [])}
    errors = [f"cell {c['index']}: {o['ename']}: {o['evalue']}\n{strip_ansi(o['text'] or '')[-1500:]}"
              for c in cells if c["type"] == "code" and c["index"] not in expected
              for o in c["outputs"] if o["type"] == "error"]
    tracebacks = [f"cell {c['index']} (stderr): {o['text'][-1500:]}"
                  for c in cells if c["type"] == "code" for o in c["outputs"]
                  if o["type"] == "stream" and o["name"] == "stderr" and "Traceback" in (o["text"] or "")]
    assert not errors, "error outputs after Run All:\n" + "\n".join(errors)
    assert not tracebacks, "tracebacks on stderr after Run All:\n" + "\n".join(tracebacks)
    assert (run.get("ok") or expected) and not not_run, (
        f"Run All did not run every cell (result {run}); cells never run: {not_run}\n{summary_of(cells)}")
    return cells


def open_widget(session, chapter, selector, timeout_ms=RUN_TIMEOUT_MS):
    """Open ``chapter``, Run All and check it as every chapter (``check_chapter``), and return
    ``(nb, widget)``: the first element matching ``selector``, scrolled into view (and the
    screenshot's focus)."""
    nb = session.open(chapter)
    check_chapter(nb, Path(chapter).name, timeout_ms)
    session.focus = selector
    widget = nb.panel_locator().locator(selector).first
    widget.scroll_into_view_if_needed()
    return nb, widget


def press_and_watch(widget, state, done, key="ArrowRight", seconds=30, slider=0):
    """Press ``key`` on the handle of the widget's slider number ``slider`` (0: the first), then
    read ``state(widget)`` until ``done(before, after)`` (or ``seconds`` pass); return
    ``(before, after)``."""
    before = after = state(widget)
    handle = widget.locator(".noUi-handle").nth(slider)
    handle.focus()
    handle.press(key)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        after = state(widget)
        if done(before, after):
            break
        time.sleep(0.2)
    return before, after


def strip_ansi(text):
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def check_page(nb):
    nb.session.focus = ".jupyter-widgets-error-widget"
    report = nb.wait_widgets_rendered()
    assert not report["errorWidgets"] and not report["disconnected"], (
        f"broken widgets: {report['errorWidgets'] + report['disconnected']}")
    assert report["loading"] == 0, f"{report['loading']} widget(s) still 'Loading widget...'"
    assert report["renderedWidgetOutputs"] == report["widgetOutputs"], (
        f"only {report['renderedWidgetOutputs']} of {report['widgetOutputs']} widget outputs show a widget")
    assert report["graphvizImgs"] + report["graphvizInline"] >= 1, f"no graphviz SVG on the page: {report}"
    assert report["widgets"] >= 1, f"no widget on the page: {report}"
    return report


def compare_numbers(drawn, expected):
    """Differences between the numbers drawn in the SVG and the engine's, as readable lines."""
    problems = []
    for name, shown in drawn["nodes"].items():
        want = expected["nodes"].get(name)
        if want is None:
            problems.append(f"node {name!r} is drawn but not in the engine's graph")
            continue
        for field in ("value", "grad"):
            if shown[field] is not None and shown[field] != want[field]:
                problems.append(f"{name}.{field}: drawn {shown[field]!r}, engine {want[field]!r}")
    for name, shown in drawn["edges"].items():
        if shown["label"] is not None and name in expected["edges"] and shown["label"] != expected["edges"][name]:
            problems.append(f"edge {name}: drawn {shown['label']!r}, engine {expected['edges'][name]!r}")
    return problems


def slider_value(slider):
    """The value a slider shows: its readout text (ipywidgets formats it, here with 3
    significant digits), else the handle's aria-valuenow (rounded by noUiSlider)."""
    try:
        return float(slider["readout"].replace("\u2212", "-"))      # d3-format writes U+2212 minus
    except (TypeError, ValueError):
        return slider["now"]


def same_as_readout(value, shown, digits=3):
    """``value`` (the kernel's) rounds to ``shown`` (the browser's readout)."""
    if shown is None:
        return False
    return float(f"{value:.{digits}g}") == shown or abs(value - shown) <= 1e-9


def probe(nb, moved=None):
    """Run kernel_probe's cell at the end of the notebook; its report (see kernel_probe.py)."""
    return kernel_probe.parse(nb.append_and_run(kernel_probe.cell_source(moved))["outputs"])


def check_explore(nb):
    """Move the first slider of the first explore widget one step with the keyboard; the
    drawing must then show exactly the engine's numbers for the new slider value."""
    nb.session.focus = ".mg-explore"
    description = nb.explore(0)["sliders"][0]["description"]
    key, before = nb.move_slider(0, 0)             # returns once the drawing changed
    # The probe runs after every message the key press caused: the kernel handles the slider's
    # update before this execute request (one shell channel, in order), and its redraw reaches
    # the page before the probe's output (one iopub channel, in order). So the page read after
    # the probe shows the final drawing, not an intermediate one.
    report = probe(nb, {"description": description})
    after = nb.explore(0)
    moved_before, moved_after = before["sliders"][0], after["sliders"][0]
    shown = slider_value(moved_after)
    assert shown != slider_value(moved_before), f"{key} did not move the slider: {moved_after}"

    def numbers(d):
        return {k: (v["value"], v["grad"]) for k, v in d["numbers"]["nodes"].items()}

    assert numbers(after) != numbers(before), "the drawing's numbers did not change"
    candidates = [e for e in report["explorers"]
                  if e["expected"] is not None
                  and sorted(after["numbers"]["nodes"]) == e["nodes"]
                  and same_as_readout(e["sliders"][description], shown)]
    assert candidates, (f"no explore widget in the kernel has a slider {description!r} at {shown} "
                        f"(as the browser shows it) over the drawn nodes; kernel: {report['explorers']}")
    results = [compare_numbers(after["numbers"], c["expected"]) for c in candidates]
    assert any(not r for r in results), (
        f"after {key} on slider {description!r} ({moved_before['readout']} -> {moved_after['readout']}), "
        f"the drawing disagrees with the engine:\n  " + "\n  ".join(min(results, key=len)))


def click_step(nb):
    """Click the first step_through widget's Step button; wait until its drawing changed."""
    before = nb.step_through(0)
    nb.panel_locator().locator(".mg-step-through").first.get_by_role("button", name="Step", exact=True).click()
    try:
        nb.wait_page("(s => s && s.html !== arg)(window.__mgPage.stepThrough(node, 0))", before["html"])
    except Exception as e:
        raise AssertionError(f"clicking Step did not change the step_through drawing within 30 s "
                             f"(it says: {before['text'][:120]!r})") from e
    return before


def inside(inner, outer, slack=1.0):
    """The bounding box ``inner`` lies within ``outer`` (playwright boxes, page pixels)."""
    return (inner["x"] >= outer["x"] - slack and inner["y"] >= outer["y"] - slack
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack)


def check_fits(nb, selector):
    """Every widget ``selector`` shows its drawing and its controls (sliders, Play, buttons)
    inside its output area, with nothing to scroll sideways, and the drawing's bottom is at
    most one window's height below the top of the controls: both show at once."""
    nb.session.focus = selector
    window = nb.page.viewport_size
    widgets = nb.panel_locator().locator(selector)
    for i in range(widgets.count()):
        widget = widgets.nth(i)
        widget.scroll_into_view_if_needed()
        area = widget.locator("xpath=ancestor::div[contains(@class, 'jp-OutputArea-output')]").first
        box = area.bounding_box()
        assert 900 <= box["width"] <= 1010, f"the output area is {box['width']:.0f} px wide, not a learner's ~1,000"
        scroll = area.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert scroll[0] <= scroll[1] + 1, f"{selector} #{i} scrolls sideways: {scroll[0]} px in {scroll[1]}"
        drawing = widget.locator(".mg-graph svg").first.bounding_box()
        controls = widget.locator(".widget-slider, .widget-play, .widget-button")
        boxes = [controls.nth(k).bounding_box() for k in range(controls.count())]
        assert boxes, f"{selector} #{i} has no controls"
        outside = [b for b in [drawing, *boxes] if not inside(b, box)]
        assert not outside, f"{selector} #{i}: {outside} outside the output area {box}"
        top = min(b["y"] for b in boxes)
        assert drawing["y"] + drawing["height"] - top <= window["height"], (
            f"{selector} #{i}: the drawing ends {drawing['y'] + drawing['height'] - top:.0f} px under the "
            f"controls' top, more than the window's {window['height']} px")


DRAWINGS_FIT = ("03_backpropagation.ipynb",)


def check_static_drawings_fit(nb):
    """Every static drawing (JupyterLab shows an SVG output as an <img> at its own size) is at
    most FIT_WIDTH px wide and lies inside its output area, and its SVG has a <title> first."""
    from minigraph.viz import FIT_WIDTH
    drawings = nb.panel_locator().locator(".jp-RenderedSVG img")
    assert drawings.count() >= 2, f"{drawings.count()} static drawings"
    for i in range(drawings.count()):
        img = drawings.nth(i)
        img.scroll_into_view_if_needed()
        area = img.locator("xpath=ancestor::div[contains(@class, 'jp-OutputArea-output')]").first.bounding_box()
        box = img.bounding_box()
        titled = img.evaluate("i => /^<svg[^>]*>\\s*<title>[^<]+<\\/title>/.test(decodeURIComponent("
                              "i.src.slice(i.src.indexOf(',') + 1)).replace(/^[^]*?(<svg)/, '$1'))")
        assert box["width"] <= FIT_WIDTH + 1 and inside(box, area), f"drawing {i + 1}: {box} in {area}"
        assert titled, f"drawing {i + 1} has no <title> first in its SVG"


def check_step_through(nb):
    """Click Step: the highlight moves from the node of the last step to the node the widget's
    kernel side says is now current, and the explanation advances by one step. (At the start
    nothing is highlighted, so one Step first makes a highlight that can then move.)"""
    nb.session.focus = ".mg-step-through"
    if not nb.step_through(0)["highlighted"]:
        click_step(nb)
    before = click_step(nb)
    report = probe(nb)
    after = nb.step_through(0)                     # read after the probe: see check_explore
    assert before["highlighted"] and after["highlighted"] and after["highlighted"] != before["highlighted"], (
        f"the highlight did not move: {before['highlighted']} -> {after['highlighted']}")
    m_before = re.search(r"step (\d+) of (\d+)", before["text"])
    m_after = re.search(r"step (\d+) of (\d+)", after["text"])
    assert m_before and m_after and int(m_after.group(1)) == int(m_before.group(1)) + 1, (
        f"the explanation did not advance one step: {before['text'][:80]!r} -> {after['text'][:80]!r}")
    position = int(m_after.group(1))
    currents = {s["current"] for s in report["steppers"] if s["position"] == position}
    assert set(after["highlighted"]) & currents, (
        f"highlighted {after['highlighted']} but the kernel's step_through at step {position} is at {currents}")


# Slider handles (role="slider") whose accessible name is not their widget's description:
# [name, description] of each. ipywidgets gives a handle none; minigraph's JupyterLab extension
# (jupyter/widget-labels) names it after the description.
MISNAMED_HANDLES = """[...node.querySelectorAll('.widget-slider .noUi-handle[role="slider"]')]
  .map(h => [h.getAttribute('aria-label'),
             ((h.closest('.widget-slider').querySelector('.widget-label') || {}).textContent || '').trim()])
  .filter(([name, description]) => !name || name !== description)"""
# axe-core on the live widgets only (JupyterLab's own page is not the course's to fix)
AXE_WIDGETS = """async () => {
    const found = await axe.run({include: [['.jupyter-widgets']]}, {});
    return found.violations.filter(v => v.impact === 'critical' || v.impact === 'serious')
        .map(v => `${v.impact} ${v.id} (${v.nodes.length}): ${v.nodes[0].html.slice(0, 150)}`);
}"""


def check_accessible(nb):
    """9. every slider handle on the page is named after its slider's description, and axe-core
    finds nothing critical or serious in the live widgets (a control without a name, a picture
    without a text alternative)."""
    nb.session.focus = ".jupyter-widgets"
    try:
        nb.wait_page(f"({MISNAMED_HANDLES}).length === 0", timeout_ms=5_000)
    except Exception:       # noqa: BLE001 -- the assertion below says what is wrong
        pass
    misnamed = nb.page_js(MISNAMED_HANDLES)
    assert not misnamed, f"slider handles without their description as accessible name [name, description]: {misnamed}"
    if not nb.page.evaluate("() => typeof axe !== 'undefined'"):
        nb.page.add_script_tag(content=axe_source())
    found = nb.page.evaluate(AXE_WIDGETS)
    assert not found, "axe-core, in the live widgets: critical or serious violations\n" + "\n".join(found)


def check_chapter(nb, chapter, timeout_ms=RUN_TIMEOUT_MS):
    """Run All of an open chapter and checks 2-9 of this module's docstring."""
    source = code_sources(chapter)
    check_run(nb, nb.run_all(timeout_ms=timeout_ms))
    report = check_page(nb)
    check_accessible(nb)
    if "explore(" in source:
        assert report["explore"] >= 1, "the chapter calls explore() but no .mg-explore widget shows"
        check_explore(nb)
        check_fits(nb, ".mg-explore")
    if "step_through(" in source:
        assert report["stepThrough"] >= 1, "the chapter calls step_through() but no .mg-step-through shows"
        check_step_through(nb)
        check_fits(nb, ".mg-step-through")
    if chapter in DRAWINGS_FIT:
        check_static_drawings_fit(nb)
    kernel = probe(nb)
    assert (kernel["python"], kernel["prefix"]) == (os.path.realpath(sys.executable), os.path.realpath(sys.prefix)), (
        f"the notebook's kernel runs {kernel['python']} in {kernel['prefix']}, "
        f"not pytest's Python {sys.executable} in {sys.prefix}")
    assert kernel["minigraph"] == str((REPO / "minigraph").resolve()), (
        f"the kernel imported minigraph from {kernel['minigraph']}, not from the repo")


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c not in WIDGET_TESTS])
def test_chapter_in_jupyterlab(request, artifacts, chapter):
    require_browser()                     # a missing Chromium FAILS here, with the install command
    session = request.getfixturevalue("lab_session")
    with screenshot_on_failure(session, artifacts, f"chapter-{chapter[:-6]}"):
        nb = session.open(f"chapters/{chapter}")
        check_chapter(nb, chapter)
    session.close(nb)


def test_every_chapter_with_a_widget_test_is_checked_there():
    """A chapter of ``WIDGET_TESTS`` is run once, by its widget's test, which opens it through
    ``open_widget``: every check above, then its widget's."""
    for chapter, module in WIDGET_TESTS.items():
        assert chapter in CHAPTERS, f"WIDGET_TESTS names {chapter}, which is not a chapter"
        text = (Path(__file__).parent / module).read_text(encoding="utf-8")
        assert f'CHAPTER = "chapters/{chapter}"' in text and "open_widget(session, CHAPTER" in text, (
            f"{module} does not open {chapter} through open_widget")
