"""docs/images/class-report.png: the picture of the class report in docs/GRADING.md.

    .venv/bin/python tools/class_report_picture.py

A synthetic class of chapter 00 (``tests/grading/synthetic_class.py``: 12 students, two of them
disguised copiers), judged in this process, reported as ``python -m minigraph.grading report``
would, opened in headless Chromium (tests/browser/labdriver.py) and photographed: the top of
the page (the gradebook and the hardest exercises) and one exercise's section side by side.
"""

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "grading"), str(ROOT / "tests" / "browser")]

import synthetic_class as synthetic  # noqa: E402
from labdriver import Browser  # noqa: E402

from minigraph.grading.classreport.cli import write  # noqa: E402
from minigraph.grading.classreport.load import read_reports  # noqa: E402

OUT = ROOT / "docs" / "images" / "class-report.png"


def main():
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        students = synthetic.plan("00", 12, seed=5, copiers=2)
        synthetic.write_report(folder / "grades.json", "00", students)
        write(read_reports([folder / "grades.json"]), ["grades.json"], folder / "class-report.html")
        with Browser() as browser:
            page = browser.new_page(width=1200, height=900)
            page.goto((folder / "class-report.html").as_uri())
            page.evaluate("document.getElementById('exercise-00.sigmoid_vjp').scrollIntoView()")
            page.evaluate("window.scrollBy(0, -20)")
            page.screenshot(path=str(OUT))
            page.context.close()
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
