"""Build the course website: python tools/build_site.py [OUT]   (`make site`; OUT default build/site)

1. copies chapters/ and exercises/ into build/site-src/, each widget output replaced by a
   static picture of its saved state (minigraph/snapshot.py), and site/ (conf.py, index.md,
   the stylesheet) next to them;
2. copies MathJax (one file: every TeX extension, SVG output) out of the django-static-mathjax
   package, so math renders offline;
3. runs Sphinx with myst-nb (the notebooks are not executed: their stored outputs are shown)
   and fails on any warning.

The tools come with the [site] extra: pip install -e '.[site]'."""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

from minigraph.snapshot import with_static_widgets

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("chapters", "exercises")


def prepare_sources(src: Path) -> int:
    """Write the site's sources into ``src`` (emptied first); return how many notebooks."""
    import mathjax                                     # the django-static-mathjax wheel

    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(ROOT / "site", src)
    (src / "_static" / "mathjax").mkdir()
    shutil.copy(Path(mathjax.__file__).parent / "static" / "mathjax" / "es5" / "tex-svg-full.js",
                src / "_static" / "mathjax")
    count = 0
    for folder in FOLDERS:
        (src / folder).mkdir()
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            notebook = nbformat.read(path, as_version=4)
            nbformat.write(with_static_widgets(notebook), src / folder / path.name)
            count += 1
    return count


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else ROOT / "build" / "site"
    src = ROOT / "build" / "site-src"
    start = time.monotonic()
    count = prepare_sources(src)
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
