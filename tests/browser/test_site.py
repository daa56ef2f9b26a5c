"""The course site (`make site`) in headless Chromium: built from the committed notebooks into a
temporary folder, served over HTTP on 127.0.0.1, every page opened.

- every page loads with no console error and no failed request, and asks for nothing outside
  the site (no CDN: the site reads offline);
- every image and inline SVG is there (an <img> that failed to load has naturalWidth 0);
- every internal link points at a page and an anchor that exist;
- chapter 03 and chapter 11 show their graphviz drawings and the static picture of their
  widgets (chapter 03's explorer with its drawn network, chapter 11's attention heatmap);
- math is typeset by the MathJax that ships with the site, and the search page finds a chapter;
- axe-core (the accessibility engine of browsers' developer tools, shipped as axe.min.js by the
  axe-playwright-python package, read from disk) finds nothing critical or serious: on four
  pages in `make test`, on the home page, the 12 chapters and 3 exercise pages with
  MINIGRAPH_AXE_ALL=1 (about 15 s a page);
- every drawing is named (role="img", its title) and its text reads at 11 px or more, inside
  its own box; no page scrolls sideways on a 390 x 844 phone; the site has a favicon;
- the home page links the repository and Binder of the owner/name it was built for (the test
  builds with --repository; `make site` takes course.toml's).

The build needs the [site] extra (Sphinx, myst-nb, the theme, django-static-mathjax); without
it the test fails and names the install command. Building takes 20-30 s on 2 cores.
"""

import functools
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from labdriver import REPO, Browser, axe_source, require_browser  # noqa: E402

pytestmark = pytest.mark.browser
SITE_TOOLS = ("sphinx", "myst_nb", "sphinx_book_theme", "mathjax")
BUILT_FOR = "example-owner/minigraph"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = [name for name in SITE_TOOLS if importlib.util.find_spec(name) is None]
    if missing:
        pytest.fail(f"the site's tools are missing ({', '.join(missing)}): pip install -e '.[site]' "
                    "(`make test` installs them with [dev])", pytrace=False)
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "build_site.py"), "--repository", BUILT_FOR, str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"make site failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    require_browser()
    with Browser(home=tmp_path_factory.mktemp("chromium-home")) as browser:
        yield browser


@pytest.fixture
def page(browser):
    page = browser.new_page(width=1300, height=1000)
    yield page
    page.context.close()


def pages(site):
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if not p.relative_to(site).parts[0].startswith("_"))


class _Links(HTMLParser):
    """Every href and src of a page (with whether the page loads it: a script, a stylesheet,
    a picture; links to read elsewhere are not loaded), and every id it defines."""

    def __init__(self):
        super().__init__()
        self.targets, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if attrs.get("src"):
            self.targets.append((attrs["src"], True))
        if attrs.get("href"):
            self.targets.append((attrs["href"], tag == "link"))


def _parse(path):
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_the_site_has_a_page_per_notebook_and_a_search_page(site):
    names = pages(site)
    notebooks = [f"{folder}/{p.stem}.html" for folder in ("chapters", "exercises")
                 for p in sorted((REPO / folder).glob("*.ipynb"))]
    assert len(notebooks) >= 24 and set(notebooks) <= set(names), set(notebooks) - set(names)
    assert {"index.html", "search.html"} <= set(names)


def test_no_broken_internal_link_and_nothing_from_outside(site):
    broken, external = [], []
    parsed = {name: _parse(site / name) for name in pages(site)}
    for name, parser in parsed.items():
        for target, loaded in parser.targets:
            parts = urlsplit(target)
            if parts.scheme in ("http", "https") or target.startswith("//"):
                if loaded:
                    external.append(f"{name}: {target}")
                continue
            if parts.scheme in ("data", "mailto", "javascript"):
                continue
            path, anchor = urldefrag(target)
            file = (site / name).parent / unquote(urlsplit(path).path) if path else site / name
            file = file.resolve()
            if not file.exists():
                broken.append(f"{name}: {target}")
            elif anchor and file.suffix == ".html":
                key = file.relative_to(site.resolve()).as_posix()
                ids = parsed[key].ids if key in parsed else _parse(file).ids
                if anchor not in ids:
                    broken.append(f"{name}: {target} (no id {anchor!r})")
    assert not broken, "broken internal links:\n" + "\n".join(broken[:30])
    assert not external, "the site links scripts or pictures from outside (it must read offline):\n" + \
        "\n".join(external[:30])


MATHJAX_DONE = """() => (window.MathJax && MathJax.startup && MathJax.startup.promise)
    ? MathJax.startup.promise.then(() => true) : true"""


def open_page(page, url):
    """Go to ``url`` and wait until MathJax has typeset the page (it may finish after the page's
    load event; leaving earlier would cut its work off)."""
    response = page.goto(url, wait_until="load")
    page.evaluate(MATHJAX_DONE)
    return response


PAGE_REPORT = """() => {
    const imgs = [...document.querySelectorAll('img')];
    return {
        images: imgs.length,
        broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => (i.src || '').slice(0, 80)),
        svgs: document.querySelectorAll('.cell_output svg, .cell_output img[src$=".svg"]').length,
        empty_svgs: [...document.querySelectorAll('.cell_output svg')]
            .filter(s => s.getBoundingClientRect().width === 0 && !s.closest('[hidden]')).length,
        widget_pictures: document.querySelectorAll('.cell_output .mg-snapshot').length,
        widget_texts: [...document.querySelectorAll('.cell_output pre')]
            .filter(p => /^[A-Za-z]+\\(children=\\(/.test(p.textContent)).length,
    };
}"""


def test_every_page_loads_cleanly_with_its_pictures(site, served, page):
    problems, errors, outside = [], [], []
    page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # (the browser asks for the favicon after the load event; going on to the next page aborts
    # that request, which is not a failure: test_the_home_page_links_..._favicon checks the file is there)
    page.on("requestfailed", lambda req: req.url.endswith("/favicon.svg") and req.failure == "net::ERR_ABORTED"
            or errors.append(f"failed: {req.url} ({req.failure})"))
    page.route(re.compile(r"^(?!http://127\.0\.0\.1)"),
               lambda route: (outside.append(route.request.url), route.abort()))
    for name in pages(site):
        errors.clear()
        outside.clear()
        response = open_page(page, f"{served}/{name}")
        report = page.evaluate(PAGE_REPORT)
        if response is None or response.status != 200:
            problems.append(f"{name}: HTTP {response and response.status}")
        if errors:
            problems.append(f"{name}: console errors {errors[:3]}")
        if outside:
            problems.append(f"{name}: requests outside the site {outside[:3]}")
        if report["broken"]:
            problems.append(f"{name}: images that did not load {report['broken'][:3]}")
        if report["empty_svgs"]:
            problems.append(f"{name}: {report['empty_svgs']} drawings with no size")
        if report["widget_texts"]:
            problems.append(f"{name}: {report['widget_texts']} widgets shown as their text repr")
        page.set_viewport_size({"width": 390, "height": 844})            # a phone: no sideways scroll
        width = page.evaluate("() => document.documentElement.scrollWidth")
        if width > 390:
            problems.append(f"{name}: {width} px wide on a 390 px phone")
        page.set_viewport_size({"width": 1300, "height": 1000})
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("chapter, widget_picture", [
    ("03_backpropagation", ".mg-snapshot-html svg"),            # the explorer's drawn network
    ("11_transformer", ".mg-snapshot-image img"),               # the attention heatmap
])
def test_chapters_03_and_11_show_their_drawings_and_widget_pictures(served, page, chapter, widget_picture):
    open_page(page, f"{served}/chapters/{chapter}.html")
    report = page.evaluate(PAGE_REPORT)
    assert report["svgs"] >= 2, f"{chapter}: {report['svgs']} graphviz drawings"
    assert report["widget_pictures"] >= 1 and not report["broken"], report
    picture = page.locator(widget_picture).first
    picture.scroll_into_view_if_needed()
    box = picture.bounding_box()
    assert box and box["width"] > 100 and box["height"] > 50, f"{chapter}: widget picture {box}"
    content = page.locator("main").bounding_box()
    assert box["x"] >= content["x"] - 1 and box["x"] + box["width"] <= content["x"] + content["width"] + 1, \
        f"{chapter}: the widget picture {box} sticks out of the page's text column {content}"


def test_math_is_typeset_offline_and_search_finds_a_chapter(served, page):
    open_page(page, f"{served}/chapters/03_backpropagation.html")
    typeset = page.evaluate("() => document.querySelectorAll('mjx-container svg').length")
    assert typeset > 100, f"chapter 03: {typeset} formulas typeset by MathJax"
    page.goto(f"{served}/search.html?q=backpropagation", wait_until="load")
    page.wait_for_function("() => document.querySelectorAll('#search-results li a').length > 0", timeout=30_000)
    links = page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.getAttribute('href'))")
    assert any("03_backpropagation" in link for link in links), links


# -- accessibility, drawings, phones ------------------------------------------------------------

AXE_ALL = ["index.html", *(f"chapters/{p.stem}.html" for p in sorted((REPO / "chapters").glob("*.ipynb"))),
           "exercises/00_warmup_exercises.html", "exercises/03_backpropagation_exercises.html",
           "exercises/11_transformer_exercises.html"]
# axe takes about 15 s a page on a loaded 2-core machine: `make test` checks one page of each
# kind (the home page, a chapter with widget pictures and math, the one with the widest
# drawings, an exercise); MINIGRAPH_AXE_ALL=1 checks all 16.
AXE_PAGES = AXE_ALL if os.environ.get("MINIGRAPH_AXE_ALL") else [
    "index.html", "chapters/03_backpropagation.html", "chapters/11_transformer.html",
    "exercises/03_backpropagation_exercises.html"]
AXE_RUN = """async () => {
    const result = await axe.run(document, {rules: {'label-content-name-mismatch': {enabled: true}}});
    return result.violations.filter(v => v.impact === 'critical' || v.impact === 'serious')
        .map(v => `${v.impact} ${v.id} (${v.nodes.length}): ${v.nodes[0].html.slice(0, 150)}`);
}"""


def test_axe_finds_nothing_critical_or_serious(served, browser):
    assert len(AXE_ALL) == 16 and set(AXE_PAGES) <= set(AXE_ALL)
    axe = axe_source()
    page = browser.new_page(width=1280, height=800)
    found = []
    try:
        for name in AXE_PAGES:
            open_page(page, f"{served}/{name}")
            page.add_script_tag(content=axe)
            found += [f"{name}: {v}" for v in page.evaluate(AXE_RUN)]
    finally:
        page.context.close()
    assert not found, "axe-core: critical or serious violations\n" + "\n".join(found)


DRAWINGS = """() => [...document.querySelectorAll('.mg-drawing svg')].map(svg => {
    const box = svg.getBoundingClientRect(), frame = svg.closest('.mg-drawing').getBoundingClientRect();
    return {role: svg.getAttribute('role'), name: svg.getAttribute('aria-label') || '',
            text_px: 12 * box.width / svg.viewBox.baseVal.width, width: box.width,
            frame_right: frame.right, frame_width: frame.width};
})"""


def test_every_drawing_is_named_and_reads_at_a_readable_size_inside_its_box(served, page):
    for chapter in ("03_backpropagation", "07_recurrent_networks", "11_transformer"):
        open_page(page, f"{served}/chapters/{chapter}.html")
        content = page.locator("main").bounding_box()
        drawings = page.evaluate(DRAWINGS)
        assert len(drawings) >= 2, f"{chapter}: {len(drawings)} drawings"
        for k, d in enumerate(drawings):
            where = f"{chapter}, drawing {k + 1}: {d}"
            assert d["role"] == "img" and d["name"], where
            assert d["text_px"] >= 11, where                     # dot's 12-point text, as drawn
            assert d["frame_right"] <= content["x"] + content["width"] + 1, where
        if chapter == "11_transformer":                          # its GPT: readable, so wider than the page
            assert any(d["width"] > d["frame_width"] + 1 for d in drawings), drawings


def test_the_home_page_links_what_it_was_built_for_and_every_page_has_a_favicon(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    assert f"https://github.com/{BUILT_FOR}#readme" in index
    assert f"https://mybinder.org/v2/gh/{BUILT_FOR}/main?labpath=chapters%2F00_setup_check.ipynb" in index
    for name in pages(site):
        icons = re.findall(r'<link rel="icon" href="([^"]+)"', (site / name).read_text(encoding="utf-8"))
        assert icons and ((site / name).parent / icons[0]).resolve().is_file(), f"{name}: favicon {icons}"
