"""A widget's saved state as static HTML: what a page shows where no kernel runs.

When a notebook is saved with its widgets, each widget output holds only a reference
(``application/vnd.jupyter.widget-view+json``: a model id), and the notebook's metadata holds
every model's last state: an ``HTML`` widget's value (minigraph's drawings are SVG inside
one), an ``Image``'s bytes, an ``Output``'s outputs, a slider's value and range, a box's
children. A viewer without a widget manager shows only the plain-text repr
(``Explorer(children=(VBox(…``).

:func:`widget_html` walks that saved state from one model and writes what it would look
like, frozen: boxes as flex rows and columns, HTML and images as they are, controls as
disabled HTML controls showing their values. :func:`with_static_widgets` replaces every
widget output of a notebook by that picture, for static renderers such as the course site
(``make site``). No JavaScript, nothing fetched: the page shows what the notebook showed
when it was saved.

    import nbformat
    from minigraph import snapshot
    nb = nbformat.read("chapters/03_backpropagation.ipynb", as_version=4)
    static = snapshot.with_static_widgets(nb)    # a copy; nb is untouched
"""

from __future__ import annotations

import copy
import html

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_PREFIX = "IPY_MODEL_"

# How the static picture of each output mime type is written (Output widgets hold outputs).
_OUTPUT_FORMS = (
    ("text/html", lambda data: data),
    ("image/svg+xml", lambda data: data),
    ("image/png", lambda data: f'<img alt="" src="data:image/png;base64,{data.strip()}">'),
    ("image/jpeg", lambda data: f'<img alt="" src="data:image/jpeg;base64,{data.strip()}">'),
    ("text/plain", lambda data: f"<pre>{html.escape(data)}</pre>"),
)


def saved_state(notebook) -> dict:
    """{model id: {"model_name", "state", "buffers"?}} of a notebook's saved widgets ({} if none)."""
    widgets = notebook.get("metadata", {}).get("widgets", {})
    return dict(widgets.get(WIDGET_STATE, {}).get("state", {}))


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def output_html(output) -> str:
    """One stored output (a dict of nbformat's output shape) as static HTML."""
    if output.get("output_type") == "stream":
        return f"<pre>{html.escape(_text(output.get('text', '')))}</pre>"
    if output.get("output_type") == "error":
        return f"<pre>{html.escape(output.get('ename', ''))}: {html.escape(output.get('evalue', ''))}</pre>"
    data = output.get("data", {})
    for mime, form in _OUTPUT_FORMS:
        if mime in data:
            return form(_text(data[mime]))
    return ""


def _child_ids(values):
    return [v[len(MODEL_PREFIX):] for v in values if isinstance(v, str) and v.startswith(MODEL_PREFIX)]


def _layout(values: dict, state: dict) -> dict:
    """The saved state of a widget's Layout model ({} if it has none)."""
    ids = _child_ids([values.get("layout")])
    return state.get(ids[0], {}).get("state", {}) if ids else {}


def _label(state) -> str:
    description = state.get("description") or ""
    if not description:
        return ""
    text = description if state.get("description_allow_html") else html.escape(description)
    return f'<span class="mg-snapshot-label">{text}</span>'


# What a control without a description is called by a screen reader: its kind.
_KIND_NAMES = {"Slider": "slider", "Text": "text box", "Textarea": "text box", "Checkbox": "check box",
               "Dropdown": "choice", "Select": "choice", "RadioButtons": "choice",
               "ToggleButtons": "choice", "Play": "play", "Progress": "progress"}


def _accessible_name(name: str, state: dict) -> str:
    """The plain text that names a control: its tooltip, else its kind ("slider", "choice")."""
    tooltip = state.get("tooltip") or state.get("description_tooltip") or ""
    if tooltip:
        return tooltip
    kind = name.removesuffix("Model")
    return next((said for key, said in _KIND_NAMES.items() if key in kind), "control")


def _labelled(name: str, state: dict, control: str) -> str:
    """A control with its name: inside a <label> with its description (what ipywidgets shows
    next to it), or, with no description, an ``aria-label`` of its tooltip or kind. Either way
    a screen reader (and axe's "label" rule) finds a name for it."""
    label = _label(state)
    if label:
        return f"<label>{label}{control}</label>"
    tag_end = control.index(">")
    named = f' aria-label="{html.escape(_accessible_name(name, state), quote=True)}"'
    return control[:tag_end] + named + control[tag_end:]


def _control(name: str, state: dict) -> str | None:
    """A disabled HTML control that shows the widget's value, or None for an unknown kind."""
    value = state.get("value")
    if name in ("IntSliderModel", "FloatSliderModel", "FloatLogSliderModel"):
        readout = f"<output>{html.escape(str(value))}</output>" if state.get("readout", True) else ""
        return _labelled(name, state, f'<input type="range" disabled min="{state.get("min", 0)}" '
                         f'max="{state.get("max", 100)}" step="{state.get("step") or "any"}" value="{value}">') + readout
    if name in ("IntRangeSliderModel", "FloatRangeSliderModel"):
        return _label(state) + f"<output>{html.escape(str(value))}</output>"
    text = str(value)
    if name == "TextareaModel" or (name == "TextModel" and "\n" in text):
        # a one-line box would drop the newlines a prime such as "ROMEO:\nO" holds
        return _labelled(name, state, f'<textarea disabled rows="{text.count(chr(10)) + 1}">{html.escape(text)}</textarea>')
    if name in ("TextModel", "IntTextModel", "FloatTextModel", "BoundedIntTextModel", "BoundedFloatTextModel"):
        return _labelled(name, state, f'<input type="text" disabled value="{html.escape(text, quote=True)}">')

    if name == "CheckboxModel":
        return _labelled(name, state, f'<input type="checkbox" disabled{" checked" if value else ""}>')
    if name in ("DropdownModel", "SelectModel", "RadioButtonsModel", "ToggleButtonsModel"):
        labels, index = state.get("_options_labels", []), state.get("index")
        options = "".join(f'<option{" selected" if i == index else ""}>{html.escape(label)}</option>'
                          for i, label in enumerate(labels))
        return _labelled(name, state, f"<select disabled>{options}</select>")
    if name in ("ButtonModel", "ToggleButtonModel"):
        text = state.get("description") or ""
        named = "" if text else f' aria-label="{html.escape(state.get("tooltip") or state.get("icon") or "button", quote=True)}"'
        return f'<button type="button" disabled{named}>{html.escape(text)}</button>'
    if name == "PlayModel":
        return (f'<button type="button" disabled aria-label="{html.escape(_accessible_name(name, state), quote=True)}">'
                f'&#9654;</button><output>{html.escape(str(value))}</output>')
    if name in ("IntProgressModel", "FloatProgressModel"):
        return _labelled(name, state, f'<progress max="{state.get("max", 100)}" value="{value}"></progress>')
    return None


def widget_html(model_id: str, state: dict) -> str:
    """The saved widget ``model_id`` (and everything inside it) as static HTML.

    ``state`` is :func:`saved_state`'s dict. A model missing from it (a widget closed before
    the notebook was saved) is drawn as nothing, as JupyterLab would draw no widget there."""
    return _model_html(model_id, state, seen=set())


def _model_html(model_id: str, state: dict, seen: set) -> str:
    entry = state.get(model_id)
    if entry is None or model_id in seen:
        return ""
    seen = seen | {model_id}
    name, values = entry.get("model_name", ""), entry.get("state", {})
    layout = _layout(values, state)
    if layout.get("display") == "none" or layout.get("visibility") == "hidden":
        return ""
    classes = " ".join(["mg-snapshot", f"mg-snapshot-{name.removesuffix('Model').lower()}",
                        *values.get("_dom_classes", [])])
    if "children" in values:                                   # Box, HBox, VBox, GridBox, Tab, ...
        inner = "".join(_model_html(child, state, seen) for child in _child_ids(values["children"]))
        direction = "row" if name == "HBoxModel" else "column"
        wrap = ";flex-wrap:wrap" if "wrap" in (layout.get("flex_flow") or "") else ""
        return f'<div class="{classes}" style="display:flex;flex-direction:{direction}{wrap};gap:4px">{inner}</div>'
    if name in ("HTMLModel", "HTMLMathModel"):
        body = values.get("value", "")
    elif name == "LabelModel":
        body = html.escape(values.get("value", ""))
    elif name == "ImageModel":
        buffer = next((b for b in entry.get("buffers", []) if b.get("path") == ["value"]), None)
        if buffer is None or not buffer.get("data"):
            return ""                                        # an empty image: nothing, not a broken icon
        body = f'<img alt="" src="data:image/{values.get("format", "png")};base64,{buffer["data"]}">'
    elif name == "OutputModel":
        body = "".join(output_html(output) for output in values.get("outputs", []))
    else:
        body = _control(name, values)
        if body is None:
            return ""
        return f'<div class="{classes}">{body}</div>'
    return f'<div class="{classes}">{_label(values)}{body}</div>'


def html_of(widget) -> str:
    """A live widget (and its children) as static HTML of its current state.

    For a widget's display bundle: shown next to the widget view as ``text/html``, it is what a
    viewer without a widget manager (GitHub, nbviewer, a static site) shows in its place."""
    import base64
    import ipywidgets

    parts, todo = [], [widget]
    while todo:                                           # the widget, its children, their layouts
        part = todo.pop()
        parts.append(part)
        todo += [w for w in (getattr(part, "layout", None), *getattr(part, "children", ()))
                 if isinstance(w, ipywidgets.Widget)]
    state = ipywidgets.Widget.get_manager_state(drop_defaults=False, widgets=parts)["state"]
    for entry in state.values():
        for buffer in entry.get("buffers", []):
            if isinstance(buffer.get("data"), (bytes, bytearray, memoryview)):
                buffer["data"] = base64.b64encode(bytes(buffer["data"])).decode("ascii")
    return widget_html(widget.model_id, state)


def with_static_widgets(notebook):
    """A copy of ``notebook`` in which every widget output shows its saved state as static HTML.

    The widget reference and its plain-text repr are replaced by ``text/html``, and the saved
    state leaves the metadata, so a static renderer neither shows the repr nor loads a widget
    manager. An output whose model was not saved keeps its plain text."""
    static = copy.deepcopy(notebook)
    state = saved_state(static)
    for cell in static.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            view = data.get(WIDGET_VIEW)
            if view is None or view.get("model_id") not in state:
                data.pop(WIDGET_VIEW, None)
                continue
            output["data"] = {"text/html": widget_html(view["model_id"], state)}
    static.get("metadata", {}).pop("widgets", None)
    return static
