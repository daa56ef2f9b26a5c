"""A drawing as text: the numbers on its boxes, its one-line-per-node summary, its title.

``viz.py`` draws; this module writes the words and numbers it draws, the same on every machine:

- ``format_number`` and ``format_value``: a number or an array in one short line (``0.4621``,
  ``(2, 3) [0.123, -1.3, 2, …]``), and ``widest_text``, the room a value of some shape can need;
- ``summary``: a drawing's text form (its ``repr``, and the ``text/plain`` that nbval compares):
  one line per node with its value and gradient;
- ``description``: a drawing's text alternative, the ``<title>`` of its SVG.

``opts`` is ``viz.resolve``'s dict of decisions (its ``layout``, ``numbers``, ``backward``...).
"""

import numpy as np

ZERO = 1e-12                # numbers smaller than this print as 0 (rounding noise differs by machine)


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


def summary(graph, opts):
    """One line per drawn node: name, kind (or op), value, grad -- stable text for notebook tests.

    When the drawing leaves nodes out, the first line says how many are drawn and the last
    lines are its caption: what was folded or left out.
    """
    layout, rows = opts["layout"], []
    for n in layout.nodes:
        what = n.kind if n.op is None else n.op.name
        value = format_value(n.value) if opts["summary_values"] else ""
        g = opts["numbers"].grad(n)
        grad = f"grad {format_value(g)}" if opts["summary_grads"] and g is not None else ""
        rows.append((n.name, what, value, grad))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    drawn = f"{len(rows)} nodes" if layout.complete() else f"{len(rows):,} of {layout.total:,} nodes"
    lines = [f"Drawing of {drawn}" + (", backward view" if opts["backward"] else "")]
    lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths + [0])).rstrip() for r in rows]
    return "\n".join(lines + layout.caption)


def description(opts, names=10):
    """What a drawing shows, in one line: its text alternative (the SVG's ``<title>``, which a
    screen reader reads and a browser shows on hover), e.g. ``Drawing of 9 nodes: x, W, b, @,
    +, sigmoid, **, sum, loss``."""
    layout = opts["layout"]
    nodes = layout.nodes
    drawn = f"{len(nodes)} nodes" if layout.complete() else f"{len(nodes):,} of {layout.total:,} nodes"
    shown = [n.name for n in nodes] if len(nodes) <= names else [n.name for n in nodes[:names - 1]] + ["…", nodes[-1].name]
    return (f"Drawing of {drawn}" + (", backward view" if opts["backward"] else "")
            + ": " + ", ".join(shown))
