"""Keydown -> redrawn graph latency of an explore widget, measured in a real browser.

    python bench/browser_latency.py                 # chapter 03's explore widget, 30 moves
    python bench/browser_latency.py --moves 50 --check   # exit 1 if p95 > 100 ms

What it does: starts JupyterLab (tests/browser/labdriver.py: free loopback port, token, every
Jupyter/IPython/matplotlib dir in a temp folder) on a temporary copy of
chapters/03_backpropagation.ipynb -- or, when that chapter has no explore widget, on a
generated notebook with the same kind of widget on a two-layer sigmoid network (~30 nodes) --
opens it in headless Chromium (/usr/bin/chromium through playwright), runs all cells, then
moves the first slider of the first explore widget with the arrow keys, one step at a time.

Each move is timed inside the page with performance.now(): t0 when the keydown reaches the
document (a capture listener), t1 when a MutationObserver on the widget's drawing container
(installed before the key press) sees the new SVG, t2 at the next animation frame after t1
(the new drawing on screen). Nothing is timed with Python sleeps; Python only waits for t2.

The path measured: keydown -> noUiSlider -> widget model -> websocket -> kernel: slider
observer, leaf set, incremental forward + backward, LiveDrawing numbers swapped into the SVG
-> websocket -> HTML widget view replaced. Target: p95 <= 100 ms (keydown -> DOM).
"""

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))

import labdriver  # noqa: E402  (tests/browser: shared with the browser tests)

CHAPTER = "chapters/03_backpropagation.ipynb"
TARGET_MS = 100.0

FALLBACK_CELLS = [
    "import minigraph as mg",
    '''# a two-layer sigmoid network on scalars, as in chapter 03: 2 inputs, 2 hidden units, 1 output
x1, x2, t = mg.Input("x1"), mg.Input("x2"), mg.Input("t")
p = {n: mg.Parameter(v, name=n) for n, v in
     [("w11", 0.4), ("w21", -0.6), ("b1", 0.1), ("w12", 0.3), ("w22", 0.8), ("b2", -0.2),
      ("v1", 1.2), ("v2", -0.7), ("c", 0.05)]}

def unit(a, wa, b, wb, bias, k, out):
    s = mg.add(mg.mul(a, wa, name=f"{a.name}·{wa.name}"), mg.mul(b, wb, name=f"{b.name}·{wb.name}"), name=f"s{k}")
    return mg.sigmoid(mg.add(s, bias, name=f"z{k}"), name=out)

h1 = unit(x1, p["w11"], x2, p["w21"], p["b1"], 1, "h1")
h2 = unit(x1, p["w12"], x2, p["w22"], p["b2"], 2, "h2")
y = unit(h1, p["v1"], h2, p["v2"], p["c"], 3, "y")
E = mg.mul(mg.power(mg.sub(y, t, name="e"), mg.Constant(2.0, name="2"), name="e²"),
           mg.Constant(0.5, name="½"), name="E")
net = mg.Graph(E)
net.forward({"x1": 0.5, "x2": -1.0, "t": 1.0})
len(net.nodes)''',
    'mg.widgets.explore(net, {"x1": (-3.0, 3.0), "x2": (-3.0, 3.0)}, feed={"t": 1.0})',
]


# The floor of the plumbing: a bare slider whose observer writes its value into an HTML widget
# (same classes, so the same MutationObserver target), no engine, no SVG.
BASELINE_CELLS = [
    """import ipywidgets as W
slider = W.FloatSlider(value=0.0, min=-3.0, max=3.0, step=0.06, description="x", continuous_update=True)
view = W.HTML("<b>0.0</b>").add_class("mg-view")
slider.observe(lambda c: setattr(view, "value", f"<b>{c['new']:.3f}</b>"), names="value")
W.VBox([slider, view]).add_class("mg-explore")""",
]


def write_notebook(path, cells):
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, path)


def prepare(root):
    """The notebook to measure, copied/generated under ``root``; returns (relpath, origin)."""
    chapter = REPO / CHAPTER
    if chapter.exists() and "widgets.explore(" in chapter.read_text(encoding="utf-8"):
        labdriver.copy_notebooks(root)
        return CHAPTER, f"{CHAPTER} (its first explore widget)"
    write_notebook(root / "latency.ipynb", FALLBACK_CELLS)
    labdriver.link_package(root)
    return "latency.ipynb", "a generated two-layer sigmoid network (chapter 03 has no explore widget yet)"


def percentile(values, q):
    """Nearest-rank percentile (no interpolation: p95 of 30 samples is the 29th smallest)."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, -(-len(ordered) * q // 100) - 1))
    return ordered[int(k)]


def one_move(nb, key, timeout_ms):
    nb.page_js("window.__mgPage.armLatency(node, 0)")
    nb.page.keyboard.press(key)
    nb.page.wait_for_function("() => window.__mgLatency && window.__mgLatency.t2 !== null",
                              timeout=timeout_ms, polling="raf")
    m = nb.page.evaluate("() => window.__mgLatency")
    return m["t1"] - m["t0"], m["t2"] - m["t0"]


def measure_notebook(session, relpath, moves, warmup, timeout_ms):
    """Open ``relpath``, run it, then time ``warmup + moves`` arrow-key moves of the first slider
    of its first ``.mg-explore``; returns the measured (keydown -> DOM, keydown -> frame) lists."""
    nb = session.open(relpath)
    run = nb.run_all(timeout_ms=180_000)
    if not run.get("ok"):
        raise SystemExit(f"Run All of {relpath} failed: {run}")
    report = nb.wait_widgets_rendered()
    if not report["explore"]:
        raise SystemExit(f"no explore widget (.mg-explore) in {relpath}: {report}")
    state = nb.explore(0)
    nb.slider_handle(0, 0).focus()
    dom, frame = [], []
    key = "ArrowRight"
    for i in range(warmup + moves):
        now = nb.explore(0)["sliders"][0]
        if now["now"] is not None and now["max"] is not None:              # bounce at the ends
            if key == "ArrowRight" and now["now"] >= now["max"]:
                key = "ArrowLeft"
            elif key == "ArrowLeft" and now["now"] <= now["min"]:
                key = "ArrowRight"
        try:
            d, f = one_move(nb, key, timeout_ms)
        except Exception as e:   # noqa: BLE001
            raise SystemExit(f"{relpath}, move {i + 1}: no redraw within {timeout_ms} ms after {key} ({e})")
        if i >= warmup:
            dom.append(d)
            frame.append(f)
    session.close(nb)
    nodes = len((state["numbers"] or {"nodes": {}})["nodes"])
    return dict(nodes=nodes, slider=state["sliders"][0]["description"], dom=dom, frame=frame)


def measure(moves, warmup, timeout_ms, baseline=True):
    with tempfile.TemporaryDirectory(prefix="mg-latency-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        relpath, origin = prepare(root)
        write_notebook(root / "baseline.ipynb", BASELINE_CELLS)
        with labdriver.LabServer(root, base=Path(tmp) / "lab") as lab, \
                labdriver.Browser(home=Path(tmp) / "chromium") as browser:
            session = labdriver.LabSession(lab, browser)
            result = measure_notebook(session, relpath, moves, warmup, timeout_ms)
            result["origin"] = origin
            if baseline:
                result["baseline"] = measure_notebook(session, "baseline.ipynb", moves, warmup, timeout_ms)
            session.discard()
    return result


def line(label, xs):
    return (f"  {label:<34} p50 {statistics.median(xs):6.1f} ms   p95 {percentile(xs, 95):6.1f} ms"
            f"   max {max(xs):6.1f} ms")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--moves", type=int, default=30, help="measured slider moves (>= 20; default 30)")
    ap.add_argument("--warmup", type=int, default=3, help="moves before measuring (default 3)")
    ap.add_argument("--timeout-ms", type=int, default=10_000, help="longest wait for one redraw")
    ap.add_argument("--target-ms", type=float, default=TARGET_MS, help="p95 target (default 100)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the bare slider round trip")
    ap.add_argument("--check", action="store_true", help="exit 1 if p95 (keydown -> DOM) misses the target")
    args = ap.parse_args(argv)
    if args.moves < 20:
        ap.error("--moves must be at least 20")
    try:
        labdriver.Browser.check()
    except labdriver.BrowserUnavailable as e:
        print(f"browser_latency: {e}", file=sys.stderr)
        return 2
    r = measure(args.moves, args.warmup, args.timeout_ms, baseline=not args.no_baseline)
    print(f"explore widget: {r['origin']}, {r['nodes']} nodes drawn, slider {r['slider']!r}")
    print(f"{len(r['dom'])} slider moves each (after {args.warmup} warm-up)")
    print(line("keydown -> redrawn SVG in DOM", r["dom"]))
    print(line("keydown -> next frame", r["frame"]))
    if "baseline" in r:
        b = r["baseline"]
        print("bare slider -> HTML widget round trip (no engine, no SVG), same browser and server:")
        print(line("keydown -> DOM", b["dom"]))
        print(line("keydown -> next frame", b["frame"]))
    p95 = percentile(r["dom"], 95)
    ok = p95 <= args.target_ms
    print(f"target p95 <= {args.target_ms:.0f} ms: {'met' if ok else 'MISSED'} ({p95:.1f} ms)")
    return 1 if (args.check and not ok) else 0


if __name__ == "__main__":
    sys.exit(main())
