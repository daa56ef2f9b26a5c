"""Drawing a graph: every node with its kind, op, value and gradient, laid out left to right.

    mg.draw(g)                        # values and gradients on every node
    mg.draw(g, backward=True)         # the backward pass: what each edge sends back
    mg.draw(g, highlight=["x", "tanh_1"], legend=True)

How it works, in three steps:

1. ``dot_source`` writes the graph in DOT, graphviz's text format: one box per node, coloured
   by kind (the ``KIND_COLOURS`` table below is the only place colours are chosen), with an
   HTML-like label: the op's symbol and the node's name, then a ``value`` row and a ``grad`` row.
2. The ``dot`` program lays the boxes out and writes SVG, which Jupyter shows. A drawing too
   wide for a notebook's output is laid out top to bottom if that is narrower, shrunk to fit
   as far as its text stays readable, and titled with what it shows (``Drawing.svg``).
3. The numbers also go into a short text summary (``repr``, written by ``drawtext.py``), one
   line per node, formatted the same way on every machine, so a notebook test that compares
   text (nbval) checks the numbers.

The backward view draws every edge dashed, pointing back from an op to its input and labelled
with the gradient that op sends to that input: its vector-Jacobian product (VJP) applied to the
op's own gradient. Where a node feeds several ops, the labels on its incoming dashed edges add
up to its ``grad`` -- the sum rule of backpropagation, visible.

Big graphs (``layout.py`` decides what to draw): above 60 nodes, repeated structure -- layers,
an RNN's time steps -- is folded, its first repeats and its last drawn in full and one box for
the ones between; a leaf used by many ops is drawn again, small, at each use;
``around=node, depth=d`` draws only the part near one node. A caption says what was left out.
``dot`` runs with a time limit, and a drawing of more than ``MAX_BOXES`` boxes is refused: both
give a ``DrawingError`` that says how to draw less.

Widgets redraw a graph on every slider move. Running ``dot`` each time would be slow and would
move the boxes around as the numbers change width, so ``LiveDrawing`` lays the graph out once
with a fixed-width placeholder where each number goes and afterwards only swaps the numbers
into the SVG text: no ``dot``, no jumping boxes.
"""

import html
import re
import shutil
import signal
import subprocess

import numpy as np

from .drawtext import description, format_number, format_value, summary, widest_text  # noqa: F401 (viz.format_number)
from .errors import DrawingError
from .layout import Layout

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

DIRECTIONS = ("LR", "TB")   # edges run left to right, or top to bottom
FIT_WIDTH = 840             # px: a notebook's output area in JupyterLab with its file browser open
READABLE = 0.7              # a drawing is shrunk to fit by this factor at most: its text stays >= 8 px
DETAILED_NODES = 60         # larger drawings hide values and gradients, and fold their repeats
MAX_BOXES = 400             # more boxes than this are refused: dot would take minutes, or crash
DOT_SECONDS = 30            # dot gets this long to lay a drawing out
DOT_COMMAND = "dot"         # Graphviz's layout program (a path, or a name looked up on PATH)
ROWS = [("value", "value", "#000000"), ("grad", "grad&#160;", GRADIENT)]   # captions equally wide


# -- the numbers a drawing shows -------------------------------------------------------------------

def edge_gradient(node, k, grads=None):
    """The gradient ``node`` sends to its k-th input: that input's VJP applied to ``node.grad``
    (or to ``grads[node]``, given a dict ``{node: grad}``).

    ``None`` when no gradient flows there (no backward yet, or the input needs none).
    """
    grad_of = (lambda n: n.grad) if grads is None else grads.get
    g = grad_of(node)
    if g is None or grad_of(node.inputs[k]) is None:
        return None
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


class GivenGrads(EngineNumbers):
    """Where a drawing reads its numbers when the gradients come from elsewhere, a dict
    ``{node: grad}`` such as your own backward's (``mg.draw(graph, grads=my_grads)``): the values
    from the nodes, the gradients from the dict, and on each edge the op's VJP of its gradient
    there."""

    def __init__(self, grads):
        self.grads = grads

    def grad(self, node):
        return self.grads.get(node)

    def edge(self, node, k):
        return edge_gradient(node, k, self.grads)


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
            groups=True, around=None, depth=2, fold=None, keep=2, direction="LR"):
    """Turn draw()'s arguments into a dict of decisions (``None`` means: decide by the graph).

    ``direction`` is the way the edges run: ``"LR"`` (left to right, wide) or ``"TB"`` (top to
    bottom, tall: what fits a narrow screen).

    ``layout`` says which nodes get a box (``layout.Layout``); a layout with too many boxes is refused.
    ``numbers`` is where the numbers are read: the nodes, or ``GivenGrads`` when ``grads`` is a
    dict ``{node: grad}``.
    """
    layout = Layout(graph, around=around, depth=depth, fold=fold, keep=keep, fold_above=DETAILED_NODES)
    refuse_if_too_big(graph, layout)
    small = len(layout.nodes) <= DETAILED_NODES
    numbers = GivenGrads(grads) if isinstance(grads, dict) else ENGINE
    grads = None if isinstance(grads, dict) else grads
    has_grads = any(numbers.grad(n) is not None for n in layout.nodes)
    highlight = {graph.node(h) for h in highlight}
    if direction not in DIRECTIONS:
        raise DrawingError(f"direction={direction!r}: a drawing runs left to right (\"LR\") or "
                           f"top to bottom (\"TB\").")
    return dict(values=small if values is None else values,
                grads=(small and has_grads) if grads is None else grads,
                backward=backward, highlight=highlight, legend=legend, groups=groups, layout=layout,
                direction=direction, numbers=numbers,
                summary_values=values is not False, summary_grads=grads is not False)


def refuse_if_too_big(graph, layout):
    """A ``DrawingError`` saying how to draw a part, if ``layout`` has more than ``MAX_BOXES`` boxes."""
    boxes = layout.boxes()
    if boxes <= MAX_BOXES:
        return
    folded = (" (even with its repeats folded)" if layout.folds else
              " (it has no repeats to fold)" if layout.folding else "")
    refold = "" if layout.folding else ", and fold=True folds repeated layers or time steps"
    raise DrawingError(
        f"this drawing would have {boxes:,} boxes for the {len(graph.nodes):,} nodes of the "
        f"graph{folded}, more than the {MAX_BOXES} mg.draw lays out: Graphviz's dot takes minutes "
        f"or crashes on drawings this big. Draw a part: mg.draw(g, around='{graph.outputs[0].name}', "
        f"depth=2) shows the nodes near one node, mg.draw(node) only what computes that node{refold}.")


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


def ref_statement(node, k, fill):
    """A small box standing for a shared leaf (``node``'s k-th input) right where it is used."""
    leaf = node.inputs[k]
    fillcolor, line = KIND_COLOURS[leaf.kind]
    attrs = {"id": f"mg-ref-{node.name}-{k}", "class": f"mg-ref mg-{leaf.kind} {fill(('class', leaf))}",
             "style": "rounded,filled,dashed", "fillcolor": fillcolor, "color": line,
             "fontsize": "9", "margin": "0.04,0.02", "height": "0.2", "label": leaf.name}
    return f"{quote(ref_name(node, k))} [{attributes(attrs)}]"


def ref_name(node, k):
    """The DOT name of the ref box drawn for ``node``'s k-th input."""
    return f"ref {k} of {node.name}"


def fold_statement(fold):
    """The box that stands for the hidden repeats of a fold."""
    hidden = len(fold.units) - len(fold.drawn)
    label = (f'<<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="1">'
             f'<TR><TD><B>⋯ {hidden:,} more repeats ⋯</B></TD></TR>'
             f'<TR><TD><FONT POINT-SIZE="9" COLOR="{MUTED}">{len(fold.hidden):,} nodes, each repeat: '
             f'{html.escape(fold.ops_in_a_unit())}</FONT></TD></TR></TABLE>>')
    attrs = {"id": fold.box, "class": "mg-fold", "style": "rounded,filled,dashed",
             "fillcolor": "#f8f9fa", "color": MUTED}
    return f"{quote(fold.box)} [{attributes(attrs)} label={label}]"


def edge_tail(node, k, layout):
    """Where the edge into ``node``'s k-th input starts: the input, its ref box or its fold's box."""
    parent = node.inputs[k]
    if parent in layout.fold_of:
        return quote(layout.fold_of[parent].box)
    if parent in layout.refs:
        return quote(ref_name(node, k))
    tail = quote(parent.name)
    if node.op.name == "output":                           # leave the multi-output box by its port
        tail += f":out{node.attrs['index']}:e"
    return tail


def fold_edges(layout):
    """Edges into the fold boxes: one from each drawn node (or other fold) that feeds its nodes."""
    edges = {}
    for fold in layout.folds:
        for n in fold.hidden:
            for p in n.inputs:
                if p in layout.fold_of and layout.fold_of[p] is not fold:
                    edges[(layout.fold_of[p].box, fold.box)] = True
                elif p in layout.inside and p not in layout.fold_of and p not in layout.refs:
                    edges[(p.name, fold.box)] = not layout.across_repeats(p, n)
    return [f'{quote(tail)} -> {quote(head)} [class="mg-edge mg-fold-edge" color="{MUTED}"'
            + ("" if constrained else ' constraint="false"') + "]"
            for (tail, head), constrained in edges.items()]


def edge_statement(node, k, opts, fill):
    parent = node.inputs[k]
    tail = edge_tail(node, k, opts["layout"])
    attrs = {"id": f"mg-edge-{node.name}-{k}", "class": f"mg-edge {fill(('class', node, k))}"}
    if opts["backward"]:
        attrs.update(dir="back", style="dashed", color=GRADIENT, fontcolor=GRADIENT)
        if opts["numbers"].grad(parent) is None:           # no gradient flows to a constant
            attrs.update(dir="none", style="dotted", color=MUTED)
        elif parent not in opts["layout"].fold_of:         # (sent to a folded node: not shown)
            attrs["label"] = fill(("edge", node, k))
    if {node, parent} <= opts["highlight"]:
        attrs.update(color=HIGHLIGHT, penwidth="2.5")
    if opts["layout"].across_repeats(parent, node):
        attrs["constraint"] = "false"
    return f"{tail} -> {quote(node.name)} [{attributes(attrs)}]"


def legend_statement(direction="LR"):
    """The key of the node kinds' colours: a row, or a column in a top-to-bottom drawing (where
    a row beside the first boxes would make the drawing wider by its whole length)."""
    cells = [f'<TD BGCOLOR="{fillcolor}" COLOR="{line}" BORDER="1">{kind}</TD>'
             for kind, (fillcolor, line) in KIND_COLOURS.items()]
    rows = "".join(f"<TR>{cell}</TR>" for cell in cells) if direction == "TB" else f"<TR>{''.join(cells)}</TR>"
    return (f'"mg-legend" [id="mg-legend" shape=plain label=<<TABLE BORDER="0" CELLSPACING="4">'
            f"{rows}</TABLE>>]")


def caption(layout):
    """The drawing's caption, under it: what was folded or left out."""
    lines = "".join(f'{html.escape(line)}<BR ALIGN="LEFT"/>' for line in layout.caption)
    return f'  graph [labelloc=b labeljust=l fontcolor="{MUTED}" label=<{lines}>]'


def clusters_of(graph, opts, fill):
    """Frames of the drawing: name -> (label, DOT statements of its nodes and ref boxes, inner
    frames: layer -> statements).

    A drawn repeat of a fold gets a frame (``repeat 2 of 1000``), and inside it each layer of
    the repeat a frame of its own (a transformer block's ``h1.attn``, ``h1.mlp``); other nodes
    are framed by layer (``layer_groups``), and a layer of one node, or a node of no layer
    (name None), is not.
    """
    layout, clusters = opts["layout"], {}
    group = layer_groups(graph) if opts["groups"] else {}
    for node in layout.nodes:
        statements = [node_statement(node, opts, fill)]
        statements += [ref_statement(node, k, fill) for k, p in enumerate(node.inputs) if p in layout.refs]
        if node in layout.unit_of:
            fold, k = layout.unit_of[node]
            name, label = f"fold{fold.number}.repeat{k + 1}", f"repeat {k + 1} of {len(fold.units)}"
            inner = clusters.setdefault(name, (label, [], {}))[2]
            inner.setdefault(group.get(node), []).extend(statements)
        else:
            name = group.get(node)
            clusters.setdefault(name, (name, [], {}))[1].extend(statements)
    return clusters


def frame(name, label, statements, indent="  "):
    """The DOT lines of a frame (a dashed, rounded cluster) around ``statements``."""
    return ([f"{indent}subgraph {quote('cluster_' + name)} {{",
             f'{indent}  graph [id={quote("mg-group-" + name)} label={quote(label)} style="rounded,dashed" '
             f'color="{MUTED}" fontcolor="{MUTED}"]']
            + [f"{indent}  {s}" for s in statements] + [f"{indent}}}"])


def repeat_contents(name, inner):
    """The DOT lines inside a repeat's frame: a frame for each of its layers of two or more
    boxes when it has two such layers or more, else its statements as they are. A layer named
    like the repeat's own prefix (``h1``, of ``h1.attn`` and ``h1.mlp``: a block's residual
    additions) is the repeat itself, not framed again."""
    named = [layer for layer in inner if layer is not None]
    layers = [layer for layer in named if len(inner[layer]) > 1
              and not any(other.startswith(layer + ".") for other in named)]
    if len(layers) < 2:
        return [s for statements in inner.values() for s in statements]
    lines = []
    for layer, statements in inner.items():
        lines += (frame(f"{name}.{layer}", layer, statements, indent="")
                  if layer in layers else statements)
    return lines


def with_title(svg, text):
    """``svg`` with a ``<title>`` as the first child of its root element (its accessible name)."""
    start = svg.index("<svg")
    end = svg.index(">", start) + 1
    return f'{svg[:end]}\n<title>{html.escape(text, quote=False)}</title>{svg[end:]}'


def dot_source(graph, opts, fill):
    """The DOT text of a graph. ``fill(slot)`` gives the text that goes where a number goes."""
    lines = [f"digraph {quote(description(opts))} {{",
             f'  graph [rankdir={opts["direction"]} nodesep=0.25 ranksep=0.4 fontname="Helvetica" fontsize=10]',
             '  node [shape=box style="rounded,filled" fontname="Helvetica" fontsize=12 margin="0.08,0.04"]',
             '  edge [fontname="Helvetica" fontsize=9 arrowsize=0.7 color="#495057"]']
    if opts["legend"]:
        lines.append("  " + legend_statement(opts["direction"]))
    layout = opts["layout"]
    if layout.boxes() > DETAILED_NODES:                    # fewer layout passes: big drawings lay out sooner
        lines.append("  graph [nslimit=1 nslimit1=1]")
    for name, (label, statements, inner) in clusters_of(graph, opts, fill).items():
        statements = statements + repeat_contents(name, inner)
        if name is None or len(statements) < 2 and label == name:
            lines += ["  " + s for s in statements]
        else:
            lines += frame(name, label, statements)
    lines += ["  " + fold_statement(fold) for fold in layout.folds]
    for node in layout.nodes:
        drawn_folds = set()                                # one edge from each fold box is enough
        for k, parent in enumerate(node.inputs):
            fold = layout.fold_of.get(parent)
            if parent not in layout.inside or fold in drawn_folds:
                continue
            lines.append("  " + edge_statement(node, k, opts, fill))
            if fold is not None:
                drawn_folds.add(fold)
    lines += ["  " + edge for edge in fold_edges(layout)]
    if layout.caption:                                     # last: the frames keep their own style
        lines.append(caption(layout))
    lines.append("}")
    return "\n".join(lines) + "\n"


def static_fill(slot, numbers=ENGINE):
    """Slots of a one-off drawing: the numbers themselves (no extra class)."""
    return "" if slot[0] == "class" else html.escape(slot_text(slot, numbers))


def render_svg(source, seconds=None):
    """Run Graphviz's ``dot`` on DOT text; returns the SVG document as a string.

    ``dot`` gets ``seconds`` (default ``DOT_SECONDS``) to finish. When it is missing, takes
    longer, crashes or fails, the result is a ``DrawingError`` saying so and what to do.
    """
    seconds = DOT_SECONDS if seconds is None else seconds
    program = shutil.which(DOT_COMMAND)
    if program is None:
        raise DrawingError(f"cannot find Graphviz's '{DOT_COMMAND}' program, which lays drawings out. "
                           "Install Graphviz: `make lab` does it, or `sudo apt-get install graphviz`, "
                           "`brew install graphviz`, or conda's `python-graphviz`.")
    boxes = sum(line.lstrip().startswith('"') and " -> " not in line for line in source.splitlines())
    advice = ("Draw less of the graph: mg.draw(g, around=node, depth=2), mg.draw(node), or "
              "fold=True to fold repeated layers or time steps.")
    try:
        done = subprocess.run([program, "-Tsvg"], input=source.encode("utf-8"), capture_output=True,
                              timeout=seconds)
    except subprocess.TimeoutExpired:
        raise DrawingError(f"Graphviz's dot did not finish laying out {boxes:,} boxes in {seconds} s "
                           f"and was stopped. {advice}") from None
    if done.returncode != 0:
        why = (f"crashed ({signal.Signals(-done.returncode).name})" if done.returncode < 0
               else f"failed (exit status {done.returncode})")
        said = done.stderr.decode("utf-8", "replace").strip()[:300]
        raise DrawingError(f"Graphviz's dot {why} while laying out {boxes:,} boxes"
                           + (f", saying: {said}" if said else "") + f". {advice}")
    return done.stdout.decode("utf-8")


class Drawing:
    """A picture of a graph at one moment: ``.source`` (DOT), ``.svg()``, and a text summary.

    The numbers are read when the drawing is made; later changes to the graph do not alter it.
    In Jupyter it shows as SVG; its ``repr`` is the one-line-per-node summary. With
    ``direction=None`` the layout is chosen when the SVG is made (``fitting_direction``), and
    ``.source`` and ``.options`` are then those of the layout chosen.
    """

    def __init__(self, graph, direction=None, **options):
        self.graph = graph
        self._given = options
        self._choose = direction is None
        self.options, self.source = self._laid_out(direction or "LR")
        self._summary = summary(graph, self.options)       # the same nodes either way
        self._svg = None

    def _laid_out(self, direction):
        options = resolve(self.graph, direction=direction, **self._given)
        return options, dot_source(self.graph, options, lambda slot: static_fill(slot, options["numbers"]))

    def svg(self):
        """The SVG document ``dot`` makes of ``.source`` (computed once, then reused): sized to
        fit ``FIT_WIDTH`` as far as ``READABLE`` allows, titled with ``description``."""
        if self._svg is None:
            svg = render_svg(self.source)
            if self._choose and svg_size(svg)[0] > FIT_WIDTH:
                options, source = self._laid_out("TB")
                tall = render_svg(source)
                if svg_size(tall)[0] < svg_size(svg)[0]:
                    self.options, self.source, svg = options, source, tall
            self._svg = with_title(fitted(svg), description(self.options))
        return self._svg

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.svg(), "text/plain": self._summary}

    def __repr__(self):
        return self._summary


def svg_size(svg):
    """(width, height) of dot's SVG in CSS pixels."""
    width, height = SVG_SIZE.search(svg).groups()
    return float(width) * PX_PER_PT, float(height) * PX_PER_PT


def fitted(svg):
    """dot's SVG shrunk (never enlarged) to ``FIT_WIDTH`` pixels wide, or to ``READABLE`` of its
    size if that is still wider: its width and height attributes change, its viewBox stays, so
    everything inside scales. (JupyterLab shows an SVG output as an image at its own size.)"""
    width, height = svg_size(svg)
    scale = max(READABLE, min(1.0, FIT_WIDTH / width))
    if scale == 1.0:
        return svg
    return SVG_SIZE.sub(f'<svg width="{width * scale / PX_PER_PT:.2f}pt" '
                        f'height="{height * scale / PX_PER_PT:.2f}pt"', svg, count=1)


def draw(graph_or_node, values=None, grads=None, backward=False, highlight=(), legend=False,
         groups=True, around=None, depth=2, fold=None, keep=2, direction=None):
    """Draw a graph (or the graph of a node) with every node's value and gradient.

    values, grads  show the numbers on each box (default: yes, unless more than 60 nodes are
                   drawn; gradients only once a backward pass has run). ``grads`` may also be
                   a dict ``{node: grad}`` (your own backward's): the drawing shows those
                   gradients instead of the nodes' ``.grad``
    backward       draw the backward pass: dashed edges from each op back to its inputs,
                   labelled with the gradient sent along them
    highlight      nodes (or names) to outline; edges between two of them are outlined too
    legend         add a key of the colours of the node kinds
    groups         frame the nodes of each layer (``mlp.fc1.W``, ``mlp.fc1.b``, ...) together
    around, depth  draw only the part near one node (or name): the nodes at most ``depth``
                   edges from it, either way
    fold           fold repeated structure (layers, time steps): draw the first ``keep``
                   repeats and the last one, each in a frame of its own row (its layers
                   framed inside), and one box for the repeats between them. Default: fold when more than 60 nodes
                   would be drawn; True or False to choose.
    direction      "LR": edges run left to right, "TB": top to bottom. Default: left to right
                   when that fits in a notebook's output (``FIT_WIDTH`` pixels), else whichever
                   of the two is narrower. A drawing still wider is shrunk to fit, but never
                   below ``READABLE`` of its size (its text stays readable): it then scrolls.

    Big graphs: a leaf used by many ops (an RNN's weights) is drawn once with its numbers and
    again as a small dashed box at each use. A caption under the drawing (and at the end of
    its text summary) says what was folded or left out. A drawing of more than ``MAX_BOXES``
    boxes is refused with a ``DrawingError``: draw a part with ``around=``, or draw a node.

        mg.draw(g, fold=True, keep=3)          # an unrolled RNN: steps 1-3, a box, the last step
        mg.draw(g, around="h_7", depth=2)      # the nodes within two edges of h_7
    """
    return Drawing(as_graph(graph_or_node), values=values, grads=grads, backward=backward,
                   highlight=highlight, legend=legend, groups=groups, around=around, depth=depth,
                   fold=fold, keep=keep, direction=direction)


# -- live drawings: laid out once, numbers refilled -------------------------------------------------

LIVE_STYLE = (f"<style>.mg-hl > path, .mg-hl > polygon {{ stroke: {HIGHLIGHT}; stroke-width: 3px; }}"
              f" .mg-hl > text {{ fill: {HIGHLIGHT}; }}</style>")
TOKEN = re.compile(r"@@(\d+)@*")
SVG_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')
PX_PER_PT = 4 / 3


class LiveDrawing:
    """A graph laid out once by ``dot``; ``render()`` then only swaps numbers into the SVG.

    Each number's place is a placeholder as wide as the longest text that number can have, in
    a monospaced font, so the boxes are big enough for any value and never move. ``render``
    returns inline SVG (no XML header) for an HTML page or widget. ``size`` is its natural
    (width, height) in CSS pixels.
    """

    def __init__(self, graph, **options):
        self.graph = graph
        self.options = resolve(graph, **options)
        self.slots = []
        svg = render_svg(dot_source(graph, self.options, self._placeholder))
        svg = svg[svg.index("<svg"):]
        svg = with_title(svg.replace(">", ">" + LIVE_STYLE, 1), description(self.options))   # style: after the <svg ...> tag
        parts = TOKEN.split(svg)
        self._text, self._slot_index = parts[0::2], [int(i) for i in parts[1::2]]
        width, height = SVG_SIZE.search(svg).groups()
        self.size = (float(width) * PX_PER_PT, float(height) * PX_PER_PT)    # in CSS pixels

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
