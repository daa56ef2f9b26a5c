"""The project's spine: packaging files agree, `make lab` serves the course, notebooks are clean.

Run through `make test` (it runs tests/ with pytest-xdist). The `make lab` test starts a real
JupyterLab on a free loopback port with every Jupyter/IPython/matplotlib directory in a
temporary folder, and stops it again.
"""

from __future__ import annotations

import ast
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent

# conda-forge names that differ from the PyPI name of the same Python package
CONDA_TO_PYPI = {"python-graphviz": "graphviz"}
# conda entries that are not Python package dependencies of minigraph
CONDA_ONLY = {"python", "pip"}


# ------------------------------------------------------------------ dependency consistency --

# extras that environment.yml installs too (an instructor's conda environment grades)
EXTRAS_IN_ENVIRONMENT = ("grading",)


def pyproject_dependencies(pyproject: dict) -> dict[str, SpecifierSet]:
    """{normalised name: version specifier} of [project].dependencies and EXTRAS_IN_ENVIRONMENT."""
    deps = {}
    extras = pyproject["project"].get("optional-dependencies", {})
    for line in pyproject["project"]["dependencies"] + [d for x in EXTRAS_IN_ENVIRONMENT for d in extras.get(x, [])]:
        req = Requirement(line)
        deps[canonicalize_name(req.name)] = req.specifier
    return deps


def environment_dependencies(env: dict) -> tuple[dict[str, str], list[str]]:
    """({normalised PyPI name: version spec text}, [pip lines that install a local path])."""
    deps: dict[str, str] = {}
    local: list[str] = []
    for entry in env.get("dependencies", []):
        if isinstance(entry, dict):
            for line in entry.get("pip", []):
                line = line.strip()
                if line.startswith("-") or line.startswith("."):
                    local.append(line)
                    continue
                req = Requirement(line)
                deps[canonicalize_name(req.name)] = str(req.specifier)
            continue
        match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*", str(entry))
        assert match, f"cannot read the conda entry {entry!r}"
        name, spec = match.groups()
        if name in CONDA_ONLY:
            continue
        deps[canonicalize_name(CONDA_TO_PYPI.get(name, name))] = spec
    return deps, local


def dependency_problems(pyproject: dict, env: dict) -> list[str]:
    """Every way environment.yml and pyproject.toml disagree, in words."""
    py = pyproject_dependencies(pyproject)
    conda, local = environment_dependencies(env)
    problems = []
    only_py = sorted(set(py) - set(conda))
    only_conda = sorted(set(conda) - set(py))
    if only_py:
        problems.append(f"in pyproject.toml but missing from environment.yml: {', '.join(only_py)}")
    if only_conda:
        problems.append(f"in environment.yml but missing from pyproject.toml: {', '.join(only_conda)}")
    for name in sorted(set(py) & set(conda)):
        try:
            conda_spec = SpecifierSet(conda[name])
        except InvalidSpecifier:
            problems.append(f"{name}: environment.yml's version spec {conda[name]!r} is not in the "
                            "PEP 440 subset (>=, <, ==, commas) this test compares")
            continue
        if conda_spec != py[name]:
            problems.append(f"{name}: pyproject.toml says {str(py[name]) or 'any version'!r}, "
                            f"environment.yml says {conda[name] or 'any version'!r}")
    if not any(line.lstrip("-e ").strip() == "." for line in local):
        problems.append("environment.yml's pip: section does not install this package (-e . or .)")
    return problems


def load_project_files() -> tuple[dict, dict]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    return pyproject, env


def test_environment_yml_matches_pyproject():
    pyproject, env = load_project_files()
    problems = dependency_problems(pyproject, env)
    assert not problems, "environment.yml and pyproject.toml drifted apart:\n" + "\n".join(problems)


def test_dependency_check_reports_drift_on_each_side():
    """The consistency test can fail, and says which names are missing on which side."""
    pyproject, env = load_project_files()
    pyproject["project"]["dependencies"].append("rich>=13")
    env["dependencies"] = [d for d in env["dependencies"] if d != "python-graphviz"]
    env["dependencies"].append("jupyterlab-git")
    problems = "\n".join(dependency_problems(pyproject, env))
    assert "in pyproject.toml but missing from environment.yml: graphviz, rich" in problems
    assert "in environment.yml but missing from pyproject.toml: jupyterlab-git" in problems

    pyproject, env = load_project_files()
    env["dependencies"] = ["ipywidgets>=7" if d == "ipywidgets>=8,<9" else d for d in env["dependencies"]]
    assert any(p.startswith("ipywidgets:") for p in dependency_problems(pyproject, env))


def test_environment_python_satisfies_requires_python():
    pyproject, env = load_project_files()
    requires = SpecifierSet(pyproject["project"]["requires-python"])
    pythons = [d for d in env["dependencies"] if isinstance(d, str) and re.match(r"python\b(?!-)", d)]
    assert len(pythons) == 1, pythons
    version = re.search(r"\d+(\.\d+)*", pythons[0]).group()
    assert requires.contains(version), f"environment.yml pins {pythons[0]}, pyproject needs {requires}"


# ------------------------------------------------------------------ make lab ---------------

def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_is_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read().decode("utf-8"))


@pytest.mark.slow
def test_make_lab_serves_the_chapters(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    venv = Path(sys.prefix)
    if not (venv / ".installed").exists():
        pytest.skip("run through `make test`: this test reuses the Makefile's venv and never installs")

    port = free_loopback_port()
    token = secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env.update({
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "jupyter-data"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jupyter-runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "MPLCONFIGDIR": str(tmp_path / "matplotlib"),
    })
    lab_args = (f"--no-browser --port={port} --port-retries=0 --ServerApp.ip=127.0.0.1 "
                f"--IdentityProvider.token={token}")
    log_path = tmp_path / "make-lab.log"
    base = f"http://127.0.0.1:{port}"

    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            ["make", "-C", str(ROOT), "lab", f"VENV={venv}", f"LAB_ARGS={lab_args}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env=env, start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"make lab exited with {proc.returncode}:\n{log_path.read_text()}")
            try:
                status = get_json(f"{base}/api/status?token={token}")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.5)
        assert status is not None, f"JupyterLab did not answer within 60 s:\n{log_path.read_text()}"

        listing = get_json(f"{base}/api/contents/chapters?token={token}")
        names = [item["name"] for item in listing["content"]]
        assert "00_setup_check.ipynb" in names, names

        kernelspecs = get_json(f"{base}/api/kernelspecs?token={token}")
        assert "python3" in kernelspecs["kernelspecs"]

        with urllib.request.urlopen(f"{base}/lab/tree/chapters/00_setup_check.ipynb?token={token}",
                                    timeout=10) as page:
            assert page.status == 200
            assert "jupyter" in page.read().decode("utf-8", "replace").lower()

        # the address it prints (with a token of its own) and the page a browser opens are
        # chapter 00's, not the Launcher's: both are ServerApp.default_url, which the server
        # also writes into the page it opens a browser with (jpserver-PID-open.html)
        runtime = tmp_path / "jupyter-runtime"
        (opener,) = runtime.glob("jpserver-*-open.html")
        assert "lab/tree/chapters/00_setup_check.ipynb?token=" in opener.read_text(), opener.read_text()
        # a kernel starts, and the terminal gets no "running over TCP without encryption" from it
        request = urllib.request.Request(f"{base}/api/kernels?token={token}", method="POST",
                                         data=json.dumps({"name": "python3"}).encode())
        with urllib.request.urlopen(request, timeout=30) as answer:
            kernel = json.loads(answer.read())
        connection = runtime / f"kernel-{kernel['id']}.json"
        deadline = time.monotonic() + 60
        while not connection.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert json.loads(connection.read_text())["transport"] == "tcp"
        time.sleep(5)                                     # what the kernel says while it starts
        log = log_path.read_text()
        assert "without encryption" not in log and "Trusting the course's" in log, log
        # the course notebooks were trusted, in the temporary data dir (not in $HOME)
        assert (tmp_path / "jupyter-data" / "nbsignatures.db").exists()
        # and the server really was the one `make lab` started, rooted at the repository
        assert proc.poll() is None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while port_is_open(port) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not port_is_open(port), "JupyterLab still listens after its process group was stopped"


# ------------------------------------------------------------------ notebooks --------------

REFERENCE_NOTEBOOKS = sorted(
    p.relative_to(ROOT) for folder in ("chapters", "solutions") for p in (ROOT / folder).glob("*.ipynb")
)
ALL_NOTEBOOKS = sorted(REFERENCE_NOTEBOOKS + [p.relative_to(ROOT) for p in (ROOT / "exercises").glob("*.ipynb")])
ABSOLUTE_PATH = re.compile(r"(/work/|/root/|/home/|/Users/|/tmp/|/private/var/|[A-Z]:\\\\Users)")
MEMORY_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


def text_outputs(cell):
    """(mime or stream name, text) of every compared text output of a code cell."""
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            yield output.name, output.text
        elif output.output_type in ("execute_result", "display_data"):
            for mime in ("text/plain", "text/html"):
                if mime in output.data:
                    yield mime, output.data[mime]


def test_the_first_chapter_is_there():
    assert (ROOT / "chapters" / "00_setup_check.ipynb").exists()


def notebook_name_problems(root: Path) -> list[str]:
    """What is wrong with the names of the notebooks under ``root``. JupyterLab names a tab by
    the file's name alone, so no two notebooks a learner opens (``chapters/``, ``exercises/``)
    may share one; each exercise notebook is ``NN_topic_exercises.ipynb``, made from
    ``solutions/NN_topic.ipynb``."""
    problems, first = [], {}
    for folder in ("chapters", "exercises"):
        for path in sorted((root / folder).glob("*.ipynb")):
            where = f"{folder}/{path.name}"
            if path.name in first:
                problems.append(f"{first[path.name]} and {where} show as two tabs named {path.name}")
            first.setdefault(path.name, where)
    solutions = sorted(p.stem for p in (root / "solutions").glob("*.ipynb"))
    problems += [f"solutions/{stem}.ipynb is not named NN_topic.ipynb" for stem in solutions
                 if not re.fullmatch(r"\d\d_[a-z0-9_]+", stem)]
    expected = {f"{stem}_exercises.ipynb" for stem in solutions}
    exercises = {p.name for p in (root / "exercises").glob("*.ipynb")}
    problems += [f"exercises/{name} is not NN_topic_exercises.ipynb for a solutions/NN_topic.ipynb"
                 for name in sorted(exercises - expected)]
    problems += [f"exercises/{name} is missing: run `make exercises`" for name in sorted(expected - exercises)]
    return problems


def test_no_two_notebooks_a_learner_opens_share_a_name():
    assert len(list((ROOT / "exercises").glob("*.ipynb"))) >= 12
    assert not notebook_name_problems(ROOT), notebook_name_problems(ROOT)


def test_the_name_check_finds_a_chapter_and_its_exercises_named_alike(tmp_path):
    """The layout before exercise notebooks carried ``_exercises``, and a solution not named
    after its chapter."""
    for path in ("chapters/03_backprop.ipynb", "solutions/03_backprop.ipynb", "exercises/03_backprop.ipynb",
                 "solutions/learning.ipynb", "exercises/learning_exercises.ipynb"):
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text("{}")
    assert notebook_name_problems(tmp_path) == [
        "chapters/03_backprop.ipynb and exercises/03_backprop.ipynb show as two tabs named 03_backprop.ipynb",
        "solutions/learning.ipynb is not named NN_topic.ipynb",
        "exercises/03_backprop.ipynb is not NN_topic_exercises.ipynb for a solutions/NN_topic.ipynb",
        "exercises/03_backprop_exercises.ipynb is missing: run `make exercises`"]


@pytest.mark.parametrize("path", REFERENCE_NOTEBOOKS, ids=str)
def test_reference_notebook_is_stored_executed(path):
    """chapters/ and solutions/ are committed with outputs: nbval compares against them."""
    nb = nbformat.read(ROOT / path, as_version=4)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", "kernelspec python3 missing"
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    not_run = [i for i, c in enumerate(nb.cells) if c in code and c.execution_count is None]
    assert not not_run, f"cells {not_run} have no stored execution: run `make notebooks`"
    assert any(c.outputs for c in code), "no stored outputs at all: run `make notebooks`"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=str)
def test_notebook_stores_the_kernelspec_jupyterlab_writes(path):
    """A notebook whose kernelspec differs from what JupyterLab writes ("Python 3" instead of
    "Python 3 (ipykernel)") is rewritten on open and shows as modified with no edit."""
    from minigraph.grading.generate import KERNELSPEC

    metadata = nbformat.read(ROOT / path, as_version=4).metadata
    assert metadata.get("kernelspec") == KERNELSPEC, (
        f"{path} stores the kernelspec {metadata.get('kernelspec')}; store {KERNELSPEC} "
        "(edit the notebook's JSON metadata; for exercises/, run `make exercises`)")
    language = metadata.get("language_info", {})
    assert language.get("name") == "python" and language.get("codemirror_mode", {}).get("name") == "ipython"


@pytest.mark.parametrize("path", REFERENCE_NOTEBOOKS, ids=str)
def test_reference_notebook_has_no_errors_or_warnings(path):
    nb = nbformat.read(ROOT / path, as_version=4)
    problems = []
    for i, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        for output in cell.get("outputs", []):
            if output.output_type == "error" and "raises-exception" not in tags:
                problems.append(f"cell {i}: stored error {output.ename}: {output.evalue}")
            if output.output_type == "stream" and output.name == "stderr" and "raises-exception" not in tags:
                problems.append(f"cell {i}: stderr in stored outputs: {output.text[:120]!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=str)
def test_notebook_stores_no_machine_details(path):
    """No absolute paths anywhere, no memory addresses in text outputs."""
    raw = (ROOT / path).read_text(encoding="utf-8")
    paths = sorted(set(m.group() for m in ABSOLUTE_PATH.finditer(raw)))
    assert not paths, f"absolute paths stored in the notebook: {paths}"
    nb = nbformat.reads(raw, as_version=4)
    found = [f"cell {i} {mime}: {m.group()}"
             for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
             for mime, text in text_outputs(cell) for m in MEMORY_ADDRESS.finditer(text)]
    assert not found, "memory addresses in outputs (give the object a stable repr):\n" + "\n".join(found)


# ------------------------------------------------------------------ sanitizer --------------

def sanitize_patterns():
    from nbval.plugin import get_sanitize_patterns  # nbval's own reader of the cfg format
    return get_sanitize_patterns((ROOT / "tests" / "nbval_sanitize.cfg").read_text(encoding="utf-8"))


def sanitize(text: str) -> str:
    for regex, replace in dict(sanitize_patterns()).items():  # as nbval does: a dict, file order
        text = re.sub(regex, replace, text)
    return text


def test_sanitizer_normalises_only_what_varies():
    patterns = sanitize_patterns()
    assert len(patterns) >= 4, patterns
    for regex, _ in patterns:
        re.compile(regex)

    # two builds of graphviz lay out the same graph differently: same after sanitizing
    svg_a = ('<!-- Generated by graphviz version 2.43.0 (0)\n -->\n<svg width="62pt" height="116pt">\n'
             '<g id="node1" class="node"><title>x</title><text x="27" y="-85.8">x = 2</text></g>\n</svg>')
    svg_b = ('<!-- Generated by graphviz version 16.1.0 (graphviz-pure)\n -->\n<svg width="64pt" height="118pt">\n'
             '<g id="node1" class="node"><title>x</title><text x="28.5" y="-86.1">x = 2</text></g>\n</svg>')
    assert sanitize(svg_a) == sanitize(svg_b)
    assert sanitize(svg_a + svg_a).count("<svg>") == 2, "two drawings must stay two"

    assert sanitize("<graphviz.graphs.Digraph at 0x7f3a2c1d5e10>") == sanitize("<graphviz.graphs.Digraph at 0x55d0c0ffee00>")
    assert sanitize("/tmp/minigraph-grade-d0n76ms7/kernel.json") == sanitize("/tmp/abc/kernel.json")

    # what nbval is meant to test is left alone: numbers, shapes, names, short hex values
    summary = "W: value=[[1.5], [-2.0]] grad=[[0.25], [0.125]] shape (2, 1)\nloss = 0.3133 mask 0xff\n"
    assert sanitize(summary) == summary


@pytest.mark.skipif(shutil.which("dot") is None, reason="no dot binary")
def test_sanitizer_hides_a_real_graphviz_svg():
    import graphviz

    g = graphviz.Digraph()
    g.edge("x", "mul")
    svg = g.pipe(format="svg", encoding="utf-8")
    assert "<svg" in svg
    cleaned = sanitize(svg)
    assert "<svg>(drawing" in cleaned and "class=\"node\"" not in cleaned and "graphviz version" not in cleaned


# ------------------------------------------------------------------ CI and docs ------------

def test_ci_runs_exactly_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in ci
    commands = [line.strip() for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1] == "make test", commands[-1]
    assert not any("pip install" in line for line in commands), "CI installs Python packages only via make test"
    assert os.access(ROOT / ".ci" / "run", os.X_OK)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make lab" in readme and "make test" in readme


def test_readme_is_short_learner_first_and_its_links_resolve():
    """README is the learners' page (200 lines at most); the rest lives in docs/, linked from it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200, f"README.md has {len(readme.splitlines())} lines"
    assert readme.index("make lab") < readme.index("make test"), "the learner's command comes first"
    for doc in ("GRADING", "MODELS", "ENGINE", "BENCHMARKS", "CONTRIBUTING"):
        assert f"(docs/{doc}.md)" in readme and (ROOT / "docs" / f"{doc}.md").exists(), doc
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not target.startswith(("http://", "https://")) and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


# -- the package's structure: small modules, no import cycle, the compiler in its own folder ----

MAX_MODULE_LINES = 650
COMPILER_INSIDES = ("rewrites", "memory", "stepcode")     # the compiler's own modules: only it imports them


def package_modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module under ``root/minigraph``: its dotted name -> (its file, is it a package's
    ``__init__``)."""
    modules = {}
    for path in sorted((root / "minigraph").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def import_graph(root: Path) -> dict[str, dict[str, list[tuple[int, bool]]]]:
    """module -> {a module of the package it imports -> [(line, inside a function?), ...]}.

    Read from the source (no module is run): every ``import`` and ``from ... import``, at the
    top or inside a function (a lazy import closes a cycle too, only later), relative ones
    resolved. ``from pkg import name`` is an edge to ``pkg.name`` if that is a module, else to
    ``pkg``. Importing ``a.b`` also runs ``a/__init__``; that is how packages work, not a
    cycle, so it is no edge. Imports by ``importlib`` with a computed name are not seen."""
    modules = package_modules(root)

    def known(name):                      # the module itself, or the package it is a name of
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy = {id(node) for function in ast.walk(tree)
                if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
                for node in ast.walk(function)}
        imported = graph[name] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [known(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                    + ([node.module] if node.module else []))
                submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                targets = submodules + ([known(base)] if len(submodules) < len(node.names) else [])
            else:
                continue
            for target in targets:
                if target and target != name:
                    imported.setdefault(target, []).append((node.lineno, id(node) in lazy))
    return graph


def import_cycles(graph: dict) -> list[list[str]]:
    """The import cycles of ``graph``: each a list of modules that import one another, round
    (the strongly connected components of more than one module, by Tarjan's algorithm)."""
    order, low, stack, cycles = {}, {}, [], []

    def visit(module):
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in graph.get(module, {}):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            component = stack[stack.index(module):]
            del stack[stack.index(module):]
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in graph:
        if module not in order:
            visit(module)
    return cycles


def cycle_text(graph: dict, cycle: list[str]) -> str:
    """A cycle in words: each import inside it, with its line and whether it is lazy."""
    def lines(a, b):
        return ", ".join(f"{n} in a function" if lazy else str(n) for n, lazy in graph[a][b])
    return "; ".join(f"{a} imports {b} (line {lines(a, b)})" for a in cycle for b in graph[a] if b in cycle)


def long_modules(root: Path) -> list[str]:
    return [f"{name} ({n} lines)" for name, (path, _) in package_modules(root).items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]


def reaching_into_the_compiler(graph: dict) -> list[str]:
    """Imports of the compiler's own modules (``COMPILER_INSIDES``) from outside
    ``minigraph.compiler``: the rest of the package uses ``mg.function`` only."""
    insides = {f"minigraph.compiler.{name}" for name in COMPILER_INSIDES}
    return [f"{a} imports {b}" for a, imported in graph.items() if not a.startswith("minigraph.compiler")
            for b in imported if b in insides]


def test_no_module_is_longer_than_650_lines():
    assert not long_modules(ROOT), f"split these modules: {long_modules(ROOT)}"


def test_no_import_cycle_among_minigraphs_modules():
    graph = import_graph(ROOT)
    assert len(graph) > 100 and sum(map(len, graph.values())) > 300     # the whole package was read
    assert graph["minigraph.compiler.function"].keys() >= {"minigraph.codegen", "minigraph.graph",
                                                            "minigraph.compiler.rewrites"}
    cycles = import_cycles(graph)
    assert not cycles, "import cycles: " + " | ".join(cycle_text(graph, c) for c in cycles)


def test_the_compilers_modules_are_in_its_folder_and_only_it_imports_them():
    assert not reaching_into_the_compiler(import_graph(ROOT))
    assert all((ROOT / "minigraph" / "compiler" / f"{name}.py").exists() for name in COMPILER_INSIDES)
    strays = [p.name for p in (ROOT / "minigraph").rglob("*.py") if p.parent.name != "compiler"
              and p.stem in COMPILER_INSIDES + ("function", "compiled", "rewrite", "memoryplan")]
    assert not strays, f"compiler modules outside minigraph/compiler/: {strays}"


def test_the_structure_checks_find_what_they_look_for(tmp_path):
    """Each check can fail: a small package made to break all three rules."""
    package = tmp_path / "minigraph"
    (package / "compiler").mkdir(parents=True)
    files = {"__init__.py": "from .a import f\n",
             "a.py": "from . import b\n\ndef f():\n    return b.g()\n",
             "b.py": "def g():\n    from .a import f    # lazy, and still a cycle\n    return f\n",
             "c.py": "from .compiler.memory import plan\n" + "x = 1\n" * MAX_MODULE_LINES,
             "compiler/__init__.py": "", "compiler/memory.py": "plan = 1\n"}
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path)
    assert graph["minigraph.b"] == {"minigraph.a": [(2, True)]}
    assert import_cycles(graph) == [["minigraph.a", "minigraph.b"]]
    assert "line 2 in a function" in cycle_text(graph, ["minigraph.a", "minigraph.b"])
    assert reaching_into_the_compiler(graph) == ["minigraph.c imports minigraph.compiler.memory"]
    assert long_modules(tmp_path) == [f"minigraph.c ({MAX_MODULE_LINES + 1} lines)"]


def test_the_jupyterlab_extension_is_built_from_its_source_and_installed_everywhere():
    """minigraph/labextension is jupyter/widget-labels built (``make labextension``): the
    chunk JupyterLab loads holds the source's selector and plugin id. Every install links it:
    make's set-up, Binder's postBuild, the README's install without make and the student
    edition's README (an editable install leaves data files out)."""
    built = ROOT / "minigraph" / "labextension"
    meta = json.loads((built / "package.json").read_text(encoding="utf-8"))
    assert meta["name"] == json.loads((ROOT / "jupyter" / "widget-labels" / "package.json").read_text())["name"]
    assert (built / meta["jupyterlab"]["_build"]["load"]).is_file()
    source = (ROOT / "jupyter" / "widget-labels" / "lib" / "index.js").read_text(encoding="utf-8")
    selector = re.search(r"const HANDLES = '([^']+)'", source).group(1)
    chunks = "".join(p.read_text(encoding="utf-8") for p in (built / "static").glob("*.js"))
    assert selector.replace('"', '\\"') in chunks or selector in chunks, "rebuild it: make labextension"
    assert "minigraph-widget-labels:plugin" in chunks
    link = "jupyter labextension develop --overwrite ."
    assert link in (ROOT / "Makefile").read_text() and link in (ROOT / "postBuild").read_text()
    assert link in (ROOT / "minigraph" / "grading" / "release_README.md").read_text(encoding="utf-8")
    assert link in (ROOT / "README.md").read_text(encoding="utf-8")

