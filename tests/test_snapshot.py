"""minigraph.snapshot: a widget's saved state as static HTML (what the course site shows).

Widgets are built with ipywidgets itself and their state taken as a notebook saves it
(``Widget.get_manager_state``), so the tests read the same format the chapters store."""

import base64
import html
import json
import re
from pathlib import Path

import ipywidgets as W
import nbformat
import pytest

from minigraph import snapshot

ROOT = Path(__file__).resolve().parent.parent
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def saved(*widgets):
    """The widgets' state as a notebook's metadata stores it, and a notebook showing the first."""
    state = W.Widget.get_manager_state(drop_defaults=False, widgets=None)
    state = json.loads(json.dumps(state, default=_buffer_as_base64))
    for entry in state["state"].values():             # buffers, as nbformat writes them
        for buffer in entry.get("buffers", []):
            buffer.setdefault("encoding", "base64")
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {snapshot.WIDGET_STATE: state}
    outputs = [nbformat.v4.new_output("display_data", {
        snapshot.WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": w.model_id},
        "text/plain": repr(w)}) for w in widgets]
    nb.cells.append(nbformat.v4.new_code_cell("w", outputs=outputs))
    return nb


def _buffer_as_base64(value):
    if isinstance(value, (bytes, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(type(value))


@pytest.fixture(autouse=True)
def fresh_widgets():
    W.Widget.close_all()
    yield
    W.Widget.close_all()


def test_a_box_shows_its_drawing_slider_text_and_button_in_order():
    box = W.VBox([W.HBox([W.FloatSlider(value=0.5, min=-3, max=3, description="x1"),
                          W.Text(value="ROMEO:", description="prime"), W.Button(description="new sample")]),
                  W.HTML('<svg width="10" height="10"><text>mul</text></svg>')])
    page = snapshot.widget_html(box.model_id, snapshot.saved_state(saved(box)))
    assert page.count("flex-direction:column") == 1 and page.count("flex-direction:row") == 1
    assert ('<label><span class="mg-snapshot-label">x1</span><input type="range" disabled min="-3.0" max="3.0" '
            'step="0.1" value="0.5"></label><output>0.5</output>') in page
    assert 'value="ROMEO:"' in page and ">prime<" in page and ">x1<" in page
    assert '<button type="button" disabled>new sample</button>' in page
    assert page.index('type="range"') < page.index("ROMEO:") < page.index("new sample") < page.index("<svg")


def test_an_image_widget_becomes_an_img_of_its_bytes_and_an_empty_one_nothing():
    full, empty = W.Image(value=PNG, format="png"), W.Image(value=b"", format="png")
    state = snapshot.saved_state(saved(full, empty))
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in snapshot.widget_html(full.model_id, state)
    assert "<img" not in snapshot.widget_html(empty.model_id, state)     # no broken-image icon


def test_an_output_widget_shows_its_stored_outputs():
    out = W.Output()
    out.outputs = ({"output_type": "stream", "name": "stdout", "text": "loss 0.25 <ok>\n"},
                   {"output_type": "display_data", "data": {"image/png": base64.b64encode(PNG).decode(),
                                                            "text/plain": "<Figure>"}, "metadata": {}})
    page = snapshot.widget_html(out.model_id, snapshot.saved_state(saved(out)))
    assert "<pre>loss 0.25 &lt;ok&gt;\n</pre>" in page
    assert "data:image/png;base64," in page and "&lt;Figure&gt;" not in page     # the picture, not its text


def test_text_is_escaped_and_a_prime_with_newlines_keeps_them():
    label, prime = W.Label(value="<b>not bold</b>"), W.Text(value="KING RICHARD:\nA horse!")
    state = snapshot.saved_state(saved(label, prime))
    assert "&lt;b&gt;not bold&lt;/b&gt;" in snapshot.widget_html(label.model_id, state)
    assert '<textarea disabled rows="2" aria-label="text box">KING RICHARD:\nA horse!</textarea>' in snapshot.widget_html(prime.model_id, state)


def test_a_dropdown_shows_its_choice_and_a_hidden_child_is_left_out():
    choice = W.Dropdown(options=["hello", "3rd of March 1997"], value="3rd of March 1997")
    hidden = W.HTML("secret", layout=W.Layout(display="none"))
    box = W.VBox([choice, hidden])
    page = snapshot.widget_html(box.model_id, snapshot.saved_state(saved(box)))
    assert "<option>hello</option><option selected>3rd of March 1997</option>" in page
    assert "secret" not in page


def test_a_model_that_was_not_saved_is_drawn_as_nothing():
    assert snapshot.widget_html("0123456789abcdef", {}) == ""


def test_with_static_widgets_replaces_each_view_and_drops_the_state_leaving_the_notebook_alone():
    slider = W.IntSlider(value=7, description="cell")
    nb = saved(slider)
    nb.cells[0].outputs.append(nbformat.v4.new_output("display_data", {
        snapshot.WIDGET_VIEW: {"model_id": "gone"}, "text/plain": "IntSlider(value=1)"}))
    static = snapshot.with_static_widgets(nb)
    first, second = static.cells[0].outputs
    assert set(first.data) == {"text/html"} and "<output>7</output>" in first.data["text/html"]
    assert second.data == {"text/plain": "IntSlider(value=1)"}           # no state: its text stays
    assert "widgets" not in static.metadata
    assert snapshot.WIDGET_VIEW in nb.cells[0].outputs[0].data and "widgets" in nb.metadata


def test_chapter_03s_explorer_becomes_its_drawn_network_and_sliders():
    nb = nbformat.read(ROOT / "chapters" / "03_backpropagation.ipynb", as_version=4)
    views = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
             if snapshot.WIDGET_VIEW in o.get("data", {})]
    assert views, "chapter 03 stores no widget"
    static = snapshot.with_static_widgets(nb)
    pages = [o.data["text/html"] for c in static.cells if c.cell_type == "code" for o in c.outputs
             if "text/html" in o.get("data", {}) and "mg-snapshot" in o.data["text/html"]]
    assert len(pages) == len(views)
    explorer = next(p for p in pages if 'type="range"' in p)
    assert "<svg" in explorer and 'class="node mg&#45;node' in explorer and 'id="mg&#45;node&#45;x1"' in explorer
    assert ">x1<" in html.unescape(explorer)


def test_html_of_a_live_widget_shows_its_current_state():
    slider, image = W.IntSlider(value=3, description="layer"), W.Image(value=PNG, format="png")
    box = W.VBox([slider, image])
    slider.value = 2
    page = snapshot.html_of(box)
    assert "<output>2</output>" in page and ">layer<" in page
    assert f"base64,{base64.b64encode(PNG).decode()}" in page
    assert page == snapshot.widget_html(box.model_id, snapshot.saved_state(saved(box)))


def test_every_control_has_an_accessible_name_its_description_or_its_kind():
    """A screen reader (and axe's "label" and "select-name" rules) needs a name for each form
    control: its description inside a <label>, else an aria-label (its tooltip, else its kind)."""
    named = [W.FloatSlider(description="x1"), W.Text(description="prime"), W.Dropdown(options=["a"], description="date"),
             W.Checkbox(description="exact"), W.Textarea(value="a\nb", description="prime")]
    bare = [(W.IntSlider(), "slider"), (W.Text(), "text box"), (W.Dropdown(options=["a", "b"]), "choice"),
            (W.Checkbox(), "check box"), (W.Select(options=["a"]), "choice"), (W.IntProgress(), "progress"),
            (W.Play(), "play"), (W.Button(icon="refresh"), "refresh"),
            (W.FloatSlider(tooltip="learning rate"), "learning rate")]
    state = snapshot.saved_state(saved(*named, *(w for w, _ in bare)))
    for widget in named:
        page = snapshot.widget_html(widget.model_id, state)
        label = re.fullmatch(r'<div class="[^"]*"><label><span class="mg-snapshot-label">([^<]*)</span>'
                             r'<(input|select|textarea)\b(?![^>]*aria-label).*</label>(<output>.*</output>)?</div>', page, re.S)
        assert label and label.group(1) == widget.description, page
    for widget, name in bare:
        page = snapshot.widget_html(widget.model_id, state)
        assert "<label>" not in page and re.search(rf'<(input|select|textarea|progress|button)\b[^>]* aria-label="{name}"', page), page


CONTROLS = {"IntSlider", "FloatSlider", "FloatLogSlider", "SelectionSlider", "IntRangeSlider", "Dropdown",
            "Text", "Textarea", "IntText", "FloatText", "BoundedIntText", "Select", "Checkbox",
            "ToggleButtons", "RadioButtons", "Play", "Button", "ToggleButton"}


def test_every_live_control_minigraph_builds_has_a_description():
    """ipywidgets shows a control's description as its <label>, linked to the input (text boxes,
    dropdowns), and the static pictures name their controls by it: no control of minigraph's
    may be built without one (checked on the source: every ``ipw.Control(...)`` call)."""
    import ast
    calls = []
    for path in sorted((ROOT / "minigraph").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "ipw"
                    and node.func.attr in CONTROLS):
                described = any(k.arg == "description" for k in node.keywords)
                calls.append((f"{path.relative_to(ROOT)}:{node.lineno} ipw.{node.func.attr}", described))
    assert len(calls) >= 30, calls
    assert all(described for _, described in calls), [where for where, described in calls if not described]
