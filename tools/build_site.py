"""Build the course website: python tools/build_site.py [--preview | --repository owner/name] [OUT]

``make site`` builds the site to publish (OUT default build/site): its home page links the
course's repository and Binder, both taken from ``course.toml`` (tools/publish.py), and it
refuses to build while that setting is still the placeholder. ``make preview`` builds the same
site for reading on your machine, with no link to a host. ``--repository`` overrides the setting
(the tests build a published site without publishing the working copy).

1. copies chapters/ and exercises/ into build/site-src/, each widget output replaced by a
   static picture of its saved state (minigraph/snapshot.py) and each drawing put inline
   (``inline_drawings``: named by its title, never shrunk below readable, scrolling in its own
   box when wider than the page), and site/ (conf.py, index.md, the stylesheet) next to them;
2. copies MathJax (one file: every TeX extension, SVG output) out of the django-static-mathjax
   package, so math renders offline;
3. runs Sphinx with myst-nb (the notebooks are not executed: their stored outputs are shown)
   and fails on any warning.

The tools come with the [site] extra: pip install -e '.[site]'."""

import argparse
import html
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

import publish
from minigraph.snapshot import with_static_widgets
from minigraph.viz import PX_PER_PT, READABLE

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("chapters", "exercises")


def where_to_start(repo):
    """The end of the home page's sentence "start the course ...", for ``repo`` (None: a preview)."""
    if repo is None:
        return "on your machine: `make lab` in a clone of the course's repository (its README says more)."
    u = publish.urls(repo)
    return f"on your machine (`make lab`, see the [README]({u['github']}#readme)) or on [Binder]({u['binder']})."


SVG_TAG = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"\s+viewBox="[\d.-]+ [\d.-]+ ([\d.]+) [\d.]+"')
TITLE = re.compile(r"<title>([^<]*)</title>")


def drawing_html(svg):
    """A drawing (dot's SVG) as inline HTML for the site.

    It is named by its first ``<title>`` (mg.draw's text alternative: what the drawing shows)
    for screen readers, as ``role="img"``. It shows at its stored width, shrunk to the text
    column but never below ``READABLE`` of dot's own size; wider than the column, it scrolls
    sideways inside its own box (which the keyboard can reach), never the page."""
    svg = svg[svg.index("<svg"):]
    size = SVG_TAG.search(svg)
    title = TITLE.search(svg)
    name = html.escape(title.group(1) if title else "a graph drawn by mg.draw", quote=True)
    style = ""
    if size is not None:                               # dot's: sized as said above
        stored = float(size.group(1)) * PX_PER_PT
        readable = min(stored, READABLE * float(size.group(3)) * PX_PER_PT)
        style = f' style="width:{stored:.0f}px;min-width:{readable:.0f}px;max-width:100%;height:auto"'
    svg = svg.replace("<svg", f'<svg role="img" aria-label="{name}"{style}', 1)
    return f'<div class="mg-drawing" tabindex="0">{svg}</div>'


def inline_drawings(notebook):
    """``notebook`` (changed in place) with each SVG output as ``drawing_html``."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/svg+xml" in data:
                svg = data["image/svg+xml"]
                output["data"] = {"text/html": drawing_html("".join(svg) if isinstance(svg, list) else svg)}
    return notebook


def prepare_sources(src: Path, repo=None) -> int:
    """Write the site's sources into ``src`` (emptied first); return how many notebooks.

    ``repo``: the ``owner/name`` the home page links to (None: a preview, linking no host)."""
    import mathjax                                     # the django-static-mathjax wheel

    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(ROOT / "site", src)
    index = src / "index.md"
    index.write_text(index.read_text(encoding="utf-8").replace("@WHERE_TO_START@", where_to_start(repo)),
                     encoding="utf-8")
    (src / "_static" / "mathjax").mkdir()
    shutil.copy(Path(mathjax.__file__).parent / "static" / "mathjax" / "es5" / "tex-svg-full.js",
                src / "_static" / "mathjax")
    count = 0
    for folder in FOLDERS:
        (src / folder).mkdir()
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            notebook = nbformat.read(path, as_version=4)
            nbformat.write(inline_drawings(with_static_widgets(notebook)), src / folder / path.name)
            count += 1
    return count


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "build" / "site")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--preview", action="store_true", help="a site to read locally: no link to a host")
    how.add_argument("--repository", help="owner/name to link to instead of course.toml's")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = args.out
    repo = None if args.preview else args.repository or publish.require_published("make site")
    src = ROOT / "build" / "site-src"
    start = time.monotonic()
    count = prepare_sources(src, repo)
    print(f"site: {count} notebooks prepared in {src.relative_to(ROOT)}; building with Sphinx...", flush=True)
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going",
               "-d", str(src / "_doctrees"), str(src), str(out)]
    result = subprocess.run(command, cwd=ROOT)
    if result.returncode:
        return result.returncode
    pages = sum(1 for page in out.rglob("*.html") if not page.relative_to(out).parts[0].startswith("_"))
    print(f"site: {pages} pages in {out} ({time.monotonic() - start:.0f} s); open {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
