"""The student edition: the course as a learner outside a class gets it, without the answers.

    python -m minigraph.grading.release build/release      # `make release`

writes to the folder given (emptied first), from the files **committed** in the course's git
repository (``git archive HEAD``: a notebook autosaved in the working tree is never copied), the
chapters, the exercise notebooks (never ``solutions/``), the project files a learner installs
from, its own README (``release_README.md``) and the ``minigraph`` package without
``grading/answers/`` -- no reference answer, no typical-mistake table, no judge that knows an
answer -- and without ``grading/AUTHORING.md`` (written for course authors).

``check()`` judges every exercise there all the same: each exercise declares how, in its
``public`` field (``toolkit/public.py``): a backward rule by central differences against its op's
forward, on the public cases and on fresh random ones; a function by the reference's values on
the public cases, which ``check()`` shows anyway and which this module stores in
``content/expected.json`` (``Exercise.expected``); a value by a salted hash of the rounded value;
an order, a graph or a recipe by its properties (``judges/``, which ships). The grader still
draws hidden cases (``exercise.with_hidden``), so knowing the public values is worth no more
than that.
"""

import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from .toolkit import answers, registry

ROOT = Path(__file__).resolve().parents[2]           # the course repository
COPIED = ("chapters", "exercises", "minigraph", "pyproject.toml", "environment.yml", "LICENSE")
LEFT_OUT = (Path("minigraph") / "grading" / "answers", Path("minigraph") / "grading" / "AUTHORING.md")
ANSWERS = LEFT_OUT[0]
README = Path(__file__).with_name("release_README.md")


def expected_values():
    """``{case key: what the public judge needs}`` for every public case of every exercise that
    stores something (``Exercise.expected``)."""
    values = {}
    for chapter in registry.CHAPTERS:
        for exercise in registry.exercises(chapter):
            if exercise.expected is not None:
                for case in exercise.cases:
                    values[answers.case_key(exercise.id, case)] = exercise.expected(case)
    return values


def committed(folder, names=COPIED, revision="HEAD"):
    """Extract ``names`` as committed at ``revision`` into ``folder`` (``git archive``)."""
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", revision, *names],
                                 capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", b"") or str(error).encode()
        raise SystemExit(f"make release builds from the course's git repository ({ROOT}), and "
                         f"`git archive {revision}` failed there: {detail.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))


def build(folder):
    """Write the student edition into ``folder`` (emptied first); returns ``folder``."""
    folder = Path(folder)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    committed(folder)
    for path in LEFT_OUT:
        target = folder / path
        shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
    shutil.copy2(README, folder / "README.md")
    stored = folder / answers.STORED.relative_to(ROOT)
    lines = [f"{json.dumps(key)}: {json.dumps(value)}" for key, value in sorted(expected_values().items())]
    stored.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return folder


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m minigraph.grading.release FOLDER")
    print(f"wrote the student edition to {build(sys.argv[1])}")
