"""Run one submission's cells in a fresh kernel: the part of grading inside the sandbox.

    python -m minigraph.grading.batch.runner HOME

The grader writes ``HOME/job.json`` (the code cells, the chapter, the time limits) and a copy
of the notebook in ``HOME/work`` (the kernel's working folder), then starts this module inside
the submission's sandbox (``sandbox.py``). It

1. runs every code cell top to bottom in a new kernel -- errors do not stop the run, a cell
   that exceeds its time limit is interrupted -- keeping no outputs, only counting them. The
   limit counts the CPU time of the kernel and the processes it started, so a busy machine
   slows an honest cell without cutting it off; a cell that waits without computing (a
   ``sleep``, an ``input()``) is stopped by a wall clock ``WALL_FACTOR`` times as long. A cell
   that ends its kernel (``exit()``, ``quit()``, ``os._exit``, a crash) or will not stop when
   interrupted (a bare ``except`` that swallows the interrupt) costs only what it prevents:
   the notebook runs again in a fresh kernel without that cell (``MAX_RUNS`` times at most);
2. runs one more cell, the *collector* (``collect.py``), which writes the answers' results
   to ``HOME/out/results.json``. The seed of the hidden cases comes on this process's standard
   input, which is read only when the collector is about to run, and written into that cell:
   no cell of the learner's could know it. The kernel does not inherit this process's standard
   input, and this process is made non-dumpable, so no process of the sandbox's user can
   read its memory or open its file descriptors through ``/proc``;
3. writes what happened along the way (errors, time-outs, floods of output) to
   ``HOME/out/notes.json``, after every cell, so that the grader knows where a run that it had to
   stop was.

Everything here runs next to the submission's code, which may rewrite any of these files:
the grader reads them as untrusted data, within size limits, and judges the results itself.
"""

import asyncio
import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path
from queue import Empty

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbclient.util import ensure_async

from ..toolkit.report import points
from ..toolkit.values import shorten

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
CPU_POLL = 0.25       # seconds between two readings of the kernel's CPU time


class KernelLost(Exception):
    """The kernel ended (``why``) or would not stop, in the run's cell ``index``."""

    def __init__(self, index, why):
        super().__init__(why)
        self.index, self.why = index, why


def collector_cell(chapter, results_file, seed):
    """The cell appended to the submission: forget its minigraph modules, collect fresh."""
    return nbformat.v4.new_code_cell(
        "# Added by the minigraph grader: run every answer's cases, write the results as JSON.\n"
        "def _minigraph_grader_collect(namespace):\n"
        "    import sys\n"
        "    old = {name: module for name, module in list(sys.modules.items())\n"
        "           if name.split('.')[0] == 'minigraph'}\n"
        "    for name in old:\n"
        "        del sys.modules[name]\n"
        "    from minigraph.grading.batch.collect import collect\n"
        f"    collect({chapter!r}, namespace, {str(results_file)!r}, old, {int(seed)})\n"
        "_minigraph_grader_collect(globals())")


class _Client(NotebookClient):
    """nbclient that runs a submission's cells and writes down what went wrong, in ``notes``.

    It keeps no outputs (a notebook may print megabytes; the grade needs none of them) but
    counts how much each cell printed. ``numbers`` maps the cells it runs back to the cell
    numbers of the submission (markdown cells are not run); the last cell is the collector.
    """

    def __init__(self, job, home, kept, notes):
        cells = [nbformat.v4.new_code_cell(job["cells"][i]) for i in kept]
        collector = nbformat.v4.new_code_cell("# the grader's cell; written once the cells above have run")
        km = AsyncKernelManager(kernel_name=job["kernel"],
                                connection_file=str(home / "runtime" / f"kernel-{len(notes)}.json"))
        super().__init__(nbformat.v4.new_notebook(cells=cells + [collector]), km=km,
                         timeout=job["cell_timeout"] * WALL_FACTOR, allow_errors=True,
                         interrupt_on_timeout=True, record_timing=False,
                         error_on_timeout={"ename": TIMED_OUT, "evalue": "", "traceback": []},
                         timeout_func=self._timeout_of, on_cell_execute=self._on_execute,
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

    def _cpu_limit(self, cell_index):
        """The CPU seconds run cell ``cell_index`` may use: the collector's, or any cell's."""
        is_collector = cell_index == len(self.nb.cells) - 1
        return self.job["collector_timeout"] if is_collector else self.job["cell_timeout"]

    def _timeout_of(self, cell):
        """nbclient's wall-clock limit for ``cell``: the backstop for a cell that only waits."""
        return self._cpu_limit(self.current) * WALL_FACTOR

    def _on_execute(self, cell, cell_index):
        self.current = cell_index
        self.save()
        if cell_index == len(self.nb.cells) - 1:          # the collector: now, and only now, the seed
            cell.source = collector_cell(self.job["chapter"], self.home / RESULTS, read_seed()).source
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
        pid, limit = self.km.provisioner.pid, self._cpu_limit(cell_index)
        start = cpu_seconds(pid)
        while cpu_seconds(pid) - start < limit:
            await asyncio.sleep(CPU_POLL)
        self.over_cpu = cell_index
        await ensure_async(self.km.interrupt_kernel())
        await asyncio.sleep(INTERRUPT_GRACE)
        if self.running == cell_index:
            self.lost_why = "did not stop when interrupted (an except that catches everything?)"
            await ensure_async(self.km.shutdown_kernel(now=True))

    def _on_error(self, cell, cell_index, execute_reply):
        content = execute_reply["content"]
        if self.over_cpu == cell_index:
            self.notes.append(f"{self.where(cell_index)} used {points(self._cpu_limit(cell_index))} s "
                              "of CPU time without finishing and was interrupted")
        elif content.get("ename") == TIMED_OUT:
            self.notes.append(f"{self.where(cell_index)} did not finish within "
                              f"{points(self._cpu_limit(cell_index) * WALL_FACTOR)} s of waiting "
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
    for folder in ("ipython", "runtime", "matplotlib", OUT):
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
        client.execute(cwd=str(client.home / WORK), stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except KernelLost as lost:
        return lost
    except DeadKernelError:
        return KernelLost(client.current, client.lost_why or
                          "ended its kernel (os._exit, a crash, or out of memory)")
    except Exception as error:                   # nbclient raises many kinds (kernel start...)
        client.notes.append(shorten(f"the notebook could not be run: {error}", MAX_NOTE))
    return None


if __name__ == "__main__":
    run(sys.argv[1])
