"""Add up the JUnit XML reports of `make test`'s pytest runs into one closing line.

    python tools/test_summary.py build/test-reports/*.xml

`make test` runs pytest several times (unit tests, strict notebooks, lax exercises); some
runs may legitimately collect nothing (an empty folder). This prints one line for the
whole run, e.g. ``total: 57 passed, 0 failed, 2 skipped``, and exits 1 if the reports
hold a failure or error, or if no test ran at all.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

KEYS = ("tests", "failures", "errors", "skipped")      # the counts a <testsuite> carries


def count(path: Path) -> dict[str, int]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    totals = dict.fromkeys(KEYS, 0)
    for suite in suites:
        for key in totals:
            totals[key] += int(suite.get(key, 0))
    return totals


def main(argv: list[str]) -> int:
    totals = dict.fromkeys(KEYS, 0)
    for name in argv:
        path = Path(name)
        if not path.exists():
            continue
        for key, value in count(path).items():
            totals[key] += value
    failed = totals["failures"] + totals["errors"]
    passed = totals["tests"] - failed - totals["skipped"]
    print(f"total: {passed} passed, {failed} failed, {totals['skipped']} skipped")
    if failed or totals["tests"] == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
