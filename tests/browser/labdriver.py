"""Drive a real JupyterLab in a real Chromium: the shared tools of tests/browser and
bench/browser_latency.py.

    with LabServer(root) as lab, Browser() as browser:
        session = LabSession(lab, browser)                   # one page, notebooks one by one
        nb = session.open("chapters/00_setup_check.ipynb")    # its real kernel is idle
        nb.run_all()                                          # Run All; waits for the end
        nb.cells()                                            # the notebook model: outputs...
        nb.report()                                           # what the page shows: widgets, SVGs
        nb.move_slider()                                      # an explore widget's slider, by key
        session.close(nb)                                     # kernel shut down, tab closed

Everything is measured or waited for in the page (``wait_for_function`` on JupyterLab's own
state, exposed with ``--LabApp.expose_app_in_browser``): no fixed sleeps.

What is kept out of $HOME: the server gets JUPYTER_CONFIG_DIR, JUPYTER_DATA_DIR,
JUPYTER_RUNTIME_DIR, IPYTHONDIR, MPLCONFIGDIR and XDG_{CACHE,CONFIG,DATA}_HOME inside the
server's temporary folder (kernels inherit them); Chromium runs with HOME in it too.
"""

import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHROMIUM = os.environ.get("MINIGRAPH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic", "--disable-dev-shm-usage"]
INSTALL_HINT = ("Chromium is needed for the browser tests: install it with\n"
                "    apt-get install -y chromium\n"
                "(Debian/Ubuntu, as root; the tests use /usr/bin/chromium, or set MINIGRAPH_CHROMIUM "
                "to another Chromium binary). Never `playwright install`: only the Python package "
                "`playwright` is used (pip install -e '.[dev]').")

# JupyterLab settings for the test profile (written into its temporary user-settings dir):
# no autosave (the copies are never written back), every cell kept in the DOM (windowing would
# take off-screen cells out of the page, and with them their outputs), no news/update toasts.
LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True},
}


class BrowserUnavailable(RuntimeError):
    """Chromium or the playwright package is missing; the message says how to install it."""


def browser_problem():
    """None if Chromium and playwright are there, else what is missing and how to install it."""
    try:
        Browser.check()
    except BrowserUnavailable as e:
        return str(e)
    return None


def axe_source():
    """axe-core (the accessibility engine of browsers' developer tools), as the JavaScript the
    axe-playwright-python package ships (read from disk: nothing is downloaded)."""
    import importlib.util
    spec = importlib.util.find_spec("axe_playwright_python")
    if spec is None:
        import pytest
        pytest.fail("axe-playwright-python (it ships axe-core's axe.min.js) is missing: pip install -e '.[dev]'",
                    pytrace=False)
    return (Path(spec.origin).parent / "axe.min.js").read_text(encoding="utf-8")


def require_browser():
    """In a test: FAIL (never skip) when the browser is missing, with the install command."""
    problem = browser_problem()
    if problem:
        import pytest
        pytest.fail(problem, pytrace=False)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def isolated_env(base):
    """os.environ with every per-user Jupyter/IPython/matplotlib/XDG dir inside ``base``."""
    base = Path(base)
    dirs = {
        "JUPYTER_CONFIG_DIR": base / "jupyter-config",
        "JUPYTER_DATA_DIR": base / "jupyter-data",
        "JUPYTER_RUNTIME_DIR": base / "jupyter-runtime",
        "IPYTHONDIR": base / "ipython",
        "MPLCONFIGDIR": base / "matplotlib",
        "XDG_CACHE_HOME": base / "xdg-cache",
        "XDG_CONFIG_HOME": base / "xdg-config",
        "XDG_DATA_HOME": base / "xdg-data",
    }
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, **{k: str(v) for k, v in dirs.items()})
    env.pop("JUPYTER_PATH", None)                 # no kernelspecs/extensions from elsewhere
    env.pop("JUPYTER_TOKEN", None)
    env["JUPYTER_PLATFORM_DIRS"] = "1"            # silences jupyter_core's migration notice
    # The kernel is this very Python (jupyter_client runs a kernelspec's "python" as
    # sys.executable of the server, and the server is started with sys.executable); the
    # package is imported from the repo even without an editable install.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    paths = [str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.pop("MPLBACKEND", None)                   # the kernel's inline backend, as for a learner
    return env


class LabServer:
    """``jupyter lab`` on a free loopback port, with a token, everything in a temp folder.

    ``root``: the folder JupyterLab serves (notebooks are opened relative to it).
    Stopped by its process at the end: REST shutdown, then SIGTERM, then SIGKILL of its
    process group (it runs in its own session), never anything by name.
    """

    def __init__(self, root, base=None, startup_timeout=90):
        self.root = Path(root)
        self._own_base = base is None
        self.base = Path(base or tempfile.mkdtemp(prefix="mg-lab-"))
        self.env = isolated_env(self.base)
        self.token = uuid.uuid4().hex
        self.startup_timeout = startup_timeout
        self.proc = None
        self.port = None
        self.log_path = self.base / "jupyter-lab.log"

    # -- life cycle ------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def write_settings(self):
        settings = Path(self.env["JUPYTER_CONFIG_DIR"]) / "lab" / "user-settings"
        for rel, value in LAB_SETTINGS.items():
            path = settings / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))

    def warm_matplotlib(self):
        """Build matplotlib's font cache in the fresh MPLCONFIGDIR before any kernel runs, so
        its one-off "building the font cache" notice never lands in a notebook's stderr."""
        return subprocess.Popen([sys.executable, "-c", "import matplotlib.font_manager"],
                                env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def command(self):
        cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser",
               "--ip=127.0.0.1", f"--port={self.port}", "--port-retries=0",
               f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root}",
               "--ServerApp.open_browser=False",
               "--LabApp.expose_app_in_browser=True",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               "--LabApp.news_url=",
               "--log-level=WARN"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        return cmd

    def start(self):
        self.launch()
        self.wait_started()

    def launch(self):
        """Start the process (returns at once; ``wait_started`` waits for it to answer)."""
        self.write_settings()
        self._warm = self.warm_matplotlib()
        self._spawn()

    def _spawn(self):
        self.port = free_port()
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.command(), cwd=self.root, env=self.env,
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         start_new_session=True)

    def wait_started(self):
        last_error = None
        for attempt in range(3):                # another process may have taken the port
            if attempt:
                self._spawn()
            try:
                self._wait_ready()
                break
            except RuntimeError as e:
                last_error = e
                self._kill()
        else:
            raise RuntimeError(f"jupyter lab did not start: {last_error}\n{self.log_tail()}")
        try:
            self._warm.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self._warm.kill()

    def _wait_ready(self):
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with code {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.api_url("status"), timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.1)                     # polling an HTTP port: no page to wait on yet
        raise RuntimeError(f"jupyter lab not answering on port {self.port} after {self.startup_timeout} s")

    def log_tail(self, n=40):
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "jupyter lab log (last lines):\n" + "\n".join(lines[-n:])

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.request("POST", "shutdown", timeout=5)   # shuts its kernels down too
            except (urllib.error.URLError, OSError):
                pass
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._kill()
        self.proc = None
        if self._own_base:
            shutil.rmtree(self.base, ignore_errors=True)

    def _kill(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        pgid = self.proc.pid                      # its own session: group id == its pid
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue

    # -- REST ------------------------------------------------------------------------------
    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def api_url(self, path):
        return f"{self.url}/api/{path}?token={self.token}"

    def request(self, method, path, timeout=10):
        req = urllib.request.Request(self.api_url(path), method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self):
        """Stop every kernel of this server (between notebooks: memory stays flat)."""
        for session in self.request("GET", "sessions") or []:
            try:
                self.request("DELETE", f"sessions/{session['id']}")
            except urllib.error.HTTPError:
                pass
        for kernel in self.request("GET", "kernels") or []:
            try:
                self.request("DELETE", f"kernels/{kernel['id']}")
            except urllib.error.HTTPError:
                pass

    def notebook_url(self, relpath):
        return f"{self.url}/lab/tree/{relpath}?reset&token={self.token}"

# -- JavaScript run in the page ---------------------------------------------------------------

JS_HELPERS = r"""
(() => {
  if (window.__mg) return;
  // The notebook panel showing ``path`` (the current one if no path is given).
  const panel = (path) => {
    const app = window.jupyterapp;
    if (!app || !app.shell) return null;
    const isNb = w => w && w.context && w.content && w.sessionContext;
    if (!path) return isNb(app.shell.currentWidget) ? app.shell.currentWidget : null;
    for (const w of Array.from(app.shell.widgets('main'))) {
      if (isNb(w) && w.context.path === path) return w;
    }
    return null;
  };
  window.__mg = {
    panel,
    kernelIdle(path) {
      const w = panel(path);
      if (!w || !w.context.isReady) return false;
      const sc = w.sessionContext;
      const k = sc.session && sc.session.kernel;
      return !!(sc.isReady && !sc.hasNoKernel && k && k.status === 'idle'
                && k.connectionStatus === 'connected');
    },
    kernelState(path) {
      const w = panel(path);
      if (!w) return {panel: false, current: String(window.jupyterapp && window.jupyterapp.shell
                       && window.jupyterapp.shell.currentWidget && window.jupyterapp.shell.currentWidget.title.label)};
      const sc = w.sessionContext, k = sc.session && sc.session.kernel;
      return {panel: true, ready: w.context.isReady, sessionReady: sc.isReady, noKernel: sc.hasNoKernel,
              kernel: k ? k.name : null, status: k ? k.status : null,
              connection: k ? k.connectionStatus : null, display: sc.kernelDisplayName};
    },
    cells(path) {
      const w = panel(path);
      return w.content.widgets.map((c, i) => {
        const m = c.model;
        const cell = {index: i, type: m.type, source: m.sharedModel.getSource(),
                      tags: (m.getMetadata && m.getMetadata('tags')) || []};
        if (m.type === 'code') {
          cell.count = m.executionCount;
          cell.running = c.node.classList.contains('jp-mod-running') || (m.executionState === 'running');
          cell.outputs = m.outputs.toJSON().map(o => ({
            type: o.output_type, name: o.name || null, ename: o.ename || null,
            evalue: o.evalue || null,
            text: o.output_type === 'stream' ? [].concat(o.text || []).join('')
                : o.output_type === 'error' ? [].concat(o.traceback || []).join('\n')
                : null,
            mimes: o.data ? Object.keys(o.data) : []}));
        }
        return cell;
      });
    },
    activate(path) {
      const w = panel(path);
      window.jupyterapp.shell.activateById(w.id);
      return window.jupyterapp.shell.currentWidget === w;
    },
    // Run a notebook command (Run All, Run the active cell) in ``path``; runDone tells the end.
    run(path, command) {
      window.__mg.activate(path);
      window.__mgRun = {done: false};
      window.jupyterapp.commands.execute(command).then(
        ok => { window.__mgRun = {done: true, ok}; },
        err => { window.__mgRun = {done: true, ok: false, error: String(err)}; });
    },
    runDone(path) {
      if (!window.__mgRun || !window.__mgRun.done) return false;
      return window.__mg.kernelIdle(path);
    },
  };
})()
"""


class Notebook:
    """One open notebook in a page: wait for its kernel, run it, read its model and DOM."""

    def __init__(self, page, path):
        self.page = page
        self.path = path

    def js(self, expression, arg=None):
        self.page.evaluate(JS_HELPERS)
        return self.page.evaluate(expression, arg)

    def wait_js(self, expression, arg=None, timeout_ms=60_000, polling=50):
        self.page.wait_for_function(JS_HELPERS + ";\n(" + expression + ")", arg=arg,
                                    timeout=timeout_ms, polling=polling)

    def wait_kernel_idle(self, timeout_ms=90_000):
        """A real kernel (not 'No Kernel', not starting), connected and idle.

        A kernel-picker dialog (a notebook asking for a kernelspec this server lacks) is
        accepted with its default choice, the one a learner would get."""
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            try:
                self.page.wait_for_function(
                    JS_HELPERS + ";\n(arg => window.__mg.kernelIdle(arg) || !!document.querySelector('.jp-Dialog'))",
                    arg=self.path, timeout=max(1000, (deadline - time.monotonic()) * 1000), polling=100)
            except Exception as e:
                state = self.js("p => window.__mg ? window.__mg.kernelState(p) : null", self.path)
                raise TimeoutError(f"kernel of {self.path} not idle: {state}") from e
            if self.js("p => window.__mg.kernelIdle(p)", self.path):
                return
            accept = self.page.locator(".jp-Dialog .jp-mod-accept")
            if accept.count():
                accept.first.click()
            if time.monotonic() > deadline:
                raise TimeoutError(f"kernel of {self.path} not idle (dialog)")

    def run_all(self, timeout_ms=120_000):
        """Run every cell (JupyterLab's own Run All); returns when the run ended (all done, or
        stopped at an error) and the kernel is idle again."""
        self.js("p => window.__mg.run(p, 'notebook:run-all-cells')", self.path)
        try:
            self.wait_js("p => window.__mg.runDone(p)", self.path, timeout_ms=timeout_ms, polling=100)
        except Exception as e:
            try:
                cells = self.cells()
                busy = [c["index"] for c in cells if c.get("running")]
                waiting = [c["index"] for c in cells if c["type"] == "code" and c["source"].strip()
                           and c["count"] is None]
                where = f"; running or queued: cells {busy}; no execution count yet: cells {waiting}"
            except Exception:   # noqa: BLE001
                where = ""
            raise TimeoutError(f"Run All of {self.path} did not finish in {timeout_ms / 1000:.0f} s{where}") from e
        return self.js("() => window.__mgRun")

    def cells(self):
        return self.js("p => window.__mg.cells(p)", self.path)

    def append_and_run(self, source, timeout_ms=60_000):
        """Append a code cell at the end, run it, return its outputs (model JSON, trimmed)."""
        n = self.js("""([p, src]) => {
            const w = window.__mg.panel(p);
            const model = w.content.model;
            model.sharedModel.insertCell(model.cells.length, {cell_type: 'code', source: src});
            return model.cells.length - 1; }""", [self.path, source])
        self.js("""([p, n]) => {
            window.__mg.panel(p).content.activeCellIndex = n;
            window.__mg.run(p, 'notebook:run-cell'); }""", [self.path, n])
        self.wait_js("p => window.__mg.runDone(p)", self.path, timeout_ms=timeout_ms)
        return self.cells()[n]


class Browser:
    """Headless Debian Chromium through playwright (the Python package; no browser download)."""

    def __init__(self, home=None):
        self.home = home
        self._pw = None
        self.browser = None

    @staticmethod
    def check():
        if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
            raise BrowserUnavailable(f"{CHROMIUM} not found.\n{INSTALL_HINT}")
        try:
            importlib.import_module("playwright.sync_api")
        except ImportError as e:
            raise BrowserUnavailable(f"the Python package playwright is missing ({e}): "
                                     f"pip install -e '.[dev]' (or pip install playwright).\n"
                                     f"{INSTALL_HINT}") from e

    def __enter__(self):
        self.check()
        from playwright.sync_api import sync_playwright
        self._own_home = self.home is None
        self.home = Path(self.home or tempfile.mkdtemp(prefix="mg-chromium-"))
        env = dict(os.environ, HOME=str(self.home), XDG_CONFIG_HOME=str(self.home / ".config"),
                   XDG_CACHE_HOME=str(self.home / ".cache"))
        self._pw = sync_playwright().start()
        try:
            self.browser = self._pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                    args=CHROMIUM_ARGS, env=env, timeout=60_000)
        except Exception:
            self._pw.stop()
            raise
        return self

    def new_page(self, width=1400, height=1000):
        context = self.browser.new_context(viewport={"width": width, "height": height})
        return context.new_page()

    def __exit__(self, *exc):
        try:
            if self.browser is not None:
                self.browser.close()
        finally:
            if self._pw is not None:
                self._pw.stop()
            if self._own_home:
                shutil.rmtree(self.home, ignore_errors=True)


def copy_notebooks(dest):
    """Copy the course's chapters (only the .ipynb files) into ``dest``/chapters, and link the
    package beside them (``link_package``)."""
    (Path(dest) / "chapters").mkdir(parents=True, exist_ok=True)
    for nb in sorted((REPO / "chapters").glob("*.ipynb")):
        shutil.copyfile(nb, Path(dest) / "chapters" / nb.name)
    link_package(dest)


def link_package(dest):
    """A ``minigraph`` symlink in ``dest`` to the repo's package, so a chapter that checks "is
    this the course's copy of the package?" sees the repo's."""
    link = Path(dest) / "minigraph"
    if not link.exists():
        link.symlink_to(REPO / "minigraph", target_is_directory=True)


def trust(paths, data_dir):
    """Sign notebooks as trusted in the server's notary (what `make lab` does for a learner)."""
    import nbformat
    from nbformat.sign import NotebookNotary
    notary = NotebookNotary(data_dir=str(data_dir))
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        notary.sign(nb)


# -- what the page shows -------------------------------------------------------------------------

JS_PAGE = r"""
(() => {
  if (window.__mgPage) return;
  const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';
  // Numbers drawn in a minigraph SVG (viz.LiveDrawing / mg.draw): per node its value and grad
  // rows (the text after the "value" / "grad" caption), per edge its label, and which are
  // highlighted (class mg-hl).
  const graphNumbers = (root) => {
    const out = {nodes: {}, edges: {}};
    if (!root) return null;
    for (const g of root.querySelectorAll('svg g.mg-node')) {
      const texts = Array.from(g.querySelectorAll('text')).map(t => t.textContent);
      const pick = (caption) => {
        const i = texts.findIndex(t => t.trim() === caption);
        if (i < 0) return null;
        for (let j = i + 1; j < texts.length; j++) if (texts[j].trim()) return texts[j].trim();
        return null;
      };
      out.nodes[g.id.replace(/^mg-node-/, '')] = {value: pick('value'), grad: pick('grad'),
                                                   hl: g.classList.contains('mg-hl')};
    }
    for (const g of root.querySelectorAll('svg g.mg-edge')) {
      const label = Array.from(g.querySelectorAll('text')).map(t => t.textContent.trim())
                         .filter(Boolean).join(' ');
      out.edges[g.id.replace(/^mg-edge-/, '')] = {label: label || null, hl: g.classList.contains('mg-hl')};
    }
    return out;
  };
  const isGraphvizImg = (img) => {
    let src = img.getAttribute('src') || '';
    if (!src.startsWith('data:image/svg+xml')) return false;
    try { src = decodeURIComponent(src); } catch (e) {}
    if (src.includes(';base64,')) { try { src = atob(src.split(';base64,')[1]); } catch (e) {} }
    return img.complete && img.naturalWidth > 0 && /class=["']graph["']/.test(src);
  };
  window.__mgPage = {
    graphNumbers,
    report(node) {
      const outputs = Array.from(node.querySelectorAll('.jp-OutputArea-output'));
      const widgetOutputs = outputs.filter(o => o.getAttribute('data-mime-type') === WIDGET_MIME);
      const text = (e) => (e.textContent || '').trim().slice(0, 300);
      const errorWidgets = Array.from(node.querySelectorAll('.jupyter-widgets-error-widget')).map(text);
      const disconnected = outputs.map(text).filter(t => /Error displaying widget|model not found|Failed to load model class/.test(t));
      const loading = widgetOutputs.filter(o => /Loading widget/.test(o.textContent || '')).length;
      const liveWidgets = node.querySelectorAll('.jp-OutputArea-output .jupyter-widgets:not(.jupyter-widgets-error-widget)');
      return {
        outputs: outputs.length,
        widgetOutputs: widgetOutputs.length,
        renderedWidgetOutputs: widgetOutputs.filter(o => o.querySelector('.jupyter-widgets:not(.jupyter-widgets-error-widget)')
                                                      && !/Error displaying widget|Loading widget/.test(o.textContent || '')).length,
        loading,
        errorWidgets,
        disconnected,
        widgets: liveWidgets.length,
        sliders: node.querySelectorAll('.jp-OutputArea-output .widget-slider').length,
        graphvizImgs: Array.from(node.querySelectorAll('.jp-RenderedSVG img')).filter(isGraphvizImg).length,
        graphvizInline: node.querySelectorAll('.jp-OutputArea-output svg g.graph').length,
        explore: node.querySelectorAll('.mg-explore').length,
        stepThrough: node.querySelectorAll('.mg-step-through').length,
      };
    },
    explore(node, i) {
      const box = node.querySelectorAll('.mg-explore')[i];
      if (!box) return null;
      const view = box.querySelector('.mg-view');
      const sliders = Array.from(box.querySelectorAll('.widget-slider')).map(s => {
        const h = s.querySelector('.noUi-handle');
        const label = s.querySelector('.widget-label');
        const readout = s.querySelector('.widget-readout');
        return {description: label ? label.textContent.trim() : null,
                readout: readout ? readout.textContent.trim() : null,
                now: h ? parseFloat(h.getAttribute('aria-valuenow')) : null,
                min: h ? parseFloat(h.getAttribute('aria-valuemin')) : null,
                max: h ? parseFloat(h.getAttribute('aria-valuemax')) : null};
      });
      return {sliders, html: view ? view.innerHTML : null, numbers: graphNumbers(view),
              readout: (box.querySelector('.mg-readout') || {}).textContent || null};
    },
    stepThrough(node, i) {
      const box = node.querySelectorAll('.mg-step-through')[i];
      if (!box) return null;
      const view = box.querySelector('.mg-view');
      const numbers = graphNumbers(view);
      return {numbers, html: view ? view.innerHTML : null,
              highlighted: Object.entries(numbers ? numbers.nodes : {}).filter(([k, v]) => v.hl).map(([k]) => k),
              text: ((box.querySelector('.mg-explanation') || {}).textContent || '').trim()};
    },
    // Latency of one slider move: keydown (capture listener, performance.now()) -> the first
    // mutation of the drawing's container (a MutationObserver installed before the key press)
    // and -> the next animation frame after it (the redraw on screen).
    armLatency(node, i) {
      const box = node.querySelectorAll('.mg-explore')[i];
      const view = box.querySelector('.mg-view');
      const m = {t0: null, t1: null, t2: null};
      window.__mgLatency = m;
      const obs = new MutationObserver(() => {
        if (m.t0 === null || m.t1 !== null) return;
        m.t1 = performance.now();
        obs.disconnect();
        requestAnimationFrame(() => { m.t2 = performance.now(); });
      });
      obs.observe(view, {subtree: true, childList: true, characterData: true});
      const onKey = () => { if (m.t0 === null) m.t0 = performance.now(); };
      document.addEventListener('keydown', onKey, {capture: true, once: true});
      return true;
    },
  };
})()
"""


def _page_call(page, expression, arg=None):
    page.evaluate(JS_HELPERS)
    page.evaluate(JS_PAGE)
    return page.evaluate(expression, arg)


class NotebookView(Notebook):
    """A notebook plus what its outputs look like in the page (widgets, drawings)."""

    def page_js(self, body, arg=None):
        """Evaluate ``body`` (a JS expression using ``node``, the notebook's DOM node, and
        ``arg``) in the page."""
        return _page_call(self.page, "([p, arg]) => { const node = window.__mg.panel(p).node; return ("
                          + body + "); }", [self.path, arg])

    def wait_page(self, body, arg=None, timeout_ms=30_000):
        self.page.evaluate(JS_HELPERS)
        self.page.evaluate(JS_PAGE)
        self.page.wait_for_function(
            JS_HELPERS + ";\n" + JS_PAGE + ";\n(([p, arg]) => { const w = window.__mg.panel(p); if (!w) return false;"
            " const node = w.node; return (" + body + "); })",
            arg=[self.path, arg], timeout=timeout_ms, polling=50)

    def report(self):
        return self.page_js("window.__mgPage.report(node)")

    def wait_widgets_rendered(self, timeout_ms=30_000):
        """Every widget output shows a live widget or an error (no 'Loading widget...')."""
        try:
            self.wait_page("(r => r.loading === 0 && r.renderedWidgetOutputs + r.errorWidgets.length"
                           " + r.disconnected.length >= r.widgetOutputs)(window.__mgPage.report(node))",
                           timeout_ms=timeout_ms)
        except Exception:
            pass                                 # the caller asserts on report() and says what is missing
        return self.report()

    def explore(self, i=0):
        return self.page_js("window.__mgPage.explore(node, arg)", i)

    def step_through(self, i=0):
        return self.page_js("window.__mgPage.stepThrough(node, arg)", i)

    def slider_handle(self, explore_index=0, slider_index=0):
        return (self.panel_locator().locator(".mg-explore").nth(explore_index)
                .locator(".widget-slider .noUi-handle").nth(slider_index))

    def panel_locator(self):
        """The notebook's panel in the page (JupyterLab gives every panel a unique id)."""
        panel_id = self.page_js("node.id")
        return self.page.locator(f'[id="{panel_id}"]')

    def move_slider(self, explore_index=0, slider_index=0, timeout_ms=30_000):
        """Focus a slider of an explore widget and press an arrow key once (ArrowRight, or
        ArrowLeft at the top end); wait until the drawing changed. Returns (key, the widget as
        the page showed it before)."""
        before = self.explore(explore_index)
        s = before["sliders"][slider_index]
        key = "ArrowLeft" if s["max"] is not None and s["now"] is not None and s["now"] >= s["max"] else "ArrowRight"
        handle = self.slider_handle(explore_index, slider_index)
        handle.focus()
        handle.press(key)
        try:
            self.wait_page("(e => e && e.html !== arg.html)(window.__mgPage.explore(node, arg.i))",
                           {"html": before["html"], "i": explore_index}, timeout_ms=timeout_ms)
        except Exception as e:
            now = self.explore(explore_index)["sliders"][slider_index]
            raise AssertionError(f"after {key} on slider {s['description']!r} (readout {s['readout']} -> "
                                 f"{now['readout']}) the drawing did not change within "
                                 f"{timeout_ms / 1000:.0f} s") from e
        return key, before


class LabSession:
    """One JupyterLab page that notebooks are opened in, one after another.

    The first notebook loads the app (``?reset``: no restored tabs); later ones open with
    ``docmanager:open`` in the same app (loading JupyterLab takes seconds on 2 cores), and each
    is closed with its kernel shut down. ``discard()`` drops the page (after a failure), so the
    next notebook starts from a fresh load.
    """

    def __init__(self, lab, browser):
        self.lab = lab
        self.browser = browser
        self.page = None
        self.console = []
        self.focus = None            # a CSS selector: what a failure screenshot should show

    def _new_page(self):
        self.page = self.browser.new_page()
        self.page.on("console", lambda m: self.console.append(f"console.{m.type}: {m.text[:500]}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.console.append(f"page error: {e}"))

    def open(self, relpath, timeout_ms=90_000):
        self.console.clear()
        if self.page is None or self.page.is_closed():
            self._new_page()
            self.page.goto(self.lab.notebook_url(relpath), wait_until="domcontentloaded", timeout=timeout_ms)
        else:
            _page_call(self.page, "p => { window.jupyterapp.commands.execute('docmanager:open', {path: p});"
                                  " return true; }", relpath)
        nb = NotebookView(self.page, relpath)
        nb.session = self
        nb.wait_kernel_idle(timeout_ms)
        return nb

    def close(self, nb):
        """Shut the notebook's kernel down and close its tab (no save: the copy stays as it was)."""
        if self.page is None or self.page.is_closed():
            return
        try:
            self.page.evaluate(JS_HELPERS)
            self.page.evaluate("""async p => {
                const w = window.__mg.panel(p);
                if (!w) return;
                try { await w.sessionContext.shutdown(); } catch (e) {}
                w.context.model.dirty = false;
                w.dispose(); }""", nb.path)
        except Exception:
            self.discard()

    def discard(self):
        if self.page is not None:
            try:
                self.page.context.close()
            except Exception:
                pass
        self.page = None
        try:
            self.lab.shutdown_kernels()
        except Exception:
            pass
