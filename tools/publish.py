"""Where the course is published: one setting, the GitHub repository ``owner/name``.

    python tools/publish.py owner/name       # `make publish REPOSITORY=owner/name`
    python tools/publish.py --check "make site"   # exit 1, with one line, if not published yet

The setting is ``repository`` in ``course.toml``'s ``[course]`` table (a file of its own: changing
``pyproject.toml`` would make the next ``make lab`` reinstall everything). Until an
instructor publishes the course it holds the placeholder ``YOUR-ORG/minigraph``, and nothing
that would link to a host that does not exist is built: ``make site``, ``make release`` and
the Classroom workflow refuse with one line naming the command to run.

Everything that names the host takes it from the setting:

- the course site (``tools/build_site.py``): its home page's links to the repository and to
  Binder;
- README.md: its badges and its "read it online" link sit between ``<!-- publish: NAME -->``
  and ``<!-- end publish -->`` markers, which ``publish`` rewrites. Unpublished, they link
  only what works without a host: the chapters in the repository, how to build the site;
- ``.github/workflows/classroom.yml``: its ``COURSE``, whose grader it installs (its first step
  fails while that is the placeholder);
- ``.github/workflows/pages.yml`` runs ``make site``, so it publishes only a published course.

Publishing under a new owner is one step: ``make publish REPOSITORY=owner/name``, then commit.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = "YOUR-ORG/minigraph"
SETTING = re.compile(r'(?m)^(\[course\][^\[]*?^repository\s*=\s*)"([^"]*)"')
SETTING_FILE = "course.toml"
VALID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
BLOCK = re.compile(r"(<!-- publish: (\w+) -->\n)(.*?)(<!-- end publish -->)", re.S)
CLASSROOM_COURSE = re.compile(r'(?m)^(  COURSE: )"[^"]*"$')
CLASSROOM = Path(".github") / "workflows" / "classroom.yml"


class NotPublished(SystemExit):
    """Raised (as a one-line exit) when something needs a host and the setting has none."""


def repository(root=ROOT) -> str:
    """The setting: ``owner/name`` of the course's GitHub repository (maybe the placeholder)."""
    path = Path(root) / SETTING_FILE
    found = SETTING.search(path.read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit(f"{path} has no [course] table with repository = \"owner/name\"")
    return found.group(2)


def published(root=ROOT) -> bool:
    return repository(root) != PLACEHOLDER


def require_published(what: str, root=ROOT) -> str:
    """The repository, or a one-line exit saying ``what`` needs one and how to set it."""
    if not published(root):
        raise NotPublished(f"{what}: the course has no home yet ({SETTING_FILE}'s repository is "
                           f"the placeholder {PLACEHOLDER}); run "
                           f"`make publish REPOSITORY=owner/name` first")
    return repository(root)


def urls(repo: str) -> dict:
    """Every address derived from ``owner/name``."""
    owner, name = repo.split("/")
    return {
        "github": f"https://github.com/{repo}",
        "site": f"https://{owner.lower()}.github.io/{name}/",
        "binder": f"https://mybinder.org/v2/gh/{repo}/main?labpath=chapters%2F00_setup_check.ipynb",
        "install": f"git+https://github.com/{repo}",
    }


def readme_blocks(repo: str | None) -> dict:
    """The text of README's publish blocks, for ``repo`` (None: not published yet)."""
    if repo is None:
        return {
            "badges": "",
            "online": (
                "Every chapter is a notebook in [`chapters/`](chapters/), stored with its outputs: the\n"
                "drawings and the plots, so it reads well before you run anything (start with\n"
                "[chapter 00](chapters/00_setup_check.ipynb)). The same notebooks as\n"
                "a website, with a search page: `make preview`, then open `build/site/index.html`.\n"),
        }
    u = urls(repo)
    return {
        "badges": (f"[![Launch on Binder](https://mybinder.org/badge_logo.svg)]({u['binder']})\n"
                   f"[![Read online](https://img.shields.io/badge/read-online-blue)]({u['site']})\n"),
        "online": (
            f"Every chapter and exercise is on the course site, <{u['site']}>,\n"
            "with its stored outputs: the drawings, the plots and a picture of each widget. Nothing runs\n"
            "there; to move the sliders, start the course on your machine or on Binder.\n"),
    }


def rewrite_readme(text: str, repo: str | None) -> str:
    blocks = readme_blocks(repo)
    names = [m.group(2) for m in BLOCK.finditer(text)]
    if sorted(names) != sorted(blocks):
        raise SystemExit(f"README.md: expected the publish blocks {sorted(blocks)}, found {names}")
    return BLOCK.sub(lambda m: m.group(1) + blocks[m.group(2)] + m.group(4), text)


def rewrite_classroom(text: str, repo: str) -> str:
    """The workflow with its ``COURSE`` (whose grader it installs) set to ``repo``."""
    if len(CLASSROOM_COURSE.findall(text)) != 1:
        raise SystemExit(f'{CLASSROOM}: expected one line `  COURSE: "owner/name"` in its env to rewrite')
    return CLASSROOM_COURSE.sub(lambda m: f'{m.group(1)}"{repo}"', text)


def publish(repo: str, root=ROOT) -> list:
    """Write ``repo`` as the setting and into every file that names it; returns the files changed."""
    if not VALID.fullmatch(repo) or repo == PLACEHOLDER:
        raise SystemExit(f"publish: {repo!r} is not a GitHub repository's owner/name (such as alice/minigraph)")
    root = Path(root)
    changed = []
    repository(root)                                          # the table must be there
    edits = {root / SETTING_FILE: lambda t: SETTING.sub(lambda m: f'{m.group(1)}"{repo}"', t, count=1),
             root / "README.md": lambda t: rewrite_readme(t, repo),
             root / CLASSROOM: lambda t: rewrite_classroom(t, repo)}
    for path, edit in edits.items():
        old = path.read_text(encoding="utf-8")
        new = edit(old)
        if new != old:
            path.write_text(new, encoding="utf-8")
            changed.append(path.relative_to(root).as_posix())
    return changed


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and argv[0] == "--check":
        require_published(argv[1])
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        raise SystemExit("usage: python tools/publish.py owner/name   (or: make publish REPOSITORY=owner/name)")
    changed = publish(argv[0])
    u = urls(argv[0])
    print(f"published as {argv[0]}: " + (", ".join(changed) + " rewritten" if changed else "nothing to change"))
    print(f"  site {u['site']} (GitHub Pages, source \"GitHub Actions\"), Binder {u['binder']}")
    print("  commit these files and push to main; .github/workflows/pages.yml builds the site")
    return 0


if __name__ == "__main__":
    sys.exit(main())
