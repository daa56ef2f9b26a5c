"""Fixtures of the browser tests: one JupyterLab server and one headless Chromium per test
module, in whichever pytest process (xdist worker) runs it, serving a temporary COPY of the
course's notebooks. Module scope: with ``--dist loadscope`` a module runs in one worker, and
the server and browser are stopped as soon as its tests are done (not left idle while that
worker goes on with unit tests). Each server has its own free port and temp dirs, so workers
never share anything.

- ``lab_root``: a temp folder with copies of chapters/*.ipynb (notebooks only; a ``minigraph``
  symlink beside them points at the repo's package, which the kernel imports through
  PYTHONPATH=<repo>). Running them never touches the committed notebooks, and autosave is off.
- ``lab``: ``[sys.executable, -m, jupyter, lab]`` on a free 127.0.0.1 port with a random token,
  every Jupyter/IPython/matplotlib/XDG dir in a temp folder; its kernels run this very Python.
  Stopped at the end by its process (REST shutdown, then SIGTERM/SIGKILL of its own group).
- ``browser``: Debian's /usr/bin/chromium through the playwright package (never
  ``playwright install``). Missing Chromium or playwright is a FAILURE naming the install
  command, never a silent skip.
- ``lab_session``: one page in which the tests open notebooks one after another.
- ``artifacts``: where failure screenshots go (build/test-reports/browser/, or
  $MINIGRAPH_BROWSER_ARTIFACTS).
"""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))     # labdriver, kernel_probe (any --import-mode)

from labdriver import REPO, Browser, LabServer, LabSession, browser_problem, copy_notebooks, trust  # noqa: E402


@pytest.fixture(scope="session")
def browser_available():
    """Fails (never skips) when Chromium or playwright is missing: the message says how to get it.

    Tests call ``require_browser()`` first, so a missing Chromium shows as FAILED with the
    install command; this fixture guards any other use of the browser fixtures."""
    problem = browser_problem()
    if problem:
        pytest.fail(problem, pytrace=False)


@pytest.fixture(scope="module")
def lab_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab-root")
    copy_notebooks(root)
    return root


@pytest.fixture(scope="module")
def lab_and_browser(browser_available, lab_root, tmp_path_factory):
    """Start the server and Chromium together (each takes seconds), stop both at the end."""
    server = LabServer(lab_root, base=tmp_path_factory.mktemp("lab-home"))
    browser = Browser(home=tmp_path_factory.mktemp("chromium-home"))
    server.launch()
    try:
        with browser:
            server.wait_started()
            trust(sorted(lab_root.glob("chapters/*.ipynb")), server.env["JUPYTER_DATA_DIR"])
            yield server, browser
    finally:
        server.stop()


@pytest.fixture(scope="module")
def lab(lab_and_browser):
    return lab_and_browser[0]


@pytest.fixture(scope="module")
def browser(lab_and_browser):
    return lab_and_browser[1]


@pytest.fixture(scope="module")
def lab_session(lab, browser):
    session = LabSession(lab, browser)
    yield session
    session.discard()


@pytest.fixture(scope="session")
def artifacts():
    path = Path(os.environ.get("MINIGRAPH_BROWSER_ARTIFACTS", REPO / "build" / "test-reports" / "browser"))
    return path
