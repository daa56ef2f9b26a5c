"""Drawing a graph: every node with its kind, op, value and gradient, laid out left to right.

    mg.draw(g)                        # values and gradients on every node
    mg.draw(g, backward=True)         # the backward pass: what each edge sends back
    mg.draw(g, highlight=["x", "tanh_1"], legend=True)

How it works, in three steps:

1. ``dot_source`` writes the graph in DOT, graphviz's text format: one box per node, coloured
   by kind (the ``KIND_COLOURS`` table below is the only place colours are chosen), with an
   HTML-like label: the op's symbol and the node's name, then a ``value`` row and a ``grad`` row.
2. The ``dot`` program lays the boxes out and writes SVG, which Jupyter shows.
3. The numbers also go into a short text summary (``repr``), one line per node, formatted the
   same way on every machine, so a notebook test that compares text (nbval) checks the numbers.

The backward view draws every edge dashed, pointing back from an op to its input and labelled
with the gradient that op sends to that input: its vector-Jacobian product (VJP) applied to the
op's own gradient. Where a node feeds several ops, the labels on its incoming dashed edges add
up to its ``grad`` -- the sum rule of backpropagation, visible.

Widgets redraw a graph on every slider move. Running ``dot`` each time would be slow and would
move the boxes around as the numbers change width, so ``LiveDrawing`` lays the graph out once
with a fixed-width placeholder where each number goes and afterwards only swaps the numbers
into the SVG text: no ``dot``, no jumping boxes.
"""

import html
import re

import numpy as np

# -- the colour table: one colour per kind of node, the same in every chapter -----------------
#                 fill       line       what it means
KIND_COLOURS = {
    "input":     ("#d0ebff", "#1971c2"),   # blue: data fed at run time
    "parameter": ("#ffe8cc", "#e8590c"),   # orange: learned by training
    "constant":  ("#e9ecef", "#868e96"),   # grey: never changes
    "op":        ("#ffffff", "#495057"),   # white: computed from its inputs
}
HIGHLIGHT = "#7048e8"                      # violet: the node (or path) being pointed at
GRADIENT = "#c92a2a"                       # red: gradients flowing backward
MUTED = "#868e96"                          # small print: names, row captions, cluster frames

DETAILED_NODES = 60         # larger graphs hide values and gradients unless asked to show them
ZERO = 1e-12                # numbers smaller than this print as 0 (rounding noise differs by machine)
ROWS = [("value", "value", "#000000"), ("grad", "grad&#160;", GRADIENT)]   # captions equally wide


# -- numbers as text -----------------------------------------------------------------------------

def format_number(x, digits=4):
    """``0.4621``, ``-1.3``, ``2``, ``1.235e+05``: ``digits`` significant digits, never ``-0``."""
    x = float(x)
    if abs(x) < ZERO:
        return "0"
    return f"{x:.{digits}g}"


def format_value(value, digits=4, items=3):
    """A value in one short line: a number, or an array as shape plus its first few entries.

    >>> format_value(np.array([[0.123, -1.3, 2.0], [4, 5, 6]]))
    '(2, 3) [0.123, -1.3, 2, …]'
    """
    if value is None:
        return "—"
    if isinstance(value, tuple):                           # a multi-output op
        return f"{len(value)} outputs"
    value = np.asarray(value)
    if value.ndim == 0:
        return format_number(value, digits)
    flat = value.ravel()
    entries = [format_number(v, digits) for v in flat[:items]] + (["…"] if flat.size > items else [])
    return f"{value.shape} [{', '.join(entries)}]"


def widest_text(value):
    """The longest text ``format_value`` can give for a value of this shape (to reserve room).

    Every entry is ``-1.111e+111``, the longest a number gets: a sign, four digits, a point and a
    three-digit exponent (a tiny number such as ``-1.111e-111`` would print as ``0``).
    """
    if value is None or isinstance(value, tuple):
        return format_value(value)
    return format_value(np.full(np.shape(value), -1.111e+111))


# -- the numbers a drawing shows -------------------------------------------------------------------

def edge_gradient(node, k):
    """The gradient ``node`` sends to its k-th input: that input's VJP applied to ``node.grad``.

    ``None`` when no gradient flows there (no backward yet, or the input needs none).
    """
    parent = node.inputs[k]
    if node.grad is None or parent.grad is None:
        return None
    g = node.grad
    if node.op.n_outputs > 1:                              # unfilled slots of a tuple are zeros
        g = tuple(np.zeros_like(v) if gi is None else gi for gi, v in zip(g, node.value))
    args = [p.value for p in node.inputs]
    return own_slot(node, node.op.vjps[k](g, node.value, *args, **node.attrs))


def own_slot(node, sent):
    """An ``output`` node sends a tuple (its gradient in its own slot, None elsewhere): the slot."""
    return sent[node.attrs["index"]] if isinstance(sent, tuple) else sent


class EngineNumbers:
    """Where a drawing reads its numbers by default: the nodes themselves."""

    def value(self, node):
        return node.value

    def grad(self, node):
        return node.grad

    def edge(self, node, k):
        return edge_gradient(node, k)


ENGINE = EngineNumbers()


def slot_number(slot, numbers=ENGINE):
    """The number of one slot: ``("value", node)``, ``("grad", node)`` or ``("edge", node, k)``."""
    field, *where = slot
    return getattr(numbers, field)(*where)


def slot_text(slot, numbers=ENGINE):
    return format_value(slot_number(slot, numbers))


# -- options -------------------------------------------------------------------------------------

def as_graph(graph_or_node):
    """A Graph from a Graph, a node, or a list of output nodes."""
    from .graph import Graph
    return graph_or_node if isinstance(graph_or_node, Graph) else Graph(graph_or_node)


def resolve(graph, values=None, grads=None, backward=False, highlight=(), legend=False,
            groups=True):
    """Turn draw()'s arguments into a dict of decisions (``None`` means: decide by the graph)."""
    small = len(graph.nodes) <= DETAILED_NODES
    has_grads = any(n.grad is not None for n in graph.nodes)
    highlight = {graph.node(h) for h in highlight}
    return dict(values=small if values is None else values,
                grads=(small and has_grads) if grads is None else grads,
                backward=backward, highlight=highlight, legend=legend, groups=groups,
                summary_values=values is not False, summary_grads=grads is not False)


# -- DOT -------------------------------------------------------------------------------------------

def quote(text):
    """A DOT string literal."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def attributes(attrs):
    """``key="value"`` pairs of a DOT statement (a class may end in a space when its fill is empty)."""
    return " ".join(f"{key}={quote(value.strip())}" for key, value in attrs.items())


def layer_groups(graph):
    """The layer each node belongs to (or None), for drawing big graphs as clusters.

    A node belongs to the dotted prefix of its name (``mlp.fc1.W`` -> ``mlp.fc1``; a node named
    like a prefix, such as the op ``mlp.fc1``, to that prefix itself). An op without a dotted
    name joins the layer of its Parameters (``matmul(x, fc1.W)``), or, if it has none, the
    layer all its non-constant inputs share (``tanh`` of a layer's output).
    """
    prefixes = {n.name.rsplit(".", 1)[0] for n in graph.nodes if "." in n.name}
    group = {}
    for n in graph.nodes:                                  # inputs come before their consumers
        if n.name in prefixes:
            group[n] = n.name
        elif "." in n.name:
            group[n] = n.name.rsplit(".", 1)[0]
        else:
            of_params = {group[p] for p in n.inputs if p.kind == "parameter"}
            of_inputs = {group[p] for p in n.inputs if p.kind != "constant"}
            shared = of_params if of_params else of_inputs
            group[n] = shared.pop() if len(shared) == 1 else None
    return group


def node_label(node, opts, fill):
    """The HTML-like label of a box: a title line, then value and grad rows."""
    if node.op is None:
        title, subtitle = node.name, node.kind
    elif node.op.name == "output":
        title, subtitle = f"[{node.attrs['index']}]", node.name
    else:
        title, subtitle = node.op.symbol, node.name
    rows = [f'<TR><TD><B>{html.escape(title)}</B> '
            f'<FONT POINT-SIZE="9" COLOR="{MUTED}">{html.escape(subtitle)}</FONT></TD></TR>']
    if node.op is not None and node.op.n_outputs > 1:      # one port per output, in order
        rows += [f'<TR><TD PORT="out{i}" ALIGN="RIGHT"><FONT POINT-SIZE="10">output [{i}] ▸</FONT></TD></TR>'
                 for i in range(node.op.n_outputs)]
    else:
        for field, caption, colour in ROWS:
            if opts[field + "s"] and not (field == "grad" and node.kind == "constant"):
                rows.append(f'<TR><TD ALIGN="LEFT"><FONT FACE="monospace" POINT-SIZE="9" COLOR="{MUTED}">'
                            f'{caption}</FONT> <FONT FACE="monospace" POINT-SIZE="11" COLOR="{colour}">'
                            f'{fill((field, node))}</FONT></TD></TR>')
    return '<<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="1">' + "".join(rows) + "</TABLE>>"


def node_statement(node, opts, fill):
    fillcolor, line = KIND_COLOURS[node.kind]
    attrs = {"id": f"mg-node-{node.name}", "class": f"mg-node mg-{node.kind} {fill(('class', node))}",
             "fillcolor": fillcolor, "color": line}
    if node in opts["highlight"]:
        attrs.update(color=HIGHLIGHT, penwidth="3")
    return f"{quote(node.name)} [{attributes(attrs)} label={node_label(node, opts, fill)}]"


def edge_statement(node, k, opts, fill):
    parent = node.inputs[k]
    tail = quote(parent.name)
    if node.op.name == "output":                           # leave the multi-output box by its port
        tail += f":out{node.attrs['index']}:e"
    attrs = {"id": f"mg-edge-{node.name}-{k}", "class": f"mg-edge {fill(('class', node, k))}"}
    if opts["backward"]:
        attrs.update(dir="back", style="dashed", color=GRADIENT, fontcolor=GRADIENT)
        if parent.grad is not None:
            attrs["label"] = fill(("edge", node, k))
        else:                                              # no gradient flows to a constant
            attrs.update(dir="none", style="dotted", color=MUTED)
    if {node, parent} <= opts["highlight"]:
        attrs.update(color=HIGHLIGHT, penwidth="2.5")
    return f"{tail} -> {quote(node.name)} [{attributes(attrs)}]"


def legend_statement():
    cells = "".join(f'<TD BGCOLOR="{fillcolor}" COLOR="{line}" BORDER="1">{kind}</TD>'
                    for kind, (fillcolor, line) in KIND_COLOURS.items())
    return (f'"mg-legend" [id="mg-legend" shape=plain label=<<TABLE BORDER="0" CELLSPACING="4">'
            f"<TR>{cells}</TR></TABLE>>]")


def dot_source(graph, opts, fill):
    """The DOT text of a graph. ``fill(slot)`` gives the text that goes where a number goes."""
    lines = ["digraph minigraph {",
             '  graph [rankdir=LR nodesep=0.25 ranksep=0.4 fontname="Helvetica" fontsize=10]',
             '  node [shape=box style="rounded,filled" fontname="Helvetica" fontsize=12 margin="0.08,0.04"]',
             '  edge [fontname="Helvetica" fontsize=9 arrowsize=0.7 color="#495057"]']
    if opts["legend"]:
        lines.append("  " + legend_statement())
    clusters = {}
    group = layer_groups(graph) if opts["groups"] else {}
    for node in graph.nodes:
        clusters.setdefault(group.get(node), []).append(node_statement(node, opts, fill))
    for name, statements in clusters.items():
        if name is None or len(statements) < 2:
            lines += ["  " + s for s in statements]
        else:
            lines += [f"  subgraph {quote('cluster_' + name)} {{",
                      f'    graph [id={quote("mg-group-" + name)} label={quote(name)} style="rounded,dashed" '
                      f'color="{MUTED}" fontcolor="{MUTED}"]']
            lines += ["    " + s for s in statements]
            lines.append("  }")
    for node in graph.nodes:
        for k in range(len(node.inputs)):
            lines.append("  " + edge_statement(node, k, opts, fill))
    lines.append("}")
    return "\n".join(lines) + "\n"


def static_fill(slot):
    """Slots of a one-off drawing: the numbers themselves (no extra class)."""
    return "" if slot[0] == "class" else html.escape(slot_text(slot))


def render_svg(source):
    """Run ``dot`` on DOT text; returns the SVG document as a string."""
    import graphviz                                        # imported when first needed
    return graphviz.pipe("dot", "svg", source.encode("utf-8")).decode("utf-8")


# -- the text summary ---------------------------------------------------------------------------------

def summary(graph, opts):
    """One line per node: name, kind (or op), value, grad -- stable text for notebook tests."""
    rows = []
    for n in graph.nodes:
        what = n.kind if n.op is None else n.op.name
        value = format_value(n.value) if opts["summary_values"] else ""
        grad = f"grad {format_value(n.grad)}" if opts["summary_grads"] and n.grad is not None else ""
        rows.append((n.name, what, value, grad))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"Drawing of {len(rows)} nodes" + (", backward view" if opts["backward"] else "")]
    lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths + [0])).rstrip() for r in rows]
    return "\n".join(lines)


class Drawing:
    """A picture of a graph at one moment: ``.source`` (DOT), ``.svg()``, and a text summary.

    The numbers are read when the drawing is made; later changes to the graph do not alter it.
    In Jupyter it shows as SVG; its ``repr`` is the one-line-per-node summary.
    """

    def __init__(self, graph, **options):
        self.graph = graph
        self.options = resolve(graph, **options)
        self.source = dot_source(graph, self.options, static_fill)
        self._summary = summary(graph, self.options)
        self._svg = None

    def svg(self):
        """The SVG document ``dot`` makes of ``.source`` (computed once, then reused)."""
        if self._svg is None:
            self._svg = render_svg(self.source)
        return self._svg

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.svg(), "text/plain": self._summary}

    def __repr__(self):
        return self._summary


def draw(graph_or_node, values=None, grads=None, backward=False, highlight=(), legend=False,
         groups=True):
    """Draw a graph (or the graph of a node) with every node's value and gradient.

    values, grads  show the numbers on each box (default: yes, unless the graph has more
                   than 60 nodes; gradients only once a backward pass has run)
    backward       draw the backward pass: dashed edges from each op back to its inputs,
                   labelled with the gradient sent along them
    highlight      nodes (or names) to outline; edges between two of them are outlined too
    legend         add a key of the colours of the node kinds
    groups         frame the nodes of each layer (``mlp.fc1.W``, ``mlp.fc1.b``, ...) together
    """
    return Drawing(as_graph(graph_or_node), values=values, grads=grads, backward=backward,
                   highlight=highlight, legend=legend, groups=groups)


# -- live drawings: laid out once, numbers refilled -------------------------------------------------

LIVE_STYLE = (f"<style>.mg-hl > path, .mg-hl > polygon {{ stroke: {HIGHLIGHT}; stroke-width: 3px; }}"
              f" .mg-hl > text {{ fill: {HIGHLIGHT}; }}</style>")
TOKEN = re.compile(r"@@(\d+)@*")


class LiveDrawing:
    """A graph laid out once by ``dot``; ``render()`` then only swaps numbers into the SVG.

    Each number's place is a placeholder as wide as the longest text that number can have, in
    a monospaced font, so the boxes are big enough for any value and never move. ``render``
    returns inline SVG (no XML header) for an HTML page or widget.
    """

    def __init__(self, graph, **options):
        self.graph = graph
        self.options = resolve(graph, **options)
        self.slots = []
        svg = render_svg(dot_source(graph, self.options, self._placeholder))
        svg = svg[svg.index("<svg"):]
        svg = svg.replace(">", ">" + LIVE_STYLE, 1)          # right after the <svg ...> tag
        parts = TOKEN.split(svg)
        self._text, self._slot_index = parts[0::2], [int(i) for i in parts[1::2]]

    def _placeholder(self, slot):
        token = f"@@{len(self.slots)}@@"
        self.slots.append(slot)
        if slot[0] == "class":
            return token
        return token.ljust(len(widest_text(slot_number(slot))), "@")

    def render(self, numbers=ENGINE, highlight=()):
        """Inline SVG with the current numbers; ``highlight``ed nodes and edges outlined.

        ``numbers`` supplies ``value(node)``, ``grad(node)`` and ``edge(node, k)`` (default: the
        engine's); a highlighted edge is a pair ``(node, k)``.
        """
        texts = [self._class(slot, highlight) if slot[0] == "class" else html.escape(slot_text(slot, numbers))
                 for slot in self.slots]
        out = [self._text[0]]
        for i, piece in zip(self._slot_index, self._text[1:]):
            out += (texts[i], piece)
        return "".join(out)

    @staticmethod
    def _class(slot, highlight):
        element = slot[1] if len(slot) == 2 else slot[1:]       # a node, or an edge (node, k)
        return "mg-hl" if element in highlight else ""
