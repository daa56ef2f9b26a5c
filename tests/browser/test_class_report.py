"""The class report (``python -m minigraph.grading report``) in headless Chromium, opened from a
file as an instructor would: it loads with no console error and asks for nothing outside the
page (offline; no CDN), every plot is drawn, the tables sort when a column's title is clicked,
and a flagged pair is shown side by side with the matching passages marked.

The class is synthetic and judged in this process (``tests/grading/synthetic_class.py``,
``graded_here``: no kernel, no sandbox), so the test takes seconds.
"""

import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from labdriver import REPO, Browser, require_browser  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "grading"))
import synthetic_class as synthetic  # noqa: E402

from minigraph.grading.classreport.cli import write  # noqa: E402
from minigraph.grading.classreport.load import Submission  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("class-report")
    students = synthetic.plan("00", 8, seed=7, copiers=2)
    results = [synthetic.graded_here(s, "00", seed=1000 + i) for i, s in enumerate(students)]
    _, _, found = write([Submission(s.name, r) for s, r in zip(students, results)], ["synthetic"],
                        out / "class-report.html", stream=io.StringIO())
    return out / "class-report.html", found


@pytest.fixture(scope="module")
def page(report, tmp_path_factory):
    require_browser()
    with Browser(home=tmp_path_factory.mktemp("chromium-home")) as browser:
        page = browser.new_page(width=1300, height=1000)
        problems, requests = [], []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(report[0].as_uri())
        page.wait_for_load_state("load")
        yield page, problems, requests
        page.context.close()


def test_the_page_opens_offline_with_no_error(page, report):
    page, problems, requests = page
    assert problems == []
    assert requests == [report[0].as_uri()]
    assert page.title() == "Class report"


def test_every_plot_is_drawn(page):
    page, _, _ = page
    sizes = page.eval_on_selector_all("svg", "all => all.map(s => s.getBoundingClientRect())"
                                             ".map(r => [r.width, r.height])")
    assert len(sizes) >= 4 + 2
    assert all(w > 50 and h > 50 for w, h in sizes), sizes


def totals(page):
    return page.eval_on_selector(
        "#course-gradebook", "t => [...t.tBodies[0].rows].map(r => Number(r.cells[r.cells.length - 1].dataset.sort))")


def test_a_table_sorts_by_the_column_clicked(page):
    page, _, _ = page
    before = totals(page)
    header = page.locator("#course-gradebook th").last
    header.click()
    assert totals(page) == sorted(before)
    header.click()
    assert totals(page) == sorted(before, reverse=True)
    students = page.locator("#course-gradebook th").first
    students.click()
    names = page.eval_on_selector("#course-gradebook", "t => [...t.tBodies[0].rows].map(r => r.cells[0].textContent)")
    assert names == sorted(names)


def test_a_flagged_pair_is_shown_side_by_side_with_the_matches_marked(page, report):
    page, _, _ = page
    found = report[1]
    assert found, "the synthetic class planted copies: one must be flagged"
    link = page.locator("a.flag").first
    link.click()
    target = page.evaluate("location.hash")
    assert target.startswith("#similar-")
    columns = page.locator(f"{target} + p + .pair pre")
    assert columns.count() == 2
    assert all(columns.nth(i).locator("mark").count() > 0 for i in range(2))
