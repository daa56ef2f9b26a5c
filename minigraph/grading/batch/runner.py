"""Run one submission's cells in a fresh kernel: the part of grading inside the sandbox.

    python -m minigraph.grading.batch.runner HOME

The grader writes ``HOME/job.json`` (the code cells, the chapter, the time limits) and a copy
of the notebook in ``HOME/work`` (the kernel's working folder), then starts this module inside
the submission's sandbox (``sandbox.py``). It

1. runs every code cell top to bottom in a new kernel -- errors do not stop the run, a cell
   that exceeds its time limit is interrupted -- keeping no outputs, only counting them. The
   limit counts the CPU time of the kernel and the processes it started, so a busy machine
   slows an honest cell without cutting it off; a cell that waits without computing (a
   ``sleep``, an ``input()``) is stopped by a wall clock ``WALL_FACTOR`` times as long, or after
   ``WAIT_SHARE`` of the notebook's whole time if that comes first (``wait_limit``). A cell
   that ends its kernel (``exit()``, ``quit()``, ``os._exit``, a crash) or will not stop when
   interrupted (a bare ``except`` that swallows the interrupt) costs only what it prevents:
   the notebook runs again in a fresh kernel without that cell (``MAX_RUNS`` times at most);
2. asks the kernel for the answers' results (``collect.py``: a message on the kernel's shell
   channel, served by the grading code the kernel imported before any cell ran), which it
   writes to ``HOME/out/results.json``. The seed of the hidden cases comes on this process's
   standard input, which is read only when the grading is about to run, and sent with the
   request: no cell of the learner's could know it. The kernel does not inherit this process's
   standard input, and this process is made non-dumpable, so no process of the sandbox's user
   can read its memory or open its file descriptors through ``/proc``;
3. writes what happened along the way (errors, time-outs, floods of output) to
   ``HOME/out/notes.json``, after every cell, so that the grader knows where a run that it had to
   stop was.

Every kernel, the first and each one after a cell ended its kernel, is started with the same
command line (``kernel_argv``: ``kernel.py``, Python isolated) and the environment the grader
gave this process (``sandbox.environment``): its home, IPython's and Jupyter's configuration
folders are a folder the grader made read-only (``sandbox.CONFIG``), so nothing the notebook writes (a kernelspec, a
startup file, an ``ipython_kernel_config.py``) configures a kernel. The runner writes the number
of each cell it is about to run to the grader's watch channel (``watch.py``; file descriptor
``job["watch_fd"]``), which every kernel inherits, and ``silenced`` when a kernel's watch ended
it because the submission had replaced that descriptor in the kernel (``watch.EXIT_SILENCED``).

Everything here runs next to the submission's code, which may rewrite any of these files:
the grader reads them as untrusted data, within size limits, and judges the results itself.
"""

import asyncio
import ctypes
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from queue import Empty

import nbformat  # the package's __init__ keeps it quick to import
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbclient.util import ensure_async

from ..toolkit.report import points
from ..toolkit.values import shorten
from . import kernel as kernel_module
from .collect import REPLY, REQUEST
from .watch import EXIT_SILENCED, line_of

TIMED_OUT = "CellTimedOut"                 # the error name of a cell interrupted for time
BIG_OUTPUT = 1_000_000                     # characters of output worth a note
MAX_NOTE = 200
JOB, WORK = "job.json", "work"
# What the run hands back, in a folder of its own: as root a small file system of its own
# (workspace.py), so that a notebook that filled its space still has its results written
OUT = "out"
NOTES, RESULTS = f"{OUT}/notes.json", f"{OUT}/results.json"


PR_SET_DUMPABLE = 4                        # prctl(2)
MAX_RUNS = 4          # the notebook, then again without each cell that ended or hung its kernel
INTERRUPT_GRACE = 10  # seconds an interrupted cell has to stop before its kernel is given up
WALL_FACTOR = 10      # a cell's wall-clock backstop, in multiples of its CPU-time limit
WAIT_SHARE = 0.25     # ... and at most this share of the notebook's time (the run again without it)
CPU_POLL = 0.25       # seconds between two readings of the kernel's CPU time


class KernelLost(Exception):
    """The kernel ended (``why``) or would not stop, in the run's cell ``index``."""

    def __init__(self, index, why):
        super().__init__(why)
        self.index, self.why = index, why


def kernel_argv(job):
    """The one command line of every kernel of this run (``kernel.py``): never a kernelspec."""
    package_root = str(Path(kernel_module.__file__).resolve().parents[3])
    return [sys.executable, "-I", kernel_module.__file__, package_root, job["chapter"],
            str(job["watch_fd"]), "-f", "{connection_file}"]


def wait_limit(job):
    """The wall-clock seconds one cell may take: ``WALL_FACTOR`` times its CPU-time limit, so that
    a busy machine never cuts off a cell that computes, but at most ``WAIT_SHARE`` of the
    notebook's whole time, so that a cell that waits (and swallows the interrupt) leaves the
    rest of the notebook the time to run again without it. Whole seconds, as nbclient takes them."""
    return math.ceil(min(job["cell_timeout"] * WALL_FACTOR, job["timeout"] * WAIT_SHARE))


class _Manager(AsyncKernelManager):
    """A kernel manager whose kernel is always started by ``argv``, whatever kernelspecs exist,
    and which can tell how a kernel that ended ended (``exit_status``)."""

    def __init__(self, argv, **kwargs):
        super().__init__(kernel_name="minigraph-grader", **kwargs)
        self._kernel_spec = KernelSpec(argv=argv, display_name="minigraph grader", language="python")
        self.kernel_process = None

    async def start_kernel(self, **kwargs):
        await super().start_kernel(**kwargs)
        self.kernel_process = self.provisioner.process    # kept: the provisioner forgets it when it ends

    def exit_status(self):
        """The kernel's exit status (negative: the signal that ended it); None while it runs."""
        return None if self.kernel_process is None else self.kernel_process.poll()


class _Client(NotebookClient):
    """nbclient that runs a submission's cells and writes down what went wrong, in ``notes``.

    It keeps no outputs (a notebook may print megabytes; the grade needs none of them) but
    counts how much each cell printed. ``numbers`` maps the cells it runs back to the cell
    numbers of the submission (markdown cells are not run); the last cell is the collector.
    """

    def __init__(self, job, home, kept, notes):
        cells = [nbformat.v4.new_code_cell(job["cells"][i]) for i in kept]
        collector = nbformat.v4.new_code_cell("# the grader's cell; written once the cells above have run")
        km = _Manager(kernel_argv(job), connection_file=str(home / "runtime" / f"kernel-{len(notes)}.json"))
        super().__init__(nbformat.v4.new_notebook(cells=cells + [collector]), km=km,
                         timeout=wait_limit(job),                       # the backstop of a cell that waits
                         allow_errors=True,
                         interrupt_on_timeout=True, record_timing=False,
                         error_on_timeout={"ename": TIMED_OUT, "evalue": "", "traceback": []},
                         on_cell_execute=self._on_execute,
                         on_cell_error=self._on_error, on_cell_executed=self._on_executed,
                         resources={"metadata": {"path": str(home / WORK)}})
        self.job, self.home, self.kept = job, home, kept
        self.notes, self.printed, self.current = list(notes), {}, None
        self.running, self.watchdog, self.over_cpu, self.lost_why = None, None, None, None

    def where(self, index):
        """The submission's name of the run's cell ``index``: "cell N", or the grading cell."""
        numbers = self.job["numbers"]
        return f"cell {numbers[self.kept[index]]}" if index < len(self.kept) else "the grading cell"

    def save(self):
        """Write the notes so far (atomically: the grader never sees half a file)."""
        current = self.where(self.current) if self.current is not None else "kernel start"
        part = self.home / (NOTES + ".part")
        part.write_text(json.dumps({"current": current, "notes": self.notes + self.big_outputs()}))
        os.replace(part, self.home / NOTES)

    def _on_execute(self, cell, cell_index):
        self.current = cell_index
        self.save()
        self.mark(self.job["numbers"][self.kept[cell_index]])
        self._stop_watchdog()
        self.running = cell_index
        self.watchdog = asyncio.ensure_future(self._watch_cpu(cell_index))

    def _stop_watchdog(self):
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None

    async def _watch_cpu(self, cell_index):
        """Interrupt cell ``cell_index`` once the kernel has spent its CPU-time limit on it; end
        the kernel if the cell does not stop within ``INTERRUPT_GRACE`` seconds after that."""
        pid, limit = self.km.provisioner.pid, self.job["cell_timeout"]
        start = cpu_seconds(pid)
        while cpu_seconds(pid) - start < limit:
            await asyncio.sleep(CPU_POLL)
        self.over_cpu = cell_index
        await ensure_async(self.km.interrupt_kernel())
        await asyncio.sleep(INTERRUPT_GRACE)
        if self.running == cell_index:
            self.lost_why = "did not stop when interrupted (an except that catches everything?)"
            await ensure_async(self.km.shutdown_kernel(now=True))

    def mark(self, cell):
        """Tell the grader's watch channel which cell (a number, or "grading") runs now."""
        self.tell({"event": "cell", "cell": cell})

    def tell(self, record):
        """Write ``record`` on the grader's watch channel (this process's own descriptor)."""
        try:
            os.write(self.job["watch_fd"], line_of(record))
        except OSError:
            pass

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if cell_index < len(self.nb.cells) - 1:
            return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        await self._grade(cell_index)
        return cell

    async def _grade(self, index):
        """The grading request (``collect.serve``), with the seed, now and only now; its reply
        awaited ``collector_timeout`` seconds, then the kernel interrupted."""
        self.current = index
        self.save()
        self.mark("grading")
        request = self.kc.session.msg(REQUEST, {"chapter": self.job["chapter"], "seed": read_seed(),
                                                "path": str(self.home / RESULTS)})
        self.kc.shell_channel.send(request)
        seconds = self.job["collector_timeout"]
        if await self._reply_to(request, seconds):
            return
        await ensure_async(self.km.interrupt_kernel())
        self.notes.append(f"{self.where(index)} did not finish within {points(seconds)} s and was interrupted")
        if not await self._reply_to(request, INTERRUPT_GRACE):
            raise KernelLost(index, "did not stop when interrupted (an except that catches everything?)")

    async def _reply_to(self, request, seconds):
        """Whether the kernel replied to ``request`` within ``seconds`` (DeadKernelError if it died)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                reply = await ensure_async(self.kc.shell_channel.get_msg(timeout=1))
            except Empty:
                if not await ensure_async(self.km.is_alive()):
                    raise DeadKernelError("the kernel died while grading") from None
                continue
            if reply.get("parent_header", {}).get("msg_id") == request["header"]["msg_id"]:
                return reply.get("msg_type") == REPLY
        return False

    def _on_error(self, cell, cell_index, execute_reply):
        content = execute_reply["content"]
        if self.over_cpu == cell_index:
            self.notes.append(f"{self.where(cell_index)} used {points(self.job['cell_timeout'])} s "
                              "of CPU time without finishing and was interrupted")
        elif content.get("ename") == TIMED_OUT:
            self.notes.append(f"{self.where(cell_index)} did not finish within "
                              f"{points(wait_limit(self.job))} s of waiting "
                              "and was interrupted")
        else:
            self.notes.append(shorten(f"{self.where(cell_index)} raised {content.get('ename')}: "
                                      f"{content.get('evalue')}", MAX_NOTE))

    def _on_executed(self, cell, cell_index, execute_reply):
        """``exit()`` and ``quit()`` ask the kernel to end after the cell: it is lost now."""
        self._stop_watchdog()
        self.running = None
        payload = execute_reply.get("content", {}).get("payload", [])
        if any(isinstance(p, dict) and p.get("source") == "ask_exit" for p in payload):
            raise KernelLost(cell_index, "ended its kernel (exit() or quit())")

    async def _async_handle_timeout(self, timeout, cell=None):
        """Interrupt a cell that ran out of time, and give it ``INTERRUPT_GRACE`` seconds to
        stop: a cell that swallows the interrupt would hold up every cell after it."""
        await super()._async_handle_timeout(timeout, cell)        # interrupts; the reply to give
        try:
            await ensure_async(self.kc.shell_channel.get_msg(timeout=INTERRUPT_GRACE))  # the cell's reply
        except Empty:
            raise KernelLost(self.current, "did not stop when interrupted (an except that "
                             "catches everything?)") from None
        return {"content": {**self.error_on_timeout, "status": "error"}}

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        size = len(content.get("text", "")) if msg["msg_type"] == "stream" else len(str(content))
        self.printed[cell_index] = self.printed.get(cell_index, 0) + size
        return None

    def big_outputs(self):
        return [f"{self.where(index)} printed {size / 1e6:.1f} MB of output (not kept)"
                for index, size in sorted(self.printed.items()) if size > BIG_OUTPUT]


def cpu_seconds(pid):
    """The CPU time, in seconds, that process ``pid`` and every process below it have used
    (those still running, and those it has waited for), read from Linux's ``/proc``."""
    tick, usage, children = os.sysconf("SC_CLK_TCK"), {}, {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):             # ended while we looked
                continue
            parent, times = int(fields[1]), [int(t) for t in fields[11:15]]
            usage[int(entry.name)] = sum(times)       # utime, stime, cutime, cstime
            children.setdefault(parent, []).append(int(entry.name))
    total, waiting = 0, [pid]
    while waiting:
        process = waiting.pop()
        total += usage.get(process, 0)
        waiting += children.get(process, [])
    return total / tick


def read_seed():
    """The hidden cases' seed, from standard input (0 if the grader sent none)."""
    text = sys.stdin.readline().strip()
    return int(text) if text.isdigit() else 0


def _undumpable():
    """Make this process non-dumpable (Linux): its ``/proc`` entries become unreadable to the
    kernel and its children, which run as the same user."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):          # not Linux: nothing to hide behind
        pass


def run(home):
    """Execute the job in ``home`` (see the module docstring)."""
    _undumpable()
    home = Path(home)
    job = json.loads((home / JOB).read_text(encoding="utf-8"))
    for folder in ("runtime", "matplotlib", OUT):
        (home / folder).mkdir(exist_ok=True)
    kept, notes = list(range(len(job["cells"]))), []
    for _ in range(MAX_RUNS):
        client = _Client(job, home, kept, notes)
        lost = _execute(client)
        if lost is None:
            break
        if lost.index >= len(kept):                           # the grading cell: nothing to leave out
            client.notes.append(shorten(f"{client.where(lost.index)} {lost.why}", MAX_NOTE))
            break
        notes.append(shorten(f"{client.where(lost.index)} {lost.why}: the notebook ran again, in a "
                             "fresh kernel, without it", MAX_NOTE))
        kept = kept[:lost.index] + kept[lost.index + 1:]
    client.save()


def _execute(client):
    """Run ``client``'s notebook; the ``KernelLost`` that ended it early, if any (and a note)."""
    try:
        client.execute(cwd=str(client.home / WORK), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, pass_fds=(client.job["watch_fd"],))
    except KernelLost as lost:
        return lost
    except DeadKernelError:
        if client.km.exit_status() == EXIT_SILENCED:
            client.tell({"event": "silenced"})
            return KernelLost(client.current, "ran with the grader's watch channel replaced (by it or an "
                                              "earlier cell): the watch ended its kernel when it had "
                                              "something to report")
        return KernelLost(client.current, client.lost_why or
                          "ended its kernel (os._exit, a crash, or out of memory)")
    except Exception as error:                   # nbclient raises many kinds (kernel start...)
        client.notes.append(shorten(f"the notebook could not be run: {error}", MAX_NOTE))
    return None


if __name__ == "__main__":
    run(sys.argv[1])
