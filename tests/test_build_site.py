"""tools/build_site.py without Sphinx: how a drawing and the home page are written for the site."""

import re
import sys
from pathlib import Path

import pytest

import minigraph as mg
from minigraph import viz

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import build_site  # noqa: E402


def chain(n):
    node = mg.Input("x")
    for k in range(n):
        node = mg.tanh(node, name=f"t{k}")
    return mg.Graph(node)


@pytest.mark.parametrize("n, direction", [(3, "LR"), (40, "LR"), (40, "TB")])
def test_a_drawing_is_named_by_its_title_and_never_shown_below_readable(n, direction):
    svg = mg.draw(chain(n), direction=direction).svg()
    page = build_site.drawing_html(svg)
    assert page.startswith('<div class="mg-drawing" tabindex="0"><svg role="img" aria-label="Drawing of ')
    title = re.search(r"<title>([^<]*)</title>", svg).group(1)
    assert f'aria-label="{title}"' in page
    stored = viz.svg_size(svg)[0]
    natural = float(re.search(r'viewBox="[\d.-]+ [\d.-]+ ([\d.]+)', svg).group(1)) * viz.PX_PER_PT
    width, least = map(float, re.search(r"width:(\d+)px;min-width:(\d+)px;max-width:100%", page).groups())
    assert width == pytest.approx(stored, abs=0.5)
    assert least == pytest.approx(min(stored, viz.READABLE * natural), abs=0.5)
    assert least * 12 / (natural / viz.PX_PER_PT) >= 11           # dot's 12-point text, in px


def test_an_old_drawing_without_a_root_title_is_named_all_the_same():
    page = build_site.drawing_html('<?xml version="1.0"?>\n<svg width="80pt" height="20pt"\n viewBox="0.00 0.00 80.00 20.00">'
                                   '<g id="graph0"><title>minigraph</title></g></svg>')
    assert page.startswith('<div class="mg-drawing" tabindex="0"><svg role="img" aria-label="minigraph"')
    assert "<?xml" not in page


def test_the_home_page_links_the_repository_and_binder_only_when_published():
    assert "github.com" not in build_site.where_to_start(None) and "mybinder" not in build_site.where_to_start(None)
    published = build_site.where_to_start("alice/course")
    assert "(https://github.com/alice/course#readme)" in published
    assert "(https://mybinder.org/v2/gh/alice/course/main?labpath=chapters%2F00_setup_check.ipynb)" in published
    assert "@WHERE_TO_START@" in (ROOT / "site" / "index.md").read_text(encoding="utf-8")
