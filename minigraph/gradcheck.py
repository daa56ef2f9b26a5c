"""Is the backward pass right? Compare it with central differences.

For a function f and a tiny step eps, ``(f(x + eps) - f(x - eps)) / (2 eps)`` approximates
f'(x) with an error of order eps² -- slow (two forward passes per number) but independent of
any backward code, so it is the referee for every gradient in the course.

* ``check_graph`` compares ``backward`` with central differences for every leaf of a graph:
  it tells you *that* a gradient is wrong.
* ``check_ops`` checks each op on its own (its VJP against central differences of its own
  forward, along a random direction): it tells you *which node* has the wrong backward.
"""

import numpy as np

from .errors import GraphError, shape_text
from .values import same_shape


class Report:
    """The result of a check: one row per comparison, ``ok`` if all agree, ``bad_node`` if not.

    ``not_done`` is true when the first bad row is a backward that is still a stub (it raises
    NotImplementedError); ``summary`` says the outcome in one line.
    """

    def __init__(self, title, rows):
        self.title, self.rows = title, rows
        self.ok = all(row["ok"] for row in rows)
        bad = next((row for row in rows if not row["ok"]), None)
        self.bad_node = bad["node"] if bad else None
        self.not_done = bool(bad and bad.get("not_done"))

    @property
    def summary(self):
        """``every op agrees``, ``first wrong node: h`` or ``not done yet: ...``."""
        if self.ok:
            return "every op agrees"
        if self.not_done:
            return f"not done yet: the backward of '{self.bad_node.name}' raises NotImplementedError"
        return f"first wrong node: {self.bad_node.name}"

    @property
    def worst(self):
        """(node, error) of the largest disagreement."""
        row = max(self.rows, key=lambda r: r["error"], default=None)
        return (row["node"], row["error"]) if row else (None, 0.0)

    def __repr__(self):
        outcome = ("all gradients agree" if self.ok else self.summary if self.not_done
                   else "MISMATCH at " + self.bad_node.name)
        lines = [f"{self.title}: {outcome}",
                 f"  {'node':<24}{'analytic':>14}{'numeric':>14}{'error':>11}"]
        for r in self.rows:
            mark = "ok" if r["ok"] else "<-- wrong"
            lines.append(f"  {r['label']:<24}{_fmt(r['analytic']):>14}{_fmt(r['numeric']):>14}"
                         f"{_fmt_error(r['error']):>11}  {mark}" + (f"  {r['note']}" if r.get("note") else ""))
        return "\n".join(lines)


def _fmt(x):
    return "—" if x is None else f"{x:.6g}"


def _fmt_error(error):
    """Differences below 1e-8 are rounding noise that varies between machines: print them alike."""
    return "< 1e-8" if error < 1e-8 else f"{error:.1e}"


def _close(a, b, rtol, atol):
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def numerical_grad(graph, node, feed=None, eps=1e-6, seed=None):
    """d(output)/d(leaf) by central differences, one element at a time (for checking, not training).

    With a non-scalar output, pass ``seed``: then this is the gradient of sum(seed * output).
    """
    if node.op is not None:
        raise GraphError(f"numerical_grad perturbs a leaf's value; '{node.name}' is an op.")
    graph.forward(feed)
    weight = 1.0 if seed is None else np.asarray(seed)
    original = node.value
    base = np.array(original, dtype=float)            # perturbed in float64, whatever its dtype
    grad = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        total = 0.0
        for sign in (1, -1):
            bumped = base.copy()
            bumped[i] += sign * eps
            node._set(bumped)
            total += sign * np.sum(weight * graph.forward())
        grad[i] = total / (2 * eps)
    node._set(original)
    graph.forward()
    return grad


def check_graph(graph, feed=None, seed=None, eps=1e-6, rtol=1e-4, atol=1e-6):
    """Compare ``graph.backward`` with central differences for every Input and Parameter."""
    graph.backward(feed, seed=seed)
    leaves = [n for n in graph.nodes if n.kind in ("input", "parameter")
              and np.asarray(n.value).dtype.kind == "f"]
    analytic = {n: np.array(n.grad, dtype=float) for n in leaves}
    rows = []
    for n in leaves:
        numeric = numerical_grad(graph, n, eps=eps, seed=seed)
        err = float(np.max(np.abs(analytic[n] - numeric), initial=0.0))
        scale = float(np.max(np.abs(numeric), initial=0.0))
        rows.append({"node": n, "label": n.name, "error": err, "ok": err <= atol + rtol * scale,
                     "analytic": float(np.sum(analytic[n])), "numeric": float(np.sum(numeric)),
                     "note": "(sums of all entries)" if np.size(numeric) > 1 else ""})
    return Report("gradient check (backward vs central differences)", rows)


def check_ops(graph, feed=None, eps=1e-6, rtol=1e-4, atol=1e-6, rng=0):
    """Check every op's backward against central differences of its own forward.

    For op y = f(x1, x2, ...), a random upstream gradient u and a random direction d for input
    k, the VJP must satisfy <vjp_k(u), d> = d/dt <u, f(..., x_k + t d, ...)> at t = 0. The first
    op (in topological order) where it fails is ``report.bad_node``: the node whose backward
    disagrees with its forward.
    """
    rng = np.random.default_rng(rng)
    graph.forward(feed)
    rows = []
    for node in graph.nodes:
        if node.op is None:
            continue
        args = [parent.value for parent in node.inputs]
        u = _random_like(node.value, rng)
        for k, parent in enumerate(node.inputs):
            if parent.kind == "constant" or not _is_float(args[k]):
                continue
            rows.append(_check_one(node, k, args, u, rng, eps, rtol, atol))
    return Report("per-op gradient check", rows)


def _random_like(value, rng):
    if isinstance(value, tuple):
        return tuple(_random_like(v, rng) for v in value)
    return rng.normal(size=np.shape(value))


def _is_float(value):
    if isinstance(value, tuple):
        return all(_is_float(v) for v in value)
    return np.asarray(value).dtype.kind == "f"


def _step(x, t, d):
    """x + t d (element by element for a multi-output op's tuple of values)."""
    if isinstance(x, tuple):
        return tuple(_step(a, t, b) for a, b in zip(x, d))
    return x + t * d


def _dot(a, b):
    """Sum of a * b; in tuples, a None entry counts as zeros (no gradient flowed there)."""
    if isinstance(a, tuple):
        return float(np.sum([_dot(x, y) for x, y in zip(a, b) if x is not None]))
    return float(np.sum(np.asarray(a) * np.asarray(b)))


def _check_one(node, k, args, u, rng, eps, rtol, atol):
    """One op, one input: directional derivative by the VJP vs by central differences."""
    label = f"{node.name} -> {node.inputs[k].name}"
    d = _random_like(args[k], rng)

    def f(t):
        moved = list(args)
        moved[k] = _step(args[k], t, d)
        return _dot(u, node.op.forward(*moved, **node.attrs))

    numeric = (f(eps) - f(-eps)) / (2 * eps)
    try:
        vjp = node.op.vjps[k](u, node.value, *args, **node.attrs)
    except NotImplementedError:
        return {"node": node, "label": label, "analytic": None, "numeric": numeric, "error": np.inf,
                "ok": False, "not_done": True, "note": "not done yet (raises NotImplementedError)"}
    except Exception as error:
        return {"node": node, "label": label, "analytic": None, "numeric": numeric, "error": np.inf,
                "ok": False, "note": f"backward raised {type(error).__name__}: {error}"}
    if vjp is None or not same_shape(vjp, args[k]):
        return {"node": node, "label": label, "analytic": None, "numeric": numeric, "error": np.inf,
                "ok": False, "note": f"backward returned {shape_text(vjp)}, expected {shape_text(args[k])}"}
    analytic = _dot(vjp, d)
    return {"node": node, "label": label, "analytic": analytic, "numeric": numeric,
            "error": abs(analytic - numeric), "ok": _close(analytic, numeric, rtol, atol)}
