"""Code the browser tests append to a notebook (as a cell) and run in its kernel.

It reports, as one line ``MG-PROBE {json}`` on stdout:

- ``python``: the kernel's interpreter (must be the one running pytest);
- for every ``minigraph.widgets.Explorer`` alive in the kernel: its sliders' descriptions and
  values and, for the slider the test moved, the numbers the ENGINE computes for that slider
  value, independently of the widget's own update path: the leaf named by the slider's
  description is set to the slider's value, every op is recomputed from scratch
  (``graph.invalidate()``: no incremental forward), then backward if the output is a scalar,
  and each node's value/grad (and each edge's gradient) is formatted with
  ``minigraph.viz.format_value`` -- the text the drawing must show;
- for every ``minigraph.widgets.StepThrough``: its position, step count and current node.

The widget objects are found with ``gc`` (no reliance on ipywidgets' private registry).
"""

import gc
import json
import os
import sys

import numpy as np


def _mg_expected(explorer, key, value):
    from minigraph import viz

    graph = explorer.graph
    node, index = key if isinstance(key, tuple) else (key, None)
    node = graph.node(node) if isinstance(node, str) else node
    feed = dict(explorer.feed)                            # keyed by node (Explorer resolves names)
    current = feed.get(node) if node.kind == "input" else node.value
    if index is None:
        new = float(value)
    else:
        new = np.array(current, dtype=float)
        new[index] = value
    if node.kind == "input":
        feed[node] = new
    else:
        node.value = new
    graph.invalidate()                                    # every op from scratch
    out = graph.forward(feed)
    if len(graph.outputs) == 1 and np.size(out) == 1:
        graph.backward(feed)
    fmt = viz.format_value
    nodes = {n.name: {"value": fmt(n.value), "grad": None if n.grad is None else fmt(n.grad)}
             for n in graph.nodes}
    edges = {}
    for n in graph.nodes:
        for k in range(len(n.inputs)):
            try:
                sent = viz.edge_gradient(n, k)
            except Exception:                             # noqa: BLE001 -- edges are optional
                sent = None
            if sent is not None:
                edges[f"{n.name}-{k}"] = fmt(sent)
    return {"nodes": nodes, "edges": edges}


def _mg_probe(moved=None):
    """``moved``: {"description": the label of the slider the test moved} or None."""
    from minigraph.widgets import Explorer, StepThrough

    def is_widget(o):
        try:
            return isinstance(o, (Explorer, StepThrough))
        except Exception:                                 # noqa: BLE001 -- odd proxies in gc
            return False

    widgets = [o for o in gc.get_objects() if is_widget(o)]
    report = {"python": os.path.realpath(sys.executable), "prefix": os.path.realpath(sys.prefix),
              "minigraph": os.path.realpath(os.path.dirname(sys.modules["minigraph"].__file__)),
              "explorers": [], "steppers": []}
    for ex in (w for w in widgets if isinstance(w, Explorer)):
        sliders = {s.description: s.value for s in ex.sliders.values()}
        entry = {"nodes": sorted(n.name for n in ex.graph.nodes), "sliders": sliders, "expected": None}
        if moved and moved["description"] in sliders:
            key = next(k for k, s in ex.sliders.items() if s.description == moved["description"])
            entry["expected"] = _mg_expected(ex, key, ex.sliders[key].value)
        report["explorers"].append(entry)
    for st in (w for w in widgets if isinstance(w, StepThrough)):
        current = st.current
        report["steppers"].append({"nodes": sorted(n.name for n in st.graph.nodes), "position": st.position,
                                   "steps": len(st.steps), "current": current.name if current else None})
    print("MG-PROBE " + json.dumps(report))


def cell_source(moved=None):
    """The source of the cell to append: this module's functions, then one call."""
    with open(__file__, encoding="utf-8") as f:
        source = f.read()
    body = source[source.index("import gc"):source.index("def cell_source")]
    return body + f"\n_mg_probe({moved!r})\n"


def parse(outputs):
    """The probe's report from the appended cell's outputs (the cells() model JSON)."""
    for o in outputs:
        if o.get("type") == "stream" and o.get("name") == "stdout":
            for line in (o.get("text") or "").splitlines():
                if line.startswith("MG-PROBE "):
                    return json.loads(line[len("MG-PROBE "):])
    raise AssertionError(f"the kernel probe printed no report; its outputs: {outputs}")
