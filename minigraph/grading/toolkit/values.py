"""Answers as plain JSON data, and how they are shown in a table.

An answer computed in the learner's kernel travels to the grader as JSON, never as a pickle:
unpickling can run code, parsing JSON cannot. ``encode`` turns whatever an answer returned into
a small JSON-able dict; ``decode`` turns it back into a numpy array (or ``None``, or an
``Unreadable`` for anything else).

``show`` formats numbers the same way every time (4 significant digits, ``-0`` shown as ``0``,
long arrays shortened), so a check's table is stable enough for nbval to compare.
"""

import re
from dataclasses import dataclass

import numpy as np

MAX_TEXT = 60          # characters of a value shown in a table cell


@dataclass(frozen=True)
class Unreadable:
    """Something that is not an array: remembered by its type name and a short repr."""

    type_name: str
    text: str


def encode(value):
    """A JSON-able description of ``value``: an array (numbers, lists, arrays), None, or other."""
    if value is None:
        return {"type": "none"}
    try:
        array = np.asarray(value)
    except Exception:                     # a ragged list, an object numpy refuses, ...
        array = None
    if array is not None and array.dtype.kind in "biuf":
        return {"type": "array", "shape": list(array.shape), "data": array.astype(float).tolist()}
    return {"type": "other", "type_name": type(value).__name__, "text": shorten(repr(value))}


def decode(data):
    """The value ``encode`` described. Raises ValueError if ``data`` is not such a description."""
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "none":
        return None
    if kind == "array":
        array = np.array(data["data"], dtype=float)
        if list(array.shape) != list(data["shape"]):
            raise ValueError(f"array data of shape {array.shape} does not match {data['shape']}")
        return array
    if kind == "other":
        return Unreadable(str(data["type_name"]), str(data["text"]))
    raise ValueError(f"not an encoded value: {shorten(repr(data))}")


def show(value):
    """Short, deterministic text for a table cell: arrays, numbers, None, tuples, anything."""
    if isinstance(value, Unreadable):
        return shorten(f"{value.type_name} {value.text}")
    if value is None:
        return "None"
    if isinstance(value, tuple) and not all(isinstance(v, (int, float)) for v in value):
        return shorten("(" + ", ".join(show(v) for v in value) + ")")
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        return shorten(repr(value))
    if array.ndim == 0:
        return number(float(array))
    text = np.array2string(array.astype(float), separator=", ", max_line_width=10**6,
                           threshold=12, edgeitems=3, formatter={"float_kind": number})
    return shorten(text)


def number(x):
    """One number with 4 significant digits; ``-0`` is shown as ``0``."""
    text = f"{x:.4g}"
    return "0" if text == "-0" else text


def shape_text(value):
    """``shape (2, 3)`` for arrays, the type for anything else."""
    if isinstance(value, Unreadable):
        return f"a {value.type_name}"
    if value is None:
        return "None"
    return f"shape {tuple(np.shape(value))}"


def sentences(text, limit):
    """``text`` on one line, at most ``limit`` characters, cut *between sentences*.

    Whole sentences (and whole lines of a multi-line message) are kept from the start while they
    fit, so a message that puts its key facts first (node, shapes) keeps them; only a first
    sentence longer than ``limit`` is cut inside, at a word. A cut is marked with "…".
    """
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    kept = ""
    for piece in re.split(r"(?<=[.!?])\s+|\n+", str(text).strip()):
        longer = f"{kept} {' '.join(piece.split())}".strip()
        if len(longer) > limit - 2:
            break
        kept = longer
    return f"{kept} …" if kept else flat[:limit - 1].rsplit(" ", 1)[0] + "…"


def shorten(text, limit=MAX_TEXT):
    """``text`` on one line (runs of whitespace become one space), cut to ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
