"""What a drawing shows of a big graph: its repeats folded, its shared leaves drawn at each use, or a part.

Graphviz's ``dot`` lays out a few hundred boxes in a second or two. Thousands take it minutes,
and a node with a thousand edges (an RNN's weight, used at every time step) can crash it. But a
deep-learning graph is mostly big because it repeats itself -- fifty identical layers, an RNN
unrolled for a thousand steps -- so a drawing can show the first repeats and the last one in
full and *fold* the ones between into a single box::

    [repeat 1] -> [repeat 2] -> [ 997 more repeats ] -> [repeat 1000] -> loss

``Layout(graph, ...)`` decides which nodes get a box; ``viz.py`` then draws them. It works in
three steps.

1. **Order.** List the leaves used more than once, then the other nodes depth-first from the
   outputs, each after its inputs, visiting the input with the longest history first, and
   each op as soon as its inputs are listed. An unrolled RNN then comes out one time step
   after another (its output at each step too), each step's nodes in one order.
2. **Repeats.** Node ``i + p`` *copies* node ``i`` when they have the same kind, op, shape and
   attributes, and each input of node ``i + p`` is either the same node as node ``i``'s (a
   weight every step shares) or node ``i``'s input moved on by ``p`` places (the previous
   step's hidden state). Where this holds for a stretch of consecutive ``i``, the nodes there
   are copies of one *unit* of ``p`` nodes, each unit wired to the one before it the way that
   one is wired to its own predecessor. All periods ``p`` up to ``MAX_PERIOD`` are tried; the
   stretches that hide the most nodes win.
3. **Shared leaves.** A leaf used by many ops, or by more than one repeat, would tie the whole
   picture together with long edges. It is drawn once with its numbers, and again as a small
   *ref* box (its name, in its colour) next to each op that uses it.

``around=node, depth=d`` draws a part instead: the nodes at most ``d`` edges from ``node``,
in either direction (a search does not go on through a leaf: a shared weight would pull in
every op that uses it).
"""

import re

import numpy as np

from .errors import DrawingError

MAX_PERIOD = 200            # the longest repeating unit looked for, in nodes
MANY_USES = 8               # a leaf with more uses than this is drawn as a ref box at each use
MAX_INPUTS = 16             # an op with more inputs than this is never taken for a repeat
NO_INPUT = -(10 ** 9)       # an empty input slot (an op with fewer inputs than the widest)
OUTSIDE = -2 * 10 ** 9      # an input left out of the part being drawn


def drawing_order(graph):
    """The nodes, each after its inputs, in the order that lines repeats up one after another.

    Leaves used more than once come first (a weight shared by every time step belongs to none
    of them). Then depth-first from the outputs, visiting the input with the longest history
    first; and as soon as a node is placed, so is each op it feeds whose other inputs are all
    placed already (with that op's own leaves): an RNN's output at step t right after h_t,
    not after the last step.
    """
    height, users = {}, consumers_of(graph)
    for n in graph.nodes:                                  # graph.nodes: inputs come first
        height[n] = 1 + max((height[p] for p in n.inputs), default=0)
    order = [n for n in graph.nodes if n.op is None and len(users[n]) > 1]
    seen = set(order)                                      # placed, or being visited
    waiting = {n: sum(p.op is not None for p in n.inputs) for n in graph.nodes}   # unplaced ops

    def place(node):
        ready = [node]
        while ready:
            n = ready.pop()
            order.append(n)
            for user in users[n]:
                waiting[user] -= n.op is not None
                if user not in seen and waiting[user] == 0:
                    leaves = [p for p in user.inputs if p not in seen]
                    seen.update(leaves + [user])
                    order.extend(leaves)
                    ready.append(user)

    for root in graph.outputs:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(sorted(root.inputs, key=height.get, reverse=True)))]
        while stack:
            node, pending = stack[-1]
            for child in pending:
                if child not in seen:
                    seen.add(child)
                    stack.append((child, iter(sorted(child.inputs, key=height.get, reverse=True))))
                    break
            else:
                stack.pop()
                place(node)
    return order


def consumers_of(graph):
    """Each node's consumers: the ops that take it as an input (once per use)."""
    users = {n: [] for n in graph.nodes}
    for n in graph.nodes:
        for p in n.inputs:
            users[p].append(n)
    return users


def part_around(graph, centre, depth):
    """The nodes at most ``depth`` edges from ``centre``, either way (not on through a leaf)."""
    users = consumers_of(graph)
    part, frontier = {centre}, [centre]
    for _ in range(depth):
        nearby = []
        for n in frontier:
            if n is centre or n.op is not None:
                nearby += [m for m in (*n.inputs, *users[n]) if m not in part]
        part.update(nearby)
        frontier = nearby
    return part


class Fold:
    """A run of repeated units: ``units[k]`` is the k-th copy (a list of nodes).

    ``drawn`` are the unit numbers drawn in full (the first ``keep`` and the last one); the
    units between them are ``hidden`` behind one box.
    """

    def __init__(self, units, keep, number):
        self.units, self.number = units, number
        self.drawn = list(range(keep)) + [len(units) - 1]
        self.hidden = [n for unit in units[keep:-1] for n in unit]
        self.box = f"mg-fold-{number}"

    def ops_in_a_unit(self):
        """``matmul ×2, add ×2, tanh``: what one unit is made of."""
        counts = {}
        for n in self.units[0]:
            what = n.kind if n.op is None else n.op.name
            counts[what] = counts.get(what, 0) + 1
        return ", ".join(what if c == 1 else f"{what} ×{c}" for what, c in counts.items())

    def describe(self):
        """One sentence for the caption and the text summary."""
        first, last = len(self.drawn) - 1, len(self.units) - 2     # the hidden units, from 0
        return (f"Repeats {first + 1}-{last + 1} of {len(self.units)} "
                f"(each {plural(len(self.units[0]), 'node')}: {self.ops_in_a_unit()}), "
                f"from '{self.units[first][0].name}' to '{self.units[last][-1].name}': "
                f"{len(self.hidden):,} nodes folded into one box")


def local_keys(nodes):
    """An integer per node: equal when kind, op, shape, attributes and input count agree."""
    ids, keys = {}, []
    for i, n in enumerate(nodes):
        if len(n.inputs) > MAX_INPUTS:
            keys.append(-1 - i)                            # unique: never a copy of another
            continue
        key = (n.kind, n.op and n.op.name, np.shape(n.value) if n.value is not None else None,
               repr(sorted(n.attrs.items())), len(n.inputs))
        keys.append(ids.setdefault(key, len(ids)))
    return np.array(keys)


def input_places(nodes, inside):
    """A table: row i holds the places (in ``nodes``) of node i's inputs."""
    place = {n: i for i, n in enumerate(nodes)}
    width = max([len(n.inputs) for n in nodes if len(n.inputs) <= MAX_INPUTS] + [1])
    table = np.full((len(nodes), width), NO_INPUT, dtype=np.int64)
    for i, n in enumerate(nodes):
        if len(n.inputs) <= MAX_INPUTS:
            table[i, :len(n.inputs)] = [place[p] if p in inside else OUTSIDE for p in n.inputs]
    return table


def copy_runs(nodes, inside, keep):
    """Every candidate ``(hidden, period, start, length)``: a stretch of whole copies of a unit."""
    keys, places = local_keys(nodes), input_places(nodes, inside)
    runs = []
    for p in range(1, min(MAX_PERIOD, len(nodes) // (keep + 3)) + 1):
        same = places[p:] == places[:-p]
        moved = places[p:] == places[:-p] + p
        copies = (keys[p:] == keys[:-p]) & np.all(same | moved, axis=1)
        edges = np.diff(np.concatenate([[0], copies.astype(np.int8), [0]]))
        for start, end in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
            length = end - start + p                       # node end-1+p copies node end-1
            units = length // p
            if units >= keep + 3:                          # at least two units to hide
                runs.append(((units - keep - 1) * p, p, int(start), int(length)))
    return runs


def named_automatically(node):
    """Whether a node has a name minigraph gave it (``tanh_7``, ``param_2``), not its author."""
    if node.op is not None:
        prefix = node.op.name
    else:
        prefix = {"input": "input", "parameter": "param", "constant": "const"}[node.kind]
    return re.fullmatch(rf"{re.escape(prefix)}_\d+", node.name) is not None


def best_phase(nodes, p, start, length, keep):
    """Where the units of a stretch begin: where the fewest edges cross into the next unit.

    Ties go to the unit whose nodes' names have the fewest dotted prefixes (``t2.hW``, ``t2.h``
    are one step), then to the unit that ends with a node named by hand (``h_1``, not
    ``tanh_7``), then to the unit that ends with what it passes on (an RNN step, its state).
    """
    def crossing(phase):
        cut = start + phase + keep * p                     # between the drawn units and the fold
        before, after = nodes[cut - p:cut], nodes[cut:cut + p]
        tails = {q for n in after for q in n.inputs if q in set(before)}
        prefixes = {n.name.rsplit(".", 1)[0] for n in before if "." in n.name}
        return (len(tails), len(prefixes), named_automatically(before[-1]), before[-1] not in tails)
    phases = [f for f in range(p) if (length - f) // p >= keep + 3]
    return min(phases, key=crossing)


def find_folds(nodes, inside, keep):
    """The folds of a drawing: non-overlapping runs of repeats, those hiding most nodes first."""
    taken, folds = np.zeros(len(nodes), dtype=bool), []
    for _, p, start, length in sorted(copy_runs(nodes, inside, keep), key=lambda r: (-r[0], r[1])):
        if taken[start:start + length].any():
            continue
        taken[start:start + length] = True
        phase = best_phase(nodes, p, start, length, keep)
        first = start + phase
        units = [nodes[first + k * p:first + (k + 1) * p] for k in range((length - phase) // p)]
        folds.append(Fold(units, keep, len(folds) + 1))
    return sorted(folds, key=lambda f: nodes.index(f.units[0][0]))


class Layout:
    """Which nodes a drawing shows, in order, and what it leaves out (see the module docstring).

    ``nodes``   the nodes drawn as boxes, each after its inputs
    ``folds``   the ``Fold``s: each hides some repeats behind one box
    ``refs``    drawn leaves also drawn as a small ref box at each use
    ``caption`` sentences saying what was folded or left out (empty when nothing was)

    ``fold`` None folds repeats when more than ``fold_above`` nodes would be drawn.
    """

    def __init__(self, graph, around=None, depth=2, fold=None, keep=2, fold_above=60):
        for name, number in (("depth", depth), ("keep", keep)):
            if not isinstance(number, int) or number < 0:
                raise DrawingError(f"{name}={number!r}: give a whole number, 0 or more.")
        order = drawing_order(graph)
        inside = set(order)
        if around is not None:
            if graph.node(around) not in inside:
                raise DrawingError(f"cannot draw around {graph.node(around)!r}: it is not a node of this "
                                   "graph. Draw around one of its nodes (or draw the graph it belongs to).")
            inside = part_around(graph, graph.node(around), depth)
        order = [n for n in order if n in inside]
        self.inside, self.total = inside, len(graph.nodes)
        self.folding = len(order) > fold_above if fold is None else fold
        self.folds = find_folds(order, inside, keep) if self.folding else []
        self.fold_of = {n: f for f in self.folds for n in f.hidden}
        self.unit_of = {n: (f, k) for f in self.folds for k in f.drawn for n in f.units[k]}
        self.nodes = [n for n in graph.nodes if n in inside and n not in self.fold_of]
        self.refs = self.shared_leaves()
        self.caption = [f"{f.describe()}." for f in self.folds]
        if around is not None:
            centre = graph.node(around).name
            self.caption.insert(0, f"The {len(order):,} nodes at most {depth} edges from '{centre}' "
                                   f"(of {self.total:,}); the others are left out.")
        if self.refs:
            self.caption.append("Used by many ops, so drawn again (small, dashed) at each use: "
                                + ", ".join(n.name for n in self.refs) + ".")

    def shared_leaves(self):
        """Drawn leaves used by more than ``MANY_USES`` drawn ops, or by more than one repeat."""
        uses, repeats = {}, {}
        for n in self.nodes:
            for p in n.inputs:
                if p.op is None and p in self.inside:
                    uses[p] = uses.get(p, 0) + 1
                    repeats.setdefault(p, set()).add(self.unit_of.get(n))
        for n in self.fold_of:
            for p in n.inputs:
                if p.op is None and p in self.inside and p not in self.fold_of:
                    repeats.setdefault(p, set()).add(self.fold_of[n])
        return [p for p in self.nodes if p in uses and
                (uses[p] > MANY_USES or len(repeats[p] - {None}) > 1)]

    def repeat_of(self, node):
        """``(fold, k)`` for a node of a fold's drawn repeat k, ``(fold, None)`` for a hidden node."""
        if node in self.fold_of:
            return self.fold_of[node], None
        return self.unit_of.get(node)

    def across_repeats(self, tail, head):
        """Whether an edge joins two different repeats (or a repeat and a fold's box).

        Drawn without pulling its ends into order (``constraint=false`` in DOT), so each repeat
        starts a new row, at the left, instead of all repeats making one very long row.
        """
        ends = self.repeat_of(tail), self.repeat_of(head)
        return None not in ends and ends[0] != ends[1]

    def boxes(self):
        """How many boxes ``dot`` must lay out: nodes, fold boxes and ref boxes."""
        refs = set(self.refs)
        return (len(self.nodes) + len(self.folds)
                + sum(p in refs for n in self.nodes for p in n.inputs))

    def complete(self):
        """True when every node of the graph is drawn."""
        return len(self.nodes) == self.total


def plural(count, word):
    """``1 node``, ``6 nodes``."""
    return f"{count:,} {word}" + ("" if count == 1 else "s")
