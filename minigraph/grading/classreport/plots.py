"""The report's plots, made with matplotlib and kept as inline SVG text (the page needs no
file beside it and no network)."""

import io
import re
from collections import Counter

import matplotlib

matplotlib.use("Agg")                       # no display: the report is made in a shell or CI
import matplotlib.pyplot as plt             # noqa: E402

from ..toolkit.report import points        # noqa: E402

BLUE, GREEN = "#4c72b0", "#1a7f37"


def _svg(figure):
    out = io.StringIO()
    figure.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    text = out.getvalue()
    return re.sub(r"<metadata>.*?</metadata>", "", text[text.index("<svg"):], flags=re.DOTALL)


def histogram(stats):
    """How many students earned each number of points of one exercise (full marks in green)."""
    counts = Counter(round(s, 2) for s in stats.scores.values())
    values = sorted(counts)
    figure, axes = plt.subplots(figsize=(3.6, 1.9))
    axes.bar([points(v) for v in values], [counts[v] for v in values], width=0.6,
             color=[GREEN if v >= stats.points else BLUE for v in values])
    axes.set_xlabel(f"points (of {points(stats.points)})")
    axes.set_ylabel("students")
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.spines[["top", "right"]].set_visible(False)
    return _svg(figure)


def hardest(ordered, title):
    """The exercises, hardest on top: the share of their points the class earned."""
    figure, axes = plt.subplots(figsize=(6, 0.3 * len(ordered) + 0.9))
    names = [s.id for s in ordered][::-1]
    shares = [100 * s.mean_share for s in ordered][::-1]
    axes.barh(names, shares, color=BLUE)
    axes.set_xlim(0, 100)
    axes.set_xlabel("share of the points earned by the class (%)")
    axes.set_title(title, fontsize=10)
    axes.spines[["top", "right"]].set_visible(False)
    return _svg(figure)
